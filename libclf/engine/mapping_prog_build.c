// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_prog_build.c -- progressions built from runs in view order
 * (struct map_prog_build, mapping_i.h), for a table's creation
 * (mapping_table.c).  Apart from the walks over them (mapping_prog.c),
 * which reach the mapping itself: building a table calls only down.
 */
#include <errno.h>
#include <stdlib.h>

#include "mapping_i.h"
#include "mapping_prog.h"

static int push_run(struct map_prog_build *b, int64_t c, int64_t x,
		    int64_t len)
{
	struct clf_prog *last = b->n ? &b->p[b->n - 1] : NULL;

	if (last && clf_prog_continues(last, c, x, len)) {
		if (last->n == 1)
			last->dx = x - last->x;
		last->n++;
		return 0;
	}
	if (b->n == b->max) {
		b->full = true;
		return 0;
	}
	if (b->n == b->alloc) {
		int alloc = b->alloc ? 2 * b->alloc : 16;
		struct clf_prog *p;

		if (alloc > b->max)
			alloc = b->max;
		p = realloc(b->p, alloc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->alloc = alloc;
	}
	b->p[b->n++] = (struct clf_prog){ c, x, len, 0, 1 };
	return 0;
}

int map_prog_add(struct map_prog_build *b, int64_t c, int64_t x, int64_t len)
{
	int err = 0;

	if (b->full)
		return 0;
	if (b->plen && b->px + b->plen == x) {
		b->plen += len;
		return 0;
	}
	if (b->plen)
		err = push_run(b, b->pc, b->px, b->plen);
	b->pc = c;
	b->px = x;
	b->plen = len;
	return err;
}

int map_prog_finish(struct map_prog_build *b)
{
	int err = 0;

	if (b->plen && !b->full)
		err = push_run(b, b->pc, b->px, b->plen);
	b->plen = 0;
	return err;
}
