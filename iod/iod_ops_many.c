// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_ops_many.c -- requests on many files at once: SUB_SIZES_MANY
 * (1.15), the subfile lengths a client derives the sizes of a page of
 * directory entries from, and REMOVE_MANY (1.16), metad's removal queue
 * drained in batches instead of one request per removed file.
 *
 * The decoder checks n against CLF_PROTO_SUB_BATCH_MAX and against the
 * bytes the body holds before anything is read; each subfile index is
 * checked as SUB_SIZES checks it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "iod_ops.h"
#include "iod_reply.h"
#include "iod_server.h"
#include "iod_store.h"

int iod_op_sub_sizes_many(struct iod_conn *cn, struct iod_req *rq,
			  struct iod_reply *rep)
{
	struct clf_proto_sub_sizes_many_req *req = malloc(sizeof(*req));
	struct clf_proto_sub_sizes *m = malloc(sizeof(*m));
	int err = req && m ? 0 : clf_fail(ENOMEM, "iod: out of memory");

	_Static_assert(CLF_PROTO_SUB_BATCH_MAX <= CLF_PROTO_SUB_SIZES_MAX,
		       "a SUB_SIZES reply carries a batch's lengths");
	if (!err)
		err = clf_proto_sub_sizes_many_req_decode(&rq->r, req);
	for (uint32_t i = 0; !err && i < req->n; i++)
		err = iod_store_size(cn->srv->st, req->file[i],
				     req->subfile[i], &m->length[i]);
	if (!err)
		m->n = req->n;
	err = iod_reply_sub_sizes(rep, m, err);
	free(req);
	free(m);
	return err;
}

/*
 * Each file's subfiles go as with REMOVE of SUBFILE_ALL; a failure on
 * one file is its status and does not stop the others, so that metad
 * takes off its queue exactly the removals that were done.
 */
int iod_op_remove_many(struct iod_conn *cn, struct iod_req *rq,
		       struct iod_reply *rep)
{
	struct clf_proto_remove_many_req *req = malloc(sizeof(*req));
	struct clf_proto_remove_many_rep *m = malloc(sizeof(*m));
	struct wire_writer w = { NULL, 0, 0 };
	int err = req && m ? 0 : clf_fail(ENOMEM, "iod: out of memory");

	if (!err)
		err = clf_proto_remove_many_req_decode(&rq->r, req);
	for (uint32_t i = 0; !err && i < req->n; i++) {
		int e = iod_store_remove_file(cn->srv->st, req->file[i]);

		m->status[i] = e < 0 ? (uint32_t)-e : 0;
	}
	if (!err) {
		m->n = req->n;
		err = iod_reply_alloc(&w, 4 + 4 * (size_t)m->n);
	}
	if (!err)
		err = clf_proto_remove_many_rep_encode(&w, m);
	err = iod_reply_owned(rep, &w, err);
	free(req);
	free(m);
	return err;
}
