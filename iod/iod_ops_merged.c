// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_ops_merged.c -- VIEW_MERGED: the collective requests that a
 * forwarder (`clf forward`) held for several of the connections it
 * relays here, in one message (include/clf_proto.h, "Merged
 * collectives").
 *
 * Each piece is served as its own request would have been on its own
 * connection: that connection's capabilities and views, its fences.
 * Then all pieces join their operations at once (iod_coll_join_many),
 * so the operation counts them as it would count their requests, and
 * the answers go back in one reply for the forwarder to hand out.
 *
 * All or nothing before any I/O: a piece that its connection could not
 * have sent (no such connection, no capability, no such view, a range
 * that does not hold its data) refuses the whole message, which then
 * did nothing: the forwarder sends each request on its own connection,
 * where it gets its own answer.  The same when caching clients hold
 * extent locks here (a relayed piece would have to wait for their
 * revocations on its own connection's behalf) and when the buffer pool
 * cannot hold the reads' bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "iod_cap.h"
#include "iod_collective.h"
#include "iod_conn.h"
#include "iod_lock_ops.h"
#include "iod_log.h"
#include "iod_ops.h"
#include "iod_xfer.h"

/* One piece, checked. */
struct merged {
	struct clf_proto_view_io_req io;	/* data borrowed (the body) */
	int write;
	struct iod_view *v;		/* a reference; NULL until found */
	uint64_t owner;			/* of its relayed connection */
	int fence;			/* iod_fence_enter's slot */
	int64_t count;			/* its packed bytes */
	uint8_t *rd;			/* a read: u32 length, then the bytes
					   (in the reads' buffer) */
	int64_t result;
	struct clf_error why;
};

/* The host part of a peer "host:port" or "[v6]:port" (len bytes). */
static size_t host_len(const char *peer)
{
	const char *colon = strrchr(peer, ':');

	return colon ? (size_t)(colon - peer) : strlen(peer);
}

/*
 * Find the relayed connection of a piece -- from our peer's host, at
 * port -- and check the piece as that connection's request: *owner.
 */
static int relayed_check(struct iod_conn *cn, uint16_t port,
			 const struct clf_proto_header *h,
			 const struct clf_proto_bytes *body, uint64_t *owner)
{
	struct iod_server *srv = cn->srv;
	const char *me = clf_conn_peer(cn->c);
	size_t hl = host_len(me);
	struct iod_conn *o;
	int err = 0;

	pthread_mutex_lock(&srv->mutex);
	for (o = srv->served; o; o = o->next_served) {
		const char *p = clf_conn_peer(o->c);

		if (o != cn && host_len(p) == hl && !strncmp(p, me, hl) &&
		    atoi(p + hl + 1) == port)
			break;
	}
	if (!o)
		err = clf_fail(ENOENT,
			       "iod: VIEW_MERGED: no connection from port %u of the forwarder",
			       port);
	else if (o->lock_callback || o->lock_client)
		err = clf_fail(EBUSY,
			       "iod: VIEW_MERGED: the connection from port %u caches under extent locks",
			       port);
	else
		err = iod_cap_check(o, h, body->ptr, body->len);
	if (!err)
		*owner = o->owner;
	pthread_mutex_unlock(&srv->mutex);
	return err;
}

/* Decode and check piece p into *g (all or nothing, see above). */
static int piece_check(struct iod_conn *cn,
		       const struct clf_proto_merged_piece *p,
		       struct merged *g)
{
	struct clf_proto_header h = { .opcode = p->opcode };
	struct wire_reader r = { p->body.ptr, p->body.len, 0, false };
	int err;

	g->write = p->opcode == CLF_PROTO_OP_VIEW_WRITE;
	if (g->write)
		err = clf_proto_view_write_req_decode(&r, &g->io);
	else if (p->opcode == CLF_PROTO_OP_VIEW_READ)
		err = clf_proto_view_read_req_decode(&r, &g->io);
	else
		return clf_fail(EINVAL,
				"iod: VIEW_MERGED: a piece of opcode %u, not VIEW_WRITE or VIEW_READ",
				p->opcode);
	if (err)
		return err;
	if (!(g->io.flags & CLF_PROTO_VIEW_COLLECTIVE) ||
	    (g->io.flags & CLF_PROTO_VIEW_AGAIN))
		return clf_fail(EINVAL,
				"iod: VIEW_MERGED: a piece that is not a first collective request");
	err = relayed_check(cn, p->port, &h, &p->body, &g->owner);
	if (err)
		return err;
	err = iod_view_lookup(cn->srv->views, g->io.handle, g->owner, &g->v);
	if (err)
		return err;
	g->count = CLF_Mapping_count(g->v->map, g->io.lo, g->io.hi);
	if (g->count < 0 || (g->write && g->count != (int64_t)g->io.data.len))
		return clf_fail(EINVAL,
				"iod: VIEW_MERGED: view %" PRIu32 " range [%" PRId64 ", %" PRId64 ") holds %" PRId64 " bytes here, not %" PRIu32,
				g->io.handle, g->io.lo, g->io.hi, g->count,
				g->io.data.len);
	return iod_fence_enter(&cn->srv->fences, cn->srv->views, g->owner, &h,
			       p->body.ptr, p->body.len, &g->fence);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The reads' buffer: per read piece its u32 length and its bytes. */
static int reads_buffer(struct iod_conn *cn, struct merged *g, uint32_t n)
{
	size_t total = 0;
	uint8_t *buf;
	void *out;
	int err;

	for (uint32_t i = 0; i < n; i++)
		if (!g[i].write)
			total += 4 + (size_t)g[i].count;
	if (total > CLF_PROTO_DATA_MAX)
		return clf_fail(E2BIG,
				"iod: VIEW_MERGED: its reads move more than one reply holds");
	err = iod_conn_data_buffer(cn, total, &out);
	if (err)
		return err;
	buf = out;
	memset(buf, 0, total);
	for (uint32_t i = 0; i < n; i++) {
		if (g[i].write)
			continue;
		g[i].rd = buf;
		put_le32(buf, (uint32_t)g[i].count);
		buf += 4 + g[i].count;
	}
	return 0;
}

/* Join every piece; a write its operation did not take is written on
 * its own, as iod_ops_io.c does with a held piece. */
static int join_all(struct iod_conn *cn, struct merged *g, uint32_t n)
{
	struct iod_coll_piece *pc = calloc(n, sizeof(*pc));
	int64_t *res = calloc(n, sizeof(*res));
	struct clf_error *why = calloc(n, sizeof(*why));
	int err = 0;

	if (!pc || !res || !why) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		pc[i] = (struct iod_coll_piece){
			g[i].v, g[i].io.coll_tag, g[i].io.participants,
			g[i].write, g[i].io.lo, g[i].io.hi,
			g[i].write ? (void *)g[i].io.data.ptr : g[i].rd + 4,
			(size_t)g[i].count };
	iod_coll_join_many(cn->srv, pc, n, res, why);
	for (uint32_t i = 0; i < n; i++) {
		struct iod_dest d = { .v = g[i].v, .lo = g[i].io.lo,
				      .hi = g[i].io.hi };
		int64_t r = res[i], own;

		g[i].result = r;
		g[i].why = why[i];
		if (r >= 0) {
			atomic_fetch_add(g[i].write ? &cn->srv->bytes_written
						    : &cn->srv->bytes_read,
					 (uint64_t)r);
			continue;
		}
		if (!g[i].write || !(r == -ETIMEDOUT || r == -ESHUTDOWN ||
				     r == -EINVAL || r == -E2BIG))
			continue;
		own = iod_xfer_store(cn, &d, pc[i].data, pc[i].len);
		if (own < 0) {
			g[i].result = own;
			g[i].why = *clf_error_last();
		}
	}
out:
	free(pc);
	free(res);
	free(why);
	return err;
}

/* The reply: per piece its status and the body of its own answer. */
static int reply_all(struct iod_reply *rep, struct merged *g, uint32_t n)
{
	struct clf_proto_merged_answer *a = calloc(n, sizeof(*a));
	uint8_t (*small)[2 + CLF_PROTO_ERRMSG_MAX] = calloc(n, sizeof(*small));
	struct clf_proto_view_merged_rep m = { n, a };
	struct wire_writer w;
	size_t cap = 4;
	int err;

	if (!a || !small) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (g[i].result < 0) {
			char msg[CLF_PROTO_ERRMSG_MAX];
			struct wire_writer ew = { small[i], sizeof(small[i]), 0 };
			struct clf_proto_error e;

			clf_error_restore(&g[i].why);
			iod_errmsg(msg, sizeof(msg));
			e.message = clf_proto_str_of(msg);
			if (e.message.len > CLF_PROTO_ERRMSG_MAX)
				e.message.len = CLF_PROTO_ERRMSG_MAX;
			if (clf_proto_error_encode(&ew, &e) || ew.pos > ew.cap)
				ew.pos = 0;
			a[i] = (struct clf_proto_merged_answer){
				(uint32_t)-g[i].result, { small[i], ew.pos } };
		} else if (g[i].write) {
			put_le32(small[i], (uint32_t)g[i].result);
			a[i] = (struct clf_proto_merged_answer){
				0, { small[i], 4 } };
		} else {
			a[i] = (struct clf_proto_merged_answer){
				0, { g[i].rd, 4 + (uint32_t)g[i].count } };
		}
		cap += 8 + a[i].body.len;
	}
	err = iod_reply_alloc(&w, cap);
	if (!err)
		err = iod_reply_owned(rep, &w,
				      clf_proto_view_merged_rep_encode(&w, &m));
out:
	free(a);
	free(small);
	return err;
}

int iod_op_view_merged(struct iod_conn *cn, struct iod_req *rq,
		       struct iod_reply *rep)
{
	struct clf_proto_view_merged_req m;
	struct merged *g = NULL;
	uint32_t checked = 0;
	int err;

	if (cn->caps)
		return clf_fail(EACCES,
				"iod: VIEW_MERGED is a forwarder's, which holds the secret");
	err = clf_proto_view_merged_req_decode(&rq->r, &m);
	if (err)
		return err;
	iod_hook_coll_message(cn->srv, "VIEW_MERGED", m.n);
	if (iod_locks_held(cn->srv)) {
		err = clf_fail(EBUSY,
			       "iod: VIEW_MERGED: clients hold extent locks here; send the requests on their own connections");
		goto release;
	}
	g = calloc(m.n, sizeof(*g));
	if (!g) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto release;
	}
	for (; checked < m.n; checked++) {
		g[checked].fence = -1;
		err = piece_check(cn, &m.pieces[checked], &g[checked]);
		if (err) {
			checked++;	/* its view and fence go below */
			goto put;
		}
	}
	err = reads_buffer(cn, g, m.n);
	if (!err)
		err = join_all(cn, g, m.n);
	if (!err)
		err = reply_all(rep, g, m.n);
put:
	for (uint32_t i = 0; i < checked; i++) {
		iod_fence_leave(&cn->srv->fences, g[i].fence);
		iod_view_put(g[i].v);
	}
	free(g);
release:
	clf_proto_view_merged_req_release(&m);
	return err;
}
