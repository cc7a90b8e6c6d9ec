// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_dispatch.c -- the handler of each opcode (mds_ops_*.c), run once
 * per request identity through the reply cache (mds_replay.h).  Above
 * both: the handlers and the cache know nothing of the dispatch.
 */
#include <errno.h>

#include "error.h"
#include "mds_dispatch.h"
#include "mds_ops_i.h"
#include "mds_replay.h"

/* A new opcode that changes the store also opts in to the reply cache
 * in mds_replay_kind_of (mds_replay.c). */
static mds_op_fn *handler_of(uint16_t op)
{
	switch (op) {
	case CLF_PROTO_OP_PING:
		return mds_op_ping;
	case CLF_PROTO_OP_STATUS:
		return mds_op_status;
	case CLF_PROTO_OP_LOOKUP:
		return mds_op_lookup;
	case CLF_PROTO_OP_CREATE:
		return mds_op_create;
	case CLF_PROTO_OP_MKDIR:
		return mds_op_mkdir;
	case CLF_PROTO_OP_READDIR:
		return mds_op_readdir;
	case CLF_PROTO_OP_RENAME:
		return mds_op_rename;
	case CLF_PROTO_OP_UNLINK:
		return mds_op_unlink;
	case CLF_PROTO_OP_RMDIR:
		return mds_op_rmdir;
	case CLF_PROTO_OP_GETATTR:
		return mds_op_getattr;
	case CLF_PROTO_OP_SETATTR:
		return mds_op_setattr;
	case CLF_PROTO_OP_STATFS:
		return mds_op_statfs;
	case CLF_PROTO_OP_SET_LAYOUT:
		return mds_op_set_layout;
	case CLF_PROTO_OP_GET_LAYOUT:
		return mds_op_get_layout;
	case CLF_PROTO_OP_UPDATE_SIZE:
		return mds_op_update_size;
	case CLF_PROTO_OP_SETLK:
		return mds_op_setlk;
	case CLF_PROTO_OP_GETLK:
		return mds_op_getlk;
	case CLF_PROTO_OP_UNLOCK_OWNER:
		return mds_op_unlock_owner;
	case CLF_PROTO_OP_APPEND:
		return mds_op_append;
	case CLF_PROTO_OP_SYMLINK:
		return mds_op_symlink;
	case CLF_PROTO_OP_READLINK:
		return mds_op_readlink;
	case CLF_PROTO_OP_LINK:
		return mds_op_link;
	case CLF_PROTO_OP_MKNOD:
		return mds_op_mknod;
	case CLF_PROTO_OP_CAP_GRANT:
		return mds_op_cap;
	case CLF_PROTO_OP_INSTANCE:
		return mds_op_instance;
	case CLF_PROTO_OP_RESOLVE:
		return mds_op_resolve;
	case CLF_PROTO_OP_MD_PEER:
		return mds_op_peer;
	case CLF_PROTO_OP_READDIRPLUS:
		return mds_op_readdirplus;
	case CLF_PROTO_OP_SUB_MOVE:
		return mds_op_sub_move;
	case CLF_PROTO_OP_IOD_STATE:
		return mds_op_iod_state;
	default:
		return NULL;
	}
}

static int handle(const struct mds_session *s,
		  const struct clf_proto_header *h, const uint8_t *payload,
		  struct mds_reply *rep)
{
	struct wire_reader r = { payload, h->payload_len, 0, false };
	mds_op_fn *fn = handler_of(h->opcode);
	const char *name = clf_proto_op_name(h->opcode);
	struct clf_proto_reqid id;
	int err;

	mds_reply_empty(rep);
	if (h->flags & CLF_PROTO_FLAG_REQ_ID) {
		err = clf_proto_reqid_decode(&r, &id);
		if (err)
			return mds_bad_request(s, h->opcode, err);
		/* Opcodes that change nothing ignore the identity. */
		if (fn && mds_replay_kind_of(h->opcode) != MDS_REPLAY_NONE)
			return mds_replay_serve(s->ctx->replay, s, h->opcode,
						&id, fn, &r, rep);
	}
	if (fn)
		return fn(s, &r, rep);
	/* The exchange that opens a connection happens once. */
	if (h->opcode >= CLF_PROTO_OP_HELLO &&
	    h->opcode <= CLF_PROTO_OP_MUNGE_RESPONSE) {
		mds_log("malformed %s from %s (%s): after authentication",
			name, s->peer, s->role);
		return clf_fail(EPROTO, "metad: %s after authentication",
				name);
	}
	/* Known to the protocol but served by the iods, or unknown: the
	 * protocol says -ENOSYS, and the connection goes on. */
	if (name)
		return clf_fail(ENOSYS, "metad: %s is an iod request", name);
	return clf_fail(ENOSYS, "metad: unknown opcode %u", h->opcode);
}

int mds_ops_handle(const struct mds_session *s,
		   const struct clf_proto_header *h, const uint8_t *payload,
		   struct mds_reply *rep)
{
	int err;

	mds_store_request_begin();
	err = handle(s, h, payload, rep);
	/* What the answer says is on disk before it leaves. */
	mds_store_settle();
	return err;
}
