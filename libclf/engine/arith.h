/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arith.h -- int64_t arithmetic that cannot overflow silently.
 *
 * Offsets and sizes in clf come from users and from the network, so every
 * product and sum that could leave int64_t goes through these.
 */
#ifndef CLF_ARITH_H
#define CLF_ARITH_H

#include <stdbool.h>
#include <stdint.h>

/* *out = a * b; false (and *out untouched) on overflow. */
static inline bool mul_ok(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

/* *out = a + b; false (and *out untouched) on overflow. */
static inline bool add_ok(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

/* a + b, clamped to INT64_MAX (for upper bounds of ranges). */
static inline int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* a * b, clamped to INT64_MAX; both non-negative. */
static inline int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Floor and ceiling of a / b for b > 0 and any sign of a. */
static inline int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* a mod b in [0, b) for b > 0 and any sign of a. */
static inline int64_t floor_mod(int64_t a, int64_t b)
{
	int64_t r = a % b;

	return r < 0 ? r + b : r;
}

static inline int64_t ceil_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && a > 0) ? q + 1 : q;
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Least common multiple of two positive values; false on overflow. */
static inline bool lcm_ok(int64_t a, int64_t b, int64_t *out)
{
	return mul_ok(a / gcd64(a, b), b, out);
}

#endif /* CLF_ARITH_H */
