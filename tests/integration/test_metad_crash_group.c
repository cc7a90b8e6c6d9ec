// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_crash_group.c -- kill -9 metad while many clients create or
 * unlink at once, so that their requests share group commits (metad/
 * mds_group.c), and check that a restart finds every acknowledged change:
 * a member of a group is answered only once the group is durable, so no
 * kill, wherever it falls in a group, may lose what a client was told.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define WRITERS 8
#define MAX_OPS 20000		/* per writer; the kill comes long before */

static struct mh H;

/* A long timeout: the test is about durability, and on a loaded machine
 * one group commit's fdatasync can take seconds; a request that timed
 * out before the kill would end its writer as if the kill had. */
#define TIMEOUT_MS 30000

static void setup(void)
{
	mh_init(&H, 2, TIMEOUT_MS);
	mh_start(&H);
}

/* Each sync of the log takes 5 ms more, as on a busy disk: the requests
 * of the other clients arrive while one syncs. */
static void setup_slow_sync(void)
{
	mh_init(&H, 2, 5000);
	H.env[0] = "CLF_TEST_METAD_SYNC_DELAY_US=5000";
	mh_start(&H);
}

/* A log of a few kilobytes: a checkpoint every few group commits, so
 * that a kill falls between checkpoints with many commits since the
 * last one, LMDB unsynced (metad/mds_wal.c). */
static void setup_small_log(void)
{
	mh_init(&H, 2, 5000);
	H.env[0] = "CLF_TEST_METAD_WAL_SIZE=6000";
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

enum burst_op { BURST_CREATE, BURST_UNLINK };

struct burst {
	enum burst_op op;
	int first[WRITERS];	/* unlink: writer w's first name */
	int acked[WRITERS];	/* acknowledged operations per writer */
	bool other_error[WRITERS];	/* a failure not from the kill */
	char error[WRITERS][160];
	int kill_after;		/* acknowledged operations, all writers */
	atomic_int total;	/* acknowledged, all writers */
	atomic_bool killed;	/* metad was sent SIGKILL */
};

struct writer {
	struct burst *b;
	int w;
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	struct burst *b = wr->b;
	int w = wr->w;
	struct mc *m = mc_open(&H);

	for (int i = 0; i < MAX_OPS; i++) {
		char name[64];
		int err;

		snprintf(name, sizeof(name), "burst/w%d-%d", w,
			 b->first[w] + i);
		err = b->op == BURST_CREATE ?
			mc_create(m, ROOT, name, 0644, CLF_PROTO_CREATE_EXCL,
				  NULL, NULL) :
			mc_unlink(m, ROOT, name);
		if (err) {
			/* Only the kill may stop the burst. */
			bool killed = atomic_load(&b->killed);

			if (!clf_conn_broken(m->c) || !killed) {
				b->other_error[w] = true;
				snprintf(b->error[w], sizeof(b->error[w]),
					 "%s%s: %s", name,
					 killed ? "" : ", before the kill",
					 CLF_Last_error());
			}
			break;
		}
		b->acked[w]++;
		atomic_fetch_add(&b->total, 1);
	}
	mc_close(m);
	return NULL;
}

/* Run the burst with WRITERS connections; kill -9 metad once
 * b->kill_after operations were acknowledged (plus up to 20 ms), and
 * restart it. */
static void burst_and_kill(struct burst *b)
{
	struct writer wr[WRITERS];
	pthread_t t[WRITERS];
	unsigned seed = (unsigned)getpid();
	struct timespec ts = { 0, 1000000L };

	atomic_init(&b->total, 0);
	atomic_init(&b->killed, false);
	for (int w = 0; w < WRITERS; w++) {
		wr[w] = (struct writer){ b, w };
		b->acked[w] = 0;
		b->other_error[w] = false;
		ck_assert_int_eq(pthread_create(&t[w], NULL, writer_main,
						&wr[w]), 0);
	}
	for (int i = 0; i < 60000 && atomic_load(&b->total) < b->kill_after; i++)
		nanosleep(&ts, NULL);
	ts.tv_nsec = (long)(rand_r(&seed) % 20) * 1000000L;
	nanosleep(&ts, NULL);
	atomic_store(&b->killed, true);
	mh_kill9(&H);
	for (int w = 0; w < WRITERS; w++)
		pthread_join(t[w], NULL);
	for (int w = 0; w < WRITERS; w++) {
		ck_assert_msg(!b->other_error[w], "writer %d: %s", w,
			      b->error[w]);
		ck_assert_msg(b->acked[w] < MAX_OPS,
			      "the kill did not interrupt writer %d", w);
	}
	ck_assert_int_ge(atomic_load(&b->total), b->kill_after);
	mh_start(&H);
}

/* Whether burst/w<w>-<i> exists now (asserts no other failure). */
static bool exists(struct mc *m, int w, int i)
{
	char name[64];
	int err;

	snprintf(name, sizeof(name), "burst/w%d-%d", w, i);
	err = mc_lookup(m, ROOT, name, 0, NULL);
	ck_assert_msg(err == 0 || err == -ENOENT, "lookup %s: %s", name,
		      CLF_Last_error());
	return err == 0;
}

START_TEST(test_kill9_during_concurrent_creates_keeps_every_acknowledged_one)
{
	struct burst b = { .op = BURST_CREATE, .kill_after = 200 };
	struct mc *m = mc_open(&H);

	ck_assert_int_eq(mc_mkdir(m, ROOT, "burst", 0755, NULL), 0);
	mc_close(m);
	burst_and_kill(&b);
	m = mc_open(&H);
	for (int w = 0; w < WRITERS; w++) {
		for (int i = 0; i < b.acked[w]; i++)
			ck_assert_msg(exists(m, w, i),
				      "acknowledged create w%d-%d lost", w, i);
		/* Beyond the one in flight, nothing was ever asked for. */
		ck_assert(!exists(m, w, b.acked[w] + 1));
	}
	mc_close(m);
}
END_TEST

START_TEST(test_kill9_during_concurrent_unlinks_keeps_every_acknowledged_one)
{
	enum { PER_WRITER = 120 };
	struct burst b = { .op = BURST_UNLINK, .kill_after = 80 };
	struct mc *m = mc_open(&H);

	ck_assert_int_eq(mc_mkdir(m, ROOT, "burst", 0755, NULL), 0);
	for (int w = 0; w < WRITERS; w++) {
		for (int i = 0; i < PER_WRITER; i++) {
			char name[64];

			snprintf(name, sizeof(name), "burst/w%d-%d", w, i);
			ck_assert_int_eq(mc_create(m, ROOT, name, 0644,
						   CLF_PROTO_CREATE_EXCL, NULL,
						   NULL), 0);
		}
	}
	mc_close(m);
	burst_and_kill(&b);
	m = mc_open(&H);
	for (int w = 0; w < WRITERS; w++) {
		ck_assert_msg(b.acked[w] < PER_WRITER,
			      "writer %d ran out of files before the kill", w);
		for (int i = 0; i < b.acked[w]; i++)
			ck_assert_msg(!exists(m, w, i),
				      "acknowledged unlink w%d-%d undone", w, i);
		/* Beyond the one in flight, nothing was unlinked. */
		for (int i = b.acked[w] + 1; i < PER_WRITER; i++)
			ck_assert_msg(exists(m, w, i), "w%d-%d vanished", w, i);
	}
	mc_close(m);
}
END_TEST

/* Writer w of WRITERS creates n files, all acknowledged. */
static void *creator_main(void *arg)
{
	struct writer *wr = arg;
	struct mc *m = mc_open(&H);

	for (int i = 0; i < wr->b->kill_after; i++) {
		char name[64];

		snprintf(name, sizeof(name), "burst/w%d-%d", wr->w, i);
		if (mc_create(m, ROOT, name, 0644, CLF_PROTO_CREATE_EXCL, NULL,
			      NULL))
			break;
		wr->b->acked[wr->w]++;
	}
	mc_close(m);
	return NULL;
}



/*
 * A request alone (one client, one request at a time) is made durable by
 * one fdatasync: its group's record in the log.  Through LMDB alone it
 * cost two, its pages and then its meta page (metad/mds_wal.c).
 */
START_TEST(test_a_lone_create_costs_one_fdatasync)
{
	enum { N = 40 };
	struct mc *m = mc_open(&H);
	long requests, syncs;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "lone", 0755, NULL), 0);
	for (int i = 0; i < N; i++) {
		char name[64];

		snprintf(name, sizeof(name), "lone/f%d", i);
		ck_assert_int_eq(mc_create(m, ROOT, name, 0644,
					   CLF_PROTO_CREATE_EXCL, NULL, NULL),
				 0);
	}
	mc_close(m);
	mh_stop(&H);
	requests = mh_log_number_before(&H, " requests in ");
	syncs = mh_log_number_before(&H, " fdatasyncs");
	ck_assert_int_ge(requests, N + 1);
	ck_assert_msg(syncs <= requests + 2,
		      "%ld fdatasyncs for %ld requests made one at a time",
		      syncs, requests);
	mh_start(&H);
	m = mc_open(&H);
	for (int i = 0; i < N; i++) {
		char name[64];

		snprintf(name, sizeof(name), "lone/f%d", i);
		ck_assert_int_eq(mc_lookup(m, ROOT, name, 0, NULL), 0);
	}
	mc_close(m);
}
END_TEST

/*
 * While the log syncs one group, the next stays open and takes in every
 * request that comes meanwhile: one LMDB commit and one record for all of
 * them.  A group that closed as soon as nobody waited to enter held ~2
 * requests of 16 clients and cost an LMDB commit each.  With 8 clients
 * and slow syncs they now alternate between two groups, ~4 in each.
 */
START_TEST(test_concurrent_creates_share_groups_while_the_log_syncs)
{
	struct burst b = { .op = BURST_CREATE, .kill_after = 50 };
	struct writer wr[WRITERS];
	pthread_t t[WRITERS];
	struct mc *m = mc_open(&H);
	long requests, groups;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "burst", 0755, NULL), 0);
	mc_close(m);
	for (int w = 0; w < WRITERS; w++) {
		wr[w] = (struct writer){ &b, w };
		ck_assert_int_eq(pthread_create(&t[w], NULL, creator_main,
						&wr[w]), 0);
	}
	for (int w = 0; w < WRITERS; w++)
		pthread_join(t[w], NULL);
	for (int w = 0; w < WRITERS; w++)
		ck_assert_int_eq(b.acked[w], b.kill_after);
	mh_stop(&H);
	requests = mh_log_number_before(&H, " requests in ");
	groups = mh_log_number_before(&H, " groups, ");
	printf("%ld requests of %d clients in %ld groups\n", requests,
	       WRITERS, groups);
	ck_assert_int_ge(requests, WRITERS * b.kill_after);
	ck_assert_msg(groups > 0 && requests >= 3 * groups,
		      "%ld requests of %d clients in %ld groups: want 3 or "
		      "more per group", requests, WRITERS, groups);
}
END_TEST

/*
 * A request that fails after changing the store cannot be rolled back
 * alone when members change the group's transaction directly
 * (metad/mds_group.c): its whole group fails.  metad is made to fail
 * the 60th request that commits, after its changes, while 8 clients
 * create at once; then every create answered 0 exists and every one
 * answered an error does not -- also after a restart, and the failure
 * took no other form than EIO.
 */
#define POISON_EACH 40

struct poison_writer {
	int w;
	int err[POISON_EACH];
};

static void *poison_main(void *arg)
{
	struct poison_writer *pw = arg;
	struct mc *m = mc_open(&H);

	for (int i = 0; i < POISON_EACH; i++) {
		char name[64];

		snprintf(name, sizeof(name), "poison/w%d-%d", pw->w, i);
		pw->err[i] = mc_create(m, ROOT, name, 0644,
				       CLF_PROTO_CREATE_EXCL, NULL, NULL);
	}
	mc_close(m);
	return NULL;
}

/* Each create's answer against what the store holds now. */
static int check_poison(struct poison_writer *pw)
{
	struct mc *m = mc_open(&H);
	int failed = 0;

	for (int w = 0; w < WRITERS; w++)
		for (int i = 0; i < POISON_EACH; i++) {
			char name[64];
			int err;

			snprintf(name, sizeof(name), "poison/w%d-%d", w, i);
			err = mc_lookup(m, ROOT, name, 0, NULL);
			ck_assert_msg(err == 0 || err == -ENOENT,
				      "lookup %s: %s", name, CLF_Last_error());
			ck_assert_msg(pw[w].err[i] == 0 || pw[w].err[i] == -EIO,
				      "create %s: %d", name, pw[w].err[i]);
			if (pw[w].err[i])
				failed++;
			ck_assert_msg((err == 0) == (pw[w].err[i] == 0),
				      "%s was answered %d and %s", name,
				      pw[w].err[i], err ? "is missing" :
				      "exists");
		}
	mc_close(m);
	return failed;
}

static void setup_fail_after_write(void)
{
	mh_init(&H, 2, TIMEOUT_MS);
	H.env[0] = "CLF_TEST_METAD_FAIL_AFTER_WRITE=60";
	mh_start(&H);
}

START_TEST(test_a_request_failing_after_its_changes_fails_its_group)
{
	struct poison_writer pw[WRITERS];
	pthread_t t[WRITERS];
	struct mc *m = mc_open(&H);
	int failed;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "poison", 0755, NULL), 0);
	mc_close(m);
	for (int w = 0; w < WRITERS; w++) {
		pw[w].w = w;
		ck_assert_int_eq(pthread_create(&t[w], NULL, poison_main,
						&pw[w]), 0);
	}
	for (int w = 0; w < WRITERS; w++)
		pthread_join(t[w], NULL);
	failed = check_poison(pw);
	ck_assert_msg(failed >= 1, "the failing request was not reached");
	mh_stop(&H);
	mh_start(&H);
	ck_assert_int_eq(check_poison(pw), failed);
	printf("a request failing after its changes: %d of %d creates "
	       "failed with its group\n", failed, WRITERS * POISON_EACH);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_crash_group");
	TCase *tc = tcase_create("crash_group");
	TCase *tl = tcase_create("crash_group_small_log");
	TCase *ts = tcase_create("crash_group_slow_sync");
	TCase *tp = tcase_create("crash_group_fail_after_write");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc,
		test_kill9_during_concurrent_creates_keeps_every_acknowledged_one);
	tcase_add_test(tc,
		test_kill9_during_concurrent_unlinks_keeps_every_acknowledged_one);
	/* And with a checkpoint of the log every few groups. */
	tcase_add_checked_fixture(tl, setup_small_log, teardown);
	tcase_set_timeout(tl, 240);
	tcase_add_test(tl,
		test_kill9_during_concurrent_creates_keeps_every_acknowledged_one);
	tcase_add_test(tl,
		test_kill9_during_concurrent_unlinks_keeps_every_acknowledged_one);
	tcase_add_test(tc, test_a_lone_create_costs_one_fdatasync);
	tcase_add_checked_fixture(ts, setup_slow_sync, teardown);
	tcase_set_timeout(ts, 120);
	tcase_add_test(ts,
		test_concurrent_creates_share_groups_while_the_log_syncs);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tl);
	tcase_add_checked_fixture(tp, setup_fail_after_write, teardown);
	tcase_set_timeout(tp, 120);
	tcase_add_test(tp,
		test_a_request_failing_after_its_changes_fails_its_group);
	suite_add_tcase(s, ts);
	suite_add_tcase(s, tp);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
