/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_lock_i.h -- inside the lock table: shared by mds_lock.c (ranges:
 * conflicts, granting, splitting, merging) and mds_lock_wait.c (waiting,
 * wait records, deadlock detection, releases).
 */
#ifndef MDS_LOCK_I_H
#define MDS_LOCK_I_H

#include <pthread.h>
#include <stdbool.h>

#include "hash.h"
#include "mds_lock.h"

#define MDS_LOCK_BUCKETS 1024	/* inode hash */

struct lock_node {
	struct lock_node *next;	/* in its inode's list, by start */
	struct mds_lock lk;
};

/* The locks of one inode; exists while it has locks or sleepers. */
struct lock_inode {
	struct clf_hnode hn;		/* in mds_locks.inodes, by inode */
	uint64_t ino;
	struct lock_node *locks;	/* every key's, by start */
	unsigned nsleepers;		/* requests sleeping on changed */
	pthread_cond_t changed;		/* broadcast whenever locks change */
};

/*
 * What a key waits for: the request of a sleeping SETLK, kept for
 * MDS_LOCK_PENDING_MS after it gave up with -EAGAIN (the client asks
 * again), for deadlock detection.  At most one per key.
 */
struct lock_wait {
	struct lock_wait *next;
	uint64_t ino;
	struct mds_lock lk;	/* the request, with its key */
	bool sleeping;		/* its thread sleeps in mds_locks_set */
	int64_t expires_ms;	/* clf_now_ms() time, when not sleeping */
};

/* Everything below is guarded by mutex. */
struct mds_locks {
	pthread_mutex_t mutex;
	struct clf_htable inodes;	/* of lock_inode */
	struct lock_wait *waits;
	unsigned nlocks;	/* lock_nodes in all inodes */
	unsigned nwaits;	/* lock_waits */
	unsigned nsleeping;	/* of which sleeping */
};

static inline bool lock_key_eq(struct mds_lock_key a, struct mds_lock_key b)
{
	return a.conn == b.conn && a.owner == b.owner;
}

/* The inode's entry, created when create (NULL: out of memory, or none). */
struct lock_inode *lock_inode_get(struct mds_locks *t, uint64_t ino,
				  bool create);
/* Free li if it has no locks and no sleepers left. */
void lock_inode_put(struct mds_locks *t, struct lock_inode *li);

/* The first lock of another key on li in the way of lk, or NULL. */
const struct mds_lock *lock_conflict(const struct lock_inode *li,
				     const struct mds_lock *lk);

/*
 * Make lk (no conflict left: lock_conflict() said so) the state of its
 * key on li: cut the key's locks out of the range, then, unless it is an
 * unlock, add the range merged with the key's touching locks of its
 * type.  0, or -ENOLCK / -ENOMEM with nothing changed.
 */
int lock_apply(struct mds_locks *t, struct lock_inode *li,
	       const struct mds_lock *lk);

/* Remove the locks of li whose key matches (of conn, or of key when
 * whole_conn is false); wakes sleepers when any went. */
void lock_drop(struct mds_locks *t, struct lock_inode *li,
	       struct mds_lock_key key, bool whole_conn);

#endif /* MDS_LOCK_I_H */
