// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_prog_copy.c -- the copy loops of progressions (clf_prog_copy,
 * clf_prog_copy_owned; libclf/engine/mapping_copy.c) against a byte-by-byte
 * model.
 *
 * Random periodic run tables -- a stretch's progressions, repeated stretch
 * after stretch as a walk gives them -- with run lengths and strides that
 * reach every kernel: every length up to 40 (the fixed moves, the
 * overlapping pairs, memcpy beyond), strides of exactly twice the length
 * (the vector loops), and counts just below, at and past a vector step.
 * Each gather must fill the packed bytes with the model's, and each
 * scatter must leave the side buffer exactly as the model does: the runs'
 * bytes in place, every other byte untouched.  Both buffers end at an
 * inaccessible page, right after the last run's last byte: a loop that
 * reads or writes past it crashes the test.
 *
 * CLF_TEST_SEED=n reproduces a run; CLF_TEST_ROUNDS=n scales it.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_main.h"
#include "mapping_prog.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int64_t rnd_in(int64_t lo, int64_t hi)	/* [lo, hi] */
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void seed(uint64_t salt)
{
	const char *s = getenv("CLF_TEST_SEED");

	rng_state = (s ? strtoull(s, NULL, 0) : 20261126) * 7919 + salt + 1;
}

static int rounds(int dflt)
{
	const char *s = getenv("CLF_TEST_ROUNDS");

	return s ? atoi(s) : dflt;
}

/* A table of progressions, one stretch, and how it repeats. */
struct table {
	struct clf_prog p[8];
	int n;
	int64_t xper, cper;	/* side and packed bytes of a stretch */
};

/* A run count near a vector step (16 / len runs) or anywhere. */
static int64_t pick_count(int64_t len)
{
	int64_t step = 16 / (len < 16 ? len : 16);

	switch (rnd() % 4) {
	case 0:
		return rnd_in(1, 3);
	case 1:
		return step * rnd_in(1, 4) + rnd_in(-1, 1);
	default:
		return rnd_in(1, 100);
	}
}

static int64_t pick_len(void)
{
	switch (rnd() % 3) {
	case 0:
		return rnd_in(1, 2);
	case 1:
		return rnd_in(1, 40);
	default:
		return 1 << rnd_in(0, 4);
	}
}

/* Progressions one after the other in the side, gaps between them. */
static void table_make(struct table *t)
{
	int64_t x = rnd_in(0, 5), c = 0;

	t->n = (int)rnd_in(1, 8);
	for (int i = 0; i < t->n; i++) {
		struct clf_prog *p = &t->p[i];

		p->len = pick_len();
		p->n = pick_count(p->len);
		if (p->n < 1)
			p->n = 1;
		p->dx = rnd() % 2 ? 2 * p->len
				  : p->len + rnd_in(p->len == 1 ? 1 : 0, 2 * p->len + 8);
		if (p->dx == p->len && p->n > 1 && rnd() % 2)
			p->dx++;
		p->x = x;
		p->c = c;
		x += (p->n - 1) * p->dx + p->len + rnd_in(0, 9);
		c += p->n * p->len;
	}
	t->xper = x;
	t->cper = c;
}

/* The packed offset of every side byte a run covers; -1 elsewhere. */
static void model(const struct table *t, int reps, int64_t *owner)
{
	for (int64_t x = 0; x < reps * t->xper; x++)
		owner[x] = -1;
	for (int k = 0; k < reps; k++)
		for (int i = 0; i < t->n; i++) {
			const struct clf_prog *p = &t->p[i];

			for (int64_t r = 0; r < p->n; r++)
				for (int64_t b = 0; b < p->len; b++)
					owner[k * t->xper + p->x + r * p->dx + b] =
						k * t->cper + p->c + r * p->len + b;
		}
}

/* Stretch k's copy of progression i: as the walks shift them. */
static struct clf_prog shifted(const struct table *t, int k, int i)
{
	struct clf_prog p = t->p[i];

	p.x += k * t->xper;
	p.c += k * t->cper;
	return p;
}

/* n bytes that end where an inaccessible page begins; guarded_free. */
static uint8_t *guarded(int64_t n, size_t *maplen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = ((size_t)n + pg - 1) / pg * pg;
	uint8_t *m = mmap(NULL, body + pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert(m != MAP_FAILED);
	ck_assert_int_eq(mprotect(m + body, pg, PROT_NONE), 0);
	*maplen = body + pg;
	return m + body - n;
}

static void guarded_free(uint8_t *p, int64_t n, size_t maplen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *end = p + n;

	munmap(end - (maplen - pg), maplen);
}

/*
 * Copy the table reps times in both directions and compare with the
 * model, the side buffer's offset 0 at side offset base (side_off).
 */
static void check_table(const struct table *t, int reps, bool owned)
{
	const struct clf_prog *last = &t->p[t->n - 1];
	/* Side bytes up to the last run's end: no gap after it. */
	int64_t xs = (reps - 1) * t->xper + last->x +
		     (last->n - 1) * last->dx + last->len;
	int64_t cs = reps * t->cper, base = rnd_in(0, 100);
	int64_t *owner = malloc(reps * t->xper * sizeof(*owner));
	uint8_t *side0 = malloc(xs), *packed0 = malloc(cs);
	size_t sidemap, packmap;
	uint8_t *side = guarded(xs, &sidemap), *packed = guarded(cs, &packmap);

	ck_assert(owner && side0 && packed0);
	model(t, reps, owner);
	for (int64_t i = 0; i < xs; i++)
		side0[i] = (uint8_t)rnd();
	for (int64_t i = 0; i < cs; i++)
		packed0[i] = (uint8_t)rnd();

	/* Gather: packed byte c is the side byte it owns. */
	memcpy(side, side0, xs);
	memset(packed, 0, cs);
	for (int k = 0; k < reps; k++)
		for (int i = 0; i < t->n; i++) {
			struct clf_prog p = shifted(t, k, i);

			p.x += base;
			(owned ? clf_prog_copy_owned : clf_prog_copy)(
				&p, packed, side, base, true);
		}
	for (int64_t x = 0; x < xs; x++)
		if (owner[x] >= 0)
			ck_assert_msg(packed[owner[x]] == side0[x],
				      "gather: packed byte %lld wrong (len %lld)",
				      (long long)owner[x], (long long)t->p[0].len);

	/* Scatter: the runs' bytes come from packed, the rest stay. */
	memcpy(packed, packed0, cs);
	for (int k = 0; k < reps; k++)
		for (int i = 0; i < t->n; i++) {
			struct clf_prog p = shifted(t, k, i);

			p.x += base;
			(owned ? clf_prog_copy_owned : clf_prog_copy)(
				&p, packed, side, base, false);
		}
	for (int64_t x = 0; x < xs; x++)
		if (side[x] != (owner[x] >= 0 ? packed0[owner[x]] : side0[x]))
			ck_abort_msg("scatter: side byte %lld wrong (%s)",
				     (long long)x,
				     owner[x] >= 0 ? "a run's" : "between runs");
	free(owner);
	free(side0);
	free(packed0);
	guarded_free(side, xs, sidemap);
	guarded_free(packed, cs, packmap);
}

START_TEST(test_random_periodic_tables_copy_as_the_byte_model)
{
	seed(1);
	for (int r = 0; r < rounds(1000); r++) {
		struct table t;

		table_make(&t);
		check_table(&t, (int)rnd_in(1, 4), r % 2);
	}
}
END_TEST

/*
 * The checkerboard's tables (every other byte or pair) at every count
 * around the vector step, both owned and not: the vector loops and their
 * tails.
 */
START_TEST(test_every_other_unit_copies_exactly_at_every_count)
{
	seed(2);
	for (int64_t len = 1; len <= 4; len++)
		for (int64_t n = 1; n <= 70; n++)
			for (int owned = 0; owned < 2; owned++) {
				struct table t = { .n = 1 };

				t.p[0] = (struct clf_prog){ 0, rnd_in(0, 3), len,
							    2 * len, n };
				t.xper = t.p[0].x + 2 * len * n;
				t.cper = len * n;
				check_table(&t, 2, owned);
			}
}
END_TEST

/*
 * Every run length up to past the largest fixed loop (256), each at a
 * few counts and strides (touching, a byte apart, far apart), owned and
 * not: the overlapping pairs of every size class and their edges.
 */
START_TEST(test_every_run_length_to_300_copies_exactly)
{
	static const int64_t counts[] = { 1, 2, 5 };

	seed(3);
	for (int64_t len = 1; len <= 300; len++)
		for (int ci = 0; ci < 3; ci++)
			for (int gap = 0; gap < 3; gap++) {
				int64_t n = counts[ci];
				struct table t = { .n = 1 };
				int64_t dx = len + (gap == 0 ? 0 : gap == 1 ? 1
							       : len + 3);

				t.p[0] = (struct clf_prog){ 0, rnd_in(0, 3), len,
							    dx, n };
				t.xper = t.p[0].x + dx * n + 1;
				t.cper = len * n;
				check_table(&t, 2, gap % 2);
			}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prog_copy");
	TCase *tc = tcase_create("kernels");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_periodic_tables_copy_as_the_byte_model);
	tcase_add_test(tc, test_every_other_unit_copies_exactly_at_every_count);
	tcase_add_test(tc, test_every_run_length_to_300_copies_exactly);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
