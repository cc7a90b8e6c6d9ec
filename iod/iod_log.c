// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_log.c -- the iod's name in its messages (the log itself is
 * libclf's, log.h).
 */
#include <stdio.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "iod_log.h"

static char log_name[32] = "iod";

void iod_log_set_name(uint32_t index)
{
	char name[32];

	snprintf(log_name, sizeof(log_name), "iod %u", index);
	snprintf(name, sizeof(name), "iod-%u", index);
	clf_log_set_name(name);
}

const char *iod_log_name(void)
{
	return log_name;
}

const char *iod_errmsg(char *buf, size_t size)
{
	snprintf(buf, size, "%s: %s", log_name, clf_error_reason());
	return buf;
}
