// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * falls_cursor.c -- the forward cursor over a periodic nested FALLS set.
 *
 * Level 0 is one period of the set; level j + 1 is the inner set of the
 * block the cursor is in at level j.  A seek pops the levels whose set has
 * nothing left at or after the target, then descends again, starting from
 * the member it used last at each level (targets only grow, so members
 * only move forward).  The arithmetic is that of fset_next and fset_count
 * (falls.c), done once per level crossed instead of once per level of the
 * whole tree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arith.h"
#include "falls_cursor.h"

#define TOP_DONE (-2)	/* no selected byte left that fits in int64_t */

int fcursor_init(struct fcursor *c, const struct fset *set, int64_t origin,
		 int64_t period)
{
	int need = set->depth + 1;

	c->set = set;
	c->origin = origin;
	c->period = period;
	c->p = -1;
	c->e = -1;
	c->c = 0;
	c->leaf = NULL;
	c->top = set->size ? -1 : TOP_DONE;
	c->lv = c->inline_lv;
	if (need > FCURSOR_INLINE_LEVELS) {
		c->lv = calloc(need, sizeof(*c->lv));
		if (!c->lv) {
			c->lv = c->inline_lv;
			return -ENOMEM;
		}
	}
	return 0;
}

void fcursor_release(struct fcursor *c)
{
	if (c->lv != c->inline_lv)
		free(c->lv);
	c->lv = c->inline_lv;
}

/* Nothing left: count is the number of selected bytes in [origin, x). */
static int64_t finish(struct fcursor *c, int64_t count)
{
	c->top = TOP_DONE;
	c->p = -1;
	c->e = -1;
	c->c = count;
	c->leaf = NULL;
	return -1;
}

/* Make level 0 the period holding x (x >= origin). */
static void enter_period(struct fcursor *c, int64_t x)
{
	int64_t k = (x - c->origin) / c->period;
	struct fcur_level *L = &c->lv[0];

	L->set = c->set;
	L->base = c->origin + k * c->period;
	L->cnt = k * c->set->size;	/* <= k * period <= x: no overflow */
	L->m = -1;
	L->end = add_sat(L->base, c->period - 1);
}

/* First member of an ordered set whose last byte is >= rel. */
static int member_from(const struct fset *s, int hint, int64_t rel)
{
	int a = hint < 0 ? 0 : hint, z = s->nr - 1;

	/* Targets grow slowly in a walk: the answer is usually near. */
	for (int k = 0; k < 4 && a < z; k++, a++)
		if (s->f[a].hi >= rel)
			return a;
	while (a < z) {
		int mid = a + (z - a) / 2;

		if (s->f[mid].hi >= rel)
			z = mid;
		else
			a = mid + 1;
	}
	return a;
}

/* Last byte of the leaf block holding y, a byte selected by s. */
static int64_t piece_end(const struct fset *s, int64_t y)
{
	/* Ordered: only the member whose span holds y can hold it. */
	for (int k = s->ordered ? member_from(s, -1, y) : 0; k < s->nr; k++) {
		const struct falls *f = &s->f[k];
		int64_t i, off;

		if (y < f->l || y > f->hi)
			continue;
		i = (y - f->l) / f->s;
		off = y - f->l - i * f->s;
		if (off > f->r - f->l)
			continue;
		if (!f->in)
			return f->l + i * f->s + (f->r - f->l);
		if (fset_next(f->in, off) != off)
			continue;
		return f->l + i * f->s + piece_end(f->in, off);
	}
	return y;
}

/*
 * An unordered level (interleaved members): answer it with the
 * description walk of that level alone, and keep the leaf block found as
 * the current piece.
 */
static int64_t seek_unordered(struct fcursor *c, int j, int64_t rel)
{
	struct fcur_level *L = &c->lv[j];
	int64_t y = fset_next(L->set, rel), p;

	if (!add_ok(L->base, y, &p))
		return finish(c, L->cnt + fset_count(L->set, rel));
	c->p = p;
	c->e = add_sat(L->base, piece_end(L->set, y));
	c->c = L->cnt + fset_count(L->set, y);
	c->top = j;
	c->leaf = NULL;
	return p;
}

/*
 * x lies in the next block of the leaf FALLS holding the current piece,
 * or in the gap before it: the commonest step of a fine-grained walk.
 * Everything in [p, e] is selected and nothing between e and that block.
 */
static bool step_leaf(struct fcursor *c, int64_t x)
{
	const struct falls *f = c->leaf;
	struct fcur_level *L = &c->lv[c->top];
	int64_t nb, ne, p;

	if (x - c->e > f->s || L->i + 1 >= f->n ||
	    !add_ok(c->e, f->s, &ne))
		return false;
	nb = ne - (f->r - f->l);
	p = max64(x, nb);
	c->c += c->e - c->p + 1 + (p - nb);
	c->p = p;
	c->e = ne;
	L->i++;
	return true;
}

int64_t fcursor_seek_far(struct fcursor *c, int64_t x)
{
	int j = c->top;

	if (c->leaf && x > c->e && step_leaf(c, x))
		return c->p;

	if (j == TOP_DONE)
		return -1;
	if (x < c->origin)
		x = c->origin;
	if (j < 0) {
		enter_period(c, x);
		j = 0;
	}
	for (;;) {
		struct fcur_level *L = &c->lv[j];
		const struct fset *s = L->set;
		const struct falls *f;
		int64_t rel = x - L->base, d, i, off, len, bstart, bcnt;
		int m;

		if (rel > s->hi) {
			/* Nothing at or after x here: on to the next block. */
			if (L->end == INT64_MAX)
				return finish(c, L->cnt + s->size);
			x = max64(x, L->end + 1);
			if (j == 0)
				enter_period(c, x);
			else
				j--;
			continue;
		}
		if (rel < s->lo)
			rel = s->lo;
		if (!s->ordered)
			return seek_unordered(c, j, rel);
		m = member_from(s, L->m, rel);
		f = &s->f[m];
		if (m != L->m) {
			L->m = m;
			L->i = 0;
		}
		if (rel < f->l)
			rel = f->l;
		/* Mostly the same block or the next: no division then. */
		d = rel - f->l - L->i * f->s;
		i = L->i;
		if (d >= f->s) {
			d -= f->s;
			i++;
			if (d >= f->s) {
				i += d / f->s;
				d %= f->s;
			}
		}
		off = d;
		len = f->r - f->l;
		if (off > len) {
			i++;
			off = 0;
		}
		L->i = i;
		bcnt = L->cnt + f->before + i * f->block;
		if (!add_ok(L->base, f->l + i * f->s, &bstart))
			return finish(c, bcnt);
		if (!f->in) {
			c->p = bstart + off;	/* x, or a block's start */
			c->e = add_sat(bstart, len);
			c->c = bcnt + off;
			c->top = j;
			c->leaf = f;
			return c->p;
		}
		L = &c->lv[++j];
		L->set = f->in;
		L->base = bstart;
		L->cnt = bcnt;
		L->m = -1;
		L->end = add_sat(bstart, len);
		x = bstart + off;
	}
}

int fsplit_max = FSPLIT_MAX;

/*
 * Members f[i..j) that can be one bundle: the same stride s, all first
 * blocks inside [f[i].l, f[i].l + s), and counts n or n + 1.  Returns j.
 */
static int bundle_end(const struct fset *set, int i, int64_t *nmin)
{
	const struct falls *f = &set->f[i];
	int64_t lo = f->n, hi = f->n, end;
	int j;

	if (f->n < 2 || !add_ok(f->l, f->s, &end))
		return i + 1;
	for (j = i + 1; j < set->nr; j++) {
		const struct falls *g = &set->f[j];

		if (g->s != f->s || g->n < 2 || g->r >= end ||
		    max64(hi, g->n) - min64(lo, g->n) > 1)
			break;
		lo = min64(lo, g->n);
		hi = max64(hi, g->n);
	}
	*nmin = lo;
	return j;
}

/*
 * Members f[i..j) (see bundle_end) as one FALLS of stride s whose inner
 * set holds the first block of each, n of them repeated nmin times, and
 * the last blocks of those with one more, each on its own.
 */
static void push_bundle(struct fbuild *b, struct fvec *v,
			const struct fset *set, int i, int j, int64_t nmin)
{
	const struct falls *f = &set->f[i];
	struct fvec in = { 0 };
	struct fset *inner;

	for (int k = i; k < j; k++) {
		const struct falls *g = &set->f[k];

		fvec_push(b, &in, g->l - f->l, g->r - f->l, g->r - g->l + 1, 1,
			  fset_get(g->in));
	}
	inner = fset_from_vec(b, &in);
	if (!inner)
		return;
	fvec_push(b, v, f->l, f->l + inner->hi, f->s, nmin, inner);
	for (int k = i; k < j; k++) {
		const struct falls *g = &set->f[k];
		int64_t d = nmin * g->s;

		if (g->n > nmin)
			fvec_push(b, v, g->l + d, g->r + d, g->r - g->l + 1, 1,
				  fset_get(g->in));
	}
}

/*
 * The same bytes as an interleaved set, with each bundle of members that
 * repeat at one stride inside a common window turned into one FALLS of
 * that stride.  The intersection of two vectors whose strides do not
 * divide each other is such a bundle (one member per residue of the
 * larger stride modulo their lcm: falls_algebra.c), and tiling a view
 * over an incommensurate period makes one bundle per tile: as bundles
 * they are ordered, and a cursor steps through them in O(depth) per
 * piece instead of answering each seek over thousands of members.
 */
static struct fset *bundle_level(struct fbuild *b, const struct fset *set)
{
	struct fvec v = { 0 };

	for (int i = 0, j; i < set->nr; i = j) {
		int64_t nmin = 0;

		j = bundle_end(set, i, &nmin);
		if (j - i > 1)
			push_bundle(b, &v, set, i, j, nmin);
		else
			fvec_push_shifted(b, &v, &set->f[i], 0);
	}
	return fset_from_vec(b, &v);
}

/* Whether set, or a set below it, interleaves its members. */
static bool interleaves(const struct fset *set)
{
	if (!set->ordered && set->nr > 1)
		return true;
	for (int i = 0; i < set->nr; i++)
		if (set->f[i].in && interleaves(set->f[i].in))
			return true;
	return false;
}

/*
 * Inner sets lately bundled in one call, so that an inner set shared by
 * many members stays shared.  Holds a reference to each pair.
 */
#define BUNDLE_MEMO 16

struct bundle_memo {
	struct fset *in[BUNDLE_MEMO], *out[BUNDLE_MEMO];
	int next;
};

static void bundle_memo_release(struct bundle_memo *memo)
{
	for (int i = 0; i < BUNDLE_MEMO; i++) {
		fset_put(memo->in[i]);
		fset_put(memo->out[i]);
	}
}

static struct fset *bundle_deep(struct fbuild *b, struct fset *set,
				struct bundle_memo *memo);

/* A member's inner set, bundled (a new reference; NULL on error). */
static struct fset *bundle_inner(struct fbuild *b, struct fset *in,
				 struct bundle_memo *memo)
{
	struct fset *out;
	int k = memo->next % BUNDLE_MEMO;

	for (int i = 0; i < BUNDLE_MEMO; i++)
		if (memo->in[i] == in)
			return fset_get(memo->out[i]);
	out = bundle_deep(b, in, memo);
	if (out) {
		fset_put(memo->in[k]);
		fset_put(memo->out[k]);
		memo->in[k] = fset_get(in);
		memo->out[k] = fset_get(out);
		memo->next++;
	}
	return out;
}

/*
 * set with every interleaved level bundled (bundle_level), from the
 * leaves up; a new reference, or NULL with b->err set.  O(nodes).
 */
static struct fset *bundle_deep(struct fbuild *b, struct fset *set,
				struct bundle_memo *memo)
{
	struct fset *level, *res;
	struct fvec v = { 0 };

	if (!interleaves(set))
		return fset_get(set);
	for (int i = 0; i < set->nr; i++) {
		const struct falls *f = &set->f[i];
		struct fset *in = NULL;

		if (f->in) {
			in = bundle_inner(b, f->in, memo);
			if (!in)
				break;
		}
		fvec_push(b, &v, f->l, f->r, f->s, f->n, in);
	}
	level = fset_from_vec(b, &v);
	if (!level || level->ordered || level->nr < 2)
		return level;
	res = bundle_level(b, level);
	fset_put(level);
	return res;
}

/* A chain's end, in the min-heap that deals members into chains. */
struct chain_end {
	int64_t hi;
	int chain;
};

static void chain_sift_down(struct chain_end *h, int n, int i)
{
	for (;;) {
		int m = i, a = 2 * i + 1, z = a + 1;
		struct chain_end t;

		if (a < n && h[a].hi < h[m].hi)
			m = a;
		if (z < n && h[z].hi < h[m].hi)
			m = z;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void chain_sift_up(struct chain_end *h, int i)
{
	while (i > 0 && h[(i - 1) / 2].hi > h[i].hi) {
		struct chain_end t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/*
 * Deal the members of set (sorted by l) into chains of disjoint,
 * increasing spans: each goes after the chain that ends first, when that
 * one ends before it, else begins a new chain -- as few chains as the
 * deepest overlap, in O(n log chains).  chain[i] gets member i's chain;
 * returns the number of chains, 0 past max, or -ENOMEM.
 */
static int deal_chains(const struct fset *set, int *chain, int max)
{
	struct chain_end *h = malloc(set->nr * sizeof(*h));
	int nch = 0;

	if (!h)
		return -ENOMEM;
	for (int i = 0; i < set->nr; i++) {
		const struct falls *f = &set->f[i];

		if (nch && h[0].hi < f->l) {
			chain[i] = h[0].chain;
			h[0].hi = f->hi;
			chain_sift_down(h, nch, 0);
			continue;
		}
		if (nch == max) {
			nch = 0;
			break;
		}
		chain[i] = nch;
		h[nch] = (struct chain_end){ f->hi, nch };
		chain_sift_up(h, nch++);
	}
	free(h);
	return nch;
}

/* The chains of set as sets, into sp (empty); 0 or the builder's error. */
static int build_chains(struct fsplit *sp, const struct fset *set,
			const int *chain, int nch)
{
	struct fbuild b = { .budget = INT64_MAX };
	struct fvec *v = calloc(nch, sizeof(*v));
	int err = 0;

	sp->part = nch > 1 ? calloc(nch, sizeof(*sp->part)) : sp->inl;
	if (!v || !sp->part) {
		free(v);
		if (sp->part != sp->inl)
			free(sp->part);
		sp->part = sp->inl;
		return -ENOMEM;
	}
	for (int i = 0; i < set->nr; i++)
		fvec_push_shifted(&b, &v[chain[i]], &set->f[i], 0);
	for (int k = 0; k < nch; k++) {
		if (err) {
			fvec_release(&v[k]);
			continue;
		}
		sp->part[k] = fset_from_vec(&b, &v[k]);
		if (!sp->part[k])
			err = b.err;
		else
			sp->nr++;
	}
	free(v);
	return err;
}

int fsplit_init(struct fsplit *sp, struct fset *set)
{
	struct fbuild b = { .budget = INT64_MAX };
	struct bundle_memo memo = { .next = 0 };
	struct fset *bundled;
	int *chain, nch, err;

	sp->nr = 1;
	sp->part = sp->inl;
	sp->part[0] = fset_get(set);
	if (!interleaves(set))
		return 0;
	bundled = bundle_deep(&b, set, &memo);
	bundle_memo_release(&memo);
	if (!bundled) {
		fsplit_release(sp);
		return b.err;
	}
	fset_put(sp->part[0]);
	sp->part[0] = bundled;
	if (bundled->ordered || bundled->nr < 2)
		return 0;
	chain = malloc(bundled->nr * sizeof(*chain));
	if (!chain) {
		fsplit_release(sp);
		return -ENOMEM;
	}
	nch = deal_chains(bundled, chain,
			  fsplit_max < FSPLIT_MAX ? fsplit_max : FSPLIT_MAX);
	err = nch < 0 ? nch : 0;
	if (nch > 0) {
		/* bundled is held here until its chains are built. */
		sp->nr = 0;
		err = build_chains(sp, bundled, chain, nch);
		fset_put(bundled);
	}
	free(chain);
	if (err)
		fsplit_release(sp);
	return err;
}

void fsplit_release(struct fsplit *sp)
{
	for (int k = 0; k < sp->nr; k++)
		fset_put(sp->part[k]);
	if (sp->part && sp->part != sp->inl)
		free(sp->part);
	sp->part = sp->inl;
	sp->nr = 0;
}

/* The heap of an fmcursor's parts, by position. */
static bool part_before(const struct fmcursor *mc, int a, int b)
{
	return mc->cur[mc->heap[a]].p < mc->cur[mc->heap[b]].p;
}

static void part_sift_down(struct fmcursor *mc, int i)
{
	for (;;) {
		int m = i, a = 2 * i + 1, z = a + 1, t;

		if (a < mc->nheap && part_before(mc, a, m))
			m = a;
		if (z < mc->nheap && part_before(mc, z, m))
			m = z;
		if (m == i)
			return;
		t = mc->heap[i];
		mc->heap[i] = mc->heap[m];
		mc->heap[m] = t;
		i = m;
	}
}

int fmcursor_init(struct fmcursor *mc, const struct fsplit *sp,
		  int64_t origin, int64_t period)
{
	int err = 0, k;

	mc->nr = sp->nr;
	mc->p = -1;
	mc->c = 0;
	mc->cur = mc->inl;
	mc->heap = NULL;
	mc->nheap = -1;
	if (sp->nr > FMCURSOR_INLINE) {
		mc->cur = calloc(sp->nr, sizeof(*mc->cur));
		mc->heap = malloc(sp->nr * sizeof(*mc->heap));
		if (!mc->cur || !mc->heap) {
			free(mc->cur);
			free(mc->heap);
			mc->cur = mc->inl;
			mc->heap = NULL;
			mc->nr = 0;
			return -ENOMEM;
		}
	}
	for (k = 0; k < sp->nr && !err; k++)
		err = fcursor_init(&mc->cur[k], sp->part[k], origin, period);
	if (err) {
		mc->nr = k - 1;
		fmcursor_release(mc);
	}
	return err;
}

void fmcursor_release(struct fmcursor *mc)
{
	for (int k = 0; k < mc->nr; k++)
		fcursor_release(&mc->cur[k]);
	if (mc->cur != mc->inl)
		free(mc->cur);
	free(mc->heap);
	mc->heap = NULL;
	mc->cur = mc->inl;
	mc->nr = 0;
}

/* Seek every part (few parts, or the first seek of many). */
static int64_t seek_all_parts(struct fmcursor *mc, int64_t x)
{
	int64_t best = -1, n = 0;

	if (mc->heap)
		mc->nheap = 0;
	for (int k = 0; k < mc->nr; k++) {
		int64_t y = fcursor_seek(&mc->cur[k], x);

		if (y >= 0 && (best < 0 || y < best))
			best = y;
		if (y >= 0 && mc->heap)
			mc->heap[mc->nheap++] = k;
		n += fcursor_count(&mc->cur[k]);
	}
	for (int i = mc->nheap / 2 - 1; i >= 0; i--)
		part_sift_down(mc, i);
	mc->p = best;
	mc->c = n;
	return best;
}

int64_t fmcursor_seek_parts(struct fmcursor *mc, int64_t x)
{
	if (!mc->heap || mc->nheap < 0)
		return seek_all_parts(mc, x);
	/*
	 * Only the parts whose next byte is before x move; the others'
	 * counts hold for x too (nothing of theirs lies in between).
	 */
	while (mc->nheap > 0 && mc->cur[mc->heap[0]].p < x) {
		struct fcursor *c = &mc->cur[mc->heap[0]];
		int64_t before = fcursor_count(c);

		if (fcursor_seek(c, x) < 0)
			mc->heap[0] = mc->heap[--mc->nheap];
		mc->c += fcursor_count(c) - before;
		part_sift_down(mc, 0);
	}
	mc->p = mc->nheap > 0 ? mc->cur[mc->heap[0]].p : -1;
	return mc->p;
}

int64_t fmcursor_piece_end(const struct fmcursor *mc)
{
	if (mc->p < 0 && mc->nr != 1)
		return -1;
	if (mc->nr == 1)
		return mc->inl[0].e;
	if (mc->heap && mc->nheap > 0)
		return mc->cur[mc->heap[0]].e;
	for (int k = 0; k < mc->nr; k++)
		if (mc->cur[k].p == mc->p)
			return mc->cur[k].e;
	return mc->p;
}
