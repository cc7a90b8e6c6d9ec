// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * falls_algebra.c -- clipping, complement, intersection and tiling of
 * nested FALLS, computed on the descriptions.
 *
 * The key fact: a FALLS (l, r, s, n) equals its infinite periodic extension
 * restricted to [l, l + n*s - 1].  Two periodic patterns with strides s1
 * and s2 meet in a pattern of period lcm(s1, s2).  Taking the FALLS with
 * the larger stride as the outer one, each of its blocks sees the same
 * piece of the other FALLS once every lcm/s_outer blocks; when one stride
 * divides the other (the usual case in HPC: rows, planes, powers of two)
 * that is every block, and the intersection is one FALLS whose inner set
 * is the other FALLS clipped to a block.  Only the at most two outer
 * blocks that straddle the ends of the other FALLS are handled one by one.
 * Nothing is ever enumerated per byte.
 */
#include <errno.h>
#include <stdlib.h>

#include "arith.h"
#include "falls.h"

static void fset_clip_into(struct fbuild *b, struct fvec *v,
			   const struct fset *set, int64_t lo, int64_t hi,
			   int64_t delta);
static struct fset *intersect_interleaved(struct fbuild *b, struct fset *x,
					  struct fset *y);

/* Append the part of f inside [lo, hi], shifted by delta. */
static void falls_clip_into(struct fbuild *b, struct fvec *v,
			    const struct falls *f, int64_t lo, int64_t hi,
			    int64_t delta)
{
	int64_t len = f->r - f->l, i0, i1, f0, f1;
	int64_t part[2];

	if (b->err || lo > hi || f->hi < lo || f->l > hi)
		return;
	if (lo <= f->l && f->hi <= hi) {
		fvec_push_shifted(b, v, f, delta);
		return;
	}
	/* Blocks meeting [lo, hi], and those of them entirely inside. */
	i0 = max64(0, ceil_div(lo - f->r, f->s));
	i1 = min64(f->n - 1, floor_div(hi - f->l, f->s));
	if (i0 > i1)
		return;
	f0 = max64(i0, ceil_div(lo - f->l, f->s));
	f1 = min64(i1, floor_div(hi - f->r, f->s));
	if (f0 <= f1)
		fvec_push(b, v, f->l + f0 * f->s + delta, f->r + f0 * f->s + delta,
			  f->s, f1 - f0 + 1, fset_get(f->in));

	/* Only the first and the last block can be cut. */
	part[0] = i0;
	part[1] = i1;
	for (int k = 0; k < 2; k++) {
		int64_t i = part[k], bl, br, wlo, whi;

		if ((k == 1 && i1 == i0) || (f0 <= i && i <= f1))
			continue;
		bl = f->l + i * f->s;
		br = bl + len;
		wlo = max64(bl, lo);
		whi = min64(br, hi);
		if (!f->in) {
			fvec_push(b, v, wlo + delta, whi + delta, 0, 1, NULL);
			continue;
		}
		fset_clip_into(b, v, f->in, wlo - bl, whi - bl, bl + delta);
	}
}

static void fset_clip_into(struct fbuild *b, struct fvec *v,
			   const struct fset *set, int64_t lo, int64_t hi,
			   int64_t delta)
{
	for (int i = 0; i < set->nr; i++)
		falls_clip_into(b, v, &set->f[i], lo, hi, delta);
}

struct fset *fset_range(struct fbuild *b, int64_t lo, int64_t hi)
{
	struct fvec v = { 0 };

	if (lo <= hi)
		fvec_push(b, &v, lo, hi, hi - lo + 1, 1, NULL);
	return fset_from_vec(b, &v);
}

struct fset *fset_clip(struct fbuild *b, struct fset *set, int64_t lo,
		       int64_t hi)
{
	struct fvec v = { 0 };

	if (!set || b->err)
		return NULL;
	if (set->size == 0 || (lo <= set->lo && set->hi <= hi))
		return fset_get(set);
	fset_clip_into(b, &v, set, lo, hi, 0);
	return fset_from_vec(b, &v);
}

/* Append what f leaves free inside its own span [f->l, f->hi]. */
static void falls_holes_into(struct fbuild *b, struct fvec *v,
			     const struct falls *f)
{
	if (f->n > 1 && f->r - f->l + 1 < f->s)
		fvec_push(b, v, f->r + 1, f->l + f->s - 1, f->s, f->n - 1, NULL);
	if (f->in)
		fvec_push(b, v, f->l, f->r, f->s, f->n,
			  fset_complement(b, f->in, 0, f->r - f->l));
}

/* Append the holes that nr members with disjoint spans, by start, leave
 * in [lo, hi]. */
static void chain_holes_into(struct fbuild *b, struct fvec *v,
			     const struct falls *const *f, int nr,
			     int64_t lo, int64_t hi)
{
	int64_t next = lo;

	for (int i = 0; i < nr; i++) {
		if (f[i]->l > next)
			fvec_push(b, v, next, f[i]->l - 1, 0, 1, NULL);
		falls_holes_into(b, v, f[i]);
		next = f[i]->hi + 1;
	}
	if (next <= hi)
		fvec_push(b, v, next, hi, 0, 1, NULL);
}

static int cmp_hi(const void *pa, const void *pb)
{
	const struct falls *a = *(const struct falls *const *)pa;
	const struct falls *b = *(const struct falls *const *)pb;

	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return (a->l > b->l) - (a->l < b->l);
}

/*
 * What interleaved members leave free in [lo, hi]: the holes of a union
 * are the holes common to its members.  Members are taken in chains of
 * disjoint spans, each chain the longest one (earliest end first), whose
 * holes cost one pass; the chains' holes are then intersected.  A long
 * vector with pieces in its gaps is two chains, one intersection; meeting
 * members one by one with the holes so far would cost the number of
 * members times the number of holes.
 */
static struct fset *complement_interleaved(struct fbuild *b,
					   const struct fset *set,
					   int64_t lo, int64_t hi)
{
	const struct falls **rest, **chain;
	struct fset *res = NULL;
	int nrest = set->nr;

	rest = malloc(2 * set->nr * sizeof(*rest));
	if (!rest) {
		b->err = b->err ? b->err : -ENOMEM;
		return NULL;
	}
	chain = rest + set->nr;
	for (int i = 0; i < set->nr; i++)
		rest[i] = &set->f[i];
	qsort(rest, nrest, sizeof(*rest), cmp_hi);
	while (nrest > 0 && !b->err) {
		struct fvec v = { 0 };
		struct fset *holes, *t;
		int nchain = 0, kept = 0;
		int64_t last = INT64_MIN;

		for (int i = 0; i < nrest; i++) {
			if (rest[i]->l > last) {
				chain[nchain++] = rest[i];
				last = rest[i]->hi;
			} else {
				rest[kept++] = rest[i];
			}
		}
		nrest = kept;
		chain_holes_into(b, &v, chain, nchain, lo, hi);
		holes = fset_from_vec(b, &v);
		if (!res) {
			res = holes;
			continue;
		}
		t = fset_intersect(b, res, holes);
		fset_put(holes);
		fset_put(res);
		res = t;
	}
	free(rest);
	if (b->err) {
		fset_put(res);
		return NULL;
	}
	return res;
}

struct fset *fset_complement(struct fbuild *b, struct fset *set, int64_t lo,
			     int64_t hi)
{
	struct fset *c, *res = NULL;
	struct fvec v = { 0 };
	int64_t next = lo;

	if (!set || b->err)
		return NULL;
	if (set->size == 0 || set->hi < lo || set->lo > hi)
		return fset_range(b, lo, hi);
	c = fset_clip(b, set, lo, hi);
	if (!c)
		return NULL;
	if (c->ordered) {
		for (int i = 0; i < c->nr; i++) {
			const struct falls *f = &c->f[i];

			if (f->l > next)
				fvec_push(b, &v, next, f->l - 1, 0, 1, NULL);
			falls_holes_into(b, &v, f);
			next = f->hi + 1;
		}
		if (next <= hi)
			fvec_push(b, &v, next, hi, 0, 1, NULL);
		fset_put(c);
		return fset_from_vec(b, &v);
	}
	res = complement_interleaved(b, c, lo, hi);
	fset_put(c);
	return res;
}

/* The piece of i inside [bl, br], relative to bl, met with inner. */
static struct fset *block_meet(struct fbuild *b, const struct falls *i,
			       int64_t bl, int64_t br, struct fset *inner)
{
	struct fvec v = { 0 };
	struct fset *piece, *res;

	falls_clip_into(b, &v, i, bl, br, -bl);
	piece = fset_from_vec(b, &v);
	if (!piece || !inner)
		return piece;
	res = fset_intersect(b, piece, inner);
	fset_put(piece);
	return res;
}

/*
 * The intersection of two FALLS with n > 1, o having the larger stride,
 * inside [lo, hi] (the overlap of their spans).
 */
static void falls_product(struct fbuild *b, struct fvec *v,
			  const struct falls *o, const struct falls *i,
			  int64_t lo, int64_t hi)
{
	int64_t olen = o->r - o->l, iend, j0, j1, jf0, jf1, period, m;
	int64_t edge[2];

	j0 = max64(0, ceil_div(lo - o->r, o->s));
	j1 = min64(o->n - 1, floor_div(hi - o->l, o->s));
	if (j0 > j1)
		return;
	/* Outer blocks inside i's range see i's infinite pattern. */
	iend = add_sat(i->l, mul_sat(i->n, i->s)) - 1;
	jf0 = max64(j0, ceil_div(i->l - o->l, o->s));
	jf1 = min64(j1, floor_div(iend - o->r, o->s));
	if (jf0 <= jf1) {
		int64_t blocks = jf1 - jf0 + 1;

		/* Outer blocks with the same view of i: one in m. */
		if (lcm_ok(o->s, i->s, &period) && period / o->s < blocks)
			m = period / o->s;
		else
			m = blocks;
		/* Each residue costs work even when it meets nothing. */
		if (m > b->budget) {
			b->err = b->err ? b->err : -E2BIG;
			return;
		}
		b->budget -= m;
		for (int64_t rho = 0; rho < m && !b->err; rho++) {
			int64_t jb = jf0 + rho, cnt = (jf1 - jb) / m + 1;
			int64_t bl = o->l + jb * o->s;

			fvec_push(b, v, bl, bl + olen, m * o->s, cnt,
				  block_meet(b, i, bl, bl + olen, o->in));
		}
	}
	edge[0] = j0;
	edge[1] = j1;
	for (int k = 0; k < 2; k++) {
		int64_t j = edge[k], bl = o->l + j * o->s;

		if ((k == 1 && j1 == j0) || (jf0 <= j && j <= jf1))
			continue;
		fvec_push(b, v, bl, bl + olen, olen + 1, 1,
			  block_meet(b, i, bl, bl + olen, o->in));
	}
}

static void falls_intersect_into(struct fbuild *b, struct fvec *v,
				 const struct falls *x, const struct falls *y)
{
	int64_t lo = max64(x->l, y->l), hi = min64(x->hi, y->hi);

	if (lo > hi || b->err)
		return;
	/* A FALLS of one block is a plain segment: a clip. */
	if (x->n == 1) {
		falls_clip_into(b, v, y, lo, hi, 0);
		return;
	}
	if (y->n == 1) {
		falls_clip_into(b, v, x, lo, hi, 0);
		return;
	}
	if (x->s >= y->s)
		falls_product(b, v, x, y, lo, hi);
	else
		falls_product(b, v, y, x, lo, hi);
}

struct fset *fset_intersect(struct fbuild *b, struct fset *x, struct fset *y)
{
	struct fvec v = { 0 };

	if (!x || !y || b->err)
		return NULL;
	if (x == y)
		return fset_get(x);
	if (x->size == 0 || y->size == 0 || x->hi < y->lo || y->hi < x->lo)
		return fset_range(b, 1, 0);
	if (x->ordered && y->ordered) {
		/* Sweep two ordered lists of disjoint spans. */
		int i = 0, j = 0;

		while (i < x->nr && j < y->nr) {
			falls_intersect_into(b, &v, &x->f[i], &y->f[j]);
			if (x->f[i].hi < y->f[j].hi)
				i++;
			else
				j++;
		}
		return fset_from_vec(b, &v);
	}
	return intersect_interleaved(b, x, y);
}

struct fset *fset_union(struct fbuild *b, struct fset *x, struct fset *y)
{
	struct fvec v = { 0 };

	if (!x || !y || b->err)
		return NULL;
	for (int i = 0; i < x->nr; i++)
		fvec_push_shifted(b, &v, &x->f[i], 0);
	for (int i = 0; i < y->nr; i++)
		fvec_push_shifted(b, &v, &y->f[i], 0);
	return fset_from_vec(b, &v);
}

struct fset *fset_tile(struct fbuild *b, struct fset *set, int64_t period,
		       int64_t phase, int64_t times)
{
	struct fvec v = { 0 };
	struct fset *rot;

	if (!set || b->err)
		return NULL;
	phase %= period;
	if (phase == 0) {
		rot = fset_get(set);
	} else {
		fset_clip_into(b, &v, set, phase, period - 1, -phase);
		fset_clip_into(b, &v, set, 0, phase - 1, period - phase);
		rot = fset_from_vec(b, &v);
	}
	if (!rot || times == 1)
		return rot;
	fvec_push(b, &v, 0, period - 1, period, times, rot);
	return fset_from_vec(b, &v);
}

static int cmp_member(const void *pa, const void *pb)
{
	const struct fmember *a = pa, *b = pb;

	return (a->l > b->l) - (a->l < b->l);
}

/*
 * The pairs of members of different owners whose spans overlap.  Members
 * are taken by start, keeping those whose span reaches the current start
 * ("active"): each pair is met once, when its later member starts, so the
 * cost is the number of members plus the number of overlapping spans, not
 * the product of the member counts.  An irregular list of disjoint pieces
 * costs one sort and one pass; a long member (a vector spanning the
 * period) stays active and meets each piece it spans once.
 *
 * m is sorted in place (unless it is sorted already).  fn is called with the earlier member first and
 * stops the sweep by returning nonzero; so does a start past *stop (when
 * stop is not NULL).  *pairs_left bounds the active members visited:
 * -E2BIG when it runs out, -ENOMEM, else 0.
 */
typedef int (*pair_fn)(void *ctx, const struct fmember *a,
		       const struct fmember *c);

static int sweep_overlaps(struct fmember *m, int n, int64_t *pairs_left,
			  const int64_t *stop, pair_fn fn, void *ctx)
{
	int *active, nactive = 0, ret = 0;

	if (n < 2)
		return 0;
	active = malloc(n * sizeof(*active));
	if (!active)
		return -ENOMEM;
	for (int k = 1; k < n; k++) {
		if (m[k].l < m[k - 1].l) {
			qsort(m, n, sizeof(*m), cmp_member);
			break;
		}
	}
	for (int k = 0; k < n && !ret; k++) {
		const struct fmember *c = &m[k];
		int kept = 0;

		if (stop && c->l > *stop)
			break;
		for (int i = 0; i < nactive && !ret; i++) {
			const struct fmember *a = &m[active[i]];

			if (a->hi < c->l)
				continue;
			active[kept++] = active[i];
			if (--*pairs_left < 0)
				ret = -E2BIG;
			else if (a->owner != c->owner)
				ret = fn(ctx, a, c);
		}
		if (ret)
			break;
		active[kept++] = k;
		nactive = kept;
	}
	free(active);
	return ret < 0 ? ret : 0;
}

struct intersect_ctx {
	struct fbuild *b;
	struct fvec *v;
};

static int intersect_pair(void *ctx, const struct fmember *a,
			  const struct fmember *c)
{
	struct intersect_ctx *ic = ctx;

	falls_intersect_into(ic->b, ic->v, a->f, c->f);
	return ic->b->err;
}

/*
 * Interleaved members: only members whose spans overlap can meet.  No
 * limit on the pairs beyond the builder's budget: they are never more
 * than all pairs of members.
 */
static struct fset *intersect_interleaved(struct fbuild *b, struct fset *x,
					  struct fset *y)
{
	struct fvec v = { 0 };
	struct intersect_ctx ic = { b, &v };
	int64_t pairs_left = INT64_MAX;
	struct fmember *m;
	int n = x->nr + y->nr, err;

	m = malloc(n * sizeof(*m));
	if (!m) {
		b->err = -ENOMEM;
		return NULL;
	}
	for (int i = 0; i < x->nr; i++)
		m[i] = fmember_of(&x->f[i], 0);
	for (int j = 0; j < y->nr; j++)
		m[x->nr + j] = fmember_of(&y->f[j], 1);
	err = sweep_overlaps(m, n, &pairs_left, NULL, intersect_pair, &ic);
	free(m);
	if (err && !b->err)
		b->err = err;
	return fset_from_vec(b, &v);
}

static int64_t first_common_byte(struct fbuild *b, const struct falls *x,
				 const struct falls *y)
{
	struct fvec v = { 0 };
	struct fset *common;
	int64_t at = -1;

	falls_intersect_into(b, &v, x, y);
	common = fset_from_vec(b, &v);
	if (common && common->size > 0)
		at = common->lo;
	fset_put(common);
	return at;
}

struct overlap_ctx {
	struct fbuild *b;
	int64_t at;		/* smallest common byte so far, or INT64_MAX */
	int64_t stop;		/* at - 1: later starts cannot do better */
	int o1, o2;
};

static int overlap_pair(void *ctx, const struct fmember *a,
			const struct fmember *c)
{
	struct overlap_ctx *oc = ctx;
	int64_t byte;

	if (c->l >= oc->at)
		return 0;
	byte = first_common_byte(oc->b, a->f, c->f);
	if (oc->b->err)
		return oc->b->err;
	if (byte >= 0 && byte < oc->at) {
		oc->at = byte;
		oc->stop = byte - 1;
		oc->o1 = min64(a->owner, c->owner);
		oc->o2 = max64(a->owner, c->owner);
	}
	return 0;
}

int fmembers_first_overlap(struct fbuild *b, struct fmember *m, int n,
			   int64_t pairs, int *o1, int *o2, int64_t *at)
{
	struct overlap_ctx oc = { b, INT64_MAX, INT64_MAX, -1, -1 };
	int err;

	if (b->err)
		return b->err;
	err = sweep_overlaps(m, n, &pairs, &oc.stop, overlap_pair, &oc);
	if (err)
		return err;
	if (oc.o1 < 0)
		return 0;
	*o1 = oc.o1;
	*o2 = oc.o2;
	*at = oc.at;
	return -EINVAL;
}

int fvec_check_disjoint(struct fbuild *b, const struct fvec *v, int *m1,
			int *m2, int64_t *at)
{
	/*
	 * Bounds the work an adversarial, fully interleaved set can cause;
	 * a few visits per member are what an irregular list needs.
	 */
	int64_t pairs = (1 << 20) + 4 * (int64_t)v->nr;
	struct fmember *m;
	int ret;

	if (v->nr < 2)
		return 0;
	m = malloc(v->nr * sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (int i = 0; i < v->nr; i++)
		m[i] = fmember_of(&v->v[i], i);
	ret = fmembers_first_overlap(b, m, v->nr, pairs, m1, m2, at);
	free(m);
	return ret;
}
