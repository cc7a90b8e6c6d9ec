/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_peer.h -- a namespace spread over several metads: what one metad
 * asks another (MD_PEER, include/clf_proto.h "Several metads"), and the
 * operations that span two of them.
 *
 * The metad that receives a client's request about a name is the one
 * that holds the name's directory; when the inode of that name lives on
 * another metad, it does its own part and asks the inode's metad for
 * the rest.  The two sides are ordered so that a crash between them
 * leaves an inode without a name (space lost until clf fsck), never a
 * name without an inode:
 *   mkdir      the inode there first, then the entry here;
 *   link       one link more there first, then the entry here;
 *   unlink     the entry here first, then one link less there;
 *   rmdir      the empty directory there first (emptiness and removal
 *              in one transaction), then the entry here: an entry whose
 *              inode is gone can always be removed again.
 * A rename across metads is a two-phase commit (mds_xrename.c).
 *
 * Connections between metads hold the secret; a metad serves MD_PEER
 * only on such connections (mds_ops_peer.c).
 */
#ifndef MDS_PEER_H
#define MDS_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "mds.h"
#include "proto.h"

/* MD_PEER kinds: what the fields of the request mean, what comes back. */
enum mds_peer_kind {
	MDS_PEER_MKDIR = 1,	/* dir (parent), mode, uid, gid -> attr of a
				   new directory with no entry here */
	MDS_PEER_NLINK = 2,	/* ino, flags 1: one name more, 0: one less
				   -> attr (nlink 0: the inode went) */
	MDS_PEER_RMDIR = 3,	/* ino: remove the empty directory */
	MDS_PEER_PARENT = 4,	/* ino -> value: its parent */
	MDS_PEER_SETPARENT = 5,	/* ino, dir: the directory moved under dir */
	MDS_PEER_NONEMPTY = 6,	/* ino -> value: 1 when it has entries */
	MDS_PEER_GETATTR = 7,	/* ino -> attr */
	MDS_PEER_PREPARE = 8,	/* txid, dir, name, ino, mode, flags (rename
				   flags): the participant's intent to
				   enter name -> ino (mds_xrename.c) */
	MDS_PEER_COMMIT = 9,	/* txid: apply the intent */
	MDS_PEER_ABORT = 10,	/* txid: forget it */
	MDS_PEER_QUERY = 11,	/* txid -> value: the coordinator's state of
				   it, MDS_INTENT_* or 0: none (aborted or
				   finished) */
};

/* Which metad holds inode ino. */
static inline uint32_t mds_ino_metad(uint64_t ino)
{
	return CLF_PROTO_INO_METAD(ino);
}

/* Whether inode ino lives on this metad. */
static inline bool mds_is_local(const struct mds_ctx *ctx, uint64_t ino)
{
	return mds_ino_metad(ino) == ctx->index;
}

/*
 * The metad that gets a new directory name in directory dir: a hash of
 * both, so that a tree spreads over every metad.  This one when alone.
 */
uint32_t mds_place_dir(const struct mds_ctx *ctx, uint64_t dir,
		       const char *name);

/*
 * mds_peer_call - one MD_PEER request to metad index and its reply
 *
 * rep may be NULL.  Returns 0, the other metad's status with its message,
 * or -EHOSTDOWN when it could not be reached (also -EINVAL for an index
 * outside the configuration).
 */
int mds_peer_call(const struct mds_ctx *ctx, uint32_t index,
		  const struct clf_proto_peer_req *req,
		  struct clf_proto_peer_rep *rep);

/* The attributes of ino wherever it lives (this store or its metad). */
int mds_attr_anywhere(const struct mds_ctx *ctx, uint64_t ino,
		      struct mds_attr *a);

/* Protocol attributes to the store's and back (mds_wire.c). */
void mds_attr_from_proto(const struct clf_proto_attr *p, struct mds_attr *a);
void mds_attr_to_proto(const struct mds_attr *a, struct clf_proto_attr *p);

/*
 * Is ancestor on the parent chain of directory dir (dir included),
 * following it across metads?  0 and *yes, or a negative errno.
 */
int mds_is_ancestor_anywhere(const struct mds_ctx *ctx, uint64_t ancestor,
			     uint64_t dir, bool *yes);

/* ------------------------------------------------------------------ */
/* Rename across metads (mds_xrename.c)                                */
/* ------------------------------------------------------------------ */

/*
 * mds_xrename - move name src_name of local directory src_dir, naming
 * inode ino of kind mode, to dst_name in directory dst_dir of another
 * metad: two-phase, this metad coordinating.  The caller checked
 * permissions.  Returns 0 once the move is decided (the other metad
 * finishes it, at once or when it is back), or a negative errno with
 * nothing changed.
 */
int mds_xrename(const struct mds_ctx *ctx, uint64_t src_dir,
		const char *src_name, uint64_t ino, uint32_t mode,
		uint64_t dst_dir, const char *dst_name, uint32_t flags);

/* MDS_PEER_PREPARE (*value 1: nothing to do), COMMIT, ABORT (the
 * participant's side) and QUERY (the coordinator's). */
int mds_xrename_serve(const struct mds_ctx *ctx,
		      const struct clf_proto_peer_req *req, uint64_t *value);

/*
 * Finish or roll back the renames this metad coordinated and did not
 * finish (a crash, a participant out of reach): at start, and then
 * from a thread every MDS_XRENAME_RETRY_MS while any is left.
 */
#define MDS_XRENAME_RETRY_MS 300
int mds_xrename_recover_start(struct mds_ctx *ctx);
void mds_xrename_recover_stop(void);

#endif /* MDS_PEER_H */
