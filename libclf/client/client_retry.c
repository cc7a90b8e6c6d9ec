// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_retry.c -- metad requests that change something, sent with a
 * request identity and retried with the same one while their outcome is
 * in doubt (include/clf_proto.h, "Retries"; include/clf.h says what is
 * still in doubt).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client_i.h"
#include "error.h"

/* The first protocol minor with request identities. */
#define REQ_ID_PROTO_MINOR 4

/* Pauses between tries after a connection that could not be made (a
 * metad restarting); after a timeout the wait has happened already. */
static const int retry_pause_ms[] = { 50, 100, 200, 400, 800, 1000 };

bool clf_op_has_reqid(uint16_t op)
{
	switch (op) {
	case CLF_PROTO_OP_CREATE:
	case CLF_PROTO_OP_MKDIR:
	case CLF_PROTO_OP_RENAME:
	case CLF_PROTO_OP_UNLINK:
	case CLF_PROTO_OP_RMDIR:
	case CLF_PROTO_OP_SETATTR:
	case CLF_PROTO_OP_SET_LAYOUT:
	case CLF_PROTO_OP_SYMLINK:
	case CLF_PROTO_OP_LINK:
	case CLF_PROTO_OP_MKNOD:
		return true;
	default:
		return false;
	}
}

/* A random non-zero client identity; 0 when the system has none to
 * give (then requests go without identities). */
static uint64_t draw_client_id(void)
{
	uint64_t v = 0;

	while (!v) {
		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			return 0;
	}
	return v;
}

int clf_client_reqid(struct clf_client *cl, struct clf_proto_reqid *out)
{
	pid_t pid = getpid();

	pthread_mutex_lock(&cl->reqid_lock);
	/* A forked child is another client: its numbers would repeat the
	 * parent's. */
	if (cl->reqid_pid != pid || !cl->client_id) {
		cl->client_id = draw_client_id();
		cl->reqid_pid = pid;
		cl->next_seq = 1;
	}
	out->client = cl->client_id;
	out->seq = cl->next_seq++;
	pthread_mutex_unlock(&cl->reqid_lock);
	return out->client ? 0 : -ENOSYS;
}

/*
 * One try on the locked peer p: the request with its identity (when the
 * connection's minor knows them), and its reply.  *sent_id tells whether
 * the identity went out.
 */
static int try_once(struct clf_peer *p, uint16_t op,
		    const struct clf_proto_reqid *rid, const struct iovec *iov,
		    int iovcnt, void **payload, uint32_t *len, bool *sent_id)
{
	uint8_t idbuf[CLF_PROTO_REQ_ID_SIZE];
	struct wire_writer w = { idbuf, sizeof(idbuf), 0 };
	struct iovec v[8];
	uint64_t id;
	int err;

	*sent_id = false;
	if (!p->conn || clf_conn_minor(p->conn) < REQ_ID_PROTO_MINOR ||
	    iovcnt >= (int)(sizeof(v) / sizeof(v[0])))
		goto plain;
	err = clf_proto_reqid_encode(&w, rid);
	if (err)
		return err;
	v[0] = (struct iovec){ idbuf, sizeof(idbuf) };
	memcpy(v + 1, iov, iovcnt * sizeof(*iov));
	*sent_id = true;
	err = clf_peer_send_flags(p, op, CLF_PROTO_FLAG_REQ_ID, v, iovcnt + 1,
				  &id);
	goto recv;
plain:
	err = clf_peer_send(p, op, iov, iovcnt, &id);
recv:
	if (!err)
		err = clf_peer_recv(p, op, id, payload, len);
	return err;
}

static int64_t max_ms(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int clf_peer_call_retry(struct clf_peer *p, uint16_t op,
			    const struct iovec *iov, int iovcnt,
			    void **payload, uint32_t *len)
{
	struct clf_client *cl = clf_client_instance;
	int64_t hang_ms = (int64_t)CLF_META_RETRY_TIMEOUTS * cl->cfg->timeout_ms;
	int64_t within = max_ms(hang_ms,
			       (int64_t)cl->cfg->recovery_grace_s * 1000);
	int64_t grace_ms = (int64_t)cl->cfg->recovery_grace_s * 1000;
	int64_t start = clf_now_ms(), deadline = start + within;
	const char *name = clf_proto_op_name(op);
	struct clf_proto_reqid rid;
	bool in_doubt = false;
	int tries = 0, attempts = 0, err;

	if (clf_client_reqid(cl, &rid))
		return clf_peer_call(p, op, iov, iovcnt, payload, len);
	for (;;) {
		bool sent_id, lost, stale;

		attempts++;
		err = clf_peer_lock(p);
		if (!err) {
			tries++;
			err = try_once(p, op, &rid, iov, iovcnt, payload, len,
				       &sent_id);
			/* A reply of any status leaves the connection; a
			 * lost one took it down. */
			lost = err && !p->conn &&
			       (err == -ETIMEDOUT || err == -EHOSTDOWN);
			stale = lost && clf_peer_stale(p);
			clf_peer_unlock(p);
			if (!lost)
				return err;
			if (sent_id)
				in_doubt = true;
			else if (stale && tries == 1)
				continue;	/* a kept connection the
						   daemon had closed: the
						   request never got there */
			else
				break;	/* no identity: a retry could do it
					   twice */
		} else if (!in_doubt) {
			/* Nothing was sent: wait for a restarting metad
			 * (client_grace.c) for the grace time only. */
			if (err != -EHOSTDOWN)
				return err;
			if (clf_now_ms() >= start + grace_ms)
				return attempts > 1 ? clf_grace_gave_up(err, grace_ms)
						    : err;
		} else if (err != -ETIMEDOUT && err != -EHOSTDOWN) {
			break;		/* refused, not just away */
		}
		/* A metad that hangs is given 3 timeouts; one that is
		 * down (restarting) the grace as well. */
		if (clf_now_ms() >= (err == -ETIMEDOUT ? start + hang_ms
							: deadline))
			break;
		if (err != -ETIMEDOUT) {
			int n = sizeof(retry_pause_ms) / sizeof(retry_pause_ms[0]);

			pause_ms(retry_pause_ms[attempts < n ? attempts - 1 : n - 1]);
		}
	}
	if (!in_doubt)
		return err;
	return clf_fail_append(err,
			       " (%s: no reply in %d tries within %lld ms: it may or may not have been applied)",
			       name ? name : "request", tries,
			       (long long)(clf_now_ms() - start));
}
