// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * xcache.c -- the client's cache under extent locks (xcache.h says what
 * it promises; iod/iod_lock.h how the iod grants and revokes).
 *
 * Connections, per iod, opened at the first lock asked of it:
 *   - lk: LOCK_ENQUEUE only, sent without the cache's mutex (a request
 *     may wait at the iod until another client released a lock);
 *   - fl: everything else of the cache -- flushes, reads of missing
 *     bytes, LOCK_RELEASE -- always under the cache's mutex, and never
 *     waiting for another client: the iod lets a caching client's own
 *     connections pass (they access only under its locks);
 *   - cb: the callback connection, read by the cache's thread.
 * So a thread waiting in an ENQUEUE holds nothing the cache thread needs
 * to answer a REVOKE, and two clients that each want the other's lock
 * both get it.
 *
 * Kept bytes are extents per (file, subfile), sorted and apart; written
 * ones are dirty.  A revocation flushes and drops the extents that
 * touch the revoked lock's range; those under the subfile's other locks
 * stay (every kept byte lies under some lock held).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "arith.h"
#include "client_i.h"
#include "clock.h"
#include "error.h"
#include "log.h"
#include "transport.h"
#include "xcache.h"

/* The first protocol minor with extent locks; with strided ones; with
 * ones strided in the file. */
#define LOCK_PROTO_MINOR 13
#define STRIDED_PROTO_MINOR 26
#define FILE_STRIDED_PROTO_MINOR 27
/*
 * A writer whose accesses to a subfile went the same number of bytes
 * apart this many times in a row (IOR's segments: B bytes every P * B)
 * asks for a strided lock over its blocks (iod_lock_shape.h) when it
 * needs a lock, so that processes that interleave hold one each
 * instead of passing one back and forth.  Strides up to STRIDE_MAX.
 */
#define STRIDE_STREAK 1
#define STRIDE_MAX ((int64_t)64 << 20)
/*
 * Lockless under contention, as Lustre does: a subfile whose locks were
 * revoked THRASH_REVOKES times in a row, each after serving fewer than
 * THRASH_SERVED accesses, is one where processes keep taking each
 * other's locks (interleaved writes of changing sizes, which no stride
 * describes): each access there would cost a lock request, the other's
 * flush and release, where a lockless one costs one round trip.  Its
 * next LOCKLESS_ACCESSES accesses go lockless, then it tries the cache
 * again (a count, not a time: the pattern is per access, and a test
 * sees the same at any load).
 * Interleaving writers of one stride settle on strided locks after two
 * or three revocations, below the threshold.
 *
 * Where the writes go at a stride in the file but not in a subfile
 * (IOR's 47008-byte segments over 64 KiB stripes: each subfile holds
 * pieces of changing sizes), the lock asked is strided in the file's
 * bytes (1.27, clf_proto.h): it holds the subfile bytes whose file
 * offsets lie in the writer's blocks, which a piece shows by its file
 * offset (struct clf_xc_piece).  Such a lock reads ahead nothing: which
 * bytes around a piece are ours would take the layout to say.
 */
#define THRASH_REVOKES 6
#define THRASH_SERVED 4
#define LOCKLESS_ACCESSES 256
/* Kept written bytes go out at the latest this long after the first
 * (CLF_TEST_CACHE_FLUSH_MS in tests). */
#define FLUSH_AFTER_MS 1000
/* A read that misses reads this much around it, within the lock. */
#define READ_AHEAD (64 << 10)
/* A reader going forward reads up to this much ahead per miss. */
#define RA_MAX (1 << 20)
/*
 * A reader going at a stride in the file (IOR's segments read back)
 * reads, at a miss, exactly its own pieces and those of its next blocks
 * (up to RA_MAX bytes, RA_PIECES pieces), one request each, every iod at
 * once: a window around the miss carried the other processes' blocks as
 * much as ours (47008-byte reads of 2 processes: twice the bytes).
 */
#define RA_PIECES 64
/* The pieces of one small access at most (io_small.c's SMALL_PIECES). */
#define SMALL_PIECES_MAX 64
/*
 * A read of more than this is served here only when every byte of it
 * is kept already: one that misses goes to the iods lockless, one
 * vector request of exactly its bytes per iod in parallel.  Up to
 * ACCESS_MAX reads ahead: for IOR's interleaved reads of 47008 bytes a
 * window holds as many of the other process's bytes as of ours, and
 * with a fresh buffer per window moving them cost more than the round
 * trips saved (194 against 130 us per read); with pooled windows
 * (buf_get) it costs less (mpi_small --bytes 47008, 2 processes: 64-87
 * against 162-216 us per read lockless).
 */
#define READ_BIG (64 << 10)
/*
 * Larger accesses go to the iods as before (a lockless access, which
 * revokes this client's own conflicting locks first): their round trip
 * is a small part of their cost.  Up to here (io_small.c's bound, IOR's
 * 47008-byte transfers included) a write is kept: its flush goes with
 * the others', every iod at once (struct batch).
 */
#define ACCESS_MAX (64 << 10)

struct ext {
	int64_t off, len, cap;
	uint8_t *data;
	bool dirty;
};

struct xlock {
	uint64_t id;
	int mode;
	int64_t lo, hi;
	int64_t stride, block;	/* strided: (x - lo) % stride < block;
				   stride 0: all of [lo, hi) */
	bool in_file;		/* the x are file offsets, from phase */
	int64_t phase;		/* in [0, stride) */
	struct xlock *next;
};

struct obj {			/* one subfile of one open file */
	struct clf_file *f;	/* borrowed: objects go at its close */
	uint64_t file;
	uint32_t iod, sub;
	struct xlock *locks;
	struct ext *ext;
	int n, cap;
	int64_t dirty_since;	/* clf_now_ms of the oldest dirty; 0: none */
	int64_t ra, ra_end;	/* last read-ahead's size and end */
	int64_t w_off, w_len;	/* the last write's piece here */
	int64_t w_stride;	/* and how far it was from the one before */
	int w_streak;		/* writes in a row at w_stride, w_len each */
	int served;		/* accesses served since the last revocation */
	int thrash;		/* revocations in a row after few of them */
	int lockless;		/* accesses left to go lockless (THRASH_*) */
	struct obj *next;
};

struct xiod {
	struct clf_peer lk, fl;
	uint64_t fl_bound;	/* fl's generation that is bound */
	struct clf_conn *cb;	/* owned by the thread once set */
	bool up, off;		/* callback set up; no caching here */
};

static struct {
	pthread_mutex_t mu;	/* everything below */
	pthread_mutex_t setup;	/* one iod set up at a time */
	struct clf_client *cl;
	struct xiod *iods;
	struct obj *objs;
	int64_t bytes;		/* in extents */
	uint64_t client;
	uint64_t gone[64];	/* revoked before their grant was kept */
	unsigned ngone;
	bool thread;
	pthread_t thr;
	int wake[2];
	bool stop;
	int64_t flush_after_ms;
} xc = { .mu = PTHREAD_MUTEX_INITIALIZER,
	 .setup = PTHREAD_MUTEX_INITIALIZER, .wake = { -1, -1 } };

/*
 * A forked child has the parent's cache but not its thread, and shares
 * its connections: it forgets them all (the parent's bytes are the
 * parent's to send) and starts afresh.
 */
static atomic_bool forked;	/* set in a child, by forked_child */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forked_child(void)
{
	atomic_store(&forked, true);
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

/* (Asked at every access: a flag, not getpid(), which is a system call
 * each time, as much as a cached 1 KiB write costs otherwise.) */
static bool forget_after_fork(void)
{
	if (!atomic_load_explicit(&forked, memory_order_relaxed) ||
	    !atomic_exchange(&forked, false) || !xc.iods)
		return false;
	xc.iods = NULL;
	xc.objs = NULL;
	xc.bytes = 0;
	xc.ngone = 0;
	xc.thread = false;
	xc.wake[0] = xc.wake[1] = -1;
	xc.client = 0;
	pthread_mutex_init(&xc.mu, NULL);
	pthread_mutex_init(&xc.setup, NULL);
	return true;
}

bool clf_xcache_wanted(const struct clf_file *f)
{
	struct clf_client *cl = clf_client_instance;

	switch (__atomic_load_n(&f->cache, __ATOMIC_RELAXED)) {
	case CLF_XCACHE_ON:
		return cl != NULL;
	case CLF_XCACHE_OFF:
		return false;
	default:
		return cl && cl->cfg->client_cache > 0;
	}
}

/* The bytes kept at most: clf.conf's, or the default when a descriptor
 * alone turned the cache on. */
static int64_t cache_bound(void)
{
	int64_t n = xc.cl->cfg->client_cache;

	return n > 0 ? n : CLF_CLIENT_CACHE_DEFAULT;
}

/* ---- extents ---------------------------------------------------- */

/*
 * The extents' buffers, 1 KiB to 1 MiB, come from free lists by power of
 * two and go back to them, up to the cache's bound in all.  A cache that
 * keeps thousands of small extents and drops them all at each flush of
 * the bound (IOR's interleaved 1 KiB writes under strided locks) made
 * glibc give the heap's top back to the kernel and take it again at
 * every pass: brk calls, page faults and TLB shootdowns across the
 * process's threads were most of such a write's time (perf, 2 processes).
 * Read-ahead windows (up to RA_MAX) are read into such a buffer, which
 * the window's extent then takes over: a fresh 512 KiB buffer per miss
 * was mapped, faulted in page by page and unmapped again, which cost a
 * reader of interleaved 1 KiB pieces 3x its time.
 *
 * The pool outlives the files, up to CLF_finalize: given back at the
 * last close, its memory went back to the kernel with the heap's top,
 * and every open mapped and reached its buffers again page by page
 * (~25 us a page on a virtual machine): 47008-byte writes and reads
 * through the native API cost 140-280 us each, a local file 9 and 7.
 * Kept whole, one class held what another then needed: IOR's
 * interleaved 47008-byte writes leave 64 KiB buffers, its reads then
 * want 1 MiB windows, mapped afresh (mpi_small's reads 10-20% slower,
 * seen in sessions 14 and 15), so a class the pool lacks first hands
 * malloc the other classes' buffers beyond their spares (pool_recycle).
 */
#define POOL_MIN_SHIFT 10
#define POOL_MAX_SHIFT 20
/*
 * Appends grow an extent up to the pool's largest buffer; past it a new
 * extent starts.  A sequential writer's one extent grew by doubling to
 * the cache's bound, each step a buffer above the pool's classes, mapped
 * fresh and copied into: 47008-byte writes of one process cost 250 us
 * each (mpi_small) where a local file takes 9.
 */
#define EXT_MAX ((int64_t)1 << POOL_MAX_SHIFT)

/*
 * Each class keeps this many buffers even past the bound: an extent
 * growing by appends goes through every class below EXT_MAX, giving each
 * buffer back as it takes the next, and a pool full of the largest
 * class freed them, so every step was mapped and faulted in again.
 * At most ~4 MiB.
 */
#define POOL_SPARE 2
/*
 * The pool holds up to the cache's bound and this more: the bound is
 * checked after an access, and an extent being appended to holds up to
 * EXT_MAX for less, so the buffers in use reach a little past it, and
 * what a pool held to the bound freed then was mapped again by the next
 * appends.
 */
#define POOL_OVER (2 * EXT_MAX)

struct pooled {
	struct pooled *next;
};

static struct {
	struct pooled *free[POOL_MAX_SHIFT - POOL_MIN_SHIFT + 1];
	int count[POOL_MAX_SHIFT - POOL_MIN_SHIFT + 1];
	int64_t bytes;		/* in the free lists; xc.mu */
} pool;

/* The class of a buffer of at least len bytes, -1 above the largest. */
static int pool_class(int64_t len)
{
	int c = 0;

	while (c <= POOL_MAX_SHIFT - POOL_MIN_SHIFT &&
	       ((int64_t)1 << (c + POOL_MIN_SHIFT)) < len)
		c++;
	return c <= POOL_MAX_SHIFT - POOL_MIN_SHIFT ? c : -1;
}

/*
 * Give malloc back at least want bytes of the other classes' buffers
 * beyond their POOL_SPARE, for a buffer of class c the pool lacks: the
 * heap they came from serves it then, where memory kept in one class
 * and mapped afresh for another is reached page by page again (a
 * writer's 64 KiB extents kept, its reader's 1 MiB windows mapped).
 * The spares stay: an extent growing by appends takes each in turn.
 */
static void pool_recycle(int c, int64_t want)
{
	for (int k = 0; k <= POOL_MAX_SHIFT - POOL_MIN_SHIFT && want > 0;
	     k++) {
		int64_t cap = (int64_t)1 << (k + POOL_MIN_SHIFT);

		while (k != c && pool.count[k] > POOL_SPARE && want > 0) {
			struct pooled *b = pool.free[k];

			pool.free[k] = b->next;
			pool.count[k]--;
			pool.bytes -= cap;
			want -= cap;
			free(b);
		}
	}
}

/* A buffer of at least len bytes; *cap says how many.  Under xc.mu. */
static uint8_t *buf_get(int64_t len, int64_t *cap)
{
	int c = pool_class(len);
	struct pooled *b;

	if (c < 0) {
		*cap = len;
		return malloc(len);
	}
	*cap = (int64_t)1 << (c + POOL_MIN_SHIFT);
	b = pool.free[c];
	if (!b) {
		pool_recycle(c, *cap);
		return malloc(*cap);
	}
	pool.free[c] = b->next;
	pool.count[c]--;
	pool.bytes -= *cap;
	return (uint8_t *)b;
}

/* Give back a buffer of buf_get's cap bytes.  Under xc.mu. */
static void buf_put(uint8_t *p, int64_t cap)
{
	int c = pool_class(cap);
	struct pooled *b = (struct pooled *)p;

	if (!p)
		return;
	if (c < 0 || ((int64_t)1 << (c + POOL_MIN_SHIFT)) != cap ||
	    (pool.bytes + cap > cache_bound() + POOL_OVER &&
	     pool.count[c] >= POOL_SPARE)) {
		free(p);
		return;
	}
	b->next = pool.free[c];
	pool.free[c] = b;
	pool.count[c]++;
	pool.bytes += cap;
}

/* Free the pool's buffers (at shutdown). */
static void pool_drain(void)
{
	for (int c = 0; c <= POOL_MAX_SHIFT - POOL_MIN_SHIFT; c++) {
		while (pool.free[c]) {
			struct pooled *b = pool.free[c];

			pool.free[c] = b->next;
			free(b);
		}
		pool.count[c] = 0;
	}
	pool.bytes = 0;
}

/* The first extent of o that ends after off, o->n if none. */
static int ext_find(const struct obj *o, int64_t off)
{
	int lo = 0, hi = o->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (o->ext[mid].off + o->ext[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void ext_free(struct obj *o, int i)
{
	xc.bytes -= o->ext[i].len;
	buf_put(o->ext[i].data, o->ext[i].cap);
	memmove(&o->ext[i], &o->ext[i + 1], (o->n - i - 1) * sizeof(*o->ext));
	o->n--;
}

static bool ext_in(const struct ext *e, int64_t lo, int64_t hi)
{
	return e->off < hi && lo < e->off + e->len;
}

static void drop_all(struct obj *o)
{
	while (o->n)
		ext_free(o, o->n - 1);
	o->dirty_since = 0;
}

/*
 * Drop o's extents that touch [lo, hi), whose dirty bytes were sent.
 * Every byte of an extent lies under some lock held (a read-ahead stays
 * within its lock, a write is kept only under one), so what is outside a
 * revoked lock's range is still under another and stays valid.
 */
static void drop_range(struct obj *o, int64_t lo, int64_t hi)
{
	bool dirty = false;

	for (int i = o->n - 1; i >= 0; i--) {
		if (ext_in(&o->ext[i], lo, hi))
			ext_free(o, i);
		else
			dirty |= o->ext[i].dirty;
	}
	if (!dirty)
		o->dirty_since = 0;
}

static int ext_insert_at(struct obj *o, int i, struct ext e)
{
	if (o->n == o->cap) {
		int cap = o->cap ? 2 * o->cap : 8;
		struct ext *ne = realloc(o->ext, cap * sizeof(*ne));

		if (!ne)
			return clf_fail(ENOMEM, "clf: out of memory");
		o->ext = ne;
		o->cap = cap;
	}
	memmove(&o->ext[i + 1], &o->ext[i], (o->n - i) * sizeof(*o->ext));
	o->ext[i] = e;
	o->n++;
	xc.bytes += e.len;
	return 0;
}

/* Append bytes to extent e (they follow it). */
static int ext_append(struct ext *e, const uint8_t *src, int64_t len)
{
	if (e->len + len > e->cap) {
		int64_t cap;
		uint8_t *nd = buf_get(max64(min64(2 * e->cap, EXT_MAX),
					    e->len + len), &cap);

		if (!nd)
			return clf_fail(ENOMEM, "clf: out of memory");
		memcpy(nd, e->data, e->len);
		buf_put(e->data, e->cap);
		e->data = nd;
		e->cap = cap;
	}
	memcpy(e->data + e->len, src, len);
	e->len += len;
	xc.bytes += len;
	return 0;
}

/* Cut [off, end) out of o's extents. */
static int ext_cut(struct obj *o, int64_t off, int64_t end)
{
	int i, err;

	for (i = ext_find(o, off); i < o->n && o->ext[i].off < end;) {
		struct ext *x = &o->ext[i];
		int64_t xend = x->off + x->len;

		if (x->off < off && xend > end) {
			/* The new bytes fall inside: split off the tail. */
			struct ext t = { end, xend - end, 0, NULL, x->dirty };

			t.data = buf_get(t.len, &t.cap);
			if (!t.data)
				return clf_fail(ENOMEM, "clf: out of memory");
			memcpy(t.data, x->data + (end - x->off), t.len);
			xc.bytes -= xend - off;
			x->len = off - x->off;
			err = ext_insert_at(o, i + 1, t);
			if (err) {
				buf_put(t.data, t.cap);
				return err;
			}
			i++;
		} else if (x->off < off) {
			xc.bytes -= xend - off;
			x->len = off - x->off;
			i++;
		} else if (xend > end) {
			int64_t cut = end - x->off;

			memmove(x->data, x->data + cut, x->len - cut);
			x->off = end;
			x->len -= cut;
			xc.bytes -= cut;
			i++;
		} else {
			ext_free(o, i);
		}
	}
	return 0;
}

/* Keep [off, off + len) from src, over whatever was kept there. */
static int ext_put(struct obj *o, int64_t off, int64_t len,
		   const uint8_t *src, bool dirty)
{
	struct ext e;
	int i, err = ext_cut(o, off, off + len);

	if (err)
		return err;
	/* Nothing overlaps [off, off + len) now: the first one ending
	 * after off starts at its end or later. */
	i = ext_find(o, off);
	/* Grow the one before when it ends here, up to EXT_MAX. */
	if (i > 0 && o->ext[i - 1].off + o->ext[i - 1].len == off &&
	    o->ext[i - 1].dirty == dirty &&
	    o->ext[i - 1].len + len <= EXT_MAX)
		return ext_append(&o->ext[i - 1], src, len);
	e = (struct ext){ off, len, 0, NULL, dirty };
	e.data = buf_get(len, &e.cap);
	if (!e.data)
		return clf_fail(ENOMEM, "clf: out of memory");
	memcpy(e.data, src, len);
	err = ext_insert_at(o, i, e);
	if (err)
		buf_put(e.data, e.cap);
	return err;
}

/*
 * Keep [off, off + len) as clean bytes: buf, a buffer of buf_get's cap
 * bytes, which o's new extent takes over (given back on failure).
 */
static int ext_adopt(struct obj *o, int64_t off, int64_t len, uint8_t *buf,
		     int64_t cap)
{
	int err = ext_cut(o, off, off + len);

	if (!err)
		err = ext_insert_at(o, ext_find(o, off),
				    (struct ext){ off, len, cap, buf, false });
	if (err)
		buf_put(buf, cap);
	return err;
}

/* Do the extents hold all of [off, off + len)? */
static bool ext_has(const struct obj *o, int64_t off, int64_t len)
{
	int64_t at = off, end = off + len;

	for (int i = ext_find(o, off); i < o->n && at < end; i++) {
		const struct ext *x = &o->ext[i];

		if (x->off + x->len <= at)
			continue;
		if (x->off > at)
			return false;
		at = min64(x->off + x->len, end);
	}
	return at >= end;
}

/* Copy [off, off + len) into dst if the extents hold all of it. */
static bool ext_get(const struct obj *o, int64_t off, int64_t len,
		    uint8_t *dst)
{
	int64_t at = off, end = off + len;

	for (int i = ext_find(o, off); i < o->n && at < end; i++) {
		const struct ext *x = &o->ext[i];
		int64_t xend = x->off + x->len, k;

		if (xend <= at)
			continue;
		if (x->off > at)
			return false;
		k = min64(xend, end) - at;
		memcpy(dst + (at - off), x->data + (at - x->off), k);
		at += k;
	}
	return at == end;
}

/* Lay the dirty extents over [off, off + len) read into dst; true when
 * one overlapped. */
static bool ext_overlay_dirty(const struct obj *o, int64_t off, int64_t len,
			      uint8_t *dst)
{
	bool any = false;

	for (int i = ext_find(o, off); i < o->n && o->ext[i].off < off + len;
	     i++) {
		const struct ext *x = &o->ext[i];
		int64_t lo = max64(off, x->off);
		int64_t hi = min64(off + len, x->off + x->len);

		if (!x->dirty || lo >= hi)
			continue;
		memcpy(dst + (lo - off), x->data + (lo - x->off), hi - lo);
		any = true;
	}
	return any;
}

/* ---- the fl connection (under xc.mu) ---------------------------- */

static int enc_release(uint64_t id, uint8_t *buf, size_t cap, size_t *len)
{
	struct clf_proto_lock_release_req m = { xc.client, id };
	struct wire_writer w = { buf, cap, 0 };
	int err = clf_proto_lock_release_req_encode(&w, &m);

	*len = w.pos;
	return err;
}

/* One request on locked p and its reply (freed). */
static int call_locked(struct clf_peer *p, uint16_t op,
		       const struct iovec *iov, int n)
{
	void *reply = NULL;
	uint32_t rlen;
	uint64_t id;
	int err = clf_peer_send(p, op, iov, n, &id);

	if (!err)
		err = clf_peer_recv(p, op, id, &reply, &rlen);
	free(reply);
	return err;
}

/*
 * Lock fl of iod i, connected and bound to this client (LOCK_RELEASE of
 * lock 0, which no lock has, tells the iod the connection is ours).
 */
static int fl_lock(struct xiod *x)
{
	uint8_t body[32];
	struct iovec iov;
	size_t len;
	int err = clf_peer_lock(&x->fl);

	if (err || x->fl_bound == x->fl.generation)
		return err;
	err = enc_release(0, body, sizeof(body), &len);
	iov = (struct iovec){ body, len };
	if (!err)
		err = call_locked(&x->fl, CLF_PROTO_OP_LOCK_RELEASE, &iov, 1);
	if (err) {
		clf_peer_unlock(&x->fl);
		return err;
	}
	x->fl_bound = x->fl.generation;
	return 0;
}

/*
 * ---- requests to several iods at once (under xc.mu) ---------------
 *
 * A flush or a set of read misses sends every request first, on the fl
 * connection of each iod involved, and reads the replies after: the
 * iods work in parallel and the whole costs one round trip, as a
 * lockless access does (io_small.c).  Before, each piece or subfile
 * went to one iod after the other.  Requests to one iod are pipelined
 * on its fl (replies come in order); a flush's requests are large and
 * its replies small, a read's the other way round, so sending all
 * first cannot block on a full socket for long.
 */

/* A request sent whose reply is still to come. */
struct pend {
	uint32_t iod;
	uint16_t op;
	uint64_t id;
	int mark;		/* flush: index in marks[]; else -1 */
	uint8_t *dst;		/* read: where its bytes go */
	int64_t len;
	struct iovec *iov;	/* SUB_READV: where they go, owned */
	int iovcnt;
};

/* What a flush sent, to mark clean once its replies are in. */
struct mark {
	struct obj *o;
	int64_t lo, hi;
	bool failed;
};

struct batch {
	struct pend *q;
	int n, cap;
	struct mark *marks;
	int nmarks, capmarks;
	bool *locked;		/* per iod: its fl locked by this batch */
};

static int batch_init(struct batch *b)
{
	*b = (struct batch){ 0 };
	b->locked = calloc(xc.cl->cfg->niods, sizeof(*b->locked));
	return b->locked ? 0 : clf_fail(ENOMEM, "clf: out of memory");
}

/* Lock o's iod's fl for the batch and give it o's file's capability:
 * for every object before anything is sent (the capability may take a
 * round trip of its own on that connection).  A batch of several iods
 * locks their fl in ascending order (callers prepare in that order),
 * as every batch does: xc.mu already keeps two batches apart, but one
 * order for all keeps the fl locks out of any cycle, should anything
 * take them without it (ThreadSanitizer reported the inversion). */
static int batch_prepare(struct batch *b, struct obj *o)
{
	struct xiod *x = &xc.iods[o->iod];

	if (!b->locked[o->iod]) {
		int err = fl_lock(x);

		if (err)
			return err;
		b->locked[o->iod] = true;
	}
	return clf_file_cap_ensure(o->f, &x->fl);
}

static int batch_push(struct batch *b, struct pend p)
{
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 16;
		struct pend *nq = realloc(b->q, cap * sizeof(*nq));

		if (!nq)
			return clf_fail(ENOMEM, "clf: out of memory");
		b->q = nq;
		b->cap = cap;
	}
	b->q[b->n++] = p;
	return 0;
}

static int batch_mark(struct batch *b, struct obj *o, int64_t lo, int64_t hi)
{
	if (b->nmarks == b->capmarks) {
		int cap = b->capmarks ? 2 * b->capmarks : 8;
		struct mark *nm = realloc(b->marks, cap * sizeof(*nm));

		if (!nm)
			return clf_fail(ENOMEM, "clf: out of memory");
		b->marks = nm;
		b->capmarks = cap;
	}
	b->marks[b->nmarks++] = (struct mark){ o, lo, hi, false };
	return b->nmarks - 1;
}

/* Send LOCK_RELEASE of id to iod on the batch (its fl locked). */
static int batch_release(struct batch *b, uint32_t iod, uint64_t id)
{
	uint8_t body[32];
	struct iovec iov;
	size_t len;
	uint64_t rid;
	int err = enc_release(id, body, sizeof(body), &len);

	if (!err && !b->locked[iod]) {
		err = fl_lock(&xc.iods[iod]);
		b->locked[iod] = !err;
	}
	iov = (struct iovec){ body, len };
	if (!err)
		err = clf_peer_send(&xc.iods[iod].fl, CLF_PROTO_OP_LOCK_RELEASE,
				    &iov, 1, &rid);
	if (!err)
		err = batch_push(b, (struct pend){ iod, CLF_PROTO_OP_LOCK_RELEASE,
						   rid, -1, NULL, 0, NULL, 0 });
	return err;
}

/* Send a read of [off, off + len) of o into dst (zeros past the end). */
static int batch_read(struct batch *b, struct obj *o, int64_t off,
		      int64_t len, uint8_t *dst)
{
	struct clf_proto_sub_read_req req = { .file = o->file,
					      .subfile = o->sub,
					      .offset = off,
					      .length = (uint32_t)len };
	uint8_t head[64];
	struct wire_writer w = { head, sizeof(head), 0 };
	struct iovec iov;
	uint64_t id;
	int err = clf_proto_sub_read_req_encode(&w, &req);

	iov = (struct iovec){ head, w.pos };
	if (!err)
		err = clf_peer_send(&xc.iods[o->iod].fl, CLF_PROTO_OP_SUB_READ,
				    &iov, 1, &id);
	if (!err)
		err = batch_push(b, (struct pend){ o->iod, CLF_PROTO_OP_SUB_READ,
						   id, -1, dst, len, NULL, 0 });
	return err;
}

/*
 * Read ranges [off[k], off[k] + len[k]) of subfiles sub[k] of o's file
 * on o's iod into dst[k], k < n, in one SUB_READV (each range whole,
 * zeros past a subfile's end; n <= CLF_PROTO_SUB_VEC_MAX, CLF_PROTO_
 * SUB_VEC_DATA_MAX bytes at most in all; o prepared).
 */
static int batch_readv(struct batch *b, const struct obj *o,
		       const uint32_t *sub, const int64_t *off,
		       const int64_t *len, uint8_t *const *dst, int n)
{
	struct clf_proto_sub_vec_req *m = calloc(1, sizeof(*m));
	uint8_t *head = malloc(16 + 16 * CLF_PROTO_SUB_VEC_MAX);
	struct iovec *iov = calloc(n, sizeof(*iov));
	struct wire_writer w = { head, 16 + 16 * CLF_PROTO_SUB_VEC_MAX, 0 };
	struct iovec h;
	int64_t bytes = 0;
	uint64_t id;
	int err = 0;

	if (!m || !head || !iov) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto out;
	}
	m->file = o->file;
	m->n = (uint32_t)n;
	for (int k = 0; k < n; k++) {
		m->subfile[k] = sub[k];
		m->offset[k] = off[k];
		m->length[k] = (uint32_t)len[k];
		iov[k] = (struct iovec){ dst[k], (size_t)len[k] };
		bytes += len[k];
	}
	err = clf_proto_sub_readv_req_encode(&w, m);
	h = (struct iovec){ head, w.pos };
	if (!err)
		err = clf_peer_send(&xc.iods[o->iod].fl, CLF_PROTO_OP_SUB_READV,
				    &h, 1, &id);
	if (!err)
		err = batch_push(b, (struct pend){ o->iod,
						   CLF_PROTO_OP_SUB_READV, id,
						   -1, NULL, bytes, iov, n });
	if (!err)
		iov = NULL;
out:
	free(m);
	free(head);
	free(iov);
	return err;
}

/* Send o's dirty extents that touch [lo, hi), in vectors of what one
 * request takes (o prepared). */
static int batch_flush(struct batch *b, struct obj *o, int64_t lo, int64_t hi)
{
	struct xiod *x = &xc.iods[o->iod];
	struct clf_proto_sub_vec_req *m;
	struct iovec iov[1 + CLF_CONN_MAX_IOV];
	uint8_t *head;
	int err = 0, i = 0, mark;
	int64_t part = 0;	/* of extent i already sent */

	if (!o->dirty_since)
		return 0;
	mark = batch_mark(b, o, lo, hi);
	if (mark < 0)
		return mark;
	m = malloc(sizeof(*m));
	head = malloc(16 + 16 * CLF_PROTO_SUB_VEC_MAX);
	if (!m || !head) {
		free(m);
		free(head);
		return clf_fail(ENOMEM, "clf: out of memory");
	}
	while (!err) {
		struct wire_writer w = { head, 16 + 16 * CLF_PROTO_SUB_VEC_MAX, 0 };
		int64_t bytes = 0;
		int niov = 1;
		uint64_t id;

		m->file = o->file;
		m->n = 0;
		for (; i < o->n && m->n < CLF_PROTO_SUB_VEC_MAX &&
		       niov < CLF_CONN_MAX_IOV - 2 &&
		       bytes < CLF_PROTO_SUB_VEC_DATA_MAX; ) {
			struct ext *e = &o->ext[i];
			int64_t k;

			if (!e->dirty || !ext_in(e, lo, hi)) {
				i++;
				continue;
			}
			k = min64(e->len - part,
				  CLF_PROTO_SUB_VEC_DATA_MAX - bytes);
			m->subfile[m->n] = o->sub;
			m->offset[m->n] = e->off + part;
			m->length[m->n] = (uint32_t)k;
			m->n++;
			iov[niov++] = (struct iovec){ e->data + part, k };
			bytes += k;
			part += k;
			if (part == e->len) {
				part = 0;
				i++;
			}
		}
		if (!m->n)
			break;
		m->data = (struct clf_proto_bytes){ head, (uint32_t)bytes };
		err = clf_proto_sub_writev_req_encode_head(&w, m);
		iov[0] = (struct iovec){ head, w.pos };
		if (!err)
			err = clf_peer_send(&x->fl, CLF_PROTO_OP_SUB_WRITEV, iov,
					    niov, &id);
		if (!err)
			err = batch_push(b, (struct pend){
				o->iod, CLF_PROTO_OP_SUB_WRITEV, id, mark,
				NULL, 0, NULL, 0 });
	}
	if (err)
		b->marks[mark].failed = true;
	free(m);
	free(head);
	return err;
}

/* Mark clean what o sent of [lo, hi). */
static void mark_clean(struct obj *o, int64_t lo, int64_t hi)
{
	bool dirty = false;

	for (int i = 0; i < o->n; i++) {
		if (ext_in(&o->ext[i], lo, hi))
			o->ext[i].dirty = false;
		dirty |= o->ext[i].dirty;
	}
	if (!dirty)
		o->dirty_since = 0;
}

/*
 * Every reply in (err: the first error of the sending, which stops
 * nothing already sent from being read), the connections unlocked, the
 * flushes that went through marked clean.  Returns the first error.
 */
static int batch_finish(struct batch *b, int err)
{
	for (int k = 0; k < b->n; k++) {
		struct pend *p = &b->q[k];
		struct clf_peer *peer = &xc.iods[p->iod].fl;
		void *reply = NULL;
		uint32_t rlen, got = 0;
		int e;

		if (p->op == CLF_PROTO_OP_SUB_READV) {
			e = clf_peer_recv_datav(peer, p->op, p->id, p->iov,
						p->iovcnt, (uint32_t)p->len);
			free(p->iov);
		} else if (p->op == CLF_PROTO_OP_SUB_READ) {
			e = clf_peer_recv_data_upto(peer, p->op, p->id, p->dst,
						    (uint32_t)p->len, &got);
			if (!e)
				memset(p->dst + got, 0, p->len - got);
		} else {
			e = clf_peer_recv(peer, p->op, p->id, &reply, &rlen);
			free(reply);
			/* Evicted already: the iod dropped it, which is
			 * what a release wanted. */
			if (e == -ENOENT && p->op == CLF_PROTO_OP_LOCK_RELEASE)
				e = 0;
		}
		if (e && p->mark >= 0)
			b->marks[p->mark].failed = true;
		if (!err)
			err = e;
	}
	for (uint32_t i = 0; i < xc.cl->cfg->niods; i++)
		if (b->locked[i])
			clf_peer_unlock(&xc.iods[i].fl);
	for (int k = 0; k < b->nmarks; k++)
		if (!b->marks[k].failed)
			mark_clean(b->marks[k].o, b->marks[k].lo, b->marks[k].hi);
	free(b->q);
	free(b->marks);
	free(b->locked);
	return err;
}

/* Send o's dirty extents that touch [lo, hi) and wait for them. */
static int flush_range(struct obj *o, int64_t lo, int64_t hi)
{
	struct batch b;
	int err;

	if (!o->dirty_since)
		return 0;
	err = batch_init(&b);
	if (err)
		return err;
	err = batch_prepare(&b, o);
	if (!err)
		err = batch_flush(&b, o, lo, hi);
	return batch_finish(&b, err);
}

static int flush_obj(struct obj *o)
{
	return flush_range(o, 0, INT64_MAX);
}

/* Send the dirty bytes of every object that keep() chooses, all iods at
 * once, and wait for them. */
static int flush_some(bool (*keep)(const struct obj *o, const void *arg),
		      const void *arg)
{
	struct batch b;
	int err = batch_init(&b);

	if (err)
		return err;
	for (uint32_t i = 0; i < xc.cl->cfg->niods && !err; i++)
		for (struct obj *o = xc.objs; o && !err; o = o->next)
			if (o->iod == i && o->dirty_since && keep(o, arg))
				err = batch_prepare(&b, o);
	for (struct obj *o = xc.objs; o && !err; o = o->next)
		if (o->dirty_since && keep(o, arg))
			err = batch_flush(&b, o, 0, INT64_MAX);
	return batch_finish(&b, err);
}

static bool any_obj(const struct obj *o, const void *arg)
{
	(void)o;
	(void)arg;
	return true;
}

static bool obj_of(const struct obj *o, const void *f)
{
	return o->f == f;
}

/* Flush every object's kept bytes and drop them (the bound). */
static int flush_drop_all(void)
{
	int err = flush_some(any_obj, NULL);

	/* What did not go out stays, dirty, for the next try. */
	for (struct obj *o = xc.objs; o; o = o->next)
		if (!o->dirty_since)
			drop_all(o);
	return err;
}

/* ---- revocations (the cache's thread) --------------------------- */

static struct obj *find_obj(uint32_t iod, uint64_t file, uint32_t sub)
{
	for (struct obj *o = xc.objs; o; o = o->next)
		if (o->iod == iod && o->file == file && o->sub == sub)
			return o;
	return NULL;
}

static void unlink_lock(struct obj *o, uint64_t id)
{
	for (struct xlock **pp = &o->locks; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			struct xlock *l = *pp;

			*pp = l->next;
			free(l);
			return;
		}
	}
}

static void on_revoke(uint32_t iod, const struct clf_proto_revoke *m)
{
	struct xlock *held = NULL;
	int64_t glo = 0, ghi = 0;
	struct batch b;
	struct obj *o;
	int err = 0;

	pthread_mutex_lock(&xc.mu);
	o = find_obj(iod, m->file, m->subfile);
	if (o) {
		for (struct xlock *l = o->locks; l; l = l->next)
			if (l->id == m->id)
				held = l;
		if (!held)
			o = NULL;
	}
	if (o) {
		/* What goes: the REVOKE's range, from an offset up to the
		 * lock's end when the iod shrinks the lock (it keeps the part
		 * below granted to us), else the whole lock.  A range inside
		 * (never asked today) takes the whole lock. */
		glo = max64(held->lo, m->lo);
		ghi = min64(held->hi, m->hi);
		if (glo >= ghi || (glo > held->lo && ghi < held->hi)) {
			glo = held->lo;
			ghi = held->hi;
		}
	}
	if (!o) {
		/* Granted to a thread that has not kept it yet: it keeps
		 * nothing under it, and will not. */
		xc.gone[xc.ngone++ % 64] = m->id;
	}
	/* The flush and the release in one round trip: the iod serves a
	 * connection's requests in order, so the release comes after the
	 * bytes are in the subfile. */
	err = batch_init(&b);
	if (!err) {
		if (o)
			err = batch_prepare(&b, o);
		if (!err && o)
			err = batch_flush(&b, o, glo, ghi);
		if (!err)
			err = batch_release(&b, iod, m->id);
		err = batch_finish(&b, err);
	}
	if (o) {
		/* Only this lock's range goes: the bytes kept under the
		 * subfile's other locks stay, and are served without a
		 * round trip (issue 15). */
		drop_range(o, glo, ghi);
		if (o->served >= THRASH_SERVED) {
			o->thrash = 0;
		} else if (++o->thrash >= THRASH_REVOKES) {
			o->thrash = 0;
			o->lockless = LOCKLESS_ACCESSES;
		}
		o->served = 0;
		if (glo > held->lo)
			held->hi = glo;
		else if (ghi < held->hi)
			held->lo = ghi;
		else
			unlink_lock(o, m->id);
	}
	pthread_mutex_unlock(&xc.mu);
	if (err)
		clf_log(CLF_LOG_WARN,
			"clf: cache: answering a revocation of iod %u failed: %s",
			iod, clf_error_reason());
}

/* The callback connection of iod i broke: the iod dropped our locks. */
static void on_lost(uint32_t i)
{
	pthread_mutex_lock(&xc.mu);
	clf_conn_close(xc.iods[i].cb);
	xc.iods[i].cb = NULL;
	xc.iods[i].off = true;
	for (struct obj *o = xc.objs; o; o = o->next) {
		if (o->iod != i)
			continue;
		/* Late, but better there than lost. */
		(void)flush_obj(o);
		drop_all(o);
		while (o->locks)
			unlink_lock(o, o->locks->id);
	}
	pthread_mutex_unlock(&xc.mu);
}

static void read_callback(uint32_t i)
{
	struct clf_proto_header h;
	struct clf_proto_revoke m;
	struct wire_reader r;
	void *body = NULL;
	int err = clf_conn_recv(xc.iods[i].cb, &h, &body);

	if (!err && h.opcode == CLF_PROTO_OP_REVOKE) {
		r = (struct wire_reader){ .buf = body, .len = h.payload_len };
		err = clf_proto_revoke_decode(&r, &m);
		if (!err)
			on_revoke(i, &m);
	}
	free(body);
	if (err)
		on_lost(i);
}

static bool obj_old(const struct obj *o, const void *now)
{
	return *(const int64_t *)now - o->dirty_since >= xc.flush_after_ms;
}

static void flush_old(void)
{
	int64_t now = clf_now_ms();

	pthread_mutex_lock(&xc.mu);
	(void)flush_some(obj_old, &now);
	pthread_mutex_unlock(&xc.mu);
}

static void *thread_main(void *arg)
{
	uint32_t niods = xc.cl->cfg->niods;
	struct pollfd *pf = calloc(niods + 1, sizeof(*pf));
	uint32_t *which = calloc(niods + 1, sizeof(*which));

	if (!pf || !which)
		goto out;
	for (;;) {
		int n = 1;

		pf[0] = (struct pollfd){ .fd = xc.wake[0], .events = POLLIN };
		pthread_mutex_lock(&xc.mu);
		if (xc.stop) {
			pthread_mutex_unlock(&xc.mu);
			break;
		}
		for (uint32_t i = 0; i < niods; i++) {
			if (!xc.iods[i].cb)
				continue;
			which[n] = i;
			pf[n++] = (struct pollfd){ .fd = clf_conn_fd(xc.iods[i].cb),
						   .events = POLLIN };
		}
		pthread_mutex_unlock(&xc.mu);
		if (poll(pf, n, (int)min64(xc.flush_after_ms / 2, 1000)) < 0)
			continue;
		if (pf[0].revents) {
			char c[16];

			(void)!read(xc.wake[0], c, sizeof(c));
		}
		for (int k = 1; k < n; k++)
			if (pf[k].revents)
				read_callback(which[k]);
		flush_old();
	}
out:
	free(pf);
	free(which);
	return NULL;
}

/* ---- setting up an iod ------------------------------------------ */

static void peer_setup(struct clf_peer *p, uint32_t i)
{
	struct clf_client *cl = xc.cl;

	pthread_mutex_init(&p->lock, NULL);
	p->d = &cl->cfg->iods[i];
	p->src = (struct clf_error_source){ .kind = CLF_ERROR_IOD, .index = i };
	snprintf(p->src.addr, sizeof(p->src.addr), "%s", p->d->addr);
	p->connecting = &cl->iod_connecting[i];
}

static int start(struct clf_client *cl)
{
	const char *t = getenv("CLF_TEST_CACHE_FLUSH_MS");

	if (xc.iods)
		return 0;
	xc.flush_after_ms = t && atoll(t) > 0 ? atoll(t) : FLUSH_AFTER_MS;
	pthread_once(&atfork_once, register_atfork);
	xc.iods = calloc(cl->cfg->niods, sizeof(*xc.iods));
	if (!xc.iods)
		return clf_fail(ENOMEM, "clf: out of memory");
	xc.cl = cl;
	while (!xc.client)
		if (getrandom(&xc.client, sizeof(xc.client), 0) !=
		    sizeof(xc.client))
			return clf_fail(errno, "clf: cache: no random client id");
	for (uint32_t i = 0; i < cl->cfg->niods; i++) {
		peer_setup(&xc.iods[i].lk, i);
		peer_setup(&xc.iods[i].fl, i);
	}
	if (pipe2(xc.wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return clf_fail(errno, "clf: cache: cannot make a pipe");
	if (pthread_create(&xc.thr, NULL, thread_main, NULL))
		return clf_fail(EAGAIN, "clf: cache: cannot start its thread");
	xc.thread = true;
	return 0;
}

/* The callback connection of iod i; x->off when the iod cannot lock. */
static int setup_iod(uint32_t i)
{
	struct xiod *x = &xc.iods[i];
	struct clf_peer cbp = { 0 };
	struct clf_proto_lock_callback_req m = { xc.client };
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct iovec iov;
	int err;

	peer_setup(&cbp, i);
	err = clf_peer_lock(&cbp);
	if (err)
		goto out;
	if (clf_conn_minor(cbp.conn) < LOCK_PROTO_MINOR) {
		x->off = true;
		clf_peer_unlock(&cbp);
		goto out;
	}
	err = clf_proto_lock_callback_req_encode(&w, &m);
	iov = (struct iovec){ body, w.pos };
	if (!err)
		err = call_locked(&cbp, CLF_PROTO_OP_LOCK_CALLBACK, &iov, 1);
	if (!err) {
		pthread_mutex_lock(&xc.mu);
		x->cb = cbp.conn;
		x->up = true;
		pthread_mutex_unlock(&xc.mu);
		cbp.conn = NULL;
		(void)!write(xc.wake[1], "", 1);
	}
	clf_peer_unlock(&cbp);
out:
	clf_conn_close(cbp.conn);
	pthread_mutex_destroy(&cbp.lock);
	return err;
}

/* ---- the accesses ----------------------------------------------- */

static struct obj *get_obj(struct clf_file *f, uint32_t iod, uint32_t sub)
{
	struct obj *o = find_obj(iod, f->ino, sub);

	if (o)
		return o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	*o = (struct obj){ .f = f, .file = f->ino, .iod = iod, .sub = sub,
			   .next = xc.objs };
	xc.objs = o;
	return o;
}

/*
 * Does l hold every byte of [lo, hi), file bytes [foff, foff + hi - lo)
 * (foff < 0: not known, then no lock strided in the file does)?
 */
static bool lock_holds(const struct xlock *l, int64_t lo, int64_t hi,
		       int64_t foff)
{
	if (lo < l->lo || hi > l->hi)
		return false;
	if (l->in_file)
		return foff >= 0 &&
		       floor_mod(foff - l->phase, l->stride) + (hi - lo) <=
			       l->block;
	return !l->stride || (lo - l->lo) % l->stride + (hi - lo) <= l->block;
}

static bool covered(const struct obj *o, bool write,
		    const struct clf_xc_piece *p)
{
	for (const struct xlock *l = o->locks; l; l = l->next)
		if ((!write || l->mode == CLF_PROTO_LOCK_PW) &&
		    lock_holds(l, p->soff, p->soff + p->len, p->foff))
			return true;
	return false;
}

/*
 * An access of pieces p[0..n) of f: the stride history h of its writes
 * or reads in the file (the pieces of one access are one run of the
 * file, or the history starts again).
 */
static void note_file_run(struct clf_xc_runs *h, const struct clf_xc_piece *p,
			  int n)
{
	int64_t lo = INT64_MAX, hi = -1, sum = 0, d;

	for (int k = 0; k < n; k++) {
		if (p[k].foff < 0) {
			lo = -1;
			break;
		}
		lo = min64(lo, p[k].foff);
		hi = max64(hi, p[k].foff + p[k].len);
		sum += p[k].len;
	}
	if (lo < 0 || hi - lo != sum) {
		h->len = 0;
		h->streak = 0;
		return;
	}
	d = lo - h->off;
	if (h->len && sum == h->len && d == h->stride) {
		if (h->streak < INT32_MAX)
			h->streak++;
	} else {
		h->stride = d;
		h->streak = 0;
	}
	h->off = lo;
	h->len = sum;
}

/* Does h show accesses of one length at a stride, the last noted one
 * of them? */
static bool runs_strided(const struct clf_xc_runs *h)
{
	return h->streak >= STRIDE_STREAK && h->len && h->stride > h->len &&
	       h->stride <= STRIDE_MAX;
}

/* A write of p: the stride history of its subfile (STRIDE_STREAK). */
static void note_write(struct obj *o, const struct clf_xc_piece *p)
{
	int64_t d = p->soff - o->w_off;

	if (o->w_len && p->len == o->w_len && d == o->w_stride) {
		if (o->w_streak < INT32_MAX)
			o->w_streak++;
	} else {
		o->w_stride = d;
		o->w_streak = 0;
	}
	o->w_off = p->soff;
	o->w_len = p->len;
}

/* A LOCK_ENQUEUE sent on an iod's lk, its grant still to come. */
struct ask {
	const struct clf_xc_piece *p;
	int64_t stride, block;	/* 0: a plain lock */
	bool in_file;		/* strided in the file, from phase */
	int64_t phase;
	uint64_t id;
	bool sent;
};

/*
 * The ask for a write of p: strided where o's writes go at a stride,
 * else strided in the file where f's do (the access p is part of being
 * f's last write).
 */
static struct ask ask_for(const struct clf_file *f, const struct obj *o,
			  const struct clf_xc_piece *p, bool write)
{
	struct ask a = { .p = p };
	int64_t at = f->xc_w.off, len = f->xc_w.len, stride = f->xc_w.stride;

	if (!write)
		return a;
	if (o->w_streak >= STRIDE_STREAK && o->w_off == p->soff &&
	    o->w_len == p->len && o->w_stride > p->len &&
	    o->w_stride <= STRIDE_MAX) {
		a.stride = o->w_stride;
		a.block = p->len;
	} else if (f->xc_w.streak >= STRIDE_STREAK && len && stride > len &&
		   stride <= STRIDE_MAX && p->foff >= at &&
		   p->foff + p->len <= at + len) {
		a.stride = stride;
		a.block = len;
		a.in_file = true;
		a.phase = at % stride;
	}
	return a;
}

static int enqueue_send(struct clf_file *f, struct ask *a, bool write)
{
	const struct clf_xc_piece *p = a->p;
	struct xiod *x = &xc.iods[p->iod];
	struct clf_proto_lock_enqueue_req m = {
		.client = xc.client, .file = f->ino, .subfile = p->sub,
		.mode = write ? CLF_PROTO_LOCK_PW : CLF_PROTO_LOCK_PR,
		.lo = p->soff, .hi = p->soff + p->len };
	uint8_t body[80];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct iovec iov;
	int err = clf_peer_lock(&x->lk);

	if (err)
		return err;
	if (a->stride && !a->in_file &&
	    clf_conn_minor(x->lk.conn) >= STRIDED_PROTO_MINOR) {
		m.has_stride = true;
		m.stride = a->stride;
		m.block = a->block;
	}
	if (a->in_file &&
	    clf_conn_minor(x->lk.conn) >= FILE_STRIDED_PROTO_MINOR) {
		m.has_stride = m.in_file = true;
		m.stride = a->stride;
		m.block = a->block;
		m.phase = a->phase;
	}
	err = clf_proto_lock_enqueue_req_encode(&w, &m);
	if (err) {
		clf_peer_unlock(&x->lk);
		return err;
	}
	iov = (struct iovec){ body, w.pos };
	/* The iod asks the right the lock caches for (iod_cap.c). */
	err = clf_file_cap_ensure(f, &x->lk);
	if (!err)
		err = clf_peer_send(&x->lk, CLF_PROTO_OP_LOCK_ENQUEUE, &iov, 1,
				    &a->id);
	if (err)
		clf_peer_unlock(&x->lk);
	a->sent = !err;
	return err;
}

/* The grant of a; kept unless revoked first. */
static int enqueue_recv(struct clf_file *f, struct ask *a, bool write)
{
	const struct clf_xc_piece *p = a->p;
	struct xiod *x = &xc.iods[p->iod];
	struct clf_proto_lock_grant g;
	struct wire_reader r;
	struct xlock *l;
	struct obj *o;
	void *reply = NULL;
	uint32_t rlen;
	bool gone = false;
	int err = clf_peer_recv(&x->lk, CLF_PROTO_OP_LOCK_ENQUEUE, a->id,
				&reply, &rlen);

	clf_peer_unlock(&x->lk);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_lock_grant_decode(&r, &g);
	free(reply);
	if (err)
		return err;
	l = malloc(sizeof(*l));
	pthread_mutex_lock(&xc.mu);
	for (unsigned k = 0; k < 64 && k < xc.ngone; k++)
		gone |= xc.gone[k] == g.id;
	o = gone || !l ? NULL : get_obj(f, p->iod, p->sub);
	if (o) {
		*l = (struct xlock){ g.id,
				     write ? CLF_PROTO_LOCK_PW : CLF_PROTO_LOCK_PR,
				     g.lo, g.hi,
				     g.has_stride ? g.stride : 0,
				     g.has_stride ? g.block : 0,
				     g.has_stride && g.in_file,
				     g.has_stride && g.in_file ?
					     g.phase % g.stride : 0,
				     o->locks };
		o->locks = l;
		l = NULL;
	}
	pthread_mutex_unlock(&xc.mu);
	free(l);
	return o || gone ? 0 : clf_fail(ENOMEM, "clf: out of memory");
}

/*
 * Ask for the locks of asks[0..n) (one per iod), every iod at once:
 * a lock request may wait at its iod for another client's release, and
 * the iods revoke in parallel.
 */
static int enqueue_all(struct clf_file *f, struct ask *asks, int n,
		       bool write)
{
	int err = 0;

	for (int i = 0; i < n && !err; i++)
		err = enqueue_send(f, &asks[i], write);
	for (int i = 0; i < n; i++) {
		int e = asks[i].sent ? enqueue_recv(f, &asks[i], write) : 0;

		if (!err)
			err = e;
	}
	return err;
}

/*
 * The read-ahead of a miss at [off, end) of o: READ_AHEAD around it, or,
 * when it follows the last read-ahead of o (a reader going forward),
 * twice the last one, up to RA_MAX and to an eighth of the bound per
 * iod, so that a streaming reader asks each iod for a large block now
 * and then (one round trip per iod for many accesses: IOR's reads of
 * 47008 bytes) and a random one pays for 64 KiB only.  Within the lock
 * that covers it.
 */
static void read_window(struct obj *o, int64_t off, int64_t end,
			int64_t foff, int64_t *lo, int64_t *hi)
{
	int64_t max = min64(RA_MAX, cache_bound() / 8 / xc.cl->cfg->niods);
	int64_t ra = READ_AHEAD;

	if (o->ra_end && off >= o->ra_end - o->ra && off <= o->ra_end + o->ra)
		ra = max64(READ_AHEAD, min64(2 * o->ra, max));
	*lo = off / READ_AHEAD * READ_AHEAD;
	*hi = *lo + ra;
	while (*hi < end)
		*hi += READ_AHEAD;
	for (struct xlock *l = o->locks; l; l = l->next) {
		if (lock_holds(l, off, end, foff)) {
			int64_t blo = l->lo, bhi = l->hi;

			if (l->in_file) {
				/* which bytes around are ours: not known */
				blo = off;
				bhi = end;
			} else if (l->stride) {
				/* strided: only the block holding the piece */
				blo = off - (off - l->lo) % l->stride;
				bhi = blo + l->block;
			}
			*lo = max64(*lo, blo);
			*hi = min64(*hi, bhi);
			break;
		}
	}
	o->ra = ra;
	o->ra_end = *hi;
}

/* A read that missed: one window of one object, read into tmp. */
struct miss {
	struct obj *o;
	int64_t lo, hi;
	uint8_t *tmp;		/* from buf_get */
	int64_t cap;
};

/*
 * A strided reader's miss (RA_PIECES): windows of exactly the pieces of
 * its next blocks, those a lock of ours covers and the extents do not
 * hold, appended to miss[*nmiss..max).  Under xc.mu.
 */
static int read_ahead_own(struct clf_file *f, clf_xc_map_fn map,
			  struct miss *miss, int *nmiss, int max)
{
	const struct clf_xc_runs *h = &f->xc_r;
	int64_t budget = min64(RA_MAX, cache_bound() / 8);
	struct clf_xc_piece q[RA_PIECES];

	for (int64_t at = h->off + h->stride;
	     budget >= h->len && *nmiss < max; at += h->stride) {
		int nq = map(f, at, h->len, q,
			     (int)min64(RA_PIECES, max - *nmiss));

		if (nq <= 0)
			return 0;	/* none, or too many: no more ahead */
		budget -= h->len;
		for (int i = 0; i < nq; i++) {
			struct obj *o = find_obj(q[i].iod, f->ino, q[i].sub);
			struct miss *m = &miss[*nmiss];

			if (!o || !covered(o, false, &q[i]) ||
			    ext_has(o, q[i].soff, q[i].len))
				continue;
			*m = (struct miss){ .o = o, .lo = q[i].soff,
					    .hi = q[i].soff + q[i].len };
			m->tmp = buf_get(q[i].len, &m->cap);
			if (!m->tmp)
				return clf_fail(ENOMEM, "clf: out of memory");
			(*nmiss)++;
		}
	}
	return 0;
}

/*
 * The windows miss[0..n) of a strided reader, exact pieces: one
 * SUB_READV per iod (or per CLF_PROTO_SUB_VEC_MAX of them, or per
 * CLF_PROTO_SUB_VEC_DATA_MAX bytes) instead of a request each.
 */
static int read_own(struct batch *b, struct miss *miss, int n)
{
	uint32_t sub[RA_PIECES + SMALL_PIECES_MAX];
	int64_t off[RA_PIECES + SMALL_PIECES_MAX];
	int64_t len[RA_PIECES + SMALL_PIECES_MAX];
	uint8_t *dst[RA_PIECES + SMALL_PIECES_MAX];
	int err = 0;

	for (uint32_t d = 0; d < xc.cl->cfg->niods && !err; d++) {
		const struct obj *o = NULL;
		int64_t bytes = 0;
		int k = 0;

		for (int i = 0; i < n && !err; i++) {
			int64_t l = miss[i].hi - miss[i].lo;

			if (miss[i].o->iod != d)
				continue;
			if (k && (k == CLF_PROTO_SUB_VEC_MAX ||
				  bytes + l > CLF_PROTO_SUB_VEC_DATA_MAX)) {
				err = batch_readv(b, o, sub, off, len, dst, k);
				k = 0;
				bytes = 0;
			}
			o = miss[i].o;
			sub[k] = o->sub;
			off[k] = miss[i].lo;
			len[k] = l;
			dst[k++] = miss[i].tmp;
			bytes += l;
		}
		if (k && !err)
			err = batch_readv(b, o, sub, off, len, dst, k);
	}
	return err;
}

/* Under xc.mu: are all of the pieces kept (a read that would not miss)? */
static bool all_kept(struct clf_file *f, const struct clf_xc_piece *p, int n)
{
	for (int k = 0; k < n; k++) {
		struct obj *o = find_obj(p[k].iod, f->ino, p[k].sub);

		if (!o || !ext_get(o, p[k].soff, p[k].len, p[k].buf))
			return false;
	}
	return true;
}

/*
 * Under xc.mu, every piece under a lock: serve them.  A read's misses
 * are read all at once, every iod in parallel (struct batch).
 */
static int serve(struct clf_file *f, const struct clf_xc_piece *p, int n,
		 bool write, clf_xc_map_fn map)
{
	struct miss miss[n + RA_PIECES];
	int where[n];		/* a missed piece's window, else -1 */
	int nmiss = 0, err = 0;
	bool own = !write && map && runs_strided(&f->xc_r);
	struct batch b;

	for (int k = 0; k < n && !err; k++) {
		struct obj *o = find_obj(p[k].iod, f->ino, p[k].sub);
		int64_t end = p[k].soff + p[k].len;

		where[k] = -1;
		if (write) {
			err = ext_put(o, p[k].soff, p[k].len, p[k].buf, true);
			if (!err && !o->dirty_since)
				o->dirty_since = clf_now_ms();
			continue;
		}
		if (ext_get(o, p[k].soff, p[k].len, p[k].buf))
			continue;
		for (int i = 0; i < nmiss && where[k] < 0; i++)
			if (miss[i].o == o && miss[i].lo <= p[k].soff &&
			    end <= miss[i].hi)
				where[k] = i;
		if (where[k] >= 0)
			continue;
		miss[nmiss] = (struct miss){ .o = o, .lo = p[k].soff,
					     .hi = end };
		if (!own)
			read_window(o, p[k].soff, end, p[k].foff,
				    &miss[nmiss].lo, &miss[nmiss].hi);
		miss[nmiss].tmp = buf_get(miss[nmiss].hi - miss[nmiss].lo,
					  &miss[nmiss].cap);
		if (!miss[nmiss].tmp)
			err = clf_fail(ENOMEM, "clf: out of memory");
		where[k] = nmiss++;
	}
	if (!err && own && nmiss)
		err = read_ahead_own(f, map, miss, &nmiss, n + RA_PIECES);
	if (!err && nmiss && !(err = batch_init(&b))) {
		for (uint32_t d = 0; d < xc.cl->cfg->niods && !err; d++)
			for (int i = 0; i < nmiss && !err; i++)
				if (miss[i].o->iod == d)
					err = batch_prepare(&b, miss[i].o);
		if (own)
			err = read_own(&b, miss, nmiss);
		else
			for (int i = 0; i < nmiss && !err; i++)
				err = batch_read(&b, miss[i].o, miss[i].lo,
						 miss[i].hi - miss[i].lo,
						 miss[i].tmp);
		err = batch_finish(&b, err);
	}
	bool overlaid[nmiss > 0 ? nmiss : 1];

	/* Our own written bytes not sent yet win over the iod's; such a
	 * window is not kept (the dirty extents are). */
	for (int i = 0; i < nmiss && !err; i++)
		overlaid[i] = ext_overlay_dirty(miss[i].o, miss[i].lo,
						miss[i].hi - miss[i].lo,
						miss[i].tmp);
	for (int k = 0; k < n && !err; k++)
		if (where[k] >= 0)
			memcpy(p[k].buf, miss[where[k]].tmp +
			       (p[k].soff - miss[where[k]].lo), p[k].len);
	/* Then the windows' extents take their buffers over. */
	for (int i = 0; i < nmiss; i++) {
		struct miss *m = &miss[i];

		if (!err && !overlaid[i]) {
			err = ext_adopt(m->o, m->lo, m->hi - m->lo, m->tmp,
					m->cap);
			continue;
		}
		buf_put(m->tmp, m->cap);
	}
	if (!err && xc.bytes > cache_bound())
		err = flush_drop_all();
	return err;
}

int clf_xcache_io(struct clf_file *f, const struct clf_xc_piece *p, int n,
		  bool write, clf_xc_map_fn map, bool *done)
{
	struct clf_client *cl = clf_client_instance;
	int err = 0;

	int64_t bytes = 0;
	bool big_read;

	*done = false;
	for (int k = 0; k < n; k++)
		bytes += p[k].len;
	if (!clf_xcache_wanted(f) || n == 0 || bytes > ACCESS_MAX)
		return 0;
	big_read = !write && bytes > READ_BIG;
	forget_after_fork();
	pthread_mutex_lock(&xc.setup);
	err = start(cl);
	for (int k = 0; k < n && !err; k++) {
		struct xiod *x = &xc.iods[p[k].iod];

		if (x->off) {
			pthread_mutex_unlock(&xc.setup);
			return 0;
		}
		if (!x->up)
			err = setup_iod(p[k].iod);
		if (x->off) {
			pthread_mutex_unlock(&xc.setup);
			return err;
		}
	}
	pthread_mutex_unlock(&xc.setup);
	if (err)
		return err;
	/* A lock revoked between its grant and its use is asked again;
	 * the pieces not covered ask their iods at once, one per iod (a
	 * grant expands: one lock covers a process's pieces of a subfile);
	 * after rounds enough for every piece, the access goes lockless. */
	for (int round = 0; round < n + 2; round++) {
		struct ask asks[n];
		struct obj *objs[n];	/* p[k]'s, found once per round */
		int nask = 0;

		pthread_mutex_lock(&xc.mu);
		if (round == 0 && !big_read)
			note_file_run(write ? &f->xc_w : &f->xc_r, p, n);
		for (int k = 0; k < n; k++) {
			struct obj *o = objs[k] = get_obj(f, p[k].iod, p[k].sub);
			bool dup = false;

			if (!o) {
				pthread_mutex_unlock(&xc.mu);
				return clf_fail(ENOMEM, "clf: out of memory");
			}
			if (o->lockless && round == 0) {
				/* Contended: lockless (THRASH_*). */
				o->lockless--;
				pthread_mutex_unlock(&xc.mu);
				return 0;
			}
			if (write && round == 0 && !big_read)
				note_write(o, &p[k]);
			if (covered(o, write, &p[k]))
				continue;
			for (int i = 0; i < nask; i++)
				dup |= asks[i].p->iod == p[k].iod;
			if (!dup)
				asks[nask++] = ask_for(f, o, &p[k], write);
		}
		if (big_read) {
			/* Served when kept whole (copied by all_kept), else
			 * lockless, asking no lock (READ_BIG). */
			*done = !nask && all_kept(f, p, n);
			pthread_mutex_unlock(&xc.mu);
			return 0;
		}
		if (!nask) {
			for (int k = 0; k < n; k++)
				objs[k]->served++;
			err = serve(f, p, n, write, map);
			pthread_mutex_unlock(&xc.mu);
			*done = !err;
			return err;
		}
		pthread_mutex_unlock(&xc.mu);
		err = enqueue_all(f, asks, nask, write);
		if (err)
			return err;
	}
	return 0;
}

/* ---- sync, close, finalize -------------------------------------- */

int clf_xcache_flush_file(struct clf_file *f)
{
	int err = 0;

	forget_after_fork();

	if (!xc.iods)
		return 0;
	pthread_mutex_lock(&xc.mu);
	err = flush_some(obj_of, f);
	pthread_mutex_unlock(&xc.mu);
	return err;
}

int clf_xcache_close_file(struct clf_file *f)
{
	struct batch b;
	int err = 0;

	forget_after_fork();

	if (!xc.iods)
		return 0;
	pthread_mutex_lock(&xc.mu);
	/* Every iod's kept bytes at once, then every lock's release at
	 * once: a close costs two round trips, whatever the iods. */
	err = flush_some(obj_of, f);
	if (!batch_init(&b)) {
		int e = 0;

		for (uint32_t i = 0; i < xc.cl->cfg->niods && !e; i++)
			for (struct obj *o = xc.objs; o && !e; o = o->next)
				for (struct xlock *l = o->f == f && o->iod == i ?
						       o->locks : NULL;
				     l && !e; l = l->next)
					e = batch_release(&b, o->iod, l->id);
		e = batch_finish(&b, e);
		if (!err)
			err = e;
	}
	for (struct obj **pp = &xc.objs; *pp;) {
		struct obj *o = *pp;

		if (o->f != f) {
			pp = &o->next;
			continue;
		}
		drop_all(o);
		while (o->locks)
			unlink_lock(o, o->locks->id);
		*pp = o->next;
		free(o->ext);
		free(o);
	}
	pthread_mutex_unlock(&xc.mu);
	return err;
}

int clf_xcache_choose(struct clf_file *f, bool on)
{
	int err = 0;

	if (!on)
		err = clf_xcache_close_file(f);
	__atomic_store_n(&f->cache, on ? CLF_XCACHE_ON : CLF_XCACHE_OFF,
			 __ATOMIC_RELAXED);
	return err;
}

void clf_xcache_shutdown(void)
{
	forget_after_fork();
	if (!xc.iods)
		return;
	pthread_mutex_lock(&xc.mu);
	xc.stop = true;
	pthread_mutex_unlock(&xc.mu);
	if (xc.thread) {
		(void)!write(xc.wake[1], "", 1);
		pthread_join(xc.thr, NULL);
	}
	for (uint32_t i = 0; i < xc.cl->cfg->niods; i++) {
		struct xiod *x = &xc.iods[i];

		clf_conn_close(x->cb);
		clf_conn_close(x->lk.conn);
		clf_conn_close(x->fl.conn);
		pthread_mutex_destroy(&x->lk.lock);
		pthread_mutex_destroy(&x->fl.lock);
	}
	pthread_mutex_lock(&xc.mu);
	pool_drain();
	pthread_mutex_unlock(&xc.mu);
	free(xc.iods);
	xc.iods = NULL;
	close(xc.wake[0]);
	close(xc.wake[1]);
	xc.wake[0] = xc.wake[1] = -1;
	xc.thread = false;
	xc.stop = false;
	xc.ngone = 0;
}
