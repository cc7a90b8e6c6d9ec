// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_log.c -- the daemon's log: one line per event, with a time stamp.
 *
 * Lines are formatted in a buffer and written with a single write(2) on
 * a descriptor opened with O_APPEND, so lines of concurrent threads (and
 * of two processes sharing a log) never interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "error.h"
#include "iod_server.h"

#define LOG_LINE_MAX 1024

/* Set once at start, before any thread; read-only afterwards. */
static int log_fd = STDERR_FILENO;
static char log_name[32] = "iod";

int iod_log_open(const char *path)
{
	int fd;

	if (!path || strcmp(path, "-") == 0) {
		log_fd = STDERR_FILENO;
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return clf_fail(errno, "%s: cannot open log '%s': %s", log_name,
				path, strerror(errno));
	log_fd = fd;
	return 0;
}

int iod_log_fd(void)
{
	return log_fd;
}

void iod_log_set_name(uint32_t index)
{
	snprintf(log_name, sizeof(log_name), "iod %u", index);
}

const char *iod_log_name(void)
{
	return log_name;
}

void iod_log(const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	struct timeval tv;
	struct tm tm;
	va_list ap;
	size_t n;
	int k;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
	k = snprintf(line + n, sizeof(line) - n, ".%03ld %s: ",
		     (long)tv.tv_usec / 1000, log_name);
	n += k > 0 ? (size_t)k : 0;
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	n = k < 0 ? n : n + (size_t)k;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;	/* cut, but keep the newline */
	line[n++] = '\n';
	/* A log that cannot be written has nowhere to report to. */
	if (write(log_fd, line, n) < 0)
		errno = 0;
}

const char *iod_errmsg(char *buf, size_t size)
{
	const char *msg = CLF_Last_error();

	if (strncmp(msg, "iod: ", 5) == 0 || strncmp(msg, "clf: ", 5) == 0)
		msg += 5;
	snprintf(buf, size, "%s: %s", log_name, msg);
	return buf;
}
