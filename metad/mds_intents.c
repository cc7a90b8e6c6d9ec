// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_intents.c -- the durable intents of renames across metads, and
 * the transactions of each side that change them together with the
 * namespace (mds_store.h, "Renames across metads").
 *
 * Database intents: u64 txid, big-endian -> u8 role, u8 state, u16 0,
 * u32 peer, u64 src_dir, u64 dst_dir, u64 ino, u32 mode, u32 flags,
 * u16 + src_name, u16 + dst_name (little-endian).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "clf_proto.h"
#include "error.h"
#include "mds_store_i.h"
#include "wire.h"

#define INTENT_MAX (4 + 4 + 8 * 3 + 8 + 2 * (2 + MDS_NAME_MAX))
#define WHAT_MAX 640

static size_t intent_encode(const struct mds_intent *in,
			    uint8_t buf[INTENT_MAX])
{
	struct wire_writer w = { .buf = buf, .cap = INTENT_MAX };
	size_t a = strlen(in->src_name), b = strlen(in->dst_name);

	wire_put_u8(&w, in->role);
	wire_put_u8(&w, in->state);
	wire_put_u16(&w, 0);
	wire_put_u32(&w, in->peer);
	wire_put_u64(&w, in->src_dir);
	wire_put_u64(&w, in->dst_dir);
	wire_put_u64(&w, in->ino);
	wire_put_u32(&w, in->mode);
	wire_put_u32(&w, in->flags);
	wire_put_u16(&w, (uint16_t)a);
	wire_put_bytes(&w, in->src_name, a);
	wire_put_u16(&w, (uint16_t)b);
	wire_put_bytes(&w, in->dst_name, b);
	return w.pos;
}

static int get_name(struct wire_reader *r, char out[MDS_NAME_MAX + 1])
{
	uint16_t len = wire_get_u16(r);

	if (r->bad || len > MDS_NAME_MAX || !wire_take(r, len))
		return -EIO;
	memcpy(out, r->buf + r->pos, len);
	out[len] = '\0';
	r->pos += len;
	return 0;
}

static int intent_decode(uint64_t txid, const MDB_val *v,
			 struct mds_intent *out)
{
	struct wire_reader r = { .buf = v->mv_data, .len = v->mv_size };

	out->txid = txid;
	out->role = wire_get_u8(&r);
	out->state = wire_get_u8(&r);
	wire_get_u16(&r);
	out->peer = wire_get_u32(&r);
	out->src_dir = wire_get_u64(&r);
	out->dst_dir = wire_get_u64(&r);
	out->ino = wire_get_u64(&r);
	out->mode = wire_get_u32(&r);
	out->flags = wire_get_u32(&r);
	if (get_name(&r, out->src_name) || get_name(&r, out->dst_name) ||
	    r.bad || r.pos != v->mv_size)
		return clf_fail(EIO, "mds: intent %llx: corrupt record",
				(unsigned long long)txid);
	return 0;
}

static int put_in(struct mds_store *s, MDB_txn *txn,
		  const struct mds_intent *in, const char *what)
{
	uint8_t kbuf[MDS_INO_KEY_LEN], vbuf[INTENT_MAX];
	MDB_val key, val = { .mv_data = vbuf };
	int rc;

	mds_ino_key(kbuf, in->txid, &key);
	val.mv_size = intent_encode(in, vbuf);
	rc = mdb_put(txn, s->intents, &key, &val, 0);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

static int get_in(struct mds_store *s, MDB_txn *txn, uint64_t txid,
		  struct mds_intent *out, const char *what)
{
	uint8_t kbuf[MDS_INO_KEY_LEN];
	MDB_val key, val;
	int rc;

	mds_ino_key(kbuf, txid, &key);
	rc = mdb_get(txn, s->intents, &key, &val);
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	if (rc)
		return mds_lmdb_fail(rc, what);
	return intent_decode(txid, &val, out);
}

static int del_in(struct mds_store *s, MDB_txn *txn, uint64_t txid,
		  const char *what)
{
	uint8_t kbuf[MDS_INO_KEY_LEN];
	MDB_val key;
	int rc;

	mds_ino_key(kbuf, txid, &key);
	rc = mdb_del(txn, s->intents, &key, NULL);
	return rc && rc != MDB_NOTFOUND ? mds_lmdb_fail(rc, what) : 0;
}

int mds_intent_put(struct mds_store *s, const struct mds_intent *in)
{
	MDB_txn *txn;
	int err = mds_txn_begin(s, true, &txn, "keep a rename intent");

	if (err)
		return err;
	err = put_in(s, txn, in, "keep a rename intent");
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return mds_txn_commit(txn, "keep a rename intent");
}

int mds_intent_get(struct mds_store *s, uint64_t txid, struct mds_intent *out)
{
	MDB_txn *txn;
	int err = mds_txn_begin(s, false, &txn, "read a rename intent");

	if (err)
		return err;
	err = get_in(s, txn, txid, out, "read a rename intent");
	mdb_txn_abort(txn);
	return err;
}

int mds_intent_del(struct mds_store *s, uint64_t txid)
{
	MDB_txn *txn;
	int err = mds_txn_begin(s, true, &txn, "drop a rename intent");

	if (err)
		return err;
	err = del_in(s, txn, txid, "drop a rename intent");
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return mds_txn_commit(txn, "drop a rename intent");
}

int mds_intent_list(struct mds_store *s, struct mds_intent *out, uint32_t max)
{
	MDB_cursor *cur;
	MDB_val key, val;
	MDB_txn *txn;
	uint32_t n = 0;
	int rc, err = mds_txn_begin(s, false, &txn, "list rename intents");

	if (err)
		return err;
	rc = mdb_cursor_open(txn, s->intents, &cur);
	if (rc) {
		mdb_txn_abort(txn);
		return mds_lmdb_fail(rc, "list rename intents");
	}
	rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	while (!rc && n < max && !err) {
		if (key.mv_size != MDS_INO_KEY_LEN)
			err = clf_fail(EIO, "mds: intent key of %zu bytes",
				       key.mv_size);
		else
			err = intent_decode(mds_get_be64(key.mv_data), &val,
					    &out[n++]);
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (!err && rc && rc != MDB_NOTFOUND)
		err = mds_lmdb_fail(rc, "list rename intents");
	return err ? err : (int)n;
}

/* A local directory moved under parent: its parent link and ctime. */
static int move_dir(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		    uint64_t parent, int64_t now, const char *what)
{
	struct mds_inode in;
	int err = mds_dir_get(s, txn, ino, &in, what);

	if (err)
		return err;
	in.parent = parent;
	in.attr.ctime = now;
	return mds_inode_put(s, txn, &in, false, what);
}

int mds_xr_decide(struct mds_store *s, struct mds_intent *in)
{
	char what[WHAT_MAX];
	struct mds_inode sdir;
	struct mds_entry e;
	int64_t now = clf_wall_ns();
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "move '%.255s' out of directory %llu",
		 in->src_name, (unsigned long long)in->src_dir);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_entry_find(s, txn, in->src_dir, in->src_name, &sdir, &e,
			     "it is gone", what);
	if (!err && e.ino != in->ino)
		err = clf_fail(ENOENT, "mds: cannot %s: it is gone", what);
	if (!err)
		err = mds_entry_del(s, txn, in->src_dir, in->src_name, e.cookie,
				    what);
	if (!err)
		err = mds_dir_changed(s, txn, &sdir,
				      S_ISDIR(in->mode) ? -1 : 0, now, what);
	if (!err && S_ISDIR(in->mode) && mds_ino_local(s, in->ino))
		err = move_dir(s, txn, in->ino, in->dst_dir, now, what);
	in->state = MDS_INTENT_COMMITTED;
	if (!err)
		err = put_in(s, txn, in, what);
	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	return mds_txn_commit(txn, what);
}

/* The target name of a participant's intent, as rename_plan checks it. */
static int check_target(struct mds_store *s, MDB_txn *txn,
			const struct mds_intent *in, bool *noop,
			const char *what)
{
	struct mds_inode tgt;
	uint64_t tino, cookie;
	uint32_t tmode;
	int err;

	err = mds_entry_read(s, txn, in->dst_dir, in->dst_name, &tino, &cookie,
			     &tmode, what);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (in->flags & MDS_RENAME_NOREPLACE)
		return clf_fail(EEXIST, "mds: cannot %s: target exists", what);
	if (tino == in->ino) {
		*noop = true;
		return 0;
	}
	if (mds_ino_local(s, tino)) {
		err = mds_inode_get(s, txn, tino, &tgt, what);
		if (err)
			return err;
		tmode = tgt.attr.mode;
	}
	if (S_ISDIR(in->mode) && !S_ISDIR(tmode))
		return clf_fail(ENOTDIR,
			"mds: cannot %s: a directory cannot replace a file", what);
	if (!S_ISDIR(in->mode) && S_ISDIR(tmode))
		return clf_fail(EISDIR,
			"mds: cannot %s: a file cannot replace a directory", what);
	/* A remote directory was found empty by the daemon. */
	if (S_ISDIR(tmode) && mds_ino_local(s, tino)) {
		err = mds_dir_has_entries(s, txn, tino, what);
		if (err > 0)
			err = clf_fail(ENOTEMPTY,
				"mds: cannot %s: target directory not empty", what);
	}
	return err;
}

int mds_xr_prepare(struct mds_store *s, const struct mds_intent *in,
		   bool *noop)
{
	char what[WHAT_MAX];
	struct mds_inode ddir;
	MDB_txn *txn;
	bool same = false;
	int err;

	snprintf(what, sizeof(what), "move inode %llu to '%.255s' in directory %llu",
		 (unsigned long long)in->ino, in->dst_name,
		 (unsigned long long)in->dst_dir);
	err = mds_name_check(in->dst_name, what);
	if (err)
		return err;
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = mds_dir_get(s, txn, in->dst_dir, &ddir, what);
	if (!err)
		err = check_target(s, txn, in, &same, what);
	if (!err && !same)
		err = put_in(s, txn, in, what);
	if (err || same) {
		mdb_txn_abort(txn);
		if (!err)
			*noop = true;
		return err;
	}
	*noop = false;
	return mds_txn_commit(txn, what);
}

/* The name in's target had goes: a local inode loses a link (and goes
 * with its last, its subfiles queued), a remote one is handed back. */
static int drop_target(struct mds_store *s, MDB_txn *txn,
		       const struct mds_intent *in, uint64_t tino,
		       uint32_t tmode, int64_t now, struct mds_removed *gone,
		       int *delta, const char *what)
{
	struct mds_inode tgt;
	int err;

	if (!mds_ino_local(s, tino)) {
		gone->attr.ino = tino;
		gone->attr.mode = tmode;
		gone->remote = true;
		return 0;
	}
	err = mds_inode_get(s, txn, tino, &tgt, what);
	if (err)
		return err;
	if (S_ISDIR(tgt.attr.mode)) {
		(*delta)--;
		return mds_inode_del(s, txn, tino, what);
	}
	if (tgt.attr.nlink > 1) {
		tgt.attr.nlink--;
		tgt.attr.ctime = now;
		return mds_inode_put(s, txn, &tgt, false, what);
	}
	gone->attr = tgt.attr;
	err = mds_inode_layout(&tgt, &gone->layout);
	if (!err)
		err = mds_gc_queue(s, txn, &tgt, what);
	if (!err)
		err = mds_inode_del(s, txn, tino, what);
	(void)in;
	return err;
}

int mds_xr_commit(struct mds_store *s, uint64_t txid,
		  struct mds_removed *replaced)
{
	char what[WHAT_MAX];
	struct mds_removed gone = { 0 };
	struct mds_intent in;
	struct mds_inode ddir;
	struct mds_super sb;
	uint64_t tino, cookie;
	uint32_t tmode;
	int64_t now = clf_wall_ns();
	int delta = 0;
	MDB_txn *txn;
	int err;

	snprintf(what, sizeof(what), "finish rename %llx",
		 (unsigned long long)txid);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	err = get_in(s, txn, txid, &in, what);
	if (err == -ENOENT) {		/* finished before */
		mdb_txn_abort(txn);
		memset(replaced, 0, sizeof(*replaced));
		return 0;
	}
	if (!err)
		err = mds_dir_get(s, txn, in.dst_dir, &ddir, what);
	if (err)
		goto abort;
	err = mds_entry_read(s, txn, in.dst_dir, in.dst_name, &tino, &cookie,
			     &tmode, what);
	if (!err) {
		/* Decided: the name is entered whatever came there since. */
		err = mds_entry_del(s, txn, in.dst_dir, in.dst_name, cookie,
				    what);
		if (!err && S_ISDIR(tmode) && !mds_ino_local(s, tino))
			delta--;
		if (!err)
			err = drop_target(s, txn, &in, tino, tmode, now, &gone,
					  &delta, what);
	} else if (err == -ENOENT) {
		err = 0;
	}
	if (!err)
		err = mds_super_get(s, txn, &sb);
	if (!err)
		err = mds_entry_add(s, txn, &sb, in.dst_dir, in.dst_name, in.ino,
				    in.mode, what);
	if (!err)
		err = mds_super_put(s, txn, &sb, what);
	if (!err && S_ISDIR(in.mode)) {
		delta++;
		if (mds_ino_local(s, in.ino))
			err = move_dir(s, txn, in.ino, in.dst_dir, now, what);
	}
	/* Read again: move_dir may be of no concern, but the entry writes
	 * moved what ddir borrowed. */
	if (!err)
		err = mds_dir_get(s, txn, in.dst_dir, &ddir, what);
	if (!err)
		err = mds_dir_changed(s, txn, &ddir, delta, now, what);
	if (!err)
		err = del_in(s, txn, txid, what);
	if (err)
		goto abort;
	err = mds_txn_commit(txn, what);
	if (err) {
		mds_layout_free(gone.layout);
		return err;
	}
	*replaced = gone;
	return 0;
abort:
	mdb_txn_abort(txn);
	mds_layout_free(gone.layout);
	return err;
}
