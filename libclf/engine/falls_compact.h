/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * falls_compact.h -- long lists of blocks turned into nested FALLS.
 *
 * Applications describe regular patterns as lists (MPI indexed types,
 * HDF5's hindexed lists, structs of many members): a 2-D block-cyclic view
 * of a large matrix is millions of blocks that two nested vectors say
 * equally well.  The compactor reads such a list once, in increasing
 * order, and finds the regularity level by level:
 *
 *   level 0 receives the list's members (touching plain blocks already
 *   joined into one); a run of at least three repetitions of a group of
 *   up to FCOMPACT_MOTIF members, each repetition the previous one
 *   shifted by a constant period, becomes one FALLS (period, count, inner
 *   set = the group), passed to level 1; members that belong to no run are
 *   passed up unchanged.  Level 1 does the same with what level 0 passed
 *   up, and so on, up to FCOMPACT_LEVELS levels.
 *
 * So rows of equal blocks become vectors, equal rows at a constant pitch
 * become vectors of vectors, alternating kinds of rows (a checkerboard)
 * become a vector of a two-member group.  Three repetitions, not two, make
 * a run so that a pair that happens to look alike does not hide a longer
 * group (two members cost as much as a run of two anyway).
 *
 * Cost: each member costs O(1) at each level it reaches while a run goes
 * on, and at most O(FCOMPACT_MOTIF^2) comparisons when none does; a level
 * above the first exists only once the level below found a run, so an
 * irregular list stays at level 0.  Memory is that of the levels (a few
 * dozen FALLS each) plus the result, never that of the list; only what is
 * produced counts against the builder's budget.
 *
 * A list that does not come in increasing order (or whose members' spans
 * interleave) is kept as given from there on, then sorted once (O(n log
 * n), O(n) memory); after sorting, a list whose spans follow each other is
 * compacted as above, and any other is checked for overlaps and kept as an
 * unordered set, as fset_from_vec() would.
 */
#ifndef CLF_FALLS_COMPACT_H
#define CLF_FALLS_COMPACT_H

#include <stdint.h>

#include "falls.h"

/* Longest group of members one repetition may hold. */
#define FCOMPACT_MOTIF 8
/* Levels of nesting the compactor adds at most. */
#define FCOMPACT_LEVELS 8

struct fcompact;

/*
 * A new, empty compactor that builds with b (borrowed; it must outlive
 * the compactor).  NULL on ENOMEM (b->err is set).
 */
struct fcompact *fcompact_new(struct fbuild *b);

/*
 * Append a member of the list: f (borrowed, in normal form: a member of a
 * set or of an fvec) shifted by delta.  Errors (overflow, ENOMEM) go to
 * the builder.
 */
void fcompact_push(struct fcompact *c, const struct falls *f, int64_t delta);

/* Append the plain block [l, r] (0 <= l <= r): the fast path. */
void fcompact_push_block(struct fcompact *c, int64_t l, int64_t r);

/*
 * The set of everything pushed, compacted, in normal form; frees c.
 * NULL once the builder has an error: -EINVAL when two members select a
 * common byte (then *at, if at is not NULL, is one such byte), or the
 * first error met.
 */
struct fset *fcompact_finish(struct fcompact *c, int64_t *at);

/* Drop a compactor without finishing it (error paths); NULL is fine. */
void fcompact_free(struct fcompact *c);

#endif /* CLF_FALLS_COMPACT_H */
