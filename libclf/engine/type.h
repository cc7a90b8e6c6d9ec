/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * type.h -- what a CLF_Datatype is inside the library.
 */
#ifndef CLF_TYPE_H
#define CLF_TYPE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "clf.h"
#include "falls.h"

/* How many FALLS one type construction or mapping may create. */
#define CLF_BUILD_BUDGET (1 << 20)
/* Mappings of incommensurate extents may need more, per period. */
#define CLF_MAPPING_BUDGET (1 << 22)

struct clf_type {
	atomic_int refs;
	bool immortal;	  /* CLF_BYTE */
	int64_t extent;	  /* period, > 0 */
	struct fset *set; /* owned; selects bytes of [0, extent), size > 0 */
};

/* Wrap a set into a new type; takes ownership of set. NULL on ENOMEM. */
struct clf_type *clf_type_new(struct fset *set, int64_t extent);

/* Selected bytes of (type, disp) in [disp, file_off); 0 below disp. */
/*
 * clf_pattern_resize - the subfile types of a layout at its period
 *
 * For n >= 1 types that passed CLF_Pattern_check: out[j] is types[j]
 * taken as resized to [0, period), period the largest extent (the same
 * bytes, once per period).  Returns 0 with n new references in out, or
 * -ENOMEM.
 */
int clf_pattern_resize(int n, const CLF_Datatype *types, CLF_Datatype *out);

int64_t clf_type_count_before(const struct clf_type *t, int64_t disp,
			      int64_t file_off);

#endif /* CLF_TYPE_H */
