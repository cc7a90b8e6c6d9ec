// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_pattern.c -- the physical partition rules and their messages.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"

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

START_TEST(test_pattern_refuses_different_extents)
{
	CLF_Datatype t[2];

	t[0] = CLF_Type_vector(0, 3, 8, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 7, 16, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Pattern_check(2, t), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "extent"));
	ck_assert_int_eq(CLF_Pattern_check(0, t), -EINVAL);
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

int main(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = tcase_create("partition rules");

	tcase_add_test(tc, test_cyclic_over_four_subfiles_is_a_partition);
	tcase_add_test(tc, test_pattern_names_overlapping_subfiles_and_byte);
	tcase_add_test(tc, test_pattern_names_first_uncovered_byte);
	tcase_add_test(tc, test_pattern_refuses_different_extents);
	tcase_add_test(tc, test_two_d_block_cyclic_grid_is_a_partition);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
