// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_many.c -- the requests on many files of a real iod:
 * SUB_SIZES_MANY gives what SUB_SIZES gives for each pair, REMOVE_MANY
 * removes every subfile of each file named and nothing else, and the
 * iod refuses a count or a length that does not match the body (the
 * connection goes on).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "iod_harness.h"

#define TIMEOUT_MS 3000

/* op with body (len bytes) on c: 0 and the reply in *r (payload in *pl,
 * caller frees), or the reply's status. */
static int raw_call(struct clf_conn *c, uint16_t op, const void *body,
		    size_t len, void **pl, struct wire_reader *r)
{
	struct clf_proto_header h, rep;
	struct iovec iov = { (void *)body, len };
	int err;

	*pl = NULL;
	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	err = clf_conn_call(c, &h, &iov, len ? 1 : 0, &rep, pl);
	if (!err)
		*r = (struct wire_reader){ *pl, rep.payload_len, 0, false };
	return err;
}

static int64_t size_of(struct clf_conn *c, uint64_t file, uint32_t sub)
{
	int64_t len = -1;

	ck_assert_int_eq(cl_sub_sizes(c, file, 1, &sub, &len), 0);
	return len;
}

START_TEST(test_sizes_and_removals_of_many_files_in_one_request)
{
	static struct clf_proto_sub_sizes_many_req sq;
	static struct clf_proto_sub_sizes sr;
	static struct clf_proto_remove_many_req rq;
	static struct clf_proto_remove_many_rep rr;
	static uint8_t body[4 + 12 * CLF_PROTO_SUB_BATCH_MAX];
	uint8_t data[100];
	struct wire_writer w;
	struct wire_reader r;
	struct clf_conn *c;
	struct iodh h;
	void *pl;

	memset(data, 7, sizeof(data));
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	for (uint64_t f = 0x10; f < 0x14; f++)
		for (uint32_t s = 0; s < 2; s++)
			ck_assert_int_eq(cl_sub_write(c, f, s, 0, data,
						      10 * (f - 0xf) + s),
					 (int64_t)(10 * (f - 0xf) + s));
	ck_assert_int_eq(cl_sub_write(c, 0x10, CLF_PROTO_SUBFILE_HEAD, 0, data,
				      5), 5);

	sq = (struct clf_proto_sub_sizes_many_req){
		4, { 0x10, 0x13, 0x99, 0x10 },
		{ 1, 0, 0, CLF_PROTO_SUBFILE_HEAD },
	};
	w = (struct wire_writer){ body, sizeof(body), 0 };
	ck_assert_int_eq(clf_proto_sub_sizes_many_req_encode(&w, &sq), 0);
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_SUB_SIZES_MANY, body, w.pos,
				  &pl, &r), 0);
	ck_assert_int_eq(clf_proto_sub_sizes_decode(&r, &sr), 0);
	free(pl);
	ck_assert_uint_eq(sr.n, 4);
	ck_assert_int_eq(sr.length[0], 11);
	ck_assert_int_eq(sr.length[1], 40);
	ck_assert_int_eq(sr.length[2], 0);
	ck_assert_int_eq(sr.length[3], 5);

	rq = (struct clf_proto_remove_many_req){ 3, { 0x10, 0x99, 0x12 } };
	w = (struct wire_writer){ body, sizeof(body), 0 };
	ck_assert_int_eq(clf_proto_remove_many_req_encode(&w, &rq), 0);
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_REMOVE_MANY, body, w.pos,
				  &pl, &r), 0);
	ck_assert_int_eq(clf_proto_remove_many_rep_decode(&r, &rr), 0);
	free(pl);
	ck_assert_uint_eq(rr.n, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(rr.status[i], 0);
	ck_assert_int_eq(size_of(c, 0x10, 0), 0);
	ck_assert_int_eq(size_of(c, 0x10, CLF_PROTO_SUBFILE_HEAD), 0);
	ck_assert_int_eq(size_of(c, 0x12, 1), 0);
	ck_assert_int_eq(size_of(c, 0x11, 1), 21);
	ck_assert_int_eq(size_of(c, 0x13, 0), 40);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_counts_and_lengths_that_do_not_match_are_refused)
{
	uint8_t body[64] = { 0 };
	struct wire_writer w;
	struct wire_reader r;
	struct clf_conn *c;
	struct iodh h;
	void *pl;

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	/* n = 0 (the codec says E2BIG for a count under a vector's
	 * minimum) */
	ck_assert_int_lt(raw_call(c, CLF_PROTO_OP_REMOVE_MANY, body, 4, &pl,
				  &r), 0);
	ck_assert_int_lt(raw_call(c, CLF_PROTO_OP_SUB_SIZES_MANY, body, 4,
				  &pl, &r), 0);
	/* n past the limit */
	w = (struct wire_writer){ body, sizeof(body), 0 };
	wire_put_u32(&w, CLF_PROTO_SUB_BATCH_MAX + 1);
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_REMOVE_MANY, body, 12, &pl,
				  &r), -E2BIG);
	/* n = 3 with two files; n = 1 with a trailing byte */
	w = (struct wire_writer){ body, sizeof(body), 0 };
	wire_put_u32(&w, 3);
	wire_put_u64(&w, 0x10);
	wire_put_u64(&w, 0x11);
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_REMOVE_MANY, body, w.pos,
				  &pl, &r), -EPROTO);
	body[0] = 1;
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_REMOVE_MANY, body, 13, &pl,
				  &r), -EPROTO);
	/* SUB_SIZES_MANY: a subfile index out of range; files without
	 * their indexes */
	w = (struct wire_writer){ body, sizeof(body), 0 };
	wire_put_u32(&w, 1);
	wire_put_u64(&w, 0x10);
	wire_put_u32(&w, CLF_PROTO_MAX_SUBFILES);
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_SUB_SIZES_MANY, body, w.pos,
				  &pl, &r), -E2BIG);
	ck_assert_int_eq(raw_call(c, CLF_PROTO_OP_SUB_SIZES_MANY, body, 12,
				  &pl, &r), -EPROTO);
	/* The connection goes on. */
	ck_assert_int_eq(cl_ping(c), 0);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_many");
	TCase *tc = tcase_create("many files");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sizes_and_removals_of_many_files_in_one_request);
	tcase_add_test(tc, test_counts_and_lengths_that_do_not_match_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
