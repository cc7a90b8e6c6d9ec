// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_crash.c -- crash consistency: what clf acknowledged as durable
 * survives a power cut at any moment.
 *
 * Each round starts metad and the iods with crash_shim.so preloaded,
 * which records in a shadow directory what every sync made durable (see
 * crash_shadow.h).  WORKERS workload processes at once (so that metad
 * commits their changes in shared groups) each create, write and sync files,
 * make directories, rename and unlink, and report each operation
 * the moment it is acknowledged.  At a random moment every daemon is
 * killed, and the instance's directory is replaced by the tree a power
 * cut at that moment would leave: nothing that was not synced.  The
 * daemons must start on it, and every acknowledged operation of every
 * round so far must be there, with its bytes.
 *
 * CLF_TEST_CRASH_ROUNDS (default 6) sets the number of rounds,
 * CLF_TEST_SEED the random seed (printed).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "crash_shadow.h"
#include "instance.h"

#define NIODS 2
#define MAX_FILE (192 * 1024)
#define MAX_EXPECT 8192
/* Concurrent clients: metad commits their changes in groups, and must
 * still acknowledge none before its group is durable. */
#define WORKERS 2

static struct instance inst;

/* What the workload was told is done; checked after every crash. */
struct expect {
	char path[64];
	char kind;		/* 'f' file, 'd' directory, 'u' gone */
	int64_t size;
	int salt;
};

static struct expect expect[MAX_EXPECT];
static int nexpect;

/*
 * The operation under way when the daemons died ("r a b" or "u a", or
 * empty): it may or may not have been applied, and either is right.
 */
static char in_doubt[WORKERS][256];
static int worker;	/* in a workload process: which one */

static uint8_t pattern(int64_t f, int salt)
{
	return (uint8_t)((f * 131 + (f >> 8) * 7 + salt * 29) & 0xff);
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void ack(int out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ack(int out, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%d ", worker);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (write(out, line, n) != n)
		_exit(3);
}

static int write_file(const char *path, int64_t size, int salt, bool sync)
{
	static uint8_t buf[MAX_FILE];
	int fd = CLF_open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);

	if (fd < 0)
		return -1;
	for (int64_t i = 0; i < size; i++)
		buf[i] = pattern(i, salt);
	if (CLF_write(fd, buf, size) != size || (sync && CLF_sync(fd))) {
		CLF_close(fd);
		return -1;
	}
	return CLF_close(fd);
}

/*
 * The workload: runs until an operation fails (the daemons are killed),
 * reporting on out each operation once it is acknowledged.  A file is
 * acknowledged durable after CLF_sync; metadata operations are durable
 * when they return (metad commits before it replies).
 */
static void workload(int round, int out)
{
	char path[64], to[64], last[64] = "";

	if (CLF_init(NULL))
		_exit(0);	/* killed before it began */
	for (int i = 0;; i++) {
		int64_t size = 1 + rnd() % MAX_FILE;
		int salt = (int)(rnd() % 251);

		snprintf(path, sizeof(path), "/r%d-w%d-f%d", round, worker, i);
		if (write_file(path, size, salt, true))
			break;
		ack(out, "f %s %lld %d\n", path, (long long)size, salt);
		/* Bytes never synced: the cut may drop them, nothing else. */
		snprintf(to, sizeof(to), "/r%d-w%d-scratch", round, worker);
		if (write_file(to, 1 + rnd() % MAX_FILE, 0, false))
			break;
		if (i % 3 == 0) {
			snprintf(to, sizeof(to), "/r%d-w%d-d%d", round, worker, i);
			if (CLF_mkdir(to, 0755))
				break;
			ack(out, "d %s\n", to);
			snprintf(to, sizeof(to), "/r%d-w%d-d%d/moved", round, worker, i);
			ack(out, "? r %s %s\n", path, to);
			if (CLF_rename(path, to))
				break;
			ack(out, "r %s %s\n", path, to);
		} else if (i % 4 == 1 && last[0]) {
			ack(out, "? u %s\n", last);
			if (CLF_unlink(last))
				break;
			ack(out, "u %s\n", last);
			last[0] = '\0';
		} else {
			snprintf(last, sizeof(last), "%s", path);
		}
	}
	CLF_finalize();
	_exit(0);
}

static void take_done(char *line);

static struct expect *find(const char *path)
{
	for (int i = 0; i < nexpect; i++)
		if (!strcmp(expect[i].path, path))
			return &expect[i];
	return NULL;
}

static void take_ack(char *line)
{
	int w, n = 0;

	ck_assert_msg(sscanf(line, "%d %n", &w, &n) == 1 && n && w >= 0 &&
		      w < WORKERS, "workload said '%s'", line);
	line += n;
	if (line[0] == '?') {
		snprintf(in_doubt[w], sizeof(in_doubt[w]), "%s", line + 2);
		return;
	}
	in_doubt[w][0] = '\0';
	take_done(line);
}

static void take_done(char *line)
{
	char kind = line[0], a[64], b[64];
	long long size;
	int salt;
	struct expect *e;

	if (kind == 'f' && sscanf(line, "f %63s %lld %d", a, &size, &salt) == 3) {
		ck_assert_int_lt(nexpect, MAX_EXPECT);
		e = &expect[nexpect++];
		snprintf(e->path, sizeof(e->path), "%s", a);
		e->kind = 'f';
		e->size = size;
		e->salt = salt;
	} else if (kind == 'd' && sscanf(line, "d %63s", a) == 1) {
		ck_assert_int_lt(nexpect, MAX_EXPECT);
		e = &expect[nexpect++];
		snprintf(e->path, sizeof(e->path), "%s", a);
		e->kind = 'd';
	} else if (kind == 'r' && sscanf(line, "r %63s %63s", a, b) == 2) {
		e = find(a);
		ck_assert_ptr_nonnull(e);
		ck_assert_int_lt(nexpect, MAX_EXPECT);
		expect[nexpect] = *e;
		e->kind = 'u';
		e = &expect[nexpect++];
		snprintf(e->path, sizeof(e->path), "%s", b);
	} else if (kind == 'u' && sscanf(line, "u %63s", a) == 1) {
		e = find(a);
		ck_assert_ptr_nonnull(e);
		e->kind = 'u';
	} else {
		ck_abort_msg("workload said '%s'", line);
	}
}

/* Count the operation in doubt as done if the namespace says so. */
static void resolve_in_doubt(void)
{
	char a[64], b[64], line[sizeof(in_doubt[0])];
	struct stat st;

	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	for (int w = 0; w < WORKERS; w++) {
		memcpy(line, in_doubt[w], sizeof(line));
		if (sscanf(in_doubt[w], "r %63s %63s", a, b) == 2) {
			if (CLF_stat(b, &st) == 0)
				take_done(line);
		} else if (sscanf(in_doubt[w], "u %63s", a) == 1) {
			if (CLF_stat(a, &st) == -ENOENT)
				take_done(line);
		}
		in_doubt[w][0] = '\0';
	}
	CLF_finalize();
}

static void check_expected(int round)
{
	static uint8_t buf[MAX_FILE + 1];
	struct stat st;

	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	for (int i = 0; i < nexpect; i++) {
		struct expect *e = &expect[i];
		int rc = CLF_stat(e->path, &st), fd;

		if (e->kind == 'u') {
			ck_assert_msg(rc == -ENOENT,
				      "round %d: %s removed and acknowledged, "
				      "back after the cut (%d)", round, e->path, rc);
			continue;
		}
		ck_assert_msg(rc == 0, "round %d: %s acknowledged, lost after "
			      "the cut: %s", round, e->path, CLF_Last_error());
		if (e->kind == 'd') {
			ck_assert_msg(S_ISDIR(st.st_mode), "%s: not a directory",
				      e->path);
			continue;
		}
		ck_assert_msg(st.st_size == e->size,
			      "round %d: %s synced with %lld bytes, has %lld "
			      "after the cut", round, e->path,
			      (long long)e->size, (long long)st.st_size);
		fd = CLF_open(e->path, O_RDONLY);
		ck_assert_msg(fd >= 0, "%s: %s", e->path, CLF_Last_error());
		ck_assert_int_eq(CLF_read(fd, buf, e->size + 1), e->size);
		for (int64_t b = 0; b < e->size; b++)
			if (buf[b] != pattern(b, e->salt))
				ck_abort_msg("round %d: %s byte %lld is %u, synced %u",
					     round, e->path, (long long)b,
					     buf[b], pattern(b, e->salt));
		CLF_close(fd);
	}
	CLF_finalize();
}

static void stop_daemons(int sig)
{
	/* All at once, as a power cut: then reap them one by one. */
	for (int i = 0; i < NIODS; i++)
		if (inst.iods[i] > 0)
			kill(inst.iods[i], sig);
	if (inst.metad > 0)
		kill(inst.metad, sig);
	for (int i = 0; i < NIODS; i++)
		instance_kill(&inst, i, sig);
	instance_kill(&inst, -1, sig);
}

static void start_daemons(void)
{
	ck_assert_msg(instance_start_daemon(&inst, -1) == 0,
		      "metad does not start after the cut (log %s/metad.log)",
		      inst.dir);
	for (int i = 0; i < NIODS; i++)
		ck_assert_msg(instance_start_daemon(&inst, i) == 0,
			      "iod %d does not start after the cut", i);
}

/* A failed check ends the test process: leave no daemon behind. */
static void stop_instance(void)
{
	char cmd[2 * PATH_MAX + 32];

	if (!inst.dir[0])
		return;
	if (!getenv("CLF_TEST_KEEP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s.shadow' '%s.cut'",
			 inst.dir, inst.dir);
		if (system(cmd))
			fprintf(stderr, "crash: %s failed\n", cmd);
	}
	instance_stop(&inst);
}

static void run(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

/* Replace the instance's tree by what the shadow says a cut leaves. */
static void cut_power(const char *shadow)
{
	char image[PATH_MAX + 8], cmd[3 * PATH_MAX + 64];
	int err;

	snprintf(image, sizeof(image), "%s.cut", inst.dir);
	err = crash_shadow_build(shadow, image);
	ck_assert_msg(err == 0, "building the image: %s", strerror(-err));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mv '%s' '%s'", inst.dir,
		 image, inst.dir);
	run(cmd);
}

static void one_round(int round, const char *shim, const char *shadow)
{
	char cmd[2 * PATH_MAX + 64], line[256];
	int pipefd[2], status;
	FILE *in;
	pid_t child[WORKERS];

	/*
	 * Everything before the round is on disk: the daemons' start state.
	 * Round 0 starts from an empty instance (clf.conf alone), so the
	 * daemons' first start must make their stores durable too.
	 */
	stop_daemons(SIGTERM);
	if (round == 0) {
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf meta iod? *.log",
			 inst.dir);
		run(cmd);
	}
	sync();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", shadow);
	run(cmd);
	ck_assert_int_eq(crash_shadow_sync_tree(shadow, inst.dir), 0);

	setenv("CLF_TEST_CRASH_ROOT", inst.dir, 1);
	setenv("CLF_TEST_CRASH_SHADOW", shadow, 1);
	setenv("LD_PRELOAD", shim, 1);
	start_daemons();
	unsetenv("LD_PRELOAD");

	ck_assert_int_eq(pipe(pipefd), 0);
	for (int w = 0; w < WORKERS; w++) {
		child[w] = fork();
		ck_assert_int_ge(child[w], 0);
		if (child[w] == 0) {
			close(pipefd[0]);
			worker = w;
			rnd_state += (uint64_t)w * 0x9e3779b97f4a7c15ull;
			workload(round, pipefd[1]);
		}
	}
	close(pipefd[1]);
	usleep(100000 + rnd() % 900000);
	stop_daemons(SIGKILL);
	in = fdopen(pipefd[0], "r");
	ck_assert_ptr_nonnull(in);
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		take_ack(line);
	}
	fclose(in);
	for (int w = 0; w < WORKERS; w++) {
		waitpid(child[w], &status, 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "workload %d ended with status %d", w, status);
	}

	cut_power(shadow);
	start_daemons();
	resolve_in_doubt();
	check_expected(round);
}

START_TEST(test_acknowledged_operations_survive_a_power_cut)
{
	const char *o = getenv("CLF_BUILD_DIR"), *env = getenv("CLF_TEST_SEED");
	const char *rounds_env = getenv("CLF_TEST_CRASH_ROUNDS");
	char so[PATH_MAX], path[PATH_MAX + 64], shadow[PATH_MAX + 16], asan[256];
	const char *old = getenv("ASAN_OPTIONS");
	int rounds = rounds_env ? atoi(rounds_env) : 6, err;

	rnd_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	if (!rnd_state)
		rnd_state = 1;
	printf("crash: seed %llu (CLF_TEST_SEED), %d rounds\n",
	       (unsigned long long)rnd_state, rounds);
	snprintf(path, sizeof(path), "%s/tests/integration/crash_shim.so",
		 o ? o : "build");
	ck_assert_msg(realpath(path, so), "%s: not built", path);
	/* A sanitized daemon accepts the shim loaded before its runtime. */
	snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0",
		 old ? old : "", old ? ":" : "");
	setenv("ASAN_OPTIONS", asan, 1);

	err = instance_start(&inst, NIODS, 1500, NULL);
	if (err == 77) {
		fprintf(stderr, "SKIP: daemons not built\n");
		exit(77);
	}
	ck_assert_int_eq(err, 0);
	atexit(stop_instance);
	/*
	 * The workload must fail as soon as the daemons are gone, not wait
	 * for them to come back (recovery_grace_s): the cut comes after it
	 * has ended, and only what it was told before counts.
	 */
	ck_assert_int_eq(instance_set_grace(&inst, 0), 0);
	snprintf(shadow, sizeof(shadow), "%s.shadow", inst.dir);
	for (int r = 0; r < rounds; r++) {
		int before = nexpect;

		one_round(r, so, shadow);
		printf("crash: round %d: %d operations acknowledged, all there "
		       "after the cut\n", r, nexpect - before);
	}
	ck_assert_msg(nexpect >= rounds, "the workload hardly ran (%d "
		      "operations in %d rounds)", nexpect, rounds);
	snprintf(path, sizeof(path), "rm -rf '%s'", shadow);
	run(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("crash");
	TCase *tc = tcase_create("power cut");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_acknowledged_operations_survive_a_power_cut);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
