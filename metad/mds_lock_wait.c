// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_lock_wait.c -- SETLK with its bounded wait, the wait records that
 * deadlock detection follows, and the releases (an owner's locks on an
 * inode, a closed connection's everything).
 *
 * A sleeping request waits on its inode's condition variable, which is
 * broadcast whenever a lock of the inode goes or shrinks; it then looks
 * again.  metad serves a connection's requests one at a time, so a
 * connection has at most one sleeper, and the sleep is bounded by
 * MDS_LOCK_WAIT_CAP_MS: the client, not metad, decides to go on waiting
 * (libclf asks again until granted).
 *
 * Why wait records outlive the sleep: several owners may share one
 * connection (the lock owners of a FUSE mount).  While one of them
 * sleeps the others cannot even send their requests, so two owners of
 * one mount that wait for each other are never asleep at the same time;
 * keeping the record of a wait that just timed out lets the other one's
 * request see the cycle.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "daemon.h"
#include "error.h"
#include "mds_lock_i.h"
#include "transport.h"

static struct lock_wait *wait_find(struct mds_locks *t, struct mds_lock_key key)
{
	for (struct lock_wait *w = t->waits; w; w = w->next)
		if (lock_key_eq(w->lk.key, key))
			return w;
	return NULL;
}

static void wait_remove(struct mds_locks *t, struct lock_wait *w)
{
	for (struct lock_wait **pp = &t->waits; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			free(w);
			t->nwaits--;
			return;
		}
	}
}

/* Forget timed-out waits whose client did not come back in time. */
static void waits_expire(struct mds_locks *t, int64_t now)
{
	struct lock_wait **pp = &t->waits;

	while (*pp) {
		struct lock_wait *w = *pp;

		if (w->sleeping || w->expires_ms > now) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		free(w);
		t->nwaits--;
	}
}

static int wait_add(struct mds_locks *t, uint64_t ino,
		    const struct mds_lock *lk, struct lock_wait **out)
{
	struct lock_wait *w;

	if (t->nlocks + t->nwaits >= MDS_LOCKS_MAX)
		return clf_fail(ENOLCK,
				"metad: the lock table is full (%u locks, %u waits)",
				t->nlocks, t->nwaits);
	w = calloc(1, sizeof(*w));
	if (!w)
		return clf_fail(ENOMEM, "metad: out of memory for a lock wait");
	w->ino = ino;
	w->lk = *lk;
	w->next = t->waits;
	t->waits = w;
	t->nwaits++;
	*out = w;
	return 0;
}

/*
 * Would `me` waiting for `holder` close a cycle?  Follow the holder's
 * wait to the holder of the first lock in its way, and so on.  Each key
 * waits at most once, so a chain longer than the records is a cycle that
 * does not involve me (which cannot form, but bounds the walk anyway).
 */
static bool closes_cycle(struct mds_locks *t, struct mds_lock_key me,
			 struct mds_lock_key holder)
{
	for (unsigned steps = 0; steps <= t->nwaits; steps++) {
		const struct mds_lock *c;
		struct lock_inode *li;
		struct lock_wait *w;

		if (lock_key_eq(holder, me))
			return true;
		w = wait_find(t, holder);
		if (!w)
			return false;
		li = lock_inode_get(t, w->ino, false);
		c = li ? lock_conflict(li, &w->lk) : NULL;
		if (!c)
			return false;	/* it is about to be granted */
		holder = c->key;
	}
	return false;
}

static void deadline_ts(int64_t deadline_ms, struct timespec *ts)
{
	ts->tv_sec = deadline_ms / 1000;
	ts->tv_nsec = (deadline_ms % 1000) * 1000000;
}

/* "bytes 10-19" or "bytes 10 to the end", for messages. */
static void range_text(const struct mds_lock *l, char *buf, size_t len)
{
	if (l->end == MDS_LOCK_END)
		snprintf(buf, len, "bytes %llu to the end",
			 (unsigned long long)l->start);
	else
		snprintf(buf, len, "bytes %llu-%llu",
			 (unsigned long long)l->start,
			 (unsigned long long)l->end - 1);
}

static const char *type_text(const struct mds_lock *l)
{
	return l->type == MDS_LOCK_WRITE ? "write" : "read";
}

static int not_granted(uint64_t ino, const struct mds_lock *c, bool waited)
{
	char r[64];

	range_text(c, r, sizeof(r));
	return clf_fail(EAGAIN,
			"metad: range locked: inode %llu %s hold a %s lock of pid %u%s",
			(unsigned long long)ino, r, type_text(c), c->pid,
			waited ? " (still, after waiting)" : "");
}

static int deadlock(uint64_t ino, const struct mds_lock *c)
{
	char r[64];

	range_text(c, r, sizeof(r));
	return clf_fail(EDEADLK,
			"metad: waiting for inode %llu %s (a %s lock of pid %u) would deadlock",
			(unsigned long long)ino, r, type_text(c), c->pid);
}

/* One request on li, the table locked.  *w is the key's wait record. */
static int set_locked(struct mds_locks *t, struct lock_inode *li,
		      const struct mds_lock *lk, uint32_t wait_ms,
		      struct lock_wait **w)
{
	int64_t deadline = clf_now_ms() + wait_ms;
	bool waited = false;
	struct timespec ts;
	int err;

	deadline_ts(deadline, &ts);
	for (;;) {
		const struct mds_lock *c = lock_conflict(li, lk);

		if (!c)
			return lock_apply(t, li, lk);
		if (!wait_ms)
			return not_granted(li->ino, c, false);
		if (closes_cycle(t, lk->key, c->key))
			return deadlock(li->ino, c);
		if (waited && clf_now_ms() >= deadline) {
			(*w)->expires_ms = clf_now_ms() + MDS_LOCK_PENDING_MS;
			return not_granted(li->ino, c, true);
		}
		if (!*w) {
			err = wait_add(t, li->ino, lk, w);
			if (err)
				return err;
		}
		(*w)->sleeping = true;
		li->nsleepers++;
		t->nsleeping++;
		/* The holder's unlock needs a worker (daemon.h). */
		clf_daemon_wait_begin();
		pthread_cond_timedwait(&li->changed, &t->mutex, &ts);
		clf_daemon_wait_end();
		li->nsleepers--;
		t->nsleeping--;
		(*w)->sleeping = false;
		waited = true;
	}
}

int mds_locks_set(struct mds_locks *t, uint64_t ino, const struct mds_lock *lk,
		  uint32_t wait_ms)
{
	struct lock_wait *w;
	struct lock_inode *li;
	int err;

	if (wait_ms > MDS_LOCK_WAIT_CAP_MS)
		wait_ms = MDS_LOCK_WAIT_CAP_MS;
	pthread_mutex_lock(&t->mutex);
	waits_expire(t, clf_now_ms());
	/* A new request of the key replaces what it waited for. */
	w = wait_find(t, lk->key);
	if (w) {
		wait_remove(t, w);
		w = NULL;
	}
	li = lock_inode_get(t, ino, lk->type != MDS_LOCK_UNLOCK);
	if (!li) {
		err = lk->type == MDS_LOCK_UNLOCK
			      ? 0
			      : clf_fail(ENOMEM, "metad: out of memory for a lock");
		goto unlock;
	}
	err = set_locked(t, li, lk, wait_ms, &w);
	/* Only a wait that timed out stays, for deadlock detection. */
	if (w && err != -EAGAIN)
		wait_remove(t, w);
	lock_inode_put(t, li);
unlock:
	pthread_mutex_unlock(&t->mutex);
	return err;
}

void mds_locks_release_owner(struct mds_locks *t, uint64_t ino,
			     struct mds_lock_key key)
{
	struct lock_inode *li;
	struct lock_wait *w;

	pthread_mutex_lock(&t->mutex);
	w = wait_find(t, key);
	if (w && !w->sleeping)
		wait_remove(t, w);
	li = lock_inode_get(t, ino, false);
	if (li) {
		lock_drop(t, li, key, false);
		lock_inode_put(t, li);
	}
	pthread_mutex_unlock(&t->mutex);
}

unsigned mds_locks_release_conn(struct mds_locks *t, uint64_t conn)
{
	struct mds_lock_key key = { .conn = conn };
	struct clf_hnode *n, *tmp;
	struct lock_wait **pp;
	unsigned before;
	size_t b;

	pthread_mutex_lock(&t->mutex);
	before = t->nlocks;
	for (pp = &t->waits; *pp;) {
		struct lock_wait *w = *pp;

		if (w->lk.key.conn != conn || w->sleeping) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		free(w);
		t->nwaits--;
	}
	clf_htable_for_each(&t->inodes, b, n, tmp) {
		struct lock_inode *li = clf_hnode_entry(n, struct lock_inode, hn);

		lock_drop(t, li, key, true);
		lock_inode_put(t, li);
	}
	before -= t->nlocks;
	pthread_mutex_unlock(&t->mutex);
	return before;
}
