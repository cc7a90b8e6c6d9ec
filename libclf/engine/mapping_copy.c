// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_copy.c -- the copy loops that move a progression's runs
 * (clf_prog_copy, clf_prog_copy_owned in mapping_prog.h).
 *
 * A progression is n runs of len bytes at a fixed stride, so its copy is
 * one loop whose body the compiler can see whole when len is a constant:
 *
 *   - len 1, 2, 4, 8, 16: each run one or two moves;
 *   - any other len up to 256: two moves of the power of two below it
 *     that overlap in the middle (7 bytes: 4 at 0 and 4 at 3), exact, so
 *     a run never costs a call to memcpy (a 3-byte gather through memcpy
 *     cost 1.4 ns a byte, the pair 0.2; the 64-byte runs of a CYCLIC(64)
 *     checkerboard over round-robin stripes, 0.12 by memcpy, 0.06 so:
 *     memcpy's call and size dispatch were 13% of an iod's time there);
 *   - dx == 2 * len with len 1 or 2 (a checkerboard over two processes
 *     or stripes: every other byte or pair) with SSE2, 16 packed bytes a
 *     step: 0.3 ns a byte by single moves, under 0.1 so.
 *
 * A vector scatter rewrites the bytes between the runs it stores with
 * their own values, so it is used only where the side buffer belongs to
 * the caller alone (clf_prog_copy_owned: the iod's staging buffers), never
 * in a user's memory, where another thread may be writing those bytes.
 * A vector step reads or writes no byte past the last run it covers: it
 * stops one run short of the progression's end.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "mapping_prog.h"

/*
 * n runs of len bytes, run i from src + i * sdx to dst + i * ddx, each
 * as two moves of w bytes (w <= len <= 2 * w): with w and len constants
 * at the call, the loop has no call in it.
 */
static inline __attribute__((always_inline)) void
runs_copy(uint8_t *dst, int64_t ddx, const uint8_t *src, int64_t sdx,
	  int64_t n, size_t len, size_t w)
{
	for (int64_t i = 0; i < n; i++) {
		uint8_t *d = dst + i * ddx;
		const uint8_t *s = src + i * sdx;

		memcpy(d, s, w);
		if (len != w)
			memcpy(d + len - w, s + len - w, w);
	}
}

/* Any len: a fixed loop for the small ones, memcpy per run beyond. */
static void strided(uint8_t *dst, int64_t ddx, const uint8_t *src,
		    int64_t sdx, int64_t n, int64_t len)
{
	switch (len) {
	case 1:
		runs_copy(dst, ddx, src, sdx, n, 1, 1);
		return;
	case 2:
		runs_copy(dst, ddx, src, sdx, n, 2, 2);
		return;
	case 4:
		runs_copy(dst, ddx, src, sdx, n, 4, 4);
		return;
	case 8:
		runs_copy(dst, ddx, src, sdx, n, 8, 8);
		return;
	case 16:
		runs_copy(dst, ddx, src, sdx, n, 16, 16);
		return;
	case 32:
		runs_copy(dst, ddx, src, sdx, n, 32, 32);
		return;
	case 64:
		runs_copy(dst, ddx, src, sdx, n, 64, 64);
		return;
	case 128:
		runs_copy(dst, ddx, src, sdx, n, 128, 128);
		return;
	}
	if (len < 4)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 2);
	else if (len < 8)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 4);
	else if (len < 16)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 8);
	else if (len < 32)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 16);
	else if (len < 64)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 32);
	else if (len < 128)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 64);
	else if (len <= 256)
		runs_copy(dst, ddx, src, sdx, n, (size_t)len, 128);
	else
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + i * ddx, src + i * sdx, (size_t)len);
}

#ifdef __SSE2__
/*
 * Every other unit of w = len bytes (dx = 2 * len), w 1 or 2: how many
 * runs the vector loops below moved (the rest go by single moves).  A
 * step covers 16 packed bytes (16 / w runs) and 32 side bytes; it runs
 * while a run follows the step's last, so that no byte past the last
 * run's is touched.
 */
static int64_t half_gather(uint8_t *dst, const uint8_t *src, int64_t n,
			   int64_t w)
{
	int64_t per = 16 / w, i = 0;

	if (w == 1) {
		const __m128i lo = _mm_set1_epi16(0x00ff);

		for (; i + per < n; i += per) {
			__m128i a = _mm_loadu_si128((const void *)(src + 2 * i));
			__m128i b = _mm_loadu_si128((const void *)(src + 2 * i + 16));

			a = _mm_and_si128(a, lo);
			b = _mm_and_si128(b, lo);
			_mm_storeu_si128((void *)(dst + i),
					 _mm_packus_epi16(a, b));
		}
	} else {
		for (; i + per < n; i += per) {
			__m128i a = _mm_loadu_si128((const void *)(src + 4 * i));
			__m128i b = _mm_loadu_si128((const void *)(src + 4 * i + 16));

			/* The low pair of each 4 bytes, sign-extended so that
			 * the signed pack keeps it exactly. */
			a = _mm_srai_epi32(_mm_slli_epi32(a, 16), 16);
			b = _mm_srai_epi32(_mm_slli_epi32(b, 16), 16);
			_mm_storeu_si128((void *)(dst + 2 * i),
					 _mm_packs_epi32(a, b));
		}
	}
	return i;
}

static int64_t half_scatter(uint8_t *dst, const uint8_t *src, int64_t n,
			    int64_t w)
{
	const __m128i zero = _mm_setzero_si128();
	const __m128i keep = w == 1 ? _mm_set1_epi16((short)0xff00)
				    : _mm_set1_epi32((int)0xffff0000u);
	int64_t per = 16 / w, i = 0;

	for (; i + per < n; i += per) {
		__m128i v = _mm_loadu_si128((const void *)(src + i * w));
		uint8_t *d = dst + 2 * i * w;
		__m128i a = _mm_loadu_si128((const void *)d);
		__m128i b = _mm_loadu_si128((const void *)(d + 16));
		__m128i lo = w == 1 ? _mm_unpacklo_epi8(v, zero)
				    : _mm_unpacklo_epi16(v, zero);
		__m128i hi = w == 1 ? _mm_unpackhi_epi8(v, zero)
				    : _mm_unpackhi_epi16(v, zero);

		_mm_storeu_si128((void *)d,
				 _mm_or_si128(_mm_and_si128(a, keep), lo));
		_mm_storeu_si128((void *)(d + 16),
				 _mm_or_si128(_mm_and_si128(b, keep), hi));
	}
	return i;
}
#endif

static void prog_copy(const struct clf_prog *p, uint8_t *packed,
		      uint8_t *side, int64_t side_off, bool to_packed,
		      bool owned)
{
	uint8_t *a = packed + p->c, *b = side + (p->x - side_off);
	int64_t n = p->n, len = p->len, done = 0;

	if (n == 1 || p->dx == len) {
		if (to_packed)
			memcpy(a, b, (size_t)(n * len));
		else
			memcpy(b, a, (size_t)(n * len));
		return;
	}
#ifdef __SSE2__
	if (p->dx == 2 * len && (len == 1 || len == 2)) {
		if (to_packed)
			done = half_gather(a, b, n, len);
		else if (owned)
			done = half_scatter(b, a, n, len);
	}
#else
	(void)owned;
#endif
	a += done * len;
	b += done * p->dx;
	if (to_packed)
		strided(a, len, b, p->dx, n - done, len);
	else
		strided(b, p->dx, a, len, n - done, len);
}

void clf_prog_copy(const struct clf_prog *p, uint8_t *packed, uint8_t *side,
		   int64_t side_off, bool to_packed)
{
	prog_copy(p, packed, side, side_off, to_packed, false);
}

void clf_prog_copy_owned(const struct clf_prog *p, uint8_t *packed,
			 uint8_t *side, int64_t side_off, bool to_packed)
{
	prog_copy(p, packed, side, side_off, to_packed, true);
}
