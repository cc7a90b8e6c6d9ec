// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_gc.c -- draining the queue of pending subfile removals (see
 * mds_gc.h for when and why).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "mds.h"
#include "mds_data.h"
#include "mds_gc.h"

#define GC_BATCH 1024
#define GC_FLUSH_MS 1000	/* most a confirmed removal stays queued */
/* Removals handed over by requests and not yet tried, at most: past it
 * they are left to a pass over the durable queue, which holds them too. */
#define GC_TODO_MAX 65536

/* What metad knows of one iod's removals; gc->lock. */
struct gc_iod {
	bool failing;		/* its last removal failed */
	unsigned tries;		/* failed tries in a row */
	int64_t delay_ms;	/* the current backoff */
	int64_t next_ms;	/* failing: clf_now_ms() before which no
				   removal is tried on it */
};

struct mds_gc {
	struct mds_store *st;	/* borrowed */
	struct mds_iods *io;	/* borrowed */
	uint32_t niods_cap;	/* iods there is room for (MDS_MAX_IODS):
				   more join while metad runs (known()) */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* kick or stop; CLOCK_MONOTONIC */
	bool stop;		/* lock */
	bool kick;		/* lock: drain now */
	bool owe_done_log;	/* thread only: say when the queue empties */
	bool warned_unknown;	/* thread only */
	/* Removals the iods confirmed after a commit, to take off the
	 * queue in one transaction by flush_ms (lock): a second synchronous
	 * commit per unlink would double its cost, and an entry replayed
	 * after a crash only repeats a removal the iod confirms again. */
	struct mds_gc_entry *done;
	uint32_t ndone, cap;
	int64_t flush_ms;
	/* Removals just committed, for the thread to try (lock): an unlink
	 * replies once its removal is queued durably, without a round trip
	 * to every iod of the file. */
	struct mds_gc_entry *todo;
	uint32_t ntodo, todo_cap;
	struct gc_iod *iods;	/* cap, owned; lock */
};

/* The iods removals can go to now: those of the configuration, which
 * grows when an iod joins (mds_iods_join). */
static uint32_t known(const struct mds_gc *gc)
{
	uint32_t n = mds_iods_count(gc->io);

	return n < gc->niods_cap ? n : gc->niods_cap;
}

static uint64_t queued(struct mds_gc *gc)
{
	uint64_t n = 0;

	return mds_gc_count(gc->st, &n) ? UINT64_MAX : n;
}

/* Whether a removal may be tried on iod now. */
static bool iod_ready(struct mds_gc *gc, uint32_t iod, int64_t now,
		      int64_t *next)
{
	bool ok;

	pthread_mutex_lock(&gc->lock);
	ok = !gc->iods[iod].failing || now >= gc->iods[iod].next_ms;
	if (!ok && gc->iods[iod].next_ms < *next)
		*next = gc->iods[iod].next_ms;
	pthread_mutex_unlock(&gc->lock);
	return ok;
}

/*
 * Record the outcome of a removal on iod (err: 0 or its error, message in
 * CLF_Last_error()); log only when the iod's state changes.
 */
static void note(struct mds_gc *gc, uint32_t iod, int err)
{
	struct gc_iod *g = &gc->iods[iod];
	unsigned tries;
	bool was;

	pthread_mutex_lock(&gc->lock);
	was = g->failing;
	tries = g->tries;
	if (err) {
		g->delay_ms = !was ? MDS_GC_RETRY_MIN_MS :
			      g->delay_ms >= MDS_GC_RETRY_MAX_MS / 2 ?
			      MDS_GC_RETRY_MAX_MS : 2 * g->delay_ms;
		g->next_ms = clf_now_ms() + g->delay_ms;
		g->failing = true;
		g->tries++;
		/* The thread may be asleep with nothing to wait for. */
		if (!was) {
			gc->kick = true;
			pthread_cond_signal(&gc->cond);
		}
	} else {
		g->failing = false;
		g->tries = 0;
	}
	pthread_mutex_unlock(&gc->lock);
	if (err && !was)
		mds_log("cannot remove subfiles on iod %u (%s): %s; their removal stays queued (%llu pending in all) and is retried every %d to %d s until the iod confirms",
			iod, mds_iods_addr(gc->io, iod), CLF_Last_error(),
			(unsigned long long)queued(gc),
			MDS_GC_RETRY_MIN_MS / 1000, MDS_GC_RETRY_MAX_MS / 1000);
	else if (!err && was)
		mds_log("iod %u (%s) removes subfiles again, after %u failed tries: draining its pending removals",
			iod, mds_iods_addr(gc->io, iod), tries);
}

/* Take the entries done off the queue; on failure they are retried. */
static void done(struct mds_gc *gc, const struct mds_gc_entry *e, uint32_t n)
{
	if (mds_gc_done(gc->st, e, n))
		mds_log("%s (the removals will be repeated)", CLF_Last_error());
}

/* Leave n entries done to the thread, which takes them off in batches. */
static void defer_done(struct mds_gc *gc, const struct mds_gc_entry *e,
		       uint32_t n)
{
	bool direct = false;

	if (n == 0)
		return;
	pthread_mutex_lock(&gc->lock);
	if (gc->ndone + n > gc->cap) {
		uint32_t cap = gc->cap ? 2 * gc->cap : GC_BATCH;
		struct mds_gc_entry *p;

		while (cap < gc->ndone + n)
			cap *= 2;
		p = realloc(gc->done, cap * sizeof(*p));
		if (p) {
			gc->done = p;
			gc->cap = cap;
		}
		direct = !p;
	}
	if (!direct) {
		if (!gc->ndone)
			gc->flush_ms = clf_now_ms() + GC_FLUSH_MS;
		memcpy(gc->done + gc->ndone, e, n * sizeof(*e));
		gc->ndone += n;
		pthread_cond_signal(&gc->cond);
	}
	pthread_mutex_unlock(&gc->lock);
	if (direct)
		done(gc, e, n);
}

/* Hand n removals to the thread (lock held); false: no room. */
static bool todo_add(struct mds_gc *gc, const struct mds_gc_entry *e,
		     uint32_t n)
{
	if (gc->ntodo + n > gc->todo_cap) {
		uint32_t cap = gc->todo_cap ? 2 * gc->todo_cap : GC_BATCH;
		struct mds_gc_entry *p;

		while (cap < gc->ntodo + n)
			cap *= 2;
		if (cap > GC_TODO_MAX)
			return false;
		p = realloc(gc->todo, cap * sizeof(*p));
		if (!p)
			return false;
		gc->todo = p;
		gc->todo_cap = cap;
	}
	memcpy(gc->todo + gc->ntodo, e, n * sizeof(*e));
	gc->ntodo += n;
	return true;
}

void mds_gc_removed(struct mds_gc *gc, uint64_t ino,
		    const struct mds_layout *layout)
{
	struct mds_gc_entry ents[64];
	uint32_t n = 0;
	bool all = true;

	/* The distinct iods of the layout, up to 64: the others are left
	 * to a pass over the queue. */
	if (layout->disp > 0)
		ents[n++] = (struct mds_gc_entry){ ino, layout->head_iod };
	for (uint32_t j = 0; j < layout->nsubfiles; j++) {
		uint32_t iod = layout->subfiles[j].iod, k;

		for (k = 0; k < n && ents[k].iod != iod; k++)
			;
		if (k < n)
			continue;
		if (n == 64) {
			all = false;
			break;
		}
		ents[n++] = (struct mds_gc_entry){ ino, iod };
	}
	pthread_mutex_lock(&gc->lock);
	if (!todo_add(gc, ents, n) || !all)
		gc->kick = true;
	pthread_cond_signal(&gc->cond);
	pthread_mutex_unlock(&gc->lock);
}

static int cmp_iod(const void *a, const void *b)
{
	const struct mds_gc_entry *x = a, *y = b;

	if (x->iod != y->iod)
		return x->iod < y->iod ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/*
 * Removals e[0..n) of one iod (iod < known(gc)), at most
 * CLF_PROTO_SUB_BATCH_MAX, in one REMOVE_MANY: those confirmed are
 * appended to ok (*nok); returns how many were not done.
 */
static uint32_t remove_run(struct mds_gc *gc, const struct mds_gc_entry *e,
			   uint32_t n, struct mds_gc_entry *ok, uint32_t *nok)
{
	uint64_t inos[CLF_PROTO_SUB_BATCH_MAX];
	uint32_t status[CLF_PROTO_SUB_BATCH_MAX], left = 0;
	int err, first = 0;

	if (n == 0 || n > CLF_PROTO_SUB_BATCH_MAX)
		return n;
	for (uint32_t i = 0; i < n; i++)
		inos[i] = e[i].ino;
	err = mds_data_remove_many(gc->io, e[0].iod, inos, n, status);
	if (err) {
		note(gc, e[0].iod, err);
		return n;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (status[i]) {
			if (!first)
				first = -(int)status[i];
			left++;
			continue;
		}
		ok[(*nok)++] = e[i];
	}
	if (first)
		clf_fail(-first, "iod %u could not remove the subfiles of %u of %u removed files: %s",
			 e[0].iod, left, n, strerror(-first));
	note(gc, e[0].iod, first);
	return left;
}

/*
 * Try the removals e[0..n) (sorted here by iod), one REMOVE_MANY per
 * iod and CLF_PROTO_SUB_BATCH_MAX files: the confirmed go to ok (room
 * for n), *nok of them.  Returns how many were not done; *unknown counts
 * those on iods the configuration lacks, *next is lowered to the time
 * an iod not ready is due.
 */
static uint64_t remove_batch(struct mds_gc *gc, struct mds_gc_entry *e,
			     uint32_t n, struct mds_gc_entry *ok,
			     uint32_t *nok, uint64_t *unknown, int64_t *next)
{
	uint64_t left = 0;
	uint32_t i = 0;

	qsort(e, n, sizeof(*e), cmp_iod);
	while (i < n) {
		uint32_t iod = e[i].iod, k = i;
		bool stop;

		while (k < n && e[k].iod == iod &&
		       k - i < CLF_PROTO_SUB_BATCH_MAX)
			k++;
		pthread_mutex_lock(&gc->lock);
		stop = gc->stop;
		pthread_mutex_unlock(&gc->lock);
		if (stop)
			return left + (n - i);
		if (iod >= known(gc))
			*unknown += k - i;
		else if (!iod_ready(gc, iod, clf_now_ms(), next))
			left += k - i;
		else {
			uint32_t l = remove_run(gc, e + i, k - i, ok, nok);

			if (l) {
				iod_ready(gc, iod, clf_now_ms(), next);
				left += l;
			}
		}
		i = k;
	}
	return left;
}

/*
 * Try the removals requests handed over (todo, n, caller frees): those
 * confirmed leave the queue with the next flush; the others stay queued
 * for a pass.  *next: lowered to the time an iod not ready is due.
 */
static void try_todo(struct mds_gc *gc, struct mds_gc_entry *todo,
		     uint32_t n, int64_t *next)
{
	struct mds_gc_entry *ok = malloc((n ? n : 1) * sizeof(*ok));
	uint64_t unknown = 0;
	uint32_t nok = 0;

	if (!ok)
		return;		/* still queued: the next pass does them */
	remove_batch(gc, todo, n, ok, &nok, &unknown, next);
	if (unknown)
		mds_log("subfiles of %llu removed files are on iods the configuration lacks: their removal stays queued",
			(unsigned long long)unknown);
	defer_done(gc, ok, nok);
	free(ok);
}

/*
 * One pass over the queue: try every entry whose iod is due.  Returns the
 * clf_now_ms() time of the next due iod, INT64_MAX when nothing is left.
 */
static int64_t drain(struct mds_gc *gc)
{
	struct mds_gc_entry ents[GC_BATCH], ok[GC_BATCH];
	uint64_t ino = 0, unknown = 0, left = 0;
	int64_t next = INT64_MAX;
	uint32_t iod = 0;
	int n;

	for (;;) {
		uint32_t nok = 0;
		bool stop;

		n = mds_gc_list(gc->st, ino, iod, ents, GC_BATCH);
		if (n <= 0)
			break;
		/* Where the next page starts, before the sort. */
		ino = ents[n - 1].ino;
		iod = ents[n - 1].iod;
		left += remove_batch(gc, ents, (uint32_t)n, ok, &nok, &unknown,
				     &next);
		done(gc, ok, nok);
		pthread_mutex_lock(&gc->lock);
		stop = gc->stop;
		pthread_mutex_unlock(&gc->lock);
		if (stop)
			break;
	}
	if (n < 0) {
		mds_log("%s (retried in %d s)", CLF_Last_error(),
			MDS_GC_RETRY_MAX_MS / 1000);
		return clf_now_ms() + MDS_GC_RETRY_MAX_MS;
	}
	if (unknown && !gc->warned_unknown) {
		mds_log("%llu pending subfile removals are on iods the configuration lacks: kept until it has them again",
			(unsigned long long)unknown);
		gc->warned_unknown = true;
	}
	if (left)
		gc->owe_done_log = true;
	else if (gc->owe_done_log) {
		mds_log("pending subfile removals: all done (%llu left in the queue)",
			(unsigned long long)queued(gc));
		gc->owe_done_log = false;
	}
	return next;
}

/* Take the buffered done entries (lock held): *n of them, caller frees. */
static struct mds_gc_entry *take_done(struct mds_gc *gc, uint32_t *n)
{
	struct mds_gc_entry *d = gc->done;

	*n = gc->ndone;
	gc->done = NULL;
	gc->ndone = gc->cap = 0;
	return d;
}

static void flush_done(struct mds_gc *gc, struct mds_gc_entry *d, uint32_t n)
{
	done(gc, d, n);
	free(d);
}

static void *gc_main(void *arg)
{
	struct mds_gc *gc = arg;
	int64_t next = INT64_MAX;
	struct mds_gc_entry *d;
	uint64_t n = queued(gc);
	uint32_t nd;

	if (n) {
		mds_log("%llu subfile removals pending from before: draining them",
			(unsigned long long)n);
		gc->owe_done_log = true;
	}
	pthread_mutex_lock(&gc->lock);
	gc->kick = true;
	while (!gc->stop) {
		bool pass = gc->kick;
		struct mds_gc_entry *todo = gc->todo;
		uint32_t ntodo = gc->ntodo;

		gc->kick = false;
		gc->todo = NULL;
		gc->ntodo = gc->todo_cap = 0;
		/* Before a pass, so that it does not repeat them. */
		d = pass || gc->ndone >= GC_BATCH ||
		    (gc->ndone && clf_now_ms() >= gc->flush_ms) ?
		    take_done(gc, &nd) : NULL;
		pthread_mutex_unlock(&gc->lock);
		if (d)
			flush_done(gc, d, nd);
		/* A pass tries everything queued, these included. */
		if (pass)
			next = drain(gc);
		else if (ntodo)
			try_todo(gc, todo, ntodo, &next);
		free(todo);
		pthread_mutex_lock(&gc->lock);
		while (!gc->stop && !gc->kick) {
			int64_t until = next;
			struct timespec ts;

			if (gc->ndone >= GC_BATCH || gc->ntodo)
				break;
			if (gc->ndone && gc->flush_ms < until)
				until = gc->flush_ms;
			if (until == INT64_MAX) {
				pthread_cond_wait(&gc->cond, &gc->lock);
				continue;
			}
			if (clf_now_ms() >= until)
				break;
			/* clf_now_ms() is CLOCK_MONOTONIC, like cond. */
			ts.tv_sec = until / 1000;
			ts.tv_nsec = until % 1000 * 1000000;
			pthread_cond_timedwait(&gc->cond, &gc->lock, &ts);
		}
		if (clf_now_ms() >= next)
			gc->kick = true;
	}
	d = take_done(gc, &nd);
	/* Not tried: they stay queued for the next start. */
	free(gc->todo);
	gc->todo = NULL;
	gc->ntodo = 0;
	pthread_mutex_unlock(&gc->lock);
	flush_done(gc, d, nd);
	return NULL;
}

/* An iod connected again: try its removals now, not at its backoff. */
static void iod_back(void *arg, uint32_t iod)
{
	struct mds_gc *gc = arg;

	pthread_mutex_lock(&gc->lock);
	if (iod < known(gc) && gc->iods[iod].failing) {
		gc->iods[iod].next_ms = 0;
		gc->kick = true;
		pthread_cond_signal(&gc->cond);
	}
	pthread_mutex_unlock(&gc->lock);
}

int mds_gc_start(struct mds_store *st, struct mds_iods *io,
		 struct mds_gc **out)
{
	struct mds_gc *gc = calloc(1, sizeof(*gc));
	pthread_condattr_t ca;
	int rc;

	if (!gc)
		return clf_fail(ENOMEM, "metad: out of memory for the removal queue");
	gc->st = st;
	gc->io = io;
	gc->niods_cap = MDS_MAX_IODS;
	gc->iods = calloc(gc->niods_cap, sizeof(*gc->iods));
	if (!gc->iods) {
		free(gc);
		return clf_fail(ENOMEM, "metad: out of memory for the removal queue");
	}
	pthread_mutex_init(&gc->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&gc->cond, &ca);
	pthread_condattr_destroy(&ca);
	mds_iods_set_on_connect(io, iod_back, gc);
	rc = pthread_create(&gc->thread, NULL, gc_main, gc);
	if (rc) {
		mds_iods_set_on_connect(io, NULL, NULL);
		pthread_cond_destroy(&gc->cond);
		pthread_mutex_destroy(&gc->lock);
		free(gc->iods);
		free(gc);
		return clf_fail(rc, "metad: cannot start the removal thread: %s",
				strerror(rc));
	}
	*out = gc;
	return 0;
}

void mds_gc_stop(struct mds_gc *gc)
{
	if (!gc)
		return;
	pthread_mutex_lock(&gc->lock);
	gc->stop = true;
	pthread_cond_signal(&gc->cond);
	pthread_mutex_unlock(&gc->lock);
	pthread_join(gc->thread, NULL);
	mds_iods_set_on_connect(gc->io, NULL, NULL);
	pthread_cond_destroy(&gc->cond);
	pthread_mutex_destroy(&gc->lock);
	free(gc->iods);
	free(gc);
}
