// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_lock_ops.c -- extent locks on the wire, at the iod (clf_proto.h,
 * "Extent locks"; the rules of the manager are iod_lock.h's).
 *
 * A caching client's callback connection is found by its client id in a
 * short list.  A REVOKE is sent on it under the list's mutex, so that the
 * connection cannot close under a send (its close takes the mutex to
 * leave the list); a REVOKE is one small message, which the socket's
 * buffer takes without waiting for the client.
 *
 * Lockless accesses are guarded per file: any lock of another client on
 * the file that conflicts with the access is revoked, whatever its
 * range.  That is more than needed where a caching client and a lockless
 * one use disjoint parts of a file, never less.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "error.h"
#include "iod_cap.h"
#include "iod_lock.h"
#include "iod_lock_ops.h"
#include "iod_log.h"

struct callback {
	uint64_t client;
	struct iod_conn *cn;		/* borrowed; leaves at its close */
	struct callback *next;
};

struct iod_locking {
	struct iod_lockmgr mgr;
	pthread_mutex_t mutex;		/* of callbacks */
	struct callback *callbacks;	/* mutex */
};

static struct callback **find(struct iod_locking *lk, uint64_t client)
{
	struct callback **pp;

	for (pp = &lk->callbacks; *pp; pp = &(*pp)->next)
		if ((*pp)->client == client)
			break;
	return pp;
}

/* ops.revoke: REVOKE on client's callback connection. */
static int send_revoke(void *arg, uint64_t client, uint64_t id,
		       uint64_t file, uint32_t sub, int64_t lo, int64_t hi)
{
	struct iod_locking *lk = arg;
	struct clf_proto_revoke m = { id, file, sub, lo, hi };
	struct clf_proto_header h;
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct callback *cb;
	int err;

	err = clf_proto_revoke_encode(&w, &m);
	if (err)
		return err;
	clf_proto_header_init(&h, CLF_PROTO_OP_REVOKE, 0);
	pthread_mutex_lock(&lk->mutex);
	cb = *find(lk, client);
	err = cb ? clf_conn_send_buf(cb->cn->c, &h, body, w.pos) : -ENOTCONN;
	pthread_mutex_unlock(&lk->mutex);
	return err;
}

static void evicted(void *arg, uint64_t client)
{
	iod_log("caching client %016" PRIx64 " evicted: it did not release a revoked lock in time",
		client);
}

int iod_locking_create(struct iod_server *srv, unsigned lease_ms)
{
	struct iod_locking *lk = calloc(1, sizeof(*lk));
	struct iod_lock_ops ops = { send_revoke, evicted, lk };
	int err;

	if (!lk)
		return clf_fail(ENOMEM, "iod: out of memory");
	err = -pthread_mutex_init(&lk->mutex, NULL);
	if (err) {
		free(lk);
		return clf_fail_neg(err, "iod: cannot create a mutex");
	}
	if (!lease_ms)
		lease_ms = srv->timeout_ms / 2 > 0 ? srv->timeout_ms / 2 : 1;
	err = iod_lockmgr_init(&lk->mgr, &ops, lease_ms);
	if (err) {
		pthread_mutex_destroy(&lk->mutex);
		free(lk);
		return clf_fail_neg(err, "iod: cannot create the lock manager");
	}
	/* Revocations ask back from the conflicting access up (iod_lock.h):
	 * clients that give back the whole lock stay correct. */
	lk->mgr.shrink = 1;
	srv->locking = lk;
	return 0;
}

void iod_locking_free(struct iod_locking *lk)
{
	struct callback *cb, *next;

	if (!lk)
		return;
	/* For whoever tunes: how often caching clients passed locks. */
	if (lk->mgr.revocations || lk->mgr.evictions)
		iod_log("extent locks: %" PRIu64 " revocations sent, %" PRIu64
			" caching clients evicted", lk->mgr.revocations,
			lk->mgr.evictions);
	for (cb = lk->callbacks; cb; cb = next) {
		next = cb->next;
		free(cb);
	}
	iod_lockmgr_destroy(&lk->mgr);
	pthread_mutex_destroy(&lk->mutex);
	free(lk);
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int iod_lock_guard(struct iod_conn *cn, const struct clf_proto_header *h,
		   const uint8_t *body, size_t len)
{
	struct iod_locking *lk = cn->srv->locking;
	struct iod_view *v;
	uint64_t file;
	uint32_t handle;
	int write = 0;

	if (cn->lock_callback)
		return clf_fail(EPROTO,
				"iod: %s on a callback connection, which carries REVOKEs only",
				clf_proto_op_name(h->opcode));
	if (!lk || atomic_load(&lk->mgr.count) == 0)
		return 0;
	/*
	 * A caching client's own connections (bound by a LOCK_* request)
	 * access only under its locks, which no other client's conflicting
	 * lock overlaps: revoking would only make two flushing clients wait
	 * on each other's locks elsewhere in the file until the lease.
	 */
	if (cn->lock_client)
		return 0;
	switch (h->opcode) {
	case CLF_PROTO_OP_SUB_WRITE:
	case CLF_PROTO_OP_SUB_WRITEV:
	case CLF_PROTO_OP_TRUNCATE:
	case CLF_PROTO_OP_REMOVE:
		write = 1;
		/* fall through */
	case CLF_PROTO_OP_SUB_READ:
	case CLF_PROTO_OP_SUB_READV:
	case CLF_PROTO_OP_SUB_SIZES:
		if (len < 8)
			return 0;	/* malformed: the handler refuses it */
		file = get_u64(body);
		break;
	case CLF_PROTO_OP_VIEW_WRITE:
		write = 1;
		/* fall through */
	case CLF_PROTO_OP_VIEW_READ:
		if (len < 4)
			return 0;
		handle = body[0] | body[1] << 8 | body[2] << 16 |
			 (uint32_t)body[3] << 24;
		if (iod_view_lookup(cn->srv->views, handle, cn->owner, &v))
			return 0;	/* the handler says there is no such view */
		file = v->file;
		iod_view_put(v);
		break;
	default:
		return 0;
	}
	iod_lock_revoke_range(&lk->mgr, cn->lock_client, file,
			      IOD_LOCK_ALL_SUBFILES, write, 0, IOD_LOCK_EOF);
	return 0;
}

bool iod_locks_held(const struct iod_server *srv)
{
	return srv->locking && atomic_load(&srv->locking->mgr.count) != 0;
}

void iod_lock_conn_closed(struct iod_conn *cn)
{
	struct iod_locking *lk = cn->srv->locking;
	struct callback **pp, *cb = NULL;
	int n;

	if (!lk || !cn->lock_callback)
		return;
	pthread_mutex_lock(&lk->mutex);
	pp = find(lk, cn->lock_client);
	if (*pp && (*pp)->cn == cn) {
		cb = *pp;
		*pp = cb->next;
	}
	pthread_mutex_unlock(&lk->mutex);
	free(cb);
	n = iod_lock_drop_client(&lk->mgr, cn->lock_client);
	if (n)
		iod_log("caching client %016" PRIx64 " gone: %d locks dropped",
			cn->lock_client, n);
}

/*
 * May cn speak for client?  A client id is a random number the client
 * picks, not a credential: checked against nothing, a user who learnt
 * one (it crosses the network in every LOCK_* request) could release
 * that client's locks -- its kept bytes then stale for every reader,
 * its written ones overwriting later writes -- or take its place on a
 * callback connection.  So a connection checked by capabilities
 * (MUNGE, iod_cap.h) speaks only for a client whose callback connection
 * here, if any, is of its own uid; one that holds the secret may
 * speak for any.  A client with no callback connection holds no lock.
 * 0, or -EACCES with the reason.  Called with lk->mutex held.
 */
static int check_owner(struct iod_locking *lk, struct iod_conn *cn,
		       uint64_t client, const char *op)
{
	struct callback *cb = *find(lk, client);

	if (!cn->caps || !cb)
		return 0;
	if (!cb->cn->caps)
		return clf_fail(EACCES,
				"iod: %s for client %016" PRIx64 ": that client's callback connection holds the secret, this one is uid %u's",
				op, client, cn->caps->uid);
	if (cb->cn->caps->uid != cn->caps->uid)
		return clf_fail(EACCES,
				"iod: %s for client %016" PRIx64 ": that client's callback connection is uid %u's, this one is uid %u's",
				op, client, cb->cn->caps->uid, cn->caps->uid);
	return 0;
}

/*
 * The client a LOCK_* request speaks for becomes the connection's, when
 * the connection may speak for it (check_owner).
 */
static int bind_client(struct iod_locking *lk, struct iod_conn *cn,
		       uint64_t client, const char *op)
{
	int err;

	if (cn->lock_client && cn->lock_client != client)
		return clf_fail(EINVAL,
				"iod: %s for client %016" PRIx64 " on a connection of client %016" PRIx64,
				op, client, cn->lock_client);
	pthread_mutex_lock(&lk->mutex);
	err = check_owner(lk, cn, client, op);
	pthread_mutex_unlock(&lk->mutex);
	if (err)
		return err;
	cn->lock_client = client;
	return 0;
}

int iod_op_lock_callback(struct iod_conn *cn, struct iod_req *rq,
			 struct iod_reply *rep)
{
	struct iod_locking *lk = cn->srv->locking;
	struct clf_proto_lock_callback_req m;
	struct callback **pp, *cb;
	int err = clf_proto_lock_callback_req_decode(&rq->r, &m);

	if (err)
		return err;
	if (cn->lock_client && cn->lock_client != m.client)
		return clf_fail(EINVAL,
				"iod: LOCK_CALLBACK for client %016" PRIx64 " on a connection of client %016" PRIx64,
				m.client, cn->lock_client);
	cb = malloc(sizeof(*cb));
	if (!cb)
		return clf_fail(ENOMEM, "iod: out of memory");
	pthread_mutex_lock(&lk->mutex);
	pp = find(lk, m.client);
	/* Another user's client: refused as any of its LOCK_* would be. */
	err = check_owner(lk, cn, m.client, "LOCK_CALLBACK");
	if (!err && *pp)
		err = clf_fail(EEXIST,
			       "iod: client %016" PRIx64 " has a callback connection already",
			       m.client);
	if (err) {
		pthread_mutex_unlock(&lk->mutex);
		free(cb);
		return err;
	}
	*cb = (struct callback){ m.client, cn, NULL };
	*pp = cb;
	/* Bound only once registered: a refused request binds nothing. */
	cn->lock_client = m.client;
	cn->lock_callback = true;
	pthread_mutex_unlock(&lk->mutex);
	return 0;
}

int iod_op_lock_enqueue(struct iod_conn *cn, struct iod_req *rq,
			struct iod_reply *rep)
{
	struct iod_locking *lk = cn->srv->locking;
	struct clf_proto_lock_enqueue_req m;
	struct clf_proto_lock_grant g;
	struct iod_lock_grant out;
	struct iod_shape shape;
	struct wire_writer w;
	int err = clf_proto_lock_enqueue_req_decode(&rq->r, &m);

	if (err)
		return err;
	err = bind_client(lk, cn, m.client, "LOCK_ENQUEUE");
	if (err)
		return err;
	pthread_mutex_lock(&lk->mutex);
	err = *find(lk, m.client) ? 0 : -ENOTCONN;
	pthread_mutex_unlock(&lk->mutex);
	if (err)
		return clf_fail(ENOTCONN,
				"iod: LOCK_ENQUEUE: client %016" PRIx64 " has no callback connection (LOCK_CALLBACK)",
				m.client);
	if (!m.has_stride)
		m.stride = m.block = 0;
	if (!m.in_file)
		m.phase = 0;
	shape = (struct iod_shape){ m.lo, m.hi, m.stride, m.block, m.in_file,
				    m.phase };
	err = iod_lock_enqueue_shape(&lk->mgr, m.client, m.file, m.subfile,
				     m.mode, &shape, &out);
	if (err)
		return clf_fail_neg(err, "iod: LOCK_ENQUEUE on file %" PRIu64
				    " subfile %u", m.file, m.subfile);
	g = (struct clf_proto_lock_grant){ out.id, out.lo, out.hi,
					   m.has_stride, m.stride, m.block,
					   m.in_file, m.phase };
	w = iod_reply_writer(rep);
	return iod_reply_done(rep, &w, clf_proto_lock_grant_encode(&w, &g));
}

int iod_op_lock_release(struct iod_conn *cn, struct iod_req *rq,
			struct iod_reply *rep)
{
	struct iod_locking *lk = cn->srv->locking;
	struct clf_proto_lock_release_req m;
	int err = clf_proto_lock_release_req_decode(&rq->r, &m);

	if (err)
		return err;
	err = bind_client(lk, cn, m.client, "LOCK_RELEASE");
	if (err || m.id == 0)
		return err;	/* lock 0 is none: the request only binds */
	err = iod_lock_release(&lk->mgr, m.client, m.id);
	if (err)
		return clf_fail_neg(err, "iod: LOCK_RELEASE of lock %" PRIu64
				    ": not held (evicted?)", m.id);
	return 0;
}
