// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dtype_setup.c -- what setting a view written as a long MPI_Type_indexed
 * list costs clf: converting the MPI type (romio-clf's converter, the
 * code MPI_File_set_view runs) and mapping it onto every subfile of the
 * layout, for a matching layout and for round-robin.
 *
 * The view is the checkerboard of issue 9: an N x N byte matrix in k x k
 * cells, cell (i, j) owned by process (i + j) % 2, listed as one block per
 * row piece (N^2 / 2k blocks: 2^21 for N = 8192, k = 16).  The matching
 * layout is the two processes' parts of a band of 2k rows built from
 * darrays (vectors), as bench/mpi_matrix has it, the
 * round-robin one 64 KiB stripes over 2 subfiles.  Printed per process
 * part: conversion time, the description's size (encoded, and the heap
 * the converted type keeps), mapping time per layout.  Building the MPI
 * list itself is the application's and is not counted.
 *
 *   mpiexec -n 1 dtype_setup [--side N] [--k K] [--reps R]
 */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ad_clf_dtype.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this process: on a shared machine, what the code costs. */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What MPI_Type_get_contents alone costs: the list copied out of MPI. */
static double contents_cpu(MPI_Datatype f)
{
	int ni, na, nt, comb;
	MPI_Datatype inner;
	MPI_Aint bounds[2];
	double t0;
	int *ints;

	MPI_Type_get_contents(f, 0, 2, 1, NULL, bounds, &inner);
	MPI_Type_get_envelope(inner, &ni, &na, &nt, &comb);
	ints = malloc(ni * sizeof(*ints));
	t0 = cpu();
	MPI_Type_get_contents(inner, ni, 0, 1, ints, NULL, &nt);
	t0 = cpu() - t0;
	free(ints);
	MPI_Type_free(&inner);
	return t0;
}

static MPI_Datatype indexed_part(int side, int k, int rank)
{
	long nb = (long)side * (side / (2 * k));
	int *len = malloc(nb * sizeof(*len)), *disp = malloc(nb * sizeof(*disp));
	MPI_Datatype t, f;
	long b = 0;

	for (int row = 0; row < side; row++)
		for (int col = ((row / k + rank) % 2) * k; col < side; col += 2 * k) {
			len[b] = k;
			disp[b++] = row * side + col;
		}
	MPI_Type_indexed((int)nb, len, disp, MPI_BYTE, &t);
	MPI_Type_create_resized(t, 0, (MPI_Aint)side * side, &f);
	MPI_Type_free(&t);
	MPI_Type_commit(&f);
	free(len);
	free(disp);
	return f;
}

/*
 * The same part of one band of 2k rows (a layout tiles it down the
 * matrix), from two darray cells of the 2 x 2 grid, as bench/mpi_matrix
 * builds it.
 */
static MPI_Datatype darray_part(int side, int k, int rank)
{
	int g[2] = { 2 * k, side }, dist[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC };
	int darg[2] = { k, k }, ps[2] = { 2, 2 }, ones[2] = { 1, 1 };
	MPI_Aint zero[2] = { 0, 0 };
	MPI_Datatype c[2], t;

	/* Cells (0, rank) and (1, 1 - rank) of the grid. */
	MPI_Type_create_darray(4, rank, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_BYTE, &c[0]);
	MPI_Type_create_darray(4, 2 + 1 - rank, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_BYTE,
			       &c[1]);
	MPI_Type_create_struct(2, ones, zero, c, &t);
	MPI_Type_free(&c[0]);
	MPI_Type_free(&c[1]);
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median time of reps mappings of view onto the n subfiles of a layout. */
static double map_time(CLF_Datatype view, MPI_Aint w0, CLF_Datatype *sub, int n, int reps)
{
	double t[64];

	for (int r = 0; r < reps; r++) {
		double t0 = now();

		for (int j = 0; j < n; j++) {
			CLF_Mapping *m = NULL;

			if (CLF_Mapping_create(view, w0, sub[j], 0, &m)) {
				fprintf(stderr, "dtype_setup: mapping: %s\n", CLF_Last_error());
				exit(1);
			}
			CLF_Mapping_free(m);
		}
		t[r] = now() - t0;
	}
	qsort(t, reps, sizeof(*t), cmp_double);
	return t[reps / 2];
}

int main(int argc, char **argv)
{
	int side = 8192, k = 16, reps = 5;
	char msg[ADIOI_CLF_DTYPE_MSG_LEN];
	CLF_Datatype match[2], rr[2];
	MPI_Aint w0;

	MPI_Init(&argc, &argv);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--side"))
			side = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--k"))
			k = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
	}
	if (side % (2 * k) || reps < 1 || reps > 64) {
		fprintf(stderr, "usage: dtype_setup [--side N] [--k K] [--reps 1..64], N a multiple of 2K\n");
		return 2;
	}
	for (int p = 0; p < 2; p++) {
		MPI_Datatype d = darray_part(side, k, p);

		if (ADIOI_CLF_Dtype_convert(d, ADIOI_CLF_DTYPE_LAYOUT, &match[p], &w0, msg,
					    sizeof(msg))) {
			fprintf(stderr, "dtype_setup: matching layout: %s\n", msg);
			return 1;
		}
		MPI_Type_free(&d);
	}
	if (CLF_Type_pitfalls(0, 65535, 131072, 1, 65536, 2, CLF_BYTE, rr)) {
		fprintf(stderr, "dtype_setup: round-robin: %s\n", CLF_Last_error());
		return 1;
	}
	printf("checkerboard view of a %d x %d byte matrix, %d x %d cells, as MPI_Type_indexed of %ld blocks per process\n",
	       side, side, k, k, (long)side * (side / (2 * k)));
	printf("%4s | %10s %10s %12s | %9s %9s | %12s | %12s\n", "part", "convert ms",
	       "(cpu ms)", "(of it MPI)", "encoded B", "heap KiB", "map match ms", "map rr ms");
	for (int p = 0; p < 2; p++) {
		MPI_Datatype f = indexed_part(side, k, p);
		double t[64], c[64], conv;
		size_t heap0, heap1 = 0;
		CLF_Datatype v = NULL;
		int64_t enc;

		for (int r = 0; r < reps; r++) {
			double t0;

			CLF_Type_free(&v);
			heap0 = mallinfo2().uordblks;
			c[r] = cpu();
			t0 = now();
			if (ADIOI_CLF_Dtype_convert(f, ADIOI_CLF_DTYPE_VIEW, &v, &w0, msg,
						    sizeof(msg))) {
				fprintf(stderr, "dtype_setup: view: %s\n", msg);
				return 1;
			}
			t[r] = now() - t0;
			c[r] = cpu() - c[r];
			heap1 = mallinfo2().uordblks - heap0;
		}
		qsort(t, reps, sizeof(*t), cmp_double);
		qsort(c, reps, sizeof(*c), cmp_double);
		conv = t[reps / 2];
		enc = CLF_Type_encode(v, NULL, 0);
		printf("%4d | %10.2f %10.2f %12.2f | %9lld %9.1f | %12.3f | %12.3f\n", p,
		       conv * 1e3, c[reps / 2] * 1e3, contents_cpu(f) * 1e3, (long long)enc, heap1 / 1024.0, map_time(v, w0, match, 2, reps) * 1e3,
		       map_time(v, w0, rr, 2, reps) * 1e3);
		CLF_Type_free(&v);
		MPI_Type_free(&f);
	}
	printf("median of %d runs; cpu: this process's CPU time; MPI: MPI_Type_get_contents copying the list out of MPI (part of convert); heap: what the converted type keeps (malloc'd bytes after - before)\n",
	       reps);
	for (int p = 0; p < 2; p++) {
		CLF_Type_free(&match[p]);
		CLF_Type_free(&rr[p]);
	}
	MPI_Finalize();
	return 0;
}
