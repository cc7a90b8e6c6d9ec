/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto_i.h -- helpers shared by the protocol codec's files (proto*.c),
 * and the field descriptors of declared messages; not for use outside
 * the codec.
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

/* ------------------------------------------------------------------ */
/* Declared messages (proto_decl.h): descriptors and their codec       */
/* ------------------------------------------------------------------ */

#include <stddef.h>

enum proto_kind {
	PK_U8, PK_BOOL, PK_U16, PK_U32, PK_U64, PK_I64,	/* scalars */
	PK_FIXED, PK_STR, PK_BYTES, PK_DATA, PK_MSG, PK_ARRAY, PK_VEC,
	PK_WHEN, PK_TAIL,
};

/* What a field's value must satisfy besides its kind. */
enum proto_rule {
	PR_NONE, PR_NONNEG, PR_FLAGS, PR_LIMIT, PR_PERM, PR_SUBFILE,
	PR_SUBFILE_OR_ALL, PR_IOD,
	PR_ANY, PR_NONEMPTY, PR_NAME, PR_PATH, PR_ROLE,	/* strings */
};

struct proto_msg;

/* One field; made by PROTO_FIELD from a declaration, never by hand. */
struct proto_field {
	const char *name;
	uint8_t kind;		/* enum proto_kind */
	uint8_t rule;		/* enum proto_rule; VEC: its elements' */
	uint8_t ekind;		/* VEC: its elements' kind */
	uint8_t size;		/* WHEN: bytes of the field it tests */
	uint32_t off;		/* of the member (WHEN: the tested one) */
	uint32_t count_off;	/* ARRAY, VEC: of the u32 count */
	uint32_t elem_size;	/* VEC: bytes of an element */
	uint64_t min, max;	/* limits; FLAGS: mask; FIXED: n; WHEN: value */
	const struct proto_msg *part;	/* MSG, ARRAY */
};

/* A declared body: its fields and the rules that tie them together. */
struct proto_msg {
	const char *what;	/* for messages: "LOOKUP", "GETLK reply" */
	const struct proto_field *fields;
	size_t nfields;
	size_t size;		/* of its struct */
	int (*check)(const void *m);	/* NULL, or 0 / -errno */
};

#define PROTO_FIELD(T, KIND, NAME, ...) PROTO_FIELD_##KIND(T, NAME, __VA_ARGS__),

#define PROTO_F(T, NAME, KIND, RULE, MIN, MAX)				\
	{ .name = #NAME, .kind = KIND, .rule = RULE,			\
	  .off = offsetof(T, NAME), .min = MIN, .max = MAX }
#define PROTO_FIELD_U8(T, NAME, ...) PROTO_F(T, NAME, PK_U8, PR_NONE, 0, 0)
#define PROTO_FIELD_BOOL(T, NAME, ...) PROTO_F(T, NAME, PK_BOOL, PR_NONE, 0, 0)
#define PROTO_FIELD_U16(T, NAME, ...) PROTO_F(T, NAME, PK_U16, PR_NONE, 0, 0)
#define PROTO_FIELD_U32(T, NAME, ...) PROTO_F(T, NAME, PK_U32, PR_NONE, 0, 0)
#define PROTO_FIELD_U64(T, NAME, ...) PROTO_F(T, NAME, PK_U64, PR_NONE, 0, 0)
#define PROTO_FIELD_I64(T, NAME, ...) PROTO_F(T, NAME, PK_I64, PR_NONE, 0, 0)
#define PROTO_FIELD_NONNEG(T, NAME, ...) \
	PROTO_F(T, NAME, PK_I64, PR_NONNEG, 0, 0)
#define PROTO_FIELD_FLAGS(T, NAME, MASK) \
	PROTO_F(T, NAME, PK_U32, PR_FLAGS, 0, MASK)
#define PROTO_FIELD_LIMIT(T, NAME, MIN, MAX) \
	PROTO_F(T, NAME, PK_U32, PR_LIMIT, MIN, MAX)
#define PROTO_FIELD_PERM(T, NAME, ...) PROTO_F(T, NAME, PK_U32, PR_PERM, 0, 0)
#define PROTO_FIELD_SUBFILE(T, NAME, ...) \
	PROTO_F(T, NAME, PK_U32, PR_SUBFILE, 0, 0)
#define PROTO_FIELD_SUBFILE_OR_ALL(T, NAME, ...) \
	PROTO_F(T, NAME, PK_U32, PR_SUBFILE_OR_ALL, 0, 0)
#define PROTO_FIELD_IOD(T, NAME, ...) PROTO_F(T, NAME, PK_U32, PR_IOD, 0, 0)
#define PROTO_FIELD_FIXED(T, NAME, N) PROTO_F(T, NAME, PK_FIXED, PR_NONE, N, N)
#define PROTO_FIELD_STR(T, NAME, MAX, RULE) \
	PROTO_F(T, NAME, PK_STR, PR_##RULE, 0, MAX)
#define PROTO_FIELD_BYTES(T, NAME, MIN, MAX) \
	PROTO_F(T, NAME, PK_BYTES, PR_NONE, MIN, MAX)
#define PROTO_FIELD_DATA(T, NAME, ...) \
	PROTO_F(T, NAME, PK_DATA, PR_NONE, 0, CLF_PROTO_DATA_MAX)
#define PROTO_FIELD_MSG(T, NAME, PART)					\
	{ .name = #NAME, .kind = PK_MSG, .off = offsetof(T, NAME),	\
	  .part = &proto_msg_##PART }
#define PROTO_FIELD_ARRAY(T, NAME, COUNT, PART, MIN, MAX)		\
	{ .name = #NAME, .kind = PK_ARRAY, .off = offsetof(T, NAME),	\
	  .count_off = offsetof(T, COUNT), .min = MIN, .max = MAX,	\
	  .part = &proto_msg_##PART }
#define PROTO_FIELD_VEC(T, NAME, COUNT, KIND, MIN, MAX)		\
	{ .name = #NAME, .kind = PK_VEC, .ekind = PROTO_KIND_##KIND,	\
	  .rule = PROTO_RULE_##KIND, .off = offsetof(T, NAME),		\
	  .count_off = offsetof(T, COUNT),				\
	  .elem_size = sizeof(((T *)0)->NAME[0]), .min = MIN, .max = MAX }
#define PROTO_FIELD_WHEN(T, NAME, VALUE)				\
	{ .name = #NAME, .kind = PK_WHEN, .off = offsetof(T, NAME),	\
	  .size = sizeof(((T *)0)->NAME), .max = VALUE }
#define PROTO_FIELD_TAIL(T, NAME, ...) PROTO_F(T, NAME, PK_TAIL, PR_NONE, 0, 0)

/* Scalar kinds a VEC may hold. */
#define PROTO_KIND_U32 PK_U32
#define PROTO_RULE_U32 PR_NONE
#define PROTO_KIND_U64 PK_U64
#define PROTO_RULE_U64 PR_NONE
#define PROTO_KIND_SUBFILE PK_U32
#define PROTO_RULE_SUBFILE PR_SUBFILE
#define PROTO_KIND_NONNEG PK_I64
#define PROTO_RULE_NONNEG PR_NONNEG

/*
 * The codec of every declared body, as proto.h's conventions say.
 * proto_msg_encode with head true leaves out the bytes of the DATA field
 * (its length is sent); proto_msg_decode_head reads a body up to and
 * including that length, which must be exactly what payload_len leaves,
 * and returns the data with a NULL pointer.  Decoders work on a zeroed
 * *m and free what they allocated when they fail.
 */
int proto_msg_encode(struct wire_writer *w, const struct proto_msg *d,
		     const void *m, bool head);
int proto_msg_decode(struct wire_reader *r, const struct proto_msg *d,
		     void *m);
int proto_msg_decode_head(struct wire_reader *r, size_t payload_len,
			  const struct proto_msg *d, void *m);
void proto_msg_release(const struct proto_msg *d, void *m);

/* Rules that tie fields together, named in CLF_PROTO_MESSAGES. */
int proto_check_hello(const void *m);
int proto_check_challenge(const void *m);
int proto_check_layout(const void *m);
int proto_check_lookup_rep(const void *m);
int proto_check_create_rep(const void *m);
int proto_check_readdirplus_rep(const void *m);
int proto_check_setattr_req(const void *m);
int proto_check_append_req(const void *m);
int proto_check_readlink_rep(const void *m);
int proto_check_mknod_req(const void *m);
int proto_check_setlk_req(const void *m);
int proto_check_getlk_req(const void *m);
int proto_check_lock_holder(const void *m);
int proto_check_sub_read_req(const void *m);
int proto_check_sub_write_req(const void *m);
int proto_check_view_read_req(const void *m);
int proto_check_view_write_req(const void *m);
int proto_check_sub_readv_req(const void *m);
int proto_check_sub_writev_req(const void *m);
int proto_check_lock_callback_req(const void *m);
int proto_check_lock_enqueue_req(const void *m);
int proto_check_lock_grant(const void *m);
int proto_check_lock_release_req(const void *m);
int proto_check_revoke(const void *m);

#endif /* CLF_PROTO_I_H */
