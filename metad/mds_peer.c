// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_peer.c -- asking the other metads of a spread namespace
 * (mds_peer.h): placement of new directories, one MD_PEER call, and the
 * reads that follow an inode or a parent chain wherever it lives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_iods.h"
#include "mds_peer.h"
#include "mds_store.h"

uint32_t mds_place_dir(const struct mds_ctx *ctx, uint64_t dir,
		       const char *name)
{
	/* FNV-1a over the parent's number and the name: stable, cheap,
	 * and spreads sibling directories over the metads. */
	uint64_t h = 0xcbf29ce484222325ull;

	if (ctx->cfg->nmetads <= 1)
		return ctx->index;
	for (int i = 0; i < 8; i++) {
		h ^= (dir >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	for (const char *p = name; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	return (uint32_t)(h % ctx->cfg->nmetads);
}

int mds_peer_call(const struct mds_ctx *ctx, uint32_t index,
		  const struct clf_proto_peer_req *req,
		  struct clf_proto_peer_rep *rep)
{
	struct wire_writer w = { NULL, 0, 0 };
	struct clf_proto_peer_rep got;
	struct wire_reader r;
	uint8_t *buf;
	void *reply = NULL;
	uint32_t rlen = 0;
	int err;

	if (!ctx->peers || index >= ctx->cfg->nmetads)
		return clf_fail(EINVAL, "metad: metad %u is not in the configuration",
				index);
	err = clf_proto_peer_req_encode(&w, req);
	if (err)
		return err;
	buf = malloc(w.pos);
	if (!buf)
		return clf_fail(ENOMEM, "metad: out of memory");
	w = (struct wire_writer){ buf, w.pos, 0 };
	clf_proto_peer_req_encode(&w, req);
	err = mds_iods_call(ctx->peers, index, CLF_PROTO_OP_MD_PEER, buf,
			    w.pos, &reply, &rlen);
	free(buf);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_peer_rep_decode(&r, &got);
	if (!err && r.pos != rlen)
		err = clf_fail(EPROTO, "metad: metad %u sent trailing bytes",
			       index);
	if (!err && rep)
		*rep = got;
	if (!err)
		clf_proto_peer_rep_release(&got);
	free(reply);
	return err;
}

int mds_attr_anywhere(const struct mds_ctx *ctx, uint64_t ino,
		      struct mds_attr *a)
{
	struct clf_proto_peer_req req = { .kind = MDS_PEER_GETATTR, .ino = ino };
	struct clf_proto_peer_rep rep;
	int err;

	if (mds_is_local(ctx, ino))
		return mds_getattr(ctx->store, ino, a);
	err = mds_peer_call(ctx, mds_ino_metad(ino), &req, &rep);
	if (!err)
		mds_attr_from_proto(&rep.attr, a);
	return err;
}

/* Directory dir's parent, wherever dir lives. */
static int parent_of(const struct mds_ctx *ctx, uint64_t dir,
		     uint64_t *parent)
{
	struct clf_proto_peer_req req = { .kind = MDS_PEER_PARENT, .ino = dir };
	struct clf_proto_peer_rep rep;
	int err;

	if (mds_is_local(ctx, dir))
		return mds_dir_parent(ctx->store, dir, parent);
	err = mds_peer_call(ctx, mds_ino_metad(dir), &req, &rep);
	if (!err)
		*parent = rep.value;
	return err;
}

int mds_is_ancestor_anywhere(const struct mds_ctx *ctx, uint64_t ancestor,
			     uint64_t dir, bool *yes)
{
	for (int depth = 0; depth < 65536; depth++) {
		uint64_t parent;
		int err;

		if (dir == ancestor || dir == MDS_ROOT_INO) {
			*yes = dir == ancestor;
			return 0;
		}
		err = parent_of(ctx, dir, &parent);
		if (err)
			return err;
		dir = parent;
	}
	return clf_fail(EIO, "metad: directory chain longer than 65536");
}
