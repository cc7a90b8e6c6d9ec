// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_bench.c -- what a mapping costs to set up and to walk.
 *
 * A 16384 x 16384-byte matrix read by 4 processes through CYCLIC(1) x
 * CYCLIC(1) views (process (i, j) owns rows = i and columns = j mod 2),
 * against two physical layouts of 4 subfiles:
 *   (a) the layout matching the views (subfile p = view of process p),
 *   (b) round-robin striping, 64 KiB stripes over 4 subfiles.
 * Prints, per layout: set-up time and memory of CLF_Mapping_create for
 * all 4 subfiles of one process, the number of runs of the whole view,
 * and the time per run of CLF_Mapping_foreach.
 *
 *   mapping_bench [matrix_side] [walk_bytes]
 *
 * walk_bytes bounds the view range walked for (b) (whose runs are single
 * bytes); (a) is always walked whole.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clf.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static CLF_Datatype cyclic1_view(int64_t side, int pi, int pj)
{
	CLF_Datatype row = CLF_Type_vector(pj, pj, 2, side / 2, CLF_BYTE);
	CLF_Datatype v = CLF_Type_vector(pi * side, pi * side + side - 1,
					 2 * side, side / 2, row);

	CLF_Type_free(&row);
	if (!v) {
		fprintf(stderr, "mapping_bench: %s\n", CLF_Last_error());
		exit(1);
	}
	return v;
}

struct walk {
	int64_t runs, bytes;
};

static int count_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct walk *w = arg;

	w->runs++;
	w->bytes += len;
	return 0;
}

static void measure(const char *name, CLF_Datatype view, CLF_Datatype *sub,
		    int64_t walk_bytes)
{
	CLF_Mapping *m[4];
	struct walk w = { 0 };
	struct mallinfo2 before, after;
	double t0, t1, t2;
	int reps = 100;

	/* Set-up: all four mappings of one process, best of reps. */
	double best = 1e9;

	for (int r = 0; r < reps; r++) {
		before = mallinfo2();
		t0 = now();
		for (int j = 0; j < 4; j++)
			if (CLF_Mapping_create(view, 0, sub[j], 0, &m[j])) {
				fprintf(stderr, "mapping_bench: %s\n",
					CLF_Last_error());
				exit(1);
			}
		t1 = now();
		after = mallinfo2();
		if (t1 - t0 < best)
			best = t1 - t0;
		if (r + 1 < reps)
			for (int j = 0; j < 4; j++)
				CLF_Mapping_free(m[j]);
	}
	t1 = now();
	for (int j = 0; j < 4; j++)
		CLF_Mapping_foreach(m[j], 0, walk_bytes, count_run, &w);
	t2 = now();
	printf("%-28s %10.1f us %9zu B %12lld %12lld %10.1f ns\n", name,
	       best * 1e6, after.uordblks - before.uordblks,
	       (long long)w.runs, (long long)w.bytes,
	       w.runs ? (t2 - t1) * 1e9 / w.runs : 0.0);
	for (int j = 0; j < 4; j++)
		CLF_Mapping_free(m[j]);
}

int main(int argc, char **argv)
{
	int64_t side = argc > 1 ? atoll(argv[1]) : 16384;
	int64_t view_bytes = side * side / 4;
	int64_t walk = argc > 2 ? atoll(argv[2]) : 16 << 20;
	CLF_Datatype match[4], rr[4], view;

	if (walk > view_bytes)
		walk = view_bytes;
	for (int p = 0; p < 4; p++)
		match[p] = cyclic1_view(side, p / 2, p % 2);
	if (CLF_Type_pitfalls(0, 65535, 4 * 65536, 1, 65536, 4, CLF_BYTE, rr) ||
	    CLF_Pattern_check(4, match) || CLF_Pattern_check(4, rr)) {
		fprintf(stderr, "mapping_bench: %s\n", CLF_Last_error());
		return 1;
	}
	view = match[0];
	printf("matrix %lld x %lld bytes, view of process (0,0): %lld bytes, "
	       "CYCLIC(1) x CYCLIC(1)\n", (long long)side, (long long)side,
	       (long long)view_bytes);
	printf("%-28s %13s %11s %12s %12s %13s\n", "layout", "set-up(4 map)",
	       "memory", "runs", "bytes", "per run");
	measure("(a) matching layout", view, match, view_bytes);
	measure("(b) round-robin 64 KiB x 4", view, rr, walk);
	for (int p = 0; p < 4; p++) {
		CLF_Type_free(&match[p]);
		CLF_Type_free(&rr[p]);
	}
	return 0;
}
