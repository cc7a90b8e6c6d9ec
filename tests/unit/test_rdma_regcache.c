// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_rdma_regcache.c -- the RDMA registration cache
 * (libclf/runtime/transport_rdma_regcache.h) without a device: the
 * "registrations" are counted records, so each test can tell what was
 * registered, reused and deregistered, and that nothing leaks.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check_main.h"
#include "transport_rdma_regcache.h"
#ifdef CLF_HAVE_RDMA
#include "transport_rdma_memhooks.h"
#endif

#define PG 4096

struct fake {
	int live, regs, deregs;
	bool fail;
	uintptr_t mapped_end;	/* 0, or what lies past it is unmapped */
	uint64_t gen;		/* the memory generation */
	uint64_t gen_after_reg;	/* 0, or the generation once reg ran */
};

struct fake_mr {
	uintptr_t start;
	size_t len;
};

static void *fake_reg(void *arg, uintptr_t start, size_t len)
{
	struct fake *f = arg;
	struct fake_mr *m;

	if (f->fail || (f->mapped_end && start + len > f->mapped_end)) {
		errno = EFAULT;
		return NULL;
	}
	m = malloc(sizeof(*m));
	m->start = start;
	m->len = len;
	if (f->gen_after_reg)
		f->gen = f->gen_after_reg;
	f->live++;
	f->regs++;
	return m;
}

static void fake_dereg(void *arg, void *h)
{
	struct fake *f = arg;

	f->live--;
	f->deregs++;
	free(h);
}

static uint64_t fake_gen(void *arg)
{
	struct fake *f = arg;

	return f->gen;
}

static struct fake f;
static struct clf_regcache c;

static void setup(size_t entries, size_t bytes)
{
	struct clf_regcache_ops ops = { fake_reg, fake_dereg, fake_gen, &f };

	f = (struct fake){ .gen = 1 };
	ck_assert_int_eq(clf_regcache_init(&c, entries, bytes, &ops), 0);
}

static void teardown(void)
{
	clf_regcache_destroy(&c);
	ck_assert_int_eq(f.live, 0);
}

/* Fake addresses: nothing is touched. */
static const void *at(uintptr_t page)
{
	return (const void *)(page * PG);
}

START_TEST(test_a_buffer_used_again_is_registered_once)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	e1 = clf_regcache_get(&c, (const char *)at(10) + 100, 3 * PG, &err);
	ck_assert_ptr_nonnull(e1);
	/* Whole pages around the bytes asked for. */
	ck_assert_uint_eq(e1->start, 10 * PG);
	ck_assert_uint_eq(e1->len, 4 * PG);
	clf_regcache_put(&c, e1);
	e2 = clf_regcache_get(&c, (const char *)at(10) + 100, 3 * PG, &err);
	ck_assert_ptr_eq(e2, e1);
	clf_regcache_put(&c, e2);
	/* A part of the range is covered too. */
	e2 = clf_regcache_get(&c, at(11), PG, &err);
	ck_assert_ptr_eq(e2, e1);
	clf_regcache_put(&c, e2);
	ck_assert_int_eq(f.regs, 1);
	ck_assert_uint_eq(c.st.hits, 2);
	ck_assert_uint_eq(c.st.misses, 1);
	teardown();
}
END_TEST

START_TEST(test_a_range_past_the_entry_is_a_miss)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	e1 = clf_regcache_get(&c, at(10), 2 * PG, &err);
	clf_regcache_put(&c, e1);
	e2 = clf_regcache_get(&c, at(11), 2 * PG, &err);
	ck_assert_ptr_ne(e2, e1);
	clf_regcache_put(&c, e2);
	ck_assert_int_eq(f.regs, 2);
	teardown();
}
END_TEST

START_TEST(test_a_new_generation_drops_every_entry)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	e1 = clf_regcache_get(&c, at(10), PG, &err);
	clf_regcache_put(&c, e1);
	/* The same address after an munmap may be other pages. */
	f.gen = 2;
	e2 = clf_regcache_get(&c, at(10), PG, &err);
	ck_assert_int_eq(f.regs, 2);
	ck_assert_int_eq(f.deregs, 1);
	ck_assert_int_eq(f.live, 1);
	clf_regcache_put(&c, e2);
	teardown();
}
END_TEST

START_TEST(test_an_entry_in_use_is_freed_by_its_last_put)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	e1 = clf_regcache_get(&c, at(10), PG, &err);
	f.gen = 2;
	e2 = clf_regcache_get(&c, at(40), PG, &err);	/* drops e1 */
	/* The NIC may still be moving e1's bytes: not deregistered yet. */
	ck_assert_int_eq(f.deregs, 0);
	clf_regcache_put(&c, e1);
	ck_assert_int_eq(f.deregs, 1);
	clf_regcache_put(&c, e2);
	teardown();
}
END_TEST

START_TEST(test_invalidating_a_range_drops_what_overlaps_it)
{
	struct clf_regcache_entry *e;
	int err;

	setup(8, 1 << 20);
	for (int i = 0; i < 3; i++) {
		e = clf_regcache_get(&c, at(10 + 10 * i), 2 * PG, &err);
		clf_regcache_put(&c, e);
	}
	/* The last byte of the first, the first of the second. */
	clf_regcache_invalidate(&c, (const char *)at(12) - 1, 10 * PG);
	ck_assert_int_eq(f.deregs, 2);
	ck_assert_uint_eq(c.n, 1);
	e = clf_regcache_get(&c, at(30), PG, &err);
	ck_assert_int_eq(f.regs, 3);	/* the third was kept */
	clf_regcache_put(&c, e);
	teardown();
}
END_TEST

START_TEST(test_the_least_recently_used_goes_when_entries_run_out)
{
	struct clf_regcache_entry *e;
	int err;

	setup(2, 1 << 20);
	e = clf_regcache_get(&c, at(10), PG, &err);
	clf_regcache_put(&c, e);
	e = clf_regcache_get(&c, at(20), PG, &err);
	clf_regcache_put(&c, e);
	e = clf_regcache_get(&c, at(10), PG, &err);	/* 10 is fresher */
	clf_regcache_put(&c, e);
	e = clf_regcache_get(&c, at(30), PG, &err);	/* evicts 20 */
	clf_regcache_put(&c, e);
	ck_assert_uint_eq(c.st.evictions, 1);
	e = clf_regcache_get(&c, at(10), PG, &err);
	clf_regcache_put(&c, e);
	ck_assert_int_eq(f.regs, 3);
	e = clf_regcache_get(&c, at(20), PG, &err);
	clf_regcache_put(&c, e);
	ck_assert_int_eq(f.regs, 4);
	teardown();
}
END_TEST

START_TEST(test_pinned_bytes_stay_within_the_bound)
{
	struct clf_regcache_entry *e, *held;
	int err;

	setup(64, 8 * PG);
	held = clf_regcache_get(&c, at(100), 4 * PG, &err);
	for (int i = 0; i < 20; i++) {
		e = clf_regcache_get(&c, at(10 * i), 3 * PG, &err);
		ck_assert_ptr_nonnull(e);
		ck_assert_uint_le(c.pinned, 8 * PG);
		clf_regcache_put(&c, e);
	}
	/* The entry in use was never evicted. */
	e = clf_regcache_get(&c, at(100), PG, &err);
	ck_assert_ptr_eq(e, held);
	clf_regcache_put(&c, e);
	clf_regcache_put(&c, held);
	teardown();
}
END_TEST

START_TEST(test_a_buffer_beyond_the_bound_is_registered_for_one_use)
{
	struct clf_regcache_entry *e;
	int err;

	setup(8, 4 * PG);
	e = clf_regcache_get(&c, at(10), 16 * PG, &err);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_int_eq(f.live, 1);
	clf_regcache_put(&c, e);
	ck_assert_int_eq(f.live, 0);
	ck_assert_uint_eq(c.st.uncached, 1);
	teardown();
	/* Likewise when every entry is held. */
	setup(1, 1 << 20);
	{
		struct clf_regcache_entry *a, *b;

		a = clf_regcache_get(&c, at(10), PG, &err);
		b = clf_regcache_get(&c, at(20), PG, &err);
		ck_assert(b->once);
		clf_regcache_put(&c, b);
		ck_assert_int_eq(f.live, 1);
		clf_regcache_put(&c, a);
	}
	teardown();
}
END_TEST

START_TEST(test_a_failed_registration_is_reported_and_not_cached)
{
	int err = 0;

	setup(8, 1 << 20);
	f.fail = true;
	ck_assert_ptr_null(clf_regcache_get(&c, at(10), PG, &err));
	ck_assert_int_eq(err, -EFAULT);
	ck_assert_uint_eq(c.n, 0);
	f.fail = false;
	teardown();
}
END_TEST

START_TEST(test_neighbours_in_one_aligned_block_hit)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	clf_regcache_set_align(&c, 16 * PG);
	e1 = clf_regcache_get(&c, at(17), PG, &err);
	ck_assert_uint_eq(e1->start, 16 * PG);
	ck_assert_uint_eq(e1->len, 16 * PG);
	clf_regcache_put(&c, e1);
	/* The next piece of the pool: no registration. */
	e2 = clf_regcache_get(&c, at(20), 4 * PG, &err);
	ck_assert_ptr_eq(e2, e1);
	clf_regcache_put(&c, e2);
	ck_assert_int_eq(f.regs, 1);
	teardown();
}
END_TEST

START_TEST(test_a_block_past_the_mapping_falls_back_to_the_pages)
{
	struct clf_regcache_entry *e;
	int err;

	setup(8, 1 << 20);
	clf_regcache_set_align(&c, 16 * PG);
	f.mapped_end = 20 * PG;
	e = clf_regcache_get(&c, at(17), PG, &err);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->start, 17 * PG);
	ck_assert_uint_eq(e->len, PG);
	clf_regcache_put(&c, e);
	teardown();
}
END_TEST

/*
 * While an unmap is in flight its pages may be on their way out: what the
 * cache holds is not lent, and what is registered is the range's own
 * pages (not the block around it), for that one use.
 */
START_TEST(test_during_an_unmap_nothing_is_found_or_kept)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	clf_regcache_set_align(&c, 16 * PG);
	e1 = clf_regcache_get(&c, at(17), PG, &err);
	clf_regcache_put(&c, e1);
	f.gen = CLF_REGCACHE_UNSETTLED;
	e2 = clf_regcache_get(&c, at(17), PG, &err);
	ck_assert_ptr_nonnull(e2);
	ck_assert_ptr_ne(e2, e1);
	ck_assert_uint_eq(e2->start, 17 * PG);
	ck_assert_uint_eq(e2->len, PG);
	ck_assert_uint_eq(c.n, 1);
	clf_regcache_put(&c, e2);
	ck_assert_int_eq(f.live, 1);	/* e2 went with its put */
	ck_assert_uint_eq(c.st.unsettled, 1);
	/* The unmap over: a new generation, and caching again. */
	f.gen = 3;
	e2 = clf_regcache_get(&c, at(17), PG, &err);
	clf_regcache_put(&c, e2);
	ck_assert_int_eq(f.deregs, 2);	/* e1, then the one-use e2 */
	ck_assert_ptr_eq(clf_regcache_get(&c, at(18), PG, &err), e2);
	clf_regcache_put(&c, e2);
	teardown();
}
END_TEST

/* An unmap that began or ended while reg ran may have taken pages of
 * that registration: it serves the transfer that asked, and is not kept. */
START_TEST(test_a_registration_an_unmap_overlapped_serves_once)
{
	struct clf_regcache_entry *e1, *e2;
	int err;

	setup(8, 1 << 20);
	f.gen_after_reg = 2;
	e1 = clf_regcache_get(&c, at(10), PG, &err);
	ck_assert_ptr_nonnull(e1);
	ck_assert_uint_eq(c.n, 0);
	clf_regcache_put(&c, e1);
	ck_assert_int_eq(f.live, 0);
	f.gen_after_reg = 0;
	e2 = clf_regcache_get(&c, at(10), PG, &err);
	clf_regcache_put(&c, e2);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_int_eq(f.regs, 2);
	teardown();
}
END_TEST

#ifdef CLF_HAVE_RDMA
/*
 * The memory generation: this program links libclf.a, so its munmap is
 * libclf's -- unmaps are seen, and the generation moves only with them.
 * Where they are not seen, each lookup is a generation of its own (a
 * registration serves once); a sanitizer's runtime may make it so.
 */
START_TEST(test_the_generation_moves_with_unmaps_or_at_every_lookup_when_unseen)
{
	uint64_t g1, g2;
	void *p;

	clf_rdma_mem_hold();
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	ck_assert(clf_rdma_mem_watched());
#endif
	g1 = clf_rdma_mem_generation();
	g2 = clf_rdma_mem_generation();
	if (!clf_rdma_mem_watched()) {
		ck_assert_uint_gt(g2, g1);
		return;
	}
	ck_assert_uint_eq(g2, g1);
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	ck_assert_int_eq(munmap(p, PG), 0);
	ck_assert_uint_gt(clf_rdma_mem_generation(), g2);
}
END_TEST

/*
 * The window of an munmap, hooked deterministically: this program's
 * syscall() -- which libclf's munmap calls -- runs a lookup just before
 * the pages go and another after they went and new pages were mapped at
 * the same address (as another thread could), then munmap returns.  The
 * "registration" is a snapshot of the bytes, and every mapping holds its
 * own byte, written before anything registers it: a registration that
 * names old pages shows as a snapshot of an old byte.
 */
static struct {
	bool armed, ran;
	char *p;
	char in_window, after;	/* what the lookups' registrations held */
} win;
static struct clf_regcache snapc;

static void *snap_reg(void *arg, uintptr_t start, size_t len)
{
	char *m = malloc(len);

	memcpy(m, (const void *)start, len);
	return m;
}

static void snap_dereg(void *arg, void *h)
{
	free(h);
}

static uint64_t mem_gen(void *arg)
{
	return clf_rdma_mem_generation();
}

/* The byte a transfer through a lookup's registration of p would send. */
static char sent(char *p)
{
	struct clf_regcache_entry *e;
	int err;
	char b;

	e = clf_regcache_get(&snapc, p, PG, &err);
	ck_assert_ptr_nonnull(e);
	b = ((char *)e->handle)[(uintptr_t)p - e->start];
	clf_regcache_put(&snapc, e);
	return b;
}

static char *map_at(char *p, char fill)
{
	char *q = mmap(p, PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (p ? MAP_FIXED : 0), -1, 0);

	ck_assert(q != MAP_FAILED);
	memset(q, fill, PG);
	return q;
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	long r;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr != SYS_munmap || !win.armed || (char *)a[0] != win.p)
		return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	win.armed = false;
	win.ran = true;
	win.in_window = sent(win.p);
	r = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	map_at(win.p, 'B');
	win.after = sent(win.p);
	return r;
}

START_TEST(test_a_lookup_in_an_unmaps_window_never_lends_its_pages_again)
{
	struct clf_regcache_ops ops = { snap_reg, snap_dereg, mem_gen, NULL };

	clf_rdma_mem_hold();
	ck_assert_int_eq(clf_regcache_init(&snapc, 8, 1 << 20, &ops), 0);
	win.p = map_at(NULL, 'A');
	ck_assert_int_eq(sent(win.p), 'A');
	win.armed = true;
	ck_assert_int_eq(munmap(win.p, PG), 0);
	if (clf_rdma_mem_watched()) {
		ck_assert(win.ran);
		ck_assert_int_eq(win.in_window, 'A');	/* still mapped */
		ck_assert_int_eq(win.after, 'B');
	}
	/* After the unmap, the pages mapped there now -- and then kept. */
	ck_assert_int_eq(sent(win.p), 'B');
	ck_assert_int_eq(sent(win.p), 'B');
	if (clf_rdma_mem_watched())
		ck_assert_uint_eq(snapc.n, 1);
	clf_regcache_destroy(&snapc);
	ck_assert_int_eq(munmap(win.p, PG), 0);
}
END_TEST
#endif

static Suite *regcache_suite(void)
{
	Suite *s = suite_create("rdma_regcache");
	TCase *tc = tcase_create("regcache");

	tcase_add_test(tc, test_a_buffer_used_again_is_registered_once);
	tcase_add_test(tc, test_a_range_past_the_entry_is_a_miss);
	tcase_add_test(tc, test_a_new_generation_drops_every_entry);
	tcase_add_test(tc, test_an_entry_in_use_is_freed_by_its_last_put);
	tcase_add_test(tc, test_invalidating_a_range_drops_what_overlaps_it);
	tcase_add_test(tc, test_the_least_recently_used_goes_when_entries_run_out);
	tcase_add_test(tc, test_pinned_bytes_stay_within_the_bound);
	tcase_add_test(tc, test_a_buffer_beyond_the_bound_is_registered_for_one_use);
	tcase_add_test(tc, test_a_failed_registration_is_reported_and_not_cached);
	tcase_add_test(tc, test_neighbours_in_one_aligned_block_hit);
	tcase_add_test(tc, test_a_block_past_the_mapping_falls_back_to_the_pages);
	tcase_add_test(tc, test_during_an_unmap_nothing_is_found_or_kept);
	tcase_add_test(tc, test_a_registration_an_unmap_overlapped_serves_once);
#ifdef CLF_HAVE_RDMA
	tcase_add_test(tc, test_the_generation_moves_with_unmaps_or_at_every_lookup_when_unseen);
	tcase_add_test(tc, test_a_lookup_in_an_unmaps_window_never_lends_its_pages_again);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(regcache_suite());
}
