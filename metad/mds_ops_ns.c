// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_ns.c -- the namespace requests: LOOKUP, CREATE, MKDIR,
 * READDIR, RENAME, UNLINK, RMDIR.
 *
 * Paths in requests are relative to a directory inode and may have
 * several components; the store works on one name in one directory, so
 * every handler first resolves the directory of the last name
 * (mds_path_split).  That resolution and the change are two transactions:
 * a concurrent rename of a parent in between only means the change
 * happens in the directory the path named when it was resolved, as with
 * any POSIX file system, never that the store is left inconsistent.
 *
 * Every handler checks the user of the request (s->cred) as POSIX
 * would: search on each directory walked (mds_path_split_as), write and
 * search on the directory changed, the sticky bit, open rights
 * (mds_perm.h).  New inodes belong to that user, except for a peer that
 * holds the secret (the mount, root's tools), whose owner fields count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_data.h"
#include "mds_gc.h"
#include "mds_ops_i.h"
#include "mds_peer.h"

_Static_assert(MDS_RENAME_NOREPLACE == CLF_PROTO_RENAME_NOREPLACE,
	       "rename flags");

/* CLF_PROTO_OPEN_* -> MDS_MAY_*. */
static unsigned open_rights(uint32_t flags)
{
	return (flags & CLF_PROTO_OPEN_READ ? MDS_MAY_READ : 0) |
	       (flags & CLF_PROTO_OPEN_WRITE ? MDS_MAY_WRITE : 0);
}

int mds_op_lookup(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct clf_proto_lookup_req req;
	struct mds_layout *layout = NULL;
	char path[CLF_PROTO_PATH_MAX + 1];
	struct mds_attr a;
	int err = clf_proto_lookup_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_LOOKUP, err);
	memcpy(path, req.path.ptr, req.path.len);
	path[req.path.len] = '\0';
	err = mds_resolve_as(s, req.dir, path, &a,
			     req.flags & CLF_PROTO_LOOKUP_LAYOUT ? &layout : NULL);
	if (!err && open_rights(req.flags))
		err = mds_perm_open(s->cred, &a, open_rights(req.flags), path);
	if (!err)
		err = mds_reply_lookup(rep, &a, layout);
	mds_layout_free(layout);
	return err;
}

/*
 * CREATE of a name that exists, without CLF_PROTO_CREATE_EXCL: open what
 * is there.  A file that has no layout yet gets the one asked for (the
 * store allows that while it is empty), since the reply must carry one.
 */
static int create_existing(const struct mds_session *s,
			   const struct mds_path *p,
			   const struct mds_layout *want, uint32_t flags,
			   struct mds_reply *rep)
{
	struct mds_store *st = s->ctx->store;
	struct mds_layout *layout = NULL;
	struct mds_attr a;
	int err = mds_lookup(st, p->dir, p->name, &a, &layout);

	if (err)
		return err;
	if (S_ISDIR(a.mode)) {
		err = clf_fail(EISDIR,
			       "metad: cannot create '%s' in directory %llu: it is a directory",
			       p->name, (unsigned long long)p->dir);
		goto free_layout;
	}
	/* metad follows no link; the kernel makes pipes and devices. */
	if (!S_ISREG(a.mode)) {
		err = clf_fail(S_ISLNK(a.mode) ? ELOOP : ENXIO,
			       "metad: cannot open '%s' in directory %llu: it is a %s",
			       p->name, (unsigned long long)p->dir,
			       S_ISLNK(a.mode) ? "symbolic link" : "special file");
		goto free_layout;
	}
	if (open_rights(flags)) {
		err = mds_perm_open(s->cred, &a, open_rights(flags), p->name);
		if (err)
			goto free_layout;
	}
	if (!layout) {
		mds_reply_set_ino(a.ino);
		err = mds_set_layout(st, a.ino, want);
		if (!err)
			err = mds_getattr(st, a.ino, &a);
		if (!err)
			err = mds_reply_create(rep, &a, want);
		goto free_layout;
	}
	err = mds_reply_create(rep, &a, layout);
free_layout:
	mds_layout_free(layout);
	return err;
}

/*
 * CLF_PROTO_CREATE_PLAIN: -EAGAIN where p's directory has a default
 * layout, which its client gives the file itself (after the create and a
 * look at the directory: two more round trips that most creates, in a
 * directory without one, need not pay).
 */
static int plain_dir(const struct mds_session *s, const struct mds_path *p)
{
	uint64_t ino;
	uint32_t mode;
	int err = mds_entry_lookup(s->ctx->store, p->dir,
				   CLF_PROTO_DIR_DEFAULT_NAME, &ino, &mode);

	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	return clf_fail(EAGAIN,
			"metad: directory %llu has a default layout: its client lays '%s' out",
			(unsigned long long)p->dir, p->name);
}

int mds_op_create(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct clf_proto_create_req req;
	struct mds_req_layout layout;
	struct mds_path p;
	struct mds_attr a;
	uint32_t uid, gid;
	int err = clf_proto_create_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_CREATE, err);
	err = mds_req_layout_init(s->ctx, &req.layout, &layout);
	if (err)
		goto release_req;
	err = mds_path_split_as(s, req.dir, req.path, &p);
	if (err)
		goto release_layout;
	mds_new_owner(s, &p, req.uid, req.gid, &req.mode, false, &uid, &gid);
	/* open(O_CREAT) of what is there needs no write on the directory. */
	if (!(req.flags & CLF_PROTO_CREATE_EXCL) &&
	    mds_lookup(s->ctx->store, p.dir, p.name, &a, NULL) == 0)
		err = -EEXIST;
	else
		err = mds_perm_dir_change(s->cred, &p.dir_attr,
					  mds_path_dir_name(&p), "create",
					  p.name);
	if (!err && (req.flags & CLF_PROTO_CREATE_PLAIN))
		err = plain_dir(s, &p);
	if (!err)
		err = mds_create(s->ctx->store, p.dir, p.name, req.mode, uid,
				 gid, layout.use, &a);
	if (!err) {
		/* Committed: the file exists whatever happens next. */
		mds_fault_point(MDS_FAULT_CREATES);
		err = mds_reply_create(rep, &a, layout.use);
	} else if (err == -EEXIST && !(req.flags & CLF_PROTO_CREATE_EXCL)) {
		err = create_existing(s, &p, layout.use, req.flags, rep);
	}
release_layout:
	mds_req_layout_release(&layout);
release_req:
	clf_proto_create_req_release(&req);
	return err;
}

/*
 * A directory placed on another metad: its inode there first, then its
 * name here (mds_peer.h), so that a crash between leaves an inode with
 * no name, never the reverse.
 */
static int mkdir_remote(const struct mds_session *s, const struct mds_path *p,
			uint32_t mode, uint32_t uid, uint32_t gid,
			struct mds_attr *a)
{
	uint32_t where = mds_place_dir(s->ctx, p->dir, p->name);
	struct clf_proto_peer_req req = {
		.kind = MDS_PEER_MKDIR, .dir = p->dir, .mode = mode,
		.uid = uid, .gid = gid,
	};
	struct clf_proto_peer_rep got;
	uint64_t ino;
	uint32_t m;
	int err;

	err = mds_entry_lookup(s->ctx->store, p->dir, p->name, &ino, &m);
	if (!err)
		return clf_fail(EEXIST,
				"metad: cannot make directory '%s': file exists",
				p->name);
	if (err != -ENOENT)
		return err;
	err = mds_peer_call(s->ctx, where, &req, &got);
	if (err)
		return mds_fail_ctx(err, "metad: cannot make directory '%s' on metad %u",
				    p->name, where);
	mds_attr_from_proto(&got.attr, a);
	mds_reply_set_ino(a->ino);
	err = mds_entry_add_remote(s->ctx->store, p->dir, p->name, a->ino,
				   a->mode);
	if (err) {
		struct clf_proto_peer_req undo = {
			.kind = MDS_PEER_RMDIR, .ino = a->ino,
		};

		mds_peer_call(s->ctx, where, &undo, NULL);
	}
	return err;
}

int mds_op_mkdir(const struct mds_session *s, struct wire_reader *r,
		 struct mds_reply *rep)
{
	struct clf_proto_mkdir_req req;
	struct mds_path p;
	struct mds_attr a;
	uint32_t uid, gid;
	int err = clf_proto_mkdir_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_MKDIR, err);
	err = mds_path_split_as(s, req.dir, req.path, &p);
	if (!err)
		err = mds_perm_dir_change(s->cred, &p.dir_attr,
					  mds_path_dir_name(&p), "make directory",
					  p.name);
	if (!err) {
		mds_new_owner(s, &p, req.uid, req.gid, &req.mode, true, &uid, &gid);
		if (mds_place_dir(s->ctx, p.dir, p.name) == s->ctx->index)
			err = mds_mkdir(s->ctx->store, p.dir, p.name, req.mode,
					uid, gid, &a);
		else
			err = mkdir_remote(s, &p, req.mode, uid, gid, &a);
	}
	if (!err)
		err = mds_reply_attr(rep, &a);
	return err;
}

int mds_op_readdir(const struct mds_session *s, struct wire_reader *r,
		   struct mds_reply *rep)
{
	struct clf_proto_readdir_req req;
	struct mds_dirent *ents;
	bool eof = false;
	int n, err = clf_proto_readdir_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_READDIR, err);
	err = mds_may_readdir(s, req.dir);
	if (err)
		return err;
	/* max is 1..CLF_PROTO_READDIR_MAX after decoding. */
	ents = malloc(req.max * sizeof(*ents));
	if (!ents)
		return clf_fail(ENOMEM,
				"metad: out of memory for %u directory entries",
				req.max);
	n = mds_readdir(s->ctx->store, req.dir, req.cookie, ents, req.max,
			&eof);
	err = n < 0 ? n : mds_reply_readdir(rep, ents, (uint32_t)n, eof);
	free(ents);
	return err;
}

/*
 * After an unlink or a replacing rename has committed, with the removal
 * of the inode's subfiles queued: they go from the iods now, or later
 * for an iod out of reach (mds_gc.h).
 */
static void drop_removed(const struct mds_session *s, struct mds_removed *rm)
{
	if (rm->attr.ino && rm->remote) {
		/* The entry went here; the link goes at the inode's metad. */
		struct clf_proto_peer_req req = {
			.kind = S_ISDIR(rm->attr.mode) ? MDS_PEER_RMDIR :
							 MDS_PEER_NLINK,
			.ino = rm->attr.ino,
		};
		int err = mds_peer_call(s->ctx, mds_ino_metad(rm->attr.ino),
					&req, NULL);

		if (err)
			mds_log_warn("inode %llu on metad %u keeps a link it lost: %s",
				     (unsigned long long)rm->attr.ino,
				     mds_ino_metad(rm->attr.ino),
				     CLF_Last_error());
	} else if (rm->attr.ino) {
		mds_fault_point(MDS_FAULT_UNLINKS);
		if (rm->layout)
			mds_gc_removed(s->ctx->gc, rm->attr.ino, rm->layout);
	}
	mds_removed_release(rm);
}

/* The attributes of the inode of entry name of dir, wherever it lives. */
static int entry_attr(const struct mds_session *s, uint64_t dir,
		      const char *name, struct mds_attr *a)
{
	uint64_t ino;
	uint32_t mode;
	int err = mds_entry_lookup(s->ctx->store, dir, name, &ino, &mode);

	if (!err && mds_is_local(s->ctx, ino))
		return mds_lookup(s->ctx->store, dir, name, a, NULL);
	if (!err)
		err = mds_attr_anywhere(s->ctx, ino, a);
	return err;
}

/*
 * Remove entry p->name of p->dir (op: unlink, rmdir, rename): write and
 * search on the directory, and the sticky rule.  *victim: the entry,
 * when it exists (-ENOENT else).
 */
static int may_remove(const struct mds_session *s, const struct mds_path *p,
		      const char *op, struct mds_attr *victim)
{
	int err = mds_perm_dir_change(s->cred, &p->dir_attr,
				      mds_path_dir_name(p), op, p->name);

	if (!err)
		err = entry_attr(s, p->dir, p->name, victim);
	if (!err)
		err = mds_perm_sticky(s->cred, &p->dir_attr, victim, p->name);
	return err;
}

/*
 * Rename: remove from one directory, enter (maybe replacing) into the
 * other; a directory that changes parent must be writable itself, since
 * its ".." changes (as Linux asks).
 */
static int may_rename(const struct mds_session *s, const struct mds_path *from,
		      const struct mds_path *to, struct mds_attr *moved_out)
{
	struct mds_attr moved, replaced;
	int err = may_remove(s, from, "rename", &moved);

	if (err)
		return err;
	err = mds_perm_dir_change(s->cred, &to->dir_attr,
				  mds_path_dir_name(to), "rename to", to->name);
	/* The target of a rename across metads is checked by its metad. */
	if (!err && mds_is_local(s->ctx, to->dir) &&
	    entry_attr(s, to->dir, to->name, &replaced) == 0)
		err = mds_perm_sticky(s->cred, &to->dir_attr, &replaced,
				      to->name);
	if (!err && S_ISDIR(moved.mode) && from->dir != to->dir &&
	    !mds_may(s->cred, &moved, MDS_MAY_WRITE))
		err = clf_fail(EACCES,
			       "metad: cannot move directory '%s' to another directory: permission denied (no write permission on it)",
			       from->name);
	if (!err)
		*moved_out = moved;
	return err;
}

/*
 * What the store cannot see of a rename in this metad's directories
 * whose inodes live elsewhere: a directory may not move under itself
 * (its chain of parents crosses metads), a remote directory it replaces
 * must be empty.
 */
static int rename_remote_checks(const struct mds_session *s,
				const struct mds_path *from,
				const struct mds_path *to,
				const struct mds_attr *moved)
{
	uint64_t tino;
	uint32_t tmode;
	bool inside = false;
	int err = 0;

	if (s->ctx->cfg->nmetads <= 1)
		return 0;
	if (S_ISDIR(moved->mode) && from->dir != to->dir) {
		err = mds_is_ancestor_anywhere(s->ctx, moved->ino, to->dir,
					       &inside);
		if (!err && inside)
			err = clf_fail(EINVAL,
				       "metad: cannot rename '%s': a directory cannot move into itself",
				       from->name);
	}
	if (err || !mds_is_local(s->ctx, to->dir) ||
	    mds_entry_lookup(s->ctx->store, to->dir, to->name, &tino,
			     &tmode) != 0 ||
	    mds_is_local(s->ctx, tino) || !S_ISDIR(tmode) || tino == moved->ino)
		return err;
	{
		struct clf_proto_peer_req req = {
			.kind = MDS_PEER_NONEMPTY, .ino = tino,
		};
		struct clf_proto_peer_rep got;

		err = mds_peer_call(s->ctx, mds_ino_metad(tino), &req, &got);
		if (!err && got.value)
			err = clf_fail(ENOTEMPTY,
				       "metad: cannot rename to '%s': target directory not empty",
				       to->name);
	}
	return err;
}

/*
 * The destination of a rename in a directory of another metad: a path
 * of one name (the client walks longer ones), the directory's
 * attributes from its metad.
 */
static int path_remote(const struct mds_session *s, uint64_t dir,
		       struct clf_proto_str path, struct mds_path *out)
{
	int err;

	if (memchr(path.ptr, '/', path.len))
		return clf_fail(EXDEV,
				"metad: rename across metads needs a destination of one name in its directory");
	memcpy(out->buf, path.ptr, path.len);
	out->buf[path.len] = '\0';
	out->name = out->buf;
	out->dir = dir;
	snprintf(out->dir_name, sizeof(out->dir_name), "inode %llu",
		 (unsigned long long)dir);
	err = mds_attr_anywhere(s->ctx, dir, &out->dir_attr);
	if (!err && !S_ISDIR(out->dir_attr.mode))
		err = clf_fail(ENOTDIR, "metad: %s is not a directory",
			       out->dir_name);
	return err;
}

/* A remote directory renamed here into another directory: its parent
 * link, at its metad. */
static void moved_remote(const struct mds_session *s,
			 const struct mds_path *from, const struct mds_path *to,
			 const struct mds_attr *moved)
{
	struct clf_proto_peer_req req = {
		.kind = MDS_PEER_SETPARENT, .ino = moved->ino, .dir = to->dir,
	};

	if (!S_ISDIR(moved->mode) || from->dir == to->dir ||
	    mds_is_local(s->ctx, moved->ino))
		return;
	if (mds_peer_call(s->ctx, mds_ino_metad(moved->ino), &req, NULL))
		mds_log_warn("directory %llu moved, but its metad keeps its old parent: %s",
			     (unsigned long long)moved->ino, CLF_Last_error());
}

int mds_op_rename(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct mds_removed replaced = { .layout = NULL };
	struct clf_proto_rename_req req;
	struct mds_path from, to;
	struct mds_attr moved;
	int err = clf_proto_rename_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_RENAME, err);
	err = mds_path_split_as(s, req.dir, req.path, &from);
	if (!err && mds_is_local(s->ctx, req.new_dir))
		err = mds_path_split_as(s, req.new_dir, req.new_path, &to);
	else if (!err)
		err = path_remote(s, req.new_dir, req.new_path, &to);
	if (!err)
		err = may_rename(s, &from, &to, &moved);
	if (!err)
		err = rename_remote_checks(s, &from, &to, &moved);
	if (err)
		return err;
	if (!mds_is_local(s->ctx, to.dir))
		err = mds_xrename(s->ctx, from.dir, from.name, moved.ino,
				  moved.mode, to.dir, to.name,
				  req.flags & CLF_PROTO_RENAME_NOREPLACE);
	else
		err = mds_rename(s->ctx->store, from.dir, from.name, to.dir,
				 to.name,
				 req.flags & CLF_PROTO_RENAME_NOREPLACE,
				 &replaced);
	if (!err && mds_is_local(s->ctx, to.dir)) {
		moved_remote(s, &from, &to, &moved);
		drop_removed(s, &replaced);
	}
	if (!err)
		err = mds_reply_empty(rep);
	return err;
}

/* The entry of a remote inode goes here; drop_removed then takes its
 * link off at its metad. */
static int unlink_remote(const struct mds_session *s, const struct mds_path *p,
			 const struct mds_attr *victim,
			 struct mds_removed *removed)
{
	uint32_t mode;
	int err;

	if (S_ISDIR(victim->mode))
		return clf_fail(EISDIR, "metad: cannot unlink '%s': is a directory",
				p->name);
	err = mds_entry_del_remote(s->ctx->store, p->dir, p->name,
				   victim->ino, &mode);
	if (!err) {
		removed->attr = *victim;
		removed->remote = true;
	}
	return err;
}

/* A remote directory goes at its metad first, its entry here after. */
static int rmdir_remote(const struct mds_session *s, const struct mds_path *p,
			const struct mds_attr *victim)
{
	struct clf_proto_peer_req req = {
		.kind = MDS_PEER_RMDIR, .ino = victim->ino,
	};
	uint32_t mode;
	int err;

	if (!S_ISDIR(victim->mode))
		return clf_fail(ENOTDIR,
				"metad: cannot remove directory '%s': not a directory",
				p->name);
	err = mds_peer_call(s->ctx, mds_ino_metad(victim->ino), &req, NULL);
	if (err && err != -ENOENT)
		return err;
	return mds_entry_del_remote(s->ctx->store, p->dir, p->name,
				    victim->ino, &mode);
}

int mds_op_unlink(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct mds_removed removed = { .layout = NULL };
	struct clf_proto_path_req req;
	struct mds_attr victim;
	struct mds_path p;
	int err = clf_proto_path_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_UNLINK, err);
	err = mds_path_split_as(s, req.dir, req.path, &p);
	if (!err)
		err = may_remove(s, &p, "unlink", &victim);
	if (!err && !mds_is_local(s->ctx, victim.ino))
		err = unlink_remote(s, &p, &victim, &removed);
	else if (!err)
		err = mds_unlink(s->ctx->store, p.dir, p.name, &removed);
	if (!err) {
		drop_removed(s, &removed);
		err = mds_reply_empty(rep);
	}
	return err;
}

/* may_remove for rmdir; an entry whose inode went (a crash between
 * the two sides of a remote rmdir) can still be removed. */
static int may_remove_dir(const struct mds_session *s, const struct mds_path *p,
			  struct mds_attr *victim)
{
	uint64_t ino;
	uint32_t mode;
	int err = may_remove(s, p, "remove directory", victim);

	if (err == -ENOENT &&
	    mds_entry_lookup(s->ctx->store, p->dir, p->name, &ino,
			     &mode) == 0 && !mds_is_local(s->ctx, ino)) {
		*victim = (struct mds_attr){ .ino = ino, .mode = mode };
		err = 0;
	}
	return err;
}

int mds_op_rmdir(const struct mds_session *s, struct wire_reader *r,
		 struct mds_reply *rep)
{
	struct clf_proto_path_req req;
	struct mds_attr victim;
	struct mds_path p;
	int err = clf_proto_path_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_RMDIR, err);
	err = mds_path_split_as(s, req.dir, req.path, &p);
	if (!err)
		err = may_remove_dir(s, &p, &victim);
	if (!err && !mds_is_local(s->ctx, victim.ino))
		err = rmdir_remote(s, &p, &victim);
	else if (!err)
		err = mds_rmdir(s->ctx->store, p.dir, p.name);
	if (!err)
		err = mds_reply_empty(rep);
	return err;
}
