// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mount_helper.c -- the native API's side of tests/integration/
 * test_mount.sh: files written through the mount are read back with
 * CLF_read and the reverse, throughput through CLF_write/CLF_read, and
 * renameat2(RENAME_NOREPLACE), which no shell tool calls.
 *
 *   mount_helper put CONF PATH < DATA    write stdin to clf file PATH
 *   mount_helper get CONF PATH > DATA    write clf file PATH to stdout
 *   mount_helper exists CONF PATH        exit 0 if PATH exists, 1 if not
 *   mount_helper bench CONF PATH MIB     write then read MIB MiB in 4 MiB
 *                                        requests; print MB/s of each
 *   mount_helper noreplace FROM TO       renameat2(FROM, TO,
 *                                        RENAME_NOREPLACE); prints the
 *                                        errno name or "ok"
 *   mount_helper hold CONF PATH MS < DATA  write stdin to PATH, print
 *                                        "written", wait MS ms and exit
 *                                        without closing or syncing it
 *   mount_helper append CONF PATH N TAG  append N lines "TAG line I" to
 *                                        PATH (O_APPEND, one write each);
 *                                        print the microseconds per append
 *   mount_helper lock CONF PATH MS       write-lock all of PATH
 *                                        (CLF_FCNTL_SETLKW), print
 *                                        "locked", hold it MS ms, print
 *                                        "releasing EPOCH_MS", exit
 *   mount_helper links CONF DIR          of DIR/g (a second name of f),
 *                                        DIR/l (a symlink) and DIR/p (a
 *                                        fifo) made by the mount, print
 *                                        what CLF_stat and CLF_readlink
 *                                        say and what CLF_open of l and
 *                                        p gives; then CLF_link f as h
 *                                        and CLF_symlink nl -> f
 *
 *   mount_helper replace CONF PATH MPATH  PATH (a clf name) is MPATH on
 *                                        a mount: a stat of MPATH, then
 *                                        PATH replaced by a new file with
 *                                        CLF_rename (and with CLF_unlink,
 *                                        CLF_open), then MPATH opened and
 *                                        read at once: the new bytes, no
 *                                        error; prints the seconds from
 *                                        the stat to the read (fails if
 *                                        none was within 0.9 s)
 *
 * Exit status: 0 success, 1 failure (printed), 2 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"

#define CHUNK (4 << 20)

static int fail(const char *what, const char *path, int err)
{
	fprintf(stderr, "mount_helper: %s %s: %s (%s)\n", what, path,
		strerror(-err), CLF_Last_error());
	return 1;
}

/* Write stdin to path; hold_ms >= 0: then wait that long, not closing. */
static int put(const char *path, long hold_ms)
{
	char *buf = malloc(CHUNK);
	int fd = CLF_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644), rc = 0;
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		return fail("open", path, fd < 0 ? fd : -ENOMEM);
	}
	while ((n = read(0, buf, CHUNK)) > 0) {
		ssize_t w = CLF_write(fd, buf, n);

		if (w != n) {
			rc = fail("write", path, w < 0 ? (int)w : -EIO);
			break;
		}
	}
	if (n < 0)
		rc = fail("read stdin for", path, -errno);
	if (hold_ms >= 0 && !rc) {
		struct timespec ts = { hold_ms / 1000,
				       (hold_ms % 1000) * 1000000 };

		printf("written\n");
		fflush(stdout);
		nanosleep(&ts, NULL);
		_exit(0);	/* no close: nothing reported to metad */
	}
	n = CLF_close(fd);
	if (n && !rc)
		rc = fail("close", path, (int)n);
	free(buf);
	return rc;
}

static int get(const char *path)
{
	char *buf = malloc(CHUNK);
	int fd = CLF_open(path, O_RDONLY), rc = 0;
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		return fail("open", path, fd < 0 ? fd : -ENOMEM);
	}
	while ((n = CLF_read(fd, buf, CHUNK)) > 0) {
		if (fwrite(buf, 1, n, stdout) != (size_t)n) {
			rc = fail("write stdout for", path, -EIO);
			break;
		}
	}
	if (n < 0)
		rc = fail("read", path, (int)n);
	CLF_close(fd);
	free(buf);
	return rc;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench(const char *path, long mib)
{
	long chunks = mib / (CHUNK >> 20);
	char *buf = malloc(CHUNK);
	double t0, t1, t2;
	int fd, err;

	if (!buf || chunks < 1)
		return fail("bench", path, -EINVAL);
	memset(buf, 0x5a, CHUNK);
	fd = CLF_open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		return fail("open", path, fd);
	t0 = now();
	for (long i = 0; i < chunks; i++)
		if (CLF_write(fd, buf, CHUNK) != CHUNK)
			return fail("write", path, -EIO);
	err = CLF_sync(fd);
	if (err)
		return fail("sync", path, err);
	t1 = now();
	CLF_lseek(fd, 0, SEEK_SET);
	for (long i = 0; i < chunks; i++)
		if (CLF_read(fd, buf, CHUNK) != CHUNK)
			return fail("read", path, -EIO);
	t2 = now();
	CLF_close(fd);
	printf("native write %.0f MB/s\nnative read %.0f MB/s\n",
	       chunks * (double)CHUNK / 1e6 / (t1 - t0),
	       chunks * (double)CHUNK / 1e6 / (t2 - t1));
	free(buf);
	return 0;
}

/* Write the NUL-ended text to clf file path, created or emptied. */
static int put_text(const char *path, const char *text)
{
	int fd = CLF_open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644), err;
	ssize_t n = (ssize_t)strlen(text);

	if (fd < 0)
		return fail("open", path, fd);
	if (CLF_write(fd, text, n) != n) {
		CLF_close(fd);
		return fail("write", path, -EIO);
	}
	err = CLF_close(fd);
	return err ? fail("close", path, err) : 0;
}

/*
 * Another client replaces the name a mount has just looked up (its
 * entry and inode trusted for a while): the mount's open must find the
 * new file, not fail on the old one, gone.
 */
static int replace(const char *path, const char *mpath)
{
	char tmp[4096], want[64], got[64];
	int i, fd, err, within = 0;
	struct stat st;
	ssize_t n;
	double t0;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (put_text(path, "version 0\n"))
		return 1;
	for (i = 1; i <= 6; i++) {
		if (stat(mpath, &st))
			return fail("stat through the mount", mpath, -errno);
		t0 = now();
		snprintf(want, sizeof(want), "version %d\n", i);
		if (i % 2) {
			/* A new file renamed over the name. */
			if (put_text(tmp, want))
				return 1;
			err = CLF_rename(tmp, path);
			if (err)
				return fail("rename to", path, err);
		} else {
			/* Removed, then created again. */
			err = CLF_unlink(path);
			if (err)
				return fail("unlink", path, err);
			if (put_text(path, want))
				return 1;
		}
		fd = open(mpath, O_RDONLY);
		if (fd < 0)
			return fail("open through the mount (round)", mpath,
				    -errno);
		n = read(fd, got, sizeof(got) - 1);
		close(fd);
		if (n < 0)
			return fail("read through the mount", mpath, -errno);
		got[n] = '\0';
		printf("round %d: %.3f s from the stat to the read\n", i,
		       now() - t0);
		if (strcmp(got, want)) {
			fprintf(stderr, "mount_helper: %s: read \"%s\", "
				"want \"%s\"\n", mpath, got, want);
			return 1;
		}
		if (now() - t0 < 0.9)
			within++;
	}
	if (!within) {
		fprintf(stderr, "mount_helper: no replacement was within "
			"0.9 s of the stat: nothing tested\n");
		return 1;
	}
	return 0;
}

static int noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		printf("ok\n");
	else
		printf("%s\n", errno == EEXIST ? "EEXIST" : strerror(errno));
	return 0;
}

/* A native process holding a write lock: the mount must see it. */
static int hold_lock(const char *path, long ms)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	int fd = CLF_open(path, O_RDWR), err;

	if (fd < 0)
		return fail("open", path, fd);
	err = CLF_fcntl(fd, CLF_FCNTL_SETLKW, &fl);
	if (err)
		return fail("lock", path, err);
	printf("locked\n");
	fflush(stdout);
	nanosleep(&ts, NULL);
	/* When the lock goes, on the wall clock a waiter can compare. */
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("releasing %lld\n",
	       (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	fflush(stdout);
	err = CLF_close(fd);
	return err ? fail("close", path, err) : 0;
}

/*
 * Append n lines "tag line i" with one CLF_write each.  Prints the mean
 * time per append, and the best mean of a batch of 100 (what a loaded
 * machine disturbs least).
 */
static int append_lines(const char *path, long n, const char *tag)
{
	int fd = CLF_open(path, O_WRONLY | O_APPEND);
	double t0, tb, best = 1e9;
	char line[256];

	if (fd < 0)
		return fail("open", path, fd);
	t0 = tb = now();
	for (long i = 1; i <= n; i++) {
		int len = snprintf(line, sizeof(line), "%s line %ld\n", tag, i);
		ssize_t w = CLF_write(fd, line, len);

		if (w != len)
			return fail("append to", path, w < 0 ? (int)w : -EIO);
		if (i % 100 == 0) {
			double t = now();

			if ((t - tb) * 1e4 < best)
				best = (t - tb) * 1e4;
			tb = t;
		}
	}
	printf("%.1f us per append (best 100: %.1f)\n",
	       (now() - t0) * 1e6 / (n ? n : 1), best);
	return CLF_close(fd) ? fail("close", path, -EIO) : 0;
}

static const char *kind(mode_t m)
{
	return S_ISREG(m) ? "S_IFREG" : S_ISLNK(m) ? "S_IFLNK" :
	       S_ISFIFO(m) ? "S_IFIFO" : S_ISDIR(m) ? "S_IFDIR" : "other";
}

static void open_result(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = CLF_open(path, O_RDONLY, 0);
	printf("open %s: %s\n", name, fd == -ELOOP ? "ELOOP" :
	       fd == -ENXIO ? "ENXIO" : fd >= 0 ? "opened" : strerror(-fd));
	if (fd >= 0)
		CLF_close(fd);
}

static int links(const char *dir)
{
	char p[4096], q[4096], target[4096];
	struct stat st;
	ssize_t n;
	int err;

	snprintf(p, sizeof(p), "%s/g", dir);
	err = CLF_stat(p, &st);
	if (err)
		return fail("stat", p, err);
	printf("g: %s nlink %lu\n", kind(st.st_mode), (unsigned long)st.st_nlink);
	snprintf(p, sizeof(p), "%s/l", dir);
	err = CLF_stat(p, &st);
	n = err ? err : CLF_readlink(p, target, sizeof(target) - 1);
	if (n < 0)
		return fail("stat or readlink", p, (int)n);
	target[n] = '\0';
	printf("l: %s '%s'\n", kind(st.st_mode), target);
	snprintf(p, sizeof(p), "%s/p", dir);
	err = CLF_stat(p, &st);
	if (err)
		return fail("stat", p, err);
	printf("p: %s\n", kind(st.st_mode));
	open_result(dir, "l");
	open_result(dir, "p");
	snprintf(p, sizeof(p), "%s/f", dir);
	snprintf(q, sizeof(q), "%s/h", dir);
	err = CLF_link(p, q);
	if (!err)
		err = CLF_stat(p, &st);
	if (err)
		return fail("link", q, err);
	printf("native link: nlink %lu\n", (unsigned long)st.st_nlink);
	snprintf(q, sizeof(q), "%s/nl", dir);
	err = CLF_symlink("f", q);
	n = err ? err : CLF_readlink(q, target, 1);
	if (n != 1 || target[0] != 'f')
		return fail("symlink", q, n < 0 ? (int)n : -EIO);
	printf("native symlink: ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	int err, rc;

	if (argc == 4 && !strcmp(argv[1], "noreplace"))
		return noreplace(argv[2], argv[3]);
	if (argc < 4)
		goto usage;
	err = CLF_init(argv[2]);
	if (err)
		return fail("connect with", argv[2], err);
	if (!strcmp(argv[1], "put") && argc == 4)
		rc = put(argv[3], -1);
	else if (!strcmp(argv[1], "hold") && argc == 5)
		rc = put(argv[3], atol(argv[4]));
	else if (!strcmp(argv[1], "get") && argc == 4)
		rc = get(argv[3]);
	else if (!strcmp(argv[1], "exists") && argc == 4)
		rc = CLF_stat(argv[3], &st) == 0 ? 0 : 1;
	else if (!strcmp(argv[1], "bench") && argc == 5)
		rc = bench(argv[3], atol(argv[4]));
	else if (!strcmp(argv[1], "lock") && argc == 5)
		rc = hold_lock(argv[3], atol(argv[4]));
	else if (!strcmp(argv[1], "append") && argc == 6)
		rc = append_lines(argv[3], atol(argv[4]), argv[5]);
	else if (!strcmp(argv[1], "links") && argc == 4)
		rc = links(argv[3]);
	else if (!strcmp(argv[1], "replace") && argc == 5)
		rc = replace(argv[3], argv[4]);
	else
		rc = 2;
	CLF_finalize();
	if (rc != 2)
		return rc;
usage:
	fprintf(stderr, "usage: mount_helper put|get|exists CONF PATH, "
			"bench CONF PATH MIB, noreplace FROM TO, "
			"lock CONF PATH MS, append CONF PATH N TAG, "
			"links CONF DIR, replace CONF PATH MPATH\n");
	return 2;
}
