/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_reply.h -- the reply a request handler prepares, and its builders
 * (iod_reply.c); iod_dispatch.c sends it.
 */
#ifndef IOD_REPLY_H
#define IOD_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iod_store.h"
#include "wire.h"

struct iod_conn;
struct iod_stream;
struct clf_proto_header;

/*
 * A body of up to sizeof(head) bytes, then optionally bulk data sent
 * from where it is (no copy), which the reply owns when `owned` is set.
 */
struct iod_reply {
	uint8_t head[64];
	size_t head_len;
	const void *data;		/* borrowed, or `owned` */
	size_t data_len;
	void *owned;			/* freed after sending; may be NULL */
	/* Or data_len bytes of this subfile from file_off (zeros past its
	 * end), sent from the page cache; a reference, put after sending. */
	struct iod_subfile *file;
	int64_t file_off;
	/* Or data_len bytes made piece by piece while sending
	 * (iod_stream.c); owned, freed after sending. */
	struct iod_stream *stream;
	/*
	 * Set when another thread sent it already: a collective's
	 * participant answered by the one that did the operation's I/O
	 * (iod_collective.c, rule 7).  iod_serve then sends nothing;
	 * sent_err is that send's result (0, or the transport's error).
	 */
	bool sent;
	int sent_err;
};

/* A writer onto the reply's small body. */
struct wire_writer iod_reply_writer(struct iod_reply *rep);

/* After an encoder ran on w (returning err): the body's length, or err
 * (-EOVERFLOW when it did not fit). */
int iod_reply_done(struct iod_reply *rep, const struct wire_writer *w,
		   int err);

/* A writer onto a new buffer of cap bytes, for a body larger than the
 * head; iod_reply_owned then takes or frees it.  0 or -ENOMEM. */
int iod_reply_alloc(struct wire_writer *w, size_t cap);

/* After an encoder ran on iod_reply_alloc's w (returning err): the reply
 * takes the buffer as its data, or it is freed.  0 or the error
 * (-EOVERFLOW when the body did not fit). */
int iod_reply_owned(struct iod_reply *rep, struct wire_writer *w, int err);

/* A reply whose body is one u32 (a write's count): 0 or -errno. */
int iod_reply_u32(struct iod_reply *rep, uint32_t v);

/* A data reply of len bytes at buf (borrowed until it is sent). */
int iod_reply_data(struct iod_reply *rep, const void *buf, size_t len);

/* A data reply of len bytes of sf from off (see iod_reply.file; the
 * reference is the reply's on success). */
int iod_reply_file(struct iod_reply *rep, struct iod_subfile *sf,
		   int64_t off, size_t len);

/* A data reply of len bytes made by s while it is sent (s is the
 * reply's on success). */
int iod_reply_stream(struct iod_reply *rep, struct iod_stream *s,
		     size_t len);

/*
 * Send rep, a body and data from a buffer (no file, no stream), as the
 * reply to req on cn: 0 or the transport's error.  For a thread that
 * answers a request another thread received (iod_collective.c); that
 * thread must not use the connection meanwhile.
 */
int iod_reply_send(struct iod_conn *cn, const struct clf_proto_header *req,
		   const struct iod_reply *rep);

#endif /* IOD_REPLY_H */
