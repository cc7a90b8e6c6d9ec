// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_iod.c -- IOD_STATE: `clf iod remove` retires an iod, `clf
 * iod add N` brings it back (mds_retire.h), and `clf iod add` makes a
 * new one join (mds_iods_join) without a restart (docs/elastic.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "config.h"
#include "error.h"
#include "mds.h"
#include "mds_iods.h"
#include "mds_ops_i.h"
#include "mds_retire.h"
#include "wire.h"

/* JOIN: read the configuration file again; iods appended join. */
static int join(const struct mds_session *s, uint32_t iod)
{
	const char *path = s->ctx->cfg->source;
	struct clf_config *now = NULL;
	uint32_t before;
	int err;

	if (!path)
		return clf_fail(EINVAL,
				"metad: runs on the built-in configuration: no file to read iod %" PRIu32 " from (restart it with one)",
				iod);
	err = clf_config_load(path, &now);
	if (!err && iod >= now->niods)
		err = clf_fail(ENOENT,
			       "metad: %s has iods 0 to %" PRIu32 ", no iod %" PRIu32
			       " (metad reads its own file: on another host, add the [iod] section there)",
			       path, now->niods - 1, iod);
	if (!err)
		err = mds_iods_join(s->ctx->iods, now, &before);
	for (uint32_t i = before; !err && i < now->niods; i++)
		mds_log("iod %" PRIu32 " joined: %s (%" PRIu32
			" iods; new files span %s)", i, now->iods[i].addr,
			now->niods, now->stripe_count ? "stripe_count of them"
						      : "every one");
	clf_config_free(now);
	return err;
}

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
	if (state == CLF_PROTO_IOD_JOIN) {
		err = join(s, iod);
		if (err)
			return err;
		niods = mds_iods_count(s->ctx->iods);
	} else if (state != CLF_PROTO_IOD_QUERY && iod >= niods)
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
	} else if (state != CLF_PROTO_IOD_QUERY &&
		   state != CLF_PROTO_IOD_JOIN) {
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
