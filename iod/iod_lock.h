/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_lock.h -- extent locks an iod grants to clients that cache (the
 * lock manager; see docs/small-io.md, "Client caching under locks").
 *
 * A client that holds a lock on a range of a subfile may keep bytes of
 * that range at home: written bytes not sent yet under PW (protected
 * write), read bytes under PR (protected read).  The visibility rule of
 * clf_proto.h stands because every access that conflicts with such a
 * lock revokes it first, and waits until the holder has sent its dirty
 * bytes and released the lock:
 *
 *   - a lock request (iod_lock_enqueue) from another client;
 *   - every access that comes under no lock (iod_lock_revoke_range): a
 *     plain read or write, a collective, the mount, a size query or a
 *     truncation.  A read conflicts with PW locks only, a write with
 *     both modes.
 *
 * Modes: PR locks of different clients are compatible; PW conflicts with
 * everything of another client.  A client's own locks never conflict
 * with its own requests (its flush under a lock being revoked must pass).
 *
 * A grant expands the requested range to the largest extent that no
 * conflicting lock of another client touches (as Lustre's LDLM does), so
 * a lone writer gets the whole subfile with its first request and asks
 * no more.  A request that had to revoke (a contended range) is granted
 * only its range rounded out to IOD_LOCK_CONTENDED_ALIGN: two clients
 * that each write their own region then settle on a lock each after a
 * revocation or two, instead of taking the subfile from each other at
 * every access.
 *
 * Shrinking (m->shrink, which the iod sets): a revocation asks back only
 * the part of a lock from the conflicting access's offset (rounded down
 * to IOD_LOCK_SHRINK_ALIGN) up, and the release keeps the part below
 * granted: two processes that each work in their own ascending region
 * (IOR's -b 1m) then keep their lock below the other's instead of
 * passing whole locks back and forth.  A client that gives back the whole
 * lock is correct too (the part kept holds back nothing of it).
 *
 * Revocation is bounded: the manager asks the holder once (ops.revoke,
 * which sends REVOKE on the holder's callback connection) and waits at
 * most the lease for its release.  A holder that does not answer in time,
 * or whose callback connection is gone (ops.revoke fails), is evicted: all
 * its locks are dropped, and with them the bytes it held back (a client
 * cache promises durability at sync and close only, and visibility
 * through revocation; an evicted client's later lock requests start
 * afresh).
 *
 * The manager is off until a client takes a lock: while it holds none,
 * iod_lock_revoke_range is one atomic load, so an iod whose clients do
 * not cache pays nothing.
 *
 * Strided locks (LOCK_ENQUEUE since 1.26) hold blocks of a fixed size at
 * a fixed stride: processes that interleave small accesses (IOR's
 * segments: B bytes every P * B) each lock their own blocks, and the
 * conflict tests (iod_lock_shape.c) see that those never meet.  Since
 * 1.27 the stride may count the file's bytes (IOR's 47008-byte segments
 * over 64 KiB stripes repeat in the file, not in a subfile); the iod
 * does not map subfile bytes to the file, so such a lock is apart only
 * from another whose blocks never meet its own in the file.
 *
 * Locking: one mutex per manager protects every field; the ops are
 * called without it.  The locks form one list, scanned linearly: they are
 * bounded (IOD_LOCK_MAX) and a caching client holds a lock or two per
 * subfile, as grants expand.
 */
#ifndef IOD_LOCK_H
#define IOD_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "iod_lock_shape.h"

enum iod_lock_mode {
	IOD_LOCK_PR = 1,	/* shared: the holder caches reads */
	IOD_LOCK_PW = 2,	/* exclusive: the holder caches writes */
};

/* Locks one manager holds at most; beyond, enqueue fails -ENOLCK. */
#define IOD_LOCK_MAX 65536

/* A shrunk lock keeps whole blocks of this many subfile bytes. */
#define IOD_LOCK_SHRINK_ALIGN ((int64_t)64 << 10)

/* Granularity of a grant on a contended range, in subfile bytes. */
#define IOD_LOCK_CONTENDED_ALIGN ((int64_t)1 << 20)

/* iod_lock_revoke_range's subfile for "every subfile of the file". */
#define IOD_LOCK_ALL_SUBFILES UINT32_MAX

/* End of the extent "to the end of the subfile". */
#define IOD_LOCK_EOF INT64_MAX

struct iod_lock_ops {
	/*
	 * Ask client to send its dirty bytes under lock id and release it
	 * (REVOKE on its callback connection).  Returns 0 when asked, a
	 * negative errno when the client cannot be reached: then it is
	 * evicted at once.  Must not wait for the release.
	 */
	int (*revoke)(void *arg, uint64_t client, uint64_t id, uint64_t file,
		      uint32_t sub, int64_t lo, int64_t hi);
	/* Optional: client was evicted and holds no lock any more. */
	void (*evicted)(void *arg, uint64_t client);
	void *arg;		   /* borrowed; passed to both */
};

/* A lock granted or being revoked.  Owned by the manager. */
struct iod_lock {
	uint64_t id;		   /* unique in the manager, never 0 */
	uint64_t client;	   /* holder, never 0 */
	uint64_t file;		   /* file id */
	uint32_t sub;		   /* subfile index */
	int mode;		   /* enum iod_lock_mode */
	int revoking;		   /* REVOKE sent, release awaited */
	int64_t lo, hi;		   /* subfile bytes [lo, hi), lo < hi */
	int64_t stride, block;	   /* strided: only the bytes x of [lo, hi)
				      with (x - lo) % stride < block;
				      stride 0: all of them */
	bool in_file;		   /* stride and block count file offsets
				      from phase (iod_lock_shape.h) */
	int64_t phase;
	int64_t give_lo;	   /* revoking: [give_lo, hi) goes, [lo,
				      give_lo) stays granted (give_lo == lo:
				      all of it goes) */
	int64_t deadline_ms;	   /* revoking: eviction time, clf_now_ms */
	struct iod_lock *next;
};

struct iod_lockmgr {
	pthread_mutex_t mutex;
	pthread_cond_t cond;	   /* broadcast when a lock goes; CLOCK_MONOTONIC */
	struct iod_lock *locks;	   /* mutex */
	atomic_int count;	   /* locks in the list; written under mutex */
	uint64_t next_id;	   /* mutex */
	uint64_t evictions;	   /* clients evicted so far; mutex */
	uint64_t revocations;	   /* REVOKEs sent so far; mutex */
	int64_t lease_ms;	   /* how long a holder has to release */
	int shrink;		   /* revocations ask back from the access up;
				      0 after init */
	struct iod_lock_ops ops;   /* copied at init */
};

/* What a grant gives the client.  Written only on success. */
struct iod_lock_grant {
	uint64_t id;
	int64_t lo, hi;		   /* the expanded extent, covering the request;
				      strided: lo a whole number of strides
				      below the request's */
};

/*
 * Prepare a manager with no locks; lease_ms > 0 is how long a holder
 * has to answer a revocation.  Returns 0 or a negative errno.
 */
int iod_lockmgr_init(struct iod_lockmgr *m, const struct iod_lock_ops *ops,
		     int64_t lease_ms);

/* Free every lock and the manager's resources; nobody may wait in it. */
void iod_lockmgr_destroy(struct iod_lockmgr *m);

/*
 * Grant client (!= 0) a lock of mode on subfile sub of file covering
 * [lo, hi) (0 <= lo < hi), after revoking the conflicting locks of other
 * clients and waiting for their release (at most the lease each).  The
 * grant is the largest extent containing [lo, hi) that no other client's
 * conflicting lock overlaps.  Returns 0 with *out written, -EINVAL on a
 * bad mode, client or range, -ENOLCK when the manager is full.
 */
int iod_lock_enqueue(struct iod_lockmgr *m, uint64_t client, uint64_t file,
		     uint32_t sub, int mode, int64_t lo, int64_t hi,
		     struct iod_lock_grant *out);

/*
 * The same for a strided lock: the bytes x of [lo, hi) with (x - lo) %
 * stride < block (0 < block < stride; stride 0: a plain lock).  Other
 * clients' locks conflict only where their bytes meet these (two
 * strided locks whose blocks interleave both stand), and the grant
 * expands over every lock whose blocks never meet ours.
 */
int iod_lock_enqueue_strided(struct iod_lockmgr *m, uint64_t client,
			     uint64_t file, uint32_t sub, int mode,
			     int64_t lo, int64_t hi, int64_t stride,
			     int64_t block, struct iod_lock_grant *out);

/*
 * The same for any shape (iod_lock_shape.h), strided in the file's bytes
 * included (1.27): the grant keeps req's stride, block and phase.
 */
int iod_lock_enqueue_shape(struct iod_lockmgr *m, uint64_t client,
			   uint64_t file, uint32_t sub, int mode,
			   const struct iod_shape *req,
			   struct iod_lock_grant *out);

/*
 * Client gives back lock id (its RELEASE, after its dirty bytes are in
 * the subfile): the part a revocation asked back, or all of it when it
 * was not revoked.  Returns 0, or -ENOENT when client holds no such lock
 * (already evicted: the release came too late).
 */
int iod_lock_release(struct iod_lockmgr *m, uint64_t client, uint64_t id);

/*
 * Before an access that comes under no lock, by client (0: unknown, so
 * nobody's locks are exempt): revoke the other clients' locks on [lo, hi)
 * of the subfile that conflict with it -- PW for a read, every mode for a
 * write -- and wait for their release or eviction.  hi = IOD_LOCK_EOF for
 * accesses whose end is the subfile's (size queries, truncation).
 * Returns at once when the manager holds no lock.
 */
void iod_lock_revoke_range(struct iod_lockmgr *m, uint64_t client,
			   uint64_t file, uint32_t sub, int write,
			   int64_t lo, int64_t hi);

/*
 * Drop every lock of client (its callback connection closed: the
 * client is gone, and its held-back bytes with it).  Waiters on those
 * locks proceed.  Returns how many locks went.
 */
int iod_lock_drop_client(struct iod_lockmgr *m, uint64_t client);

#endif /* IOD_LOCK_H */
