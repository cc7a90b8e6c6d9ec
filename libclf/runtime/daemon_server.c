// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon_server.c -- the daemons' server: a listener and the connections
 * in one epoll set, a bounded pool of workers that wait on it and serve
 * what becomes ready, a sweep of idle connections, and a clean stop
 * (daemon.h says why it is built so).
 *
 * Who holds what:
 *   - a connection's record is in srv->conns (srv->lock) from its accept
 *     to its close; it is in the epoll set, armed for one event, only
 *     while no worker serves it;
 *   - a worker that got its event holds its mutex while serving; the
 *     sweep only try-locks it, so it never idles a connection in use;
 *   - a record is freed by the worker that served it last (serve said
 *     close, or the server stops), or by drain once no worker is left:
 *     never while it is armed, so no event can name a freed record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "error.h"
#include "log.h"
#include "proto.h"

/* Slices of the waits that end only when something happens, so that no
 * wait is unbounded. */
#define WAIT_SLICE_MS 60000
/* How often the idle connections are looked at. */
#define SWEEP_MS 1000
/* A worker beyond the pool's size ends after this long without work. */
#define SURPLUS_IDLE_MS 1000
/* While stopping, how often to say that requests are still busy. */
#define STOP_LOG_MS 5000
/* After a failed accept (out of descriptors, say): do not spin on it. */
#define ACCEPT_BACKOFF_US (100 * 1000)
/* Connections taken per listener event, so that others get a turn. */
#define ACCEPT_BATCH 64
/* Requests served in a row on one connection (serve_ready). */
#define SERVE_BATCH 64
/* How long a worker waits for a connection's next request while others
 * are idle, ms. */
#define LINGER_MS 1

struct clf_daemon_conn {
	void *state;			/* the daemon's (ops->open) */
	struct clf_conn *c;		/* borrowed from it, until close */
	int fd;				/* what epoll watches */
	pthread_mutex_t mu;		/* held while served or idled */
	int64_t since_ms;		/* accepted, or its last request
					   ended; mu */
	bool served;			/* serve was called; mu */
	bool idled;			/* idle was called since; mu */
	bool cut;			/* shut down, never served; mu */
	bool lowat;			/* SO_RCVLOWAT raised to a header */
	bool quick;			/* its last request came within
					   LINGER_MS of the reply before; mu */
	int64_t reply_ns;		/* its last request ended; mu */
	int64_t partial_ms;		/* when part of a header came; mu */
	struct clf_daemon_conn *prev, *next;	/* srv->conns; srv->lock */
};

/* What the epoll set holds besides connections. */
static char listener_tag, wake_tag;

/* The server of the worker running on this thread; NULL elsewhere. */
static __thread struct clf_daemon_server *worker_of;

static void *worker_main(void *arg);

unsigned clf_daemon_workers(long n)
{
	long cores;

	if (n > 0)
		return n > CLF_DAEMON_WORKERS_MAX ? CLF_DAEMON_WORKERS_MAX
						  : (unsigned)n;
	cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		cores = 1;
	n = cores * CLF_DAEMON_WORKERS_PER_CORE;
	return n > CLF_DAEMON_WORKERS_MAX ? CLF_DAEMON_WORKERS_MAX
					  : (unsigned)n;
}

/* A connection is a descriptor: allow as many as the hard limit does. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		clf_log(CLF_LOG_WARN, "cannot raise the open files limit to %llu: %s",
			(unsigned long long)rl.rlim_max, strerror(errno));
}

int clf_daemon_server_open(struct clf_daemon_server *srv, const char *name,
			   const struct clf_transport_ops *t, const char *addr,
			   unsigned max_conns, unsigned workers,
			   size_t stack_size, int conn_timeout_ms,
			   const struct clf_daemon_server_ops *ops, void *arg)
{
	int err;

	memset(srv, 0, sizeof(*srv));
	srv->name = name;
	srv->ops = ops;
	srv->arg = arg;
	srv->max_conns = max_conns;
	srv->workers = workers ? workers : clf_daemon_workers(0);
	srv->conn_timeout_ms = conn_timeout_ms;
	atomic_init(&srv->stopping, false);
	atomic_init(&srv->nidle, 0);
	srv->linger_spin_ns = 0;
	srv->linger_spin_max = 0;
	atomic_init(&srv->nspinning, 0);
	atomic_init(&srv->spin_served, 0);
	raise_nofile();
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0)
		return clf_fail(errno, "%s: epoll_create1: %s", name,
				strerror(errno));
	srv->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (srv->wake_fd < 0) {
		err = clf_fail(errno, "%s: eventfd: %s", name, strerror(errno));
		goto close_ep;
	}
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
	pthread_mutex_init(&srv->accept_lock, NULL);
	pthread_cond_init(&srv->gone, NULL);
	return 0;

close_wake:
	close(srv->wake_fd);
close_ep:
	close(srv->epfd);
	srv->ops = NULL;
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
	pthread_mutex_destroy(&srv->accept_lock);
	pthread_attr_destroy(&srv->attr);
	close(srv->wake_fd);
	close(srv->epfd);
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

/* ------------------------------------------------------------------ */
/* The pool                                                            */
/* ------------------------------------------------------------------ */

/* One more worker; srv->lock held.  0 or a positive errno (logged). */
static int spawn_locked(struct clf_daemon_server *srv)
{
	pthread_t tid;
	int err = pthread_create(&tid, &srv->attr, worker_main, srv);

	if (err) {
		clf_log(CLF_LOG_ERROR, "%s: cannot start a worker (%u running): %s",
			srv->name, srv->nthreads, strerror(err));
		return err;
	}
	srv->nthreads++;
	if (srv->nthreads > srv->peak_threads)
		srv->peak_threads = srv->nthreads;
	return 0;
}

/*
 * Should a worker that begins to wait be replaced?  Only when fewer than
 * the pool's size remain for new requests and none of them is idle: an
 * idle one takes the next request as well, and a worker started for
 * nothing would end a second later (with many workers and few clients,
 * a start and an end per wait).  lock.
 */
static bool short_locked(const struct clf_daemon_server *srv)
{
	return srv->nthreads - srv->nwaiting < srv->workers && !srv->nidle;
}

static bool surplus_locked(const struct clf_daemon_server *srv)
{
	return srv->nthreads - srv->nwaiting > srv->workers;
}

void clf_daemon_wait_begin(void)
{
	struct clf_daemon_server *srv = worker_of;

	if (!srv)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->nwaiting++;
	if (short_locked(srv) && !clf_daemon_server_stopping(srv))
		spawn_locked(srv);
	pthread_mutex_unlock(&srv->lock);
}

void clf_daemon_wait_end(void)
{
	struct clf_daemon_server *srv = worker_of;

	if (!srv)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->nwaiting--;
	pthread_mutex_unlock(&srv->lock);
}

/* ------------------------------------------------------------------ */
/* Connections                                                         */
/* ------------------------------------------------------------------ */

static int arm(struct clf_daemon_server *srv, struct clf_daemon_conn *dc,
	       int op)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.ptr = dc };

	return epoll_ctl(srv->epfd, op, dc->fd, &ev) ? -errno : 0;
}

/* Close dc, served by nobody and not armed. */
static void conn_close(struct clf_daemon_server *srv,
		       struct clf_daemon_conn *dc)
{
	pthread_mutex_lock(&srv->lock);
	if (dc->prev)
		dc->prev->next = dc->next;
	else
		srv->conns = dc->next;
	if (dc->next)
		dc->next->prev = dc->prev;
	srv->nconns--;
	pthread_mutex_unlock(&srv->lock);
	/* Out of the set before the descriptor goes (a dup would keep it). */
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, dc->fd, NULL);
	srv->ops->close(srv->arg, dc->state);
	pthread_mutex_destroy(&dc->mu);
	free(dc);
}

/* A new connection c, taken over in every case. */
static void start_conn(struct clf_daemon_server *srv, struct clf_conn *c)
{
	struct clf_daemon_conn *dc;
	uint64_t ticket = 0;
	char why[128];
	void *state;
	int fd = clf_conn_fd(c), err;

	/* Unauthenticated peers never take a client's slot (admission.h). */
	if (clf_admit_handshake(&srv->admit, clf_conn_peer(c), fd, &ticket,
				why, sizeof(why))) {
		clf_daemon_server_log_refusal(srv, clf_conn_peer(c), why);
		if (srv->ops->refuse)
			srv->ops->refuse(srv->arg, c, why);
		clf_conn_close(c);
		return;
	}
	state = srv->ops->open(srv->arg, c, ticket);
	if (!state)
		return;
	dc = calloc(1, sizeof(*dc));
	if (!dc) {
		clf_log(CLF_LOG_ERROR, "%s: refused a connection: out of memory",
			srv->name);
		srv->ops->close(srv->arg, state);
		return;
	}
	dc->state = state;
	dc->c = c;
	dc->fd = fd;
	dc->since_ms = clf_now_ms();
	pthread_mutex_init(&dc->mu, NULL);
	pthread_mutex_lock(&srv->lock);
	dc->next = srv->conns;
	if (dc->next)
		dc->next->prev = dc;
	srv->conns = dc;
	srv->nconns++;
	pthread_mutex_unlock(&srv->lock);
	err = arm(srv, dc, EPOLL_CTL_ADD);
	if (err) {
		clf_log(CLF_LOG_ERROR, "%s: cannot watch a connection: %s",
			srv->name, strerror(-err));
		conn_close(srv, dc);
	}
}

/* The listener has connections waiting: take them, re-arm it. */
static void accept_ready(struct clf_daemon_server *srv)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT,
				  .data.ptr = &listener_tag };

	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct clf_conn *c = NULL;
		int err;

		pthread_mutex_lock(&srv->accept_lock);
		err = srv->listener ? clf_listener_accept(srv->listener, 0,
							  srv->conn_timeout_ms,
							  &c)
				    : -ESHUTDOWN;
		pthread_mutex_unlock(&srv->accept_lock);
		if (err == -ETIMEDOUT || err == -EINTR || err == -EAGAIN ||
		    err == -ESHUTDOWN)
			break;	/* none left, or the peer gave up */
		if (err) {
			clf_log(CLF_LOG_ERROR, "cannot accept: %s",
				CLF_Last_error());
			usleep(ACCEPT_BACKOFF_US);
			break;
		}
		start_conn(srv, c);
	}
	pthread_mutex_lock(&srv->accept_lock);
	if (srv->listener &&
	    epoll_ctl(srv->epfd, EPOLL_CTL_MOD,
		      clf_listener_fd(srv->listener), &ev))
		clf_log(CLF_LOG_ERROR, "%s: cannot watch the listener: %s",
			srv->name, strerror(errno));
	pthread_mutex_unlock(&srv->accept_lock);
}

/*
 * Whether a whole message header waits on dc's socket (or its end, or
 * an error: serve then says so).  A peer that sent part of one would
 * hold a worker in the blocking receive until its timeout; instead the
 * socket's low-water mark is raised to a header, so that epoll reports
 * it only once the rest came, and lowered again before serving; a peer
 * that does not send the rest within the connection's timeout is cut
 * off by the sweep.  Not a socket (another transport): serve.
 */
static bool header_ready(struct clf_daemon_conn *dc)
{
	uint8_t peek[CLF_PROTO_HEADER_SIZE];
	ssize_t n = recv(dc->fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT);
	int one = 1, hdr = (int)sizeof(peek);

	if (n > 0 && (size_t)n < sizeof(peek)) {
		if (!dc->lowat &&
		    !setsockopt(dc->fd, SOL_SOCKET, SO_RCVLOWAT, &hdr,
				sizeof(hdr))) {
			dc->lowat = true;
			dc->partial_ms = clf_now_ms();
			return false;
		}
		/* Raised already, yet epoll woke us: let serve wait. */
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;	/* nothing after all */
	if (dc->lowat) {
		setsockopt(dc->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
		dc->lowat = false;
	}
	return true;
}

/*
 * dc has bytes: serve its requests, then re-arm it or close it.
 *
 * While another worker is idle, this one waits up to LINGER_MS on the
 * connection it just answered, as a thread of its own would: a client in
 * a loop of calls sends its next request within a round trip, and it is
 * then served at once, by a thread that is awake and has the connection
 * in its cache, rather than through epoll by the worker that waited
 * longest (on a many-core machine, a cold core: 20-30% of the rate of
 * small metadata calls at 16 clients).  With every worker busy it only
 * looks (a request already there: a client with several in flight) and
 * goes back to epoll.  SERVE_BATCH bounds a run on one connection.
 *
 * It waits so only on a connection whose last request came within
 * LINGER_MS of the reply before (dc->quick): a client that takes longer
 * between its calls -- a process waiting for the others in a collective
 * on a loaded machine, computing, idle -- would cost a wake-up of the
 * lingering worker at the end of every linger (a thread that needs a
 * core, for nothing) besides the one its next request costs through
 * epoll: two wake-ups per request where one does.
 */
static int64_t spin_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Watch dc for its next request without sleeping, up to
 * srv->linger_spin_ns, when fewer than srv->linger_spin_max workers do
 * (daemon.h).  Returns whether something came.
 */
static bool linger_spin(struct clf_daemon_server *srv,
			struct clf_daemon_conn *dc)
{
	int64_t until;
	bool came = false;

	/* Only while another worker waits for the other connections. */
	if (srv->linger_spin_ns <= 0 || !atomic_load(&srv->nidle))
		return false;
	if (atomic_fetch_add(&srv->nspinning, 1) >= srv->linger_spin_max) {
		atomic_fetch_sub(&srv->nspinning, 1);
		return false;
	}
	until = spin_now_ns() + srv->linger_spin_ns;
	do {
		if (clf_conn_poll(dc->c, 0) != 0) {
			came = true;
			break;
		}
		/* A runnable thread on this core -- the client itself,
		 * say -- goes first. */
		sched_yield();
	} while (!clf_daemon_server_stopping(srv) && spin_now_ns() < until);
	atomic_fetch_sub(&srv->nspinning, 1);
	if (came)
		atomic_fetch_add(&srv->spin_served, 1);
	return came;
}

static void serve_ready(struct clf_daemon_server *srv,
			struct clf_daemon_conn *dc)
{
	int64_t linger_ns = (int64_t)LINGER_MS * 1000000;
	int rc = 0, err;

	pthread_mutex_lock(&dc->mu);
	/* Came through epoll: would a linger have caught it? */
	dc->quick = dc->reply_ns && clf_now_ns() - dc->reply_ns <= linger_ns;
	for (int n = 1; header_ready(dc); n++) {
		rc = srv->ops->serve(srv->arg, dc->state);
		dc->served = true;
		dc->idled = false;
		dc->since_ms = clf_now_ms();
		dc->reply_ns = clf_now_ns();
		if (rc || n >= SERVE_BATCH ||
		    clf_daemon_server_stopping(srv))
			break;
		if (!linger_spin(srv, dc) &&
		    clf_conn_poll(dc->c, dc->quick &&
					 atomic_load(&srv->nidle) ? LINGER_MS
								  : 0) <= 0)
			break;
		dc->quick = true;
	}
	if (!rc && !clf_daemon_server_stopping(srv)) {
		/*
		 * Armed under dc->mu: the worker its next event goes to
		 * takes dc->mu before it touches dc or its descriptor, so
		 * the arming happens before whatever that worker does
		 * (ThreadSanitizer saw this epoll_ctl and that worker's
		 * close of the descriptor as a race).
		 */
		err = arm(srv, dc, EPOLL_CTL_MOD);
		pthread_mutex_unlock(&dc->mu);
		if (!err)
			return;
		clf_log(CLF_LOG_ERROR, "%s: cannot watch a connection: %s",
			srv->name, strerror(-err));
	} else {
		pthread_mutex_unlock(&dc->mu);
	}
	conn_close(srv, dc);
}

/*
 * Once a second: a connection that said nothing within a handshake's
 * time, or sent part of a header and nothing more within its timeout,
 * is shut down (its worker then sees the end and closes it), and one
 * idle for ops->idle_ms lets go of what it keeps.
 */
static void sweep(struct clf_daemon_server *srv)
{
	int64_t now = clf_now_ms();
	char why[96];

	pthread_mutex_lock(&srv->lock);
	for (struct clf_daemon_conn *dc = srv->conns; dc; dc = dc->next) {
		if (pthread_mutex_trylock(&dc->mu))
			continue;	/* being served */
		if (!dc->served && !dc->cut &&
		    now - dc->since_ms > CLF_ADMIT_HANDSHAKE_MS) {
			snprintf(why, sizeof(why),
				 "no answer within %d ms (no handshake)",
				 CLF_ADMIT_HANDSHAKE_MS);
			clf_daemon_server_log_refusal(srv, clf_conn_peer(dc->c),
						      why);
			shutdown(dc->fd, SHUT_RDWR);
			dc->cut = true;
		} else if (dc->lowat && now - dc->partial_ms >
			   clf_conn_timeout(dc->c)) {
			/* The rest of a header did not come: the receive
			 * then sees the end and the connection closes. */
			clf_log(CLF_LOG_WARN, "closing the connection from %s: no answer within %d ms (part of a request header came)",
				clf_conn_peer(dc->c), clf_conn_timeout(dc->c));
			shutdown(dc->fd, SHUT_RDWR);
			dc->partial_ms = INT64_MAX / 2;
		} else if (dc->served && !dc->idled && srv->ops->idle &&
			   now - dc->since_ms >= srv->ops->idle_ms) {
			srv->ops->idle(srv->arg, dc->state);
			dc->idled = true;
		}
		pthread_mutex_unlock(&dc->mu);
	}
	pthread_mutex_unlock(&srv->lock);
}

static void *worker_main(void *arg)
{
	struct clf_daemon_server *srv = arg;

	worker_of = srv;
	for (;;) {
		struct epoll_event ev;
		bool surplus;
		int n;

		pthread_mutex_lock(&srv->lock);
		surplus = surplus_locked(srv);
		pthread_mutex_unlock(&srv->lock);
		atomic_fetch_add(&srv->nidle, 1);
		n = epoll_wait(srv->epfd, &ev, 1,
			       surplus ? SURPLUS_IDLE_MS : WAIT_SLICE_MS);
		atomic_fetch_sub(&srv->nidle, 1);
		if (clf_daemon_server_stopping(srv))
			break;
		if (n < 0 && errno != EINTR) {
			clf_log(CLF_LOG_ERROR, "%s: epoll_wait: %s", srv->name,
				strerror(errno));
			usleep(ACCEPT_BACKOFF_US);
			continue;
		}
		if (n == 0 && surplus) {
			pthread_mutex_lock(&srv->lock);
			surplus = surplus_locked(srv);
			if (surplus)
				srv->nthreads--;
			pthread_mutex_unlock(&srv->lock);
			if (surplus)
				return NULL;	/* the count went with it */
		}
		if (n <= 0 || ev.data.ptr == &wake_tag)
			continue;
		if (ev.data.ptr == &listener_tag)
			accept_ready(srv);
		else
			serve_ready(srv, ev.data.ptr);
	}
	pthread_mutex_lock(&srv->lock);
	srv->nthreads--;
	pthread_cond_broadcast(&srv->gone);
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Running and stopping                                                */
/* ------------------------------------------------------------------ */

/* Stop accepting and wake every worker. */
static void stop(struct clf_daemon_server *srv)
{
	uint64_t one = 1;

	atomic_store(&srv->stopping, true);
	pthread_mutex_lock(&srv->accept_lock);
	clf_listener_close(srv->listener);
	srv->listener = NULL;
	pthread_mutex_unlock(&srv->accept_lock);
	if (write(srv->wake_fd, &one, sizeof(one)) != sizeof(one))
		clf_log(CLF_LOG_ERROR, "cannot wake the workers: %s",
			strerror(errno));
	if (srv->ops->stop)
		srv->ops->stop(srv->arg);
}

/* The listener (one event at a time) and wake_fd (level: it wakes every
 * worker once written) into the set. */
static int watch_fixed(struct clf_daemon_server *srv)
{
	struct epoll_event lev = { .events = EPOLLIN | EPOLLONESHOT,
				   .data.ptr = &listener_tag };
	struct epoll_event wev = { .events = EPOLLIN,
				   .data.ptr = &wake_tag };

	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD,
		      clf_listener_fd(srv->listener), &lev) ||
	    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->wake_fd, &wev))
		return clf_fail(errno, "%s: epoll_ctl: %s", srv->name,
				strerror(errno));
	return 0;
}

int clf_daemon_server_run(struct clf_daemon_server *srv, int stop_fd)
{
	struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
	int ret = watch_fixed(srv);

	if (!ret) {
		pthread_mutex_lock(&srv->lock);
		for (unsigned i = 0; i < srv->workers; i++)
			if (spawn_locked(srv))
				break;
		if (!srv->nthreads)
			ret = clf_fail(EAGAIN, "%s: cannot start any worker",
				       srv->name);
		pthread_mutex_unlock(&srv->lock);
	}
	while (!ret) {
		int n = poll(&pfd, 1, SWEEP_MS);

		if (n < 0 && errno != EINTR) {
			ret = clf_fail(errno, "%s: poll: %s", srv->name,
				       strerror(errno));
			clf_log(CLF_LOG_ERROR, "%s", CLF_Last_error());
			break;
		}
		if (n > 0)
			break;
		sweep(srv);
	}
	stop(srv);
	return ret;
}

int clf_daemon_server_drain(struct clf_daemon_server *srv, int wait_ms)
{
	int64_t deadline = clf_now_ms() + wait_ms;
	int64_t next_log = clf_now_ms() + STOP_LOG_MS;
	struct clf_daemon_conn *dc;
	unsigned left;

	pthread_mutex_lock(&srv->lock);
	while (srv->nthreads > 0 && (wait_ms < 0 || clf_now_ms() < deadline)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&srv->gone, &srv->lock, &ts);
		if (wait_ms < 0 && srv->nthreads > 0 &&
		    clf_now_ms() >= next_log) {
			clf_log(CLF_LOG_INFO, "stopping: waiting for %u workers to finish their request",
				srv->nthreads);
			next_log = clf_now_ms() + STOP_LOG_MS;
		}
	}
	left = srv->nthreads;
	pthread_mutex_unlock(&srv->lock);
	if (left) {
		clf_log(CLF_LOG_WARN, "%u workers still busy at exit", left);
		return -EBUSY;
	}
	/* No worker left: every connection is idle and ours to close. */
	while ((dc = srv->conns) != NULL)
		conn_close(srv, dc);
	return 0;
}
