// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * error.c -- per-thread error messages.
 *
 * Errors travel as negative errno values; the sentence that says what and
 * where lives here, one per thread, so that library calls stay reentrant.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clf.h"
#include "error.h"

static _Thread_local char last_error[512];

/*
 * Through a copy: callers put context in front of the last message by
 * passing CLF_Last_error() itself as an argument, and vsnprintf must not
 * write over what it is reading.
 */
static void set_message(const char *fmt, va_list ap)
{
	char msg[sizeof(last_error)];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	memcpy(last_error, msg, sizeof(msg));
}

int clf_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return -err;
}

int clf_fail_neg(int neg_err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return neg_err;
}

const char *CLF_Last_error(void)
{
	return last_error[0] ? last_error : "no error";
}
