// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_replies.c -- the durable records of the requests that changed the
 * store (see "Recorded outcomes" in mds_store.h): one record per request
 * identity, written by the commit of the change itself.
 *
 * Why the calling thread is armed, rather than every mutating function
 * taking one more argument: the record must be in the transaction of the
 * change, and that transaction lives inside the store function; an armed
 * thread lets every store function, present and future, record without
 * knowing about requests (mds_txn_commit writes the record).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_store_i.h"

#define REPLY_KEY_LEN 16
#define REPLY_VAL_LEN 24	/* u16 op, u16 0, u32 0, u64 ino, i64 time */

/*
 * What the calling thread's request is, between mds_reply_arm and
 * mds_reply_disarm.  Thread-local: each connection thread serves one
 * request at a time, and the store's calls run inside the caller's
 * thread.
 */
struct reply_note {
	struct mds_store *s;	/* borrowed; NULL: not armed */
	uint64_t client, seq;
	uint16_t op;
	uint64_t ino;		/* the inode the request made or changed */
	bool recorded;		/* a commit wrote the record */
	int64_t time;		/* of that commit */
};

static _Thread_local struct reply_note note;

static void reply_key(uint8_t buf[REPLY_KEY_LEN], uint64_t client,
		      uint64_t seq, MDB_val *key)
{
	mds_put_be64(buf, client);
	mds_put_be64(buf + 8, seq);
	key->mv_data = buf;
	key->mv_size = REPLY_KEY_LEN;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

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

	if (v->mv_size != REPLY_VAL_LEN)
		return clf_fail(EIO, "mds: corrupt reply record: %zu bytes",
				v->mv_size);
	out->op = (uint16_t)get_le(p, 2);
	out->ino = get_le(p + 8, 8);
	out->time = (int64_t)get_le(p + 16, 8);
	return 0;
}

void mds_reply_arm(struct mds_store *s, uint64_t client, uint64_t seq,
		   uint16_t op)
{
	note = (struct reply_note){
		.s = s, .client = client, .seq = seq, .op = op,
	};
}

void mds_reply_set_ino(uint64_t ino)
{
	if (note.s && !note.recorded)
		note.ino = ino;
}

bool mds_reply_disarm(struct mds_reply_rec *out)
{
	bool recorded = note.s && note.recorded;

	if (recorded && out)
		*out = (struct mds_reply_rec){ note.op, note.ino, note.time };
	note = (struct reply_note){ .s = NULL };
	return recorded;
}

void mds_reply_note_created(uint64_t ino)
{
	if (note.s && !note.recorded && !note.ino)
		note.ino = ino;
}

int mds_reply_record(MDB_txn *txn)
{
	uint8_t kbuf[REPLY_KEY_LEN], vbuf[REPLY_VAL_LEN] = { 0 };
	MDB_val key, val = { .mv_size = sizeof(vbuf), .mv_data = vbuf };
	int rc;

	if (!note.s || note.recorded || mdb_txn_env(txn) != note.s->env)
		return 0;
	note.time = clf_wall_ns();
	reply_key(kbuf, note.client, note.seq, &key);
	put_le(vbuf, note.op, 2);
	put_le(vbuf + 8, note.ino, 8);
	put_le(vbuf + 16, (uint64_t)note.time, 8);
	rc = mdb_put(txn, note.s->replies, &key, &val, 0);
	return rc ? mds_lmdb_fail(rc, "record the reply") : 0;
}

void mds_reply_committed(bool ok)
{
	if (note.s && !note.recorded && ok && note.time)
		note.recorded = true;
	else if (note.s)
		note.time = 0;
}

int mds_reply_get(struct mds_store *s, uint64_t client, uint64_t seq,
		  struct mds_reply_rec *out)
{
	uint8_t kbuf[REPLY_KEY_LEN];
	MDB_val key, val;
	MDB_txn *txn;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "read a reply record");
	if (err)
		return err;
	reply_key(kbuf, client, seq, &key);
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
			uint8_t (*keys)[REPLY_KEY_LEN], uint32_t max)
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
		if (key.mv_size == REPLY_KEY_LEN &&
		    !reply_decode(&val, &rec) && rec.time >= before)
			continue;
		if (key.mv_size == REPLY_KEY_LEN)
			memcpy(keys[n++], key.mv_data, REPLY_KEY_LEN);
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
	uint8_t (*keys)[REPLY_KEY_LEN];
	MDB_txn *txn;
	MDB_val key;
	int n, rc, err;

	if (max == 0)
		return clf_fail(EINVAL, "mds: cannot %s: max is 0", what);
	keys = malloc((size_t)max * REPLY_KEY_LEN);
	if (!keys)
		return clf_fail(ENOMEM, "mds: cannot %s: out of memory", what);
	n = expired_keys(s, before, keys, max);
	if (n <= 0) {
		free(keys);
		return n;
	}
	err = mds_txn_begin(s, true, &txn, what);
	for (int i = 0; i < n && !err; i++) {
		key = (MDB_val){ .mv_size = REPLY_KEY_LEN, .mv_data = keys[i] };
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
