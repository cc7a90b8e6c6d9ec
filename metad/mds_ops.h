/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_ops.h -- serve one metad request: decode its body, make one store
 * call (plus the iod calls of mds_data.h where the data is concerned),
 * encode the reply body.  Nothing here touches a connection.
 */
#ifndef MDS_OPS_H
#define MDS_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mds.h"
#include "mds_perm.h"
#include "proto.h"

/* Who is asking: for the log lines of malformed requests, the connection
 * that byte-range locks belong to, and the user permissions are checked
 * for. */
struct mds_session {
	struct mds_ctx *ctx;	/* borrowed */
	const char *peer;	/* borrowed: "host:port" of the client */
	const char *role;	/* borrowed: the role it authenticated as */
	uint64_t conn_id;	/* unique among the daemon's connections */
	const struct mds_cred *cred;	/* borrowed: the user this request
					   acts for (clf_proto.h, "Identity") */
	bool trusted;		/* the peer holds the secret: the owner
				   fields of CREATE and MKDIR count */
	uint32_t auth_uid;	/* of its MUNGE credential; 0: secret */
};

/* An encoded reply body. */
struct mds_reply {
	uint8_t *buf;		/* owned, the caller frees it; may be NULL */
	size_t len;
	bool drop;		/* test knob: close the connection instead of
				   answering (mds_fault_drop_reply) */
};

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

#endif /* MDS_OPS_H */
