// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_ops.c -- the handlers of the requests without bulk data: the iod
 * itself, views, whole subfiles (iod_ops.h).  The data requests are
 * iod_ops_io.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "iod_cap.h"
#include "iod_fence.h"
#include "iod_log.h"
#include "iod_ops.h"

/* ------------------------------------------------------------------ */
/* Any daemon                                                          */
/* ------------------------------------------------------------------ */

int iod_op_ping(struct iod_conn *cn, struct iod_req *rq,
		struct iod_reply *rep)
{
	return clf_proto_empty_decode(&rq->r);
}

int iod_op_status(struct iod_conn *cn, struct iod_req *rq,
		  struct iod_reply *rep)
{
	struct iod_server *srv = cn->srv;
	struct clf_proto_status m;
	struct wire_writer w = iod_reply_writer(rep);
	int err = clf_proto_empty_decode(&rq->r);

	if (err)
		return err;
	m.uptime_ms = (uint64_t)(clf_now_ms() - srv->start_ms);
	m.requests = atomic_load(&srv->requests);
	m.bytes_read = atomic_load(&srv->bytes_read);
	m.bytes_written = atomic_load(&srv->bytes_written);
	m.connections = atomic_load(&srv->connections);
	m.views = iod_views_count(srv->views);
	/* 1.25: the RDMA receive pool (none: 0 of 0); an older peer would
	 * refuse the bytes it does not expect. */
	m.has_rx_pool = clf_conn_minor(cn->c) >= 25;
	m.rx_buffers = m.rx_posted = 0;
#ifdef CLF_HAVE_RDMA
	{
		unsigned long posted, buffers;

		clf_rdma_pool_stats(&posted, &buffers);
		m.rx_buffers = (uint32_t)buffers;
		m.rx_posted = (uint32_t)posted;
	}
#endif
	return iod_reply_done(rep, &w, clf_proto_status_encode(&w, &m));
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

int iod_op_view_register(struct iod_conn *cn, struct iod_req *rq,
			 struct iod_reply *rep)
{
	struct clf_proto_view_register_req m;
	CLF_Datatype view = NULL, sub = NULL;	/* owned references */
	struct iod_view_key key;
	uint32_t handle;
	int err = clf_proto_view_register_req_decode(&rq->r, &m);

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
		return iod_reply_u32(rep, handle);
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
		err = iod_reply_u32(rep, handle);
	CLF_Type_free(&sub);
free_view:
	CLF_Type_free(&view);
	return err;
}

int iod_op_view_release(struct iod_conn *cn, struct iod_req *rq,
			struct iod_reply *rep)
{
	struct clf_proto_u32 m;
	int err = clf_proto_u32_decode(&rq->r, &m);

	if (err)
		return err;
	return iod_view_release(cn->srv->views, m.value, cn->owner);
}

/* ------------------------------------------------------------------ */
/* Whole subfiles and the iod                                          */
/* ------------------------------------------------------------------ */

int iod_op_sync(struct iod_conn *cn, struct iod_req *rq,
		struct iod_reply *rep)
{
	struct clf_proto_ino m;
	int err = clf_proto_ino_decode(&rq->r, &m);

	if (err)
		return err;
	if (m.ino == CLF_PROTO_FILE_ALL)
		return iod_store_sync_all(cn->srv->st);
	err = iod_store_sync_file(cn->srv->st, m.ino);
	return err < 0 ? err : 0;
}

int iod_op_truncate(struct iod_conn *cn, struct iod_req *rq,
		    struct iod_reply *rep)
{
	struct clf_proto_truncate_req m;
	int err = clf_proto_truncate_req_decode(&rq->r, &m);

	if (err)
		return err;
	return iod_store_truncate(cn->srv->st, m.file, m.subfile, m.length);
}

int iod_op_remove(struct iod_conn *cn, struct iod_req *rq,
		  struct iod_reply *rep)
{
	struct clf_proto_remove_req m;
	int err = clf_proto_remove_req_decode(&rq->r, &m);

	if (err)
		return err;
	if (m.subfile == CLF_PROTO_SUBFILE_ALL)
		err = iod_store_remove_file(cn->srv->st, m.file);
	else
		err = iod_store_remove(cn->srv->st, m.file, m.subfile);
	return err < 0 ? err : 0;
}

int iod_op_fence(struct iod_conn *cn, struct iod_req *rq,
		 struct iod_reply *rep)
{
	struct clf_proto_fence_req m;
	int err = clf_proto_fence_req_decode(&rq->r, &m);

	(void)rep;
	if (err)
		return err;
	if (cn->caps)
		return clf_fail(EACCES,
				"iod: FENCE is the mover's (clf iod remove, with the secret)");
	if (m.mode > CLF_PROTO_FENCE_GONE || !m.file)
		return clf_fail(EINVAL, "iod: FENCE of file %" PRIu64
				" with mode %" PRIu32, m.file, m.mode);
	if (m.mode != CLF_PROTO_FENCE_LIFT)
		iod_log("file %" PRIu64 " fenced (%s) by %s", m.file,
			m.mode == CLF_PROTO_FENCE_GONE ? "gone" : "moving",
			clf_conn_peer(cn->c));
	return iod_fence_set(&cn->srv->fences, m.file, m.mode, cn->owner);
}

int iod_op_statfs(struct iod_conn *cn, struct iod_req *rq,
		  struct iod_reply *rep)
{
	struct iod_statfs s;
	struct clf_proto_statfs m;
	struct wire_writer w = iod_reply_writer(rep);
	int err = clf_proto_empty_decode(&rq->r);

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
	return iod_reply_done(rep, &w, clf_proto_statfs_encode(&w, &m));
}

/* Since 1.8: a capability from metad for this connection (iod_cap.h). */
int iod_op_cap(struct iod_conn *cn, struct iod_req *rq,
	       struct iod_reply *rep)
{
	return iod_cap_take(cn, rq->r.buf, rq->r.len);
}

/*
 * The lengths of the subfiles asked for: what clients derive the file
 * size from (clf_proto.h, "Size").  A write is answered only once its
 * bytes are in the subfile, so every write answered before this request
 * arrived is counted.
 */
int iod_op_sub_sizes(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep)
{
	struct clf_proto_sub_sizes_req *req = malloc(sizeof(*req));
	struct clf_proto_sub_sizes *m = malloc(sizeof(*m));
	int err = req && m ? 0 : clf_fail(ENOMEM, "iod: out of memory");

	if (!err)
		err = clf_proto_sub_sizes_req_decode(&rq->r, req);
	for (uint32_t i = 0; !err && i < req->n; i++)
		err = iod_store_size(cn->srv->st, req->file, req->subfile[i],
				     &m->length[i]);
	if (!err)
		m->n = req->n;
	err = iod_reply_sub_sizes(rep, m, err);
	free(req);
	free(m);
	return err;
}

int iod_reply_sub_sizes(struct iod_reply *rep,
			const struct clf_proto_sub_sizes *m, int err)
{
	struct wire_writer w = { NULL, 0, 0 };

	if (!err)
		err = iod_reply_alloc(&w, 4 + 8 * (size_t)m->n);
	if (!err)
		err = clf_proto_sub_sizes_encode(&w, m);
	return iod_reply_owned(rep, &w, err);
}

/*
 * SUB_LIST: the subfiles this iod stores, for clf fsck; peers with the
 * secret only (iod_cap_check).
 */
int iod_op_sub_list(struct iod_conn *cn, struct iod_req *rq,
		    struct iod_reply *rep)
{
	struct clf_proto_sub_list_req req;
	struct iod_store_list *l = malloc(sizeof(*l));
	struct clf_proto_sub_list *m = malloc(sizeof(*m));
	struct wire_writer w = { NULL, 0, 0 };
	int err = l && m ? 0 : clf_fail(ENOMEM, "iod: out of memory");

	if (!err)
		err = clf_proto_sub_list_req_decode(&rq->r, &req);
	if (!err)
		err = iod_store_list(cn->srv->st, req.file, req.subfile,
				     req.max, l);
	if (!err) {
		m->more = l->more;
		m->n = l->n;
		memcpy(m->file, l->file, l->n * sizeof(m->file[0]));
		memcpy(m->subfile, l->subfile, l->n * sizeof(m->subfile[0]));
		memcpy(m->length, l->length, l->n * sizeof(m->length[0]));
		err = iod_reply_alloc(&w, 1 + 4 + 20 * (size_t)m->n);
	}
	if (!err)
		err = clf_proto_sub_list_encode(&w, m);
	err = iod_reply_owned(rep, &w, err);
	free(l);
	free(m);
	return err;
}
