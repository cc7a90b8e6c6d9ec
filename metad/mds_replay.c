// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_replay.c -- the reply cache (mds_replay.h): requests in progress,
 * answers to repeats from their records, and the expiry thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "error.h"
#include "mds_peer.h"
#include "mds_replay.h"

/* An identity being served, on the stack of the thread serving it. */
struct busy {
	uint64_t client, seq;
	struct busy *next;
};

struct mds_replay {
	struct mds_store *st;		/* borrowed */
	pthread_mutex_t lock;
	pthread_cond_t done;		/* a busy entry left; lock */
	pthread_cond_t wake;		/* the thread should stop; lock */
	struct busy *busy;		/* lock */
	bool stopping;			/* lock */
	pthread_t thread;
};

enum mds_replay_kind mds_replay_kind_of(uint16_t op)
{
	switch (op) {
	case CLF_PROTO_OP_CREATE:
		return MDS_REPLAY_CREATE;
	case CLF_PROTO_OP_MKDIR:
	case CLF_PROTO_OP_SETATTR:
	case CLF_PROTO_OP_SYMLINK:
	case CLF_PROTO_OP_LINK:
	case CLF_PROTO_OP_MKNOD:
		return MDS_REPLAY_ATTR;
	case CLF_PROTO_OP_SET_LAYOUT:
		return MDS_REPLAY_LAYOUT;
	case CLF_PROTO_OP_RENAME:
	case CLF_PROTO_OP_UNLINK:
	case CLF_PROTO_OP_RMDIR:
		return MDS_REPLAY_EMPTY;
	default:
		/* Lookups and UPDATE_SIZE are idempotent; locks belong to
		 * their connection (include/clf_proto.h, "Retries"). */
		return MDS_REPLAY_NONE;
	}
}

/* ---- expiry ---- */

static void expire_all(struct mds_replay *rp)
{
	struct timespec now;
	uint64_t total = 0;
	int64_t before;
	int n;

	/* The store's clock: records carry CLOCK_REALTIME times. */
	clock_gettime(CLOCK_REALTIME, &now);
	before = ((int64_t)now.tv_sec - CLF_PROTO_REPLY_KEEP_S) * 1000000000 +
		 now.tv_nsec;
	do {
		n = mds_reply_expire(rp->st, before, MDS_REPLAY_BATCH);
		if (n > 0)
			total += (uint64_t)n;
	} while (n == MDS_REPLAY_BATCH);
	if (n < 0)
		mds_log("cannot expire reply records: %s", CLF_Last_error());
	else if (total)
		mds_log("expired %llu reply records older than %d s",
			(unsigned long long)total, CLF_PROTO_REPLY_KEEP_S);
}

static void *sweep_main(void *arg)
{
	struct mds_replay *rp = arg;

	pthread_mutex_lock(&rp->lock);
	while (!rp->stopping) {
		struct timespec ts;

		pthread_mutex_unlock(&rp->lock);
		expire_all(rp);
		pthread_mutex_lock(&rp->lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += MDS_REPLAY_SWEEP_MS / 1000;
		while (!rp->stopping &&
		       pthread_cond_timedwait(&rp->wake, &rp->lock, &ts) !=
			       ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&rp->lock);
	return NULL;
}

int mds_replay_start(struct mds_store *st, struct mds_replay **out)
{
	struct mds_replay *rp = calloc(1, sizeof(*rp));
	int rc;

	if (!rp)
		return clf_fail(ENOMEM, "metad: out of memory");
	rp->st = st;
	pthread_mutex_init(&rp->lock, NULL);
	pthread_cond_init(&rp->done, NULL);
	pthread_cond_init(&rp->wake, NULL);
	rc = pthread_create(&rp->thread, NULL, sweep_main, rp);
	if (rc) {
		pthread_cond_destroy(&rp->wake);
		pthread_cond_destroy(&rp->done);
		pthread_mutex_destroy(&rp->lock);
		free(rp);
		return clf_fail(rc, "metad: cannot start the reply expiry thread");
	}
	*out = rp;
	return 0;
}

void mds_replay_stop(struct mds_replay *rp)
{
	if (!rp)
		return;
	pthread_mutex_lock(&rp->lock);
	rp->stopping = true;
	pthread_cond_signal(&rp->wake);
	pthread_mutex_unlock(&rp->lock);
	pthread_join(rp->thread, NULL);
	pthread_cond_destroy(&rp->wake);
	pthread_cond_destroy(&rp->done);
	pthread_mutex_destroy(&rp->lock);
	free(rp);
}

/* ---- serving ---- */

static bool is_busy(const struct mds_replay *rp,
		    const struct clf_proto_reqid *id)
{
	for (const struct busy *b = rp->busy; b; b = b->next)
		if (b->client == id->client && b->seq == id->seq)
			return true;
	return false;
}

static void leave(struct mds_replay *rp, struct busy *me)
{
	pthread_mutex_lock(&rp->lock);
	for (struct busy **p = &rp->busy; *p; p = &(*p)->next) {
		if (*p == me) {
			*p = me->next;
			break;
		}
	}
	pthread_cond_broadcast(&rp->done);
	pthread_mutex_unlock(&rp->lock);
}

/* The reply to a repeat of a request whose record is rec. */
static int replay(const struct mds_session *s, uint16_t op,
		  const struct mds_reply_rec *rec, struct mds_reply *rep)
{
	struct mds_store *st = s->ctx->store;
	enum mds_replay_kind kind = mds_replay_kind_of(op);
	struct mds_layout *layout = NULL;
	const char *name = clf_proto_op_name(op);
	struct mds_attr a;
	int err = 0;

	if (rec->op != op)
		return clf_fail(EINVAL,
				"metad: request identity reused: it was a %s, now a %s",
				clf_proto_op_name(rec->op) ?: "unknown", name);
	mds_log("answered a repeated %s from %s (%s) from its record",
		name, s->peer, s->role);
	if (kind == MDS_REPLAY_EMPTY)
		return mds_reply_empty(rep);
	if (kind != MDS_REPLAY_LAYOUT)
		err = mds_attr_anywhere(s->ctx, rec->ino, &a);
	if (!err && kind != MDS_REPLAY_ATTR)
		err = mds_get_layout(st, rec->ino, &layout);
	if (err == -ENOENT || err == -ENODATA)
		return clf_fail(ESTALE,
				"metad: this %s was applied, but inode %llu has changed or gone since",
				name, (unsigned long long)rec->ino);
	if (err)
		return err;
	if (kind == MDS_REPLAY_ATTR)
		err = mds_reply_attr(rep, &a);
	else if (kind == MDS_REPLAY_CREATE)
		err = mds_reply_create(rep, &a, layout);
	else
		err = mds_reply_layout(rep, layout);
	mds_layout_free(layout);
	return err;
}

int mds_replay_serve(struct mds_replay *rp, const struct mds_session *s,
		     uint16_t op, const struct clf_proto_reqid *id,
		     mds_op_fn *fn, struct wire_reader *r,
		     struct mds_reply *rep)
{
	struct busy me = { id->client, id->seq, NULL };
	struct mds_reply_rec rec;
	int err;

	pthread_mutex_lock(&rp->lock);
	while (is_busy(rp, id))
		pthread_cond_wait(&rp->done, &rp->lock);
	/* Under the lock: a copy arriving now waits for this one. */
	err = mds_reply_get(s->ctx->store, id->client, id->seq, &rec);
	if (err != -ENOENT) {
		pthread_mutex_unlock(&rp->lock);
		return err ? err : replay(s, op, &rec, rep);
	}
	me.next = rp->busy;
	rp->busy = &me;
	pthread_mutex_unlock(&rp->lock);

	mds_reply_arm(s->ctx->store, id->client, id->seq, op);
	err = fn(s, r, rep);
	if (mds_reply_disarm(NULL)) {
		/* Committed with its record: a crash or a lost reply from
		 * here on is what retries are for. */
		mds_fault_point(MDS_FAULT_REPLIES);
		rep->drop = mds_fault_drop_reply();
	}
	leave(rp, &me);
	return err;
}
