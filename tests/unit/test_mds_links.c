// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_links.c -- the metad store's POSIX objects beyond files and
 * directories: symbolic links, fifos, sockets, device nodes and hard
 * links (their link counts, and data that stays until the last name
 * goes).  Each test has its own store and ends by checking the store's
 * invariants.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "check_main.h"
#include "mds_fixture.h"

static struct mds_attr attr_at(uint64_t d, const char *name)
{
	struct mds_attr a;

	expect_err(mds_lookup(s, d, name, &a, NULL), 0);
	return a;
}

static uint64_t gc_queued(void)
{
	uint64_t n = 0;

	expect_err(mds_gc_count(s, &n), 0);
	return n;
}

/* Set an inode's ctime and mtime to 1 so that a later change shows. */
static void age(uint64_t ino)
{
	struct mds_setattr set = { .mask = MDS_SETATTR_MTIME, .mtime = 1 };
	struct mds_attr a;

	expect_err(mds_setattr(s, ino, &set, &a), 0);
}

START_TEST(test_symlink_keeps_its_target_and_size)
{
	struct mds_attr a;
	char *target = NULL;

	age(MDS_ROOT_INO);
	expect_err(mds_symlink(s, MDS_ROOT_INO, "l", "../some/where", 7, 8,
			       &a), 0);
	ck_assert(S_ISLNK(a.mode));
	ck_assert_uint_eq(a.mode & 07777, 0777);
	ck_assert_int_eq(a.size, 13);
	ck_assert_uint_eq(a.nlink, 1);
	ck_assert_uint_eq(a.uid, 7);
	ck_assert_uint_eq(a.gid, 8);
	ck_assert_int_gt(attr_of(MDS_ROOT_INO).mtime, 1);
	expect_err(mds_readlink(s, a.ino, &target), 0);
	ck_assert_str_eq(target, "../some/where");
	free(target);
	/* It survives a restart, and a change of owner keeps the target. */
	mds_store_close(s);
	s = open_store(dir);
	expect_err(mds_setattr(s, a.ino, &(struct mds_setattr){
		.mask = MDS_SETATTR_UID, .uid = 9 }, NULL), 0);
	expect_err(mds_readlink(s, a.ino, &target), 0);
	ck_assert_str_eq(target, "../some/where");
	free(target);
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "l").uid, 9);
}
END_TEST

START_TEST(test_symlink_refuses_bad_targets_and_names)
{
	char longest[MDS_SYMLINK_MAX + 2];
	char *target = NULL;
	struct mds_attr a;
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);

	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	expect_err(mds_symlink(s, MDS_ROOT_INO, "l", longest, 0, 0, &a),
		   -ENAMETOOLONG);
	longest[MDS_SYMLINK_MAX] = '\0';
	expect_err(mds_symlink(s, MDS_ROOT_INO, "l", longest, 0, 0, &a), 0);
	ck_assert_int_eq(a.size, MDS_SYMLINK_MAX);
	expect_err(mds_symlink(s, MDS_ROOT_INO, "e", "", 0, 0, &a), -ENOENT);
	expect_err(mds_symlink(s, MDS_ROOT_INO, "f", "x", 0, 0, &a), -EEXIST);
	expect_err(mds_symlink(s, f, "x", "x", 0, 0, &a), -ENOTDIR);
	expect_err(mds_readlink(s, f, &target), -EINVAL);
	expect_err(mds_readlink(s, MDS_ROOT_INO, &target), -EINVAL);
	ck_assert_ptr_null(target);
}
END_TEST

START_TEST(test_special_files_hold_no_data)
{
	struct mds_layout *l = rr_layout(4096, 2);
	struct mds_attr fifo, sock, chr, blk;
	char *target = NULL;

	expect_err(mds_mknod(s, MDS_ROOT_INO, "p", S_IFIFO | 0640, 0, 1, 2,
			     &fifo), 0);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "s", S_IFSOCK | 0755, 0, 1, 2,
			     &sock), 0);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "c", S_IFCHR | 0600,
			     makedev(1, 3), 1, 2, &chr), 0);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "b", S_IFBLK | 0600,
			     makedev(259, 70000), 1, 2, &blk), 0);
	ck_assert(S_ISFIFO(attr_at(MDS_ROOT_INO, "p").mode));
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "p").mode & 07777, 0640);
	ck_assert(S_ISSOCK(attr_at(MDS_ROOT_INO, "s").mode));
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "c").rdev, makedev(1, 3));
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "b").rdev,
			  makedev(259, 70000));
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "p").rdev, 0);
	ck_assert_int_eq(chr.size, 0);
	/* Regular files and directories have their own calls; a fifo has
	 * no device number. */
	expect_err(mds_mknod(s, MDS_ROOT_INO, "r", S_IFREG | 0600, 0, 1, 2,
			     &fifo), -EINVAL);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "d", S_IFDIR | 0700, 0, 1, 2,
			     &fifo), -EINVAL);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "q", S_IFIFO | 0600, 5, 1, 2,
			     &fifo), -EINVAL);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "p", S_IFIFO | 0600, 0, 1, 2,
			     &fifo), -EEXIST);
	/* No size, no layout, no target. */
	expect_err(mds_setattr(s, chr.ino, &(struct mds_setattr){
		.mask = MDS_SETATTR_SIZE, .size = 5 }, NULL), -EINVAL);
	expect_err(mds_set_layout(s, sock.ino, l), -EINVAL);
	expect_err(mds_update_size(s, blk.ino, 10, MDS_TIME_NOW, NULL),
		   -EINVAL);
	expect_err(mds_readlink(s, chr.ino, &target), -EINVAL);
	/* Modes and owners change like any inode's. */
	expect_err(mds_setattr(s, chr.ino, &(struct mds_setattr){
		.mask = MDS_SETATTR_MODE, .mode = 0666 }, NULL), 0);
	ck_assert_uint_eq(attr_of(chr.ino).mode, S_IFCHR | 0666);
	ck_assert_uint_eq(attr_of(chr.ino).rdev, makedev(1, 3));
	mds_layout_free(l);
}
END_TEST

START_TEST(test_link_counts_names_and_marks_ctime)
{
	uint64_t d = 0, f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_attr a;

	expect_err(mds_mkdir(s, MDS_ROOT_INO, "d", 0755, 0, 0, &a), 0);
	d = a.ino;
	age(f);
	age(d);
	expect_err(mds_link(s, f, d, "g", &a), 0);
	ck_assert_uint_eq(a.ino, f);
	ck_assert_uint_eq(a.nlink, 2);
	ck_assert_int_gt(a.ctime, 1);
	ck_assert_int_eq(attr_of(f).mtime, 1);
	ck_assert_int_gt(attr_of(d).mtime, 1);
	ck_assert_uint_eq(attr_of(d).nlink, 2);
	ck_assert_uint_eq(attr_at(d, "g").ino, f);
	expect_err(mds_link(s, f, MDS_ROOT_INO, "h", &a), 0);
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "f").nlink, 3);
	/* Refusals. */
	expect_err(mds_link(s, f, MDS_ROOT_INO, "h", &a), -EEXIST);
	expect_err(mds_link(s, d, MDS_ROOT_INO, "d2", &a), -EPERM);
	expect_err(mds_link(s, 9999, MDS_ROOT_INO, "x", &a), -ENOENT);
	expect_err(mds_link(s, f, f, "x", &a), -ENOTDIR);
	expect_err(mds_link(s, f, MDS_ROOT_INO, "a/b", &a), -EINVAL);
	ck_assert_uint_eq(attr_of(f).nlink, 3);
}
END_TEST

START_TEST(test_data_stays_until_the_last_name_goes)
{
	struct mds_layout *l = rr_layout(4096, 2);
	uint64_t f = mkfile(MDS_ROOT_INO, "f", l);
	struct mds_removed rm;
	struct mds_attr a;

	expect_err(mds_link(s, f, MDS_ROOT_INO, "g", &a), 0);
	age(f);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, 0);
	ck_assert_ptr_null(rm.layout);
	mds_removed_release(&rm);
	ck_assert_uint_eq(gc_queued(), 0);
	a = attr_at(MDS_ROOT_INO, "g");
	ck_assert_uint_eq(a.nlink, 1);
	ck_assert(a.has_layout);
	ck_assert_int_gt(a.ctime, 1);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "g", &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, f);
	ck_assert_ptr_nonnull(rm.layout);
	mds_removed_release(&rm);
	ck_assert_uint_eq(gc_queued(), 2);
	expect_err(mds_getattr(s, f, &a), -ENOENT);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_rename_between_names_of_one_file_does_nothing)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_removed rm = { .attr.ino = 77 };
	struct mds_attr a;

	expect_err(mds_link(s, f, MDS_ROOT_INO, "g", &a), 0);
	expect_err(mds_rename(s, MDS_ROOT_INO, "f", MDS_ROOT_INO, "g", 0, &rm),
		   0);
	ck_assert_uint_eq(rm.attr.ino, 0);
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "f").ino, f);
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "g").ino, f);
	ck_assert_uint_eq(attr_of(f).nlink, 2);
}
END_TEST

START_TEST(test_rename_over_a_linked_file_drops_one_link)
{
	struct mds_layout *l = rr_layout(4096, 2);
	uint64_t f = mkfile(MDS_ROOT_INO, "f", l);
	uint64_t n = mkfile(MDS_ROOT_INO, "n", NULL);
	struct mds_removed rm;
	struct mds_attr a;

	expect_err(mds_link(s, f, MDS_ROOT_INO, "g", &a), 0);
	expect_err(mds_rename(s, MDS_ROOT_INO, "n", MDS_ROOT_INO, "g", 0, &rm),
		   0);
	ck_assert_uint_eq(rm.attr.ino, 0);
	mds_removed_release(&rm);
	ck_assert_uint_eq(gc_queued(), 0);
	ck_assert_uint_eq(attr_at(MDS_ROOT_INO, "g").ino, n);
	ck_assert_uint_eq(attr_of(f).nlink, 1);
	/* The last name of f goes the same way, with its data. */
	expect_err(mds_rename(s, MDS_ROOT_INO, "g", MDS_ROOT_INO, "f", 0, &rm),
		   0);
	ck_assert_uint_eq(rm.attr.ino, f);
	mds_removed_release(&rm);
	ck_assert_uint_eq(gc_queued(), 2);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_symlinks_and_nodes_rename_and_unlink_like_files)
{
	struct mds_attr a, p;
	struct mds_removed rm;
	char *target = NULL;

	expect_err(mds_symlink(s, MDS_ROOT_INO, "l", "t", 0, 0, &a), 0);
	expect_err(mds_mknod(s, MDS_ROOT_INO, "p", S_IFIFO | 0600, 0, 0, 0,
			     &p), 0);
	expect_err(mds_rename(s, MDS_ROOT_INO, "l", MDS_ROOT_INO, "p", 0, &rm),
		   0);
	ck_assert_uint_eq(rm.attr.ino, p.ino);
	ck_assert_ptr_null(rm.layout);
	mds_removed_release(&rm);
	expect_err(mds_readlink(s, attr_at(MDS_ROOT_INO, "p").ino, &target), 0);
	ck_assert_str_eq(target, "t");
	free(target);
	/* A hard link to a symlink is a second name of the link. */
	expect_err(mds_link(s, a.ino, MDS_ROOT_INO, "l2", &a), 0);
	ck_assert_uint_eq(a.nlink, 2);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "p", &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, 0);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "l2", &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, a.ino);
	/* Paths do not go through a symlink: clients follow them. */
	expect_err(mds_symlink(s, MDS_ROOT_INO, "root", "/", 0, 0, &a), 0);
	expect_err(mds_resolve(s, MDS_ROOT_INO, "root/x", &a, NULL), -ENOTDIR);
	expect_err(mds_rmdir(s, MDS_ROOT_INO, "root"), -ENOTDIR);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "root", &rm), 0);
	ck_assert_uint_eq(gc_queued(), 0);
}
END_TEST

START_TEST(test_verify_catches_a_wrong_link_count)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_inode in;
	struct mds_attr a;
	MDB_txn *txn;

	expect_err(mds_link(s, f, MDS_ROOT_INO, "g", &a), 0);
	assert_consistent(s);
	/* One name of a file with two links and a count of one. */
	ck_assert_int_eq(mds_txn_begin(s, true, &txn, "test"), 0);
	ck_assert_int_eq(mds_inode_get(s, txn, f, &in, "test"), 0);
	in.attr.nlink = 1;
	ck_assert_int_eq(mds_inode_put(s, txn, &in, false, "test"), 0);
	ck_assert_int_eq(mds_txn_commit(txn, "test"), 0);
	expect_err(mds_store_verify(s), -EIO);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "1 links, 2 names"));
	/* Repair, for the teardown's check. */
	ck_assert_int_eq(mds_txn_begin(s, true, &txn, "test"), 0);
	ck_assert_int_eq(mds_inode_get(s, txn, f, &in, "test"), 0);
	in.attr.nlink = 2;
	ck_assert_int_eq(mds_inode_put(s, txn, &in, false, "test"), 0);
	ck_assert_int_eq(mds_txn_commit(txn, "test"), 0);
}
END_TEST

START_TEST(test_special_records_are_checked_when_read)
{
	uint8_t buf[256];
	struct mds_inode in = {
		.attr = { .ino = 5, .mode = S_IFLNK | 0777, .nlink = 1,
			  .size = 3 },
		.target = (const uint8_t *)"abc",
		.target_len = 3,
	}, out;
	size_t len = mds_inode_encode(&in, buf, sizeof(buf));

	ck_assert_int_eq(mds_inode_decode(buf, len, 5, &out), 0);
	ck_assert_uint_eq(out.target_len, 3);
	ck_assert_int_eq(memcmp(out.target, "abc", 3), 0);
	/* A size that is not the target's length, a NUL in the target, a
	 * truncated target: -EIO, never a crash. */
	in.attr.size = 4;
	len = mds_inode_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(mds_inode_decode(buf, len, 5, &out), -EIO);
	in.attr.size = 3;
	in.target = (const uint8_t *)"a\0c";
	len = mds_inode_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(mds_inode_decode(buf, len, 5, &out), -EIO);
	in.target = (const uint8_t *)"abc";
	len = mds_inode_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(mds_inode_decode(buf, len - 1, 5, &out), -EIO);
	/* A fifo with a device number. */
	in = (struct mds_inode){ .attr = { .ino = 5, .mode = S_IFIFO | 0600,
					   .nlink = 1, .rdev = 3 } };
	len = mds_inode_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(mds_inode_decode(buf, len, 5, &out), -EIO);
	/* A regular file's record with the special flag. */
	in = (struct mds_inode){ .attr = { .ino = 5, .mode = S_IFREG | 0600,
					   .nlink = 1 } };
	len = mds_inode_encode(&in, buf, sizeof(buf));
	buf[3] |= 0x04;
	ck_assert_int_eq(mds_inode_decode(buf, len, 5, &out), -EIO);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_links");
	TCase *tc = tcase_create("links");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_symlink_keeps_its_target_and_size);
	tcase_add_test(tc, test_symlink_refuses_bad_targets_and_names);
	tcase_add_test(tc, test_special_files_hold_no_data);
	tcase_add_test(tc, test_link_counts_names_and_marks_ctime);
	tcase_add_test(tc, test_data_stays_until_the_last_name_goes);
	tcase_add_test(tc, test_rename_between_names_of_one_file_does_nothing);
	tcase_add_test(tc, test_rename_over_a_linked_file_drops_one_link);
	tcase_add_test(tc, test_symlinks_and_nodes_rename_and_unlink_like_files);
	tcase_add_test(tc, test_verify_catches_a_wrong_link_count);
	tcase_add_test(tc, test_special_records_are_checked_when_read);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
