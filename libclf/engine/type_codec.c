// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * type_codec.c -- the binary encoding of a datatype.
 *
 * Layout, all integers little-endian:
 *
 *   header  u8 'C', u8 'T', u8 version (1), u8 flags (0),
 *           u32 number of FALLS in the tree, i64 extent
 *   set     u32 members, then for each member:
 *           i64 l, i64 r, i64 s, i64 n, u8 has_inner, [set]
 *
 * The encoding is the normal form (falls.h), so its size follows the
 * description, not the data.  The decoder trusts nothing: it checks the
 * magic, version, every count against what is left of the buffer and
 * against CLF_TYPE_MAX_NODES / CLF_TYPE_MAX_DEPTH, every FALLS through
 * the same checks as the constructors, overlaps between members, and that
 * the set lies inside the extent.
 */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "type.h"
#include "wire.h"

#define TYPE_MAGIC0 'C'
#define TYPE_MAGIC1 'T'
#define FALLS_WIRE_SIZE (4 * 8 + 1)
#define HEADER_WIRE_SIZE (4 + 4 + 8)

static void encode_set(struct wire_writer *w, const struct fset *set)
{
	wire_put_u32(w, (uint32_t)set->nr);
	for (int i = 0; i < set->nr; i++) {
		const struct falls *f = &set->f[i];

		wire_put_i64(w, f->l);
		wire_put_i64(w, f->r);
		wire_put_i64(w, f->s);
		wire_put_i64(w, f->n);
		wire_put_u8(w, f->in != NULL);
		if (f->in)
			encode_set(w, f->in);
	}
}

int64_t CLF_Type_encode(CLF_Datatype type, void *buf, size_t buflen)
{
	struct wire_writer w = { .buf = buf, .cap = buf ? buflen : 0 };

	if (!type)
		return clf_fail(EINVAL, "encode: NULL type");
	if (type->set->nodes > CLF_TYPE_MAX_NODES ||
	    type->set->depth > CLF_TYPE_MAX_DEPTH)
		return clf_fail(E2BIG,
			"encode: type has %lld FALLS, %d levels; limits %d and %d",
			(long long)type->set->nodes, type->set->depth,
			CLF_TYPE_MAX_NODES, CLF_TYPE_MAX_DEPTH);
	wire_put_u8(&w, TYPE_MAGIC0);
	wire_put_u8(&w, TYPE_MAGIC1);
	wire_put_u8(&w, CLF_TYPE_ENCODING_VERSION);
	wire_put_u8(&w, 0);
	wire_put_u32(&w, (uint32_t)type->set->nodes);
	wire_put_i64(&w, type->extent);
	encode_set(&w, type->set);
	if (buf && w.pos > buflen)
		return clf_fail(ENOSPC, "encode: needs %zu bytes, buffer has %zu",
				w.pos, buflen);
	return (int64_t)w.pos;
}

struct decoder {
	struct wire_reader r;
	struct fbuild b;
	int64_t nodes_left;
	const char *why; /* first reason for refusing, for the message */
};

static struct fset *decode_set(struct decoder *d, int depth)
{
	struct fvec v = { 0 };
	uint32_t nr;
	int m1, m2, err;
	int64_t at;

	if (depth > CLF_TYPE_MAX_DEPTH) {
		d->why = "nested deeper than the limit";
		d->b.err = -E2BIG;
		return NULL;
	}
	nr = wire_get_u32(&d->r);
	if (d->r.bad || nr == 0 ||
	    nr > (d->r.len - d->r.pos) / FALLS_WIRE_SIZE) {
		d->why = nr == 0 ? "empty set" : "member count exceeds the buffer";
		d->b.err = -EPROTO;
		return NULL;
	}
	if ((int64_t)nr > d->nodes_left) {
		d->why = "more FALLS than the limit";
		d->b.err = -E2BIG;
		return NULL;
	}
	d->nodes_left -= nr;
	for (uint32_t i = 0; i < nr && !d->b.err; i++) {
		int64_t l = wire_get_i64(&d->r), r = wire_get_i64(&d->r);
		int64_t s = wire_get_i64(&d->r), n = wire_get_i64(&d->r);
		uint8_t has_inner = wire_get_u8(&d->r);
		struct fset *in = NULL;

		if (d->r.bad || has_inner > 1) {
			d->why = d->r.bad ? "truncated" : "bad inner flag";
			d->b.err = -EPROTO;
			break;
		}
		if (has_inner) {
			in = decode_set(d, depth + 1);
			if (!in)
				break;
		}
		fvec_push(&d->b, &v, l, r, s, n, in);
		if (d->b.err && !d->why)
			d->why = "malformed FALLS";
	}
	if (d->b.err) {
		fvec_release(&v);
		return NULL;
	}
	err = fvec_check_disjoint(&d->b, &v, &m1, &m2, &at);
	if (err) {
		d->why = err == -EINVAL ? "members overlap" : "overlap check too costly";
		d->b.err = err;
		fvec_release(&v);
		return NULL;
	}
	return fset_from_vec(&d->b, &v);
}

int CLF_Type_decode(const void *buf, size_t len, CLF_Datatype *out)
{
	struct decoder d = {
		.r = { .buf = buf, .len = len },
		/* Each FALLS is pushed once and may merge once. */
		.b = { .budget = 4 * (int64_t)CLF_TYPE_MAX_NODES },
	};
	struct fset *set;
	uint32_t nodes;
	int64_t extent;
	CLF_Datatype t;

	if (!buf || !out)
		return clf_fail(EINVAL, "decode: NULL buffer");
	if (wire_get_u8(&d.r) != TYPE_MAGIC0 || wire_get_u8(&d.r) != TYPE_MAGIC1)
		return clf_fail(EPROTO, "decode: not a clf type encoding");
	if (wire_get_u8(&d.r) != CLF_TYPE_ENCODING_VERSION)
		return clf_fail(EPROTO, "decode: unsupported encoding version");
	if (wire_get_u8(&d.r) != 0)
		return clf_fail(EPROTO, "decode: unknown flags");
	nodes = wire_get_u32(&d.r);
	extent = wire_get_i64(&d.r);
	if (d.r.bad)
		return clf_fail(EPROTO, "decode: truncated header (%zu bytes)",
				len);
	if (nodes > CLF_TYPE_MAX_NODES)
		return clf_fail(E2BIG, "decode: %u FALLS exceed the limit %d",
				nodes, CLF_TYPE_MAX_NODES);
	if (extent <= 0)
		return clf_fail(EPROTO, "decode: extent %lld is not positive",
				(long long)extent);
	d.nodes_left = CLF_TYPE_MAX_NODES;
	set = decode_set(&d, 1);
	if (!set)
		return clf_fail_neg(d.b.err == -EINVAL ? -EPROTO : d.b.err,
				    "decode: %s at byte %zu",
				    d.why ? d.why : "invalid description",
				    d.r.pos);
	if (CLF_TYPE_MAX_NODES - d.nodes_left != nodes) {
		fset_put(set);
		return clf_fail(EPROTO, "decode: header counts %u FALLS, body %lld",
				nodes,
				(long long)(CLF_TYPE_MAX_NODES - d.nodes_left));
	}
	if (d.r.pos != len) {
		fset_put(set);
		return clf_fail(EPROTO, "decode: %zu trailing bytes",
				len - d.r.pos);
	}
	if (set->hi >= extent) {
		int64_t hi = set->hi;

		fset_put(set);
		return clf_fail(EPROTO,
				"decode: selects byte %lld beyond extent %lld",
				(long long)hi, (long long)extent);
	}
	t = clf_type_new(set, extent);
	if (!t)
		return clf_fail(ENOMEM, "decode: out of memory");
	*out = t;
	return 0;
}
