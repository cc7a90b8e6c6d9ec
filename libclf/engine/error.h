/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * error.h -- the per-thread message behind CLF_Last_error().
 */
#ifndef CLF_ERROR_H
#define CLF_ERROR_H

/*
 * Record a message for CLF_Last_error() and return -err, so that a
 * failing path reads: return clf_fail(EINVAL, "vector: left %ld > right", l);
 * err is a positive errno value.
 */
int clf_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Same, for paths that already hold a negative errno. */
int clf_fail_neg(int neg_err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* CLF_ERROR_H */
