// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_reply_note.c -- the request the calling thread serves, and its
 * record, written by the commit of its change (see "Recorded outcomes"
 * in mds_store.h).  Called by the transactions of mds_store.c, and calls
 * nothing of them.
 *
 * Why the calling thread is armed, rather than every mutating function
 * taking one more argument: the record must be in the transaction of the
 * change, and that transaction lives inside the store function; an armed
 * thread lets every store function, present and future, record without
 * knowing about requests (mds_txn_commit writes the record).
 */
#include <string.h>

#include "error.h"
#include "mds_store_i.h"

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

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
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
	uint8_t kbuf[MDS_REPLY_KEY_LEN], vbuf[MDS_REPLY_VAL_LEN] = { 0 };
	MDB_val key, val = { .mv_size = sizeof(vbuf), .mv_data = vbuf };
	int rc;

	if (!note.s || note.recorded || mdb_txn_env(txn) != note.s->env)
		return 0;
	note.time = clf_wall_ns();
	mds_reply_key(kbuf, note.client, note.seq, &key);
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
