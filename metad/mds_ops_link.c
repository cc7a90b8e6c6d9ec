// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_link.c -- the requests of protocol 1.6 for the POSIX objects
 * beyond files and directories: SYMLINK, READLINK, LINK, MKNOD.
 *
 * Paths resolve as in mds_ops_ns.c: the directory of the last name
 * first, as the user of the request (mds_path_split_as), its
 * permissions checked (mds_perm.h), then one store call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_ops_i.h"
#include "mds_peer.h"

_Static_assert(MDS_SYMLINK_MAX == CLF_PROTO_SYMLINK_MAX &&
	       MDS_LINK_MAX == CLF_PROTO_LINK_MAX,
	       "the store and the protocol must agree on their limits");

int mds_op_symlink(const struct mds_session *s, struct wire_reader *r,
		   struct mds_reply *rep)
{
	struct clf_proto_symlink_req req;
	char target[CLF_PROTO_SYMLINK_MAX + 1];
	struct mds_path p;
	struct mds_attr a;
	uint32_t uid, gid, mode = 0777;
	int err = clf_proto_symlink_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_SYMLINK, err);
	/* The decoder bounds the length and refuses NUL bytes. */
	memcpy(target, req.target.ptr, req.target.len);
	target[req.target.len] = '\0';
	err = mds_path_split_as(s, req.dir, req.path, &p);
	if (!err)
		err = mds_perm_dir_change(s->cred, &p.dir_attr,
					  mds_path_dir_name(&p), "make symlink",
					  p.name);
	if (!err) {
		mds_new_owner(s, &p, req.uid, req.gid, &mode, false, &uid,
			      &gid);
		err = mds_symlink(s->ctx->store, p.dir, p.name, target, uid,
				  gid, &a);
	}
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}

int mds_op_readlink(const struct mds_session *s, struct wire_reader *r,
		    struct mds_reply *rep)
{
	struct clf_proto_readlink_rep m = { 0 };
	struct clf_proto_ino req;
	char *target = NULL;
	struct mds_attr a;
	int err = clf_proto_ino_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_READLINK, err);
	err = mds_getattr(s->ctx->store, req.ino, &a);
	if (err)
		return err;
	/* A device's number never changes: the two reads agree. */
	if (S_ISCHR(a.mode) || S_ISBLK(a.mode)) {
		m.rdev = a.rdev;
		return mds_reply_readlink(rep, &m);
	}
	err = mds_readlink(s->ctx->store, req.ino, &target);
	if (err)
		return err;
	m.target = clf_proto_str_of(target);
	err = mds_reply_readlink(rep, &m);
	free(target);
	return err;
}

/*
 * A name here for an inode of another metad: one link more there
 * first, then the entry (mds_peer.h); the link is given back when the
 * entry cannot be made.
 */
static int link_remote(const struct mds_session *s, uint64_t ino,
		       const struct mds_path *p, struct mds_attr *a)
{
	struct clf_proto_peer_req req = {
		.kind = MDS_PEER_NLINK, .ino = ino, .flags = 1,
	};
	struct clf_proto_peer_rep got;
	uint64_t eino;
	uint32_t emode;
	int err;

	err = mds_entry_lookup(s->ctx->store, p->dir, p->name, &eino, &emode);
	if (!err)
		return clf_fail(EEXIST, "metad: cannot link '%s': file exists",
				p->name);
	if (err != -ENOENT)
		return err;
	err = mds_peer_call(s->ctx, mds_ino_metad(ino), &req, &got);
	if (err)
		return err;
	mds_attr_from_proto(&got.attr, a);
	err = mds_entry_add_remote(s->ctx->store, p->dir, p->name, ino,
				   a->mode);
	if (err) {
		req.flags = 0;
		mds_peer_call(s->ctx, mds_ino_metad(ino), &req, NULL);
	}
	return err;
}

int mds_op_link(const struct mds_session *s, struct wire_reader *r,
		struct mds_reply *rep)
{
	struct clf_proto_link_req req;
	struct mds_path p;
	struct mds_attr a;
	int err = clf_proto_link_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_LINK, err);
	/* A repeat of this request answers with this inode (mds_replay.h). */
	mds_reply_set_ino(req.ino);
	err = mds_path_split_as(s, req.new_dir, req.new_path, &p);
	if (!err)
		err = mds_perm_dir_change(s->cred, &p.dir_attr,
					  mds_path_dir_name(&p), "link", p.name);
	if (!err && !mds_is_local(s->ctx, req.ino))
		err = link_remote(s, req.ino, &p, &a);
	else if (!err)
		err = mds_link(s->ctx->store, req.ino, p.dir, p.name, &a);
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}

int mds_op_mknod(const struct mds_session *s, struct wire_reader *r,
		 struct mds_reply *rep)
{
	struct clf_proto_mknod_req req;
	struct mds_path p;
	struct mds_attr a;
	uint32_t uid, gid;
	int err = clf_proto_mknod_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_MKNOD, err);
	err = mds_path_split_as(s, req.dir, req.path, &p);
	if (!err)
		err = mds_perm_dir_change(s->cred, &p.dir_attr,
					  mds_path_dir_name(&p), "make node",
					  p.name);
	/* Device nodes reach hardware: root's (Linux's CAP_MKNOD). */
	if (!err && (S_ISCHR(req.mode) || S_ISBLK(req.mode)) &&
	    s->cred->uid != 0)
		err = clf_fail(EPERM,
			       "metad: cannot make device node '%s': operation not permitted (root only)",
			       p.name);
	if (!err) {
		mds_new_owner(s, &p, req.uid, req.gid, &req.mode, false, &uid,
			      &gid);
		err = mds_mknod(s->ctx->store, p.dir, p.name, req.mode,
				req.rdev, uid, gid, &a);
	}
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}
