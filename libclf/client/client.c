// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client.c -- the connections to the daemons: one per daemon, locked by
 * its user, with the caller's identity, replies and retries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "client_i.h"
#include "clf_ll.h"
#include "error.h"

/*
 * The user this thread's metad requests act for, on a connection that
 * holds the secret (clf_proto.h, "Identity"); unset: this process's
 * effective ids.
 */
static __thread struct {
	bool set;
	uint32_t uid, gid;
} act_as;

void clf_ll_act_as(uid_t uid, gid_t gid)
{
	act_as.set = true;
	act_as.uid = uid;
	act_as.gid = gid;
}

/*
 * Connection failures all mean the daemon is not there for us.  An
 * authentication failure was recorded about the connection's address
 * (auth.c): it is said about this daemon instead.
 */
static int down_error(struct clf_peer *p, int err)
{
	char why[128];

	p->timed_out = err == -ETIMEDOUT;
	if (err == -ETIMEDOUT)
		return clf_fail_source(&p->src, -ETIMEDOUT,
				       "did not answer in time");
	if (err == -EACCES || err == -EPROTONOSUPPORT) {
		clf_error_set_source(&p->src);
		return err;
	}
	snprintf(why, sizeof(why), "%s", strerror(-err));
	return clf_fail_source(&p->src, -EHOSTDOWN, "down: %s", why);
}

/*
 * p->conn is read without the lock as a hint (clf_peer_connected), so it
 * is published and cleared with atomic stores.
 */
static void peer_drop(struct clf_peer *p)
{
	struct clf_conn *c = p->conn;

	__atomic_store_n(&p->conn, NULL, __ATOMIC_RELAXED);
	clf_conn_close(c);
}

/*
 * How long a receive from a daemon watches its connection before it
 * sleeps (clf_conn_set_recv_spin): on a machine of RECV_SPIN_CPUS cores
 * or more, RECV_SPIN_US, where a sleeping client's wake-up (a virtual
 * machine's idle core) was much of a small request's round trip and
 * cores are to spare; on fewer cores none, where the daemon that
 * answers needs the core the client would hold.  CLF_CLIENT_RECV_SPIN_US
 * chooses otherwise (0: never), for measurements.
 */
#define RECV_SPIN_US 50
#define RECV_SPIN_CPUS 8

static int64_t recv_spin_ns(void)
{
	static int64_t ns = -1;
	const char *v;

	if (ns >= 0)
		return ns;
	v = getenv("CLF_CLIENT_RECV_SPIN_US");
	if (v && *v)
		ns = strtol(v, NULL, 10) * 1000;
	else
		ns = sysconf(_SC_NPROCESSORS_ONLN) >= RECV_SPIN_CPUS
			     ? RECV_SPIN_US * 1000 : 0;
	if (ns < 0)
		ns = 0;
	return ns;
}

int clf_peer_lock(struct clf_peer *p)
{
	struct clf_client *cl = clf_client_instance;
	struct clf_conn *c;
	int err;

	pthread_mutex_lock(&p->lock);
	/*
	 * Between requests nothing may arrive on a connection: if it polls
	 * readable, the daemon closed it (it restarted, or dropped us).
	 */
	p->reused = p->conn && !clf_conn_broken(p->conn) &&
		    clf_conn_poll(p->conn, 0) == 0;
	if (p->reused)
		return 0;
	peer_drop(p);
	if (p->connecting)
		pthread_mutex_lock(p->connecting);
	err = clf_conn_connect(cl->transport, p->d->addr, cl->cfg->timeout_ms,
			       &c);
	if (!err) {
		__atomic_store_n(&p->conn, c, __ATOMIC_RELAXED);
		clf_conn_want_protection(p->conn, cl->cfg->protection);
		clf_conn_set_recv_spin(p->conn, recv_spin_ns());
		err = clf_auth_client(p->conn, cl->cfg->has_secret
						       ? &cl->cfg->secret : NULL,
				      "client");
		if (err)
			peer_drop(p);
	}
	if (p->connecting)
		pthread_mutex_unlock(p->connecting);
	if (err) {
		pthread_mutex_unlock(&p->lock);
		return down_error(p, err);
	}
	/* Unique among all lanes: a view handle names its connection. */
	/* Read unlocked to find a handle's lane (clf_client_iod_of_gen). */
	__atomic_store_n(&p->generation,
			 atomic_fetch_add(&cl->next_generation, 1) + 1,
			 __ATOMIC_RELAXED);
	return 0;
}

void clf_peer_unlock(struct clf_peer *p)
{
	pthread_mutex_unlock(&p->lock);
}

/*
 * Send h with the cred prefix of the user this thread acts for in front
 * of the body.  Root without clf_ll_act_as sends none: metad takes a
 * request without it as root's.
 */
static int send_cred(struct clf_peer *p, struct clf_proto_header *h,
		     const struct iovec *iov, int iovcnt)
{
	uint32_t uid = act_as.set ? act_as.uid : geteuid();
	uint32_t gid = act_as.set ? act_as.gid : getegid();
	uint8_t prefix[CLF_PROTO_CRED_SIZE];
	struct wire_writer w = { prefix, sizeof(prefix), 0 };
	struct iovec v[CLF_CONN_MAX_IOV];

	if (uid == 0 && gid == 0)
		return clf_conn_send(p->conn, h, iov, iovcnt);
	if (iovcnt + 1 > CLF_CONN_MAX_IOV)
		return clf_fail(EINVAL, "clf: request in %d pieces", iovcnt);
	wire_put_u32(&w, uid);
	wire_put_u32(&w, gid);
	v[0] = (struct iovec){ prefix, sizeof(prefix) };
	memcpy(v + 1, iov, (size_t)iovcnt * sizeof(*iov));
	h->flags |= CLF_PROTO_FLAG_CRED;
	return clf_conn_send(p->conn, h, v, iovcnt + 1);
}

int clf_peer_send(struct clf_peer *p, uint16_t op, const struct iovec *iov,
		  int iovcnt, uint64_t *id)
{
	return clf_peer_send_flags(p, op, 0, iov, iovcnt, id);
}

int clf_peer_send_flags(struct clf_peer *p, uint16_t op, uint16_t flags,
			const struct iovec *iov, int iovcnt, uint64_t *id)
{
	struct clf_proto_header h;
	int err;

	if (!p->conn)	/* dropped by an earlier failure under this lock */
		return clf_fail_source(&p->src, -EHOSTDOWN,
				       "the connection was lost");
	clf_proto_header_init(&h, op, clf_conn_next_id(p->conn));
	h.flags = flags;
	if (p->acts_for && (clf_client_instance->cfg->has_secret ||
			    clf_client_instance->test_act_as) &&
	    clf_conn_minor(p->conn) >= 7)
		err = send_cred(p, &h, iov, iovcnt);
	else
		err = clf_conn_send(p->conn, &h, iov, iovcnt);
	if (err) {
		peer_drop(p);
		return down_error(p, err);
	}
	*id = h.id;
	return 0;
}

/*
 * The daemon p answered status < 0 with body: its message, in its own
 * words, or the errno's when it sent none.  Returns status.
 */
static int answer_error(struct clf_peer *p, int status, const void *body,
			uint32_t len)
{
	struct wire_reader r = { .buf = body, .len = len };
	struct clf_error_source src = p->src;
	struct clf_proto_error e;

	if (clf_proto_error_decode(&r, &e) || !e.message.len)
		return clf_fail_source(&p->src, status, "%s",
				       strerror(-status));
	src.answered = true;
	return clf_fail_source(&src, status, "%.*s", (int)e.message.len,
			       e.message.ptr);
}

int clf_peer_recv(struct clf_peer *p, uint16_t op, uint64_t id,
		  void **payload, uint32_t *len)
{
	struct clf_proto_header h;
	void *body = NULL;
	int err;

	if (!p->conn)
		return clf_fail_source(&p->src, -EHOSTDOWN,
				       "the connection was lost");
	err = clf_conn_recv(p->conn, &h, &body);
	if (err) {
		peer_drop(p);
		return down_error(p, err);
	}
	if (h.id != id || h.opcode != op || !(h.flags & CLF_PROTO_FLAG_REPLY)) {
		free(body);
		peer_drop(p);
		return clf_fail_source(&p->src, -EPROTO,
				       "answered request %llu with %llu",
				       (unsigned long long)id,
				       (unsigned long long)h.id);
	}
	if (h.status < 0) {
		err = answer_error(p, h.status, body, h.payload_len);
		free(body);
		return err;
	}
	*payload = body;
	*len = h.payload_len;
	return 0;
}

int clf_peer_recv_data(struct clf_peer *p, uint16_t op, uint64_t id,
		       void *dest, uint32_t len)
{
	struct iovec iov = { dest, len };

	return clf_peer_recv_datav(p, op, id, &iov, 1, len);
}

/* clf_peer_recv_datav, or, with got, a reply of at most len bytes
 * (iovcnt 1): *got says how many came. */
static int recv_data(struct clf_peer *p, uint16_t op, uint64_t id,
		     const struct iovec *iov, int iovcnt, uint32_t len,
		     uint32_t *got)
{
	struct clf_proto_header h;
	uint8_t lenbuf[4];
	struct wire_reader r = { .buf = lenbuf, .len = sizeof(lenbuf) };
	int err;

	if (!p->conn)
		return clf_fail_source(&p->src, -EHOSTDOWN,
				       "the connection was lost");
	err = clf_conn_recv_header(p->conn, &h);
	if (err)
		goto drop;
	if (h.id != id || h.opcode != op || !(h.flags & CLF_PROTO_FLAG_REPLY)) {
		peer_drop(p);
		return clf_fail_source(&p->src, -EPROTO,
				       "answered request %llu with %llu",
				       (unsigned long long)id,
				       (unsigned long long)h.id);
	}
	if (h.status < 0) {
		/* The error body: read it as usual for the message. */
		void *body = malloc(h.payload_len ? h.payload_len : 1);

		if (!body) {
			peer_drop(p);
			return clf_fail(ENOMEM, "clf: out of memory");
		}
		err = clf_conn_recv_payload(p->conn, body, h.payload_len);
		if (err) {
			free(body);
			goto drop;
		}
		err = answer_error(p, h.status, body, h.payload_len);
		free(body);
		return err;
	}
	if (h.payload_len > sizeof(lenbuf) + (uint64_t)len ||
	    h.payload_len < sizeof(lenbuf) ||
	    (!got && h.payload_len != sizeof(lenbuf) + (uint64_t)len)) {
		peer_drop(p);
		return clf_fail_source(&p->src, -EPROTO,
				       "sent %u bytes, expected %s%u",
				       h.payload_len, got ? "at most " : "",
				       len + 4);
	}
	len = h.payload_len - sizeof(lenbuf);
	if (got)
		*got = len;
	err = clf_conn_recv_payload(p->conn, lenbuf, sizeof(lenbuf));
	if (!err && wire_get_u32(&r) != len) {
		peer_drop(p);
		return clf_fail_source(&p->src, -EPROTO,
				       "sent a malformed data reply");
	}
	if (!err)
		err = iovcnt == 1 ? clf_conn_recv_payload(p->conn, iov->iov_base,
							  len)
				  : clf_conn_recv_payload_iov(p->conn, iov,
							      iovcnt);
	if (!err)
		return 0;
drop:
	peer_drop(p);
	return down_error(p, err);
}

int clf_peer_recv_datav(struct clf_peer *p, uint16_t op, uint64_t id,
			const struct iovec *iov, int iovcnt, uint32_t len)
{
	return recv_data(p, op, id, iov, iovcnt, len, NULL);
}

int clf_peer_recv_data_upto(struct clf_peer *p, uint16_t op, uint64_t id,
			    void *dest, uint32_t max, uint32_t *got)
{
	struct iovec iov = { dest, max };

	return recv_data(p, op, id, &iov, 1, max, got);
}

int clf_peer_call(struct clf_peer *p, uint16_t op, const struct iovec *iov,
		  int iovcnt, void **payload, uint32_t *len)
{
	bool replayable = clf_op_replayable(op), again, stale;
	struct clf_grace g;
	uint64_t id;
	int err;

	clf_grace_begin(&g);
	do {
		err = clf_peer_lock(p);
		if (err) {
			/* Nothing was sent: wait for the daemon, except
			 * to release a view, which died with it. */
			stale = false;
			again = op != CLF_PROTO_OP_VIEW_RELEASE;
			continue;
		}
		err = clf_peer_send(p, op, iov, iovcnt, &id);
		if (!err)
			err = clf_peer_recv(p, op, id, payload, len);
		stale = err && clf_peer_stale(p);
		/* A reply, even an error, keeps the connection. */
		again = stale || (replayable && !p->conn);
		clf_peer_unlock(p);
	} while (again && clf_grace_again(&g, err, stale));
	return err;
}

int clf_encode(clf_encode_fn encode, const void *msg, void **buf,
	       size_t *len)
{
	struct wire_writer w = { 0 };
	int err = encode(&w, msg);

	if (err)
		return err;
	w.buf = malloc(w.pos ? w.pos : 1);
	if (!w.buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	w.cap = w.pos;
	w.pos = 0;
	err = encode(&w, msg);
	if (err) {
		free(w.buf);
		return err;
	}
	*buf = w.buf;
	*len = w.pos;
	return 0;
}
