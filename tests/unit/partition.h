/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * partition.h -- a large irregular partitioning pattern for tests: the
 * kind of layout that has no compact description.
 *
 * The period is 64 * gaps bytes.  Every 64th byte belongs to subfile 0 as
 * one vector (so subfile 0's members interleave: the vector spans the
 * period); the 63 bytes between are cut into pieces of 1..16 bytes dealt
 * to the subfiles at random.  About 8 pieces per gap.
 */
#ifndef CLF_TEST_PARTITION_H
#define CLF_TEST_PARTITION_H

#include <stdint.h>

#include "clf.h"

struct partition {
	int64_t period;		/* bytes */
	int gaps;		/* vector blocks of subfile 0 */
	int nsub;		/* subfiles */
	int n;			/* pieces */
	int64_t *lo, *hi;	/* piece i is [lo[i], hi[i]] */
	int *owner;		/* its subfile */
};

/* Fill p (the caller releases it); 0 or -ENOMEM. */
int partition_make(struct partition *p, int gaps, int nsub, uint64_t seed);
void partition_release(struct partition *p);

/*
 * The nsub subfile types of p into t (the caller frees them), piece skip
 * left out (-1: none).  0, or the failing constructor's negative errno
 * with CLF_Last_error() set.
 */
int partition_types(const struct partition *p, int skip, CLF_Datatype *t);

#endif /* CLF_TEST_PARTITION_H */
