// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_stream.c -- writes and reads too big to hold, in bounded pieces.
 *
 * A request announces up to 64 MiB of data.  Received whole before it is
 * written, it would cost the iod that much per connection as the bytes
 * trickle in -- 256 connections announcing big writes and sending them
 * slowly held 16 GiB.  So a write whose data does not go straight to its
 * subfile (iod_direct.c: one run) is received IOD_STREAM_CHUNK bytes at a
 * time, each piece written before the next is read: the iod holds one
 * piece per connection, and a client sending faster than the disk takes
 * its data finds its socket full -- TCP's flow control is the
 * backpressure.  The packed data of a VIEW_WRITE is in view order, so
 * piece k is the view range whose bytes in the subfile are the packed
 * bytes [k * CHUNK, (k + 1) * CHUNK): view_cut finds where it ends.
 *
 * A collective write is held whole (its operation merges every
 * participant's pieces in subfile order) when the connection's share of
 * the buffer pool allows.  When it does not, its piece is written at once
 * in pieces and it joins its operation with an empty range, as the
 * direct path does (iod_collective.c, rule 5): the participants still
 * meet, only this piece is not merged.
 *
 * Reads whose data passes the connection's share are gathered piece by
 * piece while the reply is sent (clf_conn_send_stream); a collective read
 * joins with an empty range first, as iod_direct_view_read does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "iod_server.h"
#include "iod_viewio.h"
#include "mapping_prog.h"
#include "proto.h"

/*
 * The view offset *at in [lo, hi] such that [lo, *at) holds want bytes of
 * the subfile (hi when it holds fewer): 0 or a negative errno.  From the
 * mapping's table when it has one: a binary search, not a walk.
 */
static int view_cut(const CLF_Mapping *m, int64_t lo, int64_t hi,
		    int64_t want, int64_t *at)
{
	return clf_mapping_cut(m, lo, hi, want, at);
}

size_t iod_stream_head_len(const struct clf_proto_header *h)
{
	size_t head;

	switch (h->opcode) {
	case CLF_PROTO_OP_SUB_WRITE:
		head = CLF_PROTO_SUB_WRITE_HEAD;
		break;
	case CLF_PROTO_OP_VIEW_WRITE:
		head = CLF_PROTO_VIEW_WRITE_HEAD;
		break;
	default:
		return 0;
	}
	return h->payload_len > IOD_STREAM_CHUNK ? head : 0;
}

/* ------------------------------------------------------------------ */
/* Writes                                                              */
/* ------------------------------------------------------------------ */

/* Where the pieces of a write go. */
struct sink {
	struct iod_conn *cn;
	struct iod_view *v;	/* borrowed; NULL: a SUB_WRITE */
	uint64_t file;		/* SUB_WRITE */
	uint32_t subfile;
	int64_t off;		/* SUB_WRITE: subfile offset of the next */
	int64_t lo, hi;		/* VIEW_WRITE: view range left */
};

/* Write the n bytes of buf, the next piece: 0 or a negative errno. */
static int sink_put(struct sink *k, const void *buf, size_t n)
{
	struct iod_server *srv = k->cn->srv;
	struct iod_sieve sv;
	int64_t at, w;
	int err;

	iod_hook_before_write(srv, n);
	if (!k->v) {
		w = iod_store_write(srv->st, k->file, k->subfile, k->off, buf,
				    n);
		if (w < 0)
			return (int)w;
		k->off += (int64_t)n;
		return 0;
	}
	err = view_cut(k->v->map, k->lo, k->hi, (int64_t)n, &at);
	if (err)
		return err;
	sv = iod_conn_sieve_begin(k->cn);
	w = iod_view_write(srv->st, k->v, k->lo, at, buf, n, &sv);
	iod_conn_sieve_end(k->cn);
	if (w < 0)
		return (int)w;
	k->lo = at;
	return 0;
}

/*
 * Receive len data bytes in pieces and write them to k.  After a write
 * error the rest is received and dropped.  Returns the bytes written or
 * the first error (message kept); *broken when the connection failed.
 */
static int64_t stream_in(struct sink *k, size_t len, bool *broken)
{
	struct iod_conn *cn = k->cn;
	struct clf_error why;
	size_t done = 0;
	int werr = 0, err;

	err = iod_conn_reserve(cn, len < IOD_STREAM_CHUNK ? len
							 : IOD_STREAM_CHUNK);
	if (err) {
		*broken = iod_conn_drain(cn, len) != 0;
		return err;
	}
	while (done < len) {
		size_t n = len - done < IOD_STREAM_CHUNK ? len - done
							 : IOD_STREAM_CHUNK;

		if (clf_conn_recv_payload(cn->c, cn->buf, n)) {
			*broken = true;
			return -ECONNRESET;
		}
		if (!werr) {
			werr = sink_put(k, cn->buf, n);
			if (werr)
				why = *clf_error_last();
		}
		if (!werr)
			atomic_fetch_add(&cn->srv->bytes_written, n);
		done += n;
	}
	if (werr) {
		why.err = werr;
		return clf_error_restore(&why);
	}
	return (int64_t)len;
}

static int sub_write(struct iod_conn *cn, const struct clf_proto_header *h,
		     const uint8_t *head, size_t head_len,
		     struct iod_reply *rep, bool *broken)
{
	struct wire_reader r = { head, head_len, 0, false };
	struct clf_proto_sub_write_req m;
	struct sink k = { .cn = cn };
	int64_t n;

	if (clf_proto_sub_write_req_decode_head(&r, h->payload_len, &m))
		return IOD_DIRECT_DECLINED;
	k.file = m.file;
	k.subfile = m.subfile;
	k.off = m.offset;
	n = stream_in(&k, m.data.len, broken);
	if (n < 0)
		return (int)n;
	return iod_reply_u32(rep, (uint32_t)n);
}

/* Refuse a write whose head was read: drop its data, answer err. */
static int refuse_data(struct iod_conn *cn, size_t left, int err,
		       bool *broken)
{
	struct clf_error why = *clf_error_last();

	*broken = iod_conn_drain(cn, left) != 0;
	why.err = err;
	return clf_error_restore(&why);
}

static int view_write(struct iod_conn *cn, const struct clf_proto_header *h,
		      const uint8_t *head, size_t head_len,
		      struct iod_reply *rep, bool *broken)
{
	struct wire_reader r = { head, head_len, 0, false };
	struct clf_proto_view_io_req m;
	struct iod_view *v;	/* a reference, put below */
	struct sink k = { .cn = cn };
	int64_t count, n, joined;
	int err;

	if (clf_proto_view_write_req_decode_head(&r, h->payload_len, &m))
		return IOD_DIRECT_DECLINED;
	err = iod_view_lookup(cn->srv->views, m.handle, cn->owner, &v);
	if (err)
		return refuse_data(cn, m.data.len, err, broken);
	count = CLF_Mapping_count(v->map, m.lo, m.hi);
	if (count != (int64_t)m.data.len) {
		err = count < 0 ? (int)count : -EINVAL;
		clf_fail_neg(err,
			     "iod: view %" PRIu32 ": %" PRIu32 " bytes written to [%" PRId64 ", %" PRId64 "), which holds %" PRId64 " in the subfile",
			     m.handle, m.data.len, m.lo, m.hi, count);
		iod_view_put(v);
		return refuse_data(cn, m.data.len, err, broken);
	}
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE) {
		/* Held whole for the merge when the share allows. */
		err = iod_conn_reserve(cn, h->payload_len);
		if (err != -ENOBUFS) {
			iod_view_put(v);
			return err ? refuse_data(cn, m.data.len, err, broken)
				   : IOD_DIRECT_DECLINED;
		}
	}
	k.v = v;
	k.lo = m.lo;
	k.hi = m.hi;
	n = stream_in(&k, m.data.len, broken);
	if (!*broken && (m.flags & CLF_PROTO_VIEW_COLLECTIVE)) {
		/* The others wait for this participant, even after a failed
		 * write; its own error wins over theirs. */
		joined = iod_coll_join(cn->srv, v, m.coll_tag, m.participants,
				       1, m.lo, m.lo, NULL, 0);
		if (n >= 0 && joined < 0)
			n = joined;
	}
	iod_view_put(v);
	if (n < 0)
		return (int)n;
	return iod_reply_u32(rep, (uint32_t)n);
}

int iod_stream_write(struct iod_conn *cn, const struct clf_proto_header *h,
		     const uint8_t *head, size_t head_len,
		     struct iod_reply *rep, bool *broken)
{
	*broken = false;
	if (h->opcode == CLF_PROTO_OP_SUB_WRITE)
		return sub_write(cn, h, head, head_len, rep, broken);
	return view_write(cn, h, head, head_len, rep, broken);
}

/* ------------------------------------------------------------------ */
/* Reads                                                               */
/* ------------------------------------------------------------------ */

/* A reply made while it is sent. */
struct iod_stream {
	struct iod_conn *cn;
	struct iod_view *v;	/* a reference; NULL: a SUB_READ */
	uint64_t file;		/* SUB_READ */
	uint32_t subfile;
	int64_t off;		/* SUB_READ: subfile offset of payload 0 */
	int64_t lo, hi;		/* VIEW_READ: view range not yet made */
	size_t made;		/* data bytes made so far */
};

void iod_stream_free(struct iod_stream *s)
{
	if (!s)
		return;
	iod_view_put(s->v);
	free(s);
}

/* clf_conn_fill_fn: data bytes [off, off + n), made in order. */
static int fill(void *arg, void *buf, size_t off, size_t n)
{
	struct iod_stream *s = arg;
	struct iod_server *srv = s->cn->srv;
	struct iod_sieve sv;
	int64_t at, got;
	int err;

	if (off != s->made)
		return clf_fail(EINVAL, "iod: stream out of order");
	if (!s->v) {
		got = iod_store_read(srv->st, s->file, s->subfile,
				     s->off + (int64_t)off, buf, n);
		if (got < 0)
			return (int)got;
		/* Cut meanwhile: the length was announced; zeros. */
		memset((uint8_t *)buf + got, 0, n - (size_t)got);
	} else {
		err = view_cut(s->v->map, s->lo, s->hi, (int64_t)n, &at);
		if (err)
			return err;
		sv = iod_conn_sieve_begin(s->cn);
		got = iod_view_read(srv->st, s->v, s->lo, at, buf, n, &sv);
		iod_conn_sieve_end(s->cn);
		if (got < 0)
			return (int)got;
		s->lo = at;
	}
	s->made += n;
	return 0;
}

/* rep as a streamed data reply of len bytes from s (taken over). */
static int stream_reply(struct iod_reply *rep, struct iod_stream *s,
			size_t len)
{
	struct wire_writer w = { rep->head, sizeof(rep->head), 0 };
	struct clf_proto_data m = { { rep->head, (uint32_t)len } };
	void *scratch;	/* the connection's reply buffer, used by fill */
	int err;

	/* The head encoder reads the length only. */
	err = clf_proto_data_encode_head(&w, &m);
	if (!err && w.pos > w.cap)
		err = clf_fail(EOVERFLOW, "iod: reply body of %zu bytes",
			       w.pos);
	if (!err)
		err = iod_conn_data_buffer(s->cn, IOD_STREAM_CHUNK, &scratch);
	if (err) {
		iod_stream_free(s);
		return err;
	}
	rep->head_len = w.pos;
	rep->data_len = len;
	rep->stream = s;
	return 0;
}

int iod_stream_view_read(struct iod_conn *cn, struct iod_view *v,
			 const struct clf_proto_view_io_req *m, int64_t count,
			 struct iod_reply *rep)
{
	struct iod_stream *s;
	int64_t joined;

	if (m->flags & CLF_PROTO_VIEW_COLLECTIVE) {
		joined = iod_coll_join(cn->srv, v, m->coll_tag, m->participants,
				       0, m->lo, m->lo, NULL, 0);
		if (joined < 0)
			return (int)joined;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return clf_fail(ENOMEM, "iod: out of memory");
	atomic_fetch_add(&v->refs, 1);
	*s = (struct iod_stream){ .cn = cn, .v = v, .lo = m->lo,
				  .hi = m->hi };
	return stream_reply(rep, s, (size_t)count);
}

int iod_stream_sub_read(struct iod_conn *cn, uint64_t file, uint32_t subfile,
			int64_t off, size_t len, struct iod_reply *rep)
{
	struct iod_stream *s;
	int64_t size;
	int err = iod_store_size(cn->srv->st, file, subfile, &size);

	if (err)
		return err;
	/* Short at the end of the subfile, like pread. */
	if (off >= size)
		len = 0;
	else if ((uint64_t)(size - off) < len)
		len = (size_t)(size - off);
	s = calloc(1, sizeof(*s));
	if (!s)
		return clf_fail(ENOMEM, "iod: out of memory");
	*s = (struct iod_stream){ .cn = cn, .file = file, .subfile = subfile,
				  .off = off };
	err = stream_reply(rep, s, len);
	if (!err)
		atomic_fetch_add(&cn->srv->bytes_read, len);
	return err;
}

int iod_stream_send(struct iod_conn *cn, const struct clf_proto_header *h,
		    const struct iod_reply *rep)
{
	struct iovec head = { (void *)rep->head, rep->head_len };

	return clf_conn_send_stream(cn->c, h, &head, 1, rep->data_len, fill,
				    rep->stream, cn->out, IOD_STREAM_CHUNK);
}
