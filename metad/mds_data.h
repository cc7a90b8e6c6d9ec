/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_data.h -- what metad asks of the iods on behalf of a file: remove
 * its subfiles, cut them to a new file size, sum the iods' capacity.
 *
 * The namespace is the truth and is changed first or last so that a
 * failure half-way never shows through it:
 *   - removal runs after the unlink (or the replacing rename) has
 *     committed, together with an entry per iod in the store's queue of
 *     pending removals, by a background thread (the unlink's reply does
 *     not wait for it).  An iod that cannot be reached keeps the subfiles
 *     of the removed inode until it comes back and confirms the removal
 *     (mds_gc.h); meanwhile they are named by an inode number that no
 *     entry leads to any more and that is never given out again (the
 *     store's inode counter only grows), so nothing can read them.
 *   - truncation runs before the new size is recorded; when an iod fails,
 *     the size stays as it was and the request fails.  Repeating the
 *     truncate converges, since each subfile is set to an exact length.
 */
#ifndef MDS_DATA_H
#define MDS_DATA_H

#include <stdint.h>

#include "clf.h"
#include "mds_iods.h"
#include "mds_store.h"
#include "proto.h"

/*
 * Remove every subfile of inode ino (laid out by layout, borrowed) from
 * every iod that holds one.  Best effort: failures are logged, not
 * returned.  For a layout replaced on a live inode (SET_LAYOUT); removed
 * inodes go through the durable queue instead (mds_gc.h).
 */
void mds_data_remove(struct mds_iods *io, uint64_t ino,
		     const struct mds_layout *layout);

/*
 * Remove every subfile of inode ino from iod: 0 when the iod confirmed
 * (no such subfile included), else the iod's status or -EHOSTDOWN, with
 * the message in CLF_Last_error().  Not logged.
 */
int mds_data_remove_on(struct mds_iods *io, uint32_t iod, uint64_t ino);

/*
 * The same for the n files inos[] (1..CLF_PROTO_SUB_BATCH_MAX) in one
 * REMOVE_MANY (one REMOVE each on an iod older than 1.16).  Returns 0
 * with status[i] 0 where the iod confirmed file i, else its errno number;
 * or the error of the whole exchange as mds_data_remove_on.
 */
int mds_data_remove_many(struct mds_iods *io, uint32_t iod,
			 const uint64_t *inos, uint32_t n, uint32_t *status);

/*
 * Set each subfile of ino, and the bytes before the displacement, to its
 * length in a file of size bytes.  Returns 0, or the first failure with
 * the message "metad: cannot truncate 'ino N' on iod I (host:port): why"
 * (-EHOSTDOWN for an iod out of reach, else the iod's status), -EINVAL
 * for a layout whose types do not decode, -ENOMEM.
 */
int mds_data_truncate(struct mds_iods *io, uint64_t ino,
		      const struct mds_layout *layout, int64_t size);

/*
 * The sum of every iod's IOD_STATFS: bytes (total, free, available) add
 * up; the block size is the largest of theirs.  Fails when any iod does
 * not answer, naming it: a partial sum would look like a smaller file
 * system, and the statfs body has no field to say it is partial.  files
 * and files_free are left 0 for the caller (metad counts inodes itself).
 */
int mds_data_statfs(struct mds_iods *io, struct clf_proto_statfs *out);

#endif /* MDS_DATA_H */
