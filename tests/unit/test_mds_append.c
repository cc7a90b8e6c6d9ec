// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_append.c -- metad's append ends (metad/mds_append.h): ranges
 * of concurrent appends never overlap, EXACT reserves only where asked,
 * truncation and time forget an end, a full table refuses, and a lock
 * holder is never in the way.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "check_main.h"
#include "mds_append.h"

#define HOLD_MS 1000

static struct mds_appends *T;

static void setup(void)
{
	T = mds_appends_new(HOLD_MS);
	ck_assert_ptr_nonnull(T);
}

static void teardown(void)
{
	mds_appends_free(T);
	T = NULL;
}

/* Reserve at now_ms; the offset, or the negative errno. */
static int64_t reserve(uint64_t ino, int64_t at, int64_t len, bool exact,
		       int64_t now_ms)
{
	int64_t off = -1;
	int rc = mds_appends_reserve(T, ino, at, len, exact, now_ms, &off,
				     NULL);

	return rc < 0 ? rc : off;
}

START_TEST(test_appends_from_the_same_end_get_consecutive_ranges)
{
	ck_assert_int_eq(reserve(7, 100, 10, false, 0), 100);
	/* Another client derived the same end: it goes after the first. */
	ck_assert_int_eq(reserve(7, 100, 5, false, 0), 110);
	ck_assert_int_eq(reserve(7, 0, 1, false, 0), 115);
	/* A client that saw the file grow further starts there. */
	ck_assert_int_eq(reserve(7, 500, 3, false, 0), 500);
	ck_assert_int_eq(reserve(7, 116, 3, false, 0), 503);
	/* Files do not share ends. */
	ck_assert_int_eq(reserve(8, 0, 3, false, 0), 0);
	ck_assert_uint_eq(mds_appends_count(T), 2);
}
END_TEST

START_TEST(test_exact_reserves_only_at_the_end_it_names)
{
	int64_t off = -1;
	bool reserved = true;

	ck_assert_int_eq(reserve(7, 100, 10, false, 0), 100);
	/* Behind the end: refused, told where the end is, nothing moved. */
	ck_assert_int_eq(mds_appends_reserve(T, 7, 100, 50, true, 0, &off,
					     &reserved), 0);
	ck_assert(!reserved);
	ck_assert_int_eq(off, 110);
	ck_assert_int_eq(mds_appends_reserve(T, 7, 110, 50, true, 0, &off,
					     &reserved), 0);
	ck_assert(reserved);
	ck_assert_int_eq(off, 110);
	ck_assert_int_eq(reserve(7, 0, 1, false, 0), 160);
}
END_TEST

START_TEST(test_a_truncation_forgets_the_end)
{
	ck_assert_int_eq(reserve(7, 100, 10, false, 0), 100);
	mds_appends_forget(T, 7);
	ck_assert_uint_eq(mds_appends_count(T), 0);
	ck_assert_int_eq(reserve(7, 0, 10, false, 0), 0);
}
END_TEST

START_TEST(test_an_end_is_forgotten_after_its_hold)
{
	ck_assert_int_eq(reserve(7, 100, 10, false, 0), 100);
	ck_assert_int_eq(reserve(7, 0, 10, false, HOLD_MS - 1), 110);
	/* The reservation at HOLD_MS - 1 keeps it until 2 * HOLD_MS - 1. */
	ck_assert_int_eq(reserve(7, 0, 10, false, 2 * HOLD_MS - 2), 120);
	/* By then every reserved write landed or failed: the client's end
	 * (from the subfiles) is the truth again. */
	ck_assert_int_eq(reserve(7, 42, 10, false, 4 * HOLD_MS), 42);
}
END_TEST

START_TEST(test_a_full_table_refuses_until_ends_expire)
{
	for (uint64_t ino = 1; ino <= MDS_APPENDS_MAX; ino++)
		ck_assert_int_eq(reserve(ino, 0, 1, false, 0), 0);
	ck_assert_int_eq(reserve(MDS_APPENDS_MAX + 1, 0, 1, false, 10),
			 -EAGAIN);
	/* A file that has an end still appends. */
	ck_assert_int_eq(reserve(5, 0, 1, false, 10), 1);
	ck_assert_int_eq(reserve(MDS_APPENDS_MAX + 1, 0, 1, false, HOLD_MS),
			 0);
	ck_assert_uint_le(mds_appends_count(T), MDS_APPENDS_MAX);
	/* Full again of young ends: refused until they expire. */
	for (uint64_t ino = MDS_APPENDS_MAX + 2;
	     mds_appends_count(T) < MDS_APPENDS_MAX; ino++)
		ck_assert_int_eq(reserve(ino, 0, 1, false, HOLD_MS), 0);
	ck_assert_int_eq(reserve(3 * MDS_APPENDS_MAX, 0, 1, false, HOLD_MS),
			 -EAGAIN);
	ck_assert_int_eq(reserve(3 * MDS_APPENDS_MAX, 0, 1, false,
				 2 * HOLD_MS), 0);
}
END_TEST

START_TEST(test_an_append_past_the_largest_offset_is_refused)
{
	ck_assert_int_eq(reserve(7, INT64_MAX - 10, 5, false, 0),
			 INT64_MAX - 10);
	ck_assert_int_eq(reserve(7, 0, 10, false, 0), -EFBIG);
	/* Nothing moved. */
	ck_assert_int_eq(reserve(7, 0, 5, false, 0), INT64_MAX - 5);
}
END_TEST

#define THREADS 4
#define PER_THREAD 2000

static void *appender(void *arg)
{
	int64_t *offs = arg;

	for (int i = 0; i < PER_THREAD; i++)
		offs[i] = reserve(9, 0, 3, false, 0);
	return NULL;
}

/* Threads race: every range is distinct and together they tile. */
START_TEST(test_racing_threads_never_get_overlapping_ranges)
{
	static int64_t offs[THREADS][PER_THREAD];
	static bool taken[THREADS * PER_THREAD];
	pthread_t th[THREADS];

	for (int t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, appender,
						offs[t]), 0);
	for (int t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	for (int t = 0; t < THREADS; t++) {
		for (int i = 0; i < PER_THREAD; i++) {
			int64_t o = offs[t][i];

			ck_assert_int_eq(o % 3, 0);
			ck_assert_int_lt(o / 3, THREADS * PER_THREAD);
			ck_assert_msg(!taken[o / 3], "range at %lld twice",
				      (long long)o);
			taken[o / 3] = true;
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mds_append");
	TCase *tc = tcase_create("append ends");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_appends_from_the_same_end_get_consecutive_ranges);
	tcase_add_test(tc, test_exact_reserves_only_at_the_end_it_names);
	tcase_add_test(tc, test_a_truncation_forgets_the_end);
	tcase_add_test(tc, test_an_end_is_forgotten_after_its_hold);
	tcase_add_test(tc, test_a_full_table_refuses_until_ends_expire);
	tcase_add_test(tc, test_an_append_past_the_largest_offset_is_refused);
	tcase_add_test(tc, test_racing_threads_never_get_overlapping_ranges);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
