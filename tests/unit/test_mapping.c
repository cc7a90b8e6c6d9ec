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

START_TEST(test_incommensurate_fine_patterns_fail_fast_with_e2big)
{
	/*
	 * One byte every 2^23 + 1 against one byte every 2^23: coprime
	 * periods, 2^23 different pieces per common period.
	 */
	CLF_Datatype a = CLF_Type_vector(0, 0, (1 << 23) + 1, 1, CLF_BYTE);
	CLF_Datatype b = CLF_Type_vector(0, 0, 1 << 23, 1, CLF_BYTE);
	CLF_Mapping *m = NULL;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(CLF_Mapping_create(a, 0, b, 0, &m), -E2BIG);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "incommensurate"));
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 30);
	CLF_Type_free(&a);
	CLF_Type_free(&b);
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

int main(void)
{
	Suite *s = suite_create("mapping");
	TCase *tc = tcase_create("view to subfile");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_view_equal_to_subfile_is_one_run_for_any_range);
	tcase_add_test(tc, test_view_maps_cyclic_onto_one_subfile);
	tcase_add_test(tc, test_view_strided_over_round_robin_gives_runs_per_stripe);
	tcase_add_test(tc, test_view_subset_of_subfile_merges_across_gaps);
	tcase_add_test(tc, test_displacements_shift_both_sides);
	tcase_add_test(tc, test_foreach_stops_when_callback_says_so);
	tcase_add_test(tc, test_create_refuses_bad_arguments);
	tcase_add_test(tc, test_incommensurate_fine_patterns_fail_fast_with_e2big);
	tcase_add_test(tc, test_matrix_views_fall_on_matching_layout_in_one_run_each);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
