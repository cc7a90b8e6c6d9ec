// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_rdma_devcache.c -- the registration caches per protection domain
 * (libclf/runtime/transport_rdma_devcache.h) without a device: each
 * "device" counts the registrations made in its domain, so each test can
 * tell which domain pinned what, how often, and that nothing leaks.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "transport_rdma_devcache.h"

#define PG 4096
#define MIB ((size_t)1 << 20)

/* A device: its protection domain's registrations. */
struct dev {
	int live, regs, deregs;
	uint64_t *gen;		/* the process's memory generation */
};

struct mr {
	struct dev *d;
};

static void *dev_reg(void *arg, uintptr_t start, size_t len)
{
	struct dev *d = arg;
	struct mr *m = malloc(sizeof(*m));

	m->d = d;
	__atomic_add_fetch(&d->live, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->regs, 1, __ATOMIC_RELAXED);
	return m;
}

static void dev_dereg(void *arg, void *h)
{
	struct dev *d = arg;

	ck_assert_ptr_eq(((struct mr *)h)->d, d);	/* its own domain's */
	__atomic_sub_fetch(&d->live, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->deregs, 1, __ATOMIC_RELAXED);
	free(h);
}

static uint64_t dev_gen(void *arg)
{
	struct dev *d = arg;

	return *d->gen;
}

static uint64_t gen = 1;
static struct dev d0, d1;
static struct clf_devcache dc = CLF_DEVCACHE_INIT(8, 4 * MIB);
static char *buf;

static void setup(void)
{
	gen = 1;
	d0 = (struct dev){ .gen = &gen };
	d1 = (struct dev){ .gen = &gen };
	dc.max_entries = 8;
	dc.max_pinned = 4 * MIB;
	buf = aligned_alloc(PG, 8 * MIB);
	ck_assert_ptr_nonnull(buf);
}

static void teardown(void)
{
	free(buf);
}

/* A connection on device d (its domain is the key), kind of access 0. */
static struct clf_devcache_slot *attach(struct dev *d, unsigned kind)
{
	struct clf_regcache_ops ops = { dev_reg, dev_dereg, dev_gen, d };
	int err = 0;
	struct clf_devcache_slot *s = clf_devcache_attach(&dc, d, kind, &ops,
							  0, &err);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(err, 0);
	return s;
}

/* Get and put back [p, p + n): whether it was a hit. */
static bool use(struct clf_devcache_slot *s, const void *p, size_t n)
{
	struct clf_regcache_entry *e;
	bool hit = false;
	int err = 0;

	e = clf_devcache_get(&dc, s, p, n, &hit, &err);
	ck_assert_ptr_nonnull(e);
	clf_devcache_put(&dc, s, e);
	return hit;
}

START_TEST(test_connections_on_one_device_share_its_registrations)
{
	/* A client striping over 3 iods reached through one NIC. */
	struct clf_devcache_slot *a = attach(&d0, 0), *b = attach(&d0, 0),
				 *c = attach(&d0, 0);

	ck_assert_ptr_eq(a, b);
	ck_assert_ptr_eq(b, c);
	ck_assert(!use(a, buf, MIB));
	ck_assert(use(b, buf, MIB));
	ck_assert(use(c, buf, MIB));
	ck_assert_int_eq(d0.regs, 1);	/* pinned once, not once per iod */
	ck_assert_uint_eq(clf_devcache_slots(&dc), 1);
	clf_devcache_detach(&dc, a);
	clf_devcache_detach(&dc, b);
	clf_devcache_detach(&dc, c);
	ck_assert_int_eq(d0.live, 0);
}
END_TEST

START_TEST(test_two_devices_register_a_buffer_once_each)
{
	struct clf_devcache_slot *a = attach(&d0, 0), *b = attach(&d1, 0);

	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq(clf_devcache_slots(&dc), 2);
	for (int i = 0; i < 10; i++) {
		ck_assert(use(a, buf, MIB) == (i > 0));
		ck_assert(use(b, buf, MIB) == (i > 0));
	}
	/* Each domain's queue pairs need their own registration. */
	ck_assert_int_eq(d0.regs, 1);
	ck_assert_int_eq(d1.regs, 1);
	clf_devcache_detach(&dc, a);
	clf_devcache_detach(&dc, b);
	ck_assert_int_eq(d0.live + d1.live, 0);
	ck_assert_uint_eq(clf_devcache_slots(&dc), 0);
}
END_TEST

START_TEST(test_another_kind_of_access_is_another_cache)
{
	/* A process both client (memory open to its peers) and server
	 * (memory open to its NIC only) on one device. */
	struct clf_devcache_slot *cl = attach(&d0, 0), *sv = attach(&d0, 1);

	ck_assert_ptr_ne(cl, sv);
	ck_assert(!use(cl, buf, PG));
	ck_assert(!use(sv, buf, PG));
	ck_assert_int_eq(d0.regs, 2);
	clf_devcache_detach(&dc, cl);
	clf_devcache_detach(&dc, sv);
	ck_assert_int_eq(d0.live, 0);
}
END_TEST

START_TEST(test_the_last_connection_off_a_device_unpins_its_buffers)
{
	struct clf_devcache_slot *a = attach(&d0, 0), *b = attach(&d0, 0);

	ck_assert(!use(a, buf, MIB));
	ck_assert(!use(a, buf + 2 * MIB, MIB));
	clf_devcache_detach(&dc, a);
	/* b still talks over the device: its cache stays. */
	ck_assert_int_eq(d0.live, 2);
	ck_assert(use(b, buf, MIB));
	clf_devcache_detach(&dc, b);
	ck_assert_int_eq(d0.live, 0);
	ck_assert_int_eq(d0.deregs, 2);
	ck_assert_uint_eq(clf_devcache_slots(&dc), 0);
	/* A later connection starts afresh. */
	a = attach(&d0, 0);
	ck_assert(!use(a, buf, MIB));
	clf_devcache_detach(&dc, a);
	ck_assert_int_eq(d0.live, 0);
}
END_TEST

START_TEST(test_an_unmap_drops_the_entries_of_every_device)
{
	struct clf_devcache_slot *a = attach(&d0, 0), *b = attach(&d1, 0);

	ck_assert(!use(a, buf, MIB));
	ck_assert(!use(b, buf, MIB));
	gen++;	/* what transport_rdma_memhooks.c does at an munmap */
	ck_assert(!use(a, buf, MIB));
	ck_assert(!use(b, buf, MIB));
	ck_assert_int_eq(d0.deregs, 1);
	ck_assert_int_eq(d1.deregs, 1);
	ck_assert_int_eq(d0.live + d1.live, 2);
	clf_devcache_detach(&dc, a);
	clf_devcache_detach(&dc, b);
	ck_assert_int_eq(d0.live + d1.live, 0);
}
END_TEST

START_TEST(test_each_device_stays_within_its_bounds)
{
	struct clf_devcache_slot *a = attach(&d0, 0), *b = attach(&d1, 0);
	struct clf_regcache_stats st;
	size_t pinned;

	/* 4 MiB pinned at most per device: 8 distinct MiB through each. */
	for (int i = 0; i < 8; i++) {
		(void)use(a, buf + (size_t)i * MIB, MIB);
		(void)use(b, buf + (size_t)i * MIB, MIB);
	}
	clf_devcache_stats(&dc, a, &st, &pinned);
	ck_assert_uint_le(pinned, 4 * MIB);
	ck_assert_uint_eq(st.evictions, 4);
	ck_assert_int_le(d0.live, 4);
	ck_assert_int_le(d1.live, 4);
	clf_devcache_detach(&dc, a);
	clf_devcache_detach(&dc, b);
	ck_assert_int_eq(d0.live + d1.live, 0);
}
END_TEST

/* Connections of one device on their own threads, all on a few buffers. */
struct worker {
	struct clf_devcache_slot *s;
	int hits;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 20000; i++)
		w->hits += use(w->s, buf + (size_t)(i % 4) * MIB, MIB);
	return NULL;
}

START_TEST(test_connections_on_their_own_threads_share_one_cache_safely)
{
	struct worker w[4];
	pthread_t t[4];
	int hits = 0;

	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ attach(&d0, 0), 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		hits += w[i].hits;
	}
	/* 4 buffers, 4 MiB bound: each registered once, all else hits. */
	ck_assert_int_eq(d0.regs, 4);
	ck_assert_int_eq(hits, 4 * 20000 - 4);
	for (int i = 0; i < 4; i++)
		clf_devcache_detach(&dc, w[i].s);
	ck_assert_int_eq(d0.live, 0);
}
END_TEST

static Suite *devcache_suite(void)
{
	Suite *s = suite_create("rdma_devcache");
	TCase *tc = tcase_create("devcache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_connections_on_one_device_share_its_registrations);
	tcase_add_test(tc, test_two_devices_register_a_buffer_once_each);
	tcase_add_test(tc, test_another_kind_of_access_is_another_cache);
	tcase_add_test(tc, test_the_last_connection_off_a_device_unpins_its_buffers);
	tcase_add_test(tc, test_an_unmap_drops_the_entries_of_every_device);
	tcase_add_test(tc, test_each_device_stays_within_its_bounds);
	tcase_add_test(tc, test_connections_on_their_own_threads_share_one_cache_safely);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(devcache_suite());
}
