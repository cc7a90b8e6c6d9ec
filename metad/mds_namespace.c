// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_namespace.c -- the directory tree: lookup, path resolution,
 * create, mkdir, symlink, mknod, link, readdir, rename, unlink, rmdir.
 *
 * Each operation is one transaction: the reads and checks first, then the
 * writes (records borrowed from the database may move with any write; see
 * mds_inode_put), then one commit.  An entry lives in two databases, by
 * name (dirents) and by cookie (cookies); entry_add and entry_del keep
 * them together.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clf_proto.h"
#include "error.h"
#include "mds_store_i.h"
#include "wire.h"

#define WHAT_MAX 640
#define COOKIE_VAL_MAX (8 + MDS_NAME_MAX)

/* "VERB 'name' in directory N", for messages. */
static void what_entry(char what[WHAT_MAX], const char *verb, const char *name,
		       uint64_t dir)
{
	snprintf(what, WHAT_MAX, "%s '%.255s' in directory %llu", verb,
		 name ? name : "", (unsigned long long)dir);
}

/*
 * err from reading inode ino that an entry or a parent link names: its
 * absence means the store is inconsistent (-EIO), not that the caller
 * asked for something missing.
 */
static int dangling(int err, uint64_t ino, const char *what)
{
	if (err != -ENOENT && err != -ENOTDIR)
		return err;
	return clf_fail(EIO, "mds: cannot %s: inode %llu, named in the tree, "
			"is missing or of the wrong kind", what,
			(unsigned long long)ino);
}

/*
 * The entry name of directory dir (a checked name).  Returns 0 with *ino
 * and *cookie, -ENOENT without a message, or -EIO.
 */
static int dirent_get(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		      const char *name, uint64_t *ino, uint64_t *cookie,
		      const char *what)
{
	uint32_t mode;

	return mds_entry_read(s, txn, dir, name, ino, cookie, &mode, what);
}

/* An entry that names an inode of another metad: -EREMOTE, with a
 * message the client never shows (it asks the inode's metad). */
static int remote_entry(uint64_t ino, const char *what)
{
	return clf_fail(EREMOTE, "mds: cannot %s: inode %llu lives on metad %u",
			what, (unsigned long long)ino, CLF_PROTO_INO_METAD(ino));
}

/* Does directory dir hold any entry?  0 no, 1 yes, or a negative errno. */
int mds_dir_has_entries(struct mds_store *s, MDB_txn *txn, uint64_t dir,
			const char *what)
{
	uint8_t kbuf[8];
	MDB_cursor *cur;
	MDB_val key = { .mv_size = sizeof(kbuf), .mv_data = kbuf }, val;
	int rc;

	mds_put_be64(kbuf, dir);
	rc = mdb_cursor_open(txn, s->dirents, &cur);
	if (rc)
		return mds_lmdb_fail(rc, what);
	rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return mds_lmdb_fail(rc, what);
	return key.mv_size > 8 && mds_get_be64(key.mv_data) == dir;
}

/* Add entry name -> ino to dir, with the next cookie of *sb. */
static int entry_add(struct mds_store *s, MDB_txn *txn, struct mds_super *sb,
		     uint64_t dir, const char *name, uint64_t ino,
		     const char *what)
{
	return mds_entry_add(s, txn, sb, dir, name, ino, 0, what);
}

int mds_entry_add(struct mds_store *s, MDB_txn *txn, struct mds_super *sb,
		  uint64_t dir, const char *name, uint64_t ino, uint32_t mode,
		  const char *what)
{
	uint8_t dkey[MDS_DIRENT_KEY_MAX], dval[MDS_DIRENT_REMOTE_LEN];
	uint8_t ckey[MDS_COOKIE_KEY_LEN], cval[COOKIE_VAL_MAX];
	size_t len = strlen(name);
	uint64_t cookie = sb->next_cookie++;
	struct wire_writer w = { .buf = cval, .cap = sizeof(cval) };
	MDB_val key, val;
	int rc;

	mds_dirent_key(dkey, dir, name, len, &key);
	val.mv_data = dval;
	val.mv_size = mds_dirent_encode_mode(ino, cookie,
					     mds_ino_local(s, ino) ? 0 : mode,
					     dval);
	rc = mdb_put(txn, s->dirents, &key, &val, MDB_NOOVERWRITE);
	if (rc == MDB_KEYEXIST)
		return clf_fail(EIO, "mds: cannot %s: entry appeared", what);
	if (rc)
		return mds_lmdb_fail(rc, what);
	mds_cookie_key(ckey, dir, cookie, &key);
	wire_put_u64(&w, ino);
	wire_put_bytes(&w, name, len);
	val.mv_data = cval;
	val.mv_size = w.pos;
	rc = mdb_put(txn, s->cookies, &key, &val, MDB_NOOVERWRITE);
	if (rc == MDB_KEYEXIST)
		return clf_fail(EIO, "mds: cannot %s: cookie %llu in use "
				"(the cookie counter is behind)", what,
				(unsigned long long)cookie);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

/* Remove entry name (whose cookie is cookie) from dir. */
static int entry_del(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		     const char *name, uint64_t cookie, const char *what)
{
	return mds_entry_del(s, txn, dir, name, cookie, what);
}

int mds_entry_del(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		  const char *name, uint64_t cookie, const char *what)
{
	uint8_t dkey[MDS_DIRENT_KEY_MAX], ckey[MDS_COOKIE_KEY_LEN];
	MDB_val key;
	int rc;

	mds_dirent_key(dkey, dir, name, strlen(name), &key);
	rc = mdb_del(txn, s->dirents, &key, NULL);
	if (!rc) {
		mds_cookie_key(ckey, dir, cookie, &key);
		rc = mdb_del(txn, s->cookies, &key, NULL);
	}
	if (rc == MDB_NOTFOUND)
		return clf_fail(EIO, "mds: cannot %s: entry half missing", what);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

/* A directory's times after a change of its entries; nlink by delta. */
static int dir_changed(struct mds_store *s, MDB_txn *txn,
		       struct mds_inode *dir, int delta, int64_t now,
		       const char *what)
{
	return mds_dir_changed(s, txn, dir, delta, now, what);
}

int mds_dir_changed(struct mds_store *s, MDB_txn *txn, struct mds_inode *dir,
		    int delta, int64_t now, const char *what)
{
	dir->attr.mtime = now;
	dir->attr.ctime = now;
	dir->attr.nlink = (uint32_t)((int64_t)dir->attr.nlink + delta);
	return mds_inode_put(s, txn, dir, false, what);
}

/* The inode behind entry name of dir, in txn. */
static int lookup_in(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		     const char *name, struct mds_inode *out, const char *what)
{
	struct mds_inode parent;
	struct mds_entry e;
	int err;

	err = mds_entry_find(s, txn, dir, name, &parent, &e,
			     "no such file or directory", what);
	if (err)
		return err;
	if (!mds_ino_local(s, e.ino))
		return remote_entry(e.ino, what);
	return dangling(mds_inode_get(s, txn, e.ino, out, what), e.ino, what);
}

int mds_lookup(struct mds_store *s, uint64_t dir, const char *name,
	       struct mds_attr *attr, struct mds_layout **layout)
{
	char what[WHAT_MAX];
	struct mds_layout *l = NULL;
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	what_entry(what, "look up", name, dir);
	err = mds_entry_begin(s, false, name, &txn, what);
	if (err)
		return err;
	err = lookup_in(s, txn, dir, name, &in, what);
	if (!err && layout)
		err = mds_inode_layout(&in, &l);
	mdb_txn_abort(txn);
	if (err)
		return err;
	*attr = in.attr;
	if (layout)
		*layout = l;
	return 0;
}

/*
 * Walk path from *in (a directory) in txn; *in becomes the last inode.
 * At an inode of another metad: with stop NULL, -EREMOTE; else 1, with
 * the inode in stop->ino and the bytes of path up to and including its
 * name in stop->done.
 */
struct walk_stop {
	uint64_t ino;
	size_t done;
};

static int walk(struct mds_store *s, MDB_txn *txn, const char *path,
		struct mds_inode *in, mds_search_fn *may_search, void *arg,
		struct walk_stop *stop, const char *what)
{
	char comp[MDS_NAME_MAX + 1];
	const char *p = path, *done = path; /* done: the part walked */
	uint64_t ino, cookie;
	int err;

	for (;;) {
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (len > MDS_NAME_MAX)
			return clf_fail(ENAMETOOLONG,
				"mds: cannot %s: a component is longer than %d bytes",
				what, MDS_NAME_MAX);
		memcpy(comp, p, len);
		comp[len] = '\0';
		if (!S_ISDIR(in->attr.mode))
			return clf_fail(ENOTDIR,
				"mds: cannot %s: '%.*s' is not a directory",
				what, (int)(done - path), path);
		if (may_search && strcmp(comp, ".")) {
			err = may_search(arg, &in->attr, path,
					 (size_t)(done - path));
			if (err)
				return err;
		}
		p += len;
		done = p;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			ino = in->parent;
			if (!mds_ino_local(s, ino))
				goto remote;
			err = dangling(mds_dir_get(s, txn, ino, in, what), ino,
				       what);
			if (err)
				return err;
			continue;
		}
		err = dirent_get(s, txn, in->attr.ino, comp, &ino, &cookie,
				 what);
		if (err == -ENOENT)
			return clf_fail(ENOENT, "mds: cannot %s: '%.*s' does not exist",
					what, (int)(p - path), path);
		if (!err && !mds_ino_local(s, ino))
			goto remote;
		if (!err)
			err = dangling(mds_inode_get(s, txn, ino, in, what),
				       ino, what);
		if (err)
			return err;
	}
	if (p > path && p[-1] == '/' && !S_ISDIR(in->attr.mode))
		return clf_fail(ENOTDIR, "mds: cannot %s: not a directory", what);
	return 0;
remote:
	if (!stop)
		return remote_entry(ino, what);
	stop->ino = ino;
	stop->done = (size_t)(p - path);
	return 1;
}

int mds_resolve(struct mds_store *s, uint64_t dir, const char *path,
		struct mds_attr *attr, struct mds_layout **layout)
{
	return mds_resolve_checked(s, dir, path, NULL, NULL, attr, layout);
}

int mds_resolve_checked(struct mds_store *s, uint64_t dir, const char *path,
			mds_search_fn *may_search, void *arg,
			struct mds_attr *attr, struct mds_layout **layout)
{
	char what[WHAT_MAX];
	struct mds_layout *l = NULL;
	struct mds_inode in;
	MDB_txn *txn;
	size_t len;
	int err;

	if (!path)
		return clf_fail(EINVAL, "mds: cannot resolve: no path");
	snprintf(what, sizeof(what), "resolve '%.512s'", path);
	len = strnlen(path, MDS_PATH_MAX + 1);
	if (len > MDS_PATH_MAX)
		return clf_fail(ENAMETOOLONG,
				"mds: cannot %s: path longer than %d bytes",
				what, MDS_PATH_MAX);
	if (len == 0)
		return clf_fail(ENOENT, "mds: cannot resolve an empty path");
	err = mds_txn_begin(s, false, &txn, what);
	if (err)
		return err;
	err = mds_dir_get(s, txn, path[0] == '/' ? MDS_ROOT_INO : dir, &in,
			  what);
	if (!err)
		err = walk(s, txn, path, &in, may_search, arg, NULL, what);
	if (!err && layout)
		err = mds_inode_layout(&in, &l);
	mdb_txn_abort(txn);
	if (err)
		return err;
	*attr = in.attr;
	if (layout)
		*layout = l;
	return 0;
}

int mds_resolve_part(struct mds_store *s, uint64_t dir, const char *path,
		     mds_search_fn *may_search, void *arg, uint64_t *ino,
		     size_t *done)
{
	char what[WHAT_MAX];
	struct walk_stop stop = { 0 };
	struct mds_inode in;
	MDB_txn *txn;
	size_t len;
	int err;

	snprintf(what, sizeof(what), "resolve '%.512s'", path);
	len = strnlen(path, MDS_PATH_MAX + 1);
	if (len == 0 || len > MDS_PATH_MAX)
		return clf_fail(len ? ENAMETOOLONG : ENOENT,
				"mds: cannot %s: bad path length", what);
	err = mds_txn_begin(s, false, &txn, what);
	if (err)
		return err;
	err = mds_dir_get(s, txn, dir, &in, what);
	if (!err)
		err = walk(s, txn, path, &in, may_search, arg, &stop, what);
	mdb_txn_abort(txn);
	if (err < 0)
		return err;
	*ino = err ? stop.ino : in.attr.ino;
	*done = err ? stop.done : len;
	return 0;
}

/*
 * Enter the new inode *in (attributes but number and times filled in)
 * as name in dir, in one transaction.
 */
static int make_entry(struct mds_store *s, uint64_t dir, const char *name,
		      struct mds_inode *in, const char *what)
{
	bool is_dir = S_ISDIR(in->attr.mode);
	struct mds_inode parent;
	struct mds_super sb;
	MDB_txn *txn;
	int64_t now;
	int err;

	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_entry_check_new(s, txn, dir, name, &parent, what);
	if (err)
		goto abort;
	if (is_dir && parent.attr.nlink == UINT32_MAX) {
		err = clf_fail(EMLINK, "mds: cannot %s: too many subdirectories",
			       what);
		goto abort;
	}
	err = mds_super_get(s, txn, &sb);
	if (err)
		goto abort;
	now = clf_wall_ns();
	in->attr.ino = sb.next_ino++;
	in->attr.atime = in->attr.mtime = in->attr.ctime = now;
	in->parent = is_dir ? dir : 0;
	err = mds_inode_put(s, txn, in, true, what);
	if (!err)
		err = entry_add(s, txn, &sb, dir, name, in->attr.ino, what);
	if (!err)
		err = dir_changed(s, txn, &parent, is_dir ? 1 : 0, now, what);
	if (!err)
		err = mds_super_put(s, txn, &sb, what);
	if (err)
		goto abort;
	return mds_txn_commit(txn, what);
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_create(struct mds_store *s, uint64_t dir, const char *name,
	       uint32_t mode, uint32_t uid, uint32_t gid,
	       const struct mds_layout *layout, struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in = {
		.attr = { .mode = S_IFREG | mode, .uid = uid, .gid = gid,
			  .nlink = 1 },
	};
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int err;

	what_entry(what, "create", name, dir);
	err = mds_name_check(name, what);
	if (err)
		return err;
	if (mode & ~07777u)
		return clf_fail(EINVAL, "mds: cannot %s: mode %#o", what, mode);
	if (layout) {
		err = mds_layout_check(layout);
		if (!err)
			err = mds_layout_encode(layout, &raw, &raw_len);
		if (err)
			return mds_fail_context(err, what);
	}
	in.layout = raw;
	in.layout_len = raw_len;
	in.attr.has_layout = raw != NULL;
	err = make_entry(s, dir, name, &in, what);
	free(raw);
	if (err)
		return err;
	*attr = in.attr;
	return 0;
}

int mds_mkdir(struct mds_store *s, uint64_t dir, const char *name,
	      uint32_t mode, uint32_t uid, uint32_t gid,
	      struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in = {
		.attr = { .mode = S_IFDIR | mode, .uid = uid, .gid = gid,
			  .nlink = 2 },
	};
	int err;

	what_entry(what, "make directory", name, dir);
	err = mds_name_check(name, what);
	if (err)
		return err;
	if (mode & ~07777u)
		return clf_fail(EINVAL, "mds: cannot %s: mode %#o", what, mode);
	err = make_entry(s, dir, name, &in, what);
	if (err)
		return err;
	*attr = in.attr;
	return 0;
}

int mds_symlink(struct mds_store *s, uint64_t dir, const char *name,
		const char *target, uint32_t uid, uint32_t gid,
		struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in = {
		.attr = { .mode = S_IFLNK | 0777, .uid = uid, .gid = gid,
			  .nlink = 1 },
	};
	size_t len;
	int err;

	what_entry(what, "make symbolic link", name, dir);
	err = mds_name_check(name, what);
	if (err)
		return err;
	len = target ? strnlen(target, MDS_SYMLINK_MAX + 1) : 0;
	if (len == 0)
		return clf_fail(ENOENT, "mds: cannot %s: empty target", what);
	if (len > MDS_SYMLINK_MAX)
		return clf_fail(ENAMETOOLONG,
				"mds: cannot %s: target longer than %d bytes",
				what, MDS_SYMLINK_MAX);
	in.target = (const uint8_t *)target;
	in.target_len = (uint32_t)len;
	in.attr.size = (int64_t)len;
	err = make_entry(s, dir, name, &in, what);
	if (err)
		return err;
	*attr = in.attr;
	return 0;
}

int mds_mknod(struct mds_store *s, uint64_t dir, const char *name,
	      uint32_t mode, uint64_t rdev, uint32_t uid, uint32_t gid,
	      struct mds_attr *attr)
{
	char what[WHAT_MAX];
	uint32_t fmt = mode & S_IFMT;
	struct mds_inode in = {
		.attr = { .mode = mode, .uid = uid, .gid = gid, .nlink = 1,
			  .rdev = rdev },
	};
	int err;

	what_entry(what, "make node", name, dir);
	err = mds_name_check(name, what);
	if (err)
		return err;
	if ((mode & ~(uint32_t)(S_IFMT | 07777)) ||
	    (fmt != S_IFIFO && fmt != S_IFSOCK && fmt != S_IFCHR &&
	     fmt != S_IFBLK))
		return clf_fail(EINVAL, "mds: cannot %s: mode %#o", what, mode);
	if ((fmt == S_IFIFO || fmt == S_IFSOCK) && rdev)
		return clf_fail(EINVAL,
				"mds: cannot %s: a device number on a fifo or socket",
				what);
	err = make_entry(s, dir, name, &in, what);
	if (err)
		return err;
	*attr = in.attr;
	return 0;
}

int mds_link(struct mds_store *s, uint64_t ino, uint64_t dir,
	     const char *name, struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode parent, in;
	struct mds_super sb;
	MDB_txn *txn;
	int64_t now;
	int err;

	snprintf(what, sizeof(what), "link inode %llu as '%.255s' in directory %llu",
		 (unsigned long long)ino, name ? name : "",
		 (unsigned long long)dir);
	err = mds_entry_begin(s, true, name, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err && S_ISDIR(in.attr.mode))
		err = clf_fail(EPERM, "mds: cannot %s: it is a directory", what);
	if (!err && in.attr.nlink >= MDS_LINK_MAX)
		err = clf_fail(EMLINK, "mds: cannot %s: it has %u names already",
			       what, in.attr.nlink);
	if (!err)
		err = mds_entry_check_new(s, txn, dir, name, &parent, what);
	if (!err)
		err = mds_super_get(s, txn, &sb);
	if (err)
		goto abort;
	now = clf_wall_ns();
	in.attr.nlink++;
	in.attr.ctime = now;
	/* Put first: in's layout and target borrow from its own record. */
	err = mds_inode_put(s, txn, &in, false, what);
	if (!err)
		err = entry_add(s, txn, &sb, dir, name, ino, what);
	if (!err)
		err = dir_changed(s, txn, &parent, 0, now, what);
	if (!err)
		err = mds_super_put(s, txn, &sb, what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	if (!err)
		*attr = in.attr;
	return err;
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_readlink(struct mds_store *s, uint64_t ino, char **target)
{
	char what[WHAT_MAX];
	struct mds_inode in;
	char *copy = NULL;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "read symbolic link %llu",
		 (unsigned long long)ino);
	err = mds_txn_begin(s, false, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err && !S_ISLNK(in.attr.mode))
		err = clf_fail(EINVAL, "mds: cannot %s: not a symbolic link",
			       what);
	if (!err) {
		copy = malloc(in.target_len + 1);
		if (!copy)
			err = clf_fail(ENOMEM, "mds: cannot %s: out of memory",
				       what);
	}
	if (!err) {
		memcpy(copy, in.target, in.target_len);
		copy[in.target_len] = '\0';
	}
	mdb_txn_abort(txn);
	if (!err)
		*target = copy;
	return err;
}

/* One cookie entry of dir into *ent; -EIO when it does not decode. */
static int readdir_entry(struct mds_store *s, MDB_txn *txn,
			 const MDB_val *key, const MDB_val *val,
			 struct mds_dirent *ent, const char *what)
{
	struct wire_reader r = { .buf = val->mv_data, .len = val->mv_size };
	uint64_t ino = wire_get_u64(&r);
	size_t len = val->mv_size - r.pos;
	struct mds_inode in;
	int err;

	if (r.bad || len == 0 || len > MDS_NAME_MAX ||
	    memchr(r.buf + r.pos, '/', len) || memchr(r.buf + r.pos, 0, len))
		return clf_fail(EIO, "mds: cannot %s: corrupt entry with cookie %llu",
				what, (unsigned long long)mds_get_be64(
					(const uint8_t *)key->mv_data + 8));
	memcpy(ent->name, r.buf + r.pos, len);
	ent->name[len] = '\0';
	if (!mds_ino_local(s, ino)) {
		uint64_t eino, ecookie, dir = mds_get_be64(key->mv_data);

		/* The kind of a remote inode is kept in its entry. */
		err = mds_entry_read(s, txn, dir, ent->name, &eino, &ecookie,
				     &ent->mode, what);
		if (err)
			return err == -ENOENT ? clf_fail(EIO,
				"mds: cannot %s: entry '%s' half missing",
				what, ent->name) : err;
		ent->ino = ino;
		ent->cookie = mds_get_be64((const uint8_t *)key->mv_data + 8);
		ent->has_attr = false;
		return 0;
	}
	err = mds_inode_get(s, txn, ino, &in, what);
	if (err == -ENOENT)
		return clf_fail(EIO, "mds: cannot %s: entry '%s' names missing inode %llu",
				what, ent->name, (unsigned long long)ino);
	if (err)
		return err;
	ent->ino = ino;
	ent->cookie = mds_get_be64((const uint8_t *)key->mv_data + 8);
	ent->mode = in.attr.mode;
	ent->attr = in.attr;
	ent->has_attr = true;
	return 0;
}

static bool key_in_dir(const MDB_val *key, uint64_t dir)
{
	return key->mv_size == MDS_COOKIE_KEY_LEN &&
	       mds_get_be64(key->mv_data) == dir;
}

int mds_readdir(struct mds_store *s, uint64_t dir, uint64_t cookie,
		struct mds_dirent *ents, uint32_t max, bool *eof)
{
	char what[WHAT_MAX];
	uint8_t kbuf[MDS_COOKIE_KEY_LEN];
	struct mds_inode din;
	MDB_cursor *cur = NULL;
	MDB_val key, val;
	MDB_txn *txn;
	uint32_t n = 0;
	bool end = true;
	int rc, err;

	snprintf(what, sizeof(what), "read directory %llu",
		 (unsigned long long)dir);
	if (!ents || !eof || max == 0)
		return clf_fail(EINVAL, "mds: cannot %s: no room for entries",
				what);
	err = mds_txn_begin(s, false, &txn, what);
	if (err)
		return err;
	err = mds_dir_get(s, txn, dir, &din, what);
	if (err || cookie == UINT64_MAX)
		goto abort;
	rc = mdb_cursor_open(txn, s->cookies, &cur);
	if (rc) {
		err = mds_lmdb_fail(rc, what);
		goto abort;
	}
	mds_cookie_key(kbuf, dir, cookie + 1, &key);
	rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
	while (!rc && key_in_dir(&key, dir)) {
		if (n == max) {
			end = false;
			break;
		}
		err = readdir_entry(s, txn, &key, &val, &ents[n], what);
		if (err)
			goto close_cursor;
		n++;
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	if (rc && rc != MDB_NOTFOUND)
		err = mds_lmdb_fail(rc, what);
close_cursor:
	mdb_cursor_close(cur);
abort:
	mdb_txn_abort(txn);
	if (err)
		return err;
	*eof = end;
	return (int)n;
}

/* Is ancestor on the parent chain of dir (dir included)?  *yes says;
 * 0 or a negative errno. */
static int is_ancestor(struct mds_store *s, MDB_txn *txn, uint64_t ancestor,
		       uint64_t dir, const char *what, bool *yes)
{
	struct mds_inode in;
	int err;

	for (int depth = 0; depth < MDS_MAX_DEPTH; depth++) {
		/* A remote part of the chain was checked by the daemon
		 * across metads before (mds_xrename.c). */
		if (dir == ancestor || dir == MDS_ROOT_INO ||
		    !mds_ino_local(s, dir)) {
			*yes = dir == ancestor;
			return 0;
		}
		err = dangling(mds_dir_get(s, txn, dir, &in, what), dir, what);
		if (err)
			return err;
		dir = in.parent;
	}
	return clf_fail(EIO, "mds: cannot %s: directory chain longer than %d",
			what, MDS_MAX_DEPTH);
}

/* What rename reads and checks before it writes anything. */
struct rename_plan {
	struct mds_inode sdir, ddir, src, tgt;
	uint64_t src_cookie, tgt_cookie;
	bool replace;		/* the target's name exists and goes */
	bool drop_target;	/* ... and with it the target inode: its
				   last name (directories: always) */
	bool moves_dir;		/* src is a directory changing parent */
	bool noop;
	bool src_remote;	/* src lives on another metad: only its
				   number and kind are known here */
	bool tgt_remote;	/* the same for the target */
};

static int rename_plan(struct mds_store *s, MDB_txn *txn, uint64_t src_dir,
		       const char *src_name, uint64_t dst_dir,
		       const char *dst_name, uint32_t flags,
		       struct rename_plan *p, const char *what)
{
	uint64_t ino, tino;
	int err;

	err = mds_dir_get(s, txn, src_dir, &p->sdir, what);
	if (!err)
		err = mds_dir_get(s, txn, dst_dir, &p->ddir, what);
	if (err)
		return err;
	err = mds_entry_read(s, txn, src_dir, src_name, &ino, &p->src_cookie,
			     &p->src.attr.mode, what);
	if (err == -ENOENT)
		return clf_fail(ENOENT, "mds: cannot %s: no such file or directory",
				what);
	p->src_remote = !err && !mds_ino_local(s, ino);
	p->src.attr.ino = ino;
	if (!err && !p->src_remote)
		err = dangling(mds_inode_get(s, txn, ino, &p->src, what), ino,
			       what);
	if (err)
		return err;
	if (S_ISDIR(p->src.attr.mode) && src_dir != dst_dir) {
		bool inside = false;

		err = is_ancestor(s, txn, ino, dst_dir, what, &inside);
		if (err)
			return err;
		if (inside)
			return clf_fail(EINVAL,
				"mds: cannot %s: a directory cannot move into itself",
				what);
		p->moves_dir = true;
	}
	err = mds_entry_read(s, txn, dst_dir, dst_name, &tino, &p->tgt_cookie,
			     &p->tgt.attr.mode, what);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (flags & MDS_RENAME_NOREPLACE)
		return clf_fail(EEXIST, "mds: cannot %s: target exists", what);
	if (tino == ino) {
		p->noop = true;
		return 0;
	}
	p->tgt_remote = !mds_ino_local(s, tino);
	p->tgt.attr.ino = tino;
	if (!p->tgt_remote)
		err = dangling(mds_inode_get(s, txn, tino, &p->tgt, what),
			       tino, what);
	if (err)
		return err;
	if (S_ISDIR(p->src.attr.mode) && !S_ISDIR(p->tgt.attr.mode))
		return clf_fail(ENOTDIR,
			"mds: cannot %s: a directory cannot replace a file", what);
	if (!S_ISDIR(p->src.attr.mode) && S_ISDIR(p->tgt.attr.mode))
		return clf_fail(EISDIR,
			"mds: cannot %s: a file cannot replace a directory", what);
	/* A remote target directory was found empty by the daemon. */
	if (S_ISDIR(p->tgt.attr.mode) && !p->tgt_remote) {
		err = mds_dir_has_entries(s, txn, tino, what);
		if (err < 0)
			return err;
		if (err)
			return clf_fail(ENOTEMPTY,
				"mds: cannot %s: target directory not empty", what);
	}
	p->replace = true;
	/* A remote target loses its link at its own metad, afterwards. */
	p->drop_target = !p->tgt_remote &&
			 (S_ISDIR(p->tgt.attr.mode) || p->tgt.attr.nlink <= 1);
	return 0;
}

/*
 * One name of non-directory ino, which has others, is gone: one link
 * less and a new ctime.  Reads the inode afresh, since earlier writes
 * of the transaction may have moved what a previous read borrowed.
 */
static int drop_link(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		     int64_t now, const char *what)
{
	struct mds_inode in;
	int err = mds_inode_get(s, txn, ino, &in, what);

	if (err)
		return dangling(err, ino, what);
	in.attr.nlink--;
	in.attr.ctime = now;
	return mds_inode_put(s, txn, &in, false, what);
}

/* The writes of a planned rename. */
static int rename_apply(struct mds_store *s, MDB_txn *txn, uint64_t src_dir,
			const char *src_name, uint64_t dst_dir,
			const char *dst_name, struct rename_plan *p,
			const char *what)
{
	bool same_dir = src_dir == dst_dir;
	int sdelta = 0, ddelta = 0;
	int64_t now = clf_wall_ns();
	struct mds_super sb;
	int err;

	p->src.attr.ctime = now;
	if (p->moves_dir) {
		p->src.parent = dst_dir;
		sdelta--;
		ddelta++;
	}
	/* Put first: p->src.layout borrows from its own record.  A remote
	 * inode's parent and ctime change at its metad (mds_ops_ns.c). */
	err = p->src_remote ? 0 : mds_inode_put(s, txn, &p->src, false, what);
	if (err)
		return err;
	if (p->replace) {
		if (S_ISDIR(p->tgt.attr.mode))
			ddelta--;
		err = entry_del(s, txn, dst_dir, dst_name, p->tgt_cookie, what);
		if (!err && p->tgt_remote)
			err = 0;
		else if (!err && p->drop_target)
			err = mds_inode_del(s, txn, p->tgt.attr.ino, what);
		else if (!err)
			err = drop_link(s, txn, p->tgt.attr.ino, now, what);
		if (err)
			return err;
	}
	err = entry_del(s, txn, src_dir, src_name, p->src_cookie, what);
	if (!err)
		err = mds_super_get(s, txn, &sb);
	if (!err)
		err = mds_entry_add(s, txn, &sb, dst_dir, dst_name,
				    p->src.attr.ino, p->src.attr.mode, what);
	if (!err)
		err = mds_super_put(s, txn, &sb, what);
	if (same_dir)
		sdelta += ddelta;
	if (!err)
		err = dir_changed(s, txn, &p->sdir, sdelta, now, what);
	if (!err && !same_dir)
		err = dir_changed(s, txn, &p->ddir, ddelta, now, what);
	return err;
}

int mds_rename(struct mds_store *s, uint64_t src_dir, const char *src_name,
	       uint64_t dst_dir, const char *dst_name, uint32_t flags,
	       struct mds_removed *replaced)
{
	char what[WHAT_MAX];
	struct rename_plan p = { 0 };
	struct mds_removed gone = { 0 };
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what),
		 "rename '%.255s' in directory %llu to '%.255s' in directory %llu",
		 src_name ? src_name : "", (unsigned long long)src_dir,
		 dst_name ? dst_name : "", (unsigned long long)dst_dir);
	err = mds_name_check(src_name, what);
	if (!err)
		err = mds_name_check(dst_name, what);
	if (err)
		return err;
	if (flags & ~MDS_RENAME_FLAGS)
		return clf_fail(EINVAL, "mds: cannot %s: unknown flags %#x",
				what, flags);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = rename_plan(s, txn, src_dir, src_name, dst_dir, dst_name, flags,
			  &p, what);
	if (err || p.noop)
		goto abort;
	if (p.drop_target) {
		gone.attr = p.tgt.attr;
		if (replaced)
			err = mds_inode_layout(&p.tgt, &gone.layout);
		/* Before any write: p.tgt.layout borrows from its record. */
		if (!err)
			err = mds_gc_queue(s, txn, &p.tgt, what);
		if (err)
			goto abort;
	}
	err = rename_apply(s, txn, src_dir, src_name, dst_dir, dst_name, &p,
			   what);
	if (err)
		goto abort;
	if (p.tgt_remote) {
		/* Its metad takes the link off (mds_ops_ns.c). */
		gone.attr = p.tgt.attr;
		gone.remote = true;
	}
	err = mds_txn_commit(txn, what);	/* frees txn either way */
	if (err)
		goto free_layout;
	if (replaced)
		*replaced = gone;
	return 0;
abort:
	mdb_txn_abort(txn);
free_layout:
	mds_layout_free(gone.layout);
	if (!err && replaced)		/* renamed onto itself */
		memset(replaced, 0, sizeof(*replaced));
	return err;
}

int mds_unlink(struct mds_store *s, uint64_t dir, const char *name,
	       struct mds_removed *removed)
{
	char what[WHAT_MAX];
	struct mds_removed gone = { 0 };
	struct mds_inode parent, in;
	struct mds_entry e;
	int64_t now = clf_wall_ns();
	MDB_txn *txn;
	int err;

	what_entry(what, "unlink", name, dir);
	err = mds_entry_begin(s, true, name, &txn, what);
	if (err)
		return err;
	err = mds_entry_find(s, txn, dir, name, &parent, &e, "no such file",
			     what);
	if (!err && !mds_ino_local(s, e.ino))
		err = remote_entry(e.ino, what);
	if (!err)
		err = mds_inode_get(s, txn, e.ino, &in, what);
	if (!err && S_ISDIR(in.attr.mode))
		err = clf_fail(EISDIR, "mds: cannot %s: is a directory", what);
	if (err)
		goto abort;
	if (in.attr.nlink > 1) {
		/* Other names keep the inode and its data. */
		err = entry_del(s, txn, dir, name, e.cookie, what);
		if (!err)
			err = drop_link(s, txn, e.ino, now, what);
		goto changed;
	}
	gone.attr = in.attr;
	if (removed)
		err = mds_inode_layout(&in, &gone.layout);
	/* Before any write: in.layout borrows from its record. */
	if (!err)
		err = mds_gc_queue(s, txn, &in, what);
	if (!err)
		err = entry_del(s, txn, dir, name, e.cookie, what);
	if (!err)
		err = mds_inode_del(s, txn, e.ino, what);
changed:
	if (!err)
		err = dir_changed(s, txn, &parent, 0, now, what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);	/* frees txn either way */
	if (err)
		goto free_layout;
	if (removed)
		*removed = gone;
	return 0;
abort:
	mdb_txn_abort(txn);
free_layout:
	mds_layout_free(gone.layout);
	return err;
}

int mds_rmdir(struct mds_store *s, uint64_t dir, const char *name)
{
	char what[WHAT_MAX];
	struct mds_inode parent, in;
	struct mds_entry e;
	MDB_txn *txn;
	int err;

	what_entry(what, "remove directory", name, dir);
	err = mds_entry_begin(s, true, name, &txn, what);
	if (err)
		return err;
	err = mds_entry_find(s, txn, dir, name, &parent, &e, "no such directory",
			     what);
	if (!err && !mds_ino_local(s, e.ino))
		err = remote_entry(e.ino, what);
	if (!err)
		err = mds_inode_get(s, txn, e.ino, &in, what);
	if (!err && !S_ISDIR(in.attr.mode))
		err = clf_fail(ENOTDIR, "mds: cannot %s: not a directory", what);
	if (!err) {
		err = mds_dir_has_entries(s, txn, e.ino, what);
		if (err > 0)
			err = clf_fail(ENOTEMPTY,
				       "mds: cannot %s: directory not empty", what);
	}
	if (!err)
		err = entry_del(s, txn, dir, name, e.cookie, what);
	if (!err)
		err = mds_inode_del(s, txn, e.ino, what);
	if (!err)
		err = dir_changed(s, txn, &parent, -1, clf_wall_ns(), what);
	if (err)
		goto abort;
	return mds_txn_commit(txn, what);
abort:
	mdb_txn_abort(txn);
	return err;
}
