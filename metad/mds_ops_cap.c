// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_cap.c -- CAP_GRANT: a capability for the iods (libclf/runtime/cap.h)
 * after the check an open makes.
 *
 * The file is named by inode, as GETATTR names it: the client opened it
 * by path before (with the same check), and asks again by inode when the
 * capability it holds runs out.  So a chmod that removes a right shows
 * at the latest one lifetime after it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>

#include "cap.h"
#include "error.h"
#include "mds_ops_i.h"

int mds_op_cap(const struct mds_session *s, struct wire_reader *r,
	       struct mds_reply *rep)
{
	uint8_t key[CLF_CAP_KEY], buf[CLF_CAP_WIRE];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_cap cap = { 0 };
	struct mds_attr a;
	char name[40];
	unsigned want;
	int err;

	cap.ino = wire_get_u64(r);
	cap.rights = wire_get_u32(r);
	if (r->bad || r->pos != r->len || !cap.rights ||
	    (cap.rights & ~CLF_CAP_RIGHTS))
		return mds_bad_request(s, CLF_PROTO_OP_CAP_GRANT,
				       clf_fail(EPROTO,
						"metad: malformed CAP_GRANT"));
	err = mds_getattr(s->ctx->store, cap.ino, &a);
	if (err)
		return err;
	if (!S_ISREG(a.mode))
		return clf_fail(EINVAL,
				"metad: inode %llu is not a regular file: no data to grant",
				(unsigned long long)cap.ino);
	snprintf(name, sizeof(name), "inode %llu", (unsigned long long)cap.ino);
	want = (cap.rights & CLF_CAP_READ ? MDS_MAY_READ : 0) |
	       (cap.rights & CLF_CAP_WRITE ? MDS_MAY_WRITE : 0);
	err = mds_perm_open(s->cred, &a, want, name);
	if (err)
		return err;
	cap.uid = s->auth_uid;
	cap.lifetime = (uint32_t)s->ctx->cfg->cap_lifetime_s;
	cap.expiry = (int64_t)time(NULL) + cap.lifetime;
	clf_cap_key(&s->ctx->cfg->secret, key);
	clf_cap_sign(&cap, key);
	memset(key, 0, sizeof(key));
	clf_cap_encode(&w, &cap);
	rep->buf = malloc(w.pos);
	if (!rep->buf)
		return clf_fail(ENOMEM, "metad: out of memory");
	memcpy(rep->buf, buf, w.pos);
	rep->len = w.pos;
	return 0;
}
