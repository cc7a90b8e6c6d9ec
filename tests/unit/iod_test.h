/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_test.h -- what the iod unit tests share: a fresh directory per test,
 * removed at the end, and direct access to the files behind subfiles.
 */
#ifndef CLF_IOD_TEST_H
#define CLF_IOD_TEST_H

/* Include first, after #define _GNU_SOURCE (for nftw and mount). */
#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iod_store.h"

/* A new directory for one test; the caller removes it with rm_tree. */
static inline char *tmp_dir(void)
{
	char *d = strdup("/tmp/clf-iod-test.XXXXXX");

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

/* Remove a test directory and everything in it, and free its name. */
static inline void rm_tree(char *dir)
{
	ck_assert_int_eq(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(dir);
}

/*
 * Mount a tmpfs of `size` bytes on dir.  0, or -1 when mounting is not
 * possible here (not root, no tmpfs); the caller then skips its test.
 */
static inline int mount_small_tmpfs(const char *dir, long size, int readonly)
{
	char opts[64];

	snprintf(opts, sizeof(opts), "size=%ld", size);
	return mount("tmpfs", dir, "tmpfs", readonly ? MS_RDONLY : 0, opts);
}

/*
 * The whole content of a subfile's file, read directly (not through the
 * store), in a new buffer; *len is its length (0 and NULL if missing).
 */
static inline unsigned char *slurp_subfile(struct iod_store *st, uint64_t file,
					   uint32_t index, size_t *len)
{
	char path[4096];
	unsigned char *buf;
	struct stat sb;
	ssize_t n;
	int fd;

	ck_assert_int_gt(iod_store_path(st, file, index, path, sizeof(path)),
			 0);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		*len = 0;
		return NULL;
	}
	ck_assert_int_eq(fstat(fd, &sb), 0);
	buf = malloc(sb.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	n = pread(fd, buf, sb.st_size, 0);
	ck_assert_int_eq(n, sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

#endif /* CLF_IOD_TEST_H */
