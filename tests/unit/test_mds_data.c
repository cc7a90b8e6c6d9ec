// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_data.c -- the subfile lengths metad sends to the iods when a
 * file is truncated (mds_subfile_length), against a byte-by-byte count
 * on many random layouts, and far beyond where counting bytes is
 * possible, against the period of the pattern.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "check_main.h"
#include "clf.h"
#include "mds_data.h"

/* Bytes of [disp, size) that t selects, one at a time. */
static int64_t count_bytes(CLF_Datatype t, int64_t disp, int64_t size)
{
	int64_t n = 0, lin;

	for (int64_t f = disp; f < size; f++)
		n += CLF_Type_map(t, disp, f, &lin) == 0;
	return n;
}

static int64_t len_of(CLF_Datatype t, int64_t disp, int64_t size)
{
	int64_t len = -1;

	ck_assert_int_eq(mds_subfile_length(t, disp, size, &len), 0);
	return len;
}

START_TEST(test_round_robin_shares)
{
	CLF_Datatype t[3];

	/* Stripes of 4 over 3 subfiles. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 12, 1, 4, 3, CLF_BYTE, t), 0);
	ck_assert_int_eq(len_of(t[0], 0, 0), 0);
	ck_assert_int_eq(len_of(t[0], 0, 1), 1);
	ck_assert_int_eq(len_of(t[0], 0, 4), 4);
	ck_assert_int_eq(len_of(t[1], 0, 4), 0);
	ck_assert_int_eq(len_of(t[1], 0, 6), 2);
	ck_assert_int_eq(len_of(t[2], 0, 12), 4);
	ck_assert_int_eq(len_of(t[2], 0, 13), 4);
	ck_assert_int_eq(len_of(t[0], 0, 13), 5);
	/* Bytes before the displacement are in no subfile. */
	ck_assert_int_eq(len_of(t[0], 100, 100), 0);
	ck_assert_int_eq(len_of(t[0], 100, 50), 0);
	ck_assert_int_eq(len_of(t[0], 100, 102), 2);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&t[j]);
}
END_TEST

/* A random type: a vector of a vector, or a struct of two shifted ones. */
static CLF_Datatype random_type(unsigned *seed, CLF_Datatype *part)
{
	int64_t e = 1 + rand_r(seed) % 4;
	CLF_Datatype inner = CLF_Type_vector(0, e - 1, e + rand_r(seed) % 5,
					     1 + rand_r(seed) % 3, CLF_BYTE);
	int64_t ie = CLF_Type_extent(inner);
	int64_t left = (rand_r(seed) % 3) * ie;
	int64_t right = left + ie * (1 + rand_r(seed) % 2) - 1;
	CLF_Datatype t;

	ck_assert_ptr_nonnull(inner);
	t = CLF_Type_vector(left, right, right + 1 + rand_r(seed) % 7,
			    1 + rand_r(seed) % 3, inner);
	ck_assert_ptr_nonnull(t);
	CLF_Type_free(&inner);
	*part = NULL;
	if (rand_r(seed) % 2) {
		/* Two members that cannot overlap: one in [0, E), one
		 * shifted past it. */
		int64_t te = CLF_Type_extent(t);
		CLF_Datatype shifted = CLF_Type_vector(te, 2 * te - 1, 3 * te,
						       1, CLF_BYTE);
		CLF_Datatype m[2] = { t, shifted };

		ck_assert_ptr_nonnull(shifted);
		*part = CLF_Type_struct(2, m);
		ck_assert_ptr_nonnull(*part);
		CLF_Type_free(&shifted);
		CLF_Type_free(&t);
		return *part;
	}
	return t;
}

START_TEST(test_random_types_match_a_byte_count)
{
	unsigned seed = 12345;

	for (int round = 0; round < 300; round++) {
		CLF_Datatype part, t = random_type(&seed, &part);
		int64_t disp = rand_r(&seed) % 3 ? rand_r(&seed) % 50 : 0;
		int64_t e = CLF_Type_extent(t), z = CLF_Type_size(t);

		for (int64_t size = 0; size < disp + 3 * e + 2; size++)
			ck_assert_int_eq(len_of(t, disp, size),
					 count_bytes(t, disp, size));
		/* Far out, every period adds z. */
		for (int k = 0; k < 20; k++) {
			int64_t size = disp + (int64_t)rand_r(&seed) * 4099 +
				       rand_r(&seed) % e;
			int64_t far = size + 1000003 * e;

			ck_assert_int_eq(len_of(t, disp, far),
					 len_of(t, disp, size) + 1000003 * z);
		}
		CLF_Type_free(&t);
	}
}
END_TEST

START_TEST(test_sizes_near_the_largest_file)
{
	CLF_Datatype t[2];
	int64_t big = INT64_MAX;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 0, 2, 1, 1, 2, CLF_BYTE, t), 0);
	/* Bytes 0, 2, 4, ... and 1, 3, 5, ... of [0, INT64_MAX). */
	ck_assert_int_eq(len_of(t[0], 0, big), big / 2 + 1);
	ck_assert_int_eq(len_of(t[1], 0, big), big / 2);
	ck_assert_int_eq(len_of(t[0], 7, big), (big - 7) / 2);
	ck_assert_int_eq(mds_subfile_length(t[0], 0, -1, &big), -EINVAL);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
	/* Stripes of 4 over 2 from byte 7: INT64_MAX ends a period, and
	 * the file offsets the search probes past it do not fit. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 8, 1, 4, 2, CLF_BYTE, t), 0);
	ck_assert_int_eq(len_of(t[0], 7, big), (big - 7) / 8 * 4);
	ck_assert_int_eq(len_of(t[1], 7, big), (big - 7) / 8 * 4);
	ck_assert_int_eq(len_of(t[1], 7, big - 5), (big - 7) / 8 * 4 - 4);
	ck_assert_int_eq(len_of(t[1], 7, big - 1), (big - 7) / 8 * 4 - 1);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mds_data");
	TCase *tc = tcase_create("subfile_length");

	tcase_add_test(tc, test_round_robin_shares);
	tcase_add_test(tc, test_random_types_match_a_byte_count);
	tcase_add_test(tc, test_sizes_near_the_largest_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
