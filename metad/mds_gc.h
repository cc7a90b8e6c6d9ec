/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_gc.h -- metad removes the subfiles of removed files from the iods,
 * from the durable queue the store keeps of them (mds_gc_list in
 * mds_store.h), until every iod has confirmed.
 *
 * When: right after the unlink (or replacing rename) commits, the request
 * hands the removal to one background thread and replies: the queue entry
 * committed with the unlink makes the removal durable, so the client
 * need not wait for a round trip to every iod of the file (that wait
 * was most of an unlink's time, and an iod that stalls stalled every
 * unlink).  For what that try leaves, the same thread: at metad start
 * (the removals a dead metad did not finish), when an iod that failed
 * connects again (any request to it, mds_iods_set_on_connect), and on a
 * timer per failing iod whose delay doubles from MDS_GC_RETRY_MIN_MS to
 * MDS_GC_RETRY_MAX_MS and stays
 * there: retries never stop, but a down iod costs one connect attempt per
 * MDS_GC_RETRY_MAX_MS at most.  An entry leaves the queue only when its
 * iod answered the removal with success (which includes "no such
 * subfile").  Removals go to each iod in batches: one REMOVE_MANY (1.16)
 * names up to CLF_PROTO_SUB_BATCH_MAX files, whatever the thread has
 * gathered (the unlinks handed over since its last try, or a page of
 * the queue), so a burst of unlinks costs an iod a few requests, not
 * one per file.  Removals confirmed right after a commit leave it in one
 * transaction per GC_FLUSH_MS (1 s) or 256 entries, not one commit
 * each (a crash in between only repeats them).  Logged once per change of an iod's state (failing, back),
 * not per try; the queue's length is in the log at start and at each
 * change.
 */
#ifndef MDS_GC_H
#define MDS_GC_H

#include <stdint.h>

#include "mds_iods.h"
#include "mds_store.h"

#define MDS_GC_RETRY_MIN_MS 1000
#define MDS_GC_RETRY_MAX_MS 10000

struct mds_gc;

/*
 * Start the background thread over st and io (borrowed; they outlive the
 * result).  Returns 0 and *out, or -ENOMEM / the errno of pthread_create.
 */
int mds_gc_start(struct mds_store *st, struct mds_iods *io,
		 struct mds_gc **out);

/* Stop the thread (after at most the removal in progress) and free gc.
 * No mds_gc_removed may be running.  NULL ok. */
void mds_gc_stop(struct mds_gc *gc);

/*
 * The inode ino, laid out by layout (borrowed), was just removed and its
 * removal queued durably: hand the removal of its subfiles to the thread
 * and return at once.  The thread tries every iod that is not known to
 * be failing and takes those that succeeded off the queue.  Never fails:
 * what is not done stays queued.
 */
void mds_gc_removed(struct mds_gc *gc, uint64_t ino,
		    const struct mds_layout *layout);

#endif /* MDS_GC_H */
