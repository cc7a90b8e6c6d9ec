// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_rangelock.c -- byte-range locks: disjoint requests proceed,
 * overlapping ones wait, and in arrival order.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "check_main.h"
#include "iod_rangelock.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int queued(struct iod_rangelock *rl)
{
	int n = 0;

	pthread_mutex_lock(&rl->mutex);
	for (struct iod_range *r = rl->head; r; r = r->next)
		n++;
	pthread_mutex_unlock(&rl->mutex);
	return n;
}

START_TEST(test_disjoint_ranges_do_not_wait)
{
	struct iod_rangelock rl;
	struct iod_range a, b, c;

	ck_assert_int_eq(iod_rangelock_init(&rl), 0);
	iod_rangelock_lock(&rl, &a, 0, 10);
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &b, 10, 20), 0);
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &c, 9, 10), -EBUSY);
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &c, 15, 16), -EBUSY);
	iod_rangelock_unlock(&rl, &a);
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &c, 9, 10), 0);
	iod_rangelock_unlock(&rl, &b);
	iod_rangelock_unlock(&rl, &c);
	ck_assert_int_eq(queued(&rl), 0);
	/* The list is usable again after emptying (tail reset). */
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &a, 0, 1), 0);
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &b, 1, 2), 0);
	iod_rangelock_unlock(&rl, &b);
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &c, 1, 2), 0);
	iod_rangelock_unlock(&rl, &a);
	iod_rangelock_unlock(&rl, &c);
	iod_rangelock_destroy(&rl);
}
END_TEST

struct waiter {
	struct iod_rangelock *rl;
	int64_t lo, hi;
	atomic_int got;
};

static void *wait_for_range(void *arg)
{
	struct waiter *w = arg;
	struct iod_range r;

	iod_rangelock_lock(w->rl, &r, w->lo, w->hi);
	atomic_store(&w->got, 1);
	iod_rangelock_unlock(w->rl, &r);
	return NULL;
}

START_TEST(test_overlapping_range_waits_for_unlock)
{
	struct iod_rangelock rl;
	struct waiter w = { .rl = &rl, .lo = 5, .hi = 15 };
	struct iod_range held;
	pthread_t t;

	ck_assert_int_eq(iod_rangelock_init(&rl), 0);
	iod_rangelock_lock(&rl, &held, 0, 10);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_range, &w), 0);
	while (queued(&rl) < 2)
		sleep_ms(1);
	sleep_ms(50);
	ck_assert_int_eq(atomic_load(&w.got), 0);
	iod_rangelock_unlock(&rl, &held);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(atomic_load(&w.got), 1);
	ck_assert_int_eq(queued(&rl), 0);
	iod_rangelock_destroy(&rl);
}
END_TEST

START_TEST(test_waiting_wide_request_is_not_overtaken)
{
	struct iod_rangelock rl;
	struct waiter wide = { .rl = &rl, .lo = 0, .hi = 100 };
	struct iod_range held, narrow;
	pthread_t t;

	ck_assert_int_eq(iod_rangelock_init(&rl), 0);
	iod_rangelock_lock(&rl, &held, 0, 10);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_range, &wide), 0);
	while (queued(&rl) < 2)
		sleep_ms(1);
	/* Free of the held range, but after the waiting wide request. */
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &narrow, 50, 60), -EBUSY);
	/* Disjoint from both: goes. */
	ck_assert_int_eq(iod_rangelock_trylock(&rl, &narrow, 100, 110), 0);
	iod_rangelock_unlock(&rl, &held);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(atomic_load(&wide.got), 1);
	iod_rangelock_unlock(&rl, &narrow);
	iod_rangelock_destroy(&rl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_rangelock");
	TCase *tc = tcase_create("rangelock");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_disjoint_ranges_do_not_wait);
	tcase_add_test(tc, test_overlapping_range_waits_for_unlock);
	tcase_add_test(tc, test_waiting_wide_request_is_not_overtaken);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
