// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_links.c -- the requests of protocol 1.6 against the real
 * metad: SYMLINK, READLINK, LINK, MKNOD; hard link counts over UNLINK
 * and RENAME; the bodies metad refuses; and repeats of the three that
 * change the store, answered from the reply cache (mds_replay.h), not
 * run twice.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define CLIENT 0x11c5e1f00d000001ull

static struct mh H;

static void setup(void)
{
	mh_init(&H, 1, 2000);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

static int symlink_(struct mc *m, const char *path, const char *target,
		    struct clf_proto_attr *out)
{
	struct clf_proto_symlink_req req = { ROOT, clf_proto_str_of(path),
					     clf_proto_str_of(target), 7, 8 };
	struct wire_writer w = { m->buf, sizeof(m->buf), 0 };
	struct wire_reader r;
	int err;

	ck_assert_int_eq(clf_proto_symlink_req_encode(&w, &req), 0);
	err = mc_call(m, CLF_PROTO_OP_SYMLINK, m->buf, w.pos, &r);
	return err ? err : clf_proto_attr_decode(&r, out);
}

static int link_(struct mc *m, uint64_t ino, const char *path,
		 struct clf_proto_attr *out)
{
	struct clf_proto_link_req req = { ino, ROOT, clf_proto_str_of(path) };
	struct wire_writer w = { m->buf, sizeof(m->buf), 0 };
	struct wire_reader r;
	int err;

	ck_assert_int_eq(clf_proto_link_req_encode(&w, &req), 0);
	err = mc_call(m, CLF_PROTO_OP_LINK, m->buf, w.pos, &r);
	return err ? err : clf_proto_attr_decode(&r, out);
}

static int mknod_(struct mc *m, const char *path, uint32_t mode,
		  uint64_t rdev, struct clf_proto_attr *out)
{
	struct clf_proto_mknod_req req = { ROOT, clf_proto_str_of(path), mode,
					   7, 8, rdev };
	struct wire_writer w = { m->buf, sizeof(m->buf), 0 };
	struct wire_reader r;
	int err;

	ck_assert_int_eq(clf_proto_mknod_req_encode(&w, &req), 0);
	err = mc_call(m, CLF_PROTO_OP_MKNOD, m->buf, w.pos, &r);
	return err ? err : clf_proto_attr_decode(&r, out);
}

/* READLINK of ino: 0 with the target (NUL-terminated, in t) and rdev. */
static int readlink_(struct mc *m, uint64_t ino, char t[4096], uint64_t *rdev)
{
	struct clf_proto_ino req = { ino };
	struct wire_writer w = { m->buf, sizeof(m->buf), 0 };
	struct clf_proto_readlink_rep rep;
	struct wire_reader r;
	int err;

	ck_assert_int_eq(clf_proto_ino_encode(&w, &req), 0);
	err = mc_call(m, CLF_PROTO_OP_READLINK, m->buf, w.pos, &r);
	if (!err)
		err = clf_proto_readlink_rep_decode(&r, &rep);
	if (err)
		return err;
	memcpy(t, rep.target.ptr, rep.target.len);
	t[rep.target.len] = '\0';
	*rdev = rep.rdev;
	return 0;
}

START_TEST(test_symlinks_and_nodes_over_the_wire)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a, l, c;
	char t[4096];
	uint64_t rdev = 1;

	ck_assert_int_eq(symlink_(m, "l", "../a/b", &l), 0);
	ck_assert(S_ISLNK(l.mode));
	ck_assert_int_eq(l.size, 6);
	ck_assert_uint_eq(l.uid, 7);
	ck_assert_int_eq(readlink_(m, l.ino, t, &rdev), 0);
	ck_assert_str_eq(t, "../a/b");
	ck_assert_uint_eq(rdev, 0);
	ck_assert_int_eq(mknod_(m, "c", S_IFCHR | 0620, makedev(4, 64), &c), 0);
	ck_assert(S_ISCHR(c.mode));
	ck_assert_int_eq(readlink_(m, c.ino, t, &rdev), 0);
	ck_assert_str_eq(t, "");
	ck_assert_uint_eq(rdev, makedev(4, 64));
	ck_assert_int_eq(mknod_(m, "p", S_IFIFO | 0600, 0, &a), 0);
	ck_assert_int_eq(readlink_(m, a.ino, t, &rdev), -EINVAL);
	ck_assert_int_eq(readlink_(m, ROOT, t, &rdev), -EINVAL);
	ck_assert_int_eq(readlink_(m, 999999, t, &rdev), -ENOENT);
	/* metad follows no link: a path through one is no directory. */
	ck_assert_int_eq(mc_lookup(m, ROOT, "l/x", 0, NULL), -ENOTDIR);
	/* CREATE of an existing symlink or node opens nothing. */
	ck_assert_int_eq(mc_create(m, ROOT, "l", 0644, 0, NULL, NULL), -ELOOP);
	ck_assert_int_eq(mc_create(m, ROOT, "p", 0644, 0, NULL, NULL), -ENXIO);
	ck_assert_int_eq(symlink_(m, "p", "x", &a), -EEXIST);
	mc_close(m);
}
END_TEST

START_TEST(test_hard_links_count_names_over_unlink_and_rename)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a;
	uint64_t f;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	f = mc_ino(m, "f");
	ck_assert_int_eq(link_(m, f, "g", &a), 0);
	ck_assert_uint_eq(a.ino, f);
	ck_assert_uint_eq(a.nlink, 2);
	ck_assert_int_eq(link_(m, f, "g", &a), -EEXIST);
	ck_assert_int_eq(link_(m, ROOT, "r", &a), -EPERM);
	ck_assert_int_eq(mc_rename(m, ROOT, "f", ROOT, "g", 0), 0);
	ck_assert_uint_eq(mc_ino(m, "f"), f);
	ck_assert_int_eq(mc_unlink(m, ROOT, "f"), 0);
	ck_assert_int_eq(mc_getattr(m, f, &a), 0);
	ck_assert_uint_eq(a.nlink, 1);
	ck_assert_int_eq(mc_unlink(m, ROOT, "g"), 0);
	ck_assert_int_eq(mc_getattr(m, f, &a), -ENOENT);
	mc_close(m);
}
END_TEST

START_TEST(test_bad_bodies_are_refused_and_the_connection_goes_on)
{
	struct mc *m = mc_open(&H);
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct wire_reader r;

	/* MKNOD of a regular file, written past the encoder's checks. */
	wire_put_u64(&w, ROOT);
	wire_put_u16(&w, 1);
	wire_put_u8(&w, 'x');
	wire_put_u32(&w, S_IFREG | 0644);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, 0);
	wire_put_u64(&w, 0);
	ck_assert_int_eq(mc_call(m, CLF_PROTO_OP_MKNOD, body, w.pos, &r),
			 -EPROTO);
	/* A target with a NUL byte. */
	w.pos = 0;
	wire_put_u64(&w, ROOT);
	wire_put_u16(&w, 1);
	wire_put_u8(&w, 'y');
	wire_put_u16(&w, 3);
	wire_put_bytes(&w, "a\0b", 3);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, 0);
	ck_assert_int_eq(mc_call(m, CLF_PROTO_OP_SYMLINK, body, w.pos, &r),
			 -EPROTO);
	ck_assert_int_eq(mc_ping(m), 0);
	ck_assert_int_eq(mc_lookup(m, ROOT, "x", 0, NULL), -ENOENT);
	mc_close(m);
}
END_TEST

START_TEST(test_repeats_are_answered_from_the_reply_cache)
{
	struct clf_proto_reqid id1 = { CLIENT, 1 }, id2 = { CLIENT, 2 },
			       id3 = { CLIENT, 3 };
	struct clf_proto_attr first, again;
	struct mc *m = mc_open(&H);
	uint64_t f;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	f = mc_ino(m, "f");
	m->reqid = &id1;
	ck_assert_int_eq(link_(m, f, "g", &first), 0);
	ck_assert_int_eq(link_(m, f, "g", &again), 0);
	ck_assert_uint_eq(again.ino, f);
	ck_assert_uint_eq(again.nlink, 2);	/* not linked twice */
	m->reqid = &id2;
	ck_assert_int_eq(symlink_(m, "l", "f", &first), 0);
	ck_assert_int_eq(symlink_(m, "l", "f", &again), 0);
	ck_assert_uint_eq(again.ino, first.ino);
	m->reqid = &id3;
	ck_assert_int_eq(mknod_(m, "p", S_IFIFO | 0600, 0, &first), 0);
	ck_assert_int_eq(mknod_(m, "p", S_IFIFO | 0600, 0, &again), 0);
	ck_assert_uint_eq(again.ino, first.ino);
	m->reqid = NULL;
	ck_assert_int_eq(link_(m, f, "g", &again), -EEXIST);
	mc_close(m);
	ck_assert(mh_log_has(&H, "answered a repeated LINK"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_links");
	TCase *tc = tcase_create("links");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_symlinks_and_nodes_over_the_wire);
	tcase_add_test(tc, test_hard_links_count_names_over_unlink_and_rename);
	tcase_add_test(tc, test_bad_bodies_are_refused_and_the_connection_goes_on);
	tcase_add_test(tc, test_repeats_are_answered_from_the_reply_cache);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
