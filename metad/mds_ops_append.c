// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_append.c -- APPEND: the range of an O_APPEND write, reserved
 * in the append ends (mds_append.h; clf_proto.h, "Appends").
 *
 * Cost: one read of the inode (it must be a regular file; its size
 * counts truncations and reports the client may not have asked for)
 * and a few instructions under the table's mutex; nothing is written
 * to the store.
 */
#include <errno.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_append.h"
#include "mds_ops_i.h"
#include "transport.h"

int mds_op_append(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct clf_proto_append_req req;
	struct clf_proto_append_rep m;
	struct mds_attr a;
	int64_t at;
	int err = clf_proto_append_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_APPEND, err);
	err = mds_getattr(s->ctx->store, req.ino, &a);
	if (err)
		return err;
	if (!S_ISREG(a.mode))
		return clf_fail(EISDIR, "metad: cannot append to inode %llu: not a regular file",
				(unsigned long long)req.ino);
	at = a.size > req.at ? a.size : req.at;
	/* EXACT and the end is past at: the client asks again from here. */
	if ((req.flags & CLF_PROTO_APPEND_EXACT) && at != req.at) {
		m.offset = at;
		return mds_reply_append(rep, &m);
	}
	err = mds_appends_reserve(s->ctx->appends, req.ino, at, req.length,
				  req.flags & CLF_PROTO_APPEND_EXACT,
				  clf_now_ms(), &m.offset, NULL);
	if (err)
		return err;
	return mds_reply_append(rep, &m);
}
