// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_remote.c -- the store's part of a namespace spread over several
 * metads: inode numbers that carry their metad, entries that name an
 * inode of another metad, and the one-sided steps that the daemon
 * combines into the operations that span two metads (mds_peer.c).
 *
 * Each function is one transaction, like every store call.  The daemon
 * orders the two sides so that a crash between them leaves an inode
 * without a name (space lost until fsck, never a wrong namespace)
 * rather than a name without an inode.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "clf_proto.h"
#include "error.h"
#include "mds_store_i.h"
#include "wire.h"

#define WHAT_MAX 640

/* The super database's record of the spread: u32 index, u32 count. */
static int put_spread(struct mds_store *s, MDB_txn *txn, uint32_t index,
		      uint32_t count)
{
	uint8_t buf[8];
	struct wire_writer w = { .buf = buf, .cap = sizeof(buf) };
	MDB_val key = { .mv_size = strlen(MDS_SPREAD_KEY),
			.mv_data = (void *)MDS_SPREAD_KEY };
	MDB_val val = { .mv_size = sizeof(buf), .mv_data = buf };
	int rc;

	wire_put_u32(&w, index);
	wire_put_u32(&w, count);
	rc = mdb_put(txn, s->super, &key, &val, 0);
	return rc ? mds_lmdb_fail(rc, "record the metad index") : 0;
}

int mds_store_spread(struct mds_store *s, MDB_txn *txn, uint32_t *index,
		     uint32_t *count)
{
	MDB_val key = { .mv_size = strlen(MDS_SPREAD_KEY),
			.mv_data = (void *)MDS_SPREAD_KEY };
	MDB_val val;
	struct wire_reader r;
	int rc = mdb_get(txn, s->super, &key, &val);

	if (rc == MDB_NOTFOUND) {
		*index = 0;
		*count = 1;
		return 0;
	}
	if (rc)
		return mds_lmdb_fail(rc, "read the metad index");
	r = (struct wire_reader){ .buf = val.mv_data, .len = val.mv_size };
	*index = wire_get_u32(&r);
	*count = wire_get_u32(&r);
	if (r.bad || r.pos != val.mv_size || *count == 0 || *index >= *count)
		return clf_fail(EIO, "mds: corrupt metad index record");
	return 0;
}

int mds_store_set_index(struct mds_store *s, uint32_t index, uint32_t count)
{
	uint64_t first = (uint64_t)index << CLF_PROTO_INO_METAD_SHIFT;
	struct mds_super sb;
	MDB_txn *txn;
	int err;

	if (index >= CLF_PROTO_MAX_METADS || index >= count)
		return clf_fail(EINVAL, "mds: metad index %u of %u: at most %d metads",
				index, count, CLF_PROTO_MAX_METADS);
	s->index = index;
	if (count == 1)
		return 0;
	err = mds_txn_begin(s, true, &txn, "set the metad index");
	if (err)
		return err;
	err = mds_super_get(s, txn, &sb);
	if (err)
		goto abort;
	if (CLF_PROTO_INO_METAD(sb.next_ino - 1) != index &&
	    sb.next_ino > MDS_ROOT_INO + 1) {
		err = clf_fail(EIO,
			       "mds: the store holds inodes of metad %u, not %u: is this the right directory?",
			       CLF_PROTO_INO_METAD(sb.next_ino - 1), index);
		goto abort;
	}
	if (sb.next_ino < first + 2) {
		sb.next_ino = first + 2;
		err = mds_super_put(s, txn, &sb, "set the metad index");
	}
	if (!err)
		err = put_spread(s, txn, index, count);
	if (err)
		goto abort;
	return mds_txn_commit(txn, "set the metad index");
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_entry_lookup(struct mds_store *s, uint64_t dir, const char *name,
		     uint64_t *ino, uint32_t *mode)
{
	char what[WHAT_MAX];
	struct mds_inode parent, in;
	struct mds_entry e;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "look up '%.255s' in directory %llu",
		 name, (unsigned long long)dir);
	err = mds_entry_begin(s, false, name, &txn, what);
	if (err)
		return err;
	err = mds_entry_find(s, txn, dir, name, &parent, &e,
			     "no such file or directory", what);
	if (!err && mds_ino_local(s, e.ino)) {
		err = mds_inode_get(s, txn, e.ino, &in, what);
		e.mode = in.attr.mode;
	}
	mdb_txn_abort(txn);
	if (err)
		return err;
	*ino = e.ino;
	*mode = e.mode;
	return 0;
}

int mds_mkdir_detached(struct mds_store *s, uint64_t parent, uint32_t mode,
		       uint32_t uid, uint32_t gid, struct mds_attr *attr)
{
	char what[WHAT_MAX];
	struct mds_inode in = {
		.attr = { .mode = S_IFDIR | mode, .uid = uid, .gid = gid,
			  .nlink = 2 },
		.parent = parent,
	};
	struct mds_super sb;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "make a directory of directory %llu",
		 (unsigned long long)parent);
	if (mode & ~07777u)
		return clf_fail(EINVAL, "mds: cannot %s: mode %#o", what, mode);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_super_get(s, txn, &sb);
	if (err)
		goto abort;
	in.attr.ino = sb.next_ino++;
	in.attr.atime = in.attr.mtime = in.attr.ctime = clf_wall_ns();
	err = mds_inode_put(s, txn, &in, true, what);
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

int mds_entry_add_remote(struct mds_store *s, uint64_t dir, const char *name,
			 uint64_t ino, uint32_t mode)
{
	char what[WHAT_MAX];
	struct mds_inode parent;
	struct mds_super sb;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "enter inode %llu as '%.255s' in directory %llu",
		 (unsigned long long)ino, name, (unsigned long long)dir);
	err = mds_name_check(name, what);
	if (err)
		return err;
	if (mds_ino_local(s, ino) || !mode)
		return clf_fail(EINVAL, "mds: cannot %s: not a remote inode",
				what);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_entry_check_new(s, txn, dir, name, &parent, what);
	if (!err)
		err = mds_super_get(s, txn, &sb);
	if (!err)
		err = mds_entry_add(s, txn, &sb, dir, name, ino, mode, what);
	if (!err)
		err = mds_dir_changed(s, txn, &parent, S_ISDIR(mode) ? 1 : 0,
				      clf_wall_ns(), what);
	if (!err)
		err = mds_super_put(s, txn, &sb, what);
	if (err)
		goto abort;
	return mds_txn_commit(txn, what);
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_entry_del_remote(struct mds_store *s, uint64_t dir, const char *name,
			 uint64_t ino, uint32_t *mode)
{
	char what[WHAT_MAX];
	struct mds_inode parent;
	struct mds_entry e;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "remove '%.255s' from directory %llu",
		 name, (unsigned long long)dir);
	err = mds_entry_begin(s, true, name, &txn, what);
	if (err)
		return err;
	err = mds_entry_find(s, txn, dir, name, &parent, &e, "no such entry",
			     what);
	if (!err && e.ino != ino)
		err = clf_fail(ENOENT, "mds: cannot %s: no such entry", what);
	if (!err)
		err = mds_entry_del(s, txn, dir, name, e.cookie, what);
	if (!err)
		err = mds_dir_changed(s, txn, &parent,
				      S_ISDIR(e.mode) ? -1 : 0, clf_wall_ns(),
				      what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	if (!err)
		*mode = e.mode;
	return err;
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_nlink_change(struct mds_store *s, uint64_t ino, int delta,
		     struct mds_attr *attr, struct mds_removed *removed)
{
	char what[WHAT_MAX];
	struct mds_removed gone = { 0 };
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "%s a name of inode %llu",
		 delta > 0 ? "add" : "take away", (unsigned long long)ino);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_inode_get(s, txn, ino, &in, what);
	if (!err && S_ISDIR(in.attr.mode))
		err = clf_fail(delta > 0 ? EPERM : EISDIR,
			       "mds: cannot %s: it is a directory", what);
	if (!err && delta > 0 && in.attr.nlink >= MDS_LINK_MAX)
		err = clf_fail(EMLINK, "mds: cannot %s: it has %u names already",
			       what, in.attr.nlink);
	if (err)
		goto abort;
	in.attr.ctime = clf_wall_ns();
	if (delta < 0 && in.attr.nlink <= 1) {
		gone.attr = in.attr;
		gone.attr.nlink = 0;
		if (removed)
			err = mds_inode_layout(&in, &gone.layout);
		/* Before any write: in.layout borrows from its record. */
		if (!err)
			err = mds_gc_queue(s, txn, &in, what);
		if (!err)
			err = mds_inode_del(s, txn, ino, what);
		in.attr.nlink = 0;
	} else {
		in.attr.nlink = (uint32_t)((int64_t)in.attr.nlink + delta);
		err = mds_inode_put(s, txn, &in, false, what);
	}
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	if (err)
		goto free_layout;
	if (attr)
		*attr = in.attr;
	if (removed)
		*removed = gone;
	return 0;
abort:
	mdb_txn_abort(txn);
free_layout:
	mds_layout_free(gone.layout);
	return err;
}

int mds_rmdir_detached(struct mds_store *s, uint64_t ino)
{
	char what[WHAT_MAX];
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "remove directory %llu",
		 (unsigned long long)ino);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_dir_get(s, txn, ino, &in, what);
	if (!err && ino == MDS_ROOT_INO)
		err = clf_fail(EBUSY, "mds: cannot %s: it is the root", what);
	if (!err) {
		err = mds_dir_has_entries(s, txn, ino, what);
		if (err > 0)
			err = clf_fail(ENOTEMPTY,
				       "mds: cannot %s: directory not empty", what);
	}
	if (!err)
		err = mds_inode_del(s, txn, ino, what);
	if (err)
		goto abort;
	return mds_txn_commit(txn, what);
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_dir_parent(struct mds_store *s, uint64_t ino, uint64_t *parent)
{
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	err = mds_txn_begin(s, false, &txn, "read a parent");
	if (err)
		return err;
	err = mds_dir_get(s, txn, ino, &in, "read a parent");
	mdb_txn_abort(txn);
	if (!err)
		*parent = in.parent;
	return err;
}

int mds_dir_set_parent(struct mds_store *s, uint64_t ino, uint64_t parent)
{
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	err = mds_txn_begin(s, true, &txn, "move a directory");
	if (err)
		return err;
	err = mds_dir_get(s, txn, ino, &in, "move a directory");
	if (err)
		goto abort;
	in.parent = parent;
	in.attr.ctime = clf_wall_ns();
	err = mds_inode_put(s, txn, &in, false, "move a directory");
	if (err)
		goto abort;
	return mds_txn_commit(txn, "move a directory");
abort:
	mdb_txn_abort(txn);
	return err;
}

int mds_dir_nonempty(struct mds_store *s, uint64_t ino)
{
	struct mds_inode in;
	MDB_txn *txn;
	int err;

	err = mds_txn_begin(s, false, &txn, "read a directory");
	if (err)
		return err;
	err = mds_dir_get(s, txn, ino, &in, "read a directory");
	if (!err)
		err = mds_dir_has_entries(s, txn, ino, "read a directory");
	mdb_txn_abort(txn);
	return err;
}
