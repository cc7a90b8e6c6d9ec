// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_log.c -- errors with the context of the request (the log itself
 * is libclf's, log.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "mds.h"

int mds_fail_ctx(int neg_err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	clf_vfail_ctx(neg_err, fmt, ap);
	va_end(ap);
	return neg_err;
}
