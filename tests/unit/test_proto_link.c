// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto_link.c -- the bodies of protocol 1.6 (SYMLINK, READLINK
 * reply, LINK, MKNOD): round trips, every truncation, trailing bytes,
 * and the rules on targets, kinds and device numbers, which encoders
 * and decoders enforce alike.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "proto.h"

typedef int enc_fn(struct wire_writer *w, const void *m);
typedef int dec_fn(struct wire_reader *r, void *m);

static int enc_symlink(struct wire_writer *w, const void *m)
{
	return clf_proto_symlink_req_encode(w, m);
}

static int dec_symlink(struct wire_reader *r, void *m)
{
	return clf_proto_symlink_req_decode(r, m);
}

static int enc_readlink(struct wire_writer *w, const void *m)
{
	return clf_proto_readlink_rep_encode(w, m);
}

static int dec_readlink(struct wire_reader *r, void *m)
{
	return clf_proto_readlink_rep_decode(r, m);
}

static int enc_link(struct wire_writer *w, const void *m)
{
	return clf_proto_link_req_encode(w, m);
}

static int dec_link(struct wire_reader *r, void *m)
{
	return clf_proto_link_req_decode(r, m);
}

static int enc_mknod(struct wire_writer *w, const void *m)
{
	return clf_proto_mknod_req_encode(w, m);
}

static int dec_mknod(struct wire_reader *r, void *m)
{
	return clf_proto_mknod_req_decode(r, m);
}

static uint8_t buf[8192];

/* Encode m; every shorter prefix and one trailing byte fail to decode;
 * the whole decodes into out.  Returns the encoded length. */
static size_t round_trip(enc_fn *enc, dec_fn *dec, const void *m, void *out)
{
	struct wire_writer w = { buf, sizeof(buf) - 1, 0 };
	struct wire_reader r;

	ck_assert_int_eq(enc(&w, m), 0);
	ck_assert_uint_le(w.pos, sizeof(buf) - 1);
	for (size_t n = 0; n < w.pos; n++) {
		r = (struct wire_reader){ buf, n, 0, false };
		ck_assert_int_eq(dec(&r, out), -EPROTO);
	}
	buf[w.pos] = 0;
	r = (struct wire_reader){ buf, w.pos + 1, 0, false };
	ck_assert_int_eq(dec(&r, out), -EPROTO);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(dec(&r, out), 0);
	return w.pos;
}

START_TEST(test_link_bodies_round_trip)
{
	struct clf_proto_symlink_req sy = {
		.dir = 5, .path = clf_proto_str_of("a/b"),
		.target = clf_proto_str_of("../x/y"), .uid = 7, .gid = 8,
	}, sy2;
	struct clf_proto_readlink_rep rl = { .rdev = 0,
		.target = clf_proto_str_of("/abs/path") }, rl2;
	struct clf_proto_link_req li = { .ino = 9, .new_dir = 1,
		.new_path = clf_proto_str_of("n") }, li2;
	struct clf_proto_mknod_req mk = { .dir = 1,
		.path = clf_proto_str_of("dev"), .mode = S_IFCHR | 0600,
		.uid = 1, .gid = 2, .rdev = 0x10300 }, mk2;

	round_trip(enc_symlink, dec_symlink, &sy, &sy2);
	ck_assert_uint_eq(sy2.dir, 5);
	ck_assert(clf_proto_str_eq(sy2.path, "a/b"));
	ck_assert(clf_proto_str_eq(sy2.target, "../x/y"));
	ck_assert_uint_eq(sy2.uid, 7);
	ck_assert_uint_eq(sy2.gid, 8);
	round_trip(enc_readlink, dec_readlink, &rl, &rl2);
	ck_assert(clf_proto_str_eq(rl2.target, "/abs/path"));
	rl = (struct clf_proto_readlink_rep){ .rdev = 0x10300 };
	round_trip(enc_readlink, dec_readlink, &rl, &rl2);
	ck_assert_uint_eq(rl2.rdev, 0x10300);
	ck_assert_uint_eq(rl2.target.len, 0);
	round_trip(enc_link, dec_link, &li, &li2);
	ck_assert_uint_eq(li2.ino, 9);
	ck_assert(clf_proto_str_eq(li2.new_path, "n"));
	round_trip(enc_mknod, dec_mknod, &mk, &mk2);
	ck_assert_uint_eq(mk2.mode, S_IFCHR | 0600);
	ck_assert_uint_eq(mk2.rdev, 0x10300);
}
END_TEST

START_TEST(test_symlink_targets_are_bounded)
{
	static char target[CLF_PROTO_SYMLINK_MAX + 2];
	struct clf_proto_symlink_req sy = { .dir = 1,
		.path = clf_proto_str_of("l") }, out;
	struct wire_writer w = { buf, sizeof(buf), 0 };

	memset(target, 'a', sizeof(target) - 1);
	target[CLF_PROTO_SYMLINK_MAX] = '\0';
	sy.target = clf_proto_str_of(target);
	round_trip(enc_symlink, dec_symlink, &sy, &out);
	ck_assert_uint_eq(out.target.len, CLF_PROTO_SYMLINK_MAX);
	target[CLF_PROTO_SYMLINK_MAX] = 'a';
	sy.target = clf_proto_str_of(target);
	ck_assert_int_eq(clf_proto_symlink_req_encode(&w, &sy), -E2BIG);
	sy.target = clf_proto_str_of("");
	ck_assert_int_eq(clf_proto_symlink_req_encode(&w, &sy), -EINVAL);
	sy.target = (struct clf_proto_str){ "a\0b", 3 };
	ck_assert_int_eq(clf_proto_symlink_req_encode(&w, &sy), -EINVAL);
	ck_assert_uint_eq(w.pos, 0);
}
END_TEST

START_TEST(test_mknod_takes_only_special_kinds)
{
	struct clf_proto_mknod_req mk = { .dir = 1,
		.path = clf_proto_str_of("x") }, out;
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	const uint32_t bad[] = { S_IFREG | 0644, S_IFDIR | 0755,
				 S_IFLNK | 0777, 0644, S_IFIFO | S_IFCHR | 0600 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mk.mode = bad[i];
		ck_assert_int_eq(clf_proto_mknod_req_encode(&w, &mk), -EINVAL);
	}
	mk.mode = S_IFIFO | 0600;
	mk.rdev = 1;
	ck_assert_int_eq(clf_proto_mknod_req_encode(&w, &mk), -EINVAL);
	ck_assert_uint_eq(w.pos, 0);
	/* What the encoder refuses, the decoder refuses too. */
	mk.rdev = 0;
	ck_assert_int_eq(clf_proto_mknod_req_encode(&w, &mk), 0);
	buf[w.pos - 1] = 1;	/* rdev's top byte */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_mknod_req_decode(&r, &out), -EPROTO);
	mk.mode = S_IFSOCK | 0777;
	ck_assert_int_eq(clf_proto_mknod_req_encode(&w, &mk), 0);
}
END_TEST

START_TEST(test_readlink_reply_has_one_answer)
{
	struct clf_proto_readlink_rep rl = { .rdev = 5,
		.target = clf_proto_str_of("t") };
	struct wire_writer w = { buf, sizeof(buf), 0 };

	ck_assert_int_eq(clf_proto_readlink_rep_encode(&w, &rl), -EINVAL);
	ck_assert_str_eq(clf_proto_op_name(CLF_PROTO_OP_SYMLINK), "SYMLINK");
	ck_assert_str_eq(clf_proto_op_name(CLF_PROTO_OP_MKNOD), "MKNOD");
	ck_assert_int_ge(CLF_PROTO_VERSION_MINOR, 6);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto_link");
	TCase *tc = tcase_create("link bodies");

	tcase_add_test(tc, test_link_bodies_round_trip);
	tcase_add_test(tc, test_symlink_targets_are_bounded);
	tcase_add_test(tc, test_mknod_takes_only_special_kinds);
	tcase_add_test(tc, test_readlink_reply_has_one_answer);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
