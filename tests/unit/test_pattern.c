// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_pattern.c -- the physical partition rules and their messages.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "partition.h"
#include "type.h"

START_TEST(test_cyclic_over_four_subfiles_is_a_partition)
{
	CLF_Datatype t[4];

	ck_assert_int_eq(CLF_Type_pitfalls(0, 63, 256, 1, 64, 4, CLF_BYTE, t),
			 0);
	ck_assert_int_eq(CLF_Pattern_check(4, t), 0);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&t[j]);
}
END_TEST

START_TEST(test_pattern_names_overlapping_subfiles_and_byte)
{
	CLF_Datatype t[2];

	t[0] = CLF_Type_vector(0, 5, 8, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 7, 8, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Pattern_check(2, t), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "subfile 0 and subfile 1 overlap at byte 4"));
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_pattern_names_first_uncovered_byte)
{
	CLF_Datatype t[2];

	t[0] = CLF_Type_vector(0, 2, 8, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 7, 8, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Pattern_check(2, t), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "byte 3 is in no subfile"));
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_pattern_period_is_the_largest_extent)
{
	/* [0, 4) of 4 and [4, 8) of 8: a partition of [0, 8), the first
	 * type taken once per period, not tiled. */
	CLF_Datatype t[2], r[2];

	t[0] = CLF_Type_vector(0, 3, 4, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 7, 8, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Pattern_check(2, t), 0);
	ck_assert_int_eq(clf_pattern_resize(2, t, r), 0);
	for (int j = 0; j < 2; j++) {
		int64_t lin;

		ck_assert_int_eq(CLF_Type_extent(r[j]), 8);
		ck_assert_int_eq(CLF_Type_size(r[j]), 4);
		ck_assert_int_eq(CLF_Type_map(r[j], 0, 8 + 4 * j, &lin), 0);
		ck_assert_int_eq(lin, 4);
		ck_assert_int_eq(CLF_Type_map(r[j], 0, 4 - 4 * j, &lin),
				 -ENOENT);
		CLF_Type_free(&r[j]);
	}
	ck_assert_int_eq(CLF_Pattern_check(0, t), -EINVAL);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_pattern_names_byte_left_by_a_shorter_extent)
{
	/* The first type is not tiled to 16: bytes 8 to 15 are nobody's. */
	CLF_Datatype t[2];

	t[0] = CLF_Type_vector(0, 3, 8, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 7, 16, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Pattern_check(2, t), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "byte 8 is in no subfile (subfiles cover 8 of 16 bytes per period, the largest extent, subfile 1's)"));
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_pattern_names_overlap_across_extents)
{
	CLF_Datatype t[2];

	t[0] = CLF_Type_vector(0, 5, 8, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 15, 16, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Pattern_check(2, t), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "subfile 0 and subfile 1 overlap at byte 4"));
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_two_d_block_cyclic_grid_is_a_partition)
{
	/* 64 x 64 bytes, 2 x 2 grid of cyclic(4) x cyclic(8). */
	CLF_Datatype t[4];

	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 2; j++) {
			CLF_Datatype row = CLF_Type_vector(8 * j, 8 * j + 7, 16,
							   4, CLF_BYTE);

			t[2 * i + j] = CLF_Type_vector(4 * 64 * i,
						       4 * 64 * i + 4 * 64 - 1,
						       8 * 64, 8, row);
			CLF_Type_free(&row);
		}
	}
	ck_assert_int_eq(CLF_Pattern_check(4, t), 0);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&t[j]);
}
END_TEST

/*
 * Large irregular partitions (partition.h): about 300k pieces over 3
 * subfiles, subfile 0's members interleaving (a vector spans the period),
 * the case a pairwise comparison of the subfiles turned quadratic.
 */
#define GAPS 37500
#define NSUB 3
#define SEED 0x9e3779b97f4a7c15ull

static void make(struct partition *p)
{
	ck_assert_int_eq(partition_make(p, GAPS, NSUB, SEED), 0);
	ck_assert_int_ge(p->n, 290000);
}

static void types_of(const struct partition *p, int skip, CLF_Datatype *t)
{
	ck_assert_msg(partition_types(p, skip, t) == 0, "%s", CLF_Last_error());
}

static void types_free(CLF_Datatype t[NSUB])
{
	for (int s = 0; s < NSUB; s++)
		CLF_Type_free(&t[s]);
}

START_TEST(test_random_partition_of_300k_pieces_is_a_partition)
{
	struct partition p;
	CLF_Datatype t[NSUB];

	make(&p);
	types_of(&p, -1, t);
	ck_assert_msg(CLF_Pattern_check(NSUB, t) == 0, "%s", CLF_Last_error());
	types_free(t);
	partition_release(&p);
}
END_TEST

/* The first piece after from whose next piece has another owner. */
static int piece_before_other_owner(const struct partition *p, int from)
{
	for (int i = from; i + 1 < p->n; i++)
		if (p->hi[i] + 1 == p->lo[i + 1] &&
		    p->owner[i] != p->owner[i + 1])
			return i;
	ck_abort_msg("no piece followed by another subfile's");
	return -1;
}

START_TEST(test_random_partition_names_first_doubly_covered_byte)
{
	struct partition p;
	CLF_Datatype t[NSUB];
	char want[96];
	int a, b, lo, hi;

	make(&p);
	/* Two pieces grow by one byte into their neighbours; the earlier
	 * one is the first byte in two subfiles. */
	a = piece_before_other_owner(&p, p.n / 4);
	b = piece_before_other_owner(&p, 3 * (p.n / 4));
	p.hi[b]++;
	p.hi[a]++;
	lo = p.owner[a] < p.owner[a + 1] ? p.owner[a] : p.owner[a + 1];
	hi = p.owner[a] ^ p.owner[a + 1] ^ lo;
	types_of(&p, -1, t);
	ck_assert_int_eq(CLF_Pattern_check(NSUB, t), -EINVAL);
	snprintf(want, sizeof(want), "subfile %d and subfile %d overlap at byte %lld",
		 lo, hi, (long long)p.hi[a]);
	ck_assert_msg(strstr(CLF_Last_error(), want), "%s: want '%s'",
		      CLF_Last_error(), want);
	types_free(t);
	partition_release(&p);
}
END_TEST

START_TEST(test_random_partition_names_first_uncovered_byte)
{
	struct partition p;
	CLF_Datatype t[NSUB];
	char want[64];
	int gone;

	make(&p);
	gone = p.n / 3;
	types_of(&p, gone, t);
	ck_assert_int_eq(CLF_Pattern_check(NSUB, t), -EINVAL);
	snprintf(want, sizeof(want), "byte %lld is in no subfile",
		 (long long)p.lo[gone]);
	ck_assert_msg(strstr(CLF_Last_error(), want), "%s: want '%s'",
		      CLF_Last_error(), want);
	types_free(t);
	partition_release(&p);
}
END_TEST

START_TEST(test_pattern_names_byte_a_vector_shares_with_a_piece)
{
	/* A vector over the whole period and a piece that meets its 3rd
	 * block: the vector is one member, the byte is found on the
	 * descriptions. */
	CLF_Datatype t[2], m[2];

	t[0] = CLF_Type_vector(0, 0, 4, 1 << 28, CLF_BYTE);
	m[0] = CLF_Type_vector(1, 3, 1 << 30, 1, CLF_BYTE);
	m[1] = CLF_Type_vector(5, 8, 1 << 30, 1, CLF_BYTE);
	t[1] = CLF_Type_struct(2, m);
	ck_assert_int_eq(CLF_Pattern_check(2, t), -EINVAL);
	ck_assert_msg(strstr(CLF_Last_error(),
			     "subfile 0 and subfile 1 overlap at byte 8"),
		      "%s", CLF_Last_error());
	CLF_Type_free(&m[0]);
	CLF_Type_free(&m[1]);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = tcase_create("partition rules");

	tcase_add_test(tc, test_cyclic_over_four_subfiles_is_a_partition);
	tcase_add_test(tc, test_pattern_names_overlapping_subfiles_and_byte);
	tcase_add_test(tc, test_pattern_names_first_uncovered_byte);
	tcase_add_test(tc, test_pattern_period_is_the_largest_extent);
	tcase_add_test(tc, test_pattern_names_byte_left_by_a_shorter_extent);
	tcase_add_test(tc, test_pattern_names_overlap_across_extents);
	tcase_add_test(tc, test_two_d_block_cyclic_grid_is_a_partition);
	suite_add_tcase(s, tc);
	tcase_add_test(tc, test_pattern_names_byte_a_vector_shares_with_a_piece);
	/* Large partitions: the time goes in building 300k types (seconds
	 * under ASan, hence the limit); the check itself takes a fraction of
	 * a second (over 10 minutes when it compared subfiles pairwise). */
	tc = tcase_create("large partitions");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_random_partition_of_300k_pieces_is_a_partition);
	tcase_add_test(tc, test_random_partition_names_first_doubly_covered_byte);
	tcase_add_test(tc, test_random_partition_names_first_uncovered_byte);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
