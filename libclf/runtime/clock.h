/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clock.h -- the two clocks the client, the daemons and the mount read.
 *
 * Which clock is a question of what the time is for: an interval (a
 * timeout, a deadline, an age, a backoff) must not jump when the system
 * clock is set, so it is CLOCK_MONOTONIC; a time that is stored or shown
 * (mtime, ctime, a reply record's age across restarts) is a date, so it
 * is CLOCK_REALTIME.  Each has one function here.
 */
#ifndef CLF_CLOCK_H
#define CLF_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, in milliseconds: intervals and deadlines. */
int64_t clf_now_ms(void);

/* CLOCK_MONOTONIC now, in nanoseconds: short intervals, rates. */
int64_t clf_now_ns(void);

/* CLOCK_REALTIME now, in nanoseconds since the epoch: stored times. */
int64_t clf_wall_ns(void);

#endif
