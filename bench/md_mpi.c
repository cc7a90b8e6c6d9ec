// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * md_mpi.c -- the mdtest-style phases of md_bench through MPI-IO: the clf
 * driver ("clf:") against ROMIO on a local directory ("ufs:") in the same
 * run.
 *
 * Every rank takes N files of its own through four phases, the ranks
 * starting each phase together (a barrier) and the rate being all ranks'
 * operations over the slowest rank's time:
 *   create  MPI_File_open(MPI_COMM_SELF, CREATE | EXCL | WRONLY), close
 *   stat    MPI_File_open(RDONLY), MPI_File_get_size, close (MPI-IO has
 *           no stat: this is how an MPI program sizes a file)
 *   open    MPI_File_open(RDONLY), close
 *   remove  MPI_File_delete
 * The files are DIR/p<rank>.f<i> (shared: DIR is one directory for all)
 * or DIR/u<rank>/f<i> (unique: a directory per rank, which must exist;
 * MPI-IO makes none -- bench/md_scale.sh makes them).
 *
 *   mpiexec -n P md_mpi --clf clf:/DIR --local ufs:/LOCALDIR [--files N]
 *           [--unique]
 *
 * Prints one line per phase:
 *   "mpiio shared create procs 2 files 1000 clf 812.3 ops/s local
 *    9876.5 ops/s ratio 0.082"
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PH_CREATE, PH_STAT, PH_OPEN, PH_REMOVE, PH_COUNT };

static const char *const phase_name[PH_COUNT] = {
	"create", "stat", "open", "remove",
};

static int rank, nprocs;

static void path_of(char *buf, size_t len, const char *dir, int unique,
		    int i)
{
	if (unique)
		snprintf(buf, len, "%s/u%d/f%d", dir, rank, i);
	else
		snprintf(buf, len, "%s/p%d.f%d", dir, rank, i);
}

static int one(int ph, char *path)
{
	MPI_Offset size;
	MPI_File fh;
	int rc;

	switch (ph) {
	case PH_CREATE:
		rc = MPI_File_open(MPI_COMM_SELF, path,
				   MPI_MODE_CREATE | MPI_MODE_EXCL |
				   MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
		return rc ? rc : MPI_File_close(&fh);
	case PH_STAT:
	case PH_OPEN:
		rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
				   MPI_INFO_NULL, &fh);
		if (!rc && ph == PH_STAT)
			rc = MPI_File_get_size(fh, &size);
		return rc ? rc : MPI_File_close(&fh);
	default:
		return MPI_File_delete(path, MPI_INFO_NULL);
	}
}

/* All ranks' ops/s of phase ph on dir; -1 when any rank failed. */
static double phase(int ph, const char *dir, int unique, int n)
{
	char path[1024];
	double t0, t, tmax;
	int bad = 0, anybad;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < n && !bad; i++) {
		int rc;

		path_of(path, sizeof(path), dir, unique, i);
		rc = one(ph, path);
		if (rc) {
			char s[MPI_MAX_ERROR_STRING];
			int len = 0;

			MPI_Error_string(rc, s, &len);
			fprintf(stderr, "md_mpi: rank %d: %s '%s': %s\n", rank,
				phase_name[ph], path, s);
			bad = 1;
		}
	}
	t = MPI_Wtime() - t0;
	MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return anybad ? -1 : (double)n * nprocs / tmax;
}

int main(int argc, char **argv)
{
	const char *clf = NULL, *local = NULL;
	double rc[PH_COUNT], rl[PH_COUNT];
	int n = 500, unique = 0, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--unique")) {
			unique = 1;
		} else if (i + 1 < argc && !strcmp(argv[i], "--clf")) {
			clf = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--local")) {
			local = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--files")) {
			n = atoi(argv[++i]);
		} else {
			bad = 1;
		}
	}
	if (bad || !clf || !local || n < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: md_mpi --clf clf:/DIR --local ufs:/DIR [--files N] [--unique]\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int ph = 0; ph < PH_COUNT && !bad; ph++) {
		rc[ph] = phase(ph, clf, unique, n);
		bad = rc[ph] < 0;
	}
	for (int ph = 0; ph < PH_COUNT && !bad; ph++) {
		rl[ph] = phase(ph, local, unique, n);
		bad = rl[ph] < 0;
	}
	if (rank == 0 && !bad)
		for (int ph = 0; ph < PH_COUNT; ph++)
			printf("mpiio %-6s %-6s procs %d files %d clf %.1f ops/s local %.1f ops/s ratio %.3f\n",
			       unique ? "unique" : "shared", phase_name[ph],
			       nprocs, n * nprocs, rc[ph], rl[ph],
			       rl[ph] > 0 ? rc[ph] / rl[ph] : 0.0);
	MPI_Finalize();
	return bad;
}
