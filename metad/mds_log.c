// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_log.c -- the daemon's log: one line per notable event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "mds.h"

/* The descriptor lines go to.  Set by mds_log_open before threads start
 * and reset by mds_log_close after they ended; read by every thread. */
static int log_fd = STDERR_FILENO;

int mds_log_open(const char *path)
{
	int fd;

	if (!strcmp(path, "-")) {
		log_fd = STDERR_FILENO;
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return clf_fail(errno, "metad: cannot open the log '%s': %s",
				path, strerror(errno));
	log_fd = fd;
	return 0;
}

void mds_log_close(void)
{
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = STDERR_FILENO;
}

void mds_log(const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	size_t n;
	int len;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	len = snprintf(line + n, sizeof(line) - n, ".%03ldZ metad[%ld]: ",
		       ts.tv_nsec / 1000000, (long)getpid());
	if (len > 0)
		n += (size_t)len;
	va_start(ap, fmt);
	len = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* A line cut by the buffer still ends the line. */
	if (len < 0)
		len = 0;
	n += (size_t)len;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write: O_APPEND keeps concurrent lines whole.  A log that
	 * cannot be written has nowhere to say so. */
	if (write(log_fd, line, n) < 0)
		return;
}

int mds_fail_ctx(int neg_err, const char *fmt, ...)
{
	char prev[512], ctx[512];
	va_list ap;

	/* Copied first: CLF_Last_error() is the buffer clf_fail writes. */
	snprintf(prev, sizeof(prev), "%s", CLF_Last_error());
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	return clf_fail_neg(neg_err, "%s: %s", ctx, prev);
}
