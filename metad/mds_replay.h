/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_replay.h -- metad's reply cache: a request that a client sends
 * again with the same identity (include/clf_proto.h, "Retries") gets the
 * outcome of its first execution instead of a second one, as NFS's
 * duplicate request cache does.
 *
 * Two parts:
 *   - durable records, one per request that changed the store, written
 *     in the change's own transaction (mds_store.h, "Recorded
 *     outcomes"), so that a retry after a metad crash and restart is
 *     answered too;
 *   - in memory, the identities being served right now: a retry that
 *     arrives while its first copy still runs (metad was stopped, the
 *     client gave up on the old connection and asked again on a new
 *     one) waits for it, then reads its record.
 *
 * A background thread removes records older than CLF_PROTO_REPLY_KEEP_S
 * every MDS_REPLAY_SWEEP_MS, in batches of MDS_REPLAY_BATCH records per
 * transaction, so that the store holds at most the requests of the last
 * ten minutes or so (24 bytes of record each).
 *
 * Which requests are recorded, and how a repeat is answered, is
 * mds_replay_kind_of(): a new opcode that changes the store opts in with
 * one line there.
 */
#ifndef MDS_REPLAY_H
#define MDS_REPLAY_H

#include <stdint.h>

#include "mds_ops_i.h"

#define MDS_REPLAY_SWEEP_MS 60000
#define MDS_REPLAY_BATCH 1024

/* How the reply to a repeated request is made from its record. */
enum mds_replay_kind {
	MDS_REPLAY_NONE,	/* not recorded: run it again */
	MDS_REPLAY_EMPTY,	/* an empty body */
	MDS_REPLAY_ATTR,	/* attr of the record's inode */
	MDS_REPLAY_CREATE,	/* attr and layout of the record's inode */
	MDS_REPLAY_LAYOUT,	/* layout of the record's inode */
};

enum mds_replay_kind mds_replay_kind_of(uint16_t op);

struct mds_replay;

/* Start the expiry thread over st (borrowed, outlives the result).
 * Returns 0 and *out, or -ENOMEM / pthread_create's errno. */
int mds_replay_start(struct mds_store *st, struct mds_replay **out);

/* Stop the thread and free rp; no request may be running.  NULL ok. */
void mds_replay_stop(struct mds_replay *rp);

/*
 * mds_replay_serve - serve request op with identity id through fn, once
 *
 * When a record of id exists, answers from it (without calling fn);
 * when id is being served by another thread, waits for that first.
 * Otherwise calls fn with the thread armed, so that the change fn
 * commits carries the record.  Returns as a handler does (mds_ops.h);
 * sets rep->drop when the test knob CLF_TEST_METAD_DROP_REPLIES says so.
 */
int mds_replay_serve(struct mds_replay *rp, const struct mds_session *s,
		     uint16_t op, const struct clf_proto_reqid *id,
		     mds_op_fn *fn, struct wire_reader *r,
		     struct mds_reply *rep);

#endif /* MDS_REPLAY_H */
