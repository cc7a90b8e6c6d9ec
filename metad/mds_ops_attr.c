// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_attr.c -- the requests on one inode: GETATTR, SETATTR
 * (truncation included), SET_LAYOUT, GET_LAYOUT, UPDATE_SIZE.
 */
#include <errno.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_append.h"
#include "mds_data.h"
#include "mds_ops_i.h"

_Static_assert(MDS_SETATTR_MODE == CLF_PROTO_SETATTR_MODE &&
	       MDS_SETATTR_UID == CLF_PROTO_SETATTR_UID &&
	       MDS_SETATTR_GID == CLF_PROTO_SETATTR_GID &&
	       MDS_SETATTR_SIZE == CLF_PROTO_SETATTR_SIZE &&
	       MDS_SETATTR_ATIME == CLF_PROTO_SETATTR_ATIME &&
	       MDS_SETATTR_MTIME == CLF_PROTO_SETATTR_MTIME &&
	       MDS_SETATTR_ATIME_NOW == CLF_PROTO_SETATTR_ATIME_NOW &&
	       MDS_SETATTR_MTIME_NOW == CLF_PROTO_SETATTR_MTIME_NOW &&
	       MDS_SETATTR_KNOWN == CLF_PROTO_SETATTR_KNOWN,
	       "the SETATTR mask goes to the store unchanged");

int mds_op_getattr(const struct mds_session *s, struct wire_reader *r,
		   struct mds_reply *rep)
{
	struct clf_proto_ino req;
	struct mds_attr a;
	int err = clf_proto_ino_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_GETATTR, err);
	err = mds_getattr(s->ctx->store, req.ino, &a);
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}

/*
 * The data side of a truncation, before the size is recorded: each
 * subfile cut or extended to its share of the new size on its iod.
 */
static int truncate_data(const struct mds_session *s, uint64_t ino,
			 int64_t size)
{
	struct mds_layout *layout;
	struct mds_attr a;
	int err = mds_getattr(s->ctx->store, ino, &a);

	if (err)
		return err;
	if (S_ISDIR(a.mode))
		return clf_fail(EISDIR,
				"metad: cannot truncate 'ino %llu': it is a directory",
				(unsigned long long)ino);
	err = mds_get_layout(s->ctx->store, ino, &layout);
	/* Without a layout the file has no data anywhere. */
	if (err == -ENODATA)
		return 0;
	if (err)
		return err;
	err = mds_data_truncate(s->ctx->iods, ino, layout, size);
	mds_layout_free(layout);
	return err;
}

int mds_op_setattr(const struct mds_session *s, struct wire_reader *r,
		   struct mds_reply *rep)
{
	struct clf_proto_setattr_req req;
	struct mds_setattr set;
	struct mds_attr a;
	char name[64];
	int err = clf_proto_setattr_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_SETATTR, err);
	set = (struct mds_setattr){
		.mask = req.mask,
		.mode = req.mode,
		.uid = req.uid,
		.gid = req.gid,
		.size = req.size,
		.atime = req.atime,
		.mtime = req.mtime,
	};
	/* A repeat of this request answers with this inode (mds_replay.h). */
	mds_reply_set_ino(req.ino);
	err = mds_attr_of(s, req.ino, &a, name, sizeof(name));
	if (!err)
		err = mds_perm_setattr(s->cred, &a, &set, name);
	if (!err && (req.mask & CLF_PROTO_SETATTR_SIZE))
		err = truncate_data(s, req.ino, req.size);
	if (!err)
		err = mds_setattr(s->ctx->store, req.ino, &set, &a);
	/* Appends start again from the new end (mds_append.h). */
	if (!err && (req.mask & CLF_PROTO_SETATTR_SIZE))
		mds_appends_forget(s->ctx->appends, req.ino);
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}

int mds_op_set_layout(const struct mds_session *s, struct wire_reader *r,
		      struct mds_reply *rep)
{
	struct clf_proto_set_layout_req req;
	struct mds_layout *old = NULL;
	struct mds_req_layout layout;
	struct mds_attr a;
	char name[64];
	int err = clf_proto_set_layout_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_SET_LAYOUT, err);
	err = mds_attr_of(s, req.ino, &a, name, sizeof(name));
	if (!err)
		err = mds_perm_owner(s->cred, &a, "set the layout of", name);
	if (err)
		goto release_req;
	err = mds_req_layout_init(s->ctx, &req.layout, &layout);
	if (err)
		goto release_req;
	mds_reply_set_ino(req.ino);
	err = mds_get_layout(s->ctx->store, req.ino, &old);
	if (err == -ENODATA)
		err = 0;
	if (!err)
		err = mds_set_layout(s->ctx->store, req.ino, layout.use);
	if (err)
		goto free_old;
	/*
	 * The store replaces a layout only while the file is empty, but
	 * bytes a client wrote and has not reported yet would reappear at
	 * other offsets under the new layout: the old subfiles go.
	 */
	if (old)
		mds_data_remove(s->ctx->iods, req.ino, old);
	err = mds_reply_layout(rep, layout.use);
free_old:
	mds_layout_free(old);
	mds_req_layout_release(&layout);
release_req:
	clf_proto_set_layout_req_release(&req);
	return err;
}

int mds_op_get_layout(const struct mds_session *s, struct wire_reader *r,
		      struct mds_reply *rep)
{
	struct mds_layout *layout;
	struct clf_proto_ino req;
	int err = clf_proto_ino_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_GET_LAYOUT, err);
	err = mds_get_layout(s->ctx->store, req.ino, &layout);
	if (err)
		return err;
	err = mds_reply_layout(rep, layout);
	mds_layout_free(layout);
	return err;
}

int mds_op_update_size(const struct mds_session *s, struct wire_reader *r,
		       struct mds_reply *rep)
{
	struct clf_proto_update_size_req req;
	struct mds_attr a;
	char name[64];
	int err = clf_proto_update_size_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_UPDATE_SIZE, err);
	err = mds_attr_of(s, req.ino, &a, name, sizeof(name));
	if (!err && !mds_may(s->cred, &a, MDS_MAY_WRITE))
		err = clf_fail(EACCES,
			       "metad: cannot report the size of '%s': permission denied (no write permission on the file)",
			       name);
	if (err)
		return err;
	err = mds_update_size(s->ctx->store, req.ino, req.size, req.mtime,
			      &a);
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}
