/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cp_ahead.h -- a clf file read ahead in chunks (cp_ahead.c). */
#ifndef CLF_TOOLS_CP_AHEAD_H
#define CLF_TOOLS_CP_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cp_ahead;

/* Start readers threads, each with a descriptor of its own, reading the
 * clf file path (kept by the caller until cp_ahead_stop) from start in
 * chunk bytes; NULL when they cannot start (then read as before). */
struct cp_ahead *cp_ahead_start(const char *path, int64_t start, int64_t chunk,
				int readers);

/* The next chunk in file order: its bytes in *buf until the next call,
 * their number (short or 0 at the end), or a negative errno with msg. */
int64_t cp_ahead_take(struct cp_ahead *a, const char **buf, char *msg, size_t msglen);

/* Stop the readers and free everything. */
void cp_ahead_stop(struct cp_ahead *a);

#endif
