// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto_lock.c -- the rules of the lock bodies (SETLK, GETLK, the
 * GETLK reply, UNLOCK_OWNER) beyond what test_proto.c checks for every
 * codec (round trips, truncation, corruption): ranges that leave off_t,
 * unknown types and flags, waits over the limit, GETLK that asks for an
 * unlock or a wait.
 */
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "proto.h"

/* Encode the body field by field (bypassing the encoder's checks) and
 * decode it as SETLK, or as GETLK when getlk. */
static int decode_raw(bool getlk, uint64_t start, uint64_t length,
		      uint32_t type, uint32_t flags, uint32_t wait_ms)
{
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_lock_req m;

	wire_put_u64(&w, 42);
	wire_put_u64(&w, 7);
	wire_put_u64(&w, start);
	wire_put_u64(&w, length);
	wire_put_u32(&w, type);
	wire_put_u32(&w, flags);
	wire_put_u32(&w, wait_ms);
	wire_put_u32(&w, 1234);
	ck_assert_uint_le(w.pos, sizeof(buf));
	r = (struct wire_reader){ buf, w.pos, 0, false };
	return getlk ? clf_proto_getlk_req_decode(&r, &m)
		     : clf_proto_setlk_req_decode(&r, &m);
}

static int setlk(uint64_t start, uint64_t length, uint32_t type)
{
	return decode_raw(false, start, length, type, 0, 0);
}

START_TEST(test_lock_ranges_stay_within_off_t)
{
	const uint64_t max = CLF_PROTO_LOCK_OFFSET_MAX;

	ck_assert_int_eq(setlk(0, 0, CLF_PROTO_LOCK_WRITE), 0);
	ck_assert_int_eq(setlk(max, 0, CLF_PROTO_LOCK_WRITE), 0);
	ck_assert_int_eq(setlk(max, 1, CLF_PROTO_LOCK_WRITE), 0);
	ck_assert_int_eq(setlk(0, max + 1, CLF_PROTO_LOCK_READ), 0);
	ck_assert_int_eq(setlk(1, max, CLF_PROTO_LOCK_READ), 0);
	/* The last byte would be past off_t. */
	ck_assert_int_eq(setlk(max, 2, CLF_PROTO_LOCK_WRITE), -EPROTO);
	ck_assert_int_eq(setlk(2, max, CLF_PROTO_LOCK_WRITE), -EPROTO);
	ck_assert_int_eq(setlk(max + 1, 0, CLF_PROTO_LOCK_WRITE), -EPROTO);
	/* start + length wraps around 2^64. */
	ck_assert_int_eq(setlk(10, UINT64_MAX - 5, CLF_PROTO_LOCK_UNLOCK),
			 -EPROTO);
	ck_assert_int_eq(setlk(UINT64_MAX, UINT64_MAX, CLF_PROTO_LOCK_READ),
			 -EPROTO);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "SETLK"));
}
END_TEST

START_TEST(test_lock_types_flags_and_waits_are_checked)
{
	const uint32_t wait = CLF_PROTO_LOCK_WAIT;

	ck_assert_int_eq(setlk(0, 1, 0), -EPROTO);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "unknown lock type"));
	ck_assert_int_eq(setlk(0, 1, 4), -EPROTO);
	ck_assert_int_eq(decode_raw(false, 0, 1, CLF_PROTO_LOCK_WRITE, 0x2, 0),
			 -EPROTO);
	ck_assert_int_eq(decode_raw(false, 0, 1, CLF_PROTO_LOCK_WRITE, wait,
				    1000), 0);
	ck_assert_int_eq(decode_raw(false, 0, 1, CLF_PROTO_LOCK_WRITE, wait,
				    CLF_PROTO_LOCK_WAIT_MAX_MS + 1), -E2BIG);
	/* A wait needs the flag; an unlock never waits. */
	ck_assert_int_eq(decode_raw(false, 0, 1, CLF_PROTO_LOCK_WRITE, 0,
				    1000), -EPROTO);
	ck_assert_int_eq(decode_raw(false, 0, 1, CLF_PROTO_LOCK_UNLOCK, wait,
				    0), -EPROTO);
}
END_TEST

START_TEST(test_getlk_asks_about_a_lock_without_waiting)
{
	ck_assert_int_eq(decode_raw(true, 0, 0, CLF_PROTO_LOCK_READ, 0, 0), 0);
	ck_assert_int_eq(decode_raw(true, 0, 0, CLF_PROTO_LOCK_UNLOCK, 0, 0),
			 -EPROTO);
	ck_assert_int_eq(decode_raw(true, 0, 0, CLF_PROTO_LOCK_READ,
				    CLF_PROTO_LOCK_WAIT, 10), -EPROTO);
}
END_TEST

START_TEST(test_lock_encoders_refuse_what_decoders_refuse)
{
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_lock_req bad_type = { .type = 9 };
	struct clf_proto_lock_req wraps = {
		.start = 100, .length = UINT64_MAX,
		.type = CLF_PROTO_LOCK_WRITE,
	};
	struct clf_proto_lock_req unlock = { .type = CLF_PROTO_LOCK_UNLOCK };
	struct clf_proto_lock_holder holder = { .type = 0 };

	ck_assert_int_eq(clf_proto_setlk_req_encode(&w, &bad_type), -EINVAL);
	ck_assert_int_eq(clf_proto_setlk_req_encode(&w, &wraps), -EINVAL);
	ck_assert_int_eq(clf_proto_getlk_req_encode(&w, &unlock), -EINVAL);
	ck_assert_int_eq(clf_proto_lock_holder_encode(&w, &holder), -EINVAL);
	ck_assert_uint_eq(w.pos, 0);
	ck_assert_int_eq(clf_proto_setlk_req_encode(&w, &unlock), 0);
	ck_assert_uint_eq(w.pos, 48);
}
END_TEST

START_TEST(test_lock_holder_round_trips_no_lock)
{
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_lock_holder none = { CLF_PROTO_LOCK_UNLOCK, 0, 0, 0 };
	struct clf_proto_lock_holder back;
	struct wire_reader r;

	ck_assert_int_eq(clf_proto_lock_holder_encode(&w, &none), 0);
	ck_assert_uint_eq(w.pos, 24);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_lock_holder_decode(&r, &back), 0);
	ck_assert_uint_eq(back.type, CLF_PROTO_LOCK_UNLOCK);
	ck_assert_uint_eq(back.length, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto_lock");
	TCase *tc = tcase_create("lock bodies");

	tcase_add_test(tc, test_lock_ranges_stay_within_off_t);
	tcase_add_test(tc, test_lock_types_flags_and_waits_are_checked);
	tcase_add_test(tc, test_getlk_asks_about_a_lock_without_waiting);
	tcase_add_test(tc, test_lock_encoders_refuse_what_decoders_refuse);
	tcase_add_test(tc, test_lock_holder_round_trips_no_lock);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
