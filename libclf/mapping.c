// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping.c -- the direct mapping between a view and one subfile.
 *
 * Past max(view_disp, subfile_disp) both patterns are periodic, so their
 * common bytes I and the bytes in exactly one of them D are periodic with
 * P = lcm(extents).  Both are computed once, as nested FALLS, at creation.
 *
 * A run then starts at the next byte a of I and ends just before the next
 * byte z of D after a: up to z the view and the subfile select the same
 * bytes, so both linear offsets advance together; at z one of them skips.
 * Each run thus costs a few description walks (next in I, next in D, two
 * counts), whatever its length, and runs are maximal by construction.
 * When D is empty the view falls on the subfile contiguously: one run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "type.h"

struct clf_mapping {
	struct clf_type *view, *sub; /* own a reference each */
	int64_t view_disp, sub_disp;
	int64_t origin;	      /* max of the displacements */
	int64_t period;	      /* lcm of the extents */
	struct fset *common;  /* I, relative to origin, in [0, period) */
	struct fset *differ;  /* D, likewise */
};

/* First byte >= x of a pattern repeating from origin every period. */
static int64_t next_periodic(const struct fset *set, int64_t origin,
			     int64_t period, int64_t x)
{
	int64_t k, y, base;

	if (set->size == 0)
		return -1;
	if (x < origin)
		x = origin;
	k = (x - origin) / period;
	base = origin + k * period;
	y = fset_next(set, x - base);
	if (y >= 0)
		return base + y;
	if (!add_ok(base, period, &base) || !add_ok(base, set->lo, &base))
		return -1;
	return base;
}

int CLF_Mapping_create(CLF_Datatype view, int64_t view_disp,
		       CLF_Datatype subfile, int64_t subfile_disp,
		       CLF_Mapping **out)
{
	struct fbuild b = { .budget = CLF_MAPPING_BUDGET };
	struct fset *v = NULL, *s = NULL, *nv = NULL, *ns = NULL;
	struct fset *only_v = NULL, *only_s = NULL;
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
	only_v = fset_intersect(&b, v, ns);
	only_s = fset_intersect(&b, s, nv);
	m->differ = fset_union(&b, only_v, only_s);
	fset_put(only_s);
	fset_put(only_v);
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
	m->view = CLF_Type_dup(view);
	m->sub = CLF_Type_dup(subfile);
	m->view_disp = view_disp;
	m->sub_disp = subfile_disp;
	m->origin = origin;
	m->period = period;
	*out = m;
	return 0;
}

void CLF_Mapping_free(CLF_Mapping *m)
{
	if (!m)
		return;
	fset_put(m->common);
	fset_put(m->differ);
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
	return m ? m->differ->size == 0 && m->common->size > 0 : -EINVAL;
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
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, &last))
		last = INT64_MAX - 1;
	first = max64(first, m->origin);
	if (last < first)
		return 0;
	return common_before(m, last + 1) - common_before(m, first);
}

int CLF_Mapping_foreach(const CLF_Mapping *m, int64_t view_lo,
			int64_t view_hi, CLF_Segment_fn fn, void *arg)
{
	int64_t first, last, x;
	int err;

	if (!m || !fn || view_lo < 0 || view_hi < view_lo)
		return clf_fail(EINVAL, "mapping: bad view range [%lld, %lld)",
				(long long)view_lo, (long long)view_hi);
	if (view_lo == view_hi || m->common->size == 0)
		return 0;
	/* The file bytes holding the first and the last view byte. */
	err = CLF_Type_unmap(m->view, m->view_disp, view_lo, &first);
	if (err)
		return err;
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, &last))
		last = INT64_MAX - 1;

	for (x = first; x <= last;) {
		int64_t a, z, end, voff, soff, len;

		a = next_periodic(m->common, m->origin, m->period, x);
		if (a < 0 || a > last)
			break;
		z = next_periodic(m->differ, m->origin, m->period, a);
		end = (z < 0 || z > last) ? last : z - 1;
		voff = clf_type_count_before(m->view, m->view_disp, a);
		soff = clf_type_count_before(m->sub, m->sub_disp, a);
		len = clf_type_count_before(m->view, m->view_disp, end + 1) -
		      voff;
		err = fn(voff, soff, len, arg);
		if (err)
			return err;
		x = end + 1;
	}
	return 0;
}
