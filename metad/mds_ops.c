// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops.c -- the requests about the daemon itself (PING, STATUS,
 * STATFS, INSTANCE), and the answer to a body that did not decode, which every
 * handler shares.  Which handler serves an opcode: mds_dispatch.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_data.h"
#include "mds_ops_i.h"
#include "transport.h"

/*
 * STATFS files_free: the store grows to at most its map size, and one
 * inode with its directory entries takes about this many bytes of it (a
 * file with a large layout takes more): an estimate, as for any file
 * system whose inodes are not preallocated.
 */
#define MDS_BYTES_PER_INODE 512

int mds_bad_request(const struct mds_session *s, uint16_t op, int err)
{
	const char *name = clf_proto_op_name(op);

	err = mds_fail_ctx(err, "metad: malformed %s", name);
	mds_log("malformed %s from %s (%s): %s", name, s->peer, s->role,
		CLF_Last_error());
	return err;
}

int mds_op_ping(const struct mds_session *s, struct wire_reader *r,
		struct mds_reply *rep)
{
	int err = clf_proto_empty_decode(r);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_PING, err);
	return mds_reply_empty(rep);
}

int mds_op_status(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct mds_ctx *ctx = s->ctx;
	struct clf_proto_status m;
	int err = clf_proto_empty_decode(r);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_STATUS, err);
	/* metad moves no file data: its byte counts are message bytes. */
	m = (struct clf_proto_status){
		.uptime_ms = (uint64_t)(clf_now_ms() - ctx->start_ms),
		.requests = atomic_load(&ctx->requests),
		.bytes_read = atomic_load(&ctx->bytes_in),
		.bytes_written = atomic_load(&ctx->bytes_out),
		.connections = atomic_load(&ctx->connections),
		.views = 0,
	};
	return mds_reply_status(rep, &m);
}

int mds_op_statfs(const struct mds_session *s, struct wire_reader *r,
		  struct mds_reply *rep)
{
	struct clf_proto_statfs m;
	struct mds_statfs st;
	int err = clf_proto_empty_decode(r);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_STATFS, err);
	err = mds_statfs(s->ctx->store, &st);
	if (!err)
		err = mds_data_statfs(s->ctx->iods, &m);
	if (err)
		return err;
	m.files = st.inodes;
	m.files_free = st.bytes_max > st.bytes_used
			       ? (st.bytes_max - st.bytes_used) /
					 MDS_BYTES_PER_INODE
			       : 0;
	return mds_reply_statfs(rep, &m);
}

/*
 * INSTANCE: the iods of the configuration metad runs with, by index, and
 * the defaults its clients use, for a client that has no configuration
 * file (clf://HOST:PORT).  Addresses are as configured: an instance that
 * serves remote clients names its iods by addresses they can reach.
 */
int mds_op_instance(const struct mds_session *s, struct wire_reader *r,
		    struct mds_reply *rep)
{
	const struct clf_config *cfg = s->ctx->cfg;
	struct clf_proto_instance m;
	int err = clf_proto_empty_decode(r);

	if (err)
		return mds_bad_request(s, CLF_PROTO_OP_INSTANCE, err);
	m = (struct clf_proto_instance){
		.stripe_size = (uint64_t)cfg->stripe_size,
		.stripe_count = mds_iods_stripe_count(s->ctx->iods),
		.first_iod = cfg->first_iod,
		.timeout_ms = (uint32_t)cfg->timeout_ms,
		.recovery_grace_s = (uint32_t)cfg->recovery_grace_s,
		/* The iods now: some may have joined since the start. */
		.niods = mds_iods_count(s->ctx->iods),
	};
	m.iods = calloc(m.niods, sizeof(*m.iods));
	if (!m.iods)
		return mds_fail_ctx(-ENOMEM, "metad: out of memory");
	for (uint32_t i = 0; i < m.niods; i++)
		m.iods[i].addr = clf_proto_str_of(mds_iods_addr(s->ctx->iods,
								i));
	/* The metads too (1.17), for a namespace over several; a client of
	 * 1.16 or older would refuse the bytes it does not expect. */
	if (s->minor >= 17) {
		m.metads = calloc(cfg->nmetads, sizeof(*m.metads));
		if (!m.metads) {
			free(m.iods);
			return mds_fail_ctx(-ENOMEM, "metad: out of memory");
		}
		m.has_metads = true;
		m.metad_index = s->ctx->index;
		m.nmetads = cfg->nmetads;
		for (uint32_t i = 0; i < cfg->nmetads; i++)
			m.metads[i].addr = clf_proto_str_of(cfg->metads[i].addr);
	}
	err = mds_reply_instance(rep, &m);
	free(m.metads);
	free(m.iods);
	return err;
}
