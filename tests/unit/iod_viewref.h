/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_viewref.h -- an independent reference for view I/O tests.
 *
 * Types are built twice, as CLF datatypes for the iod and as byte-by-byte
 * models (model.h) for the reference; the reference walks a view range one
 * byte at a time with the model's map and unmap, never with libclf's
 * mapping engine.  Every file byte f carries the value val(f, round), so
 * views that overlap write the same values and any byte can be checked.
 */
#ifndef CLF_IOD_VIEWREF_H
#define CLF_IOD_VIEWREF_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "iod_test.h"
#include "model.h"

/* Never 0, so that a lost write (a hole) cannot pass for data. */
static inline unsigned char val(int64_t f, int round)
{
	return (unsigned char)((f * 131 + (f >> 7) * 17 + round * 29) % 251 +
			       1);
}

static inline struct typed tv(int64_t l, int64_t r, int64_t s, int64_t n,
			      const struct typed *old)
{
	struct typed x = {
		CLF_Type_vector(l, r, s, n, old ? old->t : CLF_BYTE),
		NULL,
	};
	struct model *byte = model_byte();

	x.m = model_vector(l, r, s, n, old ? old->m : byte);
	model_free(byte);
	ck_assert_ptr_nonnull(x.t);
	ck_assert_ptr_nonnull(x.m);
	return x;
}

static inline struct typed tbyte(void)
{
	struct typed x = { CLF_BYTE, model_byte() };

	return x;
}

/* What one subfile should hold: bytes[s] for s < len; 0 in holes. */
struct subref {
	unsigned char *bytes;
	size_t len, cap;
};

static inline void subref_set(struct subref *r, int64_t s, unsigned char b)
{
	if ((size_t)s >= r->cap) {
		size_t cap = (size_t)s * 2 + 64;

		r->bytes = realloc(r->bytes, cap);
		ck_assert_ptr_nonnull(r->bytes);
		memset(r->bytes + r->cap, 0, cap - r->cap);
		r->cap = cap;
	}
	r->bytes[s] = b;
	if ((size_t)s + 1 > r->len)
		r->len = (size_t)s + 1;
}

static inline unsigned char subref_get(const struct subref *r, int64_t s)
{
	return (size_t)s < r->len ? r->bytes[s] : 0;
}

/*
 * The packed view bytes of [lo, hi) of (view, vd) that fall into
 * (sub, sd), in out (room for hi - lo bytes); returns their number.
 * exp == NULL: values for a write, val(f, round); exp != NULL: what a read
 * should return given the expected subfile content.  sub_off, when not
 * NULL, receives each byte's subfile offset.
 */
static inline size_t view_reference(const struct model *view, int64_t vd,
				    const struct model *sub, int64_t sd,
				    int64_t lo, int64_t hi, int round,
				    const struct subref *exp,
				    unsigned char *out, int64_t *sub_off)
{
	size_t n = 0;

	for (int64_t y = lo; y < hi; y++) {
		int64_t f = model_unmap(view, vd, y), s;

		if (!model_selects(sub, sd, f))
			continue;
		s = model_map(sub, sd, f);
		out[n] = exp ? subref_get(exp, s) : val(f, round);
		if (sub_off)
			sub_off[n] = s;
		n++;
	}
	return n;
}

/* Record what writing view range [lo, hi) puts into the subfile. */
static inline void subref_write(struct subref *r, const struct model *view,
				int64_t vd, const struct model *sub, int64_t sd,
				int64_t lo, int64_t hi, int round)
{
	for (int64_t y = lo; y < hi; y++) {
		int64_t f = model_unmap(view, vd, y);

		if (model_selects(sub, sd, f))
			subref_set(r, model_map(sub, sd, f), val(f, round));
	}
}

/* The subfile's file, read directly, equals the reference. */
static inline void subref_check(struct iod_store *st, uint64_t file,
				uint32_t index, const struct subref *r)
{
	size_t len;
	unsigned char *got = slurp_subfile(st, file, index, &len);

	ck_assert_uint_eq(len, r->len);
	for (size_t s = 0; s < len; s++)
		if (got[s] != r->bytes[s])
			ck_abort_msg("subfile %u byte %zu: %u, expected %u",
				     index, s, got[s], r->bytes[s]);
	free(got);
}

#endif /* CLF_IOD_VIEWREF_H */
