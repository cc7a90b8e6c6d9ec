/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_merge.h -- merging the pieces of a collective access.
 *
 * In a collective write every participant sends the iod its own view
 * range; one by one they would be small interleaved writes.  The iod
 * instead collects the pieces of all participants -- (subfile offset,
 * length, buffer) triples, found with iod_view_pieces() -- and issues
 * them in subfile order, adjacent pieces together in one pwritev (or
 * preadv), so the disk sees large ordered requests (server-directed I/O,
 * DESIGN.md section 4, step 4).  Collecting the participants' messages is
 * the protocol's business; this file only does the I/O.
 */
#ifndef IOD_MERGE_H
#define IOD_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "iod_store.h"
#include "iod_view.h"

struct iod_piece {
	int64_t off;	/* subfile offset */
	size_t len;	/* bytes */
	void *buf;	/* borrowed: the bytes to write, or where reads go */
};

/* A growable array of pieces. */
struct iod_pieces {
	struct iod_piece *p;	/* owned, cap entries */
	size_t n, cap;
};

#define IOD_PIECES_INIT { NULL, 0, 0 }

/* Free the array (not the buffers the pieces point to); NULL ok. */
void iod_pieces_release(struct iod_pieces *ps);

/* Append one piece: 0 or -ENOMEM. */
int iod_pieces_add(struct iod_pieces *ps, int64_t off, size_t len, void *buf);

/*
 * iod_view_pieces - the pieces of one participant's view access
 *
 * Appends to out the subfile pieces of view bytes [lo, hi) of v, whose
 * len packed bytes are in data (as for iod_view_write); pieces that
 * follow each other in the subfile are appended as one.  data is
 * borrowed and must live until the merge is done.  Returns 0, -EINVAL
 * when len is not the count of those bytes, -ENOMEM; nothing is appended
 * on failure.
 */
int iod_view_pieces(const struct iod_view *v, int64_t lo, int64_t hi,
		    void *data, size_t len, struct iod_pieces *out);

/*
 * A participant's pieces produced a bounded number at a time, so that a
 * collective with more pieces than an iod holds at once is cut into
 * rounds (iod_collective.c).  Borrows the view and the data: both must
 * outlive it.
 */
struct iod_piece_src {
	const struct iod_view *v;	/* borrowed */
	int64_t lo, hi;		/* view bytes not yet turned into pieces */
	char *data;		/* their packed bytes, borrowed */
	int64_t frontier;	/* subfile offset of the next piece;
				 * INT64_MAX once lo == hi */
};

/*
 * Set src up for view bytes [lo, hi) of v, whose len packed bytes are in
 * data.  Returns 0, or -EINVAL when len is not the count of those bytes
 * (the message names the view); O(depth of the mapping).
 */
int iod_piece_src_init(struct iod_piece_src *src, const struct iod_view *v,
		       int64_t lo, int64_t hi, void *data, size_t len);

/*
 * Append src's next pieces to out until out holds max pieces or src is
 * exhausted; pieces that follow each other in the subfile (and are
 * produced by the same call) are one.  Pieces come in increasing subfile
 * order, each at or after the previous frontier.  Costs O(depth) per
 * piece plus one seek.  Returns 0 or -ENOMEM; after an error src and out
 * are unusable.
 */
int iod_piece_src_fill(struct iod_piece_src *src, struct iod_pieces *out,
		       size_t max);

/*
 * iod_merge_write - write pieces of subfile `subfile` of `file` in order
 *
 * Sorts p[0..n) in place by subfile offset and writes each stretch of
 * adjacent pieces (up to IOV_MAX) with one pwritev under the subfile's
 * range lock.  Overlapping pieces are written one after the other, in
 * offset order, as MPI leaves overlapping collective writes undefined.
 * Returns the bytes written (the sum of the lengths), -EINVAL for a piece
 * with a bad offset or length, or a store error naming the subfile.
 */
int64_t iod_merge_write(struct iod_store *st, uint64_t file, uint32_t subfile,
			struct iod_piece *p, size_t n);

/*
 * iod_merge_read - the mirror image: fill each piece, zeros past the end
 * of the subfile.  Returns the sum of the lengths or a negative errno.
 */
int64_t iod_merge_read(struct iod_store *st, uint64_t file, uint32_t subfile,
		       struct iod_piece *p, size_t n);

#endif /* IOD_MERGE_H */
