// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_falls_cursor.c -- the forward cursor and the ordered split
 * (libclf/engine/falls_cursor.h) against fset_next and fset_count, which walk
 * the description from the root, on random nested types (interleaved
 * structs included), across period boundaries and near INT64_MAX.
 *
 * CLF_TEST_SEED=n reproduces a run; CLF_TEST_ROUNDS=n scales it.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "falls_cursor.h"
#include "model.h"
#include "type.h"

static uint64_t seed_base(void)
{
	const char *s = getenv("CLF_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : 20261121;
}

static int rounds(int dflt)
{
	const char *s = getenv("CLF_TEST_ROUNDS");

	return s ? atoi(s) : dflt;
}

/* The reference: first byte >= x and count of [origin, x), from the root. */
struct ref {
	int64_t next, count;
};

static struct ref ref_seek(const struct fset *set, int64_t origin,
			   int64_t period, int64_t x)
{
	struct ref r = { -1, 0 };
	int64_t k, base, y;

	if (x < origin)
		x = origin;
	k = (x - origin) / period;
	base = origin + k * period;
	r.count = k * set->size + fset_count(set, x - base);
	if (set->size == 0)
		return r;
	y = fset_next(set, x - base);
	if (y >= 0) {
		if (!__builtin_add_overflow(base, y, &r.next))
			return r;
		r.next = -1;
		return r;
	}
	if (__builtin_add_overflow(base, period, &base) ||
	    __builtin_add_overflow(base, set->lo, &r.next))
		r.next = -1;
	return r;
}

/* Seek both the cursor and the split cursor along increasing targets. */
static void check_walk(uint64_t *rs, const struct fset *set, int64_t origin,
		       int64_t period, int64_t from, int steps)
{
	struct fcursor c;
	struct fmcursor mc;
	struct fsplit sp;
	int64_t x = from, step;

	ck_assert_int_eq(fcursor_init(&c, set, origin, period), 0);
	ck_assert_int_eq(fsplit_init(&sp, (struct fset *)set), 0);
	ck_assert_int_eq(fmcursor_init(&mc, &sp, origin, period), 0);
	for (int k = 0; k < sp.nr; k++)
		ck_assert(sp.part[k]->ordered || sp.nr == 1);
	for (int st = 0; st < steps; st++) {
		struct ref r = ref_seek(set, origin, period, x);
		int64_t got = fcursor_seek(&c, x), mgot = fmcursor_seek(&mc, x);

		ck_assert_int_eq(got, r.next);
		ck_assert_int_eq(fcursor_count(&c), r.count);
		ck_assert_int_eq(mgot, r.next);
		ck_assert_int_eq(fmcursor_count(&mc), r.count);
		if (got < 0)
			break;
		/* Small steps, seeks to the byte found, jumps. */
		switch (rnd_range(rs, 0, 5)) {
		case 0:
			step = 0;
			break;
		case 1:
			step = got - x;
			break;
		case 2:
			step = got - x + 1;
			break;
		case 3:
			step = rnd_range(rs, 0, 3);
			break;
		case 4:
			step = rnd_range(rs, 0, period / 3 + 1);
			break;
		default:
			step = rnd_range(rs, 0, 3 * period);
			break;
		}
		if (__builtin_add_overflow(x, step, &x))
			break;
	}
	fmcursor_release(&mc);
	fsplit_release(&sp);
	fcursor_release(&c);
}

START_TEST(test_cursor_matches_walks_from_the_root_on_random_types)
{
	uint64_t rs = seed_base() + 11;

	for (int it = 0; it < rounds(2000); it++) {
		struct typed x = random_type(&rs, 3, 4096);
		int64_t origin = rnd_range(&rs, 0, 50);

		check_walk(&rs, x.t->set, origin, x.t->extent,
			   rnd_range(&rs, 0, origin + 2 * x.t->extent), 300);
		typed_free(&x);
	}
}
END_TEST

START_TEST(test_cursor_steps_through_every_piece_across_periods)
{
	/* Bytes {0, 2, 3} of 5 and [7, 9] of 10: pieces and gaps alternate. */
	CLF_Datatype a = CLF_Type_vector(0, 0, 5, 1, CLF_BYTE);
	CLF_Datatype b = CLF_Type_vector(2, 3, 5, 1, CLF_BYTE);
	CLF_Datatype c = CLF_Type_vector(7, 9, 10, 1, CLF_BYTE);
	CLF_Datatype m[3] = { a, b, c }, t = CLF_Type_struct(3, m);
	static const int64_t want[] = { 0, 2, 3, 7, 8, 9 };
	struct fcursor cur;
	int64_t count = 0;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(fcursor_init(&cur, t->set, 100, 10), 0);
	for (int64_t x = 0; x < 140; x++) {
		int64_t y = fcursor_seek(&cur, x);
		int64_t k = x < 100 ? 0 : (x - 100) / 10;
		int64_t r = x < 100 ? 0 : (x - 100) % 10;
		int64_t next = -1;

		for (int w = 0; w < 6 && next < 0; w++)
			if (want[w] >= r)
				next = 100 + 10 * k + want[w];
		if (next < 0)
			next = 100 + 10 * (k + 1);
		ck_assert_int_eq(y, next);
		ck_assert_int_eq(fcursor_count(&cur), count);
		if (x >= 100)
			for (int w = 0; w < 6; w++)
				count += want[w] == r;
	}
	fcursor_release(&cur);
	CLF_Type_free(&t);
	CLF_Type_free(&a);
	CLF_Type_free(&b);
	CLF_Type_free(&c);
}
END_TEST

START_TEST(test_cursor_stops_cleanly_near_int64_max)
{
	uint64_t rs = seed_base() + 12;

	for (int it = 0; it < rounds(300); it++) {
		struct typed x = random_type(&rs, 3, 4096);
		int64_t e = x.t->extent;
		int64_t origin = INT64_MAX - rnd_range(&rs, 0, 4 * e);

		check_walk(&rs, x.t->set, origin, e,
			   origin - rnd_range(&rs, 0, 10), 400);
		typed_free(&x);
	}
}
END_TEST

START_TEST(test_cursor_over_an_empty_set_finds_nothing)
{
	struct fbuild b = { .budget = 16 };
	struct fset *empty = fset_range(&b, 1, 0);
	struct fcursor c;

	ck_assert_ptr_nonnull(empty);
	ck_assert_int_eq(fcursor_init(&c, empty, 0, 8), 0);
	ck_assert_int_eq(fcursor_seek(&c, 0), -1);
	ck_assert_int_eq(fcursor_seek(&c, 1000), -1);
	ck_assert_int_eq(fcursor_count(&c), 0);
	fcursor_release(&c);
	fset_put(empty);
}
END_TEST

START_TEST(test_cursor_handles_sets_deeper_than_its_inline_stack)
{
	/* 12 levels: byte 0 of every 2, of every 4 blocks of 2, ... */
	CLF_Datatype t = CLF_Type_vector(0, 0, 2, 2, CLF_BYTE);
	uint64_t rs = seed_base() + 13;

	for (int d = 0; d < 11; d++) {
		int64_t e = CLF_Type_extent(t);
		CLF_Datatype u = CLF_Type_vector(0, e - 1, 2 * e + 1, 2, t);

		CLF_Type_free(&t);
		t = u;
		ck_assert_ptr_nonnull(t);
	}
	ck_assert_int_gt(t->set->depth, FCURSOR_INLINE_LEVELS);
	check_walk(&rs, t->set, 3, t->extent, 0, 5000);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_split_cuts_interleaved_members_into_ordered_chains)
{
	/* Three interleaved vectors of different strides: three chains. */
	CLF_Datatype f[3] = { CLF_Type_vector(0, 3, 16, 100, CLF_BYTE),
			      CLF_Type_vector(8, 9, 32, 50, CLF_BYTE),
			      CLF_Type_vector(12, 14, 48, 33, CLF_BYTE) };
	CLF_Datatype t = CLF_Type_struct(3, f);
	uint64_t rs = seed_base() + 14;
	struct fsplit sp;
	int64_t size = 0;

	ck_assert(!t->set->ordered);
	ck_assert_int_eq(fsplit_init(&sp, t->set), 0);
	ck_assert_int_eq(sp.nr, 3);
	for (int k = 0; k < sp.nr; k++) {
		ck_assert(sp.part[k]->ordered);
		size += sp.part[k]->size;
	}
	ck_assert_int_eq(size, t->set->size);
	fsplit_release(&sp);
	/* More parts than the merge cursor holds inline. */
	check_walk(&rs, t->set, 5, t->extent, 0, 3000);
	for (int k = 0; k < 3; k++)
		CLF_Type_free(&f[k]);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_split_bundles_members_of_one_stride_into_one_ordered_part)
{
	/*
	 * What intersecting two vectors of incommensurate strides gives:
	 * one member per residue, interleaved, some one block longer.
	 */
	CLF_Datatype f[4] = { CLF_Type_vector(0, 3, 16, 100, CLF_BYTE),
			      CLF_Type_vector(5, 6, 16, 99, CLF_BYTE),
			      CLF_Type_vector(8, 9, 16, 100, CLF_BYTE),
			      CLF_Type_vector(12, 14, 16, 99, CLF_BYTE) };
	CLF_Datatype t = CLF_Type_struct(4, f);
	uint64_t rs = seed_base() + 15;
	struct fsplit sp;

	ck_assert(!t->set->ordered);
	ck_assert_int_eq(fsplit_init(&sp, t->set), 0);
	ck_assert_int_eq(sp.nr, 1);
	ck_assert(sp.part[0]->ordered);
	ck_assert_int_eq(sp.part[0]->size, t->set->size);
	fsplit_release(&sp);
	check_walk(&rs, t->set, 3, t->extent, 0, 3000);
	for (int k = 0; k < 4; k++)
		CLF_Type_free(&f[k]);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_split_merges_dozens_of_interleaved_chains)
{
	/* 40 patterns of different strides and counts, all overlapping. */
	CLF_Datatype f[40], t;
	uint64_t rs = seed_base() + 18;
	struct fsplit sp;

	for (int i = 0; i < 40; i++) {
		f[i] = CLF_Type_vector(3 * i, 3 * i + i % 3,
				       128 * (1 + i % 7), 100 + 13 * i,
				       CLF_BYTE);
		ck_assert_ptr_nonnull(f[i]);
	}
	t = CLF_Type_struct(40, f);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(fsplit_init(&sp, t->set), 0);
	ck_assert_int_eq(sp.nr, 40);
	fsplit_release(&sp);
	check_walk(&rs, t->set, 11, t->extent, 0, 5000);
	check_walk(&rs, t->set, 0, t->extent, t->extent / 2, 5000);
	for (int i = 0; i < 40; i++)
		CLF_Type_free(&f[i]);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_split_of_random_bundles_matches_walks_from_the_root)
{
	uint64_t rs = seed_base() + 17;

	for (int it = 0; it < rounds(300); it++) {
		int k = (int)rnd_range(&rs, 2, 12);
		int64_t stride = 8 * k, n = rnd_range(&rs, 2, 40);
		CLF_Datatype f[12], t;

		/* Member i in slot i of every stride, n or n - 1 blocks. */
		for (int i = 0; i < k; i++) {
			int64_t l = 8 * i + rnd_range(&rs, 0, 3);
			int64_t r = l + rnd_range(&rs, 0, 3);

			f[i] = CLF_Type_vector(l, r, stride,
					       n - rnd_range(&rs, 0, 1), CLF_BYTE);
			ck_assert_ptr_nonnull(f[i]);
		}
		t = CLF_Type_struct(k, f);
		ck_assert_ptr_nonnull(t);
		check_walk(&rs, t->set, rnd_range(&rs, 0, 9), t->extent,
			   rnd_range(&rs, 0, 2 * t->extent), 300);
		for (int i = 0; i < k; i++)
			CLF_Type_free(&f[i]);
		CLF_Type_free(&t);
	}
}
END_TEST

/* Whether every level of set has its members in order. */
static bool all_levels_ordered(const struct fset *set)
{
	if (!set->ordered)
		return false;
	for (int i = 0; i < set->nr; i++)
		if (set->f[i].in && !all_levels_ordered(set->f[i].in))
			return false;
	return true;
}

START_TEST(test_split_bundles_interleaved_members_below_the_top_level)
{
	/* Rows of 1600 bytes every 4000, each holding the bundle above. */
	CLF_Datatype f[4] = { CLF_Type_vector(0, 3, 16, 100, CLF_BYTE),
			      CLF_Type_vector(5, 6, 16, 99, CLF_BYTE),
			      CLF_Type_vector(8, 9, 16, 100, CLF_BYTE),
			      CLF_Type_vector(12, 14, 16, 99, CLF_BYTE) };
	CLF_Datatype row = CLF_Type_struct(4, f);
	CLF_Datatype t = CLF_Type_vector(0, 1599, 4000, 50, row);
	uint64_t rs = seed_base() + 16;
	struct fsplit sp;

	ck_assert(!all_levels_ordered(t->set));
	ck_assert_int_eq(fsplit_init(&sp, t->set), 0);
	ck_assert_int_eq(sp.nr, 1);
	ck_assert(all_levels_ordered(sp.part[0]));
	ck_assert_int_eq(sp.part[0]->size, t->set->size);
	fsplit_release(&sp);
	check_walk(&rs, t->set, 7, t->extent, 0, 3000);
	for (int k = 0; k < 4; k++)
		CLF_Type_free(&f[k]);
	CLF_Type_free(&row);
	CLF_Type_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("falls_cursor");
	TCase *tc = tcase_create("cursor");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_cursor_matches_walks_from_the_root_on_random_types);
	tcase_add_test(tc, test_cursor_steps_through_every_piece_across_periods);
	tcase_add_test(tc, test_cursor_stops_cleanly_near_int64_max);
	tcase_add_test(tc, test_cursor_over_an_empty_set_finds_nothing);
	tcase_add_test(tc, test_cursor_handles_sets_deeper_than_its_inline_stack);
	tcase_add_test(tc, test_split_cuts_interleaved_members_into_ordered_chains);
	tcase_add_test(tc, test_split_bundles_members_of_one_stride_into_one_ordered_part);
	tcase_add_test(tc, test_split_bundles_interleaved_members_below_the_top_level);
	tcase_add_test(tc, test_split_of_random_bundles_matches_walks_from_the_root);
	tcase_add_test(tc, test_split_merges_dozens_of_interleaved_chains);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
