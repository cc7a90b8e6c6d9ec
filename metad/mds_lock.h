/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_lock.h -- metad's table of POSIX byte-range locks (SETLK, GETLK,
 * UNLOCK_OWNER of protocol 1.1).
 *
 * Semantics are fcntl's: read locks share, a write lock excludes every
 * other owner; a new lock of an owner replaces its own locks where they
 * overlap (converting their type) and merges with its own locks of the
 * same type that overlap or touch it; unlocking a sub-range splits.
 *
 * A lock belongs to a key: (connection, owner).  The connection is a
 * number metad gives each connection; the owner is the client's (a
 * process, a FUSE lock owner) and means nothing across connections.
 *
 * Locks are NOT durable: the table lives in metad's memory only.  A
 * connection's locks are released when it closes (its process exited or
 * was killed), and all locks die with metad; after a restart nothing is
 * reclaimed (like NFSv3 without a grace period).  Inode numbers are never
 * reused (the store's next_ino only grows), so locks of a removed file
 * cannot fall on a new one; they go with their connections.
 *
 * Waiting is bounded: a waiting request sleeps at most MDS_LOCK_WAIT_CAP_MS
 * (whatever the client asked) and then fails with -EAGAIN, so that a
 * connection thread is never held longer than a client's timeout; the
 * client asks again.  While it sleeps, and for MDS_LOCK_PENDING_MS after
 * such an -EAGAIN, the request counts as a wait of its key for deadlock
 * detection: each key waits for at most one lock, and a request whose
 * chain of "waits for the holder of" comes back to itself fails with
 * -EDEADLK instead of waiting.
 *
 * Every function is thread-safe (one mutex for the table).
 */
#ifndef MDS_LOCK_H
#define MDS_LOCK_H

#include <stdint.h>

/* Lock types, the protocol's values (CLF_PROTO_LOCK_*). */
enum mds_lock_type {
	MDS_LOCK_READ = 1,
	MDS_LOCK_WRITE = 2,
	MDS_LOCK_UNLOCK = 3,
};

/* The end of a lock "to the end of the file": one past off_t's max. */
#define MDS_LOCK_END (1ull << 63)

/* Longest sleep of one waiting request, ms: below any client timeout
 * (the default is 5 s). */
#define MDS_LOCK_WAIT_CAP_MS 1000
/* How long a wait that timed out still counts for deadlock detection, ms:
 * long enough for the client's retry to come back. */
#define MDS_LOCK_PENDING_MS 2000
/* Locks and wait records in the whole table: beyond, -ENOLCK. */
#define MDS_LOCKS_MAX (1u << 20)

struct mds_lock_key {
	uint64_t conn;		/* metad's number for the connection */
	uint64_t owner;		/* the client's number for the owner */
};

/* A request, or a lock in the table. */
struct mds_lock {
	struct mds_lock_key key;
	uint64_t start;		/* first byte */
	uint64_t end;		/* one past the last byte, > start,
				   <= MDS_LOCK_END (to the end) */
	uint32_t type;		/* enum mds_lock_type */
	uint32_t pid;		/* the owner's, as its client said */
};

struct mds_locks;

/* A new empty table, or NULL (out of memory). */
struct mds_locks *mds_locks_new(void);
/* Free the table and every lock in it; NULL ok.  No thread may wait. */
void mds_locks_free(struct mds_locks *t);

/*
 * mds_locks_set - lock, convert or unlock lk->[start, end) on inode ino
 * for lk->key
 *
 * MDS_LOCK_UNLOCK releases the range (nothing held is fine).  A lock in
 * the way of another key gives -EAGAIN at once when wait_ms is 0; else
 * the call sleeps until it can be granted, at most min(wait_ms,
 * MDS_LOCK_WAIT_CAP_MS), and then gives -EAGAIN.  -EDEADLK when waiting
 * would close a cycle of waits; -ENOLCK when the table is full, -ENOMEM.
 * Each failure leaves the key's locks as they were and sets a message.
 */
int mds_locks_set(struct mds_locks *t, uint64_t ino, const struct mds_lock *lk,
		  uint32_t wait_ms);

/*
 * mds_locks_get - the first lock (lowest start) of another key on ino
 * that would conflict with lk: 0 and *holder, or -ENOENT when lk could
 * be granted now.
 */
int mds_locks_get(struct mds_locks *t, uint64_t ino, const struct mds_lock *lk,
		  struct mds_lock *holder);

/* Release every lock of key on ino (and its wait record). */
void mds_locks_release_owner(struct mds_locks *t, uint64_t ino,
			     struct mds_lock_key key);

/* Release every lock and wait of connection conn, which closed; returns
 * how many locks it held. */
unsigned mds_locks_release_conn(struct mds_locks *t, uint64_t conn);

/*
 * The locks on ino in start order (several keys' locks may overlap),
 * at most max of them into out; returns how many there are in all.
 * For tests and debugging.
 */
unsigned mds_locks_list(struct mds_locks *t, uint64_t ino,
			struct mds_lock *out, unsigned max);

struct mds_lock_stats {
	unsigned held;		/* locks in the table */
	unsigned waiting;	/* requests sleeping now */
};
void mds_locks_stats(struct mds_locks *t, struct mds_lock_stats *st);

#endif /* MDS_LOCK_H */
