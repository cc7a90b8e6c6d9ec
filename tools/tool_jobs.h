/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool_jobs.h -- file copies in up to N processes at once (tool_jobs.c).
 */
#ifndef CLF_TOOL_JOBS_H
#define CLF_TOOL_JOBS_H

#include <stdbool.h>

/*
 * Copies will run `head... SRC DST` (head: the program's own argv up to
 * the operands, NULL-terminated, borrowed until tool_jobs_finish), at
 * most max at once; verbose prints "SRC -> DST" for each that succeeds.
 * 0 or -ENOMEM.
 */
int tool_jobs_init(int max, const char **head, bool verbose);

/* Start the copy of src to dst, after one ends when max run.  0, or a
 * negative errno when it could not start (said). */
int tool_jobs_run(const char *src, const char *dst);

/* Wait for every copy; how many failed (each said on stderr). */
int tool_jobs_finish(void);

#endif /* CLF_TOOL_JOBS_H */
