// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_table.c -- the runs of one period, listed once, for mappings
 * whose period holds few of them.
 *
 * Past the origin the mapping repeats every period P, and so do its runs:
 * period k's runs are period 0's, shifted by k times the view and the
 * subfile bytes of a period.  When period 0 has at most map_table_max
 * runs (judged first from the description: a run holds at least one leaf
 * block of I), they are found once at creation with the cursor walk and
 * kept as (view offset, subfile offset, length) from the period's start.
 * A walk then finds its first run by a binary search on the view offsets
 * and reads the table onwards, period after period: O(1) per run, no
 * description walk at all.  A run cut by the period's end is joined to the
 * next period's first one by the emitter (mapping_i.h).
 *
 * The table costs at most map_table_max entries, whatever the data size.
 * It is not built when Dv and Ds are empty: the whole mapping is then one
 * run, which the cursor walk gives in O(depth) however many periods it
 * spans, where the table would be read once per period.
 *
 * A period of fine-grained patterns can hold far more runs than that
 * while repeating a much shorter stretch: a view of row pairs of a 512 x
 * 512 matrix over a CYCLIC(1) x CYCLIC(1) grid of 256-byte rows has a
 * period of 256 KiB and 65536 runs, yet I, Dv and Ds all repeat every
 * 2048 bytes (256 runs).  The table is then built for that sub-period
 * (tper): the candidates are the strides of the three sets' outer
 * FALLS, each checked on the descriptions (a set X repeats with q over
 * P iff X tiled from its first q bytes selects exactly X: equal sizes
 * and an intersection of that size), O(size of the descriptions).
 * Walking by the table costs a few ns per run where the cursors cost
 * tens: the difference for a collective of millions of 1-byte runs.
 * The stretch need not divide the period: each period is then tk
 * stretches from the table and a tail shorter than one, by cursors
 * (memory types built as MPI vectors end after their last block).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arith.h"
#include "mapping_i.h"
#include "mapping_prog.h"

int map_table_max = MAP_TABLE_MAX;

/* Leaf blocks of a set, or limit + 1 when there are more than limit. */
static int64_t leaves(const struct fset *s, int64_t limit)
{
	int64_t total = 0;

	for (int i = 0; i < s->nr; i++) {
		const struct falls *f = &s->f[i];
		int64_t per = 1;

		if (f->n > limit)
			return limit + 1;
		if (f->in)
			per = leaves(f->in, limit / f->n);
		if (per > limit / f->n)
			return limit + 1;
		total += per * f->n;
		if (total > limit)
			return limit + 1;
	}
	return total;
}

struct table_fill {
	const struct clf_mapping *m;
	struct map_run *t;	/* owned until handed to the mapping */
	int nr, alloc, max;
	bool full;		/* more runs than max: no run table */
	int64_t runs, c;	/* runs and common bytes seen */
	struct map_prog_build pb[2];	/* by view, by subfile */
};

/*
 * A sub-period's table may hold SUBPERIOD_TABLE_FACTOR times more runs:
 * only fine-grained patterns that repeat within their period have one
 * (a CYCLIC(1) x CYCLIC(1) view over 64 KiB stripes: 16384 runs every
 * 256 KiB, 2.7 ns a run instead of 34 for the cursors), and a table of
 * the whole period stays as small as it was.
 */
#define SUBPERIOD_TABLE_FACTOR 4

#define TABLE_FULL 1	/* internal: more runs than allowed, stop */

static int run_add(struct table_fill *tf, int64_t v, int64_t s, int64_t len)
{
	if (tf->nr == tf->alloc) {
		int alloc = tf->alloc ? 2 * tf->alloc : 16;
		struct map_run *t;

		if (tf->nr >= tf->max) {
			tf->full = true;
			return 0;
		}
		if (alloc > tf->max)
			alloc = tf->max;
		t = realloc(tf->t, alloc * sizeof(*t));
		if (!t)
			return -ENOMEM;
		tf->t = t;
		tf->alloc = alloc;
	}
	tf->t[tf->nr++] = (struct map_run){ v - tf->m->v0, s - tf->m->s0, len };
	return 0;
}

/* One run of the stretch: into the run table and both progression tables. */
static int table_add(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct table_fill *tf = arg;
	int err = 0;

	if (++tf->runs > MAP_PROG_RUNS_MAX) {
		/* Too many to look for progressions in. */
		tf->pb[0].full = tf->pb[1].full = true;
		if (tf->full)
			return TABLE_FULL;
	}
	if (!tf->full)
		err = run_add(tf, v, s, len);
	if (!err)
		err = map_prog_add(&tf->pb[CLF_PROG_VIEW], tf->c, v - tf->m->v0,
				   len);
	if (!err)
		err = map_prog_add(&tf->pb[CLF_PROG_SUB], tf->c, s - tf->m->s0,
				   len);
	tf->c += len;
	if (err)
		return err;
	if (tf->full && tf->pb[0].full && tf->pb[1].full)
		return TABLE_FULL;
	return 0;
}

/* The work a check of one candidate sub-period may take, in FALLS. */
#define SUBPERIOD_BUDGET (1 << 14)
#define SUBPERIOD_CANDIDATES 16

/*
 * Does set (in [0, period)) repeat with q over the period's whole
 * stretches of q bytes, [0, (period / q) * q)?
 */
static bool repeats_with(struct fset *set, int64_t q, int64_t period)
{
	struct fbuild b = { .budget = SUBPERIOD_BUDGET };
	int64_t k = period / q;
	struct fset *body, *first, *tiled, *both;
	bool yes;

	if (set->size == 0)
		return true;
	body = fset_clip(&b, set, 0, k * q - 1);
	first = fset_clip(&b, set, 0, q - 1);
	tiled = fset_tile(&b, first, q, 0, k);
	both = fset_intersect(&b, tiled, body);
	yes = !b.err && tiled->size == body->size && both->size == body->size;
	fset_put(both);
	fset_put(tiled);
	fset_put(first);
	fset_put(body);
	return yes;
}

static void add_candidate(int64_t *c, int *nc, int64_t q, int64_t period)
{
	if (q <= 1 || q > period / 2 || *nc == SUBPERIOD_CANDIDATES)
		return;
	for (int i = 0; i < *nc; i++)
		if (c[i] == q)
			return;
	c[(*nc)++] = q;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The shortest stretch that I, Dv and Ds all repeat with from the
 * period's start: the outer strides of their FALLS (and the lcm of them
 * all), shortest first; the period itself when none fits.  The stretch
 * need not divide the period: an MPI vector's extent stops after its last
 * block, so 3 bytes of every 4 over n blocks has a period of 4n - 1 and
 * repeats every 4 bytes but for the last 3.
 */
static int64_t sub_period(const struct clf_mapping *m)
{
	struct fset *sets[3] = { m->common, m->only_v, m->only_s };
	int64_t c[SUBPERIOD_CANDIDATES], all = 1;
	int nc = 0;

	for (int k = 0; k < 3; k++)
		for (int i = 0; i < sets[k]->nr; i++) {
			const struct falls *f = &sets[k]->f[i];

			if (f->n < 2)
				continue;
			add_candidate(c, &nc, f->s, m->period);
			if (all && !lcm_ok(all, f->s, &all))
				all = 0;
		}
	if (all > 1)
		add_candidate(c, &nc, all, m->period);
	qsort(c, nc, sizeof(*c), cmp_i64);
	for (int i = 0; i < nc; i++)
		if (repeats_with(m->common, c[i], m->period) &&
		    repeats_with(m->only_v, c[i], m->period) &&
		    repeats_with(m->only_s, c[i], m->period))
			return c[i];
	return m->period;
}

int map_table_build(struct clf_mapping *m)
{
	struct table_fill tf = { .m = m, .max = map_table_max };
	struct map_emit e = { .fn = table_add, .arg = &tf };
	int64_t q;
	int err;

	if (map_table_max <= 0 || m->common->size == 0 ||
	    (m->only_v->size == 0 && m->only_s->size == 0))
		return 0;
	/* Period 0 must end below INT64_MAX, which walks never reach. */
	if (m->period > INT64_MAX - m->origin)
		return 0;
	q = m->period;
	if (leaves(m->common, map_table_max) > map_table_max) {
		int64_t lim;

		q = sub_period(m);
		/* No shorter stretch: progressions only, if few runs. */
		tf.max = q == m->period ? 0
					: SUBPERIOD_TABLE_FACTOR * map_table_max;
		/* I repeats period / q times (and a tail shorter than q). */
		lim = mul_sat(MAP_PROG_RUNS_MAX, m->period / q + 1);
		if (leaves(m->common, lim) > lim)
			return 0;
	}
	m->tper = q;
	m->tk = m->period / q;
	m->ttail = m->period - m->tk * q;
	m->tcper = fset_count(m->common, q);
	m->tvper = m->tcper + fset_count(m->only_v, q);
	m->tsper = m->tcper + fset_count(m->only_s, q);
	for (int i = 0; i < 2; i++)
		tf.pb[i].max = m->ttail ? 0 : MAP_PROG_MAX;
	tf.full = tf.max == 0;
	err = map_walk_cursors(m, m->v0, m->v0 + m->tvper, &e);
	if (!err)
		err = map_emit_flush(&e);
	for (int i = 0; i < 2 && !err; i++)
		err = map_prog_finish(&tf.pb[i]);
	if (!err) {
		for (int i = 0; i < 2; i++) {
			if (tf.pb[i].full || !tf.pb[i].n)
				continue;
			m->prog[i] = tf.pb[i].p;
			m->nprog[i] = tf.pb[i].n;
			tf.pb[i].p = NULL;
		}
		if (!tf.full && tf.nr) {
			m->table = tf.t;
			m->ntable = tf.nr;
			tf.t = NULL;
		}
	}
	free(tf.t);
	free(tf.pb[0].p);
	free(tf.pb[1].p);
	return err == -ENOMEM ? err : 0;
}

/* The first run of the table ending after view offset r of a period. */
static int first_run_after(const struct clf_mapping *m, int64_t r)
{
	int a = 0, z = m->ntable;

	while (a < z) {
		int mid = a + (z - a) / 2;

		if (m->table[mid].v + m->table[mid].len <= r)
			a = mid + 1;
		else
			z = mid;
	}
	return a;
}

/*
 * Runs i... of one stretch of the table, the stretch at view offset bv
 * and subfile offset bs, clipped to [lo, view_hi); *past is set at the
 * first run that starts at or past view_hi.  0 or the emitter's value
 * (the segment function's, which may be positive).
 */
static int emit_runs(const struct clf_mapping *m, int64_t bv, int64_t bs,
		     int i, int64_t lo, int64_t view_hi, struct map_emit *e,
		     bool *past)
{
	for (; i < m->ntable; i++) {
		const struct map_run *t = &m->table[i];
		int64_t v = bv + t->v, s = bs + t->s, len = t->len;
		int err;

		if (v >= view_hi) {
			*past = true;
			return 0;
		}
		if (v < lo) {
			len -= lo - v;
			s += lo - v;
			v = lo;
		}
		if (len > view_hi - v)
			len = view_hi - v;
		err = map_emit_run(e, v, s, len);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The table walk when the table's stretch does not divide the period:
 * in each period, tk stretches from the table, then the tail by cursors.
 */
static int walk_with_tails(const struct clf_mapping *m, int64_t lo,
			   int64_t view_hi, struct map_emit *e)
{
	/* Periods p < pend lie wholly below INT64_MAX. */
	int64_t pend = (INT64_MAX - m->origin) / m->period;
	int64_t p = (lo - m->v0) / m->vper, r, k, first, last;
	bool past = false;
	int i = 0, err;

	if (p >= pend)
		return map_walk_cursors(m, lo, view_hi, e);
	err = CLF_Type_unmap(m->view, m->view_disp, lo, &first);
	if (err)
		return err;
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, &last) ||
	    last == INT64_MAX)
		last = INT64_MAX - 1;
	r = lo - m->v0 - p * m->vper;
	k = r / m->tvper;
	if (k < m->tk)
		i = first_run_after(m, r - k * m->tvper);
	for (;; p++, k = 0, i = 0) {
		int64_t bf, bv, bs, a, z;

		if (p >= pend)
			return map_walk_from(m, m->origin + p * m->period,
					     view_hi, e);
		bf = m->origin + p * m->period;
		bv = m->v0 + p * m->vper;
		bs = m->s0 + p * m->sper;
		for (; k < m->tk; k++, i = 0) {
			err = emit_runs(m, bv + k * m->tvper, bs + k * m->tsper,
					i, lo, view_hi, e, &past);
			if (err || past)
				return err;
		}
		/* The tail: file bytes [a, z] of this period. */
		a = max64(bf + m->tk * m->tper, first);
		z = bf + m->period - 1;
		if (a > last)
			return 0;
		err = map_walk_file(m, a, min64(z, last), e);
		if (err || z >= last)
			return err;
	}
}

int map_walk_table(const struct clf_mapping *m, int64_t view_lo,
		   int64_t view_hi, struct map_emit *e)
{
	/* Periods k < kend lie wholly below INT64_MAX. */
	int64_t kend = (INT64_MAX - m->origin) / m->tper;
	int64_t lo = max64(view_lo, m->v0), k;
	bool past = false;
	int i, err;

	if (lo >= view_hi)
		return 0;
	if (m->ttail)
		return walk_with_tails(m, lo, view_hi, e);
	k = (lo - m->v0) / m->tvper;
	/* The last, partial period is the cursors' (errors included). */
	if (k >= kend)
		return map_walk_cursors(m, view_lo, view_hi, e);
	i = first_run_after(m, lo - m->v0 - k * m->tvper);
	for (;; k++, i = 0) {
		int64_t bv, bs;

		if (k >= kend)
			return map_walk_from(m, m->origin + k * m->tper,
					     view_hi, e);
		bv = m->v0 + k * m->tvper;
		bs = m->s0 + k * m->tsper;
		err = emit_runs(m, bv, bs, i, lo, view_hi, e, &past);
		if (err || past)
			return err;
	}
}
