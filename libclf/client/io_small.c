// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * io_small.c -- small independent accesses as plain subfile ranges.
 *
 * Libraries above MPI-IO set a new view for nearly every small access
 * (PnetCDF's independent mode: a subarray of a few elements, a write,
 * the byte view again).  Through the view path each new view costs its
 * mapping onto every subfile -- milliseconds when its extent and the
 * stripes are incommensurate, as netCDF variables' are -- at the client
 * and again at every iod it is registered with, plus a round trip per
 * registration.  A small access needs none of it: the few runs it
 * touches are found from the view's type and the layout's types alone
 * (CLF_Type_unmap / CLF_Type_map, each run's end by bisection, O(depth
 * x log run) per run), and sent as one SUB_WRITEV or SUB_READV per iod
 * (one SUB_WRITE or SUB_READ where an iod has one piece, or is older
 * than protocol 1.11), every request before any reply, so the access
 * costs one round trip whatever its view, and each iod serves one
 * request however many pieces fall on it.
 *
 * Taken for independent accesses of at most SMALL_BYTES view bytes that
 * fall into at most SMALL_PIECES subfile pieces (their replies fit in
 * socket buffers: sending everything first cannot block) and whose view
 * is not registered at the iods yet (a registered view moves them in one
 * message per subfile); anything else goes the view path (io.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "client_i.h"
#include "error.h"
#include "xcache.h"

#define SMALL_BYTES (64 << 10)
#define SMALL_PIECES 64
/* The first protocol minor with SUB_READV and SUB_WRITEV. */
#define VEC_PROTO_MINOR 11
/* A vector write's pieces go out from where they lie while they fit one
 * gather write beside the head and a credential prefix (client.c); more
 * are gathered into one buffer first. */
#define VEC_IOV_MAX (CLF_CONN_MAX_IOV - 2)

_Static_assert(SMALL_PIECES <= CLF_PROTO_SUB_VEC_MAX &&
	       SMALL_BYTES <= CLF_PROTO_SUB_VEC_DATA_MAX,
	       "a small access fits one vector request per iod");

struct small_piece {
	int sub;		/* subfile j, or CLF_HEAD */
	uint32_t iod;		/* its index */
	struct clf_peer *peer;
	int64_t soff, len;	/* subfile range */
	int64_t foff;		/* its file offset */
	int64_t at;		/* offset in the packed view bytes */
};

/* One request: pieces [first, first + count) of one peer. */
struct small_req {
	int first, count;
	bool vec;		/* SUB_READV / SUB_WRITEV, else SUB_READ /
				   SUB_WRITE of one piece */
	int64_t bytes;		/* of its pieces */
	uint8_t *staged;	/* a vector write's data gathered; owned */
	uint64_t id;
	bool sent;
};

struct small {
	struct clf_file *f;
	bool write;
	uint8_t *packed;	/* the view bytes [lo, hi), in view order */
	struct small_piece p[SMALL_PIECES];
	int n;
	bool too_many;		/* more than SMALL_PIECES: not this path */
	struct small_req q[SMALL_PIECES];
	int nq;
	struct clf_proto_sub_vec_req vec;	/* scratch of send_vec */
};

/*
 * The longest k <= max such that linear bytes [v, v + k) of (t, disp)
 * are contiguous in the file from *first on: unmap grows strictly, so
 * unmap(v + k - 1) - unmap(v) == k - 1 exactly while they are.
 */
static int type_run(CLF_Datatype t, int64_t disp, int64_t v, int64_t max,
		    int64_t *first, int64_t *k)
{
	int64_t lo = 1, hi = max, f0, fx;
	int err = CLF_Type_unmap(t, disp, v, &f0);

	while (!err && lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;

		err = CLF_Type_unmap(t, disp, v + mid - 1, &fx);
		if (!err && fx == f0 + mid - 1)
			lo = mid;
		else if (!err || err == -EOVERFLOW)
			hi = mid - 1, err = 0;
	}
	if (err)
		return err;
	*first = f0;
	*k = lo;
	return 0;
}

/* Add the pieces of file bytes [off, off + len) at packed offset at. */
static int add_file_run(struct small *s, int64_t off, int64_t len, int64_t at)
{
	const struct clf_layout *l = s->f->layout;
	struct clf_client *cl = clf_client_instance;

	while (len > 0) {
		struct small_piece *p;
		int64_t soff = off, plen = 0, lin, back;
		int j = CLF_HEAD(l), err = 0;

		if (off < l->disp) {
			plen = min64(len, l->disp - off);
		} else {
			for (j = 0; j < l->nsub; j++) {
				err = CLF_Type_map(l->types[j], l->disp, off, &lin);
				if (err != -ENOENT)
					break;
			}
			if (!err && j == l->nsub)
				err = clf_fail(EIO, "clf: no subfile holds byte %lld",
					       (long long)off);
			/* How far the subfile holds these bytes in a row. */
			if (!err)
				err = type_run(l->types[j], l->disp, lin, len,
					       &back, &plen);
			if (err)
				return err;
			soff = lin;
		}
		if (s->n == SMALL_PIECES) {
			s->too_many = true;
			return 0;
		}
		p = &s->p[s->n++];
		*p = (struct small_piece){ .sub = j, .soff = soff, .len = plen,
					   .foff = off, .at = at };
		p->iod = j == CLF_HEAD(l) ? l->head_iod : l->iods[j];
		p->peer = clf_client_iod_lane(cl, p->iod, s->f->lane);
		if (!p->peer)
			return -EINVAL;
		off += plen;
		at += plen;
		len -= plen;
	}
	return 0;
}

/* The pieces of view bytes [lo, hi), or s->too_many: 0 or an error. */
static int plan(struct small *s, int64_t lo, int64_t hi)
{
	for (int64_t v = lo; v < hi && !s->too_many;) {
		int64_t first, k;
		int err = type_run(s->f->view_type, s->f->view_disp, v, hi - v,
				   &first, &k);

		if (!err)
			err = add_file_run(s, first, k, v - lo);
		if (err)
			return err;
		v += k;
	}
	return 0;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct small_piece *x = a, *y = b;

	return x->peer == y->peer ? 0 : x->peer < y->peer ? -1 : 1;
}

static uint32_t wire_sub(const struct small *s, const struct small_piece *p)
{
	return p->sub == CLF_HEAD(s->f->layout) ? CLF_PROTO_SUBFILE_HEAD
						: (uint32_t)p->sub;
}

/* The requests of the pieces (sorted by peer, every peer locked): one
 * vector per peer that has several pieces and knows vectors. */
static void group(struct small *s)
{
	s->nq = 0;
	for (int i = 0, j; i < s->n; i = j) {
		struct clf_peer *peer = s->p[i].peer;
		bool vec;

		for (j = i + 1; j < s->n && s->p[j].peer == peer; j++)
			;
		vec = j - i > 1 && peer->conn &&
		      clf_conn_minor(peer->conn) >= VEC_PROTO_MINOR;
		for (int k = i; k < j; k++) {
			struct small_req *q = &s->q[s->nq];

			if (vec && k > i) {
				s->q[s->nq - 1].count++;
				s->q[s->nq - 1].bytes += s->p[k].len;
				continue;
			}
			*q = (struct small_req){ .first = k, .count = 1,
						 .vec = vec,
						 .bytes = s->p[k].len };
			s->nq++;
		}
	}
}

static int send_piece(struct small *s, struct small_req *q)
{
	struct small_piece *p = &s->p[q->first];
	uint8_t head[64];
	struct wire_writer w = { head, sizeof(head), 0 };
	struct iovec iov[2];
	int err;

	if (s->write) {
		struct clf_proto_sub_write_req req = {
			.file = s->f->ino, .subfile = wire_sub(s, p),
			.offset = p->soff,
			.data = { s->packed + p->at, (uint32_t)p->len },
		};

		err = clf_proto_sub_write_req_encode_head(&w, &req);
		iov[1] = (struct iovec){ s->packed + p->at, p->len };
	} else {
		struct clf_proto_sub_read_req req = {
			.file = s->f->ino, .subfile = wire_sub(s, p),
			.offset = p->soff, .length = (uint32_t)p->len,
		};

		err = clf_proto_sub_read_req_encode(&w, &req);
	}
	if (err)
		return err;
	iov[0] = (struct iovec){ head, w.pos };
	err = clf_peer_send(p->peer, s->write ? CLF_PROTO_OP_SUB_WRITE
					      : CLF_PROTO_OP_SUB_READ,
			    iov, s->write ? 2 : 1, &q->id);
	q->sent = !err;
	return err;
}

/* A write's data after the head: from where it lies, or gathered. */
static int vec_data(struct small *s, struct small_req *q, struct iovec *iov,
		    int *n)
{
	const struct small_piece *p = &s->p[q->first];
	int64_t at = 0;

	if (q->count <= VEC_IOV_MAX) {
		for (int k = 0; k < q->count; k++)
			iov[(*n)++] = (struct iovec){ s->packed + p[k].at,
						      p[k].len };
		return 0;
	}
	q->staged = malloc(q->bytes);
	if (!q->staged)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (int k = 0; k < q->count; k++) {
		memcpy(q->staged + at, s->packed + p[k].at, p[k].len);
		at += p[k].len;
	}
	iov[(*n)++] = (struct iovec){ q->staged, q->bytes };
	return 0;
}

static int send_vec(struct small *s, struct small_req *q)
{
	struct clf_proto_sub_vec_req *m = &s->vec;
	const struct small_piece *p = &s->p[q->first];
	uint8_t head[8 + 4 + 16 * SMALL_PIECES + 4];
	struct wire_writer w = { head, sizeof(head), 0 };
	struct iovec iov[1 + VEC_IOV_MAX];
	int n = 1, err;

	m->file = s->f->ino;
	m->n = (uint32_t)q->count;
	for (int k = 0; k < q->count; k++) {
		m->subfile[k] = wire_sub(s, &p[k]);
		m->offset[k] = p[k].soff;
		m->length[k] = (uint32_t)p[k].len;
	}
	/* The head alone goes from here: the pointer only says there is
	 * data (vec_data sends it). */
	m->data = (struct clf_proto_bytes){ s->packed, (uint32_t)q->bytes };
	if (s->write) {
		err = clf_proto_sub_writev_req_encode_head(&w, m);
		if (!err)
			err = vec_data(s, q, iov, &n);
	} else {
		err = clf_proto_sub_readv_req_encode(&w, m);
	}
	if (err)
		return err;
	iov[0] = (struct iovec){ head, w.pos };
	err = clf_peer_send(p->peer, s->write ? CLF_PROTO_OP_SUB_WRITEV
					      : CLF_PROTO_OP_SUB_READV,
			    iov, n, &q->id);
	q->sent = !err;
	return err;
}

/* A write's reply: the count of all its bytes. */
static int recv_count(struct clf_peer *peer, uint16_t op, uint64_t id,
		      int64_t want)
{
	struct clf_proto_u32 n;
	struct wire_reader r;
	uint32_t rlen;
	void *reply;
	int err = clf_peer_recv(peer, op, id, &reply, &rlen);

	if (err)
		return err;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_u32_decode(&r, &n);
	if (!err && n.value != want)
		err = clf_fail_source(&peer->src, -EIO, "wrote %u of %lld bytes",
				      n.value, (long long)want);
	free(reply);
	return err;
}

static int recv_req(struct small *s, struct small_req *q)
{
	struct small_piece *p = &s->p[q->first];
	uint16_t op = s->write ? CLF_PROTO_OP_SUB_WRITE : CLF_PROTO_OP_SUB_READ;
	struct iovec iov[SMALL_PIECES];
	uint32_t rlen;
	int err;

	q->sent = false;
	if (q->vec)
		op = s->write ? CLF_PROTO_OP_SUB_WRITEV : CLF_PROTO_OP_SUB_READV;
	if (s->write)
		return recv_count(p->peer, op, q->id, q->bytes);
	if (q->vec) {
		/* Every range whole, zeros past a subfile's end. */
		for (int k = 0; k < q->count; k++)
			iov[k] = (struct iovec){ s->packed + p[k].at, p[k].len };
		return clf_peer_recv_datav(p->peer, op, q->id, iov, q->count,
					   (uint32_t)q->bytes);
	}
	/* Straight into place; short at the end of the subfile: zeros. */
	err = clf_peer_recv_data_upto(p->peer, op, q->id, s->packed + p->at,
				      (uint32_t)p->len, &rlen);
	if (!err)
		memset(s->packed + p->at + rlen, 0, p->len - rlen);
	return err;
}

/* Every request out, every reply in; *stale as in io.c's stream(). */
static int exchange(struct small *s, bool *stale)
{
	int err = 0, locked = 0;

	*stale = false;
	for (; locked < s->n; locked++) {
		if (locked == 0 || s->p[locked].peer != s->p[locked - 1].peer)
			err = clf_peer_lock(s->p[locked].peer);
		if (err)
			break;
	}
	for (int i = 0; i < locked && !err; i++)
		if (i == 0 || s->p[i].peer != s->p[i - 1].peer)
			err = clf_file_cap_ensure(s->f, s->p[i].peer);
	if (!err)
		group(s);
	for (int i = 0; i < s->nq && !err; i++)
		err = s->q[i].vec ? send_vec(s, &s->q[i])
				  : send_piece(s, &s->q[i]);
	for (int i = 0; i < s->nq; i++) {
		int e = s->q[i].sent ? recv_req(s, &s->q[i]) : 0;

		if (!err)
			err = e;
		free(s->q[i].staged);
		s->q[i].staged = NULL;
	}
	s->nq = 0;
	for (int i = 0; i < locked; i++) {
		if (err && clf_peer_stale(s->p[i].peer))
			*stale = true;
		if (i + 1 == locked || s->p[i].peer != s->p[i + 1].peer)
			clf_peer_unlock(s->p[i].peer);
	}
	return err;
}

/* The pieces of file bytes [off, off + len) of f (clf_xc_map_fn). */
static int small_map(struct clf_file *f, int64_t off, int64_t len,
		     struct clf_xc_piece *out, int max)
{
	struct small *s = calloc(1, sizeof(*s));
	int n = 0, err;

	if (!s)
		return clf_fail(ENOMEM, "clf: out of memory");
	s->f = f;
	err = add_file_run(s, off, len, 0);
	if (!err && !s->too_many && s->n <= max) {
		for (n = 0; n < s->n; n++)
			out[n] = (struct clf_xc_piece){ s->p[n].iod,
							wire_sub(s, &s->p[n]),
							s->p[n].soff,
							s->p[n].len,
							s->p[n].foff, NULL };
	}
	free(s);
	return err ? err : n;
}

/* Under extent locks, at the client (xcache.h): *done when served. */
static int cached(struct small *s, bool *done)
{
	struct clf_xc_piece x[SMALL_PIECES];

	*done = false;
	if (!clf_xcache_wanted(s->f))
		return 0;
	for (int k = 0; k < s->n; k++)
		x[k] = (struct clf_xc_piece){ s->p[k].iod,
					      wire_sub(s, &s->p[k]),
					      s->p[k].soff, s->p[k].len,
					      s->p[k].foff,
					      s->packed + s->p[k].at };
	return clf_xcache_io(s->f, x, s->n, s->write, small_map, done);
}

/* Memory runs of the user buffer <-> the packed view bytes. */
struct mem_copy {
	uint8_t *user, *packed;
	int64_t lo;		/* memory linear offset of packed[0] */
	bool to_packed;
};

static int copy_run(int64_t lin, int64_t addr, int64_t len, void *arg)
{
	struct mem_copy *c = arg;
	uint8_t *pk = c->packed + (lin - c->lo);

	if (c->to_packed)
		memcpy(pk, c->user + addr, len);
	else
		memcpy(c->user + addr, pk, len);
	return 0;
}

static int mem_copy(const struct clf_memlayout *mem, uint8_t *user,
		    uint8_t *packed, int64_t lo, int64_t hi, bool to_packed)
{
	struct mem_copy c = { user, packed, lo, to_packed };

	return CLF_Mapping_foreach(mem->map, lo, hi, copy_run, &c);
}

int clf_small_io(struct clf_file *f, int64_t lo, int64_t hi, int64_t base,
		 void *buf, const struct clf_memlayout *mem, bool write,
		 bool cacheable, bool *done)
{
	struct small *s;
	bool hit = false;
	int err;

	if (hi - lo > SMALL_BYTES) {
		*done = false;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return clf_fail(ENOMEM, "clf: out of memory");
	s->f = f;
	s->write = write;
	err = plan(s, lo, hi);
	if (err || s->too_many)
		goto out;
	qsort(s->p, s->n, sizeof(s->p[0]), cmp_piece);
	if (!mem->map) {
		s->packed = (uint8_t *)buf + (lo - base);
	} else {
		s->packed = malloc(hi - lo);
		if (!s->packed) {
			err = clf_fail(ENOMEM, "clf: out of memory");
			goto out;
		}
		if (write)
			err = mem_copy(mem, buf, s->packed, lo - base,
				       hi - base, true);
	}
	/* An iod restarted since our last request, or while it served
	 * this one: again through the restart (client.h, Grace); plain
	 * reads and writes of these bytes at these offsets. */
	if (!err && cacheable)
		err = cached(s, &hit);
	if (!err && !hit) {
		struct clf_grace g;
		bool stale;

		clf_grace_begin(&g);
		do
			err = exchange(s, &stale);
		while (clf_grace_again(&g, err, stale));
	}
	if (!err && !write && mem->map)
		err = mem_copy(mem, buf, s->packed, lo - base, hi - base, false);
	if (mem->map)
		free(s->packed);
out:
	if (!err)
		*done = !s->too_many;
	free(s);
	return err;
}
