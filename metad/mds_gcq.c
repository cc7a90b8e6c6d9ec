// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_gcq.c -- the durable queue of pending subfile removals (see
 * mds_store.h): one record per (removed inode, iod).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_store_i.h"

#define GC_KEY_LEN 12

static void gc_key(uint8_t buf[GC_KEY_LEN], uint64_t ino, uint32_t iod,
		   MDB_val *key)
{
	mds_put_be64(buf, ino);
	for (int i = 0; i < 4; i++)
		buf[8 + i] = (uint8_t)(iod >> (24 - 8 * i));
	key->mv_data = buf;
	key->mv_size = GC_KEY_LEN;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int gc_put(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		  uint32_t iod, const char *what)
{
	static uint8_t zero;
	uint8_t kbuf[GC_KEY_LEN];
	MDB_val key, val = { .mv_size = 1, .mv_data = &zero };
	int rc;

	gc_key(kbuf, ino, iod, &key);
	rc = mdb_put(txn, s->gc, &key, &val, 0);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

int mds_gc_queue(struct mds_store *s, MDB_txn *txn,
		 const struct mds_inode *in, const char *what)
{
	struct mds_layout *l;
	int err = mds_inode_layout(in, &l);

	if (err || !l)
		return err;
	if (l->disp > 0)
		err = gc_put(s, txn, in->attr.ino, l->head_iod, what);
	/* A key put twice is one entry: iods shared by subfiles cost a
	 * rewrite of the same page, not a second entry. */
	for (uint32_t j = 0; j < l->nsubfiles && !err; j++)
		err = gc_put(s, txn, in->attr.ino, l->subfiles[j].iod, what);
	mds_layout_free(l);
	return err;
}

int mds_gc_list(struct mds_store *s, uint64_t ino, uint32_t iod,
		struct mds_gc_entry *ents, uint32_t max)
{
	uint8_t kbuf[GC_KEY_LEN];
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_val key, val;
	uint32_t n = 0;
	int rc, err;

	if (max == 0)
		return clf_fail(EINVAL, "mds: list pending removals: max 0");
	err = mds_txn_begin(s, false, &txn, "list pending removals");
	if (err)
		return err;
	rc = mdb_cursor_open(txn, s->gc, &cur);
	if (rc)
		goto fail;
	gc_key(kbuf, ino, iod, &key);
	rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
	/* Strictly after the starting key. */
	if (!rc && key.mv_size == GC_KEY_LEN && !memcmp(key.mv_data, kbuf,
							 GC_KEY_LEN))
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	while (!rc && n < max) {
		if (key.mv_size != GC_KEY_LEN) {
			mdb_cursor_close(cur);
			mdb_txn_abort(txn);
			return clf_fail(EIO,
					"mds: corrupt pending removal: key of %zu bytes",
					key.mv_size);
		}
		ents[n].ino = mds_get_be64(key.mv_data);
		ents[n].iod = get_be32((const uint8_t *)key.mv_data + 8);
		n++;
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		rc = 0;
fail:
	mdb_txn_abort(txn);
	return rc ? mds_lmdb_fail(rc, "list pending removals") : (int)n;
}

int mds_gc_done(struct mds_store *s, const struct mds_gc_entry *ents,
		uint32_t n)
{
	const char *what = "take removals off the queue";
	uint8_t kbuf[GC_KEY_LEN];
	MDB_txn *txn;
	MDB_val key;
	int rc = 0, err;

	if (n == 0)
		return 0;
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	for (uint32_t i = 0; i < n && (!rc || rc == MDB_NOTFOUND); i++) {
		gc_key(kbuf, ents[i].ino, ents[i].iod, &key);
		rc = mdb_del(txn, s->gc, &key, NULL);
	}
	if (rc && rc != MDB_NOTFOUND) {
		mdb_txn_abort(txn);
		return mds_lmdb_fail(rc, what);
	}
	return mds_txn_commit(txn, what);
}

int mds_gc_count(struct mds_store *s, uint64_t *n)
{
	MDB_txn *txn;
	MDB_stat st;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "count pending removals");
	if (err)
		return err;
	rc = mdb_stat(txn, s->gc, &st);
	mdb_txn_abort(txn);
	if (rc)
		return mds_lmdb_fail(rc, "count pending removals");
	*n = st.ms_entries;
	return 0;
}
