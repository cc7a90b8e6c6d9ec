// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * crash_shadow.c -- record the durable state of a tree, and rebuild the
 * tree a power cut would leave (see crash_shadow.h).
 *
 * This code also runs inside crash_shim.so, which wraps write(2) and
 * friends: it writes only through stdio, copy_file_range(2) and the raw
 * system call, never through the wrapped symbols.
 */
#define _GNU_SOURCE
#include "crash_shadow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_LEN 80

static int key_of(int dirfd, const char *name, int flags, char *key,
		  struct statx *stx)
{
	if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_BTIME, stx))
		return -errno;
	snprintf(key, KEY_LEN, "%x.%x-%llx-%lld.%09u", stx->stx_dev_major,
		 stx->stx_dev_minor, (unsigned long long)stx->stx_ino,
		 (long long)stx->stx_btime.tv_sec, stx->stx_btime.tv_nsec);
	return 0;
}

static ssize_t raw_write(int fd, const void *buf, size_t len)
{
	return syscall(SYS_write, fd, buf, len);
}

/* Copy all of src into a new file at path (through a temporary name). */
static int save_content(int src, const char *path)
{
	char tmp[PATH_MAX + 32], buf[65536];
	loff_t in = 0;
	int dst, err = 0;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)syscall(SYS_gettid));
	dst = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (dst < 0)
		return -errno;
	while ((n = copy_file_range(src, &in, dst, NULL, 1 << 30, 0)) > 0)
		;
	if (n < 0) {		/* another file system: copy by hand */
		while ((n = pread(src, buf, sizeof(buf), in)) > 0) {
			if (raw_write(dst, buf, n) != n) {
				n = -1;
				break;
			}
			in += n;
		}
	}
	if (n < 0)
		err = -errno;
	close(dst);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int save_file(const char *shadow, int fd, const char *key)
{
	char path[PATH_MAX], proc[64];
	int src, err;

	/* A fresh descriptor: fd may be write-only, or at some offset. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	src = open(proc, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/f/%s", shadow, key);
	err = save_content(src, path);
	close(src);
	return err;
}

static int save_link(const char *shadow, int dirfd, const char *name,
		     const char *key)
{
	char target[PATH_MAX], path[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	FILE *f;

	if (n < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/f/%s", shadow, key);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fwrite(target, 1, n, f);
	return fclose(f) ? -errno : 0;
}

static char kind_of(mode_t mode)
{
	return S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISREG(mode) ? 'f'
								       : 0;
}

/*
 * Record the entries of directory fd.  A symlink's target is durable
 * with the entry that names it (it is written when the link is made).
 */
static int save_dir(const char *shadow, int fd, const char *key)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32], ekey[KEY_LEN];
	struct dirent *e;
	struct statx stx;
	int dfd, err = 0;
	FILE *out;
	DIR *d;

	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/d/%s", shadow, key);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)syscall(SYS_gettid));
	out = fopen(tmp, "we");
	if (!out) {
		closedir(d);
		return -errno;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (key_of(dirfd(d), e->d_name, 0, ekey, &stx))
			continue;	/* gone meanwhile */
		if (!kind_of(stx.stx_mode))
			continue;	/* fifos and the like: not ours */
		if (S_ISLNK(stx.stx_mode))
			save_link(shadow, dirfd(d), e->d_name, ekey);
		fprintf(out, "%c\t%o\t%s\t%s\n", kind_of(stx.stx_mode),
			stx.stx_mode & 07777, ekey, e->d_name);
	}
	closedir(d);
	if (fclose(out))
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	return err;
}

static int make_dirs(const char *shadow)
{
	char path[PATH_MAX];

	mkdir(shadow, 0700);
	snprintf(path, sizeof(path), "%s/f", shadow);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/d", shadow);
	mkdir(path, 0700);
	return access(path, W_OK) ? -errno : 0;
}

int crash_shadow_sync_fd(const char *shadow, int fd)
{
	char key[KEY_LEN];
	struct statx stx;
	int err = key_of(fd, "", AT_EMPTY_PATH, key, &stx);

	if (err)
		return err;
	if (S_ISDIR(stx.stx_mode))
		return save_dir(shadow, fd, key);
	if (S_ISREG(stx.stx_mode))
		return save_file(shadow, fd, key);
	return 0;
}

static int sync_tree_at(const char *shadow, int fd)
{
	struct dirent *e;
	int err = crash_shadow_sync_fd(shadow, fd), dfd;
	DIR *d;

	if (err)
		return err;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		struct stat st;
		int child;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			continue;
		child = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC |
						     O_NOFOLLOW);
		if (child < 0)
			continue;
		err = S_ISDIR(st.st_mode) ? sync_tree_at(shadow, child)
					  : crash_shadow_sync_fd(shadow, child);
		close(child);
	}
	closedir(d);
	return err;
}

int crash_shadow_sync_tree(const char *shadow, const char *root)
{
	char key[KEY_LEN], path[PATH_MAX];
	struct statx stx;
	int fd, err = make_dirs(shadow);
	FILE *f;

	if (err)
		return err;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = key_of(fd, "", AT_EMPTY_PATH, key, &stx);
	if (!err) {
		snprintf(path, sizeof(path), "%s/root", shadow);
		f = fopen(path, "we");
		if (!f || fprintf(f, "%s\n", key) < 0 || fclose(f))
			err = -EIO;
	}
	if (!err)
		err = sync_tree_at(shadow, fd);
	close(fd);
	return err;
}

static int copy_saved(const char *shadow, const char *key, const char *out,
		      mode_t mode)
{
	char path[PATH_MAX];
	int src, dst, err = 0;
	loff_t in = 0;
	ssize_t n;

	dst = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (dst < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/f/%s", shadow, key);
	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src >= 0) {		/* else never synced: empty */
		while ((n = copy_file_range(src, &in, dst, NULL, 1 << 30, 0)) > 0)
			;
		if (n < 0)
			err = -errno;
		close(src);
	}
	fchmod(dst, mode);
	close(dst);
	return err;
}

static int build_dir(const char *shadow, const char *key, const char *out,
		     int depth)
{
	char path[PATH_MAX], line[PATH_MAX + 2 * KEY_LEN], sub[PATH_MAX * 2];
	int err = 0;
	FILE *f;

	if (depth > 64)
		return -ELOOP;
	snprintf(path, sizeof(path), "%s/d/%s", shadow, key);
	f = fopen(path, "re");
	if (!f)			/* never synced: its entries are lost */
		return errno == ENOENT ? 0 : -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		char *kind = strtok(line, "\t"), *mode = strtok(NULL, "\t");
		char *ekey = strtok(NULL, "\t"), *name = strtok(NULL, "\n");
		mode_t m;

		if (!kind || !mode || !ekey || !name) {
			err = -EINVAL;
			break;
		}
		m = strtoul(mode, NULL, 8);
		snprintf(sub, sizeof(sub), "%s/%s", out, name);
		if (*kind == 'd') {
			if (mkdir(sub, m) || chmod(sub, m))
				err = -errno;
			else
				err = build_dir(shadow, ekey, sub, depth + 1);
		} else if (*kind == 'l') {
			char target[PATH_MAX] = "", lpath[PATH_MAX];
			FILE *t;

			snprintf(lpath, sizeof(lpath), "%s/f/%s", shadow, ekey);
			t = fopen(lpath, "re");
			if (t) {
				target[fread(target, 1, sizeof(target) - 1, t)] = 0;
				fclose(t);
			}
			if (symlink(target, sub))
				err = -errno;
		} else {
			err = copy_saved(shadow, ekey, sub, m);
		}
	}
	fclose(f);
	return err;
}

int crash_shadow_build(const char *shadow, const char *out)
{
	char path[PATH_MAX], key[KEY_LEN] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/root", shadow);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(key, sizeof(key), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	key[strcspn(key, "\n")] = '\0';
	if (mkdir(out, 0700))
		return -errno;
	return build_dir(shadow, key, out, 0);
}
