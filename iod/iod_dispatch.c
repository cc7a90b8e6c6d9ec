// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_dispatch.c -- the table of the opcodes the iod serves, and the
 * service of one request: check, receive, handle, reply.
 *
 * What arrives is checked before it is trusted: the header by the
 * transport (magic, version, payload limit), then the payload length
 * against the largest body of the opcode before anything is allocated,
 * then the body by the protocol decoders in the handler.  A request we
 * refuse whole (an unknown opcode: -ENOSYS; a body longer than its
 * opcode allows: -E2BIG; a reply flag on a request: -EPROTO) has its
 * payload skipped and an error reply; a malformed body gets the
 * decoder's error (-EPROTO, -E2BIG); in all these cases the connection
 * goes on.  A broken stream (bad header, payload over the protocol's
 * limit, truncated payload) closes the connection.  Each such event is
 * one log line; nothing a peer sends can crash the daemon.
 *
 * A write (an opcode with a head length below) is received up to its
 * data only: its handler decodes the head, then moves the data in the
 * way iod_xfer.c plans.  Whatever a handler leaves of the payload is
 * received and dropped here before the reply, so that the connection
 * stays in step.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap.h"
#include "clf.h"
#include "error.h"
#include "iod_cap.h"
#include "iod_dispatch.h"
#include "iod_fence.h"
#include "iod_lock_ops.h"
#include "iod_log.h"
#include "iod_ops.h"
#include "iod_stream.h"

/* Room for an error reply's body. */
#define ERR_BODY_MAX (2 + CLF_PROTO_ERRMSG_MAX)

/*
 * Fixed parts of the bodies (clf_proto.h), from the protocol's own
 * constants: a VIEW_READ is a VIEW_WRITE's head without its u32 data
 * length; a SUB_READ has a SUB_WRITE head's fields (file, subfile,
 * offset, a u32 length).
 */
#define VIEW_READ_BODY (CLF_PROTO_VIEW_WRITE_HEAD - 4)
#define SUB_READ_BODY CLF_PROTO_SUB_WRITE_HEAD
#define VIEW_REGISTER_MAX (8 + 4 + 2 * (8 + 4 + CLF_PROTO_TYPE_MAX_BYTES))
#define WRITE_MAX(head) ((head) + (int64_t)CLF_PROTO_DATA_MAX)
/* SUB_READV: file, n, and n x (subfile, offset, length); a SUB_WRITEV
 * adds its data, received whole (iod_ops_vec.c). */
#define SUB_READV_MAX (8 + 4 + 16 * CLF_PROTO_SUB_VEC_MAX)
#define SUB_WRITEV_MAX (SUB_READV_MAX + 4 + CLF_PROTO_SUB_VEC_DATA_MAX)
/* The longest head received before a handler runs. */
#define HEAD_MAX (CLF_PROTO_VIEW_WRITE_HEAD > CLF_PROTO_SUB_WRITE_HEAD ? \
		  CLF_PROTO_VIEW_WRITE_HEAD : CLF_PROTO_SUB_WRITE_HEAD)

static const struct iod_op {
	uint16_t op;
	int64_t payload_max;	/* the largest valid body */
	size_t head;		/* a write: the bytes before its data; 0:
				   the body is received whole */
	iod_handler fn;
} ops[] = {
	{ CLF_PROTO_OP_PING, 0, 0, iod_op_ping },
	{ CLF_PROTO_OP_STATUS, 0, 0, iod_op_status },
	{ CLF_PROTO_OP_SUB_READ, SUB_READ_BODY, 0, iod_op_sub_read },
	{ CLF_PROTO_OP_SUB_WRITE, WRITE_MAX(CLF_PROTO_SUB_WRITE_HEAD),
	  CLF_PROTO_SUB_WRITE_HEAD, iod_op_sub_write },
	{ CLF_PROTO_OP_VIEW_REGISTER, VIEW_REGISTER_MAX, 0,
	  iod_op_view_register },
	{ CLF_PROTO_OP_VIEW_RELEASE, 4, 0, iod_op_view_release },
	{ CLF_PROTO_OP_VIEW_READ, VIEW_READ_BODY, 0, iod_op_view_read },
	{ CLF_PROTO_OP_VIEW_WRITE, WRITE_MAX(CLF_PROTO_VIEW_WRITE_HEAD),
	  CLF_PROTO_VIEW_WRITE_HEAD, iod_op_view_write },
	{ CLF_PROTO_OP_SYNC, 8, 0, iod_op_sync },
	{ CLF_PROTO_OP_TRUNCATE, 8 + 4 + 8, 0, iod_op_truncate },
	{ CLF_PROTO_OP_REMOVE, 8 + 4, 0, iod_op_remove },
	{ CLF_PROTO_OP_IOD_STATFS, 0, 0, iod_op_statfs },
	{ CLF_PROTO_OP_SUB_SIZES, 8 + 4 + 4 * CLF_PROTO_SUB_SIZES_MAX, 0,
	  iod_op_sub_sizes },
	{ CLF_PROTO_OP_CAP, CLF_CAP_WIRE, 0, iod_op_cap },
	{ CLF_PROTO_OP_SUB_LIST, 8 + 4 + 4, 0, iod_op_sub_list },
	{ CLF_PROTO_OP_SUB_READV, SUB_READV_MAX, 0, iod_op_sub_readv },
	{ CLF_PROTO_OP_SUB_WRITEV, SUB_WRITEV_MAX, 0, iod_op_sub_writev },
	{ CLF_PROTO_OP_LOCK_CALLBACK, 8, 0, iod_op_lock_callback },
	{ CLF_PROTO_OP_LOCK_ENQUEUE, 8 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8, 0,
	  iod_op_lock_enqueue },
	{ CLF_PROTO_OP_LOCK_RELEASE, 8 + 8, 0, iod_op_lock_release },
	{ CLF_PROTO_OP_SUB_SIZES_MANY, 4 + 12 * CLF_PROTO_SUB_BATCH_MAX, 0,
	  iod_op_sub_sizes_many },
	{ CLF_PROTO_OP_REMOVE_MANY, 4 + 8 * CLF_PROTO_SUB_BATCH_MAX, 0,
	  iod_op_remove_many },
	{ CLF_PROTO_OP_FENCE, 8 + 4, 0, iod_op_fence },
	{ CLF_PROTO_OP_VIEW_MERGED, CLF_PROTO_PAYLOAD_MAX, 0,
	  iod_op_view_merged },
};

_Static_assert(VIEW_REGISTER_MAX <= CLF_PROTO_PAYLOAD_MAX &&
	       WRITE_MAX(CLF_PROTO_VIEW_WRITE_HEAD) <= CLF_PROTO_PAYLOAD_MAX &&
	       WRITE_MAX(CLF_PROTO_SUB_WRITE_HEAD) <= CLF_PROTO_PAYLOAD_MAX,
	       "every request body fits in a message");

static const struct iod_op *op_find(uint16_t op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == op)
			return &ops[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

/* An error reply: status err, the message of msg (cut to the limit). */
static int send_error(struct iod_conn *cn, const struct clf_proto_header *req,
		      int err, const char *msg)
{
	uint8_t body[ERR_BODY_MAX];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_error e = { clf_proto_str_of(msg) };
	struct clf_proto_header h;

	if (e.message.len > CLF_PROTO_ERRMSG_MAX)
		e.message.len = CLF_PROTO_ERRMSG_MAX;
	clf_proto_header_init_reply(&h, req, err);
	if (clf_proto_error_encode(&w, &e) || w.pos > w.cap)
		w.pos = 0;	/* the status alone still tells the client */
	iod_hook_before_reply(cn->srv);
	return clf_conn_send_buf(cn->c, &h, body, w.pos);
}

static int send_reply(struct iod_conn *cn, const struct clf_proto_header *req,
		      const struct iod_reply *rep)
{
	char msg[CLF_PROTO_ERRMSG_MAX];
	struct clf_proto_header h;
	struct iovec iov[2];
	int n = 0, err;

	clf_proto_header_init_reply(&h, req, 0);
	iod_hook_before_reply(cn->srv);
	if (rep->stream) {
		err = iod_stream_send(cn, &h, rep);
		/* Failed before the header went: the client can be told. */
		if (err && !clf_conn_broken(cn->c)) {
			iod_errmsg(msg, sizeof(msg));
			err = send_error(cn, req, err, msg);
		}
		return err;
	}
	if (rep->head_len)
		iov[n++] = (struct iovec){ (void *)rep->head, rep->head_len };
	if (rep->file)
		return clf_conn_send_file(cn->c, &h, iov, n, rep->file->fd,
					  rep->file_off, rep->data_len);
	if (rep->data_len)
		iov[n++] = (struct iovec){ (void *)rep->data, rep->data_len };
	return clf_conn_send(cn->c, &h, iov, n);
}

/* Whether an error is worth a log line: the daemon's or the disk's, not
 * the everyday answers a client expects (no such view, bad range...). */
static bool log_worthy(int err)
{
	switch (-err) {
	case EIO: case ENOSPC: case EDQUOT: case EROFS: case ENOMEM:
	case ETIMEDOUT: case EPROTO: case E2BIG: case ENOSYS: case EMFILE:
	case ENFILE: case ESHUTDOWN:
		return true;
	default:
		return false;
	}
}

/* The last error without its reporter, for the log (which names us). */
static const char *last_error(void)
{
	return clf_error_reason();
}

/*
 * A request we will not serve (unknown opcode, a reply where a request
 * belongs...): skip its payload and answer err with "iod N: why",
 * keeping the connection.  Returns 0, or a transport error that ends it.
 */
static int refuse(struct iod_conn *cn, const struct clf_proto_header *h,
		  int err, const char *why)
{
	char msg[CLF_PROTO_ERRMSG_MAX];
	int rc = iod_conn_drain(cn, h->payload_len);

	iod_log("%s (%s): %s", clf_conn_peer(cn->c), cn->role, why);
	if (rc)
		return rc;
	snprintf(msg, sizeof(msg), "%s: %.900s", iod_log_name(), why);
	return send_error(cn, h, err, msg);
}

/* Check the header of h against the table: its entry, or NULL when the
 * request was refused (*err: 0, or the transport's error). */
static const struct iod_op *check(struct iod_conn *cn,
				  const struct clf_proto_header *h, int *err)
{
	const struct iod_op *op = op_find(h->opcode);
	const char *name = clf_proto_op_name(h->opcode);
	char msg[CLF_PROTO_ERRMSG_MAX];

	if (h->flags & CLF_PROTO_FLAG_REPLY) {
		snprintf(msg, sizeof(msg), "a reply (%s) where a request belongs",
			 name ? name : "unknown opcode");
		*err = refuse(cn, h, -EPROTO, msg);
		return NULL;
	}
	if (!op) {
		snprintf(msg, sizeof(msg), "opcode %u (%s) is not served here",
			 h->opcode, name ? name : "unknown");
		*err = refuse(cn, h, -ENOSYS, msg);
		return NULL;
	}
	if (h->payload_len > op->payload_max) {
		/* Nothing valid is that long; the transport bounds what we
		 * skip by CLF_PROTO_PAYLOAD_MAX and the timeout. */
		snprintf(msg, sizeof(msg),
			 "%s with a body of %" PRIu32 " bytes, at most %" PRId64,
			 name, h->payload_len, op->payload_max);
		*err = refuse(cn, h, -E2BIG, msg);
		return NULL;
	}
	return op;
}

int iod_serve(struct iod_conn *cn, const struct clf_proto_header *h)
{
	struct iod_reply rep = { .head_len = 0 };
	struct iod_req rq = { .h = h };
	const char *name = clf_proto_op_name(h->opcode);
	char msg[CLF_PROTO_ERRMSG_MAX];
	uint8_t head[HEAD_MAX];
	const struct iod_op *op;
	uint8_t *body = head;
	size_t want;
	int fenced = -1;
	int err = 0;

	atomic_fetch_add(&cn->srv->requests, 1);
	cn->nrequests++;
	op = check(cn, h, &err);
	if (!op)
		return err;
	/* The whole body, or a write's head (shorter when the body is:
	 * its decoder says what is missing). */
	want = h->payload_len;
	if (op->head && op->head < want)
		want = op->head;
	if (!op->head) {
		err = iod_conn_reserve(cn, want);
		if (err) {
			snprintf(msg, sizeof(msg), "%s", last_error());
			return refuse(cn, h, err, msg);
		}
		body = cn->buf;
	}
	err = iod_recv_payload(cn->c, body, want);
	if (err)
		goto broken;
	rq.r = (struct wire_reader){ body, want, 0, false };
	rq.left = h->payload_len - want;

	err = iod_cap_check(cn, h, body, want);
	if (!err)
		err = iod_fence_enter(&cn->srv->fences, cn->srv->views,
				      cn->owner, h, body, want, &fenced);
	if (err) {
		iod_log("%s (%s): %s", clf_conn_peer(cn->c), cn->role,
			last_error());
	} else {
		/* Bytes a caching client holds back come home first. */
		err = iod_lock_guard(cn, h, body, want);
		if (err) {
			iod_fence_leave(&cn->srv->fences, fenced);
			goto broken;
		}
		err = op->fn(cn, &rq, &rep);
		iod_fence_leave(&cn->srv->fences, fenced);
	}
	if (rq.broken)
		goto broken;
	/* The data of a write refused before it was received. */
	if (rq.left) {
		struct clf_error why = *clf_error_last();

		/* A handler must not leave data after a success. */
		why.err = err ? err : -EPROTO;
		if (iod_conn_drain(cn, rq.left))
			goto broken;
		err = clf_error_restore(&why);
	}
	if (!err && rep.sent) {
		/* Answered by the thread that did its collective's I/O. */
		err = rep.sent_err;
	} else if (err) {
		iod_errmsg(msg, sizeof(msg));
		if (log_worthy(err))
			iod_log("%s (%s): %s failed: %s", clf_conn_peer(cn->c),
				cn->role, name, last_error());
		err = send_error(cn, h, err, msg);
	} else {
		err = send_reply(cn, h, &rep);
	}
	free(rep.owned);
	if (rep.file)
		iod_subfile_put(rep.file);
	iod_stream_free(rep.stream);
	iod_conn_trim(cn, false);
	if (err)
		iod_log("%s (%s): cannot reply to %s: %s; closing",
			clf_conn_peer(cn->c), cn->role, name, last_error());
	return err;

broken:
	iod_log("%s (%s): %s: %s; closing", clf_conn_peer(cn->c), cn->role,
		name, last_error());
	free(rep.owned);
	if (rep.file)
		iod_subfile_put(rep.file);
	iod_stream_free(rep.stream);
	return err;
}
