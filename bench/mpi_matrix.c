// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_matrix.c -- the 2-D matrix experiment through MPI-IO.
 *
 * A side x side byte matrix is cut CYCLIC(k) x CYCLIC(k) into a grid of
 * cells.  With 2 processes the grid is 2 x 2 and each owns the two
 * diagonal cells of its checkerboard -- process p the cells (0, p) and
 * (1, 1-p) -- as bench/matrix_native.c does, so every view is nested
 * strided; with 1 the whole matrix; with any other count P the grid is
 * the PR x PC of MPI_Dims_create and each process owns one cell (4: 2 x 2,
 * 8: 4 x 2, 16: 4 x 4), so the experiment scales with the processes.
 * The filetype of a process is its part of one band of PR k rows (the
 * file view tiles it down the matrix): MPI darrays of the grid, two of
 * them in one struct for the checkerboard.  Scenario CLF-idx (run by default beside
 * the others) is CLF-phys with the view written as applications and
 * libraries often write it: an MPI_Type_indexed list of the band's row
 * pieces (side blocks per band), over the same vector-built layout; its
 * set_view time is printed beside CLF-phys's.
 *
 * For each k = kmin, 2 kmin, ... kmax and each scenario (mpi_bench.h:
 * CLF-phys, ROMIO-phys, ROMIO-rr, ROMIO-ufs) it writes the matrix with
 * MPI_File_write_all and reads it back with MPI_File_read_all, checks
 * every byte read, and prints the MB/s (matrix bytes / time of the
 * slowest process per call; after one untimed write and read, a sample
 * repeats the call for at least BENCH_SAMPLE_S, and the median of --reps
 * samples is shown), the ratios CLF-phys / ROMIO-rr
 * and CLF-phys / ROMIO-ufs, and how each write's time splits into
 * file-system data calls and the rest (ROMIO's shuffle, mostly).
 *
 *   mpiexec -n P mpi_matrix [--full] [--side N] [--kmin K] [--kmax K]
 *           [--reps N] [--iods N] [--stripe BYTES] [--scenarios LIST]
 *           [--ufs-dir DIR] [--csv FILE]
 *   (--scenarios clf_phys,clf_idx compares the two views alone)
 *
 * Default: a 8192 x 8192 matrix (64 MiB), --full 16384 x 16384 (256 MiB),
 * k = 1 ... 1024.  The clf instance comes from $CLF_CONFIG.  Writes are
 * not followed by MPI_File_sync in the timing, for any scenario: both the
 * iods and ufs write into the page cache, and reads find the data there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_bench.h"

static int rank, nprocs;

/* The process grid: PR rows by PC columns of cells per band. */
static int grid_rows, grid_cols;

static void grid_init(void)
{
	int dims[2] = { 0, 0 };

	if (nprocs <= 2) {
		grid_rows = grid_cols = nprocs == 1 ? 1 : 2;
		return;
	}
	MPI_Dims_create(nprocs, 2, dims);
	grid_rows = dims[0];
	grid_cols = dims[1];
}

/* Cell (ci, cj) of a band of grid_rows * k rows: a darray of the grid. */
static MPI_Datatype cell(int side, int k, int ci, int cj)
{
	int gsizes[2] = { grid_rows * k, side };
	int psizes[2] = { grid_rows, grid_cols };
	int distribs[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC };
	int dargs[2] = { k, k };
	MPI_Datatype t;

	MPI_Type_create_darray(grid_rows * grid_cols, ci * grid_cols + cj, 2,
			       gsizes, distribs, dargs, psizes, MPI_ORDER_C,
			       MPI_BYTE, &t);
	return t;
}

/* The filetype of process p: its part of one band, committed. */
static MPI_Datatype band(int side, int k, int p)
{
	MPI_Datatype t;

	if (nprocs == 1) {
		MPI_Type_contiguous(k * side, MPI_BYTE, &t);
	} else if (nprocs != 2) {
		t = cell(side, k, p / grid_cols, p % grid_cols);
	} else {
		/* Cell (0, p) lies in the first k rows, (1, 1-p) in the next:
		 * the struct's typemap increases, as a filetype's must. */
		MPI_Datatype c[2] = { cell(side, k, 0, p),
				      cell(side, k, 1, 1 - p) };
		int ones[2] = { 1, 1 };
		MPI_Aint zero[2] = { 0, 0 };

		MPI_Type_create_struct(2, ones, zero, c, &t);
		MPI_Type_free(&c[0]);
		MPI_Type_free(&c[1]);
	}
	MPI_Type_commit(&t);
	return t;
}

/*
 * The same part of a band as band(), as an indexed list of row pieces:
 * with 2 processes row r (0 <= r < 2k) holds the cells of column parity p
 * in the first k rows and 1 - p in the next; otherwise the rows of the
 * process's grid row, its grid column's pieces.
 */
static MPI_Datatype band_indexed(int side, int k, int p)
{
	int rows = grid_rows * k, nb = 0;
	int *len = malloc((size_t)side * rows * sizeof(*len) / k + 8);
	int *disp = malloc((size_t)side * rows * sizeof(*disp) / k + 8);
	MPI_Datatype t, f;

	for (int r = 0; r < rows; r++) {
		int ci = r / k, cj;

		if (nprocs == 1) {
			len[nb] = side;
			disp[nb++] = r * side;
			continue;
		}
		if (nprocs == 2) {
			cj = ci == 0 ? p : 1 - p;
		} else {
			if (ci != p / grid_cols)
				continue;
			cj = p % grid_cols;
		}
		for (int col = cj * k; col < side; col += grid_cols * k) {
			len[nb] = k;
			disp[nb++] = r * side + col;
		}
	}
	MPI_Type_indexed(nb, len, disp, MPI_BYTE, &t);
	/* The band's extent, as the darrays have it. */
	MPI_Type_create_resized(t, 0, (MPI_Aint)rows * side, &f);
	MPI_Type_free(&t);
	MPI_Type_commit(&f);
	free(len);
	free(disp);
	return f;
}

static uint8_t pattern(long long i, int k)
{
	return (uint8_t)(i * 7 + rank * 31 + k);
}

struct result {
	struct bench_time w, r;
	/* s: the fastest and slowest of the repetitions, for the plots'
	 * bars around the median. */
	double w_fast, w_slow, r_fast, r_slow;
	double setview;		/* s, slowest process's MPI_File_set_view */
	bool ran;
};

/* One scenario at one k: reps writes, then reps reads, checked. */
static int run(const struct bench_opts *o, enum bench_scenario sc, int side,
	       int k, struct result *res)
{
	long long n = (long long)side * side / nprocs, got, bad = -1;
	uint8_t *buf = malloc(n);
	MPI_Datatype *layout = malloc(nprocs * sizeof(*layout)), view;
	struct bench_time w[32], r[32];
	char path[4096], name[32];
	MPI_Info info;
	MPI_File fh;
	int rc, err = 0, errs, wcalls = 1, rcalls = 1;
	double t0, setview = 0;

	for (int p = 0; p < nprocs; p++)
		layout[p] = band(side, k, p);
	view = sc == SC_CLF_IDX ? band_indexed(side, k, rank) : layout[rank];
	info = bench_hints(o, sc, nprocs, layout, nprocs);
	snprintf(name, sizeof(name), "k%d", k);
	bench_path(o, sc, name, path, sizeof(path));
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_open(MPI_COMM_WORLD, path,
			   MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	t0 = MPI_Wtime();
	if (rc == MPI_SUCCESS)
		rc = MPI_File_set_view(fh, 0, MPI_BYTE, view, "native",
				       MPI_INFO_NULL);
	setview = MPI_Wtime() - t0;
	if (rc != MPI_SUCCESS) {
		char s[MPI_MAX_ERROR_STRING];
		int len;

		MPI_Error_string(rc, s, &len);
		fprintf(stderr, "mpi_matrix: %s: %s\n", path, s);
		err = 1;
		goto out;
	}
	for (long long i = 0; i < n; i++)
		buf[i] = pattern(i, k);
	/* One write and one read untimed: the file's pages exist and every
	 * sample overwrites them, and they tell how long a sample must be. */
	for (int c = 0; c < 2 && !err; c++) {
		struct bench_time t;

		MPI_File_seek(fh, 0, MPI_SEEK_SET);
		t = bench_access(fh, sc, c == 0, -1, buf, (int)n, MPI_BYTE,
				 &got);
		err = t.err != MPI_SUCCESS || got != n;
		if (c == 0)
			wcalls = bench_calls_per_sample(t.secs);
		else
			rcalls = bench_calls_per_sample(t.secs);
	}
	for (int rep = 0; rep < o->reps && !err; rep++) {
		w[rep] = (struct bench_time){ 0 };
		for (int c = 0; c < wcalls && !err; c++) {
			struct bench_time t;

			MPI_File_seek(fh, 0, MPI_SEEK_SET);
			t = bench_access(fh, sc, true, -1, buf, (int)n,
					 MPI_BYTE, &got);
			bench_time_add(&w[rep], &t);
			err = t.err != MPI_SUCCESS || got != n;
		}
		bench_time_per_call(&w[rep], wcalls);
	}
	for (int rep = 0; rep < o->reps && !err; rep++) {
		r[rep] = (struct bench_time){ 0 };
		for (int c = 0; c < rcalls && !err; c++) {
			struct bench_time t;

			memset(buf, 0, n);
			MPI_File_seek(fh, 0, MPI_SEEK_SET);
			t = bench_access(fh, sc, false, -1, buf, (int)n,
					 MPI_BYTE, &got);
			bench_time_add(&r[rep], &t);
			err = t.err != MPI_SUCCESS || got != n;
			for (long long i = 0; i < n && bad < 0; i++)
				if (buf[i] != pattern(i, k))
					bad = i;
			err |= bad >= 0;
		}
		bench_time_per_call(&r[rep], rcalls);
	}
	if (err)
		fprintf(stderr, "mpi_matrix: rank %d: %s, k %d: %s\n", rank,
			bench_sc_name[sc], k,
			bad >= 0 ? "a byte read back is wrong"
				 : "an access failed or moved too few bytes");
	MPI_File_close(&fh);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
out:
	MPI_Allreduce(&err, &errs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, &setview, 1, MPI_DOUBLE, MPI_MAX,
		      MPI_COMM_WORLD);
	res->setview = setview;
	if (!errs) {
		res->w = bench_median_time(w, o->reps);
		res->r = bench_median_time(r, o->reps);
		/* bench_median_time sorted them by time. */
		res->w_fast = w[0].secs;
		res->w_slow = w[o->reps - 1].secs;
		res->r_fast = r[0].secs;
		res->r_slow = r[o->reps - 1].secs;
		res->ran = true;
	}
	MPI_Info_free(&info);
	for (int p = 0; p < nprocs; p++)
		MPI_Type_free(&layout[p]);
	if (sc == SC_CLF_IDX)
		MPI_Type_free(&view);
	free(layout);
	free(buf);
	return errs;
}

static double mbs(double bytes, const struct bench_time *t)
{
	return bytes / 1e6 / t->secs;
}

static void print_header(const struct bench_opts *o)
{
	printf("\n%6s |", "k");
	for (int sc = 0; sc < SC_COUNT; sc++)
		if (o->scenarios & (1u << sc))
			printf(" %-15s |", bench_sc_name[sc]);
	printf(" %-13s | %-13s", "CLF/ROMIO-rr", "CLF/ROMIO-ufs");
	if (o->scenarios & (1u << SC_CLF_IDX))
		printf(" | %-13s", "idx/CLF-phys");
	if (o->scenarios & (1u << SC_CLF_RR))
		printf(" | %-13s", "CLF-rr/ROMIO-rr");
	printf("\n%6s |", "");
	for (int sc = 0; sc < SC_COUNT; sc++)
		if (o->scenarios & (1u << sc))
			printf(" %7s %7s |", "write", "read");
	printf(" %6s %6s | %6s %6s", "write", "read", "write", "read");
	if (o->scenarios & (1u << SC_CLF_IDX))
		printf(" | %6s %6s", "write", "read");
	if (o->scenarios & (1u << SC_CLF_RR))
		printf(" | %6s %6s", "write", "read");
	printf("\n");
}

static void ratio(const struct result *a, const struct result *b,
		  double *w, double *r)
{
	*w = *r = 0;
	if (a->ran && b->ran) {
		*w = b->w.secs / a->w.secs;
		*r = b->r.secs / a->r.secs;
	}
}

static void print_row(const struct bench_opts *o, int k, double bytes,
		      const struct result *res, FILE *csv)
{
	double rw, rr, uw, ur, iw, ir, xw, xr;

	ratio(&res[SC_CLF_RR], &res[SC_ROMIO_RR], &xw, &xr);
	ratio(&res[SC_CLF_PHYS], &res[SC_ROMIO_RR], &rw, &rr);
	ratio(&res[SC_CLF_PHYS], &res[SC_ROMIO_UFS], &uw, &ur);
	ratio(&res[SC_CLF_IDX], &res[SC_CLF_PHYS], &iw, &ir);
	printf("%6d |", k);
	for (int sc = 0; sc < SC_COUNT; sc++) {
		if (!(o->scenarios & (1u << sc)))
			continue;
		if (res[sc].ran)
			printf(" %7.1f %7.1f |", mbs(bytes, &res[sc].w),
			       mbs(bytes, &res[sc].r));
		else
			printf(" %7s %7s |", "failed", "");
	}
	printf(" %6.2f %6.2f | %6.2f %6.2f", rw, rr, uw, ur);
	if (o->scenarios & (1u << SC_CLF_IDX))
		printf(" | %6.2f %6.2f", iw, ir);
	if (o->scenarios & (1u << SC_CLF_RR))
		printf(" | %6.2f %6.2f", xw, xr);
	printf("\n");
	fflush(stdout);
	if (!csv)
		return;
	fprintf(csv, "%d", k);
	for (int sc = 0; sc < SC_CLF_RR; sc++) {
		const struct result *x = &res[sc];

		if (x->ran)
			fprintf(csv, ",%.2f,%.2f,%.6f,%.6f,%.6f,%.6f",
				mbs(bytes, &x->w), mbs(bytes, &x->r),
				x->w.io_secs, x->w.other_secs, x->r.io_secs,
				x->r.other_secs);
		else
			fprintf(csv, ",NaN,NaN,NaN,NaN,NaN,NaN");
	}
	fprintf(csv, ",%.3f,%.3f,%.3f,%.3f", rw, rr, uw, ur);
	/* MB/s of the slowest and fastest repetition, last: older readers
	 * of the columns above are not disturbed. */
	for (int sc = 0; sc < SC_CLF_RR; sc++) {
		const struct result *x = &res[sc];

		if (x->ran)
			fprintf(csv, ",%.2f,%.2f,%.2f,%.2f",
				bytes / 1e6 / x->w_slow, bytes / 1e6 / x->w_fast,
				bytes / 1e6 / x->r_slow, bytes / 1e6 / x->r_fast);
		else
			fprintf(csv, ",NaN,NaN,NaN,NaN");
	}
	/* CLF-rr after all of those (its key would clash with the ratio
	 * columns clf_rr_*): MB/s and its ratio to ROMIO-rr. */
	if (res[SC_CLF_RR].ran)
		fprintf(csv, ",%.2f,%.2f,%.3f,%.3f",
			mbs(bytes, &res[SC_CLF_RR].w),
			mbs(bytes, &res[SC_CLF_RR].r), xw, xr);
	else
		fprintf(csv, ",NaN,NaN,NaN,NaN");
	fprintf(csv, "\n");
	fflush(csv);
}

/* MPI_File_set_view of the vector-built and the indexed view. */
static void print_setview(const struct bench_opts *o, int kmin, int kmax,
			  struct result (*all)[SC_COUNT])
{
	if (!(o->scenarios & (1u << SC_CLF_IDX)) ||
	    !(o->scenarios & (1u << SC_CLF_PHYS)))
		return;
	printf("\nMPI_File_set_view, ms (slowest process): CLF-phys (vectors) vs CLF-idx (indexed list of row pieces, side blocks per band)\n");
	printf("%6s | %8s %8s\n", "k", "CLF-phys", "CLF-idx");
	for (int k = kmin, i = 0; k <= kmax; k *= 2, i++)
		printf("%6d | %8.2f %8.2f\n", k,
		       all[i][SC_CLF_PHYS].setview * 1e3,
		       all[i][SC_CLF_IDX].setview * 1e3);
}

static void print_split(const struct bench_opts *o, int kmin, int kmax,
			struct result (*all)[SC_COUNT])
{
	printf("\nwrite_all time per process, ms: file-system data calls + the rest (ROMIO: its shuffle); %% in data calls\n");
	printf("%6s |", "k");
	for (int sc = 0; sc < SC_COUNT; sc++)
		if (o->scenarios & (1u << sc))
			printf(" %-23s |", bench_sc_name[sc]);
	printf("\n");
	for (int k = kmin, i = 0; k <= kmax; k *= 2, i++) {
		printf("%6d |", k);
		for (int sc = 0; sc < SC_COUNT; sc++) {
			const struct bench_time *t = &all[i][sc].w;
			double tot = t->io_secs + t->other_secs;

			if (!(o->scenarios & (1u << sc)))
				continue;
			if (!all[i][sc].ran || tot <= 0) {
				printf(" %23s |", "-");
				continue;
			}
			printf(" %7.1f + %6.1f (%3.0f%%) |", t->io_secs * 1e3,
			       t->other_secs * 1e3, 100 * t->io_secs / tot);
		}
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int side = 8192, kmin = 1, kmax = 1024, failed = 0, rows = 0;
	struct result (*all)[SC_COUNT];
	FILE *csv = NULL;
	double bytes;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	argc = bench_opts_parse(&o, argc, argv, "mpi_matrix");
	if (argc > 0 && !o.scenarios_set)
		o.scenarios |= 1u << SC_CLF_IDX;
	for (int i = 1; i < argc && argc > 0; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--full")) {
			side = 16384;
			continue;
		}
		if (!strcmp(argv[i], "--side"))
			side = atoi(v);
		else if (!strcmp(argv[i], "--kmin"))
			kmin = atoi(v);
		else if (!strcmp(argv[i], "--kmax"))
			kmax = atoi(v);
		else
			argc = -1;
		i++;
	}
	grid_init();
	if (argc < 0 || kmin < 1 || kmax < kmin ||
	    side % (grid_cols * kmax) || side % (grid_rows * kmax) ||
	    side < 2 * kmax) {
		if (rank == 0)
			fprintf(stderr,
				"usage: mpiexec -n P mpi_matrix [--full] [--side N] [--kmin K] [--kmax K] [common options]\n"
				"  side a multiple of kmax times each side of the %d x %d process grid\n",
				grid_rows, grid_cols);
		MPI_Finalize();
		return 2;
	}
	bytes = (double)side * side;
	if (rank == 0) {
		printf("2-D matrix %d x %d bytes (%.0f MiB), %d process%s, %s, CYCLIC(k) x CYCLIC(k)\n",
		       side, side, bytes / (1 << 20), nprocs,
		       nprocs > 1 ? "es" : "",
		       nprocs == 2 ? "checkerboard (2 cells each)"
				   : nprocs == 1 ? "the whole matrix"
						 : "one cell each");
		if (nprocs > 2)
			printf("process grid %d x %d\n", grid_rows, grid_cols);
		printf("MB/s = matrix bytes / time of the slowest process per call; a sample repeats the call for >= %.2f s after one untimed write and read; median of %d samples; every byte read checked\n",
		       BENCH_SAMPLE_S, o.reps);
		bench_print_hints(&o, nprocs);
		if (o.csv) {
			csv = fopen(o.csv, "w");
			if (!csv)
				perror(o.csv);
		}
		if (csv) {
			fprintf(csv, "k");
			for (int sc = 0; sc < SC_CLF_RR; sc++)
				fprintf(csv,
					",%1$s_write,%1$s_read,%1$s_write_io_s,%1$s_write_other_s,%1$s_read_io_s,%1$s_read_other_s",
					bench_sc_key[sc]);
			fprintf(csv, ",clf_rr_write,clf_rr_read,clf_ufs_write,clf_ufs_read");
			for (int sc = 0; sc < SC_CLF_RR; sc++)
				fprintf(csv,
					",%1$s_write_min,%1$s_write_max,%1$s_read_min,%1$s_read_max",
					bench_sc_key[sc]);
			fprintf(csv, ",clfrr_write,clfrr_read,clfrr_over_romio_rr_write,clfrr_over_romio_rr_read\n");
		}
		print_header(&o);
	}
	for (int k = kmin; k <= kmax; k *= 2)
		rows++;
	all = calloc(rows, sizeof(*all));
	for (int k = kmin, i = 0; k <= kmax; k *= 2, i++) {
		for (int sc = 0; sc < SC_COUNT; sc++)
			if (o.scenarios & (1u << sc))
				failed |= run(&o, sc, side, k, &all[i][sc]);
		if (rank == 0)
			print_row(&o, k, bytes, all[i], csv);
	}
	if (rank == 0) {
		printf("CLF/X = CLF-phys MB/s / X MB/s; idx/CLF-phys = CLF-idx MB/s / CLF-phys MB/s (0: not measured)\n");
		print_split(&o, kmin, kmax, all);
		print_setview(&o, kmin, kmax, all);
		if (csv)
			fclose(csv);
	}
	free(all);
	MPI_Finalize();
	return failed ? 1 : 0;
}
