// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_ops.c -- one handler per opcode the iod serves.
 *
 * A handler decodes its body (borrowing the connection's payload buffer:
 * bulk write data is used where it was received, never copied), calls the
 * storage engine and prepares the reply; iod_server.c sends it.  Bulk read
 * data is read into a buffer of exactly the reply's size and sent from
 * there after the encoded length (the "_encode_head" form), again with no
 * copy.  A handler returns 0, or a negative errno with the message for the
 * client in CLF_Last_error().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "cap.h"
#include "iod_cap.h"
#include "iod_merge.h"
#include "iod_server.h"
#include "iod_viewio.h"

typedef int (*iod_handler)(struct iod_conn *cn, struct wire_reader *r,
			   struct iod_reply *rep);

/* A writer onto the reply's small body. */
static struct wire_writer body_writer(struct iod_reply *rep)
{
	return (struct wire_writer){ rep->head, sizeof(rep->head), 0 };
}

/* After an encoder ran on w (returning err): the body's length, or err. */
static int body_done(struct iod_reply *rep, const struct wire_writer *w,
		     int err)
{
	if (!err && w->pos > w->cap)
		err = clf_fail(EOVERFLOW, "iod: reply body of %zu bytes",
			       w->pos);
	rep->head_len = err ? 0 : w->pos;
	return err;
}

static int reply_u32(struct iod_reply *rep, uint32_t v)
{
	struct clf_proto_u32 m = { v };
	struct wire_writer w = body_writer(rep);

	return body_done(rep, &w, clf_proto_u32_encode(&w, &m));
}

int iod_reply_u32(struct iod_reply *rep, uint32_t v)
{
	return reply_u32(rep, v);
}

int iod_reply_file(struct iod_reply *rep, struct iod_subfile *sf,
		   int64_t off, size_t len)
{
	/* The head encoder checks that bytes stand behind the length; they
	 * are in the file, and it reads the length only. */
	struct clf_proto_data m = { { rep->head, (uint32_t)len } };
	struct wire_writer w = body_writer(rep);
	int err = body_done(rep, &w, clf_proto_data_encode_head(&w, &m));

	if (err)
		return err;
	rep->data_len = len;
	rep->file = sf;
	rep->file_off = off;
	return 0;
}

/* Reply bytes32 data of len bytes at buf, the connection's data buffer. */
static int reply_data(struct iod_reply *rep, const void *buf, size_t len)
{
	struct clf_proto_data m = { { buf, (uint32_t)len } };
	struct wire_writer w = body_writer(rep);
	int err = body_done(rep, &w, clf_proto_data_encode_head(&w, &m));

	if (err)
		return err;
	rep->data = buf;
	rep->data_len = len;
	return 0;
}

void iod_hook_before_write(struct iod_server *srv, size_t len)
{
	uint64_t done;

	if (!srv->hooks.enospc_after || !len)
		return;
	done = atomic_load(&srv->bytes_written);
	if (done + len > srv->hooks.enospc_after)
		iod_store_fail_next_io(srv->st, ENOSPC);
}

/* ------------------------------------------------------------------ */
/* Any daemon                                                          */
/* ------------------------------------------------------------------ */

static int op_ping(struct iod_conn *cn, struct wire_reader *r,
		   struct iod_reply *rep)
{
	return clf_proto_empty_decode(r);
}

static int op_status(struct iod_conn *cn, struct wire_reader *r,
		     struct iod_reply *rep)
{
	struct iod_server *srv = cn->srv;
	struct clf_proto_status m;
	struct wire_writer w = body_writer(rep);
	int err = clf_proto_empty_decode(r);

	if (err)
		return err;
	m.uptime_ms = (uint64_t)(clf_now_ms() - srv->start_ms);
	m.requests = atomic_load(&srv->requests);
	m.bytes_read = atomic_load(&srv->bytes_read);
	m.bytes_written = atomic_load(&srv->bytes_written);
	m.connections = atomic_load(&srv->connections);
	m.views = iod_views_count(srv->views);
	return body_done(rep, &w, clf_proto_status_encode(&w, &m));
}

/* ------------------------------------------------------------------ */
/* Contiguous subfile ranges                                           */
/* ------------------------------------------------------------------ */

static int op_sub_read(struct iod_conn *cn, struct wire_reader *r,
		       struct iod_reply *rep)
{
	struct clf_proto_sub_read_req m;
	ssize_t n;
	void *buf;
	int err = clf_proto_sub_read_req_decode(r, &m);

	if (err)
		return err;
	err = iod_direct_sub_read(cn, m.file, m.subfile, m.offset, m.length,
				  rep);
	if (err != IOD_DIRECT_DECLINED) {
		if (!err)
			atomic_fetch_add(&cn->srv->bytes_read, rep->data_len);
		return err;
	}
	err = iod_conn_data_buffer(cn, m.length, &buf);
	if (err == -ENOBUFS)
		err = iod_stream_sub_read(cn, m.file, m.subfile, m.offset,
					  m.length, rep);
	if (err || rep->stream)
		return err;
	n = iod_store_read(cn->srv->st, m.file, m.subfile, m.offset, buf,
			   m.length);
	if (n < 0)
		return (int)n;
	atomic_fetch_add(&cn->srv->bytes_read, (uint64_t)n);
	return reply_data(rep, buf, (size_t)n);
}

static int op_sub_write(struct iod_conn *cn, struct wire_reader *r,
			struct iod_reply *rep)
{
	struct clf_proto_sub_write_req m;
	ssize_t n;
	int err = clf_proto_sub_write_req_decode(r, &m);

	if (err)
		return err;
	iod_hook_before_write(cn->srv, m.data.len);
	n = iod_store_write(cn->srv->st, m.file, m.subfile, m.offset,
			    m.data.ptr, m.data.len);
	if (n < 0)
		return (int)n;
	atomic_fetch_add(&cn->srv->bytes_written, (uint64_t)n);
	return reply_u32(rep, (uint32_t)n);
}

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

static int decode_type(struct clf_proto_bytes b, const char *which,
		       const struct clf_proto_view_register_req *m,
		       CLF_Datatype *out)
{
	char why[512];
	int err = CLF_Type_decode(b.ptr, b.len, out);

	if (!err)
		return 0;
	snprintf(why, sizeof(why), "%s", CLF_Last_error());
	return clf_fail_neg(err,
			    "iod: view on subfile %" PRIu32 " of file 0x%" PRIx64 ": %s type: %s",
			    m->subfile, m->file, which, why);
}

static int op_view_register(struct iod_conn *cn, struct wire_reader *r,
			    struct iod_reply *rep)
{
	struct clf_proto_view_register_req m;
	CLF_Datatype view = NULL, sub = NULL;	/* owned references */
	struct iod_view_key key;
	uint32_t handle;
	int err = clf_proto_view_register_req_decode(r, &m);

	if (err)
		return err;
	key = (struct iod_view_key){
		.view_disp = m.view_disp, .sub_disp = m.subfile_disp,
		.view = m.view_type.ptr, .view_len = m.view_type.len,
		.sub = m.subfile_type.ptr, .sub_len = m.subfile_type.len,
	};
	/* Registered before (by anyone): nothing to decode or map. */
	err = iod_view_register_keyed(cn->srv->views, m.file, m.subfile, &key,
				      NULL, NULL, cn->owner, &handle);
	if (!err)
		return reply_u32(rep, handle);
	if (err != -ENOENT)
		return err;
	err = decode_type(m.view_type, "view", &m, &view);
	if (err)
		return err;
	err = decode_type(m.subfile_type, "subfile", &m, &sub);
	if (err)
		goto free_view;
	err = iod_view_register_keyed(cn->srv->views, m.file, m.subfile, &key,
				      view, sub, cn->owner, &handle);
	if (!err)
		err = reply_u32(rep, handle);
	CLF_Type_free(&sub);
free_view:
	CLF_Type_free(&view);
	return err;
}

static int op_view_release(struct iod_conn *cn, struct wire_reader *r,
			   struct iod_reply *rep)
{
	struct clf_proto_u32 m;
	int err = clf_proto_u32_decode(r, &m);

	if (err)
		return err;
	return iod_view_release(cn->srv->views, m.value, cn->owner);
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

static int op_view_read(struct iod_conn *cn, struct wire_reader *r,
			struct iod_reply *rep)
{
	struct clf_proto_view_io_req m;
	struct iod_view *v;	/* a reference, put below */
	int64_t count, n;
	void *buf = NULL;
	int err = clf_proto_view_read_req_decode(r, &m);

	if (err)
		return err;
	err = iod_view_lookup(cn->srv->views, m.handle, cn->owner, &v);
	if (err)
		return err;
	count = view_count(v, m.lo, m.hi);
	if (count < 0) {
		err = (int)count;
		goto put;
	}
	err = iod_direct_view_read(cn, v, &m, count, rep);
	if (err != IOD_DIRECT_DECLINED) {
		if (!err)
			atomic_fetch_add(&cn->srv->bytes_read, (uint64_t)count);
		goto put;
	}
	err = iod_conn_data_buffer(cn, (size_t)count, &buf);
	if (err == -ENOBUFS) {
		/* Over this client's share: gathered while it is sent. */
		err = iod_stream_view_read(cn, v, &m, count, rep);
		if (!err)
			atomic_fetch_add(&cn->srv->bytes_read, (uint64_t)count);
		goto put;
	}
	if (err)
		goto put;
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE)
		n = iod_coll_join(cn->srv, v, m.coll_tag, m.participants, 0,
				  m.lo, m.hi, buf, (size_t)count);
	else {
		struct iod_sieve sv = iod_conn_sieve_begin(cn);

		n = iod_view_read(cn->srv->st, v, m.lo, m.hi, buf,
				  (size_t)count, &sv);
		iod_conn_sieve_end(cn);
	}
	if (n < 0) {
		err = (int)n;
		goto put;
	}
	atomic_fetch_add(&cn->srv->bytes_read, (uint64_t)count);
	err = reply_data(rep, buf, (size_t)count);
put:
	iod_view_put(v);
	return err;
}

static int op_view_write(struct iod_conn *cn, struct wire_reader *r,
			 struct iod_reply *rep)
{
	struct clf_proto_view_io_req m;
	struct iod_view *v;	/* a reference, put below */
	void *data;		/* borrowed: the connection's buffer */
	int64_t n;
	int err = clf_proto_view_write_req_decode(r, &m);

	if (err)
		return err;
	err = iod_view_lookup(cn->srv->views, m.handle, cn->owner, &v);
	if (err)
		return err;
	data = (void *)m.data.ptr;
	if (m.flags & CLF_PROTO_VIEW_COLLECTIVE) {
		n = iod_coll_join(cn->srv, v, m.coll_tag, m.participants, 1,
				  m.lo, m.hi, data, m.data.len);
	} else {
		struct iod_sieve sv = iod_conn_sieve_begin(cn);

		iod_hook_before_write(cn->srv, m.data.len);
		n = iod_view_write(cn->srv->st, v, m.lo, m.hi, data,
				   m.data.len, &sv);
		iod_conn_sieve_end(cn);
	}
	iod_view_put(v);
	if (n < 0)
		return (int)n;
	atomic_fetch_add(&cn->srv->bytes_written, (uint64_t)n);
	return reply_u32(rep, (uint32_t)n);
}

/* ------------------------------------------------------------------ */
/* Whole subfiles and the iod                                          */
/* ------------------------------------------------------------------ */

static int op_sync(struct iod_conn *cn, struct wire_reader *r,
		   struct iod_reply *rep)
{
	struct clf_proto_ino m;
	int err = clf_proto_ino_decode(r, &m);

	if (err)
		return err;
	if (m.ino == CLF_PROTO_FILE_ALL)
		return iod_store_sync_all(cn->srv->st);
	err = iod_store_sync_file(cn->srv->st, m.ino);
	return err < 0 ? err : 0;
}

static int op_truncate(struct iod_conn *cn, struct wire_reader *r,
		       struct iod_reply *rep)
{
	struct clf_proto_truncate_req m;
	int err = clf_proto_truncate_req_decode(r, &m);

	if (err)
		return err;
	return iod_store_truncate(cn->srv->st, m.file, m.subfile, m.length);
}

static int op_remove(struct iod_conn *cn, struct wire_reader *r,
		     struct iod_reply *rep)
{
	struct clf_proto_remove_req m;
	int err = clf_proto_remove_req_decode(r, &m);

	if (err)
		return err;
	if (m.subfile == CLF_PROTO_SUBFILE_ALL)
		err = iod_store_remove_file(cn->srv->st, m.file);
	else
		err = iod_store_remove(cn->srv->st, m.file, m.subfile);
	return err < 0 ? err : 0;
}

static int op_statfs(struct iod_conn *cn, struct wire_reader *r,
		     struct iod_reply *rep)
{
	struct iod_statfs s;
	struct clf_proto_statfs m;
	struct wire_writer w = body_writer(rep);
	int err = clf_proto_empty_decode(r);

	if (!err)
		err = iod_store_statfs(cn->srv->st, &s);
	if (err)
		return err;
	m = (struct clf_proto_statfs){
		.bytes_total = s.bytes_total,
		.bytes_free = s.bytes_free,
		.bytes_avail = s.bytes_avail,
		.files = s.files,
		.files_free = s.files_free,
		.block_size = s.block_size,
		.name_max = s.name_max,
	};
	return body_done(rep, &w, clf_proto_statfs_encode(&w, &m));
}

/* Since 1.8: a capability from metad for this connection (iod_cap.h). */
static int op_cap(struct iod_conn *cn, struct wire_reader *r,
		  struct iod_reply *rep)
{
	return iod_cap_take(cn, r->buf, r->len);
}

/*
 * A reply body encoded (with err) into w's buffer, allocated for it: the
 * reply takes the buffer, or it is freed on an error.  0 or the error.
 */
static int reply_owned(struct iod_reply *rep, struct wire_writer *w, int err)
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

/*
 * The lengths of the subfiles asked for: what clients derive the file
 * size from (clf_proto.h, "Size").  A write is answered only once its
 * bytes are in the subfile, so every write answered before this request
 * arrived is counted.
 */
static int op_sub_sizes(struct iod_conn *cn, struct wire_reader *r,
			struct iod_reply *rep)
{
	struct clf_proto_sub_sizes_req *req = malloc(sizeof(*req));
	struct clf_proto_sub_sizes *m = malloc(sizeof(*m));
	struct wire_writer w = { NULL, 0, 0 };
	int err = req && m ? 0 : clf_fail(ENOMEM, "iod: out of memory");

	if (!err)
		err = clf_proto_sub_sizes_req_decode(r, req);
	for (uint32_t i = 0; !err && i < req->n; i++)
		err = iod_store_size(cn->srv->st, req->file, req->subfile[i],
				     &m->length[i]);
	if (!err) {
		m->n = req->n;
		w.cap = 4 + 8 * (size_t)m->n;
		w.buf = malloc(w.cap);
		if (!w.buf)
			err = clf_fail(ENOMEM, "iod: out of memory");
	}
	if (!err)
		err = clf_proto_sub_sizes_encode(&w, m);
	err = reply_owned(rep, &w, err);
	free(req);
	free(m);
	return err;
}

/*
 * SUB_LIST: the subfiles this iod stores, for clf fsck; peers with the
 * secret only (iod_cap_check).
 */
static int op_sub_list(struct iod_conn *cn, struct wire_reader *r,
		       struct iod_reply *rep)
{
	struct clf_proto_sub_list_req req;
	struct iod_store_list *l = malloc(sizeof(*l));
	struct clf_proto_sub_list *m = malloc(sizeof(*m));
	struct wire_writer w = { NULL, 0, 0 };
	int err = l && m ? 0 : clf_fail(ENOMEM, "iod: out of memory");

	if (!err)
		err = clf_proto_sub_list_req_decode(r, &req);
	if (!err)
		err = iod_store_list(cn->srv->st, req.file, req.subfile,
				     req.max, l);
	if (!err) {
		m->more = l->more;
		m->n = l->n;
		memcpy(m->file, l->file, l->n * sizeof(m->file[0]));
		memcpy(m->subfile, l->subfile, l->n * sizeof(m->subfile[0]));
		memcpy(m->length, l->length, l->n * sizeof(m->length[0]));
		w.cap = 1 + 4 + 20 * (size_t)m->n;
		w.buf = malloc(w.cap);
		if (!w.buf)
			err = clf_fail(ENOMEM, "iod: out of memory");
	}
	if (!err)
		err = clf_proto_sub_list_encode(&w, m);
	err = reply_owned(rep, &w, err);
	free(l);
	free(m);
	return err;
}

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

/* Fixed parts of the bodies (clf_proto.h), in bytes. */
#define SUB_IO_HEAD (8 + 4 + 8 + 4)		/* file, subfile, offset, len */
#define VIEW_IO_HEAD (4 + 4 + 8 + 8 + 8 + 4)	/* handle ... participants */
#define VIEW_REGISTER_MAX (8 + 4 + 2 * (8 + 4 + CLF_PROTO_TYPE_MAX_BYTES))

static const struct {
	uint16_t op;
	int64_t payload_max;	/* the largest valid body */
	iod_handler fn;
} ops[] = {
	{ CLF_PROTO_OP_PING, 0, op_ping },
	{ CLF_PROTO_OP_STATUS, 0, op_status },
	{ CLF_PROTO_OP_SUB_READ, SUB_IO_HEAD, op_sub_read },
	{ CLF_PROTO_OP_SUB_WRITE, SUB_IO_HEAD + (int64_t)CLF_PROTO_DATA_MAX,
	  op_sub_write },
	{ CLF_PROTO_OP_VIEW_REGISTER, VIEW_REGISTER_MAX, op_view_register },
	{ CLF_PROTO_OP_VIEW_RELEASE, 4, op_view_release },
	{ CLF_PROTO_OP_VIEW_READ, VIEW_IO_HEAD, op_view_read },
	{ CLF_PROTO_OP_VIEW_WRITE,
	  VIEW_IO_HEAD + 4 + (int64_t)CLF_PROTO_DATA_MAX, op_view_write },
	{ CLF_PROTO_OP_SYNC, 8, op_sync },
	{ CLF_PROTO_OP_TRUNCATE, 8 + 4 + 8, op_truncate },
	{ CLF_PROTO_OP_REMOVE, 8 + 4, op_remove },
	{ CLF_PROTO_OP_IOD_STATFS, 0, op_statfs },
	{ CLF_PROTO_OP_SUB_SIZES, 8 + 4 + 4 * CLF_PROTO_SUB_SIZES_MAX,
	  op_sub_sizes },
	{ CLF_PROTO_OP_CAP, CLF_CAP_WIRE, op_cap },
	{ CLF_PROTO_OP_SUB_LIST, 8 + 4 + 4, op_sub_list },
};

_Static_assert(VIEW_REGISTER_MAX <= CLF_PROTO_PAYLOAD_MAX &&
	       VIEW_IO_HEAD + 4 + (int64_t)CLF_PROTO_DATA_MAX <=
	       CLF_PROTO_PAYLOAD_MAX,
	       "every request body fits in a message");

int64_t iod_op_payload_max(uint16_t op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == op)
			return ops[i].payload_max;
	return -1;
}

int iod_dispatch(struct iod_conn *cn, const struct clf_proto_header *h,
		 uint8_t *p, size_t len, struct iod_reply *rep)
{
	struct wire_reader r = { p, len, 0, false };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == h->opcode)
			return ops[i].fn(cn, &r, rep);
	return clf_fail(ENOSYS, "iod: opcode %u is not served here",
			h->opcode);
}
