// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_mem.c -- the memory a mapping holds (mapping_mem.h).
 *
 * Sets are reference counted and shared: an inner set of a vector may be
 * the inner set of many others, and a type's set is both the type's and
 * the split's part.  Counting a set per use could count a shared subtree
 * exponentially often, so the walk remembers the sets it has seen in an
 * open-addressed table of pointers and counts each once.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mapping_i.h"
#include "mapping_mem.h"
#include "mapping_prog.h"

/* What malloc adds to each block (glibc: a size word, 16-byte rounding). */
#define BLOCK_OVERHEAD 16

struct seen {
	const struct fset **slot;	/* owned; NULL: free */
	size_t cap;			/* a power of two */
	size_t n;
	size_t bytes;			/* counted so far */
	bool failed;			/* out of memory */
};

static size_t block(size_t n)
{
	return n + BLOCK_OVERHEAD;
}

static size_t ptr_hash(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 17) &
	       (cap - 1);
}

static bool grow(struct seen *s)
{
	size_t cap = s->cap ? 2 * s->cap : 256;
	const struct fset **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		size_t h;

		if (!s->slot[i])
			continue;
		for (h = ptr_hash(s->slot[i], cap); slot[h];
		     h = (h + 1) & (cap - 1))
			;
		slot[h] = s->slot[i];
	}
	free(s->slot);
	s->slot = slot;
	s->cap = cap;
	return true;
}

/* Whether set was seen before; remembers it if not. */
static bool seen_before(struct seen *s, const struct fset *set)
{
	size_t h;

	if (2 * (s->n + 1) > s->cap && !grow(s)) {
		s->failed = true;
		return true;
	}
	for (h = ptr_hash(set, s->cap); s->slot[h]; h = (h + 1) & (s->cap - 1))
		if (s->slot[h] == set)
			return true;
	s->slot[h] = set;
	s->n++;
	return false;
}

static void count_set(struct seen *s, const struct fset *set)
{
	if (!set || set->immortal || seen_before(s, set))
		return;
	s->bytes += block(sizeof(*set) + (size_t)set->nr * sizeof(set->f[0]));
	for (int i = 0; i < set->nr; i++)
		count_set(s, set->f[i].in);
}

static void count_type(struct seen *s, const struct clf_type *t)
{
	if (!t || t->immortal)
		return;
	s->bytes += block(sizeof(*t));
	count_set(s, t->set);
}

static void count_split(struct seen *s, const struct fsplit *sp)
{
	if (sp->part && sp->part != sp->inl)
		s->bytes += block((size_t)sp->nr * sizeof(sp->part[0]));
	for (int i = 0; sp->part && i < sp->nr; i++)
		count_set(s, sp->part[i]);
}

size_t clf_mapping_footprint(const CLF_Mapping *m)
{
	struct seen s = { 0 };

	if (!m)
		return 0;
	s.bytes = block(sizeof(*m));
	count_type(&s, m->view);
	count_type(&s, m->sub);
	if (m->tiled) {
		count_split(&s, &m->vside.parts);
		count_split(&s, &m->sside.parts);
	} else {
		count_set(&s, m->common);
		count_set(&s, m->only_v);
		count_set(&s, m->only_s);
		count_split(&s, &m->common_parts);
		count_split(&s, &m->only_v_parts);
		count_split(&s, &m->only_s_parts);
		if (m->table)
			s.bytes += block((size_t)m->ntable *
					 sizeof(m->table[0]));
		for (int i = 0; i < 2; i++)
			if (m->prog[i])
				s.bytes += block((size_t)m->nprog[i] *
						 sizeof(m->prog[i][0]));
	}
	free(s.slot);
	return s.failed ? SIZE_MAX : s.bytes;
}
