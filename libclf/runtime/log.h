/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * log.h -- the daemons' log (metad, iod): one line format, levels, and a
 * log file that logrotate can move away.
 *
 * Every line is
 *
 *   2026-11-26T10:25:03.123Z metad[1234] info: started: ...
 *
 * an ISO 8601 UTC time with milliseconds, the daemon's name, its pid and
 * the line's level.  Lines above the level set (clf.conf's log_level,
 * the daemons' --log-level) are not written.  The log is one per
 * process; every thread writes to it.
 */
#ifndef CLF_LOG_H
#define CLF_LOG_H

enum clf_log_level {
	CLF_LOG_ERROR,
	CLF_LOG_WARN,
	CLF_LOG_INFO,		/* the default */
	CLF_LOG_DEBUG,		/* adds a line per connection */
};

/* "error", "warn", "info" or "debug": the level, or -EINVAL. */
int clf_log_level_parse(const char *s);
const char *clf_log_level_name(int level);

/* Set before threads start; read by every thread. */
void clf_log_set_level(int level);
int clf_log_get_level(void);
/* The daemon's name in each line: "metad", "iod-0".  At most 31 bytes. */
void clf_log_set_name(const char *name);

/*
 * Where lines go: a file opened for appending (its path kept for
 * clf_log_reopen), or standard error for NULL or "-".  The error names
 * the path.
 */
int clf_log_open(const char *path);
/* The descriptor lines go to (stderr until clf_log_open). */
int clf_log_fd(void);
/* Close the log; later lines go to standard error. */
void clf_log_close(void);

/*
 * Open the log's path again and put the new file under the same
 * descriptor (dup2), so a writer in another thread never sees a closed
 * one: after logrotate moved the file away, lines go to a new file at
 * the path.  Nothing to do for standard error.
 */
int clf_log_reopen(void);

/*
 * SIGHUP reopens the log, and never ends the process.  Blocks SIGHUP in
 * the calling thread, which every thread created after inherits, and
 * starts a thread that waits for it: call before starting threads.
 */
int clf_log_reopen_on_hup(void);

/* Write one line (no newline in fmt) when level is within the one set.
 * One write(2) on an O_APPEND descriptor: concurrent lines stay whole. */
void clf_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
