// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_codec.c -- the binary type encoding and its refusals.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"

static int64_t encode(CLF_Datatype t, unsigned char *buf, size_t cap)
{
	int64_t len = CLF_Type_encode(t, buf, cap);

	ck_assert_int_gt(len, 0);
	return len;
}

static void put_i64(unsigned char *p, int64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)((uint64_t)v >> (8 * i));
}

/* Offsets in the encoding of a one-FALLS type (see type_codec.c). */
enum { OFF_VERSION = 2, OFF_NODES = 4, OFF_EXTENT = 8, OFF_NR = 16,
       OFF_L = 20, OFF_R = 28, OFF_S = 36, OFF_N = 44, OFF_INNER = 52 };

START_TEST(test_encoding_round_trips_and_measures)
{
	CLF_Datatype t = CLF_Type_vector(3, 6, 10, 7, CLF_BYTE), u;
	unsigned char buf[256];
	int64_t len = encode(t, buf, sizeof(buf)), lin;

	ck_assert_int_eq(CLF_Type_encode(t, NULL, 0), len);
	ck_assert_int_eq(CLF_Type_encode(t, buf, len - 1), -ENOSPC);
	ck_assert_int_eq(CLF_Type_decode(buf, len, &u), 0);
	ck_assert_int_eq(CLF_Type_extent(u), 70);
	ck_assert_int_eq(CLF_Type_size(u), 28);
	ck_assert_int_eq(CLF_Type_map(u, 0, 16, &lin), 0);
	ck_assert_int_eq(lin, 7);
	CLF_Type_free(&u);
	CLF_Type_free(&t);
}
END_TEST

static void expect_refused(const unsigned char *buf, size_t len, int err)
{
	CLF_Datatype u = NULL;

	ck_assert_int_eq(CLF_Type_decode(buf, len, &u), err);
	ck_assert_ptr_null(u);
}

START_TEST(test_decode_refuses_corrupted_fields)
{
	CLF_Datatype t = CLF_Type_vector(3, 6, 10, 7, CLF_BYTE);
	unsigned char good[256], bad[256];
	int64_t len = encode(t, good, sizeof(good));

	ck_assert_int_eq(len, OFF_INNER + 1);
	memcpy(bad, good, len);
	bad[0] = 'X';
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	bad[OFF_VERSION] = 99;
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	put_i64(bad + OFF_EXTENT, 0);
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	put_i64(bad + OFF_EXTENT, 60);		/* last block ends at 66 */
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	put_i64(bad + OFF_R, 2);		/* right < left */
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	put_i64(bad + OFF_S, 3);		/* stride inside the block */
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	put_i64(bad + OFF_N, INT64_MAX);	/* size overflows */
	ck_assert_int_lt(CLF_Type_decode(bad, len, &t), 0);

	memcpy(bad, good, len);
	bad[OFF_NR] = 200;			/* more members than bytes */
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	bad[OFF_INNER] = 2;			/* flag neither 0 nor 1 */
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	bad[OFF_NODES] = 2;			/* header disagrees */
	expect_refused(bad, len, -EPROTO);

	memcpy(bad, good, len);
	bad[len] = 0;				/* trailing garbage */
	expect_refused(bad, len + 1, -EPROTO);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_decode_refuses_every_truncation)
{
	CLF_Datatype in = CLF_Type_vector(0, 0, 3, 2, CLF_BYTE);
	CLF_Datatype t = CLF_Type_vector(0, 11, 20, 4, in);
	unsigned char buf[512];
	int64_t len = encode(t, buf, sizeof(buf));

	for (int64_t cut = 0; cut < len; cut++) {
		CLF_Datatype u = NULL;

		ck_assert_int_eq(CLF_Type_decode(buf, cut, &u), -EPROTO);
		ck_assert_ptr_null(u);
	}
	CLF_Type_free(&t);
	CLF_Type_free(&in);
}
END_TEST

START_TEST(test_decode_refuses_overlapping_members)
{
	/* Two members [0, 3] and [2, 5] in an extent of 8. */
	unsigned char buf[256];
	size_t p = 0;

	buf[p++] = 'C';
	buf[p++] = 'T';
	buf[p++] = 1;
	buf[p++] = 0;
	buf[p++] = 2; buf[p++] = 0; buf[p++] = 0; buf[p++] = 0;
	put_i64(buf + p, 8); p += 8;
	buf[p++] = 2; buf[p++] = 0; buf[p++] = 0; buf[p++] = 0;
	for (int k = 0; k < 2; k++) {
		put_i64(buf + p, 2 * k); p += 8;
		put_i64(buf + p, 2 * k + 3); p += 8;
		put_i64(buf + p, 4); p += 8;
		put_i64(buf + p, 1); p += 8;
		buf[p++] = 0;
	}
	expect_refused(buf, p, -EPROTO);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "overlap"));
}
END_TEST

START_TEST(test_decode_refuses_nesting_beyond_the_limit)
{
	/* Each level: one FALLS (0, 1, 3, 2) holding the next. */
	unsigned char buf[4096];
	size_t p = 0;
	int levels = CLF_TYPE_MAX_DEPTH + 2;

	buf[p++] = 'C';
	buf[p++] = 'T';
	buf[p++] = 1;
	buf[p++] = 0;
	buf[p++] = (unsigned char)levels; buf[p++] = 0; buf[p++] = 0; buf[p++] = 0;
	put_i64(buf + p, 1000); p += 8;
	for (int k = 0; k < levels; k++) {
		buf[p++] = 1; buf[p++] = 0; buf[p++] = 0; buf[p++] = 0;
		put_i64(buf + p, 0); p += 8;
		put_i64(buf + p, 1); p += 8;
		put_i64(buf + p, 3); p += 8;
		put_i64(buf + p, 2); p += 8;
		buf[p++] = k + 1 < levels;
	}
	expect_refused(buf, p, -E2BIG);
}
END_TEST

/*
 * A type with no compact description: 300000 pieces whose lengths and
 * gaps follow no rule (neighbours never share a length, so no two merge
 * into one FALLS; gaps i, i + m and i + 2m differ for any m < 25, so no
 * group of pieces repeats three times, which the struct's compactor
 * would fold).  Beyond the 65536 FALLS that the encoding once took.
 */
#define PIECES 300000

static CLF_Datatype irregular_type(void)
{
	CLF_Datatype *m = malloc(PIECES * sizeof(*m)), t;
	uint64_t x = 88172645463325252ull;
	int64_t at = 0;

	ck_assert_ptr_nonnull(m);
	for (int i = 0; i < PIECES; i++) {
		int64_t len, gap;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = 1 + (int64_t)(x % 4) + (i % 2 ? 4 : 0);
		gap = 1 + (int64_t)((x >> 8) % 8) + 8 * (i % 25);
		m[i] = CLF_Type_vector(at, at + len - 1, 1ll << 32, 1, CLF_BYTE);
		ck_assert_ptr_nonnull(m[i]);
		at += len + gap;
	}
	t = CLF_Type_struct(PIECES, m);
	ck_assert_msg(t != NULL, "%s", CLF_Last_error());
	for (int i = 0; i < PIECES; i++)
		CLF_Type_free(&m[i]);
	free(m);
	return t;
}

START_TEST(test_type_of_300k_falls_round_trips)
{
	CLF_Datatype t = irregular_type(), u;
	int64_t len = CLF_Type_encode(t, NULL, 0), size = CLF_Type_size(t);
	unsigned char *buf, *again;

	/* Header, one set count, 33 bytes per FALLS. */
	ck_assert_int_eq(len, 16 + 4 + 33 * (int64_t)PIECES);
	buf = malloc(len);
	again = malloc(len);
	ck_assert(buf && again);
	ck_assert_int_eq(CLF_Type_encode(t, buf, len), len);
	ck_assert_msg(CLF_Type_decode(buf, len, &u) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_Type_extent(u), 1ll << 32);
	ck_assert_int_eq(CLF_Type_size(u), size);
	ck_assert_int_eq(CLF_Type_encode(u, again, len), len);
	ck_assert(memcmp(buf, again, len) == 0);
	for (int64_t w = 0; w < size; w += size / 97) {
		int64_t f, g;

		ck_assert_int_eq(CLF_Type_unmap(t, 0, w, &f), 0);
		ck_assert_int_eq(CLF_Type_unmap(u, 0, w, &g), 0);
		ck_assert_int_eq(f, g);
	}
	free(again);
	free(buf);
	CLF_Type_free(&u);
	CLF_Type_free(&t);
}
END_TEST

/* An encoding written member by member, as a peer might send it. */
struct wbuf {
	unsigned char b[1 << 16];
	size_t p;
	uint32_t nodes;
};

static void w_u32(struct wbuf *w, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		w->b[w->p++] = (unsigned char)(v >> (8 * i));
}

static void w_i64(struct wbuf *w, int64_t v)
{
	put_i64(w->b + w->p, v);
	w->p += 8;
}

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * A random set of up to 12 members in [0, span): blocks and vectors of a
 * few shapes, often touching or one stride apart (so that neighbours
 * merge, and merges make new neighbours that merge), sometimes with an
 * inner set; members in any order.  Overlaps are left to the decoder.
 */
static void w_set(struct wbuf *w, uint64_t *x, int64_t span, int depth)
{
	int nr = 1 + (int)(xs(x) % 12);
	int64_t at = 0;

	w_u32(w, (uint32_t)nr);
	for (int i = 0; i < nr; i++) {
		int64_t len = 1 << (xs(x) % 3), n = 1 + (int64_t)(xs(x) % 3);
		int64_t s = len + (int64_t)(xs(x) % 3) * len;
		bool inner = depth < 2 && len > 1 && xs(x) % 4 == 0;

		if (xs(x) % 6 == 0)
			at = (int64_t)(xs(x) % (uint64_t)span);
		w_i64(w, at);
		w_i64(w, at + len - 1);
		w_i64(w, n > 1 ? s : len);
		w_i64(w, n);
		w->b[w->p++] = inner;
		w->nodes++;
		if (inner)
			w_set(w, x, len, depth + 1);
		at += (n - 1) * s + len + (int64_t)(xs(x) % 2) * len;
	}
}

START_TEST(test_decoding_is_idempotent_for_any_member_list)
{
	/*
	 * Decode normalises; decoding the encoding of what it made must
	 * change nothing.  Members [0,0] [1,1] [2,2] [3,3] [4,4] were [0,1]
	 * [2,3] [4,4] after one pass, then [0,3] [4,4]: an iod decoding a
	 * client's type got another description of it.
	 */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int decoded = 0;

	for (int it = 0; it < 20000; it++) {
		static struct wbuf w;
		static unsigned char b1[1 << 16], b2[1 << 16];
		CLF_Datatype t1, t2;
		int64_t l1, l2;

		w.p = 0;
		w.nodes = 0;
		w.b[w.p++] = 'C';
		w.b[w.p++] = 'T';
		w.b[w.p++] = 1;
		w.b[w.p++] = 0;
		w.p += 4;		/* nodes, below */
		w_i64(&w, 1 << 20);
		w_set(&w, &x, 256, 0);
		for (int i = 0; i < 4; i++)
			w.b[4 + i] = (unsigned char)(w.nodes >> (8 * i));
		if (CLF_Type_decode(w.b, w.p, &t1))
			continue;
		decoded++;
		l1 = encode(t1, b1, sizeof(b1));
		ck_assert_int_eq(CLF_Type_decode(b1, (size_t)l1, &t2), 0);
		l2 = encode(t2, b2, sizeof(b2));
		ck_assert_int_eq(l2, l1);
		ck_assert_mem_eq(b2, b1, (size_t)l1);
		ck_assert_int_eq(CLF_Type_size(t2), CLF_Type_size(t1));
		CLF_Type_free(&t1);
		CLF_Type_free(&t2);
	}
	ck_assert_int_gt(decoded, 2000);
}
END_TEST

START_TEST(test_touching_blocks_decode_to_one)
{
	static struct wbuf w;
	unsigned char out[256];
	CLF_Datatype t;

	w.b[w.p++] = 'C';
	w.b[w.p++] = 'T';
	w.b[w.p++] = 1;
	w.b[w.p++] = 0;
	w_u32(&w, 5);
	w_i64(&w, 100);
	w_u32(&w, 5);
	for (int i = 0; i < 5; i++) {
		w_i64(&w, i);
		w_i64(&w, i);
		w_i64(&w, 1);
		w_i64(&w, 1);
		w.b[w.p++] = 0;
	}
	ck_assert_int_eq(CLF_Type_decode(w.b, w.p, &t), 0);
	/* One FALLS: [0, 4]. */
	ck_assert_int_eq(encode(t, out, sizeof(out)), OFF_INNER + 1);
	ck_assert_int_eq(out[OFF_NR], 1);
	ck_assert_int_eq(out[OFF_R], 4);
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_decode_refuses_more_falls_than_the_limit)
{
	CLF_Datatype t = CLF_Type_vector(3, 6, 10, 7, CLF_BYTE);
	unsigned char buf[256];
	int64_t len = encode(t, buf, sizeof(buf));
	uint32_t over = (uint32_t)CLF_TYPE_MAX_NODES + 1;

	for (int i = 0; i < 4; i++)
		buf[OFF_NODES + i] = (unsigned char)(over >> (8 * i));
	expect_refused(buf, len, -E2BIG);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "exceed the limit"));
	CLF_Type_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tcase_create("encode and decode");

	tcase_add_test(tc, test_encoding_round_trips_and_measures);
	tcase_add_test(tc, test_decode_refuses_corrupted_fields);
	tcase_add_test(tc, test_decode_refuses_every_truncation);
	tcase_add_test(tc, test_decode_refuses_overlapping_members);
	tcase_add_test(tc, test_decode_refuses_nesting_beyond_the_limit);
	tcase_add_test(tc, test_decode_refuses_more_falls_than_the_limit);
	tcase_add_test(tc, test_type_of_300k_falls_round_trips);
	tcase_add_test(tc, test_decoding_is_idempotent_for_any_member_list);
	tcase_add_test(tc, test_touching_blocks_decode_to_one);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
