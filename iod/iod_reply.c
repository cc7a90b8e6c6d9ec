// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_reply.c -- building replies (iod_reply.h).
 *
 * Bulk data is sent from where it is after the encoded length (the
 * "_encode_head" form): a buffer, a subfile's pages, or a stream.
 */
#include <errno.h>
#include <stdlib.h>

#include "error.h"
#include "iod_conn.h"
#include "iod_reply.h"
#include "proto.h"
#include "transport.h"

struct wire_writer iod_reply_writer(struct iod_reply *rep)
{
	return (struct wire_writer){ rep->head, sizeof(rep->head), 0 };
}

int iod_reply_done(struct iod_reply *rep, const struct wire_writer *w,
		   int err)
{
	if (!err && w->pos > w->cap)
		err = clf_fail(EOVERFLOW, "iod: reply body of %zu bytes",
			       w->pos);
	rep->head_len = err ? 0 : w->pos;
	return err;
}

int iod_reply_u32(struct iod_reply *rep, uint32_t v)
{
	struct clf_proto_u32 m = { v };
	struct wire_writer w = iod_reply_writer(rep);

	return iod_reply_done(rep, &w, clf_proto_u32_encode(&w, &m));
}

/* The body of a data reply of len bytes: its length alone.  The head
 * encoder checks that bytes stand behind the length; it reads only the
 * length, so the body itself stands in for them. */
static int data_head(struct iod_reply *rep, size_t len)
{
	struct clf_proto_data m = { { rep->head, (uint32_t)len } };
	struct wire_writer w = iod_reply_writer(rep);

	return iod_reply_done(rep, &w, clf_proto_data_encode_head(&w, &m));
}

int iod_reply_data(struct iod_reply *rep, const void *buf, size_t len)
{
	int err = data_head(rep, len);

	if (err)
		return err;
	rep->data = buf;
	rep->data_len = len;
	return 0;
}

int iod_reply_file(struct iod_reply *rep, struct iod_subfile *sf,
		   int64_t off, size_t len)
{
	int err = data_head(rep, len);

	if (err)
		return err;
	rep->data_len = len;
	rep->file = sf;
	rep->file_off = off;
	return 0;
}

int iod_reply_stream(struct iod_reply *rep, struct iod_stream *s, size_t len)
{
	int err = data_head(rep, len);

	if (err)
		return err;
	rep->data_len = len;
	rep->stream = s;
	return 0;
}

int iod_reply_alloc(struct wire_writer *w, size_t cap)
{
	*w = (struct wire_writer){ malloc(cap), cap, 0 };
	return w->buf ? 0 : clf_fail(ENOMEM, "iod: out of memory");
}

int iod_reply_owned(struct iod_reply *rep, struct wire_writer *w, int err)
{
	if (!err && w->pos > w->cap)
		err = clf_fail(EOVERFLOW, "iod: reply body of %zu bytes",
			       w->pos);
	if (err) {
		free(w->buf);
		return err;
	}
	rep->owned = w->buf;
	rep->data = w->buf;
	rep->data_len = w->pos;
	return 0;
}

int iod_reply_send(struct iod_conn *cn, const struct clf_proto_header *req,
		   const struct iod_reply *rep)
{
	struct clf_proto_header h;
	struct iovec iov[2];
	int n = 0;

	if (rep->file || rep->stream)
		return clf_fail(EINVAL, "iod: a reply from a file or a stream is sent by its own request's thread");
	clf_proto_header_init_reply(&h, req, 0);
	iod_hook_before_reply(cn->srv);
	if (rep->head_len)
		iov[n++] = (struct iovec){ (void *)rep->head, rep->head_len };
	if (rep->data_len)
		iov[n++] = (struct iovec){ (void *)rep->data, rep->data_len };
	return clf_conn_send(cn->c, &h, iov, n);
}
