// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_metads.c -- a namespace spread over several metads
 * ($CLF_TEST_METADS, 3 from test_native_metads.sh): directories land on
 * every metad, renames and links across metads keep names and data, and
 * a metad killed in the middle of a rename across metads leaves exactly
 * one of the two names once it is back.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "clf_ll.h"
#include "clf_proto.h"
#include "instance.h"

#define NDIRS 12

static struct instance inst;

static void start(void)
{
	if (!getenv("CLF_TEST_METADS"))
		setenv("CLF_TEST_METADS", "3", 1);
	ck_assert_int_eq(instance_start_native(&inst, 2, 5000, -1), 0);
	ck_assert_int_ge(inst.nmetads, 2);
}

static void stop(void)
{
	instance_stop_native(&inst);
}

static void put(const char *path, const char *data)
{
	int fd = CLF_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	ck_assert_msg(fd >= 0, "%s: %s", path, CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, data, strlen(data)),
			 (ssize_t)strlen(data));
	ck_assert_int_eq(CLF_close(fd), 0);
}

static void expect_data(const char *path, const char *want)
{
	char buf[256] = { 0 };
	int fd = CLF_open(path, O_RDONLY);

	ck_assert_msg(fd >= 0, "%s: %s", path, CLF_Last_error());
	ck_assert_int_eq(CLF_read(fd, buf, sizeof(buf) - 1),
			 (ssize_t)strlen(want));
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(CLF_close(fd), 0);
}

static bool exists(const char *path)
{
	struct stat st;

	return CLF_stat(path, &st) == 0;
}

/* The metad a path's inode lives on. */
static unsigned metad_of(const char *path)
{
	struct stat st;

	ck_assert_msg(CLF_stat(path, &st) == 0, "%s: %s", path,
		      CLF_Last_error());
	return CLF_PROTO_INO_METAD((uint64_t)st.st_ino);
}

/* /dN for N < NDIRS; *a and *b: two of them on different metads. */
static void make_dirs(int *a, int *b)
{
	char p[32];

	for (int i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "/d%d", i);
		ck_assert_msg(CLF_mkdir(p, 0755) == 0, "%s", CLF_Last_error());
	}
	*a = 0;
	*b = -1;
	for (int i = 1; i < NDIRS && *b < 0; i++) {
		snprintf(p, sizeof(p), "/d%d", i);
		if (metad_of(p) != metad_of("/d0"))
			*b = i;
	}
	ck_assert_msg(*b >= 0, "all %d directories on one metad", NDIRS);
}

/* Names of directory path, through the low-level readdir. */
static int count_entries(const char *path)
{
	struct clf_ll_dirents d;
	struct stat st;
	int n;

	ck_assert_int_eq(CLF_stat(path, &st), 0);
	ck_assert_msg(clf_ll_readdir((uint64_t)st.st_ino, 0, 1000, &d) == 0,
		      "%s", CLF_Last_error());
	n = (int)d.rep.count;
	clf_ll_dirents_release(&d);
	return n;
}

START_TEST(test_directories_spread_over_every_metad)
{
	bool seen[INSTANCE_MAX_METADS] = { false };
	char p[64];
	int a, b, nseen = 0;

	start();
	make_dirs(&a, &b);
	for (int i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "/d%d", i);
		seen[metad_of(p)] = true;
		snprintf(p, sizeof(p), "/d%d/sub", i);
		ck_assert_int_eq(CLF_mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "/d%d/sub/f", i);
		put(p, "spread");
	}
	for (int m = 0; m < inst.nmetads; m++)
		nseen += seen[m];
	ck_assert_msg(nseen >= 2, "directories on %d metad(s)", nseen);
	ck_assert_int_eq(count_entries("/"), NDIRS);
	for (int i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "/d%d/sub/f", i);
		expect_data(p, "spread");
		snprintf(p, sizeof(p), "/d%d", i);
		ck_assert_int_eq(CLF_rmdir(p), -ENOTEMPTY);
		ck_assert_int_eq(count_entries(p), 1);
	}
	snprintf(p, sizeof(p), "/d%d/sub/f", a);
	ck_assert_int_eq(CLF_unlink(p), 0);
	snprintf(p, sizeof(p), "/d%d/sub", a);
	ck_assert_int_eq(CLF_rmdir(p), 0);
	ck_assert(!exists(p));
	stop();
}
END_TEST

/*
 * A path op in a directory of another metad goes there alone once its
 * directory was walked (client_route.c): with metad 0 stopped, files in
 * such a directory still open, come and go.
 */
START_TEST(test_ops_in_a_walked_directory_skip_metad_0)
{
	char p[64], f[80];
	int a, b, d = -1, fd, open_rc, create_rc, unlink_rc, stat_rc;
	struct stat st;

	setenv("CLF_TEST_ROUTE_TTL_MS", "600000", 1);
	start();
	make_dirs(&a, &b);
	for (int i = 0; i < NDIRS && d < 0; i++) {
		snprintf(p, sizeof(p), "/d%d", i);
		if (metad_of(p) != 0)
			d = i;
	}
	ck_assert_msg(d >= 0, "no directory off metad 0");
	for (int i = 0; i < 3; i++) {
		snprintf(f, sizeof(f), "/d%d/f%d", d, i);
		put(f, "x");
	}
	ck_assert_int_eq(kill(inst.metad, SIGSTOP), 0);
	snprintf(f, sizeof(f), "/d%d/f0", d);
	fd = CLF_open(f, O_RDONLY);
	open_rc = fd < 0 ? fd : CLF_close(fd);
	snprintf(f, sizeof(f), "/d%d/f1", d);
	stat_rc = CLF_stat(f, &st);
	snprintf(f, sizeof(f), "/d%d/f2", d);
	unlink_rc = CLF_unlink(f);
	snprintf(f, sizeof(f), "/d%d/new", d);
	fd = CLF_open(f, O_CREAT | O_EXCL | O_WRONLY, 0644);
	create_rc = fd < 0 ? fd : CLF_close(fd);
	ck_assert_int_eq(kill(inst.metad, SIGCONT), 0);
	ck_assert_int_eq(open_rc, 0);
	ck_assert_int_eq(stat_rc, 0);
	ck_assert_int_eq(unlink_rc, 0);
	ck_assert_int_eq(create_rc, 0);
	ck_assert(exists(f));
	snprintf(f, sizeof(f), "/d%d/f2", d);
	ck_assert(!exists(f));
	stop();
}
END_TEST

/*
 * A directory this process renames or removes is never reached by its
 * old path afterwards, however recently it was walked.
 */
START_TEST(test_a_renamed_directory_is_not_reached_by_its_old_path)
{
	char from[64], to[64], f[96];
	int a, b;

	setenv("CLF_TEST_ROUTE_TTL_MS", "600000", 1);
	start();
	make_dirs(&a, &b);
	snprintf(from, sizeof(from), "/d%d/sub", a);
	ck_assert_int_eq(CLF_mkdir(from, 0755), 0);
	snprintf(f, sizeof(f), "%s/f", from);
	put(f, "old");
	snprintf(to, sizeof(to), "/d%d/moved", b);
	ck_assert_int_eq(CLF_rename(from, to), 0);
	ck_assert(!exists(f));
	ck_assert_int_eq(CLF_mkdir(from, 0755), 0);
	put(f, "new");
	expect_data(f, "new");
	snprintf(f, sizeof(f), "%s/f", to);
	expect_data(f, "old");
	ck_assert_int_eq(CLF_unlink(f), 0);
	ck_assert_int_eq(CLF_rmdir(to), 0);
	ck_assert(!exists(f));
	stop();
}
END_TEST

START_TEST(test_files_and_directories_rename_across_metads)
{
	char from[64], to[64], deep[96];
	int a, b;

	start();
	make_dirs(&a, &b);
	/* A file: its data follows the new name. */
	snprintf(from, sizeof(from), "/d%d/f", a);
	snprintf(to, sizeof(to), "/d%d/g", b);
	put(from, "moved file");
	ck_assert_msg(CLF_rename(from, to) == 0, "%s", CLF_Last_error());
	ck_assert(!exists(from));
	expect_data(to, "moved file");
	/* Over an existing file, and back. */
	put(from, "replaced");
	ck_assert_msg(CLF_rename(to, from) == 0, "%s", CLF_Last_error());
	expect_data(from, "moved file");
	ck_assert(!exists(to));
	/* A directory with what it holds, across and into a subtree. */
	snprintf(from, sizeof(from), "/d%d/tree", a);
	ck_assert_int_eq(CLF_mkdir(from, 0755), 0);
	snprintf(deep, sizeof(deep), "%s/leaf", from);
	put(deep, "in the tree");
	snprintf(to, sizeof(to), "/d%d/tree2", b);
	ck_assert_msg(CLF_rename(from, to) == 0, "%s", CLF_Last_error());
	ck_assert(!exists(from));
	snprintf(deep, sizeof(deep), "%s/leaf", to);
	expect_data(deep, "in the tree");
	/* Never into itself, whichever metads the chain crosses. */
	snprintf(deep, sizeof(deep), "%s/inner", to);
	ck_assert_int_eq(CLF_mkdir(deep, 0755), 0);
	snprintf(from, sizeof(from), "/d%d", b);
	snprintf(deep, sizeof(deep), "%s/inner/loop", to);
	ck_assert_int_eq(CLF_rename(from, deep), -EINVAL);
	/* Its parent moved: a rename of the directory back works. */
	snprintf(from, sizeof(from), "/d%d/back", a);
	ck_assert_msg(CLF_rename(to, from) == 0, "%s", CLF_Last_error());
	snprintf(deep, sizeof(deep), "%s/leaf", from);
	expect_data(deep, "in the tree");
	/* A non-empty directory is not replaced. */
	snprintf(to, sizeof(to), "/d%d/full", b);
	ck_assert_int_eq(CLF_mkdir(to, 0755), 0);
	snprintf(deep, sizeof(deep), "%s/x", to);
	put(deep, "x");
	ck_assert_int_eq(CLF_rename(from, to), -ENOTEMPTY);
	ck_assert_int_eq(count_entries(to), 1);
	stop();
}
END_TEST

START_TEST(test_links_across_metads_keep_the_data_to_the_last_name)
{
	char one[64], two[64];
	struct stat st;
	int a, b;

	start();
	make_dirs(&a, &b);
	snprintf(one, sizeof(one), "/d%d/orig", a);
	snprintf(two, sizeof(two), "/d%d/link", b);
	put(one, "linked");
	ck_assert_msg(CLF_link(one, two) == 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_link(one, two), -EEXIST);
	ck_assert_int_eq(CLF_stat(two, &st), 0);
	ck_assert_int_eq(st.st_nlink, 2);
	ck_assert_int_eq(CLF_unlink(one), 0);
	expect_data(two, "linked");
	ck_assert_int_eq(CLF_stat(two, &st), 0);
	ck_assert_int_eq(st.st_nlink, 1);
	ck_assert_int_eq(CLF_unlink(two), 0);
	ck_assert(!exists(two));
	stop();
}
END_TEST

/* Wait until metad m (a pid of the instance) has exited; reap it. */
static bool metad_died(int m, int ms)
{
	pid_t pid = m ? inst.metads[m] : inst.metad;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	for (int i = 0; i < ms / 20; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			if (m)
				inst.metads[m] = 0;
			else
				inst.metad = 0;
			return true;
		}
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * Kill metad victim at step (CLF_TEST_METAD_XRENAME_CRASH) while a
 * child renames from -> to; restart it; exactly one name must be
 * there (within a few seconds: a participant's recovery may wait for
 * the coordinator's) and hold the data.
 */
static void crash_once(int victim, const char *step, const char *from,
		       const char *to)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	bool old = true, new = false;
	pid_t child;

	put(from, step);
	instance_kill_metad(&inst, victim, SIGTERM);
	setenv("CLF_TEST_METAD_XRENAME_CRASH", step, 1);
	ck_assert_int_eq(instance_start_metad(&inst, victim), 0);
	unsetenv("CLF_TEST_METAD_XRENAME_CRASH");
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		CLF_finalize();
		if (CLF_init(inst.conf))
			_exit(2);
		CLF_rename(from, to);
		_exit(0);
	}
	ck_assert_msg(metad_died(victim, 10000), "%s: metad %d lives on",
		      step, victim);
	ck_assert_int_eq(instance_start_metad(&inst, victim), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	for (int i = 0; i < 100; i++) {	/* 5 s */
		old = exists(from);
		new = exists(to);
		if (old != new)
			break;
		nanosleep(&ts, NULL);
	}
	ck_assert_msg(old != new, "%s: old name %s, new name %s", step,
		      old ? "there" : "gone", new ? "there" : "gone");
	expect_data(old ? from : to, step);
	/* And it stays that way: recovery is done, not half done. */
	nanosleep(&(struct timespec){ 0, 700 * 1000 * 1000 }, NULL);
	ck_assert_int_eq(exists(from), old);
	ck_assert_int_eq(exists(to), new);
	CLF_unlink(old ? from : to);
}

START_TEST(test_metad_killed_in_a_rename_across_leaves_one_name)
{
	static const char *const coord[] = { "coord-prepared",
					     "coord-decided" };
	static const char *const part[] = { "part-prepared",
					    "part-committed" };
	char from[64], to[64], da[32], db[32];
	int a, b;

	start();
	make_dirs(&a, &b);
	snprintf(da, sizeof(da), "/d%d", a);
	snprintf(db, sizeof(db), "/d%d", b);
	snprintf(from, sizeof(from), "%s/victim", da);
	snprintf(to, sizeof(to), "%s/moved", db);
	for (size_t i = 0; i < 2; i++)
		crash_once((int)metad_of(da), coord[i], from, to);
	for (size_t i = 0; i < 2; i++)
		crash_once((int)metad_of(db), part[i], from, to);
	stop();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("native_metads");
	TCase *tc = tcase_create("against several real metads");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_directories_spread_over_every_metad);
	tcase_add_test(tc, test_ops_in_a_walked_directory_skip_metad_0);
	tcase_add_test(tc, test_a_renamed_directory_is_not_reached_by_its_old_path);
	tcase_add_test(tc, test_files_and_directories_rename_across_metads);
	tcase_add_test(tc, test_links_across_metads_keep_the_data_to_the_last_name);
	tcase_add_test(tc, test_metad_killed_in_a_rename_across_leaves_one_name);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
