/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * falls_cursor.h -- a forward cursor over a periodic nested FALLS set.
 *
 * fset_next and fset_count answer one question each by walking the
 * description from its root (and binary-searching the members of every
 * level).  A walk that asks about increasing offsets -- the runs of a
 * mapping -- would repeat most of that work each time.  The cursor keeps
 * the path to the last byte it found (a stack of (set, member, block)
 * positions with their counts) and resumes from the deepest level whose
 * set still has bytes at or after the new target: moving to the next
 * block of the same level is a few operations, moving far is O(depth).
 *
 * It only ever holds one path, so its memory is O(depth of the set),
 * never related to the number of bytes.  A level whose members interleave
 * (an unordered set) is answered with fset_next/fset_count on that level
 * alone: correct, and no slower than a walk from the root.
 */
#ifndef CLF_FALLS_CURSOR_H
#define CLF_FALLS_CURSOR_H

#include <stdint.h>

#include "falls.h"

struct fcur_level {
	const struct fset *set;	/* borrowed */
	int64_t base;		/* file offset of the set's byte 0 */
	int64_t end;		/* last byte of its block (saturated) */
	int64_t cnt;		/* selected bytes in [origin, base) */
	int m;			/* member last used (ordered set); -1 */
	int64_t i;		/* block of member m last used */
};

#define FCURSOR_INLINE_LEVELS 8

/*
 * Selects x >= origin iff (x - origin) % period is selected by set; set
 * lies in [0, period).  Borrows set: it must outlive the cursor.  Not to
 * be copied once initialised (lv may point into it).
 */
struct fcursor {
	const struct fset *set;
	int64_t origin, period;
	int64_t p;		/* first selected byte >= last target; -1 */
	int64_t e;		/* last byte of p's contiguous piece */
	int64_t c;		/* selected bytes in [origin, p) */
	const struct falls *leaf; /* member of lv[top] holding p, when it has
				   * no inner set: the next piece is then its
				   * next block, found without the descent */
	int top;		/* deepest valid level; -1 before the first
				 * seek, -2 once nothing is left */
	struct fcur_level *lv;	/* depth + 1 levels, inline or owned */
	struct fcur_level inline_lv[FCURSOR_INLINE_LEVELS];
};

/* Set up a cursor; 0 or -ENOMEM (very deep sets only). */
int fcursor_init(struct fcursor *c, const struct fset *set, int64_t origin,
		 int64_t period);
void fcursor_release(struct fcursor *c);

/* The slow path of fcursor_seek, when x leaves the current piece. */
int64_t fcursor_seek_far(struct fcursor *c, int64_t x);

/*
 * Move to the first selected byte >= x and return it, or -1 when there is
 * none that fits in int64_t.  Targets must not decrease from one call to the
 * next.  Afterwards fcursor_count() is the number of selected bytes in
 * [origin, x) (there are none in [x, the byte returned)).
 */
static inline int64_t fcursor_seek(struct fcursor *c, int64_t x)
{
	if (c->p >= 0 && x <= c->e) {
		if (x > c->p) {
			c->c += x - c->p;
			c->p = x;
		}
		return c->p;
	}
	return fcursor_seek_far(c, x);
}

static inline int64_t fcursor_count(const struct fcursor *c)
{
	return c->c;
}

/*
 * A set cut into ordered parts, for cursors.  Interleaved members that
 * repeat at one stride are first bundled into one FALLS of that stride,
 * at every level (what intersecting incommensurate strides makes).  The
 * members of a top level still unordered (interleaved patterns of
 * different strides, an interleaved struct) are then dealt into chains
 * whose spans are disjoint and increasing, as few as their overlap
 * allows: each chain is an ordered set, and a cursor over the whole is
 * the merge of one cursor per chain, through a heap: O(log chains) per
 * piece passed, after a first seek of every chain.  A set needing more
 * than FSPLIT_MAX chains stays whole (its cursor then answers that level
 * by walks over its members).  Memory: the members, once.
 */
#define FSPLIT_MAX 4096

/*
 * Chains allowed, FSPLIT_MAX unless a test lowers it (to 1: every
 * unordered set stays whole) to compare both paths on the same mappings.
 */
extern int fsplit_max;

struct fsplit {
	int nr;			/* parts, >= 1 */
	struct fset **part;	/* nr owned references: inl, or owned */
	struct fset *inl[1];
};

/*
 * Cut set (borrowed); 0, or -ENOMEM / -EOVERFLOW from the set builder,
 * and then sp holds nothing.
 */
int fsplit_init(struct fsplit *sp, struct fset *set);
void fsplit_release(struct fsplit *sp);

/*
 * A cursor over the union of the parts of a split, for monotone seeks.
 * Up to FMCURSOR_INLINE parts need no allocation (most splits have one or
 * two parts, and a walk sets up three of these per call) and are sought
 * all at each move; more are kept in a heap by position, and a move
 * seeks only the parts it passes.
 */
#define FMCURSOR_INLINE 2

struct fmcursor {
	int nr;
	int64_t p;		/* first byte of a part >= last target; -1 */
	int64_t c;		/* sum of the parts' counts */
	struct fcursor *cur;	/* nr entries: inline, or owned if more */
	struct fcursor inl[FMCURSOR_INLINE];
	int *heap;		/* more than FMCURSOR_INLINE parts: the
				 * indexes of those with bytes left, the
				 * lowest p on top; owned */
	int nheap;		/* -1 before the first seek */
};

int fmcursor_init(struct fmcursor *mc, const struct fsplit *sp,
		  int64_t origin, int64_t period);
void fmcursor_release(struct fmcursor *mc);

/* Seek every part; the slow path of fmcursor_seek. */
int64_t fmcursor_seek_parts(struct fmcursor *mc, int64_t x);

/* Like fcursor_seek: the first byte >= x of any part, or -1. */
static inline int64_t fmcursor_seek(struct fmcursor *mc, int64_t x)
{
	if (mc->nr == 1)
		return fcursor_seek(&mc->inl[0], x);
	/* No part's position was passed: none moves, no count changes. */
	if (mc->p >= 0 && x <= mc->p)
		return mc->p;
	return fmcursor_seek_parts(mc, x);
}

/* The last byte of the piece that begins at the byte last found. */
int64_t fmcursor_piece_end(const struct fmcursor *mc);

/* Selected bytes of all parts in [origin, x) for the last x sought. */
static inline int64_t fmcursor_count(const struct fmcursor *mc)
{
	return mc->nr == 1 ? mc->inl[0].c : mc->c;
}

#endif /* CLF_FALLS_CURSOR_H */
