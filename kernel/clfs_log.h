/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clfs_log.h -- the mount client's log: syslog (the default for a
 * daemon), a file, or standard error (in the foreground).
 */
#ifndef CLFS_LOG_H
#define CLFS_LOG_H

#include <stdbool.h>

enum clfs_log_level {
	CLFS_LOG_ERR,
	CLFS_LOG_WARNING,
	CLFS_LOG_INFO,
	CLFS_LOG_DEBUG,		/* only with clfs_log_open(..., debug) */
};

/*
 * Log to path ("syslog": syslog, facility daemon; NULL or "-": standard
 * error), lines tagged with ident.  Returns 0 or -errno (the file cannot
 * be opened).
 */
int clfs_log_open(const char *ident, const char *path, bool debug);

/* One line, without a newline; thread-safe. */
void clfs_log(enum clfs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

bool clfs_log_debug(void);

void clfs_log_close(void);

#endif /* CLFS_LOG_H */
