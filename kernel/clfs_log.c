// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_log.c -- the mount client's log: syslog, or a file or standard
 * error in the daemons' format (libclf's log.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "clfs_log.h"
#include "log.h"

static bool log_syslog;
static bool log_debug;

int clfs_log_open(const char *ident, const char *path, bool debug)
{
	log_debug = debug;
	if (path && !strcmp(path, "syslog")) {
		openlog(ident, LOG_PID, LOG_DAEMON);
		log_syslog = true;
		return 0;
	}
	clf_log_set_name(ident);
	clf_log_set_level(debug ? CLF_LOG_DEBUG : CLF_LOG_INFO);
	return clf_log_open(path);
}

bool clfs_log_debug(void)
{
	return log_debug;
}

void clfs_log(enum clfs_log_level level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[1024];
	va_list ap;

	if (level == CLFS_LOG_DEBUG && !log_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_syslog)
		syslog(prio[level], "%s", msg);
	else	/* the levels are the same, in the same order */
		clf_log((int)level, "%s", msg);
}

void clfs_log_close(void)
{
	if (log_syslog)
		closelog();
	else
		clf_log_close();
	log_syslog = false;
}
