// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * type.c -- the datatype constructors and MAP / MAP^-1.
 *
 * A type is its extent plus a set of nested FALLS in normal form (falls.h).
 * MAP(f) = k*size + count(x) and MAP^-1(v) = (v / size)*extent +
 * select(v % size), for f = disp + k*extent + x: both walk the description
 * once, so their cost depends on its depth, not on the offsets.
 */
#include <errno.h>
#include <stdlib.h>

#include "arith.h"
#include "error.h"
#include "falls_compact.h"
#include "type.h"

static struct clf_type byte_type = {
	.refs = 1, .immortal = true, .extent = 1, .set = &fset_byte,
};

CLF_Datatype CLF_BYTE = &byte_type;

struct clf_type *clf_type_new(struct fset *set, int64_t extent)
{
	struct clf_type *t = malloc(sizeof(*t));

	if (!t) {
		fset_put(set);
		return NULL;
	}
	atomic_init(&t->refs, 1);
	t->immortal = false;
	t->extent = extent;
	t->set = set;
	return t;
}

/* Return NULL with errno = -err (err negative), keeping the message. */
static CLF_Datatype fail_null(int err)
{
	errno = -err;
	return NULL;
}

static CLF_Datatype build_error(struct fbuild *b, const char *what)
{
	switch (b->err) {
	case -EOVERFLOW:
		return fail_null(clf_fail(EOVERFLOW,
					  "%s: size or extent overflows int64",
					  what));
	case -E2BIG:
		return fail_null(clf_fail(E2BIG, "%s: description too large",
					  what));
	case -ENOMEM:
		return fail_null(clf_fail(ENOMEM, "%s: out of memory", what));
	default:
		return fail_null(clf_fail(-b->err, "%s: invalid description",
					  what));
	}
}

CLF_Datatype CLF_Type_vector(int64_t left, int64_t right, int64_t stride,
			     int64_t count, CLF_Datatype oldtype)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };
	struct fvec v = { 0 };
	struct fset *inner = NULL, *set;
	int64_t len, extent;
	CLF_Datatype t;

	if (!oldtype)
		return fail_null(clf_fail(EINVAL, "vector: oldtype is NULL"));
	if (left < 0 || left > right || right >= stride || count < 1)
		return fail_null(clf_fail(EINVAL,
			"vector(%lld, %lld, %lld, %lld): need 0 <= left <= right < stride and count >= 1",
			(long long)left, (long long)right, (long long)stride,
			(long long)count));
	len = right - left + 1;
	if (len % oldtype->extent)
		return fail_null(clf_fail(EINVAL,
			"vector: block length %lld is not a multiple of the old type's extent %lld",
			(long long)len, (long long)oldtype->extent));
	if (!mul_ok(count, stride, &extent))
		return fail_null(clf_fail(EOVERFLOW,
			"vector: extent %lld * %lld overflows int64",
			(long long)count, (long long)stride));
	if (oldtype->set->size != oldtype->extent)
		inner = fset_tile(&b, oldtype->set, oldtype->extent, 0,
				  len / oldtype->extent);
	fvec_push(&b, &v, left, right, stride, count, inner);
	set = fset_from_vec(&b, &v);
	if (!set)
		return build_error(&b, "vector");
	t = clf_type_new(set, extent);
	if (!t)
		return fail_null(clf_fail(ENOMEM, "vector: out of memory"));
	return t;
}

/*
 * Two members that select byte at, for the message of a refused struct:
 * a check per member, on the error path only.
 */
static CLF_Datatype struct_overlap(int count, const CLF_Datatype *types,
				   int64_t at)
{
	int first = -1;

	for (int i = 0; at >= 0 && i < count; i++) {
		if (fset_next(types[i]->set, at) != at)
			continue;
		if (first >= 0)
			return fail_null(clf_fail(EINVAL,
				"struct: members %d and %d overlap at byte %lld",
				first, i, (long long)at));
		first = i;
	}
	return fail_null(clf_fail(EINVAL, "struct: members overlap"));
}

CLF_Datatype CLF_Type_struct(int count, const CLF_Datatype *types)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };
	struct fcompact *c;
	int64_t extent = 0, at = -1;
	struct fset *set;
	CLF_Datatype t;

	if (count < 1 || !types)
		return fail_null(clf_fail(EINVAL,
			"struct: need at least one member (count %d)", count));
	for (int i = 0; i < count; i++) {
		if (!types[i])
			return fail_null(clf_fail(EINVAL,
				"struct: member %d is NULL", i));
		extent = max64(extent, types[i]->extent);
	}
	/* Many members are often one pattern: the compactor finds it. */
	c = fcompact_new(&b);
	for (int i = 0; c && i < count; i++) {
		const struct fset *s = types[i]->set;

		for (int k = 0; k < s->nr; k++)
			fcompact_push(c, &s->f[k], 0);
	}
	set = c ? fcompact_finish(c, &at) : NULL;
	if (!set && b.err == -EINVAL)
		return struct_overlap(count, types, at);
	if (!set)
		return build_error(&b, "struct");
	t = clf_type_new(set, extent);
	if (!t)
		return fail_null(clf_fail(ENOMEM, "struct: out of memory"));
	return t;
}

int CLF_Type_pitfalls(int64_t left, int64_t right, int64_t stride,
		      int64_t count, int64_t shift, int nparts,
		      CLF_Datatype oldtype, CLF_Datatype *types)
{
	CLF_Datatype *made;
	int err = 0;

	if (nparts < 1 || !types)
		return clf_fail(EINVAL, "pitfalls: need nparts >= 1 (got %d)",
				nparts);
	made = calloc(nparts, sizeof(*made));
	if (!made)
		return clf_fail(ENOMEM, "pitfalls: out of memory");
	for (int j = 0; j < nparts; j++) {
		int64_t d, l, r;

		if (!mul_ok(j, shift, &d) || !add_ok(left, d, &l) ||
		    !add_ok(right, d, &r)) {
			err = clf_fail(EOVERFLOW,
				       "pitfalls: part %d: offset overflows", j);
			break;
		}
		made[j] = CLF_Type_vector(l, r, stride, count, oldtype);
		if (!made[j]) {
			err = clf_fail_neg(-errno, "pitfalls: part %d: %s", j,
					   CLF_Last_error());
			break;
		}
	}
	if (err) {
		for (int j = 0; j < nparts; j++)
			CLF_Type_free(&made[j]);
	} else {
		for (int j = 0; j < nparts; j++)
			types[j] = made[j];
	}
	free(made);
	return err;
}

void CLF_Type_free(CLF_Datatype *type)
{
	struct clf_type *t;

	if (!type || !*type)
		return;
	t = *type;
	*type = NULL;
	if (t->immortal)
		return;
	if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
		return;
	fset_put(t->set);
	free(t);
}

CLF_Datatype CLF_Type_dup(CLF_Datatype type)
{
	if (type && !type->immortal)
		atomic_fetch_add_explicit(&type->refs, 1, memory_order_relaxed);
	return type;
}

int64_t CLF_Type_size(CLF_Datatype type)
{
	return type ? type->set->size : -EINVAL;
}

int64_t CLF_Type_extent(CLF_Datatype type)
{
	return type ? type->extent : -EINVAL;
}

int64_t clf_type_count_before(const struct clf_type *t, int64_t disp,
			      int64_t file_off)
{
	int64_t d, k;

	if (file_off <= disp)
		return 0;
	d = file_off - disp;
	k = d / t->extent;
	return k * t->set->size + fset_count(t->set, d - k * t->extent);
}

int CLF_Type_map(CLF_Datatype type, int64_t disp, int64_t file_off,
		 int64_t *linear)
{
	int64_t d, k, x;

	if (!type || disp < 0 || !linear)
		return clf_fail(EINVAL, "map: NULL type or negative displacement");
	if (file_off < disp)
		return -ENOENT;
	d = file_off - disp;
	k = d / type->extent;
	x = d - k * type->extent;
	if (fset_next(type->set, x) != x)
		return -ENOENT;
	*linear = k * type->set->size + fset_count(type->set, x);
	return 0;
}

int CLF_Type_unmap(CLF_Datatype type, int64_t disp, int64_t linear,
		   int64_t *file_off)
{
	int64_t k, w, f;

	if (!type || disp < 0 || linear < 0 || !file_off)
		return clf_fail(EINVAL,
				"unmap: NULL type, negative displacement or offset");
	k = linear / type->set->size;
	w = linear - k * type->set->size;
	if (!mul_ok(k, type->extent, &f) || !add_ok(f, disp, &f) ||
	    !add_ok(f, fset_select(type->set, w), &f))
		return clf_fail(EOVERFLOW,
				"unmap: linear offset %lld lies beyond the largest file offset",
				(long long)linear);
	*file_off = f;
	return 0;
}
