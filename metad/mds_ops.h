/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_ops.h -- what serving one metad request works with: who asks,
 * and the reply body.  Each handler decodes its body, makes one store
 * call (plus the iod calls of mds_data.h where the data is concerned),
 * and encodes the reply body; nothing here touches a connection.  The
 * entry point is mds_ops_handle (mds_dispatch.h).
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
	uint16_t minor;		/* the protocol minor negotiated */
};

/* An encoded reply body. */
struct mds_reply {
	uint8_t *buf;		/* owned, the caller frees it; may be NULL */
	size_t len;
	bool drop;		/* test knob: close the connection instead of
				   answering (mds_fault_drop_reply) */
};

#endif /* MDS_OPS_H */
