// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * falls.c -- nested FALLS: normal form, reference counting and queries.
 *
 * The set algebra (clip, complement, intersection, tiling) is in
 * falls_algebra.c; this file builds sets and answers count/select/next,
 * the three primitives every mapping is made of.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "falls.h"

static struct falls byte_falls = {
	.l = 0, .r = 0, .s = 1, .n = 1, .in = NULL, .hi = 0, .size = 1,
	.block = 1,
};

struct fset fset_byte = {
	.refs = 1, .immortal = true, .ordered = true, .nr = 1, .depth = 1,
	.nodes = 1, .size = 1, .lo = 0, .hi = 0, .f = &byte_falls,
};

struct fset *fset_get(struct fset *set)
{
	if (set && !set->immortal)
		atomic_fetch_add_explicit(&set->refs, 1, memory_order_relaxed);
	return set;
}

void fset_put(struct fset *set)
{
	if (!set || set->immortal)
		return;
	if (atomic_fetch_sub_explicit(&set->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (int i = 0; i < set->nr; i++)
		fset_put(set->f[i].in);
	free(set);
}

void fvec_release(struct fvec *v)
{
	for (int i = 0; i < v->nr; i++)
		fset_put(v->v[i].in);
	free(v->v);
	v->v = NULL;
	v->nr = v->alloc = 0;
}

static void set_err(struct fbuild *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* Append one member whose fields are final; takes ownership of f->in. */
static void fvec_append(struct fbuild *b, struct fvec *v, struct falls f)
{
	int64_t bs = f.in ? f.in->size : f.r - f.l + 1;

	if (b->err)
		goto drop;
	if (--b->budget < 0) {
		set_err(b, -E2BIG);
		goto drop;
	}
	if (!mul_ok(f.n - 1, f.s, &f.hi) || !add_ok(f.hi, f.r, &f.hi) ||
	    !mul_ok(f.n, bs, &f.size)) {
		set_err(b, -EOVERFLOW);
		goto drop;
	}
	if (v->nr == v->alloc) {
		int alloc = v->alloc ? 2 * v->alloc : 4;
		struct falls *nv;

		if (alloc > (1 << 28)) {
			set_err(b, -E2BIG);
			goto drop;
		}
		nv = realloc(v->v, alloc * sizeof(*nv));
		if (!nv) {
			set_err(b, -ENOMEM);
			goto drop;
		}
		v->v = nv;
		v->alloc = alloc;
	}
	f.before = 0;
	f.block = bs;
	v->v[v->nr++] = f;
	return;
drop:
	fset_put(f.in);
}

void fvec_push_shifted(struct fbuild *b, struct fvec *v,
		       const struct falls *f, int64_t delta)
{
	struct falls g = *f;

	if (!add_ok(g.l, delta, &g.l) || !add_ok(g.r, delta, &g.r) ||
	    g.l < 0) {
		set_err(b, -EOVERFLOW);
		return;
	}
	g.in = fset_get(f->in);
	fvec_append(b, v, g);
}

/* Trim in to what it selects: *l and *r move in, *in is shifted to 0. */
static int trim_inner(struct fbuild *b, int64_t *l, int64_t *r,
		      struct fset **in)
{
	struct fset *t;
	int64_t lo = (*in)->lo, hi = (*in)->hi;

	if (lo == 0 && hi == *r - *l)
		return 0;
	t = fset_shift(b, *in, -lo);
	if (!t)
		return b->err;
	fset_put(*in);
	*in = t;
	*r = *l + hi;
	*l = *l + lo;
	return 0;
}

void fvec_push(struct fbuild *b, struct fvec *v, int64_t l, int64_t r,
	       int64_t s, int64_t n, struct fset *in)
{
	int64_t total;

	if (b->err)
		goto drop;
	if (l < 0 || r < l || n < 1 || (n > 1 && s <= r - l)) {
		set_err(b, -EINVAL);
		goto drop;
	}
	/* A block's length r - l + 1 must be an int64 (l = 0, r = max). */
	if (r - l == INT64_MAX) {
		set_err(b, -EOVERFLOW);
		goto drop;
	}
	if (in && in->size == 0)
		goto drop;
	if (in && (in->lo < 0 || in->hi > r - l)) {
		set_err(b, -EINVAL);
		goto drop;
	}
	if (n == 1) {
		if (!in) {
			fvec_append(b, v, (struct falls){ .l = l, .r = r, .s = r - l + 1, .n = 1 });
			return;
		}
		for (int i = 0; i < in->nr; i++)
			fvec_push_shifted(b, v, &in->f[i], l);
		goto drop;
	}
	if (in) {
		if (trim_inner(b, &l, &r, &in))
			goto drop;
		if (in->size == r - l + 1) {
			fset_put(in);
			in = NULL;
		}
	}
	if (!in) {
		if (r - l + 1 == s) {
			if (!mul_ok(n, s, &total)) {
				set_err(b, -EOVERFLOW);
				return;
			}
			fvec_append(b, v,
				    (struct falls){ .l = l, .r = l + total - 1,
						   .s = total, .n = 1 });
			return;
		}
		fvec_append(b, v, (struct falls){ .l = l, .r = r, .s = s, .n = n });
		return;
	}
	if (in->nr == 1 && in->f[0].n > 1 &&
	    mul_ok(in->f[0].n, in->f[0].s, &total) && total == s) {
		/* The inner period tiles the stride: one longer FALLS. */
		struct falls g = in->f[0];
		struct fset *gin = fset_get(g.in);

		fset_put(in);
		if (!mul_ok(g.n, n, &total)) {
			set_err(b, -EOVERFLOW);
			fset_put(gin);
			return;
		}
		fvec_push(b, v, l + g.l, l + g.r, g.s, total, gin);
		return;
	}
	fvec_append(b, v, (struct falls){ .l = l, .r = r, .s = s, .n = n, .in = in });
	return;
drop:
	fset_put(in);
}

static int cmp_falls(const void *pa, const void *pb)
{
	const struct falls *a = pa, *b = pb;

	if (a->l != b->l)
		return a->l < b->l ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

/*
 * Can b continue a as more blocks of the same FALLS?  Both have the same
 * block length and inner set; the stride comes from whichever has one.
 */
static bool merge_falls(const struct falls *a, const struct falls *b,
			int64_t *stride)
{
	int64_t s, next;

	if (a->r - a->l != b->r - b->l || !fset_equal(a->in, b->in))
		return false;
	if (a->n > 1 && b->n > 1 && a->s != b->s)
		return false;
	s = a->n > 1 ? a->s : (b->n > 1 ? b->s : b->l - a->l);
	if (!mul_ok(a->n, s, &next) || !add_ok(next, a->l, &next))
		return false;
	if (b->l != next)
		return false;
	*stride = s;
	return true;
}

/* Merge neighbours of the same shape in an ordered list, in place. */
static void merge_ordered(struct fbuild *b, struct fvec *v)
{
	int out = 0;

	for (int i = 1; i < v->nr; i++) {
		struct falls *a = &v->v[out], *c = &v->v[i];
		int64_t stride, n;
		struct fvec one = { 0 };

		if (a->n == 1 && c->n == 1 && !a->in && !c->in &&
		    a->r + 1 == c->l) {
			/* Touching plain blocks of any lengths: one block. */
			fvec_push(b, &one, a->l, c->r, c->r - a->l + 1, 1, NULL);
		} else if (merge_falls(a, c, &stride) &&
			   add_ok(a->n, c->n, &n)) {
			/* Re-normalise through push: contiguous blocks
			 * collapse. */
			fvec_push(b, &one, a->l, a->r, stride, n, a->in);
		} else {
			v->v[++out] = *c;
			continue;
		}
		fset_put(c->in);
		if (b->err || one.nr != 1) {
			fvec_release(&one);
			/* Keep the list consistent for the release. */
			a->in = NULL;
			for (int k = i + 1; k < v->nr; k++)
				v->v[++out] = v->v[k];
			v->nr = out + 1;
			set_err(b, b->err ? b->err : -EINVAL);
			return;
		}
		*a = one.v[0];
		free(one.v);
	}
	if (v->nr)
		v->nr = out + 1;
}

struct fset *fset_from_vec(struct fbuild *b, struct fvec *v)
{
	struct fset *set;
	bool ordered = true;
	int64_t size = 0;

	if (b->err)
		goto fail;
	if (v->nr > 1)
		qsort(v->v, v->nr, sizeof(*v->v), cmp_falls);
	for (int i = 1; i < v->nr; i++)
		if (v->v[i - 1].hi >= v->v[i].l)
			ordered = false;
	/*
	 * Until nothing merges: a merge can make a block that merges with
	 * its neighbour only now (blocks [0,0] [1,1] [2,2] [3,3] [4,4] give
	 * [0,1] [2,3] [4,4] in one pass, then [0,3] [4,4], then [0,4]).  One
	 * pass would leave a form that decoding its own encoding changes;
	 * each pass removes members, and halving patterns take log n.
	 */
	for (int nr = -1; ordered && !b->err && v->nr != nr;) {
		nr = v->nr;
		merge_ordered(b, v);
	}
	if (b->err)
		goto fail;

	set = malloc(sizeof(*set) + v->nr * sizeof(struct falls));
	if (!set) {
		set_err(b, -ENOMEM);
		goto fail;
	}
	atomic_init(&set->refs, 1);
	set->immortal = false;
	set->ordered = ordered;
	set->nr = v->nr;
	set->f = (struct falls *)(set + 1);
	set->depth = 0;
	set->nodes = 0;
	set->lo = v->nr ? v->v[0].l : 0;
	set->hi = -1;
	for (int i = 0; i < v->nr; i++) {
		struct falls *f = &set->f[i];
		int d = 1;

		*f = v->v[i];
		f->before = size;
		if (!add_ok(size, f->size, &size)) {
			set->nr = i + 1;
			for (int k = i + 1; k < v->nr; k++)
				fset_put(v->v[k].in);
			fset_put(set);
			set_err(b, -EOVERFLOW);
			free(v->v);
			*v = (struct fvec){ 0 };
			return NULL;
		}
		if (f->in)
			d += f->in->depth;
		set->depth = d > set->depth ? d : set->depth;
		set->nodes = add_sat(set->nodes, f->in ? 1 + f->in->nodes : 1);
		set->hi = max64(set->hi, f->hi);
	}
	set->size = size;
	free(v->v);
	*v = (struct fvec){ 0 };
	return set;
fail:
	fvec_release(v);
	return NULL;
}

/* ---- queries ---- */

static int64_t falls_count(const struct falls *f, int64_t x)
{
	int64_t bs, i, off, part;

	if (x <= f->l)
		return 0;
	if (x > f->hi)
		return f->size;
	bs = f->block;
	i = (x - f->l) / f->s;
	off = x - f->l - i * f->s;
	if (off > f->r - f->l)
		part = bs;
	else
		part = f->in ? fset_count(f->in, off) : off;
	return i * bs + part;
}

/* Index of the last member of an ordered set whose l is < x (x > lo). */
static int last_starting_before(const struct fset *set, int64_t x)
{
	int a = 0, z = set->nr - 1;

	while (a < z) {
		int mid = a + (z - a + 1) / 2;

		if (set->f[mid].l < x)
			a = mid;
		else
			z = mid - 1;
	}
	return a;
}

int64_t fset_count(const struct fset *set, int64_t x)
{
	int64_t sum = 0;

	if (set->size == 0 || x <= set->lo)
		return 0;
	if (x > set->hi)
		return set->size;
	if (set->ordered) {
		const struct falls *f = &set->f[last_starting_before(set, x)];

		return f->before + falls_count(f, x);
	}
	for (int i = 0; i < set->nr; i++)
		sum += falls_count(&set->f[i], x);
	return sum;
}

static int64_t falls_select(const struct falls *f, int64_t w)
{
	int64_t bs = f->block;
	int64_t i = w / bs, rem = w - i * bs;

	return f->l + i * f->s + (f->in ? fset_select(f->in, rem) : rem);
}

int64_t fset_select(const struct fset *set, int64_t w)
{
	int64_t a, z;

	if (set->ordered) {
		int lo = 0, hi = set->nr - 1;

		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;

			if (set->f[mid].before <= w)
				lo = mid;
			else
				hi = mid - 1;
		}
		return falls_select(&set->f[lo], w - set->f[lo].before);
	}
	/*
	 * Interleaved members: the w-th byte is the smallest x with
	 * count(x + 1) > w.  A binary search over the span, each step a
	 * count: O(log(span) * description).
	 */
	a = set->lo;
	z = set->hi;
	while (a < z) {
		int64_t mid = a + (z - a) / 2;

		if (fset_count(set, mid + 1) > w)
			z = mid;
		else
			a = mid + 1;
	}
	return a;
}

static int64_t falls_next(const struct falls *f, int64_t x)
{
	int64_t i, off, y;

	/* Blocks are trimmed: each starts with a selected byte. */
	if (x <= f->l)
		return f->l;
	if (x > f->hi)
		return -1;
	i = (x - f->l) / f->s;
	off = x - f->l - i * f->s;
	if (off > f->r - f->l)
		return i + 1 < f->n ? f->l + (i + 1) * f->s : -1;
	if (!f->in)
		return x;
	y = fset_next(f->in, off);
	if (y >= 0)
		return f->l + i * f->s + y;
	return i + 1 < f->n ? f->l + (i + 1) * f->s : -1;
}

int64_t fset_next(const struct fset *set, int64_t x)
{
	int64_t best = -1;

	if (set->size == 0 || x > set->hi)
		return -1;
	if (x <= set->lo)
		return set->lo;
	if (set->ordered) {
		/* First member ending at or after x; his are increasing. */
		int a = 0, z = set->nr - 1;

		while (a < z) {
			int mid = a + (z - a) / 2;

			if (set->f[mid].hi >= x)
				z = mid;
			else
				a = mid + 1;
		}
		return falls_next(&set->f[a], x);
	}
	for (int i = 0; i < set->nr; i++) {
		int64_t y = falls_next(&set->f[i], x);

		if (y == x)
			return x;
		if (y >= 0 && (best < 0 || y < best))
			best = y;
	}
	return best;
}

bool fset_equal(const struct fset *a, const struct fset *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->nr != b->nr || a->size != b->size)
		return false;
	for (int i = 0; i < a->nr; i++) {
		const struct falls *x = &a->f[i], *y = &b->f[i];

		if (x->l != y->l || x->r != y->r || x->s != y->s ||
		    x->n != y->n || !fset_equal(x->in, y->in))
			return false;
	}
	return true;
}

struct fset *fset_shift(struct fbuild *b, struct fset *set, int64_t delta)
{
	struct fvec v = { 0 };

	if (!set || b->err)
		return NULL;
	if (delta == 0)
		return fset_get(set);
	for (int i = 0; i < set->nr; i++)
		fvec_push_shifted(b, &v, &set->f[i], delta);
	return fset_from_vec(b, &v);
}
