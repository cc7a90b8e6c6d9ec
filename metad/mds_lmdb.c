// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_lmdb.c -- LMDB's return codes as errno values and messages, for
 * every file of the store.
 */
#include <errno.h>

#include "error.h"
#include "mds_store_i.h"

int mds_lmdb_errno(int rc)
{
	if (rc > 0)
		return rc;	/* LMDB passes system errors through */
	switch (rc) {
	case MDB_NOTFOUND:
		return ENOENT;
	case MDB_MAP_FULL:
	case MDB_TXN_FULL:
		return ENOSPC;
	case MDB_READERS_FULL:
		return EAGAIN;
	case MDB_BAD_VALSIZE:
		return EINVAL;
	default:
		return EIO;
	}
}

int mds_lmdb_fail(int rc, const char *what)
{
	return clf_fail(mds_lmdb_errno(rc), "mds: cannot %s: %s", what,
			mdb_strerror(rc));
}
