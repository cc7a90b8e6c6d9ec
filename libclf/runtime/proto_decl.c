// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_decl.c -- the one encoder, decoder and checker of every declared
 * message body (proto_decl.h): they walk the body's field descriptors.
 *
 * A decoder reads every field in wire order, refusing a length or count
 * over its limit (or one that cannot fit in what is left) before using or
 * allocating anything; then it wants the end of the body; then it checks
 * the values with the same checker the encoder runs before writing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "proto_i.h"

/* "LOOKUP path", "layout subfile type": the message and the field. */
static const char *field_what(char *buf, size_t n, const struct proto_msg *d,
			      const struct proto_field *f)
{
	int k = snprintf(buf, n, "%s %s", d->what, f->name);

	for (size_t i = strlen(d->what); k > 0 && i < n && buf[i]; i++)
		if (buf[i] == '_')
			buf[i] = ' ';
	return buf;
}

#define WHAT_MAX 96

static int field_fail(int err, const struct proto_msg *d,
		      const struct proto_field *f, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int field_fail(int err, const struct proto_msg *d,
		      const struct proto_field *f, const char *fmt, ...)
{
	char what[WHAT_MAX], msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return clf_fail(err, "proto: %s: %s",
			field_what(what, sizeof(what), d, f), msg);
}

/* ------------------------------------------------------------------ */
/* Scalars                                                             */
/* ------------------------------------------------------------------ */

static uint64_t scalar_load(unsigned kind, const uint8_t *p)
{
	switch (kind) {
	case PK_U8: return *p;
	case PK_BOOL: return *(const bool *)p;
	case PK_U16: return *(const uint16_t *)p;
	case PK_U32: return *(const uint32_t *)p;
	case PK_U64: return *(const uint64_t *)p;
	case PK_I64: return (uint64_t)*(const int64_t *)p;
	}
	return 0;
}

static void scalar_store(unsigned kind, uint8_t *p, uint64_t v)
{
	switch (kind) {
	case PK_U8: *p = (uint8_t)v; break;
	case PK_BOOL: *(bool *)p = v != 0; break;
	case PK_U16: *(uint16_t *)p = (uint16_t)v; break;
	case PK_U32: *(uint32_t *)p = (uint32_t)v; break;
	case PK_U64: *(uint64_t *)p = v; break;
	case PK_I64: *(int64_t *)p = (int64_t)v; break;
	}
}

static void scalar_put(struct wire_writer *w, unsigned kind, uint64_t v)
{
	switch (kind) {
	case PK_U8:
	case PK_BOOL: wire_put_u8(w, (uint8_t)v); break;
	case PK_U16: wire_put_u16(w, (uint16_t)v); break;
	case PK_U32: wire_put_u32(w, (uint32_t)v); break;
	default: wire_put_u64(w, v); break;
	}
}

static uint64_t scalar_get(struct wire_reader *r, unsigned kind)
{
	switch (kind) {
	case PK_U8:
	case PK_BOOL: return wire_get_u8(r);
	case PK_U16: return wire_get_u16(r);
	case PK_U32: return wire_get_u32(r);
	default: return wire_get_u64(r);
	}
}

static int scalar_check(const struct proto_msg *d, const struct proto_field *f,
			uint64_t v)
{
	switch (f->rule) {
	case PR_NONNEG:
		if ((int64_t)v < 0)
			return field_fail(EPROTO, d, f, "%lld is negative",
					  (long long)v);
		return 0;
	case PR_FLAGS:
		if (v & ~f->max)
			return field_fail(EPROTO, d, f, "unknown flags 0x%llx",
					  (unsigned long long)(v & ~f->max));
		return 0;
	case PR_LIMIT:
		if (v > f->max)
			return field_fail(E2BIG, d, f, "%llu, limit %llu",
					  (unsigned long long)v,
					  (unsigned long long)f->max);
		if (v < f->min)
			return field_fail(EPROTO, d, f, "%llu, at least %llu",
					  (unsigned long long)v,
					  (unsigned long long)f->min);
		return 0;
	case PR_PERM:
		if (v & ~(uint64_t)CLF_PROTO_MODE_PERM)
			return field_fail(EPROTO, d, f,
					  "mode 0%llo has more than permission bits",
					  (unsigned long long)v);
		return 0;
	case PR_SUBFILE:
	case PR_SUBFILE_OR_ALL:
		if (v < CLF_PROTO_MAX_SUBFILES || v == CLF_PROTO_SUBFILE_HEAD ||
		    (f->rule == PR_SUBFILE_OR_ALL && v == CLF_PROTO_SUBFILE_ALL))
			return 0;
		return field_fail(E2BIG, d, f, "subfile %llu, limit %d",
				  (unsigned long long)v,
				  CLF_PROTO_MAX_SUBFILES - 1);
	case PR_IOD:
		/* DEFAULT (1.22): metad places the subfile. */
		if (v >= CLF_PROTO_MAX_IODS && v != CLF_PROTO_IOD_DEFAULT)
			return field_fail(E2BIG, d, f, "iod %llu, limit %d",
					  (unsigned long long)v,
					  CLF_PROTO_MAX_IODS - 1);
		return 0;
	}
	return 0;
}

static bool is_scalar(unsigned kind)
{
	return kind <= PK_I64;
}

/* Whether the fields after a WHEN are on the wire. */
static bool when_holds(const struct proto_field *f, const uint8_t *m)
{
	const uint8_t *p = m + f->off;
	uint64_t v;

	switch (f->size) {
	case 1: v = *p; break;
	case 2: v = *(const uint16_t *)p; break;
	case 4: v = *(const uint32_t *)p; break;
	default: v = *(const uint64_t *)p; break;
	}
	return v == f->max;
}

/* ------------------------------------------------------------------ */
/* Checks, shared by encoders and decoders                             */
/* ------------------------------------------------------------------ */

static int check_str(const struct proto_msg *d, const struct proto_field *f,
		     struct clf_proto_str s)
{
	char what[WHAT_MAX];
	int err;

	field_what(what, sizeof(what), d, f);
	switch (f->rule) {
	case PR_NAME:
		return proto_check_name(s, what);
	case PR_PATH:
		return proto_check_path(s, what);
	}
	err = proto_check_str(s, (uint32_t)f->max, what);
	if (err || f->rule == PR_ANY)
		return err;
	if (s.len == 0)
		return clf_fail(EPROTO, "proto: %s: empty", what);
	if (f->rule != PR_ROLE)
		return 0;
	for (uint32_t i = 0; i < s.len; i++)
		if (s.ptr[i] <= ' ' || s.ptr[i] > '~')
			return clf_fail(EPROTO,
					"proto: %s: byte %u is not printable",
					what, i);
	return 0;
}

static int check_count(const struct proto_msg *d, const struct proto_field *f,
		       uint32_t n, int under)
{
	if (n > f->max)
		return field_fail(E2BIG, d, f, "%u entries, limit %llu", n,
				  (unsigned long long)f->max);
	if (n < f->min)
		return field_fail(under, d, f, "%u entries, at least %llu", n,
				  (unsigned long long)f->min);
	return 0;
}

static int check_fields(const struct proto_msg *d, const uint8_t *m);

static int check_field(const struct proto_msg *d, const struct proto_field *f,
		       const uint8_t *m)
{
	const uint8_t *p = m + f->off;
	char what[WHAT_MAX];
	uint32_t n;
	int err = 0;

	if (is_scalar(f->kind))
		return scalar_check(d, f, scalar_load(f->kind, p));
	switch (f->kind) {
	case PK_STR:
		return check_str(d, f, *(const struct clf_proto_str *)p);
	case PK_BYTES:
	case PK_DATA:
		return proto_check_bytes(*(const struct clf_proto_bytes *)p,
					 (uint32_t)f->min, (uint32_t)f->max,
					 field_what(what, sizeof(what), d, f));
	case PK_MSG:
		return check_fields(f->part, p);
	case PK_ARRAY:
		n = *(const uint32_t *)(m + f->count_off);
		err = check_count(d, f, n, EPROTO);
		if (!err && n && !*(void *const *)p)
			err = field_fail(EPROTO, d, f, "no entries");
		for (uint32_t i = 0; i < n && !err; i++)
			err = check_fields(f->part, *(const uint8_t *const *)p +
						    i * f->part->size);
		return err;
	case PK_VEC:
		n = *(const uint32_t *)(m + f->count_off);
		err = check_count(d, f, n, E2BIG);
		for (uint32_t i = 0; i < n && !err; i++)
			err = scalar_check(d, f, scalar_load(f->ekind,
						p + i * f->elem_size));
		return err;
	}
	return 0;
}

static int check_fields(const struct proto_msg *d, const uint8_t *m)
{
	bool on = true;

	for (size_t i = 0; i < d->nfields; i++) {
		const struct proto_field *f = &d->fields[i];
		int err;

		if (f->kind == PK_WHEN || f->kind == PK_TAIL) {
			on = f->kind == PK_WHEN ? when_holds(f, m)
						: *(const bool *)(m + f->off);
			continue;
		}
		if (!on)
			continue;
		err = check_field(d, f, m);
		if (err)
			return err;
	}
	return d->check ? d->check(m) : 0;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

static void put_fields(struct wire_writer *w, const struct proto_msg *d,
		       const uint8_t *m, bool head)
{
	bool on = true;

	for (size_t i = 0; i < d->nfields; i++) {
		const struct proto_field *f = &d->fields[i];
		const uint8_t *p = m + f->off;
		const struct clf_proto_bytes *b = (const void *)p;
		uint32_t n;

		if (f->kind == PK_WHEN || f->kind == PK_TAIL) {
			on = f->kind == PK_WHEN ? when_holds(f, m)
						: *(const bool *)p;
			continue;
		}
		if (!on)
			continue;
		if (is_scalar(f->kind)) {
			scalar_put(w, f->kind, scalar_load(f->kind, p));
			continue;
		}
		switch (f->kind) {
		case PK_FIXED:
			wire_put_bytes(w, p, f->max);
			break;
		case PK_STR:
			proto_put_str16(w, *(const struct clf_proto_str *)p);
			break;
		case PK_BYTES:
			proto_put_bytes32(w, *b);
			break;
		case PK_DATA:
			wire_put_u32(w, b->len);
			if (!head)
				wire_put_bytes(w, b->ptr, b->len);
			break;
		case PK_MSG:
			put_fields(w, f->part, p, false);
			break;
		case PK_ARRAY:
			n = *(const uint32_t *)(m + f->count_off);
			for (uint32_t j = 0; j < n; j++)
				put_fields(w, f->part,
					   *(const uint8_t *const *)p +
					   j * f->part->size, false);
			break;
		case PK_VEC:
			n = *(const uint32_t *)(m + f->count_off);
			for (uint32_t j = 0; j < n; j++)
				scalar_put(w, f->ekind, scalar_load(f->ekind,
						p + j * f->elem_size));
			break;
		}
	}
}

int proto_msg_encode(struct wire_writer *w, const struct proto_msg *d,
		     const void *m, bool head)
{
	int err = check_fields(d, m);

	if (err)
		return proto_enc_err(err);
	put_fields(w, d, m, head);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* Fewest bytes a part takes on the wire, to bound counts by what is left. */
static size_t min_wire(const struct proto_msg *d)
{
	static const uint8_t scalar_bytes[] = { 1, 1, 2, 4, 8, 8 };
	size_t n = 0;

	for (size_t i = 0; i < d->nfields; i++) {
		const struct proto_field *f = &d->fields[i];

		if (f->kind == PK_WHEN || f->kind == PK_TAIL)
			break;	/* what follows may be absent */
		if (is_scalar(f->kind))
			n += scalar_bytes[f->kind];
		else if (f->kind == PK_FIXED)
			n += f->max;
		else if (f->kind == PK_STR)
			n += 2 + (f->rule == PR_ANY ? 0 : 1);
		else if (f->kind == PK_BYTES || f->kind == PK_DATA)
			n += 4 + f->min;
		else if (f->kind == PK_MSG)
			n += min_wire(f->part);
		else
			n += 4;	/* arrays and vectors follow a u32 count */
	}
	return n;
}

/* A str16 or bytes32: its length, checked, and its bytes, borrowed. */
static int get_ref(struct wire_reader *r, const struct proto_msg *d,
		   const struct proto_field *f, const uint8_t **ptr,
		   uint32_t *lenp)
{
	uint32_t len = f->kind == PK_STR ? wire_get_u16(r) : wire_get_u32(r);
	const uint8_t *p;

	if (r->bad)
		return field_fail(EPROTO, d, f, "truncated length");
	if (len > f->max)
		return field_fail(E2BIG, d, f, "%u bytes, limit %llu", len,
				  (unsigned long long)f->max);
	p = proto_get_ref(r, len);
	if (!p)
		return field_fail(EPROTO, d, f, "%u bytes, %zu left", len,
				  proto_left(r));
	*ptr = p;
	*lenp = len;
	return 0;
}

/*
 * The length of data that follows a head decoded alone: it must be
 * exactly the rest of the body, which is still in the socket.
 */
static int get_data_head(struct wire_reader *r, size_t payload_len,
			 const struct proto_msg *d, const struct proto_field *f,
			 struct clf_proto_bytes *b)
{
	uint32_t len = wire_get_u32(r);

	if (r->bad)
		return clf_fail(EPROTO, "proto: %s: truncated head", d->what);
	if (len > f->max)
		return clf_fail(E2BIG, "proto: %s: %u bytes, limit %llu",
				d->what, len, (unsigned long long)f->max);
	if (r->pos != r->len || payload_len < r->pos ||
	    payload_len - r->pos != len)
		return clf_fail(EPROTO,
				"proto: %s: %u data bytes in a body of %zu",
				d->what, len, payload_len);
	/* The checks want bytes behind a length; these are on their way. */
	b->ptr = r->buf;
	b->len = len;
	return 0;
}

static int get_fields(struct wire_reader *r, const struct proto_msg *d,
		      uint8_t *m, const size_t *payload_len);

static int get_array(struct wire_reader *r, const struct proto_msg *d,
		     const struct proto_field *f, uint8_t *m)
{
	uint32_t n = *(const uint32_t *)(m + f->count_off);
	size_t each = min_wire(f->part);
	uint8_t *a;
	int err;

	if (r->bad)
		return field_fail(EPROTO, d, f, "truncated");
	err = check_count(d, f, n, EPROTO);
	if (err)
		return err;
	if (each && n > proto_left(r) / each)
		return field_fail(EPROTO, d, f,
				  "%u entries cannot fit in %zu bytes", n,
				  proto_left(r));
	if (n == 0)
		return 0;
	a = calloc(n, f->part->size);
	if (!a)
		return field_fail(ENOMEM, d, f,
				  "out of memory for %u entries", n);
	*(uint8_t **)(m + f->off) = a;
	for (uint32_t i = 0; i < n; i++) {
		err = get_fields(r, f->part, a + i * f->part->size, NULL);
		if (err)
			return err;
	}
	return 0;
}

static int get_field(struct wire_reader *r, const struct proto_msg *d,
		     const struct proto_field *f, uint8_t *m,
		     const size_t *payload_len)
{
	uint8_t *p = m + f->off;
	struct clf_proto_bytes *b = (struct clf_proto_bytes *)p;
	struct clf_proto_str *s = (struct clf_proto_str *)p;
	const uint8_t *src;
	uint64_t v;
	uint32_t n;
	int err = 0;

	if (is_scalar(f->kind)) {
		v = scalar_get(r, f->kind);
		if (f->kind == PK_BOOL && v > 1)
			return field_fail(EPROTO, d, f, "%u is not 0 or 1",
					  (unsigned)v);
		scalar_store(f->kind, p, v);
		return 0;
	}
	switch (f->kind) {
	case PK_FIXED:
		src = proto_get_ref(r, f->max);
		if (src)
			memcpy(p, src, f->max);
		return 0;
	case PK_STR:
		err = get_ref(r, d, f, &src, &n);
		if (!err)
			*s = (struct clf_proto_str){ (const char *)src, n };
		return err;
	case PK_DATA:
		if (payload_len)
			return get_data_head(r, *payload_len, d, f, b);
		/* fall through */
	case PK_BYTES:
		return get_ref(r, d, f, &b->ptr, &b->len);
	case PK_MSG:
		/* A part with rules of its own (a layout) is checked as soon
		 * as it is read, as 1.8's decoders did. */
		err = get_fields(r, f->part, p, NULL);
		if (err || !f->part->check)
			return err;
		if (r->bad)
			return clf_fail(EPROTO, "proto: %s: truncated",
					f->part->what);
		return check_fields(f->part, p);
	case PK_ARRAY:
		return get_array(r, d, f, m);
	case PK_VEC:
		n = *(const uint32_t *)(m + f->count_off);
		if (r->bad)
			return field_fail(EPROTO, d, f, "truncated");
		err = check_count(d, f, n, E2BIG);
		/* Each element checked as it comes, before the next. */
		for (uint32_t i = 0; i < n && !err && !r->bad; i++) {
			v = scalar_get(r, f->ekind);
			if (!r->bad)
				err = scalar_check(d, f, v);
			scalar_store(f->ekind, p + i * f->elem_size, v);
		}
		return err;
	}
	return 0;
}

static int get_fields(struct wire_reader *r, const struct proto_msg *d,
		      uint8_t *m, const size_t *payload_len)
{
	bool on = true;

	for (size_t i = 0; i < d->nfields; i++) {
		const struct proto_field *f = &d->fields[i];
		int err;

		if (f->kind == PK_WHEN) {
			on = when_holds(f, m);
			continue;
		}
		if (f->kind == PK_TAIL) {
			*(bool *)(m + f->off) = on = proto_left(r) > 0;
			continue;
		}
		if (!on)
			continue;
		err = get_field(r, d, f, m, payload_len);
		if (err)
			return err;
	}
	return 0;
}

static int decode(struct wire_reader *r, const struct proto_msg *d, void *m,
		  const size_t *payload_len)
{
	int err;

	memset(m, 0, d->size);
	err = get_fields(r, d, m, payload_len);
	if (!err && !payload_len)
		err = proto_end(r, d->what);
	if (!err)
		err = check_fields(d, m);
	if (err)
		proto_msg_release(d, m);
	return err;
}

int proto_msg_decode(struct wire_reader *r, const struct proto_msg *d,
		     void *m)
{
	return decode(r, d, m, NULL);
}

int proto_msg_decode_head(struct wire_reader *r, size_t payload_len,
			  const struct proto_msg *d, void *m)
{
	const struct proto_field *last = &d->fields[d->nfields - 1];
	int err = decode(r, d, m, &payload_len);

	if (!err)
		((struct clf_proto_bytes *)((uint8_t *)m + last->off))->ptr =
			NULL;
	return err;
}

void proto_msg_release(const struct proto_msg *d, void *msg)
{
	uint8_t *m = msg;
	bool on = true;

	for (size_t i = 0; i < d->nfields; i++) {
		const struct proto_field *f = &d->fields[i];
		uint8_t **a;
		uint32_t *n;

		if (f->kind == PK_WHEN || f->kind == PK_TAIL) {
			on = f->kind == PK_WHEN ? when_holds(f, m)
						: *(const bool *)(m + f->off);
			continue;
		}
		if (!on)
			continue;
		if (f->kind == PK_MSG) {
			proto_msg_release(f->part, m + f->off);
			continue;
		}
		if (f->kind != PK_ARRAY)
			continue;
		a = (uint8_t **)(m + f->off);
		n = (uint32_t *)(m + f->count_off);
		for (uint32_t j = 0; *a && j < *n; j++)
			proto_msg_release(f->part, *a + j * f->part->size);
		free(*a);
		*a = NULL;
		*n = 0;
	}
}
