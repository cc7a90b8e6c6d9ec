// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_daemon.c -- the daemon runtime (libclf/runtime/daemon.h) in a
 * process of its own per test (Check's fork mode): the command that
 * started a daemon exits with the daemon's word, the pid file, and the
 * stop signals on their descriptor.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "daemon.h"
#include "log.h"

/*
 * Run a command that detaches a daemon which then calls ready
 * (failure NULL) or clf_daemon_failed(failure).  Returns the command's
 * exit status; its standard error in err.
 */
static int start(const char *failure, char *err, size_t len)
{
	int p[2], status;
	ssize_t n, got = 0;
	pid_t cmd;

	ck_assert_int_eq(pipe(p), 0);
	cmd = fork();
	ck_assert_int_ge(cmd, 0);
	if (cmd == 0) {
		struct clf_daemon d;

		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		unsetenv("NOTIFY_SOCKET");
		clf_daemon_init(&d, "testd");
		if (clf_daemon_detach(&d))
			_exit(3);
		/* The daemon: the command waits for it. */
		if (failure)
			clf_daemon_failed(&d, failure);
		else
			clf_daemon_ready(&d);
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], err + got, len - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(cmd, &status, 0), cmd);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(test_the_command_exits_0_once_its_daemon_is_ready)
{
	char err[256];

	ck_assert_int_eq(start(NULL, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_the_command_prints_its_daemons_failure_and_exits_1)
{
	char err[256];

	ck_assert_int_eq(start("testd: cannot listen on 1.2.3.4:5: nope",
			       err, sizeof(err)), 1);
	ck_assert_str_eq(err, "testd: cannot listen on 1.2.3.4:5: nope\n");
}
END_TEST

START_TEST(test_a_pid_file_holds_the_pid_until_removed)
{
	char dir[] = "/tmp/clf-test-daemon.XXXXXX", path[64];
	struct clf_daemon d;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.pid", dir);
	clf_daemon_init(&d, "testd");
	ck_assert_int_eq(clf_daemon_pid_read(path), 0);
	ck_assert_int_eq(clf_daemon_pid_write(&d, path), 0);
	ck_assert_int_eq(clf_daemon_pid_read(path), getpid());
	clf_daemon_pid_remove(&d);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_sigterm_arrives_on_the_stop_descriptor_and_hup_stops_nothing)
{
	struct pollfd p;
	struct clf_daemon d;

	clf_daemon_init(&d, "testd");
	clf_log_set_level(CLF_LOG_WARN);	/* "log reopened" is info */
	ck_assert_int_eq(clf_daemon_signals(&d), 0);
	p = (struct pollfd){ .fd = d.stop_fd, .events = POLLIN };
	/* HUP reopens the log (here standard error: nothing to do). */
	ck_assert_int_eq(kill(getpid(), SIGHUP), 0);
	ck_assert_int_eq(poll(&p, 1, 200), 0);
	ck_assert_int_eq(kill(getpid(), SIGTERM), 0);
	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	ck_assert_str_eq(clf_daemon_stop_signal_name(&d), "SIGTERM");
	clf_daemon_release(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_create("runtime");

	tcase_add_test(tc, test_the_command_exits_0_once_its_daemon_is_ready);
	tcase_add_test(tc, test_the_command_prints_its_daemons_failure_and_exits_1);
	tcase_add_test(tc, test_a_pid_file_holds_the_pid_until_removed);
	tcase_add_test(tc,
		       test_sigterm_arrives_on_the_stop_descriptor_and_hup_stops_nothing);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
