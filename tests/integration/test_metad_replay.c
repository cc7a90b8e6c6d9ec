// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_replay.c -- metad's reply cache (metad/mds_replay.h) and
 * libclf's retries (libclf/client/client_retry.c): a request whose reply was
 * lost -- metad stopped, crashed after its commit, or the reply dropped
 * -- and that is sent again with the same identity gets its first
 * outcome, once, never a second execution (which would fail: ENOENT for
 * the rename already done, EEXIST for the mkdir).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define CLIENT 0x5eed5eed12345678ull

static struct mh H;

static void setup(void)
{
	mh_init(&H, 2, 2000);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

/* A connection whose requests carry *id. */
static struct mc *mc_open_id(const struct clf_proto_reqid *id)
{
	struct mc *m = mc_open(&H);

	m->reqid = id;
	return m;
}

static void restart_with(const char *env)
{
	mh_stop(&H);
	H.env[0] = env;
	mh_start(&H);
}

/* metad died of the crash hook; start it again without the hook. */
static void restart_after_abort(void)
{
	int status = mh_wait_exit(&H);

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "status 0x%x", status);
	H.env[0] = NULL;
	mh_start(&H);
}

/* ---- the protocol: repeats of one identity ---- */

START_TEST(test_repeated_mkdir_gets_the_first_outcome_on_another_connection)
{
	struct clf_proto_reqid id = { CLIENT, 1 }, other = { CLIENT, 2 };
	struct clf_proto_attr first, again;
	struct mc *m = mc_open_id(&id), *m2;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0750, &first), 0);
	mc_close(m);
	m2 = mc_open_id(&id);
	ck_assert_msg(mc_mkdir(m2, ROOT, "d", 0750, &again) == 0,
		      "repeat: %s", CLF_Last_error());
	ck_assert_uint_eq(again.ino, first.ino);
	ck_assert_uint_eq(again.mode, first.mode);
	/* Another identity is another request: it runs, and fails. */
	m2->reqid = &other;
	ck_assert_int_eq(mc_mkdir(m2, ROOT, "d", 0750, NULL), -EEXIST);
	mc_close(m2);
	ck_assert(mh_log_has(&H, "answered a repeated MKDIR"));
}
END_TEST

START_TEST(test_repeated_rename_after_kill9_gets_the_first_outcome)
{
	struct clf_proto_reqid id = { CLIENT, 7 };
	struct mc *m = mc_open(&H);
	uint64_t ino;

	ck_assert_int_eq(mc_create(m, ROOT, "a", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "a");
	m->reqid = &id;
	ck_assert_int_eq(mc_rename(m, ROOT, "a", ROOT, "b", 0), 0);
	mc_close(m);
	/* The record is as durable as the rename. */
	mh_kill9(&H);
	mh_start(&H);
	m = mc_open_id(&id);
	ck_assert_msg(mc_rename(m, ROOT, "a", ROOT, "b", 0) == 0, "repeat: %s",
		      CLF_Last_error());
	m->reqid = NULL;
	ck_assert_int_eq(mc_lookup(m, ROOT, "a", 0, NULL), -ENOENT);
	ck_assert_uint_eq(mc_ino(m, "b"), ino);
	mc_close(m);
}
END_TEST

START_TEST(test_identity_reused_for_another_opcode_is_refused)
{
	struct clf_proto_reqid id = { CLIENT, 3 };
	struct mc *m = mc_open_id(&id);

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	ck_assert_int_eq(mc_rmdir(m, ROOT, "d"), -EINVAL);
	ck_assert_msg(strstr(CLF_Last_error(), "reused"), "%s",
		      CLF_Last_error());
	m->reqid = NULL;
	mc_ino(m, "d");
	mc_close(m);
}
END_TEST

START_TEST(test_failed_request_is_not_recorded_and_runs_again)
{
	struct clf_proto_reqid id = { CLIENT, 4 };
	struct mc *m = mc_open_id(&id);

	ck_assert_int_eq(mc_rmdir(m, ROOT, "d"), -ENOENT);
	m->reqid = NULL;
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	m->reqid = &id;
	ck_assert_int_eq(mc_rmdir(m, ROOT, "d"), 0);
	m->reqid = NULL;
	ck_assert_int_eq(mc_lookup(m, ROOT, "d", 0, NULL), -ENOENT);
	mc_close(m);
}
END_TEST

/*
 * Each mutating opcode in turn: metad commits it, crashes before the
 * reply, restarts; the same identity then gets success, and the
 * namespace shows the change once.
 */
START_TEST(test_crash_after_commit_then_each_opcode_repeated_gets_success)
{
	struct clf_proto_reqid id = { CLIENT, 100 };
	struct clf_proto_setattr_req sa = {
		.mask = CLF_PROTO_SETATTR_MODE, .mode = 0600,
	};
	struct clf_proto_create_rep cr;
	struct clf_proto_attr a;
	struct mc *m;
	uint64_t fino;

	m = mc_open(&H);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "gone", 0755, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "u", 0644, 0, NULL, NULL), 0);
	fino = mc_ino(m, "f");
	mc_close(m);
	restart_with("CLF_TEST_METAD_CRASH_AFTER_RECORDED=1");

	for (int op = 0; op < 6; op++) {
		int err = 0;

		id.seq++;
		for (int pass = 0; pass < 2; pass++) {
			m = mc_open_id(&id);
			switch (op) {
			case 0:
				err = mc_create(m, ROOT, "c", 0644,
						CLF_PROTO_CREATE_EXCL, NULL,
						pass ? &cr : NULL);
				break;
			case 1:
				err = mc_mkdir(m, ROOT, "m", 0755, NULL);
				break;
			case 2:
				err = mc_rename(m, ROOT, "f", ROOT, "g", 0);
				break;
			case 3:
				err = mc_unlink(m, ROOT, "u");
				break;
			case 4:
				err = mc_rmdir(m, ROOT, "gone");
				break;
			case 5:
				sa.ino = fino;
				err = mc_setattr(m, &sa, pass ? &a : NULL);
				break;
			}
			if (pass == 0) {
				ck_assert_msg(err && clf_conn_broken(m->c),
					      "opcode %d: metad answered", op);
				mc_close(m);
				/* The hook is off after the restart. */
				restart_after_abort();
				continue;
			}
			ck_assert_msg(err == 0, "opcode %d repeated: %s", op,
				      CLF_Last_error());
			mc_close(m);
		}
		if (op == 0) {
			ck_assert(S_ISREG(cr.attr.mode));
			clf_proto_create_rep_release(&cr);
		}
		if (op == 5)
			ck_assert_uint_eq(a.mode & 07777, 0600);
		H.env[0] = "CLF_TEST_METAD_CRASH_AFTER_RECORDED=1";
		mh_stop(&H);
		mh_start(&H);
	}
	H.env[0] = NULL;
	m = mc_open(&H);
	mc_ino(m, "c");
	mc_ino(m, "m");
	ck_assert_uint_eq(mc_ino(m, "g"), fino);
	ck_assert_int_eq(mc_lookup(m, ROOT, "f", 0, NULL), -ENOENT);
	ck_assert_int_eq(mc_lookup(m, ROOT, "u", 0, NULL), -ENOENT);
	ck_assert_int_eq(mc_lookup(m, ROOT, "gone", 0, NULL), -ENOENT);
	ck_assert_int_eq(mc_getattr(m, fino, &a), 0);
	ck_assert_uint_eq(a.mode & 07777, 0600);
	mc_close(m);
}
END_TEST

/* ---- libclf: transparent retries ---- */

static void native_init(void)
{
	ck_assert_msg(CLF_init(H.conf) == 0, "CLF_init: %s", CLF_Last_error());
}

/* Every reply of a recorded request is lost once; each call still
 * returns what its first execution did. */
START_TEST(test_native_calls_with_their_replies_dropped_return_success)
{
	struct stat st;
	int fd;

	restart_with("CLF_TEST_METAD_DROP_REPLIES=1");
	native_init();
	ck_assert_msg(CLF_mkdir("/d", 0755) == 0, "mkdir: %s",
		      CLF_Last_error());
	fd = CLF_open("/d/a", O_CREAT | O_EXCL | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "create: %s", CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	ck_assert_msg(CLF_rename("/d/a", "/d/b") == 0, "rename: %s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_stat("/d/a", &st), -ENOENT);
	ck_assert_int_eq(CLF_stat("/d/b", &st), 0);
	ck_assert_msg(CLF_unlink("/d/b") == 0, "unlink: %s", CLF_Last_error());
	ck_assert_msg(CLF_rmdir("/d") == 0, "rmdir: %s", CLF_Last_error());
	ck_assert_int_eq(CLF_stat("/d", &st), -ENOENT);
	ck_assert_int_eq(CLF_finalize(), 0);
	ck_assert(mh_log_has(&H, "the reply to RENAME was dropped"));
	ck_assert(mh_log_has(&H, "answered a repeated RENAME"));
	ck_assert(mh_log_has(&H, "answered a repeated CREATE"));
}
END_TEST

/* Whether every thread of pid is stopped ('T' or 't' after "(comm) "
 * in /proc/pid/task/TID/stat); false when that cannot be read. */
static bool all_stopped(pid_t pid)
{
	char path[300], line[512];
	struct dirent *e;
	bool stopped = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	while (stopped && (e = readdir(d))) {
		FILE *f;
		char *state = NULL;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid,
			 e->d_name);
		f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f))
			state = strrchr(line, ')');
		if (f)
			fclose(f);
		stopped = state && state[1] == ' ' &&
			  (state[2] == 'T' || state[2] == 't');
	}
	closedir(d);
	return stopped;
}

/*
 * SIGSTOP pid and wait until every thread of it is stopped: kill()
 * returns once the signal is sent, and a thread running on another CPU
 * stops a moment later.  Fails the test after 5 s.
 */
static void stop_metad(pid_t pid)
{
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	for (int i = 0; i < 500 && !all_stopped(pid); i++)
		usleep(10000);
	ck_assert_msg(all_stopped(pid),
		      "metad (pid %d) did not stop within 5 s of SIGSTOP",
		      (int)pid);
}

struct resumer {
	pid_t pid;
	int after_ms;
};

static void *resume_main(void *arg)
{
	struct resumer *r = arg;
	struct timespec ts = { r->after_ms / 1000,
			       (r->after_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	kill(r->pid, SIGCONT);
	return NULL;
}

/* The reproduction of issue 10 point 6: the rename times out while
 * metad is stopped, and is applied when it resumes. */
START_TEST(test_native_rename_while_metad_is_stopped_returns_success)
{
	struct resumer r = { H.metad, 3000 };	/* past the 2 s timeout */
	struct stat st;
	pthread_t t;
	int fd, err;

	native_init();
	fd = CLF_open("/a", O_CREAT | O_EXCL | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "create: %s", CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	stop_metad(H.metad);
	ck_assert_int_eq(pthread_create(&t, NULL, resume_main, &r), 0);
	err = CLF_rename("/a", "/b");
	pthread_join(t, NULL);
	ck_assert_msg(err == 0, "rename: %s", CLF_Last_error());
	ck_assert_int_eq(CLF_stat("/a", &st), -ENOENT);
	ck_assert_int_eq(CLF_stat("/b", &st), 0);
	ck_assert_int_eq(CLF_finalize(), 0);
}
END_TEST

/* What stays in doubt: metad stopped longer than the retries last. */
START_TEST(test_native_rename_while_metad_stays_stopped_fails_saying_so)
{
	int64_t t0, ms;
	int fd, err;

	mh_cleanup(&H);
	mh_init(&H, 2, 500);
	mh_start(&H);
	native_init();
	fd = CLF_open("/a", O_CREAT | O_EXCL | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "create: %s", CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	stop_metad(H.metad);
	t0 = clf_now_ms();
	err = CLF_rename("/a", "/b");
	ms = clf_now_ms() - t0;
	kill(H.metad, SIGCONT);
	ck_assert_msg(err == -ETIMEDOUT,
		      "rename with metad stopped: %d after %lld ms (%s)", err,
		      (long long)ms, err ? CLF_Last_error() : "no error");
	ck_assert_msg(strstr(CLF_Last_error(), "may or may not have been applied"),
		      "%s", CLF_Last_error());
	/* Three timeouts of 500 ms, give or take a connection. */
	ck_assert_msg(ms >= 1400 && ms < 4000, "gave up after %lld ms",
		      (long long)ms);
	ck_assert_int_eq(CLF_finalize(), 0);
}
END_TEST

struct call {
	int err;
	char msg[512];
};

static void *create_main(void *arg)
{
	struct call *c = arg;
	int fd = CLF_open("/c", O_CREAT | O_EXCL | O_RDWR, 0644);

	c->err = fd < 0 ? fd : CLF_close(fd);
	snprintf(c->msg, sizeof(c->msg), "%s", CLF_Last_error());
	return NULL;
}

/* metad commits the create and dies before its reply; the client's
 * retries reach the restarted metad and get the first outcome, not
 * EEXIST. */
START_TEST(test_native_create_across_a_crash_before_the_reply_returns_success)
{
	struct call c = { 0 };
	struct stat st;
	pthread_t t;

	restart_with("CLF_TEST_METAD_CRASH_AFTER_CREATES=1");
	native_init();
	ck_assert_int_eq(pthread_create(&t, NULL, create_main, &c), 0);
	restart_after_abort();
	pthread_join(t, NULL);
	ck_assert_msg(c.err == 0, "create: %s", c.msg);
	ck_assert_int_eq(CLF_stat("/c", &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(CLF_finalize(), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_replay");
	TCase *tc = tcase_create("replay");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc,
		test_repeated_mkdir_gets_the_first_outcome_on_another_connection);
	tcase_add_test(tc, test_repeated_rename_after_kill9_gets_the_first_outcome);
	tcase_add_test(tc, test_identity_reused_for_another_opcode_is_refused);
	tcase_add_test(tc, test_failed_request_is_not_recorded_and_runs_again);
	tcase_add_test(tc,
		test_crash_after_commit_then_each_opcode_repeated_gets_success);
	tcase_add_test(tc,
		test_native_calls_with_their_replies_dropped_return_success);
	tcase_add_test(tc, test_native_rename_while_metad_is_stopped_returns_success);
	tcase_add_test(tc, test_native_rename_while_metad_stays_stopped_fails_saying_so);
	tcase_add_test(tc,
		test_native_create_across_a_crash_before_the_reply_returns_success);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
