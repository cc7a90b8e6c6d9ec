/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_rangelock.h -- byte-range locks on one subfile, inside the iod.
 *
 * The iod is the only writer of its subfiles, so an in-process lock is
 * enough to make read-modify-write (data sieving) safe: a request that
 * rewrites a whole span to change a few bytes in it holds the span, and
 * every other modification of bytes in the span waits for it.  The rule,
 * kept by iod_store.c and iod_viewio.c: every write of subfile bytes holds
 * a range covering those bytes.  Reads take no range: they see each byte
 * either before or after a concurrent write, which is all POSIX promises.
 *
 * Requests are granted in arrival order among the ones they overlap: a
 * request waits for every earlier request (granted or still waiting) whose
 * range overlaps its own, and for no other.  So disjoint requests never
 * wait for each other, a wide request is not starved by a stream of
 * narrow ones, and as waits only point backwards in time there is no
 * deadlock -- provided that a thread holds at most one range of a given
 * lock at a time.
 *
 * A lock never allocates: the caller provides the node that represents its
 * request (usually on its stack) and keeps it until the unlock.
 */
#ifndef IOD_RANGELOCK_H
#define IOD_RANGELOCK_H

#include <pthread.h>
#include <stdint.h>

/* One request: [lo, hi) of the subfile.  Owned by the caller. */
struct iod_range {
	int64_t lo, hi;		   /* subfile byte offsets, lo < hi */
	struct iod_range *next;	   /* arrival order; the lock's mutex */
};

struct iod_rangelock {
	pthread_mutex_t mutex;
	pthread_cond_t cond;	   /* signalled when a request leaves */
	struct iod_range *head;	   /* requests, oldest first; mutex */
	struct iod_range **tail;   /* where the next request goes; mutex */
};

/* Prepare an unlocked lock.  Returns 0 or a negative errno (-ENOMEM). */
int iod_rangelock_init(struct iod_rangelock *rl);

/* Release the resources of a lock that nobody holds or waits for. */
void iod_rangelock_destroy(struct iod_rangelock *rl);

/*
 * Wait until [lo, hi) overlaps no earlier request, then hold it through
 * r.  lo < hi is required (an empty range would be meaningless; callers
 * skip the lock for empty transfers).
 */
void iod_rangelock_lock(struct iod_rangelock *rl, struct iod_range *r,
			int64_t lo, int64_t hi);

/*
 * Hold [lo, hi) through r only if that needs no waiting; 0 when held,
 * -EBUSY otherwise (then r is not in the lock).
 */
int iod_rangelock_trylock(struct iod_rangelock *rl, struct iod_range *r,
			  int64_t lo, int64_t hi);

/* Give back a range held through r, waking the requests waiting for it. */
void iod_rangelock_unlock(struct iod_rangelock *rl, struct iod_range *r);

#endif /* IOD_RANGELOCK_H */
