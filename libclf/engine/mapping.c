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
 *
 * That needs a common period of reasonable description.  When lcm(extents)
 * overflows, or intersecting over it would take more than
 * PERIODIC_WORK_MAX (incommensurate extents: one copy of the larger
 * pattern per phase; or large irregular descriptions, whose intersection
 * is as large as they are and buys nothing a walk of their pieces does
 * not), the mapping is tiled instead (mapping_tiles.c): nothing is
 * intersected at creation, and a walk cuts the view pieces it accesses
 * against the subfile's, O(depth) per piece met.  The choice is made once,
 * here, from the sizes of the two descriptions and the number of phases
 * alone -- an estimate that costs nothing, never an attempt that spends
 * a budget and then gives up -- so a client and an iod that build the
 * same mapping build the same kind; callers see the same runs either
 * way.  No legal pair of types is refused.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "mapping.h"
#include "mapping_i.h"

/*
 * The budget of a periodic intersection, a safety net behind the
 * estimate below: proportional to the two descriptions (a compact common
 * pattern is rarely much larger than they are), at least
 * PERIODIC_MIN_BUDGET, at most CLF_MAPPING_BUDGET.  With the budget
 * fixed at 2^22, a 3-block view of extent 2^20 + 1 over 64 KiB stripes on
 * 2 subfiles took 0.2 s to map periodically (0.1 us tiled), and issue
 * 9's checkerboard (extent 4194272) spent 0.35 s per subfile reaching the
 * budget, then failed.
 */
#define PERIODIC_MIN_BUDGET (1 << 16)
#define PERIODIC_BUDGET_PER_NODE 16

/*
 * The estimated work of a periodic intersection, in FALLS met: the
 * larger-extent pattern recurs at P / E phases against the other within
 * the common period P, and each phase meets both descriptions once.
 * Past PERIODIC_WORK_MAX the mapping is tiled.  Measured at about 0.3 us
 * per unit (intersection and both complements), the limit keeps a
 * periodic set-up within a few milliseconds; a view of 4 KiB of every
 * 8 KiB over an irregular subfile of 2 x 10^4 pieces and 2 phases took
 * 50 ms to build and then gave up on its budget (tiled: 0.2 ms).
 */
#define PERIODIC_WORK_MAX (1 << 14)

_Atomic int64_t map_periodic_work;

static int64_t periodic_budget(const struct clf_type *v,
			       const struct clf_type *s)
{
	int64_t n = add_sat(v->set->nodes, s->set->nodes);

	return min64(CLF_MAPPING_BUDGET,
		     add_sat(PERIODIC_MIN_BUDGET,
			     mul_sat(n, PERIODIC_BUDGET_PER_NODE)));
}

/*
 * The view is the subfile's own pattern, at the same phase: the mapping
 * is one run whatever the description's size (a layout matching the
 * views), which only a periodic mapping sees.  O(description).
 */
static bool same_pattern(const struct clf_mapping *m)
{
	return m->view->extent == m->sub->extent &&
	       (m->origin - m->view_disp) % m->view->extent ==
		       (m->origin - m->sub_disp) % m->sub->extent &&
	       fset_equal(m->view->set, m->sub->set);
}

/*
 * Is a common period worth forming?  Not when lcm(extents) overflows, nor
 * when the estimated work (PERIODIC_WORK_MAX) is past the limit -- unless
 * the view is the subfile's pattern.
 */
static bool periodic_fits(const struct clf_mapping *m, int64_t *period)
{
	const struct clf_type *v = m->view, *s = m->sub;
	const struct clf_type *big = v->extent >= s->extent ? v : s;
	int64_t work;

	if (map_tiles_always || !lcm_ok(v->extent, s->extent, period))
		return false;
	if (same_pattern(m))
		return true;
	work = mul_sat(*period / big->extent,
		       add_sat(v->set->nodes, s->set->nodes));
	return work <= PERIODIC_WORK_MAX;
}

/*
 * I, Dv and Ds over the common period, and what walks need of them.
 * 0; -E2BIG past the budget (nothing reported: the caller goes tiled);
 * another negative errno, reported.
 */
static int build_periodic(struct clf_mapping *m, int64_t period,
			  int64_t budget)
{
	struct fbuild b = { .budget = budget };
	struct clf_type *view = m->view, *subfile = m->sub;
	struct fset *v, *s, *nv, *ns;
	int64_t origin = m->origin;

	v = fset_tile(&b, view->set, view->extent,
		      (origin - m->view_disp) % view->extent,
		      period / view->extent);
	s = fset_tile(&b, subfile->set, subfile->extent,
		      (origin - m->sub_disp) % subfile->extent,
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
	atomic_fetch_add_explicit(&map_periodic_work, budget - b.budget,
				  memory_order_relaxed);
	if (b.err == -E2BIG)
		return b.err;
	if (b.err)
		return clf_fail_neg(b.err, "mapping: cannot intersect view and subfile: %s",
				    strerror(-b.err));
	b.err = fsplit_init(&m->common_parts, m->common);
	if (!b.err)
		b.err = fsplit_init(&m->only_v_parts, m->only_v);
	if (!b.err)
		b.err = fsplit_init(&m->only_s_parts, m->only_s);
	if (b.err)
		return clf_fail_neg(b.err, "mapping: cannot prepare the walk: %s",
				    strerror(-b.err));
	m->period = period;
	m->v0 = clf_type_count_before(view, m->view_disp, origin);
	m->s0 = clf_type_count_before(subfile, m->sub_disp, origin);
	m->vper = m->common->size + m->only_v->size;
	m->sper = m->common->size + m->only_s->size;
	if (map_table_build(m))
		return clf_fail(ENOMEM, "mapping: out of memory");
	return 0;
}

/* Undo build_periodic, complete or not. */
static void release_periodic(struct clf_mapping *m)
{
	free(m->table);
	m->table = NULL;
	m->ntable = 0;
	for (int i = 0; i < 2; i++) {
		free(m->prog[i]);
		m->prog[i] = NULL;
		m->nprog[i] = 0;
	}
	fsplit_release(&m->common_parts);
	fsplit_release(&m->only_v_parts);
	fsplit_release(&m->only_s_parts);
	fset_put(m->common);
	fset_put(m->only_v);
	fset_put(m->only_s);
	m->common = m->only_v = m->only_s = NULL;
}

/*
 * A type that selects its whole extent selects every byte from its
 * displacement on, as CLF_BYTE does: the same mapping, with period 1.
 */
static CLF_Datatype plain(CLF_Datatype t)
{
	return t->set->size == t->extent ? CLF_BYTE : t;
}

int CLF_Mapping_create(CLF_Datatype view, int64_t view_disp,
		       CLF_Datatype subfile, int64_t subfile_disp,
		       CLF_Mapping **out)
{
	struct clf_mapping *m;
	int64_t period, budget;
	int err = -E2BIG;

	if (!view || !subfile || !out || view_disp < 0 || subfile_disp < 0)
		return clf_fail(EINVAL,
				"mapping: NULL type or negative displacement");
	m = calloc(1, sizeof(*m));
	if (!m)
		return clf_fail(ENOMEM, "mapping: out of memory");
	m->view = CLF_Type_dup(plain(view));
	m->sub = CLF_Type_dup(plain(subfile));
	m->view_disp = view_disp;
	m->sub_disp = subfile_disp;
	m->origin = max64(view_disp, subfile_disp);
	budget = periodic_budget(m->view, m->sub);
	if (periodic_fits(m, &period)) {
		err = build_periodic(m, period, budget);
		if (err)
			release_periodic(m);
	}
	if (err == -E2BIG) {
		err = map_tiles_build(m);
		if (err)
			err = clf_fail(ENOMEM, "mapping: out of memory");
	}
	if (err) {
		CLF_Mapping_free(m);
		return err;
	}
	*out = m;
	return 0;
}

bool clf_mapping_tiled(const CLF_Mapping *m)
{
	return m->tiled;
}

void CLF_Mapping_free(CLF_Mapping *m)
{
	if (!m)
		return;
	release_periodic(m);
	map_tiles_release(m);
	CLF_Type_free(&m->view);
	CLF_Type_free(&m->sub);
	free(m);
}

int64_t CLF_Mapping_bytes_per_period(const CLF_Mapping *m)
{
	if (!m)
		return -EINVAL;
	if (m->tiled)
		return m->touches ? m->view->set->size : 0;
	return m->common->size;
}

int CLF_Mapping_is_contiguous(const CLF_Mapping *m)
{
	if (!m)
		return -EINVAL;
	if (m->tiled)
		return 0;
	return m->only_v->size == 0 && m->only_s->size == 0 &&
	       m->common->size > 0;
}

int64_t map_common_before(const struct clf_mapping *m, int64_t f)
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
	if (view_lo == view_hi)
		return 0;
	if (m->tiled)
		return map_tiles_count(m, view_lo, view_hi);
	if (m->common->size == 0)
		return 0;
	if (CLF_Type_unmap(m->view, m->view_disp, view_lo, &first))
		return 0;
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, &last) ||
	    last == INT64_MAX)
		last = INT64_MAX - 1;	/* as CLF_Mapping_foreach */
	first = max64(first, m->origin);
	if (last < first)
		return 0;
	return map_common_before(m, last + 1) - map_common_before(m, first);
}

static int mapping_walk(const CLF_Mapping *m, int64_t view_lo,
			int64_t view_hi, CLF_Segment_fn fn, void *arg,
			bool sub_only)
{
	struct map_emit e = { .fn = fn, .arg = arg, .sub_only = sub_only };
	int err;

	if (!m || !fn || view_lo < 0 || view_hi < view_lo)
		return clf_fail(EINVAL, "mapping: bad view range [%lld, %lld)",
				(long long)view_lo, (long long)view_hi);
	if (view_lo == view_hi)
		return 0;
	if (m->tiled)
		err = map_tiles_walk(m, view_lo, view_hi, &e);
	else if (m->common->size == 0)
		return 0;
	else if (m->table)
		err = map_walk_table(m, view_lo, view_hi, &e);
	else
		err = map_walk_cursors(m, view_lo, view_hi, &e);
	return err ? err : map_emit_flush(&e);
}

int CLF_Mapping_foreach(const CLF_Mapping *m, int64_t view_lo,
			int64_t view_hi, CLF_Segment_fn fn, void *arg)
{
	return mapping_walk(m, view_lo, view_hi, fn, arg, false);
}

int CLF_Mapping_foreach_packed(const CLF_Mapping *m, int64_t view_lo,
			       int64_t view_hi, CLF_Segment_fn fn, void *arg)
{
	return mapping_walk(m, view_lo, view_hi, fn, arg, true);
}
