// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_xrename.c -- rename across metads: a two-phase commit between the
 * metad of the source directory (the coordinator, which got the request)
 * and the metad of the destination directory (the participant).
 *
 *   1. The coordinator keeps its intent (PREPARED), durably.
 *   2. PREPARE: the participant checks that the name may be entered
 *      and keeps its intent; it says yes, or no (then the coordinator
 *      drops its intent and fails the request: nothing changed).
 *   3. The decision: one transaction of the coordinator takes the
 *      source name away and marks its intent COMMITTED.
 *   4. COMMIT: one transaction of the participant enters the name and
 *      drops its intent; a moved directory's parent link is set where
 *      the directory lives; the coordinator drops its intent.
 *
 * Before 3 the old name is there and the new one is not; after 4 the
 * reverse.  A crash in between is finished on restart (mds_xrename_
 * recover_start): the coordinator rolls back an intent still PREPARED
 * (ABORT) and finishes a COMMITTED one (COMMIT again: a participant
 * without the intent did it already); a participant asks the
 * coordinator (QUERY) about each intent it keeps: COMMITTED, it enters
 * the name; none, the rename was rolled back or never decided, and it
 * drops it; PREPARED, the coordinator is still at it.  Between 3 and 4
 * (the participant down) neither name is visible, until it is back.
 *
 * Concurrent changes of the two names while a rename is under way are
 * not locked out: the decision fails when the source name changed, and
 * the commit enters the name whatever came there meanwhile.
 *
 * Fault hook: CLF_TEST_METAD_XRENAME_CRASH=STEP makes metad abort() at
 * STEP: coord-prepared (both intents kept, nothing decided),
 * coord-decided (source name gone, commit not sent), part-prepared
 * (the participant's intent kept, its yes not sent), part-committed
 * (the name entered, the reply not sent).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "mds_gc.h"
#include "mds_peer.h"
#include "mds_store.h"

#define INFLIGHT_MAX 256
#define RECOVER_BATCH 64

/* Renames this process is carrying out: recovery leaves them alone. */
static pthread_mutex_t inflight_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t inflight[INFLIGHT_MAX];	/* inflight_lock; 0: free */

static bool inflight_add(uint64_t txid)
{
	bool ok = false;

	pthread_mutex_lock(&inflight_lock);
	for (int i = 0; i < INFLIGHT_MAX && !ok; i++)
		if (!inflight[i]) {
			inflight[i] = txid;
			ok = true;
		}
	pthread_mutex_unlock(&inflight_lock);
	return ok;
}

static void inflight_del(uint64_t txid)
{
	pthread_mutex_lock(&inflight_lock);
	for (int i = 0; i < INFLIGHT_MAX; i++)
		if (inflight[i] == txid)
			inflight[i] = 0;
	pthread_mutex_unlock(&inflight_lock);
}

static bool inflight_has(uint64_t txid)
{
	bool yes = false;

	pthread_mutex_lock(&inflight_lock);
	for (int i = 0; i < INFLIGHT_MAX && !yes; i++)
		yes = inflight[i] == txid;
	pthread_mutex_unlock(&inflight_lock);
	return yes;
}

static void crash_point(const char *step)
{
	const char *want = getenv("CLF_TEST_METAD_XRENAME_CRASH");

	if (want && strcmp(want, step) == 0) {
		mds_log_warn("CLF_TEST_METAD_XRENAME_CRASH=%s: aborting", step);
		abort();
	}
}

static int send_kind(const struct mds_ctx *ctx, const struct mds_intent *in,
		     uint32_t kind, struct clf_proto_peer_rep *rep)
{
	struct clf_proto_peer_req req = {
		.kind = kind, .txid = in->txid, .ino = in->ino,
		.dir = in->dst_dir, .mode = in->mode, .flags = in->flags,
		.name = { .ptr = in->dst_name,
			  .len = (uint16_t)strlen(in->dst_name) },
	};

	return mds_peer_call(ctx, in->peer, &req, rep);
}

/* After the commit: a moved directory living on a third metad learns
 * its new parent (on the coordinator or the participant, the decision
 * or the commit did it). */
static int finish_coordinated(const struct mds_ctx *ctx,
			      const struct mds_intent *in)
{
	struct clf_proto_peer_req req = {
		.kind = MDS_PEER_SETPARENT, .ino = in->ino, .dir = in->dst_dir,
	};
	uint32_t where = mds_ino_metad(in->ino);
	int err = 0;

	if (S_ISDIR(in->mode) && where != ctx->index && where != in->peer)
		err = mds_peer_call(ctx, where, &req, NULL);
	if (!err)
		err = mds_intent_del(ctx->store, in->txid);
	return err;
}

/* Commit at the participant and finish: 0, or the error of a step
 * (the intent stays COMMITTED for recovery). */
static int push_commit(const struct mds_ctx *ctx, const struct mds_intent *in)
{
	int err = send_kind(ctx, in, MDS_PEER_COMMIT, NULL);

	return err ? err : finish_coordinated(ctx, in);
}

int mds_xrename(const struct mds_ctx *ctx, uint64_t src_dir,
		const char *src_name, uint64_t ino, uint32_t mode,
		uint64_t dst_dir, const char *dst_name, uint32_t flags)
{
	struct mds_intent in = {
		.role = MDS_INTENT_COORD, .state = MDS_INTENT_PREPARED,
		.peer = mds_ino_metad(dst_dir), .src_dir = src_dir,
		.dst_dir = dst_dir, .ino = ino, .mode = mode, .flags = flags,
	};
	struct clf_proto_peer_rep rep;
	uint64_t rnd = 0;
	int err;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint64_t)clf_wall_ns();
	in.txid = ((uint64_t)ctx->index << CLF_PROTO_INO_METAD_SHIFT) |
		  (rnd & ((1ull << CLF_PROTO_INO_METAD_SHIFT) - 1)) | 1;
	snprintf(in.src_name, sizeof(in.src_name), "%s", src_name);
	snprintf(in.dst_name, sizeof(in.dst_name), "%s", dst_name);
	if (!inflight_add(in.txid))
		return clf_fail(EAGAIN,
				"metad: cannot rename '%s': %d renames across metads under way",
				src_name, INFLIGHT_MAX);
	err = mds_intent_put(ctx->store, &in);
	if (err)
		goto out;
	err = send_kind(ctx, &in, MDS_PEER_PREPARE, &rep);
	if (err || rep.value) {
		/* No (or nothing to do): roll back, nothing changed. */
		mds_intent_del(ctx->store, in.txid);
		goto out;
	}
	crash_point("coord-prepared");
	err = mds_xr_decide(ctx->store, &in);
	if (err) {
		int keep = err;

		if (send_kind(ctx, &in, MDS_PEER_ABORT, NULL) == 0)
			mds_intent_del(ctx->store, in.txid);
		else
			in.state = MDS_INTENT_PREPARED;	/* recovery aborts */
		err = keep;
		goto out;
	}
	crash_point("coord-decided");
	/* Decided: the rename happens, now or when the participant is
	 * back (recovery); the client is told it did. */
	if (push_commit(ctx, &in))
		mds_log_warn("rename %llx of '%s' decided; metad %u finishes it when it answers: %s",
			     (unsigned long long)in.txid, src_name, in.peer,
			     CLF_Last_error());
out:
	inflight_del(in.txid);
	return err;
}

/* Changes of a commit at the participant that reach other metads or
 * the iods: a replaced inode of another metad loses its link there, a
 * replaced local file's subfiles go. */
static void after_commit(const struct mds_ctx *ctx, struct mds_removed *gone)
{
	if (gone->attr.ino && gone->remote) {
		struct clf_proto_peer_req req = {
			.kind = S_ISDIR(gone->attr.mode) ? MDS_PEER_RMDIR :
							   MDS_PEER_NLINK,
			.ino = gone->attr.ino,
		};

		if (mds_peer_call(ctx, mds_ino_metad(gone->attr.ino), &req,
				  NULL))
			mds_log_warn("inode %llu keeps a link it lost: %s",
				     (unsigned long long)gone->attr.ino,
				     CLF_Last_error());
	} else if (gone->attr.ino && gone->layout) {
		mds_gc_removed(ctx->gc, gone->attr.ino, gone->layout);
	}
	mds_removed_release(gone);
}

/* A directory the rename would replace that lives on a third metad
 * must be empty there (the store checks a local one itself). */
static int remote_target_empty(const struct mds_ctx *ctx,
			       const struct mds_intent *in)
{
	struct clf_proto_peer_req req = { .kind = MDS_PEER_NONEMPTY };
	struct clf_proto_peer_rep rep;
	uint64_t tino;
	uint32_t tmode;
	int err;

	if (mds_entry_lookup(ctx->store, in->dst_dir, in->dst_name, &tino,
			     &tmode) || mds_is_local(ctx, tino) ||
	    !S_ISDIR(tmode) || tino == in->ino)
		return 0;
	req.ino = tino;
	err = mds_peer_call(ctx, mds_ino_metad(tino), &req, &rep);
	if (!err && rep.value)
		err = clf_fail(ENOTEMPTY,
			       "metad: cannot rename to '%s': target directory not empty",
			       in->dst_name);
	return err;
}

int mds_xrename_serve(const struct mds_ctx *ctx,
		      const struct clf_proto_peer_req *req, uint64_t *value)
{
	struct mds_removed gone = { .layout = NULL };
	struct mds_intent in = {
		.txid = req->txid, .role = MDS_INTENT_PART,
		.state = MDS_INTENT_PREPARED,
		.peer = mds_ino_metad(req->txid), .dst_dir = req->dir,
		.ino = req->ino, .mode = req->mode, .flags = req->flags,
	};
	bool noop = false;
	int err;

	if (!req->txid)
		return clf_fail(EINVAL, "metad: rename across metads without a number");
	switch (req->kind) {
	case MDS_PEER_PREPARE:
		if (req->name.len > MDS_NAME_MAX)
			return clf_fail(ENAMETOOLONG, "metad: name too long");
		memcpy(in.dst_name, req->name.ptr, req->name.len);
		in.dst_name[req->name.len] = '\0';
		if (memchr(in.dst_name, '\0', req->name.len))
			return clf_fail(EINVAL, "metad: a NUL in a name");
		err = remote_target_empty(ctx, &in);
		if (!err)
			err = mds_xr_prepare(ctx->store, &in, &noop);
		if (!err && !noop)
			crash_point("part-prepared");
		*value = noop;
		return err;
	case MDS_PEER_COMMIT:
		err = mds_xr_commit(ctx->store, req->txid, &gone);
		if (!err) {
			crash_point("part-committed");
			after_commit(ctx, &gone);
		}
		return err;
	case MDS_PEER_ABORT:
		return mds_intent_del(ctx->store, req->txid);
	default:		/* MDS_PEER_QUERY */
		err = mds_intent_get(ctx->store, req->txid, &in);
		if (err == -ENOENT) {
			*value = 0;
			return 0;
		}
		if (!err)
			*value = in.role == MDS_INTENT_COORD ? in.state : 0;
		return err;
	}
}

/* One intent left by an earlier run (or a peer out of reach). */
static void recover_one(const struct mds_ctx *ctx, const struct mds_intent *in)
{
	struct clf_proto_peer_rep rep;
	struct mds_removed gone = { .layout = NULL };

	if (in->role == MDS_INTENT_COORD && in->state == MDS_INTENT_COMMITTED) {
		if (!push_commit(ctx, in))
			mds_log("rename %llx finished after a restart",
				(unsigned long long)in->txid);
		return;
	}
	if (in->role == MDS_INTENT_COORD) {
		if (!send_kind(ctx, in, MDS_PEER_ABORT, NULL) &&
		    !mds_intent_del(ctx->store, in->txid))
			mds_log("rename %llx rolled back after a restart",
				(unsigned long long)in->txid);
		return;
	}
	{
		struct clf_proto_peer_req q = {
			.kind = MDS_PEER_QUERY, .txid = in->txid,
		};

		if (mds_peer_call(ctx, in->peer, &q, &rep))
			return;
	}
	if (rep.value == MDS_INTENT_COMMITTED) {
		if (!mds_xr_commit(ctx->store, in->txid, &gone)) {
			after_commit(ctx, &gone);
			mds_log("rename %llx entered after a restart",
				(unsigned long long)in->txid);
		}
	} else if (rep.value == 0) {
		if (!mds_intent_del(ctx->store, in->txid))
			mds_log("rename %llx dropped: its coordinator rolled it back",
				(unsigned long long)in->txid);
	}
}

/* Go over every intent not under way here; returns how many are left. */
static int recover_pass(const struct mds_ctx *ctx)
{
	struct mds_intent *ins = calloc(RECOVER_BATCH, sizeof(*ins));
	int n, left = 0;

	if (!ins)
		return 1;
	n = mds_intent_list(ctx->store, ins, RECOVER_BATCH);
	for (int i = 0; i < n; i++) {
		if (inflight_has(ins[i].txid))
			continue;
		recover_one(ctx, &ins[i]);
		left++;
	}
	free(ins);
	return n < 0 ? 1 : left;
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool running;
	pthread_t thread;
	struct mds_ctx *ctx;
} recover = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void *recover_main(void *arg)
{
	struct mds_ctx *ctx = arg;

	pthread_mutex_lock(&recover.lock);
	while (!recover.stop) {
		struct timespec ts;

		pthread_mutex_unlock(&recover.lock);
		recover_pass(ctx);
		pthread_mutex_lock(&recover.lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)MDS_XRENAME_RETRY_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!recover.stop)
			pthread_cond_timedwait(&recover.cond, &recover.lock,
					       &ts);
	}
	pthread_mutex_unlock(&recover.lock);
	return NULL;
}

int mds_xrename_recover_start(struct mds_ctx *ctx)
{
	int err;

	if (ctx->cfg->nmetads <= 1)
		return 0;
	/* A first pass before serving: what can be finished now is,
	 * before any client looks. */
	recover_pass(ctx);
	recover.ctx = ctx;
	recover.stop = false;
	err = pthread_create(&recover.thread, NULL, recover_main, ctx);
	if (err)
		return clf_fail(err, "metad: cannot start the rename recovery thread");
	recover.running = true;
	return 0;
}

void mds_xrename_recover_stop(void)
{
	if (!recover.running)
		return;
	pthread_mutex_lock(&recover.lock);
	recover.stop = true;
	pthread_cond_signal(&recover.cond);
	pthread_mutex_unlock(&recover.lock);
	pthread_join(recover.thread, NULL);
	recover.running = false;
}
