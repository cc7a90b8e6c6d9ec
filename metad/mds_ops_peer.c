// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_peer.c -- the requests of a namespace spread over several
 * metads: RESOLVE, which clients walk paths with, and MD_PEER, what the
 * other metads ask of this one (mds_peer.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_gc.h"
#include "mds_ops_i.h"
#include "mds_peer.h"

static int reply_resolve(struct mds_reply *rep, uint64_t ino, uint32_t done)
{
	struct clf_proto_resolve_rep m = { .ino = ino, .done = done };

	return mds_reply_resolve(rep, &m);
}

int mds_op_resolve(const struct mds_session *s, struct wire_reader *r,
		   struct mds_reply *rep)
{
	struct clf_proto_resolve_req req;
	char path[CLF_PROTO_PATH_MAX + 1];
	uint64_t ino;
	size_t done;
	int err = clf_proto_resolve_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_RESOLVE, err);
	memcpy(path, req.path.ptr, req.path.len);
	path[req.path.len] = '\0';
	err = mds_resolve_part_as(s, req.dir, path, &ino, &done);
	if (!err)
		err = reply_resolve(rep, ino, (uint32_t)done);
	return err;
}

static int reply_peer(struct mds_reply *rep, const struct mds_attr *a,
		      uint64_t value)
{
	struct clf_proto_peer_rep m = { .value = value };

	if (a)
		mds_attr_to_proto(a, &m.attr);
	return mds_reply_peer(rep, &m);
}

/* One name less for a local inode named elsewhere; its data goes with
 * its last name, as after an unlink. */
static int nlink_change(const struct mds_session *s, uint64_t ino, int delta,
			struct mds_attr *a)
{
	struct mds_removed gone = { .layout = NULL };
	int err = mds_nlink_change(s->ctx->store, ino, delta, a, &gone);

	if (!err && gone.attr.ino && gone.layout)
		mds_gc_removed(s->ctx->gc, gone.attr.ino, gone.layout);
	mds_removed_release(&gone);
	return err;
}

static int serve(const struct mds_session *s,
		 const struct clf_proto_peer_req *req, struct mds_reply *rep)
{
	struct mds_store *st = s->ctx->store;
	struct mds_attr a = { 0 };
	uint64_t value = 0;
	int err;

	switch (req->kind) {
	case MDS_PEER_MKDIR:
		err = mds_mkdir_detached(st, req->dir, req->mode & 07777u,
					 req->uid, req->gid, &a);
		break;
	case MDS_PEER_NLINK:
		err = nlink_change(s, req->ino, req->flags ? 1 : -1, &a);
		break;
	case MDS_PEER_RMDIR:
		err = mds_rmdir_detached(st, req->ino);
		break;
	case MDS_PEER_PARENT:
		err = mds_dir_parent(st, req->ino, &value);
		break;
	case MDS_PEER_SETPARENT:
		err = mds_dir_set_parent(st, req->ino, req->dir);
		break;
	case MDS_PEER_NONEMPTY:
		err = mds_dir_nonempty(st, req->ino);
		if (err >= 0) {
			value = (uint64_t)err;
			err = 0;
		}
		break;
	case MDS_PEER_GETATTR:
		err = mds_getattr(st, req->ino, &a);
		break;
	case MDS_PEER_PREPARE:
	case MDS_PEER_COMMIT:
	case MDS_PEER_ABORT:
	case MDS_PEER_QUERY:
		err = mds_xrename_serve(s->ctx, req, &value);
		break;
	default:
		return clf_fail(EINVAL, "metad: unknown MD_PEER kind %u",
				req->kind);
	}
	if (!err)
		err = reply_peer(rep, &a, value);
	return err;
}

int mds_op_peer(const struct mds_session *s, struct wire_reader *r,
		struct mds_reply *rep)
{
	struct clf_proto_peer_req req;
	int err = clf_proto_peer_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_MD_PEER, err);
	/* Only another metad, which holds the secret, may ask. */
	if (!s->trusted || s->auth_uid != 0)
		err = clf_fail(EPERM, "metad: MD_PEER from %s: not a metad",
			       s->peer);
	else
		err = serve(s, &req, rep);
	clf_proto_peer_req_release(&req);
	return err;
}
