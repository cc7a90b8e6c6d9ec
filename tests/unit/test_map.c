// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_map.c -- MAP and MAP^-1 with displacements.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "check_main.h"
#include "clf.h"

START_TEST(test_map_counts_whole_periods_and_rank_inside)
{
	/* Bytes 2..3 of every 8, from displacement 100. */
	CLF_Datatype t = CLF_Type_vector(2, 3, 8, 1, CLF_BYTE);
	int64_t lin, f;

	ck_assert_int_eq(CLF_Type_map(t, 100, 102, &lin), 0);
	ck_assert_int_eq(lin, 0);
	ck_assert_int_eq(CLF_Type_map(t, 100, 100 + 5 * 8 + 3, &lin), 0);
	ck_assert_int_eq(lin, 11);
	ck_assert_int_eq(CLF_Type_unmap(t, 100, 11, &f), 0);
	ck_assert_int_eq(f, 143);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_map_refuses_bytes_outside_the_type)
{
	CLF_Datatype t = CLF_Type_vector(2, 3, 8, 1, CLF_BYTE);
	int64_t lin = 42;

	ck_assert_int_eq(CLF_Type_map(t, 100, 99, &lin), -ENOENT);
	ck_assert_int_eq(CLF_Type_map(t, 100, 101, &lin), -ENOENT);
	ck_assert_int_eq(CLF_Type_map(t, 100, 104, &lin), -ENOENT);
	ck_assert_int_eq(lin, 42);
	ck_assert_int_eq(CLF_Type_map(NULL, 0, 0, &lin), -EINVAL);
	ck_assert_int_eq(CLF_Type_map(t, -1, 0, &lin), -EINVAL);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_unmap_refuses_negative_and_overflowing_offsets)
{
	CLF_Datatype t = CLF_Type_vector(0, 0, 1 << 20, 1, CLF_BYTE);
	int64_t f = 7;

	ck_assert_int_eq(CLF_Type_unmap(t, 0, -1, &f), -EINVAL);
	ck_assert_int_eq(CLF_Type_unmap(t, 0, INT64_MAX / 2, &f), -EOVERFLOW);
	ck_assert_int_eq(f, 7);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_map_and_unmap_are_inverse_far_into_the_file)
{
	/* Byte 0 of each 3 bytes, tiled in blocks of 9 every 16. */
	CLF_Datatype in = CLF_Type_vector(0, 0, 3, 1, CLF_BYTE);
	CLF_Datatype t = CLF_Type_vector(4, 12, 16, 5, in);
	int64_t far = (int64_t)1 << 50;

	for (int64_t v = far; v < far + 200; v++) {
		int64_t f, lin;

		ck_assert_int_eq(CLF_Type_unmap(t, 7, v, &f), 0);
		ck_assert_int_eq(CLF_Type_map(t, 7, f, &lin), 0);
		ck_assert_int_eq(lin, v);
	}
	CLF_Type_free(&t);
	CLF_Type_free(&in);
}
END_TEST

START_TEST(test_map_through_interleaved_struct)
{
	/* Members interleave: bytes 0,3,6,.. and 1,4,7,..: rank by offset. */
	CLF_Datatype a = CLF_Type_vector(0, 0, 3, 4, CLF_BYTE);
	CLF_Datatype b = CLF_Type_vector(1, 1, 3, 4, CLF_BYTE);
	CLF_Datatype m[2] = { a, b };
	CLF_Datatype t = CLF_Type_struct(2, m);
	int64_t lin, f;

	ck_assert_int_eq(CLF_Type_map(t, 0, 7, &lin), 0);
	ck_assert_int_eq(lin, 5);
	ck_assert_int_eq(CLF_Type_unmap(t, 0, 5, &f), 0);
	ck_assert_int_eq(f, 7);
	ck_assert_int_eq(CLF_Type_unmap(t, 0, 8 + 3, &f), 0);
	ck_assert_int_eq(f, 12 + 4);
	CLF_Type_free(&t);
	CLF_Type_free(&a);
	CLF_Type_free(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("map and unmap");

	tcase_add_test(tc, test_map_counts_whole_periods_and_rank_inside);
	tcase_add_test(tc, test_map_refuses_bytes_outside_the_type);
	tcase_add_test(tc, test_unmap_refuses_negative_and_overflowing_offsets);
	tcase_add_test(tc, test_map_and_unmap_are_inverse_far_into_the_file);
	tcase_add_test(tc, test_map_through_interleaved_struct);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
