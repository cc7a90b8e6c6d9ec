// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pattern.c -- the rules a physical partitioning pattern must follow.
 *
 * A file's subfiles are n types that share one extent, select disjoint
 * bytes and together select every byte of the extent: each file byte past
 * the displacement then lives in exactly one subfile.
 */
#include <errno.h>

#include "error.h"
#include "type.h"

static int check_disjoint(int n, const CLF_Datatype *types)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };

	for (int i = 0; i < n; i++) {
		for (int j = i + 1; j < n; j++) {
			struct fset *c = fset_intersect(&b, types[i]->set,
							types[j]->set);
			int64_t size = c ? c->size : 0, at = c ? c->lo : 0;

			fset_put(c);
			if (b.err)
				return clf_fail_neg(b.err,
					"pattern: cannot compare subfiles %d and %d",
					i, j);
			if (size > 0)
				return clf_fail(EINVAL,
					"pattern: subfile %d and subfile %d overlap at byte %lld (%lld common bytes per period)",
					i, j, (long long)at, (long long)size);
		}
	}
	return 0;
}

/* Name the first byte of [0, extent) that no subfile selects. */
static int report_hole(int n, const CLF_Datatype *types, int64_t covered)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };
	struct fset *all = fset_get(types[0]->set), *holes;
	int64_t extent = types[0]->extent, hole = -1;

	for (int i = 1; i < n && all; i++) {
		struct fset *u = fset_union(&b, all, types[i]->set);

		fset_put(all);
		all = u;
	}
	holes = fset_complement(&b, all, 0, extent - 1);
	if (holes && holes->size > 0)
		hole = holes->lo;
	fset_put(holes);
	fset_put(all);
	if (hole < 0)
		return clf_fail(EINVAL,
			"pattern: subfiles cover %lld of %lld bytes per period",
			(long long)covered, (long long)extent);
	return clf_fail(EINVAL,
		"pattern: byte %lld is in no subfile (subfiles cover %lld of %lld bytes per period)",
		(long long)hole, (long long)covered, (long long)extent);
}

int CLF_Pattern_check(int n, const CLF_Datatype *types)
{
	int64_t covered = 0;
	int err;

	if (n < 1 || !types)
		return clf_fail(EINVAL, "pattern: need at least one subfile");
	for (int i = 0; i < n; i++)
		if (!types[i])
			return clf_fail(EINVAL, "pattern: subfile %d has no type",
					i);
	for (int i = 1; i < n; i++)
		if (types[i]->extent != types[0]->extent)
			return clf_fail(EINVAL,
				"pattern: subfile %d has extent %lld but subfile 0 has %lld; all must share one",
				i, (long long)types[i]->extent,
				(long long)types[0]->extent);
	err = check_disjoint(n, types);
	if (err)
		return err;
	for (int i = 0; i < n; i++)
		covered += types[i]->set->size;
	if (covered != types[0]->extent)
		return report_hole(n, types, covered);
	return 0;
}
