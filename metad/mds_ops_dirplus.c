// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_dirplus.c -- READDIRPLUS (1.14): a page of directory entries
 * with the attributes of each, and on request the layouts of regular
 * files, so that a listing with attributes (ls -l, the mount's
 * readdirplus) costs one round trip per page instead of one GETATTR (and
 * one GET_LAYOUT) per entry.
 *
 * An entry whose inode lives on another metad (several metads) goes
 * without attributes, which the client asks of that metad.
 *
 * The entries and their inodes come from one read transaction
 * (mds_readdir), so a page is a consistent picture; layouts are read
 * after it, each in its own: a file removed in between is sent without
 * its layout, as a LOOKUP a moment later would find nothing.  Sizes are
 * metad's: the client derives the size of a regular file from its
 * subfiles as for a stat (clf_proto.h, "Size").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_ops_i.h"

/* The bytes entry e (with layout l, or NULL) takes in a reply. */
static size_t entry_bytes(const struct mds_dirent *e,
			  const struct mds_layout *l)
{
	size_t n = 8 + 2 + strlen(e->name) + 8 + 4 + 1 + 56 + 1;

	if (!l)
		return n;
	n += 1 + 8 + 4 + 4;
	for (uint32_t j = 0; j < l->nsubfiles; j++)
		n += 4 + 4 + l->subfiles[j].type_len;
	return n;
}

/*
 * Keep the first entries of ents[0..*n) that fit CLF_PROTO_READDIRPLUS_BYTES
 * (the first always), reading layouts into layouts[] when want_layout;
 * *n becomes how many and *cut says whether some were left out.  Returns
 * 0 or the error of a layout that could not be read.
 */
static int fill_layouts(const struct mds_session *s,
			const struct mds_dirent *ents, bool want_layout,
			struct mds_layout **layouts, uint32_t *n, bool *cut)
{
	size_t total = 0;
	uint32_t i;

	*cut = false;
	for (i = 0; i < *n; i++) {
		struct mds_layout *l = NULL;
		size_t bytes;

		if (want_layout && ents[i].has_attr &&
		    S_ISREG(ents[i].attr.mode)) {
			int err = mds_get_layout(s->ctx->store, ents[i].ino, &l);

			/* No layout yet, or gone since the page was read. */
			if (err == -ENODATA || err == -ENOENT)
				l = NULL;
			else if (err)
				return err;
		}
		bytes = entry_bytes(&ents[i], l);
		if (i > 0 && total + bytes > CLF_PROTO_READDIRPLUS_BYTES) {
			mds_layout_free(l);
			*cut = true;
			break;
		}
		total += bytes;
		layouts[i] = l;
	}
	*n = i;
	return 0;
}

int mds_op_readdirplus(const struct mds_session *s, struct wire_reader *r,
		       struct mds_reply *rep)
{
	struct clf_proto_readdirplus_req req;
	struct mds_layout **layouts = NULL;
	struct mds_dirent *ents;
	bool eof = false, cut = false;
	uint32_t n = 0;
	int got, err = clf_proto_readdirplus_req_decode(r, &req);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_READDIRPLUS, err);
	err = mds_may_readdir(s, req.dir);
	if (err)
		return err;
	/* max is 1..CLF_PROTO_READDIR_MAX after decoding. */
	ents = malloc(req.max * sizeof(*ents));
	layouts = calloc(req.max, sizeof(*layouts));
	if (!ents || !layouts) {
		err = clf_fail(ENOMEM,
			       "metad: out of memory for %u directory entries",
			       req.max);
		goto free_ents;
	}
	got = mds_readdir(s->ctx->store, req.dir, req.cookie, ents, req.max,
			  &eof);
	if (got < 0) {
		err = got;
		goto free_ents;
	}
	n = (uint32_t)got;
	err = fill_layouts(s, ents, req.flags & CLF_PROTO_READDIRPLUS_LAYOUT,
			   layouts, &n, &cut);
	if (!err)
		err = mds_reply_readdirplus(rep, ents, layouts, n, eof && !cut);
free_ents:
	for (uint32_t i = 0; layouts && i < n; i++)
		mds_layout_free(layouts[i]);
	free(layouts);
	free(ents);
	return err;
}
