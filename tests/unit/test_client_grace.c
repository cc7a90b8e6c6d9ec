// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_client_grace.c -- the client's wait for a restarting daemon
 * (libclf/client/client_grace.c): what is tried again, how soon, for how long,
 * and what the error says when the grace runs out.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "client.h"
#include "clf.h"
#include "error.h"
#include "transport.h"

static struct clf_grace grace_of(int64_t ms)
{
	struct clf_grace g;

	clf_grace_begin(&g);	/* no CLF_init: a grace of 0 */
	ck_assert_int_eq(g.grace_ms, 0);
	g.grace_ms = ms;
	return g;
}

START_TEST(test_a_lost_connection_is_tried_again_within_the_grace)
{
	struct clf_grace g = grace_of(5000);
	int64_t t0 = clf_now_ms();

	ck_assert(clf_grace_again(&g, -EHOSTDOWN, false));
	ck_assert(clf_grace_again(&g, -EHOSTDOWN, false));
	/* The first pauses are short: a restart is found soon. */
	ck_assert_int_lt(clf_now_ms() - t0, 500);
	ck_assert_int_eq(g.tries, 2);
}
END_TEST

START_TEST(test_refusals_timeouts_and_success_are_not_tried_again)
{
	struct clf_grace g = grace_of(5000);

	ck_assert(!clf_grace_again(&g, 0, false));
	ck_assert(!clf_grace_again(&g, -ETIMEDOUT, false));
	ck_assert(!clf_grace_again(&g, -EACCES, false));
	ck_assert(!clf_grace_again(&g, -ENOSPC, false));
	ck_assert_int_eq(g.tries, 0);
}
END_TEST

START_TEST(test_a_stale_connection_is_tried_again_once_at_once_without_grace)
{
	struct clf_grace g = grace_of(0);

	ck_assert(clf_grace_again(&g, -EHOSTDOWN, true));
	ck_assert(!clf_grace_again(&g, -EHOSTDOWN, true));
}
END_TEST

START_TEST(test_giving_up_after_the_grace_says_so)
{
	struct clf_grace g = grace_of(300);
	int64_t t0 = clf_now_ms(), took;
	int n = 0;

	struct clf_error_source iod1 = { .kind = CLF_ERROR_IOD, .index = 1,
					 .addr = "127.0.0.1:7002" };

	clf_fail_source(&iod1, -EHOSTDOWN, "down: Connection refused");
	while (clf_grace_again(&g, -EHOSTDOWN, false))
		n++;
	took = clf_now_ms() - t0;
	ck_assert_int_ge(n, 2);
	ck_assert_int_ge(took, 290);
	ck_assert_int_lt(took, 1000);	/* no pause past the grace */
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "iod 1"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "recovery_grace_s"));
	/* Giving up keeps who failed. */
	ck_assert_int_eq(clf_error_last()->source.kind, CLF_ERROR_IOD);
	ck_assert_int_eq(clf_error_last()->source.index, 1);
}
END_TEST

START_TEST(test_only_requests_safe_to_repeat_are_replayable)
{
	static const uint16_t safe[] = {
		CLF_PROTO_OP_LOOKUP, CLF_PROTO_OP_GETATTR, CLF_PROTO_OP_READDIR,
		CLF_PROTO_OP_STATFS, CLF_PROTO_OP_GET_LAYOUT,
		CLF_PROTO_OP_READLINK, CLF_PROTO_OP_SUB_READ,
		CLF_PROTO_OP_SUB_WRITE, CLF_PROTO_OP_SUB_SIZES,
		CLF_PROTO_OP_UPDATE_SIZE, CLF_PROTO_OP_SYNC,
		CLF_PROTO_OP_SUB_LIST,
	};
	static const uint16_t unsafe[] = {
		CLF_PROTO_OP_CREATE, CLF_PROTO_OP_RENAME, CLF_PROTO_OP_UNLINK,
		CLF_PROTO_OP_SETLK, CLF_PROTO_OP_UNLOCK_OWNER,
		CLF_PROTO_OP_APPEND, CLF_PROTO_OP_VIEW_REGISTER,
		CLF_PROTO_OP_VIEW_RELEASE, CLF_PROTO_OP_TRUNCATE,
		CLF_PROTO_OP_REMOVE,
	};

	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		ck_assert_msg(clf_op_replayable(safe[i]), "op %u", safe[i]);
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++)
		ck_assert_msg(!clf_op_replayable(unsafe[i]), "op %u", unsafe[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("client_grace");
	TCase *tc = tcase_create("grace");

	tcase_add_test(tc, test_a_lost_connection_is_tried_again_within_the_grace);
	tcase_add_test(tc, test_refusals_timeouts_and_success_are_not_tried_again);
	tcase_add_test(tc,
		test_a_stale_connection_is_tried_again_once_at_once_without_grace);
	tcase_add_test(tc, test_giving_up_after_the_grace_says_so);
	tcase_add_test(tc, test_only_requests_safe_to_repeat_are_replayable);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
