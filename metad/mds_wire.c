// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_wire.c -- between the store's structs and the protocol's: request
 * paths and layouts in, reply bodies out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_ops_i.h"
#include "mds_peer.h"
#include "mds_iods.h"
#include "mds_retire.h"

_Static_assert(MDS_NAME_MAX == CLF_PROTO_NAME_MAX &&
	       MDS_PATH_MAX == CLF_PROTO_PATH_MAX &&
	       MDS_MAX_SUBFILES == CLF_PROTO_MAX_SUBFILES &&
	       MDS_MAX_IODS == CLF_PROTO_MAX_IODS &&
	       MDS_TYPE_MAX_BYTES == CLF_PROTO_TYPE_MAX_BYTES &&
	       MDS_LAYOUT_MAX_BYTES == CLF_PROTO_LAYOUT_TYPES_MAX &&
	       MDS_ROOT_INO == CLF_PROTO_ROOT_INO,
	       "the store and the protocol must agree on their limits");

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

int mds_path_split(struct mds_store *st, uint64_t dir,
		   struct clf_proto_str path, struct mds_path *out)
{
	struct mds_attr a;
	char *slash;
	int err;

	/* The decoder bounds the length and refuses NUL bytes. */
	if (path.len > CLF_PROTO_PATH_MAX)
		return clf_fail(ENAMETOOLONG, "metad: path of %u bytes",
				path.len);
	memcpy(out->buf, path.ptr, path.len);
	out->buf[path.len] = '\0';
	slash = strrchr(out->buf, '/');
	if (!slash) {
		out->dir = dir;
		out->name = out->buf;
		return 0;
	}
	*slash = '\0';
	err = mds_resolve(st, dir, out->buf, &a, NULL);
	if (err)
		return err;
	if (!S_ISDIR(a.mode))
		return clf_fail(ENOTDIR, "metad: '%s' is not a directory",
				out->buf);
	out->dir = a.ino;
	out->name = slash + 1;
	return 0;
}

/* The message for a layout that names retired iod (mds_retire.h). */
static int retired_fail(const char *what, uint32_t iod)
{
	return clf_fail(EINVAL,
			"metad: layout puts %s on iod %u, which is retired: `clf iod remove %u` emptied it and no new subfile goes there (`clf iod add %u` brings it back)",
			what, iod, iod, iod);
}

/*
 * Subfile j after the first goes to the next iod that is not retired
 * after subfile j - 1's: the configuration's round robin over the iods
 * that take new subfiles (the same as before when none is retired).
 */
static int place_rest(const struct mds_ctx *ctx, struct mds_layout *l)
{
	for (uint32_t j = 1; j < l->nsubfiles; j++) {
		int64_t i = mds_retired_next(ctx->retired,
					     mds_iods_count(ctx->iods),
					     l->subfiles[j - 1].iod + 1);

		if (i < 0)
			return (int)i;
		l->subfiles[j].iod = (uint32_t)i;
	}
	return 0;
}

static int req_round_robin(const struct mds_ctx *ctx,
			   const struct clf_proto_layout *pl,
			   struct mds_req_layout *out)
{
	const struct clf_config *cfg = ctx->cfg;
	/* Both may grow while metad runs (clf iod add: mds_iods_join). */
	uint32_t niods = mds_iods_count(ctx->iods);
	uint32_t stripe_count = mds_iods_stripe_count(ctx->iods);
	uint32_t active = mds_retired_active(ctx->retired, niods);
	int64_t stripe = pl->stripe_size ? (int64_t)pl->stripe_size
					 : cfg->stripe_size;
	/* "Every iod" (the default) means every one that takes files. */
	uint32_t count = pl->stripe_count ? pl->stripe_count
		       : stripe_count < active ? stripe_count
		       : active ? active : 1;
	int64_t first = pl->first_iod;
	int err;

	if (pl->first_iod == CLF_PROTO_IOD_DEFAULT)
		first = mds_retired_next(ctx->retired, niods, cfg->first_iod);
	else if (first >= niods)
		return clf_fail(EINVAL,
				"metad: round-robin layout starts on iod %u; the configuration has iods 0 to %u",
				pl->first_iod, niods - 1);
	else if (mds_retired_has(ctx->retired, pl->first_iod))
		return retired_fail("subfile 0 (first=)", pl->first_iod);
	if (first < 0)
		return (int)first;
	err = mds_layout_round_robin(stripe, count, (uint32_t)first, niods,
				     &out->rr);
	if (!err)
		err = place_rest(ctx, out->rr);
	if (err)
		return err;
	out->use = out->rr;
	return 0;
}

int mds_req_layout_init(const struct mds_ctx *ctx,
			const struct clf_proto_layout *pl,
			struct mds_req_layout *out)
{
	uint32_t niods = mds_iods_count(ctx->iods), disp_iod = pl->disp_iod;
	struct mds_subfile *subs;
	int64_t next = ctx->cfg->first_iod;

	memset(out, 0, sizeof(*out));
	if (pl->kind == CLF_PROTO_LAYOUT_ROUND_ROBIN)
		return req_round_robin(ctx, pl, out);
	/* The decoder admits only the two kinds. */
	if (pl->disp > 0 && disp_iod != CLF_PROTO_IOD_DEFAULT) {
		if (disp_iod >= niods)
			return clf_fail(EINVAL,
					"metad: layout puts the bytes before the displacement on iod %u; the configuration has iods 0 to %u",
					disp_iod, niods - 1);
		if (mds_retired_has(ctx->retired, disp_iod))
			return retired_fail("the bytes before the displacement",
					    disp_iod);
	}
	subs = calloc(pl->nsubfiles, sizeof(*subs));
	if (!subs)
		return clf_fail(ENOMEM, "metad: out of memory for %u subfiles",
				pl->nsubfiles);
	for (uint32_t j = 0; j < pl->nsubfiles; j++) {
		const struct clf_proto_subfile *sf = &pl->subfiles[j];
		uint32_t iod = sf->iod;
		char what[32];
		int err = 0;

		snprintf(what, sizeof(what), "subfile %u", j);
		/* DEFAULT (1.22): the next iod that takes new subfiles,
		 * from the configuration's first or after the last one. */
		if (iod == CLF_PROTO_IOD_DEFAULT) {
			next = mds_retired_next(ctx->retired, niods,
						(uint32_t)(next % niods));
			err = next < 0 ? (int)next : 0;
			iod = (uint32_t)next;
		} else if (iod >= niods) {
			err = clf_fail(EINVAL,
				       "metad: layout puts subfile %u on iod %u; the configuration has iods 0 to %u",
				       j, iod, niods - 1);
		} else if (mds_retired_has(ctx->retired, iod)) {
			err = retired_fail(what, iod);
		}
		if (err) {
			free(subs);
			return err;
		}
		next = (int64_t)iod + 1;
		subs[j] = (struct mds_subfile){ iod, sf->type.len,
						sf->type.ptr };
	}
	/* Bytes before a displacement of 0 are none: their iod may be
	 * any, so not a retired one. */
	if (disp_iod == CLF_PROTO_IOD_DEFAULT ||
	    (pl->disp == 0 && (disp_iod >= niods ||
			       mds_retired_has(ctx->retired, disp_iod))))
		disp_iod = subs[0].iod;
	out->ex = (struct mds_layout){ pl->disp, disp_iod, pl->nsubfiles,
				       subs };
	out->use = &out->ex;
	return 0;
}

void mds_req_layout_release(struct mds_req_layout *l)
{
	if (!l)
		return;
	mds_layout_free(l->rr);
	free(l->ex.subfiles);
	memset(l, 0, sizeof(*l));
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

static void attr_to_proto(const struct mds_attr *a, struct clf_proto_attr *p)
{
	mds_attr_to_proto(a, p);
}

void mds_attr_from_proto(const struct clf_proto_attr *p, struct mds_attr *a)
{
	*a = (struct mds_attr){
		.ino = p->ino,
		.mode = p->mode,
		.uid = p->uid,
		.gid = p->gid,
		.nlink = p->nlink,
		.size = p->size,
		.atime = p->atime,
		.mtime = p->mtime,
		.ctime = p->ctime,
		.has_layout = S_ISREG(p->mode),
	};
}

void mds_attr_to_proto(const struct mds_attr *a, struct clf_proto_attr *p)
{
	*p = (struct clf_proto_attr){
		.ino = a->ino,
		.mode = a->mode,
		.uid = a->uid,
		.gid = a->gid,
		.nlink = a->nlink,
		.size = a->size,
		.atime = a->atime,
		.mtime = a->mtime,
		.ctime = a->ctime,
	};
}

/* An EXPLICIT protocol layout borrowing l's types; free p->subfiles. */
static int layout_to_proto(const struct mds_layout *l,
			   struct clf_proto_layout *p)
{
	struct clf_proto_subfile *subs = calloc(l->nsubfiles, sizeof(*subs));

	if (!subs)
		return clf_fail(ENOMEM, "metad: out of memory for %u subfiles",
				l->nsubfiles);
	for (uint32_t j = 0; j < l->nsubfiles; j++)
		subs[j] = (struct clf_proto_subfile){
			l->subfiles[j].iod,
			{ l->subfiles[j].type, l->subfiles[j].type_len },
		};
	*p = (struct clf_proto_layout){
		.kind = CLF_PROTO_LAYOUT_EXPLICIT,
		.disp = l->disp,
		.disp_iod = l->head_iod,
		.nsubfiles = l->nsubfiles,
		.subfiles = subs,
	};
	return 0;
}

/*
 * After the measuring pass of an encoder (err its result, w what it
 * counted): make rep's buffer and point w at it for the real pass.
 */
static int reply_buf(int err, struct mds_reply *rep, struct wire_writer *w)
{
	uint8_t *buf;

	if (err == -ENOMEM)
		return err;
	/* Values from the store that the protocol refuses. */
	if (err)
		return mds_fail_ctx(-EIO, "metad: cannot encode the reply");
	buf = malloc(w->pos ? w->pos : 1);
	if (!buf)
		return clf_fail(ENOMEM,
				"metad: out of memory for a reply of %zu bytes",
				w->pos);
	rep->buf = buf;
	rep->len = w->pos;
	*w = (struct wire_writer){ buf, rep->len, 0 };
	return 0;
}

int mds_reply_empty(struct mds_reply *rep)
{
	rep->buf = NULL;
	rep->len = 0;
	rep->drop = false;
	return 0;
}

int mds_reply_attr(struct mds_reply *rep, const struct mds_attr *a)
{
	struct wire_writer w = { NULL, 0, 0 };
	struct clf_proto_attr p;
	int err;

	attr_to_proto(a, &p);
	err = reply_buf(clf_proto_attr_encode(&w, &p), rep, &w);
	if (!err)
		clf_proto_attr_encode(&w, &p);
	return err;
}

int mds_reply_layout(struct mds_reply *rep, const struct mds_layout *l)
{
	struct wire_writer w = { NULL, 0, 0 };
	struct clf_proto_layout p;
	int err = layout_to_proto(l, &p);

	if (err)
		return err;
	err = reply_buf(clf_proto_layout_encode(&w, &p), rep, &w);
	if (!err)
		clf_proto_layout_encode(&w, &p);
	free(p.subfiles);
	return err;
}

int mds_reply_lookup(struct mds_reply *rep, const struct mds_attr *a,
		     const struct mds_layout *l)
{
	struct clf_proto_lookup_rep p = { .has_layout = l != NULL };
	struct wire_writer w = { NULL, 0, 0 };
	int err = 0;

	attr_to_proto(a, &p.attr);
	if (l)
		err = layout_to_proto(l, &p.layout);
	if (err)
		return err;
	err = reply_buf(clf_proto_lookup_rep_encode(&w, &p), rep, &w);
	if (!err)
		clf_proto_lookup_rep_encode(&w, &p);
	free(p.layout.subfiles);
	return err;
}

int mds_reply_create(struct mds_reply *rep, const struct mds_attr *a,
		     const struct mds_layout *l)
{
	struct wire_writer w = { NULL, 0, 0 };
	struct clf_proto_create_rep p;
	int err;

	attr_to_proto(a, &p.attr);
	err = layout_to_proto(l, &p.layout);
	if (err)
		return err;
	err = reply_buf(clf_proto_create_rep_encode(&w, &p), rep, &w);
	if (!err)
		clf_proto_create_rep_encode(&w, &p);
	free(p.layout.subfiles);
	return err;
}

int mds_reply_readdir(struct mds_reply *rep, const struct mds_dirent *ents,
		      uint32_t n, bool eof)
{
	struct clf_proto_readdir_rep p = { .count = n, .eof = eof };
	struct wire_writer w = { NULL, 0, 0 };
	int err;

	p.ents = calloc(n ? n : 1, sizeof(*p.ents));
	if (!p.ents)
		return clf_fail(ENOMEM,
				"metad: out of memory for %u directory entries",
				n);
	for (uint32_t i = 0; i < n; i++)
		p.ents[i] = (struct clf_proto_dirent){
			ents[i].ino, ents[i].cookie, ents[i].mode,
			clf_proto_str_of(ents[i].name),
		};
	err = reply_buf(clf_proto_readdir_rep_encode(&w, &p), rep, &w);
	if (!err)
		clf_proto_readdir_rep_encode(&w, &p);
	free(p.ents);
	return err;
}

int mds_reply_readdirplus(struct mds_reply *rep,
			  const struct mds_dirent *ents,
			  struct mds_layout *const *layouts, uint32_t n,
			  bool eof)
{
	struct clf_proto_readdirplus_rep p = { .count = n, .eof = eof };
	struct wire_writer w = { NULL, 0, 0 };
	int err = 0;

	p.ents = calloc(n ? n : 1, sizeof(*p.ents));
	if (!p.ents)
		return clf_fail(ENOMEM,
				"metad: out of memory for %u directory entries",
				n);
	for (uint32_t i = 0; i < n && !err; i++) {
		struct clf_proto_dirent_plus *e = &p.ents[i];

		e->cookie = ents[i].cookie;
		e->name = clf_proto_str_of(ents[i].name);
		e->ino = ents[i].ino;
		e->mode = ents[i].mode;
		e->has_attr = ents[i].has_attr;
		if (e->has_attr)
			attr_to_proto(&ents[i].attr, &e->attr);
		e->has_layout = e->has_attr && layouts[i] != NULL;
		if (layouts[i])
			err = layout_to_proto(layouts[i], &e->layout);
	}
	if (!err)
		err = reply_buf(clf_proto_readdirplus_rep_encode(&w, &p), rep,
				&w);
	if (!err)
		clf_proto_readdirplus_rep_encode(&w, &p);
	for (uint32_t i = 0; i < n; i++)
		free(p.ents[i].layout.subfiles);
	free(p.ents);
	return err;
}

int mds_reply_statfs(struct mds_reply *rep, const struct clf_proto_statfs *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_statfs_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_statfs_encode(&w, m);
	return err;
}

int mds_reply_instance(struct mds_reply *rep,
		       const struct clf_proto_instance *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_instance_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_instance_encode(&w, m);
	return err;
}

int mds_reply_status(struct mds_reply *rep, const struct clf_proto_status *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_status_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_status_encode(&w, m);
	return err;
}

int mds_reply_append(struct mds_reply *rep,
		     const struct clf_proto_append_rep *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_append_rep_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_append_rep_encode(&w, m);
	return err;
}

int mds_reply_lock_holder(struct mds_reply *rep,
			  const struct clf_proto_lock_holder *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_lock_holder_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_lock_holder_encode(&w, m);
	return err;
}

int mds_reply_readlink(struct mds_reply *rep,
		       const struct clf_proto_readlink_rep *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_readlink_rep_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_readlink_rep_encode(&w, m);
	return err;
}

int mds_reply_resolve(struct mds_reply *rep,
		      const struct clf_proto_resolve_rep *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_resolve_rep_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_resolve_rep_encode(&w, m);
	return err;
}

int mds_reply_peer(struct mds_reply *rep, const struct clf_proto_peer_rep *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = reply_buf(clf_proto_peer_rep_encode(&w, m), rep, &w);

	if (!err)
		clf_proto_peer_rep_encode(&w, m);
	return err;
}
