/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto_i.h -- helpers shared by proto.c, proto_meta.c and proto_io.c;
 * not for use outside the protocol codec.
 *
 * The check functions return 0, -EPROTO (malformed) or -E2BIG (over a
 * limit) with a message naming `what` (the message and the field).
 * Decoders return that as is; encoders turn -EPROTO into -EINVAL with
 * proto_enc_err(), since then the caller, not a peer, is at fault.
 */
#ifndef CLF_PROTO_I_H
#define CLF_PROTO_I_H

#include <errno.h>

#include "proto.h"

/* Borrow n bytes at the cursor; NULL (and r->bad) when fewer remain. */
static inline const uint8_t *proto_get_ref(struct wire_reader *r, size_t n)
{
	const uint8_t *p;

	if (!wire_take(r, n))
		return NULL;
	p = r->buf + r->pos;
	r->pos += n;
	return p;
}

/* Bytes left to read, 0 once the reader went bad. */
static inline size_t proto_left(const struct wire_reader *r)
{
	return r->bad || r->pos > r->len ? 0 : r->len - r->pos;
}

static inline int proto_enc_err(int err)
{
	return err == -EPROTO ? -EINVAL : err;
}

/*
 * Read a str16 or bytes32 and borrow its bytes.  A length over max is
 * -E2BIG before anything else; a length past the buffer is -EPROTO.
 */
int proto_get_str16(struct wire_reader *r, struct clf_proto_str *s,
		    uint32_t max, const char *what);
int proto_get_bytes32(struct wire_reader *r, struct clf_proto_bytes *b,
		      uint32_t max, const char *what);
void proto_put_str16(struct wire_writer *w, struct clf_proto_str s);
void proto_put_bytes32(struct wire_writer *w, struct clf_proto_bytes b);

/* After the last field: -EPROTO when truncated or with trailing bytes. */
int proto_end(const struct wire_reader *r, const char *what);

/* Field checks. */
int proto_check_str(struct clf_proto_str s, uint32_t max, const char *what);
int proto_check_name(struct clf_proto_str s, const char *what);
int proto_check_path(struct clf_proto_str s, const char *what);
int proto_check_bytes(struct clf_proto_bytes b, uint32_t min, uint32_t max,
		      const char *what);
int proto_check_bool(uint8_t v, const char *what);
int proto_check_nonneg(int64_t v, const char *what);

#endif /* CLF_PROTO_I_H */
