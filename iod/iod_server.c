// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_server.c -- the iod's connections: authentication and the request
 * of each event; each request is served by iod_dispatch.c.  The
 * listener, the epoll set and the pool of workers are the daemon
 * runtime's (daemon.h): an idle connection costs its descriptor and its
 * record here, not a thread.  The requests run in straight blocking
 * code (the disk I/O no readiness API covers, the payload received and
 * sent within the connection's timeout); a collective waiting for its
 * other participants gives its worker's place back meanwhile
 * (iod_collective.c, clf_daemon_wait_begin).
 *
 * A connection is one view owner: the views it registers are found only
 * through it and all go when it drops.  Requests on one connection are
 * served one after the other, in order, so replies come in request order.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "clf.h"
#include "error.h"
#include "iod_cap.h"
#include "iod_collective.h"
#include "iod_conn.h"
#include "iod_dispatch.h"
#include "iod_lock_ops.h"
#include "iod_fence.h"
#include "iod_log.h"
#include "iod_server.h"

/* Slack of the stop beyond the requests' timeouts, ms. */
#define STOP_POLL_MS 200
/*
 * A connection buffer up to IOD_SMALL_BUF is always kept between
 * requests; bigger ones are charged to the buffer pool, kept while the
 * pool is at most half used, and freed after BIG_BUF_IDLE_MS without a
 * request.
 */
#define BIG_BUF_IDLE_MS 2000

/* Physical memory of this machine, bytes (1 GiB if unknown). */
static size_t machine_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return (size_t)1 << 30;
	return (size_t)pages * (size_t)size;
}

static size_t clamp_size(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void iod_limits_from_config(const struct clf_config *cfg, unsigned max_conns,
			    struct iod_limits *out)
{
	size_t mem = machine_memory();
	struct iod_limits l = {
		.view_memory = (size_t)cfg->iod_view_memory,
		.view_min_share = (size_t)cfg->iod_view_min_share,
		.buffer_memory = (size_t)cfg->iod_buffer_memory,
		.buffer_min_share = (size_t)cfg->iod_buffer_min_share,
	};

	if (!l.view_memory)
		l.view_memory = clamp_size(mem / 16, (size_t)64 << 20,
					   (size_t)8 << 30);
	if (!l.view_min_share)
		l.view_min_share = l.view_memory / max_conns;
	if (!l.buffer_memory)
		l.buffer_memory = clamp_size(mem / 8, (size_t)256 << 20,
					     (size_t)16 << 30);
	if (!l.buffer_min_share)
		l.buffer_min_share = l.buffer_memory / max_conns;
	if (l.buffer_min_share < IOD_SMALL_BUF)
		l.buffer_min_share = IOD_SMALL_BUF;
	*out = l;
}

static const struct clf_daemon_server_ops iod_server_ops;

/*
 * After a reply, a worker watches the connection for its next request
 * without sleeping (daemon.h) when CLF_IOD_LINGER_SPIN_US says how long
 * (0, the default: never), as metad's CLF_METAD_LINGER_SPIN_US; at most
 * half the cores watch at once.  Off by default: for measurements of
 * small calls on machines with idle cores (docs/small-io.md).
 */
static void linger_spin_init(struct clf_daemon_server *net)
{
	const char *v = getenv("CLF_IOD_LINGER_SPIN_US");
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long us = 0;

	if (v && *v)
		us = strtol(v, NULL, 10);
	net->linger_spin_ns = us > 0 ? us * 1000 : 0;
	net->linger_spin_max = cores > 2 ? (unsigned)(cores / 2) : 1;
}

int iod_server_open(struct iod_server *srv, const struct clf_config *cfg,
		    uint32_t index, unsigned max_conns, unsigned workers,
		    const struct iod_hooks *hooks)
{
	const struct clf_transport_ops *t;
	struct iod_view_limits vl;
	char a[32], b[32], c[32], d[32];
	const char *dir;
	int err;

	memset(srv, 0, sizeof(*srv));
	if (index >= cfg->niods)
		return clf_fail(EINVAL,
				"iod: no iod %u in the configuration (it has %u)",
				index, cfg->niods);
	srv->index = index;
	srv->cfg = cfg;
	srv->addr = cfg->iods[index].addr;
	dir = cfg->iods[index].dir;
	srv->max_conns = max_conns ? max_conns : IOD_MAX_CONNS_DEFAULT;
	srv->timeout_ms = cfg->timeout_ms;
	srv->hooks = *hooks;
	srv->start_ms = clf_now_ms();
	srv->auth_methods = clf_config_auth_methods(cfg);
	atomic_init(&srv->stop, false);
	atomic_init(&srv->requests, 0);
	atomic_init(&srv->bytes_read, 0);
	atomic_init(&srv->bytes_written, 0);
	atomic_init(&srv->connections, 0);
	atomic_init(&srv->next_owner, 0);

	t = clf_transport_find(cfg->transport);
	if (!t)
		return -ENOENT;
	err = -pthread_mutex_init(&srv->mutex, NULL);
	if (err)
		return clf_fail_neg(err, "iod: cannot create a mutex");
	err = -pthread_mutex_init(&srv->buf_lock, NULL);
	if (err) {
		clf_fail_neg(err, "iod: cannot create a mutex");
		goto destroy_mutex;
	}
	iod_limits_from_config(cfg, srv->max_conns, &srv->limits);
	iod_pool_init(&srv->bufs, "request buffers", "iod_buffer_memory",
		      srv->limits.buffer_memory, srv->limits.buffer_min_share);
	iod_log("memory lent to clients: views %s (at least %s each), buffers %s (at least %s each)",
		iod_bytes_str(srv->limits.view_memory, a, sizeof(a)),
		iod_bytes_str(srv->limits.view_min_share, b, sizeof(b)),
		iod_bytes_str(srv->limits.buffer_memory, c, sizeof(c)),
		iod_bytes_str(srv->limits.buffer_min_share, d, sizeof(d)));
	err = iod_store_open(dir, 0, &srv->st);
	if (err)
		goto destroy_buf_lock;
	if (hooks->enospc_after)
		iod_log("test hook CLF_TEST_IOD_ENOSPC_AFTER=%" PRIu64 " is on",
			hooks->enospc_after);
	if (hooks->delay_ms)
		iod_log("test hook CLF_TEST_IOD_DELAY_MS=%u is on",
			hooks->delay_ms);
	if (hooks->coll_exit)
		iod_log("test hook CLF_TEST_IOD_COLL_EXIT=1 is on");
	if (hooks->coll_pieces)
		iod_log("test hook CLF_TEST_IOD_COLL_PIECES=%u is on",
			hooks->coll_pieces);
	vl = (struct iod_view_limits){ srv->limits.view_memory,
				       srv->limits.view_min_share };
	err = iod_views_create(&vl, &srv->views);
	if (err)
		goto free_store;
	err = iod_colls_create(dir, &srv->colls);
	if (err)
		goto free_views;
	err = iod_fences_init(&srv->fences);
	if (err)
		goto free_colls;
	err = iod_locking_create(srv, hooks->lock_lease_ms);
	if (err)
		goto destroy_fences;
	if (hooks->lock_lease_ms)
		iod_log("test hook CLF_TEST_IOD_LOCK_LEASE_MS=%u is on",
			hooks->lock_lease_ms);
	snprintf(srv->name, sizeof(srv->name), "iod %u", index);
	if (!workers)
		workers = clf_daemon_workers(cfg->daemon_workers);
	err = clf_daemon_server_open(&srv->net, srv->name, t, srv->addr,
				     srv->max_conns, workers, 0,
				     srv->timeout_ms, &iod_server_ops, srv);
	if (err)
		goto free_locking;
	linger_spin_init(&srv->net);
	return 0;

free_locking:
	iod_locking_free(srv->locking);
destroy_fences:
	iod_fences_destroy(&srv->fences);
free_colls:
	iod_colls_free(srv->colls);
free_views:
	iod_views_free(srv->views);
free_store:
	iod_store_free(srv->st);
destroy_buf_lock:
	pthread_mutex_destroy(&srv->buf_lock);
destroy_mutex:
	pthread_mutex_destroy(&srv->mutex);
	return err;
}

void iod_server_close(struct iod_server *srv)
{
	clf_daemon_server_close(&srv->net);
	iod_locking_free(srv->locking);
	iod_fences_destroy(&srv->fences);
	iod_colls_free(srv->colls);
	iod_views_free(srv->views);
	iod_store_free(srv->st);
	pthread_mutex_destroy(&srv->buf_lock);
	pthread_mutex_destroy(&srv->mutex);
}

void iod_server_stop(struct iod_server *srv)
{
	atomic_store(&srv->stop, true);
}

/* The last error without its reporter, for the log (which names us). */
static const char *last_error(void)
{
	return clf_error_reason();
}

/* The client record of id, with a new reference; NULL: no memory. */
static struct iod_client *client_get(struct iod_server *srv, uint64_t id)
{
	struct iod_client *c;

	pthread_mutex_lock(&srv->mutex);
	for (c = srv->clients; c && c->id != id; c = c->next)
		;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (c) {
			c->id = id;
			c->next = srv->clients;
			srv->clients = c;
		}
	}
	if (c)
		c->conns++;
	pthread_mutex_unlock(&srv->mutex);
	return c;
}

static void client_put(struct iod_server *srv, struct iod_client *c)
{
	struct iod_client **pp;

	if (!c)
		return;
	pthread_mutex_lock(&srv->mutex);
	if (--c->conns == 0) {
		for (pp = &srv->clients; *pp != c; pp = &(*pp)->next)
			;
		*pp = c->next;
		free(c);
	}
	pthread_mutex_unlock(&srv->mutex);
}

/*
 * Who the connection's memory is charged to (iod_client): its MUNGE
 * user, whose connections share one share, or itself.  0 or -ENOMEM.
 */
static int client_join(struct iod_conn *cn, const struct clf_auth_peer *peer)
{
	struct iod_server *srv = cn->srv;
	uint64_t id = cn->owner;
	int err;

	if (peer->method == CLF_AUTH_MUNGE) {
		id = IOD_CLIENT_UID | peer->uid;
		err = iod_views_bind(srv->views, cn->owner, id);
		if (err)
			return err;
	}
	cn->client = client_get(srv, id);
	return cn->client ? 0 : clf_fail(ENOMEM, "iod: out of memory");
}

/* The handshake of a new connection: 0 once it is served, else < 0. */
static int handshake(struct iod_conn *cn)
{
	struct iod_server *srv = cn->srv;
	struct clf_admit_question ask = { .a = &srv->net.admit,
					  .ticket = cn->ticket };
	struct clf_auth_peer peer = { .admit = clf_admit_ask,
				      .admit_arg = &ask };
	int err;

	/* A short deadline until the peer proved it holds the secret; the
	 * wait for its answer does not hold a worker (daemon.h). */
	clf_conn_set_timeout(cn->c, srv->timeout_ms < CLF_ADMIT_HANDSHAKE_MS ?
				srv->timeout_ms : CLF_ADMIT_HANDSHAKE_MS);
	clf_conn_want_protection(cn->c, srv->cfg->protection);
	clf_daemon_wait_begin();
	err = clf_auth_server_peer(cn->c, &srv->cfg->secret, srv->auth_methods,
				   &peer);
	clf_daemon_wait_end();
	clf_conn_set_timeout(cn->c, srv->timeout_ms);
	if (!err && peer.method == CLF_AUTH_MUNGE) {
		snprintf(cn->role, sizeof(cn->role), "%.20s uid %u", peer.role,
			 peer.uid);
		cn->caps = calloc(1, sizeof(*cn->caps));
		if (!cn->caps)
			err = clf_fail(ENOMEM, "iod: out of memory");
		else
			cn->caps->uid = peer.uid;
	} else if (!err) {
		memcpy(cn->role, peer.role, sizeof(peer.role));
	}
	clf_admit_settle(&ask, err);
	cn->phase = IOD_CONN_SETTLED;
	if (err) {
		/* A port probe (connect, close) is not worth a line. */
		if (err != -ECONNRESET)
			clf_daemon_server_log_refusal(&srv->net,
						      clf_conn_peer(cn->c),
						      last_error());
		return err;
	}
	if (client_join(cn, &peer)) {
		iod_log("%s (%s): %s; closing", clf_conn_peer(cn->c), cn->role,
			last_error());
		clf_admit_leave(&srv->net.admit);
		iod_view_release_owner(srv->views, cn->owner);
		return -ENOMEM;
	}
	cn->phase = IOD_CONN_SERVED;
	pthread_mutex_lock(&srv->mutex);
	cn->next_served = srv->served;
	srv->served = cn;
	pthread_mutex_unlock(&srv->mutex);
	atomic_fetch_add(&srv->connections, 1);
	iod_log_debug("%s (%s): connected", clf_conn_peer(cn->c), cn->role);
	return 0;
}

/* A new connection's record (daemon.h: ops->open); no I/O yet. */
static void *conn_open(void *arg, struct clf_conn *c, uint64_t ticket)
{
	struct iod_server *srv = arg;
	struct iod_conn *cn = calloc(1, sizeof(*cn));
	char why[128];

	if (!cn) {
		iod_log_error("%s: refused: out of memory", clf_conn_peer(c));
		clf_admit_handshake_done(&srv->net.admit, ticket, false, why,
					 sizeof(why));
		clf_conn_close(c);
		return NULL;
	}
	cn->srv = srv;
	cn->c = c;
	cn->ticket = ticket;
	cn->owner = atomic_fetch_add(&srv->next_owner, 1) + 1;
	snprintf(cn->role, sizeof(cn->role), "?");
	return cn;
}

/*
 * Bytes came on the connection (daemon.h: ops->serve): its handshake,
 * then one request a call.  0 to go on, else close it.
 */
static int conn_serve(void *arg, void *conn)
{
	struct iod_conn *cn = conn;
	struct clf_proto_header h;
	int rc;

	(void)arg;
	if (cn->phase == IOD_CONN_NEW)
		return handshake(cn);
	rc = clf_conn_recv_header(cn->c, &h);
	if (rc == -ECONNRESET)
		return 1;	/* the client left */
	if (rc) {
		iod_log("%s (%s): %s; closing", clf_conn_peer(cn->c), cn->role,
			last_error());
		return rc;
	}
	return iod_serve(cn, &h);
}

/* No request for BIG_BUF_IDLE_MS: its big buffers go back to the pool. */
static void conn_idle(void *arg, void *conn)
{
	(void)arg;
	iod_conn_trim(conn, true);
}

static void conn_close(void *arg, void *conn)
{
	struct iod_server *srv = arg;
	struct iod_conn *cn = conn;
	char why[128];
	int released;

	if (cn->phase == IOD_CONN_NEW) {
		clf_admit_handshake_done(&srv->net.admit, cn->ticket, false,
					 why, sizeof(why));
	} else if (cn->phase == IOD_CONN_SERVED) {
		pthread_mutex_lock(&srv->mutex);
		for (struct iod_conn **pp = &srv->served; *pp;
		     pp = &(*pp)->next_served) {
			if (*pp == cn) {
				*pp = cn->next_served;
				break;
			}
		}
		pthread_mutex_unlock(&srv->mutex);
		iod_lock_conn_closed(cn);
		iod_fence_owner_closed(&srv->fences, cn->owner);
		released = iod_view_release_owner(srv->views, cn->owner);
		atomic_fetch_sub(&srv->connections, 1);
		clf_admit_leave(&srv->net.admit);
		iod_log_debug("%s (%s): closed after %" PRIu64 " requests; %d views released",
			clf_conn_peer(cn->c), cn->role, cn->nrequests,
			released);
	}
	clf_conn_close(cn->c);
	iod_conn_free_buffers(cn);
	client_put(srv, cn->client);
	free(cn->caps);
	free(cn);
}

static void on_stop(void *arg)
{
	iod_server_stop(arg);
}

static const struct clf_daemon_server_ops iod_server_ops = {
	.open = conn_open,
	.serve = conn_serve,
	.idle = conn_idle,
	.idle_ms = BIG_BUF_IDLE_MS,
	.close = conn_close,
	.stop = on_stop,
};

int iod_server_run(struct iod_server *srv, int stop_fd)
{
	int err = clf_daemon_server_run(&srv->net, stop_fd);

	/* A request in progress or a collective wait needs up to a
	 * timeout; collectives notice the stop within their poll. */
	if (clf_daemon_server_drain(&srv->net, 2 * srv->timeout_ms +
				    2 * STOP_POLL_MS))
		return -EBUSY;
	return err;
}
