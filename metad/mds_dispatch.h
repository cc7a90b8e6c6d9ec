/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_dispatch.h -- serve one metad request by the handler of its
 * opcode (mds_ops.h says what a request is served with).
 */
#ifndef MDS_DISPATCH_H
#define MDS_DISPATCH_H

#include <stdint.h>

#include "mds_ops.h"
#include "proto.h"

/*
 * mds_ops_handle - serve the request h with its payload (h->payload_len
 * bytes, borrowed)
 *
 * Returns 0 with the reply body in *rep, or a negative errno that the
 * caller sends as the reply's status with CLF_Last_error() as the error
 * body; *rep is then empty.  Malformed bodies give -EPROTO or -E2BIG and
 * a log line; opcodes metad does not serve give -ENOSYS; neither harms
 * the connection.  A request with an identity (CLF_PROTO_FLAG_REQ_ID)
 * whose opcode changes the store is served at most once: a repeat gets
 * the first outcome (mds_replay.h).  Thread-safe.
 */
int mds_ops_handle(const struct mds_session *s,
		   const struct clf_proto_header *h, const uint8_t *payload,
		   struct mds_reply *rep);

#endif /* MDS_DISPATCH_H */
