// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_xfer.c -- how a request's data travels (iod_xfer.h).
 *
 * DIRECT: a SUB_WRITE, or a VIEW_WRITE whose view range maps onto its
 * subfile as one run -- a view that falls on the subfile contiguously,
 * the case that declaring the layout after the views makes the common
 * one -- needs its bytes in memory for nothing.  They move with
 * clf_conn_recv_payload_to_file (splice on TCP: one copy, into the page
 * cache, instead of one into the connection buffer and one out of it).
 * On 2 cores shared by clients and iods, that copy was a third of the
 * iod's time in a stream of such writes.  Reads of one run go the other
 * way: the reply's data is sent from the subfile with clf_conn_send_file
 * (sendfile on TCP: the page cache's pages go to the socket by
 * reference; no pread copy, no send copy).
 *
 * Everything else -- several runs (sieving and coalescing want the bytes
 * in memory), small transfers (a copy is cheaper than the extra calls),
 * a store that cannot splice -- goes through memory, or in pieces when
 * the data is too big to hold (iod_stream.c).
 *
 * The plan is made before a data byte moves, so that whatever the way,
 * a request is checked, refused and answered the same: only the copies
 * differ.
 */
#include <errno.h>
#include <sys/stat.h>

#include "clf.h"
#include "error.h"
#include "iod_xfer.h"

/* Data below this many bytes goes through memory: one copy is cheap. */
#define DIRECT_MIN ((size_t)64 << 10)
/* Data received into memory comes in pieces of this size (iod_conn_recv
 * explains why). */
#define RECV_CHUNK ((size_t)1 << 20)

/* The first run of a view range, and whether another follows. */
struct first_run {
	int64_t sub;		/* subfile offset */
	int64_t len;
	int runs;		/* seen, up to 2 */
};

#define ANOTHER_RUN 1	/* stops the walk: not a negative errno */

static int on_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct first_run *f = arg;

	(void)v;
	if (f->runs++)
		return ANOTHER_RUN;
	f->sub = s;
	f->len = len;
	return 0;
}

/* Whether the len bytes of d are one run of its subfile, at *off. */
static bool one_run(const struct iod_dest *d, size_t len, int64_t *off)
{
	struct first_run run = { 0 };
	int err;

	if (!d->v) {
		*off = d->off;
		return d->off >= 0;
	}
	err = CLF_Mapping_foreach(d->v->map, d->lo, d->hi, on_run, &run);
	if ((err && err != ANOTHER_RUN) || run.runs != 1 ||
	    run.len != (int64_t)len)
		return false;
	*off = run.sub;
	return true;
}

/* The DIRECT plan for len bytes of d, if it fits: true and x. */
static bool plan_direct(struct iod_conn *cn, const struct iod_dest *d,
			size_t len, int flags, struct iod_xfer *x)
{
	uint64_t file = d->v ? d->v->file : d->file;
	uint32_t subfile = d->v ? d->v->subfile : d->subfile;

	if (len < DIRECT_MIN || !one_run(d, len, &x->off))
		return false;
	/* No such subfile (reads), or it cannot be had: the other ways
	 * meet the same case and answer it as they always do. */
	if (iod_subfile_get(cn->srv->st, file, subfile, flags, &x->sf))
		return false;
	x->mode = IOD_XFER_DIRECT;
	return true;
}

int iod_xfer_plan_write(struct iod_conn *cn, const struct iod_req *rq,
			const struct iod_dest *d, size_t len, bool hold,
			struct iod_xfer *x)
{
	int err;

	*x = (struct iod_xfer){ .mode = IOD_XFER_MEMORY };
	if (iod_store_direct_ok(cn->srv->st) &&
	    plan_direct(cn, d, len, IOD_CREATE, x))
		return 0;
	if (!hold && rq->h->payload_len > IOD_STREAM_CHUNK) {
		x->mode = IOD_XFER_PIECES;
		return 0;
	}
	err = iod_conn_reserve(cn, len);
	if (err == -ENOBUFS && hold) {
		/* Over the share: written at once, in pieces. */
		x->mode = IOD_XFER_PIECES;
		return 0;
	}
	if (err)
		return err;
	x->buf = cn->buf;
	return 0;
}

int iod_xfer_plan_read(struct iod_conn *cn, const struct iod_dest *d,
		       size_t len, struct iod_xfer *x)
{
	void *buf;
	int err;

	*x = (struct iod_xfer){ .mode = IOD_XFER_MEMORY };
	if (plan_direct(cn, d, len, 0, x))
		return 0;
	err = iod_conn_data_buffer(cn, len, &buf);
	if (err == -ENOBUFS) {
		/* Over this client's share: gathered while it is sent. */
		x->mode = IOD_XFER_PIECES;
		return 0;
	}
	if (err)
		return err;
	x->buf = buf;
	return 0;
}

void iod_xfer_done(struct iod_xfer *x)
{
	iod_subfile_put(x->sf);
	x->sf = NULL;
}

/* ------------------------------------------------------------------ */
/* Writes                                                              */
/* ------------------------------------------------------------------ */

/* iod_source_fn: the request's connection, the source of a subfile
 * write. */
static int from_conn(void *arg, int fd, int64_t off, size_t len,
		     int *file_err, size_t *written)
{
	return iod_recv_payload_to_file(arg, fd, off, len, file_err, written);
}

/* Splice len bytes from the connection into x's run, under a range
 * lock: len or a negative errno (*broken: the connection's). */
static int64_t write_direct(struct iod_conn *cn, const struct iod_xfer *x,
			    size_t len, bool *broken)
{
	struct iod_range r;
	ssize_t n;

	iod_hook_before_write(cn->srv, len);
	iod_rangelock_lock(&x->sf->lock, &r, x->off, x->off + (int64_t)len);
	n = iod_subfile_write_from(x->sf, from_conn, cn->c, len, x->off,
				   broken);
	iod_rangelock_unlock(&x->sf->lock, &r);
	if (n > 0)
		atomic_fetch_add(&cn->srv->bytes_written, (uint64_t)n);
	return n;
}

int iod_xfer_receive(struct iod_conn *cn, struct iod_req *rq, size_t len,
		     const struct iod_xfer *x)
{
	int err = iod_conn_recv(cn, x->buf, len, RECV_CHUNK, true, NULL,
				NULL, &rq->broken);

	if (!err)
		rq->left -= len;
	return err;
}

int64_t iod_xfer_store(struct iod_conn *cn, const struct iod_dest *d,
		       const void *buf, size_t len)
{
	struct iod_server *srv = cn->srv;
	struct iod_sieve sv;
	int64_t n;

	iod_hook_before_write(srv, len);
	if (!d->v) {
		n = iod_store_write(srv->st, d->file, d->subfile, d->off, buf,
				    len);
	} else {
		sv = iod_conn_sieve_begin(cn);
		n = iod_view_write(srv->st, d->v, d->lo, d->hi, buf, len, &sv);
		iod_conn_sieve_end(cn);
	}
	if (n > 0)
		atomic_fetch_add(&srv->bytes_written, (uint64_t)n);
	return n;
}

int64_t iod_xfer_write(struct iod_conn *cn, struct iod_req *rq,
		       const struct iod_dest *d, size_t len,
		       const struct iod_xfer *x)
{
	int64_t n;
	int err;

	switch (x->mode) {
	case IOD_XFER_DIRECT:
		n = write_direct(cn, x, len, &rq->broken);
		break;
	case IOD_XFER_PIECES:
		n = iod_stream_write(cn, d, len, &rq->broken);
		break;
	default:
		err = iod_xfer_receive(cn, rq, len, x);
		return err ? err : iod_xfer_store(cn, d, x->buf, len);
	}
	/* Received whole even when the write failed, unless the
	 * connection did. */
	if (!rq->broken)
		rq->left -= len;
	return n;
}

/* ------------------------------------------------------------------ */
/* Reads                                                               */
/* ------------------------------------------------------------------ */

static int read_direct(const struct iod_dest *d, size_t len,
		       struct iod_xfer *x, struct iod_reply *rep)
{
	struct stat sb;
	size_t n = len;
	int err;

	if (!d->v) {
		/* Short at the end of the subfile, like pread. */
		if (fstat(x->sf->fd, &sb))
			return clf_fail(errno, "iod: cannot stat subfile %u of file 0x%llx",
					(unsigned)d->subfile,
					(unsigned long long)d->file);
		n = 0;
		if (sb.st_size > d->off)
			n = (uint64_t)(sb.st_size - d->off) < len ?
			    (size_t)(sb.st_size - d->off) : len;
	}
	err = iod_reply_file(rep, x->sf, x->off, n);
	if (!err)
		x->sf = NULL;	/* the reply's now */
	return err;
}

int iod_xfer_read(struct iod_conn *cn, const struct iod_dest *d, size_t len,
		  struct iod_xfer *x, struct iod_reply *rep)
{
	struct iod_server *srv = cn->srv;
	struct iod_sieve sv;
	int64_t n;
	int err;

	switch (x->mode) {
	case IOD_XFER_DIRECT:
		err = read_direct(d, len, x, rep);
		break;
	case IOD_XFER_PIECES:
		err = iod_stream_read(cn, d, len, rep);
		break;
	default:
		if (!d->v) {
			n = iod_store_read(srv->st, d->file, d->subfile, d->off,
					   x->buf, len);
		} else {
			sv = iod_conn_sieve_begin(cn);
			n = iod_view_read(srv->st, d->v, d->lo, d->hi, x->buf,
					  len, &sv);
			iod_conn_sieve_end(cn);
		}
		err = n < 0 ? (int)n : iod_reply_data(rep, x->buf, (size_t)n);
		break;
	}
	if (!err)
		atomic_fetch_add(&srv->bytes_read, rep->data_len);
	return err;
}
