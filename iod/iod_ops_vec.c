// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_ops_vec.c -- the handlers of SUB_READV and SUB_WRITEV (iod_ops.h):
 * several subfile ranges of one file in one request.
 *
 * A client's small access in many pieces (libclf/client/io_small.c: a
 * subarray's rows, a strided view over small stripes) sent one SUB_WRITE
 * per piece, every one a header to decode, a capability to check, a
 * reply to send and a wakeup of the client.  One request per iod does
 * that once.  Its body is bounded (CLF_PROTO_SUB_VEC_DATA_MAX) and
 * received whole by iod_dispatch.c, so that the ranges are served from
 * memory, in order, each as the SUB_READ or SUB_WRITE it stands for
 * would be: the same store calls, hooks and counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "error.h"
#include "iod_ops.h"
#include "iod_xfer.h"

static struct iod_dest range_of(const struct clf_proto_sub_vec_req *m,
				uint32_t i)
{
	return (struct iod_dest){ .file = m->file, .subfile = m->subfile[i],
				  .off = m->offset[i] };
}

int iod_op_sub_writev(struct iod_conn *cn, struct iod_req *rq,
		      struct iod_reply *rep)
{
	/* 4 KiB of ranges: off the connection thread's stack. */
	struct clf_proto_sub_vec_req *m = malloc(sizeof(*m));
	const uint8_t *at;
	int64_t n = 0;
	int err;

	if (!m)
		return clf_fail(ENOMEM, "iod: out of memory");
	err = clf_proto_sub_writev_req_decode(&rq->r, m);
	if (err)
		goto out;
	at = m->data.ptr;
	for (uint32_t i = 0; i < m->n; i++) {
		struct iod_dest d = range_of(m, i);
		int64_t w = iod_xfer_store(cn, &d, at, m->length[i]);

		if (w < 0) {
			err = (int)w;
			goto out;
		}
		at += m->length[i];
		n += w;
	}
	err = iod_reply_u32(rep, (uint32_t)n);
out:
	free(m);
	return err;
}

int iod_op_sub_readv(struct iod_conn *cn, struct iod_req *rq,
		     struct iod_reply *rep)
{
	struct clf_proto_sub_vec_req *m = malloc(sizeof(*m));
	uint8_t *buf;
	size_t total = 0, at = 0;
	int err;

	if (!m)
		return clf_fail(ENOMEM, "iod: out of memory");
	err = clf_proto_sub_readv_req_decode(&rq->r, m);
	if (err)
		goto out;
	for (uint32_t i = 0; i < m->n; i++)
		total += m->length[i];
	/* At most CLF_PROTO_SUB_VEC_DATA_MAX: the decoder checked. */
	err = iod_conn_data_buffer(cn, total, (void **)&buf);
	if (err)
		goto out;
	for (uint32_t i = 0; i < m->n; i++) {
		ssize_t got = iod_store_read(cn->srv->st, m->file, m->subfile[i],
					     m->offset[i], buf + at,
					     m->length[i]);

		if (got < 0) {
			err = (int)got;
			goto out;
		}
		/* Past the end of the subfile: zeros, the range stays
		 * whole so the client finds each one where it sent it. */
		memset(buf + at + got, 0, m->length[i] - (size_t)got);
		at += m->length[i];
	}
	err = iod_reply_data(rep, buf, total);
	if (!err)
		atomic_fetch_add(&cn->srv->bytes_read, total);
out:
	free(m);
	return err;
}
