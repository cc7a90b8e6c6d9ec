// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format.c -- sizes, durations and reasons as the clf tables print them.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

void tool_fmt_size(uint64_t bytes, bool exact, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	int u = -1;

	if (exact || bytes == 0) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return;
	}
	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 "B", bytes);
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	/* Rounding 1023.96 to "1024K" would say less than it could:
	 * go one unit up instead, as df does. */
	if (v >= 1023.95 && u < 5) {
		v /= 1024;
		u++;
	}
	if (v < 9.95)
		snprintf(buf, len, "%.1f%c", v, units[u]);
	else
		snprintf(buf, len, "%.0f%c", v, units[u]);
}

void tool_fmt_duration(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%" PRIu64 "s", s);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60,
			 s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600,
			 s / 60 % 60);
	else
		snprintf(buf, len, "%" PRIu64 "d%02" PRIu64 "h", s / 86400,
			 s / 3600 % 24);
}

void tool_fmt_reason(int neg_err, char *buf, size_t len)
{
	const char *why;

	/* The transport's full messages name the peer, which the tables
	 * already show; these say only what a user acts on. */
	switch (-neg_err) {
	case ECONNREFUSED:
		why = "connection refused";
		break;
	case ETIMEDOUT:
		why = "timed out";
		break;
	case EACCES:
		why = "authentication failed (not the same secret?)";
		break;
	case EPROTONOSUPPORT:
		why = "another protocol version";
		break;
	case EPROTO:
	case E2BIG:
		why = "does not speak the clf protocol";
		break;
	case EHOSTUNREACH:
		why = "host unreachable";
		break;
	case EHOSTDOWN:
		why = "host down";
		break;
	case ECONNRESET:
		why = "connection closed by the daemon";
		break;
	case ENOSYS:
		why = "request not supported by the daemon";
		break;
	default:
		why = NULL;
		break;
	}
	if (why) {
		snprintf(buf, len, "%s", why);
		return;
	}
	snprintf(buf, len, "%s", strerror(-neg_err));
	if (len)
		buf[0] = (char)tolower((unsigned char)buf[0]);
}

unsigned tool_percent_used(uint64_t used, uint64_t avail)
{
	/* long double: used + avail may not fit in 64 bits. */
	long double total = (long double)used + (long double)avail;
	long double pct;

	if (total == 0)
		return 0;
	pct = (long double)used * 100 / total;
	if (pct > (unsigned)pct)
		return (unsigned)pct + 1;
	return (unsigned)pct;
}

void tool_print_row(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	while (n > 0 && isspace((unsigned char)line[n - 1]))
		n--;
	printf("%.*s\n", n, line);
	fflush(stdout);
}

void tool_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
