// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lock.c -- byte-range locks by inode: SETLK (and its blocking loop),
 * GETLK and UNLOCK_OWNER on the client's lock connection to metad
 * (client.h: metad_locks).
 *
 * Why a blocking lock is a loop of bounded waits rather than one long
 * request: a request must be answered within the configured timeout or
 * the connection is dropped -- and with it every lock of the process.
 * metad waits at most about a second per request and answers -EAGAIN;
 * each answer also gives this side a moment to notice an interrupt.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "client_i.h"
#include "clf_ll.h"
#include "error.h"

/* What a blocking SETLK asks metad to wait per request, ms: metad caps
 * it too.  Half the configured timeout at most, so that the answer
 * always comes back in time. */
#define LOCK_WAIT_MS 1000

/* The first protocol minor with locks (include/clf_proto.h). */
#define LOCK_PROTO_MINOR 1

/*
 * Locks lost with their connection.  metad keeps a lock as long as the
 * connection that took it; a restarted metad, or a new connection after
 * a broken one, knows none of them, and another process may take them
 * meanwhile.  They are not taken again behind the holder's back (the
 * data they guarded may have changed under another holder): the
 * holder's next lock call fails once with -ENOLCK saying so (clf.h,
 * "Locks").  held: the (inode, owner) pairs that may hold locks, each
 * with the generation of the connection it was taken on: that of the
 * inode's metad (client_route.c), one lock connection per metad.
 */
struct held {
	uint64_t ino, owner;
	uint64_t gen;
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held;	/* held_lock */
static size_t nheld, held_cap;	/* held_lock */
static pid_t held_pid;		/* held_lock: a forked child holds none */

static void held_reset_if_forked(void)
{
	if (held_pid != getpid()) {
		held_pid = getpid();
		nheld = 0;
	}
}

static void held_note(uint64_t ino, uint64_t owner, uint64_t gen, bool add)
{
	size_t i;

	pthread_mutex_lock(&held_lock);
	held_reset_if_forked();
	for (i = 0; i < nheld; i++)
		if (held[i].ino == ino && held[i].owner == owner)
			break;
	if (!add && i < nheld) {
		held[i] = held[--nheld];
	} else if (add && i == nheld) {
		if (nheld == held_cap) {
			size_t cap = held_cap ? 2 * held_cap : 8;
			struct held *n = realloc(held, cap * sizeof(*n));

			if (!n)
				goto out;	/* a loss then goes untold */
			held = n;
			held_cap = cap;
		}
		held[nheld++] = (struct held){ ino, owner, gen };
	}
out:
	pthread_mutex_unlock(&held_lock);
}

/* On locked peer p, before op: -ENOLCK once when locks of this process
 * were taken on an earlier connection. */
static int held_check(struct clf_peer *p, uint16_t op)
{
	size_t lost = 0;

	pthread_mutex_lock(&held_lock);
	held_reset_if_forked();
	/* Only the locks kept by p's metad (p->src.index, the metad its
	 * inode carries) went with an earlier connection of p. */
	for (size_t i = 0; i < nheld && op != CLF_PROTO_OP_UNLOCK_OWNER;) {
		if (held[i].gen != p->generation &&
		    CLF_PROTO_INO_METAD(held[i].ino) == p->src.index) {
			held[i] = held[--nheld];
			lost++;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&held_lock);
	if (!lost)
		return 0;
	return clf_fail_source(&p->src, -ENOLCK,
			"the connection that held this process's byte-range locks broke (metad restarted?): its locks on %zu file(s) are lost and another process may have taken them; take them again",
			lost);
}

static int lock_call(uint16_t op, clf_encode_fn enc, const void *msg,
		     void **reply, uint32_t *rlen, uint64_t *gen)
{
	struct clf_client *cl;
	struct clf_peer *p;
	struct iovec iov;
	uint64_t id;
	void *buf;
	size_t len;
	int err;

	err = clf_client_get(&cl);
	if (err)
		return err;
	/* Every lock request starts with its inode (clf_proto_lock_req,
	 * clf_proto_unlock_owner_req): its metad keeps its locks. */
	p = clf_client_metad_locks(cl, *(const uint64_t *)msg);
	err = clf_encode(enc, msg, &buf, &len);
	if (err)
		return err;
	iov = (struct iovec){ buf, len };
	for (int attempt = 0; attempt < 2; attempt++) {
		bool stale;

		err = clf_peer_lock(p);
		if (err)
			break;
		if (clf_conn_minor(p->conn) < LOCK_PROTO_MINOR) {
			clf_peer_unlock(p);
			err = clf_fail_source(&p->src, -ENOLCK,
					      "speaks protocol 1.%u, which has no locks",
					      clf_conn_minor(p->conn));
			break;
		}
		err = held_check(p, op);
		if (err) {
			clf_peer_unlock(p);
			break;
		}
		err = clf_peer_send(p, op, &iov, 1, &id);
		if (!err)
			err = clf_peer_recv(p, op, id, reply, rlen);
		if (!err && op == CLF_PROTO_OP_SETLK)
			*gen = p->generation;
		/* A kept connection that went stale: the request did not
		 * get there; ask again on a fresh one (which finds any
		 * locks of ours gone, held_check). */
		stale = err && clf_peer_stale(p);
		clf_peer_unlock(p);
		if (!stale)
			break;
	}
	free(buf);
	return err;
}

static int enc_setlk(struct wire_writer *w, const void *m)
{
	return clf_proto_setlk_req_encode(w, m);
}

static int enc_getlk(struct wire_writer *w, const void *m)
{
	return clf_proto_getlk_req_encode(w, m);
}

static int enc_unlock_owner(struct wire_writer *w, const void *m)
{
	return clf_proto_unlock_owner_req_encode(w, m);
}

/* struct flock's types to the protocol's. */
static int proto_type(short type, uint32_t *out)
{
	switch (type) {
	case F_RDLCK:
		*out = CLF_PROTO_LOCK_READ;
		return 0;
	case F_WRLCK:
		*out = CLF_PROTO_LOCK_WRITE;
		return 0;
	case F_UNLCK:
		*out = CLF_PROTO_LOCK_UNLOCK;
		return 0;
	}
	return clf_fail(EINVAL, "clf: lock: unknown lock type %d", type);
}

static int lock_req(uint64_t ino, const struct clf_ll_lock *lk,
		    struct clf_proto_lock_req *req)
{
	*req = (struct clf_proto_lock_req){
		.ino = ino,
		.owner = lk->owner,
		.start = lk->start,
		.length = lk->length,
		.pid = lk->pid,
	};
	if (lk->start > CLF_PROTO_LOCK_OFFSET_MAX ||
	    lk->length > CLF_PROTO_LOCK_OFFSET_MAX - lk->start + 1)
		return clf_fail(EINVAL,
				"clf: lock: %llu bytes at %llu end past the largest file offset",
				(unsigned long long)lk->length,
				(unsigned long long)lk->start);
	return proto_type(lk->type, &req->type);
}

static uint32_t wait_ms(void)
{
	struct clf_client *cl = clf_client_instance;
	int half = cl ? cl->cfg->timeout_ms / 2 : LOCK_WAIT_MS;

	return half < 1 ? 1 : half < LOCK_WAIT_MS ? (uint32_t)half
						  : LOCK_WAIT_MS;
}

int clf_ll_setlk(uint64_t ino, const struct clf_ll_lock *lk, bool wait,
		 clf_ll_interrupted_fn interrupted, void *arg)
{
	struct clf_proto_lock_req req;
	uint64_t gen = 0;
	uint32_t len;
	void *reply;
	int err = lock_req(ino, lk, &req);

	if (err)
		return err;
	if (wait && req.type != CLF_PROTO_LOCK_UNLOCK) {
		req.flags = CLF_PROTO_LOCK_WAIT;
		req.wait_ms = wait_ms();
	}
	for (;;) {
		err = lock_call(CLF_PROTO_OP_SETLK, enc_setlk, &req, &reply,
				&len, &gen);
		if (!err) {
			free(reply);
			/* Held now; or none left after an unlock of all. */
			if (req.type != CLF_PROTO_LOCK_UNLOCK)
				held_note(ino, req.owner, gen, true);
			else if (req.start == 0 && req.length == 0)
				held_note(ino, req.owner, gen, false);
		}
		if (err != -EAGAIN || !req.flags)
			return err;
		if (interrupted && interrupted(arg))
			return clf_fail(EINTR,
					"clf: lock: interrupted while waiting for inode %llu",
					(unsigned long long)ino);
	}
}

int clf_ll_getlk(uint64_t ino, struct clf_ll_lock *lk)
{
	struct clf_proto_lock_holder h;
	struct clf_proto_lock_req req;
	struct wire_reader r;
	uint64_t gen;
	uint32_t len;
	void *reply;
	int err = lock_req(ino, lk, &req);

	if (!err && req.type == CLF_PROTO_LOCK_UNLOCK)
		err = clf_fail(EINVAL, "clf: lock: GETLK needs a read or write lock");
	if (err)
		return err;
	err = lock_call(CLF_PROTO_OP_GETLK, enc_getlk, &req, &reply, &len,
			&gen);
	if (err)
		return err;
	r = (struct wire_reader){ reply, len, 0, false };
	err = clf_proto_lock_holder_decode(&r, &h);
	free(reply);
	if (err)
		return clf_fail_neg(err, "clf: metad sent a malformed GETLK reply: %s",
				    CLF_Last_error());
	lk->type = h.type == CLF_PROTO_LOCK_READ    ? F_RDLCK
		   : h.type == CLF_PROTO_LOCK_WRITE ? F_WRLCK
						    : F_UNLCK;
	if (lk->type != F_UNLCK) {
		lk->start = h.start;
		lk->length = h.length;
		lk->pid = h.pid;
	}
	return 0;
}

int clf_ll_unlock_owner(uint64_t ino, uint64_t owner)
{
	struct clf_proto_unlock_owner_req req = { ino, owner };
	uint64_t gen;
	uint32_t len;
	void *reply;
	int err = lock_call(CLF_PROTO_OP_UNLOCK_OWNER, enc_unlock_owner, &req,
			    &reply, &len, &gen);

	if (!err)
		free(reply);
	/* Released, or gone with their connection: nothing to tell. */
	held_note(ino, owner, 0, false);
	return err;
}
