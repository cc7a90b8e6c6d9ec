// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_merge.c -- the pieces of a collective access written and read
 * in subfile order, adjacent pieces in one system call.
 */
#define _GNU_SOURCE
#include "iod_test.h"

#include <errno.h>

#include "check_main.h"
#include "clf.h"
#include "iod_merge.h"
#include "iod_store.h"
#include "iod_view.h"
#include "iod_viewref.h"
#include "model.h"

#define FILE_ID 0x34

static struct iod_store_stats stats(struct iod_store *st)
{
	struct iod_store_stats s;

	iod_store_stats(st, &s);
	return s;
}

static void shuffle(struct iod_piece *p, size_t n, uint64_t seed)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rnd_range(&seed, 0, (int64_t)i - 1);
		struct iod_piece t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
}

START_TEST(test_adjacent_pieces_of_many_participants_are_one_pwritev)
{
	/* 8 participants, 32 interleaved 16-byte pieces each. */
	char *dir = tmp_dir();
	static unsigned char src[8][32][16], back[4096];
	struct iod_piece p[256];
	struct iod_store_stats s0, s1;
	struct iod_store *st;
	size_t n = 0, len;
	unsigned char *got;

	ck_assert_int_eq(iod_store_open(dir, 0, &st), 0);
	for (int q = 0; q < 8; q++)
		for (int k = 0; k < 32; k++) {
			int64_t off = (k * 8 + q) * 16;

			for (int i = 0; i < 16; i++)
				src[q][k][i] = val(off + i, 0);
			p[n++] = (struct iod_piece){ off, 16, src[q][k] };
		}
	shuffle(p, n, 1);
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, p, n), 4096);
	s1 = stats(st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	got = slurp_subfile(st, FILE_ID, 0, &len);
	ck_assert_uint_eq(len, 4096);
	for (int64_t s = 0; s < 4096; s++)
		if (got[s] != val(s, 0))
			ck_assert_uint_eq(got[s], val(s, 0));
	free(got);
	/* Read back into the other order: one preadv. */
	for (size_t i = 0; i < n; i++)
		p[i].buf = back + p[i].off;
	shuffle(p, n, 2);
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_read(st, FILE_ID, 0, p, n), 4096);
	s1 = stats(st);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 1);
	for (int64_t s = 0; s < 4096; s++)
		if (back[s] != val(s, 0))
			ck_assert_uint_eq(back[s], val(s, 0));
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_gaps_and_iov_max_split_the_merge_in_order)
{
	enum { PL = 300, N = 2500, END = N * PL, LONE1 = END + 500,
	       LONE2 = END + 2500 };
	char *dir = tmp_dir();
	static unsigned char bytes[N + 2][PL];
	static struct iod_piece p[N + 3];
	struct iod_store_stats s0, s1;
	struct iod_store *st;
	unsigned char *got;
	size_t n = 0, len;

	ck_assert_int_eq(iod_store_open(dir, 0, &st), 0);
	/* 2500 adjacent 300-byte pieces, then two lone ones past gaps. */
	for (int64_t k = 0; k < N; k++) {
		for (int i = 0; i < PL; i++)
			bytes[k][i] = val(k * PL + i, 0);
		p[n++] = (struct iod_piece){ k * PL, PL, bytes[k] };
	}
	for (int i = 0; i < PL; i++) {
		bytes[N][i] = val(LONE1 + i, 0);
		bytes[N + 1][i] = val(LONE2 + i, 0);
	}
	p[n++] = (struct iod_piece){ LONE1, PL, bytes[N] };
	p[n++] = (struct iod_piece){ LONE2, PL, bytes[N + 1] };
	p[n++] = (struct iod_piece){ 100, 0, NULL };	/* empty: ignored */
	shuffle(p, n, 3);
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 2, p, n), (N + 2) * PL);
	s1 = stats(st);
	/* 1024 + 1024 + 452 iovecs, then LONE1, then LONE2. */
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 5);
	got = slurp_subfile(st, FILE_ID, 2, &len);
	ck_assert_uint_eq(len, LONE2 + PL);
	for (int64_t s = 0; s < LONE2 + PL; s++) {
		bool written = s < END || (s >= LONE1 && s < LONE1 + PL) ||
			       s >= LONE2;

		if (got[s] != (written ? val(s, 0) : 0))
			ck_assert_uint_eq(got[s], written ? val(s, 0) : 0);
	}
	free(got);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_merge_read_zeros_what_lies_past_the_end)
{
	char *dir = tmp_dir();
	unsigned char a[10], b[10], c[10];
	struct iod_piece p[3] = {
		{ 95, 10, b }, { 0, 10, a }, { 200, 10, c },
	};
	struct iod_store *st;

	ck_assert_int_eq(iod_store_open(dir, 0, &st), 0);
	/* A subfile never written reads as zeros. */
	memset(a, 1, sizeof(a));
	ck_assert_int_eq(iod_merge_read(st, FILE_ID, 1, p, 3), 30);
	for (int i = 0; i < 10; i++)
		if (a[i] != 0)
			ck_assert_uint_eq(a[i], 0);
	ck_assert_int_eq(iod_store_write(st, FILE_ID, 1, 0, "0123456789", 10),
			 10);
	ck_assert_int_eq(iod_store_truncate(st, FILE_ID, 1, 100), 0);
	ck_assert_int_eq(iod_store_write(st, FILE_ID, 1, 95, "abcde", 5), 5);
	memset(a, 1, sizeof(a));
	memset(b, 1, sizeof(b));
	memset(c, 1, sizeof(c));
	p[0] = (struct iod_piece){ 95, 10, b };
	p[1] = (struct iod_piece){ 0, 10, a };
	p[2] = (struct iod_piece){ 200, 10, c };
	ck_assert_int_eq(iod_merge_read(st, FILE_ID, 1, p, 3), 30);
	ck_assert_mem_eq(a, "0123456789", 10);
	ck_assert_mem_eq(b, "abcde\0\0\0\0\0", 10);
	ck_assert_mem_eq(c, "\0\0\0\0\0\0\0\0\0\0", 10);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_bad_pieces_are_refused_before_any_io)
{
	char *dir = tmp_dir();
	char x = 'x';
	struct iod_piece p[2] = { { 0, 1, &x }, { -5, 1, &x } };
	struct iod_store *st;
	size_t len;

	ck_assert_int_eq(iod_store_open(dir, 0, &st), 0);
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, p, 2), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "bad piece 1"));
	p[1] = (struct iod_piece){ INT64_MAX, 2, &x };
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, p, 2), -EINVAL);
	p[1] = (struct iod_piece){ 10, 2, NULL };
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, p, 2), -EINVAL);
	ck_assert_ptr_null(slurp_subfile(st, FILE_ID, 0, &len));
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, NULL, 0), 0);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_collective_write_of_interleaved_views_is_merged)
{
	/*
	 * Four participants, CYCLIC(1) views over a 4 KiB round robin of
	 * two subfiles.  Alone each would write 2048 one-byte pieces into
	 * subfile 0; merged, the 8192 pieces are adjacent, and so small
	 * that they go through the staging buffer: one pwrite, one pread.
	 */
	char *dir = tmp_dir();
	struct typed sub[2], view[4];
	unsigned char *data[4], *back[4];
	struct iod_pieces ps = IOD_PIECES_INIT, rd = IOD_PIECES_INIT;
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct iod_views *reg;
	struct iod_store *st;

	ck_assert_int_eq(iod_store_open(dir, 0, &st), 0);
	ck_assert_int_eq(iod_views_create(NULL, &reg), 0);
	for (int j = 0; j < 2; j++)
		sub[j] = tv(j * 4096, j * 4096 + 4095, 8192, 1, NULL);
	for (int q = 0; q < 4; q++) {
		struct iod_view *v;
		uint32_t h;
		size_t n;

		view[q] = tv(q, q, 4, 1, NULL);
		data[q] = malloc(4096);
		back[q] = malloc(4096);
		ck_assert_int_eq(iod_view_register(reg, FILE_ID, 0, view[q].t,
						   0, sub[0].t, 0, q, &h), 0);
		ck_assert_int_eq(iod_view_lookup(reg, h, q, &v), 0);
		n = view_reference(view[q].m, 0, sub[0].m, 0, 0, 4096, 0, NULL,
				   data[q], NULL);
		ck_assert_uint_eq(n, 2048);
		ck_assert_int_eq(iod_view_pieces(v, 0, 4096, data[q], n, &ps),
				 0);
		ck_assert_int_eq(iod_view_pieces(v, 0, 4096, back[q], n, &rd),
				 0);
		/* A wrong length appends nothing. */
		ck_assert_int_eq(iod_view_pieces(v, 0, 4096, data[q], n - 1,
						 &ps), -EINVAL);
		subref_write(&exp, view[q].m, 0, sub[0].m, 0, 0, 4096, 0);
		iod_view_put(v);
	}
	ck_assert_uint_eq(ps.n, 8192);
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, ps.p, ps.n), 8192);
	s1 = stats(st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	subref_check(st, FILE_ID, 0, &exp);
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_read(st, FILE_ID, 0, rd.p, rd.n), 8192);
	s1 = stats(st);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 1);
	for (int q = 0; q < 4; q++) {
		ck_assert_mem_eq(back[q], data[q], 2048);
		free(data[q]);
		free(back[q]);
	}
	iod_pieces_release(&ps);
	iod_pieces_release(&rd);
	iod_pieces_release(NULL);
	free(exp.bytes);
	for (int q = 0; q < 4; q++)
		typed_free(&view[q]);
	typed_free(&sub[0]);
	typed_free(&sub[1]);
	iod_views_free(reg);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_small_pieces_of_ordered_participants_are_staged)
{
	/*
	 * Three participants' 8-byte pieces, each participant's in subfile
	 * order (as rounds hand them over), interleaved in the subfile, and
	 * a 16-byte piece over the first two: pieces go in (offset, length)
	 * order, [0, 8), then the overlap, then 1.5 MiB from byte 8 in two
	 * staged pwrites (1 MiB of staging each).
	 */
	enum { Q = 3, K = 65536, PL = 8, TOTAL = Q * K * PL };
	char *dir = tmp_dir();
	unsigned char *data = malloc(TOTAL + PL), *back = malloc(TOTAL);
	struct iod_piece *p = malloc((Q * K + 1) * sizeof(*p));
	struct iod_store_stats s0, s1;
	struct iod_store *st;
	unsigned char *got;
	size_t n = 0, len;

	ck_assert_int_eq(iod_store_open(dir, 0, &st), 0);
	for (int q = 0; q < Q; q++)
		for (int64_t k = 0; k < K; k++) {
			int64_t off = (k * Q + q) * PL;

			for (int i = 0; i < PL; i++)
				data[off + i] = val(off + i, 0);
			p[n++] = (struct iod_piece){ off, PL, data + off };
		}
	memset(data + TOTAL, 0xee, PL);
	p[n++] = (struct iod_piece){ 0, 2 * PL, data + TOTAL - PL };
	for (int i = 0; i < PL; i++)
		data[TOTAL - PL + i] = val(TOTAL - PL + i, 0);
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_write(st, FILE_ID, 0, p, n),
			 TOTAL + 2 * PL);
	s1 = stats(st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 4);
	got = slurp_subfile(st, FILE_ID, 0, &len);
	ck_assert_uint_eq(len, TOTAL);
	ck_assert_mem_eq(got, data + TOTAL - PL, PL);
	for (int64_t s = PL; s < TOTAL; s++)
		if (got[s] != val(s, 0))
			ck_assert_uint_eq(got[s], val(s, 0));
	free(got);
	/* Read back through the participants' pieces, in their order. */
	n = 0;
	for (int q = 0; q < Q; q++)
		for (int64_t k = 0; k < K; k++) {
			int64_t off = (k * Q + q) * PL;

			p[n++] = (struct iod_piece){ off, PL, back + off };
		}
	s0 = stats(st);
	ck_assert_int_eq(iod_merge_read(st, FILE_ID, 0, p, n), TOTAL);
	s1 = stats(st);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 2);
	ck_assert_mem_eq(back, data + TOTAL - PL, PL);
	for (int64_t s = PL; s < TOTAL; s++)
		if (back[s] != val(s, 0))
			ck_assert_uint_eq(back[s], val(s, 0));
	free(p);
	free(data);
	free(back);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_merge");
	TCase *tc = tcase_create("merge");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_adjacent_pieces_of_many_participants_are_one_pwritev);
	tcase_add_test(tc, test_gaps_and_iov_max_split_the_merge_in_order);
	tcase_add_test(tc, test_merge_read_zeros_what_lies_past_the_end);
	tcase_add_test(tc, test_bad_pieces_are_refused_before_any_io);
	tcase_add_test(tc, test_collective_write_of_interleaved_views_is_merged);
	tcase_add_test(tc, test_small_pieces_of_ordered_participants_are_staged);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
