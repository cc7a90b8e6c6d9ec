// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_dirplus.c -- directory entries with their attributes
 * (clf_ll_readdirplus): one READDIRPLUS to metad per page and, for the
 * sizes of its regular files, one SUB_SIZES_MANY per iod, where a
 * listing by READDIR and clf_ll_stat took a GETATTR, a GET_LAYOUT and a
 * SUB_SIZES per iod for every entry.
 *
 * Sizes follow clf_ll_stat and CLF_stat (file_size.c, clf_proto.h
 * "Size"): the largest of metad's size and the ends that the subfiles
 * map back to; an iod out of reach leaves metad's size, as CLF_stat
 * does, so that a listing never waits on a down iod.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client_i.h"
#include "clf_ll.h"
#include "error.h"

/* The first minor with SUB_SIZES_MANY (iods).  A metad older than 1.14
 * answers READDIRPLUS with -ENOSYS, as an unknown opcode. */
#define SUB_SIZES_MANY_MINOR 15

/* The subfiles one iod is asked about for a page. */
struct size_batch {
	uint32_t n, cap;
	uint64_t *file;
	uint32_t *subfile;	/* index, or CLF_PROTO_SUBFILE_HEAD */
	uint32_t *ent;		/* the entry it belongs to */
};

static int enc_readdirplus(struct wire_writer *w, const void *m)
{
	return clf_proto_readdirplus_req_encode(w, m);
}

static int enc_sub_sizes_many(struct wire_writer *w, const void *m)
{
	return clf_proto_sub_sizes_many_req_encode(w, m);
}

static int batch_add(struct size_batch *b, uint64_t file, uint32_t sub,
		     uint32_t ent)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 64;
		uint64_t *f = realloc(b->file, cap * sizeof(*f));
		uint32_t *s, *e;

		if (f)
			b->file = f;
		s = f ? realloc(b->subfile, cap * sizeof(*s)) : NULL;
		if (s)
			b->subfile = s;
		e = s ? realloc(b->ent, cap * sizeof(*e)) : NULL;
		if (!e)
			return clf_fail(ENOMEM, "clf: out of memory");
		b->ent = e;
		b->cap = cap;
	}
	b->file[b->n] = file;
	b->subfile[b->n] = sub;
	b->ent[b->n++] = ent;
	return 0;
}

/* Raise entry e's size to where subfile sub of length len ends. */
static int raise_size(const struct clf_proto_dirent_plus *pe,
		      struct clf_ll_direntplus *e, uint32_t sub, int64_t len)
{
	const struct clf_proto_layout *l = &pe->layout;
	CLF_Datatype t;
	int64_t last, end;
	int err;

	if (len <= 0)
		return 0;
	if (sub == CLF_PROTO_SUBFILE_HEAD) {
		end = len;	/* the head holds bytes at their own offsets */
	} else {
		if (sub >= l->nsubfiles)
			return clf_fail(EPROTO, "clf: size of a subfile %u not asked",
					sub);
		err = CLF_Type_decode(l->subfiles[sub].type.ptr,
				      l->subfiles[sub].type.len, &t);
		if (err)
			return err;
		err = CLF_Type_unmap(t, l->disp, len - 1, &last);
		CLF_Type_free(&t);
		if (err)
			return err;
		end = last + 1;
	}
	if (end > e->attr.size)
		e->attr.size = end;
	return 0;
}

/* One SUB_SIZES_MANY of b's pairs [lo, lo + n) on p; once more when the
 * kept connection was stale. */
static int ask_sizes(struct clf_peer *p, const struct size_batch *b,
		     uint32_t lo, uint32_t n, struct clf_proto_sub_sizes *m)
{
	struct clf_proto_sub_sizes_many_req *req = malloc(sizeof(*req));
	struct wire_reader r;
	struct iovec iov;
	void *body = NULL, *reply;
	size_t blen;
	uint32_t rlen;
	uint64_t id;
	int err = req ? 0 : clf_fail(ENOMEM, "clf: out of memory");

	if (!err) {
		req->n = n;
		memcpy(req->file, b->file + lo, n * sizeof(*req->file));
		memcpy(req->subfile, b->subfile + lo, n * sizeof(*req->subfile));
		err = clf_encode(enc_sub_sizes_many, req, &body, &blen);
	}
	for (int tries = 0; !err && tries < 2; tries++) {
		bool stale;

		err = clf_peer_lock(p);
		if (err)
			break;
		if (clf_conn_minor(p->conn) < SUB_SIZES_MANY_MINOR) {
			clf_peer_unlock(p);
			err = -ENOSYS;
			break;
		}
		iov = (struct iovec){ body, blen };
		err = clf_peer_send(p, CLF_PROTO_OP_SUB_SIZES_MANY, &iov, 1, &id);
		if (!err)
			err = clf_peer_recv(p, CLF_PROTO_OP_SUB_SIZES_MANY, id,
					    &reply, &rlen);
		stale = err && clf_peer_stale(p);
		clf_peer_unlock(p);
		if (!stale)
			break;
	}
	if (!err) {
		r = (struct wire_reader){ .buf = reply, .len = rlen };
		err = clf_proto_sub_sizes_decode(&r, m);
		free(reply);
		if (!err && m->n != n)
			err = clf_fail(EPROTO, "clf: iod answered %u sizes for %u",
				       m->n, n);
	}
	free(body);
	free(req);
	return err;
}

/* Sizes of b's entries from iod i, one request per CLF_PROTO_SUB_BATCH_MAX. */
static int sizes_from(struct clf_client *cl, uint32_t i,
		      const struct size_batch *b,
		      const struct clf_proto_readdirplus_rep *rep,
		      struct clf_ll_direntplus *ents)
{
	struct clf_proto_sub_sizes *m = malloc(sizeof(*m));
	struct clf_peer *p = clf_client_iod(cl, i);
	int err = m && p ? 0 : clf_fail(ENOMEM, "clf: out of memory");

	for (uint32_t lo = 0; !err && lo < b->n; lo += CLF_PROTO_SUB_BATCH_MAX) {
		uint32_t n = b->n - lo < CLF_PROTO_SUB_BATCH_MAX ?
			     b->n - lo : CLF_PROTO_SUB_BATCH_MAX;

		err = ask_sizes(p, b, lo, n, m);
		for (uint32_t k = 0; !err && k < n; k++) {
			uint32_t e = b->ent[lo + k];

			err = raise_size(&rep->ents[e], &ents[e],
					 b->subfile[lo + k], m->length[k]);
		}
	}
	free(m);
	return err;
}

/* Entries of an iod older than 1.15: a SUB_SIZES per file. */
static void sizes_each(const struct size_batch *b,
		       struct clf_ll_direntplus *ents)
{
	for (uint32_t k = 0; k < b->n; k++) {
		struct clf_proto_attr a;
		uint32_t e = b->ent[k];

		if (k > 0 && b->ent[k - 1] == e)
			continue;
		if (!clf_ll_stat(ents[e].attr.ino, &a) &&
		    a.size > ents[e].attr.size)
			ents[e].attr.size = a.size;
	}
}

/* Raise the sizes of the regular files of rep (in ents) to their
 * subfiles' ends: one request per iod that holds any of them. */
static int page_sizes(const struct clf_proto_readdirplus_rep *rep,
		      struct clf_ll_direntplus *ents)
{
	struct clf_client *cl;
	struct size_batch *b;
	uint32_t niods;
	int err = clf_client_get(&cl);

	if (err)
		return err;
	niods = cl->cfg->niods;
	b = calloc(niods ? niods : 1, sizeof(*b));
	if (!b)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (uint32_t e = 0; e < rep->count && !err; e++) {
		const struct clf_proto_dirent_plus *pe = &rep->ents[e];
		const struct clf_proto_layout *l = &pe->layout;

		if (!pe->has_layout)
			continue;
		if (l->disp > 0 && l->disp_iod < niods)
			err = batch_add(&b[l->disp_iod], pe->attr.ino,
					CLF_PROTO_SUBFILE_HEAD, e);
		for (uint32_t j = 0; j < l->nsubfiles && !err; j++)
			if (l->subfiles[j].iod < niods)
				err = batch_add(&b[l->subfiles[j].iod],
						pe->attr.ino, j, e);
	}
	for (uint32_t i = 0; i < niods && !err; i++) {
		if (!b[i].n)
			continue;
		err = sizes_from(cl, i, &b[i], rep, ents);
		if (err == -ENOSYS) {
			sizes_each(&b[i], ents);
			err = 0;
		}
		/* As CLF_stat: an iod out of reach leaves metad's size. */
		if (err == -EHOSTDOWN || err == -ETIMEDOUT)
			err = 0;
	}
	for (uint32_t i = 0; i < niods; i++) {
		free(b[i].file);
		free(b[i].subfile);
		free(b[i].ent);
	}
	free(b);
	return err;
}

/* Copy the names of rep into one buffer that out owns. */
static int take_entries(const struct clf_proto_readdirplus_rep *rep,
			struct clf_ll_dirents_plus *out)
{
	size_t bytes = 0, at = 0;

	for (uint32_t i = 0; i < rep->count; i++)
		bytes += rep->ents[i].name.len + 1;
	out->ents = calloc(rep->count ? rep->count : 1, sizeof(*out->ents));
	out->names = malloc(bytes ? bytes : 1);
	if (!out->ents || !out->names) {
		free(out->ents);
		free(out->names);
		return clf_fail(ENOMEM, "clf: out of memory for %u entries",
				rep->count);
	}
	for (uint32_t i = 0; i < rep->count; i++) {
		const struct clf_proto_dirent_plus *pe = &rep->ents[i];

		memcpy(out->names + at, pe->name.ptr, pe->name.len);
		out->names[at + pe->name.len] = '\0';
		out->ents[i] = (struct clf_ll_direntplus){
			.cookie = pe->cookie,
			.name = out->names + at,
			.attr = pe->attr,
		};
		at += pe->name.len + 1;
	}
	out->count = rep->count;
	out->eof = rep->eof;
	return 0;
}

/*
 * Entries whose inode lives on another metad came without attributes:
 * each is asked of its own metad (one round trip each).
 */
static int remote_attrs(const struct clf_proto_readdirplus_rep *rep,
			unsigned flags, struct clf_ll_direntplus *ents)
{
	for (uint32_t i = 0; i < rep->count; i++) {
		int err;

		if (rep->ents[i].has_attr)
			continue;
		err = flags & CLF_LL_PLUS_SIZE ?
		      clf_ll_stat(rep->ents[i].ino, &ents[i].attr) :
		      clf_ll_getattr(rep->ents[i].ino, &ents[i].attr);
		if (err)
			return err;
	}
	return 0;
}

/* A metad older than 1.14: READDIR, then the attributes entry by entry. */
static int readdirplus_compat(uint64_t dir, uint64_t cookie, uint32_t max,
			      unsigned flags, struct clf_ll_dirents_plus *out)
{
	struct clf_proto_readdirplus_rep rep = { 0 };
	struct clf_ll_dirents d;
	int err = clf_ll_readdir(dir, cookie, max, &d);

	if (err)
		return err;
	rep.count = d.rep.count;
	rep.eof = d.rep.eof;
	rep.ents = calloc(rep.count ? rep.count : 1, sizeof(*rep.ents));
	if (!rep.ents)
		err = clf_fail(ENOMEM, "clf: out of memory");
	for (uint32_t i = 0; !err && i < rep.count; i++) {
		rep.ents[i].cookie = d.rep.ents[i].cookie;
		rep.ents[i].name = d.rep.ents[i].name;
		rep.ents[i].ino = d.rep.ents[i].ino;
		rep.ents[i].mode = d.rep.ents[i].mode;
		rep.ents[i].has_attr = true;
		err = flags & CLF_LL_PLUS_SIZE ?
		      clf_ll_stat(d.rep.ents[i].ino, &rep.ents[i].attr) :
		      clf_ll_getattr(d.rep.ents[i].ino, &rep.ents[i].attr);
	}
	if (!err)
		err = take_entries(&rep, out);
	free(rep.ents);
	clf_ll_dirents_release(&d);
	return err;
}

int clf_ll_readdirplus(uint64_t dir, uint64_t cookie, uint32_t max,
		       unsigned flags, struct clf_ll_dirents_plus *out)
{
	struct clf_proto_readdirplus_req req = {
		.dir = dir,
		.cookie = cookie,
		.max = max,
		.flags = flags & CLF_LL_PLUS_SIZE ?
			 CLF_PROTO_READDIRPLUS_LAYOUT : 0,
	};
	struct clf_proto_readdirplus_rep rep;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	if (flags & ~CLF_LL_PLUS_SIZE)
		return clf_fail(EINVAL, "clf: readdirplus: unknown flags 0x%x",
				flags);
	memset(out, 0, sizeof(*out));
	err = clf_meta_call(CLF_PROTO_OP_READDIRPLUS, enc_readdirplus, &req,
			    &payload, &len);
	if (err == -ENOSYS)
		return readdirplus_compat(dir, cookie, max, flags, out);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_readdirplus_rep_decode(&r, &rep);
	if (err)
		goto free_payload;
	if (rep.count > max)
		err = clf_fail(EPROTO, "clf: metad sent %u entries for %u",
			       rep.count, max);
	if (!err)
		err = take_entries(&rep, out);
	if (!err && (flags & CLF_LL_PLUS_SIZE))
		err = page_sizes(&rep, out->ents);
	if (!err)
		err = remote_attrs(&rep, flags, out->ents);
	if (err)
		clf_ll_dirents_plus_release(out);
	clf_proto_readdirplus_rep_release(&rep);
free_payload:
	free(payload);
	return err;
}

void clf_ll_dirents_plus_release(struct clf_ll_dirents_plus *d)
{
	if (!d)
		return;
	free(d->ents);
	free(d->names);
	d->ents = NULL;
	d->names = NULL;
	d->count = 0;
}
