// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_crash.c -- kill the real metad in the middle of work and
 * check what a restart finds: every acknowledged change, nothing half
 * made, a store whose invariants hold.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metad_harness.h"
#include "mds_store.h"

#define ROOT CLF_PROTO_ROOT_INO
#define ROUNDS 3
#define MAX_CREATES 20000	/* per round; the kill comes long before */
#define PAGE 100		/* READDIR entries per request */

static struct mh H;

static void setup(void)
{
	mh_init(&H, 2, 5000);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

/* Once metad is stopped: the store's own consistency check. */
static void verify_store(void)
{
	struct mds_store *st;

	ck_assert_msg(mds_store_open(H.meta, &st) == 0, "open: %s",
		      CLF_Last_error());
	ck_assert_msg(mds_store_verify(st) == 0, "verify: %s",
		      CLF_Last_error());
	mds_store_close(st);
}

/* ---- kill -9 during a burst of creates ---- */

struct killer {
	pid_t pid;
	int delay_ms;
};

static void *killer_main(void *arg)
{
	struct killer *k = arg;
	struct timespec ts = { k->delay_ms / 1000,
			       (k->delay_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	kill(k->pid, SIGKILL);
	return NULL;
}

/* Which (round, index) a name "r<round>-<index>" stands for. */
static bool parse_name(struct clf_proto_str s, int *round, int *index)
{
	char buf[64];

	if (s.len >= sizeof(buf))
		return false;
	memcpy(buf, s.ptr, s.len);
	buf[s.len] = '\0';
	return sscanf(buf, "r%d-%d", round, index) == 2;
}

START_TEST(test_kill9_during_a_burst_of_creates_loses_nothing_acknowledged)
{
	int acked[ROUNDS];	/* creates acknowledged in each round */
	unsigned seed = (unsigned)getpid();
	struct mc *m = mc_open(&H);
	uint64_t dir;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "burst", 0755, NULL), 0);
	dir = mc_ino(m, "burst");
	mc_close(m);

	for (int round = 0; round < ROUNDS; round++) {
		struct killer k = { H.metad, 100 + (int)(rand_r(&seed) % 300) };
		int64_t total = 0, in_flight_seen = 0;
		uint64_t cookie = 0;
		bool eof = false;
		pthread_t t;

		m = mc_open(&H);
		ck_assert_int_eq(pthread_create(&t, NULL, killer_main, &k), 0);
		acked[round] = 0;
		for (int i = 0; i < MAX_CREATES; i++) {
			char name[64];
			int err;

			snprintf(name, sizeof(name), "burst/r%d-%d", round, i);
			err = mc_create(m, ROOT, name, 0644,
					CLF_PROTO_CREATE_EXCL, NULL, NULL);
			if (err) {
				/* Only the kill may stop the burst. */
				ck_assert_msg(clf_conn_broken(m->c),
					      "create %s: %s", name,
					      CLF_Last_error());
				break;
			}
			acked[round]++;
		}
		pthread_join(t, NULL);
		mc_close(m);
		ck_assert_msg(acked[round] < MAX_CREATES,
			      "the kill did not interrupt the burst");
		mh_kill9(&H);
		mh_start(&H);

		/* Every acknowledged file of every round so far is there. */
		m = mc_open(&H);
		for (int r = 0; r <= round; r++) {
			for (int i = 0; i < acked[r]; i++) {
				char name[64];
				struct clf_proto_lookup_rep lk;

				snprintf(name, sizeof(name), "r%d-%d", r, i);
				ck_assert_msg(mc_lookup(m, dir, name,
						CLF_PROTO_LOOKUP_LAYOUT,
						&lk) == 0,
					      "acknowledged %s lost: %s", name,
					      CLF_Last_error());
				ck_assert(S_ISREG(lk.attr.mode));
				ck_assert(lk.has_layout);
				clf_proto_lookup_rep_release(&lk);
			}
		}
		/* The listing agrees with lookups, and holds nothing but
		 * acknowledged files and, per round, the one in flight. */
		for (int pages = 0; !eof && pages < 100000; pages++) {
			struct clf_proto_readdir_rep rep;
			char names[PAGE][64];
			uint64_t inos[PAGE];
			uint32_t n;

			ck_assert_int_eq(mc_readdir(m, dir, cookie, PAGE,
						    &rep), 0);
			n = rep.count;
			for (uint32_t i = 0; i < n; i++) {
				const struct clf_proto_dirent *e = &rep.ents[i];
				int r, idx;

				ck_assert(parse_name(e->name, &r, &idx));
				ck_assert(r >= 0 && r <= round);
				ck_assert_msg(idx <= acked[r],
					      "r%d-%d was never asked for", r,
					      idx);
				in_flight_seen += idx == acked[r];
				snprintf(names[i], sizeof(names[i]), "r%d-%d",
					 r, idx);
				inos[i] = e->ino;
				cookie = e->cookie;
				total++;
			}
			eof = rep.eof;
			clf_proto_readdir_rep_release(&rep);
			/* What the listing shows, a lookup finds. */
			for (uint32_t i = 0; i < n; i++) {
				struct clf_proto_lookup_rep lk;

				ck_assert_msg(mc_lookup(m, dir, names[i], 0,
							&lk) == 0,
					      "listed %s not found: %s",
					      names[i], CLF_Last_error());
				ck_assert_uint_eq(lk.attr.ino, inos[i]);
				clf_proto_lookup_rep_release(&lk);
			}
		}
		ck_assert(eof);
		ck_assert_int_le(in_flight_seen, round + 1);
		{
			int64_t want = 0;

			for (int r = 0; r <= round; r++)
				want += acked[r];
			ck_assert_int_ge(total, want);
			ck_assert_int_le(total, want + round + 1);
		}
		/* A file in flight that made it is a whole file. */
		for (int r = 0; r <= round; r++) {
			char name[64];
			struct clf_proto_lookup_rep lk;
			int err;

			snprintf(name, sizeof(name), "r%d-%d", r, acked[r]);
			err = mc_lookup(m, dir, name, CLF_PROTO_LOOKUP_LAYOUT,
					&lk);
			ck_assert(err == 0 || err == -ENOENT);
			if (!err) {
				ck_assert(lk.has_layout);
				ck_assert_uint_eq(lk.layout.nsubfiles,
						  (uint32_t)H.niods);
				clf_proto_lookup_rep_release(&lk);
			}
		}
		mc_close(m);
		ck_assert_msg(acked[round] > 0, "no create in round %d",
			      round);
	}
	mh_stop(&H);
	verify_store();
}
END_TEST

START_TEST(test_crash_after_commit_before_reply_keeps_the_file)
{
	struct mc *m;
	int status;

	mh_stop(&H);
	H.env[0] = "CLF_TEST_METAD_CRASH_AFTER_CREATES=5";
	mh_start(&H);
	m = mc_open(&H);
	for (int i = 1; i <= 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		ck_assert_int_eq(mc_create(m, ROOT, name, 0644, 0, NULL, NULL),
				 0);
	}
	/* The fifth is committed, then the daemon dies without a reply. */
	ck_assert_int_ne(mc_create(m, ROOT, "c5", 0644, 0, NULL, NULL), 0);
	ck_assert(clf_conn_broken(m->c));
	mc_close(m);
	status = mh_wait_exit(&H);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "status 0x%x", status);
	ck_assert(mh_log_has(&H, "crashing after 5 creates"));

	H.env[0] = NULL;
	mh_start(&H);
	m = mc_open(&H);
	for (int i = 1; i <= 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		mc_ino(m, name);
	}
	mc_close(m);
	mh_stop(&H);
	verify_store();
}
END_TEST

START_TEST(test_crash_after_unlink_commit_keeps_it_unlinked)
{
	struct mc *m;
	int status;

	mh_stop(&H);
	H.env[0] = "CLF_TEST_METAD_CRASH_AFTER_UNLINKS=1";
	mh_start(&H);
	m = mc_open(&H);
	ck_assert_int_eq(mc_create(m, ROOT, "a", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "b", 0644, 0, NULL, NULL), 0);
	ck_assert_int_ne(mc_unlink(m, ROOT, "a"), 0);
	mc_close(m);
	status = mh_wait_exit(&H);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);

	H.env[0] = NULL;
	mh_start(&H);
	m = mc_open(&H);
	ck_assert_int_eq(mc_lookup(m, ROOT, "a", 0, NULL), -ENOENT);
	mc_ino(m, "b");
	mc_close(m);
	mh_stop(&H);
	verify_store();
}
END_TEST

START_TEST(test_restart_after_kill9_when_idle)
{
	struct mc *m = mc_open(&H);
	uint64_t ino;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "d/f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_rename(m, ROOT, "d/f", ROOT, "g", 0), 0);
	ino = mc_ino(m, "g");
	mc_close(m);
	mh_kill9(&H);
	/* The lock of the dead process does not keep the next one out. */
	mh_start(&H);
	m = mc_open(&H);
	ck_assert_uint_eq(mc_ino(m, "g"), ino);
	ck_assert_int_eq(mc_lookup(m, ROOT, "d/f", 0, NULL), -ENOENT);
	mc_close(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_crash");
	TCase *tc = tcase_create("crash");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc,
		test_kill9_during_a_burst_of_creates_loses_nothing_acknowledged);
	tcase_add_test(tc, test_crash_after_commit_before_reply_keeps_the_file);
	tcase_add_test(tc, test_crash_after_unlink_commit_keeps_it_unlinked);
	tcase_add_test(tc, test_restart_after_kill9_when_idle);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
