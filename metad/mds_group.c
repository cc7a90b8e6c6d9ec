// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_group.c -- group commit: the write transactions of concurrent
 * requests share one LMDB commit, and so its two fdatasyncs.
 *
 * A committer thread owns one LMDB write transaction at a time, the
 * group.  A request's write transaction is a nested (child) transaction
 * of it: requests take turns (LMDB allows one child at a time), each
 * child commits into the group or aborts on its own, so a failed request
 * rolls back alone.  When no request is inside the group and none waits
 * to enter it (or MDS_GROUP_MAX have entered), the committer commits the
 * group with LMDB's ordinary synchronous commit and only then wakes its
 * members: mds_txn_commit returns, and the reply leaves, after the change
 * is durable.  The requests that arrive while one group syncs form the
 * next, which is how the batch grows with the load.
 *
 * Why not MDB_NOSYNC and one mdb_env_sync for many commits: LMDB's own
 * documentation says a system crash can then corrupt the database (the
 * meta page may reach the disk before the pages it points to, and pages
 * of the last synced state may be reused), not only lose the unsynced
 * transactions.  A group committed normally keeps LMDB's guarantee, and
 * readers never see a change before it is durable: the group becomes
 * visible only after its commit synced.
 *
 * The parent transaction is begun and committed by the committer thread
 * (LMDB's writer lock is a mutex owned by that thread); a child is used
 * by one member thread at a time, handed over under g->mu.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_store_i.h"

#undef mdb_txn_abort

/* Members per group at most: a steady stream of requests must not keep
 * a group open, and its members waiting, for ever. */
#define MDS_GROUP_MAX 256

/* A member waiting for its group's commit. */
struct member {
	struct member *next;
	int rc;			/* the group commit's LMDB result */
	bool done;
};

struct mds_group {
	MDB_env *env;			/* borrowed from the store */
	pthread_mutex_t mu;		/* guards everything below */
	pthread_cond_t cv;		/* any change below */
	pthread_t thread;
	MDB_txn *parent;		/* the open group; NULL: none */
	int begin_rc;			/* the last group could not begin */
	bool busy;			/* a member holds a child */
	unsigned waiting;		/* threads waiting to enter */
	unsigned entered;		/* members that entered this group */
	struct member *members;		/* committed children, waiting */
	bool stop;
};

/* The child this thread holds, if any. */
static _Thread_local struct {
	struct mds_group *g;
	MDB_txn *child;
} held;

static void finish(struct mds_group *g, struct member *list, int rc)
{
	for (struct member *m = list; m; m = m->next) {
		m->rc = rc;
		m->done = true;
	}
	pthread_cond_broadcast(&g->cv);
}

static void *committer(void *arg)
{
	struct mds_group *g = arg;
	struct member *list;
	MDB_txn *txn;
	int rc;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->stop && !g->waiting)
			pthread_cond_wait(&g->cv, &g->mu);
		if (!g->waiting)
			break;		/* stopping, nobody left */
		pthread_mutex_unlock(&g->mu);
		rc = mdb_txn_begin(g->env, NULL, 0, &txn);
		pthread_mutex_lock(&g->mu);
		if (rc) {
			/* Those waiting now get the error; later ones
			 * try again. */
			g->begin_rc = rc;
			pthread_cond_broadcast(&g->cv);
			while (g->waiting)
				pthread_cond_wait(&g->cv, &g->mu);
			g->begin_rc = 0;
			continue;
		}
		g->parent = txn;
		g->entered = 0;
		pthread_cond_broadcast(&g->cv);
		while (g->busy || (g->waiting && g->entered < MDS_GROUP_MAX))
			pthread_cond_wait(&g->cv, &g->mu);
		/* Closed: the next arrivals wait for the next group. */
		g->parent = NULL;
		list = g->members;
		g->members = NULL;
		pthread_mutex_unlock(&g->mu);
		rc = list ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), 0);
		pthread_mutex_lock(&g->mu);
		finish(g, list, rc);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int mds_group_start(MDB_env *env, struct mds_group **out)
{
	struct mds_group *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return clf_fail(ENOMEM, "mds: cannot start group commit: out of memory");
	g->env = env;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	rc = pthread_create(&g->thread, NULL, committer, g);
	if (rc) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		free(g);
		return clf_fail(rc, "mds: cannot start the commit thread: %s",
				strerror(rc));
	}
	*out = g;
	return 0;
}

void mds_group_stop(struct mds_group *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

int mds_group_begin(struct mds_group *g, MDB_txn **txn)
{
	int rc;

	pthread_mutex_lock(&g->mu);
	g->waiting++;
	pthread_cond_broadcast(&g->cv);
	while (!g->begin_rc && (!g->parent || g->busy))
		pthread_cond_wait(&g->cv, &g->mu);
	g->waiting--;
	if (g->begin_rc) {
		rc = g->begin_rc;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		return rc;
	}
	g->busy = true;
	g->entered++;
	rc = mdb_txn_begin(g->env, g->parent, 0, txn);
	if (rc) {
		g->busy = false;
		pthread_cond_broadcast(&g->cv);
	} else {
		held.g = g;
		held.child = *txn;
	}
	pthread_mutex_unlock(&g->mu);
	return rc;
}

bool mds_group_holds(MDB_txn *txn)
{
	return txn && held.child == txn;
}

int mds_group_commit(MDB_txn *txn)
{
	struct mds_group *g = held.g;
	struct member me = { .rc = 0 };
	int rc;

	held.g = NULL;
	held.child = NULL;
	rc = mdb_txn_commit(txn);	/* into the group, no sync */
	pthread_mutex_lock(&g->mu);
	g->busy = false;
	if (!rc) {
		me.next = g->members;
		g->members = &me;
	}
	pthread_cond_broadcast(&g->cv);
	while (!rc && !me.done)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
	return rc ? rc : me.rc;
}

/*
 * A request that fails (EEXIST, ENOENT, ...) may have failed because of
 * what an earlier member of its group changed, which is not durable --
 * nor visible to readers -- until the group commits.  Replying at once
 * would let its client see an outcome that a lookup then contradicts
 * (two processes creating one file: the loser told "exists", its lookup
 * told "does not exist").  So when the group holds committed members,
 * the failed one waits for the group's commit as they do.
 */
void mds_group_abort(MDB_txn *txn)
{
	struct mds_group *g = held.g;
	struct member me = { .rc = 0 };
	bool wait;

	held.g = NULL;
	held.child = NULL;
	mdb_txn_abort(txn);
	pthread_mutex_lock(&g->mu);
	g->busy = false;
	wait = g->members != NULL;
	if (wait) {
		me.next = g->members;
		g->members = &me;
	}
	pthread_cond_broadcast(&g->cv);
	while (wait && !me.done)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}
