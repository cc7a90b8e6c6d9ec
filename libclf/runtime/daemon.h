/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h -- what metad and the iods share as daemons: becoming one,
 * readiness, the pid file, signals, and the accept loop with a thread
 * per connection.  Each daemon keeps only its options and its requests.
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
 *   clf_daemon_server_drain(&srv, ms)  connections finish their request
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
/* The accept loop, a thread per connection                            */
/* ------------------------------------------------------------------ */

/*
 * Why a thread per connection (both daemons): clients are few and keep
 * their connections long; a request is one short store transaction
 * (metad) or a disk access the kernel's readiness API does not cover
 * (the iods), so an event loop would hand every request to workers all
 * the same.  The cost is bounded by max_conns threads.  A daemon that
 * wants an event loop replaces clf_daemon_server_run and keeps the rest.
 */
struct clf_daemon_server;

struct clf_daemon_server_ops {
	/*
	 * Serve connection c (taken: close it) in its own thread, until
	 * the peer leaves or the server stops; drain waits for the return.  ticket is c's admission
	 * (admission.h): the connection settles it after authentication
	 * (clf_admit_settle) and leaves (clf_admit_leave) if admitted.
	 */
	void (*serve)(void *arg, struct clf_conn *c, uint64_t ticket);
	/*
	 * Optional: c was refused before authentication (over a quota):
	 * tell the peer why, then return; c is closed after.
	 */
	void (*refuse)(void *arg, struct clf_conn *c, const char *why);
	/*
	 * Optional: the server stops; called once, before waiting for the
	 * connections (to set a flag they poll).  Async-signal safety is
	 * not needed: it runs in the accept loop's thread.
	 */
	void (*stop)(void *arg);
};

struct clf_daemon_server {
	/* Set by clf_daemon_server_open, immutable after. */
	const char *name;		/* "metad", "iod 2"; borrowed */
	const struct clf_daemon_server_ops *ops;	/* borrowed */
	void *arg;			/* for ops; borrowed */
	unsigned max_conns;		/* authenticated connections at once */
	int conn_timeout_ms;		/* transport setup of a connection */
	struct clf_listener *listener;	/* owned; NULL once stopping */
	struct clf_admission admit;	/* handshake and connection quotas */
	int wake_fd;			/* eventfd, owned: readable once the
					   server stops, never read */
	atomic_bool stopping;
	pthread_attr_t attr;		/* of connection threads: detached */

	pthread_mutex_t lock;
	pthread_cond_t gone;		/* a connection thread ended; lock */
	unsigned nconns;		/* connection threads alive; lock */
};

/*
 * clf_daemon_server_open - listen on addr ("host:port") over t
 *
 * max_conns bounds authenticated connections (admission.h);
 * stack_size is the connection threads' stack (0: the default);
 * conn_timeout_ms bounds a connection's transport setup at accept.
 * srv is the caller's; name, ops and arg must outlive it.  0, or the
 * listener's error (-EADDRINUSE, ...) with a message naming addr.
 */
int clf_daemon_server_open(struct clf_daemon_server *srv, const char *name,
			   const struct clf_transport_ops *t, const char *addr,
			   unsigned max_conns, size_t stack_size,
			   int conn_timeout_ms,
			   const struct clf_daemon_server_ops *ops, void *arg);

/*
 * clf_daemon_server_run - accept connections, a thread each (ops->serve),
 * until stop_fd (the daemon's signalfd) becomes readable; then stop
 * listening, set stopping, wake the connections (wake_fd) and call
 * ops->stop.  0, or a negative errno when it could not wait at all.
 */
int clf_daemon_server_run(struct clf_daemon_server *srv, int stop_fd);

/*
 * Wait for the connection threads to end: at most wait_ms (< 0: for as
 * long as they take, saying every 5 s how many are left).  0, or -EBUSY
 * (logged) when some still run: then the caller must not free what they
 * use (it exits instead).
 */
int clf_daemon_server_drain(struct clf_daemon_server *srv, int wait_ms);

/* Whether the server stops: connections poll it, or wake_fd. */
static inline bool clf_daemon_server_stopping(struct clf_daemon_server *srv)
{
	return atomic_load(&srv->stopping);
}

/* Log a refusal of peer, at most once a second (admission.h). */
void clf_daemon_server_log_refusal(struct clf_daemon_server *srv,
				   const char *peer, const char *why);

/* Free what open made; no connection thread may run.  NULL ok. */
void clf_daemon_server_close(struct clf_daemon_server *srv);

#endif /* CLF_DAEMON_H */
