/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h -- what metad and the iods share as daemons: becoming one,
 * readiness, the pid file, signals, and the server: an event loop and a
 * bounded pool of workers.  Each daemon keeps only its options and its requests.
 *
 * A daemon's life, in the order of the calls:
 *
 *   clf_log_open(...)                  its log (log.h)
 *   clf_daemon_detach(&d)              unless in the foreground: fork;
 *                                      the command waits for readiness
 *   clf_daemon_signals(&d)             before any thread
 *   clf_daemon_server_open(&srv, ...)  listen
 *   clf_daemon_pid_write(&d, path)
 *   clf_daemon_ready(&d)               the command exits 0; systemd hears
 *                                      READY=1 (Type=notify)
 *   clf_daemon_server_run(&srv, d.stop_fd)     until SIGTERM or SIGINT
 *   clf_daemon_server_drain(&srv, ms)  requests in progress finish
 *   clf_daemon_pid_remove(&d)
 *
 * and clf_daemon_failed(&d, msg) on any failure before ready: the command
 * prints msg on its standard error and exits 1.
 *
 * Signals: SIGTERM and SIGINT stop the daemon cleanly (no new
 * connections, requests in progress finish); SIGHUP reopens the log (for
 * logrotate) and never stops it; SIGPIPE is ignored.  They are blocked in
 * every thread and read from a signalfd, so no handler runs anywhere.
 */
#ifndef CLF_DAEMON_H
#define CLF_DAEMON_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "transport.h"

struct clf_daemon {
	const char *name;	/* "metad", "iod 2": messages; borrowed */
	int ready_fd;		/* to the waiting command; -1: none */
	int stop_fd;		/* signalfd of SIGTERM, SIGINT; -1 */
	int stop_signal;	/* the one that stopped it; 0 */
	char pid_path[PATH_MAX];	/* "" until written */
};

/* name is borrowed and must outlive d. */
void clf_daemon_init(struct clf_daemon *d, const char *name);

/*
 * clf_daemon_detach - fork and leave the terminal's session
 *
 * The command (the parent) waits, up to a minute, for the daemon's word
 * and exits: 0 once it is ready, 1 after printing the daemon's failure
 * on its standard error.  The daemon (the child) returns 0 with
 * d->ready_fd to report on, in a new session.  Call before any thread.
 * Returns a negative errno with a message when it cannot fork.
 */
int clf_daemon_detach(struct clf_daemon *d);

/*
 * clf_daemon_signals - block SIGTERM, SIGINT and SIGHUP in this thread
 * (every thread made after inherits it), make d->stop_fd readable when a
 * stop signal comes, start the thread that reopens the log on SIGHUP
 * (clf_log_reopen_on_hup), ignore SIGPIPE.  Call before any thread.
 * 0, or a negative errno with a message.
 */
int clf_daemon_signals(struct clf_daemon *d);

/*
 * Write getpid() to path (made under a temporary name, then renamed: a
 * reader sees the whole pid or none) and remember it for
 * clf_daemon_pid_remove.  0, or a negative errno naming the path.
 */
int clf_daemon_pid_write(struct clf_daemon *d, const char *path);
void clf_daemon_pid_remove(struct clf_daemon *d);

/*
 * The pid written in path, or 0 (none, or not a pid): who holds a lock,
 * for a message.
 */
long clf_daemon_pid_read(const char *path);

/*
 * The daemon serves: tell the waiting command (and let go of its
 * terminal: standard input and output to /dev/null, standard error to
 * the log unless the log is standard error), chdir to /, and tell
 * systemd (sd_notify READY=1) when it runs the daemon.
 */
void clf_daemon_ready(struct clf_daemon *d);

/*
 * Starting failed: msg goes to the waiting command, or to standard error
 * in the foreground, and to the log (unless that is standard error).
 */
void clf_daemon_failed(struct clf_daemon *d, const char *msg);

/* Read the signal that made stop_fd readable into d->stop_signal, and
 * name it: "SIGTERM", "SIGINT" or "a signal". */
const char *clf_daemon_stop_signal_name(struct clf_daemon *d);

/* Close stop_fd and ready_fd. */
void clf_daemon_release(struct clf_daemon *d);

/* ------------------------------------------------------------------ */
/* The server: an event loop and a bounded pool of workers             */
/* ------------------------------------------------------------------ */

/*
 * Why an event loop and a pool rather than a thread per connection:
 * clients keep their connections open (one per process and daemon), so
 * a job of thousands of processes means thousands of connections that
 * are idle most of the time; a thread each costs a stack, a scheduler
 * entry and a wake-up per request.  Here an idle connection is a
 * descriptor in an epoll set and a small record; a request is served by
 * one of a few workers (CLF_DAEMON_WORKERS_PER_CORE per core by default,
 * `daemon_workers` in clf.conf, `--workers` on the daemons' command
 * lines).
 *
 * The workers themselves wait on the epoll set (EPOLLONESHOT, so one
 * event goes to one worker): the thread that wakes for a request serves
 * it, with no hand-off between an event thread and a worker (on a
 * loaded machine each hand-off is a scheduling delay).  A connection is
 * re-armed only after its request was answered, so requests on one
 * connection are served one at a time, in order, and replies leave in
 * request order.  The new connections come the same way (the listener
 * is in the set); the thread that called clf_daemon_server_run waits
 * for the stop signal and sweeps idle connections once a second.
 *
 * A request that waits for other requests (a collective's other
 * participants, a lock held by another client, a group commit) must not
 * hold a worker that those requests need: it calls clf_daemon_wait_begin
 * before waiting and clf_daemon_wait_end after, and the pool starts
 * another worker if fewer than its size remain.  Threads are thus at
 * most the pool's size plus the requests waiting so, which each hold a
 * connection (at most max_conns); extra workers end after a second
 * without work.
 */
struct clf_daemon_server;

/* Workers per core by default. */
#define CLF_DAEMON_WORKERS_PER_CORE 2
/* The pool's size at most. */
#define CLF_DAEMON_WORKERS_MAX 1024

struct clf_daemon_server_ops {
	/*
	 * A new connection c (taken), admitted to its handshake with ticket
	 * (admission.h): the daemon's record of it.  Called in a worker,
	 * before any byte is read: cheap, no I/O.  NULL: refused; the
	 * daemon settled the ticket (clf_admit_handshake_done) and closed c.
	 */
	void *(*open)(void *arg, struct clf_conn *c, uint64_t ticket);
	/*
	 * In a worker, once bytes came on the connection: the first time,
	 * its handshake (the connection then settles its ticket:
	 * clf_admit_settle), then one request each call: receive it, serve
	 * it, reply.  0: wait for the next; anything else: close it.
	 */
	int (*serve)(void *arg, void *conn);
	/*
	 * Optional: the connection has had no request for idle_ms; let go
	 * of what it keeps between requests.  Never while it is served.
	 */
	void (*idle)(void *arg, void *conn);
	int idle_ms;
	/*
	 * Close the connection and free conn: after its last serve, or
	 * when the server stops.  If serve was never called, the ticket is
	 * still open: settle it (clf_admit_handshake_done(..., false)).
	 */
	void (*close)(void *arg, void *conn);
	/*
	 * Optional: c was refused before authentication (over a quota):
	 * tell the peer why, then return; c is closed after.
	 */
	void (*refuse)(void *arg, struct clf_conn *c, const char *why);
	/*
	 * Optional: the server stops; called once, before waiting for the
	 * workers (to set a flag that waiting requests poll).
	 */
	void (*stop)(void *arg);
};

struct clf_daemon_conn;	/* one connection's record, daemon_server.c */

struct clf_daemon_server {
	/* Set by clf_daemon_server_open, immutable after. */
	const char *name;		/* "metad", "iod 2"; borrowed */
	const struct clf_daemon_server_ops *ops;	/* borrowed */
	void *arg;			/* for ops; borrowed */
	unsigned max_conns;		/* authenticated connections at once */
	unsigned workers;		/* the pool's size */
	int conn_timeout_ms;		/* transport setup of a connection */
	struct clf_listener *listener;	/* owned; NULL once stopping */
	struct clf_admission admit;	/* handshake and connection quotas */
	int epfd;			/* the epoll set, owned */
	int wake_fd;			/* eventfd, owned: readable once the
					   server stops, never read */
	atomic_bool stopping;
	pthread_attr_t attr;		/* of workers: detached */
	pthread_mutex_t accept_lock;	/* listener: accepting vs closing */

	pthread_mutex_t lock;
	pthread_cond_t gone;		/* a worker ended; lock */
	unsigned nthreads;		/* workers alive; lock */
	unsigned nwaiting;		/* of them, between wait_begin and
					   wait_end; lock */
	atomic_uint nidle;		/* of them, in epoll_wait */
	unsigned nconns;		/* connections open; lock */
	unsigned peak_threads;		/* most workers at once; lock */
	struct clf_daemon_conn *conns;	/* every open one; lock */

	/*
	 * Watching a connection for its next request (serve_ready), set
	 * by the daemon before clf_daemon_server_run, 0 by default: after
	 * a reply, up to linger_spin_ns nanoseconds of polls without
	 * sleeping, by at most linger_spin_max workers at once, before the
	 * sleeping wait of LINGER_MS.  A client in a loop of small calls
	 * is then served without a wake-up of the worker (on a many-core
	 * virtual machine a wake-up of an idle core is tens of us, most of
	 * a metadata call).
	 */
	long linger_spin_ns;
	unsigned linger_spin_max;
	atomic_uint nspinning;		/* workers watching now */
	atomic_ulong spin_served;	/* requests that came while watched */
};

/*
 * The pool's size for a configured value: n when > 0, else
 * CLF_DAEMON_WORKERS_PER_CORE per online core; at most
 * CLF_DAEMON_WORKERS_MAX.
 */
unsigned clf_daemon_workers(long n);

/*
 * clf_daemon_server_open - listen on addr ("host:port") over t
 *
 * max_conns bounds authenticated connections (admission.h); workers is
 * the pool's size (clf_daemon_workers); stack_size is the workers'
 * stack (0: the default); conn_timeout_ms bounds a connection's
 * transport setup at accept.  Raises the soft limit of open files to
 * the hard one (a connection is a descriptor).  srv is the caller's;
 * name, ops and arg must outlive it.  0, or the listener's error
 * (-EADDRINUSE, ...) with a message naming addr.
 */
int clf_daemon_server_open(struct clf_daemon_server *srv, const char *name,
			   const struct clf_transport_ops *t, const char *addr,
			   unsigned max_conns, unsigned workers,
			   size_t stack_size, int conn_timeout_ms,
			   const struct clf_daemon_server_ops *ops, void *arg);

/*
 * clf_daemon_server_run - start the workers and serve until stop_fd
 * (the daemon's signalfd) becomes readable; then stop listening, set
 * stopping, wake the workers (wake_fd) and call ops->stop.  0, or a
 * negative errno when it could not start or wait at all.
 */
int clf_daemon_server_run(struct clf_daemon_server *srv, int stop_fd);

/*
 * Wait for the workers to finish their requests: at most wait_ms (< 0:
 * for as long as they take, saying every 5 s how many are left), then
 * close every connection.  0, or -EBUSY (logged) when some still run:
 * then the caller must not free what they use (it exits instead).
 */
int clf_daemon_server_drain(struct clf_daemon_server *srv, int wait_ms);

/* Whether the server stops: waiting requests poll it, or wake_fd. */
static inline bool clf_daemon_server_stopping(struct clf_daemon_server *srv)
{
	return atomic_load(&srv->stopping);
}

/*
 * In a worker, around a wait for other requests (see above): the pool
 * keeps its size of workers free for them meanwhile.  Outside a worker
 * (a test, a helper thread) they do nothing.  Pairs may not nest.
 */
void clf_daemon_wait_begin(void);
void clf_daemon_wait_end(void);

/* Log a refusal of peer, at most once a second (admission.h). */
void clf_daemon_server_log_refusal(struct clf_daemon_server *srv,
				   const char *peer, const char *why);

/* Free what open made; no worker may run.  NULL ok. */
void clf_daemon_server_close(struct clf_daemon_server *srv);

#endif /* CLF_DAEMON_H */
