// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_cap.c -- capabilities at the iod (iod_cap.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cap.h"
#include "error.h"
#include "iod_cap.h"
#include "iod_conn.h"
#include "iod_view.h"

int iod_cap_take(struct iod_conn *cn, const uint8_t *body, size_t len)
{
	struct wire_reader r = { body, len, 0, false };
	struct iod_caps *t = cn->caps;
	uint8_t key[CLF_CAP_KEY];
	struct clf_cap cap;
	int64_t now = (int64_t)time(NULL);
	unsigned slot;
	bool valid;

	if (clf_cap_decode(&r, &cap) || r.pos != r.len)
		return clf_fail(EPROTO, "iod: malformed CAP");
	if (!t)		/* holds the secret: nothing to check later */
		return 0;
	clf_cap_key(&cn->srv->cfg->secret, key);
	valid = clf_cap_valid(&cap, key);
	memset(key, 0, sizeof(key));
	if (!valid)
		return clf_fail(EACCES,
				"iod: forged capability for file %llu (its MAC is wrong)",
				(unsigned long long)cap.ino);
	if (cap.uid != t->uid)
		return clf_fail(EACCES,
				"iod: capability for file %llu belongs to uid %u, this connection is uid %u's",
				(unsigned long long)cap.ino, cap.uid, t->uid);
	if (cap.expiry <= now)
		return clf_fail(EKEYEXPIRED,
				"iod: capability for file %llu expired %lld s ago",
				(unsigned long long)cap.ino,
				(long long)(now - cap.expiry));
	/* Same file: the newer replaces.  Else a free, expired or the
	 * soonest-expiring slot. */
	for (slot = 0; slot < t->n; slot++)
		if (t->e[slot].ino == cap.ino)
			break;
	if (slot == t->n && t->n < CLF_PROTO_CAPS_MAX)
		t->n++;
	else if (slot == t->n)
		for (unsigned i = slot = 0; i < t->n; i++)
			if (t->e[i].expiry < t->e[slot].expiry)
				slot = i;
	t->e[slot] = (struct iod_cap_entry){ cap.ino, cap.rights, cap.expiry };
	return 0;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int need(struct iod_conn *cn, uint64_t ino, uint32_t rights,
		const char *op)
{
	const struct iod_caps *t = cn->caps;
	int64_t now = (int64_t)time(NULL);

	for (unsigned i = 0; i < t->n; i++) {
		if (t->e[i].ino != ino)
			continue;
		if (!(t->e[i].rights & rights))
			break;
		if (t->e[i].expiry <= now)
			return clf_fail(EKEYEXPIRED,
					"iod: %s of file %llu: the capability expired; ask metad again",
					op, (unsigned long long)ino);
		return 0;
	}
	return clf_fail(EACCES,
			"iod: %s of file %llu: no capability to %s it from metad on this connection",
			op, (unsigned long long)ino,
			rights == CLF_CAP_READ ? "read"
			: rights == CLF_CAP_WRITE ? "write" : "use");
}

/* The file of the view whose handle starts body; 0 if none. */
static uint64_t view_file(struct iod_conn *cn, const uint8_t *body)
{
	uint32_t handle = body[0] | body[1] << 8 | body[2] << 16 |
			  (uint32_t)body[3] << 24;
	struct iod_view *v;
	uint64_t file;

	if (iod_view_lookup(cn->srv->views, handle, cn->owner, &v))
		return 0;	/* the handler says there is no such view */
	file = v->file;
	iod_view_put(v);
	return file;
}

int iod_cap_check(struct iod_conn *cn, const struct clf_proto_header *h,
		  const uint8_t *body, size_t len)
{
	const char *op = clf_proto_op_name(h->opcode);
	uint64_t file;

	if (!cn->caps)
		return 0;
	switch (h->opcode) {
	case CLF_PROTO_OP_SUB_READ:
	case CLF_PROTO_OP_SUB_WRITE:
	case CLF_PROTO_OP_SUB_READV:
	case CLF_PROTO_OP_SUB_WRITEV:
	case CLF_PROTO_OP_VIEW_REGISTER:
	case CLF_PROTO_OP_TRUNCATE:
		if (len < 8)
			return 0;	/* malformed: the handler refuses it */
		file = get_u64(body);
		break;
	case CLF_PROTO_OP_VIEW_READ:
	case CLF_PROTO_OP_VIEW_WRITE:
		if (len < 4)
			return 0;
		file = view_file(cn, body);
		if (!file)
			return 0;
		break;
	case CLF_PROTO_OP_REMOVE:
	case CLF_PROTO_OP_REMOVE_MANY:
		return clf_fail(EACCES,
				"iod: %s is metad's (when a file's last name goes)",
				op);
	case CLF_PROTO_OP_SUB_LIST:
		return clf_fail(EACCES,
				"iod: SUB_LIST is the administrator's (clf fsck, with the secret)");
	case CLF_PROTO_OP_LOCK_ENQUEUE:
		/* u64 client, u64 file, u32 subfile, u32 mode: a lock holds
		 * up others' accesses, so it takes the right it caches for. */
		if (len < 24)
			return 0;
		file = get_u64(body + 8);
		return need(cn, file, body[20] == CLF_PROTO_LOCK_PR
					      ? CLF_CAP_READ : CLF_CAP_WRITE, op);
	default:
		return 0;
	}
	switch (h->opcode) {
	case CLF_PROTO_OP_SUB_READ:
	case CLF_PROTO_OP_SUB_READV:
	case CLF_PROTO_OP_VIEW_READ:
		return need(cn, file, CLF_CAP_READ, op);
	case CLF_PROTO_OP_VIEW_REGISTER:
		return need(cn, file, CLF_CAP_RIGHTS, op);
	default:
		return need(cn, file, CLF_CAP_WRITE, op);
	}
}
