/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * error.h -- the per-thread last error behind CLF_Last_error().
 *
 * Errors travel as negative errno values.  What failed, where, and who
 * failed are kept here, one record per thread, as fields:
 *
 *   err	the negative errno;
 *   reporter	whose words these are in this process: "clf", "iod",
 *		"metad", "mds" (the name a message's format starts with);
 *   source	who failed: this process, or a daemon it talked to (metad,
 *		iod N, or a peer known only by its HOST:PORT), and whether
 *		that daemon answered with the text (its own words) or could
 *		not be reached or understood;
 *   context	what this process was doing when it failed, outermost
 *		first ("secret file '/etc/clf/secret'"), or empty;
 *   text	what went wrong, without reporter, context or source.
 *
 * Messages are rendered from these fields in one place (error.c),
 * "REPORTER: CONTEXT: SOURCE (ADDR): TEXT" less the empty parts:
 *
 *   "clf: vector: left 3 > right 2"			this process
 *   "clf: iod 2 (127.0.0.1:7002): down: Connection refused"	unreachable
 *   "iod 2: cannot write subfile 3: No space left on device"	answered
 *
 * so that a caller that puts the reason into a sentence of its own asks
 * for clf_error_reason() instead of cutting a prefix off the text.
 */
#ifndef CLF_ERROR_H
#define CLF_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* Who failed. */
enum clf_error_kind {
	CLF_ERROR_SELF = 0,	/* this process */
	CLF_ERROR_METAD,	/* the metadata server */
	CLF_ERROR_IOD,		/* iod number index */
	CLF_ERROR_PEER,		/* a daemon known only by its address */
};

struct clf_error_source {
	enum clf_error_kind kind;
	uint32_t index;		/* CLF_ERROR_IOD: the iod's number */
	char addr[64];		/* HOST:PORT, or "" when not known */
	bool answered;		/* text is the daemon's own answer */
};

struct clf_error {
	int err;		/* negative errno; 0: none yet */
	const char *reporter;	/* static string, or NULL */
	struct clf_error_source source;
	char context[256];	/* what was being done, or "" */
	char text[512];		/* what went wrong, about the source */
};

/*
 * Record a failure of this process for CLF_Last_error() and return -err,
 * so that a failing path reads:
 *	return clf_fail(EINVAL, "clf: vector: left %ld > right", l);
 * err is a positive errno value.  A format that starts with a reporter's
 * name and ": " ("clf: ", "iod: ", "metad: ", "mds: ") records it as the
 * reporter; the rest is the text.
 */
int clf_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Same, for paths that already hold a negative errno. */
int clf_fail_neg(int neg_err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A failure of the daemon src (copied): neg_err with the text fmt, which
 * says what happened to it ("down: Connection refused") or, when
 * src->answered, is the daemon's own answer.  Returns neg_err.
 */
int clf_fail_source(const struct clf_error_source *src, int neg_err,
		    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Put context in front of the last error, keeping who failed:
 *	return clf_fail_ctx(err, "clf: secret file '%s'", path);
 * records "clf: secret file 'p': <the last error's reason>": the context
 * goes in front of the last one, source and text stay.  Returns neg_err.
 */
int clf_fail_ctx(int neg_err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Same, for wrappers with their own variable arguments. */
int clf_vfail_ctx(int neg_err, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * Add words at the end of the last error's text, keeping everything
 * else: "... down: Connection refused (gave up after 5 s ...)".
 * Returns neg_err, which the error now carries.
 */
int clf_fail_append(int neg_err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Say that the last error was about the daemon src (copied), when the
 * failing code knew only the connection (authentication, a transport):
 * "clf: 127.0.0.1:7002: ..." becomes "clf: iod 2 (127.0.0.1:7002): ...".
 */
void clf_error_set_source(const struct clf_error_source *src);

/* This thread's last error (borrowed; changed by the next failure). */
const struct clf_error *clf_error_last(void);

/*
 * Make e (a copy of a last error, *clf_error_last(), taken before other
 * calls or in another thread) this thread's last error again, fields and
 * all.  Returns e->err.
 */
int clf_error_restore(const struct clf_error *e);

/*
 * The last error without its reporter, to be put into a sentence of
 * the caller's own: "iod 2 (127.0.0.1:7002): down: ...", "vector: left
 * 3 > right 2".  Borrowed, as CLF_Last_error().
 */
const char *clf_error_reason(void);

/* The source's name for messages: "metad", "iod 2", "127.0.0.1:7000". */
void clf_error_source_name(const struct clf_error_source *src, char *buf,
			   unsigned len);

#endif /* CLF_ERROR_H */
