// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_direct.c -- writes whose data lands on one contiguous subfile range
 * go from the connection straight into the subfile.
 *
 * A SUB_WRITE, or a VIEW_WRITE whose view range maps onto its subfile as
 * one run -- a view that falls on the subfile contiguously, the case that
 * declaring the layout after the views makes the common one -- needs its
 * bytes in memory for nothing.  The request loop receives the head of the
 * request only and hands it here; the data then moves with
 * clf_conn_recv_payload_to_file (splice on TCP: one copy, into the page
 * cache, instead of one into the connection buffer and one out of it).
 * On 2 cores shared by clients and iods, that copy was a third of the
 * iod's time in a stream of such writes.
 *
 * Everything else -- several runs (sieving and coalescing want the bytes
 * in memory), small writes (a copy is cheaper than the extra calls),
 * any error found before the data (the usual path reports it the usual
 * way), the limit_io test hook -- is declined before a data byte is read,
 * and the loop receives the payload and dispatches as usual.
 *
 * Reads of one run go the other way: the reply's data is sent from the
 * subfile with clf_conn_send_file (sendfile on TCP: the page cache's
 * pages go to the socket by reference; no pread copy, no send copy).
 *
 * A collective VIEW_WRITE writes its piece at once and then joins its
 * operation with an empty range: the participants still meet, and all
 * time out together when one never comes, but this piece is already in
 * the subfile -- one ordered request, as large as a merge could make it.
 * So a timed-out collective may have written the direct pieces (see
 * iod_collective.c, rule 5).  A collective VIEW_READ joins first, with an
 * empty range, and sends its piece once every participant came.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "clf.h"
#include "error.h"
#include "iod_server.h"
#include "proto.h"

/* Data below this many bytes is received into memory: one copy is cheap. */
#define DIRECT_MIN ((uint32_t)64 << 10)

size_t iod_direct_head_len(struct iod_server *srv,
			   const struct clf_proto_header *h)
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
	if (h->payload_len < head + DIRECT_MIN ||
	    !iod_store_direct_ok(srv->st))
		return 0;
	return head;
}

/* The request's connection as the source of a subfile write. */
static int from_conn(void *arg, int fd, int64_t off, size_t len,
		     int *file_err, size_t *written)
{
	return clf_conn_recv_payload_to_file(arg, fd, off, len, file_err,
					     written);
}

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

/*
 * Write the len payload bytes at off of (file, subfile), under a range
 * lock.  Returns len, or a negative errno (*broken: the connection's).
 * *declined when the subfile cannot be had: nothing was consumed.
 */
static ssize_t write_range(struct iod_conn *cn, uint64_t file,
			   uint32_t subfile, int64_t off, size_t len,
			   bool *broken, bool *declined)
{
	struct iod_subfile *sf;
	struct iod_range r;
	ssize_t n;

	*broken = false;
	*declined = iod_subfile_get(cn->srv->st, file, subfile, IOD_CREATE,
				    &sf) != 0;
	if (*declined)
		return 0;
	iod_hook_before_write(cn->srv, len);
	iod_rangelock_lock(&sf->lock, &r, off, off + (int64_t)len);
	n = iod_subfile_write_from(sf, from_conn, cn->c, len, off, broken);
	iod_rangelock_unlock(&sf->lock, &r);
	iod_subfile_put(sf);
	if (n > 0)
		atomic_fetch_add(&cn->srv->bytes_written, (uint64_t)n);
	return n;
}

static int sub_write(struct iod_conn *cn, const struct clf_proto_header *h,
		     const uint8_t *head, size_t head_len,
		     struct iod_reply *rep, bool *broken)
{
	struct wire_reader r = { head, head_len, 0, false };
	struct clf_proto_sub_write_req m;
	bool declined;
	ssize_t n;

	if (clf_proto_sub_write_req_decode_head(&r, h->payload_len, &m))
		return IOD_DIRECT_DECLINED;
	n = write_range(cn, m.file, m.subfile, m.offset, m.data.len, broken,
			&declined);
	if (declined)
		return IOD_DIRECT_DECLINED;
	if (n < 0)
		return (int)n;
	return iod_reply_u32(rep, (uint32_t)n);
}

static int view_write(struct iod_conn *cn, const struct clf_proto_header *h,
		      const uint8_t *head, size_t head_len,
		      struct iod_reply *rep, bool *broken)
{
	struct wire_reader r = { head, head_len, 0, false };
	struct clf_proto_view_io_req m;
	struct first_run run = { 0 };
	struct iod_view *v;	/* a reference, put below */
	bool declined;
	int64_t n, joined;
	int err;

	if (clf_proto_view_write_req_decode_head(&r, h->payload_len, &m))
		return IOD_DIRECT_DECLINED;
	if (iod_view_lookup(cn->srv->views, m.handle, cn->owner, &v))
		return IOD_DIRECT_DECLINED;
	err = CLF_Mapping_foreach(v->map, m.lo, m.hi, on_run, &run);
	if ((err && err != ANOTHER_RUN) || run.runs != 1 ||
	    run.len != (int64_t)m.data.len) {
		iod_view_put(v);
		return IOD_DIRECT_DECLINED;
	}
	n = write_range(cn, v->file, v->subfile, run.sub, m.data.len, broken,
			&declined);
	if (declined || *broken) {
		iod_view_put(v);
		return declined ? IOD_DIRECT_DECLINED : (int)n;
	}
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE) {
		/* Meet the others even after a failed write: they wait for
		 * this participant.  Its own error wins over theirs. */
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

int iod_direct_write(struct iod_conn *cn, const struct clf_proto_header *h,
		     const uint8_t *head, size_t head_len,
		     struct iod_reply *rep, bool *broken)
{
	*broken = false;
	if (h->opcode == CLF_PROTO_OP_SUB_WRITE)
		return sub_write(cn, h, head, head_len, rep, broken);
	return view_write(cn, h, head, head_len, rep, broken);
}

int iod_direct_sub_read(struct iod_conn *cn, uint64_t file, uint32_t subfile,
			int64_t off, size_t len, struct iod_reply *rep)
{
	struct iod_subfile *sf;
	struct stat sb;
	size_t n = 0;
	int err;

	if (len < DIRECT_MIN || off < 0 ||
	    iod_subfile_get(cn->srv->st, file, subfile, 0, &sf))
		return IOD_DIRECT_DECLINED;
	if (fstat(sf->fd, &sb)) {
		iod_subfile_put(sf);
		return IOD_DIRECT_DECLINED;
	}
	/* Short at the end of the subfile, like pread. */
	if (sb.st_size > off)
		n = (uint64_t)(sb.st_size - off) < len ? (size_t)(sb.st_size - off)
						       : len;
	err = iod_reply_file(rep, sf, off, n);
	if (err)
		iod_subfile_put(sf);
	return err;
}

int iod_direct_view_read(struct iod_conn *cn, const struct iod_view *v,
			 const struct clf_proto_view_io_req *m, int64_t count,
			 struct iod_reply *rep)
{
	struct first_run run = { 0 };
	struct iod_subfile *sf;
	int64_t joined;
	int err;

	if (count < (int64_t)DIRECT_MIN)
		return IOD_DIRECT_DECLINED;
	err = CLF_Mapping_foreach(v->map, m->lo, m->hi, on_run, &run);
	if ((err && err != ANOTHER_RUN) || run.runs != 1 || run.len != count)
		return IOD_DIRECT_DECLINED;
	/* Before joining: once joined, the usual path cannot take over. */
	if (iod_subfile_get(cn->srv->st, v->file, v->subfile, 0, &sf))
		return IOD_DIRECT_DECLINED;
	if (m->flags & CLF_PROTO_VIEW_COLLECTIVE) {
		joined = iod_coll_join(cn->srv, v, m->coll_tag,
				       m->participants, 0, m->lo, m->lo, NULL,
				       0);
		if (joined < 0) {
			iod_subfile_put(sf);
			return (int)joined;
		}
	}
	err = iod_reply_file(rep, sf, run.sub, (size_t)count);
	if (err)
		iod_subfile_put(sf);
	return err;
}
