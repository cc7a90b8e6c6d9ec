// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_attr.c -- operations on one inode: attributes, size, layout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_store_i.h"

#define WHAT_MAX 96

/*
 * Sizes and layouts belong to regular files: -EISDIR for a directory,
 * -EINVAL for a symlink, fifo, socket or device node, else 0.
 */
static int regular_only(const struct mds_inode *in, const char *what)
{
	if (S_ISDIR(in->attr.mode))
		return clf_fail(EISDIR, "mds: cannot %s: is a directory", what);
	if (!S_ISREG(in->attr.mode))
		return clf_fail(EINVAL, "mds: cannot %s: not a regular file",
				what);
	return 0;
}

static void what_inode(char what[WHAT_MAX], const char *verb, uint64_t ino)
{
	snprintf(what, WHAT_MAX, "%s of inode %llu", verb,
		 (unsigned long long)ino);
}

int mds_getattr(struct mds_store *s, uint64_t ino, struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	what_inode(what, "get the attributes", ino);
	err = mds_txn_begin(s, false, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	mdb_txn_abort(txn);
	if (err)
		return err;
	*attr = in.attr;
	return 0;
}

/* Refuse what no inode could accept, before any transaction. */
static int setattr_check(const struct mds_setattr *set, const char *what)
{
	const uint32_t both_atime = MDS_SETATTR_ATIME | MDS_SETATTR_ATIME_NOW;
	const uint32_t both_mtime = MDS_SETATTR_MTIME | MDS_SETATTR_MTIME_NOW;

	if (!set)
		return clf_fail(EINVAL, "mds: cannot %s: nothing to set", what);
	if (set->mask & ~MDS_SETATTR_KNOWN)
		return clf_fail(EINVAL, "mds: cannot %s: unknown mask bits %#x",
				what, set->mask & ~MDS_SETATTR_KNOWN);
	if ((set->mask & both_atime) == both_atime ||
	    (set->mask & both_mtime) == both_mtime)
		return clf_fail(EINVAL,
				"mds: cannot %s: a time both given and now", what);
	if ((set->mask & MDS_SETATTR_MODE) && (set->mode & ~07777u))
		return clf_fail(EINVAL, "mds: cannot %s: mode %#o", what,
				set->mode);
	if ((set->mask & MDS_SETATTR_SIZE) && set->size < 0)
		return clf_fail(EINVAL, "mds: cannot %s: negative size %lld",
				what, (long long)set->size);
	return 0;
}

static void setattr_apply(struct mds_attr *a, const struct mds_setattr *set,
			  int64_t now)
{
	uint32_t m = set->mask;

	if (m & MDS_SETATTR_MODE)
		a->mode = (a->mode & S_IFMT) | set->mode;
	if (m & MDS_SETATTR_UID)
		a->uid = set->uid;
	if (m & MDS_SETATTR_GID)
		a->gid = set->gid;
	/* POSIX truncate: a size change marks mtime too. */
	if ((m & MDS_SETATTR_SIZE) && set->size != a->size)
		a->mtime = now;
	if (m & MDS_SETATTR_SIZE)
		a->size = set->size;
	if (m & MDS_SETATTR_ATIME)
		a->atime = set->atime;
	if (m & MDS_SETATTR_ATIME_NOW)
		a->atime = now;
	if (m & MDS_SETATTR_MTIME)
		a->mtime = set->mtime;
	if (m & MDS_SETATTR_MTIME_NOW)
		a->mtime = now;
	a->ctime = now;
}

int mds_setattr(struct mds_store *s, uint64_t ino,
		const struct mds_setattr *set, struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	what_inode(what, "set the attributes", ino);
	err = setattr_check(set, what);
	if (err)
		return err;
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err && (set->mask & MDS_SETATTR_SIZE))
		err = regular_only(&in, what);
	if (err)
		goto abort;
	setattr_apply(&in.attr, set, clf_wall_ns());
	err = mds_inode_put(s, txn, &in, false, what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	if (!err && attr)
		*attr = in.attr;
	return err;
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_set_layout(struct mds_store *s, uint64_t ino,
		   const struct mds_layout *layout)
{
	char what[WHAT_MAX];
	struct mds_inode in;
	uint8_t *raw = NULL;	/* owned: the encoded layout */
	size_t raw_len = 0;
	MDB_txn *txn;
	int err;

	what_inode(what, "set the layout", ino);
	err = mds_layout_check(layout);
	if (!err)
		err = mds_layout_encode(layout, &raw, &raw_len);
	if (err)
		return mds_fail_context(err, what);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		goto free_raw;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err)
		err = regular_only(&in, what);
	/*
	 * A file created with the default layout gets its declared one
	 * before any data: replacing is allowed while the size is 0.
	 */
	if (!err && in.attr.size != 0)
		err = clf_fail(EBUSY,
			"mds: layout of inode %llu can only be set while the file is empty",
			(unsigned long long)ino);
	if (err)
		goto abort;
	in.layout = raw;
	in.layout_len = raw_len;
	in.layout_stored = false;
	in.attr.has_layout = true;
	in.attr.ctime = clf_wall_ns();
	err = mds_inode_put(s, txn, &in, false, what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	goto free_raw;
abort:
	mdb_txn_abort(txn);
free_raw:
	free(raw);
	return err;
}

int mds_get_layout(struct mds_store *s, uint64_t ino,
		   struct mds_layout **out)
{
	char what[WHAT_MAX];
	struct mds_layout *l = NULL;
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	what_inode(what, "get the layout", ino);
	err = mds_txn_begin(s, false, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err)
		err = regular_only(&in, what);
	if (!err && !in.layout)
		err = clf_fail(ENODATA, "mds: cannot %s: no layout yet", what);
	if (!err)
		err = mds_inode_layout(&in, &l);
	mdb_txn_abort(txn);
	if (err)
		return err;
	*out = l;
	return 0;
}

int mds_update_size(struct mds_store *s, uint64_t ino, int64_t end,
		    int64_t mtime, struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in;
	bool changed = false;
	MDB_txn *txn;
	int err;

	what_inode(what, "update the size", ino);
	if (end < 0)
		return clf_fail(EINVAL, "mds: cannot %s: negative end %lld",
				what, (long long)end);
	if (mtime == MDS_TIME_NOW)
		mtime = clf_wall_ns();
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err)
		err = regular_only(&in, what);
	if (err)
		goto abort;
	if (end > in.attr.size) {
		in.attr.size = end;
		changed = true;
	}
	if (mtime > in.attr.mtime) {
		in.attr.mtime = mtime;
		changed = true;
	}
	if (mtime > in.attr.ctime) {
		in.attr.ctime = mtime;
		changed = true;
	}
	if (!changed)
		goto abort;	/* nothing to write; success */
	err = mds_inode_put(s, txn, &in, false, what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	if (!err && attr)
		*attr = in.attr;
	return err;
abort:
	mdb_txn_abort(txn);
	if (!err && attr)
		*attr = in.attr;
	return err;
}
