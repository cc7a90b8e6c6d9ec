// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_small.c -- the cost of small accesses through the MPI-IO driver,
 * clf's native path (use_romio_optimizations=false) against ROMIO's
 * (=true), on one clf file.
 *
 *   coll    MPI_File_write_at_all of BYTES bytes per process, each call
 *           past the last (call i, rank r at (i * P + r) * BYTES), as a
 *           program writing step after step does: the latency of a
 *           small collective write that grows the file
 *   xfer    IOR's segmented pattern (ior -a MPIIO -t B -b B -s N, with
 *           and without -c): call i of rank r at (i * P + r) * B, N
 *           calls, first writes (one open), then reads of the same
 *           bytes (another open); independent and collective; on the
 *           clf file through both paths and, as the baseline in the
 *           same run, on a local file (ufs:, --ufs-dir); per call and
 *           as a ratio to the local file
 *   views   what PnetCDF's independent mode does for each tiny access
 *           (nc_test): a subarray filetype of a few elements of a small
 *           2-D int variable (ROWS x COLS, at an odd offset: extents
 *           that do not divide the stripes, as netCDF variables have),
 *           cycling through SHAPES different ones, set as the view, a
 *           write_at (then a read_at) of its elements, and the view set
 *           back to bytes; per access
 *
 * usage: mpiexec -n P mpi_small [--reps N] [--bytes B] [--accesses N]
 *        [--shapes N] [--dir clf:/DIR] [--only coll|xfer|views]
 *        [--path native|romio] [--ufs-dir DIR] [--calls N]
 *        [--ops write,read,write_all,read_all]
 *
 * Prints microseconds per operation, the median over reps runs, for each
 * path.  A benchmark, not a test: the bytes are not checked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS_MAX 31

static int rank, nprocs;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static MPI_File open_file(const char *path, const char *opt)
{
	MPI_Info info;
	MPI_File fh;
	int rc;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", (char *)opt);
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
			   info, &fh);
	MPI_Info_free(&info);
	if (rc != MPI_SUCCESS) {
		char s[MPI_MAX_ERROR_STRING];
		int l;

		MPI_Error_string(rc, s, &l);
		fprintf(stderr, "mpi_small: cannot open %s: %s\n", path, s);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return fh;
}

/* Microseconds per collective write of bytes bytes per process. */
static double coll_once(const char *path, const char *opt, int bytes, int n)
{
	char *buf = malloc(bytes);
	MPI_File fh = open_file(path, opt);
	MPI_Status st;
	double t0, t;

	memset(buf, rank + 1, bytes);
	/* Untimed warm-up: connections, views. */
	MPI_File_write_at_all(fh, (MPI_Offset)rank * bytes, buf, bytes, MPI_BYTE,
			      &st);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < n; i++)
		MPI_File_write_at_all(fh, ((MPI_Offset)(i + 1) * nprocs + rank) *
					  bytes, buf, bytes, MPI_BYTE, &st);
	t = MPI_Wtime() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_File_close(&fh);
	free(buf);
	return t / n * 1e6;
}

/*
 * Microseconds per call of n calls of bytes bytes, IOR's way: call i at
 * (i * P + rank) * bytes; written, or read back, collectively or not.
 */
static double xfer_once(const char *path, const char *opt, int bytes, int n,
			int write, int coll)
{
	char *buf = malloc(bytes);
	MPI_File fh = open_file(path, opt);
	MPI_Status st;
	double t0, t;

	memset(buf, rank + 1, bytes);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < n; i++) {
		MPI_Offset at = ((MPI_Offset)i * nprocs + rank) * bytes;

		if (write && coll)
			MPI_File_write_at_all(fh, at, buf, bytes, MPI_BYTE, &st);
		else if (write)
			MPI_File_write_at(fh, at, buf, bytes, MPI_BYTE, &st);
		else if (coll)
			MPI_File_read_at_all(fh, at, buf, bytes, MPI_BYTE, &st);
		else
			MPI_File_read_at(fh, at, buf, bytes, MPI_BYTE, &st);
	}
	t = MPI_Wtime() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (!write && buf[bytes - 1] != rank + 1 && rank == 0)
		fprintf(stderr, "mpi_small: %s read back %d, not %d\n", path,
			buf[bytes - 1], rank + 1);
	MPI_File_close(&fh);
	free(buf);
	return t / n * 1e6;
}

static const char *xfer_ops[4] = { "write", "read", "write_all", "read_all" };

/* Whether --ops (a comma list of xfer_ops; empty: all) names op. */
static int op_wanted(const char *ops_only, int op)
{
	char list[160], name[16];

	if (!*ops_only)
		return 1;
	snprintf(list, sizeof(list), ",%s,", ops_only);
	snprintf(name, sizeof(name), ",%s,", xfer_ops[op]);
	return strstr(list, name) != NULL;
}

/*
 * Whether the table takes path m (0 clf native, 1 clf romio, 2 ufs:
 * always, the baseline) for the write op (write or write_all) and the
 * read after it, which reads what it wrote: --path names one clf path.
 */
static int xfer_wanted(const char *ops_only, const char *which, int op,
		       int m)
{
	if (m < 2 && *which && strcmp(which, m ? "romio" : "native"))
		return 0;
	return op_wanted(ops_only, op) || op_wanted(ops_only, op + 1);
}

/*
 * The xfer table: per operation, microseconds per call on the clf file
 * through clf's path and ROMIO's, and on the local file, each the median
 * of reps runs taken in turn (so that a change of load hits all alike).
 */
static void xfer(const char *dir, const char *ufs_dir, int bytes, int n,
		 int reps, const char *ops_only, const char *which)
{
	const char *names[3] = { "clf native", "clf romio", "ufs" };
	double v[4][3][REPS_MAX];
	char path[3][512];

	snprintf(path[0], sizeof(path[0]), "%s-xfer-native", dir);
	snprintf(path[1], sizeof(path[1]), "%s-xfer-romio", dir);
	snprintf(path[2], sizeof(path[2]), "ufs:%s/mpi_small-xfer", ufs_dir);
	memset(v, 0, sizeof(v));
	for (int r = 0; r < reps; r++)
		for (int op = 0; op < 4; op += 2)
			for (int m = 0; m < 3; m++) {
				const char *opt = m == 1 ? "true" : "false";
				int coll = op >= 2;

				if (!xfer_wanted(ops_only, which, op, m))
					continue;
				v[op][m][r] = xfer_once(path[m], opt, bytes,
							n, 1, coll);
				if (!op_wanted(ops_only, op + 1))
					continue;
				v[op + 1][m][r] = xfer_once(path[m], opt,
							    bytes, n, 0, coll);
			}
	if (rank == 0) {
		printf("%d bytes x %d processes, %d calls, us per call (median of %d):\n",
		       bytes, nprocs, n, reps);
		printf("%-10s %12s %12s %12s %10s %10s\n", "op", names[0],
		       names[1], names[2], "native/ufs", "romio/ufs");
		for (int op = 0; op < 4; op++) {
			double m0, m1, m2;

			if (!op_wanted(ops_only, op))
				continue;
			m0 = median(v[op][0], reps);
			m1 = median(v[op][1], reps);
			m2 = median(v[op][2], reps);

			printf("%-10s %12.1f %12.1f %12.1f %10.2f %10.2f\n",
			       xfer_ops[op], m0, m1, m2, m0 / m2, m1 / m2);
		}
		for (int m = 0; m < 3; m++)
			MPI_File_delete(path[m], MPI_INFO_NULL);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

enum { ROWS = 10, COLS = 15, DISP = 1236 };

/* Subarray number k of SHAPES: 2..5 x 2..5 ints somewhere in the array. */
static MPI_Datatype shape(int k)
{
	int sizes[2] = { ROWS, COLS };
	int sub[2] = { 2 + k % 4, 2 + (k / 4) % 4 };
	int start[2] = { (k * 7) % (ROWS - 5), (k * 3 + rank * 5) % (COLS - 5) };
	MPI_Datatype t;

	MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t);
	MPI_Type_commit(&t);
	return t;
}

/* Microseconds per tiny access through a changing view. */
static double views_once(const char *path, const char *opt, int n,
			 int shapes)
{
	MPI_File fh = open_file(path, opt);
	int buf[25];
	MPI_Status st;
	double t0, t;

	for (int i = 0; i < 25; i++)
		buf[i] = i * 3 + rank;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < n; i++) {
		int k = i % shapes, size;
		MPI_Datatype ft = shape(k);

		MPI_Type_size(ft, &size);
		MPI_File_set_view(fh, DISP, MPI_INT, ft, "native", MPI_INFO_NULL);
		if (i % 2 == 0)
			MPI_File_write_at(fh, 0, buf, size / 4, MPI_INT, &st);
		else
			MPI_File_read_at(fh, 0, buf, size / 4, MPI_INT, &st);
		MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
				  MPI_INFO_NULL);
		MPI_Type_free(&ft);
	}
	t = MPI_Wtime() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_File_close(&fh);
	return t / n * 1e6;
}

int main(int argc, char **argv)
{
	int reps = 5, bytes = 4096, accesses = 2000, shapes = 16, coll_n = 200;
	const char *dir = "clf:/mpi_small", *only = "", *which = "";
	const char *ops_only = "";
	const char *ufs_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int xfer_n = 500;
	const char *opts[2] = { "false", "true" };
	const char *names[2] = { "clf native", "romio opt" };
	double v[REPS_MAX];
	char path[512];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--bytes"))
			bytes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--accesses"))
			accesses = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--shapes"))
			shapes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--only"))
			only = argv[i + 1];
		else if (!strcmp(argv[i], "--path"))
			which = argv[i + 1];
		else if (!strcmp(argv[i], "--ufs-dir"))
			ufs_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--ops"))
			ops_only = argv[i + 1];
		else if (!strcmp(argv[i], "--calls"))
			xfer_n = atoi(argv[i + 1]);
	}
	if (reps < 1 || reps > REPS_MAX || bytes < 1 || accesses < 2 ||
	    shapes < 1 || xfer_n < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_small: bad option\n");
		MPI_Finalize();
		return 2;
	}
	if (!*only || !strcmp(only, "xfer"))
		xfer(dir, ufs_dir, bytes, xfer_n, reps, ops_only, which);
	for (int m = 0; m < 2 && (!*only || !strcmp(only, "coll")); m++) {
		if (*which && strcmp(which, m ? "romio" : "native"))
			continue;
		snprintf(path, sizeof(path), "%s-coll-%s", dir, opts[m]);
		for (int r = 0; r < reps; r++)
			v[r] = coll_once(path, opts[m], bytes, coll_n);
		if (rank == 0)
			printf("write_all of %d bytes x %d processes, %s: %.1f us\n",
			       bytes, nprocs, names[m], median(v, reps));
		if (rank == 0)
			MPI_File_delete(path, MPI_INFO_NULL);
	}
	for (int m = 0; m < 2 && (!*only || !strcmp(only, "views")); m++) {
		if (*which && strcmp(which, m ? "romio" : "native"))
			continue;
		snprintf(path, sizeof(path), "%s-views-%s", dir, opts[m]);
		for (int r = 0; r < reps; r++)
			v[r] = views_once(path, opts[m], accesses, shapes);
		if (rank == 0)
			printf("tiny access through a new view (%d shapes), %s: %.1f us\n",
			       shapes, names[m], median(v, reps));
		if (rank == 0)
			MPI_File_delete(path, MPI_INFO_NULL);
	}
	MPI_Finalize();
	return 0;
}
