// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon_server.c -- the daemons' accept loop: a listener, a thread per
 * connection, and a clean stop (daemon.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "error.h"
#include "log.h"

/* Slices of the waits that end only when something happens, so that no
 * wait is unbounded. */
#define WAIT_SLICE_MS 60000
/* While stopping, how often to say that connections are still busy. */
#define STOP_LOG_MS 5000
/* After a failed accept (out of descriptors, say): do not spin on it. */
#define ACCEPT_BACKOFF_US (100 * 1000)

/* What a connection thread starts with; freed by it. */
struct conn_start {
	struct clf_daemon_server *srv;	/* borrowed */
	struct clf_conn *c;		/* handed to ops->serve */
	uint64_t ticket;
};

int clf_daemon_server_open(struct clf_daemon_server *srv, const char *name,
			   const struct clf_transport_ops *t, const char *addr,
			   unsigned max_conns, size_t stack_size,
			   int conn_timeout_ms,
			   const struct clf_daemon_server_ops *ops, void *arg)
{
	int err;

	memset(srv, 0, sizeof(*srv));
	srv->name = name;
	srv->ops = ops;
	srv->arg = arg;
	srv->max_conns = max_conns;
	srv->conn_timeout_ms = conn_timeout_ms;
	atomic_init(&srv->stopping, false);
	srv->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (srv->wake_fd < 0)
		return clf_fail(errno, "%s: eventfd: %s", name, strerror(errno));
	/* The transport's message names the address and the reason. */
	err = clf_listener_open(t, addr, &srv->listener);
	if (err)
		goto close_wake;
	clf_admission_init(&srv->admit, max_conns);
	pthread_attr_init(&srv->attr);
	pthread_attr_setdetachstate(&srv->attr, PTHREAD_CREATE_DETACHED);
	if (stack_size)
		pthread_attr_setstacksize(&srv->attr, stack_size);
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->gone, NULL);
	return 0;

close_wake:
	close(srv->wake_fd);
	srv->wake_fd = -1;
	return err;
}

void clf_daemon_server_close(struct clf_daemon_server *srv)
{
	if (!srv || !srv->ops)
		return;
	clf_listener_close(srv->listener);
	srv->listener = NULL;
	clf_admission_release(&srv->admit);
	pthread_cond_destroy(&srv->gone);
	pthread_mutex_destroy(&srv->lock);
	pthread_attr_destroy(&srv->attr);
	close(srv->wake_fd);
	srv->ops = NULL;
}

void clf_daemon_server_log_refusal(struct clf_daemon_server *srv,
				   const char *peer, const char *why)
{
	unsigned skipped;

	if (!clf_admission_log_refusal(&srv->admit, &skipped))
		return;
	if (skipped)
		clf_log(CLF_LOG_WARN, "refused the connection from %s: %s (and %u more refusals not logged)",
			peer, why, skipped);
	else
		clf_log(CLF_LOG_WARN, "refused the connection from %s: %s",
			peer, why);
}

static void *conn_thread(void *arg)
{
	struct conn_start cs = *(struct conn_start *)arg;
	struct clf_daemon_server *srv = cs.srv;

	free(arg);
	srv->ops->serve(srv->arg, cs.c, cs.ticket);
	pthread_mutex_lock(&srv->lock);
	srv->nconns--;
	pthread_cond_broadcast(&srv->gone);
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* A thread for c, which is taken over in every case. */
static void start_conn(struct clf_daemon_server *srv, struct clf_conn *c)
{
	struct conn_start *cs;
	uint64_t ticket = 0;
	char why[128];
	pthread_t tid;
	int err;

	/* Unauthenticated peers never take a client's slot (admission.h). */
	if (clf_admit_handshake(&srv->admit, clf_conn_peer(c), clf_conn_fd(c),
				&ticket, why, sizeof(why))) {
		clf_daemon_server_log_refusal(srv, clf_conn_peer(c), why);
		if (srv->ops->refuse)
			srv->ops->refuse(srv->arg, c, why);
		clf_conn_close(c);
		return;
	}
	pthread_mutex_lock(&srv->lock);
	srv->nconns++;
	pthread_mutex_unlock(&srv->lock);
	cs = malloc(sizeof(*cs));
	if (!cs) {
		err = ENOMEM;
		goto undo;
	}
	*cs = (struct conn_start){ srv, c, ticket };
	err = pthread_create(&tid, &srv->attr, conn_thread, cs);
	if (!err)
		return;
	free(cs);
undo:
	clf_log(CLF_LOG_ERROR, "refused the connection from %s: cannot start a thread: %s",
		clf_conn_peer(c), strerror(err));
	clf_admit_handshake_done(&srv->admit, ticket, false, why, sizeof(why));
	clf_conn_close(c);
	pthread_mutex_lock(&srv->lock);
	srv->nconns--;
	pthread_mutex_unlock(&srv->lock);
}

/* Stop accepting and tell every connection. */
static void stop(struct clf_daemon_server *srv)
{
	uint64_t one = 1;

	clf_listener_close(srv->listener);
	srv->listener = NULL;
	atomic_store(&srv->stopping, true);
	if (write(srv->wake_fd, &one, sizeof(one)) != sizeof(one))
		clf_log(CLF_LOG_ERROR, "cannot wake the connection threads: %s",
			strerror(errno));
	if (srv->ops->stop)
		srv->ops->stop(srv->arg);
}

int clf_daemon_server_run(struct clf_daemon_server *srv, int stop_fd)
{
	struct pollfd fds[2] = {
		{ .fd = clf_listener_fd(srv->listener), .events = POLLIN },
		{ .fd = stop_fd, .events = POLLIN },
	};
	int ret = 0;

	for (;;) {
		struct clf_conn *c;
		int n, err;

		n = poll(fds, 2, WAIT_SLICE_MS);
		if (n < 0 && errno != EINTR) {
			ret = clf_fail(errno, "%s: poll: %s", srv->name,
				       strerror(errno));
			clf_log(CLF_LOG_ERROR, "%s", CLF_Last_error());
			break;
		}
		if (n <= 0)
			continue;
		if (fds[1].revents)
			break;
		if (!fds[0].revents)
			continue;
		err = clf_listener_accept(srv->listener, 0,
					  srv->conn_timeout_ms, &c);
		if (err == -ETIMEDOUT || err == -EINTR || err == -EAGAIN)
			continue;	/* the peer gave up in between */
		if (err) {
			clf_log(CLF_LOG_ERROR, "cannot accept: %s",
				CLF_Last_error());
			usleep(ACCEPT_BACKOFF_US);
			continue;
		}
		start_conn(srv, c);
	}
	stop(srv);
	return ret;
}

int clf_daemon_server_drain(struct clf_daemon_server *srv, int wait_ms)
{
	int64_t deadline = clf_now_ms() + wait_ms;
	int64_t next_log = clf_now_ms() + STOP_LOG_MS;
	unsigned left;

	pthread_mutex_lock(&srv->lock);
	while (srv->nconns > 0 && (wait_ms < 0 || clf_now_ms() < deadline)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&srv->gone, &srv->lock, &ts);
		if (wait_ms < 0 && srv->nconns > 0 &&
		    clf_now_ms() >= next_log) {
			clf_log(CLF_LOG_INFO, "stopping: waiting for %u connections to finish their request",
				srv->nconns);
			next_log = clf_now_ms() + STOP_LOG_MS;
		}
	}
	left = srv->nconns;
	pthread_mutex_unlock(&srv->lock);
	if (!left)
		return 0;
	clf_log(CLF_LOG_WARN, "%u connections still busy at exit", left);
	return -EBUSY;
}
