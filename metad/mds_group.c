// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_group.c -- group commit: the write transactions of concurrent
 * requests share one LMDB commit and one fdatasync, and the next group
 * is built while the last one's commit is made durable.
 *
 * A group is one LMDB write transaction, the parent.  Requests take
 * turns in it, one at a time (the child slot), and change the parent
 * itself: "direct" members.  A request fails almost always before its
 * first change (the name exists, is missing, is not allowed: every
 * handler checks, then writes), and such a failure leaves nothing to
 * undo.  One that fails after a change (a put out of space, an
 * invariant found broken) cannot be taken out alone: its group is
 * aborted and every member fails with EIO ("poisoned"), so that nothing
 * half done is ever committed.  With CLF_METAD_GROUP_DIRECT=0 each
 * request runs in a nested (child) transaction of the parent instead,
 * which commits into the group or aborts on its own; that costs each
 * request copies of the pages it touches, made on whichever core runs
 * it: on a 16-core machine (16 clients of md_bench, 2026-11-28, three
 * rounds each way) a request held the slot 34 us with children and 18
 * us direct, creates rose from 11,700-12,100/s to 14,100-16,000/s and
 * removes from 8,900-9,400/s to 10,900-11,100/s; with 8 clients creates
 * 10,300-10,800 -> 10,200-12,800, removes 7,700-8,400 -> 7,700-9,600.
 *
 * Leader commits: the request that finds no group open begins the
 * parent and leads the group.  After its own child it waits until no
 * member is inside and none waits to enter (or MDS_GROUP_MAX have
 * entered), then commits the group, waits until that commit is durable
 * and only then wakes the members: mds_txn_commit returns, and the
 * reply leaves, after the change is durable.  A request alone commits in
 * its own thread, with no wake-up at all, and a member of a group is
 * woken once, by its leader, when the group is durable (a dedicated
 * committer cost two wake-ups per request: to it and back; on a loaded
 * 2-core machine each is a scheduling delay).  Waking is by signal, one
 * thread per free slot, not broadcast.
 *
 * One fdatasync per group, pipelined
 * ----------------------------------
 * The store runs LMDB with MDB_NOMETASYNC (mds_store.c).  A commit of
 * transaction T then (1) writes T's data pages, (2) fdatasyncs the data
 * file, (3) writes T's meta page without a sync, and releases LMDB's
 * writer lock.  LMDB documents that this "maintains database integrity,
 * but a system crash may undo the last committed transaction": the meta
 * page is written only after the pages it points to are on disk, and a
 * page of the last two meta pages' trees is never reused before a later
 * commit has synced (a page freed by T may be reused from T + 2 on,
 * whose sync in (2) comes after meta T + 1 was written).  So whatever a
 * cut leaves of the unsynced meta page, LMDB opens a whole tree: that of
 * T, or the one before it.  What is left to make T durable is meta T on
 * disk, which every later fdatasync of the file gives: step (2) of the
 * next commit, or an explicit mdb_env_sync.  Here:
 *
 *   committed	the last transaction whose commit returned;
 *   durable	every transaction up to it is on disk: a commit that
 *		began while `committed' was C makes C durable when it
 *		returns (its step 2), an explicit sync begun then likewise.
 *
 * A group's leader, its commit returned, opens the way to the next group
 * at once (its members run their children while this group is not yet
 * durable: the pipeline) and then waits until durable >= its commit.
 * When another group is open it lets that group's commit sync for both
 * (one fdatasync per group under load), else (alone, or past
 * DEFER_MS) it syncs itself.  Acknowledged therefore still means
 * durable; test_metad_crash_sync kills metad between a commit and its
 * sync under a power-cut shim and checks it.
 *
 * With the write-ahead log (mds_wal.c, every store metad opens), LMDB
 * runs with MDB_NOSYNC and its commits sync nothing: the leader writes
 * the group's changes as one record in the log (`committed' is then its
 * txnid) and the sync that makes it durable is the log's fdatasync, one
 * small write instead of LMDB's pages and meta page.  A sync under way
 * covers the records written before it began; a leader that finds one
 * waits for it and syncs after (whatever was written meanwhile goes
 * with it).  When the log fills, the leader checkpoints LMDB before the
 * next group opens.
 *
 * Readers must not answer from what is not durable yet (a lookup that
 * finds a file a cut then takes away, a removal queue entry acted on):
 * a read transaction's snapshot must be durable before its answer
 * leaves (a request: mds_store_settle, so that a create's reads do not
 * hold it out of the next group) or when it ends (any other thread).
 * That costs nothing unless it began between a commit and its sync.
 *
 * Why not MDB_NOSYNC and our own fdatasync after the commit: LMDB would
 * write the meta page before the data is on disk, and a cut in between
 * can leave a meta page pointing at pages never written: a corrupt
 * store, not only a lost transaction.
 *
 * The parent is begun and committed by its leader's thread (LMDB's writer
 * lock is a mutex owned by the thread that took it); a child is used by
 * one member thread at a time, handed over under g->mu.
 *
 * Handing the child slot over without a wake-up
 * ---------------------------------------------
 * Children run one after the other, so whatever passes the slot from one
 * member to the next is paid once per request, in series: with a sleeping
 * waiter woken by a signal, that is a scheduling delay.  So a request
 * that finds the slot taken in an open group -- a child that ends within
 * tens of microseconds -- watches it for up to spin_ns before it sleeps,
 * at most half the cores at once, and the sleepers are all woken when a
 * group opens (their wake-ups then run side by side, not one after the
 * other).  While a group commits everyone sleeps.  On a 16-core machine
 * (16 clients of md_bench, one metad, 2026-11-28) a child held the slot
 * 28-30 us and a handoff by signal took 16 us; watching for 100 us made
 * handoffs 1.8 us and creates 11,400-11,800/s -> 13,600/s, removes
 * 9,100-9,200 -> 10,600/s.  On a machine of a few cores the watcher takes
 * the core the slot's holder needs: on by default from SPIN_CPUS cores,
 * CLF_METAD_GROUP_SPIN_US chooses (0: never).
 *
 * A watcher that gives up must look at the slot again, under mu, before
 * it sleeps: a slot freed while it watched signalled nobody (a watcher
 * was there to take it), and with none awake to take it the waiters and
 * the leader waiting for them would sleep for ever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "error.h"
#include "log.h"
#include "mds_store_i.h"

#undef mdb_txn_abort
#undef mdb_put
#undef mdb_del

/* Members per group at most: a steady stream of requests must not keep
 * a group open, and its members waiting, for ever. */
#define MDS_GROUP_MAX 256

/* How long a leader lets the next group's commit make its own durable
 * before it syncs itself: a group forms in well under this. */
#define DEFER_MS 20

/* Cores from which waiters watch the child slot by default, and for how
 * long (see the top). */
#define SPIN_CPUS 8
#define SPIN_US_DEFAULT 100


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
	struct mds_wal *wal;		/* borrowed; NULL: no log */
	pthread_mutex_t mu;		/* guards everything below */
	pthread_cond_t enter_cv;	/* a request may enter or lead */
	pthread_cond_t lead_cv;		/* the leader may commit */
	/* state and busy are written under mu and also read without it,
	 * by a waiter watching the slot. */
	_Atomic enum group_state state;
	MDB_txn *parent;		/* GROUP_OPEN: the group */
	_Atomic bool busy;		/* a member holds a child */
	unsigned waiting;		/* requests waiting to enter */
	unsigned spinning;		/* of them, watching the slot */
	unsigned sleeping;		/* of them, asleep on enter_cv */
	long spin_ns;			/* how long one watches; 0: never */
	unsigned spin_max;		/* watchers at most at once */
	bool direct;			/* members change the parent itself */
	bool poisoned;			/* a direct member failed after a
					   change: the group aborts */
	unsigned entered;		/* members that entered this group */
	struct member *members;		/* committed children, waiting */

	/* Durability (see the top); under mu. */
	pthread_cond_t sync_cv;		/* durable, committing or syncing
					   changed */
	uint64_t committed;		/* txnid of the last commit */
	_Atomic uint64_t durable;	/* written under mu, read without */
	bool committing;		/* a group's commit is in LMDB */
	uint64_t commit_cover;		/* it makes this durable */
	bool syncing;			/* an explicit sync runs */
	uint64_t sync_cover;		/* it makes this durable */
	unsigned long n_requests;	/* committed members, for the log */
	unsigned long n_groups;		/* group commits */
	unsigned long n_syncs;		/* explicit syncs */
	unsigned long n_watched;	/* entries after watching the slot */
	unsigned long n_ckpts;		/* checkpoints of the log */
	unsigned long n_presyncs;	/* LMDB synced ahead of one */
	/* Where the time goes (mds_commit_stats); under mu. */
	int64_t held_since;		/* the slot's holder entered */
	int64_t freed_at;		/* freed with waiters; 0: not */
	uint64_t held_ns, handoffs, handoff_ns, commit_ns, sync_ns;
	/* Tests: kill -9 at a group commit from this one (1 = the first)
	 * on, before its sync (CLF_TEST_METAD_CRASH_UNSYNCED) or once its
	 * members are answered (CLF_TEST_METAD_CRASH_SYNCED); 0: never. */
	unsigned long crash_unsynced, crash_synced;
	bool frozen;		/* killed for a test: no more syncs */
	/* Tests: the direct member committing n-th (from 1) fails after its
	 * changes, as a put out of space would
	 * (CLF_TEST_METAD_FAIL_AFTER_WRITE); 0: never. */
	unsigned long fail_after_write, direct_commits;
	/* Tests: a sync as slow as a busy disk's
	 * (CLF_TEST_METAD_SYNC_DELAY_US). */
	unsigned sync_delay_us;
};

/* The member's transaction this thread holds, if any (direct: the
 * parent itself, else its child), and whether it leads. */
static _Thread_local struct {
	struct mds_group *g;
	MDB_txn *child;
	size_t mark;		/* the group's log before this child */
	bool leader;
	bool wrote;		/* direct: this member changed the parent */
} held;

/* Whether a request waiting to enter may go on now (g->mu held). */
static bool may_enter(const struct mds_group *g)
{
	return g->state == GROUP_IDLE || (g->state == GROUP_OPEN && !g->busy);
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The child slot is free again (g->mu held): let one in, or the leader
 * commit. */
static void slot_free(struct mds_group *g)
{
	int64_t now = mono_ns();

	g->busy = false;
	g->held_ns += now - g->held_since;
	g->freed_at = 0;
	if (g->waiting && g->entered < MDS_GROUP_MAX) {
		g->freed_at = now;
		/* One watching takes it without a wake-up. */
		if (!g->spinning)
			pthread_cond_signal(&g->enter_cv);
	} else {
		pthread_cond_signal(&g->lead_cv);
	}
}

/* Whether the slot looks free, read without g->mu. */
static bool slot_looks_free(const struct mds_group *g)
{
	enum group_state st = atomic_load_explicit(&g->state,
						   memory_order_acquire);

	return st == GROUP_IDLE ||
	       (st == GROUP_OPEN &&
		!atomic_load_explicit(&g->busy, memory_order_acquire));
}

/*
 * A request waiting for the child slot (g->mu held, dropped meanwhile):
 * when it is held in an open group, watch it for up to g->spin_ns rather
 * than sleep (see the top).  Returns whether it was seen free: look
 * again; false: nothing was watched, or long enough, so sleep.
 */
static bool spin_for_slot(struct mds_group *g)
{
	enum group_state st = g->state;
	int64_t until;
	bool seen;

	if (!g->spin_ns || (st != GROUP_OPEN && st != GROUP_OPENING) ||
	    g->spinning >= g->spin_max)
		return false;
	g->spinning++;
	pthread_mutex_unlock(&g->mu);
	until = mono_ns() + g->spin_ns;
	for (unsigned n = 1;; n++) {
		seen = slot_looks_free(g);
		st = atomic_load_explicit(&g->state, memory_order_relaxed);
		if (seen || st == GROUP_COMMITTING)
			break;
		if (!(n & 63)) {
			if (mono_ns() >= until)
				break;
			/* A runnable thread on this core -- the slot's
			 * holder, a client -- goes first. */
			sched_yield();
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	pthread_mutex_lock(&g->mu);
	g->spinning--;
	return seen;
}

/* Transactions up to t are on disk (g->mu held). */
static void made_durable(struct mds_group *g, uint64_t t)
{
	if (t > atomic_load(&g->durable))
		atomic_store(&g->durable, t);
}

/* Whether a commit or sync under way makes t durable (g->mu held). */
static bool covered(const struct mds_group *g, uint64_t t)
{
	return (g->committing && g->commit_cover >= t) ||
	       (g->syncing && g->sync_cover >= t);
}

/* Sync the data file: every commit returned so far becomes durable
 * (g->mu held, dropped meanwhile).  Returns LMDB's result. */
static int sync_now(struct mds_group *g)
{
	uint64_t cover = g->committed;
	int64_t start;
	int rc;

	/* The test's power cut happened: nothing reaches the disk now. */
	while (g->frozen)
		pthread_cond_wait(&g->sync_cv, &g->mu);
	g->syncing = true;
	g->sync_cover = cover;
	pthread_mutex_unlock(&g->mu);
	start = mono_ns();
	/* With the log, its records up to cover are what must be on disk. */
	rc = g->wal ? (mds_wal_sync(g->wal) ? EIO : 0) :
	     mdb_env_sync(g->env, 1);
	if (g->sync_delay_us)
		usleep(g->sync_delay_us);
	pthread_mutex_lock(&g->mu);
	g->sync_ns += mono_ns() - start;
	g->syncing = false;
	g->n_syncs++;
	if (!rc)
		made_durable(g, cover);
	pthread_cond_broadcast(&g->sync_cv);
	/* A leader keeping its group open while this ran may close it. */
	pthread_cond_signal(&g->lead_cv);
	return rc;
}

/*
 * Wait until transaction t is durable (g->mu held): a commit or sync
 * under way that covers it does it; with defer, so does the commit of
 * the next group when one is open or about to open, given DEFER_MS;
 * else this thread syncs.  Returns
 * 0, or the LMDB result of this thread's failed sync.
 */
static int wait_durable(struct mds_group *g, uint64_t t, bool defer)
{
	struct timespec until;
	bool blocked = false;
	int rc = 0;

	if (defer) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += DEFER_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	while (atomic_load(&g->durable) < t) {
		if (!blocked) {
			/* Meanwhile the next requests are read (daemon.h). */
			clf_daemon_wait_begin();
			blocked = true;
		}
		if (covered(g, t) || g->syncing) {
			/* One sync at a time: a later one covers more. */
			pthread_cond_wait(&g->sync_cv, &g->mu);
		} else if (defer && (g->state != GROUP_IDLE || g->waiting)) {
			/* A group is open, or requests wait to open one. */
			if (pthread_cond_timedwait(&g->sync_cv, &g->mu,
						   &until) == ETIMEDOUT)
				defer = false;
		} else {
			rc = sync_now(g);
			if (rc)
				break;
		}
	}
	if (blocked)
		clf_daemon_wait_end();
	return rc;
}

/*
 * The log is nearly full (g->mu held, dropped meanwhile; the group still
 * GROUP_COMMITTING, so that no commit runs): LMDB synced and
 * checkpointed, the log restarted (mds_wal.c).  Everything committed is
 * then durable.  A failed checkpoint leaves the log as it was: it is
 * tried again at the next group.
 */
static void checkpoint(struct mds_group *g)
{
	uint64_t cover = g->committed;
	int err;

	while (g->frozen)
		pthread_cond_wait(&g->sync_cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
	err = mds_wal_checkpoint(g->wal, g->env, false);
	pthread_mutex_lock(&g->mu);
	if (!err) {
		made_durable(g, cover);
		g->n_ckpts++;
		pthread_cond_broadcast(&g->sync_cv);
	}
}

/* Answer the members of a group with rc (g->mu held). */
static void wake(struct member *list, int rc)
{
	for (struct member *m = list; m; m = m->next) {
		m->rc = rc;
		m->done = true;
		pthread_cond_signal(&m->done_cv);
	}
}

/*
 * CLF_TEST_METAD_CRASH_*: die as a power cut would, at the first group
 * commit from the chosen one on that holds several requests (the
 * members' answers are the point; the leader's never leaves).  From now
 * on nothing reaches the disk (frozen: no sync, and no group commits, the
 * state staying GROUP_COMMITTING); what was answered before had 50 ms to
 * leave (g->mu held).
 */
static void test_crash(struct mds_group *g, unsigned long n,
		       const char *when)
{
	clf_log(CLF_LOG_WARN, "group commit %lu of %lu requests %s: killed "
		"for a test", g->n_groups, n, when);
	g->frozen = true;
	pthread_mutex_unlock(&g->mu);
	usleep(50000);
	raise(SIGKILL);
	_exit(137);
}

/*
 * The leader, its own child finished (g->mu held): wait until the group
 * is quiet, commit it (or abort it when no member committed), let the
 * next group form, wait until this one is durable, and wake its members.
 * Returns the group's result (LMDB's).
 */
static int lead(struct mds_group *g)
{
	struct member *list;
	unsigned long n = 0;
	uint64_t id = 0;
	int64_t start;
	bool presync, poisoned;
	MDB_txn *txn;
	int rc;

	/* With the log, a group that closed while a sync runs would only
	 * wait for it, then sync: it stays open meanwhile and takes in
	 * whoever comes, one LMDB commit and one record for all of them
	 * (on 16 clients, groups of ~2 requests became ~7). */
	while (g->busy || (g->waiting && g->entered < MDS_GROUP_MAX) ||
	       (g->wal && g->syncing && g->entered < MDS_GROUP_MAX)) {
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
	for (struct member *m = list; m; m = m->next)
		n++;
	if (list) {
		id = mdb_txn_id(txn);
		g->committing = true;
		/* With the log, LMDB's commit syncs nothing. */
		g->commit_cover = g->wal ? 0 : g->committed;
	}
	poisoned = g->poisoned;
	g->poisoned = false;
	pthread_mutex_unlock(&g->mu);
	start = mono_ns();
	if (poisoned) {
		/* Every member fails: none of them can be kept alone. */
		mdb_txn_abort(txn);
		rc = list ? EIO : 0;
		if (list)
			clf_log(CLF_LOG_WARN, "group commit: a request failed "
				"after changing the store; the %lu requests "
				"of its group failed with it", n);
	} else {
		rc = list ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), 0);
	}
	/* The group's record: no other group commits until this one's state
	 * leaves GROUP_COMMITTING, so records go in txnid order. */
	if (g->wal) {
		/* A record that cannot be written: LMDB holds the group, so a
		 * checkpoint makes it durable and keeps the log whole (a
		 * later record replayed without it could name what it made).
		 * Without either, stop: the next start replays what is
		 * durable, and nothing of this group was answered. */
		if (list && !rc && mds_wal_write(g->wal, id) &&
		    mds_wal_checkpoint(g->wal, g->env, false)) {
			clf_log(CLF_LOG_ERROR, "store: neither the log nor a "
				"checkpoint can be written: stopping");
			_exit(1);
		}
		mds_wal_truncate(g->wal, 0);
	}
	pthread_mutex_lock(&g->mu);
	g->commit_ns += mono_ns() - start;
	if (list) {
		g->committing = false;
		if (!rc) {
			/* LMDB synced the data before writing meta id:
			 * what had committed before is on disk. */
			if (!g->wal)
				made_durable(g, g->commit_cover);
			g->committed = id;
			g->n_groups++;
			g->n_requests += n;
		}
	}
	if (list && !rc && g->wal && mds_wal_needs_checkpoint(g->wal))
		checkpoint(g);
	presync = list && !rc && g->wal && !g->frozen &&
		  mds_wal_take_presync(g->wal);
	pthread_cond_broadcast(&g->sync_cv);
	if (list && !rc && n > 1 && g->crash_unsynced &&
	    g->n_groups >= g->crash_unsynced)
		test_crash(g, n, "before its sync");
	if (list && !rc && n > 1 && g->crash_synced &&
	    g->n_groups >= g->crash_synced) {
		wake(list, wait_durable(g, id, false));
		test_crash(g, n, "answered");
	}
	/* The pipeline: the next group forms and runs while this one is
	 * made durable. */
	g->state = GROUP_IDLE;
	held.leader = false;
	if (g->waiting)
		pthread_cond_signal(&g->enter_cv);
	if (presync) {
		/* A plain fdatasync of LMDB's file: safe beside commits. */
		pthread_mutex_unlock(&g->mu);
		(void)mdb_env_sync(g->env, 1);
		pthread_mutex_lock(&g->mu);
		g->n_presyncs++;
	}
	if (list && !rc)
		rc = wait_durable(g, id, true);
	wake(list, rc);
	return rc;
}

/* A test hook's group number, 0 when unset. */
static unsigned long env_count(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoul(v, NULL, 10) : 0;
}

/* How long a waiter watches the child slot (see the top), in ns. */
static long spin_ns(void)
{
	const char *v = getenv("CLF_METAD_GROUP_SPIN_US");

	if (v && *v)
		return strtol(v, NULL, 10) > 0 ? strtol(v, NULL, 10) * 1000 : 0;
	return sysconf(_SC_NPROCESSORS_ONLN) >= SPIN_CPUS ?
	       SPIN_US_DEFAULT * 1000L : 0;
}

/* Whether members change the group's transaction itself (see the top):
 * yes unless CLF_METAD_GROUP_DIRECT=0. */
static bool direct(void)
{
	const char *v = getenv("CLF_METAD_GROUP_DIRECT");

	return !v || !*v || strtol(v, NULL, 10) != 0;
}

int mds_group_start(MDB_env *env, struct mds_wal *wal,
		    struct mds_group **out)
{
	struct mds_group *g = calloc(1, sizeof(*g));
	MDB_envinfo info;
	int rc;

	if (!g)
		return clf_fail(ENOMEM, "mds: cannot start group commit: out of memory");
	/* What the store holds is on disk before anyone reads it: a metad
	 * killed between a commit and its sync left it in the page cache. */
	rc = mdb_env_sync(env, 1);
	if (!rc)
		rc = mdb_env_info(env, &info);
	if (rc) {
		free(g);
		return mds_lmdb_fail(rc, "start group commit");
	}
	g->env = env;
	g->wal = wal;
	g->state = GROUP_IDLE;
	g->committed = info.me_last_txnid;
	atomic_init(&g->durable, info.me_last_txnid);
	g->crash_unsynced = env_count("CLF_TEST_METAD_CRASH_UNSYNCED");
	g->crash_synced = env_count("CLF_TEST_METAD_CRASH_SYNCED");
	g->spin_ns = spin_ns();
	g->direct = direct();
	g->fail_after_write = env_count("CLF_TEST_METAD_FAIL_AFTER_WRITE");
	g->spin_max = (unsigned)(sysconf(_SC_NPROCESSORS_ONLN) / 2);
	if (g->spin_max < 1)
		g->spin_max = 1;
	g->sync_delay_us = (unsigned)env_count("CLF_TEST_METAD_SYNC_DELAY_US");
	if (g->spin_ns) {
		/* Held for a few instructions at a time: those woken side by
		 * side when a group opens take it in turn by spinning, not
		 * by a chain of futex wake-ups. */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&g->mu, &ma);
		pthread_mutexattr_destroy(&ma);
	} else {
		pthread_mutex_init(&g->mu, NULL);
	}
	pthread_cond_init(&g->enter_cv, NULL);
	pthread_cond_init(&g->lead_cv, NULL);
	pthread_cond_init(&g->sync_cv, NULL);
	mdb_env_set_userctx(env, g);
	*out = g;
	return 0;
}

void mds_group_stop(struct mds_group *g)
{
	if (!g)
		return;
	mdb_env_set_userctx(g->env, NULL);
	pthread_cond_destroy(&g->sync_cv);
	pthread_cond_destroy(&g->lead_cv);
	pthread_cond_destroy(&g->enter_cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void mds_group_stats(struct mds_group *g, struct mds_commit_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	out->requests = g->n_requests;
	out->groups = g->n_groups;
	/* A group commit syncs once (MDB_NOMETASYNC), an explicit sync
	 * once. */
	/* With the log: its syncs, and a checkpoint's two (LMDB, then the
	 * checkpoint file). */
	out->syncs = g->wal ? g->n_syncs + 2 * g->n_ckpts + g->n_presyncs :
		     g->n_groups + g->n_syncs;
	out->logged = g->wal != NULL;
	out->explicit_syncs = g->n_syncs;
	out->watched = g->n_watched;
	out->checkpoints = g->n_ckpts;
	out->held_ns = g->held_ns;
	out->handoffs = g->handoffs;
	out->handoff_ns = g->handoff_ns;
	out->commit_ns = g->commit_ns;
	out->sync_ns = g->sync_ns;
	pthread_mutex_unlock(&g->mu);
}

void mds_group_visible(MDB_env *env, uint64_t txnid)
{
	struct mds_group *g = env ? mdb_env_get_userctx(env) : NULL;

	if (!g || atomic_load(&g->durable) >= txnid)
		return;
	pthread_mutex_lock(&g->mu);
	/* A snapshot newer than the last commit recorded: that commit is
	 * returning. */
	while (txnid > g->committed && g->committing)
		pthread_cond_wait(&g->sync_cv, &g->mu);
	if (txnid > g->committed)
		txnid = g->committed;
	/* A failed sync fails the writers; the reader's answer stands. */
	(void)wait_durable(g, txnid, false);
	pthread_mutex_unlock(&g->mu);
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
		pthread_cond_broadcast(&g->sync_cv);
		if (g->waiting)
			pthread_cond_signal(&g->enter_cv);
		return rc;
	}
	g->parent = txn;
	g->state = GROUP_OPEN;
	g->entered = 0;
	held.leader = true;
	/* The sleepers wake side by side and watch the slot (see the top),
	 * rather than each wait for a signal from the one before. */
	if (g->spin_ns && g->sleeping)
		pthread_cond_broadcast(&g->enter_cv);
	return 0;
}

int mds_group_begin(struct mds_group *g, MDB_txn **txn)
{
	int rc = 0;

	bool blocked = false, watched = false;

	pthread_mutex_lock(&g->mu);
	g->waiting++;
	while (!may_enter(g)) {
		if (spin_for_slot(g)) {
			watched = true;
			continue;
		}
		watched = false;
		/* Freed while it was watched: nobody was signalled. */
		if (may_enter(g))
			break;
		/* Waiting for the group that syncs, or for the child slot:
		 * this worker's place goes to the next request meanwhile,
		 * else the pool's size would bound the next group (with 4
		 * workers, 16 clients made groups of 4 at most). */
		if (!blocked) {
			clf_daemon_wait_begin();
			blocked = true;
		}
		g->sleeping++;
		pthread_cond_wait(&g->enter_cv, &g->mu);
		g->sleeping--;
	}
	if (blocked)
		clf_daemon_wait_end();
	if (watched)
		g->n_watched++;
	g->waiting--;
	if (g->state == GROUP_IDLE)
		rc = open_group(g);
	if (rc)
		goto unlock;
	g->busy = true;
	g->held_since = mono_ns();
	if (g->freed_at) {
		g->handoffs++;
		g->handoff_ns += g->held_since - g->freed_at;
		g->freed_at = 0;
	}
	g->entered++;
	if (g->direct) {
		*txn = g->parent;
		rc = 0;
	} else {
		rc = mdb_txn_begin(g->env, g->parent, 0, txn);
	}
	if (!rc) {
		held.g = g;
		held.child = *txn;
		held.mark = g->wal ? mds_wal_mark(g->wal) : 0;
		held.wrote = false;
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
	/* Into the group, no sync; a direct member's changes are there
	 * (the slot is held: direct_commits is this thread's alone). */
	if (!g->direct)
		rc = mdb_txn_commit(txn);
	else
		rc = g->fail_after_write &&
		     ++g->direct_commits == g->fail_after_write ? EIO : 0;
	/* A child that failed to commit leaves nothing in the record. */
	if (rc && g->wal)
		mds_wal_truncate(g->wal, held.mark);
	pthread_mutex_lock(&g->mu);
	if (rc && g->direct && held.wrote)
		g->poisoned = true;
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
	if (!g->direct)
		mdb_txn_abort(txn);
	if (g->wal)
		mds_wal_truncate(g->wal, held.mark);
	pthread_mutex_lock(&g->mu);
	/* A direct member's changes cannot be taken out alone. */
	if (g->direct && held.wrote)
		g->poisoned = true;
	finish_member(g, &me, g->members != NULL, 0);
	pthread_mutex_unlock(&g->mu);
	pthread_cond_destroy(&me.done_cv);
}

/* Every change of the store: inside a group member, also noted for the
 * group's log record (mds_wal.c).  A change that cannot be noted fails,
 * and its request with it. */
int mds_store_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
		  unsigned int flags)
{
	int rc;

	/* Before the change: a failed put may have changed pages too. */
	if (held.child == txn)
		held.wrote = true;
	rc = mdb_put(txn, dbi, key, val, flags);

	if (!rc && held.child == txn && held.g->wal)
		rc = mds_wal_note(held.g->wal, MDS_WAL_PUT, dbi, key, val);
	return rc;
}

int mds_store_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val)
{
	int rc;

	if (held.child == txn)
		held.wrote = true;
	rc = mdb_del(txn, dbi, key, val);

	if (!rc && held.child == txn && held.g->wal)
		rc = mds_wal_note(held.g->wal, MDS_WAL_DEL, dbi, key, NULL);
	return rc;
}
