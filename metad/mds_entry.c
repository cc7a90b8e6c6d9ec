// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_entry.c -- reading a directory entry, and the first reads of an
 * operation on one: the directory, then the name in it, either expected
 * (unlink, lookup, the one-sided steps across metads) or expected absent
 * (create, link).  One place for them keeps the messages of every such
 * operation alike.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "error.h"
#include "mds_store_i.h"

int mds_entry_read(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		   const char *name, uint64_t *ino, uint64_t *cookie,
		   uint32_t *mode, const char *what)
{
	uint8_t kbuf[MDS_DIRENT_KEY_MAX];
	MDB_val key, val;
	int rc;

	mds_dirent_key(kbuf, dir, name, strlen(name), &key);
	rc = mdb_get(txn, s->dirents, &key, &val);
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	if (rc)
		return mds_lmdb_fail(rc, what);
	if (mds_dirent_decode_mode(&val, ino, cookie, mode))
		return clf_fail(EIO, "mds: cannot %s: corrupt directory entry",
				what);
	return 0;
}

int mds_entry_begin(struct mds_store *s, bool write, const char *name,
		    MDB_txn **txn, const char *what)
{
	int err = mds_name_check(name, what);

	return err ? err : mds_txn_begin(s, write, txn, what);
}

int mds_entry_find(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		   const char *name, struct mds_inode *parent,
		   struct mds_entry *e, const char *missing, const char *what)
{
	int err = mds_dir_get(s, txn, dir, parent, what);

	if (!err)
		err = mds_entry_read(s, txn, dir, name, &e->ino, &e->cookie,
				     &e->mode, what);
	if (err == -ENOENT)
		err = clf_fail(ENOENT, "mds: cannot %s: %s", what, missing);
	return err;
}

int mds_entry_check_new(struct mds_store *s, MDB_txn *txn, uint64_t dir,
			const char *name, struct mds_inode *parent,
			const char *what)
{
	struct mds_entry e;
	int err = mds_dir_get(s, txn, dir, parent, what);

	if (err)
		return err;
	err = mds_entry_read(s, txn, dir, name, &e.ino, &e.cookie, &e.mode,
			     what);
	if (!err)
		return clf_fail(EEXIST, "mds: cannot %s: file exists", what);
	return err == -ENOENT ? 0 : err;
}
