// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_error.c -- the last error: who failed is a field, and the message
 * is rendered from the fields in one place (libclf/error.h).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "error.h"

static const struct clf_error_source iod2 = {
	.kind = CLF_ERROR_IOD, .index = 2, .addr = "127.0.0.1:7002",
};

START_TEST(test_a_local_failure_names_its_reporter_apart_from_its_reason)
{
	ck_assert_int_eq(clf_fail(EINVAL, "clf: vector: left %d > right", 3),
			 -EINVAL);
	ck_assert_str_eq(CLF_Last_error(), "clf: vector: left 3 > right");
	ck_assert_str_eq(clf_error_reason(), "vector: left 3 > right");
	ck_assert_str_eq(clf_error_last()->reporter, "clf");
	ck_assert_int_eq(clf_error_last()->source.kind, CLF_ERROR_SELF);
	ck_assert_int_eq(clf_error_last()->err, -EINVAL);
}
END_TEST

START_TEST(test_a_message_without_a_reporter_is_kept_whole)
{
	clf_fail(EINVAL, "layout: at column %d: bad", 4);
	ck_assert_str_eq(CLF_Last_error(), "layout: at column 4: bad");
	ck_assert_str_eq(clf_error_reason(), "layout: at column 4: bad");
	ck_assert_ptr_null(clf_error_last()->reporter);
}
END_TEST

START_TEST(test_an_unreachable_daemon_is_named_with_its_address)
{
	ck_assert_int_eq(clf_fail_source(&iod2, -EHOSTDOWN, "down: %s",
					 "Connection refused"), -EHOSTDOWN);
	ck_assert_str_eq(CLF_Last_error(),
			 "clf: iod 2 (127.0.0.1:7002): down: Connection refused");
	ck_assert_str_eq(clf_error_reason(),
			 "iod 2 (127.0.0.1:7002): down: Connection refused");
	ck_assert_int_eq(clf_error_last()->source.kind, CLF_ERROR_IOD);
	ck_assert_int_eq(clf_error_last()->source.index, 2);
	ck_assert_str_eq(clf_error_last()->source.addr, "127.0.0.1:7002");
	ck_assert(!clf_error_last()->source.answered);
}
END_TEST

START_TEST(test_a_daemons_answer_is_its_own_words)
{
	struct clf_error_source src = iod2;

	src.answered = true;
	clf_fail_source(&src, -ENOSPC, "iod 2: cannot write subfile 3");
	ck_assert_str_eq(CLF_Last_error(), "iod 2: cannot write subfile 3");
	ck_assert_str_eq(clf_error_reason(), "iod 2: cannot write subfile 3");
	ck_assert(clf_error_last()->source.answered);
	ck_assert_int_eq(clf_error_last()->source.index, 2);
}
END_TEST

START_TEST(test_context_goes_in_front_and_keeps_who_failed)
{
	clf_fail_source(&iod2, -ETIMEDOUT, "did not answer in time");
	ck_assert_int_eq(clf_fail_ctx(-EIO, "clf: read of '%s'", "/f"), -EIO);
	clf_fail_ctx(-EIO, "mds: cannot %s", "truncate");
	ck_assert_str_eq(CLF_Last_error(),
			 "mds: cannot truncate: read of '/f': iod 2 (127.0.0.1:7002): did not answer in time");
	ck_assert_str_eq(clf_error_reason(),
			 "cannot truncate: read of '/f': iod 2 (127.0.0.1:7002): did not answer in time");
	ck_assert_int_eq(clf_error_last()->source.kind, CLF_ERROR_IOD);
	ck_assert_int_eq(clf_error_last()->err, -EIO);
}
END_TEST

START_TEST(test_words_at_the_end_keep_who_failed)
{
	clf_fail_source(&iod2, -EHOSTDOWN, "down");
	ck_assert_int_eq(clf_fail_append(-EIO, " (gave up after %d s)", 5),
			 -EIO);
	ck_assert_str_eq(CLF_Last_error(),
			 "clf: iod 2 (127.0.0.1:7002): down (gave up after 5 s)");
	ck_assert_int_eq(clf_error_last()->source.kind, CLF_ERROR_IOD);
}
END_TEST

START_TEST(test_a_saved_error_comes_back_whole)
{
	struct clf_error saved;

	clf_fail_source(&iod2, -EHOSTDOWN, "down");
	saved = *clf_error_last();
	clf_fail(EINVAL, "clf: something else");
	ck_assert_int_eq(clf_error_restore(&saved), -EHOSTDOWN);
	ck_assert_str_eq(CLF_Last_error(), "clf: iod 2 (127.0.0.1:7002): down");
	ck_assert_int_eq(clf_error_last()->source.index, 2);
}
END_TEST

START_TEST(test_a_peer_known_by_address_is_named_later)
{
	struct clf_error_source peer = { .kind = CLF_ERROR_PEER,
					 .addr = "127.0.0.1:7000" };
	struct clf_error_source metad = { .kind = CLF_ERROR_METAD,
					  .addr = "127.0.0.1:7000" };

	clf_fail_source(&peer, -EACCES, "authentication failed: %s",
			"wrong secret");
	ck_assert_str_eq(CLF_Last_error(),
			 "clf: 127.0.0.1:7000: authentication failed: wrong secret");
	clf_error_set_source(&metad);
	ck_assert_str_eq(CLF_Last_error(),
			 "clf: metad (127.0.0.1:7000): authentication failed: wrong secret");
}
END_TEST

START_TEST(test_the_last_message_may_be_an_argument_of_the_next)
{
	clf_fail(EINVAL, "clf: first");
	clf_fail(EINVAL, "clf: second after %s", CLF_Last_error());
	ck_assert_str_eq(CLF_Last_error(), "clf: second after clf: first");
	clf_fail(EINVAL, "clf: third after %s", clf_error_reason());
	ck_assert_str_eq(CLF_Last_error(),
			 "clf: third after second after clf: first");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("error");

	tcase_add_test(tc,
		test_a_local_failure_names_its_reporter_apart_from_its_reason);
	tcase_add_test(tc, test_a_message_without_a_reporter_is_kept_whole);
	tcase_add_test(tc, test_an_unreachable_daemon_is_named_with_its_address);
	tcase_add_test(tc, test_a_daemons_answer_is_its_own_words);
	tcase_add_test(tc, test_context_goes_in_front_and_keeps_who_failed);
	tcase_add_test(tc, test_words_at_the_end_keep_who_failed);
	tcase_add_test(tc, test_a_saved_error_comes_back_whole);
	tcase_add_test(tc, test_a_peer_known_by_address_is_named_later);
	tcase_add_test(tc, test_the_last_message_may_be_an_argument_of_the_next);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
