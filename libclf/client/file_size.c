// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * file_size.c -- the size of a file, derived from its subfiles.
 *
 * Writers do not tell metad where their writes end (they report once, at
 * close); a size is asked for where it is needed -- a read past the end
 * this client knows, SEEK_END, O_APPEND, stat -- and computed as PVFS2
 * and Lustre compute theirs: every iod that holds a subfile of the file
 * says how long its subfiles are (SUB_SIZES), each length is mapped back
 * through the subfile's type to the file offset where that subfile ends,
 * and the size is the largest of those ends and metad's size (which
 * counts truncations).  The iods are asked in parallel, in one round
 * trip, while metad is asked; an iod answers a write only once its bytes
 * are in the subfile, so every write acknowledged before the probe
 * started is counted (clf_proto.h, "Size").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arith.h"
#include "client_i.h"
#include "error.h"

/* The first protocol minor with SUB_SIZES (include/clf_proto.h). */
#define SUB_SIZES_PROTO_MINOR 3

/* One iod's part of the probe: which subfiles it holds. */
struct probe_iod {
	struct clf_peer *peer;	/* locked while sent */
	struct clf_proto_sub_sizes_req req;
	int which[CLF_PROTO_SUB_SIZES_MAX];	/* subfile j, or CLF_HEAD */
	uint64_t id;
	bool sent;
};

static int cmp_probe(const void *a, const void *b)
{
	const struct probe_iod *x = a, *y = b;

	return x->peer == y->peer ? 0 : x->peer < y->peer ? -1 : 1;
}

/* Group the subfiles of l by iod, sorted in lock order. */
static int probe_plan(const struct clf_layout *l, uint64_t ino,
		      struct probe_iod **out, int *count)
{
	struct clf_client *cl = clf_client_instance;
	struct probe_iod *p = calloc(l->nsub + 1, sizeof(*p));
	int n = 0;

	if (!p)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (int j = l->disp > 0 ? CLF_HEAD(l) : l->nsub - 1; j >= 0; j--) {
		uint32_t iod = j == CLF_HEAD(l) ? l->head_iod : l->iods[j];
		struct clf_peer *peer = clf_client_iod(cl, iod);
		int k;

		if (!peer) {
			free(p);
			return -EINVAL;
		}
		for (k = 0; k < n && p[k].peer != peer; k++)
			;
		if (k == n) {
			p[n].peer = peer;
			p[n].req.file = ino;
			n++;
		}
		p[k].which[p[k].req.n] = j;
		p[k].req.subfile[p[k].req.n++] = j == CLF_HEAD(l)
			? CLF_PROTO_SUBFILE_HEAD : (uint32_t)j;
	}
	qsort(p, n, sizeof(*p), cmp_probe);
	*out = p;
	*count = n;
	return 0;
}

static int enc_sub_sizes(struct wire_writer *w, const void *m)
{
	return clf_proto_sub_sizes_req_encode(w, m);
}

/*
 * Lock p's iod and send its request; peers of minor < 3 are left out.
 * *stale as in probe_once.
 */
static int probe_send(struct probe_iod *p, bool *stale)
{
	void *body;
	size_t len;
	struct iovec iov;
	int err = clf_peer_lock(p->peer);

	if (err)
		return err;
	if (clf_conn_minor(p->peer->conn) < SUB_SIZES_PROTO_MINOR) {
		clf_peer_unlock(p->peer);
		return 0;
	}
	err = clf_encode(enc_sub_sizes, &p->req, &body, &len);
	if (!err) {
		iov = (struct iovec){ body, len };
		err = clf_peer_send(p->peer, CLF_PROTO_OP_SUB_SIZES, &iov, 1,
				    &p->id);
		free(body);
	}
	if (err) {
		*stale = *stale || clf_peer_stale(p->peer);
		clf_peer_unlock(p->peer);
	} else {
		p->sent = true;
	}
	return err;
}

/* The file offset where subfile j of length len ends (0: empty). */
static int subfile_end(const struct clf_layout *l, int j, int64_t len,
		       int64_t *end)
{
	int64_t last;
	int err;

	if (len == 0 || j == CLF_HEAD(l)) {
		/* The head holds file bytes at their own offsets. */
		*end = len;
		return 0;
	}
	err = CLF_Type_unmap(l->types[j], l->disp, len - 1, &last);
	if (err)
		return err;
	*end = last + 1;
	return 0;
}

/* Receive p's reply (p->sent), unlock, and raise *end to its ends. */
static int probe_recv(const struct clf_layout *l, struct probe_iod *p,
		      int64_t *end)
{
	struct clf_proto_sub_sizes *m = malloc(sizeof(*m));
	struct wire_reader r;
	uint32_t rlen;
	void *reply;
	int err;

	err = clf_peer_recv(p->peer, CLF_PROTO_OP_SUB_SIZES, p->id, &reply,
			    &rlen);
	p->sent = false;
	if (!err && !m)
		err = clf_fail(ENOMEM, "clf: out of memory");
	if (!err) {
		r = (struct wire_reader){ .buf = reply, .len = rlen };
		err = clf_proto_sub_sizes_decode(&r, m);
		free(reply);
	}
	if (!err && m->n != p->req.n)
		err = clf_fail_source(&p->peer->src, -EPROTO,
				      "answered %u subfile sizes for %u",
				      m->n, p->req.n);
	for (uint32_t i = 0; !err && i < p->req.n; i++) {
		int64_t e = 0;

		err = subfile_end(l, p->which[i], m->length[i], &e);
		*end = max64(*end, e);
	}
	free(m);
	return err;
}

/* Connect the probed iods not connected yet at once (client_warm.c). */
static void warm_probes(const struct probe_iod *p, int n)
{
	struct clf_peer *peers[64];
	int m = 0;

	for (int k = 0; k < n && m < 64; k++)
		if (!clf_peer_connected(p[k].peer))
			peers[m++] = p[k].peer;
	clf_peers_warm(peers, m);
}

/*
 * One probe: every iod asked, then metad (meta_size NULL: not asked),
 * then every reply read; *stale set when a kept connection was dead.
 */
static int probe_once(const struct clf_layout *l, uint64_t ino,
		      int64_t *meta_size, int64_t *end, bool *stale)
{
	struct probe_iod *p = NULL;
	struct clf_proto_attr attr;
	int n = 0, err, k, e;

	*stale = false;
	err = probe_plan(l, ino, &p, &n);
	if (err)
		return err;
	warm_probes(p, n);
	for (k = 0; k < n && !err; k++)
		err = probe_send(&p[k], stale);
	/* metad works while the iods do. */
	if (!err && meta_size) {
		err = clf_meta_getattr(ino, &attr);
		if (!err)
			*meta_size = attr.size;
	}
	for (k = 0; k < n; k++) {
		if (!p[k].sent)
			continue;
		e = probe_recv(l, &p[k], end);
		if (e && clf_peer_stale(p[k].peer))
			*stale = true;
		clf_peer_unlock(p[k].peer);
		if (!err)
			err = e;
	}
	free(p);
	return err;
}

static int layout_size(const struct clf_layout *l, uint64_t ino,
		       int64_t *meta_size, int64_t *size, bool wait)
{
	struct clf_grace g;
	int64_t end = 0;
	bool stale;
	int err;

	/* A daemon restarted since our last request, or while it served
	 * this one: again through the restart (client.h, Grace); sizes
	 * are read, not changed. */
	clf_grace_begin(&g);
	if (!wait)
		g.grace_ms = 0;
	do {
		end = 0;
		err = probe_once(l, ino, meta_size, &end, &stale);
	} while (clf_grace_again(&g, err, stale));
	if (err)
		return err;
	*size = meta_size ? max64(end, *meta_size) : end;
	return 0;
}

int clf_layout_size(const struct clf_layout *l, uint64_t ino,
		    int64_t *meta_size, int64_t *size)
{
	return layout_size(l, ino, meta_size, size, true);
}

int clf_layout_size_now(const struct clf_layout *l, uint64_t ino,
			int64_t *size)
{
	return layout_size(l, ino, NULL, size, false);
}

int clf_file_size(struct clf_file *f)
{
	int64_t meta = 0, size;
	int err = clf_layout_size(f->layout, f->ino, &meta, &size);

	if (err)
		return err;
	f->size = size;
	return 0;
}

static void attr_to_stat(const struct clf_proto_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = a->size;
	st->st_blksize = 1 << 20;
	st->st_blocks = (a->size + 511) / 512;
	st->st_atim.tv_sec = a->atime / 1000000000;
	st->st_atim.tv_nsec = a->atime % 1000000000;
	st->st_mtim.tv_sec = a->mtime / 1000000000;
	st->st_mtim.tv_nsec = a->mtime % 1000000000;
	st->st_ctim.tv_sec = a->ctime / 1000000000;
	st->st_ctim.tv_nsec = a->ctime % 1000000000;
}

int CLF_stat(const char *path, struct stat *st)
{
	struct clf_layout *layout = NULL;
	struct clf_proto_attr attr;
	int64_t end = 0;
	char rel[CLF_PROTO_PATH_MAX + 1];
	int err;

	if (!st)
		return clf_fail(EINVAL, "clf: stat: NULL buffer");
	err = clf_path_normalize(path, rel, sizeof(rel));
	if (!err)
		err = clf_meta_lookup(rel, &attr, &layout);
	if (err)
		return err;
	/* What the subfiles hold counts, reported to metad or not. */
	if (layout && S_ISREG(attr.mode))
		err = clf_layout_size_now(layout, attr.ino, &end);
	clf_layout_free(layout);
	/*
	 * An iod out of reach does not make the namespace unusable (ls -l
	 * of a directory): its subfiles' writes then count from when they
	 * were reported to metad (at close or sync), as before sizes came
	 * from the subfiles.
	 */
	if (err == -EHOSTDOWN || err == -ETIMEDOUT)
		err = 0;
	if (err)
		return err;
	if (end > attr.size)
		attr.size = end;
	attr_to_stat(&attr, st);
	return 0;
}
