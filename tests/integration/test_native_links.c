// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_links.c -- symbolic and hard links through the native API
 * against real daemons: CLF_symlink, CLF_readlink, CLF_link; links are
 * kept, never followed (clf.h); a file's subfiles stay on the iods
 * until its last name is unlinked, and then leave.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "instance.h"

static struct instance inst;

static void start(void)
{
	ck_assert_int_eq(instance_start_native(&inst, 2, 5000, -1), 0);
}

static void stop(void)
{
	instance_stop_native(&inst);
}

static void put(const char *path, const char *data)
{
	int fd = CLF_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, data, strlen(data)),
			 (ssize_t)strlen(data));
	ck_assert_int_eq(CLF_close(fd), 0);
}

static void expect_data(const char *path, const char *want)
{
	char buf[256] = { 0 };
	int fd = CLF_open(path, O_RDONLY);

	ck_assert_msg(fd >= 0, "%s: %s", path, CLF_Last_error());
	ck_assert_int_eq(CLF_read(fd, buf, sizeof(buf) - 1),
			 (ssize_t)strlen(want));
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(CLF_close(fd), 0);
}

/* Subfiles of inode ino on the iods of the instance (iod_store.c names
 * them XX/<ino in 16 hex digits>.<index>). */
static char subfile_prefix[32];
static int subfiles_seen;

static int count_one(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	(void)st;
	if (flag == FTW_F && !strncmp(path + ftw->base, subfile_prefix,
				      strlen(subfile_prefix)))
		subfiles_seen++;
	return 0;
}

static int subfiles_of(uint64_t ino)
{
	snprintf(subfile_prefix, sizeof(subfile_prefix), "%016" PRIx64 ".",
		 ino);
	subfiles_seen = 0;
	ck_assert_int_eq(nftw(inst.dir, count_one, 16, FTW_PHYS), 0);
	return subfiles_seen;
}

/* Wait (bounded, 20 s) until ino has no subfile left: metad removes
 * them after the unlink's reply, from its durable queue. */
static int subfiles_after_removal(uint64_t ino)
{
	int n = subfiles_of(ino);

	for (int t = 0; n && t < 20000; t += 50) {
		usleep(50 * 1000);
		n = subfiles_of(ino);
	}
	return n;
}

START_TEST(test_symlinks_are_kept_and_never_followed)
{
	char buf[16];
	struct stat st;

	start();
	put("/f", "data");
	ck_assert_int_eq(CLF_mkdir("/d", 0755), 0);
	ck_assert_int_eq(CLF_symlink("../f", "/d/l"), 0);
	ck_assert_int_eq(CLF_stat("/d/l", &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(st.st_size, 4);
	ck_assert_int_eq(st.st_nlink, 1);
	ck_assert_int_eq(CLF_readlink("/d/l", buf, sizeof(buf)), 4);
	ck_assert_int_eq(memcmp(buf, "../f", 4), 0);
	/* readlink(2): at most size bytes, no NUL. */
	ck_assert_int_eq(CLF_readlink("/d/l", buf, 2), 2);
	ck_assert_int_eq(memcmp(buf, "..", 2), 0);
	ck_assert_int_eq(CLF_open("/d/l", O_RDONLY), -ELOOP);
	ck_assert_int_eq(CLF_open("/d/l", O_CREAT | O_WRONLY, 0644), -ELOOP);
	ck_assert_int_eq(CLF_stat("/d/l/x", &st), -ENOTDIR);
	ck_assert_int_eq(CLF_readlink("/f", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(CLF_readlink("/none", buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(CLF_symlink("x", "/f"), -EEXIST);
	ck_assert_int_eq(CLF_symlink("", "/e"), -ENOENT);
	ck_assert_int_eq(CLF_rename("/d/l", "/l2"), 0);
	ck_assert_int_eq(CLF_readlink("/l2", buf, sizeof(buf)), 4);
	ck_assert_int_eq(CLF_unlink("/l2"), 0);
	ck_assert_int_eq(CLF_rmdir("/d"), 0);
	expect_data("/f", "data");
	stop();
}
END_TEST

START_TEST(test_data_stays_until_the_last_name_is_unlinked)
{
	struct stat st, st2;
	uint64_t ino;
	int n;

	start();
	put("/f", "shared");
	ck_assert_int_eq(CLF_stat("/f", &st), 0);
	ino = st.st_ino;
	n = subfiles_of(ino);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(CLF_mkdir("/d", 0755), 0);
	ck_assert_int_eq(CLF_link("/f", "/d/g"), 0);
	ck_assert_int_eq(CLF_stat("/d/g", &st2), 0);
	ck_assert_uint_eq(st2.st_ino, ino);
	ck_assert_int_eq(st2.st_nlink, 2);
	ck_assert_int_eq(CLF_link("/f", "/d/g"), -EEXIST);
	ck_assert_int_eq(CLF_link("/d", "/d2"), -EPERM);
	ck_assert_int_eq(CLF_link("/none", "/x"), -ENOENT);
	/* Renaming one name onto the other does nothing (POSIX). */
	ck_assert_int_eq(CLF_rename("/f", "/d/g"), 0);
	ck_assert_int_eq(CLF_stat("/f", &st), 0);
	ck_assert_int_eq(st.st_nlink, 2);
	ck_assert_int_eq(CLF_unlink("/f"), 0);
	ck_assert_int_eq(CLF_stat("/d/g", &st2), 0);
	ck_assert_int_eq(st2.st_nlink, 1);
	expect_data("/d/g", "shared");
	ck_assert_int_eq(subfiles_of(ino), n);
	ck_assert_int_eq(CLF_unlink("/d/g"), 0);
	ck_assert_int_eq(subfiles_after_removal(ino), 0);
	stop();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("native_links");
	TCase *tc = tcase_create("against real daemons");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_symlinks_are_kept_and_never_followed);
	tcase_add_test(tc, test_data_stays_until_the_last_name_is_unlinked);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
