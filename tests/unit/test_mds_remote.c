// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_remote.c -- the store's part of a namespace spread over
 * several metads: inode numbers that carry the metad, entries naming an
 * inode of another metad, and the two sides of a rename across metads
 * (two stores in one test).  Each store must still pass its checks.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "clf_proto.h"
#include "mds_fixture.h"

#define M1(n) ((1ull << CLF_PROTO_INO_METAD_SHIFT) | (n))

START_TEST(test_store_of_metad_1_numbers_inodes_with_its_index)
{
	struct mds_attr a;

	expect_err(mds_store_set_index(s, 1, 3), 0);
	expect_err(mds_mkdir_detached(s, MDS_ROOT_INO, 0755, 0, 0, &a), 0);
	ck_assert_uint_eq(CLF_PROTO_INO_METAD(a.ino), 1);
	ck_assert(mds_ino_local(s, a.ino));
	ck_assert(!mds_ino_local(s, 5));
	/* Its inodes, made here, are named on another metad. */
	ck_assert_uint_eq(CLF_PROTO_INO_METAD(mkfile(a.ino, "f", NULL)), 1);
	expect_err(mds_store_set_index(s, 2, 3), -EIO);
	expect_err(mds_store_set_index(s, 1, 3), 0);
}
END_TEST

START_TEST(test_remote_entries_keep_their_kind_and_answer_eremote)
{
	struct mds_dirent ents[4];
	struct mds_attr a;
	uint64_t ino;
	uint32_t mode;
	size_t done;
	bool eof;

	expect_err(mds_store_set_index(s, 0, 3), 0);
	expect_err(mds_entry_add_remote(s, MDS_ROOT_INO, "r", M1(5),
					S_IFDIR | 0755), 0);
	expect_err(mds_entry_add_remote(s, MDS_ROOT_INO, "r", M1(6),
					S_IFREG | 0644), -EEXIST);
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 4, &eof), 1);
	ck_assert_uint_eq(ents[0].ino, M1(5));
	ck_assert(S_ISDIR(ents[0].mode));
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 3);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "r", &a, NULL), -EREMOTE);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "r", NULL), -EREMOTE);
	expect_err(mds_entry_lookup(s, MDS_ROOT_INO, "r", &ino, &mode), 0);
	ck_assert_uint_eq(ino, M1(5));
	/* A walk stops at the remote inode, past its name. */
	expect_err(mds_resolve_part(s, MDS_ROOT_INO, "r/x/y", NULL, NULL,
				    &ino, &done), 0);
	ck_assert_uint_eq(ino, M1(5));
	ck_assert_uint_eq(done, 1);
	{
		struct mds_attr d;

		expect_err(mds_mkdir(s, MDS_ROOT_INO, "l", 0755, 0, 0, &d), 0);
		expect_err(mds_resolve_part(s, MDS_ROOT_INO, "l", NULL, NULL,
					    &ino, &done), 0);
		ck_assert_uint_eq(ino, d.ino);
		ck_assert_uint_eq(done, 1);
	}
	expect_err(mds_entry_del_remote(s, MDS_ROOT_INO, "r", M1(6), &mode),
		   -ENOENT);
	expect_err(mds_entry_del_remote(s, MDS_ROOT_INO, "r", M1(5), &mode),
		   0);
	ck_assert(S_ISDIR(mode));
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 3);	/* "l" */
}
END_TEST

/* The intent of one side of txid moving ino to name in dir. */
static struct mds_intent intent(uint64_t txid, uint8_t role, uint32_t peer,
				uint64_t src, const char *src_name,
				uint64_t dst, const char *dst_name,
				uint64_t ino, uint32_t mode)
{
	struct mds_intent in = {
		.txid = txid, .role = role, .state = MDS_INTENT_PREPARED,
		.peer = peer, .src_dir = src, .dst_dir = dst, .ino = ino,
		.mode = mode,
	};

	snprintf(in.src_name, sizeof(in.src_name), "%s", src_name);
	snprintf(in.dst_name, sizeof(in.dst_name), "%s", dst_name);
	return in;
}

START_TEST(test_rename_across_two_stores_moves_the_name_once)
{
	char *dir2 = new_store_dir();
	struct mds_store *s2 = open_store(dir2);
	struct mds_removed gone;
	struct mds_intent co, pa, got;
	struct mds_attr d;
	uint64_t f, ino;
	uint32_t mode;
	bool noop;

	expect_err(mds_store_set_index(s, 0, 2), 0);
	expect_err(mds_store_set_index(s2, 1, 2), 0);
	/* /D lives on store 2, named in store 1's root. */
	expect_err(mds_mkdir_detached(s2, MDS_ROOT_INO, 0755, 0, 0, &d), 0);
	expect_err(mds_entry_add_remote(s, MDS_ROOT_INO, "D", d.ino, d.mode),
		   0);
	f = mkfile(MDS_ROOT_INO, "f", NULL);
	co = intent(7, MDS_INTENT_COORD, 1, MDS_ROOT_INO, "f", d.ino, "g", f,
		    S_IFREG | 0644);
	pa = intent(7, MDS_INTENT_PART, 0, 0, "", d.ino, "g", f,
		    S_IFREG | 0644);
	expect_err(mds_intent_put(s, &co), 0);
	expect_err(mds_xr_prepare(s2, &pa, &noop), 0);
	ck_assert(!noop);
	expect_err(mds_intent_get(s2, 7, &got), 0);
	ck_assert_str_eq(got.dst_name, "g");
	/* Decided: the old name goes, the intent says so. */
	expect_err(mds_xr_decide(s, &co), 0);
	expect_err(mds_intent_get(s, 7, &got), 0);
	ck_assert_uint_eq(got.state, MDS_INTENT_COMMITTED);
	expect_err(mds_entry_lookup(s, MDS_ROOT_INO, "f", &ino, &mode),
		   -ENOENT);
	/* Committed: the new name is there, once, however often. */
	expect_err(mds_xr_commit(s2, 7, &gone), 0);
	mds_removed_release(&gone);
	expect_err(mds_xr_commit(s2, 7, &gone), 0);
	ck_assert_uint_eq(gone.attr.ino, 0);
	expect_err(mds_intent_get(s2, 7, &got), -ENOENT);
	expect_err(mds_entry_lookup(s2, d.ino, "g", &ino, &mode), 0);
	ck_assert_uint_eq(ino, f);
	ck_assert(S_ISREG(mode));
	ck_assert_uint_eq(attr_of(f).nlink, 1);
	expect_err(mds_intent_del(s, 7), 0);
	expect_err(mds_intent_list(s, &got, 1), 0);
	/* A participant says no to what a rename may not replace. */
	pa = intent(8, MDS_INTENT_PART, 0, 0, "", d.ino, "g", M1(99),
		    S_IFDIR | 0755);
	expect_err(mds_xr_prepare(s2, &pa, &noop), -ENOTDIR);
	pa.flags = MDS_RENAME_NOREPLACE;
	expect_err(mds_xr_prepare(s2, &pa, &noop), -EEXIST);
	pa = intent(9, MDS_INTENT_PART, 0, 0, "", d.ino, "g", f,
		    S_IFREG | 0644);
	expect_err(mds_xr_prepare(s2, &pa, &noop), 0);
	ck_assert(noop);
	expect_err(mds_intent_list(s2, &got, 1), 0);
	assert_consistent(s2);
	mds_store_close(s2);
	rm_store_dir(dir2);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_remote");
	TCase *tc = tcase_create("one store of several");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store_of_metad_1_numbers_inodes_with_its_index);
	tcase_add_test(tc, test_remote_entries_keep_their_kind_and_answer_eremote);
	tcase_add_test(tc, test_rename_across_two_stores_moves_the_name_once);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
