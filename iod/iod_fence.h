/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_fence.h -- fences on files whose subfiles leave this iod
 * (`clf iod remove`, docs/elastic.md).
 *
 * While a file's subfiles are copied to another iod, the mover fences
 * the file here: writes are refused with -ESTALE (readers go on, the
 * data does not change), and setting the fence waits until every request
 * of the file already being served has finished, so that no write lands
 * behind the copy.  A MOVING fence belongs to the mover's connection and
 * goes when it closes: a mover that dies leaves the file where it was,
 * still the one metad names (the move rolled back).  Once metad names
 * the new iod, the mover turns the fence to GONE, which refuses reads as
 * well and outlives the connection, so that a client still holding the
 * old layout never reads the removed copy as a hole.  A client that
 * meets -ESTALE asks metad for the layout again and retries
 * (libclf/client/io_retry.c).  The FENCE request is iod_ops.c's.
 */
#ifndef IOD_FENCE_H
#define IOD_FENCE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* Files fenced at once: every file an emptied iod held stays GONE
 * (40 bytes each) until the iod stops. */
#define IOD_FENCE_MAX (1u << 22)
#define IOD_FENCE_BUCKETS 1024	/* fence chains and in-flight counters,
				   by file hash */

struct iod_fence {
	uint64_t file;
	uint32_t mode;		/* CLF_PROTO_FENCE_MOVING or _GONE */
	uint64_t owner;		/* the mover's connection (MOVING) */
	struct iod_fence *next;	/* in its bucket's chain */
};

struct iod_fences {
	pthread_mutex_t lock;			/* of the chains */
	struct iod_fence *chains[IOD_FENCE_BUCKETS];	/* owned; lock */
	atomic_uint nfences;			/* fences in the chains */
	atomic_uint inflight[IOD_FENCE_BUCKETS]; /* data requests being
						    served, by file hash */
};

struct iod_views;

int iod_fences_init(struct iod_fences *fs);
void iod_fences_destroy(struct iod_fences *fs);

/* The connection owner closed: its MOVING fences go (the move rolled
 * back). */
void iod_fence_owner_closed(struct iod_fences *fs, uint64_t owner);

/*
 * iod_fence_enter - admit the request h (its body's first len bytes)
 *
 * A data request of a fenced file is refused with -ESTALE (a write under
 * MOVING; anything under GONE), except from the fence's owner.  An
 * admitted data request is counted in *slot until iod_fence_leave; *slot
 * is -1 for other requests.
 */
int iod_fence_enter(struct iod_fences *fs, struct iod_views *views,
		    uint64_t owner, const struct clf_proto_header *h,
		    const uint8_t *body, size_t len, int *slot);
void iod_fence_leave(struct iod_fences *fs, int slot);

/*
 * iod_fence_set - fence file (mode CLF_PROTO_FENCE_*) for all but owner
 *
 * MOVING and GONE return once no request of the file is being served:
 * 0, or -ETIMEDOUT after 30 s; -ENOMEM; -EBUSY when IOD_FENCE_MAX files are
 * fenced already.  LIFT takes the fence away.
 */
int iod_fence_set(struct iod_fences *fs, uint64_t file, uint32_t mode,
		  uint64_t owner);

#endif /* IOD_FENCE_H */
