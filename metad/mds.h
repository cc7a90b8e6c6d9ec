/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds.h -- what the parts of the metad daemon share: the daemon context
 * that every request handler sees, the log, and the fault hooks.
 *
 * The daemon is: metad.c (command line, daemonizing, signals) around
 * mds_server.c (authentication and the requests, served by the daemon
 * runtime's event loop and pool of workers: daemon.h), which hands each request to mds_dispatch.c, and that
 * to the handler of its opcode, mds_ops*.c (decode, one store call,
 * encode).  Operations that reach the file data (unlink, truncate,
 * statfs) go through mds_data.c, which talks to the iods over the
 * connections of mds_iods.c.
 */
#ifndef MDS_H
#define MDS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "mds_store.h"

struct mds_iods;
struct mds_locks;
struct mds_replay;
struct mds_retired;

/*
 * The daemon, as the request handlers see it.  Set up once by metad.c
 * before the first connection and read-only afterwards, except the
 * counters, which are atomic.
 */
struct mds_ctx {
	const struct clf_config *cfg;	/* borrowed: outlives the server */
	struct mds_store *store;	/* borrowed; thread-safe */
	struct mds_iods *iods;		/* borrowed; thread-safe */
	struct mds_locks *locks;	/* borrowed; thread-safe; byte-range
					   locks, in memory only (mds_lock.h) */
	struct mds_appends *appends;	/* borrowed; thread-safe; append
					   ends, in memory only
					   (mds_append.h) */
	struct mds_gc *gc;		/* borrowed; thread-safe; pending
					   subfile removals (mds_gc.h) */
	struct mds_replay *replay;	/* borrowed; thread-safe; requests
					   in progress and the expiry of
					   their records (mds_replay.h) */
	struct mds_retired *retired;	/* borrowed; thread-safe; iods that
					   get no new subfiles; NULL: none
					   (mds_retire.h) */
	struct mds_iods *peers;		/* borrowed; thread-safe; the other
					   metads of a spread namespace
					   (mds_peer.h) */
	uint32_t index;			/* this metad's, of cfg->nmetads */
	int64_t start_ms;		/* clf_now_ms() at start */
	unsigned auth_methods;		/* CLF_AUTH_* taken (auth.h) */
	atomic_uint_fast64_t requests;	/* served since start */
	atomic_uint_fast64_t bytes_in;	/* message bytes received */
	atomic_uint_fast64_t bytes_out;	/* message bytes sent */
	atomic_uint connections;	/* authenticated and open now */
};

/* Requests larger than this are refused (-E2BIG) and the connection is
 * closed: the largest thing a request carries is a layout, and the store
 * refuses layouts over MDS_LAYOUT_MAX_BYTES anyway. */
#define MDS_REQUEST_MAX (MDS_LAYOUT_MAX_BYTES + (64u << 10))

/* ------------------------------------------------------------------ */
/* Log (mds_log.c)                                                     */
/* ------------------------------------------------------------------ */

/*
 * The log is libclf's daemon log (log.h): one line format for metad and
 * the iods, levels, reopened on SIGHUP.  mds_log is a line at level
 * info, mds_log_debug one at debug (a line per connection).
 */
#include "log.h"

#define mds_log_open(path) clf_log_open(path)
#define mds_log_close() clf_log_close()
#define mds_log(...) clf_log(CLF_LOG_INFO, __VA_ARGS__)
#define mds_log_debug(...) clf_log(CLF_LOG_DEBUG, __VA_ARGS__)
#define mds_log_warn(...) clf_log(CLF_LOG_WARN, __VA_ARGS__)
#define mds_log_error(...) clf_log(CLF_LOG_ERROR, __VA_ARGS__)

/*
 * Put context in front of the calling thread's last error, keeping who
 * failed (clf_fail_ctx): the message becomes "<fmt...>: <previous
 * reason>".  Returns neg_err, a
 * negative errno, so that a failing path reads
 *   return mds_fail_ctx(err, "metad: cannot truncate 'ino %llu'", ino);
 */
int mds_fail_ctx(int neg_err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* Fault hooks and test knobs (mds_fault.c)                            */
/* ------------------------------------------------------------------ */

/*
 * Compiled in, off unless their environment variable is set, so that
 * integration tests can make the real daemon fail on purpose:
 *
 *   CLF_TEST_METAD_CRASH_AFTER_CREATES=N  abort() right after the Nth
 *	successful create (counting from start) has committed, before
 *	its reply is sent: the file must survive a restart although its
 *	client never heard of it.
 *   CLF_TEST_METAD_CRASH_AFTER_UNLINKS=N  the same after the Nth
 *	unlink or replacing rename, before its subfiles are removed from
 *	the iods: the orphans must stay invisible.
 *   CLF_TEST_METAD_CRASH_AFTER_RECORDED=N  abort() right after the Nth
 *	request with an identity has committed its change and its record
 *	(mds_replay.h), before its reply is sent: a retry after the
 *	restart must get the first outcome.
 *   CLF_TEST_METAD_DROP_REPLIES=N  the reply of every Nth such request
 *	is not sent; its connection is closed instead, as if the network
 *	had lost it: the client's retry must get the first outcome.
 *   CLF_TEST_METAD_MAX_CONNECTIONS=N  bound open connections by N
 *	instead of MDS_MAX_CONNECTIONS, to test the refusal cheaply.
 *   CLF_TEST_METAD_HANDSHAKE_MS=N  give each step of a handshake N ms
 *	instead of CLF_ADMIT_HANDSHAKE_MS, so that a test can let a MUNGE
 *	credential expire in the middle of one.
 */
enum mds_fault {
	MDS_FAULT_CREATES,
	MDS_FAULT_UNLINKS,
	MDS_FAULT_REPLIES,
	MDS_FAULT_COUNT
};

/* Read the environment; call once, before any thread starts.  Returns 0
 * or -EINVAL with a message naming the malformed variable. */
int mds_fault_init(void);

/* One more event of kind f has happened; abort() when it is the Nth. */
void mds_fault_point(enum mds_fault f);

/* Whether to drop this recorded request's reply (the knob above). */
bool mds_fault_drop_reply(void);

/* The connection bound: the knob above, or dflt. */
unsigned mds_fault_max_connections(unsigned dflt);

/* The time of a handshake step: the knob above, or dflt. */
unsigned mds_fault_handshake_ms(unsigned dflt);

#endif /* MDS_H */
