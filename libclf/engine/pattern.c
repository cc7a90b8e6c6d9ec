// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pattern.c -- the rules a physical partitioning pattern must follow.
 *
 * A file's subfiles are n types that select disjoint bytes and together
 * select every byte of one period: each file byte past the displacement
 * then lives in exactly one subfile.  The period is the largest extent
 * among the types; each type is taken as resized to [0, period): its
 * bytes once, where they are, the rest of the period not its (as users
 * write them, from MPI types with different upper bounds).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "type.h"

/*
 * How many overlapping member spans the check may visit beyond a few per
 * member: an irregular list needs about two per member, a few vectors a
 * handful; only members that interleave widely (many vectors, each spanning
 * the period) come near it.
 */
#define PATTERN_PAIRS (1 << 22)

/* The next member of subfile i, for the merge below. */
struct head {
	int64_t l;
	int i, j;
};

static bool head_before(const struct head *a, const struct head *b)
{
	return a->l < b->l || (a->l == b->l && a->i < b->i);
}

static void sift_down(struct head *h, int nh, int at)
{
	for (;;) {
		int c = 2 * at + 1;
		struct head t;

		if (c >= nh)
			return;
		if (c + 1 < nh && head_before(&h[c + 1], &h[c]))
			c++;
		if (!head_before(&h[c], &h[at]))
			return;
		t = h[c];
		h[c] = h[at];
		h[at] = t;
		at = c;
	}
}

/*
 * Every subfile's members into m, by start.  Each set is sorted by start
 * already: a heap merge costs O(members * log(subfiles)), less than
 * sorting them again.
 */
static int merge_members(int n, const CLF_Datatype *types, struct fmember *m)
{
	struct head *h = malloc(n * sizeof(*h));
	int nh = 0, k = 0;

	if (!h)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (types[i]->set->nr > 0)
			h[nh++] = (struct head){ types[i]->set->f[0].l, i, 0 };
	for (int at = nh / 2 - 1; at >= 0; at--)
		sift_down(h, nh, at);
	while (nh > 0) {
		const struct fset *set = types[h[0].i]->set;

		m[k++] = fmember_of(&set->f[h[0].j], h[0].i);
		if (++h[0].j < set->nr)
			h[0].l = set->f[h[0].j].l;
		else
			h[0] = h[--nh];
		sift_down(h, nh, 0);
	}
	free(h);
	return 0;
}

/* Bytes two subfiles share per period, for a message; -1 if too costly. */
static int64_t common_bytes(CLF_Datatype x, CLF_Datatype y)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };
	struct fset *c = fset_intersect(&b, x->set, y->set);
	int64_t size = c && !b.err ? c->size : -1;

	fset_put(c);
	return size;
}

/*
 * No byte in two subfiles.  All subfiles' top-level members are swept
 * together by start (fmembers_first_overlap): members of one subfile are
 * disjoint already, and only members whose spans overlap are compared, on
 * their descriptions.  A partition into many pieces costs O(n log n) in
 * the number of pieces; a few vectors cost a few comparisons, whatever
 * the number of bytes or blocks they select.
 */
static int check_disjoint(int n, const CLF_Datatype *types)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };
	struct fmember *m;
	int64_t total = 0, at, common;
	int o1, o2, err;

	for (int i = 0; i < n; i++)
		total += types[i]->set->nr;
	if (total > INT_MAX)
		return clf_fail(E2BIG, "pattern: %lld members in all subfiles",
				(long long)total);
	m = malloc((total ? total : 1) * sizeof(*m));
	if (!m)
		return clf_fail(ENOMEM, "pattern: out of memory");
	err = merge_members(n, types, m);
	if (!err)
		err = fmembers_first_overlap(&b, m, (int)total,
					     PATTERN_PAIRS + 4 * total, &o1,
					     &o2, &at);
	free(m);
	if (!err)
		return 0;
	if (err != -EINVAL)
		return clf_fail_neg(err,
			"pattern: cannot compare the subfiles (%lld members)",
			(long long)total);
	common = common_bytes(types[o1], types[o2]);
	if (common < 0)
		return clf_fail(EINVAL,
			"pattern: subfile %d and subfile %d overlap at byte %lld",
			o1, o2, (long long)at);
	return clf_fail(EINVAL,
		"pattern: subfile %d and subfile %d overlap at byte %lld (%lld common bytes per period)",
		o1, o2, (long long)at, (long long)common);
}

/* Selected bytes of all subfiles in [0, x), O(subfiles * description). */
static int64_t count_all(int n, const CLF_Datatype *types, int64_t x)
{
	int64_t sum = 0;

	for (int i = 0; i < n; i++)
		sum += fset_count(types[i]->set, x);
	return sum;
}

/* The largest extent; *which: the first type that has it. */
static int64_t pattern_period(int n, const CLF_Datatype *types, int *which)
{
	int64_t period = types[0]->extent;

	*which = 0;
	for (int i = 1; i < n; i++)
		if (types[i]->extent > period) {
			period = types[i]->extent;
			*which = i;
		}
	return period;
}

/*
 * Name the first byte of [0, period) that no subfile selects, the
 * subfiles being disjoint: the bytes of [0, x] that some subfile misses
 * grow with x, so a binary search of counts finds the first one in
 * O(log(period)) counts, without building the union.
 */
static int report_hole(int n, const CLF_Datatype *types, int64_t covered)
{
	int which;
	int64_t extent = pattern_period(n, types, &which), lo = 0, hi = extent - 1;
	char whose[96] = "";

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (count_all(n, types, mid + 1) < mid + 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (int i = 0; i < n; i++)
		if (types[i]->extent != extent) {
			snprintf(whose, sizeof(whose),
				 ", the largest extent, subfile %d's", which);
			break;
		}
	return clf_fail(EINVAL,
		"pattern: byte %lld is in no subfile (subfiles cover %lld of %lld bytes per period%s)",
		(long long)lo, (long long)covered, (long long)extent, whose);
}

int CLF_Pattern_check(int n, const CLF_Datatype *types)
{
	int64_t covered = 0;
	int which, err;

	if (n < 1 || !types)
		return clf_fail(EINVAL, "pattern: need at least one subfile");
	for (int i = 0; i < n; i++)
		if (!types[i])
			return clf_fail(EINVAL, "pattern: subfile %d has no type",
					i);
	err = check_disjoint(n, types);
	if (err)
		return err;
	for (int i = 0; i < n; i++)
		covered += types[i]->set->size;
	if (covered != pattern_period(n, types, &which))
		return report_hole(n, types, covered);
	return 0;
}

int clf_pattern_resize(int n, const CLF_Datatype *types, CLF_Datatype *out)
{
	int which;
	int64_t period = pattern_period(n, types, &which);

	for (int i = 0; i < n; i++) {
		out[i] = types[i]->extent == period ? CLF_Type_dup(types[i]) :
			clf_type_new(fset_get(types[i]->set), period);
		if (!out[i]) {
			while (i > 0)
				CLF_Type_free(&out[--i]);
			return clf_fail(ENOMEM, "pattern: out of memory");
		}
	}
	return 0;
}
