// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * file_cap.c -- the capabilities a file's I/O needs at the iods
 * (clf_proto.h, "Capabilities"), asked from metad and handed to each iod
 * connection once per lifetime.
 *
 * A capability is asked again when a quarter of its lifetime is left, so
 * that an I/O that started with it does not meet its end at the iod; an
 * iod that says it expired anyway (clocks apart) fails that I/O with
 * -EKEYEXPIRED, and the next one asks again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "error.h"
#include "transport.h"

static uint32_t rights_of(int flags)
{
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		return CLF_CAP_READ;
	case O_WRONLY:
		return CLF_CAP_WRITE;
	default:
		return CLF_CAP_READ | CLF_CAP_WRITE;
	}
}

struct grant_req {
	uint64_t ino;
	uint32_t rights;
};

static int enc_grant(struct wire_writer *w, const void *m)
{
	const struct grant_req *g = m;

	wire_put_u64(w, g->ino);
	wire_put_u32(w, g->rights);
	return 0;
}

/* A fresh capability for f from metad. */
static int grant(struct clf_file *f)
{
	struct grant_req g = { f->ino, rights_of(f->flags) };
	struct wire_reader r;
	struct clf_cap cap;
	uint32_t rlen;
	void *reply;
	int64_t now = clf_now_ms();
	int err = clf_meta_call(CLF_PROTO_OP_CAP_GRANT, enc_grant, &g, &reply,
				&rlen);

	if (err)
		return err;
	r = (struct wire_reader){ reply, rlen, 0, false };
	err = clf_cap_decode(&r, &cap);
	free(reply);
	if (err)
		return err;
	f->cap = cap;
	f->cap_renew_ms = now + (int64_t)cap.lifetime * 1000 * 3 / 4;
	return 0;
}

static int enc_cap(struct wire_writer *w, const void *m)
{
	clf_cap_encode(w, m);
	return 0;
}

int clf_file_cap_ensure(struct clf_file *f, struct clf_peer *p)
{
	struct clf_client *cl;
	struct clf_peer_cap *slot;
	struct iovec iov;
	uint32_t rlen;
	uint64_t id;
	void *body, *reply;
	size_t len;
	int err = clf_client_get(&cl);

	if (err)
		return err;
	if (cl->cfg->has_secret || !p->conn || clf_conn_minor(p->conn) < 8)
		return 0;
	if (!f->cap_renew_ms || clf_now_ms() >= f->cap_renew_ms) {
		err = grant(f);
		if (err)
			return err;
	}
	for (unsigned i = 0; i < CLF_PEER_CAPS; i++) {
		slot = &p->caps[i];
		if (slot->gen == p->generation && slot->ino == f->ino &&
		    slot->expiry == f->cap.expiry &&
		    slot->rights == f->cap.rights)
			return 0;
	}
	err = clf_encode(enc_cap, &f->cap, &body, &len);
	if (err)
		return err;
	iov = (struct iovec){ body, len };
	err = clf_peer_send(p, CLF_PROTO_OP_CAP, &iov, 1, &id);
	free(body);
	if (!err)
		err = clf_peer_recv(p, CLF_PROTO_OP_CAP, id, &reply, &rlen);
	if (err)
		return err;
	free(reply);
	slot = &p->caps[p->next_cap++ % CLF_PEER_CAPS];
	*slot = (struct clf_peer_cap){ p->generation, f->ino, f->cap.expiry,
				       f->cap.rights };
	return 0;
}
