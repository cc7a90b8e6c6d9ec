/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_lock_shape.h -- which bytes an extent lock holds, and whether two
 * locks' bytes meet (iod_lock.h; strided locks since protocol 1.26).
 *
 * A shape is [lo, hi) of a subfile, whole (stride 0) or in blocks: the
 * bytes x with (x - lo) % stride < block, 0 < block < stride.  Or, in
 * the file's bytes (in_file, since 1.27), the bytes of [lo, hi) whose
 * file offsets y have (y - phase) % stride < block: the iod does not map
 * subfile bytes to the file, so such a shape meets every range and
 * plain or subfile-strided shape its extent overlaps, and another in_file
 * shape unless their blocks never meet in the file.  The tests
 * are exact where they can be in a bounded number of steps and say
 * "meet" otherwise: a false "meet" costs a revocation, a false "apart"
 * would let two clients cache the same byte.
 */
#ifndef IOD_LOCK_SHAPE_H
#define IOD_LOCK_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

struct iod_shape {
	int64_t lo, hi;		/* 0 <= lo < hi */
	int64_t stride, block;	/* 0, 0: every byte of [lo, hi) */
	bool in_file;		/* stride and block count file offsets */
	int64_t phase;		/* in_file: the first block's file offset */
};

/* Does some byte of s lie in [a, b)? */
bool iod_shape_meets_range(const struct iod_shape *s, int64_t a, int64_t b);

/* Do x and y hold a byte in common? */
bool iod_shapes_meet(const struct iod_shape *x, const struct iod_shape *y);

/*
 * Would x and y hold no byte in common however far their extents grew
 * by whole strides (both strided alike, their blocks interleaving; in the
 * file, however far they grew)?  Then a grant of one may expand over the
 * other.
 */
bool iod_shapes_interleave(const struct iod_shape *x,
			   const struct iod_shape *y);

#endif /* IOD_LOCK_SHAPE_H */
