// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto_decl.c -- the declaration machinery itself (proto_decl.h),
 * on a body declared here: a field appended in a new minor is one TAIL
 * line and older bodies still decode; limits are refused before use; a
 * decoder that fails frees what it allocated (the clf_proto_X_decode
 * wrappers decode into a copy, so that *m stays untouched).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "proto_i.h"

/* Version 1 of a body was (n, tag, ents); version 2 appended "since". */
#define TEST_BODY(X, T)							\
	X(T, LIMIT, n, 0, 4)						\
	X(T, STR, tag, 8, NONEMPTY)					\
	X(T, ARRAY, ents, n, subfile, 0, 4)				\
	X(T, TAIL, has_since)						\
	X(T, NONNEG, since)
struct clf_proto_test_body {
	TEST_BODY(PROTO_MEMBER, _)
};

/* proto_msgs.c's descriptor of a layout subfile, for the array. */
extern const struct proto_msg proto_msg_subfile;

static const struct proto_field test_fields[] = {
	TEST_BODY(PROTO_FIELD, struct clf_proto_test_body)
};
static const struct proto_msg test_msg = {
	"TEST", test_fields, sizeof(test_fields) / sizeof(test_fields[0]),
	sizeof(struct clf_proto_test_body), NULL,
};

static const uint8_t type_bytes[] = { 'C', 'T', 1, 0, 7 };
static struct clf_proto_subfile two_ents[] = {
	{ 1, { type_bytes, sizeof(type_bytes) } },
	{ 2, { type_bytes, 2 } },
};

static size_t encode(const struct clf_proto_test_body *m, uint8_t *buf,
		     size_t cap)
{
	struct wire_writer w = { buf, cap, 0 };

	ck_assert_int_eq(proto_msg_encode(&w, &test_msg, m, false), 0);
	ck_assert_uint_le(w.pos, cap);
	return w.pos;
}

static int decode(const uint8_t *buf, size_t len,
		  struct clf_proto_test_body *m)
{
	struct wire_reader r = { buf, len, 0, false };

	return proto_msg_decode(&r, &test_msg, m);
}

START_TEST(test_a_field_appended_with_tail_is_absent_from_older_bodies)
{
	struct clf_proto_test_body v1 = { 2, { "ab", 2 }, two_ents, false, 0 };
	struct clf_proto_test_body v2 = v1, out;
	uint8_t b1[128], b2[128];
	size_t n1, n2;

	v2.has_since = true;
	v2.since = 1234567;
	n1 = encode(&v1, b1, sizeof(b1));
	n2 = encode(&v2, b2, sizeof(b2));
	/* 4 n, 2+2 tag, 2 x (4 iod + 4+len type); then 8 since. */
	ck_assert_uint_eq(n1, 4 + 4 + 8 + 5 + 8 + 2);
	ck_assert_uint_eq(n2, n1 + 8);
	ck_assert_mem_eq(b1, b2, n1);

	ck_assert_int_eq(decode(b1, n1, &out), 0);
	ck_assert(!out.has_since);
	ck_assert_uint_eq(out.n, 2);
	ck_assert_uint_eq(out.ents[1].iod, 2);
	proto_msg_release(&test_msg, &out);
	ck_assert_ptr_null(out.ents);

	ck_assert_int_eq(decode(b2, n2, &out), 0);
	ck_assert(out.has_since);
	ck_assert_int_eq(out.since, 1234567);
	proto_msg_release(&test_msg, &out);

	/* Part of the appended field is a truncated body. */
	ck_assert_int_eq(decode(b2, n2 - 3, &out), -EPROTO);
}
END_TEST

START_TEST(test_declared_limits_are_refused_before_use)
{
	struct clf_proto_test_body m = { 2, { "ab", 2 }, two_ents, true, -1 };
	struct clf_proto_test_body out;
	uint8_t buf[128];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	size_t n;

	/* The encoder checks what a peer would: nothing is written. */
	ck_assert_int_eq(proto_msg_encode(&w, &test_msg, &m, false), -EINVAL);
	m.since = 0;
	m.tag.len = 0;
	ck_assert_int_eq(proto_msg_encode(&w, &test_msg, &m, false), -EINVAL);
	m.tag = (struct clf_proto_str){ "123456789", 9 };
	ck_assert_int_eq(proto_msg_encode(&w, &test_msg, &m, false), -E2BIG);
	m.tag.len = 8;
	m.n = 5;
	ck_assert_int_eq(proto_msg_encode(&w, &test_msg, &m, false), -E2BIG);
	ck_assert_uint_eq(w.pos, 0);

	/* A count the rest of the body cannot hold is refused. */
	m.n = 2;
	n = encode(&m, buf, sizeof(buf));
	buf[0] = 4;
	ck_assert_int_eq(decode(buf, n, &out), -EPROTO);
	ck_assert_ptr_null(out.ents);	/* nothing allocated */
	/* A string longer than its limit, before its bytes are read. */
	buf[0] = 2;
	buf[4] = 200;
	ck_assert_int_eq(decode(buf, 6, &out), -E2BIG);
	/* A count over its limit. */
	buf[4] = 8;
	buf[0] = 9;
	ck_assert_int_eq(decode(buf, n, &out), -E2BIG);
}
END_TEST

START_TEST(test_a_failed_decode_frees_the_array_it_allocated)
{
	struct clf_proto_test_body m = { 2, { "ab", 2 }, two_ents, false, 0 };
	struct clf_proto_test_body out;
	uint8_t buf[128];
	size_t n = encode(&m, buf, sizeof(buf));

	/* The second entry's iod is over the limit: refused after the
	 * array was allocated (ASan's leak check fails a leak). */
	buf[4 + 4 + 4 + 4 + 5] = 0xff;
	buf[4 + 4 + 4 + 4 + 5 + 1] = 0xff;
	ck_assert_int_eq(decode(buf, n, &out), -E2BIG);
	ck_assert_ptr_null(out.ents);	/* freed */
	ck_assert_uint_eq(out.n, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto_decl");
	TCase *tc = tcase_create("decl");

	tcase_add_test(tc,
		test_a_field_appended_with_tail_is_absent_from_older_bodies);
	tcase_add_test(tc, test_declared_limits_are_refused_before_use);
	tcase_add_test(tc, test_a_failed_decode_frees_the_array_it_allocated);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
