// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping.c -- the direct mapping between a view and one subfile.
 *
 * Past max(view_disp, subfile_disp) both patterns are periodic, so their
 * common bytes I, the bytes only the view selects (Dv) and the bytes only
 * the subfile selects (Ds) are periodic with P = lcm(extents).  All three
 * are computed once, as nested FALLS, at creation.
 *
 * A run starts at a byte of I and ends just before the next byte of Dv or
 * Ds: up to there the view and the subfile select the same bytes, so both
 * linear offsets advance together.  Runs are produced in one of two ways:
 * when a period holds few runs, they are listed once at creation and
 * every walk reads that table period after period (mapping_table.c);
 * otherwise forward cursors walk the descriptions of I, Dv and Ds
 * (mapping_walk.c).  Either way a run costs what the description says,
 * never what its length says.  When Dv and Ds are empty the view falls on
 * the subfile contiguously: one run for any range.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "mapping_i.h"

int CLF_Mapping_create(CLF_Datatype view, int64_t view_disp,
		       CLF_Datatype subfile, int64_t subfile_disp,
		       CLF_Mapping **out)
{
	struct fbuild b = { .budget = CLF_MAPPING_BUDGET };
	struct fset *v = NULL, *s = NULL, *nv = NULL, *ns = NULL;
	struct clf_mapping *m;
	int64_t origin, period;

	if (!view || !subfile || !out || view_disp < 0 || subfile_disp < 0)
		return clf_fail(EINVAL,
				"mapping: NULL type or negative displacement");
	if (!lcm_ok(view->extent, subfile->extent, &period))
		return clf_fail(EOVERFLOW,
			"mapping: common period of extents %lld and %lld overflows int64",
			(long long)view->extent, (long long)subfile->extent);
	m = calloc(1, sizeof(*m));
	if (!m)
		return clf_fail(ENOMEM, "mapping: out of memory");
	origin = max64(view_disp, subfile_disp);

	v = fset_tile(&b, view->set, view->extent,
		      (origin - view_disp) % view->extent,
		      period / view->extent);
	s = fset_tile(&b, subfile->set, subfile->extent,
		      (origin - subfile_disp) % subfile->extent,
		      period / subfile->extent);
	m->common = fset_intersect(&b, v, s);
	nv = fset_complement(&b, v, 0, period - 1);
	ns = fset_complement(&b, s, 0, period - 1);
	m->only_v = fset_intersect(&b, v, ns);
	m->only_s = fset_intersect(&b, s, nv);
	fset_put(ns);
	fset_put(nv);
	fset_put(s);
	fset_put(v);
	if (b.err) {
		CLF_Mapping_free(m);
		if (b.err == -E2BIG)
			return clf_fail(E2BIG,
				"mapping: extents %lld and %lld are incommensurate; their intersection needs too many pieces per period %lld",
				(long long)view->extent,
				(long long)subfile->extent, (long long)period);
		return clf_fail_neg(b.err, "mapping: cannot intersect view and subfile: %s",
				    strerror(-b.err));
	}
	b.err = fsplit_init(&m->common_parts, m->common);
	if (!b.err)
		b.err = fsplit_init(&m->only_v_parts, m->only_v);
	if (!b.err)
		b.err = fsplit_init(&m->only_s_parts, m->only_s);
	if (b.err) {
		CLF_Mapping_free(m);
		return clf_fail_neg(b.err, "mapping: cannot prepare the walk: %s",
				    strerror(-b.err));
	}
	m->view = CLF_Type_dup(view);
	m->sub = CLF_Type_dup(subfile);
	m->view_disp = view_disp;
	m->sub_disp = subfile_disp;
	m->origin = origin;
	m->period = period;
	m->v0 = clf_type_count_before(view, view_disp, origin);
	m->s0 = clf_type_count_before(subfile, subfile_disp, origin);
	m->vper = m->common->size + m->only_v->size;
	m->sper = m->common->size + m->only_s->size;
	if (map_table_build(m)) {
		CLF_Mapping_free(m);
		return clf_fail(ENOMEM, "mapping: out of memory");
	}
	*out = m;
	return 0;
}

void CLF_Mapping_free(CLF_Mapping *m)
{
	if (!m)
		return;
	free(m->table);
	fsplit_release(&m->common_parts);
	fsplit_release(&m->only_v_parts);
	fsplit_release(&m->only_s_parts);
	fset_put(m->common);
	fset_put(m->only_v);
	fset_put(m->only_s);
	CLF_Type_free(&m->view);
	CLF_Type_free(&m->sub);
	free(m);
}

int64_t CLF_Mapping_bytes_per_period(const CLF_Mapping *m)
{
	return m ? m->common->size : -EINVAL;
}

int CLF_Mapping_is_contiguous(const CLF_Mapping *m)
{
	return m ? m->only_v->size == 0 && m->only_s->size == 0 &&
			   m->common->size > 0
		 : -EINVAL;
}

/* Bytes of I in [origin, f), for f >= origin. */
static int64_t common_before(const struct clf_mapping *m, int64_t f)
{
	int64_t k = (f - m->origin) / m->period;

	return k * m->common->size +
	       fset_count(m->common, f - m->origin - k * m->period);
}

int64_t CLF_Mapping_count(const CLF_Mapping *m, int64_t view_lo,
			  int64_t view_hi)
{
	int64_t first, last;

	if (!m || view_lo < 0 || view_hi < view_lo)
		return clf_fail(EINVAL, "mapping: bad view range [%lld, %lld)",
				(long long)view_lo, (long long)view_hi);
	if (view_lo == view_hi || m->common->size == 0)
		return 0;
	if (CLF_Type_unmap(m->view, m->view_disp, view_lo, &first))
		return 0;
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, &last) ||
	    last == INT64_MAX)
		last = INT64_MAX - 1;	/* as CLF_Mapping_foreach */
	first = max64(first, m->origin);
	if (last < first)
		return 0;
	return common_before(m, last + 1) - common_before(m, first);
}

int CLF_Mapping_foreach(const CLF_Mapping *m, int64_t view_lo,
			int64_t view_hi, CLF_Segment_fn fn, void *arg)
{
	struct map_emit e = { .fn = fn, .arg = arg };
	int err;

	if (!m || !fn || view_lo < 0 || view_hi < view_lo)
		return clf_fail(EINVAL, "mapping: bad view range [%lld, %lld)",
				(long long)view_lo, (long long)view_hi);
	if (view_lo == view_hi || m->common->size == 0)
		return 0;
	if (m->table)
		err = map_walk_table(m, view_lo, view_hi, &e);
	else
		err = map_walk_cursors(m, view_lo, view_hi, &e);
	return err ? err : map_emit_flush(&e);
}
