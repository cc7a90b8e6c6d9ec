// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_lock.c -- the extent lock manager of an iod (rules in the header).
 *
 * Every request that must wait -- a lock request or a lockless access --
 * runs the same loop: scan for the other clients' locks that conflict
 * with it; mark the granted ones revoking and ask their holders (without
 * the mutex); evict the holders whose lease ran out; sleep until a lock
 * goes or the nearest lease ends; scan again.  Once nothing conflicts, a
 * lock request is granted under the same mutex hold, so no conflicting
 * grant can slip in between.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "arith.h"
#include "clock.h"
#include "daemon.h"
#include "iod_lock.h"
#include "iod_lock_shape.h"

int iod_lockmgr_init(struct iod_lockmgr *m, const struct iod_lock_ops *ops,
		     int64_t lease_ms)
{
	pthread_condattr_t ca;
	int err;

	if (lease_ms <= 0 || !ops || !ops->revoke)
		return -EINVAL;
	err = pthread_mutex_init(&m->mutex, NULL);
	if (err)
		return -err;
	err = pthread_condattr_init(&ca);
	if (err)
		goto undo_mutex;
	err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		goto undo_mutex;
	m->locks = NULL;
	atomic_init(&m->count, 0);
	m->next_id = 1;
	m->evictions = 0;
	m->lease_ms = lease_ms;
	m->shrink = 0;
	m->ops = *ops;
	return 0;

undo_mutex:
	pthread_mutex_destroy(&m->mutex);
	return -err;
}

void iod_lockmgr_destroy(struct iod_lockmgr *m)
{
	struct iod_lock *l, *next;

	for (l = m->locks; l; l = next) {
		next = l->next;
		free(l);
	}
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->mutex);
}

static bool conflicts(const struct iod_lock *l, uint64_t client,
		      uint64_t file, uint32_t sub, int mode)
{
	return l->client != client && l->file == file &&
	       (l->sub == sub || sub == IOD_LOCK_ALL_SUBFILES) &&
	       (mode == IOD_LOCK_PW || l->mode == IOD_LOCK_PW);
}

static struct iod_shape shape_of(const struct iod_lock *l)
{
	return (struct iod_shape){ l->lo, l->hi, l->stride, l->block,
				   l->in_file, l->phase };
}

/* Do l's bytes meet the request's? */
static bool overlaps(const struct iod_lock *l, const struct iod_shape *req)
{
	struct iod_shape s = shape_of(l);

	return iod_shapes_meet(&s, req);
}

/* Unlink and free every lock of client; mutex held.  Returns the count. */
static int drop_locked(struct iod_lockmgr *m, uint64_t client)
{
	struct iod_lock **pp = &m->locks, *l;
	int n = 0;

	while ((l = *pp)) {
		if (l->client == client) {
			*pp = l->next;
			free(l);
			n++;
		} else {
			pp = &l->next;
		}
	}
	if (n) {
		atomic_fetch_sub(&m->count, n);
		pthread_cond_broadcast(&m->cond);
	}
	return n;
}

/* Evict client: its locks go, and the daemon hears of it.  Mutex held,
 * and still held on return (dropped around ops.evicted). */
static void evict_locked(struct iod_lockmgr *m, uint64_t client)
{
	drop_locked(m, client);
	m->evictions++;
	if (m->ops.evicted) {
		pthread_mutex_unlock(&m->mutex);
		m->ops.evicted(m->ops.arg, client);
		pthread_mutex_lock(&m->mutex);
	}
}

static void wait_until(struct iod_lockmgr *m, int64_t deadline_ms)
{
	struct timespec ts = {
		.tv_sec = deadline_ms / 1000,
		.tv_nsec = (deadline_ms % 1000) * 1000000,
	};

	/* The holders' flushes and releases need workers (daemon.h). */
	clf_daemon_wait_begin();
	pthread_cond_timedwait(&m->cond, &m->mutex, &ts);
	clf_daemon_wait_end();
}

/*
 * Wait until no lock of another client conflicting with (client, mode)
 * overlaps [lo, hi) of the subfile, revoking and evicting as needed.
 * Mutex held on entry and on return.  Returns whether anything had to go
 * (the range is contended).
 */
static bool clear_conflicts(struct iod_lockmgr *m, uint64_t client,
			    uint64_t file, uint32_t sub, int mode,
			    const struct iod_shape *req)
{
	int64_t lo = req->lo;

	bool contended = false;

	for (;;) {
		int64_t now = clf_now_ms(), deadline = INT64_MAX;
		struct iod_lock *l, *ask = NULL, *late = NULL;

		for (l = m->locks; l; l = l->next) {
			if (!conflicts(l, client, file, sub, mode) ||
			    !overlaps(l, req))
				continue;
			if (!l->revoking) {
				ask = l;
				break;
			}
			if (now >= l->deadline_ms) {
				late = l;
				break;
			}
			if (l->deadline_ms < deadline)
				deadline = l->deadline_ms;
		}
		if (ask || late || deadline != INT64_MAX)
			contended = true;
		if (ask) {
			uint64_t c = ask->client, id = ask->id, f = ask->file;
			uint32_t s = ask->sub;
			int64_t alo = ask->lo, ahi = ask->hi;
			int err;

			/* Only from the access up, when shrinking: the
			 * holder keeps what lies below. */
			if (m->shrink) {
				int64_t g = lo / IOD_LOCK_SHRINK_ALIGN *
					    IOD_LOCK_SHRINK_ALIGN;

				if (g > alo)
					alo = g;
			}
			ask->give_lo = alo;
			ask->revoking = 1;
			ask->deadline_ms = now + m->lease_ms;
			m->revocations++;
			pthread_mutex_unlock(&m->mutex);
			err = m->ops.revoke(m->ops.arg, c, id, f, s, alo, ahi);
			pthread_mutex_lock(&m->mutex);
			if (err)
				evict_locked(m, c);
			continue;
		}
		if (late) {
			evict_locked(m, late->client);
			continue;
		}
		if (deadline == INT64_MAX)
			return contended;
		wait_until(m, deadline);
	}
}

/*
 * The extent to grant for [lo, hi): the largest one that no conflicting
 * lock of another client overlaps (up to the nearest such lock on each
 * side), but where the range was contended only the request rounded out
 * to IOD_LOCK_CONTENDED_ALIGN within those bounds.  Else two writers of
 * disjoint regions would take the whole subfile from each other at every
 * access; this way the second gets its block, and the first's next grant
 * stops where that block starts.  A strided request expands over the
 * locks whose blocks interleave with its own, and its lo moves down by
 * whole strides only.  Mutex held, and no such lock's bytes meet req's.
 */
static void expand(const struct iod_lockmgr *m, uint64_t client,
		   uint64_t file, uint32_t sub, int mode, bool contended,
		   const struct iod_shape *req, int64_t *lo, int64_t *hi)
{
	int64_t elo = 0, ehi = IOD_LOCK_EOF;

	for (const struct iod_lock *l = m->locks; l; l = l->next) {
		struct iod_shape s = shape_of(l);

		if (!conflicts(l, client, file, sub, mode) ||
		    iod_shapes_interleave(&s, req))
			continue;
		if (l->hi <= *lo) {
			elo = max64(elo, l->hi);
		} else if (l->lo >= *hi) {
			ehi = min64(ehi, l->lo);
		} else {
			/* Its extent crosses ours, its bytes do not meet
			 * ours there (strided): no further than asked. */
			elo = max64(elo, *lo);
			ehi = min64(ehi, *hi);
		}
	}
	if (contended) {
		int64_t a = IOD_LOCK_CONTENDED_ALIGN;
		int64_t rlo = *lo / a * a;
		int64_t rhi = *hi > IOD_LOCK_EOF - a ? IOD_LOCK_EOF :
			      (*hi + a - 1) / a * a;

		if (rlo > elo)
			elo = rlo;
		if (rhi < ehi)
			ehi = rhi;
	}
	if (req->stride && !req->in_file)
		elo = *lo - (*lo - elo) / req->stride * req->stride;
	*lo = elo;
	*hi = ehi;
}

int iod_lock_enqueue(struct iod_lockmgr *m, uint64_t client, uint64_t file,
		     uint32_t sub, int mode, int64_t lo, int64_t hi,
		     struct iod_lock_grant *out)
{
	return iod_lock_enqueue_strided(m, client, file, sub, mode, lo, hi,
					0, 0, out);
}

int iod_lock_enqueue_strided(struct iod_lockmgr *m, uint64_t client,
			     uint64_t file, uint32_t sub, int mode,
			     int64_t lo, int64_t hi, int64_t stride,
			     int64_t block, struct iod_lock_grant *out)
{
	struct iod_shape req = { lo, hi, stride, block, false, 0 };

	return iod_lock_enqueue_shape(m, client, file, sub, mode, &req, out);
}

int iod_lock_enqueue_shape(struct iod_lockmgr *m, uint64_t client,
			   uint64_t file, uint32_t sub, int mode,
			   const struct iod_shape *shape,
			   struct iod_lock_grant *out)
{
	struct iod_shape req = *shape;
	int64_t lo = req.lo, hi = req.hi, stride = req.stride;
	int64_t block = req.block;
	struct iod_lock *l;
	bool contended;

	if (!client || sub == IOD_LOCK_ALL_SUBFILES ||
	    (mode != IOD_LOCK_PR && mode != IOD_LOCK_PW) ||
	    lo < 0 || lo >= hi || stride < 0 ||
	    (stride && (block <= 0 || block >= stride)) ||
	    (req.in_file && (!stride || req.phase < 0)))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	pthread_mutex_lock(&m->mutex);
	if (atomic_load(&m->count) >= IOD_LOCK_MAX) {
		pthread_mutex_unlock(&m->mutex);
		free(l);
		return -ENOLCK;
	}
	contended = clear_conflicts(m, client, file, sub, mode, &req);
	expand(m, client, file, sub, mode, contended, &req, &lo, &hi);
	l->id = m->next_id++;
	l->client = client;
	l->file = file;
	l->sub = sub;
	l->mode = mode;
	l->lo = lo;
	l->hi = hi;
	l->stride = stride;
	l->block = stride ? block : 0;
	l->in_file = req.in_file;
	l->phase = req.in_file ? req.phase % stride : 0;
	l->next = m->locks;
	m->locks = l;
	atomic_fetch_add(&m->count, 1);
	out->id = l->id;
	out->lo = lo;
	out->hi = hi;
	pthread_mutex_unlock(&m->mutex);
	return 0;
}

int iod_lock_release(struct iod_lockmgr *m, uint64_t client, uint64_t id)
{
	struct iod_lock **pp, *l;
	int ret = -ENOENT;

	pthread_mutex_lock(&m->mutex);
	for (pp = &m->locks; (l = *pp); pp = &l->next) {
		if (l->id == id && l->client == client && l->revoking &&
		    l->give_lo > l->lo) {
			/* Shrunk: the part below what was asked back
			 * stays granted. */
			l->hi = l->give_lo;
			l->revoking = 0;
			pthread_cond_broadcast(&m->cond);
			ret = 0;
			break;
		}
		if (l->id == id && l->client == client) {
			*pp = l->next;
			free(l);
			atomic_fetch_sub(&m->count, 1);
			pthread_cond_broadcast(&m->cond);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&m->mutex);
	return ret;
}

void iod_lock_revoke_range(struct iod_lockmgr *m, uint64_t client,
			   uint64_t file, uint32_t sub, int write,
			   int64_t lo, int64_t hi)
{
	struct iod_shape req = { lo, hi, 0, 0, false, 0 };

	/* No lock anywhere: nothing can hold bytes back (see the header). */
	if (!m || atomic_load(&m->count) == 0 || lo >= hi)
		return;
	pthread_mutex_lock(&m->mutex);
	clear_conflicts(m, client, file, sub,
			write ? IOD_LOCK_PW : IOD_LOCK_PR, &req);
	pthread_mutex_unlock(&m->mutex);
}

int iod_lock_drop_client(struct iod_lockmgr *m, uint64_t client)
{
	int n;

	pthread_mutex_lock(&m->mutex);
	n = drop_locked(m, client);
	pthread_mutex_unlock(&m->mutex);
	return n;
}
