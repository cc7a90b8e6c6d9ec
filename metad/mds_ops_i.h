/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_ops_i.h -- inside the request handlers: one function per opcode,
 * and the conversions between the store's structs and the protocol's
 * (mds_wire.c) that they share.
 */
#ifndef MDS_OPS_I_H
#define MDS_OPS_I_H

#include <stdbool.h>
#include <stdint.h>

#include "mds_ops.h"
#include "mds_store.h"
#include "proto.h"

/* ------------------------------------------------------------------ */
/* Handlers: decode from r, act, encode into rep (mds_ops_*.c)         */
/* ------------------------------------------------------------------ */

typedef int mds_op_fn(const struct mds_session *s, struct wire_reader *r,
		      struct mds_reply *rep);

/* Namespace (mds_ops_ns.c). */
mds_op_fn mds_op_lookup, mds_op_create, mds_op_mkdir, mds_op_readdir,
	mds_op_rename, mds_op_unlink, mds_op_rmdir;
/* Attributes and layouts (mds_ops_attr.c). */
mds_op_fn mds_op_getattr, mds_op_setattr, mds_op_set_layout,
	mds_op_get_layout, mds_op_update_size;
/* Special files and hard links (mds_ops_link.c). */
mds_op_fn mds_op_symlink, mds_op_readlink, mds_op_link, mds_op_mknod;
/* Byte-range locks (mds_ops_lock.c). */
mds_op_fn mds_op_setlk, mds_op_getlk, mds_op_unlock_owner;
/* O_APPEND ranges (mds_ops_append.c). */
mds_op_fn mds_op_append;
/* Entries with attributes (mds_ops_dirplus.c). */
mds_op_fn mds_op_readdirplus;
mds_op_fn mds_op_sub_move;	/* mds_move.c */
mds_op_fn mds_op_iod_state;	/* mds_ops_iod.c */
/* Capabilities for the iods (mds_ops_cap.c). */
mds_op_fn mds_op_cap;
/* A namespace over several metads (mds_ops_peer.c). */
mds_op_fn mds_op_resolve, mds_op_peer;
/* The daemon itself (mds_ops.c). */
mds_op_fn mds_op_ping, mds_op_status, mds_op_statfs, mds_op_instance;

/*
 * A body that did not decode (err from the decoder): one log line naming
 * the peer, and err returned with the message "metad: malformed OP: why".
 */
int mds_bad_request(const struct mds_session *s, uint16_t op, int err);

/* ------------------------------------------------------------------ */
/* Paths (mds_wire.c)                                                  */
/* ------------------------------------------------------------------ */

/* A request path split into the directory that holds its last name. */
struct mds_path {
	char buf[CLF_PROTO_PATH_MAX + 1];	/* the path, cut at the last
						   '/' */
	uint64_t dir;		/* inode of the directory of name */
	const char *name;	/* the last component, inside buf */
	/* Filled by mds_path_split_as only: */
	struct mds_attr dir_attr;	/* of dir */
	char dir_name[64];	/* dir for messages when buf has no '/' */
};

/*
 * Resolve every component of path (relative to directory dir) but the
 * last one, which must name a directory.  Returns 0 and *out, or the
 * store's error (-ENOENT, -ENOTDIR, ...).
 */
int mds_path_split(struct mds_store *st, uint64_t dir,
		   struct clf_proto_str path, struct mds_path *out);

/* ------------------------------------------------------------------ */
/* Paths as the user of the request (mds_ops_perm.c)                   */
/* ------------------------------------------------------------------ */

/*
 * mds_path_split, checking search permission on every directory walked
 * for s->cred (-EACCES naming it), and filling out->dir_attr.  The
 * handler then checks what it does in out->dir (mds_perm.h).
 */
int mds_path_split_as(const struct mds_session *s, uint64_t dir,
		      struct clf_proto_str path, struct mds_path *out);

/* The name of p's directory, for messages ("a/b", "/", "inode 7"). */
const char *mds_path_dir_name(const struct mds_path *p);

/* mds_resolve_part, checking search permission on every directory. */
int mds_resolve_part_as(const struct mds_session *s, uint64_t dir,
			const char *path, uint64_t *ino, size_t *done);

/* mds_resolve, checking search permission on every directory walked. */
int mds_resolve_as(const struct mds_session *s, uint64_t dir,
		   const char *path, struct mds_attr *attr,
		   struct mds_layout **layout);

/*
 * The owner of an inode made in p's directory (p from mds_path_split_as):
 * the user's, or the owner fields of a trusted peer (req_uid, req_gid);
 * the group of a setgid directory, which also makes a new directory
 * setgid (*mode).
 */
void mds_new_owner(const struct mds_session *s, const struct mds_path *p,
		   uint32_t req_uid, uint32_t req_gid, uint32_t *mode,
		   bool is_dir, uint32_t *uid, uint32_t *gid);

/* The attributes of ino, to check a request on it ("ino N" in errors). */
int mds_attr_of(const struct mds_session *s, uint64_t ino,
		struct mds_attr *a, char *name, size_t len);

/* May the session list directory dir?  (Not a directory: the store
 * says so when it reads it.)  0 or a negative errno. */
int mds_may_readdir(const struct mds_session *s, uint64_t dir);

/* ------------------------------------------------------------------ */
/* Layouts from requests (mds_wire.c)                                  */
/* ------------------------------------------------------------------ */

/* The layout a request asks for, as the store takes it. */
struct mds_req_layout {
	const struct mds_layout *use;	/* what to store: rr or &ex */
	struct mds_layout *rr;		/* round robin; owned */
	struct mds_layout ex;		/* explicit; subfiles owned, their
					   types borrowed from the request */
};

/*
 * Resolve a request's layout: a round robin one with the configuration's
 * defaults for its zero fields and its iod count; an explicit one as is.
 * Refuses (-EINVAL) iod indexes outside the configuration.  The result
 * borrows from pl; release it with mds_req_layout_release.
 */
int mds_req_layout_init(const struct mds_ctx *ctx,
			const struct clf_proto_layout *pl,
			struct mds_req_layout *out);
void mds_req_layout_release(struct mds_req_layout *l);

/* ------------------------------------------------------------------ */
/* Replies (mds_wire.c); each returns 0 or -ENOMEM, -EIO (a value the    */
/* protocol cannot carry), with rep untouched on failure              */
/* ------------------------------------------------------------------ */

int mds_reply_empty(struct mds_reply *rep);
int mds_reply_attr(struct mds_reply *rep, const struct mds_attr *a);
int mds_reply_layout(struct mds_reply *rep, const struct mds_layout *l);
/* l may be NULL: no layout in the reply. */
int mds_reply_lookup(struct mds_reply *rep, const struct mds_attr *a,
		     const struct mds_layout *l);
int mds_reply_create(struct mds_reply *rep, const struct mds_attr *a,
		     const struct mds_layout *l);
int mds_reply_readdir(struct mds_reply *rep, const struct mds_dirent *ents,
		      uint32_t n, bool eof);
/* layouts[i]: entry i's layout or NULL (none sent). */
int mds_reply_readdirplus(struct mds_reply *rep,
			  const struct mds_dirent *ents,
			  struct mds_layout *const *layouts, uint32_t n,
			  bool eof);
int mds_reply_statfs(struct mds_reply *rep, const struct clf_proto_statfs *m);
int mds_reply_instance(struct mds_reply *rep,
		       const struct clf_proto_instance *m);
int mds_reply_status(struct mds_reply *rep, const struct clf_proto_status *m);
int mds_reply_readlink(struct mds_reply *rep,
		       const struct clf_proto_readlink_rep *m);
int mds_reply_lock_holder(struct mds_reply *rep,
			  const struct clf_proto_lock_holder *m);
int mds_reply_append(struct mds_reply *rep,
		     const struct clf_proto_append_rep *m);
int mds_reply_resolve(struct mds_reply *rep,
		      const struct clf_proto_resolve_rep *m);
int mds_reply_peer(struct mds_reply *rep, const struct clf_proto_peer_rep *m);

#endif /* MDS_OPS_I_H */
