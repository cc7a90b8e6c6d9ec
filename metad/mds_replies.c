// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_replies.c -- the durable records of the requests that changed the
 * store (see "Recorded outcomes" in mds_store.h), one per request
 * identity: read, count and expire them.  They are written by the commit
 * of the change itself (mds_reply_note.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_store_i.h"

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int reply_decode(const MDB_val *v, struct mds_reply_rec *out)
{
	const uint8_t *p = v->mv_data;

	if (v->mv_size != MDS_REPLY_VAL_LEN)
		return clf_fail(EIO, "mds: corrupt reply record: %zu bytes",
				v->mv_size);
	out->op = (uint16_t)get_le(p, 2);
	out->ino = get_le(p + 8, 8);
	out->time = (int64_t)get_le(p + 16, 8);
	return 0;
}

int mds_reply_get(struct mds_store *s, uint64_t client, uint64_t seq,
		  struct mds_reply_rec *out)
{
	uint8_t kbuf[MDS_REPLY_KEY_LEN];
	MDB_val key, val;
	MDB_txn *txn;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "read a reply record");
	if (err)
		return err;
	mds_reply_key(kbuf, client, seq, &key);
	rc = mdb_get(txn, s->replies, &key, &val);
	if (rc == MDB_NOTFOUND)
		err = -ENOENT;
	else if (rc)
		err = mds_lmdb_fail(rc, "read a reply record");
	else
		err = reply_decode(&val, out);
	mdb_txn_abort(txn);
	return err;
}

/* Collect up to max keys of records older than before, in one read. */
static int expired_keys(struct mds_store *s, int64_t before,
			uint8_t (*keys)[MDS_REPLY_KEY_LEN], uint32_t max)
{
	struct mds_reply_rec rec;
	MDB_cursor *cur;
	MDB_val key, val;
	MDB_txn *txn;
	uint32_t n = 0;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "expire reply records");
	if (err)
		return err;
	rc = mdb_cursor_open(txn, s->replies, &cur);
	if (rc) {
		mdb_txn_abort(txn);
		return mds_lmdb_fail(rc, "expire reply records");
	}
	for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	     !rc && n < max; rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		/* A record that does not decode is useless: it goes too. */
		if (key.mv_size == MDS_REPLY_KEY_LEN &&
		    !reply_decode(&val, &rec) && rec.time >= before)
			continue;
		if (key.mv_size == MDS_REPLY_KEY_LEN)
			memcpy(keys[n++], key.mv_data, MDS_REPLY_KEY_LEN);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (rc && rc != MDB_NOTFOUND)
		return mds_lmdb_fail(rc, "expire reply records");
	return (int)n;
}

int mds_reply_expire(struct mds_store *s, int64_t before, uint32_t max)
{
	static const char what[] = "expire reply records";
	uint8_t (*keys)[MDS_REPLY_KEY_LEN];
	MDB_txn *txn;
	MDB_val key;
	int n, rc, err;

	if (max == 0)
		return clf_fail(EINVAL, "mds: cannot %s: max is 0", what);
	keys = malloc((size_t)max * MDS_REPLY_KEY_LEN);
	if (!keys)
		return clf_fail(ENOMEM, "mds: cannot %s: out of memory", what);
	n = expired_keys(s, before, keys, max);
	if (n <= 0) {
		free(keys);
		return n;
	}
	err = mds_txn_begin(s, true, &txn, what);
	for (int i = 0; i < n && !err; i++) {
		key = (MDB_val){ .mv_size = MDS_REPLY_KEY_LEN, .mv_data = keys[i] };
		rc = mdb_del(txn, s->replies, &key, NULL);
		if (rc && rc != MDB_NOTFOUND) {
			err = mds_lmdb_fail(rc, what);
			mdb_txn_abort(txn);
		}
	}
	if (!err)
		err = mds_txn_commit(txn, what);
	free(keys);
	return err ? err : n;
}

int mds_reply_count(struct mds_store *s, uint64_t *n)
{
	MDB_txn *txn;
	MDB_stat st;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "count reply records");
	if (err)
		return err;
	rc = mdb_stat(txn, s->replies, &st);
	mdb_txn_abort(txn);
	if (rc)
		return mds_lmdb_fail(rc, "count reply records");
	*n = st.ms_entries;
	return 0;
}
