// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_lock.c -- the lock table's ranges: inodes, conflicts, and the
 * edit of an owner's locks that fcntl(F_SETLK) makes (replace, split,
 * merge); GETLK, listing and counting.
 *
 * Each inode keeps one list of every key's locks ordered by start: the
 * locks of one key never overlap, those of different keys may (read
 * locks).  Lists are searched linearly: byte-range locks on one file are
 * few in practice (one per process and region of an MPI job's data
 * sieving), and the table is bounded by MDS_LOCKS_MAX.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "error.h"
#include "mds_lock_i.h"

struct mds_locks *mds_locks_new(void)
{
	struct mds_locks *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (clf_htable_init(&t->inodes, MDS_LOCK_BUCKETS, MDS_LOCK_BUCKETS)) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->mutex, NULL);
	return t;
}

static void free_inode(struct lock_inode *li)
{
	while (li->locks) {
		struct lock_node *n = li->locks;

		li->locks = n->next;
		free(n);
	}
	pthread_cond_destroy(&li->changed);
	free(li);
}

void mds_locks_free(struct mds_locks *t)
{
	struct clf_hnode *n, *tmp;
	size_t b;

	if (!t)
		return;
	clf_htable_for_each(&t->inodes, b, n, tmp)
		free_inode(clf_hnode_entry(n, struct lock_inode, hn));
	clf_htable_release(&t->inodes);
	while (t->waits) {
		struct lock_wait *w = t->waits;

		t->waits = w->next;
		free(w);
	}
	pthread_mutex_destroy(&t->mutex);
	free(t);
}

struct lock_inode *lock_inode_get(struct mds_locks *t, uint64_t ino,
				  bool create)
{
	struct clf_hnode *n = clf_htable_find(&t->inodes, ino);
	struct lock_inode *li;
	pthread_condattr_t ca;

	if (n)
		return clf_hnode_entry(n, struct lock_inode, hn);
	if (!create)
		return NULL;
	li = calloc(1, sizeof(*li));
	if (!li)
		return NULL;
	li->ino = ino;
	/* Sleepers wait for a deadline on the monotonic clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&li->changed, &ca);
	pthread_condattr_destroy(&ca);
	clf_htable_add(&t->inodes, &li->hn, ino);
	return li;
}

void lock_inode_put(struct mds_locks *t, struct lock_inode *li)
{
	if (!li || li->locks || li->nsleepers)
		return;
	clf_htable_del(&t->inodes, &li->hn);
	free_inode(li);
}

static bool overlap(const struct mds_lock *a, const struct mds_lock *b)
{
	return a->start < b->end && b->start < a->end;
}

const struct mds_lock *lock_conflict(const struct lock_inode *li,
				     const struct mds_lock *lk)
{
	if (lk->type == MDS_LOCK_UNLOCK)
		return NULL;
	for (const struct lock_node *n = li->locks; n; n = n->next) {
		if (n->lk.start >= lk->end)
			break;	/* ordered by start: none further overlaps */
		if (lock_key_eq(n->lk.key, lk->key) || !overlap(&n->lk, lk))
			continue;
		if (lk->type == MDS_LOCK_WRITE || n->lk.type == MDS_LOCK_WRITE)
			return &n->lk;
	}
	return NULL;
}

static void insert_sorted(struct lock_inode *li, struct lock_node *n)
{
	struct lock_node **pp = &li->locks;

	while (*pp && (*pp)->lk.start <= n->lk.start)
		pp = &(*pp)->next;
	n->next = *pp;
	*pp = n;
}

/* Would cutting lk out of the key's locks split one in two? */
static bool needs_split(const struct lock_inode *li, const struct mds_lock *lk)
{
	for (const struct lock_node *n = li->locks; n; n = n->next)
		if (lock_key_eq(n->lk.key, lk->key) &&
		    n->lk.start < lk->start && n->lk.end > lk->end)
			return true;
	return false;
}

/*
 * Cut [lk->start, lk->end) out of the key's locks; spare is the node for
 * the right half of a lock that contains the range (needs_split()).
 * Pieces whose start moved are taken out and put back in order.
 */
static void cut_range(struct mds_locks *t, struct lock_inode *li,
		      const struct mds_lock *lk, struct lock_node **spare)
{
	struct lock_node **pp = &li->locks, *moved = NULL;

	while (*pp) {
		struct lock_node *n = *pp;

		if (!lock_key_eq(n->lk.key, lk->key) || !overlap(&n->lk, lk)) {
			pp = &n->next;
			continue;
		}
		if (n->lk.start < lk->start && n->lk.end > lk->end) {
			struct lock_node *right = *spare;

			*spare = NULL;
			right->lk = n->lk;
			right->lk.start = lk->end;
			n->lk.end = lk->start;
			right->next = moved;
			moved = right;
			t->nlocks++;
			pp = &n->next;
		} else if (n->lk.start < lk->start) {
			n->lk.end = lk->start;
			pp = &n->next;
		} else {
			*pp = n->next;
			if (n->lk.end > lk->end) {
				n->lk.start = lk->end;
				n->next = moved;
				moved = n;
			} else {
				free(n);
				t->nlocks--;
			}
		}
	}
	while (moved) {
		struct lock_node *n = moved;

		moved = n->next;
		insert_sorted(li, n);
	}
}

/* Take the key's lock of type `type` that ends at `at` (before) or
 * starts at it (!before) out of the list: the neighbour to merge. */
static struct lock_node *take_neighbour(struct lock_inode *li,
					const struct mds_lock *lk,
					uint64_t at, bool before)
{
	for (struct lock_node **pp = &li->locks; *pp; pp = &(*pp)->next) {
		struct lock_node *n = *pp;

		if (!lock_key_eq(n->lk.key, lk->key) || n->lk.type != lk->type)
			continue;
		if ((before && n->lk.end == at) ||
		    (!before && n->lk.start == at)) {
			*pp = n->next;
			return n;
		}
	}
	return NULL;
}

int lock_apply(struct mds_locks *t, struct lock_inode *li,
	       const struct mds_lock *lk)
{
	bool add = lk->type != MDS_LOCK_UNLOCK;
	bool split = needs_split(li, lk);
	struct lock_node *node = NULL, *spare = NULL, *nb;
	unsigned need = add + split;

	if (need && t->nlocks + t->nwaits + need > MDS_LOCKS_MAX)
		return clf_fail(ENOLCK,
				"metad: the lock table is full (%u locks)",
				t->nlocks);
	if (add && !(node = malloc(sizeof(*node))))
		goto nomem;
	if (split && !(spare = malloc(sizeof(*spare))))
		goto nomem;
	cut_range(t, li, lk, &spare);
	if (add) {
		node->lk = *lk;
		nb = take_neighbour(li, lk, lk->start, true);
		if (nb) {
			node->lk.start = nb->lk.start;
			free(nb);
			t->nlocks--;
		}
		nb = take_neighbour(li, lk, lk->end, false);
		if (nb) {
			node->lk.end = nb->lk.end;
			free(nb);
			t->nlocks--;
		}
		insert_sorted(li, node);
		t->nlocks++;
	}
	free(spare);
	/* A release or a downgrade may let a sleeper in. */
	pthread_cond_broadcast(&li->changed);
	return 0;

nomem:
	free(node);
	return clf_fail(ENOMEM, "metad: out of memory for a lock");
}

void lock_drop(struct mds_locks *t, struct lock_inode *li,
	       struct mds_lock_key key, bool whole_conn)
{
	struct lock_node **pp = &li->locks;
	bool dropped = false;

	while (*pp) {
		struct lock_node *n = *pp;
		bool match = whole_conn ? n->lk.key.conn == key.conn
					: lock_key_eq(n->lk.key, key);

		if (!match) {
			pp = &n->next;
			continue;
		}
		*pp = n->next;
		free(n);
		t->nlocks--;
		dropped = true;
	}
	if (dropped)
		pthread_cond_broadcast(&li->changed);
}

int mds_locks_get(struct mds_locks *t, uint64_t ino, const struct mds_lock *lk,
		  struct mds_lock *holder)
{
	const struct mds_lock *c = NULL;
	struct lock_inode *li;

	pthread_mutex_lock(&t->mutex);
	li = lock_inode_get(t, ino, false);
	if (li)
		c = lock_conflict(li, lk);
	if (c)
		*holder = *c;
	pthread_mutex_unlock(&t->mutex);
	return c ? 0 : -ENOENT;
}

unsigned mds_locks_list(struct mds_locks *t, uint64_t ino,
			struct mds_lock *out, unsigned max)
{
	struct lock_inode *li;
	unsigned n = 0;

	pthread_mutex_lock(&t->mutex);
	li = lock_inode_get(t, ino, false);
	for (struct lock_node *l = li ? li->locks : NULL; l; l = l->next) {
		if (n < max)
			out[n] = l->lk;
		n++;
	}
	pthread_mutex_unlock(&t->mutex);
	return n;
}

void mds_locks_stats(struct mds_locks *t, struct mds_lock_stats *st)
{
	pthread_mutex_lock(&t->mutex);
	st->held = t->nlocks;
	st->waiting = t->nsleeping;
	pthread_mutex_unlock(&t->mutex);
}
