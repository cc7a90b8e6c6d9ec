// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_daemon.c -- the iod as a program: daemonizing only once it
 * listens, the pid file and the lock of its directory, clear start-up
 * errors, authentication, the connection bound, and clean exits on
 * SIGTERM with clients connected or waiting in a collective.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define TIMEOUT_MS 2000

static long read_pid_file(const struct iodh *h)
{
	char path[600];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/iod.pid", h->dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

static bool pid_file_exists(const struct iodh *h)
{
	char path[600];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/iod.pid", h->dir);
	return stat(path, &sb) == 0;
}

/* Wait for a child (or an orphan we reap as subreaper) within ms. */
static int reap(pid_t pid, int ms, int *status)
{
	int64_t end = clf_now_ms() + ms;

	do {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		usleep(10 * 1000);
	} while (clf_now_ms() < end);
	return 0;
}

START_TEST(test_daemon_is_ready_when_parent_exits_and_stops_on_sigterm)
{
	struct iodh h;
	struct clf_conn *c;
	char err[2048];
	const char *args[] = { "-c", NULL, "-n", "0", NULL };
	const char *fargs[] = { "-c", NULL, "-n", "0", "-f", NULL };
	int status;
	long pid;

	/* The daemon is an orphan once its parent exits: make it ours, so
	 * that we can reap it and see its exit status. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	iodh_init(&h, TIMEOUT_MS);
	iodh_write_config(&h);
	args[1] = fargs[1] = h.conf;

	ck_assert_msg(iodh_run(args, err, sizeof(err)) == 0, "iod: %s", err);
	pid = read_pid_file(&h);
	ck_assert_int_gt(pid, 0);
	iodh_track_pid((pid_t)pid);
	/* Listening as soon as the parent said so: no retry. */
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_ping(c), 0);

	/* A second iod on the same directory is refused, clearly. */
	ck_assert_int_eq(iodh_run(args, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "in use by another iod"), "%s", err);
	ck_assert_int_eq(iodh_run(fargs, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "in use by another iod"), "%s", err);
	ck_assert_int_eq(cl_ping(c), 0);

	ck_assert_int_eq(kill((pid_t)pid, SIGTERM), 0);
	ck_assert_msg(reap((pid_t)pid, IODH_WAIT_MS, &status),
		      "the daemon did not stop");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "status 0x%x", status);
	ck_assert(!pid_file_exists(&h));
	/* Without -f the log is the default one, in the directory. */
	snprintf(h.log, sizeof(h.log), "%.480s/iod.log", h.dir);
	ck_assert(iodh_log_has(&h, "listening on"));
	ck_assert(iodh_log_has(&h, "stopped"));
	clf_conn_close(c);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_start_failures_are_reported_clearly)
{
	struct iodh h;
	char err[2048];
	const char *bad_index[] = { "-c", NULL, "-n", "4", "-f", NULL };
	const char *no_index[] = { "-c", NULL, "-f", NULL };
	const char *daemon[] = { "-c", NULL, "-n", "0", NULL };
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd, one = 1;
	FILE *f;

	iodh_init(&h, TIMEOUT_MS);
	iodh_write_config(&h);
	bad_index[1] = no_index[1] = daemon[1] = h.conf;
	ck_assert_int_eq(iodh_run(bad_index, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "has 1 iods"), "%s", err);
	ck_assert_int_eq(iodh_run(no_index, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "-n INDEX"), "%s", err);

	/* Someone else listens on the iod's port: the parent of a daemon
	 * says so and fails, instead of detaching a daemon that is dead. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)atoi(strchr(h.addr, ':') + 1));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(iodh_run(daemon, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "iod 0: cannot listen on 127.0.0.1:"), "%s",
		      err);
	close(fd);
	ck_assert(!pid_file_exists(&h));

	/* No secret: refused. */
	f = fopen(h.conf, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[metad]\naddress = 127.0.0.1:1\n[iod]\naddress = %s\ndir = %s\n",
		h.addr, h.dir);
	fclose(f);
	ck_assert_int_eq(iodh_run(daemon, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "no secret"), "%s", err);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_auth_with_right_and_wrong_secret)
{
	struct iodh h;
	struct clf_conn *c = NULL;
	struct clf_secret wrong;
	int err;

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	ck_assert_int_eq(clf_secret_generate(&wrong), 0);
	err = iodh_connect_with(&h, &wrong, &c);
	ck_assert_int_eq(err, -EACCES);
	ck_assert_msg(strstr(CLF_Last_error(), "wrong secret"), "%s",
		      CLF_Last_error());
	err = iodh_connect_with(&h, &h.secret, &c);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(cl_ping(c), 0);
	clf_conn_close(c);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "refused"));
	ck_assert(iodh_log_has(&h, "wrong secret"));
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_connections_are_bounded)
{
	struct iodh h;
	struct clf_conn *a, *b, *c = NULL;
	int64_t end;
	int err;

	iodh_init(&h, TIMEOUT_MS);
	h.extra_arg = "-m2";
	iodh_start(&h);
	a = iodh_connect(&h);
	b = iodh_connect(&h);
	/*
	 * b was told it is in only once it held its slot, so a third is
	 * refused -- it never takes b's slot (which happened when b's slot
	 * was counted after b had been told it was in).
	 */
	err = iodh_connect_with(&h, &h.secret, &c);
	ck_assert_msg(err < 0, "a third connection was served");
	ck_assert_int_eq(cl_ping(a), 0);
	clf_conn_close(a);
	/* The slot frees once the iod noticed the close. */
	end = clf_now_ms() + IODH_WAIT_MS;
	do {
		err = iodh_connect_with(&h, &h.secret, &c);
		if (err)
			usleep(20 * 1000);
	} while (err && clf_now_ms() < end);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(cl_ping(c), 0);
	ck_assert_int_eq(cl_ping(b), 0);
	clf_conn_close(b);
	clf_conn_close(c);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "2 connections already"));
	iodh_cleanup(&h);
}
END_TEST

/* A TCP connection to h's iod that never says a word; -1 on failure. */
static int idle_socket(const struct iodh *h)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const char *colon = strrchr(h->addr, ':');
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Sockets that never authenticate take no client's slot: with 300 of
 * them held open (more than the iod's 256 connections), 17 clients that
 * hold the secret all connect at once, and the refusals fill a few log
 * lines, not one each.  Before, 15 of 17 were refused.
 */
START_TEST(test_idle_unauthenticated_sockets_do_not_lock_out_clients)
{
	enum { IDLE = 300, CLIENTS = 17 };
	struct clf_conn *c[CLIENTS] = { NULL };
	int idle[IDLE], lines = 0, ch;
	struct iodh h;
	FILE *log;

	/* Long enough that no idle socket times out during the test. */
	iodh_init(&h, 20000);
	iodh_start(&h);
	for (int i = 0; i < IDLE; i++) {
		idle[i] = idle_socket(&h);
		ck_assert_int_ge(idle[i], 0);
	}
	usleep(300 * 1000);	/* the iod has accepted them all */
	for (int i = 0; i < CLIENTS; i++) {
		ck_assert_msg(iodh_connect_with(&h, &h.secret, &c[i]) == 0,
			      "client %d: %s", i, CLF_Last_error());
		ck_assert_int_eq(cl_ping(c[i]), 0);
	}
	for (int i = 0; i < CLIENTS; i++)
		ck_assert_int_eq(cl_ping(c[i]), 0);
	for (int i = 0; i < CLIENTS; i++)
		clf_conn_close(c[i]);
	for (int i = 0; i < IDLE; i++)
		close(idle[i]);
	iodh_stop(&h);
	log = fopen(h.log, "r");
	ck_assert_ptr_nonnull(log);
	while ((ch = fgetc(log)) != EOF)
		lines += ch == '\n';
	fclose(log);
	/* Start, 17 connects and closes, stop, a few rate-limited lines. */
	ck_assert_msg(lines < 60, "%d log lines", lines);
	iodh_cleanup(&h);
}
END_TEST

/*
 * Wait until the iod received `want` requests from other connections
 * (STATUS counts every request, our own included), and a little more
 * for the last one to be under way.
 */
static void wait_requests(struct clf_conn *c, uint64_t want)
{
	struct clf_proto_status st;
	int64_t end = clf_now_ms() + IODH_WAIT_MS;
	uint64_t ours = 0;

	do {
		ck_assert_int_eq(cl_status(c, &st), 0);
		ours++;
		if (st.requests - ours >= want) {
			usleep(200 * 1000);
			return;
		}
		usleep(10 * 1000);
	} while (clf_now_ms() < end);
	ck_abort_msg("the iod received %llu requests, expected %llu",
		     (unsigned long long)(st.requests - ours),
		     (unsigned long long)want);
}

struct waiter {
	const struct iodh *h;
	int64_t got;
	char msg[256];
};

/* One participant of a collective of two that never completes. */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct clf_conn *c = NULL;
	uint32_t handle;
	uint8_t data[8] = { 0 };

	w->got = iodh_connect_with(w->h, &w->h->secret, &c);
	if (!w->got)
		w->got = cl_view_register(c, 1, 0, CLF_BYTE, 0, CLF_BYTE, 0,
					  &handle);
	if (!w->got)
		w->got = cl_view_write(c, handle, 0, 8, data, 8, 3, 2);
	snprintf(w->msg, sizeof(w->msg), "%s", CLF_Last_error());
	clf_conn_close(c);
	return NULL;
}

START_TEST(test_sigterm_ends_idle_and_waiting_connections)
{
	struct iodh h;
	struct clf_conn *a, *b;
	struct waiter w;
	pthread_t tid;
	int64_t t0;

	/* A timeout far longer than the exit may take. */
	iodh_init(&h, 20000);
	iodh_start(&h);
	a = iodh_connect(&h);
	b = iodh_connect(&h);
	w = (struct waiter){ .h = &h };
	ck_assert_int_eq(pthread_create(&tid, NULL, waiter_main, &w), 0);
	wait_requests(a, 2);
	t0 = clf_now_ms();
	iodh_stop(&h);
	ck_assert_int_lt(clf_now_ms() - t0, 3000);
	pthread_join(tid, NULL);
	ck_assert_msg(w.got == -ESHUTDOWN, "%lld %s", (long long)w.got,
		      w.msg);
	ck_assert_int_lt(cl_ping(a), 0);
	clf_conn_close(a);
	clf_conn_close(b);
	iodh_cleanup(&h);
}
END_TEST

/* Voluntary context switches of every thread of pid so far. */
static long wakeups_of(pid_t pid)
{
	char path[320], line[128];
	long sum = 0, v;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status",
			 (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* a worker that ended */
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
				sum += v;
		fclose(f);
	}
	closedir(d);
	return sum;
}

/*
 * A client that takes longer than the workers' linger (1 ms) between its
 * requests -- a process waiting for the others in a collective on a
 * loaded machine -- costs one wake-up per request at the iod: the
 * worker epoll wakes for it.  A worker used to linger on such a
 * connection after every reply anyway and wake once more at the end of
 * it, for nothing: two per request.
 */
#define SLOW_REQUESTS 100
#define SLOW_GAP_US 3000

START_TEST(test_a_slow_client_costs_one_wakeup_per_request)
{
	struct clf_conn *c;
	struct iodh h;
	long before, after;

	iodh_init(&h, 5000);
	iodh_start(&h);
	c = iodh_connect(&h);
	for (int i = 0; i < 3; i++)	/* workers started, connection set */
		ck_assert_int_eq(cl_ping(c), 0);
	usleep(SLOW_GAP_US);
	before = wakeups_of(h.pid);
	for (int i = 0; i < SLOW_REQUESTS; i++) {
		ck_assert_int_eq(cl_ping(c), 0);
		usleep(SLOW_GAP_US);
	}
	after = wakeups_of(h.pid);
	ck_assert_msg(after - before <= SLOW_REQUESTS * 3 / 2,
		      "%d requests %d us apart woke the iod's threads %ld times (want at most 1.5 per request)",
		      SLOW_REQUESTS, SLOW_GAP_US, after - before);
	clf_conn_close(c);
	iodh_cleanup(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_daemon");
	TCase *tc = tcase_create("daemon");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_daemon_is_ready_when_parent_exits_and_stops_on_sigterm);
	tcase_add_test(tc, test_start_failures_are_reported_clearly);
	tcase_add_test(tc, test_auth_with_right_and_wrong_secret);
	tcase_add_test(tc, test_connections_are_bounded);
	tcase_add_test(tc, test_idle_unauthenticated_sockets_do_not_lock_out_clients);
	tcase_add_test(tc, test_sigterm_ends_idle_and_waiting_connections);
	tcase_add_test(tc, test_a_slow_client_costs_one_wakeup_per_request);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
