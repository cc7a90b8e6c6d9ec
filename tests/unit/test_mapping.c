// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mapping.c -- view-to-subfile mappings on the cases that matter.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "clf.h"
#include "mapping_i.h"
#include "mapping_prog.h"

struct runs {
	int64_t v[64], s[64], len[64];
	int nr;
	int64_t total;
};

static int collect(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct runs *r = arg;

	if (r->nr < 64) {
		r->v[r->nr] = v;
		r->s[r->nr] = s;
		r->len[r->nr] = len;
	}
	r->nr++;
	r->total += len;
	return 0;
}

/* Rows x cols bytes; process (pi, pj) of a 2 x 2 CYCLIC(k) grid. */
static CLF_Datatype cyclic_2d(int64_t rows, int64_t cols, int64_t k, int pi,
			      int pj)
{
	CLF_Datatype row = CLF_Type_vector(pj * k, pj * k + k - 1, 2 * k,
					   cols / (2 * k), CLF_BYTE);
	CLF_Datatype t = CLF_Type_vector(pi * k * cols, (pi * k + k) * cols - 1,
					 2 * k * cols, rows / (2 * k), row);

	CLF_Type_free(&row);
	return t;
}

START_TEST(test_view_equal_to_subfile_is_one_run_for_any_range)
{
	CLF_Datatype v = cyclic_2d(1024, 1024, 1, 1, 0);
	CLF_Mapping *m;
	struct runs r = { 0 };
	int64_t huge = (int64_t)1 << 50;

	ck_assert_int_eq(CLF_Mapping_create(v, 0, v, 0, &m), 0);
	ck_assert_int_eq(CLF_Mapping_is_contiguous(m), 1);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 5, huge, collect, &r), 0);
	ck_assert_int_eq(r.nr, 1);
	ck_assert_int_eq(r.v[0], 5);
	ck_assert_int_eq(r.s[0], 5);
	ck_assert_int_eq(r.len[0], huge - 5);
	CLF_Mapping_free(m);
	CLF_Type_free(&v);
}
END_TEST

START_TEST(test_view_maps_cyclic_onto_one_subfile)
{
	/* View = bytes of subfile 2 of cyclic(16) over 4, as one vector. */
	CLF_Datatype sub[4], v = CLF_Type_vector(32, 47, 64, 8, CLF_BYTE);
	struct runs r = { 0 };
	CLF_Mapping *m;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 15, 64, 1, 16, 4, CLF_BYTE, sub),
			 0);
	for (int j = 0; j < 4; j++) {
		memset(&r, 0, sizeof(r));
		ck_assert_int_eq(CLF_Mapping_create(v, 0, sub[j], 0, &m), 0);
		ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 1000, collect, &r),
				 0);
		ck_assert_int_eq(r.nr, j == 2 ? 1 : 0);
		ck_assert_int_eq(r.total, j == 2 ? 1000 : 0);
		CLF_Mapping_free(m);
	}
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&sub[j]);
	CLF_Type_free(&v);
}
END_TEST

START_TEST(test_view_strided_over_round_robin_gives_runs_per_stripe)
{
	/* Whole-file view (bytes) over 4 KiB round-robin on 2 subfiles. */
	CLF_Datatype sub[2];
	struct runs r = { 0 };
	CLF_Mapping *m;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 4095, 8192, 1, 4096, 2, CLF_BYTE,
					   sub), 0);
	ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, 0, sub[1], 0, &m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 1000, 20000, collect, &r), 0);
	ck_assert_int_eq(r.nr, 2);
	ck_assert_int_eq(r.v[0], 4096);
	ck_assert_int_eq(r.s[0], 0);
	ck_assert_int_eq(r.len[0], 4096);
	ck_assert_int_eq(r.v[1], 12288);
	ck_assert_int_eq(r.s[1], 4096);
	ck_assert_int_eq(r.len[1], 4096);
	CLF_Mapping_free(m);
	CLF_Type_free(&sub[0]);
	CLF_Type_free(&sub[1]);
}
END_TEST

/*
 * The checkerboard of CYCLIC(1) cells of an 8192 x 8192 byte matrix over
 * 64 KiB round-robin stripes: a run per byte, 2^25 in the matrix, yet a
 * handful of progressions a stretch on each side -- whole view stretches
 * for the client, one byte every two for the iod -- walked without a
 * step per run.
 */
static int count_prog(const struct clf_prog *p, void *arg)
{
	int64_t *c = arg;

	c[0]++;
	c[1] += p->n * p->len;
	return 0;
}

START_TEST(test_checkerboard_over_stripes_walks_few_progressions)
{
	int64_t side = 8192, k = 1;
	CLF_Datatype row[2], cell[2], view, sub[2];
	CLF_Mapping *m;

	for (int c = 0; c < 2; c++) {
		row[c] = CLF_Type_vector(c * k, c * k + k - 1, 2 * k,
					 side / (2 * k), CLF_BYTE);
		cell[c] = CLF_Type_vector(c * k * side, (c * k + k) * side - 1,
					  2 * k * side, side / (2 * k), row[c]);
	}
	view = CLF_Type_struct(2, cell);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 65535, 131072, 1, 65536, 2,
					   CLF_BYTE, sub), 0);
	ck_assert_int_eq(CLF_Mapping_create(view, 0, sub[0], 0, &m), 0);
	for (int side_ = 0; side_ < 2; side_++) {
		int64_t c[2] = { 0, 0 };
		int64_t n = CLF_Mapping_count(m, 0, side * side / 2);

		ck_assert(clf_mapping_has_progs(m, side_));
		ck_assert_int_le(m->nprog[side_], 16);
		ck_assert_int_eq(clf_mapping_progs(m, 0, side * side / 2, side_,
						   0, INT64_MAX, count_prog, c),
				 0);
		ck_assert_int_eq(c[1], n);
		/* A progression or so per row of the subfile's stripes. */
		ck_assert_int_le(c[0], side_ == CLF_PROG_VIEW ? side / 16 + 1
							      : 2 * side);
	}
	CLF_Mapping_free(m);
	for (int c = 0; c < 2; c++) {
		CLF_Type_free(&row[c]);
		CLF_Type_free(&cell[c]);
		CLF_Type_free(&sub[c]);
	}
	CLF_Type_free(&view);
}
END_TEST

START_TEST(test_view_subset_of_subfile_merges_across_gaps)
{
	/*
	 * Subfile: even columns of a 64 x 64 matrix.  View: the even
	 * columns of the top half.  Inside the top half the two orders
	 * agree, so the whole view is a single run though it is made of
	 * 1024 separate bytes.
	 */
	CLF_Datatype even = CLF_Type_vector(0, 0, 2, 32, CLF_BYTE);
	CLF_Datatype sub = CLF_Type_vector(0, 63, 64, 64, even);
	CLF_Datatype view = CLF_Type_vector(0, 32 * 64 - 1, 64 * 64, 1, even);
	struct runs r = { 0 };
	CLF_Mapping *m;

	ck_assert_int_eq(CLF_Mapping_create(view, 0, sub, 0, &m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 3 * 1024, collect, &r), 0);
	ck_assert_int_eq(r.nr, 3);
	ck_assert_int_eq(r.v[1], 1024);
	ck_assert_int_eq(r.s[1], 2048);
	ck_assert_int_eq(r.len[1], 1024);
	CLF_Mapping_free(m);
	CLF_Type_free(&view);
	CLF_Type_free(&sub);
	CLF_Type_free(&even);
}
END_TEST

START_TEST(test_displacements_shift_both_sides)
{
	/* Subfile holds bytes from 100 on; view starts at 40: 60 missing. */
	CLF_Datatype sub = CLF_Type_vector(0, 9, 10, 1, CLF_BYTE);
	struct runs r = { 0 };
	CLF_Mapping *m;

	ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, 40, sub, 100, &m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 100, collect, &r), 0);
	ck_assert_int_eq(r.nr, 1);
	ck_assert_int_eq(r.v[0], 60);
	ck_assert_int_eq(r.s[0], 0);
	ck_assert_int_eq(r.len[0], 40);
	CLF_Mapping_free(m);
	CLF_Type_free(&sub);
}
END_TEST

static int stop_at_second(int64_t v, int64_t s, int64_t len, void *arg)
{
	return ++*(int *)arg == 2 ? 77 : 0;
}

START_TEST(test_foreach_stops_when_callback_says_so)
{
	CLF_Datatype sub[2];
	CLF_Mapping *m;
	int calls = 0;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 0, 2, 1, 1, 2, CLF_BYTE, sub), 0);
	ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, 0, sub[0], 0, &m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 100, stop_at_second, &calls),
			 77);
	ck_assert_int_eq(calls, 2);
	ck_assert_int_eq(CLF_Mapping_foreach(m, -1, 100, stop_at_second, &calls),
			 -EINVAL);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 10, 9, stop_at_second, &calls),
			 -EINVAL);
	CLF_Mapping_free(m);
	CLF_Mapping_free(NULL);
	CLF_Type_free(&sub[0]);
	CLF_Type_free(&sub[1]);
}
END_TEST

START_TEST(test_create_refuses_bad_arguments)
{
	CLF_Mapping *m = NULL;

	ck_assert_int_eq(CLF_Mapping_create(NULL, 0, CLF_BYTE, 0, &m), -EINVAL);
	ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, -1, CLF_BYTE, 0, &m),
			 -EINVAL);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(test_matrix_views_fall_on_matching_layout_in_one_run_each)
{
	CLF_Datatype sub[4];

	for (int p = 0; p < 4; p++)
		sub[p] = cyclic_2d(256, 256, 2, p / 2, p % 2);
	ck_assert_int_eq(CLF_Pattern_check(4, sub), 0);
	for (int p = 0; p < 4; p++) {
		for (int j = 0; j < 4; j++) {
			struct runs r = { 0 };
			CLF_Mapping *m;

			ck_assert_int_eq(CLF_Mapping_create(sub[p], 0, sub[j], 0,
							    &m), 0);
			ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 256 * 64,
							     collect, &r), 0);
			ck_assert_int_eq(r.nr, p == j ? 1 : 0);
			ck_assert_int_eq(CLF_Mapping_bytes_per_period(m),
					 p == j ? 256 * 64 : 0);
			CLF_Mapping_free(m);
		}
	}
	for (int p = 0; p < 4; p++)
		CLF_Type_free(&sub[p]);
}
END_TEST

/*
 * The maximal runs of view bytes [lo, hi), one byte at a time through
 * CLF_Type_unmap and CLF_Type_map (walks from the root, no cursor).
 */
static void brute_runs(CLF_Datatype view, int64_t vd, CLF_Datatype sub,
		       int64_t sd, int64_t lo, int64_t hi, struct runs *r)
{
	int64_t pv = -2, ps = -2;

	for (int64_t v = lo; v < hi; v++) {
		int64_t f, s;

		/* The walk never reaches the last offset (it ends exclusive). */
		if (CLF_Type_unmap(view, vd, v, &f) || f == INT64_MAX)
			break;
		if (CLF_Type_map(sub, sd, f, &s))
			continue;
		if (r->nr && pv + 1 == v && ps + 1 == s) {
			if (r->nr <= 64)
				r->len[r->nr - 1]++;
		} else {
			collect(v, s, 1, r);
			r->total--;
		}
		r->total++;
		pv = v;
		ps = s;
	}
}

static void assert_same_runs(const struct runs *got, const struct runs *want)
{
	ck_assert_int_eq(got->nr, want->nr);
	ck_assert_int_eq(got->total, want->total);
	for (int k = 0; k < got->nr && k < 64; k++) {
		ck_assert_int_eq(got->v[k], want->v[k]);
		ck_assert_int_eq(got->s[k], want->s[k]);
		ck_assert_int_eq(got->len[k], want->len[k]);
	}
}

/*
 * The tests below run three times (_i = 0, 1, 2): with the run table of
 * small periods, with the cursors alone (no table), and tiled (no common
 * period at all).
 */
static void use_table(int i)
{
	map_table_max = i ? 0 : MAP_TABLE_MAX;
	map_tiles_always = i == 2;
}

/* After every test: the engine's defaults (CK_FORK=no runs share them). */
static void default_knobs(void)
{
	map_table_max = MAP_TABLE_MAX;
	map_tiles_always = 0;
}

START_TEST(test_runs_merge_across_period_boundaries)
{
	/*
	 * Subfile: bytes [0, 3] and [8, 11] of every 12.  Bytes 8..15 (this
	 * period's end, the next one's start) are one run of 8.
	 */
	CLF_Datatype a = CLF_Type_vector(0, 3, 12, 1, CLF_BYTE);
	CLF_Datatype b = CLF_Type_vector(8, 11, 12, 1, CLF_BYTE);
	CLF_Datatype m2[2] = { a, b }, sub = CLF_Type_struct(2, m2);
	struct runs r = { 0 };
	CLF_Mapping *m;

	use_table(_i);
	ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, 0, sub, 0, &m), 0);
	ck_assert(_i ? !m->table : m->table != NULL);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 40, collect, &r), 0);
	ck_assert_int_eq(r.nr, 4);
	ck_assert_int_eq(r.v[0], 0);
	ck_assert_int_eq(r.len[0], 4);
	for (int k = 1; k < 3; k++) {
		ck_assert_int_eq(r.v[k], 12 * k - 4);
		ck_assert_int_eq(r.s[k], 8 * k - 4);
		ck_assert_int_eq(r.len[k], 8);
	}
	ck_assert_int_eq(r.v[3], 32);
	ck_assert_int_eq(r.len[3], 8);
	CLF_Mapping_free(m);
	CLF_Type_free(&sub);
	CLF_Type_free(&a);
	CLF_Type_free(&b);
}
END_TEST

START_TEST(test_ranges_starting_and_ending_mid_run_are_clipped)
{
	/* CYCLIC(3) x CYCLIC(3) cell over 5-byte round-robin on 3 subfiles. */
	CLF_Datatype v = cyclic_2d(48, 48, 3, 1, 0), sub[3];

	ck_assert_int_eq(CLF_Type_pitfalls(0, 4, 15, 1, 5, 3, CLF_BYTE, sub),
			 0);
	use_table(_i);
	for (int j = 0; j < 3; j++) {
		CLF_Mapping *m;

		ck_assert_int_eq(CLF_Mapping_create(v, 7, sub[j], 2, &m), 0);
		for (int64_t lo = 0; lo < 40; lo++) {
			for (int64_t hi = lo; hi < lo + 30; hi += 3) {
				struct runs got = { 0 }, want = { 0 };

				ck_assert_int_eq(CLF_Mapping_foreach(m, lo, hi,
						collect, &got), 0);
				brute_runs(v, 7, sub[j], 2, lo, hi, &want);
				assert_same_runs(&got, &want);
				ck_assert_int_eq(CLF_Mapping_count(m, lo, hi),
						 want.total);
			}
		}
		CLF_Mapping_free(m);
	}
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&sub[j]);
	CLF_Type_free(&v);
}
END_TEST

START_TEST(test_walk_stops_at_the_largest_file_offset)
{
	/*
	 * A view starting 1000 bytes below INT64_MAX has 1000 bytes; the
	 * subfile (bytes [0, 99] of every 200) holds some of them.
	 */
	int64_t vd = INT64_MAX - 1000;
	CLF_Datatype sub[2];

	ck_assert_int_eq(CLF_Type_pitfalls(0, 99, 200, 1, 100, 2, CLF_BYTE,
					   sub), 0);
	use_table(_i);
	for (int j = 0; j < 2; j++) {
		struct runs got = { 0 }, want = { 0 };
		CLF_Mapping *m;

		ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, vd, sub[j], 0, &m),
				 0);
		ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 5000, collect, &got),
				 0);
		brute_runs(CLF_BYTE, vd, sub[j], 0, 0, 5000, &want);
		ck_assert_int_gt(want.nr, 3);
		assert_same_runs(&got, &want);
		/* Ending exactly at the last offset, or past every offset. */
		for (int k = 0; k < 2; k++) {
			int64_t hi = k ? INT64_MAX : 1001;

			memset(&got, 0, sizeof(got));
			memset(&want, 0, sizeof(want));
			ck_assert_int_eq(CLF_Mapping_foreach(m, 1, hi, collect,
							     &got), 0);
			brute_runs(CLF_BYTE, vd, sub[j], 0, 1, 5000, &want);
			assert_same_runs(&got, &want);
			ck_assert_int_eq(CLF_Mapping_count(m, 1, hi), want.total);
		}
		CLF_Mapping_free(m);
	}
	CLF_Type_free(&sub[0]);
	CLF_Type_free(&sub[1]);
}
END_TEST

START_TEST(test_walk_past_the_last_period_that_fits_returns_no_error)
{
	/*
	 * The view (bytes [100, 199] of every 200) has no byte left in the
	 * period that straddles INT64_MAX: a walk over everything ends
	 * cleanly there, with or without a run table.
	 */
	int64_t vd = INT64_MAX - 1050;
	CLF_Datatype view = CLF_Type_vector(100, 199, 200, 1, CLF_BYTE);
	CLF_Datatype sub[2];

	ck_assert_int_eq(CLF_Type_pitfalls(0, 149, 300, 1, 150, 2, CLF_BYTE,
					   sub), 0);
	use_table(_i);
	for (int j = 0; j < 2; j++) {
		struct runs got = { 0 }, want = { 0 };
		CLF_Mapping *m;

		ck_assert_int_eq(CLF_Mapping_create(view, vd, sub[j], 0, &m), 0);
		ck_assert_int_eq(CLF_Mapping_foreach(m, 3, INT64_MAX, collect,
						     &got), 0);
		brute_runs(view, vd, sub[j], 0, 3, 5000, &want);
		ck_assert_int_gt(want.nr, 2);
		assert_same_runs(&got, &want);
		ck_assert_int_eq(CLF_Mapping_count(m, 3, INT64_MAX), want.total);
		CLF_Mapping_free(m);
	}
	CLF_Type_free(&sub[0]);
	CLF_Type_free(&sub[1]);
	CLF_Type_free(&view);
}
END_TEST

static int count_len(int64_t v, int64_t s, int64_t len, void *arg)
{
	*(int64_t *)arg += len;
	return 0;
}

static int count_runs(int64_t v, int64_t s, int64_t len, void *arg)
{
	++*(int64_t *)arg;
	return 0;
}

/* An order-sensitive hash of the runs. */
static int hash_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	uint64_t *h = arg;

	*h = (*h * 1000003) ^ (uint64_t)v;
	*h = (*h * 1000003) ^ (uint64_t)s;
	*h = (*h * 1000003) ^ (uint64_t)len;
	return 0;
}

START_TEST(test_run_table_is_kept_only_for_few_runs_per_period)
{
	/* Fields 0 and 2 of 32-byte records, tiled; 4 KiB x 4 round-robin. */
	CLF_Datatype f[2] = { CLF_Type_vector(0, 7, 32, 1, CLF_BYTE),
			      CLF_Type_vector(16, 23, 32, 1, CLF_BYTE) };
	CLF_Datatype rec = CLF_Type_struct(2, f), rr[4];
	CLF_Datatype big = cyclic_2d(4096, 4096, 1, 0, 0);
	CLF_Mapping *m, *mc;
	int64_t n = 0, nc = 0;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 4095, 16384, 1, 4096, 4,
					   CLF_BYTE, rr), 0);
	ck_assert_int_eq(CLF_Mapping_create(rec, 0, rr[1], 0, &m), 0);
	/* 128 records of a stripe, 2 runs each, per 16 KiB period. */
	ck_assert_ptr_nonnull(m->table);
	ck_assert_int_eq(m->ntable, 256);
	/* Deep into the file, both ways agree. */
	map_table_max = 0;
	ck_assert_int_eq(CLF_Mapping_create(rec, 0, rr[1], 0, &mc), 0);
	map_table_max = MAP_TABLE_MAX;
	ck_assert_ptr_null(mc->table);
	ck_assert_int_eq(CLF_Mapping_foreach(m, (1LL << 40) + 5, (1LL << 40) + 99999,
					     count_runs, &n), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(mc, (1LL << 40) + 5,
					     (1LL << 40) + 99999, count_runs,
					     &nc), 0);
	ck_assert_int_eq(n, nc);
	ck_assert_int_gt(n, 100);
	CLF_Mapping_free(mc);
	CLF_Mapping_free(m);
	/*
	 * A CYCLIC(1) cell of a 4096^2 matrix: millions of runs a period,
	 * but I, Dv and Ds repeat every 4 rows (16 KiB, 2048 runs): the
	 * table covers that sub-period, and walks agree with the cursors'.
	 */
	ck_assert_int_eq(CLF_Mapping_create(big, 0, rr[0], 0, &m), 0);
	ck_assert_ptr_nonnull(m->table);
	ck_assert_int_eq(m->tper, 16384);
	ck_assert_int_eq(m->ntable, 2048);
	map_table_max = 0;
	ck_assert_int_eq(CLF_Mapping_create(big, 0, rr[0], 0, &mc), 0);
	ck_assert_ptr_null(mc->table);
	for (int64_t lo = 0; lo < (1LL << 26); lo += (1LL << 24) + 4097) {
		uint64_t h = 0, hc = 0;

		ck_assert_int_eq(CLF_Mapping_foreach(m, lo, lo + 50000, hash_run,
						     &h), 0);
		ck_assert_int_eq(CLF_Mapping_foreach(mc, lo, lo + 50000,
						     hash_run, &hc), 0);
		ck_assert_uint_eq(h, hc);
	}
	CLF_Mapping_free(mc);
	CLF_Mapping_free(m);
	/* More runs than a table may hold, even in the sub-period: none. */
	map_table_max = 256;
	ck_assert_int_eq(CLF_Mapping_create(big, 0, rr[0], 0, &m), 0);
	map_table_max = MAP_TABLE_MAX;
	ck_assert_ptr_null(m->table);
	CLF_Mapping_free(m);
	/* A view on its subfile: one run, never a table. */
	ck_assert_int_eq(CLF_Mapping_create(rr[2], 0, rr[2], 0, &m), 0);
	ck_assert_ptr_null(m->table);
	CLF_Mapping_free(m);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&rr[j]);
	CLF_Type_free(&big);
	CLF_Type_free(&rec);
	CLF_Type_free(&f[0]);
	CLF_Type_free(&f[1]);
}
END_TEST

/* The runs of [lo, hi) are the byte-by-byte ones, and so is the count. */
static void assert_window(const CLF_Mapping *m, CLF_Datatype view, int64_t vd,
			  CLF_Datatype sub, int64_t sd, int64_t lo, int64_t hi)
{
	struct runs got = { 0 }, want = { 0 };

	ck_assert_int_eq(CLF_Mapping_foreach(m, lo, hi, collect, &got), 0);
	brute_runs(view, vd, sub, sd, lo, hi, &want);
	ck_assert_int_le(want.nr, 64);	/* every run compared */
	assert_same_runs(&got, &want);
	ck_assert_int_eq(CLF_Mapping_count(m, lo, hi), want.total);
}

/* 3 bytes of every 4, n blocks, extent 4n - 1 (an MPI vector's). */
static CLF_Datatype three_of_four(int64_t n)
{
	CLF_Blocklist bl = CLF_Blocklist_new();

	for (int64_t i = 0; i < n; i++)
		ck_assert_int_eq(CLF_Blocklist_add(bl, 4 * i, 3, CLF_BYTE), 0);
	return CLF_Type_blocklist(&bl, 4 * n - 1);
}

START_TEST(test_tables_of_stretches_that_do_not_divide_the_period)
{
	/*
	 * A memory type of 3 bytes in every 4 whose extent ends after its
	 * last block: the period 19999 repeats every 4 bytes but for its
	 * last 3.  The table holds one stretch of 4, the tail of each
	 * period is walked by cursors; runs, anywhere, are the cursors'
	 * alone and the byte-by-byte ones.
	 */
	CLF_Datatype t = three_of_four(5000), rr[2];
	int64_t lo[] = { 0, 1, 14996, 14997, 14998, 14999, 15000, 29998,
			 1000007 };
	int64_t len[] = { 1, 2, 5, 100, 40000 };
	CLF_Mapping *m, *mc;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 1, 4, 1, 2, 2, CLF_BYTE, rr), 0);
	for (int c = 0; c < 2; c++) {
		CLF_Datatype sub = c ? rr[1] : CLF_BYTE;
		int64_t sd = c ? 1 : 0;

		ck_assert_int_eq(CLF_Mapping_create(t, 5, sub, sd, &m), 0);
		if (!c) {
			ck_assert_ptr_nonnull(m->table);
			ck_assert_int_eq(m->tper, 4);
			ck_assert_int_eq(m->ttail, 3);
		}
		map_table_max = 0;
		ck_assert_int_eq(CLF_Mapping_create(t, 5, sub, sd, &mc), 0);
		map_table_max = MAP_TABLE_MAX;
		for (size_t i = 0; i < sizeof(lo) / sizeof(lo[0]); i++)
			for (size_t j = 0; j < sizeof(len) / sizeof(len[0]); j++) {
				uint64_t h = 0, hc = 0;

				ck_assert_int_eq(CLF_Mapping_foreach(m, lo[i],
						lo[i] + len[j], hash_run, &h), 0);
				ck_assert_int_eq(CLF_Mapping_foreach(mc, lo[i],
						lo[i] + len[j], hash_run, &hc), 0);
				ck_assert_uint_eq(h, hc);
			}
		assert_window(m, t, 5, sub, sd, 14990, 15010);
		assert_window(m, t, 5, sub, sd, 29990, 30010);
		CLF_Mapping_free(mc);
		CLF_Mapping_free(m);
	}
	CLF_Type_free(&rr[0]);
	CLF_Type_free(&rr[1]);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_incommensurate_fine_patterns_map_tiled_at_once)
{
	/*
	 * One byte every 2^23 + 1 against one byte every 2^23: coprime
	 * periods, 2^23 different pieces per common period (refused with
	 * E2BIG before).  View byte k is a subfile byte iff 2^23 divides k.
	 */
	int64_t e = 1 << 23;
	CLF_Datatype a = CLF_Type_vector(0, 0, e + 1, 1, CLF_BYTE);
	CLF_Datatype b = CLF_Type_vector(0, 0, e, 1, CLF_BYTE);
	CLF_Mapping *m = NULL;
	struct runs r = { 0 };
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(CLF_Mapping_create(a, 0, b, 0, &m), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert(m->tiled);
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 2);
	ck_assert_int_gt(CLF_Mapping_bytes_per_period(m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, e - 1000, e + 1000, collect, &r),
			 0);
	ck_assert_int_eq(r.nr, 1);
	ck_assert_int_eq(r.v[0], e);
	ck_assert_int_eq(r.s[0], e + 1);
	ck_assert_int_eq(r.len[0], 1);
	ck_assert_int_eq(CLF_Mapping_count(m, e - 1000, e + 1000), 1);
	ck_assert_int_eq(CLF_Mapping_count(m, 3 * e + 1, 4 * e), 0);
	assert_window(m, a, 0, b, 0, 2 * e - 20, 2 * e + 20);
	CLF_Mapping_free(m);
	CLF_Type_free(&a);
	CLF_Type_free(&b);
}
END_TEST

/*
 * An irregular interleaved layout: npieces runs of [0, P) (mostly 1 to
 * 16 bytes, now and then up to 5000) dealt to nsub subfiles, P rounded up
 * to a multiple of align.  Deterministic.
 */
static void irregular_layout(int64_t npieces, int nsub, int64_t align,
			     CLF_Datatype *sub)
{
	CLF_Blocklist bl[4];
	uint64_t x = 12345;
	int64_t at = 0, len;

	for (int j = 0; j < nsub; j++)
		bl[j] = CLF_Blocklist_new();
	for (int64_t i = 0; i < npieces; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		len = (x >> 33) % 5 ? 1 + (int64_t)(x >> 40) % 16
				    : 1 + (int64_t)(x >> 40) % 5000;
		if (i == npieces - 1 && (at + len) % align)
			len += align - (at + len) % align;
		int o = i < nsub ? (int)i : (int)((x >> 20) % (uint64_t)nsub);

		ck_assert_int_eq(CLF_Blocklist_add(bl[o], at, len, CLF_BYTE), 0);
		at += len;
	}
	for (int j = 0; j < nsub; j++) {
		sub[j] = CLF_Type_blocklist(&bl[j], at);
		ck_assert_ptr_nonnull(sub[j]);
	}
}

START_TEST(test_large_irregular_layouts_are_mapped_tiled_without_trying)
{
	/*
	 * 4 KiB of every 8 KiB over an irregular layout of 10^5 pieces on 3
	 * subfiles whose period is a multiple of 512: 2 to 16 phases, each
	 * meeting a description of 2 x 10^4 FALLS.  The periodic attempt
	 * made 10^5 FALLS (50 ms a subfile) before it gave up for the tiled
	 * mapping; the estimate now chooses tiled before making any.  The
	 * layout's own pattern as a view stays periodic: one run.
	 */
	CLF_Datatype view = CLF_Type_vector(0, 4095, 8192, 1, CLF_BYTE);
	CLF_Datatype sub[3];
	CLF_Mapping *m;

	irregular_layout(100000, 3, 512, sub);
	ck_assert_int_gt(sub[0]->set->nodes, 10000);
	for (int j = 0; j < 3; j++) {
		int64_t n = 0, bytes = 0;

		map_periodic_work = 0;
		ck_assert_int_eq(CLF_Mapping_create(view, 0, sub[j], 0, &m), 0);
		ck_assert(m->tiled);
		ck_assert_int_eq(map_periodic_work, 0);
		ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 1 << 22, count_len,
						     &bytes), 0);
		n = CLF_Mapping_count(m, 0, 1 << 22);
		ck_assert_int_eq(n, bytes);
		ck_assert_int_gt(n, 0);
		CLF_Mapping_free(m);
	}
	map_periodic_work = 0;
	ck_assert_int_eq(CLF_Mapping_create(sub[1], 7, sub[1], 7, &m), 0);
	ck_assert(!m->tiled);
	ck_assert_int_eq(CLF_Mapping_is_contiguous(m), 1);
	ck_assert_int_gt(map_periodic_work, 0);
	CLF_Mapping_free(m);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&sub[j]);
	CLF_Type_free(&view);
}
END_TEST

START_TEST(test_packed_runs_join_where_the_subfile_continues)
{
	/*
	 * A contiguous view over 1-byte stripes on 4 subfiles: every view
	 * run is a byte (the view offsets go by 4), but the subfile's bytes
	 * follow each other: one packed run for the whole range, the view
	 * offset of its first byte.
	 */
	CLF_Datatype rr[4];
	struct runs r = { 0 };
	CLF_Mapping *m;
	int64_t n = 0;

	use_table(_i);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 0, 4, 1, 1, 4, CLF_BYTE, rr), 0);
	ck_assert_int_eq(CLF_Mapping_create(CLF_BYTE, 0, rr[2], 0, &m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 1, 4001, count_runs, &n), 0);
	ck_assert_int_eq(n, 1000);
	ck_assert_int_eq(CLF_Mapping_foreach_packed(m, 1, 4001, collect, &r), 0);
	ck_assert_int_eq(r.nr, 1);
	ck_assert_int_eq(r.v[0], 2);
	ck_assert_int_eq(r.s[0], 0);
	ck_assert_int_eq(r.len[0], 1000);
	CLF_Mapping_free(m);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&rr[j]);
}
END_TEST

START_TEST(test_extents_whose_common_period_overflows_map_tiled)
{
	/*
	 * Extents 2^33 + 17 and 2^31 - 1 (a prime): their common period is
	 * about 2^64 (EOVERFLOW before).  Three view blocks per tile, one of
	 * them across the subfile's period boundary; the subfile holds the
	 * first 2^30 bytes of each of its periods.
	 */
	int64_t ev = (1LL << 33) + 17, es = (1LL << 31) - 1;
	CLF_Datatype b[3] = {
		CLF_Type_vector(0, 99, ev, 1, CLF_BYTE),
		CLF_Type_vector(es - 50, es + 49, ev, 1, CLF_BYTE),
		CLF_Type_vector(ev - 17, ev - 1, ev, 1, CLF_BYTE),
	};
	CLF_Datatype view = CLF_Type_struct(3, b);
	CLF_Datatype sub = CLF_Type_vector(0, (1 << 30) - 1, es, 1, CLF_BYTE);
	CLF_Mapping *m;

	ck_assert_int_eq(CLF_Type_size(view), 217);
	ck_assert_int_eq(CLF_Mapping_create(view, 5, sub, 3, &m), 0);
	ck_assert(m->tiled);
	assert_window(m, view, 5, sub, 3, 0, 600);
	assert_window(m, view, 5, sub, 3, 217 * 1000 - 7, 217 * 1003);
	assert_window(m, view, 5, sub, 3, 217 * 123456 + 90, 217 * 123457);
	CLF_Mapping_free(m);
	for (int k = 0; k < 3; k++)
		CLF_Type_free(&b[k]);
	CLF_Type_free(&view);
	CLF_Type_free(&sub);
}
END_TEST

/*
 * What users wrote: process 1's cells of a 2 x 2 CYCLIC(16) checkerboard
 * over a 2048 x 2048-byte matrix as one block per row piece (extent
 * 4194272, lower bound 16: the view's displacement), and a 3-block
 * hindexed type of extent 2^20 + 1, both over round-robin layouts.
 */
static CLF_Datatype checkerboard_rows(int64_t n, int64_t k, int rank,
				      int64_t *lb)
{
	int64_t nb = n * n / k / 2, i = 0, first = -1;
	CLF_Datatype *b = calloc(nb, sizeof(*b)), t;

	ck_assert_ptr_nonnull(b);
	for (int64_t r = 0; r < n; r++) {
		for (int64_t c = 0; c < n; c += k) {
			int64_t off = r * n + c;

			if ((r / k + c / k) % 2 != rank)
				continue;
			if (first < 0)
				first = off;
			off -= first;
			b[i] = CLF_Type_vector(off, off + k - 1, off + k, 1,
					       CLF_BYTE);
			ck_assert_ptr_nonnull(b[i]);
			i++;
		}
	}
	t = CLF_Type_struct(nb, b);
	for (int64_t j = 0; j < nb; j++)
		CLF_Type_free(&b[j]);
	free(b);
	*lb = first;
	return t;
}

START_TEST(test_user_views_of_odd_extents_map_onto_round_robin)
{
	int64_t lb, e = (1 << 20) + 1, total = 0, lo, hi;
	CLF_Datatype view = checkerboard_rows(2048, 16, 1, &lb), rr[4];
	CLF_Datatype hb[3] = {
		CLF_Type_vector(0, 99, e, 1, CLF_BYTE),
		CLF_Type_vector(65500, 65599, e, 1, CLF_BYTE),
		CLF_Type_vector(e - 40, e - 1, e, 1, CLF_BYTE),
	};
	CLF_Datatype hview = CLF_Type_struct(3, hb);
	int64_t size = CLF_Type_size(view);

	ck_assert_int_eq(CLF_Type_extent(view), 4194272);
	ck_assert_int_eq(lb, 16);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 65535, 131072, 1, 65536, 2,
					   CLF_BYTE, rr), 0);
	lo = size - 3000;
	hi = 5 * size + 777;
	for (int j = 0; j < 2; j++) {
		CLF_Mapping *m;

		ck_assert_msg(CLF_Mapping_create(view, lb, rr[j], 0, &m) == 0,
			      "%s", CLF_Last_error());
		ck_assert(m->tiled);
		/* Tile 0's start, across tiles 0-1, deep in tile 4000. */
		assert_window(m, view, lb, rr[j], 0, 0, 500);
		assert_window(m, view, lb, rr[j], 0, size - 400, size + 400);
		assert_window(m, view, lb, rr[j], 0, 4000 * size + 12345,
			      4000 * size + 12345 + 900);
		total += CLF_Mapping_count(m, lo, hi);
		CLF_Mapping_free(m);
	}
	/* Every view byte past the layout's displacement is in one subfile. */
	ck_assert_int_eq(total, hi - lo);
	CLF_Type_free(&rr[0]);
	CLF_Type_free(&rr[1]);

	ck_assert_int_eq(CLF_Type_pitfalls(0, 65535, 4 * 65536, 1, 65536, 4,
					   CLF_BYTE, rr), 0);
	total = 0;
	for (int j = 0; j < 4; j++) {
		CLF_Mapping *m;

		ck_assert_int_eq(CLF_Mapping_create(hview, 0, rr[j], 0, &m), 0);
		ck_assert(m->tiled);
		assert_window(m, hview, 0, rr[j], 0, 0, 720);
		assert_window(m, hview, 0, rr[j], 0, 240 * 777 + 3, 240 * 779);
		total += CLF_Mapping_count(m, 5, 240 * 100000);
		CLF_Mapping_free(m);
	}
	ck_assert_int_eq(total, 240 * 100000 - 5);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&rr[j]);
	for (int k = 0; k < 3; k++)
		CLF_Type_free(&hb[k]);
	CLF_Type_free(&hview);
	CLF_Type_free(&view);
}
END_TEST

START_TEST(test_tiled_views_that_miss_a_subfile_have_no_bytes_there)
{
	/*
	 * The view selects the bytes 0 and 1 mod 4, in tiles of 4 * (2^16 +
	 * 3) bytes; subfile 0 the bytes 2 and 3 mod 4, subfile 1 the others,
	 * in periods of 4 * (2^16 + 1).  Mapped tiled, the view still never
	 * meets subfile 0, and lies in subfile 1 as one run.
	 */
	int64_t nv = (1 << 16) + 3, ns = (1 << 16) + 1;
	CLF_Datatype view = CLF_Type_vector(0, 1, 4, nv, CLF_BYTE);
	CLF_Datatype s0 = CLF_Type_vector(2, 3, 4, ns, CLF_BYTE);
	CLF_Datatype s1 = CLF_Type_vector(0, 1, 4, ns, CLF_BYTE);
	struct runs r = { 0 };
	CLF_Mapping *m;

	map_tiles_always = 1;
	ck_assert_int_eq(CLF_Mapping_create(view, 0, s0, 0, &m), 0);
	ck_assert(m->tiled);
	ck_assert_int_eq(CLF_Mapping_bytes_per_period(m), 0);
	ck_assert_int_eq(CLF_Mapping_count(m, 0, 1 << 30), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 0, 1 << 30, collect, &r), 0);
	ck_assert_int_eq(r.nr, 0);
	CLF_Mapping_free(m);
	ck_assert_int_eq(CLF_Mapping_create(view, 8, s1, 8, &m), 0);
	ck_assert_int_gt(CLF_Mapping_bytes_per_period(m), 0);
	ck_assert_int_eq(CLF_Mapping_foreach(m, 3, 3 * nv, collect, &r), 0);
	ck_assert_int_eq(r.nr, 1);
	ck_assert_int_eq(r.v[0], 3);
	ck_assert_int_eq(r.s[0], 3);
	ck_assert_int_eq(r.len[0], 3 * nv - 3);
	ck_assert_int_eq(CLF_Mapping_count(m, 3, 3 * nv), 3 * nv - 3);
	CLF_Mapping_free(m);
	map_tiles_always = 0;
	CLF_Type_free(&view);
	CLF_Type_free(&s0);
	CLF_Type_free(&s1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mapping");
	TCase *tc = tcase_create("view to subfile");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, default_knobs);
	tcase_add_test(tc, test_view_equal_to_subfile_is_one_run_for_any_range);
	tcase_add_test(tc, test_view_maps_cyclic_onto_one_subfile);
	tcase_add_test(tc, test_view_strided_over_round_robin_gives_runs_per_stripe);
	tcase_add_test(tc, test_checkerboard_over_stripes_walks_few_progressions);
	tcase_add_test(tc, test_view_subset_of_subfile_merges_across_gaps);
	tcase_add_test(tc, test_displacements_shift_both_sides);
	tcase_add_test(tc, test_foreach_stops_when_callback_says_so);
	tcase_add_test(tc, test_create_refuses_bad_arguments);
	tcase_add_test(tc, test_incommensurate_fine_patterns_map_tiled_at_once);
	tcase_add_test(tc, test_extents_whose_common_period_overflows_map_tiled);
	tcase_add_test(tc, test_large_irregular_layouts_are_mapped_tiled_without_trying);
	tcase_add_test(tc, test_user_views_of_odd_extents_map_onto_round_robin);
	tcase_add_test(tc, test_tiled_views_that_miss_a_subfile_have_no_bytes_there);
	tcase_add_test(tc, test_matrix_views_fall_on_matching_layout_in_one_run_each);
	tcase_add_loop_test(tc, test_runs_merge_across_period_boundaries, 0, 3);
	tcase_add_loop_test(tc, test_ranges_starting_and_ending_mid_run_are_clipped,
			    0, 3);
	tcase_add_loop_test(tc, test_walk_stops_at_the_largest_file_offset, 0, 3);
	tcase_add_loop_test(tc, test_walk_past_the_last_period_that_fits_returns_no_error,
			    0, 2);
	tcase_add_test(tc, test_run_table_is_kept_only_for_few_runs_per_period);
	tcase_add_test(tc, test_tables_of_stretches_that_do_not_divide_the_period);
	tcase_add_loop_test(tc, test_packed_runs_join_where_the_subfile_continues,
			    0, 3);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
