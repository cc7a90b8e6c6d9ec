// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_retire.c -- retired iods (metad/mds_retire.c): kept in the
 * store across a reopen (a metad restart), and skipped by the placement
 * of new subfiles.
 */
#include <check.h>
#include <errno.h>

#include "check_main.h"
#include "mds_fixture.h"
#include "mds_retire.h"

static struct mds_retired *reload(void)
{
	struct mds_retired *r = NULL;

	mds_store_close(s);
	s = open_store(dir);
	expect_err(mds_retired_load(s, &r), 0);
	return r;
}

START_TEST(test_a_retired_iod_stays_retired_when_the_store_opens_again)
{
	struct mds_retired *r = NULL;

	expect_err(mds_retired_load(s, &r), 0);
	ck_assert(!mds_retired_has(r, 2));
	expect_err(mds_retired_set(s, r, 2, true), 0);
	ck_assert(mds_retired_has(r, 2));
	mds_retired_free(r);
	r = reload();
	ck_assert(mds_retired_has(r, 2));
	ck_assert(!mds_retired_has(r, 1));
	/* Brought back (clf iod add 2): so it stays too. */
	expect_err(mds_retired_set(s, r, 2, false), 0);
	expect_err(mds_retired_set(s, r, 2, false), 0);
	mds_retired_free(r);
	r = reload();
	ck_assert(!mds_retired_has(r, 2));
	mds_retired_free(r);
}
END_TEST

START_TEST(test_placement_skips_retired_iods_and_fails_when_all_are)
{
	struct mds_retired *r = NULL;

	expect_err(mds_retired_load(s, &r), 0);
	ck_assert_int_eq(mds_retired_next(r, 4, 1), 1);
	expect_err(mds_retired_set(s, r, 1, true), 0);
	expect_err(mds_retired_set(s, r, 2, true), 0);
	ck_assert_int_eq(mds_retired_next(r, 4, 1), 3);
	ck_assert_int_eq(mds_retired_next(r, 4, 3), 3);
	ck_assert_int_eq(mds_retired_next(r, 4, 4), 0);
	ck_assert_uint_eq(mds_retired_active(r, 4), 2);
	expect_err(mds_retired_set(s, r, 0, true), 0);
	expect_err(mds_retired_set(s, r, 3, true), 0);
	ck_assert_int_eq(mds_retired_next(r, 4, 0), -ENOSPC);
	ck_assert_uint_eq(mds_retired_active(r, 4), 0);
	/* No set (a metad without one): nothing is retired. */
	ck_assert(!mds_retired_has(NULL, 0));
	ck_assert_int_eq(mds_retired_next(NULL, 4, 2), 2);
	mds_retired_free(r);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_retire");
	TCase *tc = tcase_create("retired iods");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_a_retired_iod_stays_retired_when_the_store_opens_again);
	tcase_add_test(tc, test_placement_skips_retired_iods_and_fails_when_all_are);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
