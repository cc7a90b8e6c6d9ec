/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_cap.h -- the capabilities a connection handed over (CAP), and the
 * check of every data request against them (clf_proto.h,
 * "Capabilities").
 *
 * Only connections authenticated with MUNGE have a table: one that holds
 * the secret could sign any capability itself, so asking it for one
 * would protect nothing.  A capability's MAC is checked once, when it
 * is handed over; a request then costs a scan of at most
 * CLF_PROTO_CAPS_MAX entries (and, for a view, the view's lookup).
 */
#ifndef IOD_CAP_H
#define IOD_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct iod_conn;

struct iod_caps {
	uint32_t uid;		/* of the connection's MUNGE credential */
	unsigned n;
	struct iod_cap_entry {
		uint64_t ino;
		uint32_t rights;	/* CLF_CAP_* */
		int64_t expiry;		/* seconds since the epoch */
	} e[CLF_PROTO_CAPS_MAX];
};

/* The CAP request of body (len bytes): check it, keep it. */
int iod_cap_take(struct iod_conn *cn, const uint8_t *body, size_t len);

/*
 * May the request h, whose body starts with the len bytes at body (its
 * fixed fields at least), be served on cn?  0, or -EACCES (no such
 * right), -EKEYEXPIRED (the capability ran out) with the reason.
 */
int iod_cap_check(struct iod_conn *cn, const struct clf_proto_header *h,
		  const uint8_t *body, size_t len);

#endif /* IOD_CAP_H */
