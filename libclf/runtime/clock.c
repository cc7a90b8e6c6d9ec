// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clock.c -- the monotonic and the wall clock (see clock.h).
 */
#include "clock.h"

#include <time.h>

int64_t clf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clf_now_ms(void)
{
	return clf_now_ns() / 1000000;
}

int64_t clf_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
