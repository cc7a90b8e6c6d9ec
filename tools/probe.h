/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe.h -- ask one daemon how it is: connect, authenticate, and the
 * small requests every daemon (PING, STATUS) or every iod (IOD_STATFS)
 * answers.
 */
#ifndef CLF_TOOL_PROBE_H
#define CLF_TOOL_PROBE_H

#include "config.h"
#include "proto.h"
#include "transport.h"

/* The role the tools give in HELLO; daemons only log it. */
#define PROBE_ROLE "clf-tool"

/*
 * probe_open - an authenticated connection to the daemon at addr
 *
 * Uses cfg's transport and secret; every wait is bounded by timeout_ms
 * (> 0).  Returns 0 and *out (the caller closes it with clf_conn_close),
 * or a negative errno with the message naming addr: -ECONNREFUSED,
 * -ETIMEDOUT, -EACCES (another secret), ... as in transport.h.
 */
int probe_open(const struct clf_config *cfg, const char *addr,
	       int timeout_ms, struct clf_conn **out);

/* PING: 0 when the daemon answered. */
int probe_ping(struct clf_conn *c);

/* STATUS: the daemon's counters into *out. */
int probe_status(struct clf_conn *c, struct clf_proto_status *out);

/* IOD_STATFS: the capacity of an iod's storage into *out. */
int probe_iod_statfs(struct clf_conn *c, struct clf_proto_statfs *out);

/* probe_open, probe_ping and close, for "does it answer?". */
int probe_ping_addr(const struct clf_config *cfg, const char *addr,
		    int timeout_ms);

#endif /* CLF_TOOL_PROBE_H */
