/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * model.h -- a byte-by-byte reference model of clf datatypes, written
 * from the semantics in clf.h and independently of libclf: a type is a
 * bitmap of its extent.  Slow on purpose; the tests compare the engine's
 * answers with it.
 */
#ifndef CLF_TEST_MODEL_H
#define CLF_TEST_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "clf.h"

struct model {
	int64_t extent;
	int64_t size;
	uint8_t *bits;	/* bits[x] for x in [0, extent) */
	int64_t *rank;	/* selected bytes before x, x in [0, extent] */
	int64_t *sel;	/* the w-th selected byte, w in [0, size) */
};

struct model *model_byte(void);
/* NULL when the arguments break the rules in clf.h. */
struct model *model_vector(int64_t l, int64_t r, int64_t s, int64_t n,
			   const struct model *old);
struct model *model_struct(int count, struct model *const *members);
/* The type of extent extent selecting x iff bits[x] (bits is copied). */
struct model *model_bits(int64_t extent, const uint8_t *bits);
void model_free(struct model *m);

bool model_selects(const struct model *m, int64_t disp, int64_t f);
int64_t model_map(const struct model *m, int64_t disp, int64_t f);
int64_t model_unmap(const struct model *m, int64_t disp, int64_t lin);

/* A datatype and its model, built side by side. */
struct typed {
	CLF_Datatype t;
	struct model *m;
};

void typed_free(struct typed *x);

/* Deterministic random numbers for reproducible tests. */
uint64_t rnd_next(uint64_t *state);
int64_t rnd_range(uint64_t *state, int64_t lo, int64_t hi); /* inclusive */

/*
 * A random type of nesting depth <= depth whose extent stays within
 * max_extent (vectors and structs, interleaved or not).
 */
struct typed random_type(uint64_t *rs, int depth, int64_t max_extent);

/*
 * A random partitioning pattern: CYCLIC(k), BLOCK, 2-D block-cyclic or
 * nested.  Fills up to 16 subfiles; returns how many.
 */
int random_pattern(uint64_t *rs, struct typed *subfiles, int64_t max_extent);

#endif /* CLF_TEST_MODEL_H */
