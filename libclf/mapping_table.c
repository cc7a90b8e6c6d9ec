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
 */
#include <errno.h>
#include <stdlib.h>

#include "arith.h"
#include "mapping_i.h"

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
	int nr, alloc;
};

#define TABLE_FULL 1	/* internal: more runs than allowed, stop */

static int table_add(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct table_fill *tf = arg;

	if (tf->nr == tf->alloc) {
		int alloc = tf->alloc ? 2 * tf->alloc : 16;
		struct map_run *t;

		if (tf->nr >= map_table_max)
			return TABLE_FULL;
		if (alloc > map_table_max)
			alloc = map_table_max;
		t = realloc(tf->t, alloc * sizeof(*t));
		if (!t)
			return -ENOMEM;
		tf->t = t;
		tf->alloc = alloc;
	}
	tf->t[tf->nr++] = (struct map_run){ v - tf->m->v0, s - tf->m->s0, len };
	return 0;
}

int map_table_build(struct clf_mapping *m)
{
	struct table_fill tf = { .m = m };
	struct map_emit e = { .fn = table_add, .arg = &tf };
	int err;

	if (map_table_max <= 0 || m->common->size == 0 ||
	    (m->only_v->size == 0 && m->only_s->size == 0))
		return 0;
	/* Period 0 must end below INT64_MAX, which walks never reach. */
	if (m->period > INT64_MAX - m->origin)
		return 0;
	if (leaves(m->common, map_table_max) > map_table_max)
		return 0;
	err = map_walk_cursors(m, m->v0, m->v0 + m->vper, &e);
	if (!err)
		err = map_emit_flush(&e);
	if (err) {
		free(tf.t);
		return err == -ENOMEM ? err : 0;
	}
	m->table = tf.t;
	m->ntable = tf.nr;
	return 0;
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

int map_walk_table(const struct clf_mapping *m, int64_t view_lo,
		   int64_t view_hi, struct map_emit *e)
{
	/* Periods k < kend lie wholly below INT64_MAX. */
	int64_t kend = (INT64_MAX - m->origin) / m->period;
	int64_t lo = max64(view_lo, m->v0), k;
	int i;

	if (lo >= view_hi)
		return 0;
	k = (lo - m->v0) / m->vper;
	/* The last, partial period is the cursors' (errors included). */
	if (k >= kend)
		return map_walk_cursors(m, view_lo, view_hi, e);
	i = first_run_after(m, lo - m->v0 - k * m->vper);
	for (;; k++, i = 0) {
		int64_t bv, bs;

		if (k >= kend)
			return map_walk_from(m, m->origin + k * m->period,
					     view_hi, e);
		bv = m->v0 + k * m->vper;
		bs = m->s0 + k * m->sper;
		for (; i < m->ntable; i++) {
			const struct map_run *t = &m->table[i];
			int64_t v = bv + t->v, s = bs + t->s, len = t->len;
			int err;

			if (v >= view_hi)
				return 0;
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
	}
}
