/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * falls.h -- nested FALLS, the description behind every datatype.
 *
 * A FALLS (family of line segments) (l, r, s, n) selects the n blocks
 * [l + i*s, r + i*s]; an inner set, relative to each block's start, selects
 * part of each block.  A set holds FALLS that select disjoint bytes.
 *
 * Sets are kept in a normal form, so that equal patterns mostly look alike
 * and no description is larger than it needs to be:
 *   - a FALLS with n == 1 has no inner set (it is flattened into its parent
 *     set) and stride r - l + 1;
 *   - an inner set starts at 0 and ends at r - l (blocks are trimmed to
 *     what they select), and never selects the whole block (then it is
 *     NULL);
 *   - contiguous blocks are one block; an inner FALLS whose period tiles
 *     the outer stride is merged with its parent;
 *   - in a set whose members' spans are disjoint, neighbours of the same
 *     shape are merged, and touching plain blocks are one block, until
 *     nothing merges: the form is a fixpoint (a set rebuilt from its own
 *     members -- decoding its encoding -- comes out the same).
 *
 * Every query below costs time proportional to the size of the description
 * (depth times members per level), never to the number of bytes selected.
 * Sets are immutable and reference counted; inner sets are shared.
 */
#ifndef CLF_FALLS_H
#define CLF_FALLS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct fset;

struct falls {
	int64_t l, r;	  /* first block [l, r], relative to the parent */
	int64_t s;	  /* stride, > r - l; r - l + 1 when n == 1 */
	int64_t n;	  /* number of blocks, >= 1 */
	struct fset *in;  /* owned reference; NULL: all of each block */
	/* Cached from the above: */
	int64_t hi;	  /* last selected byte: r + (n - 1) * s */
	int64_t size;	  /* bytes selected by all n blocks */
	int64_t block;	  /* bytes selected by one block: size / n */
	int64_t before;	  /* bytes selected by earlier members (ordered sets) */
};

struct fset {
	atomic_int refs;
	bool immortal;	   /* static object: never freed */
	bool ordered;	   /* members' spans disjoint, in increasing order */
	int nr;		   /* members */
	int depth;	   /* 1 + depth of the deepest inner set; 0 if empty */
	int64_t nodes;	   /* FALLS in the tree, shared inner sets per use */
	int64_t size;	   /* bytes selected */
	int64_t lo, hi;	   /* first and last selected byte (size > 0) */
	struct falls *f;   /* nr members, sorted by l */
};

/*
 * The state of one construction: the first error met (a negative errno),
 * and how many more FALLS it may create before it gives up with -E2BIG.
 * Functions taking a builder return NULL once b->err is set.
 */
struct fbuild {
	int err;
	int64_t budget;
};

/* A growable list of members, turned into a set by fset_from_vec(). */
struct fvec {
	struct falls *v;
	int nr, alloc;
};

/* Reference counting; fset_put(NULL) is fine. */
struct fset *fset_get(struct fset *set);
void fset_put(struct fset *set);

/* The set selecting byte 0 only (the description of CLF_BYTE). */
extern struct fset fset_byte;

/*
 * Append the FALLS (l, r, s, n, in) to v in normal form; may append
 * nothing (in is empty), one member, or in's members shifted (n == 1).
 * Takes ownership of in.  Checks that the FALLS is well formed and that
 * its size fits in int64_t; otherwise sets b->err.
 */
void fvec_push(struct fbuild *b, struct fvec *v, int64_t l, int64_t r,
	       int64_t s, int64_t n, struct fset *in);

/* Append a member of another set, shifted by delta (borrows f). */
void fvec_push_shifted(struct fbuild *b, struct fvec *v,
		       const struct falls *f, int64_t delta);

/* Drop everything in v (on error paths). */
void fvec_release(struct fvec *v);

/*
 * Turn v into a set (v is emptied).  Sorts, merges neighbours of the same
 * shape, computes the cached fields.  The members must select disjoint
 * bytes; fset_check_disjoint() verifies that for untrusted input.
 */
struct fset *fset_from_vec(struct fbuild *b, struct fvec *v);

/* A set of one block [lo, hi]; an empty set when lo > hi. */
struct fset *fset_range(struct fbuild *b, int64_t lo, int64_t hi);

/* Queries; offsets are relative to the set. */
int64_t fset_count(const struct fset *set, int64_t x); /* in [0, x) */
int64_t fset_select(const struct fset *set, int64_t w); /* 0 <= w < size */
int64_t fset_next(const struct fset *set, int64_t x);	/* >= x, or -1 */
bool fset_equal(const struct fset *a, const struct fset *b);

/* Set algebra; each returns a new reference (NULL once b->err is set). */
struct fset *fset_shift(struct fbuild *b, struct fset *set, int64_t delta);
struct fset *fset_clip(struct fbuild *b, struct fset *set, int64_t lo,
		       int64_t hi);
struct fset *fset_complement(struct fbuild *b, struct fset *set, int64_t lo,
			     int64_t hi);
struct fset *fset_intersect(struct fbuild *b, struct fset *x, struct fset *y);
struct fset *fset_union(struct fbuild *b, struct fset *x, struct fset *y);

/*
 * The pattern of period `period` rotated left by phase and repeated times
 * times: selects x in [0, times * period) iff (x + phase) % period is
 * selected by set.
 */
struct fset *fset_tile(struct fbuild *b, struct fset *set, int64_t period,
		       int64_t phase, int64_t times);

/*
 * 0 if the members of v select disjoint bytes; otherwise -EINVAL with the
 * indexes of two overlapping members in *m1 < *m2 and the first byte
 * common to two members in *at.
 */
int fvec_check_disjoint(struct fbuild *b, const struct fvec *v, int *m1,
			int *m2, int64_t *at);

/* A member of one of several sets, for fmembers_first_overlap(). */
struct fmember {
	int64_t l, hi;		/* f's span, kept here for the sort */
	const struct falls *f;	/* borrowed */
	int owner;		/* which set: members of one set never meet */
};

static inline struct fmember fmember_of(const struct falls *f, int owner)
{
	return (struct fmember){ f->l, f->hi, f, owner };
}

/*
 * The first byte selected by two members of different owners: -EINVAL
 * with their owners in *o1 < *o2 and the byte in *at; 0 when no two
 * meet.  Sorts m by start (a sorted m costs one pass) and meets only members whose spans overlap, so
 * disjoint pieces cost O(n log n) whatever their number; more than pairs
 * overlapping spans give -E2BIG.  Also -ENOMEM, or b->err.
 */
int fmembers_first_overlap(struct fbuild *b, struct fmember *m, int n,
			   int64_t pairs, int *o1, int *o2, int64_t *at);

#endif /* CLF_FALLS_H */
