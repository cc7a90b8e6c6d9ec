// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * crash_shim.c -- an LD_PRELOAD layer for the crash-consistency test:
 * every sync a daemon makes of something under $CLF_TEST_CRASH_ROOT is
 * recorded in the shadow directory $CLF_TEST_CRASH_SHADOW (see
 * crash_shadow.h), so the test can rebuild the tree a power cut would
 * leave at any moment and start the daemons on it.
 *
 * What makes a file durable: fsync(2) and fdatasync(2) of it, a write
 * through a descriptor opened O_SYNC or O_DSYNC (LMDB writes its meta
 * pages so), sync(2) and syncfs(2).  A directory's entries: fsync of the
 * directory.  A shadow that cannot be written aborts the daemon, so a
 * broken harness never passes as a durable store.
 */
#define _GNU_SOURCE
#include "crash_shadow.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* One snapshot at a time: the later sync must also be the later copy. */
static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;

static bool under_root(int fd)
{
	const char *root = getenv("CLF_TEST_CRASH_ROOT");
	char link[64], path[PATH_MAX];
	size_t len;
	ssize_t n;

	if (!root || !getenv("CLF_TEST_CRASH_SHADOW"))
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return false;
	path[n] = '\0';
	len = strlen(root);
	return !strncmp(path, root, len) && (path[len] == '/' || !path[len]);
}

static void record(int fd)
{
	int err;

	if (!under_root(fd))
		return;
	pthread_mutex_lock(&shadow_lock);
	err = crash_shadow_sync_fd(getenv("CLF_TEST_CRASH_SHADOW"), fd);
	pthread_mutex_unlock(&shadow_lock);
	if (err) {
		fprintf(stderr, "crash_shim: cannot record fd %d: %s\n", fd,
			strerror(-err));
		abort();
	}
}

static void record_if_sync(int fd, ssize_t written)
{
	int flags;

	if (written <= 0)
		return;
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0 && (flags & (O_SYNC | O_DSYNC)))
		record(fd);
}

static void record_all(void)
{
	const char *root = getenv("CLF_TEST_CRASH_ROOT");
	const char *shadow = getenv("CLF_TEST_CRASH_SHADOW");

	if (!root || !shadow)
		return;
	pthread_mutex_lock(&shadow_lock);
	if (crash_shadow_sync_tree(shadow, root))
		abort();
	pthread_mutex_unlock(&shadow_lock);
}

/* The libc function this one wraps, looked up once. */
#define REAL(name) \
	static __typeof__(name) *real; \
	if (!real) \
		real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

int fsync(int fd)
{
	REAL(fsync);
	int rc = real(fd);

	if (rc == 0)
		record(fd);
	return rc;
}

int fdatasync(int fd)
{
	REAL(fdatasync);
	int rc = real(fd);

	if (rc == 0)
		record(fd);
	return rc;
}

void sync(void)
{
	REAL(sync);
	real();
	record_all();
}

int syncfs(int fd)
{
	REAL(syncfs);
	int rc = real(fd);

	if (rc == 0)
		record_all();
	return rc;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(write);
	ssize_t n = real(fd, buf, len);

	record_if_sync(fd, n);
	return n;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	REAL(pwrite);
	ssize_t n = real(fd, buf, len, off);

	record_if_sync(fd, n);
	return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	REAL(pwrite64);
	ssize_t n = real(fd, buf, len, off);

	record_if_sync(fd, n);
	return n;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(writev);
	ssize_t n = real(fd, iov, cnt);

	record_if_sync(fd, n);
	return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(pwritev);
	ssize_t n = real(fd, iov, cnt, off);

	record_if_sync(fd, n);
	return n;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	REAL(pwritev64);
	ssize_t n = real(fd, iov, cnt, off);

	record_if_sync(fd, n);
	return n;
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
		 int flags)
{
	REAL(pwritev2);
	ssize_t n = real(fd, iov, cnt, off, flags);

	/* RWF_DSYNC / RWF_SYNC make this one write durable. */
	if (n > 0 && (flags & (RWF_DSYNC | RWF_SYNC)))
		record(fd);
	else
		record_if_sync(fd, n);
	return n;
}
