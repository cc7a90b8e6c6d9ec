// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_tiles.c -- the runs of a mapping without a common period: the
 * accessed range itself, the view's pieces cut against the subfile's.
 *
 * A periodic mapping (mapping.c) describes the common bytes of view and
 * subfile over lcm(extents).  When the extents are incommensurate (an MPI
 * filetype of extent 4194272 over a 131072-byte stripe cycle, a 3-block
 * type of extent 2^20 + 1) that period holds one shifted copy of the view
 * per phase, and its description grows with lcm / extent: it may not fit
 * in int64_t, or in the engine's budget.  A tiled mapping forms no common
 * period.  It keeps the two patterns, each periodic with its own extent
 * from its own displacement, and answers a view range [lo, hi) by walking
 * the file bytes from the view's byte lo to its byte hi - 1 with two
 * forward cursors (falls_cursor.h), one per pattern:
 *
 *   - the view's cursor finds the next view piece [pv, ev] (a leaf block
 *     of the view's description, in its tile) and its view offset;
 *   - the subfile's cursor finds its first byte ps >= pv and the end es
 *     of the subfile piece holding it, with its subfile offset;
 *   - if ps > ev the view piece holds no subfile byte and the walk moves
 *     on to ps (skipping every view piece before it in one seek);
 *     otherwise [ps, min(ev, es)] is a run: both offsets advance with it.
 *
 * The emitter (mapping_i.h) joins runs that continue each other, so the
 * runs are the maximal ones the periodic walk gives.  Each step emits a
 * run or jumps to the next subfile piece, so a walk costs O(view pieces
 * that meet the subfile + subfile pieces crossed) cursor seeks: O(1) to
 * the next block of the same leaf, O(depth) for a far jump (never a scan
 * from the type's start, never a cost per byte).  A pattern that selects
 * its whole extent is one endless piece.  Counting walks the sparser
 * pattern's pieces instead and counts the other's bytes in each with two
 * seeks: a round-robin subfile costs two seeks per stripe, however fine
 * the view.
 *
 * Set-up is O(size of the two descriptions): the parts for the cursors and
 * the check whether the view can meet the subfile at all, done on residues
 * modulo gcd(extents).  Memory: the two descriptions (shared with the
 * types) and, per walk, two cursors of O(depth).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "mapping_i.h"

int map_tiles_always;

/* Leaf blocks of a set per period, saturated. */
static int64_t leaf_blocks(const struct fset *s)
{
	int64_t total = 0;

	for (int i = 0; i < s->nr; i++) {
		const struct falls *f = &s->f[i];

		total = add_sat(total,
				mul_sat(f->in ? leaf_blocks(f->in) : 1, f->n));
	}
	return total;
}

static int side_init(struct map_side *sd, const struct clf_type *t,
		     int64_t disp)
{
	sd->origin = disp;
	sd->period = t->extent;
	sd->full = t->set->size == t->extent;
	sd->leaves = sd->full ? 0 : leaf_blocks(t->set);
	sd->parts.nr = 0;
	return sd->full ? 0 : fsplit_init(&sd->parts, t->set);
}

/* A forward cursor over one side. */
struct side_cur {
	const struct map_side *sd;
	struct fmcursor c;	/* unused when sd->full */
	int64_t e;		/* last byte of the piece found */
	int64_t cnt;		/* selected bytes in [origin, byte found) */
};

static int cur_init(struct side_cur *k, const struct map_side *sd)
{
	k->sd = sd;
	k->e = -1;
	k->cnt = 0;
	if (sd->full)
		return 0;
	return fmcursor_init(&k->c, &sd->parts, sd->origin, sd->period);
}

static void cur_release(struct side_cur *k)
{
	if (!k->sd->full)
		fmcursor_release(&k->c);
}

/*
 * The first selected byte >= x, or -1; then k->e and k->cnt describe it.
 * Targets must not decrease.
 */
static int64_t cur_seek(struct side_cur *k, int64_t x)
{
	int64_t p;

	if (k->sd->full) {
		p = max64(x, k->sd->origin);
		k->e = INT64_MAX;
		k->cnt = p - k->sd->origin;
		return p;
	}
	p = fmcursor_seek(&k->c, x);
	k->cnt = fmcursor_count(&k->c);
	k->e = p < 0 ? -1 : fmcursor_piece_end(&k->c);
	return p;
}

/*
 * The file bytes of view bytes [view_lo, view_hi): first and last, the
 * offset INT64_MAX never included (as in the periodic walk).
 */
static int view_bounds(const struct clf_mapping *m, int64_t view_lo,
		       int64_t view_hi, int64_t *first, int64_t *last)
{
	int err = CLF_Type_unmap(m->view, m->view_disp, view_lo, first);

	if (err)
		return err;
	if (CLF_Type_unmap(m->view, m->view_disp, view_hi - 1, last) ||
	    *last == INT64_MAX)
		*last = INT64_MAX - 1;
	return 0;
}

static int cursors_init(const struct clf_mapping *m, struct side_cur *v,
			struct side_cur *s)
{
	if (cur_init(v, &m->vside))
		return clf_fail(ENOMEM, "mapping: out of memory");
	if (cur_init(s, &m->sside)) {
		cur_release(v);
		return clf_fail(ENOMEM, "mapping: out of memory");
	}
	return 0;
}

/* The runs of the common bytes in file bytes [first, last]. */
static int walk_pieces(struct side_cur *v, struct side_cur *s, int64_t first,
		       int64_t last, struct map_emit *e)
{
	int64_t x = first;

	while (x <= last) {
		int64_t pv = cur_seek(v, x), ps, z;
		int err;

		if (pv < 0 || pv > last)
			break;
		ps = cur_seek(s, pv);
		if (ps < 0 || ps > last)
			break;
		if (ps > v->e) {
			/* Nothing of the subfile in this view piece. */
			x = ps;
			continue;
		}
		z = min64(min64(v->e, s->e), last);
		err = map_emit_run(e, v->cnt + (ps - pv), s->cnt, z - ps + 1);
		if (err)
			return err;
		x = z + 1;	/* z <= last < INT64_MAX */
	}
	return 0;
}

int map_tiles_walk(const struct clf_mapping *m, int64_t view_lo,
		   int64_t view_hi, struct map_emit *e)
{
	struct side_cur v, s;
	int64_t first, last;
	int err;

	if (!m->touches)
		return 0;
	err = view_bounds(m, view_lo, view_hi, &first, &last);
	if (err)
		return err;
	err = cursors_init(m, &v, &s);
	if (err)
		return err;
	err = walk_pieces(&v, &s, first, last, e);
	cur_release(&s);
	cur_release(&v);
	return err;
}

static int add_len(int64_t v, int64_t s, int64_t len, void *arg)
{
	*(int64_t *)arg += len;
	return 0;
}

/*
 * The view bytes in the subfile's pieces within [first, last]: per
 * subfile piece, the view's count at both ends.
 */
static int64_t count_by_subfile(struct side_cur *v, struct side_cur *s,
				int64_t first, int64_t last)
{
	int64_t x = first, total = 0;

	while (x <= last) {
		int64_t ps = cur_seek(s, x), z, before;

		if (ps < 0)
			break;
		z = min64(s->e, last);
		cur_seek(v, ps);
		before = v->cnt;
		cur_seek(v, z + 1);
		total += v->cnt - before;
		x = z + 1;
	}
	return total;
}

/* Does the subfile have fewer pieces per byte than the view? */
static bool subfile_sparser(const struct clf_mapping *m)
{
	__int128 s = (__int128)m->sside.leaves * m->vside.period;
	__int128 v = (__int128)m->vside.leaves * m->sside.period;

	return s < v;
}

int64_t map_tiles_count(const struct clf_mapping *m, int64_t view_lo,
			int64_t view_hi)
{
	struct side_cur v, s;
	int64_t first, last, n = 0;
	int err;

	if (!m->touches || view_bounds(m, view_lo, view_hi, &first, &last))
		return 0;
	err = cursors_init(m, &v, &s);
	if (err)
		return err;
	if (subfile_sparser(m)) {
		n = count_by_subfile(&v, &s, first, last);
	} else {
		struct map_emit e = { .fn = add_len, .arg = &n };

		walk_pieces(&v, &s, first, last, &e);
		map_emit_flush(&e);
	}
	cur_release(&s);
	cur_release(&v);
	return n;
}

/*
 * Whether the view can meet the subfile at all.  File byte f is a view
 * byte iff f = view_disp + k * Ev + x, x selected, k >= 0, and a subfile
 * byte iff f = sub_disp + j * Es + y likewise; k * Ev - j * Es takes every
 * multiple of g = gcd(Ev, Es) (k and j as large as needed), so they meet
 * iff some x and y have view_disp + x = sub_disp + y modulo g.  Each side's
 * residues are marked from its pieces in one period, within bounds on the
 * work; past them the answer is "may meet", which costs only walks that
 * find nothing.
 */
#define TOUCH_MAX_G (1 << 16)
#define TOUCH_MAX_WORK (1 << 20)

/*
 * Mark the residues mod g of one side's bytes, stopping once all are;
 * false when that takes more than TOUCH_MAX_WORK.
 */
static bool mark_residues(const struct map_side *sd, int64_t g, uint8_t *bits)
{
	int64_t end = add_sat(sd->origin, sd->period - 1), x = sd->origin;
	int64_t work = 0, marked = 0;
	struct side_cur k;
	bool ok = true;

	if (sd->full) {
		memset(bits, 1, g);
		return true;
	}
	if (cur_init(&k, sd))
		return false;
	while (x <= end && marked < g) {
		int64_t p = cur_seek(&k, x), len, r;

		if (p < 0 || p > end)
			break;
		len = min64(min64(k.e, end) - p + 1, g);
		work += 1 + len;
		if (work > TOUCH_MAX_WORK) {
			ok = false;
			break;
		}
		r = p % g;
		for (int64_t i = 0; i < len; i++, r = r + 1 == g ? 0 : r + 1) {
			marked += !bits[r];
			bits[r] = 1;
		}
		if (k.e >= end)
			break;
		x = k.e + 1;
	}
	cur_release(&k);
	return ok;
}

static bool sides_meet(const struct map_side *v, const struct map_side *s)
{
	int64_t g = gcd64(v->period, s->period);
	uint8_t *vb, *sb;
	bool meet = true;

	if (g > TOUCH_MAX_G)
		return true;
	vb = calloc(2, g);
	if (!vb)
		return true;
	sb = vb + g;
	if (mark_residues(v, g, vb) && mark_residues(s, g, sb)) {
		meet = false;
		for (int64_t r = 0; r < g && !meet; r++)
			meet = vb[r] && sb[r];
	}
	free(vb);
	return meet;
}

int map_tiles_build(struct clf_mapping *m)
{
	int err;

	m->tiled = true;
	err = side_init(&m->vside, m->view, m->view_disp);
	if (!err)
		err = side_init(&m->sside, m->sub, m->sub_disp);
	if (err)
		return err;
	m->touches = sides_meet(&m->vside, &m->sside);
	return 0;
}

void map_tiles_release(struct clf_mapping *m)
{
	fsplit_release(&m->vside.parts);
	fsplit_release(&m->sside.parts);
}
