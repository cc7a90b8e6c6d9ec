/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_xfer.h -- how the data of a request travels between the connection
 * and the store (iod_xfer.c): the one place that chooses, and the ways.
 *
 * A request handler (iod_ops_io.c) decodes its request, finds where its
 * data goes (struct iod_dest), asks iod_xfer_plan_* how it travels and
 * moves it with iod_xfer_write or iod_xfer_read.  Whatever the way, the
 * same checks come first, the ENOSPC hook is consulted once before the
 * first byte is written, and the counters are kept the same.
 */
#ifndef IOD_XFER_H
#define IOD_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iod_conn.h"
#include "iod_ops.h"
#include "iod_reply.h"
#include "iod_stream.h"

enum iod_xfer_mode {
	/* Through the connection's buffers: received whole, then written;
	 * read whole, then sent. */
	IOD_XFER_MEMORY,
	/* One contiguous run of one subfile: spliced from the socket into
	 * the subfile, or sent from its page cache (iod_xfer.c). */
	IOD_XFER_DIRECT,
	/* In pieces of IOD_STREAM_CHUNK (iod_stream.c). */
	IOD_XFER_PIECES,
};

struct iod_xfer {
	enum iod_xfer_mode mode;
	struct iod_subfile *sf;	/* DIRECT: a reference; iod_xfer_done */
	int64_t off;		/* DIRECT: subfile offset of the run */
	uint8_t *buf;		/* MEMORY: room for the data; the
				   connection's, borrowed */
};

/*
 * iod_xfer_plan_write - how the len data bytes of a write to d, still in
 * the connection after the head that rq holds, travel: DIRECT when they
 * land on one run of one subfile and are big enough to be worth it;
 * else MEMORY when `hold` (a collective write, held whole for its
 * merge) and the connection's share of the buffer pool allows, or when
 * the request is small; else PIECES.  0 and *x, or a negative errno
 * (no memory for the buffer).
 */
int iod_xfer_plan_write(struct iod_conn *cn, const struct iod_req *rq,
			const struct iod_dest *d, size_t len, bool hold,
			struct iod_xfer *x);

/*
 * iod_xfer_plan_read - the same for a read of len bytes of d: DIRECT
 * when they are one run of a subfile that exists and big enough; MEMORY
 * when the connection's share allows; else PIECES.
 */
int iod_xfer_plan_read(struct iod_conn *cn, const struct iod_dest *d,
		       size_t len, struct iod_xfer *x);

/* Release what a plan holds; the plan may be zeroed or done already. */
void iod_xfer_done(struct iod_xfer *x);

/*
 * iod_xfer_write - receive the len data bytes of rq and write them to d
 * as x says.  Returns len, or a negative errno: the write's (the data
 * was received all the same), or the connection's with rq->broken set.
 */
int64_t iod_xfer_write(struct iod_conn *cn, struct iod_req *rq,
		       const struct iod_dest *d, size_t len,
		       const struct iod_xfer *x);

/* For a MEMORY plan: receive the len data bytes of rq into x->buf, to
 * be written later (a collective write): 0 or the connection's error,
 * rq->broken set. */
int iod_xfer_receive(struct iod_conn *cn, struct iod_req *rq, size_t len,
		     const struct iod_xfer *x);

/* Write the len bytes at buf to d: len or a negative errno. */
int64_t iod_xfer_store(struct iod_conn *cn, const struct iod_dest *d,
		       const void *buf, size_t len);

/*
 * iod_xfer_read - rep as the data reply of the len bytes of d, read as x
 * says (a subfile range is short at its end, like pread; a view range
 * has zeros past it).  0 or a negative errno.
 */
int iod_xfer_read(struct iod_conn *cn, const struct iod_dest *d, size_t len,
		  struct iod_xfer *x, struct iod_reply *rep);

#endif /* IOD_XFER_H */
