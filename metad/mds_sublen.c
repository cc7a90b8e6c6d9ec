// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_sublen.c -- how long each subfile of a file of a given size is:
 * for truncations (mds_data.c) and clf fsck (mds_store.h).
 */
#include <errno.h>

#include "clf.h"
#include "error.h"
#include "mds_store.h"

int mds_subfile_length(CLF_Datatype t, int64_t disp, int64_t size,
		       int64_t *len)
{
	int64_t e = CLF_Type_extent(t), z = CLF_Type_size(t);
	int64_t k, base, lo, hi;

	if (e <= 0 || z <= 0 || disp < 0 || size < 0)
		return clf_fail(EINVAL,
				"metad: subfile length: bad type or size %lld",
				(long long)size);
	if (size <= disp) {
		*len = 0;
		return 0;
	}
	/* Whole periods before size hold z bytes each (base <= size - disp,
	 * since z <= e).  In the last, partial period the answer is the
	 * smallest w with unmap(base + w) >= size: bisection, since unmap
	 * grows with its argument. */
	k = (size - disp) / e;
	base = k * z;
	lo = 0;
	hi = z;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2, lin, off;
		int err = 0;

		if (__builtin_add_overflow(base, mid, &lin))
			err = -EOVERFLOW;
		else
			err = CLF_Type_unmap(t, disp, lin, &off);
		if (err == -EOVERFLOW || (!err && off >= size))
			hi = mid;
		else if (err)
			return err;
		else
			lo = mid + 1;
	}
	*len = base + lo;
	return 0;
}
