/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto_decl.h -- how a message body is declared: once, as a list of its
 * fields in wire order, from which everything else is made.
 *
 *   #define CLF_PROTO_LOCK_HOLDER(X, T)				\
 *	X(T, U32, type)		  CLF_PROTO_LOCK_*			\
 *	X(T, U64, start)						\
 *	...
 *
 * proto.h expands the list with PROTO_MEMBER into the C struct; the
 * codec (proto_msgs.c) expands it with PROTO_FIELD (proto_i.h) into a
 * table of field descriptors that one encoder, one decoder and one
 * checker read (proto_decl.c); the fuzzer's table (tests/fuzz) comes from
 * the list of messages, CLF_PROTO_MESSAGES in proto.h.  Adding a field is
 * one line in its list (and a minor version, include/clf_proto.h).
 *
 * A field is X(T, KIND, name, arguments...).  The kinds:
 *
 *   U8 U16 U32 U64 I64	  little-endian integers, any value
 *   BOOL		  u8, 0 or 1; a bool in the struct
 *   NONNEG		  i64 >= 0
 *   FLAGS, mask	  u32 with no bits outside mask
 *   LIMIT, min, max	  u32 in min..max (over: E2BIG, under: EPROTO)
 *   PERM		  u32 mode with permission bits only
 *   SUBFILE		  u32 subfile index: < MAX_SUBFILES or SUBFILE_HEAD
 *   SUBFILE_OR_ALL	  the same, or CLF_PROTO_SUBFILE_ALL
 *   IOD		  u32 iod index < CLF_PROTO_MAX_IODS
 *   FIXED, n		  n bytes as they are (a uint8_t[n])
 *   STR, max, rule	  str16 of at most max bytes, no NUL; rule ANY,
 *			  NONEMPTY, NAME (one component), PATH or ROLE
 *   BYTES, min, max	  bytes32 of min..max bytes
 *   DATA		  bytes32 of bulk data, <= CLF_PROTO_DATA_MAX, last;
 *			  its head (all but the bytes) can be sent alone
 *   MSG, part		  a struct clf_proto_<part>, declared the same way
 *   ARRAY, count, part, min, max
 *			  count (an earlier u32 field) parts, allocated
 *			  by the decoder and owned by the struct
 *   VEC, count, kind, min, max
 *			  count scalars of that kind in an array of max
 *   WHEN, field, value	  no member: the fields after it are on the wire
 *			  only when the earlier field equals value
 *   TAIL		  a bool, not on the wire: the fields after it are
 *			  there when it is true (when bytes remain, in a
 *			  decoder); for fields added at the end of a body
 *
 * Rules that tie fields together (a range that must not overflow, a flag
 * that allows a field) stay in C, in a check function named with the
 * message in CLF_PROTO_MESSAGES.
 */
#ifndef CLF_PROTO_DECL_H
#define CLF_PROTO_DECL_H

#include <stdbool.h>
#include <stdint.h>

/* The struct member of each kind of field. */
#define PROTO_MEMBER(T, KIND, NAME, ...) PROTO_MEMBER_##KIND(NAME, __VA_ARGS__)

#define PROTO_CTYPE_U8 uint8_t
#define PROTO_CTYPE_BOOL bool
#define PROTO_CTYPE_U16 uint16_t
#define PROTO_CTYPE_U32 uint32_t
#define PROTO_CTYPE_U64 uint64_t
#define PROTO_CTYPE_I64 int64_t
#define PROTO_CTYPE_NONNEG int64_t
#define PROTO_CTYPE_FLAGS uint32_t
#define PROTO_CTYPE_LIMIT uint32_t
#define PROTO_CTYPE_PERM uint32_t
#define PROTO_CTYPE_SUBFILE uint32_t
#define PROTO_CTYPE_SUBFILE_OR_ALL uint32_t
#define PROTO_CTYPE_IOD uint32_t

#define PROTO_MEMBER_U8(NAME, ...) PROTO_CTYPE_U8 NAME;
#define PROTO_MEMBER_BOOL(NAME, ...) PROTO_CTYPE_BOOL NAME;
#define PROTO_MEMBER_U16(NAME, ...) PROTO_CTYPE_U16 NAME;
#define PROTO_MEMBER_U32(NAME, ...) PROTO_CTYPE_U32 NAME;
#define PROTO_MEMBER_U64(NAME, ...) PROTO_CTYPE_U64 NAME;
#define PROTO_MEMBER_I64(NAME, ...) PROTO_CTYPE_I64 NAME;
#define PROTO_MEMBER_NONNEG(NAME, ...) PROTO_CTYPE_NONNEG NAME;
#define PROTO_MEMBER_FLAGS(NAME, ...) PROTO_CTYPE_FLAGS NAME;
#define PROTO_MEMBER_LIMIT(NAME, ...) PROTO_CTYPE_LIMIT NAME;
#define PROTO_MEMBER_PERM(NAME, ...) PROTO_CTYPE_PERM NAME;
#define PROTO_MEMBER_SUBFILE(NAME, ...) PROTO_CTYPE_SUBFILE NAME;
#define PROTO_MEMBER_SUBFILE_OR_ALL(NAME, ...) PROTO_CTYPE_SUBFILE_OR_ALL NAME;
#define PROTO_MEMBER_IOD(NAME, ...) PROTO_CTYPE_IOD NAME;
#define PROTO_MEMBER_FIXED(NAME, N) uint8_t NAME[N];
#define PROTO_MEMBER_STR(NAME, ...) struct clf_proto_str NAME;
#define PROTO_MEMBER_BYTES(NAME, ...) struct clf_proto_bytes NAME;
#define PROTO_MEMBER_DATA(NAME, ...) struct clf_proto_bytes NAME;
#define PROTO_MEMBER_MSG(NAME, PART) struct clf_proto_##PART NAME;
#define PROTO_MEMBER_ARRAY(NAME, COUNT, PART, MIN, MAX) \
	struct clf_proto_##PART *NAME;
#define PROTO_MEMBER_VEC(NAME, COUNT, KIND, MIN, MAX) \
	PROTO_CTYPE_##KIND NAME[MAX];
#define PROTO_MEMBER_WHEN(NAME, ...)
#define PROTO_MEMBER_TAIL(NAME, ...) bool NAME;

/*
 * The bytes a body of fixed-size fields takes on the wire, for a DATA
 * field its length alone: (0 FIELDS(PROTO_WIRE_SIZE, _)).  A field of
 * another kind has no size here and fails to compile.
 */
#define PROTO_WIRE_SIZE(T, KIND, NAME, ...) + PROTO_WSIZE_##KIND
#define PROTO_WSIZE_U8 1
#define PROTO_WSIZE_BOOL 1
#define PROTO_WSIZE_U16 2
#define PROTO_WSIZE_U32 4
#define PROTO_WSIZE_U64 8
#define PROTO_WSIZE_I64 8
#define PROTO_WSIZE_NONNEG 8
#define PROTO_WSIZE_FLAGS 4
#define PROTO_WSIZE_LIMIT 4
#define PROTO_WSIZE_PERM 4
#define PROTO_WSIZE_SUBFILE 4
#define PROTO_WSIZE_SUBFILE_OR_ALL 4
#define PROTO_WSIZE_IOD 4
#define PROTO_WSIZE_DATA 4

/* The prototypes of message NAME, whose body is a struct clf_proto_TYPE. */
#define PROTO_PROTOTYPES(NAME, TYPE, FIELDS, WHAT, CHECK)		\
	int clf_proto_##NAME##_encode(struct wire_writer *w,		\
				      const struct clf_proto_##TYPE *m); \
	int clf_proto_##NAME##_decode(struct wire_reader *r,		\
				      struct clf_proto_##TYPE *m);	\
	void clf_proto_##NAME##_release(struct clf_proto_##TYPE *m);

#endif /* CLF_PROTO_DECL_H */
