/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_stream.h -- data too big to hold, in bounded pieces (iod_stream.c):
 * the IOD_XFER_PIECES way of iod_xfer.h.
 */
#ifndef IOD_STREAM_H
#define IOD_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "iod_conn.h"
#include "iod_reply.h"

/* Writes and reads move in pieces of this many bytes. */
#define IOD_STREAM_CHUNK IOD_SMALL_BUF

/* Where a request's data goes or comes from. */
struct iod_dest {
	struct iod_view *v;	/* borrowed; NULL: a subfile range */
	uint64_t file;		/* a subfile range: the subfile */
	uint32_t subfile;
	int64_t off;		/* a subfile range: its offset */
	int64_t lo, hi;		/* a view: the view range */
};

/*
 * iod_stream_write - receive the len data bytes of a write, still in the
 * connection, and write them to d in pieces of IOD_STREAM_CHUNK, so the
 * iod holds one piece whatever the write and reads no faster than the
 * disk takes the data.  The ENOSPC hook is consulted once, for len.
 * Returns len, or the first error (the data was received all the same,
 * the rest dropped), or the connection's error with *broken set.
 */
int64_t iod_stream_write(struct iod_conn *cn, const struct iod_dest *d,
			 size_t len, bool *broken);

/*
 * iod_stream_read - rep as a data reply of the len bytes of d, gathered
 * piece by piece while it is sent (short at the end of a subfile range,
 * like pread).  0, or a negative errno.
 */
int iod_stream_read(struct iod_conn *cn, const struct iod_dest *d, size_t len,
		    struct iod_reply *rep);

/* Send a streamed reply (rep->stream) after the header h: 0 or the
 * transport's error. */
int iod_stream_send(struct iod_conn *cn, const struct clf_proto_header *h,
		    const struct iod_reply *rep);

/* Free rep->stream; NULL ok. */
void iod_stream_free(struct iod_stream *s);

#endif /* IOD_STREAM_H */
