// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_ops_io.c -- the handlers of the four data requests: SUB_READ,
 * SUB_WRITE, VIEW_READ, VIEW_WRITE (iod_ops.h).
 *
 * One path per request.  A write's head is decoded by the protocol's
 * head decoder (its data is still in the connection: iod_dispatch.c
 * received the head alone), checked, and only then is its data moved,
 * in whichever way iod_xfer.c plans: into memory, straight into the
 * subfile, or in pieces.  The way changes the copies, never the answer,
 * the fault hooks or what a collective operation leaves written.
 *
 * Collective writes (iod_collective.c): a piece held in memory joins its
 * operation with its data, to be merged with the others' in subfile
 * order.  A piece that could not be held, or that is one run of the
 * subfile (one ordered request, as large as a merge could make it), is
 * written as it arrives and joins with an empty range: the participants
 * still meet, and all time out together when one never comes.  So that
 * a collective write leaves the same bytes whichever way its pieces
 * came, a held piece that its operation did not take (discarded at the
 * timeout or when the iod stops, or refused) is then written on its
 * own, like the others; the participant still gets the operation's
 * error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "clf.h"
#include "error.h"
#include "iod_collective.h"
#include "iod_ops.h"
#include "iod_xfer.h"

/* Whether a join's error means the operation did no I/O with this
 * participant's data (iod_coll_join). */
static bool not_taken(int64_t err)
{
	return err == -ETIMEDOUT || err == -ESHUTDOWN || err == -EINVAL ||
	       err == -E2BIG;
}

/* Whether the client sends this collective request again, after its
 * iod broke off (iod_coll_join). */
static bool coll_again(const struct clf_proto_view_io_req *m)
{
	return m->flags & CLF_PROTO_VIEW_AGAIN;
}

/* How many packed bytes [lo, hi) of v holds in its subfile. */
static int64_t view_count(const struct iod_view *v, int64_t lo, int64_t hi)
{
	int64_t count = CLF_Mapping_count(v->map, lo, hi);

	if (count < 0)
		return clf_fail_neg((int)count,
				    "iod: view %" PRIu32 ": bad range [%" PRId64 ", %" PRId64 ")",
				    v->handle, lo, hi);
	return count;
}

int iod_op_sub_read(struct iod_conn *cn, struct iod_req *rq,
		    struct iod_reply *rep)
{
	struct clf_proto_sub_read_req m;
	struct iod_xfer x = { 0 };
	struct iod_dest d;
	int err = clf_proto_sub_read_req_decode(&rq->r, &m);

	if (err)
		return err;
	d = (struct iod_dest){ .file = m.file, .subfile = m.subfile,
			       .off = m.offset };
	err = iod_xfer_plan_read(cn, &d, m.length, &x);
	if (!err)
		err = iod_xfer_read(cn, &d, m.length, &x, rep);
	iod_xfer_done(&x);
	return err;
}

int iod_op_sub_write(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep)
{
	struct clf_proto_sub_write_req m;
	struct iod_xfer x = { 0 };
	struct iod_dest d;
	int64_t n;
	int err = clf_proto_sub_write_req_decode_head(&rq->r,
						      rq->h->payload_len, &m);

	if (err)
		return err;
	d = (struct iod_dest){ .file = m.file, .subfile = m.subfile,
			       .off = m.offset };
	err = iod_xfer_plan_write(cn, rq, &d, m.data.len, false, &x);
	n = err ? err : iod_xfer_write(cn, rq, &d, m.data.len, &x);
	iod_xfer_done(&x);
	if (n < 0)
		return (int)n;
	return iod_reply_u32(rep, (uint32_t)n);
}

int iod_op_view_read(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep)
{
	struct clf_proto_view_io_req m;
	struct iod_xfer x = { 0 };
	struct iod_view *v;	/* a reference, put below */
	struct iod_dest d;
	int64_t count, n;
	int err = clf_proto_view_read_req_decode(&rq->r, &m);

	if (err)
		return err;
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE)
		iod_hook_coll_message(cn->srv, "VIEW_READ", 1);
	err = iod_view_lookup(cn->srv->views, m.handle, cn->owner, &v);
	if (err)
		return err;
	count = view_count(v, m.lo, m.hi);
	if (count < 0) {
		err = (int)count;
		goto put;
	}
	d = (struct iod_dest){ .v = v, .lo = m.lo, .hi = m.hi };
	err = iod_xfer_plan_read(cn, &d, (size_t)count, &x);
	if (err)
		goto put;
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE) {
		/* Held: the operation reads this piece with the others'.
		 * Else the participant joins with an empty range first, and
		 * its piece is read once every participant came. */
		if (x.mode == IOD_XFER_MEMORY) {
			struct iod_coll_answer ans = { cn, rq->h, rep };

			/* The reply is ready before the data is: the
			 * participant doing the I/O may send it. */
			err = iod_reply_data(rep, x.buf, (size_t)count);
			if (err)
				goto done;
			n = iod_coll_join(cn->srv, v, m.coll_tag,
					  m.participants, 0, coll_again(&m),
					  m.lo, m.hi, x.buf, (size_t)count,
					  &ans);
			err = n < 0 ? (int)n : 0;
			if (!err)
				atomic_fetch_add(&cn->srv->bytes_read,
						 (uint64_t)count);
			goto done;
		}
		n = iod_coll_join(cn->srv, v, m.coll_tag, m.participants, 0,
				  coll_again(&m), m.lo, m.lo, NULL, 0, NULL);
		if (n < 0) {
			err = (int)n;
			goto done;
		}
	}
	err = iod_xfer_read(cn, &d, (size_t)count, &x, rep);
done:
	iod_xfer_done(&x);
put:
	iod_view_put(v);
	return err;
}

/*
 * A collective piece held in memory (x): it joins its operation with its
 * data; when the operation did not take it, it is written on its own.
 * Returns what the participant is answered: its count, the operation's
 * error, or its own write's error (which wins).
 */
static int64_t write_held(struct iod_conn *cn, struct iod_req *rq,
			  const struct clf_proto_view_io_req *m,
			  const struct iod_dest *d, const struct iod_xfer *x,
			  struct iod_reply *rep)
{
	struct iod_coll_answer ans = { cn, rq->h, rep };
	struct clf_error why;	/* of the operation */
	int64_t n, own;
	int err = iod_xfer_receive(cn, rq, m->data.len, x);

	if (!err)	/* the count it is answered on success */
		err = iod_reply_u32(rep, m->data.len);
	if (err)
		return err;
	n = iod_coll_join(cn->srv, d->v, m->coll_tag, m->participants, 1,
			  coll_again(m), m->lo, m->hi, x->buf, m->data.len,
			  &ans);
	if (n >= 0)
		atomic_fetch_add(&cn->srv->bytes_written, (uint64_t)n);
	if (!not_taken(n))
		return n;
	why = *clf_error_last();
	own = iod_xfer_store(cn, d, x->buf, m->data.len);
	if (own < 0)
		return own;
	why.err = (int)n;
	return clf_error_restore(&why);
}

int iod_op_view_write(struct iod_conn *cn, struct iod_req *rq,
		      struct iod_reply *rep)
{
	struct clf_proto_view_io_req m;
	struct iod_xfer x = { 0 };
	struct iod_view *v;	/* a reference, put below */
	struct iod_dest d;
	int64_t count, n, joined;
	bool coll;
	int err = clf_proto_view_write_req_decode_head(&rq->r,
						       rq->h->payload_len, &m);

	if (err)
		return err;
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE)
		iod_hook_coll_message(cn->srv, "VIEW_WRITE", 1);
	err = iod_view_lookup(cn->srv->views, m.handle, cn->owner, &v);
	if (err)
		return err;
	count = CLF_Mapping_count(v->map, m.lo, m.hi);
	if (count != (int64_t)m.data.len) {
		n = clf_fail_neg(count < 0 ? (int)count : -EINVAL,
				 "iod: cannot write view %" PRIu32 ": view range [%" PRId64 ", %" PRId64 ") holds %" PRId64 " bytes of subfile %" PRIu32 " of file 0x%" PRIx64 ", not %" PRIu32,
				 m.handle, m.lo, m.hi, count, v->subfile,
				 v->file, m.data.len);
		goto put;
	}
	d = (struct iod_dest){ .v = v, .lo = m.lo, .hi = m.hi };
	coll = m.flags & CLF_PROTO_VIEW_COLLECTIVE;
	err = iod_xfer_plan_write(cn, rq, &d, m.data.len, coll, &x);
	if (err) {
		n = err;
	} else if (coll && x.mode == IOD_XFER_MEMORY) {
		n = write_held(cn, rq, &m, &d, &x, rep);
	} else {
		struct iod_coll_answer ans = { cn, rq->h, rep };

		n = iod_xfer_write(cn, rq, &d, m.data.len, &x);
		if (coll && !rq->broken) {
			/* The others wait for this participant, even after a
			 * failed write; its own error wins over theirs, and
			 * it is answered on its own then. */
			if (n >= 0 && iod_reply_u32(rep, (uint32_t)n) < 0)
				n = -ENOMEM;	/* cannot fail: 4 bytes */
			joined = iod_coll_join(cn->srv, v, m.coll_tag,
					       m.participants, 1,
					       coll_again(&m), m.lo, m.lo,
					       NULL, 0, n >= 0 ? &ans : NULL);
			if (n >= 0 && joined < 0)
				n = joined;
		}
	}
	iod_xfer_done(&x);
put:
	iod_view_put(v);
	if (n < 0)
		return (int)n;
	if (rep->sent)	/* by the participant that did the I/O */
		return 0;
	return iod_reply_u32(rep, (uint32_t)n);
}
