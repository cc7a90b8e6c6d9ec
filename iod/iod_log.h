/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_log.h -- the iod's log lines and its name in messages (iod_log.c).
 */
#ifndef IOD_LOG_H
#define IOD_LOG_H

#include <stddef.h>
#include <stdint.h>

/*
 * The log is libclf's daemon log (log.h): one line format for metad and
 * the iods, levels, reopened on SIGHUP.  iod_log is a line at level
 * info, iod_log_debug one at debug (a line per connection).
 */
#include "log.h"

#define iod_log_open(path) clf_log_open(path)
#define iod_log_fd() clf_log_fd()
#define iod_log(...) clf_log(CLF_LOG_INFO, __VA_ARGS__)
#define iod_log_debug(...) clf_log(CLF_LOG_DEBUG, __VA_ARGS__)
#define iod_log_warn(...) clf_log(CLF_LOG_WARN, __VA_ARGS__)
#define iod_log_error(...) clf_log(CLF_LOG_ERROR, __VA_ARGS__)

/* The prefix of messages: "iod 3"; the log's name: "iod-3". */
void iod_log_set_name(uint32_t index);
const char *iod_log_name(void);

/*
 * The last error's reason behind this iod's name, into buf: "iod 2:
 * cannot write subfile 3 ...".
 */
const char *iod_errmsg(char *buf, size_t size);

#endif /* IOD_LOG_H */
