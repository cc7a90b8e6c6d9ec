// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * partition.c -- a large irregular partitioning pattern for tests.
 */
#include <errno.h>
#include <stdlib.h>

#include "model.h"
#include "partition.h"

int partition_make(struct partition *p, int gaps, int nsub, uint64_t seed)
{
	int cap = gaps * 63;

	*p = (struct partition){ .period = 64 * (int64_t)gaps, .gaps = gaps,
				 .nsub = nsub };
	p->lo = malloc(cap * sizeof(*p->lo));
	p->hi = malloc(cap * sizeof(*p->hi));
	p->owner = malloc(cap * sizeof(*p->owner));
	if (!p->lo || !p->hi || !p->owner) {
		partition_release(p);
		return -ENOMEM;
	}
	for (int64_t g = 0; g < gaps; g++) {
		int64_t x = 64 * g + 1, end = 64 * g + 63;

		while (x <= end) {
			int64_t len = rnd_range(&seed, 1, 16);

			if (x + len - 1 > end)
				len = end - x + 1;
			p->lo[p->n] = x;
			p->hi[p->n] = x + len - 1;
			p->owner[p->n] = (int)rnd_range(&seed, 0, nsub - 1);
			p->n++;
			x += len;
		}
	}
	return 0;
}

void partition_release(struct partition *p)
{
	free(p->lo);
	free(p->hi);
	free(p->owner);
	p->lo = p->hi = NULL;
	p->owner = NULL;
}

static int subfile_type(const struct partition *p, int s, int skip,
			CLF_Datatype *out)
{
	CLF_Datatype *m = malloc((p->n + 1) * sizeof(*m));
	int k = 0, err = 0;

	if (!m)
		return -ENOMEM;
	if (s == 0)
		m[k++] = CLF_Type_vector(0, 0, 64, p->gaps, CLF_BYTE);
	for (int i = 0; i < p->n; i++)
		if (p->owner[i] == s && i != skip)
			m[k++] = CLF_Type_vector(p->lo[i], p->hi[i], p->period,
						 1, CLF_BYTE);
	for (int i = 0; i < k; i++)
		if (!m[i])
			err = -EINVAL;
	*out = err ? NULL : CLF_Type_struct(k, m);
	if (!err && !*out)
		err = -EINVAL;
	for (int i = 0; i < k; i++)
		CLF_Type_free(&m[i]);
	free(m);
	return err;
}

int partition_types(const struct partition *p, int skip, CLF_Datatype *t)
{
	for (int s = 0; s < p->nsub; s++) {
		int err = subfile_type(p, s, skip, &t[s]);

		if (err) {
			while (s-- > 0)
				CLF_Type_free(&t[s]);
			return err;
		}
	}
	return 0;
}
