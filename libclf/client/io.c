// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * io.c -- reads and writes through views.
 *
 * An access of view bytes [lo, hi) is cut into pieces of at most
 * CLF_PROTO_DATA_MAX view bytes.  For each piece and each subfile the
 * view touches, the bytes of that subfile are gathered from the user
 * buffer into one packed buffer (when the view falls contiguously on the
 * subfile this is the user's bytes themselves, in one run) and sent with
 * (view handle, lo, hi): the iod expands the range through the projection
 * it stored when the view was registered.  Requests to every iod go out
 * before any reply is read, so the iods work in parallel.  Reads are the
 * mirror image.  Bytes before the layout's displacement (the head) are
 * plain subfile ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "client_i.h"
#include "error.h"
#include "xcache.h"
#include "mapping_prog.h"
#include "type.h"

static int enc_register(struct wire_writer *w, const void *m)
{
	return clf_proto_view_register_req_encode(w, m);
}

static int enc_ino(struct wire_writer *w, const void *m)
{
	return clf_proto_ino_encode(w, m);
}

static int enc_sub_read(struct wire_writer *w, const void *m)
{
	return clf_proto_sub_read_req_encode(w, m);
}

/* An encoded type in a new buffer (caller frees). */
static int encode_type(CLF_Datatype t, uint8_t **buf, uint32_t *len)
{
	int64_t n = CLF_Type_encode(t, NULL, 0);

	if (n < 0)
		return (int)n;
	*buf = malloc(n);
	if (!*buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	*len = (uint32_t)CLF_Type_encode(t, *buf, n);
	return 0;
}

/* Register the view's projection on subfile j with its (locked) iod. */
static int register_view(struct clf_file *f, struct clf_peer *p, int j)
{
	struct clf_proto_view_register_req req = {
		.file = f->ino,
		.subfile = (uint32_t)j,
		.view_disp = f->view_disp,
		.subfile_disp = f->layout->disp,
	};
	struct clf_proto_u32 handle;
	uint8_t *vt = NULL, *st = NULL;
	struct wire_reader r;
	struct iovec iov;
	void *body = NULL, *reply;
	uint32_t rlen;
	size_t len;
	uint64_t id;
	int err = 0;

	/* The view's key is its encoding: no need to encode it again. */
	if (f->view_key) {
		req.view_type.len = f->view_key_len;
	} else {
		err = encode_type(f->view_type, &vt, &req.view_type.len);
	}
	if (!err)
		err = encode_type(f->layout->types[j], &st, &req.subfile_type.len);
	if (err)
		goto out;
	req.view_type.ptr = f->view_key ? f->view_key : vt;
	req.subfile_type.ptr = st;
	err = clf_encode(enc_register, &req, &body, &len);
	if (err)
		goto out;
	iov = (struct iovec){ body, len };
	err = clf_peer_send(p, CLF_PROTO_OP_VIEW_REGISTER, &iov, 1, &id);
	if (!err)
		err = clf_peer_recv(p, CLF_PROTO_OP_VIEW_REGISTER, id, &reply,
				    &rlen);
	if (err)
		goto out;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_u32_decode(&r, &handle);
	free(reply);
	if (!err) {
		f->handles[j] = handle.value;
		f->handle_gen[j] = p->generation;
	}
out:
	free(body);
	free(vt);
	free(st);
	return err;
}

/* Bytes before the displacement: plain subfile ranges, run by run. */
struct head_io {
	struct clf_file *f;
	struct clf_peer *peer;
	uint8_t *packed;
	int64_t done;
	bool write;
};

static int head_run(int64_t voff, int64_t soff, int64_t len, void *arg)
{
	struct head_io *h = arg;
	struct iovec iov[2];
	void *body = NULL, *reply = NULL;
	uint32_t rlen;
	size_t blen;
	int err;

	err = clf_peer_lock(h->peer);
	if (err)
		return err;
	err = clf_file_cap_ensure(h->f, h->peer);
	clf_peer_unlock(h->peer);
	if (err)
		return err;
	if (h->write) {
		struct clf_proto_sub_write_req req = {
			.file = h->f->ino,
			.subfile = CLF_PROTO_SUBFILE_HEAD,
			.offset = soff,
			.data = { h->packed + h->done, (uint32_t)len },
		};
		uint8_t head[64];
		struct wire_writer w = { head, sizeof(head), 0 };

		err = clf_proto_sub_write_req_encode_head(&w, &req);
		if (err)
			return err;
		iov[0] = (struct iovec){ head, w.pos };
		iov[1] = (struct iovec){ h->packed + h->done, len };
		err = clf_peer_call(h->peer, CLF_PROTO_OP_SUB_WRITE, iov, 2,
				    &reply, &rlen);
	} else {
		struct clf_proto_sub_read_req req = {
			.file = h->f->ino,
			.subfile = CLF_PROTO_SUBFILE_HEAD,
			.offset = soff,
			.length = (uint32_t)len,
		};
		struct clf_proto_data data;
		struct wire_reader r;

		err = clf_encode(enc_sub_read, &req, &body, &blen);
		if (err)
			return err;
		iov[0] = (struct iovec){ body, blen };
		err = clf_peer_call(h->peer, CLF_PROTO_OP_SUB_READ, iov, 1,
				    &reply, &rlen);
		free(body);
		if (!err) {
			r = (struct wire_reader){ .buf = reply, .len = rlen };
			err = clf_proto_data_decode(&r, &data);
		}
		if (!err) {
			/* Short at the end of the head subfile: zeros. */
			memset(h->packed + h->done, 0, len);
			memcpy(h->packed + h->done, data.data.ptr,
			       min64(data.data.len, len));
		}
	}
	free(reply);
	h->done += len;
	return err;
}

static int head_io(struct clf_file *f, int64_t lo, int64_t hi, uint8_t *packed,
		   bool write)
{
	struct clf_client *cl = clf_client_instance;
	struct head_io h = { f, NULL, packed, 0, write };

	h.peer = clf_client_iod_lane(cl, f->layout->head_iod, f->lane);
	if (!h.peer)
		return -EINVAL;
	return clf_viewmap_foreach(f->view, CLF_HEAD(f->layout), lo, hi,
				   head_run, &h);
}

/*
 * Pipelining: an access is cut into pieces of PIECE_BYTES view bytes and
 * up to PIPELINE_DEPTH pieces are in flight, so that the network, the
 * iods' disks and the client's copies overlap (a single 64 MiB request
 * would serialise them).
 */
#define PIECE_BYTES (8 << 20)
#define PIPELINE_DEPTH 4
/* The first protocol minor whose iods know CLF_PROTO_VIEW_AGAIN. */
#define VIEW_AGAIN_PROTO_MINOR 20

/*
 * An access whose view falls on a subfile contiguously but whose memory
 * type is strided sends (receives) the memory runs themselves, one iovec
 * each, when they are this long on average: fewer bytes per run and the
 * copy through a packed buffer is cheaper than the gather's bookkeeping.
 */
#define MEM_RUN_MIN 512

/* One subfile the access touches, and its iod. */
struct target {
	int j;
	struct clf_peer *peer;
	bool direct;		/* view and memory fall on it contiguously:
				   the user's bytes, in place */
	bool view_direct;	/* the view alone does */
	bool done;		/* collective: our part of the operation at
				   this subfile ended; a retry across an iod
				   restart must not start it again there */
	uint32_t coll;		/* participants of this subfile's merge;
				   0: an independent request */
};

/* One subfile's share of one piece. */
struct share {
	int64_t count;		/* packed bytes; 0: nothing to send */
	uint8_t *packed;	/* owned unless direct or runs */
	struct iovec *runs;	/* or these memory runs (owned), nruns */
	int nruns;
	uint8_t head[64];	/* encoded request without the data */
	uint64_t id;
	bool sent;
};

struct piece {
	int64_t lo, hi;
	struct share *shares;	/* one per target */
};

struct access {
	struct clf_file *f;
	bool write;
	int64_t base;		/* view offset of the user buffer */
	uint8_t *buf;
	const struct clf_memlayout *mem;
	struct target *targets;
	int ntargets;
	struct piece ring[PIPELINE_DEPTH];
	int first, inflight;	/* ring[first] is the oldest piece */
	/* Collective operations: one piece, tagged. */
	uint64_t tag;
	uint32_t participants;	/* at every subfile (roll call); 0: none */
	bool again;		/* a try after an iod broke off */
	const uint32_t *per_sub; /* or per subfile, where ours merge
				    (io_coll.c); borrowed, NULL: none */
};

static bool collective(const struct access *a)
{
	return a->participants || a->per_sub;
}

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	return x->j - y->j;
}

/* Send one share of piece pc to target t (peer locked, view registered). */
static int send_share(struct access *a, const struct target *t,
		      struct piece *pc, struct share *sh)
{
	struct clf_proto_view_io_req req = {
		.handle = a->f->handles[t->j],
		.lo = pc->lo,
		.hi = sh->count || !t->coll ? pc->hi : pc->lo,
		.data = { sh->runs ? sh->runs[1].iov_base : sh->packed,
			  (uint32_t)sh->count },
	};
	struct wire_writer w = { sh->head, sizeof(sh->head), 0 };
	struct iovec iov[2];
	int err;

	if (t->coll) {
		req.flags = CLF_PROTO_VIEW_COLLECTIVE;
		req.coll_tag = a->tag;
		req.participants = t->coll;
		if (a->again && t->peer->conn &&
		    clf_conn_minor(t->peer->conn) >= VIEW_AGAIN_PROTO_MINOR)
			req.flags |= CLF_PROTO_VIEW_AGAIN;
	}
	err = a->write ? clf_proto_view_write_req_encode_head(&w, &req)
		       : clf_proto_view_read_req_encode(&w, &req);
	if (err)
		return err;
	if (sh->runs && a->write) {
		/* runs[0] is kept free for the head. */
		sh->runs[0] = (struct iovec){ sh->head, w.pos };
		err = clf_peer_send(t->peer, CLF_PROTO_OP_VIEW_WRITE, sh->runs,
				    sh->nruns + 1, &sh->id);
		sh->sent = !err;
		return err;
	}
	iov[0] = (struct iovec){ sh->head, w.pos };
	iov[1] = (struct iovec){ sh->packed, sh->count };
	err = clf_peer_send(t->peer, a->write ? CLF_PROTO_OP_VIEW_WRITE
					      : CLF_PROTO_OP_VIEW_READ,
			    iov, a->write ? 2 : 1, &sh->id);
	sh->sent = !err;
	return err;
}

/* Memory runs being collected into a share's iovecs. */
struct mem_runs {
	uint8_t *user;
	int64_t base;		/* view offset of user[0] (view runs) */
	struct iovec *iov;	/* iov[0] left for the request's head */
	int n, cap, max;
};

static int add_mem_run(int64_t lin, int64_t addr, int64_t len, void *arg)
{
	struct mem_runs *m = arg;
	struct iovec *last = m->n ? &m->iov[m->n] : NULL;

	(void)lin;
	if (last && (uint8_t *)last->iov_base + last->iov_len == m->user + addr) {
		last->iov_len += (size_t)len;
		return 0;
	}
	if (m->n == m->max)
		return 1;	/* too many, too short: pack instead */
	if (m->n + 1 == m->cap) {
		int cap = m->cap * 2;
		struct iovec *bigger = realloc(m->iov, cap * sizeof(*bigger));

		if (!bigger)
			return 1;
		m->iov = bigger;
		m->cap = cap;
	}
	m->iov[++m->n] = (struct iovec){ m->user + addr, (size_t)len };
	return 0;
}

/*
 * The memory runs holding view bytes [lo, hi) -- all of them bound for
 * one subfile, in order -- as sh->runs, when they are long enough on
 * average (MEM_RUN_MIN); false: pack them.
 */
static bool share_memory_runs(struct access *a, int64_t lo, int64_t hi,
			      struct share *sh)
{
	struct mem_runs m = { .user = a->buf, .cap = 64,
			      .max = (int)min64(sh->count / MEM_RUN_MIN + 1,
						1 << 20) };

	m.iov = malloc(m.cap * sizeof(*m.iov));
	if (!m.iov)
		return false;
	if (CLF_Mapping_foreach(a->mem->map, lo - a->base, hi - a->base,
				add_mem_run, &m) != 0) {
		free(m.iov);
		return false;
	}
	sh->runs = m.iov;
	sh->nruns = m.n;
	return true;
}

static int add_view_prog(const struct clf_prog *p, void *arg)
{
	struct mem_runs *m = arg;
	uint8_t *at = m->user + (p->x - m->base);
	struct iovec *last = m->n ? &m->iov[m->n] : NULL;
	int64_t i = 0;

	if (last && (uint8_t *)last->iov_base + last->iov_len == at) {
		last->iov_len += (size_t)p->len;
		i = 1;
	}
	if (m->n + (p->n - i) > m->max)
		return 1;	/* too many, too short: pack instead */
	if (m->n + (p->n - i) + 1 > m->cap) {
		int cap = m->n + (int)(p->n - i) + 1;
		struct iovec *bigger;

		cap = cap < 2 * m->cap ? 2 * m->cap : cap;
		bigger = realloc(m->iov, cap * sizeof(*bigger));
		if (!bigger)
			return 1;
		m->iov = bigger;
		m->cap = cap;
	}
	for (; i < p->n; i++)
		m->iov[++m->n] = (struct iovec){ at + i * p->dx,
						 (size_t)p->len };
	return 0;
}

/*
 * A contiguous user buffer whose view bytes for subfile t->j [lo, hi)
 * lie in long stretches of the view (whole rows of a checkerboard over
 * round-robin stripes): those stretches as sh->runs, sent (received) in
 * place, when they are long enough on average (MEM_RUN_MIN); false:
 * pack them.
 */
static bool share_view_runs(struct access *a, const struct target *t,
			    int64_t lo, int64_t hi, struct share *sh)
{
	struct mem_runs m = { .user = a->buf, .base = a->base, .cap = 64,
			      .max = (int)min64(sh->count / MEM_RUN_MIN + 1,
						1 << 20) };

	if (clf_viewmap_copy_fault())
		return false;	/* the gather it replaces fails instead */
	m.iov = malloc(m.cap * sizeof(*m.iov));
	if (!m.iov)
		return false;
	if (clf_mapping_progs(a->f->view->maps[t->j], lo, hi, CLF_PROG_VIEW,
			      0, INT64_MAX, add_view_prog, &m) != 0) {
		free(m.iov);
		return false;
	}
	sh->runs = m.iov;
	sh->nruns = m.n;
	return true;
}

/* A read's data: into the packed buffer, or straight into memory runs. */
static int recv_read(const struct target *t, struct share *sh)
{
	if (sh->runs)
		return clf_peer_recv_datav(t->peer, CLF_PROTO_OP_VIEW_READ,
					   sh->id, sh->runs + 1, sh->nruns,
					   (uint32_t)sh->count);
	return clf_peer_recv_data(t->peer, CLF_PROTO_OP_VIEW_READ, sh->id,
				  sh->packed, (uint32_t)sh->count);
}

static int recv_share(struct access *a, const struct target *t,
		      struct share *sh)
{
	struct clf_proto_u32 n;
	struct wire_reader r;
	void *reply;
	uint32_t rlen;
	int err;

	sh->sent = false;
	if (!a->write && t->coll) {
		/* The iod waits for every participant: allow for that. */
		int err2, tmo = clf_conn_timeout(t->peer->conn);

		clf_conn_set_timeout(t->peer->conn, 2 * tmo);
		err2 = recv_read(t, sh);
		if (t->peer->conn)
			clf_conn_set_timeout(t->peer->conn, tmo);
		return err2;
	}
	if (!a->write)
		return recv_read(t, sh);
	if (t->coll) {
		int tmo = clf_conn_timeout(t->peer->conn);

		clf_conn_set_timeout(t->peer->conn, 2 * tmo);
		err = clf_peer_recv(t->peer, CLF_PROTO_OP_VIEW_WRITE, sh->id,
				    &reply, &rlen);
		if (t->peer->conn)
			clf_conn_set_timeout(t->peer->conn, tmo);
	} else {
		err = clf_peer_recv(t->peer, CLF_PROTO_OP_VIEW_WRITE, sh->id,
				    &reply, &rlen);
	}
	if (err)
		return err;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_u32_decode(&r, &n);
	free(reply);
	if (!err && n.value != sh->count)
		err = clf_fail_source(&t->peer->src, -EIO,
				      "wrote %u of %lld bytes", n.value,
				      (long long)sh->count);
	return err;
}

/* The bytes of share sh of [lo, hi) for target t: count, and packed. */
static int prepare_share(struct access *a, const struct target *t,
			 int64_t lo, int64_t hi, struct share *sh)
{
	sh->count = clf_viewmap_count(a->f->view, t->j, lo, hi);
	if (sh->count <= 0)
		return (int)sh->count;
	if (t->direct) {
		/* The piece is these bytes, in place. */
		sh->packed = a->buf + (lo - a->base);
	} else if (t->view_direct && share_memory_runs(a, lo, hi, sh)) {
		/* The piece is these memory runs, in place. */
	} else if (!a->mem->map && share_view_runs(a, t, lo, hi, sh)) {
		/* The piece is these stretches of the buffer, in place. */
	} else {
		sh->packed = malloc(sh->count);
		if (!sh->packed)
			return clf_fail(ENOMEM, "clf: out of memory");
		if (a->write) {
			int64_t got = clf_viewmap_gather(a->f->view, t->j, lo,
							 hi, a->base, a->buf,
							 a->mem, sh->packed);

			/* Never send an unfilled buffer as data. */
			if (got < 0) {
				free(sh->packed);
				sh->packed = NULL;
				return (int)got;
			}
		}
	}
	return 0;
}

/*
 * Prepare and send piece [lo, hi) into the ring.  An independent piece
 * goes to each iod as soon as its share is packed, so the iods work while
 * the next share is.  A collective piece is packed for every subfile
 * before its first request goes out: an iod starts the other
 * participants' timeout when an operation's first request arrives, and
 * our packing must not run in their time.  With a roll call
 * (participants), every participant answers at every subfile, with
 * nothing when it has nothing there; planned (per_sub), it goes only
 * where it merges, and its other shares go as independent ones.
 */
static int start_piece(struct access *a, int64_t lo, int64_t hi)
{
	struct piece *pc = &a->ring[(a->first + a->inflight) % PIPELINE_DEPTH];
	int err = 0;

	pc->lo = lo;
	pc->hi = hi;
	memset(pc->shares, 0, a->ntargets * sizeof(*pc->shares));
	a->inflight++;
	for (int k = 0; k < a->ntargets && !err; k++) {
		struct share *sh = &pc->shares[k];

		if (a->targets[k].done)
			continue;
		err = prepare_share(a, &a->targets[k], lo, hi, sh);
		if (!err && !a->targets[k].coll && sh->count)
			err = send_share(a, &a->targets[k], pc, sh);
	}
	for (int k = 0; k < a->ntargets && !err && collective(a); k++)
		if (!a->targets[k].done && a->targets[k].coll)
			err = send_share(a, &a->targets[k], pc,
					 &pc->shares[k]);
	return err;
}

/*
 * Collect the replies of the oldest piece and free it.  After a failure
 * the replies of what was sent are still read (connections stay in step);
 * the first error is returned.
 */
static int finish_piece(struct access *a, int err)
{
	struct piece *pc = &a->ring[a->first];

	for (int k = 0; k < a->ntargets; k++) {
		struct target *t = &a->targets[k];
		struct share *sh = &pc->shares[k];
		int e = 0;

		bool sent = sh->sent;

		if (sent)
			e = recv_share(a, t, sh);
		/* Each share that came is put in place, even after another
		 * failed: a collective retry skips its subfile (done). */
		if (sent && !e && !a->write && sh->count && !t->direct &&
		    !sh->runs) {
			int64_t put = clf_viewmap_scatter(a->f->view, t->j,
					pc->lo, pc->hi, a->base, a->buf, a->mem,
					sh->packed);

			if (put < 0)
				e = (int)put;
		}
		if (sent && collective(a) && !e)
			t->done = true;
		if (!err)
			err = e;
		if (!t->direct && !sh->runs)
			free(sh->packed);
		free(sh->runs);
		sh->runs = NULL;
		sh->nruns = 0;
		sh->packed = NULL;
		sh->count = 0;
	}
	a->first = (a->first + 1) % PIPELINE_DEPTH;
	a->inflight--;
	return err;
}

struct runs {
	int n;
};

static int count_run(int64_t view_off, int64_t sub_off, int64_t len,
		     void *arg)
{
	struct runs *r = arg;

	(void)view_off;
	(void)sub_off;
	(void)len;
	return ++r->n > 1;	/* two are enough to know */
}

int clf_coll_merges(const struct clf_viewmap *view, int j, int64_t lo,
		    int64_t hi)
{
	struct runs r = { 0 };
	int err;

	if (lo >= hi || !clf_viewmap_touches(view, j))
		return 0;
	err = clf_viewmap_foreach(view, j, lo, hi, count_run, &r);
	return err < 0 ? err : r.n > 1;
}

/* Which subfiles (other than the head) [lo, hi) touches, on which iods. */
static int find_targets(struct access *a, int64_t lo, int64_t hi)
{
	struct clf_client *cl = clf_client_instance;
	const struct clf_layout *l = a->f->layout;

	a->targets = calloc(l->nsub, sizeof(*a->targets));
	if (!a->targets)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (int j = 0; j < l->nsub; j++) {
		struct target *t = &a->targets[a->ntargets];
		int64_t count;

		count = clf_viewmap_touches(a->f->view, j)
				? clf_viewmap_count(a->f->view, j, lo, hi)
				: 0;
		if (count < 0)
			return (int)count;
		if (count == 0 && !a->participants)
			continue;
		t->j = j;
		t->coll = a->participants;
		if (a->per_sub) {
			int m = clf_coll_merges(a->f->view, j, lo, hi);

			if (m < 0)
				return m;
			t->coll = m ? a->per_sub[j] : 0;
			if (m && !t->coll)
				return clf_fail(EINVAL, "clf: no participants given for subfile %d, where this access merges",
						j);
		}
		t->peer = clf_client_iod_lane(cl, l->iods[j], a->f->lane);
		if (!t->peer)
			return -EINVAL;
		t->view_direct = a->f->view->maps[j] &&
			CLF_Mapping_is_contiguous(a->f->view->maps[j]) == 1;
		t->direct = t->view_direct && !a->mem->map;
		a->ntargets++;
	}
	qsort(a->targets, a->ntargets, sizeof(*a->targets), cmp_target);
	return 0;
}

/* Connect the targets' iods not connected yet at once (client_warm.c). */
static void warm_targets(const struct access *a)
{
	struct clf_peer *peers[64];
	int n = 0;

	for (int k = 0; k < a->ntargets && n < 64; k++)
		if (!a->targets[k].peer->conn)
			peers[n++] = a->targets[k].peer;
	clf_peers_warm(peers, n);
}

/*
 * The iods' part of an access: lock every iod involved (in a fixed
 * order), register missing views, then stream the pieces.  *stale tells
 * that a kept connection turned out dead (the daemon restarted): the
 * whole access may then be tried again on fresh connections.
 */
static int stream(struct access *a, int64_t lo, int64_t hi, bool *stale)
{
	int err = 0, locked = 0;
	int64_t next = lo;

	*stale = false;
	warm_targets(a);
	for (; locked < a->ntargets; locked++) {
		struct target *t = &a->targets[locked];

		if (locked == 0 || t->peer != a->targets[locked - 1].peer)
			err = clf_peer_lock(t->peer);
		if (err)
			break;
	}
	/* Capabilities for the iods (file_cap.c), then registrations:
	 * their replies must not queue behind data. */
	for (int k = 0; k < locked && !err; k++)
		if (k == 0 || a->targets[k].peer != a->targets[k - 1].peer)
			err = clf_file_cap_ensure(a->f, a->targets[k].peer);
	for (int k = 0; k < locked && !err; k++) {
		struct target *t = &a->targets[k];

		if (!t->done && a->f->handle_gen[t->j] != t->peer->generation)
			err = register_view(a->f, t->peer, t->j);
	}
	while (!err && (next < hi || (collective(a) && next == lo))) {
		/* A collective operation is one piece: one request per
		 * subfile and participant, which the iods count. */
		int64_t end = collective(a) ? hi
					    : min64(hi, next + PIECE_BYTES);

		if (a->inflight == PIPELINE_DEPTH)
			err = finish_piece(a, 0);
		if (!err)
			err = start_piece(a, next, end);
		next = end;
		if (collective(a))
			break;
	}
	while (a->inflight)
		err = finish_piece(a, err);
	for (int k = 0; k < locked; k++) {
		if (err && clf_peer_stale(a->targets[k].peer))
			*stale = true;
		if (k + 1 == locked || a->targets[k].peer != a->targets[k + 1].peer)
			clf_peer_unlock(a->targets[k].peer);
	}
	return err;
}

/* Has the current view been registered at any iod? */
static bool view_registered(const struct clf_file *f)
{
	for (int j = 0; j < f->layout->nsub; j++)
		if (f->handle_gen[j])
			return true;
	return false;
}

/* Move view bytes [lo, hi); base is the view offset of buf. */
/* A gather's or scatter's byte count as 0, or its negative errno. */
static int gather_status(int64_t moved)
{
	return moved < 0 ? (int)moved : 0;
}

static int access_io(struct clf_file *f, int64_t lo, int64_t hi, int64_t base,
		     void *buf, const struct clf_memlayout *mem, bool write,
		     uint64_t tag, uint32_t participants,
		     const uint32_t *per_sub, bool cacheable)
{
	struct access a = { .f = f, .write = write, .base = base, .buf = buf,
			    .mem = mem, .tag = tag,
			    .participants = participants, .per_sub = per_sub };
	int head = CLF_HEAD(f->layout), err;
	uint8_t *head_buf = NULL;
	int64_t head_count = 0;

	/* Small, through a view no iod holds yet: plain subfile ranges. */
	if (!collective(&a) && !view_registered(f)) {
		bool done = false;

		err = clf_small_io(f, lo, hi, base, buf, mem, write,
				   cacheable, &done);
		if (err || done)
			return err;
	}
	/* The view's mapping, made at its first access that needs it. */
	if (!f->view) {
		err = clf_viewmap_create(f->layout, f->view_disp, f->view_type,
					 &f->view);
		if (err)
			return err;
	}
	err = find_targets(&a, lo, hi);
	for (int i = 0; i < PIPELINE_DEPTH && !err; i++) {
		a.ring[i].shares = calloc(a.ntargets ? a.ntargets : 1,
					  sizeof(struct share));
		if (!a.ring[i].shares)
			err = clf_fail(ENOMEM, "clf: out of memory");
	}
	/* Bytes before the displacement: plain ranges, not pipelined. */
	if (!err && clf_viewmap_touches(f->view, head))
		head_count = clf_viewmap_count(f->view, head, lo, hi);
	if (!err && head_count > 0) {
		head_buf = malloc(head_count);
		if (!head_buf)
			err = clf_fail(ENOMEM, "clf: out of memory");
		else if (write)
			err = gather_status(clf_viewmap_gather(f->view, head,
					lo, hi, base, buf, mem, head_buf));
		if (!err)
			err = head_io(f, lo, hi, head_buf, write);
		if (!err && !write)
			err = gather_status(clf_viewmap_scatter(f->view, head,
					lo, hi, base, buf, mem, head_buf));
	}
	/*
	 * An iod restarted since our last request, or while it served
	 * this one: again, afresh, through the restart (client.h, Grace).
	 * Reads are idempotent; so are writes of these bytes to these
	 * offsets.  A collective one goes again only to the subfiles whose
	 * operation did not end for us (target.done): the other
	 * participants lost the same iod, and come again there too -- or
	 * had their replies before it broke off, and a restarted iod then
	 * serves us alone (CLF_PROTO_VIEW_AGAIN, iod_collective.c rule 10).
	 */
	if (!err && a.ntargets) {
		struct clf_grace g;
		bool stale;

		clf_grace_begin(&g);
		do {
			err = stream(&a, lo, hi, &stale);
			a.again = true;
		} while (clf_grace_again(&g, err, stale));
	}
	for (int i = 0; i < PIPELINE_DEPTH; i++)
		free(a.ring[i].shares);
	free(a.targets);
	free(head_buf);
	return err;
}

/* The view bytes this client knows to lie below the end of file. */
static int64_t readable_below(struct clf_file *f)
{
	int64_t size = max64(f->size, f->dirty_end);

	return clf_type_count_before(f->view_type, f->view_disp, size);
}

int clf_file_io_check(struct clf_file *f, int64_t lo, int64_t n, bool write)
{
	if (lo < 0 || n < 0 || lo > INT64_MAX - n)
		return clf_fail(EINVAL, "clf: bad access range");
	if (write && (f->flags & O_ACCMODE) == O_RDONLY)
		return clf_fail(EBADF, "clf: write: file opened read-only");
	if (!write && (f->flags & O_ACCMODE) == O_WRONLY)
		return clf_fail(EBADF, "clf: read: file opened write-only");
	return 0;
}

int64_t clf_file_readable(struct clf_file *f, int64_t lo, int64_t n)
{
	int err;

	if (lo + n <= readable_below(f))
		return n;
	/* Someone may have written further: ask the subfiles. */
	err = clf_file_size(f);
	if (err)
		return err;
	return max64(0, min64(n, readable_below(f) - lo));
}

int64_t clf_file_io(struct clf_file *f, int64_t lo, int64_t n, void *buf,
		    CLF_Datatype memtype, bool write, uint64_t tag,
		    uint32_t participants)
{
	int err = clf_file_io_check(f, lo, n, write);

	if (!err && !write)
		n = clf_file_readable(f, lo, n);
	if (err || n < 0)
		return err ? err : n;
	return clf_file_io_v(f, lo, n, buf, memtype, write, tag, participants,
			     NULL, true);
}

int64_t clf_file_io_v(struct clf_file *f, int64_t lo, int64_t n, void *buf,
		      CLF_Datatype memtype, bool write, uint64_t tag,
		      uint32_t participants, const uint32_t *per_sub,
		      bool cacheable)
{
	struct clf_memlayout mem;
	int64_t done, last;
	int err;

	if (n == 0 && !participants)
		return 0;
	if ((participants || per_sub) && n > CLF_PROTO_DATA_MAX)
		return clf_fail(E2BIG, "clf: a collective access moves at most %u view bytes per process (asked %lld)",
				CLF_PROTO_DATA_MAX, (long long)n);
	err = clf_memlayout_init(&mem, memtype);
	if (err)
		return err;
	err = access_io(f, lo, lo + n, lo, buf, &mem, write, tag, participants,
			per_sub, cacheable);
	if (err && (participants || per_sub) &&
	    clf_move_coll_again(f, err)) {
		/*
		 * A collective access that met a subfile on the move
		 * (io_retry.c): this process's own bytes go again as an
		 * independent access, retried below like any other.  Each
		 * process's call returns once its own bytes are in (the
		 * guarantee of a collective), and an iod writes a piece of
		 * a failed operation all the same (iod_collective.c), so a
		 * write puts the same bytes at the same offsets.
		 */
		participants = 0;
		per_sub = NULL;
		err = n ? -ESTALE : 0;	/* none of its bytes: done */
	}
	if (err && !participants && !per_sub) {
		struct clf_move_wait w;

		clf_move_wait_begin(&w);
		while (clf_move_again(f, &w, err))
			err = access_io(f, lo, lo + n, lo, buf, &mem, write,
					tag, participants, per_sub, cacheable);
	}
	done = err ? 0 : n;
	clf_memlayout_release(&mem);
	if (write && done > 0 &&
	    CLF_Type_unmap(f->view_type, f->view_disp, lo + done - 1, &last) == 0)
		f->dirty_end = max64(f->dirty_end, last + 1);
	return done > 0 ? done : err;
}

static ssize_t io_at(int fd, int64_t *off, int64_t n, void *buf,
		     CLF_Datatype memtype, bool write, bool advance,
		     uint64_t tag, uint32_t participants)
{
	struct clf_file *f;
	int64_t lo, ret;
	int err;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	lo = off ? *off : f->pos;
	if (write && advance && (f->flags & O_APPEND)) {
		err = clf_file_append_at(f, n, &lo);
		if (err) {
			clf_file_put(f);
			return err;
		}
	}
	ret = clf_file_io(f, lo, n, buf, memtype, write, tag, participants);
	if (ret > 0 && advance)
		f->pos = lo + ret;
	clf_file_put(f);
	return ret;
}

ssize_t CLF_read(int fd, void *buf, size_t len)
{
	return io_at(fd, NULL, (int64_t)len, buf, NULL, false, true, 0, 0);
}

ssize_t CLF_write(int fd, const void *buf, size_t len)
{
	return io_at(fd, NULL, (int64_t)len, (void *)buf, NULL, true, true, 0,
		     0);
}

static int64_t memtype_size(CLF_Datatype memtype)
{
	if (!memtype)
		return clf_fail(EINVAL, "clf: NULL memory type");
	return CLF_Type_size(memtype);
}

ssize_t CLF_ncread(int fd, void *buf, CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n : io_at(fd, NULL, n, buf, memtype, false, true, 0, 0);
}

ssize_t CLF_ncwrite(int fd, const void *buf, CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n
		     : io_at(fd, NULL, n, (void *)buf, memtype, true, true, 0, 0);
}

ssize_t CLF_ncread_at(int fd, int64_t view_off, void *buf,
		      CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n
		     : io_at(fd, &view_off, n, buf, memtype, false, false, 0, 0);
}

ssize_t CLF_ncwrite_at(int fd, int64_t view_off, const void *buf,
		       CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n
		     : io_at(fd, &view_off, n, (void *)buf, memtype, true, false,
			     0, 0);
}

static int check_collective(uint64_t tag, int nparticipants)
{
	if (nparticipants < 1 ||
	    (uint32_t)nparticipants > CLF_PROTO_MAX_PARTICIPANTS)
		return clf_fail(EINVAL, "clf: a collective operation needs 1..%u participants (got %d)",
				CLF_PROTO_MAX_PARTICIPANTS, nparticipants);
	return 0;
}

ssize_t CLF_ncread_at_all(int fd, int64_t view_off, void *buf,
			  CLF_Datatype memtype, uint64_t tag, int nparticipants)
{
	/* No memory type: this participant has no bytes, but takes part. */
	int64_t n = memtype ? memtype_size(memtype) : 0;
	int err = check_collective(tag, nparticipants);

	if (err || n < 0)
		return err ? err : n;
	return io_at(fd, &view_off, n, buf, memtype, false, false, tag,
		     (uint32_t)nparticipants);
}

ssize_t CLF_ncwrite_at_all(int fd, int64_t view_off, const void *buf,
			   CLF_Datatype memtype, uint64_t tag,
			   int nparticipants)
{
	int64_t n = memtype ? memtype_size(memtype) : 0;
	int err = check_collective(tag, nparticipants);

	if (err || n < 0)
		return err ? err : n;
	return io_at(fd, &view_off, n, (void *)buf, memtype, true, false, tag,
		     (uint32_t)nparticipants);
}

int CLF_sync(int fd)
{
	struct clf_client *cl = clf_client_instance;
	struct clf_file *f;
	bool *done;
	int err;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	/* Kept bytes first: SYNC makes durable what the iods hold. */
	err = clf_xcache_flush_file(f);
	if (!err)
		err = clf_file_flush_size(f);
	done = calloc(CLF_PROTO_MAX_IODS, sizeof(*done));
	if (!done && !err)
		err = clf_fail(ENOMEM, "clf: out of memory");
	for (int j = 0; j <= f->layout->nsub && !err; j++) {
		uint32_t iod = j < f->layout->nsub ? f->layout->iods[j]
						   : f->layout->head_iod;
		struct clf_proto_ino req = { f->ino };
		struct clf_peer *p = clf_client_iod_lane(cl, iod, f->lane);
		struct iovec iov;
		void *body, *reply;
		uint32_t rlen;
		size_t len;

		if (!p || done[iod])
			continue;
		done[iod] = true;
		err = clf_encode(enc_ino, &req, &body, &len);
		if (err)
			break;
		iov = (struct iovec){ body, len };
		err = clf_peer_call(p, CLF_PROTO_OP_SYNC, &iov, 1, &reply, &rlen);
		free(body);
		if (!err)
			free(reply);
	}
	free(done);
	clf_file_put(f);
	return err;
}
