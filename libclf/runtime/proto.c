// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto.c -- the message header, the field helpers and the request
 * identity (hand-written), and the rules of the declared authentication
 * bodies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "proto_i.h"

/* Largest errno a status may carry (Linux errnos are all below 4096). */
#define STATUS_ERRNO_MAX 4095

struct clf_proto_str clf_proto_str_of(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	/* An impossible length still fails the encoders' limit checks. */
	struct clf_proto_str r = {
		s, n > UINT32_MAX ? UINT32_MAX : (uint32_t)n
	};

	return r;
}

char *clf_proto_str_dup(struct clf_proto_str s)
{
	char *p = malloc((size_t)s.len + 1);

	if (!p)
		return NULL;
	if (s.len)
		memcpy(p, s.ptr, s.len);
	p[s.len] = '\0';
	return p;
}

bool clf_proto_str_eq(struct clf_proto_str s, const char *c)
{
	size_t n = strlen(c);

	return n == s.len && (n == 0 || memcmp(s.ptr, c, n) == 0);
}

uint16_t clf_proto_negotiate_minor(uint16_t peer_minor)
{
	/* A variable, not the macro: with minor 0 the compiler would call
	 * the comparison pointless. */
	const uint16_t ours = CLF_PROTO_VERSION_MINOR;

	return peer_minor < ours ? peer_minor : ours;
}

const char *clf_proto_op_name(uint16_t op)
{
	switch (op) {
	case CLF_PROTO_OP_HELLO: return "HELLO";
	case CLF_PROTO_OP_CHALLENGE: return "CHALLENGE";
	case CLF_PROTO_OP_RESPONSE: return "RESPONSE";
	case CLF_PROTO_OP_AUTH_OK: return "AUTH_OK";
	case CLF_PROTO_OP_MUNGE_RESPONSE: return "MUNGE_RESPONSE";
	case CLF_PROTO_OP_PING: return "PING";
	case CLF_PROTO_OP_STATUS: return "STATUS";
	case CLF_PROTO_OP_LOOKUP: return "LOOKUP";
	case CLF_PROTO_OP_CREATE: return "CREATE";
	case CLF_PROTO_OP_MKDIR: return "MKDIR";
	case CLF_PROTO_OP_READDIR: return "READDIR";
	case CLF_PROTO_OP_RENAME: return "RENAME";
	case CLF_PROTO_OP_UNLINK: return "UNLINK";
	case CLF_PROTO_OP_RMDIR: return "RMDIR";
	case CLF_PROTO_OP_GETATTR: return "GETATTR";
	case CLF_PROTO_OP_SETATTR: return "SETATTR";
	case CLF_PROTO_OP_STATFS: return "STATFS";
	case CLF_PROTO_OP_SET_LAYOUT: return "SET_LAYOUT";
	case CLF_PROTO_OP_GET_LAYOUT: return "GET_LAYOUT";
	case CLF_PROTO_OP_UPDATE_SIZE: return "UPDATE_SIZE";
	case CLF_PROTO_OP_SETLK: return "SETLK";
	case CLF_PROTO_OP_GETLK: return "GETLK";
	case CLF_PROTO_OP_UNLOCK_OWNER: return "UNLOCK_OWNER";
	case CLF_PROTO_OP_APPEND: return "APPEND";
	case CLF_PROTO_OP_SYMLINK: return "SYMLINK";
	case CLF_PROTO_OP_READLINK: return "READLINK";
	case CLF_PROTO_OP_LINK: return "LINK";
	case CLF_PROTO_OP_MKNOD: return "MKNOD";
	case CLF_PROTO_OP_CAP_GRANT: return "CAP_GRANT";
	case CLF_PROTO_OP_INSTANCE: return "INSTANCE";
	case CLF_PROTO_OP_RESOLVE: return "RESOLVE";
	case CLF_PROTO_OP_MD_PEER: return "MD_PEER";
	case CLF_PROTO_OP_READDIRPLUS: return "READDIRPLUS";
	case CLF_PROTO_OP_CAP: return "CAP";
	case CLF_PROTO_OP_SUB_READ: return "SUB_READ";
	case CLF_PROTO_OP_SUB_WRITE: return "SUB_WRITE";
	case CLF_PROTO_OP_VIEW_REGISTER: return "VIEW_REGISTER";
	case CLF_PROTO_OP_VIEW_RELEASE: return "VIEW_RELEASE";
	case CLF_PROTO_OP_VIEW_READ: return "VIEW_READ";
	case CLF_PROTO_OP_VIEW_WRITE: return "VIEW_WRITE";
	case CLF_PROTO_OP_SYNC: return "SYNC";
	case CLF_PROTO_OP_TRUNCATE: return "TRUNCATE";
	case CLF_PROTO_OP_REMOVE: return "REMOVE";
	case CLF_PROTO_OP_IOD_STATFS: return "IOD_STATFS";
	case CLF_PROTO_OP_SUB_SIZES: return "SUB_SIZES";
	case CLF_PROTO_OP_SUB_LIST: return "SUB_LIST";
	case CLF_PROTO_OP_SUB_READV: return "SUB_READV";
	case CLF_PROTO_OP_SUB_WRITEV: return "SUB_WRITEV";
	case CLF_PROTO_OP_LOCK_CALLBACK: return "LOCK_CALLBACK";
	case CLF_PROTO_OP_LOCK_ENQUEUE: return "LOCK_ENQUEUE";
	case CLF_PROTO_OP_LOCK_RELEASE: return "LOCK_RELEASE";
	case CLF_PROTO_OP_REVOKE: return "REVOKE";
	case CLF_PROTO_OP_SUB_SIZES_MANY: return "SUB_SIZES_MANY";
	case CLF_PROTO_OP_REMOVE_MANY: return "REMOVE_MANY";
	case CLF_PROTO_OP_FENCE: return "FENCE";
	case CLF_PROTO_OP_VIEW_MERGED: return "VIEW_MERGED";
	case CLF_PROTO_OP_SUB_MOVE: return "SUB_MOVE";
	case CLF_PROTO_OP_IOD_STATE: return "IOD_STATE";
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Field helpers                                                       */
/* ------------------------------------------------------------------ */

/* The len bytes after a length field of r, checked against max. */
static int get_sized(struct wire_reader *r, uint32_t len, uint32_t max,
		     const char *what, const uint8_t **out)
{
	if (r->bad)
		return clf_fail(EPROTO, "proto: %s: truncated length", what);
	if (len > max)
		return clf_fail(E2BIG, "proto: %s: %u bytes, limit %u", what,
				len, max);
	*out = proto_get_ref(r, len);
	if (!*out)
		return clf_fail(EPROTO, "proto: %s: %u bytes, %zu left", what,
				len, proto_left(r));
	return 0;
}

int proto_get_str16(struct wire_reader *r, struct clf_proto_str *s,
		    uint32_t max, const char *what)
{
	uint16_t len = wire_get_u16(r);
	const uint8_t *p;
	int err = get_sized(r, len, max, what, &p);

	if (err)
		return err;
	s->ptr = (const char *)p;
	s->len = len;
	return 0;
}

int proto_get_bytes32(struct wire_reader *r, struct clf_proto_bytes *b,
		      uint32_t max, const char *what)
{
	uint32_t len = wire_get_u32(r);
	const uint8_t *p;
	int err = get_sized(r, len, max, what, &p);

	if (err)
		return err;
	b->ptr = p;
	b->len = len;
	return 0;
}

void proto_put_str16(struct wire_writer *w, struct clf_proto_str s)
{
	wire_put_u16(w, (uint16_t)s.len);
	wire_put_bytes(w, s.ptr, s.len);
}

void proto_put_bytes32(struct wire_writer *w, struct clf_proto_bytes b)
{
	wire_put_u32(w, b.len);
	wire_put_bytes(w, b.ptr, b.len);
}

int proto_end(const struct wire_reader *r, const char *what)
{
	if (r->bad)
		return clf_fail(EPROTO, "proto: %s: truncated", what);
	if (r->pos != r->len)
		return clf_fail(EPROTO, "proto: %s: %zu trailing bytes", what,
				r->len - r->pos);
	return 0;
}

int proto_check_str(struct clf_proto_str s, uint32_t max, const char *what)
{
	if (s.len > max)
		return clf_fail(E2BIG, "proto: %s: %u bytes, limit %u", what,
				s.len, max);
	if (s.len && !s.ptr)
		return clf_fail(EPROTO, "proto: %s: no bytes", what);
	if (s.len && memchr(s.ptr, '\0', s.len))
		return clf_fail(EPROTO, "proto: %s: contains a NUL byte", what);
	return 0;
}

int proto_check_name(struct clf_proto_str s, const char *what)
{
	int err = proto_check_str(s, CLF_PROTO_NAME_MAX, what);

	if (err)
		return err;
	if (s.len == 0)
		return clf_fail(EPROTO, "proto: %s: empty name", what);
	if (memchr(s.ptr, '/', s.len))
		return clf_fail(EPROTO, "proto: %s: '/' in a name", what);
	if (clf_proto_str_eq(s, ".") || clf_proto_str_eq(s, ".."))
		return clf_fail(EPROTO, "proto: %s: '.' or '..' as a name",
				what);
	return 0;
}

int proto_check_path(struct clf_proto_str s, const char *what)
{
	int err = proto_check_str(s, CLF_PROTO_PATH_MAX, what);
	uint32_t start = 0;

	if (err)
		return err;
	if (s.len == 0)
		return clf_fail(EPROTO, "proto: %s: empty path", what);
	while (start <= s.len) {
		const char *slash = memchr(s.ptr + start, '/', s.len - start);
		uint32_t end = slash ? (uint32_t)(slash - s.ptr) : s.len;
		struct clf_proto_str c = { s.ptr + start, end - start };

		if (c.len == 0)
			return clf_fail(EPROTO,
				"proto: %s: empty component at byte %u", what,
				start);
		if (c.len > CLF_PROTO_NAME_MAX)
			return clf_fail(E2BIG,
				"proto: %s: component at byte %u has %u bytes, limit %d",
				what, start, c.len, CLF_PROTO_NAME_MAX);
		if (clf_proto_str_eq(c, ".") || clf_proto_str_eq(c, ".."))
			return clf_fail(EPROTO,
				"proto: %s: '.' or '..' at byte %u", what,
				start);
		start = end + 1;
	}
	return 0;
}

int proto_check_bytes(struct clf_proto_bytes b, uint32_t min, uint32_t max,
		      const char *what)
{
	if (b.len > max)
		return clf_fail(E2BIG, "proto: %s: %u bytes, limit %u", what,
				b.len, max);
	if (b.len < min)
		return clf_fail(EPROTO, "proto: %s: %u bytes, at least %u",
				what, b.len, min);
	if (b.len && !b.ptr)
		return clf_fail(EPROTO, "proto: %s: no bytes", what);
	return 0;
}

int proto_check_bool(uint8_t v, const char *what)
{
	if (v > 1)
		return clf_fail(EPROTO, "proto: %s: %u is not 0 or 1", what, v);
	return 0;
}

int proto_check_nonneg(int64_t v, const char *what)
{
	if (v < 0)
		return clf_fail(EPROTO, "proto: %s: %lld is negative", what,
				(long long)v);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Header                                                              */
/* ------------------------------------------------------------------ */

void clf_proto_header_init(struct clf_proto_header *h, uint16_t op,
			   uint64_t id)
{
	*h = (struct clf_proto_header){
		.magic = CLF_PROTO_MAGIC,
		.major = CLF_PROTO_VERSION_MAJOR,
		.minor = CLF_PROTO_VERSION_MINOR,
		.opcode = op,
		.id = id,
	};
}

void clf_proto_header_init_reply(struct clf_proto_header *h,
				 const struct clf_proto_header *req,
				 int32_t status)
{
	clf_proto_header_init(h, req->opcode, req->id);
	h->flags = CLF_PROTO_FLAG_REPLY;
	h->status = status;
}

void clf_proto_header_encode(struct wire_writer *w,
			     const struct clf_proto_header *h)
{
	wire_put_u32(w, h->magic);
	wire_put_u16(w, h->major);
	wire_put_u16(w, h->minor);
	wire_put_u16(w, h->opcode);
	wire_put_u16(w, h->flags);
	wire_put_u64(w, h->id);
	wire_put_u32(w, h->payload_len);
	wire_put_u32(w, (uint32_t)h->status);
	wire_put_u32(w, 0);
}

static int header_decode(struct wire_reader *r, struct clf_proto_header *out,
			 bool any_major)
{
	struct clf_proto_header h;

	if (proto_left(r) < CLF_PROTO_HEADER_SIZE)
		return clf_fail(EPROTO, "proto: header: %zu bytes, need %d",
				proto_left(r), CLF_PROTO_HEADER_SIZE);
	h.magic = wire_get_u32(r);
	h.major = wire_get_u16(r);
	h.minor = wire_get_u16(r);
	h.opcode = wire_get_u16(r);
	h.flags = wire_get_u16(r);
	h.id = wire_get_u64(r);
	h.payload_len = wire_get_u32(r);
	h.status = (int32_t)wire_get_u32(r);
	(void)wire_get_u32(r);	/* reserved: ignored, see clf_proto.h */

	if (h.magic != CLF_PROTO_MAGIC)
		return clf_fail(EPROTO,
				"proto: header: magic 0x%08x is not clf's",
				h.magic);
	if (h.major != CLF_PROTO_VERSION_MAJOR) {
		if (!any_major)
			return clf_fail(EPROTONOSUPPORT,
					"proto: peer speaks protocol %u.%u, this side %d.%d",
					h.major, h.minor,
					CLF_PROTO_VERSION_MAJOR,
					CLF_PROTO_VERSION_MINOR);
		/* The rest may mean something else in that version. */
		*out = h;
		return 0;
	}
	if (h.flags & ~CLF_PROTO_FLAGS_KNOWN)
		return clf_fail(EPROTO, "proto: header: unknown flags 0x%04x",
				h.flags);
	if (!(h.flags & CLF_PROTO_FLAG_REPLY) && h.status != 0)
		return clf_fail(EPROTO, "proto: header: request with status %d",
				h.status);
	if (h.status > 0 || h.status < -STATUS_ERRNO_MAX)
		return clf_fail(EPROTO,
				"proto: header: status %d is not 0 or -errno",
				h.status);
	if (h.payload_len > CLF_PROTO_PAYLOAD_MAX)
		return clf_fail(E2BIG, "proto: header: payload of %u bytes, limit %u",
				h.payload_len, CLF_PROTO_PAYLOAD_MAX);
	*out = h;
	return 0;
}

int clf_proto_header_decode(struct wire_reader *r, struct clf_proto_header *h)
{
	return header_decode(r, h, false);
}

int clf_proto_header_decode_any_major(struct wire_reader *r,
				      struct clf_proto_header *h)
{
	return header_decode(r, h, true);
}

int clf_proto_empty_decode(struct wire_reader *r)
{
	return proto_end(r, "body that must be empty");
}

/* ------------------------------------------------------------------ */
/* Request identity                                                    */
/* ------------------------------------------------------------------ */

int clf_proto_reqid_encode(struct wire_writer *w,
			   const struct clf_proto_reqid *m)
{
	if (!m->client || !m->seq)
		return proto_enc_err(clf_fail(EPROTO,
					      "proto: request identity: zero field"));
	wire_put_u64(w, m->client);
	wire_put_u64(w, m->seq);
	return 0;
}

int clf_proto_reqid_decode(struct wire_reader *r, struct clf_proto_reqid *m)
{
	struct clf_proto_reqid t;

	t.client = wire_get_u64(r);
	t.seq = wire_get_u64(r);
	if (r->bad)
		return clf_fail(EPROTO, "proto: request identity: truncated");
	if (!t.client || !t.seq)
		return clf_fail(EPROTO, "proto: request identity: zero field");
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Authentication: rules of the declared bodies                        */
/* ------------------------------------------------------------------ */

/* The key share came with 1.8; an older peer sends the body without. */
static int check_kx(bool has_kx, uint16_t minor, const char *what)
{
	if (has_kx && minor < 8)
		return clf_fail(EPROTO, "proto: %s: a key share at minor %u",
				what, minor);
	return 0;
}

int proto_check_hello(const void *msg)
{
	const struct clf_proto_hello *m = msg;

	return check_kx(m->has_kx, m->minor, "HELLO");
}

int proto_check_challenge(const void *msg)
{
	const struct clf_proto_challenge *m = msg;

	return check_kx(m->has_kx, m->minor, "CHALLENGE");
}
