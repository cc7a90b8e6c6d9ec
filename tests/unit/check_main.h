/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * check_main.h -- the main() every unit test program shares: run one
 * suite, exit non-zero when a test failed.
 *
 * Loops over bytes assert only where a byte is wrong
 * (if (got != want) ck_abort_msg(...)): each passing ck_assert writes
 * its place to the runner's pipe in fork mode, and one per byte of a
 * few MB made tests spend minutes in write(2).
 */
#ifndef CLF_CHECK_MAIN_H
#define CLF_CHECK_MAIN_H

#include <check.h>

static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif /* CLF_CHECK_MAIN_H */
