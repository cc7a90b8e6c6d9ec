// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_stream.c -- writes and reads too big to hold, in bounded pieces.
 *
 * A request announces up to 64 MiB of data.  Received whole before it is
 * written, it would cost the iod that much per connection as the bytes
 * trickle in -- 256 connections announcing big writes and sending them
 * slowly held 16 GiB.  So a write that iod_xfer.c sends this way is
 * received IOD_STREAM_CHUNK bytes at a time, each piece written before
 * the next is read: the iod holds one piece per connection, and a client
 * sending faster than the disk takes its data finds its socket full --
 * TCP's flow control is the backpressure.  The packed data of a
 * VIEW_WRITE is in view order, so piece k is the view range whose bytes
 * in the subfile are the packed bytes [k * CHUNK, (k + 1) * CHUNK):
 * view_cut finds where it ends.
 *
 * Reads whose data passes the connection's share are gathered piece by
 * piece while the reply is sent (clf_conn_send_stream).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "iod_stream.h"
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

/* ------------------------------------------------------------------ */
/* Writes                                                              */
/* ------------------------------------------------------------------ */

/* Where the pieces of a write go: d, advanced piece by piece. */
struct sink {
	struct iod_conn *cn;
	struct iod_dest d;
};

/* iod_piece_fn: write the next n bytes: 0 or a negative errno. */
static int sink_put(void *arg, const uint8_t *buf, size_t n)
{
	struct sink *k = arg;
	struct iod_server *srv = k->cn->srv;
	struct iod_sieve sv;
	int64_t at, w;
	int err;

	if (!k->d.v) {
		w = iod_store_write(srv->st, k->d.file, k->d.subfile, k->d.off,
				    buf, n);
		if (w < 0)
			return (int)w;
		k->d.off += (int64_t)n;
	} else {
		err = view_cut(k->d.v->map, k->d.lo, k->d.hi, (int64_t)n, &at);
		if (err)
			return err;
		sv = iod_conn_sieve_begin(k->cn);
		w = iod_view_write(srv->st, k->d.v, k->d.lo, at, buf, n, &sv);
		iod_conn_sieve_end(k->cn);
		if (w < 0)
			return (int)w;
		k->d.lo = at;
	}
	atomic_fetch_add(&srv->bytes_written, n);
	return 0;
}

int64_t iod_stream_write(struct iod_conn *cn, const struct iod_dest *d,
			 size_t len, bool *broken)
{
	struct sink k = { cn, *d };
	int err;

	*broken = false;
	err = iod_conn_reserve(cn, len < IOD_STREAM_CHUNK ? len
							 : IOD_STREAM_CHUNK);
	if (err) {
		/* The data is taken off the connection all the same. */
		*broken = iod_conn_drain(cn, len) != 0;
		return *broken ? -ECONNRESET : err;
	}
	iod_hook_before_write(cn->srv, len);
	err = iod_conn_recv(cn, cn->buf, len, IOD_STREAM_CHUNK, false,
			    sink_put, &k, broken);
	return err ? err : (int64_t)len;
}

/* ------------------------------------------------------------------ */
/* Reads                                                               */
/* ------------------------------------------------------------------ */

/* A reply made while it is sent. */
struct iod_stream {
	struct iod_conn *cn;
	struct iod_view *v;	/* a reference; NULL: a SUB_READ */
	struct iod_dest d;	/* advanced as pieces are made */
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
		got = iod_store_read(srv->st, s->d.file, s->d.subfile,
				     s->d.off + (int64_t)off, buf, n);
		if (got < 0)
			return (int)got;
		/* Cut meanwhile: the length was announced; zeros. */
		memset((uint8_t *)buf + got, 0, n - (size_t)got);
	} else {
		err = view_cut(s->v->map, s->d.lo, s->d.hi, (int64_t)n, &at);
		if (err)
			return err;
		sv = iod_conn_sieve_begin(s->cn);
		got = iod_view_read(srv->st, s->v, s->d.lo, at, buf, n, &sv);
		iod_conn_sieve_end(s->cn);
		if (got < 0)
			return (int)got;
		s->d.lo = at;
	}
	s->made += n;
	return 0;
}

int iod_stream_read(struct iod_conn *cn, const struct iod_dest *d, size_t len,
		    struct iod_reply *rep)
{
	struct iod_stream *s;
	void *scratch;	/* the connection's reply buffer, used by fill */
	int64_t size;
	int err;

	if (!d->v) {
		err = iod_store_size(cn->srv->st, d->file, d->subfile, &size);
		if (err)
			return err;
		/* Short at the end of the subfile, like pread. */
		if (d->off >= size)
			len = 0;
		else if ((uint64_t)(size - d->off) < len)
			len = (size_t)(size - d->off);
	}
	err = iod_conn_data_buffer(cn, IOD_STREAM_CHUNK, &scratch);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return clf_fail(ENOMEM, "iod: out of memory");
	*s = (struct iod_stream){ .cn = cn, .v = d->v, .d = *d };
	if (s->v)
		atomic_fetch_add(&s->v->refs, 1);
	err = iod_reply_stream(rep, s, len);
	if (err)
		iod_stream_free(s);
	return err;
}

int iod_stream_send(struct iod_conn *cn, const struct clf_proto_header *h,
		    const struct iod_reply *rep)
{
	struct iovec head = { (void *)rep->head, rep->head_len };

	return clf_conn_send_stream(cn->c, h, &head, 1, rep->data_len, fill,
				    rep->stream, cn->out, IOD_STREAM_CHUNK);
}
