/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_ops.h -- the request handlers, one per opcode: iod_ops.c (metadata
 * of subfiles, views, the iod itself), iod_ops_io.c (the four data
 * requests) and iod_ops_vec.c (their vectored forms).  iod_dispatch.c holds the table that names them.
 *
 * A handler decodes its body with the protocol's decoder, calls the
 * storage engine and prepares the reply; iod_dispatch.c sends it.  It
 * returns 0, or a negative errno with the message for the client in
 * CLF_Last_error().
 */
#ifndef IOD_OPS_H
#define IOD_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "iod_conn.h"
#include "iod_reply.h"
#include "proto.h"
#include "wire.h"

/*
 * A request being served.  r holds the body received: the whole body,
 * or for a write (an opcode with a head length in the table) the head
 * alone, the data being still in the connection.
 */
struct iod_req {
	const struct clf_proto_header *h;
	struct wire_reader r;
	/* Payload bytes still in the connection: a handler that receives
	 * data counts it off; iod_dispatch.c drops what is left. */
	size_t left;
	/* Set when the connection failed inside the payload: close it. */
	bool broken;
};

typedef int (*iod_handler)(struct iod_conn *cn, struct iod_req *rq,
			   struct iod_reply *rep);

/* iod_ops.c */
int iod_op_ping(struct iod_conn *cn, struct iod_req *rq, struct iod_reply *rep);
int iod_op_status(struct iod_conn *cn, struct iod_req *rq,
		  struct iod_reply *rep);
int iod_op_view_register(struct iod_conn *cn, struct iod_req *rq,
			 struct iod_reply *rep);
int iod_op_view_release(struct iod_conn *cn, struct iod_req *rq,
			struct iod_reply *rep);
int iod_op_sync(struct iod_conn *cn, struct iod_req *rq, struct iod_reply *rep);
int iod_op_truncate(struct iod_conn *cn, struct iod_req *rq,
		    struct iod_reply *rep);
/* FENCE: a file's subfiles leave this iod (iod_fence.h). */
int iod_op_fence(struct iod_conn *cn, struct iod_req *rq,
		 struct iod_reply *rep);
int iod_op_remove(struct iod_conn *cn, struct iod_req *rq,
		  struct iod_reply *rep);
int iod_op_statfs(struct iod_conn *cn, struct iod_req *rq,
		  struct iod_reply *rep);
int iod_op_sub_sizes(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep);
/* SUB_SIZES' reply, for SUB_SIZES_MANY too: m's lengths (m->n set), or
 * err. */
int iod_reply_sub_sizes(struct iod_reply *rep,
			const struct clf_proto_sub_sizes *m, int err);
int iod_op_cap(struct iod_conn *cn, struct iod_req *rq, struct iod_reply *rep);
int iod_op_sub_list(struct iod_conn *cn, struct iod_req *rq,
		    struct iod_reply *rep);

/* iod_ops_many.c */
int iod_op_sub_sizes_many(struct iod_conn *cn, struct iod_req *rq,
			  struct iod_reply *rep);
int iod_op_remove_many(struct iod_conn *cn, struct iod_req *rq,
		       struct iod_reply *rep);

/* iod_ops_io.c */
int iod_op_sub_read(struct iod_conn *cn, struct iod_req *rq,
		    struct iod_reply *rep);
int iod_op_sub_write(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep);
int iod_op_view_read(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep);
/* VIEW_MERGED: the collective requests of relayed connections
 * (iod_ops_merged.c). */
int iod_op_view_merged(struct iod_conn *cn, struct iod_req *rq,
		       struct iod_reply *rep);
int iod_op_view_write(struct iod_conn *cn, struct iod_req *rq,
		      struct iod_reply *rep);

/* iod_ops_vec.c */
int iod_op_sub_readv(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep);
int iod_op_sub_writev(struct iod_conn *cn, struct iod_req *rq,
		      struct iod_reply *rep);

#endif /* IOD_OPS_H */
