// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * error.c -- the per-thread last error and the one place it is rendered.
 *
 * Errors travel as negative errno values; what failed, where and who
 * failed live here, one record per thread, so that library calls stay
 * reentrant.  The sentences CLF_Last_error() and clf_error_reason()
 * return are rendered from the fields when the error is recorded, so
 * the pointers handed out stay valid until the next failure.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clf.h"
#include "error.h"

struct last_error {
	struct clf_error e;
	char message[1024];	/* CLF_Last_error() */
	const char *reason;	/* message without the reporter */
	bool set;		/* anything recorded yet */
};

static _Thread_local struct last_error last;

/* The names a message's format may start with, as "NAME: ". */
static const char *const reporters[] = { "clf", "iod", "metad", "mds" };

static const char *take_reporter(const char **fmt)
{
	for (size_t i = 0; i < sizeof(reporters) / sizeof(reporters[0]); i++) {
		size_t n = strlen(reporters[i]);

		if (!strncmp(*fmt, reporters[i], n) &&
		    !strncmp(*fmt + n, ": ", 2)) {
			*fmt += n + 2;
			return reporters[i];
		}
	}
	return NULL;
}

void clf_error_source_name(const struct clf_error_source *src, char *buf,
			   unsigned len)
{
	switch (src->kind) {
	case CLF_ERROR_METAD:
		snprintf(buf, len, "metad");
		break;
	case CLF_ERROR_IOD:
		snprintf(buf, len, "iod %u", src->index);
		break;
	case CLF_ERROR_PEER:
		snprintf(buf, len, "%s", src->addr);
		break;
	default:
		snprintf(buf, len, "%s", "");
		break;
	}
}

/* The one place a message is put together from the fields. */
static void render(struct last_error *l)
{
	const struct clf_error *e = &l->e;
	char who[96] = "";
	size_t n = 0, size = sizeof(l->message);
	int r;

	if (e->reporter) {
		r = snprintf(l->message, size, "%s: ", e->reporter);
		n = r < 0 ? 0 : (size_t)r;
	}
	l->reason = l->message + n;
	if (e->source.kind != CLF_ERROR_SELF && !e->source.answered) {
		clf_error_source_name(&e->source, who, sizeof(who));
		if (e->source.kind != CLF_ERROR_PEER && e->source.addr[0])
			snprintf(who + strlen(who), sizeof(who) - strlen(who),
				 " (%s)", e->source.addr);
	}
	snprintf(l->message + n, size - n, "%s%s%s%s%s", e->context,
		 e->context[0] ? ": " : "", who, who[0] ? ": " : "", e->text);
}

/*
 * Through a copy: callers pass CLF_Last_error() or clf_error_reason()
 * itself as an argument, and vsnprintf must not write over what it is
 * reading.
 */
static void set_text(char *dst, size_t size, const char *fmt, va_list ap)
{
	char text[sizeof(last.e.text)];
	size_t n;

	vsnprintf(text, sizeof(text), fmt, ap);
	n = strnlen(text, size - 1);
	memcpy(dst, text, n);
	dst[n] = '\0';
}

static int record(int neg_err, const struct clf_error_source *src,
		  const char *fmt, va_list ap)
{
	const char *reporter = src ? "clf" : take_reporter(&fmt);
	char text[sizeof(last.e.text)];

	set_text(text, sizeof(text), fmt, ap);
	memset(&last.e.source, 0, sizeof(last.e.source));
	if (src)
		last.e.source = *src;
	last.e.err = neg_err;
	last.e.reporter = src && src->answered ? NULL : reporter;
	last.e.context[0] = '\0';
	memcpy(last.e.text, text, sizeof(text));
	last.set = true;
	render(&last);
	return neg_err;
}

int clf_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(-err, NULL, fmt, ap);
	va_end(ap);
	return -err;
}

int clf_fail_neg(int neg_err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(neg_err, NULL, fmt, ap);
	va_end(ap);
	return neg_err;
}

int clf_fail_source(const struct clf_error_source *src, int neg_err,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(neg_err, src, fmt, ap);
	va_end(ap);
	return neg_err;
}

int clf_vfail_ctx(int neg_err, const char *fmt, va_list ap)
{
	char ctx[sizeof(last.e.context)], old[sizeof(last.e.context)];
	const char *reporter = take_reporter(&fmt);

	set_text(ctx, sizeof(ctx), fmt, ap);
	memcpy(old, last.e.context, sizeof(old));
	if (snprintf(last.e.context, sizeof(last.e.context), "%s%s%s", ctx,
		     old[0] ? ": " : "", old) < 0)
		last.e.context[0] = '\0';
	last.e.err = neg_err;
	last.e.reporter = reporter;
	last.set = true;
	render(&last);
	return neg_err;
}

int clf_fail_ctx(int neg_err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	clf_vfail_ctx(neg_err, fmt, ap);
	va_end(ap);
	return neg_err;
}

int clf_fail_append(int neg_err, const char *fmt, ...)
{
	char more[sizeof(last.e.text)];
	size_t n = strlen(last.e.text);
	va_list ap;

	va_start(ap, fmt);
	set_text(more, sizeof(more), fmt, ap);
	va_end(ap);
	snprintf(last.e.text + n, sizeof(last.e.text) - n, "%s", more);
	last.e.err = neg_err;
	last.set = true;
	render(&last);
	return neg_err;
}

void clf_error_set_source(const struct clf_error_source *src)
{
	last.e.source = *src;
	render(&last);
}

int clf_error_restore(const struct clf_error *e)
{
	if (e != &last.e)
		last.e = *e;
	last.set = true;
	render(&last);
	return last.e.err;
}

const struct clf_error *clf_error_last(void)
{
	return &last.e;
}

const char *clf_error_reason(void)
{
	return last.set ? last.reason : "no error";
}

const char *CLF_Last_error(void)
{
	return last.set ? last.message : "no error";
}
