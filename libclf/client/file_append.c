// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * file_append.c -- where an O_APPEND write goes: at the end of file,
 * agreed with metad so that appends of different clients never overlap
 * (clf_proto.h, "Appends"; clf.h, "O_APPEND").
 *
 * The end is derived from the subfiles (file_size.c), then metad is
 * asked for the range, which starts at or after that end and metad's
 * size: two round trips per append, one to the file's iods and one to
 * metad, before the write itself.  Through a view that
 * selects every byte from its displacement (the default view, the
 * mount's) the range's length is known in advance and one APPEND
 * reserves it whatever others did meanwhile.  Through a view with holes
 * the file bytes a write covers depend on where it starts, so the range
 * is asked for EXACTly where this client computed it, and computed again
 * from the end metad reports when another append got there first.
 */
#include <errno.h>
#include <stdlib.h>

#include "arith.h"
#include "client_i.h"
#include "error.h"
#include "type.h"

/* The first protocol minor with APPEND (include/clf_proto.h). */
#define APPEND_PROTO_MINOR 5

/* EXACT requests before giving up, when other appends keep winning. */
#define APPEND_TRIES 1000

static int enc_append(struct wire_writer *w, const void *m)
{
	return clf_proto_append_req_encode(w, m);
}

/* One APPEND to metad: *offset as in the reply. */
static int meta_append(uint64_t ino, int64_t at, int64_t length,
		       uint32_t flags, int64_t *offset)
{
	struct clf_proto_append_req req = { ino, at, length, flags };
	struct clf_proto_append_rep rep;
	struct clf_client *cl;
	struct clf_peer *p;
	struct wire_reader r;
	struct iovec iov;
	void *buf, *reply;
	uint32_t rlen;
	uint64_t id;
	size_t len;
	int err;

	err = clf_client_get(&cl);
	if (err)
		return err;
	p = clf_client_metad_of(cl, ino);
	err = clf_encode(enc_append, &req, &buf, &len);
	if (err)
		return err;
	iov = (struct iovec){ buf, len };
	for (int attempt = 0; attempt < 2; attempt++) {
		bool stale;

		err = clf_peer_lock(p);
		if (err)
			break;
		if (clf_conn_minor(p->conn) < APPEND_PROTO_MINOR) {
			/* Appending where we think the end is could
			 * overwrite another client's records: refuse. */
			clf_peer_unlock(p);
			err = clf_fail_source(&p->src, -EOPNOTSUPP,
				       "speaks protocol 1.%u, which has no atomic O_APPEND (1.%u): upgrade metad",
				       clf_conn_minor(p->conn),
				       APPEND_PROTO_MINOR);
			break;
		}
		err = clf_peer_send(p, CLF_PROTO_OP_APPEND, &iov, 1, &id);
		if (!err)
			err = clf_peer_recv(p, CLF_PROTO_OP_APPEND, id, &reply,
					    &rlen);
		stale = err && clf_peer_stale(p);
		clf_peer_unlock(p);
		if (!stale)
			break;
	}
	free(buf);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_append_rep_decode(&r, &rep);
	free(reply);
	if (!err)
		*offset = rep.offset;
	return err;
}

/* Does f's view select every byte from its displacement on? */
static bool view_is_dense(const struct clf_file *f)
{
	return CLF_Type_size(f->view_type) == CLF_Type_extent(f->view_type);
}

/* Reserve n view bytes from the first view byte at or after file
 * offset *base (EXACT); *base moves to metad's end when refused. */
static int reserve_exact(struct clf_file *f, int64_t n, int64_t *base,
			 int64_t *lo, bool *granted)
{
	int64_t v = clf_type_count_before(f->view_type, f->view_disp, *base);
	int64_t last, off;
	int err;

	if (v < 0 || v > INT64_MAX - n)
		return clf_fail(EFBIG, "clf: append: past the largest view offset");
	err = CLF_Type_unmap(f->view_type, f->view_disp, v + n - 1, &last);
	if (err)
		return err;
	err = meta_append(f->ino, *base, last + 1 - *base,
			  CLF_PROTO_APPEND_EXACT, &off);
	if (err)
		return err;
	*granted = off == *base;
	*base = off;
	*lo = v;
	return 0;
}

static int append_at_once(struct clf_file *f, int64_t n, int64_t *lo)
{
	int64_t base, off;
	bool granted = false;
	/* metad adds its own size to at: the iods alone are asked here. */
	int err = clf_layout_size(f->layout, f->ino, NULL, &base);

	if (err)
		return err;
	base = max64(base, f->dirty_end);
	if (n == 0) {
		*lo = clf_type_count_before(f->view_type, f->view_disp, base);
		return 0;
	}
	if (view_is_dense(f)) {
		err = meta_append(f->ino, max64(base, f->view_disp), n, 0,
				  &off);
		if (!err)
			*lo = off - f->view_disp;
		return err;
	}
	for (int i = 0; i < APPEND_TRIES && !err && !granted; i++)
		err = reserve_exact(f, n, &base, lo, &granted);
	if (!err && !granted)
		err = clf_fail(EAGAIN, "clf: append: %d other appends came first",
			       APPEND_TRIES);
	return err;
}

/*
 * Through a restart of metad (client.h, Grace): the range is asked for
 * again from a new measure of the end, never replayed.  metad keeps
 * reservations in memory: a restarted one lost ours, and nothing was
 * written into it yet.
 */
int clf_file_append_at(struct clf_file *f, int64_t n, int64_t *lo)
{
	struct clf_grace g;
	int err;

	clf_grace_begin(&g);
	do
		err = append_at_once(f, n, lo);
	while (clf_grace_again(&g, err, false));
	return err;
}
