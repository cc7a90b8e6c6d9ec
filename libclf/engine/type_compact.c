// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * type_compact.c -- types from long block lists (CLF_Blocklist_*).
 *
 * A thin layer over the compactor of falls_compact.c: it checks the
 * arguments, turns "count copies of oldtype at disp" into members, and
 * keeps the members of the last (oldtype, count) so that a list of
 * millions of equal blocks of a holey type builds them once.
 */
#include <errno.h>
#include <stdlib.h>

#include "arith.h"
#include "error.h"
#include "falls_compact.h"
#include "type.h"

struct clf_blocklist {
	struct fbuild b;
	struct fcompact *c;	  /* owned */
	CLF_Datatype last_type;	  /* owned reference; NULL: none yet */
	int64_t last_count;
	struct fset *last;	  /* owned: last_count copies of it, at 0 */
};

/* The message and errno of a build error (b->err < 0). */
static int build_fail(int err, const char *what)
{
	switch (err) {
	case -EOVERFLOW:
		return clf_fail(EOVERFLOW, "%s: size or offset overflows int64",
				what);
	case -E2BIG:
		return clf_fail(E2BIG, "%s: description too large", what);
	case -ENOMEM:
		return clf_fail(ENOMEM, "%s: out of memory", what);
	default:
		return clf_fail_neg(err, "%s: invalid description", what);
	}
}

CLF_Blocklist CLF_Blocklist_new(void)
{
	struct clf_blocklist *bl = calloc(1, sizeof(*bl));

	if (!bl)
		goto nomem;
	bl->b.budget = CLF_BUILD_BUDGET;
	bl->c = fcompact_new(&bl->b);
	if (bl->c)
		return bl;
	free(bl);
nomem:
	errno = ENOMEM;
	clf_fail(ENOMEM, "blocklist: out of memory");
	return NULL;
}

void CLF_Blocklist_free(CLF_Blocklist *list)
{
	struct clf_blocklist *bl;

	if (!list || !*list)
		return;
	bl = *list;
	*list = NULL;
	fcompact_free(bl->c);
	CLF_Type_free(&bl->last_type);
	fset_put(bl->last);
	free(bl);
}

/* The members of count copies of type at byte 0, kept for the next add. */
static struct fset *copies(struct clf_blocklist *bl, int64_t count,
			   CLF_Datatype type)
{
	if (bl->last_type == type && bl->last_count == count)
		return bl->last;
	CLF_Type_free(&bl->last_type);
	fset_put(bl->last);
	bl->last = fset_tile(&bl->b, type->set, type->extent, 0, count);
	if (!bl->last)
		return NULL;
	bl->last_type = CLF_Type_dup(type);
	bl->last_count = count;
	return bl->last;
}

int CLF_Blocklist_add(CLF_Blocklist list, int64_t disp, int64_t count,
		      CLF_Datatype oldtype)
{
	struct fset *set;
	int64_t len, end;

	if (!list || !oldtype || disp < 0 || count < 0)
		return clf_fail(EINVAL,
			"blocklist: need a list, an old type, disp >= 0 and count >= 0 (disp %lld, count %lld)",
			(long long)disp, (long long)count);
	if (list->b.err)
		return build_fail(list->b.err, "blocklist");
	if (count == 0)
		return 0;
	if (!mul_ok(count, oldtype->extent, &len) || !add_ok(disp, len, &end))
		return clf_fail(EOVERFLOW,
			"blocklist: block of %lld copies at byte %lld overflows int64",
			(long long)count, (long long)disp);
	if (oldtype->set->size == oldtype->extent) {
		fcompact_push_block(list->c, disp, end - 1);
	} else {
		set = copies(list, count, oldtype);
		for (int i = 0; set && i < set->nr; i++)
			fcompact_push(list->c, &set->f[i], disp);
	}
	return list->b.err ? build_fail(list->b.err, "blocklist") : 0;
}

CLF_Datatype CLF_Type_blocklist(CLF_Blocklist *list, int64_t extent)
{
	struct fset *set;
	int64_t at = -1;
	CLF_Datatype t = NULL;
	int err = 0;

	if (!list || !*list) {
		errno = EINVAL;
		clf_fail(EINVAL, "blocklist: NULL list");
		return NULL;
	}
	set = fcompact_finish((*list)->c, &at);
	(*list)->c = NULL;
	if (!set) {
		err = (*list)->b.err;
		if (err == -EINVAL && at >= 0)
			clf_fail(EINVAL, "blocklist: blocks overlap at byte %lld",
				 (long long)at);
		else
			build_fail(err, "blocklist");
	} else if (set->size == 0) {
		err = clf_fail(EINVAL, "blocklist: the list selects no byte");
	} else if (set->hi >= extent) {
		err = clf_fail(EINVAL,
			       "blocklist: byte %lld lies past the extent %lld",
			       (long long)set->hi, (long long)extent);
	} else {
		t = clf_type_new(set, extent);
		set = NULL;
		if (!t)
			err = clf_fail(ENOMEM, "blocklist: out of memory");
	}
	fset_put(set);
	CLF_Blocklist_free(list);
	if (err)
		errno = -err;
	return t;
}
