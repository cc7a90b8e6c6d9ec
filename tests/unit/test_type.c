// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_type.c -- datatype constructors and their refusals.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"

START_TEST(test_byte_selects_one_byte_of_extent_one)
{
	ck_assert_int_eq(CLF_Type_size(CLF_BYTE), 1);
	ck_assert_int_eq(CLF_Type_extent(CLF_BYTE), 1);
}
END_TEST

START_TEST(test_vector_of_bytes_has_count_times_stride_extent)
{
	CLF_Datatype t = CLF_Type_vector(2, 5, 10, 3, CLF_BYTE);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(CLF_Type_extent(t), 30);
	ck_assert_int_eq(CLF_Type_size(t), 12);
	CLF_Type_free(&t);
	ck_assert_ptr_null(t);
}
END_TEST

START_TEST(test_vector_tiles_old_type_inside_each_block)
{
	/* old selects byte 0 of 2: blocks of 6 hold 3 tiles. */
	CLF_Datatype old = CLF_Type_vector(0, 0, 2, 1, CLF_BYTE);
	CLF_Datatype t = CLF_Type_vector(1, 6, 8, 2, old);
	int64_t lin;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(CLF_Type_size(t), 6);
	ck_assert_int_eq(CLF_Type_map(t, 0, 1, &lin), 0);
	ck_assert_int_eq(lin, 0);
	ck_assert_int_eq(CLF_Type_map(t, 0, 2, &lin), -ENOENT);
	ck_assert_int_eq(CLF_Type_map(t, 0, 5, &lin), 0);
	ck_assert_int_eq(lin, 2);
	ck_assert_int_eq(CLF_Type_map(t, 0, 9, &lin), 0);
	ck_assert_int_eq(lin, 3);
	CLF_Type_free(&t);
	CLF_Type_free(&old);
}
END_TEST

START_TEST(test_vector_refuses_bad_blocks)
{
	errno = 0;
	ck_assert_ptr_null(CLF_Type_vector(-1, 2, 4, 1, CLF_BYTE));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(CLF_Type_vector(3, 2, 4, 1, CLF_BYTE));
	ck_assert_ptr_null(CLF_Type_vector(0, 4, 4, 2, CLF_BYTE));
	ck_assert_ptr_null(CLF_Type_vector(0, 1, 4, 0, CLF_BYTE));
	ck_assert_ptr_null(CLF_Type_vector(0, 1, 4, -3, CLF_BYTE));
	ck_assert_ptr_null(CLF_Type_vector(0, 1, 4, 1, NULL));
	ck_assert_str_eq(CLF_Last_error(), "vector: oldtype is NULL");
}
END_TEST

START_TEST(test_vector_refuses_block_not_multiple_of_old_extent)
{
	CLF_Datatype old = CLF_Type_vector(0, 1, 3, 1, CLF_BYTE);

	errno = 0;
	ck_assert_ptr_null(CLF_Type_vector(0, 4, 8, 1, old));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "multiple"));
	CLF_Type_free(&old);
}
END_TEST

START_TEST(test_vector_refuses_overflowing_extent)
{
	errno = 0;
	ck_assert_ptr_null(CLF_Type_vector(0, 0, INT64_MAX / 2, 3, CLF_BYTE));
	ck_assert_int_eq(errno, EOVERFLOW);
}
END_TEST

START_TEST(test_struct_is_union_with_largest_extent)
{
	CLF_Datatype a = CLF_Type_vector(0, 0, 2, 4, CLF_BYTE); /* even, 8 */
	CLF_Datatype b = CLF_Type_vector(1, 1, 2, 2, CLF_BYTE); /* odd < 4 */
	CLF_Datatype m[2] = { a, b };
	CLF_Datatype t = CLF_Type_struct(2, m);
	int64_t lin;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(CLF_Type_extent(t), 8);
	ck_assert_int_eq(CLF_Type_size(t), 6);
	/* Bytes 0 1 2 3 4 6 selected: 6 is the 6th. */
	ck_assert_int_eq(CLF_Type_map(t, 0, 6, &lin), 0);
	ck_assert_int_eq(lin, 5);
	ck_assert_int_eq(CLF_Type_map(t, 0, 5, &lin), -ENOENT);
	CLF_Type_free(&t);
	CLF_Type_free(&a);
	CLF_Type_free(&b);
}
END_TEST

START_TEST(test_struct_refuses_overlapping_members)
{
	CLF_Datatype a = CLF_Type_vector(0, 3, 8, 1, CLF_BYTE);
	CLF_Datatype b = CLF_Type_vector(3, 3, 4, 2, CLF_BYTE);
	CLF_Datatype m[2] = { a, b };

	errno = 0;
	ck_assert_ptr_null(CLF_Type_struct(2, m));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(CLF_Last_error(),
			 "struct: members 0 and 1 overlap at byte 3");
	ck_assert_ptr_null(CLF_Type_struct(0, m));
	m[1] = NULL;
	ck_assert_ptr_null(CLF_Type_struct(2, m));
	CLF_Type_free(&a);
	CLF_Type_free(&b);
}
END_TEST

START_TEST(test_pitfalls_makes_shifted_vectors)
{
	CLF_Datatype t[4];
	int64_t lin;

	/* cyclic(2) over 4 subfiles: subfile j holds [2j, 2j+1] mod 8. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 1, 8, 1, 2, 4, CLF_BYTE, t), 0);
	for (int j = 0; j < 4; j++) {
		ck_assert_int_eq(CLF_Type_extent(t[j]), 8);
		ck_assert_int_eq(CLF_Type_size(t[j]), 2);
		ck_assert_int_eq(CLF_Type_map(t[j], 0, 8 + 2 * j + 1, &lin), 0);
		ck_assert_int_eq(lin, 3);
	}
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&t[j]);
}
END_TEST

START_TEST(test_pitfalls_refuses_a_bad_part_and_writes_nothing)
{
	CLF_Datatype t[3] = { NULL, NULL, NULL };

	/* Part 2 would be [8, 11] in a stride of 8. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 8, 1, 4, 3, CLF_BYTE, t),
			 -EINVAL);
	ck_assert_ptr_null(t[0]);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "part 2"));
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 8, 1, 4, 0, CLF_BYTE, t),
			 -EINVAL);
}
END_TEST

START_TEST(test_free_accepts_null_and_byte)
{
	CLF_Datatype t = NULL, b = CLF_BYTE;

	CLF_Type_free(NULL);
	CLF_Type_free(&t);
	CLF_Type_free(&b);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(CLF_Type_size(CLF_BYTE), 1);
	ck_assert_int_eq(CLF_Type_size(NULL), -EINVAL);
	ck_assert_int_eq(CLF_Type_extent(NULL), -EINVAL);
}
END_TEST

START_TEST(test_dup_keeps_type_alive_after_free)
{
	CLF_Datatype t = CLF_Type_vector(0, 1, 4, 2, CLF_BYTE);
	CLF_Datatype u = CLF_Type_dup(t);

	CLF_Type_free(&t);
	ck_assert_int_eq(CLF_Type_size(u), 4);
	CLF_Type_free(&u);
}
END_TEST

START_TEST(test_deep_nesting_keeps_description_small)
{
	/* A 4-level cube of 2^40 bytes: the description stays tiny. */
	CLF_Datatype x = CLF_Type_vector(0, 1023, 2048, 1024, CLF_BYTE);
	CLF_Datatype y = CLF_Type_vector(0, (1 << 21) - 1, 1 << 22, 256, x);
	CLF_Datatype z = CLF_Type_vector(0, (1LL << 30) - 1, 1LL << 31, 256, y);
	int64_t len = CLF_Type_encode(z, NULL, 0), f, lin;

	ck_assert_ptr_nonnull(z);
	ck_assert_int_lt(len, 200);
	ck_assert_int_eq(CLF_Type_size(z), 256LL * 256 * 1024 * 1024);
	ck_assert_int_eq(CLF_Type_unmap(z, 0, CLF_Type_size(z) - 1, &f), 0);
	ck_assert_int_eq(CLF_Type_map(z, 0, f, &lin), 0);
	ck_assert_int_eq(lin, CLF_Type_size(z) - 1);
	CLF_Type_free(&x);
	CLF_Type_free(&y);
	CLF_Type_free(&z);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("type");
	TCase *tc = tcase_create("constructors");

	tcase_add_test(tc, test_byte_selects_one_byte_of_extent_one);
	tcase_add_test(tc, test_vector_of_bytes_has_count_times_stride_extent);
	tcase_add_test(tc, test_vector_tiles_old_type_inside_each_block);
	tcase_add_test(tc, test_vector_refuses_bad_blocks);
	tcase_add_test(tc, test_vector_refuses_block_not_multiple_of_old_extent);
	tcase_add_test(tc, test_vector_refuses_overflowing_extent);
	tcase_add_test(tc, test_struct_is_union_with_largest_extent);
	tcase_add_test(tc, test_struct_refuses_overlapping_members);
	tcase_add_test(tc, test_pitfalls_makes_shifted_vectors);
	tcase_add_test(tc, test_pitfalls_refuses_a_bad_part_and_writes_nothing);
	tcase_add_test(tc, test_free_accepts_null_and_byte);
	tcase_add_test(tc, test_dup_keeps_type_alive_after_free);
	tcase_add_test(tc, test_deep_nesting_keeps_description_small);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
