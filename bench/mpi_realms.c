// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_realms.c -- ROMIO's two-phase collective I/O in the driver's
 * layout-aligned, persistent file realms against ROMIO's own file
 * domains and clf's server-directed collective I/O, on one clf file.
 *
 * For each k, one file laid out CYCLIC(k) over P subfiles (clf_layout
 * cyclic:k=K,p=P, P = processes) and a CYCLIC(k) view per process
 * (process p's bytes are blocks p, p+P, ... of k bytes): the layout
 * matches the views, as mpi_matrix's -phys scenarios.  The same file is
 * opened three ways, in turn within each repetition:
 *   realms  use_romio_optimizations=true, clf_realms=layout (default)
 *   romio   use_romio_optimizations=true, clf_realms=romio: ROMIO's
 *           contiguous domains, recomputed per call
 *   clf     use_romio_optimizations=false: clf's views and collective I/O
 * every process an aggregator (cb_config_list *:*, collective buffering
 * on).  Each repetition writes the whole file with MPI_File_write_all
 * (+ the driver's barrier) and reads it back with MPI_File_read_all,
 * checked; the time is the slowest process's; the median of --reps is
 * printed, with the realm period the driver reports.
 *
 *   mpiexec -n P mpi_realms [--size BYTES] [--k K[,K...]] [--reps N]
 *
 * Default: 16 MiB, k = 16,1024, 3 repetitions.  $CLF_CONFIG names the
 * instance.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { S_REALMS, S_ROMIO, S_CLF, S_COUNT };
static const char *const sname[S_COUNT] = { "realms", "romio", "clf" };

static int rank, nprocs;

static void die(const char *what, int rc)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(rc, msg, &len);
	fprintf(stderr, "rank %d: %s: %s\n", rank, what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static MPI_File open_as(const char *name, int sc, long k)
{
	char layout[64];
	MPI_Info info;
	MPI_File fh;
	int rc;

	MPI_Info_create(&info);
	MPI_Info_set(info, "cb_config_list", "*:*");
	MPI_Info_set(info, "romio_cb_write", "enable");
	MPI_Info_set(info, "romio_cb_read", "enable");
	MPI_Info_set(info, "use_romio_optimizations", sc == S_CLF ? "false" : "true");
	MPI_Info_set(info, "clf_realms", sc == S_ROMIO ? "romio" : "layout");
	snprintf(layout, sizeof(layout), "cyclic:k=%ld,p=%d", k, nprocs);
	MPI_Info_set(info, "clf_layout", layout);
	rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	if (rc != MPI_SUCCESS)
		die(name, rc);
	MPI_Info_free(&info);
	return fh;
}

static double slowest(double t)
{
	double m;

	MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return m;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One write and one read of the whole file through fh; seconds. */
static void access_once(MPI_File fh, MPI_Datatype ft, unsigned char *buf,
			unsigned char *back, long n, double *w, double *r, int check)
{
	MPI_Status st;
	double t;
	int rc;

	rc = MPI_File_set_view(fh, (MPI_Offset)0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	if (rc != MPI_SUCCESS)
		die("set_view", rc);
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	rc = MPI_File_write_at_all(fh, 0, buf, (int)n, MPI_BYTE, &st);
	if (rc != MPI_SUCCESS)
		die("write_at_all", rc);
	*w = slowest(MPI_Wtime() - t);
	memset(back, 0, n);
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	rc = MPI_File_read_at_all(fh, 0, back, (int)n, MPI_BYTE, &st);
	if (rc != MPI_SUCCESS)
		die("read_at_all", rc);
	*r = slowest(MPI_Wtime() - t);
	if (check && memcmp(buf, back, n)) {
		fprintf(stderr, "rank %d: the bytes read differ from those written\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static long period_of(MPI_File fh)
{
	char v[MPI_MAX_INFO_VAL + 1];
	MPI_Info info;
	int flag = 0;

	MPI_File_get_info(fh, &info);
	MPI_Info_get(info, "clf_realm_period", MPI_MAX_INFO_VAL, v, &flag);
	MPI_Info_free(&info);
	return flag ? atol(v) : -1;
}

int main(int argc, char **argv)
{
	long size = 16L << 20, ks[16] = { 16, 1024 }, nk = 2, n, i;
	int reps = 3, tag;
	unsigned char *buf, *back;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--size") && a + 1 < argc) {
			size = atol(argv[++a]);
		} else if (!strcmp(argv[a], "--reps") && a + 1 < argc) {
			reps = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--k") && a + 1 < argc) {
			char *s = argv[++a];

			for (nk = 0; s && *s && nk < 16; nk++) {
				ks[nk] = strtol(s, &s, 10);
				if (*s == ',')
					s++;
			}
		} else {
			if (!rank)
				fprintf(stderr, "usage: mpi_realms [--size BYTES] [--k K,...] [--reps N]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (reps < 1 || reps > 64)
		reps = 3;
	tag = (int)(getpid() % 100000);
	MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!rank)
		printf("mpi_realms: %d processes, %ld bytes, every process an aggregator; "
		       "median of %d (MB/s, slowest process)\n", nprocs, size, reps);
	for (int ki = 0; ki < nk; ki++) {
		long k = ks[ki], blocks = size / k / nprocs;
		double w[S_COUNT][64], r[S_COUNT][64];
		long period[S_COUNT];
		char name[256];
		MPI_Datatype vec, ft;

		n = blocks * k;
		buf = malloc(n);
		back = malloc(n);
		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)(i * 7 + rank * 31 + k);
		MPI_Type_vector((int)blocks, (int)k, (int)(k * nprocs), MPI_BYTE, &vec);
		MPI_Type_create_resized(vec, 0, (MPI_Aint)k * nprocs * blocks, &ft);
		MPI_Type_commit(&ft);
		/* the view of process p starts at block p */
		MPI_Type_free(&vec);
		MPI_Type_create_hindexed_block(1, 1, (MPI_Aint[]){ (MPI_Aint)rank * k }, ft,
					       &vec);
		MPI_Type_free(&ft);
		MPI_Type_create_resized(vec, 0, (MPI_Aint)k * nprocs * blocks, &ft);
		MPI_Type_free(&vec);
		MPI_Type_commit(&ft);
		snprintf(name, sizeof(name), "clf:/mpi_realms-%d-%ld", tag, k);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int rep = -1; rep < reps; rep++) {
			for (int sc = 0; sc < S_COUNT; sc++) {
				MPI_File fh = open_as(name, sc, k);
				double tw, tr;

				access_once(fh, ft, buf, back, n, &tw, &tr, rep == reps - 1);
				period[sc] = period_of(fh);
				MPI_File_close(&fh);
				if (rep >= 0) {
					w[sc][rep] = tw;
					r[sc][rep] = tr;
				}
			}
		}
		if (!rank) {
			printf("k = %ld (layout cyclic:k=%ld,p=%d)\n", k, k, nprocs);
			for (int sc = 0; sc < S_COUNT; sc++) {
				double bytes = (double)n * nprocs;

				qsort(w[sc], reps, sizeof(double), cmp);
				qsort(r[sc], reps, sizeof(double), cmp);
				printf("  %-7s write %9.1f MB/s  read %9.1f MB/s  (realm period %ld)\n",
				       sname[sc], bytes / 1e6 / w[sc][reps / 2],
				       bytes / 1e6 / r[sc][reps / 2], period[sc]);
			}
			fflush(stdout);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (!rank)
			MPI_File_delete(name, MPI_INFO_NULL);
		MPI_Type_free(&ft);
		free(buf);
		free(back);
	}
	MPI_Finalize();
	return 0;
}
