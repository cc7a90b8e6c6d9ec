// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * falls_compact.c -- finding the nested vectors in a list of blocks.
 *
 * The algorithm and its costs are described in falls_compact.h.  Items
 * travel between levels as struct falls with absolute offsets (l, r, hi
 * relative to the start of the list), each owning a reference to its
 * inner set.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "falls_compact.h"

#define PEND_MAX (3 * FCOMPACT_MOTIF)

struct fclevel {
	struct falls pend[PEND_MAX]; /* owned; in order, no run among them */
	int npend;
	struct falls motif[FCOMPACT_MOTIF]; /* owned: the active run's group */
	int m;			/* members of the group; 0: no active run */
	int64_t reps;		/* complete repetitions seen */
	int64_t period;		/* bytes between repetitions */
	int64_t base;		/* where the repetition being matched starts */
	bool base_ok;		/* false: base overflowed, the run cannot go on */
	int t;			/* members of that repetition matched so far */
	struct fset *last_in;	/* owned: inner set of the last run passed up */
};

struct fcompact {
	struct fbuild *b;	  /* borrowed */
	int64_t last_hi;	  /* last byte of the last member; -1: none */
	int nlevels;		  /* levels in use, >= 1 */
	struct fclevel lv[FCOMPACT_LEVELS];
	struct fvec out;	  /* members of the result */
	bool unordered;		  /* disorder met: members go to raw */
	struct falls *raw;	  /* owned, with the references of their sets */
	size_t nraw, araw;
};

static void set_err(struct fbuild *b, int err)
{
	if (!b->err)
		b->err = err;
}

static void level_push(struct fcompact *c, int L, struct falls x);

struct fcompact *fcompact_new(struct fbuild *b)
{
	struct fcompact *c = calloc(1, sizeof(*c));

	if (!c) {
		set_err(b, -ENOMEM);
		return NULL;
	}
	c->b = b;
	c->last_hi = -1;
	c->nlevels = 1;
	return c;
}

static struct falls item(int64_t l, int64_t r, int64_t s, int64_t n,
			 struct fset *in)
{
	return (struct falls){ .l = l, .r = r, .s = s, .n = n, .in = in,
			       .hi = r + (n - 1) * s };
}

static bool same_shape(const struct falls *a, const struct falls *b)
{
	return a->r - a->l == b->r - b->l && a->n == b->n && a->s == b->s &&
	       fset_equal(a->in, b->in);
}

/* Into the result; takes x's reference. */
static void out_push(struct fcompact *c, struct falls x)
{
	fvec_push(c->b, &c->out, x.l, x.r, x.s, x.n, x.in);
}

/*
 * What level L passes on: to level L + 1, which a run (not a lone member)
 * creates when it does not exist yet; past the last level, to the result.
 */
static void pass_up(struct fcompact *c, int L, struct falls x, bool run)
{
	if (L + 1 < c->nlevels) {
		level_push(c, L + 1, x);
	} else if (run && c->nlevels < FCOMPACT_LEVELS) {
		c->nlevels++;
		level_push(c, L + 1, x);
	} else {
		out_push(c, x);
	}
}

static int cmp_item(const void *pa, const void *pb)
{
	const struct falls *a = pa, *b = pb;

	if (a->l != b->l)
		return a->l < b->l ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

/*
 * Join the plain blocks of a sorted vec that touch.  Done on groups and on
 * the result only, not on the list as it comes: joining the last block of
 * one row with the first of the next would hide the rows' regularity.
 */
static void join_touching(struct fvec *v)
{
	int out = 0;

	for (int i = 1; i < v->nr; i++) {
		struct falls *a = &v->v[out], *x = &v->v[i];

		if (a->n == 1 && !a->in && x->n == 1 && !x->in &&
		    x->l == a->r + 1) {
			a->r = a->hi = x->r;
			a->s = a->size = a->block = a->r - a->l + 1;
			continue;
		}
		v->v[++out] = *x;
	}
	if (v->nr)
		v->nr = out + 1;
}

/* The group of set members the active run repeats, relative to its start. */
static struct fset *motif_set(struct fcompact *c, struct fclevel *lv)
{
	struct fvec v = { 0 };
	int64_t l0 = lv->motif[0].l;
	struct fset *in;

	for (int j = 0; j < lv->m; j++) {
		struct falls *f = &lv->motif[j];

		fvec_push(c->b, &v, f->l - l0, f->r - l0, f->s, f->n, f->in);
		f->in = NULL;
	}
	join_touching(&v);
	in = fset_from_vec(c->b, &v);
	if (!in)
		return NULL;
	/* Runs of equal groups share one set: later comparisons are cheap. */
	if (lv->last_in && fset_equal(in, lv->last_in)) {
		fset_put(in);
		return fset_get(lv->last_in);
	}
	fset_put(lv->last_in);
	lv->last_in = fset_get(in);
	return in;
}

/* Pass the active run up as one FALLS; the level has no run afterwards. */
static void emit_run(struct fcompact *c, int L)
{
	struct fclevel *lv = &c->lv[L];
	struct falls *f0 = &lv->motif[0];
	struct fvec one = { 0 };
	struct fset *in;
	int64_t l0 = f0->l, hi = f0->hi, r;

	for (int j = 1; j < lv->m; j++)
		hi = max64(hi, lv->motif[j].hi);
	if (lv->m == 1 && f0->n == 1) {
		in = f0->in;
		f0->in = NULL;
		r = f0->r;
	} else {
		in = motif_set(c, lv);
		r = hi;
	}
	lv->m = 0;
	if (c->b->err) {
		fset_put(in);
		return;
	}
	fvec_push(c->b, &one, l0, r, lv->period, lv->reps, in);
	for (int i = 0; i < one.nr; i++)
		pass_up(c, L, one.v[i], true);
	free(one.v);
}

/*
 * End the active run of level L: pass it up, then feed the members of
 * the unfinished repetition back to the level, since they may start
 * something else.
 */
static void end_run(struct fcompact *c, int L)
{
	struct fclevel *lv = &c->lv[L];
	struct falls tail[FCOMPACT_MOTIF];
	int t = lv->t;
	int64_t delta = lv->base - lv->motif[0].l;

	for (int j = 0; j < t; j++) {
		tail[j] = lv->motif[j];
		tail[j].l += delta;
		tail[j].r += delta;
		tail[j].hi += delta;
		tail[j].in = fset_get(tail[j].in);
	}
	emit_run(c, L);
	for (int j = 0; j < t; j++)
		level_push(c, L, tail[j]);
}

/*
 * Do the last 3m pending members of lv hold three repetitions of a group
 * of m members?  The period goes to *period.
 */
static bool repeats(const struct fclevel *lv, int m, int64_t *period)
{
	const struct falls *p = lv->pend + lv->npend - 3 * m;
	int64_t d = p[m].l - p[0].l;

	/* The newest member first: it rejects almost every candidate. */
	if (p[3 * m - 1].l - p[2 * m - 1].l != d ||
	    p[2 * m - 1].l - p[m - 1].l != d)
		return false;
	for (int j = 0; j < m; j++) {
		for (int k = 1; k < 3; k++) {
			const struct falls *a = &p[(k - 1) * m + j];
			const struct falls *x = &p[k * m + j];

			if (x->l - a->l != d || !same_shape(a, x))
				return false;
		}
	}
	*period = d;
	return true;
}

/* Start a run on the last 3m pending members; the older ones go up. */
static void start_run(struct fcompact *c, int L, int m, int64_t period)
{
	struct fclevel *lv = &c->lv[L];
	int first = lv->npend - 3 * m;

	for (int i = 0; i < first; i++)
		pass_up(c, L, lv->pend[i], false);
	for (int j = 0; j < m; j++)
		lv->motif[j] = lv->pend[first + j];
	for (int i = first + m; i < lv->npend; i++)
		fset_put(lv->pend[i].in);
	lv->npend = 0;
	lv->m = m;
	lv->t = 0;
	lv->reps = 3;
	lv->period = period;
	lv->base_ok = mul_ok(3, period, &lv->base) &&
		      add_ok(lv->base, lv->motif[0].l, &lv->base);
}

static void pend_push(struct fcompact *c, int L, struct falls x)
{
	struct fclevel *lv = &c->lv[L];
	int64_t period;

	lv->pend[lv->npend++] = x;
	for (int m = 1; m <= FCOMPACT_MOTIF && 3 * m <= lv->npend; m++) {
		if (repeats(lv, m, &period)) {
			start_run(c, L, m, period);
			return;
		}
	}
	/* The oldest can no longer start a run: every group fits in PEND_MAX. */
	if (lv->npend == PEND_MAX) {
		pass_up(c, L, lv->pend[0], false);
		memmove(lv->pend, lv->pend + 1, --lv->npend * sizeof(*lv->pend));
	}
}

/* One more member of the active run matched. */
static inline void run_advance(struct fclevel *lv)
{
	if (++lv->t == lv->m) {
		lv->t = 0;
		lv->reps++;
		lv->base_ok = add_ok(lv->base, lv->period, &lv->base);
	}
}

/* Does x continue the active run of lv?  Then it is absorbed. */
static bool run_takes(struct fclevel *lv, const struct falls *x)
{
	const struct falls *want = &lv->motif[lv->t];

	if (!lv->base_ok || x->l - lv->base != want->l - lv->motif[0].l ||
	    !same_shape(want, x))
		return false;
	run_advance(lv);
	return true;
}

/* Level L receives x (its reference too). */
static void level_push(struct fcompact *c, int L, struct falls x)
{
	struct fclevel *lv = &c->lv[L];

	if (lv->m) {
		if (run_takes(lv, &x)) {
			fset_put(x.in);
			return;
		}
		end_run(c, L);
		if (lv->m) {	/* the unfinished repetition started a run */
			level_push(c, L, x);
			return;
		}
	}
	pend_push(c, L, x);
}

/* Everything inside the levels goes to the result, lowest level first. */
static void flush(struct fcompact *c)
{
	for (int L = 0; L < c->nlevels; L++) {
		struct fclevel *lv = &c->lv[L];

		while (lv->m)
			end_run(c, L);
		for (int i = 0; i < lv->npend; i++)
			pass_up(c, L, lv->pend[i], false);
		lv->npend = 0;
		fset_put(lv->last_in);
		lv->last_in = NULL;
	}
	c->nlevels = 1;
	c->last_hi = -1;
}

static void raw_add(struct fcompact *c, struct falls x)
{
	if (c->nraw == c->araw) {
		size_t a = c->araw ? 2 * c->araw : 64;
		struct falls *nr = realloc(c->raw, a * sizeof(*nr));

		if (!nr) {
			set_err(c->b, -ENOMEM);
			fset_put(x.in);
			return;
		}
		c->raw = nr;
		c->araw = a;
	}
	c->raw[c->nraw++] = x;
}

/* Disorder: from now on members are kept as given, with what came before. */
static void go_unordered(struct fcompact *c)
{
	flush(c);
	for (int i = 0; i < c->out.nr; i++)
		raw_add(c, c->out.v[i]);
	free(c->out.v);
	c->out = (struct fvec){ 0 };
	c->unordered = true;
}

/* Feed one member in list order (or keep it, once disorder was met). */
static void feed(struct fcompact *c, struct falls x)
{
	if (!c->unordered && x.l <= c->last_hi)
		go_unordered(c);
	if (c->unordered) {
		raw_add(c, x);
		return;
	}
	c->last_hi = x.hi;
	level_push(c, 0, x);
}

void fcompact_push_block(struct fcompact *c, int64_t l, int64_t r)
{
	struct fclevel *lv = &c->lv[0];

	if (c->b->err)
		return;
	if (l < 0 || r < l || r - l == INT64_MAX) {
		set_err(c->b, -EINVAL);
		return;
	}
	/* Most blocks of a long list continue a run of blocks: say so fast. */
	if (lv->m && l > c->last_hi && lv->base_ok && !c->unordered) {
		const struct falls *want = &lv->motif[lv->t];

		if (want->n == 1 && !want->in && want->r - want->l == r - l &&
		    l - lv->base == want->l - lv->motif[0].l) {
			c->last_hi = r;
			run_advance(lv);
			return;
		}
	}
	feed(c, item(l, r, r - l + 1, 1, NULL));
}

void fcompact_push(struct fcompact *c, const struct falls *f, int64_t delta)
{
	struct falls x = *f;

	if (c->b->err)
		return;
	if (!add_ok(x.l, delta, &x.l) || !add_ok(x.r, delta, &x.r) ||
	    !add_ok(x.hi, delta, &x.hi) || x.l < 0) {
		set_err(c->b, -EOVERFLOW);
		return;
	}
	if (x.n == 1 && !x.in) {
		fcompact_push_block(c, x.l, x.r);
		return;
	}
	x.in = fset_get(x.in);
	feed(c, x);
}

/*
 * The members kept as given, sorted: compacted when their spans follow
 * each other, otherwise checked for overlaps and kept as they are.
 */
static void finish_unordered(struct fcompact *c, int64_t *at)
{
	struct falls *raw = c->raw;
	size_t n = c->nraw;
	bool ordered = true;
	int m1, m2, err;
	int64_t byte;

	c->raw = NULL;
	c->nraw = c->araw = 0;
	c->unordered = false;
	qsort(raw, n, sizeof(*raw), cmp_item);
	for (size_t i = 1; i < n && ordered; i++)
		ordered = raw[i].l > raw[i - 1].hi;
	for (size_t i = 0; i < n; i++) {
		if (!ordered)
			out_push(c, raw[i]);
		else
			feed(c, raw[i]);
	}
	free(raw);
	if (ordered) {
		flush(c);
		return;
	}
	err = c->b->err ? 0 : fvec_check_disjoint(c->b, &c->out, &m1, &m2,
						   &byte);
	if (err == -EINVAL && at)
		*at = byte;
	if (err)
		set_err(c->b, err);
}

struct fset *fcompact_finish(struct fcompact *c, int64_t *at)
{
	struct fset *set;

	flush(c);
	if (c->unordered)
		finish_unordered(c, at);
	if (!c->b->err && c->out.nr > 1) {
		qsort(c->out.v, c->out.nr, sizeof(*c->out.v), cmp_item);
		join_touching(&c->out);
	}
	set = fset_from_vec(c->b, &c->out);
	fcompact_free(c);
	return set;
}

void fcompact_free(struct fcompact *c)
{
	if (!c)
		return;
	flush(c);
	for (size_t i = 0; i < c->nraw; i++)
		fset_put(c->raw[i].in);
	free(c->raw);
	fvec_release(&c->out);
	free(c);
}
