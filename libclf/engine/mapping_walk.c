// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_walk.c -- the runs of a mapping by forward cursors over I, Dv
 * and Ds (falls_cursor.h), for any period.
 *
 * From the next byte a of I, the run ends at the next byte z of Dv or Ds.
 * Past the origin the view's bytes are I + Dv and the subfile's I + Ds,
 * so a's view and subfile offsets are the cursors' counts before a, and
 * the run's length is the count of I in [a, z).  Seeking I to z also finds
 * the next run's start.  Each run thus costs three cursor seeks: a step to
 * the next block of the same level in the common fine-grained case, a
 * descent of O(depth) at worst -- never the walks from the root that
 * fset_next and fset_count make.
 */
#include <errno.h>

#include "arith.h"
#include "error.h"
#include "mapping_i.h"

/* The cursors of one walk, over I, Dv and Ds. */
struct walk {
	struct fmcursor common, only_v, only_s;
};

static int walk_init(struct walk *w, const struct clf_mapping *m)
{
	int err;

	err = fmcursor_init(&w->common, &m->common_parts, m->origin,
			    m->period);
	if (err)
		goto fail;
	err = fmcursor_init(&w->only_v, &m->only_v_parts, m->origin,
			    m->period);
	if (err)
		goto common;
	err = fmcursor_init(&w->only_s, &m->only_s_parts, m->origin,
			    m->period);
	if (err)
		goto only_v;
	return 0;
only_v:
	fmcursor_release(&w->only_v);
common:
	fmcursor_release(&w->common);
fail:
	return clf_fail_neg(err, "mapping: out of memory");
}

static void walk_release(struct walk *w)
{
	fmcursor_release(&w->only_s);
	fmcursor_release(&w->only_v);
	fmcursor_release(&w->common);
}

/* The runs of I in file bytes [first, last]. */
static int walk_runs(const struct clf_mapping *m, struct walk *w,
		     int64_t first, int64_t last, struct map_emit *e)
{
	int64_t a = fmcursor_seek(&w->common, first);

	while (a >= 0 && a <= last) {
		int64_t ca = fmcursor_count(&w->common);
		int64_t zv = fmcursor_seek(&w->only_v, a);
		int64_t zs = fmcursor_seek(&w->only_s, a);
		int64_t z = zv < 0 ? zs : (zs < 0 ? zv : min64(zv, zs));
		int64_t end = (z < 0 || z > last) ? last + 1 : z;
		int64_t next = fmcursor_seek(&w->common, end);
		int err;

		err = map_emit_run(e, m->v0 + ca + fmcursor_count(&w->only_v),
				   m->s0 + ca + fmcursor_count(&w->only_s),
				   fmcursor_count(&w->common) - ca);
		if (err)
			return err;
		if (end > last)
			break;
		a = next;
	}
	return 0;
}

int map_walk_file(const struct clf_mapping *m, int64_t first, int64_t last,
		  struct map_emit *e)
{
	struct walk w;
	int err = walk_init(&w, m);

	if (err)
		return err;
	err = walk_runs(m, &w, first, last, e);
	walk_release(&w);
	return err;
}

int map_walk_from(const struct clf_mapping *m, int64_t first,
		  int64_t view_hi, struct map_emit *e)
{
	int64_t last;
	struct walk w;
	int err;

	/* last + 1 bounds the walk: the offset INT64_MAX is never mapped. */
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, &last) ||
	    last == INT64_MAX)
		last = INT64_MAX - 1;
	err = walk_init(&w, m);
	if (err)
		return err;
	err = walk_runs(m, &w, first, last, e);
	walk_release(&w);
	return err;
}

int map_walk_cursors(const struct clf_mapping *m, int64_t view_lo,
		     int64_t view_hi, struct map_emit *e)
{
	int64_t first;
	int err;

	/* The file byte holding the first view byte. */
	err = CLF_Type_unmap(m->view, m->view_disp, view_lo, &first);
	if (err)
		return err;
	return map_walk_from(m, first, view_hi, e);
}
