// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_tools.c -- the pieces of the clf command line that do not need a
 * daemon: table formatting, which hosts are local, pid files and process
 * checks, finding the daemon programs, and stopping processes (with a
 * stand-in "iod": a shell run through a symlink of that name).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "daemon_ctl.h"
#include "tool.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/clf-test-tools-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	unsetenv("CLF_BIN_DIR");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
}

/* The size as tool_fmt_size writes it. */
static const char *size(uint64_t v, bool exact)
{
	static char buf[32];

	tool_fmt_size(v, exact, buf, sizeof(buf));
	return buf;
}

START_TEST(test_sizes_read_like_df_h)
{
	ck_assert_str_eq(size(0, false), "0");
	ck_assert_str_eq(size(512, false), "512B");
	ck_assert_str_eq(size(1024, false), "1.0K");
	ck_assert_str_eq(size(1536, false), "1.5K");
	ck_assert_str_eq(size(10 * 1024, false), "10K");
	ck_assert_str_eq(size(1023 * 1024 + 1000, false), "1.0M");
	ck_assert_str_eq(size(5ull << 30, false), "5.0G");
	ck_assert_str_eq(size(252ull << 30, false), "252G");
	ck_assert_str_eq(size(UINT64_MAX, false), "16E");
	ck_assert_str_eq(size(270553174016ull, true), "270553174016");
	ck_assert_str_eq(size(0, true), "0");
}
END_TEST

static const char *duration(uint64_t ms)
{
	static char buf[32];

	tool_fmt_duration(ms, buf, sizeof(buf));
	return buf;
}

START_TEST(test_durations_keep_two_units)
{
	ck_assert_str_eq(duration(0), "0s");
	ck_assert_str_eq(duration(59999), "59s");
	ck_assert_str_eq(duration(60000), "1m00s");
	ck_assert_str_eq(duration(3599000), "59m59s");
	ck_assert_str_eq(duration(3600000), "1h00m");
	ck_assert_str_eq(duration(2 * 86400000ull + 5 * 3600000ull + 1),
			 "2d05h");
}
END_TEST

START_TEST(test_reasons_are_short_and_lowercase)
{
	char buf[128];

	tool_fmt_reason(-ECONNREFUSED, buf, sizeof(buf));
	ck_assert_str_eq(buf, "connection refused");
	tool_fmt_reason(-EACCES, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "secret"));
	tool_fmt_reason(-ENOENT, buf, sizeof(buf));
	ck_assert_str_eq(buf, "no such file or directory");
}
END_TEST

START_TEST(test_percent_used_rounds_up_like_df)
{
	ck_assert_uint_eq(tool_percent_used(0, 0), 0);
	ck_assert_uint_eq(tool_percent_used(0, 10), 0);
	ck_assert_uint_eq(tool_percent_used(1, 199), 1);
	ck_assert_uint_eq(tool_percent_used(50, 50), 50);
	ck_assert_uint_eq(tool_percent_used(10, 0), 100);
	ck_assert_uint_eq(tool_percent_used(UINT64_MAX, UINT64_MAX), 50);
}
END_TEST

START_TEST(test_loopback_names_and_addresses_are_local)
{
	ck_assert_int_eq(daemon_host_is_local("127.0.0.1"), 1);
	ck_assert_int_eq(daemon_host_is_local("127.3.2.1"), 1);
	ck_assert_int_eq(daemon_host_is_local("localhost"), 1);
	ck_assert_int_eq(daemon_host_is_local("LOCALHOST"), 1);
	ck_assert_int_eq(daemon_host_is_local("::1"), 1);
	ck_assert_int_eq(daemon_host_is_local("::ffff:127.0.0.1"), 1);
	/* TEST-NET-1 and the IPv6 documentation prefix: never assigned. */
	ck_assert_int_eq(daemon_host_is_local("192.0.2.1"), 0);
	ck_assert_int_eq(daemon_host_is_local("2001:db8::1"), 0);
}
END_TEST

/*
 * A process whose name is "iod": sh run through a symlink called iod, so
 * that the kernel names it so.  script runs in it.
 */
static pid_t spawn_fake_iod(const char *script)
{
	char link[PATH_MAX];
	pid_t pid;

	snprintf(link, sizeof(link), "%s/iod", dir);
	if (access(link, F_OK))
		ck_assert_int_eq(symlink("/bin/sh", link), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(link, "iod", "-c", script, (char *)NULL);
		_exit(127);
	}
	/* Until the exec, the child is still called like us. */
	for (int i = 0; i < 500 && !daemon_proc_alive(pid, "iod"); i++)
		usleep(2000);
	ck_assert(daemon_proc_alive(pid, "iod"));
	return pid;
}

static struct tool_daemon fake_daemon(void)
{
	struct tool_daemon d = { .role = DAEMON_IOD, .local = 1 };

	snprintf(d.pidfile, sizeof(d.pidfile), "%s/iod.pid", dir);
	return d;
}

START_TEST(test_proc_alive_knows_the_program_and_zombies)
{
	pid_t pid = spawn_fake_iod("while :; do sleep 1; done");

	ck_assert(daemon_proc_alive(pid, "iod"));
	ck_assert(!daemon_proc_alive(pid, "metad"));
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	/* Not reaped yet: a zombie, which the daemons of a container
	 * whose init does not reap stay forever. */
	for (int i = 0; i < 500 && daemon_proc_alive(pid, "iod"); i++)
		usleep(2000);
	ck_assert(!daemon_proc_alive(pid, "iod"));
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert(!daemon_proc_alive(pid, "iod"));
	ck_assert(!daemon_proc_alive(0, "iod"));
	ck_assert(!daemon_proc_alive(-1, "iod"));
}
END_TEST

START_TEST(test_pid_file_states)
{
	struct tool_daemon d = fake_daemon();
	char text[32];
	pid_t pid, got;

	ck_assert_int_eq(daemon_pid_check(&d, &got), DAEMON_PID_NONE);
	ck_assert_int_eq(got, 0);
	write_file(d.pidfile, "garbage\n", 0644);
	ck_assert_int_eq(daemon_pid_check(&d, &got), DAEMON_PID_STALE);
	ck_assert_int_eq(got, 0);
	write_file(d.pidfile, "", 0644);	/* being written */
	ck_assert_int_eq(daemon_pid_check(&d, &got), DAEMON_PID_STALE);
	/* Another program's pid is not ours to signal. */
	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	write_file(d.pidfile, text, 0644);
	ck_assert_int_eq(daemon_pid_check(&d, &got), DAEMON_PID_STALE);
	ck_assert_int_eq(got, getpid());

	pid = spawn_fake_iod("while :; do sleep 1; done");
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	write_file(d.pidfile, text, 0644);
	ck_assert_int_eq(daemon_pid_check(&d, &got), DAEMON_PID_ALIVE);
	ck_assert_int_eq(got, pid);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	ck_assert_int_eq(daemon_pid_check(&d, &got), DAEMON_PID_STALE);
	ck_assert_int_eq(got, pid);
}
END_TEST

START_TEST(test_stop_terms_then_kills_the_stubborn)
{
	struct daemon_stop s[3] = {
		{ .pid = spawn_fake_iod("while :; do sleep 1; done"), .prog = "iod" },
		/* Ignores SIGTERM: must be killed, with SIGKILL. */
		{ .pid = spawn_fake_iod("trap '' TERM; while :; do sleep 1; done"),
		  .prog = "iod" },
		{ .pid = 0, .prog = "iod" },	/* nothing to stop */
	};

	/* Let the shell set its trap before the signal comes. */
	usleep(200000);
	daemons_stop(s, 3, 500, 2000);
	ck_assert_int_eq(s[0].result, 0);
	ck_assert_int_eq(s[1].result, 1);
	ck_assert_int_eq(s[2].result, 0);
	ck_assert(!daemon_proc_alive(s[0].pid, "iod"));
	ck_assert(!daemon_proc_alive(s[1].pid, "iod"));
	ck_assert_int_eq(waitpid(s[0].pid, NULL, 0), s[0].pid);
	ck_assert_int_eq(waitpid(s[1].pid, NULL, 0), s[1].pid);
}
END_TEST

START_TEST(test_programs_are_found_in_clf_bin_dir_both_layouts)
{
	char path[PATH_MAX], want[PATH_MAX], sub[PATH_MAX];

	setenv("CLF_BIN_DIR", dir, 1);
	/* An install: DIR/metad. */
	snprintf(want, sizeof(want), "%s/metad", dir);
	write_file(want, "#!/bin/sh\n", 0755);
	ck_assert_int_eq(daemon_find_program("metad", path, sizeof(path)), 0);
	ck_assert_str_eq(path, want);
	/* A build tree: DIR/iod/iod. */
	snprintf(sub, sizeof(sub), "%s/iod", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(want, sizeof(want), "%s/iod/iod", dir);
	write_file(want, "#!/bin/sh\n", 0755);
	ck_assert_int_eq(daemon_find_program("iod", path, sizeof(path)), 0);
	ck_assert_str_eq(path, want);
	/* Not executable: not a program. */
	chmod(want, 0644);
	ck_assert_int_eq(daemon_find_program("iod", path, sizeof(path)),
			 -ENOENT);
}
END_TEST

START_TEST(test_mkdirs_makes_every_level)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	ck_assert_int_eq(daemon_mkdirs(path, 0700), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	/* Existing already is fine. */
	ck_assert_int_eq(daemon_mkdirs(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/file", dir);
	write_file(path, "x", 0644);
	snprintf(path, sizeof(path), "%s/file/sub", dir);
	ck_assert_int_eq(daemon_mkdirs(path, 0700), -ENOTDIR);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tools");
	TCase *tc = tcase_create("tools");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_sizes_read_like_df_h);
	tcase_add_test(tc, test_durations_keep_two_units);
	tcase_add_test(tc, test_reasons_are_short_and_lowercase);
	tcase_add_test(tc, test_percent_used_rounds_up_like_df);
	tcase_add_test(tc, test_loopback_names_and_addresses_are_local);
	tcase_add_test(tc, test_proc_alive_knows_the_program_and_zombies);
	tcase_add_test(tc, test_pid_file_states);
	tcase_add_test(tc, test_stop_terms_then_kills_the_stubborn);
	tcase_add_test(tc, test_programs_are_found_in_clf_bin_dir_both_layouts);
	tcase_add_test(tc, test_mkdirs_makes_every_level);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
