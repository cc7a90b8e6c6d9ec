// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_lock.c -- the byte-range lock requests: SETLK (with its
 * bounded wait), GETLK, UNLOCK_OWNER.  The table is mds_lock.h; a lock
 * belongs to (this connection, the owner the client names).
 */
#include <errno.h>

#include "error.h"
#include "mds_lock.h"
#include "mds_ops_i.h"

_Static_assert(MDS_LOCK_READ == CLF_PROTO_LOCK_READ &&
	       MDS_LOCK_WRITE == CLF_PROTO_LOCK_WRITE &&
	       MDS_LOCK_UNLOCK == CLF_PROTO_LOCK_UNLOCK,
	       "lock types go to the table unchanged");
_Static_assert(MDS_LOCK_END == CLF_PROTO_LOCK_OFFSET_MAX + 1,
	       "a lock to the end ends one past the largest offset");

/* The decoder checked the range: start + length cannot pass the end. */
static struct mds_lock lock_of(const struct mds_session *s,
			       const struct clf_proto_lock_req *req)
{
	return (struct mds_lock){
		.key = { s->conn_id, req->owner },
		.start = req->start,
		.end = req->length ? req->start + req->length : MDS_LOCK_END,
		.type = req->type,
		.pid = req->pid,
	};
}

/*
 * Locks are taken on files that exist, by users who may read (a read
 * lock) or write (a write lock) them, as fcntl asks a descriptor open
 * for it; unlocks need no check.
 */
static int check_inode(const struct mds_session *s, uint64_t ino,
		       uint32_t type)
{
	struct mds_attr a;
	char name[64];
	int err = mds_attr_of(s, ino, &a, name, sizeof(name));

	if (!err)
		err = mds_perm_lock(s->cred, &a, type, name);
	return err;
}

int mds_op_setlk(const struct mds_session *s, struct wire_reader *r,
		 struct mds_reply *rep)
{
	struct clf_proto_lock_req req;
	struct mds_lock lk;
	int err = clf_proto_setlk_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_SETLK, err);
	if (req.type != CLF_PROTO_LOCK_UNLOCK) {
		err = check_inode(s, req.ino, req.type);
		if (err)
			return err;
	}
	lk = lock_of(s, &req);
	err = mds_locks_set(s->ctx->locks, req.ino, &lk, req.wait_ms);
	if (err)
		return err;
	return mds_reply_empty(rep);
}

int mds_op_getlk(const struct mds_session *s, struct wire_reader *r,
		 struct mds_reply *rep)
{
	struct clf_proto_lock_req req;
	struct clf_proto_lock_holder m = { .type = CLF_PROTO_LOCK_UNLOCK };
	struct mds_lock lk, holder;
	int err = clf_proto_getlk_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_GETLK, err);
	err = check_inode(s, req.ino, req.type);
	if (err)
		return err;
	lk = lock_of(s, &req);
	if (mds_locks_get(s->ctx->locks, req.ino, &lk, &holder) == 0) {
		m.type = holder.type;
		m.start = holder.start;
		m.length = holder.end == MDS_LOCK_END
				   ? 0
				   : holder.end - holder.start;
		m.pid = holder.pid;
	}
	return mds_reply_lock_holder(rep, &m);
}

int mds_op_unlock_owner(const struct mds_session *s, struct wire_reader *r,
			struct mds_reply *rep)
{
	struct clf_proto_unlock_owner_req req;
	int err = clf_proto_unlock_owner_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_UNLOCK_OWNER, err);
	mds_locks_release_owner(s->ctx->locks, req.ino,
				(struct mds_lock_key){ s->conn_id, req.owner });
	return mds_reply_empty(rep);
}
