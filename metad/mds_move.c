// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_move.c -- a subfile's move between iods, as metad sees it
 * (SUB_MOVE; the whole move in docs/elastic.md).
 *
 * The mover (`clf iod remove`) fences the file at the old iod, copies,
 * then asks metad to COMMIT: the layout names the new iod from that
 * transaction on.  BEGIN before the copy keeps a durable intent
 * ("move/<ino>/<subfile>" in the superblock database, next to the
 * others' keys there): after a crash of the mover or of metad it says
 * which copy at which iod may be partial.  A move that never committed
 * left the layout untouched, so rolling it back is dropping the intent
 * and the target's partial copy, and resuming it is doing it again; the
 * intents are logged when metad starts, and `clf iod remove` redoes
 * every move off its iod.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds.h"
#include "mds_iods.h"
#include "mds_ops_i.h"
#include "mds_retire.h"
#include "mds_store_i.h"

#define MOVE_PREFIX "move/"
#define MOVE_KEY_MAX 48

static void move_key(char buf[MOVE_KEY_MAX], uint64_t ino, uint32_t sub,
		     MDB_val *key)
{
	int n = snprintf(buf, MOVE_KEY_MAX, MOVE_PREFIX "%016" PRIx64 "/%08" PRIx32,
			 ino, sub);

	key->mv_data = buf;
	key->mv_size = (size_t)n;
}

/* The iod of subfile sub of l (CLF_PROTO_SUBFILE_HEAD: the head's). */
static uint32_t *iod_of(struct mds_layout *l, uint32_t sub)
{
	if (sub == CLF_PROTO_SUBFILE_HEAD)
		return &l->head_iod;
	return sub < l->nsubfiles ? &l->subfiles[sub].iod : NULL;
}

/* In txn: the layout of ino (*out, caller frees) and the inode. */
static int layout_in(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		     struct mds_inode *in, struct mds_layout **out,
		     const char *what)
{
	int err = mds_inode_get(s, txn, ino, in, what);

	if (err)
		return err;
	if (!in->attr.has_layout || !in->layout)
		return clf_fail(ENODATA, "mds: cannot %s: inode %" PRIu64
				" has no layout", what, ino);
	return mds_layout_from_raw(in->layout, in->layout_len, out);
}

static int move_phase(struct mds_store *s,
		      const struct clf_proto_sub_move_req *m)
{
	const char *what = "move a subfile";
	struct mds_layout *l = NULL;
	char kbuf[MOVE_KEY_MAX];
	uint8_t val[8], *raw = NULL;
	struct mds_inode in;
	MDB_val key, v = { sizeof(val), val };
	size_t raw_len;
	uint32_t *iod;
	MDB_txn *txn;
	int rc, err;

	move_key(kbuf, m->ino, m->subfile, &key);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	if (m->phase == CLF_PROTO_MOVE_ABORT)
		goto drop;
	err = layout_in(s, txn, m->ino, &in, &l, what);
	if (err)
		goto abort;
	iod = iod_of(l, m->subfile);
	if (!iod) {
		err = clf_fail(EINVAL, "mds: cannot %s: inode %" PRIu64
			       " has no subfile %" PRIu32, what, m->ino,
			       m->subfile);
		goto abort;
	}
	if (*iod == m->to && m->phase == CLF_PROTO_MOVE_COMMIT)
		goto drop;	/* committed already: the reply was lost */
	if (*iod != m->from) {
		err = clf_fail(ESTALE, "mds: cannot %s: subfile %" PRIu32
			       " of inode %" PRIu64 " is on iod %" PRIu32
			       ", not %" PRIu32, what, m->subfile, m->ino,
			       *iod, m->from);
		goto abort;
	}
	if (m->phase == CLF_PROTO_MOVE_BEGIN) {
		for (int i = 0; i < 4; i++) {
			val[i] = (uint8_t)(m->from >> (8 * i));
			val[4 + i] = (uint8_t)(m->to >> (8 * i));
		}
		rc = mdb_put(txn, s->super, &key, &v, 0);
		if (rc) {
			err = mds_lmdb_fail(rc, "keep a move intent");
			goto abort;
		}
		goto commit;
	}
	*iod = m->to;
	err = mds_layout_encode(l, &raw, &raw_len);
	if (err)
		goto abort;
	in.layout = raw;
	in.layout_len = raw_len;
	in.layout_stored = false;
	err = mds_inode_put(s, txn, &in, false, what);
	if (err)
		goto abort;
drop:
	rc = mdb_del(txn, s->super, &key, NULL);
	if (rc && rc != MDB_NOTFOUND) {
		err = mds_lmdb_fail(rc, "drop a move intent");
		goto abort;
	}
commit:
	err = mds_txn_commit(txn, what);
	goto free;
abort:
	mdb_txn_abort(txn);
free:
	free(raw);
	mds_layout_free(l);
	return err;
}

int mds_move_pending(struct mds_store *s, uint32_t *n)
{
	MDB_val key = { strlen(MOVE_PREFIX), (void *)MOVE_PREFIX }, v;
	MDB_cursor *cur;
	MDB_txn *txn;
	int rc, err = mds_txn_begin(s, false, &txn, "list move intents");

	if (err)
		return err;
	*n = 0;
	rc = mdb_cursor_open(txn, s->super, &cur);
	if (rc) {
		mdb_txn_abort(txn);
		return mds_lmdb_fail(rc, "list move intents");
	}
	for (rc = mdb_cursor_get(cur, &key, &v, MDB_SET_RANGE); !rc;
	     rc = mdb_cursor_get(cur, &key, &v, MDB_NEXT)) {
		if (key.mv_size < strlen(MOVE_PREFIX) ||
		    memcmp(key.mv_data, MOVE_PREFIX, strlen(MOVE_PREFIX)))
			break;
		mds_log("a move of a subfile did not finish (%.*s): `clf iod remove` redoes it",
			(int)key.mv_size, (const char *)key.mv_data);
		(*n)++;
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return 0;
}

int mds_op_sub_move(const struct mds_session *s, struct wire_reader *r,
		    struct mds_reply *rep)
{
	struct clf_proto_sub_move_req req;
	int err = clf_proto_sub_move_req_decode(r, &req);

	(void)rep;
	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_SUB_MOVE, err);
	if (!s->trusted)
		return clf_fail(EPERM,
				"metad: SUB_MOVE is the administrator's (clf iod remove, with the secret)");
	if (req.phase < CLF_PROTO_MOVE_BEGIN ||
	    req.phase > CLF_PROTO_MOVE_ABORT || req.from == req.to ||
	    req.to >= mds_iods_count(s->ctx->iods))
		return clf_fail(EINVAL,
				"metad: SUB_MOVE of inode %" PRIu64 " from iod %" PRIu32
				" to iod %" PRIu32 " (phase %" PRIu32 ")",
				req.ino, req.from, req.to, req.phase);
	if (req.phase == CLF_PROTO_MOVE_BEGIN &&
	    mds_retired_has(s->ctx->retired, req.to))
		return clf_fail(EINVAL,
				"metad: SUB_MOVE of inode %" PRIu64 " to iod %" PRIu32
				", which is retired (clf iod remove)", req.ino,
				req.to);
	err = move_phase(s->ctx->store, &req);
	if (!err)
		mds_log("inode %" PRIu64 " subfile %" PRIu32 ": move from iod %"
			PRIu32 " to iod %" PRIu32 " %s", req.ino, req.subfile,
			req.from, req.to,
			req.phase == CLF_PROTO_MOVE_BEGIN ? "begins" :
			req.phase == CLF_PROTO_MOVE_COMMIT ? "committed" :
			"aborted");
	return err;
}
