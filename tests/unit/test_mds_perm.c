// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_perm.c -- metad's permission checks (metad/mds_perm.h): the
 * owner, group and other classes, supplementary groups, root, the
 * sticky bit, chmod/chown/utimens rules and what Linux drops from a
 * mode, locks, and the group of a new inode in a setgid directory.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "error.h"
#include "mds_lock.h"
#include "mds_perm.h"

#define ALICE 1001
#define BOB 1002
#define SHARED 500

static const struct mds_cred alice = { ALICE, ALICE, 2, { ALICE, SHARED } };
static const struct mds_cred bob = { BOB, BOB, 1, { BOB } };

static struct mds_attr file(uint32_t mode, uint32_t uid, uint32_t gid)
{
	return (struct mds_attr){ .ino = 7, .mode = S_IFREG | mode,
				  .uid = uid, .gid = gid };
}

static struct mds_attr dir(uint32_t mode, uint32_t uid, uint32_t gid)
{
	return (struct mds_attr){ .ino = 8, .mode = S_IFDIR | mode,
				  .uid = uid, .gid = gid };
}

START_TEST(test_each_class_gets_its_own_bits)
{
	struct mds_attr a = file(0640, ALICE, SHARED);

	ck_assert(mds_may(&alice, &a, MDS_MAY_READ | MDS_MAY_WRITE));
	ck_assert(!mds_may(&alice, &a, MDS_MAY_EXEC));
	ck_assert(!mds_may(&bob, &a, MDS_MAY_READ));
	a.gid = BOB;
	ck_assert(mds_may(&bob, &a, MDS_MAY_READ));
	ck_assert(!mds_may(&bob, &a, MDS_MAY_WRITE));
	/* The owner class counts even when it grants less than others. */
	a = file(0077, ALICE, ALICE);
	ck_assert(!mds_may(&alice, &a, MDS_MAY_READ));
}
END_TEST

START_TEST(test_a_supplementary_group_selects_the_group_class)
{
	struct mds_attr a = file(0060, BOB, SHARED);

	ck_assert(mds_may(&alice, &a, MDS_MAY_READ | MDS_MAY_WRITE));
	ck_assert_int_eq(mds_perm_open(&bob, &a, MDS_MAY_READ, "f"), -EACCES);
}
END_TEST

START_TEST(test_root_passes_all_but_execute_without_an_x_bit)
{
	struct mds_attr a = file(0, BOB, BOB);

	ck_assert(mds_may(&mds_cred_root, &a, MDS_MAY_READ | MDS_MAY_WRITE));
	ck_assert(!mds_may(&mds_cred_root, &a, MDS_MAY_EXEC));
	a.mode |= 0010;
	ck_assert(mds_may(&mds_cred_root, &a, MDS_MAY_EXEC));
	a = dir(0, BOB, BOB);
	ck_assert(mds_may(&mds_cred_root, &a, MDS_MAY_EXEC));
}
END_TEST

START_TEST(test_changing_a_directory_needs_write_and_search)
{
	struct mds_attr d = dir(0755, ALICE, ALICE);

	ck_assert_int_eq(mds_perm_dir_change(&alice, &d, "d", "create", "x"), 0);
	ck_assert_int_eq(mds_perm_dir_change(&bob, &d, "d", "create", "x"),
			 -EACCES);
	ck_assert_msg(strstr(CLF_Last_error(), "directory 'd'"), "%s",
		      CLF_Last_error());
	d.mode = S_IFDIR | 0733;	/* write without search */
	d.uid = BOB;
	ck_assert_int_eq(mds_perm_dir_change(&alice, &d, "d", "create", "x"), 0);
	d.mode = S_IFDIR | 0722;
	ck_assert_int_eq(mds_perm_dir_change(&alice, &d, "d", "create", "x"),
			 -EACCES);
	ck_assert_int_eq(mds_perm_search(&alice, &d, "d"), -EACCES);
}
END_TEST

START_TEST(test_a_sticky_directory_keeps_others_entries)
{
	struct mds_attr d = dir(01777, 0, 0);
	struct mds_attr mine = file(0666, ALICE, ALICE);

	ck_assert_int_eq(mds_perm_sticky(&alice, &d, &mine, "f"), 0);
	ck_assert_int_eq(mds_perm_sticky(&bob, &d, &mine, "f"), -EPERM);
	ck_assert_int_eq(mds_perm_sticky(&mds_cred_root, &d, &mine, "f"), 0);
	d.uid = BOB;	/* the directory's owner may */
	ck_assert_int_eq(mds_perm_sticky(&bob, &d, &mine, "f"), 0);
	d = dir(0777, 0, 0);
	ck_assert_int_eq(mds_perm_sticky(&bob, &d, &mine, "f"), 0);
}
END_TEST

START_TEST(test_chmod_is_the_owners_and_drops_setgid_outside_the_group)
{
	struct mds_attr a = file(0644, ALICE, BOB);
	struct mds_setattr set = { .mask = MDS_SETATTR_MODE, .mode = 02755 };

	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &set, "f"), -EPERM);
	ck_assert_int_eq(mds_perm_setattr(&alice, &a, &set, "f"), 0);
	ck_assert_uint_eq(set.mode, 0755);
	set.mode = 02755;
	a.gid = SHARED;
	ck_assert_int_eq(mds_perm_setattr(&alice, &a, &set, "f"), 0);
	ck_assert_uint_eq(set.mode, 02755);
	set.mode = 02755;
	a.gid = BOB;
	ck_assert_int_eq(mds_perm_setattr(&mds_cred_root, &a, &set, "f"), 0);
	ck_assert_uint_eq(set.mode, 02755);
}
END_TEST

START_TEST(test_chown_gives_away_only_as_root_and_drops_setuid)
{
	struct mds_attr a = file(06755, ALICE, ALICE);
	struct mds_setattr set = { .mask = MDS_SETATTR_UID, .uid = BOB };

	ck_assert_int_eq(mds_perm_setattr(&alice, &a, &set, "f"), -EPERM);
	set = (struct mds_setattr){ .mask = MDS_SETATTR_GID, .gid = SHARED };
	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &set, "f"), -EPERM);
	ck_assert_int_eq(mds_perm_setattr(&alice, &a, &set, "f"), 0);
	ck_assert(set.mask & MDS_SETATTR_MODE);
	ck_assert_uint_eq(set.mode, 0755);
	set = (struct mds_setattr){ .mask = MDS_SETATTR_GID, .gid = BOB };
	ck_assert_int_eq(mds_perm_setattr(&alice, &a, &set, "f"), -EPERM);
	set = (struct mds_setattr){ .mask = MDS_SETATTR_UID, .uid = BOB };
	ck_assert_int_eq(mds_perm_setattr(&mds_cred_root, &a, &set, "f"), 0);
	ck_assert_uint_eq(set.mode, 0755);
}
END_TEST

START_TEST(test_times_now_need_write_explicit_times_the_owner)
{
	struct mds_attr a = file(0666, ALICE, ALICE);
	struct mds_setattr now = { .mask = MDS_SETATTR_MTIME_NOW };
	struct mds_setattr at = { .mask = MDS_SETATTR_MTIME, .mtime = 5 };
	struct mds_setattr size = { .mask = MDS_SETATTR_SIZE };

	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &now, "f"), 0);
	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &at, "f"), -EPERM);
	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &size, "f"), 0);
	a.mode = S_IFREG | 0644;
	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &now, "f"), -EACCES);
	ck_assert_int_eq(mds_perm_setattr(&bob, &a, &size, "f"), -EACCES);
	ck_assert_int_eq(mds_perm_setattr(&alice, &a, &at, "f"), 0);
}
END_TEST

START_TEST(test_a_lock_needs_the_right_it_locks_for)
{
	struct mds_attr a = file(0644, ALICE, ALICE);

	ck_assert_int_eq(mds_perm_lock(&bob, &a, MDS_LOCK_READ, "f"), 0);
	ck_assert_int_eq(mds_perm_lock(&bob, &a, MDS_LOCK_WRITE, "f"),
			 -EACCES);
	ck_assert_int_eq(mds_perm_lock(&bob, &a, MDS_LOCK_UNLOCK, "f"), 0);
	ck_assert_int_eq(mds_perm_owner(&bob, &a, "set the layout of", "f"),
			 -EPERM);
}
END_TEST

START_TEST(test_a_setgid_directory_gives_its_group)
{
	struct mds_attr d = dir(02775, 0, SHARED);
	uint32_t mode = 0755;

	ck_assert_uint_eq(mds_perm_new_gid(&bob, &d, &mode, true), SHARED);
	ck_assert_uint_eq(mode, 02755);
	mode = 0644;
	ck_assert_uint_eq(mds_perm_new_gid(&bob, &d, &mode, false), SHARED);
	ck_assert_uint_eq(mode, 0644);
	d.mode = S_IFDIR | 0775;
	ck_assert_uint_eq(mds_perm_new_gid(&bob, &d, &mode, false), BOB);
}
END_TEST

START_TEST(test_root_squash_makes_root_nobody)
{
	struct mds_cred c;

	mds_cred_resolve(&c, 0, 0, true);
	ck_assert_uint_eq(c.uid, MDS_NOBODY);
	ck_assert_uint_eq(c.gid, MDS_NOBODY);
	mds_cred_resolve(&c, 0, 0, false);
	ck_assert_uint_eq(c.uid, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mds_perm");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, test_each_class_gets_its_own_bits);
	tcase_add_test(tc, test_a_supplementary_group_selects_the_group_class);
	tcase_add_test(tc, test_root_passes_all_but_execute_without_an_x_bit);
	tcase_add_test(tc, test_changing_a_directory_needs_write_and_search);
	tcase_add_test(tc, test_a_sticky_directory_keeps_others_entries);
	tcase_add_test(tc,
		       test_chmod_is_the_owners_and_drops_setgid_outside_the_group);
	tcase_add_test(tc, test_chown_gives_away_only_as_root_and_drops_setuid);
	tcase_add_test(tc, test_times_now_need_write_explicit_times_the_owner);
	tcase_add_test(tc, test_a_lock_needs_the_right_it_locks_for);
	tcase_add_test(tc, test_a_setgid_directory_gives_its_group);
	tcase_add_test(tc, test_root_squash_makes_root_nobody);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
