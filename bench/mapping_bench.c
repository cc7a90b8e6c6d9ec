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
 *
 * Two struct views over the same file and the round-robin layout follow,
 * walked over walk_bytes too:
 *   (c) interleaved struct: fields 0 and 2 (8 bytes each) of 32-byte
 *       records, as a struct of two whole-file vectors (members interleave);
 *   (d) indexed rows: 16 irregular blocks in each 1 KiB row, every other
 *       row (a struct of 16 members at the inner level);
 *   (e) the fields of (c) as a record type of extent 32, tiled as a
 *       filetype: the mapping's period is one stripe cycle (256 KiB), whose
 *       4096 runs it lists once (mapping_table.c).
 *
 * Then views whose extent is incommensurate with the stripe cycle, mapped
 * tiled (mapping_tiles.c), walked over one tile of the view:
 *   (f) process 1's cells of a 2 x 2 CYCLIC(16) checkerboard over a
 *       2048 x 2048 matrix, written as one block per row piece (131072
 *       blocks, extent 4194272, lower bound 16), as issue 9 reports it;
 *   (g) 3 blocks (240 bytes) in an extent of 2^20 + 1, walked over 10^5
 *       tiles.
 * For these the count (CLF_Mapping_count) of the walked range is timed
 * too: per subfile, all four.
 *
 * Last, a regular view over a large irregular layout:
 *   (h) 4 KiB of every 8 KiB over 10^5 pieces (mostly 1 to 16 bytes)
 *       dealt at random to 4 subfiles, the period a multiple of 512: the
 *       engine estimates the periodic intersection too large and maps
 *       tiled at once (it used to try, spend its budget, then go tiled),
 *       walked over 16 MiB of the view.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clf.h"

/*
 * CPU time of this (single-threaded) process: the figures stay
 * meaningful on a machine shared with other work.
 */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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

static CLF_Datatype must(CLF_Datatype t)
{
	if (!t) {
		fprintf(stderr, "mapping_bench: %s\n", CLF_Last_error());
		exit(1);
	}
	return t;
}

/* Fields 0 and 2 of the 32-byte records of a side x side file. */
static CLF_Datatype interleaved_view(int64_t side)
{
	int64_t n = side * side / 32;
	CLF_Datatype f[2] = {
		must(CLF_Type_vector(0, 7, 32, n, CLF_BYTE)),
		must(CLF_Type_vector(16, 23, 32, n, CLF_BYTE)),
	};
	CLF_Datatype v = must(CLF_Type_struct(2, f));

	CLF_Type_free(&f[0]);
	CLF_Type_free(&f[1]);
	return v;
}

/* Fields 0 and 2 of one 32-byte record (the filetype is tiled). */
static CLF_Datatype record_view(void)
{
	CLF_Datatype f[2] = {
		must(CLF_Type_vector(0, 7, 32, 1, CLF_BYTE)),
		must(CLF_Type_vector(16, 23, 32, 1, CLF_BYTE)),
	};
	CLF_Datatype v = must(CLF_Type_struct(2, f));

	CLF_Type_free(&f[0]);
	CLF_Type_free(&f[1]);
	return v;
}

/* 16 blocks of irregular position and length in every other 1 KiB row. */
static CLF_Datatype indexed_rows_view(int64_t side)
{
	CLF_Datatype b[16], row, v;

	for (int k = 0; k < 16; k++) {
		int64_t l = 64 * k + (k * 7) % 13, r = l + 20 + (k * 5) % 17;

		b[k] = must(CLF_Type_vector(l, r, 1024, 1, CLF_BYTE));
	}
	row = must(CLF_Type_struct(16, b));
	v = must(CLF_Type_vector(0, 1023, 2048, side * side / 2048, row));
	for (int k = 0; k < 16; k++)
		CLF_Type_free(&b[k]);
	CLF_Type_free(&row);
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

static void measure_at(const char *name, CLF_Datatype view, int64_t disp,
		       CLF_Datatype *sub, int64_t walk_bytes, bool count)
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
			if (CLF_Mapping_create(view, disp, sub[j], 0, &m[j])) {
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
	if (count) {
		int64_t n = 0;

		t1 = now();
		for (int j = 0; j < 4; j++)
			n += CLF_Mapping_count(m[j], 0, walk_bytes);
		t2 = now();
		printf("%-28s %10.1f us for %lld bytes (4 counts)\n",
		       "    count", (t2 - t1) * 1e6, (long long)n);
	}
	for (int j = 0; j < 4; j++)
		CLF_Mapping_free(m[j]);
}

static void measure(const char *name, CLF_Datatype view, CLF_Datatype *sub,
		    int64_t walk_bytes)
{
	measure_at(name, view, 0, sub, walk_bytes, false);
}

/* Process rank's cells of a 2 x 2 CYCLIC(k) grid, one block per row piece. */
static CLF_Datatype checkerboard_rows(int64_t n, int64_t k, int rank,
				      int64_t *lb)
{
	int64_t nb = n * n / k / 2, i = 0, first = -1;
	CLF_Datatype *b = calloc(nb, sizeof(*b)), t;

	for (int64_t r = 0; r < n; r++)
		for (int64_t c = 0; c < n; c += k) {
			int64_t off = r * n + c;

			if ((r / k + c / k) % 2 != rank)
				continue;
			if (first < 0)
				first = off;
			off -= first;
			b[i++] = must(CLF_Type_vector(off, off + k - 1, off + k, 1,
						      CLF_BYTE));
		}
	t = must(CLF_Type_struct(nb, b));
	for (int64_t j = 0; j < nb; j++)
		CLF_Type_free(&b[j]);
	free(b);
	/*
	 * Hand the blocks' memory back now: otherwise the first allocations
	 * timed below pay for sorting 10^5 freed chunks (glibc).
	 */
	malloc_trim(0);
	*lb = first;
	return t;
}

/* 3 blocks of 100, 100 and 40 bytes in an extent of 2^20 + 1. */
static CLF_Datatype three_blocks(void)
{
	int64_t e = (1 << 20) + 1;
	CLF_Datatype b[3] = {
		must(CLF_Type_vector(0, 99, e, 1, CLF_BYTE)),
		must(CLF_Type_vector(65500, 65599, e, 1, CLF_BYTE)),
		must(CLF_Type_vector(e - 40, e - 1, e, 1, CLF_BYTE)),
	};
	CLF_Datatype v = must(CLF_Type_struct(3, b));

	for (int k = 0; k < 3; k++)
		CLF_Type_free(&b[k]);
	return v;
}

/* 10^5 pieces of [0, P) dealt to 4 subfiles; P a multiple of 512. */
static void irregular_layout(CLF_Datatype *sub)
{
	CLF_Blocklist bl[4];
	uint64_t x = 12345;
	int64_t at = 0, len, npieces = 100000;

	for (int j = 0; j < 4; j++)
		bl[j] = CLF_Blocklist_new();
	for (int64_t i = 0; i < npieces; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		len = (x >> 33) % 5 ? 1 + (int64_t)(x >> 40) % 16
				    : 1 + (int64_t)(x >> 40) % 5000;
		if (i == npieces - 1 && (at + len) % 512)
			len += 512 - (at + len) % 512;
		if (CLF_Blocklist_add(bl[i < 4 ? i : (int)((x >> 20) % 4)], at,
				      len, CLF_BYTE)) {
			fprintf(stderr, "mapping_bench: %s\n", CLF_Last_error());
			exit(1);
		}
		at += len;
	}
	for (int j = 0; j < 4; j++)
		sub[j] = must(CLF_Type_blocklist(&bl[j], at));
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
	view = interleaved_view(side);
	measure("(c) interleaved struct, rr", view, rr, walk);
	CLF_Type_free(&view);
	view = indexed_rows_view(side);
	measure("(d) indexed rows, rr", view, rr, walk);
	CLF_Type_free(&view);
	view = record_view();
	measure("(e) tiled record type, rr", view, rr, walk);
	CLF_Type_free(&view);
	{
		int64_t lb;

		view = checkerboard_rows(2048, 16, 1, &lb);
		measure_at("(f) checkerboard rows, rr", view, lb, rr,
			   CLF_Type_size(view), true);
		CLF_Type_free(&view);
	}
	view = three_blocks();
	measure_at("(g) 3 blocks, 2^20+1, rr", view, 0, rr, 240 * 100000,
		   true);
	CLF_Type_free(&view);
	{
		CLF_Datatype irr[4];

		irregular_layout(irr);
		view = must(CLF_Type_vector(0, 4095, 8192, 1, CLF_BYTE));
		measure_at("(h) 4K of 8K, irregular 1e5", view, 0, irr,
			   16 << 20, true);
		CLF_Type_free(&view);
		for (int j = 0; j < 4; j++)
			CLF_Type_free(&irr[j]);
	}
	for (int p = 0; p < 4; p++) {
		CLF_Type_free(&match[p]);
		CLF_Type_free(&rr[p]);
	}
	return 0;
}
