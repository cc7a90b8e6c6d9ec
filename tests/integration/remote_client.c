// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * remote_client.c -- the native API on clf://HOST:PORT names, with no
 * configuration file, for test_remote_names.sh.
 *
 *   remote_client URL N
 *       CLF_init(URL) ("clf://HOST:PORT"): the iods come from metad;
 *       CLF_mkdir URL/native, CLF_open(O_CREAT) URL/native/f, write N
 *       pattern bytes, close; CLF_stat gives N; reopen read-only, read
 *       them back and compare; CLF_rename to f2, CLF_unlink it, CLF_rmdir;
 *       a name on another instance (another port) is refused with
 *       -EXDEV, and so is a malformed URL, with -EINVAL.
 *   remote_client URL N PATH
 *       only write the pattern to URL/PATH (for the other paths to check)
 *   remote_client URL N --metads M
 *       a namespace over M metads, which INSTANCE names: CLF_mkdir of
 *       URL/spread/d0..d23 lands directories on each of the M metads
 *       (inode numbers name theirs); N bytes written in a directory of
 *       one metad, renamed into one of another, read back there; all
 *       removed again.
 *
 * Exits 0 when every check passed, 1 with a message on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clf.h"
#include "clf_proto.h"

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "FAIL: %s (%s)\n", what, CLF_Last_error());
		failures++;
	}
}

static unsigned char pattern(long i)
{
	return (unsigned char)(i * 131 + (i >> 9) + 7);
}

static int write_file(const char *name, long n)
{
	unsigned char *buf = malloc(n ? n : 1);
	int fd, ok;

	for (long i = 0; i < n; i++)
		buf[i] = pattern(i);
	fd = CLF_open(name, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	check(fd >= 0, "CLF_open O_CREAT of a clf:// name");
	if (fd < 0) {
		free(buf);
		return -1;
	}
	ok = CLF_write(fd, buf, (size_t)n) == n;
	check(ok, "CLF_write");
	check(CLF_close(fd) == 0, "CLF_close");
	free(buf);
	return ok ? 0 : -1;
}

/* Read name back: n pattern bytes. */
static void read_back(const char *name, long n)
{
	unsigned char *buf = calloc(1, n ? n : 1);
	int fd = CLF_open(name, O_RDONLY);

	check(fd >= 0, "CLF_open O_RDONLY of a clf:// name");
	if (fd >= 0) {
		long bad = -1;

		check(CLF_read(fd, buf, (size_t)n) == n, "CLF_read");
		for (long i = 0; i < n && bad < 0; i++)
			if (buf[i] != pattern(i))
				bad = i;
		if (bad >= 0)
			fprintf(stderr, "FAIL: byte %ld of %s read back differs\n",
				bad, name);
		failures += bad >= 0;
		CLF_close(fd);
	}
	free(buf);
}

#define SPREAD_DIRS 24

/* The namespace over m metads (see the head of the file). */
static int spread(const char *url, long n, unsigned m)
{
	char dir[SPREAD_DIRS][1024], top[960], from[1100], to[1100];
	unsigned on[SPREAD_DIRS], seen = 0, nseen = 0;
	int a = -1, b = -1;
	struct stat st;

	snprintf(top, sizeof(top), "%s/spread", url);
	check(CLF_mkdir(top, 0755) == 0, "CLF_mkdir URL/spread");
	for (int i = 0; i < SPREAD_DIRS; i++) {
		snprintf(dir[i], sizeof(dir[i]), "%s/d%d", top, i);
		check(CLF_mkdir(dir[i], 0755) == 0, "CLF_mkdir URL/spread/dI");
		check(CLF_stat(dir[i], &st) == 0 && S_ISDIR(st.st_mode),
		      "CLF_stat of a directory on any metad");
		on[i] = CLF_PROTO_INO_METAD((uint64_t)st.st_ino);
		if (on[i] < 32 && !(seen & (1u << on[i]))) {
			seen |= 1u << on[i];
			nseen++;
		}
		if (a < 0)
			a = i;
		else if (b < 0 && on[i] != on[a])
			b = i;
	}
	if (nseen != m) {
		fprintf(stderr, "FAIL: %d directories landed on %u metads, not %u\n",
			SPREAD_DIRS, nseen, m);
		return 1;
	}
	if (b < 0)
		return 1;
	snprintf(from, sizeof(from), "%s/f", dir[a]);
	snprintf(to, sizeof(to), "%s/g", dir[b]);
	write_file(from, n);
	check(CLF_rename(from, to) == 0, "CLF_rename across metads");
	check(CLF_stat(from, &st) == -ENOENT, "the old name is gone");
	check(CLF_stat(to, &st) == 0 && st.st_size == n,
	      "CLF_stat of the renamed file gives the size written");
	read_back(to, n);
	check(CLF_unlink(to) == 0, "CLF_unlink of the renamed file");
	for (int i = 0; i < SPREAD_DIRS; i++)
		check(CLF_rmdir(dir[i]) == 0, "CLF_rmdir of a directory on any metad");
	check(CLF_rmdir(top) == 0, "CLF_rmdir URL/spread");
	check(CLF_finalize() == 0, "CLF_finalize");
	if (!failures)
		printf("native API on %s: %d directories on all %u metads, %ld bytes renamed from metad %u to metad %u and read back\n",
		       url, SPREAD_DIRS, m, n, on[a], on[b]);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	char name[1024], other[1024], moved[1024], dir[1024];
	const char *url, *colon;
	unsigned char *buf;
	struct stat st;
	long n;
	int fd;

	if (argc != 3 && argc != 4 && argc != 5) {
		fprintf(stderr, "usage: remote_client URL N [PATH | --metads M]\n");
		return 2;
	}
	url = argv[1];
	n = atol(argv[2]);
	if (CLF_init(url)) {
		fprintf(stderr, "FAIL: CLF_init(%s): %s\n", url, CLF_Last_error());
		return 1;
	}
	if (argc == 5)
		return spread(url, n, (unsigned)atoi(argv[4]));
	if (argc == 4) {
		snprintf(name, sizeof(name), "%s/%s", url, argv[3]);
		write_file(name, n);
		CLF_finalize();
		return failures ? 1 : 0;
	}
	snprintf(dir, sizeof(dir), "%s/native", url);
	snprintf(name, sizeof(name), "%s/native/f", url);
	snprintf(moved, sizeof(moved), "%s/native/f2", url);
	check(CLF_mkdir(dir, 0755) == 0, "CLF_mkdir of a clf:// name");
	write_file(name, n);
	check(CLF_stat(name, &st) == 0 && st.st_size == n,
	      "CLF_stat of a clf:// name gives the size written");

	buf = calloc(1, n ? n : 1);
	fd = CLF_open(name, O_RDONLY);
	check(fd >= 0, "CLF_open O_RDONLY of a clf:// name");
	if (fd >= 0) {
		long bad = -1;

		check(CLF_read(fd, buf, (size_t)n) == n, "CLF_read");
		for (long i = 0; i < n && bad < 0; i++)
			if (buf[i] != pattern(i))
				bad = i;
		if (bad >= 0)
			fprintf(stderr, "FAIL: byte %ld read back differs\n", bad);
		failures += bad >= 0;
		CLF_close(fd);
	}
	free(buf);

	/* Plain paths still name the same instance's files. */
	check(CLF_stat("/native/f", &st) == 0 && st.st_size == n,
	      "CLF_stat of the plain path");
	check(CLF_rename(name, moved) == 0, "CLF_rename between clf:// names");
	check(CLF_unlink(moved) == 0, "CLF_unlink of a clf:// name");
	check(CLF_rmdir(dir) == 0, "CLF_rmdir of a clf:// name");
	check(CLF_stat(name, &st) == -ENOENT, "the file is gone");

	/* Another instance (metad's port + 1000): one per process. */
	colon = strrchr(url, ':');
	snprintf(other, sizeof(other), "%.*s:%d/x", (int)(colon - url), url,
		 atoi(colon + 1) + 1000);
	check(CLF_open(other, O_RDONLY) == -EXDEV,
	      "a clf:// name of another instance is refused with EXDEV");
	check(CLF_stat("clf://:7000/x", &st) == -EINVAL,
	      "a clf:// name without a host is refused with EINVAL");

	check(CLF_finalize() == 0, "CLF_finalize");
	if (!failures)
		printf("native API on %s: mkdir, create, write, stat, read, rename, unlink, rmdir; EXDEV, EINVAL\n",
		       url);
	return failures ? 1 : 0;
}
