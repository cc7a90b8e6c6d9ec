// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_server.c -- metad's connections: authentication, and the request
 * of each event.  The listener, the epoll set and the pool of workers
 * are the daemon runtime's (daemon.h): an idle connection costs its
 * descriptor and its record here, not a thread, so one metad serves the
 * connections of thousands of processes.  A request is one short store
 * transaction, served in straight blocking code by a worker; one that
 * waits for others (a byte-range lock held by another client, its group
 * commit's fdatasync) gives its worker's place back meanwhile
 * (clf_daemon_wait_begin), so that the next requests are read and form
 * the next group (mds_group.c).
 *
 * Replies on one connection come in request order: a connection is
 * watched again only once its request was answered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission.h"
#include "auth.h"
#include "daemon.h"
#include "error.h"
#include "mds_dispatch.h"
#include "mds_lock.h"
#include "mds_ops.h"
#include "mds_server.h"

/* Stack of a worker: requests keep at most a few paths of
 * CLF_PROTO_PATH_MAX bytes on it; bigger things are on the heap. */
#define MDS_THREAD_STACK (1u << 20)
/* How long an over-the-limit peer may take to say HELLO, to be told. */
#define MDS_REFUSE_WAIT_MS 250

struct mds_server {
	struct mds_ctx *ctx;		/* borrowed */
	struct clf_daemon_server net;	/* listener, workers */
	pthread_mutex_t lock;
	uint64_t last_conn_id;		/* of the newest connection; lock */
};

/* Where a connection is in its life. */
enum mds_conn_phase {
	MDS_CONN_NEW,		/* accepted; its admission ticket open */
	MDS_CONN_SETTLED,	/* the handshake failed; ticket settled */
	MDS_CONN_SERVED,	/* authenticated, holding a slot */
};

/* One connection, served by one worker at a time (daemon.h). */
struct mds_conn {
	enum mds_conn_phase phase;
	struct mds_server *srv;		/* borrowed */
	struct clf_conn *c;		/* owned */
	uint64_t id;			/* byte-range locks belong to it */
	char peer[CLF_ADDR_MAX];
	char role[CLF_PROTO_ROLE_MAX + 1];
	uint64_t ticket;		/* of its handshake (admission.h) */
	struct clf_auth_peer auth;	/* who authenticated */
	/* The user of the requests: MUNGE's, resolved once; for a peer
	 * with the secret, the last cred prefix's (resolving groups
	 * takes the group database, so it is kept while the prefix
	 * repeats) or root. */
	struct mds_cred cred;
	bool cred_set;			/* cred holds a resolved user */
	struct mds_session s;		/* once authenticated */
};

static void *conn_open(void *arg, struct clf_conn *c, uint64_t ticket);
static int conn_serve(void *arg, void *conn);
static void conn_close(void *arg, void *conn);
static void refuse(void *arg, struct clf_conn *c, const char *why);

static const struct clf_daemon_server_ops mds_server_ops = {
	.open = conn_open,
	.serve = conn_serve,
	.close = conn_close,
	.refuse = refuse,
};

/*
 * After a reply, a worker watches the connection for its next request
 * without sleeping (daemon.h) when CLF_METAD_LINGER_SPIN_US says how
 * long (0, the default: never).  At most half the cores watch at once,
 * the other half left to the clients.  Off by default: measured on 16
 * cores with the group-commit watch (mds_group.c), opens from 16 MPI
 * processes fell (73k -> 42k/s, one run each) and native ones did not
 * rise; a 2-core machine has no core to spare for it.
 */
static void linger_spin_init(struct clf_daemon_server *net)
{
	const char *v = getenv("CLF_METAD_LINGER_SPIN_US");
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long us = 0;

	if (v && *v)
		us = strtol(v, NULL, 10);
	net->linger_spin_ns = us > 0 ? us * 1000 : 0;
	net->linger_spin_max = cores > 2 ? (unsigned)(cores / 2) : 1;
}

int mds_server_open(struct mds_ctx *ctx, const struct clf_transport_ops *t,
		    const char *addr, unsigned workers,
		    struct mds_server **out)
{
	struct mds_server *srv = calloc(1, sizeof(*srv));
	int err;

	if (!srv)
		return clf_fail(ENOMEM, "metad: out of memory");
	srv->ctx = ctx;
	err = clf_daemon_server_open(&srv->net, "metad", t, addr,
				     mds_fault_max_connections(MDS_MAX_CONNECTIONS),
				     workers ? workers :
				     clf_daemon_workers(ctx->cfg->daemon_workers),
				     MDS_THREAD_STACK, ctx->cfg->timeout_ms,
				     &mds_server_ops, srv);
	if (err) {
		/* The transport names the address already. */
		err = mds_fail_ctx(err, "metad");
		free(srv);
		return err;
	}
	pthread_mutex_init(&srv->lock, NULL);
	linger_spin_init(&srv->net);
	*out = srv;
	return 0;
}

unsigned long mds_server_spin_served(struct mds_server *srv)
{
	return srv ? atomic_load(&srv->net.spin_served) : 0;
}

void mds_server_close(struct mds_server *srv)
{
	if (!srv)
		return;
	clf_daemon_server_close(&srv->net);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

/* ------------------------------------------------------------------ */
/* One connection                                                      */
/* ------------------------------------------------------------------ */

/* Send the reply to req: the body, or the error message when status < 0. */
static int send_reply(struct mds_conn *mc, const struct clf_proto_header *req,
		      int status, const struct mds_reply *rep)
{
	uint8_t ebuf[CLF_PROTO_ERRMSG_MAX + 2 + 1];
	char msg[CLF_PROTO_ERRMSG_MAX + 1];
	struct wire_writer w = { ebuf, sizeof(ebuf), 0 };
	struct clf_proto_header h;
	const void *body = rep->buf;
	size_t len = rep->len;
	int err;

	clf_proto_header_init_reply(&h, req, status);
	/* The protocol answers these two with another opcode, even to
	 * refuse them. */
	if (req->opcode == CLF_PROTO_OP_HELLO)
		h.opcode = CLF_PROTO_OP_CHALLENGE;
	else if (req->opcode == CLF_PROTO_OP_RESPONSE)
		h.opcode = CLF_PROTO_OP_AUTH_OK;
	if (status < 0) {
		struct clf_proto_error e;

		snprintf(msg, sizeof(msg), "%s", CLF_Last_error());
		e.message = clf_proto_str_of(msg);
		clf_proto_error_encode(&w, &e);
		body = ebuf;
		len = w.pos;
	}
	err = clf_conn_send_buf(mc->c, &h, body, len);
	if (!err)
		atomic_fetch_add(&mc->srv->ctx->bytes_out,
				 CLF_PROTO_HEADER_SIZE + len);
	return err;
}

/*
 * The user request h acts for (clf_proto.h, "Identity"), its cred prefix
 * taken off *h and *body.  A MUNGE peer may not name one (-EPERM, logged:
 * only a peer with the secret is trusted to act for others).
 */
static int request_cred(struct mds_conn *mc, struct clf_proto_header *h,
			const uint8_t **body, const struct mds_cred **out)
{
	const struct clf_config *cfg = mc->srv->ctx->cfg;
	struct wire_reader r = { *body, h->payload_len, 0, false };
	uint32_t uid, gid;

	if (!(h->flags & CLF_PROTO_FLAG_CRED)) {
		if (mc->auth.method == CLF_AUTH_MUNGE)
			*out = &mc->cred;
		else if (cfg->root_squash)
			goto resolve_root;
		else
			*out = &mds_cred_root;
		return 0;
	}
	if (mc->auth.method != CLF_AUTH_SECRET) {
		mds_log("refused a request from %s (%s, uid %u): it names a user to act for, and only peers with the secret may",
			mc->peer, mc->role, mc->auth.uid);
		return clf_fail(EPERM,
				"metad: operation not permitted: a MUNGE-authenticated client acts for its own user only");
	}
	uid = wire_get_u32(&r);
	gid = wire_get_u32(&r);
	if (r.bad)
		return clf_fail(EPROTO, "metad: cred prefix cut short");
	*body += CLF_PROTO_CRED_SIZE;
	h->payload_len -= CLF_PROTO_CRED_SIZE;
	goto resolve;
resolve_root:
	uid = gid = 0;
resolve:
	if (!mc->cred_set || mc->auth.uid != uid || mc->auth.gid != gid) {
		mds_cred_resolve(&mc->cred, uid, gid, cfg->root_squash);
		mc->auth.uid = uid;
		mc->auth.gid = gid;
		mc->cred_set = true;
	}
	*out = &mc->cred;
	return 0;
}

/* Read, serve and answer one request whose header is h.  Returns 0 to
 * go on, or a negative errno after which the connection is closed. */
static int serve_one(struct mds_conn *mc, struct mds_session *s,
		     const struct clf_proto_header *h)
{
	struct mds_ctx *ctx = mc->srv->ctx;
	struct clf_proto_header body_h = *h;
	struct mds_reply rep = { .buf = NULL };
	const uint8_t *body;
	uint8_t *payload;
	int status, err;

	payload = malloc(h->payload_len ? h->payload_len : 1);
	if (!payload)
		return clf_fail(ENOMEM,
				"metad: out of memory for a request of %u bytes",
				h->payload_len);
	err = clf_conn_recv_payload(mc->c, payload, h->payload_len);
	if (err)
		goto free_payload;
	atomic_fetch_add(&ctx->bytes_in,
			 CLF_PROTO_HEADER_SIZE + h->payload_len);
	atomic_fetch_add(&ctx->requests, 1);
	body = payload;
	status = request_cred(mc, &body_h, &body, &s->cred);
	if (!status)
		status = mds_ops_handle(s, &body_h, body, &rep);
	if (rep.drop)
		err = clf_fail(ECONNABORTED,
			       "the reply to %s was dropped, as CLF_TEST_METAD_DROP_REPLIES asked",
			       clf_proto_op_name(h->opcode));
	else
		err = send_reply(mc, h, status, &rep);
	free(rep.buf);
free_payload:
	free(payload);
	return err;
}

/* One request (daemon.h: ops->serve): 0 to go on, else close. */
static int serve_request(struct mds_conn *mc)
{
	struct clf_proto_header h;
	int err;

	err = clf_conn_recv_header(mc->c, &h);
	if (err == -ECONNRESET)
		return 1;	/* the client left: nothing to say */
	if (err) {
		mds_log("closing the connection from %s (%s): %s",
			mc->peer, mc->role, CLF_Last_error());
		return err;
	}
	if (h.flags & CLF_PROTO_FLAG_REPLY) {
		mds_log("closing the connection from %s (%s): it sent a %s reply, metad asks nothing",
			mc->peer, mc->role,
			clf_proto_op_name(h.opcode) ?: "unknown");
		return -EPROTO;
	}
	err = serve_one(mc, &mc->s, &h);
	if (err)
		mds_log("closing the connection from %s (%s): %s",
			mc->peer, mc->role, CLF_Last_error());
	return err;
}

/*
 * Byte-range locks live as long as the connection that took them: a
 * client that exits or is killed leaves none behind, and its waiters
 * are woken.
 */
static void release_locks(struct mds_conn *mc)
{
	unsigned n = mds_locks_release_conn(mc->srv->ctx->locks, mc->id);

	if (n)
		mds_log("connection from %s (%s) closed: released its %u byte-range locks",
			mc->peer, mc->role, n);
}

/* The handshake of a new connection: 0 once it is served, else < 0. */
static int handshake(struct mds_conn *mc)
{
	struct mds_server *srv = mc->srv;
	struct mds_ctx *ctx = srv->ctx;
	struct clf_admit_question ask = { .a = &srv->net.admit,
					  .ticket = mc->ticket };
	int err;

	clf_conn_set_max_payload(mc->c, MDS_REQUEST_MAX);
	/* A short deadline until the peer proved it holds the secret. */
	clf_conn_set_timeout(mc->c, (unsigned)ctx->cfg->timeout_ms <
			     mds_fault_handshake_ms(CLF_ADMIT_HANDSHAKE_MS)
			     ? ctx->cfg->timeout_ms
			     : (int)mds_fault_handshake_ms(CLF_ADMIT_HANDSHAKE_MS));
	clf_conn_want_protection(mc->c, ctx->cfg->protection);
	mc->auth.admit = clf_admit_ask;
	mc->auth.admit_arg = &ask;
	/* The wait for the peer's answer does not hold a worker. */
	clf_daemon_wait_begin();
	err = clf_auth_server_peer(mc->c, &ctx->cfg->secret, ctx->auth_methods,
				   &mc->auth);
	clf_daemon_wait_end();
	mc->auth.admit = NULL;
	mc->auth.admit_arg = NULL;
	if (!err) {
		memcpy(mc->role, mc->auth.role, sizeof(mc->role));
		if (mc->auth.method == CLF_AUTH_MUNGE) {
			/* Log lines name the user. */
			snprintf(mc->role, sizeof(mc->role), "%.20s uid %u",
				 mc->auth.role, mc->auth.uid);
			mds_cred_resolve(&mc->cred, mc->auth.uid, mc->auth.gid,
					 ctx->cfg->root_squash);
			mc->cred_set = true;
		}
	}
	clf_conn_set_timeout(mc->c, ctx->cfg->timeout_ms);
	clf_admit_settle(&ask, err);
	mc->phase = MDS_CONN_SETTLED;
	if (err == -ECONNRESET) {
		/* A port probe, a client that gave up, or a handshake cut
		 * off for a newer one: nothing refused. */
		return err;
	} else if (err) {
		clf_daemon_server_log_refusal(&srv->net, mc->peer,
					      CLF_Last_error());
		return err;
	}
	mc->phase = MDS_CONN_SERVED;
	mc->s = (struct mds_session){
		.ctx = ctx, .peer = mc->peer, .role = mc->role,
		.conn_id = mc->id, .cred = &mds_cred_root,
		.trusted = mc->auth.method == CLF_AUTH_SECRET,
		.auth_uid = mc->auth.method == CLF_AUTH_MUNGE ? mc->auth.uid : 0,
		.minor = clf_conn_minor(mc->c),
	};
	atomic_fetch_add(&ctx->connections, 1);
	return 0;
}

static int conn_serve(void *arg, void *conn)
{
	struct mds_conn *mc = conn;

	(void)arg;
	if (mc->phase == MDS_CONN_NEW)
		return handshake(mc);
	return serve_request(mc);
}

static void conn_close(void *arg, void *conn)
{
	struct mds_server *srv = arg;
	struct mds_conn *mc = conn;
	char why[128];

	if (mc->phase == MDS_CONN_NEW) {
		clf_admit_handshake_done(&srv->net.admit, mc->ticket, false,
					 why, sizeof(why));
	} else if (mc->phase == MDS_CONN_SERVED) {
		release_locks(mc);
		atomic_fetch_sub(&srv->ctx->connections, 1);
		clf_admit_leave(&srv->net.admit);
	}
	clf_conn_close(mc->c);
	free(mc);
}

/* ------------------------------------------------------------------ */
/* Accepting (the loop is the daemon runtime's, daemon.h)              */
/* ------------------------------------------------------------------ */

/*
 * Over the limits: answer the peer's HELLO with -EAGAIN and the reason,
 * so that its authentication fails saying why.  The wait for the HELLO
 * is short, since the acceptor waits with it.
 */
static void refuse(void *arg, struct clf_conn *c, const char *why)
{
	struct clf_proto_header h, rh;
	uint8_t buf[CLF_AUTH_MAX_PAYLOAD];
	uint8_t ebuf[CLF_AUTH_MAX_PAYLOAD];
	struct wire_writer w = { ebuf, sizeof(ebuf), 0 };
	struct mds_server *srv = arg;
	struct clf_proto_error e;
	char msg[256];

	(void)why;
	snprintf(msg, sizeof(msg),
		 "metad: %u connections open, the most it serves; try again later",
		 srv->net.max_conns);
	clf_conn_set_timeout(c, MDS_REFUSE_WAIT_MS);
	clf_conn_set_max_payload(c, CLF_AUTH_MAX_PAYLOAD);
	if (clf_conn_recv_header_any_major(c, &h) ||
	    h.major != CLF_PROTO_VERSION_MAJOR ||
	    h.opcode != CLF_PROTO_OP_HELLO ||
	    clf_conn_recv_payload(c, buf, h.payload_len))
		return;
	e.message = clf_proto_str_of(msg);
	clf_proto_error_encode(&w, &e);
	clf_proto_header_init_reply(&rh, &h, -EAGAIN);
	rh.opcode = CLF_PROTO_OP_CHALLENGE;
	(void)clf_conn_send_buf(c, &rh, ebuf, w.pos);
}

/* A new connection's record (daemon.h: ops->open); no I/O yet. */
static void *conn_open(void *arg, struct clf_conn *c, uint64_t ticket)
{
	struct mds_server *srv = arg;
	struct mds_conn *mc = calloc(1, sizeof(*mc));
	char why[128];

	if (!mc) {
		clf_log(CLF_LOG_ERROR, "refused the connection from %s: out of memory",
			clf_conn_peer(c));
		clf_admit_handshake_done(&srv->net.admit, ticket, false, why,
					 sizeof(why));
		clf_conn_close(c);
		return NULL;
	}
	pthread_mutex_lock(&srv->lock);
	mc->id = ++srv->last_conn_id;
	pthread_mutex_unlock(&srv->lock);
	mc->srv = srv;
	mc->c = c;
	mc->ticket = ticket;
	snprintf(mc->peer, sizeof(mc->peer), "%s", clf_conn_peer(c));
	snprintf(mc->role, sizeof(mc->role), "unauthenticated");
	return mc;
}

int mds_server_run(struct mds_server *srv, int stop_fd)
{
	int err = clf_daemon_server_run(&srv->net, stop_fd);

	/* Every request in progress ends within the configured timeout;
	 * metad waits for them all (their LMDB transactions), then closes
	 * the connections. */
	clf_daemon_server_drain(&srv->net, -1);
	return err;
}
