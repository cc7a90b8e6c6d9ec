// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_cap.c -- the iod's capability table (iod/iod_cap.h): what a
 * MUNGE connection may do with what it handed over, and the cost of the
 * check (printed: the figure docs/security.md quotes).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cap.h"
#include "check_main.h"
#include "clf.h"
#include "iod_cap.h"
#include "iod_conn.h"

#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

struct fixture {
	struct clf_config cfg;
	struct iod_server srv;
	struct iod_conn cn;
	struct iod_caps caps;
	uint8_t key[CLF_CAP_KEY];
};

static void setup(struct fixture *f, uint32_t uid)
{
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(clf_secret_from_hex(&f->cfg.secret, HEX), 0);
	f->srv.cfg = &f->cfg;
	f->cn.srv = &f->srv;
	f->cn.caps = &f->caps;
	f->caps.uid = uid;
	clf_cap_key(&f->cfg.secret, f->key);
}

static struct clf_cap cap_of(struct fixture *f, uint64_t ino, uint32_t rights,
			     uint32_t uid, int64_t expiry)
{
	struct clf_cap c = { ino, rights, uid, expiry, 300, { 0 } };

	clf_cap_sign(&c, f->key);
	return c;
}

static int take(struct fixture *f, const struct clf_cap *c)
{
	uint8_t buf[CLF_CAP_WIRE];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	clf_cap_encode(&w, c);
	return iod_cap_take(&f->cn, buf, w.pos);
}

/* May op on file ino go through? */
static int check(struct fixture *f, uint16_t op, uint64_t ino)
{
	struct clf_proto_header h;
	uint8_t body[8];

	clf_proto_header_init(&h, op, 1);
	for (int i = 0; i < 8; i++)
		body[i] = (uint8_t)(ino >> (8 * i));
	return iod_cap_check(&f->cn, &h, body, sizeof(body));
}

START_TEST(test_nothing_without_a_capability)
{
	struct fixture f;

	setup(&f, 1001);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_WRITE, 7), -EACCES);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_READ, 7), -EACCES);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_VIEW_REGISTER, 7), -EACCES);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_TRUNCATE, 7), -EACCES);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_REMOVE, 7), -EACCES);
	/* Listing an iod is the administrator's, with the secret. */
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_LIST, 0), -EACCES);
	/* Sizes and the rest need none. */
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_SIZES, 7), 0);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SYNC, 7), 0);
}
END_TEST

START_TEST(test_a_read_capability_reads_only_its_file)
{
	struct fixture f;
	struct clf_cap c;

	setup(&f, 1001);
	c = cap_of(&f, 7, CLF_CAP_READ, 1001, time(NULL) + 60);
	ck_assert_int_eq(take(&f, &c), 0);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_READ, 7), 0);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_VIEW_REGISTER, 7), 0);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_WRITE, 7), -EACCES);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_READ, 8), -EACCES);
}
END_TEST

START_TEST(test_forged_other_users_and_expired_are_refused)
{
	struct fixture f;
	struct clf_cap c;

	setup(&f, 1001);
	c = cap_of(&f, 7, CLF_CAP_READ, 1001, time(NULL) + 60);
	c.rights |= CLF_CAP_WRITE;
	ck_assert_int_eq(take(&f, &c), -EACCES);
	c = cap_of(&f, 7, CLF_CAP_WRITE, 1002, time(NULL) + 60);
	ck_assert_int_eq(take(&f, &c), -EACCES);
	c = cap_of(&f, 7, CLF_CAP_WRITE, 1001, time(NULL) - 1);
	ck_assert_int_eq(take(&f, &c), -EKEYEXPIRED);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_WRITE, 7), -EACCES);
}
END_TEST

START_TEST(test_a_kept_capability_expires)
{
	struct fixture f;
	struct clf_cap c;

	setup(&f, 1001);
	c = cap_of(&f, 7, CLF_CAP_WRITE, 1001, time(NULL) + 1);
	ck_assert_int_eq(take(&f, &c), 0);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_WRITE, 7), 0);
	f.caps.e[0].expiry = time(NULL);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_WRITE, 7), -EKEYEXPIRED);
}
END_TEST

START_TEST(test_a_full_table_keeps_the_newest)
{
	struct fixture f;
	struct clf_cap c;
	int64_t now = time(NULL);

	setup(&f, 1001);
	for (uint64_t i = 1; i <= CLF_PROTO_CAPS_MAX + 1; i++) {
		c = cap_of(&f, i, CLF_CAP_READ, 1001, now + 100 + (int64_t)i);
		ck_assert_int_eq(take(&f, &c), 0);
	}
	ck_assert_uint_eq(f.caps.n, CLF_PROTO_CAPS_MAX);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_READ, 1), -EACCES);
	ck_assert_int_eq(check(&f, CLF_PROTO_OP_SUB_READ,
			       CLF_PROTO_CAPS_MAX + 1), 0);
}
END_TEST

static double us_since(const struct timespec *t0, int n)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((t1.tv_sec - t0->tv_sec) * 1e9 + (t1.tv_nsec - t0->tv_nsec)) /
	       1e3 / n;
}

START_TEST(test_the_check_costs_little)
{
	struct fixture f;
	struct timespec t0;
	struct clf_cap c;
	double take_us, check_us;
	int n = 20000, sink = 0;

	setup(&f, 1001);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		c = cap_of(&f, 1 + (uint64_t)(i % CLF_PROTO_CAPS_MAX),
			   CLF_CAP_READ, 1001, time(NULL) + 60);
		sink += take(&f, &c);
	}
	take_us = us_since(&t0, n);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n * 10; i++)	/* the last entry: a full scan */
		sink += check(&f, CLF_PROTO_OP_SUB_READ, CLF_PROTO_CAPS_MAX);
	check_us = us_since(&t0, n * 10);
	ck_assert_int_eq(sink, 0);
	printf("capability: sign+hand-over check %.2f us, per-request check "
	       "(64-entry table) %.3f us\n", take_us, check_us);
	ck_assert(check_us < 10);
}
END_TEST

static Suite *iod_cap_suite(void)
{
	Suite *s = suite_create("iod_cap");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_nothing_without_a_capability);
	tcase_add_test(tc, test_a_read_capability_reads_only_its_file);
	tcase_add_test(tc, test_forged_other_users_and_expired_are_refused);
	tcase_add_test(tc, test_a_kept_capability_expires);
	tcase_add_test(tc, test_a_full_table_keeps_the_newest);
	tcase_add_test(tc, test_the_check_costs_little);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(iod_cap_suite());
}
