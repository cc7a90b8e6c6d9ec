// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * layout_text_kinds.c -- the named layout patterns (rr, cyclic, block,
 * grid) as subfile types.
 */
#include <errno.h>
#include <stdio.h>

#include "arith.h"
#include "error.h"
#include "falls.h"
#include "layout_text_i.h"
#include "type.h"

int clf_lt_cyclic(int64_t k, int p, int64_t n, CLF_Datatype *types)
{
	int64_t period, extent;

	if (k < 1 || p < 1 || n < 1)
		return clf_fail(EINVAL,
				"cyclic: need k >= 1, p >= 1 and n >= 1");
	if (!mul_ok(k, p, &period) || !mul_ok(period, n, &extent))
		return clf_fail(EOVERFLOW,
				"cyclic: the period %lld x %d x %lld overflows int64",
				(long long)k, p, (long long)n);
	return CLF_Type_pitfalls(0, k - 1, period, n, k, p, CLF_BYTE, types);
}

int clf_lt_grid(int64_t rows, int64_t cols, int pr, int pc, int64_t kr,
		int64_t kc, CLF_Datatype *types)
{
	int64_t size, tile_rows, tile_cols, band, period;
	int err = 0, made = 0;

	if (rows < 1 || cols < 1 || pr < 1 || pc < 1 || kr < 1 || kc < 1)
		return clf_fail(EINVAL, "grid: every size must be >= 1");
	if (!mul_ok(rows, cols, &size) || !mul_ok(pr, kr, &tile_rows) ||
	    !mul_ok(pc, kc, &tile_cols) || !mul_ok(kr, cols, &band) ||
	    !mul_ok(band, pr, &period))
		return clf_fail(EOVERFLOW, "grid: the matrix size overflows int64");
	if (rows % tile_rows)
		return clf_fail(EINVAL,
				"grid: rows (%lld) must be a multiple of p rows x k rows (%lld)",
				(long long)rows, (long long)tile_rows);
	if (cols % tile_cols)
		return clf_fail(EINVAL,
				"grid: cols (%lld) must be a multiple of p cols x k cols (%lld)",
				(long long)cols, (long long)tile_cols);
	for (int a = 0; a < pr && !err; a++) {
		for (int b = 0; b < pc && !err; b++) {
			CLF_Datatype row;

			/* One row of the subfile: its columns, extent cols. */
			row = CLF_Type_vector(b * kc, b * kc + kc - 1, tile_cols,
					      cols / tile_cols, CLF_BYTE);
			/* Its bands of kr rows, each tiled by that row. */
			if (row)
				types[made] = CLF_Type_vector(a * band,
							      a * band + band - 1,
							      period,
							      rows / tile_rows,
							      row);
			if (!row || !types[made]) {
				char why[256];

				err = -errno;
				/* Copied: the message is rewritten below. */
				snprintf(why, sizeof(why), "%s",
					 CLF_Last_error());
				err = clf_fail_neg(err, "grid: %s", why);
			} else {
				made++;
			}
			CLF_Type_free(&row);
		}
	}
	if (err)
		while (made > 0)
			CLF_Type_free(&types[--made]);
	return err;
}

bool clf_lt_type_same(CLF_Datatype a, CLF_Datatype b)
{
	return a->extent == b->extent && fset_equal(a->set, b->set);
}
