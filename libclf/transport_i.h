/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_i.h -- what a transport implementation shares with
 * transport.c.  Callers include transport.h only.
 *
 * An implementation embeds struct clf_conn (and struct clf_listener) at
 * the start of its own structs, fills them with clf_conn_base_init(), and
 * casts back in its ops.
 */
#ifndef CLF_TRANSPORT_I_H
#define CLF_TRANSPORT_I_H

#include "transport.h"

struct clf_conn {
	const struct clf_transport_ops *ops;
	char peer[CLF_ADDR_MAX];	/* "host:port", for messages */
	int timeout_ms;			/* limit of each send and receive */
	uint32_t max_payload;		/* bytes, refused beyond on receipt */
	uint16_t minor;			/* negotiated minor version */
	bool broken;			/* a send or receive failed */
	uint64_t rx_left;		/* payload bytes of the current message
					   not yet received */
	uint64_t next_id;		/* last request id handed out */
};

struct clf_listener {
	const struct clf_transport_ops *ops;
	char addr[CLF_ADDR_MAX];	/* as given, for messages */
};

/* Defaults for every field but ops and peer, which it sets from its args. */
void clf_conn_base_init(struct clf_conn *c, const struct clf_transport_ops *ops,
			const char *peer);

/* Milliseconds until deadline, clamped to [0, INT_MAX]. */
int clf_deadline_left(int64_t deadline);

/* CLOCK_MONOTONIC deadline timeout_ms from now. */
int64_t clf_deadline_after(int timeout_ms);

/*
 * Write all n bytes of buf to fd at *off, advancing *off; 0, or the
 * negative errno of the file (a write that takes nothing is -EIO).
 */
int clf_pwrite_all(int fd, const void *buf, size_t n, int64_t *off);

#endif /* CLF_TRANSPORT_I_H */
