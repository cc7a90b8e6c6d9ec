// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsck.c -- `clf fsck`: metad's store against what every iod holds,
 * each iod asked over the network (SUB_LIST), wherever it runs.
 *
 * Two kinds of damage and one of note, found in this order:
 *
 *   orphan    a subfile whose inode does not exist (and is not queued
 *             for removal), or is not a file with a layout, or whose
 *             layout does not place that subfile on that iod: left by a
 *             restore, a crash, or a hand.  --repair removes it (REMOVE).
 *   absent    a subfile of a file's layout that its iod does not hold
 *             while metad's size covers bytes of it: they read as zeros.
 *             Not counted as damage: an iod makes a subfile at its first
 *             write, so a hole no one wrote (a pwrite past the end, a
 *             grown ftruncate) looks exactly like a lost subfile, and a
 *             healthy file system must check clean.  Reported, with the
 *             bytes it covers, for the admin who knows an iod lost data.
 *             --repair makes it, empty (a SUB_WRITE of 0 bytes, which
 *             changes no byte that reads return).
 *   size      a subfile longer than metad's size allows: its bytes past
 *             that size are in the file (sizes derive from subfiles) but
 *             metad's size was never told (a writer that died before
 *             close).  Reported only: which size is right is the user's
 *             to say.
 *
 * Each iod is listed before the store is read, so a subfile seen
 * belongs to an inode made before that read (a file's inode comes
 * before its data); files written during the check may still show as
 * sizes to report, never as orphans.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clf.h"
#include "config.h"
#include "error.h"
#include "mds_store.h"
#include "probe.h"
#include "tool.h"

/* One subfile an iod holds. */
struct held {
	uint64_t file;
	uint32_t index;
	int64_t length;
	bool claimed;		/* a layout places it there */
};

/* One iod: its connection and what it holds, in (file, index) order. */
struct iod_state {
	struct clf_conn *c;	/* owned; NULL: not reachable */
	struct held *v;		/* owned */
	size_t n;
	size_t bad;		/* damage found on it and left */
};

struct fsck {
	const struct clf_config *cfg;
	struct mds_store *s;
	bool repair;
	struct iod_state *iods;	/* cfg->niods */
	size_t orphans, sizes, unreachable;	/* damage */
	size_t absent;				/* of note only */
};

static const char *index_name(uint32_t index, char *buf, size_t len)
{
	if (index == CLF_PROTO_SUBFILE_HEAD)
		return "head";
	snprintf(buf, len, "%" PRIu32, index);
	return buf;
}

/* One request to an iod, its reply's payload in *payload (caller frees). */
static int call(struct clf_conn *c, uint16_t op, const void *body,
		size_t len, void **payload, uint32_t *plen)
{
	struct iovec iov = { (void *)body, len };
	struct clf_proto_header h, reply;
	int err;

	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	h.payload_len = (uint32_t)len;
	err = clf_conn_call(c, &h, &iov, 1, &reply, payload);
	if (!err)
		*plen = reply.payload_len;
	return err;
}

/* Everything iod i holds, page by page (SUB_LIST). */
static int list_iod(struct clf_conn *c, struct iod_state *st)
{
	struct clf_proto_sub_list_req req = { 0, 0, CLF_PROTO_SUB_LIST_MAX };
	struct clf_proto_sub_list *m = malloc(sizeof(*m));
	size_t cap = 0;
	int err = m ? 0 : clf_fail(ENOMEM, "clf: out of memory");

	while (!err) {
		uint8_t body[16];
		struct wire_writer w = { body, sizeof(body), 0 };
		struct wire_reader r;
		void *payload = NULL;
		uint32_t len;

		err = clf_proto_sub_list_req_encode(&w, &req);
		if (!err)
			err = call(c, CLF_PROTO_OP_SUB_LIST, body, w.pos,
				   &payload, &len);
		if (err)
			break;
		r = (struct wire_reader){ .buf = payload, .len = len };
		err = clf_proto_sub_list_decode(&r, m);
		free(payload);
		if (err)
			break;
		if (st->n + m->n > cap) {
			struct held *nv;

			cap = 2 * (st->n + m->n);
			nv = realloc(st->v, cap * sizeof(*nv));
			if (!nv) {
				err = clf_fail(ENOMEM, "clf: out of memory");
				break;
			}
			st->v = nv;
		}
		for (uint32_t k = 0; k < m->n; k++)
			st->v[st->n++] = (struct held){ m->file[k],
				m->subfile[k], m->length[k], false };
		if (!m->more || !m->n)
			break;
		/* On from just after the last one. */
		req.file = m->file[m->n - 1];
		req.subfile = m->subfile[m->n - 1] + 1;
		if (req.subfile == 0 && ++req.file == 0)
			break;
	}
	free(m);
	return err;
}

/* The subfile (file, index) of what st holds, or NULL. */
static struct held *find(struct iod_state *st, uint64_t file, uint32_t index)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct held *h = &st->v[mid];

		if (h->file == file && h->index == index)
			return h;
		if (h->file < file || (h->file == file && h->index < index))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether ino has a removal queued (for any iod). */
static int queued(struct mds_store *s, uint64_t ino)
{
	struct mds_gc_entry e;
	int n;

	/* The first entry after (ino - 1, UINT32_MAX) is ino's, if any. */
	if (ino == 0)
		return 0;
	n = mds_gc_list(s, ino - 1, UINT32_MAX, &e, 1);
	if (n < 0)
		return n;
	return n == 1 && e.ino == ino;
}

/* Subfile index of file ino should hold expect bytes on iod: check it. */
static int check_one(struct fsck *f, uint64_t ino, uint32_t index,
		     uint32_t iod, int64_t size, int64_t expect)
{
	struct iod_state *st;
	struct held *h;
	char ib[16];
	int err;

	if (iod >= f->cfg->niods)
		return clf_fail(EIO, "clf: file 0x%" PRIx64 ": subfile %s on iod %u, which the configuration lacks",
				ino, index_name(index, ib, sizeof(ib)), iod);
	st = &f->iods[iod];
	if (!st->c)
		return 0;
	h = find(st, ino, index);
	if (h) {
		h->claimed = true;
		if (h->length > expect) {
			printf("iod %u: subfile %s of file 0x%" PRIx64 " is %" PRId64 " bytes; metad's size %" PRId64 " covers %" PRId64 " of them\n",
			       iod, index_name(index, ib, sizeof(ib)), ino,
			       h->length, size, expect);
			f->sizes++;
			st->bad++;
		}
		return 0;
	}
	if (expect <= 0)
		return 0;
	if (f->repair) {
		struct clf_proto_sub_write_req w = { .file = ino,
						     .subfile = index };
		uint8_t body[64];
		struct wire_writer wr = { body, sizeof(body), 0 };
		void *payload = NULL;
		uint32_t len;

		err = clf_proto_sub_write_req_encode(&wr, &w);
		if (!err)
			err = call(st->c, CLF_PROTO_OP_SUB_WRITE, body, wr.pos,
				   &payload, &len);
		free(payload);
		if (!err) {
			printf("iod %u: made absent subfile %s of file 0x%" PRIx64 ", empty (%" PRId64 " bytes read as zeros)\n",
			       iod, index_name(index, ib, sizeof(ib)), ino,
			       expect);
			return 0;
		}
		printf("iod %u: absent subfile %s of file 0x%" PRIx64 ": cannot make it: %s\n",
		       iod, index_name(index, ib, sizeof(ib)), ino,
		       CLF_Last_error());
	} else {
		printf("iod %u: absent subfile %s of file 0x%" PRIx64 " (metad's size %" PRId64 " covers %" PRId64 " bytes of it; they read as zeros: a hole, or a lost subfile)\n",
		       iod, index_name(index, ib, sizeof(ib)), ino, size,
		       expect);
	}
	f->absent++;
	return 0;
}

/* Every subfile of file ino, against the iods. */
static int check_file(struct fsck *f, uint64_t ino)
{
	struct mds_layout *l = NULL;
	struct mds_attr a;
	int err;

	err = mds_getattr(f->s, ino, &a);
	if (err == -ENOENT)
		return 0;	/* removed since the listing */
	if (err || !S_ISREG(a.mode) || !a.has_layout)
		return err;
	err = mds_get_layout(f->s, ino, &l);
	if (err == -ENOENT || err == -ENODATA)
		return 0;
	if (err)
		return err;
	if (l->disp > 0)
		err = check_one(f, ino, CLF_PROTO_SUBFILE_HEAD, l->head_iod,
				a.size, a.size < l->disp ? a.size : l->disp);
	for (uint32_t j = 0; j < l->nsubfiles && !err; j++) {
		const struct mds_subfile *sf = &l->subfiles[j];
		CLF_Datatype t;
		int64_t expect;

		err = CLF_Type_decode(sf->type, sf->type_len, &t);
		if (err)
			break;
		err = mds_subfile_length(t, l->disp, a.size, &expect);
		CLF_Type_free(&t);
		if (!err)
			err = check_one(f, ino, j, sf->iod, a.size, expect);
	}
	mds_layout_free(l);
	return err;
}

/* What iod i holds that no layout placed there. */
static int check_orphans(struct fsck *f, uint32_t i)
{
	struct iod_state *st = &f->iods[i];
	size_t left = 0;
	char ib[16];
	int err;

	for (size_t k = 0; k < st->n; k++) {
		struct held *h = &st->v[k];
		struct clf_proto_remove_req rm = { h->file, h->index };
		uint8_t body[16];
		struct wire_writer w = { body, sizeof(body), 0 };
		void *payload = NULL;
		uint32_t len;

		if (h->claimed)
			continue;
		err = queued(f->s, h->file);
		if (err < 0)
			return err;
		if (err)
			continue;	/* metad removes it */
		if (f->repair && !clf_proto_remove_req_encode(&w, &rm) &&
		    !call(st->c, CLF_PROTO_OP_REMOVE, body, w.pos, &payload,
			  &len)) {
			free(payload);
			printf("iod %u: removed orphan subfile %s of file 0x%" PRIx64 " (%" PRId64 " bytes, on %s)\n",
			       i, index_name(h->index, ib, sizeof(ib)),
			       h->file, h->length, f->cfg->iods[i].addr);
			continue;
		}
		printf("iod %u: orphan subfile %s of file 0x%" PRIx64 " (%" PRId64 " bytes, on %s)%s%s\n",
		       i, index_name(h->index, ib, sizeof(ib)), h->file,
		       h->length, f->cfg->iods[i].addr,
		       f->repair ? ": cannot remove it: " : "",
		       f->repair ? CLF_Last_error() : "");
		left++;
	}
	f->orphans += left;
	st->bad += left;
	return 0;
}

/* Connect to and list every iod; an unreachable one is reported. */
static void list_iods(struct fsck *f)
{
	for (uint32_t i = 0; i < f->cfg->niods; i++) {
		struct iod_state *st = &f->iods[i];
		int err = probe_open(f->cfg, f->cfg->iods[i].addr,
				     f->cfg->timeout_ms, &st->c);

		if (!err)
			err = list_iod(st->c, st);
		if (!err)
			continue;
		printf("iod %u (%s): cannot check: %s\n", i,
		       f->cfg->iods[i].addr, CLF_Last_error());
		clf_conn_close(st->c);
		st->c = NULL;
		f->unreachable++;
	}
}

/* The summary: 0, or -EUCLEAN with what is left. */
static int summary(struct fsck *f)
{
	char what[256];
	size_t n = 0;

	what[0] = '\0';
	if (f->absent)
		printf("%zu absent subfile%s under metad's size: %s bytes read as zeros (holes no one wrote, or subfiles an iod lost)%s\n",
		       f->absent, f->absent == 1 ? "" : "s",
		       f->absent == 1 ? "its" : "their",
		       f->repair ? "" : "; clf fsck --repair makes them, empty");
	if (f->orphans)
		n += (size_t)snprintf(what + n, sizeof(what) - n,
				      "%s%zu orphan subfile%s%s", n ? ", " : "",
				      f->orphans, f->orphans == 1 ? "" : "s",
				      f->repair ? " left" :
				      " (clf fsck --repair removes them)");
	if (f->sizes && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n,
				      "%s%zu subfile%s longer than metad's size",
				      n ? ", " : "", f->sizes,
				      f->sizes == 1 ? "" : "s");
	if (f->unreachable && n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, "%s%zu iod%s not checked",
			 n ? ", " : "", f->unreachable,
			 f->unreachable == 1 ? "" : "s");
	if (!what[0])
		return 0;
	return clf_fail(EUCLEAN, "clf: %s", what);
}

int tool_fsck(const struct clf_config *cfg, bool repair)
{
	struct fsck f = { .cfg = cfg, .repair = repair };
	uint64_t *inos = NULL;
	size_t ninos = 0;
	int err;

	/* The iods' subfiles are checked against one store: with the
	 * namespace over several, files of the others would look orphaned. */
	if (cfg->nmetads > 1)
		return clf_fail(EOPNOTSUPP,
				"clf: fsck: the namespace is spread over %u metads; fsck checks a single metad's instance only",
				cfg->nmetads);
	err = mds_store_open_readonly(cfg->metad.dir, &f.s);
	if (!err)
		err = mds_store_verify(f.s);
	if (err)
		goto out;
	printf("metad store %s: ok\n", cfg->metad.dir);
	f.iods = calloc(cfg->niods, sizeof(*f.iods));
	if (!f.iods) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto out;
	}
	list_iods(&f);
	err = mds_store_inodes(f.s, &inos, &ninos);
	for (size_t k = 0; k < ninos && !err; k++)
		err = check_file(&f, inos[k]);
	for (uint32_t i = 0; i < cfg->niods && !err; i++)
		if (f.iods[i].c)
			err = check_orphans(&f, i);
	if (!err)
		for (uint32_t i = 0; i < cfg->niods; i++)
			if (f.iods[i].c && !f.iods[i].bad)
				printf("iod %u (%s): ok (%zu subfiles)\n", i,
				       cfg->iods[i].addr, f.iods[i].n);
	if (!err)
		err = summary(&f);
out:
	for (uint32_t i = 0; f.iods && i < cfg->niods; i++) {
		clf_conn_close(f.iods[i].c);
		free(f.iods[i].v);
	}
	free(f.iods);
	free(inos);
	mds_store_close(f.s);
	return err;
}
