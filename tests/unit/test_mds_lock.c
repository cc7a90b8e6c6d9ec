// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_lock.c -- metad's byte-range lock table (metad/mds_lock.h):
 * fcntl conflicts, an owner's locks replaced, split, merged and
 * converted, ranges to the end, bounded waits, deadlock cycles of two
 * and three owners, and a closed connection's release waking waiters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "error.h"
#include "mds_lock.h"
#include "transport.h"

#define INO 42
#define R MDS_LOCK_READ
#define W MDS_LOCK_WRITE
#define U MDS_LOCK_UNLOCK

static struct mds_locks *T;

static void setup(void)
{
	T = mds_locks_new();
	ck_assert_ptr_nonnull(T);
}

static void teardown(void)
{
	mds_locks_free(T);
	T = NULL;
}

static struct mds_lock lk(uint64_t conn, uint64_t owner, uint32_t type,
			  uint64_t start, uint64_t end)
{
	return (struct mds_lock){ { conn, owner }, start, end, type,
				  (uint32_t)(1000 + conn) };
}

/* Set without waiting; conn c's owner 1 unless said otherwise. */
static int set(uint64_t conn, uint32_t type, uint64_t start, uint64_t end)
{
	struct mds_lock l = lk(conn, 1, type, start, end);

	return mds_locks_set(T, INO, &l, 0);
}

static int set_wait(uint64_t conn, uint32_t type, uint64_t start,
		    uint64_t end, uint32_t wait_ms)
{
	struct mds_lock l = lk(conn, 1, type, start, end);

	return mds_locks_set(T, INO, &l, wait_ms);
}

/* The locks on INO as "conn:type:start-end" words, in order. */
static const char *locks_text(void)
{
	static char buf[1024];
	struct mds_lock ls[32];
	unsigned n = mds_locks_list(T, INO, ls, 32);
	size_t pos = 0;

	buf[0] = '\0';
	ck_assert_uint_le(n, 32);
	for (unsigned i = 0; i < n; i++) {
		char end[32];

		if (ls[i].end == MDS_LOCK_END)
			snprintf(end, sizeof(end), "end");
		else
			snprintf(end, sizeof(end), "%llu",
				 (unsigned long long)ls[i].end);
		pos += snprintf(buf + pos, sizeof(buf) - pos, "%s%llu:%c:%llu-%s",
				i ? " " : "",
				(unsigned long long)ls[i].key.conn,
				ls[i].type == W ? 'W' : 'R',
				(unsigned long long)ls[i].start, end);
	}
	return buf;
}

START_TEST(test_read_locks_share_and_write_locks_exclude)
{
	ck_assert_int_eq(set(1, R, 0, 100), 0);
	ck_assert_int_eq(set(2, R, 50, 150), 0);
	ck_assert_int_eq(set(3, W, 99, 100), -EAGAIN);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "range locked"));
	ck_assert_int_eq(set(3, W, 150, 200), 0);
	ck_assert_int_eq(set(1, R, 199, 200), -EAGAIN);
	ck_assert_int_eq(set(1, W, 100, 101), -EAGAIN);
	/* The same number in another connection is another owner. */
	ck_assert_str_eq(locks_text(), "1:R:0-100 2:R:50-150 3:W:150-200");
}
END_TEST

START_TEST(test_an_owner_never_conflicts_with_itself)
{
	ck_assert_int_eq(set(1, W, 0, 100), 0);
	ck_assert_int_eq(set(1, R, 50, 60), 0);
	ck_assert_int_eq(set(1, W, 0, 1000), 0);
	ck_assert_str_eq(locks_text(), "1:W:0-1000");
}
END_TEST

START_TEST(test_overlapping_and_adjacent_locks_of_an_owner_merge)
{
	ck_assert_int_eq(set(1, R, 0, 10), 0);
	ck_assert_int_eq(set(1, R, 20, 30), 0);
	ck_assert_int_eq(set(1, R, 10, 20), 0);
	ck_assert_str_eq(locks_text(), "1:R:0-30");
	ck_assert_int_eq(set(1, R, 25, 40), 0);
	ck_assert_str_eq(locks_text(), "1:R:0-40");
	/* Another owner's lock in between does not stop the merge. */
	ck_assert_int_eq(set(2, R, 45, 50), 0);
	ck_assert_int_eq(set(1, R, 40, 60), 0);
	ck_assert_str_eq(locks_text(), "1:R:0-60 2:R:45-50");
	/* Touching locks of another type stay apart. */
	ck_assert_int_eq(set(1, W, 60, 70), 0);
	ck_assert_str_eq(locks_text(), "1:R:0-60 2:R:45-50 1:W:60-70");
}
END_TEST

START_TEST(test_converting_the_middle_of_a_lock_splits_it)
{
	ck_assert_int_eq(set(1, R, 0, 100), 0);
	ck_assert_int_eq(set(1, W, 40, 60), 0);
	ck_assert_str_eq(locks_text(), "1:R:0-40 1:W:40-60 1:R:60-100");
	ck_assert_int_eq(set(2, R, 50, 51), -EAGAIN);
	ck_assert_int_eq(set(2, R, 60, 61), 0);
	/* Back to read: the three pieces are one lock again. */
	ck_assert_int_eq(set(1, R, 40, 60), 0);
	ck_assert_str_eq(locks_text(), "1:R:0-100 2:R:60-61");
}
END_TEST

START_TEST(test_a_write_lock_over_others_read_locks_is_refused)
{
	ck_assert_int_eq(set(1, R, 0, 100), 0);
	ck_assert_int_eq(set(2, R, 0, 100), 0);
	/* Upgrading is refused while another reader holds the range. */
	ck_assert_int_eq(set(1, W, 0, 100), -EAGAIN);
	ck_assert_str_eq(locks_text(), "1:R:0-100 2:R:0-100");
}
END_TEST

START_TEST(test_unlocking_a_sub_range_splits)
{
	ck_assert_int_eq(set(1, W, 0, 100), 0);
	ck_assert_int_eq(set(1, U, 40, 60), 0);
	ck_assert_str_eq(locks_text(), "1:W:0-40 1:W:60-100");
	ck_assert_int_eq(set(2, W, 40, 60), 0);
	ck_assert_int_eq(set(1, U, 0, 50), 0);
	ck_assert_int_eq(set(1, U, 90, MDS_LOCK_END), 0);
	ck_assert_str_eq(locks_text(), "2:W:40-60 1:W:60-90");
	/* Unlocking what is not held is no error. */
	ck_assert_int_eq(set(3, U, 0, MDS_LOCK_END), 0);
	ck_assert_int_eq(set(1, U, 0, MDS_LOCK_END), 0);
	ck_assert_int_eq(set(2, U, 0, MDS_LOCK_END), 0);
	ck_assert_str_eq(locks_text(), "");
}
END_TEST

START_TEST(test_a_lock_to_the_end_covers_every_later_byte)
{
	struct mds_lock q = lk(2, 1, R, 1ull << 62, (1ull << 62) + 1), h;

	ck_assert_int_eq(set(1, W, 100, MDS_LOCK_END), 0);
	ck_assert_int_eq(set(2, R, 0, 100), 0);
	ck_assert_int_eq(set(2, R, MDS_LOCK_END - 1, MDS_LOCK_END), -EAGAIN);
	ck_assert_int_eq(mds_locks_get(T, INO, &q, &h), 0);
	ck_assert_uint_eq(h.start, 100);
	ck_assert_uint_eq(h.end, MDS_LOCK_END);
	ck_assert_uint_eq(h.type, W);
	ck_assert_uint_eq(h.pid, 1001);
	ck_assert_uint_eq(h.key.conn, 1);
	/* Shrinking it lets the reader in. */
	ck_assert_int_eq(set(1, U, 1ull << 40, MDS_LOCK_END), 0);
	ck_assert_int_eq(mds_locks_get(T, INO, &q, &h), -ENOENT);
}
END_TEST

START_TEST(test_getlk_reports_the_first_lock_in_the_way)
{
	struct mds_lock q = lk(9, 1, W, 0, MDS_LOCK_END), h;

	ck_assert_int_eq(set(1, R, 500, 600), 0);
	ck_assert_int_eq(set(2, W, 10, 20), 0);
	ck_assert_int_eq(mds_locks_get(T, INO, &q, &h), 0);
	ck_assert_uint_eq(h.start, 10);
	ck_assert_uint_eq(h.key.conn, 2);
	/* A reader only meets the writer; the holder's own locks never. */
	q = lk(2, 1, R, 0, MDS_LOCK_END);
	ck_assert_int_eq(mds_locks_get(T, INO, &q, &h), -ENOENT);
	/* Other inodes are untouched. */
	ck_assert_int_eq(mds_locks_get(T, INO + 1, &q, &h), -ENOENT);
}
END_TEST

START_TEST(test_release_owner_takes_only_that_owners_locks)
{
	struct mds_lock a = lk(1, 7, W, 0, 10), b = lk(1, 8, W, 20, 30);

	ck_assert_int_eq(mds_locks_set(T, INO, &a, 0), 0);
	ck_assert_int_eq(mds_locks_set(T, INO, &b, 0), 0);
	ck_assert_int_eq(mds_locks_set(T, INO + 1, &a, 0), 0);
	mds_locks_release_owner(T, INO, (struct mds_lock_key){ 1, 7 });
	ck_assert_str_eq(locks_text(), "1:W:20-30");
	ck_assert_uint_eq(mds_locks_list(T, INO + 1, NULL, 0), 1);
	ck_assert_uint_eq(mds_locks_release_conn(T, 1), 2);
	ck_assert_uint_eq(mds_locks_list(T, INO + 1, NULL, 0), 0);
}
END_TEST

START_TEST(test_a_wait_that_is_not_granted_ends_with_eagain)
{
	int64_t t0;

	ck_assert_int_eq(set(1, W, 0, 10), 0);
	t0 = clf_now_ms();
	ck_assert_int_eq(set_wait(2, R, 5, 6, 150), -EAGAIN);
	ck_assert_int_ge(clf_now_ms() - t0, 140);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "after waiting"));
	/* The server's cap bounds what a client asks for. */
	t0 = clf_now_ms();
	ck_assert_int_eq(set_wait(2, R, 5, 6, 60000), -EAGAIN);
	ck_assert_int_le(clf_now_ms() - t0, MDS_LOCK_WAIT_CAP_MS + 500);
}
END_TEST

struct waiter {
	uint64_t conn;
	uint32_t type;
	uint64_t start, end;
	uint32_t wait_ms;
	int result;
	int64_t waited_ms;
};

static void *wait_main(void *arg)
{
	struct waiter *w = arg;
	int64_t t0 = clf_now_ms();

	w->result = set_wait(w->conn, w->type, w->start, w->end, w->wait_ms);
	w->waited_ms = clf_now_ms() - t0;
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait until n requests sleep in the table. */
static void until_sleeping(unsigned n)
{
	struct mds_lock_stats st;

	for (int i = 0; i < 500; i++) {
		mds_locks_stats(T, &st);
		if (st.waiting == n)
			return;
		sleep_ms(2);
	}
	ck_abort_msg("%u requests never slept", n);
}

START_TEST(test_a_closed_connection_releases_and_wakes_waiters)
{
	struct waiter w1 = { 2, W, 0, 10, 1000, 1, 0 };
	struct waiter w2 = { 3, R, 20, 21, 1000, 1, 0 };
	pthread_t t1, t2;

	ck_assert_int_eq(set(1, W, 0, MDS_LOCK_END), 0);
	ck_assert_int_eq(pthread_create(&t1, NULL, wait_main, &w1), 0);
	ck_assert_int_eq(pthread_create(&t2, NULL, wait_main, &w2), 0);
	until_sleeping(2);
	ck_assert_uint_eq(mds_locks_release_conn(T, 1), 1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	ck_assert_int_eq(w1.result, 0);
	ck_assert_int_lt(w1.waited_ms, 900);
	ck_assert_int_eq(w2.result, 0);
	ck_assert_int_lt(w2.waited_ms, 900);
	ck_assert_str_eq(locks_text(), "2:W:0-10 3:R:20-21");
}
END_TEST

START_TEST(test_an_unlock_grants_a_sleeping_request)
{
	struct waiter w = { 2, R, 0, 100, 1000, 1, 0 };
	pthread_t t;

	ck_assert_int_eq(set(1, W, 50, 60), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_main, &w), 0);
	until_sleeping(1);
	/* Downgrading to read is enough for a reader. */
	ck_assert_int_eq(set(1, R, 50, 60), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(w.result, 0);
	ck_assert_int_lt(w.waited_ms, 900);
}
END_TEST

START_TEST(test_two_owners_waiting_for_each_other_deadlock)
{
	struct waiter w = { 1, W, 100, 200, 1000, 1, 0 };
	pthread_t t;

	ck_assert_int_eq(set(1, W, 0, 100), 0);
	ck_assert_int_eq(set(2, W, 100, 200), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_main, &w), 0);
	until_sleeping(1);
	ck_assert_int_eq(set_wait(2, W, 0, 1, 1000), -EDEADLK);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "deadlock"));
	/* Without waiting it is only "not now". */
	ck_assert_int_eq(set(2, W, 0, 1), -EAGAIN);
	/* The victim gives up its lock: the other one gets in. */
	ck_assert_int_eq(set(2, U, 0, MDS_LOCK_END), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(w.result, 0);
}
END_TEST

START_TEST(test_a_wait_that_timed_out_still_counts_for_deadlocks)
{
	/* Two owners of one connection (a FUSE mount): never asleep at
	 * once, but waiting for each other all the same. */
	struct mds_lock a = lk(1, 10, W, 0, 100), b = lk(1, 20, W, 100, 200);
	struct mds_lock a_wants = lk(1, 10, W, 150, 160);
	struct mds_lock b_wants = lk(1, 20, W, 50, 60);

	ck_assert_int_eq(mds_locks_set(T, INO, &a, 0), 0);
	ck_assert_int_eq(mds_locks_set(T, INO, &b, 0), 0);
	ck_assert_int_eq(mds_locks_set(T, INO, &a_wants, 20), -EAGAIN);
	ck_assert_int_eq(mds_locks_set(T, INO, &b_wants, 20), -EDEADLK);
	/* Once a gives its request up, b may wait again. */
	mds_locks_release_owner(T, INO, a.key);
	ck_assert_int_eq(mds_locks_set(T, INO, &b_wants, 20), 0);
}
END_TEST

START_TEST(test_a_cycle_of_three_owners_deadlocks)
{
	ck_assert_int_eq(set(1, W, 0, 10), 0);
	ck_assert_int_eq(set(2, W, 10, 20), 0);
	ck_assert_int_eq(set(3, R, 20, 30), 0);
	/* 1 waits for 2, 2 for 3 (their retries would come back). */
	ck_assert_int_eq(set_wait(1, W, 15, 16, 10), -EAGAIN);
	ck_assert_int_eq(set_wait(2, W, 25, 26, 10), -EAGAIN);
	/* 3 waiting for 1 would close the cycle; reading a free byte
	 * would not. */
	ck_assert_int_eq(set_wait(3, R, 5, 6, 10), -EDEADLK);
	ck_assert_int_eq(set_wait(3, R, 30, 31, 10), 0);
	/* Another owner waiting for 1 is no cycle. */
	ck_assert_int_eq(set_wait(4, R, 5, 6, 10), -EAGAIN);
}
END_TEST

START_TEST(test_a_timed_out_wait_is_forgotten_after_a_while)
{
	ck_assert_int_eq(set(1, W, 0, 10), 0);
	ck_assert_int_eq(set(2, W, 10, 20), 0);
	ck_assert_int_eq(set_wait(1, W, 15, 16, 10), -EAGAIN);
	sleep_ms(MDS_LOCK_PENDING_MS + 100);
	ck_assert_int_eq(set_wait(2, W, 5, 6, 10), -EAGAIN);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mds_lock");
	TCase *ranges = tcase_create("ranges");
	TCase *waits = tcase_create("waits");

	tcase_add_checked_fixture(ranges, setup, teardown);
	tcase_add_test(ranges, test_read_locks_share_and_write_locks_exclude);
	tcase_add_test(ranges, test_an_owner_never_conflicts_with_itself);
	tcase_add_test(ranges,
		       test_overlapping_and_adjacent_locks_of_an_owner_merge);
	tcase_add_test(ranges, test_converting_the_middle_of_a_lock_splits_it);
	tcase_add_test(ranges,
		       test_a_write_lock_over_others_read_locks_is_refused);
	tcase_add_test(ranges, test_unlocking_a_sub_range_splits);
	tcase_add_test(ranges, test_a_lock_to_the_end_covers_every_later_byte);
	tcase_add_test(ranges, test_getlk_reports_the_first_lock_in_the_way);
	tcase_add_test(ranges, test_release_owner_takes_only_that_owners_locks);
	tcase_add_checked_fixture(waits, setup, teardown);
	tcase_set_timeout(waits, 30);
	tcase_add_test(waits, test_a_wait_that_is_not_granted_ends_with_eagain);
	tcase_add_test(waits, test_a_closed_connection_releases_and_wakes_waiters);
	tcase_add_test(waits, test_an_unlock_grants_a_sleeping_request);
	tcase_add_test(waits, test_two_owners_waiting_for_each_other_deadlock);
	tcase_add_test(waits,
		       test_a_wait_that_timed_out_still_counts_for_deadlocks);
	tcase_add_test(waits, test_a_cycle_of_three_owners_deadlocks);
	tcase_add_test(waits, test_a_timed_out_wait_is_forgotten_after_a_while);
	suite_add_tcase(s, ranges);
	suite_add_tcase(s, waits);
	return run_suite(s);
}
