// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_coop.c -- the cooperative cache (hint clf_coop_cache) on a
 * checkpoint-then-read pattern, against no cache, in the same run.
 *
 * The file is BTIO's: a 3-D grid of N^3 cells of 5 doubles (40 bytes),
 * x fastest, one whole grid per time step.  With P processes the grid
 * is cut in P slabs along z and P along y, and process p owns the P
 * diagonal blocks (y = (p + c) mod P, z = c), c = 0 .. P-1 (BT's
 * multi-partitioning on a 1 x P grid: at P = 2 the blocks of mpi_btio's
 * 1 x 2 grid), so its view is a struct of 3-D subarrays.  One pass:
 *
 *   open; each step one MPI_File_write_at_all (the checkpoint); each
 *   step one MPI_File_read_at_all of one's own blocks (BTIO's read-back);
 *   each step one MPI_File_read_at_all of the NEXT process's blocks (a
 *   restart on a shifted decomposition); every value checked; close.
 *
 * timed per phase (the slowest process's time in the MPI-IO calls,
 * filling and checking the buffer not counted): write, read own, read
 * next, close (which, with the cache, writes the kept bytes to the
 * iods).  Passes
 * alternate between clf_coop_cache=false and true on the same file name
 * and instance; the median of --reps passes of each is shown, with the
 * ratios.
 *
 *   mpiexec -n P mpi_coop FILE [--n N] [--steps S] [--reps R] [--romio]
 *
 * --romio: use_romio_optimizations=true, every process an aggregator:
 * the cache in front of ROMIO's two-phase I/O in file realms, against
 * that path alone.
 *
 * Default N = 64 (class A), 5 steps, 3 reps.  MB/s = bytes of all steps
 * (the whole grid each step) / seconds; "total" counts the bytes three
 * times (written, read twice) over the four phases.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELL 40

static int rank, nprocs, n_grid = 64, steps = 5, reps = 3;
static int romio_path;		/* --romio: ROMIO's two-phase I/O in file realms */

static void check(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;

	if (err == MPI_SUCCESS)
		return;
	MPI_Error_string(err, msg, &len);
	fprintf(stderr, "mpi_coop: %s: %s\n", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Process p's blocks as a filetype of extent one grid. */
static MPI_Datatype view_of(int p)
{
	int sizes[3] = { n_grid, n_grid, n_grid }, sub[3], start[3];
	MPI_Datatype cell, blocks[64], st, ft;
	int lens[64];
	MPI_Aint disps[64];

	MPI_Type_contiguous(CELL, MPI_BYTE, &cell);
	for (int c = 0; c < nprocs; c++) {
		sub[0] = n_grid / nprocs;	/* z */
		sub[1] = n_grid / nprocs;	/* y */
		sub[2] = n_grid;		/* x */
		start[0] = c * sub[0];
		start[1] = ((p + c) % nprocs) * sub[1];
		start[2] = 0;
		MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, cell,
					 &blocks[c]);
		lens[c] = 1;
		disps[c] = 0;
	}
	MPI_Type_create_struct(nprocs, lens, disps, blocks, &st);
	MPI_Type_create_resized(st, 0, (MPI_Aint)n_grid * n_grid * n_grid * CELL,
				&ft);
	MPI_Type_commit(&ft);
	for (int c = 0; c < nprocs; c++)
		MPI_Type_free(&blocks[c]);
	MPI_Type_free(&st);
	MPI_Type_free(&cell);
	return ft;
}

static uint8_t val(int step, int p, int64_t i)
{
	return (uint8_t)(step * 17 + p * 101 + i * 7 + (i >> 9));
}

static double slowest(double t)
{
	double m;

	MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return m;
}

/* Every step of who's blocks, read through the current view: the
 * seconds in the reads. */
static double read_steps(MPI_File fh, int who, int64_t mine, uint8_t *buf)
{
	double t = 0, t0;

	for (int s = 0; s < steps; s++) {
		t0 = MPI_Wtime();
		check(MPI_File_read_at_all(fh, (MPI_Offset)s * mine, buf, (int)mine,
					   MPI_BYTE, MPI_STATUS_IGNORE),
		      "read_at_all");
		t += MPI_Wtime() - t0;
		for (int64_t i = 0; i < mine; i++) {
			if (buf[i] != val(s, who, i)) {
				fprintf(stderr, "mpi_coop: step %d byte %lld of "
					"process %d: %d, not %d\n", s, (long long)i,
					who, buf[i], val(s, who, i));
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	return t;
}

/* One pass; the four phases' seconds into t. */
static void pass(const char *path, int coop, int64_t mine, uint8_t *buf,
		 double t[4])
{
	int next = (rank + 1) % nprocs;
	MPI_Datatype own = view_of(rank), other = view_of(next);
	MPI_Info info;
	MPI_File fh;
	double t0;

	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_coop_cache", coop ? "true" : "false");
	MPI_Info_set(info, "clf_coop_cache_size", "1g");
	if (romio_path) {
		MPI_Info_set(info, "use_romio_optimizations", "true");
		MPI_Info_set(info, "cb_config_list", "*:*");
	}
	check(MPI_File_open(MPI_COMM_WORLD, path,
			    MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh), "open");
	MPI_Info_free(&info);
	check(MPI_File_set_view(fh, 0, MPI_BYTE, own, "native", MPI_INFO_NULL),
	      "set_view");
	MPI_Barrier(MPI_COMM_WORLD);
	t[0] = 0;
	for (int s = 0; s < steps; s++) {
		for (int64_t i = 0; i < mine; i++)
			buf[i] = val(s, rank, i);
		t0 = MPI_Wtime();
		check(MPI_File_write_at_all(fh, (MPI_Offset)s * mine, buf,
					    (int)mine, MPI_BYTE, MPI_STATUS_IGNORE),
		      "write_at_all");
		t[0] += MPI_Wtime() - t0;
	}
	t[0] = slowest(t[0]);

	MPI_Barrier(MPI_COMM_WORLD);
	t[1] = slowest(read_steps(fh, rank, mine, buf));

	check(MPI_File_set_view(fh, 0, MPI_BYTE, other, "native", MPI_INFO_NULL),
	      "set_view");
	MPI_Barrier(MPI_COMM_WORLD);
	t[2] = slowest(read_steps(fh, next, mine, buf));

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	check(MPI_File_close(&fh), "close");
	t[3] = slowest(MPI_Wtime() - t0);
	MPI_Type_free(&own);
	MPI_Type_free(&other);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	double t[2][4][64], med[2][4], total[2][64], mtot[2];
	const char *path = NULL;
	int64_t mine, bytes;
	uint8_t *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n_grid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--romio"))
			romio_path = 1;
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path || n_grid < 1 || steps < 1 || reps < 1 || reps > 64 ||
	    nprocs > 64 || n_grid % nprocs) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiexec -n P mpi_coop FILE [--n N] "
				"[--steps S] [--reps R] [--romio]  (P divides N, P <= 64, "
				"R <= 64)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	bytes = (int64_t)n_grid * n_grid * n_grid * CELL;
	mine = bytes / nprocs;
	buf = malloc(mine);
	if (!buf || mine > 0x7fffffff)
		MPI_Abort(MPI_COMM_WORLD, 2);

	for (int r = 0; r < reps; r++) {
		for (int coop = 0; coop < 2; coop++) {
			double x[4];

			pass(path, coop, mine, buf, x);
			for (int k = 0; k < 4; k++)
				t[coop][k][r] = x[k];
			total[coop][r] = x[0] + x[1] + x[2] + x[3];
		}
	}
	for (int coop = 0; coop < 2; coop++) {
		for (int k = 0; k < 4; k++)
			med[coop][k] = median(t[coop][k], reps);
		mtot[coop] = median(total[coop], reps);
	}
	if (rank == 0) {
		double mb = (double)bytes * steps / 1e6;
		const char *name[2] = { "no cache", "coop cache" };

		printf("mpi_coop: %d processes, N = %d, %d steps of %.1f MB, "
		       "median of %d passes each, %s\n", nprocs, n_grid, steps,
		       bytes / 1e6, reps, romio_path ?
		       "use_romio_optimizations=true (file realms)" : "clf's collective I/O");
		printf("%-11s %11s %11s %11s %8s %11s\n", "", "write MB/s",
		       "own MB/s", "next MB/s", "close s", "total MB/s");
		for (int c = 0; c < 2; c++)
			printf("%-11s %11.1f %11.1f %11.1f %8.3f %11.1f\n", name[c],
			       mb / med[c][0], mb / med[c][1], mb / med[c][2],
			       med[c][3], 3 * mb / mtot[c]);
		printf("%-11s %10.2fx %10.2fx %10.2fx %8s %10.2fx\n", "ratio",
		       med[0][0] / med[1][0], med[0][1] / med[1][1],
		       med[0][2] / med[1][2], "", mtot[0] / mtot[1]);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
