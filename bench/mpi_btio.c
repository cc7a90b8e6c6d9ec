// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_btio.c -- the access pattern of NAS BTIO ("full" MPI-IO mode)
 * through MPI-IO, in the scenarios of mpi_bench.h.
 *
 * The solution of BT is a 3-D grid of N^3 cells of 5 doubles (40 bytes),
 * stored in the file x fastest, then y, then z; every time step appends
 * one whole grid.  The processes form a cols x rows grid and own
 * ncells = max(cols, rows) cells each by BT's multi-partitioning
 * (make_set): the grid is cut into cols x rows x ncells blocks (x, y, z)
 * and process (col, row) owns block (col + c mod cols, row - c mod rows, c)
 * for c = 0 .. ncells-1, so each view is nested strided -- a struct of
 * 3-D subarrays of 40-byte elements, as BTIO builds it.  P = q^2
 * processes make BT's own q x q grid (q cells each); 2 processes make a
 * 1 x 2 grid: x whole, y and z halved, each process owning the two
 * diagonal blocks (y = p, z = 0) and (y = 1 - p, z = 1), like the 2-D
 * matrix's checkerboard.  In memory each cell carries BT's two ghost
 * layers on every side (u(5, -2:n+1, ...)), so the memory datatype is
 * nested strided too.  Each step is one
 * MPI_File_write_at_all, as in BTIO; the read-back is one
 * MPI_File_read_at_all per step, every value checked (ghosts untouched).
 *
 *   mpiexec -n 1|2|4|9.. mpi_btio [--n N] [--steps S] [--grid CxR]
 *           [--reps N] [--iods N] [--stripe BYTES] [--scenarios LIST]
 *           [--ufs-dir DIR] [--csv FILE]
 *
 * Default: N = 64 (class A), 10 steps (class A writes 40: --steps 40),
 * the grid q x q for P = q^2 processes and 1 x 2 for 2 (--grid CxR:
 * any C x R = P).
 * MB/s = bytes of all steps / the sum over steps of the slowest process's
 * time.  After one untimed pass over all steps each way, a sample repeats
 * the pass for at least BENCH_SAMPLE_S; the median of --reps samples is
 * shown.  With --csv the rows are appended (one per scenario; a header
 * when the file is new).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_bench.h"

#define GHOST 2
#define MAXQ 16

static int rank, nprocs, n_grid;
static int cols, rows, ncells;	/* process grid (x, y); cells per process */

struct cell {
	int lo[3], size[3];	/* x, y, z */
};

static struct cell cells[MAXQ];

/* Blocks along x, y and z. */
static int blocks(int d)
{
	return d == 0 ? cols : d == 1 ? rows : ncells;
}

/* BT's make_set for process p: the ncells cells it owns. */
static void make_set(int p)
{
	int coord[MAXQ][3];

	coord[0][0] = p % cols;
	coord[0][1] = p / cols;
	coord[0][2] = 0;
	for (int c = 1; c < ncells; c++) {
		coord[c][0] = (coord[c - 1][0] + 1) % cols;
		coord[c][1] = (coord[c - 1][1] - 1 + rows) % rows;
		coord[c][2] = c;
	}
	for (int c = 0; c < ncells; c++) {
		for (int d = 0; d < 3; d++) {
			int size = n_grid / blocks(d),
			    excess = n_grid % blocks(d);
			int i = coord[c][d];

			if (i < excess) {
				cells[c].size[d] = size + 1;
				cells[c].lo[d] = i * (size + 1);
			} else {
				cells[c].size[d] = size;
				cells[c].lo[d] = excess * (size + 1) +
						 (i - excess) * size;
			}
		}
	}
}

/* A cell's padded edge in memory along d: the largest cell plus ghosts. */
static int padded(int d)
{
	return (n_grid + blocks(d) - 1) / blocks(d) + 2 * GHOST;
}

/* Elements of one padded cell in memory. */
static size_t padded_cell(void)
{
	return (size_t)padded(0) * padded(1) * padded(2);
}

/*
 * The filetype of process p (cells from make_set(p)): a struct of 3-D
 * subarrays of 40-byte elements; the cells lie in z-blocks 0, 1, ...
 * ncells-1, so its typemap increases.
 */
static MPI_Datatype file_type(MPI_Datatype element, int p)
{
	MPI_Datatype sub[MAXQ], t;
	int ones[MAXQ], sizes[3] = { n_grid, n_grid, n_grid };
	MPI_Aint zero[MAXQ];

	make_set(p);
	for (int c = 0; c < ncells; c++) {
		MPI_Type_create_subarray(3, sizes, cells[c].size, cells[c].lo,
					 MPI_ORDER_FORTRAN, element, &sub[c]);
		ones[c] = 1;
		zero[c] = 0;
	}
	MPI_Type_create_struct(ncells, ones, zero, sub, &t);
	MPI_Type_commit(&t);
	for (int c = 0; c < ncells; c++)
		MPI_Type_free(&sub[c]);
	return t;
}

/* This process's memory type: each cell's interior, ghosts skipped. */
static MPI_Datatype mem_type(MPI_Datatype element)
{
	int sizes[3] = { padded(0), padded(1), padded(2) };
	int starts[3] = { GHOST, GHOST, GHOST }, ones[MAXQ];
	MPI_Aint disp[MAXQ];
	MPI_Datatype sub[MAXQ], t;

	make_set(rank);
	for (int c = 0; c < ncells; c++) {
		MPI_Type_create_subarray(3, sizes, cells[c].size, starts,
					 MPI_ORDER_FORTRAN, element, &sub[c]);
		ones[c] = 1;
		disp[c] = (MPI_Aint)(c * padded_cell() * 40);
	}
	MPI_Type_create_struct(ncells, ones, disp, sub, &t);
	MPI_Type_commit(&t);
	for (int c = 0; c < ncells; c++)
		MPI_Type_free(&sub[c]);
	return t;
}

static double value(int step, int x, int y, int z, int m)
{
	return (double)step * 1e8 +
	       ((double)((int64_t)z * n_grid + y) * n_grid + x) * 5 + m;
}

/*
 * What element (i, j, k) of cell c holds in memory, component m: its
 * value at step, or -1 in the ghost layers.
 */
static double expected(int c, int i, int j, int k, int m, int step)
{
	const struct cell *cl = &cells[c];

	i -= GHOST;
	j -= GHOST;
	k -= GHOST;
	if (i < 0 || j < 0 || k < 0 || i >= cl->size[0] ||
	    j >= cl->size[1] || k >= cl->size[2])
		return -1.0;
	return value(step, cl->lo[0] + i, cl->lo[1] + j, cl->lo[2] + k, m);
}

/* Fill (or check, returning the wrong values) this process's memory. */
static long fill_or_check(double *u, int step, int check)
{
	long wrong = 0;
	double *e = u;

	make_set(rank);
	for (int c = 0; c < ncells; c++)
		for (int k = 0; k < padded(2); k++)
			for (int j = 0; j < padded(1); j++)
				for (int i = 0; i < padded(0); i++)
					for (int m = 0; m < 5; m++, e++) {
						double v = expected(c, i, j, k,
								    m, step);

						if (!check)
							*e = v;
						else if (*e != v)
							wrong++;
					}
	return wrong;
}

struct result {
	struct bench_time w, r;
	/* s: the fastest and slowest of the repetitions, for the plots'
	 * bars around the median. */
	double w_fast, w_slow, r_fast, r_slow;
	bool ran;
};

/* Every step written once, as BTIO does; the times added into *t. */
static int write_pass(MPI_File fh, enum bench_scenario sc, int steps,
		      double *u, MPI_Datatype mem, MPI_Offset my_elems,
		      long long want, struct bench_time *t)
{
	long long got;

	for (int s = 0; s < steps; s++) {
		struct bench_time one;

		fill_or_check(u, s, 0);
		one = bench_access(fh, sc, true, s * my_elems, u, 1, mem, &got);
		bench_time_add(t, &one);
		if (one.err != MPI_SUCCESS || got != want)
			return 1;
	}
	return 0;
}

/* Every step read back and checked (ghosts untouched). */
static int read_pass(MPI_File fh, enum bench_scenario sc, int steps,
		     double *u, MPI_Datatype mem, MPI_Offset my_elems,
		     long long want, struct bench_time *t, long *wrong)
{
	long long got;

	for (int s = 0; s < steps; s++) {
		struct bench_time one;

		fill_or_check(u, -1, 0);	/* none right */
		one = bench_access(fh, sc, false, s * my_elems, u, 1, mem,
				   &got);
		bench_time_add(t, &one);
		if (one.err != MPI_SUCCESS || got != want)
			return 1;
		*wrong += fill_or_check(u, s, 1);
		if (*wrong)
			return 1;
	}
	return 0;
}

static int run(const struct bench_opts *o, enum bench_scenario sc, int steps,
	       struct result *res)
{
	size_t ubytes = ncells * padded_cell() * 40;
	double *u = malloc(ubytes);
	MPI_Datatype element, layout[MAXQ * MAXQ], mem;
	struct bench_time w[32], r[32];
	MPI_Offset my_elems = 0;
	long long want;
	char path[4096];
	long wrong = 0;
	MPI_Info info;
	MPI_File fh;
	int rc, err = 0, errs, size, wpasses = 1, rpasses = 1;

	MPI_Type_contiguous(5, MPI_DOUBLE, &element);
	MPI_Type_commit(&element);
	for (int p = 0; p < nprocs; p++)
		layout[p] = file_type(element, p);
	mem = mem_type(element);
	MPI_Type_size(mem, &size);
	want = size;
	my_elems = size / 40;
	info = bench_hints(o, sc, nprocs, layout, nprocs);
	bench_path(o, sc, "grid", path, sizeof(path));
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_open(MPI_COMM_WORLD, path,
			   MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	if (rc == MPI_SUCCESS)
		rc = MPI_File_set_view(fh, 0, element, layout[rank], "native",
				       MPI_INFO_NULL);
	if (rc != MPI_SUCCESS) {
		char s[MPI_MAX_ERROR_STRING];
		int len;

		MPI_Error_string(rc, s, &len);
		fprintf(stderr, "mpi_btio: %s: %s\n", path, s);
		err = 1;
		goto out;
	}
	/* One untimed pass each way: the file exists whole, every sample
	 * overwrites it, and the pass tells how many make a sample. */
	for (int pass = -1; pass < o->reps && !err; pass++) {
		struct bench_time t = { 0 };

		for (int c = 0; c < (pass < 0 ? 1 : wpasses) && !err; c++)
			err = write_pass(fh, sc, steps, u, mem, my_elems, want,
					 &t);
		if (pass < 0) {
			wpasses = bench_calls_per_sample(t.secs);
			continue;
		}
		bench_time_per_call(&t, wpasses);
		w[pass] = t;
	}
	for (int pass = -1; pass < o->reps && !err; pass++) {
		struct bench_time t = { 0 };

		for (int c = 0; c < (pass < 0 ? 1 : rpasses) && !err; c++)
			err = read_pass(fh, sc, steps, u, mem, my_elems, want,
					&t, &wrong);
		if (pass < 0) {
			rpasses = bench_calls_per_sample(t.secs);
			continue;
		}
		bench_time_per_call(&t, rpasses);
		r[pass] = t;
	}
	if (err)
		fprintf(stderr, "mpi_btio: rank %d: %s: %s\n", rank,
			bench_sc_name[sc],
			wrong ? "values read back are wrong"
			      : "an access failed or moved too few bytes");
	MPI_File_close(&fh);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
out:
	MPI_Allreduce(&err, &errs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
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
	MPI_Type_free(&mem);
	for (int p = 0; p < nprocs; p++)
		MPI_Type_free(&layout[p]);
	MPI_Type_free(&element);
	free(u);
	return errs;
}

static void print_results(const struct bench_opts *o, double bytes,
			  const struct result *res, int steps, FILE *csv)
{
	printf("\n%-10s | %10s %10s | %-34s\n", "scenario", "write MB/s",
	       "read MB/s", "write, s: data calls + rest (% data)");
	for (int sc = 0; sc < SC_COUNT; sc++) {
		const struct result *x = &res[sc];
		double tot = x->w.io_secs + x->w.other_secs;

		if (!(o->scenarios & (1u << sc)))
			continue;
		if (!x->ran) {
			printf("%-10s | %10s\n", bench_sc_name[sc], "failed");
			continue;
		}
		printf("%-10s | %10.1f %10.1f | %8.3f + %8.3f (%3.0f%%)\n",
		       bench_sc_name[sc], bytes / 1e6 / x->w.secs,
		       bytes / 1e6 / x->r.secs, x->w.io_secs, x->w.other_secs,
		       tot > 0 ? 100 * x->w.io_secs / tot : 0);
		if (csv)
			fprintf(csv, "%d,%dx%d,%s,%d,%.2f,%.2f,%.6f,%.6f,%.6f,%.6f,%.2f,%.2f,%.2f,%.2f\n",
				nprocs, cols, rows, bench_sc_key[sc], steps,
				bytes / 1e6 / x->w.secs,
				bytes / 1e6 / x->r.secs, x->w.io_secs,
				x->w.other_secs, x->r.io_secs,
				x->r.other_secs, bytes / 1e6 / x->w_slow,
				bytes / 1e6 / x->w_fast,
				bytes / 1e6 / x->r_slow,
				bytes / 1e6 / x->r_fast);
	}
	for (int sc = SC_ROMIO_RR; sc <= SC_ROMIO_UFS; sc++)
		if (res[SC_CLF_PHYS].ran && res[sc].ran)
			printf("CLF-phys / %s: write %.2f, read %.2f\n",
			       bench_sc_name[sc],
			       res[sc].w.secs / res[SC_CLF_PHYS].w.secs,
			       res[sc].r.secs / res[SC_CLF_PHYS].r.secs);
	if (res[SC_CLF_RR].ran && res[SC_ROMIO_RR].ran)
		printf("CLF-rr / ROMIO-rr: write %.2f, read %.2f\n",
		       res[SC_ROMIO_RR].w.secs / res[SC_CLF_RR].w.secs,
		       res[SC_ROMIO_RR].r.secs / res[SC_CLF_RR].r.secs);
}

int main(int argc, char **argv)
{
	struct result res[SC_COUNT] = { 0 };
	int steps = 10, failed = 0;
	struct bench_opts o;
	FILE *csv = NULL;
	double bytes;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	n_grid = 64;
	argc = bench_opts_parse(&o, argc, argv, "mpi_btio");
	for (int i = 1; i < argc && argc > 0; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--n"))
			n_grid = atoi(v);
		else if (!strcmp(argv[i], "--steps"))
			steps = atoi(v);
		else if (!strcmp(argv[i], "--grid") &&
			 sscanf(v, "%dx%d", &cols, &rows) == 2)
			;
		else
			argc = -1;
	}
	if (!cols) {
		/* BT's square grid; 2 processes: 1 x 2. */
		for (cols = 1; cols * cols < nprocs; cols++)
			;
		rows = cols;
		if (cols * cols != nprocs && nprocs == 2) {
			cols = 1;
			rows = 2;
		}
	}
	ncells = cols > rows ? cols : rows;
	if (argc < 0 || cols < 1 || rows < 1 || cols * rows != nprocs ||
	    ncells > MAXQ || n_grid < ncells || steps < 1) {
		if (rank == 0)
			fprintf(stderr,
				"usage: mpiexec -n 1|2|4|9|.. mpi_btio [--n N] [--steps S] [--grid CxR] [common options]\n"
				"  C x R processes (default: q x q for a square number, 1 x 2 for 2), at most %d cells each, N >= cells\n",
				MAXQ);
		MPI_Finalize();
		return 2;
	}
	bytes = (double)steps * n_grid * n_grid * n_grid * 40;
	if (rank == 0) {
		printf("BTIO-like: %d^3 cells of 5 doubles%s, %d time steps appended (%.1f MB), %d process%s, %d x %d process grid (x, y), %d block%s each (%d x %d x %d cells)\n",
		       n_grid, n_grid == 64 ? " (class A)" : "", steps,
		       bytes / 1e6, nprocs, nprocs > 1 ? "es" : "", cols, rows,
		       ncells, ncells > 1 ? "s" : "", n_grid / cols,
		       n_grid / rows, n_grid / ncells);
		printf("one write_at_all / read_at_all per step, nested-strided file and memory types; MB/s over all steps; a sample repeats all steps for >= %.2f s after one untimed pass; median of %d samples; every value checked\n",
		       BENCH_SAMPLE_S,
		       o.reps);
		bench_print_hints(&o, nprocs);
		if (o.csv) {
			FILE *f = fopen(o.csv, "r");
			bool fresh = !f || fgetc(f) == EOF;

			if (f)
				fclose(f);
			csv = fopen(o.csv, "a");
			if (!csv)
				perror(o.csv);
			else if (fresh)
				fprintf(csv, "procs,grid,scenario,steps,write,read,write_io_s,write_other_s,read_io_s,read_other_s,write_min,write_max,read_min,read_max\n");
		}
	}
	for (int sc = 0; sc < SC_COUNT; sc++)
		if (o.scenarios & (1u << sc))
			failed |= run(&o, sc, steps, &res[sc]);
	if (rank == 0) {
		print_results(&o, bytes, res, steps, csv);
		if (csv)
			fclose(csv);
	}
	MPI_Finalize();
	return failed ? 1 : 0;
}
