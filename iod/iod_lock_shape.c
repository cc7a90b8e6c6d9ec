// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_lock_shape.c -- the byte sets of extent locks (iod_lock_shape.h).
 *
 * Blocks of x start at x.lo + i * x.stride, of y at y.lo + j * y.stride
 * (i, j >= 0).  The differences of two starts are (x.lo - y.lo) + k * g
 * for every integer k, g = gcd(x.stride, y.stride), so two blocks of
 * lengths bx and by can overlap (-bx < difference < by) iff r = (x.lo -
 * y.lo) mod g is below by or above g - bx: the phase test.  Where it
 * allows a meeting, whether one falls inside both extents is found by
 * walking x's blocks there, a bounded number of them.
 *
 * Shapes strided in the file (in_file) are the same test on their
 * phases, where blocks start at phase + i * stride for every i; against
 * anything else, their extent stands for their bytes.
 */
#include "arith.h"
#include "iod_lock_shape.h"

/* Blocks walked before answering "meet" without looking further. */
#define WALK_MAX 64

bool iod_shape_meets_range(const struct iod_shape *s, int64_t a, int64_t b)
{
	int64_t r;

	a = max64(a, s->lo);
	b = min64(b, s->hi);
	if (a >= b)
		return false;
	if (!s->stride || s->in_file)
		return true;
	r = (a - s->lo) % s->stride;
	/* a inside a block, or the next block starting before b */
	return r < s->block || s->stride - r < b - a;
}

bool iod_shapes_interleave(const struct iod_shape *x,
			   const struct iod_shape *y)
{
	int64_t g, r;

	if (!x->stride || !y->stride || x->in_file != y->in_file)
		return false;
	g = gcd64(x->stride, y->stride);
	r = x->in_file ? (x->phase - y->phase) % g : (x->lo - y->lo) % g;
	if (r < 0)
		r += g;
	return !(r < y->block || r > g - x->block);
}

bool iod_shapes_meet(const struct iod_shape *x, const struct iod_shape *y)
{
	int64_t a = max64(x->lo, y->lo), b = min64(x->hi, y->hi), start;

	if (a >= b)
		return false;
	if (x->in_file || y->in_file)
		return !iod_shapes_interleave(x, y);
	if (!x->stride)
		return iod_shape_meets_range(y, a, b);
	if (!y->stride)
		return iod_shape_meets_range(x, a, b);
	if (iod_shapes_interleave(x, y))
		return false;
	/* x's first block reaching past a, then on while inside [a, b) */
	start = x->lo + (a - x->lo) / x->stride * x->stride;
	for (int n = 0; n < WALK_MAX; n++) {
		if (start >= b)
			return false;
		int64_t end = b - start > x->block ? start + x->block : b;

		if (iod_shape_meets_range(y, max64(start, a), end))
			return true;
		if (start > b - x->stride)
			return false;
		start += x->stride;
	}
	return true;
}
