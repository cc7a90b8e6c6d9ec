// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsync_log.c -- an LD_PRELOAD shim for crash-consistency tests: every
 * fsync/fdatasync of the process is appended to the file named by
 * $CLF_TEST_FSYNC_LOG as "fsync <path>\n" (the path the descriptor
 * refers to).  A test reads the log to see what a power cut would keep:
 * a file's entry survives only if its directory was fsynced after the
 * file was created.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void log_fd(int fd)
{
	const char *log = getenv("CLF_TEST_FSYNC_LOG");
	char link[64], path[PATH_MAX], line[PATH_MAX + 16];
	ssize_t n;
	int out, len;

	if (!log)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return;
	path[n] = '\0';
	len = snprintf(line, sizeof(line), "fsync %s\n", path);
	out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (out < 0)
		return;
	/* One write of one line: O_APPEND keeps threads' lines whole. */
	if (write(out, line, len) != len)
		abort();
	close(out);
}

int fsync(int fd)
{
	static int (*real)(int);
	int rc;

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	rc = real(fd);
	if (rc == 0)
		log_fd(fd);
	return rc;
}

int fdatasync(int fd)
{
	static int (*real)(int);
	int rc;

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	rc = real(fd);
	if (rc == 0)
		log_fd(fd);
	return rc;
}
