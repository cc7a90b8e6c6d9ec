// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_lock.c -- the iod's extent lock manager: grants expand, a
 * conflicting request or lockless access revokes and waits for the
 * holder's release, a silent or gone holder is evicted after its lease.
 *
 * A holder is a thread standing for a client's callback thread: it
 * takes the REVOKEs the manager sends, "flushes" (sets a flag), then
 * releases -- or stays silent, as a killed client would.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "clock.h"
#include "iod_lock.h"
#include "iod_lock_shape.h"

#define MIB ((int64_t)1 << 20)

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* The callback side of every client in a test. */
struct callbacks {
	struct iod_lockmgr *m;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int revokes;		/* REVOKEs sent so far */
	uint64_t client, id;	/* the last one's holder and lock */
	int64_t lo, hi;		/* and the range it asked back */
	int answered;		/* REVOKEs the holder has answered */
	int silent;		/* the holder does not answer */
	int unreachable;	/* sending REVOKE fails */
	atomic_int flushed;	/* the holder has sent its dirty bytes */
	atomic_int evicted;	/* last client evicted */
	int stop;
};

static int cb_revoke(void *arg, uint64_t client, uint64_t id, uint64_t file,
		     uint32_t sub, int64_t lo, int64_t hi)
{
	struct callbacks *cb = arg;

	(void)file;
	(void)sub;
	if (cb->unreachable)
		return -EPIPE;
	pthread_mutex_lock(&cb->mutex);
	cb->revokes++;
	cb->client = client;
	cb->id = id;
	cb->lo = lo;
	cb->hi = hi;
	pthread_cond_broadcast(&cb->cond);
	pthread_mutex_unlock(&cb->mutex);
	return 0;
}

static void cb_evicted(void *arg, uint64_t client)
{
	struct callbacks *cb = arg;

	atomic_store(&cb->evicted, (int)client);
}

/* Serve REVOKEs as a client's callback thread would, until stop. */
static void *holder(void *arg)
{
	struct callbacks *cb = arg;

	uint64_t client, id;

	pthread_mutex_lock(&cb->mutex);
	for (;;) {
		while (!cb->stop && cb->answered == cb->revokes)
			pthread_cond_wait(&cb->cond, &cb->mutex);
		if (cb->stop)
			break;
		client = cb->client;
		id = cb->id;
		cb->answered = cb->revokes;
		pthread_mutex_unlock(&cb->mutex);
		if (!cb->silent) {
			sleep_ms(50);	/* the flush takes a while */
			atomic_store(&cb->flushed, 1);
			iod_lock_release(cb->m, client, id);
		}
		pthread_mutex_lock(&cb->mutex);
	}
	pthread_mutex_unlock(&cb->mutex);
	return NULL;
}

struct fixture {
	struct iod_lockmgr m;
	struct callbacks cb;
	pthread_t holder;
};

static void fixture_start(struct fixture *f, int64_t lease_ms)
{
	struct iod_lock_ops ops = {
		.revoke = cb_revoke, .evicted = cb_evicted, .arg = &f->cb,
	};

	memset(&f->cb, 0, sizeof(f->cb));
	f->cb.m = &f->m;
	pthread_mutex_init(&f->cb.mutex, NULL);
	pthread_cond_init(&f->cb.cond, NULL);
	ck_assert_int_eq(iod_lockmgr_init(&f->m, &ops, lease_ms), 0);
	ck_assert_int_eq(pthread_create(&f->holder, NULL, holder, &f->cb), 0);
}

static void fixture_stop(struct fixture *f)
{
	pthread_mutex_lock(&f->cb.mutex);
	f->cb.stop = 1;
	pthread_cond_broadcast(&f->cb.cond);
	pthread_mutex_unlock(&f->cb.mutex);
	pthread_join(f->holder, NULL);
	iod_lockmgr_destroy(&f->m);
	pthread_cond_destroy(&f->cb.cond);
	pthread_mutex_destroy(&f->cb.mutex);
}

static int revokes(struct fixture *f)
{
	int n;

	pthread_mutex_lock(&f->cb.mutex);
	n = f->cb.revokes;
	pthread_mutex_unlock(&f->cb.mutex);
	return n;
}

START_TEST(test_lone_writer_is_granted_the_whole_subfile)
{
	struct fixture f;
	struct iod_lock_grant g;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  4096, 5120, &g), 0);
	ck_assert_int_eq(g.lo, 0);
	ck_assert_int_eq(g.hi, IOD_LOCK_EOF);
	ck_assert_uint_ne(g.id, 0);
	/* Its own further requests revoke nothing. */
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PR,
					  0, 10, &g), 0);
	iod_lock_revoke_range(&f.m, 1, 7, 0, 1, 0, IOD_LOCK_EOF);
	ck_assert_int_eq(revokes(&f), 0);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_readers_of_two_clients_share_without_revocation)
{
	struct fixture f;
	struct iod_lock_grant a, b;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PR,
					  0, 10, &a), 0);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PR,
					  100, 110, &b), 0);
	iod_lock_revoke_range(&f.m, 3, 7, 0, 0, 0, IOD_LOCK_EOF);
	ck_assert_int_eq(revokes(&f), 0);
	ck_assert_int_eq(b.lo, 0);
	ck_assert_int_eq(b.hi, IOD_LOCK_EOF);
	/* Another file and another subfile are other resources. */
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 8, 0, IOD_LOCK_PW,
					  0, 10, &b), 0);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 1, IOD_LOCK_PW,
					  0, 10, &b), 0);
	ck_assert_int_eq(revokes(&f), 0);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_conflicting_lock_waits_for_holders_flush_and_release)
{
	struct fixture f;
	struct iod_lock_grant a, b;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  0, 10, &a), 0);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PR,
					  5, 6, &b), 0);
	/* Granted only after the holder flushed and released. */
	ck_assert_int_eq(atomic_load(&f.cb.flushed), 1);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_uint_eq(f.cb.client, 1);
	ck_assert_uint_eq(f.cb.id, a.id);
	ck_assert_int_eq(iod_lock_release(&f.m, 1, a.id), -ENOENT);
	ck_assert_int_eq(iod_lock_release(&f.m, 2, b.id), 0);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_contended_grant_is_a_block_and_the_neighbour_stops_at_it)
{
	struct fixture f;
	struct iod_lock_grant a, b;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  10, 20, &a), 0);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PW,
					  3 * MIB + 10, 3 * MIB + 20, &b), 0);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(b.lo, 3 * MIB);
	ck_assert_int_eq(b.hi, 4 * MIB);
	/* Client 1 comes back: no revocation, a grant up to client 2's. */
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  10, 20, &a), 0);
	ck_assert_int_eq(a.lo, 0);
	ck_assert_int_eq(a.hi, 3 * MIB);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  5 * MIB, 5 * MIB + 1, &a), 0);
	ck_assert_int_eq(a.lo, 4 * MIB);
	ck_assert_int_eq(a.hi, IOD_LOCK_EOF);
	/* Client 2's next access beyond its block neither. */
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PW,
					  4 * MIB - 1, 4 * MIB, &b), 0);
	ck_assert_int_eq(revokes(&f), 1);
	fixture_stop(&f);
}
END_TEST

/*
 * Shrinking (the iod's setting): each client writes its own ascending
 * region (IOR's -b 1m over 2 iods: 512 KiB of each subfile in turn).
 * The second asks back only from its access up, the first keeps what
 * lies below and goes on there without a revocation; the next region of
 * the first takes only from there up of the second's.
 */
START_TEST(test_shrinking_leaves_the_holder_the_part_below_the_access)
{
	const int64_t K = 1024;
	struct fixture f;
	struct iod_lock_grant a, b, c;

	fixture_start(&f, 5000);
	f.m.shrink = 1;
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  10, 20, &a), 0);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PW,
					  512 * K + 10, 512 * K + 20, &b), 0);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_uint_eq(f.cb.id, a.id);
	ck_assert_int_eq(f.cb.lo, 512 * K);
	ck_assert_int_eq(f.cb.hi, IOD_LOCK_EOF);
	ck_assert_int_eq(b.lo, 512 * K);
	/* Client 1's lock is [0, 512K) now: its next write below is
	 * granted up to client 2's, with no revocation. */
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  300 * K, 301 * K, &c), 0);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(c.lo, 0);
	ck_assert_int_eq(c.hi, 512 * K);
	/* Client 1's next region (1M up) takes client 2's lock from there
	 * up only, if client 2's reached so far. */
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  b.hi + 100 * K, b.hi + 101 * K, &c), 0);
	ck_assert_int_ge(c.lo, b.hi);
	/* The shrunk lock is still held: its release is answered. */
	ck_assert_int_eq(iod_lock_release(&f.m, 1, a.id), 0);
	ck_assert_int_eq(iod_lock_release(&f.m, 1, a.id), -ENOENT);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_lockless_read_revokes_writers_not_readers)
{
	struct fixture f;
	struct iod_lock_grant a, b;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PR,
					  0, 10, &a), 0);
	iod_lock_revoke_range(&f.m, 0, 7, 0, 0, 0, 10);
	ck_assert_int_eq(revokes(&f), 0);
	ck_assert_int_eq(iod_lock_release(&f.m, 1, a.id), 0);

	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PW,
					  0, 10, &b), 0);
	iod_lock_revoke_range(&f.m, 0, 7, 0, 0, 100, 101);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(atomic_load(&f.cb.flushed), 1);
	ck_assert_uint_eq(f.cb.id, b.id);
	ck_assert_int_eq(atomic_load(&f.m.count), 0);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_lockless_write_revokes_readers)
{
	struct fixture f;
	struct iod_lock_grant a;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PR,
					  0, 10, &a), 0);
	/* Another file's access revokes nothing. */
	iod_lock_revoke_range(&f.m, 0, 8, IOD_LOCK_ALL_SUBFILES, 1, 0,
			      IOD_LOCK_EOF);
	ck_assert_int_eq(revokes(&f), 0);
	/* A range elsewhere on the subfile is still under the grant, and
	 * so is every subfile of the file. */
	iod_lock_revoke_range(&f.m, 0, 7, IOD_LOCK_ALL_SUBFILES, 1, 1 << 30,
			      IOD_LOCK_EOF);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(atomic_load(&f.cb.flushed), 1);
	ck_assert_int_eq(atomic_load(&f.m.count), 0);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_silent_holder_is_evicted_after_the_lease)
{
	struct fixture f;
	struct iod_lock_grant a, b;
	int64_t t0, dt;

	fixture_start(&f, 200);
	f.cb.silent = 1;
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  0, 10, &a), 0);
	t0 = clf_now_ms();
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PW,
					  0, 10, &b), 0);
	dt = clf_now_ms() - t0;
	ck_assert_int_ge(dt, 200);
	ck_assert_int_lt(dt, 5000);
	ck_assert_int_eq(atomic_load(&f.cb.evicted), 1);
	ck_assert_int_eq(f.m.evictions, 1);
	/* Its release comes too late: the lock is gone. */
	ck_assert_int_eq(iod_lock_release(&f.m, 1, a.id), -ENOENT);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_unreachable_holder_is_evicted_at_once)
{
	struct fixture f;
	struct iod_lock_grant a, b;
	int64_t t0;

	fixture_start(&f, 10000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  0, 10, &a), 0);
	f.cb.unreachable = 1;
	t0 = clf_now_ms();
	iod_lock_revoke_range(&f.m, 0, 7, 0, 0, 0, 10);
	ck_assert_int_lt(clf_now_ms() - t0, 5000);
	ck_assert_int_eq(atomic_load(&f.cb.evicted), 1);
	ck_assert_int_eq(atomic_load(&f.m.count), 0);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 2, 7, 0, IOD_LOCK_PW,
					  0, 10, &b), 0);
	fixture_stop(&f);
}
END_TEST

struct enqueuer {
	struct iod_lockmgr *m;
	struct iod_lock_grant g;
	atomic_int done;
	int ret;
};

static void *enqueue_pw(void *arg)
{
	struct enqueuer *e = arg;

	e->ret = iod_lock_enqueue(e->m, 2, 7, 0, IOD_LOCK_PW, 0, 10, &e->g);
	atomic_store(&e->done, 1);
	return NULL;
}

START_TEST(test_dropping_a_gone_client_lets_its_waiters_go)
{
	struct fixture f;
	struct iod_lock_grant a;
	struct enqueuer e = { .m = &f.m };
	pthread_t t;
	int64_t t0;

	fixture_start(&f, 20000);
	f.cb.silent = 1;
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PW,
					  0, 10, &a), 0);
	t0 = clf_now_ms();
	ck_assert_int_eq(pthread_create(&t, NULL, enqueue_pw, &e), 0);
	sleep_ms(100);
	ck_assert_int_eq(atomic_load(&e.done), 0);
	ck_assert_int_eq(iod_lock_drop_client(&f.m, 1), 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(e.ret, 0);
	ck_assert_int_lt(clf_now_ms() - t0, 10000);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_bad_requests_are_refused)
{
	struct fixture f;
	struct iod_lock_grant g = { 0 };

	fixture_start(&f, 1000);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 0, 7, 0, IOD_LOCK_PW, 0, 1, &g),
			 -EINVAL);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, 3, 0, 1, &g), -EINVAL);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PR, 5, 5, &g),
			 -EINVAL);
	ck_assert_int_eq(iod_lock_enqueue(&f.m, 1, 7, 0, IOD_LOCK_PR, -1, 5, &g),
			 -EINVAL);
	ck_assert_uint_eq(g.id, 0);
	ck_assert_int_eq(iod_lock_release(&f.m, 1, 99), -ENOENT);
	fixture_stop(&f);
}
END_TEST

/* Byte x in shape s?  By its definition. */
static bool shape_has(const struct iod_shape *s, int64_t x)
{
	return x >= s->lo && x < s->hi &&
	       (!s->stride || (x - s->lo) % s->stride < s->block);
}

static struct iod_shape random_shape(unsigned *seed)
{
	struct iod_shape s = { 0 };

	s.lo = rand_r(seed) % 64;
	s.hi = s.lo + 1 + rand_r(seed) % 160;
	s.stride = rand_r(seed) % 3 ? 2 + rand_r(seed) % 15 : 0;
	s.block = s.stride ? 1 + rand_r(seed) % (s.stride - 1) : 0;
	return s;
}

/* The tests of iod_lock_shape.c against every byte, random shapes. */
START_TEST(test_shapes_meet_exactly_where_their_bytes_do)
{
	unsigned seed = 20261127;

	for (int n = 0; n < 20000; n++) {
		struct iod_shape x = random_shape(&seed), y = random_shape(&seed);
		struct iod_shape xw = x, yw = y;
		int64_t a = rand_r(&seed) % 240, b = a + rand_r(&seed) % 60;
		bool meet = false, in_range = false, far = false;

		for (int64_t i = 0; i < 256; i++) {
			meet |= shape_has(&x, i) && shape_has(&y, i);
			in_range |= i >= a && i < b && shape_has(&x, i);
		}
		ck_assert_msg(iod_shapes_meet(&x, &y) == meet,
			      "[%ld,%ld)/%ld/%ld and [%ld,%ld)/%ld/%ld",
			      (long)x.lo, (long)x.hi, (long)x.stride,
			      (long)x.block, (long)y.lo, (long)y.hi,
			      (long)y.stride, (long)y.block);
		ck_assert(iod_shape_meets_range(&x, a, b) == in_range);
		/* Interleaving: apart however far both grow, by whole
		 * strides down and any length up. */
		xw.lo %= x.stride ? x.stride : 1;
		yw.lo %= y.stride ? y.stride : 1;
		xw.hi = yw.hi = 100000;
		if (!iod_shapes_interleave(&x, &y))
			continue;
		for (int64_t i = 0; i < 100000 && !far; i++)
			far = shape_has(&xw, i) && shape_has(&yw, i);
		ck_assert(!far);
	}
}
END_TEST

/* IOR's interleaved writers: two clients writing B bytes every 2 B. */
START_TEST(test_interleaved_strided_writers_keep_their_locks)
{
	struct fixture f;
	struct iod_lock_grant a, b, c;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 1, 7, 0, IOD_LOCK_PW,
						  4096, 5120, 2048, 1024, &a),
			 0);
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 2, 7, 0, IOD_LOCK_PW,
						  5120, 6144, 2048, 1024, &b),
			 0);
	ck_assert_int_eq(revokes(&f), 0);
	/* Both expand to the whole subfile, their blocks where asked. */
	ck_assert_int_eq(a.lo, 0);
	ck_assert_int_eq(b.lo, 1024);
	ck_assert_int_eq(a.hi, IOD_LOCK_EOF);
	ck_assert_int_eq(b.hi, IOD_LOCK_EOF);
	/* A plain lock in a gap of both... */
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 3, 7, 0, IOD_LOCK_PW,
						  1 << 20, (1 << 20) + 10, 0, 0,
						  &c),
			 0);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(f.cb.client, 1);	/* 1 MiB is client 1's block */
	/* ...and a lockless read of client 2's bytes only revokes its. */
	iod_lock_revoke_range(&f.m, 0, 7, 0, 0, 3072, 4096);
	ck_assert_int_eq(revokes(&f), 2);
	ck_assert_int_eq(f.cb.client, 2);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_strided_requests_of_one_phase_conflict)
{
	struct fixture f;
	struct iod_lock_grant a, b;

	fixture_start(&f, 5000);
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 1, 7, 0, IOD_LOCK_PW,
						  0, 100, 64, 16, &a), 0);
	/* Blocks [8, 24) every 64 meet [0, 16) every 64. */
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 2, 7, 0, IOD_LOCK_PW,
						  8, 24, 64, 16, &b), 0);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 2, 7, 0, IOD_LOCK_PW,
						  0, 10, 8, 8, &b), -EINVAL);
	ck_assert_int_eq(iod_lock_enqueue_strided(&f.m, 2, 7, 0, IOD_LOCK_PW,
						  0, 10, -8, 4, &b), -EINVAL);
	fixture_stop(&f);
}
END_TEST

/* Subfile byte x of subfile j of U-byte stripes over n subfiles: its
 * file offset. */
static int64_t rr_file_offset(int64_t x, int64_t u, int n, int j)
{
	return x / u * u * n + (int64_t)j * u + x % u;
}

/* Subfile byte x (file offset fx) in shape s?  By the definitions. */
static bool shape_has_at(const struct iod_shape *s, int64_t x, int64_t fx)
{
	if (!s->in_file)
		return shape_has(s, x);
	return x >= s->lo && x < s->hi &&
	       ((fx - s->phase) % s->stride + s->stride) % s->stride <
		       s->block;
}

static struct iod_shape random_any_shape(unsigned *seed)
{
	struct iod_shape s = random_shape(seed);

	if (rand_r(seed) % 3) {
		s.in_file = true;
		s.stride = 2 + rand_r(seed) % 40;
		s.block = 1 + rand_r(seed) % (s.stride - 1);
		s.phase = rand_r(seed) % s.stride;
	}
	return s;
}

/*
 * Locks strided in the file (1.27) over random round-robin layouts: the
 * iod does not know the layout, so its tests must never say "apart"
 * where some subfile byte lies in both (a "meet" where none does only
 * costs a revocation).
 */
START_TEST(test_file_strided_shapes_never_share_a_byte)
{
	unsigned seed = 20261128;
	int exact_apart = 0;

	for (int n = 0; n < 20000; n++) {
		struct iod_shape x = random_any_shape(&seed);
		struct iod_shape y = random_any_shape(&seed);
		int64_t u = 1 + rand_r(&seed) % 40;
		int nsub = 1 + rand_r(&seed) % 4, j = rand_r(&seed) % nsub;
		int64_t a = rand_r(&seed) % 240, b = a + rand_r(&seed) % 60;
		bool meet = false, in_range = false, far = false;

		for (int64_t i = 0; i < 256; i++) {
			int64_t fi = rr_file_offset(i, u, nsub, j);

			meet |= shape_has_at(&x, i, fi) && shape_has_at(&y, i, fi);
			in_range |= i >= a && i < b && shape_has_at(&x, i, fi);
		}
		if (meet)
			ck_assert_msg(iod_shapes_meet(&x, &y),
				      "apart, but byte shared: [%ld,%ld)/%ld/%ld/%d@%ld and [%ld,%ld)/%ld/%ld/%d@%ld, stripes %ld x %d",
				      (long)x.lo, (long)x.hi, (long)x.stride,
				      (long)x.block, x.in_file, (long)x.phase,
				      (long)y.lo, (long)y.hi, (long)y.stride,
				      (long)y.block, y.in_file, (long)y.phase,
				      (long)u, nsub);
		else
			exact_apart += !iod_shapes_meet(&x, &y);
		if (in_range && !iod_shape_meets_range(&x, a, b))
			ck_abort_msg("a range holding bytes of the shape is apart");
		if (!iod_shapes_interleave(&x, &y))
			continue;
		/* Interleaving: apart however far both grow (a subfile's
		 * stride by whole strides down). */
		x.lo = x.in_file ? 0 : x.lo % x.stride;
		y.lo = y.in_file ? 0 : y.lo % y.stride;
		x.hi = y.hi = 20000;
		for (int64_t i = 0; i < 20000 && !far; i++) {
			int64_t fi = rr_file_offset(i, u, nsub, j);

			far = shape_has_at(&x, i, fi) && shape_has_at(&y, i, fi);
		}
		ck_assert(!far);
	}
	/* and the test is not "always meet" */
	ck_assert_int_gt(exact_apart, 1000);
}
END_TEST

/* IOR's 47008-byte segments of two clients, over any stripes: locks
 * strided in the file, phases 0 and B, both stand; one phase conflicts;
 * a plain lock or access in their extent revokes. */
START_TEST(test_file_strided_writers_keep_their_locks)
{
	const int64_t B = 47008;
	struct fixture f;
	struct iod_lock_grant a, b, c;
	struct iod_shape sa = { 0, 10208, 2 * B, B, true, 0 };
	struct iod_shape sb = { 47008, 65536, 2 * B, B, true, B };
	struct iod_shape bad = { 0, 10, 0, 0, true, 0 };

	fixture_start(&f, 1000);
	ck_assert_int_eq(iod_lock_enqueue_shape(&f.m, 1, 7, 0, IOD_LOCK_PW,
						&sa, &a), 0);
	ck_assert_int_eq(iod_lock_enqueue_shape(&f.m, 2, 7, 0, IOD_LOCK_PW,
						&sb, &b), 0);
	ck_assert_int_eq(revokes(&f), 0);
	ck_assert_int_eq(a.lo, 0);
	ck_assert_int_eq(a.hi, IOD_LOCK_EOF);
	ck_assert_int_eq(b.lo, 0);	/* lo moves freely: no phase in it */
	ck_assert_int_eq(b.hi, IOD_LOCK_EOF);
	/* Client 3 at client 1's phase: their blocks meet. */
	sb.phase = 0;
	ck_assert_int_eq(iod_lock_enqueue_shape(&f.m, 3, 7, 0, IOD_LOCK_PW,
						&sb, &c), 0);
	ck_assert_int_eq(revokes(&f), 1);
	ck_assert_int_eq(f.cb.client, 1);
	/* A lockless write revokes whatever may hold its byte (client 2's
	 * and 3's locks; a revocation the holder thread misses ends in an
	 * eviction after the lease). */
	iod_lock_revoke_range(&f.m, 0, 7, 0, 1, 1 << 20, (1 << 20) + 1);
	ck_assert_int_ge(revokes(&f), 2);
	ck_assert_int_eq(iod_lock_enqueue_shape(&f.m, 4, 7, 0, IOD_LOCK_PW,
						&bad, &c), -EINVAL);
	bad = (struct iod_shape){ 0, 10, 8, 4, true, -1 };
	ck_assert_int_eq(iod_lock_enqueue_shape(&f.m, 4, 7, 0, IOD_LOCK_PW,
						&bad, &c), -EINVAL);
	fixture_stop(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_lock");
	TCase *tc = tcase_create("lock");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_lone_writer_is_granted_the_whole_subfile);
	tcase_add_test(tc, test_readers_of_two_clients_share_without_revocation);
	tcase_add_test(tc, test_conflicting_lock_waits_for_holders_flush_and_release);
	tcase_add_test(tc, test_contended_grant_is_a_block_and_the_neighbour_stops_at_it);
	tcase_add_test(tc, test_shrinking_leaves_the_holder_the_part_below_the_access);
	tcase_add_test(tc, test_lockless_read_revokes_writers_not_readers);
	tcase_add_test(tc, test_lockless_write_revokes_readers);
	tcase_add_test(tc, test_silent_holder_is_evicted_after_the_lease);
	tcase_add_test(tc, test_unreachable_holder_is_evicted_at_once);
	tcase_add_test(tc, test_dropping_a_gone_client_lets_its_waiters_go);
	tcase_add_test(tc, test_bad_requests_are_refused);
	tcase_add_test(tc, test_shapes_meet_exactly_where_their_bytes_do);
	tcase_add_test(tc, test_interleaved_strided_writers_keep_their_locks);
	tcase_add_test(tc, test_strided_requests_of_one_phase_conflict);
	tcase_add_test(tc, test_file_strided_shapes_never_share_a_byte);
	tcase_add_test(tc, test_file_strided_writers_keep_their_locks);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
