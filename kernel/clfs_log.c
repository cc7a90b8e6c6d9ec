// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_log.c -- the mount client's log.  A file gets lines
 * "<UTC time> <ident>[<pid>]: <level>: <message>", each written with one
 * write(2) to a descriptor opened O_APPEND, so threads never mix lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "clfs_log.h"

static const char *log_ident = "clf-fuse";
static int log_fd = STDERR_FILENO;	/* when not syslog */
static bool log_syslog;
static bool log_debug;

int clfs_log_open(const char *ident, const char *path, bool debug)
{
	log_ident = ident;
	log_debug = debug;
	if (path && !strcmp(path, "syslog")) {
		openlog(ident, LOG_PID, LOG_DAEMON);
		log_syslog = true;
		return 0;
	}
	if (!path || !strcmp(path, "-")) {
		log_fd = STDERR_FILENO;
		return 0;
	}
	log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (log_fd < 0) {
		int err = -errno;

		log_fd = STDERR_FILENO;
		return err;
	}
	return 0;
}

bool clfs_log_debug(void)
{
	return log_debug;
}

void clfs_log(enum clfs_log_level level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	char msg[1024], line[1200], when[32];
	struct tm tm;
	time_t now;
	va_list ap;
	int n;

	if (level == CLFS_LOG_DEBUG && !log_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_syslog) {
		syslog(prio[level], "%s", msg);
		return;
	}
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s %s[%d]: %s: %s\n", when,
		     log_ident, (int)getpid(), names[level], msg);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	if (write(log_fd, line, n) < 0) {
		/* Nowhere left to say it. */
	}
}

void clfs_log_close(void)
{
	if (log_syslog)
		closelog();
	else if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_syslog = false;
	log_fd = STDERR_FILENO;
}
