// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_group.c -- group commit: the write transactions of concurrent
 * requests share one LMDB commit, and so its two fdatasyncs.
 *
 * A group is one LMDB write transaction, the parent.  A request's write
 * transaction is a nested (child) transaction of it: requests take turns
 * (LMDB allows one child at a time), each child commits into the group
 * or aborts on its own, so a failed request rolls back alone.
 *
 * Leader commits: the request that finds no group open begins the
 * parent and leads the group.  After its own child it waits until no
 * member is inside and none waits to enter (or MDS_GROUP_MAX have
 * entered), then commits the group with LMDB's ordinary synchronous
 * commit and only then wakes the members: mds_txn_commit returns, and the
 * reply leaves, after the change is durable.  The requests that arrive
 * while one group syncs form the next, one of them leading it, which is
 * how the batch grows with the load.  There is no committer thread: a
 * request alone commits in its own thread, with no wake-up at all, and a
 * member of a group is woken once, by its leader, when the group is
 * durable (a dedicated committer cost two wake-ups per request: to it
 * and back; on a loaded 2-core machine each is a scheduling delay).
 * Waking is by signal, one thread per free slot, not broadcast: a
 * broadcast would wake every waiting request for one that may proceed.
 *
 * Why not MDB_NOSYNC and one mdb_env_sync for many commits: LMDB's own
 * documentation says a system crash can then corrupt the database (the
 * meta page may reach the disk before the pages it points to, and pages
 * of the last synced state may be reused), not only lose the unsynced
 * transactions.  A group committed normally keeps LMDB's guarantee, and
 * readers never see a change before it is durable: the group becomes
 * visible only after its commit synced.
 *
 * The parent is begun and committed by its leader's thread (LMDB's writer
 * lock is a mutex owned by the thread that took it); a child is used by
 * one member thread at a time, handed over under g->mu.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "error.h"
#include "mds_store_i.h"

#undef mdb_txn_abort

/* Members per group at most: a steady stream of requests must not keep
 * a group open, and its members waiting, for ever. */
#define MDS_GROUP_MAX 256

/* A member waiting for its group's commit. */
struct member {
	struct member *next;
	pthread_cond_t done_cv;	/* signalled by the leader when done */
	int rc;			/* the group commit's LMDB result */
	bool done;
};

enum group_state {
	GROUP_IDLE,		/* none: the next request leads one */
	GROUP_OPENING,		/* its leader is beginning the parent */
	GROUP_OPEN,		/* parent begun: members may enter */
	GROUP_COMMITTING,	/* closed, its leader commits it */
};

struct mds_group {
	MDB_env *env;			/* borrowed from the store */
	pthread_mutex_t mu;		/* guards everything below */
	pthread_cond_t enter_cv;	/* a request may enter or lead */
	pthread_cond_t lead_cv;		/* the leader may commit */
	enum group_state state;
	MDB_txn *parent;		/* GROUP_OPEN: the group */
	bool busy;			/* a member holds a child */
	unsigned waiting;		/* requests waiting to enter */
	unsigned entered;		/* members that entered this group */
	struct member *members;		/* committed children, waiting */
};

/* The child this thread holds, if any, and whether it leads. */
static _Thread_local struct {
	struct mds_group *g;
	MDB_txn *child;
	bool leader;
} held;

/* Whether a request waiting to enter may go on now (g->mu held). */
static bool may_enter(const struct mds_group *g)
{
	return g->state == GROUP_IDLE || (g->state == GROUP_OPEN && !g->busy);
}

/* The child slot is free again (g->mu held): let one in, or the leader
 * commit. */
static void slot_free(struct mds_group *g)
{
	g->busy = false;
	if (g->waiting && g->entered < MDS_GROUP_MAX)
		pthread_cond_signal(&g->enter_cv);
	else
		pthread_cond_signal(&g->lead_cv);
}

/*
 * The leader, its own child finished (g->mu held): wait until the group
 * is quiet, commit it (or abort it when no member committed), wake the
 * members and hand the next group to a waiting request.  Returns the
 * commit's LMDB result.
 */
static int lead(struct mds_group *g)
{
	struct member *list;
	MDB_txn *txn;
	int rc;

	while (g->busy || (g->waiting && g->entered < MDS_GROUP_MAX)) {
		if (!g->busy)
			pthread_cond_signal(&g->enter_cv);
		pthread_cond_wait(&g->lead_cv, &g->mu);
	}
	/* Closed: the next arrivals wait for the next group. */
	g->state = GROUP_COMMITTING;
	txn = g->parent;
	g->parent = NULL;
	list = g->members;
	g->members = NULL;
	pthread_mutex_unlock(&g->mu);
	rc = list ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), 0);
	pthread_mutex_lock(&g->mu);
	for (struct member *m = list; m; m = m->next) {
		m->rc = rc;
		m->done = true;
		pthread_cond_signal(&m->done_cv);
	}
	g->state = GROUP_IDLE;
	held.leader = false;
	if (g->waiting)
		pthread_cond_signal(&g->enter_cv);
	return rc;
}

int mds_group_start(MDB_env *env, struct mds_group **out)
{
	struct mds_group *g = calloc(1, sizeof(*g));

	if (!g)
		return clf_fail(ENOMEM, "mds: cannot start group commit: out of memory");
	g->env = env;
	g->state = GROUP_IDLE;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->enter_cv, NULL);
	pthread_cond_init(&g->lead_cv, NULL);
	*out = g;
	return 0;
}

void mds_group_stop(struct mds_group *g)
{
	if (!g)
		return;
	pthread_cond_destroy(&g->lead_cv);
	pthread_cond_destroy(&g->enter_cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* Become the leader of a new group (g->mu held, state GROUP_IDLE). */
static int open_group(struct mds_group *g)
{
	MDB_txn *txn;
	int rc;

	g->state = GROUP_OPENING;
	pthread_mutex_unlock(&g->mu);
	rc = mdb_txn_begin(g->env, NULL, 0, &txn);
	pthread_mutex_lock(&g->mu);
	if (rc) {
		/* This request gets the error; the next one tries again. */
		g->state = GROUP_IDLE;
		if (g->waiting)
			pthread_cond_signal(&g->enter_cv);
		return rc;
	}
	g->parent = txn;
	g->state = GROUP_OPEN;
	g->entered = 0;
	held.leader = true;
	return 0;
}

int mds_group_begin(struct mds_group *g, MDB_txn **txn)
{
	int rc = 0;

	pthread_mutex_lock(&g->mu);
	g->waiting++;
	if (!may_enter(g)) {
		/* Waiting for the group that syncs, or for the child slot:
		 * this worker's place goes to the next request meanwhile,
		 * else the pool's size would bound the next group (with 4
		 * workers, 16 clients made groups of 4 at most). */
		clf_daemon_wait_begin();
		while (!may_enter(g))
			pthread_cond_wait(&g->enter_cv, &g->mu);
		clf_daemon_wait_end();
	}
	g->waiting--;
	if (g->state == GROUP_IDLE)
		rc = open_group(g);
	if (rc)
		goto unlock;
	g->busy = true;
	g->entered++;
	rc = mdb_txn_begin(g->env, g->parent, 0, txn);
	if (!rc) {
		held.g = g;
		held.child = *txn;
		goto unlock;
	}
	slot_free(g);
	/* A leader without a child still owes its group a commit. */
	if (held.leader)
		lead(g);
unlock:
	pthread_mutex_unlock(&g->mu);
	return rc;
}

bool mds_group_holds(MDB_txn *txn)
{
	return txn && held.child == txn;
}

/*
 * The member's child has committed (rc 0, me joins the list) or not
 * (rc != 0 or an abort: me joins only when wait is set); g->mu held.
 * Lead the group, or wait for its leader.  Returns the group's result
 * for a member that waited, else rc.
 */
static int finish_member(struct mds_group *g, struct member *me, bool join,
			 int rc)
{
	int grc;

	if (join) {
		me->next = g->members;
		g->members = me;
	}
	slot_free(g);
	if (held.leader) {
		grc = lead(g);
		return join ? grc : rc;
	}
	if (join && !me->done) {
		/* While the leader syncs, the next requests are read and
		 * form the next group: this worker's place is free for them
		 * (daemon.h). */
		clf_daemon_wait_begin();
		while (!me->done)
			pthread_cond_wait(&me->done_cv, &g->mu);
		clf_daemon_wait_end();
	}
	return join ? me->rc : rc;
}

int mds_group_commit(MDB_txn *txn)
{
	struct mds_group *g = held.g;
	struct member me = { .rc = 0 };
	int rc;

	held.g = NULL;
	held.child = NULL;
	pthread_cond_init(&me.done_cv, NULL);
	rc = mdb_txn_commit(txn);	/* into the group, no sync */
	pthread_mutex_lock(&g->mu);
	rc = finish_member(g, &me, rc == 0, rc);
	pthread_mutex_unlock(&g->mu);
	pthread_cond_destroy(&me.done_cv);
	return rc;
}

/*
 * A request that fails (EEXIST, ENOENT, ...) may have failed because of
 * what an earlier member of its group changed, which is not durable --
 * nor visible to readers -- until the group commits.  Replying at once
 * would let its client see an outcome that a lookup then contradicts
 * (two processes creating one file: the loser told "exists", its lookup
 * told "does not exist").  So when the group holds committed members,
 * the failed one waits for the group's commit as they do.  A leader
 * always waits: it commits the group.
 */
void mds_group_abort(MDB_txn *txn)
{
	struct mds_group *g = held.g;
	struct member me = { .rc = 0 };

	held.g = NULL;
	held.child = NULL;
	pthread_cond_init(&me.done_cv, NULL);
	mdb_txn_abort(txn);
	pthread_mutex_lock(&g->mu);
	finish_member(g, &me, g->members != NULL, 0);
	pthread_mutex_unlock(&g->mu);
	pthread_cond_destroy(&me.done_cv);
}
