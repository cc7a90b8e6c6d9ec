/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_state.h -- what every part of the iod program shares: the server's
 * state (its store, views, collectives, counters, buffer pool), its test
 * hooks and its limits.
 *
 * Types only, and the few functions that read them (iod_hooks.c,
 * iod_server.c's iod_limits_from_config, iod.c's iod_hooks_from_env):
 * the request handlers include this, never iod_server.h, so that nothing
 * below the loop calls back into it.
 */
#ifndef IOD_STATE_H
#define IOD_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "config.h"
#include "daemon.h"
#include "iod_fence.h"
#include "iod_share.h"
#include "iod_store.h"
#include "iod_view.h"
#include "transport.h"

struct iod_colls;
struct iod_locking;

/* Connections served at once unless -m says otherwise. */
#define IOD_MAX_CONNS_DEFAULT 256u

/*
 * Test hooks, read from the environment at start, off (0) by default.
 * Named like git's GIT_TEST_*: compiled in so that the binary under test
 * is the binary that ships.
 */
struct iod_hooks {
	/* CLF_TEST_IOD_ENOSPC_AFTER: writes that would take the bytes this
	 * iod has written past this many fail with ENOSPC; 0: off. */
	uint64_t enospc_after;
	/* CLF_TEST_IOD_DELAY_MS: sleep this long before every reply. */
	unsigned delay_ms;
	/* CLF_TEST_IOD_COLL_PIECES: pieces per round of a collective
	 * operation (iod_collective.c, rule 6a); 0: the built-in size. */
	unsigned coll_pieces;
	/* CLF_TEST_IOD_LOCK_LEASE_MS: how long a caching client has to
	 * release a revoked extent lock (iod_lock.h); 0: timeout_ms / 2. */
	unsigned lock_lease_ms;
	/* CLF_TEST_IOD_COLL_EXIT=1: after the I/O of the first collective
	 * operation, let the participants that waited have their replies,
	 * then exit (137) before the last one's: an iod that dies between
	 * an operation's replies (iod_coll_done.c). */
	bool coll_exit;
	/* CLF_TEST_IOD_LOG_COLL=1: one log line per message that carries
	 * collective requests (a VIEW_READ or VIEW_WRITE with COLLECTIVE,
	 * a VIEW_MERGED), so that a test counts them. */
	bool log_coll;
};

/* Parse the CLF_TEST_IOD_* variables: 0, or -EINVAL with a message. */
int iod_hooks_from_env(struct iod_hooks *out);

struct iod_server;

/*
 * The ENOSPC hook, consulted once before each write to the store that a
 * request causes, whichever way its data travels (in memory, spliced, in
 * pieces) with the bytes it is about to write: an independent write's
 * data, a collective piece written on its own, or the whole of a merged
 * collective operation (iod_hooks.c).
 */
void iod_hook_before_write(struct iod_server *srv, size_t len);

/* The delay hook: sleep before a reply (iod_hooks.c). */
void iod_hook_before_reply(const struct iod_server *srv);

/* The message-count hook: a message with n collective requests came. */
void iod_hook_coll_message(const struct iod_server *srv, const char *op,
			   unsigned n);

/* The exit hook: called by the participant that did an operation's I/O,
 * the others woken (iod_hooks.c). */
void iod_hook_after_coll(const struct iod_server *srv);

/*
 * What the iod lends its clients (clf.conf keys of the same names; 0 in
 * the configuration: these defaults, from the machine's memory M):
 *
 *   iod_view_memory       M / 16, from 64 MiB to 8 GiB: registered views
 *   iod_view_min_share    iod_view_memory / max_conns
 *   iod_buffer_memory     M / 8, from 256 MiB to 16 GiB: request and
 *                         reply buffers over IOD_SMALL_BUF
 *   iod_buffer_min_share  iod_buffer_memory / max_conns, at least
 *                         IOD_SMALL_BUF
 *
 * Each pool is shared fairly between the connections (iod_share.h); with
 * the default minimum every connection the iod serves can hold its
 * minimum at once.
 * Besides, each connection may always hold IOD_SMALL_BUF bytes of
 * request and as many of reply, so that every client is served however
 * the pools stand: max_conns * 2 * IOD_SMALL_BUF in all.
 */
struct iod_limits {
	size_t view_memory, view_min_share;
	size_t buffer_memory, buffer_min_share;
};

#define IOD_SMALL_BUF ((size_t)1 << 20)

/* The limits of cfg, defaults filled in from this machine's memory
 * (iod_server.c). */
void iod_limits_from_config(const struct clf_config *cfg, unsigned max_conns,
			    struct iod_limits *out);

struct iod_server {
	/* Immutable while serving. */
	uint32_t index;			/* this iod's index in the config */
	const struct clf_config *cfg;	/* borrowed; outlives the server */
	const char *addr;		/* listening address; borrowed (cfg) */
	char name[16];			/* "iod 3", in messages */
	struct iod_store *st;		/* owned */
	struct iod_views *views;	/* owned */
	struct iod_colls *colls;	/* owned: collective operations */
	struct iod_locking *locking;	/* owned: extent locks, callbacks */
	struct iod_fences fences;	/* files leaving (iod_fence.h) */
	/* The listener, admission and connection threads (daemon.h). */
	struct clf_daemon_server net;
	struct iod_hooks hooks;
	unsigned max_conns;		/* connections served at once */
	int timeout_ms;			/* network waits and collectives */
	int64_t start_ms;		/* clf_now_ms() at start */
	/* CLF_AUTH_* taken.  A MUNGE-authenticated user may reach any
	 * subfile until capabilities come (docs/security.md). */
	unsigned auth_methods;

	/* Set when the server stops (iod_server_stop). */
	atomic_bool stop;

	/* Counters for STATUS; atomic, no lock. */
	atomic_uint_least64_t requests;	/* served since start */
	atomic_uint_least64_t bytes_read;    /* client data sent, bytes */
	atomic_uint_least64_t bytes_written; /* client data stored, bytes */
	atomic_uint connections;	/* authenticated and open now */
	/* Collective operations whose I/O ran, and of their participants
	 * that waited, those answered by the one that did the I/O and
	 * those woken to answer themselves (logged at the end). */
	atomic_uint_least64_t coll_ops;
	atomic_uint_least64_t coll_answered;
	atomic_uint_least64_t coll_woken;
	atomic_uint_least64_t next_owner; /* the last connection id given */
	struct iod_limits limits;

	pthread_mutex_t buf_lock;
	struct iod_pool bufs;		/* buffers over IOD_SMALL_BUF; buf_lock */
	size_t coll_charged;		/* of bufs: collective rounds, windows */
	struct iod_client *clients;	/* open ones; mutex */
	/* Authenticated connections, for VIEW_MERGED to find the relayed
	 * one a piece came on (iod_ops_merged.c); mutex. */
	struct iod_conn *served;

	pthread_mutex_t mutex;		/* of clients */
};

#endif /* IOD_STATE_H */
