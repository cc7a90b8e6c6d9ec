// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_retire.c -- retired iods (mds_retire.h): a durable key per iod in
 * the superblock database, mirrored in an atomic bitmap that the
 * placement of every create reads (mds_wire.c).  IOD_STATE, the
 * request that changes it, is in mds_ops_iod.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds.h"
#include "mds_retire.h"
#include "mds_store_i.h"

#define RETIRED_PREFIX "retired/"
#define RETIRED_KEY_MAX 24
#define WORDS ((MDS_MAX_IODS + 63) / 64)

struct mds_retired {
	_Atomic uint64_t bits[WORDS];
};

static void retired_key(char buf[RETIRED_KEY_MAX], uint32_t iod, MDB_val *key)
{
	int n = snprintf(buf, RETIRED_KEY_MAX, RETIRED_PREFIX "%08" PRIx32,
			 iod);

	key->mv_data = buf;
	key->mv_size = (size_t)n;
}

static void mark(struct mds_retired *r, uint32_t iod, bool on)
{
	uint64_t bit = UINT64_C(1) << (iod % 64);

	if (on)
		atomic_fetch_or(&r->bits[iod / 64], bit);
	else
		atomic_fetch_and(&r->bits[iod / 64], ~bit);
}

bool mds_retired_has(const struct mds_retired *r, uint32_t iod)
{
	if (!r || iod >= MDS_MAX_IODS)
		return false;
	return atomic_load(&r->bits[iod / 64]) >> (iod % 64) & 1;
}

int mds_retired_load(struct mds_store *s, struct mds_retired **out)
{
	struct mds_retired *r = calloc(1, sizeof(*r));
	MDB_val key = { strlen(RETIRED_PREFIX), (void *)RETIRED_PREFIX }, v;
	MDB_cursor *cur;
	MDB_txn *txn;
	int rc, err;

	if (!r)
		return clf_fail(ENOMEM, "metad: out of memory");
	err = mds_txn_begin(s, false, &txn, "list retired iods");
	if (err) {
		free(r);
		return err;
	}
	rc = mdb_cursor_open(txn, s->super, &cur);
	if (rc) {
		mdb_txn_abort(txn);
		free(r);
		return mds_lmdb_fail(rc, "list retired iods");
	}
	for (rc = mdb_cursor_get(cur, &key, &v, MDB_SET_RANGE); !rc;
	     rc = mdb_cursor_get(cur, &key, &v, MDB_NEXT)) {
		char hex[9] = { 0 };
		unsigned long iod;

		if (key.mv_size != strlen(RETIRED_PREFIX) + 8 ||
		    memcmp(key.mv_data, RETIRED_PREFIX, strlen(RETIRED_PREFIX)))
			break;
		memcpy(hex, (const char *)key.mv_data + strlen(RETIRED_PREFIX),
		       8);
		iod = strtoul(hex, NULL, 16);
		if (iod >= MDS_MAX_IODS)
			continue;
		mark(r, (uint32_t)iod, true);
		mds_log("iod %lu is retired (clf iod remove): no new subfiles go there; clf iod add %lu brings it back",
			iod, iod);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	*out = r;
	return 0;
}

void mds_retired_free(struct mds_retired *r)
{
	free(r);
}

int mds_retired_set(struct mds_store *s, struct mds_retired *r, uint32_t iod,
		    bool retired)
{
	const char *what = retired ? "retire an iod" : "bring an iod back";
	char kbuf[RETIRED_KEY_MAX];
	uint8_t one = 1;
	MDB_val key, v = { 1, &one };
	MDB_txn *txn;
	int rc, err;

	retired_key(kbuf, iod, &key);
	err = mds_txn_begin(s, true, &txn, what);
	if (err)
		return err;
	rc = retired ? mdb_put(txn, s->super, &key, &v, 0)
		     : mdb_del(txn, s->super, &key, NULL);
	if (rc && !(rc == MDB_NOTFOUND && !retired)) {
		mdb_txn_abort(txn);
		return mds_lmdb_fail(rc, what);
	}
	err = mds_txn_commit(txn, what);
	if (!err)
		mark(r, iod, retired);
	return err;
}

int64_t mds_retired_next(const struct mds_retired *r, uint32_t niods,
			 uint32_t iod)
{
	for (uint32_t k = 0; k < niods; k++) {
		uint32_t i = (iod + k) % niods;

		if (!mds_retired_has(r, i))
			return i;
	}
	return clf_fail(ENOSPC,
			"metad: every iod is retired (clf iod remove): bring one back with clf iod add N");
}

uint32_t mds_retired_active(const struct mds_retired *r, uint32_t niods)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < niods; i++)
		n += !mds_retired_has(r, i);
	return n;
}
