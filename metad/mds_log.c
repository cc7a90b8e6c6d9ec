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
	char prev[512], ctx[512];
	va_list ap;

	/* Copied first: CLF_Last_error() is the buffer clf_fail writes. */
	snprintf(prev, sizeof(prev), "%s", CLF_Last_error());
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	return clf_fail_neg(neg_err, "%s: %s", ctx, prev);
}
