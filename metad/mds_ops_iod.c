// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_iod.c -- IOD_STATE: `clf iod remove` retires an iod, and
 * `clf iod add N` brings it back (mds_retire.h, docs/elastic.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "error.h"
#include "mds.h"
#include "mds_iods.h"
#include "mds_ops_i.h"
#include "mds_retire.h"
#include "wire.h"

int mds_op_iod_state(const struct mds_session *s, struct wire_reader *r,
		     struct mds_reply *rep)
{
	uint32_t iod = wire_get_u32(r), state = wire_get_u32(r);
	uint32_t niods = mds_iods_count(s->ctx->iods), n = 0;
	struct mds_retired *ret = s->ctx->retired;
	struct wire_writer w;
	int err = 0;

	if (r->bad || r->pos != r->len)
		return mds_bad_request(s, CLF_PROTO_OP_IOD_STATE, -EPROTO);
	if (!s->trusted)
		return clf_fail(EPERM,
				"metad: IOD_STATE is the administrator's (clf iod remove/add, with the secret)");
	if (!ret)
		return clf_fail(ENOTSUP, "metad: no retired set here");
	if (state != CLF_PROTO_IOD_QUERY && iod >= niods)
		return clf_fail(EINVAL,
				"metad: IOD_STATE of iod %" PRIu32
				"; the configuration has iods 0 to %" PRIu32,
				iod, niods - 1);
	if (state == CLF_PROTO_IOD_RETIRED && !mds_retired_has(ret, iod) &&
	    mds_retired_active(ret, niods) < 2)
		return clf_fail(EBUSY,
				"metad: iod %" PRIu32 " is the last one not retired", iod);
	if (state == CLF_PROTO_IOD_RETIRED || state == CLF_PROTO_IOD_ACTIVE) {
		bool was = mds_retired_has(ret, iod);

		err = mds_retired_set(s->ctx->store, ret, iod,
				      state == CLF_PROTO_IOD_RETIRED);
		if (err)
			return err;
		if (was != (state == CLF_PROTO_IOD_RETIRED))
			mds_log("iod %" PRIu32 " %s", iod,
				was ? "is back: new subfiles go there again"
				    : "retired: no new subfiles go there");
	} else if (state != CLF_PROTO_IOD_QUERY) {
		return clf_fail(EINVAL, "metad: IOD_STATE %" PRIu32 "?", state);
	}
	for (uint32_t i = 0; i < niods; i++)
		n += mds_retired_has(ret, i);
	rep->len = 4 + 4 * (size_t)n;
	rep->buf = malloc(rep->len);
	if (!rep->buf)
		return clf_fail(ENOMEM, "metad: out of memory");
	w = (struct wire_writer){ rep->buf, rep->len, 0 };
	wire_put_u32(&w, n);
	for (uint32_t i = 0; i < niods; i++)
		if (mds_retired_has(ret, i))
			wire_put_u32(&w, i);
	return 0;
}
