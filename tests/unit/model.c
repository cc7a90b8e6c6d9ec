// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * model.c -- the reference model and random type generators for tests.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static struct model *model_alloc(int64_t extent)
{
	struct model *m = calloc(1, sizeof(*m));

	assert(m);
	m->extent = extent;
	m->bits = calloc(extent, 1);
	assert(m->bits);
	return m;
}

/* Fill rank and sel from bits. */
static void model_index(struct model *m)
{
	int64_t w = 0;

	m->rank = malloc((m->extent + 1) * sizeof(*m->rank));
	assert(m->rank);
	for (int64_t x = 0; x < m->extent; x++) {
		m->rank[x] = w;
		w += m->bits[x];
	}
	m->rank[m->extent] = w;
	m->size = w;
	m->sel = malloc((w ? w : 1) * sizeof(*m->sel));
	assert(m->sel);
	w = 0;
	for (int64_t x = 0; x < m->extent; x++)
		if (m->bits[x])
			m->sel[w++] = x;
}

struct model *model_byte(void)
{
	struct model *m = model_alloc(1);

	m->bits[0] = 1;
	model_index(m);
	return m;
}

struct model *model_vector(int64_t l, int64_t r, int64_t s, int64_t n,
			   const struct model *old)
{
	struct model *m;

	if (!old || l < 0 || l > r || r >= s || n < 1 ||
	    (r - l + 1) % old->extent)
		return NULL;
	m = model_alloc(n * s);
	for (int64_t i = 0; i < n; i++)
		for (int64_t x = l + i * s; x <= r + i * s; x++)
			m->bits[x] = old->bits[(x - l - i * s) % old->extent];
	model_index(m);
	return m;
}

struct model *model_struct(int count, struct model *const *members)
{
	int64_t extent = 0;
	struct model *m;

	for (int i = 0; i < count; i++)
		if (members[i]->extent > extent)
			extent = members[i]->extent;
	m = model_alloc(extent);
	for (int i = 0; i < count; i++) {
		for (int64_t x = 0; x < members[i]->extent; x++) {
			if (!members[i]->bits[x])
				continue;
			if (m->bits[x]) {
				model_free(m);
				return NULL;
			}
			m->bits[x] = 1;
		}
	}
	model_index(m);
	return m;
}

struct model *model_bits(int64_t extent, const uint8_t *bits)
{
	struct model *m = model_alloc(extent);

	memcpy(m->bits, bits, extent);
	model_index(m);
	return m;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	free(m->bits);
	free(m->rank);
	free(m->sel);
	free(m);
}

bool model_selects(const struct model *m, int64_t disp, int64_t f)
{
	return f >= disp && m->bits[(f - disp) % m->extent];
}

int64_t model_map(const struct model *m, int64_t disp, int64_t f)
{
	int64_t k, x;

	if (!model_selects(m, disp, f))
		return -1;
	k = (f - disp) / m->extent;
	x = (f - disp) % m->extent;
	return k * m->size + m->rank[x];
}

int64_t model_unmap(const struct model *m, int64_t disp, int64_t lin)
{
	return disp + (lin / m->size) * m->extent + m->sel[lin % m->size];
}

void typed_free(struct typed *x)
{
	CLF_Type_free(&x->t);
	model_free(x->m);
	x->m = NULL;
}

uint64_t rnd_next(uint64_t *state)
{
	/* splitmix64 */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int64_t rnd_range(uint64_t *state, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd_next(state) % (uint64_t)(hi - lo + 1));
}

static struct typed typed_byte(void)
{
	return (struct typed){ CLF_BYTE, model_byte() };
}

static struct typed typed_vector(int64_t l, int64_t r, int64_t s, int64_t n,
				 const struct typed *old)
{
	struct typed x = {
		CLF_Type_vector(l, r, s, n, old->t),
		model_vector(l, r, s, n, old->m),
	};

	if (!x.t || !x.m) {
		fprintf(stderr, "vector(%lld,%lld,%lld,%lld) refused: %s\n",
			(long long)l, (long long)r, (long long)s, (long long)n,
			CLF_Last_error());
		abort();
	}
	return x;
}

static struct typed random_vector(uint64_t *rs, int depth, int64_t max_extent)
{
	struct typed old = random_type(rs, depth - 1, max_extent / 2);
	int64_t e = old.m->extent, tiles, l, s, n, len;
	struct typed v;

	tiles = rnd_range(rs, 1, 4);
	len = tiles * e;
	if (len > max_extent) {
		tiles = 1;
		len = e;
	}
	l = rnd_range(rs, 0, 2) ? 0 : rnd_range(rs, 0, e + 3);
	s = l + len + (rnd_range(rs, 0, 3) ? rnd_range(rs, 0, 2 * e + 3) : 0);
	if (s > max_extent) {
		l = 0;
		s = len;
	}
	n = rnd_range(rs, 1, 6);
	while (n > 1 && n * s > max_extent)
		n--;
	v = typed_vector(l, l + len - 1, s, n, &old);
	typed_free(&old);
	return v;
}

/*
 * Members at the offsets of a repeating frame: member j owns the slice
 * [off_j, off_j + len_j) of each frame, so members interleave.
 */
static struct typed random_struct(uint64_t *rs, int depth, int64_t max_extent)
{
	int count = (int)rnd_range(rs, 2, 3), used = 0;
	struct typed inner[3], members[3];
	CLF_Datatype t[3];
	struct model *m[3];
	int64_t len[3], frame = 0, off = 0, cnt;
	struct typed x;

	for (int j = 0; j < count; j++) {
		inner[j] = random_type(rs, depth - 1, max_extent / 8);
		len[j] = inner[j].m->extent * rnd_range(rs, 1, 2);
		frame += len[j] + rnd_range(rs, 0, 2);
	}
	for (int j = 0; j < count; j++) {
		int64_t n;

		cnt = max_extent / frame;
		n = cnt > 1 ? rnd_range(rs, 1, cnt < 4 ? cnt : 4) : 1;
		if (rnd_range(rs, 0, 4) || used == 0) {
			members[used] = typed_vector(off, off + len[j] - 1,
						     frame, n, &inner[j]);
			t[used] = members[used].t;
			m[used] = members[used].m;
			used++;
		}
		off += len[j];
		typed_free(&inner[j]);
	}
	x.t = CLF_Type_struct(used, t);
	x.m = model_struct(used, m);
	if (!x.t || !x.m) {
		fprintf(stderr, "struct refused: %s\n", CLF_Last_error());
		abort();
	}
	for (int j = 0; j < used; j++)
		typed_free(&members[j]);
	return x;
}

struct typed random_type(uint64_t *rs, int depth, int64_t max_extent)
{
	if (depth <= 0 || max_extent < 4 || rnd_range(rs, 0, 5) == 0)
		return typed_byte();
	if (rnd_range(rs, 0, 3) == 0 && max_extent >= 32)
		return random_struct(rs, depth, max_extent);
	return random_vector(rs, depth, max_extent);
}

/* Subfile (i, j) of a p1 x p2 block-cyclic(k1, k2) grid over rows x cols. */
static int pattern_2d(uint64_t *rs, struct typed *out, int64_t max_extent)
{
	int64_t p1 = rnd_range(rs, 1, 3), p2 = rnd_range(rs, 1, 3);
	int64_t k1 = rnd_range(rs, 1, 3), k2 = rnd_range(rs, 1, 4);
	int64_t c2 = rnd_range(rs, 1, 3), cols = p2 * k2 * c2, c1;
	struct typed byte = typed_byte();
	int nr = 0;

	c1 = max_extent / (cols * p1 * k1);
	c1 = c1 < 1 ? 1 : rnd_range(rs, 1, c1 < 3 ? c1 : 3);
	for (int64_t i = 0; i < p1; i++) {
		for (int64_t j = 0; j < p2; j++) {
			struct typed row = typed_vector(j * k2, j * k2 + k2 - 1,
							p2 * k2, c2, &byte);

			out[nr++] = typed_vector(i * k1 * cols,
						 (i * k1 + k1) * cols - 1,
						 p1 * k1 * cols, c1, &row);
			typed_free(&row);
		}
	}
	typed_free(&byte);
	return nr;
}

int random_pattern(uint64_t *rs, struct typed *out, int64_t max_extent)
{
	struct typed byte = typed_byte();
	CLF_Datatype t[16];
	int64_t p, k, c;
	int kind = (int)rnd_range(rs, 0, 3), err;

	if (kind == 2) {
		typed_free(&byte);
		return pattern_2d(rs, out, max_extent);
	}
	p = rnd_range(rs, 1, 5);
	if (kind == 3) {
		/* Nested: cyclic over p blocks, each cut cyclic(k) over q. */
		int64_t q = rnd_range(rs, 1, 3), m = rnd_range(rs, 1, 3);
		int nr = 0;

		k = rnd_range(rs, 1, 4);
		c = rnd_range(rs, 1, 2);
		for (int64_t i = 0; i < p && nr + q <= 16; i++) {
			int64_t blk = q * k * m;

			for (int64_t j = 0; j < q; j++) {
				struct typed cyc = typed_vector(j * k,
						j * k + k - 1, q * k, m, &byte);

				out[nr++] = typed_vector(i * blk,
						i * blk + blk - 1, p * blk, c,
						&cyc);
				typed_free(&cyc);
			}
		}
		typed_free(&byte);
		return nr;
	}
	if (kind == 0) {
		k = rnd_range(rs, 1, 16);	/* CYCLIC(k) */
		c = rnd_range(rs, 1, 3);
	} else {
		k = rnd_range(rs, 1, max_extent / p); /* BLOCK */
		c = 1;
	}
	err = CLF_Type_pitfalls(0, k - 1, p * k, c, k, (int)p, CLF_BYTE, t);
	if (err) {
		fprintf(stderr, "pitfalls refused: %s\n", CLF_Last_error());
		abort();
	}
	for (int j = 0; j < p; j++) {
		out[j].t = t[j];
		out[j].m = model_vector(j * k, j * k + k - 1, p * k, c,
					byte.m);
	}
	typed_free(&byte);
	return (int)p;
}
