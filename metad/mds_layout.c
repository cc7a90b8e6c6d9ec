// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_layout.c -- file layouts: their checks, their encoded section in
 * the inode record (mds_inode.c) and the copies handed to callers.
 *
 * Encoded layout section, little-endian:
 *   i64 displacement, u32 head iod, u32 n,
 *   n x (u32 iod, u32 type length, type bytes)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds_store_i.h"
#include "wire.h"

#define LAYOUT_FIXED_LEN (8 + 4 + 4)
#define SUBFILE_FIXED_LEN (4 + 4)

/* Fail with the last error's reason behind a prefix. */
static int fail_with_last(int neg_err, const char *prefix)
{
	return clf_fail_ctx(neg_err, "mds: bad layout: %s", prefix);
}

/* The limits, without decoding the types. */
static int check_limits(const struct mds_layout *l)
{
	size_t total = 0;

	if (!l || !l->subfiles || l->nsubfiles == 0)
		return clf_fail(EINVAL, "mds: bad layout: no subfiles");
	if (l->nsubfiles > MDS_MAX_SUBFILES)
		return clf_fail(E2BIG, "mds: bad layout: %u subfiles, limit %d",
				l->nsubfiles, MDS_MAX_SUBFILES);
	if (l->disp < 0)
		return clf_fail(EINVAL, "mds: bad layout: displacement %lld",
				(long long)l->disp);
	if (l->head_iod >= MDS_MAX_IODS)
		return clf_fail(EINVAL, "mds: bad layout: head iod %u, limit %d",
				l->head_iod, MDS_MAX_IODS);
	for (uint32_t i = 0; i < l->nsubfiles; i++) {
		const struct mds_subfile *sf = &l->subfiles[i];

		if (sf->iod >= MDS_MAX_IODS)
			return clf_fail(EINVAL,
				"mds: bad layout: subfile %u on iod %u, limit %d",
				i, sf->iod, MDS_MAX_IODS);
		if (!sf->type || sf->type_len == 0)
			return clf_fail(EINVAL,
				"mds: bad layout: subfile %u has no type", i);
		if (sf->type_len > MDS_TYPE_MAX_BYTES)
			return clf_fail(E2BIG,
				"mds: bad layout: type of subfile %u has %u bytes, limit %u",
				i, sf->type_len, MDS_TYPE_MAX_BYTES);
		total += sf->type_len;
	}
	if (total > MDS_LAYOUT_MAX_BYTES)
		return clf_fail(E2BIG,
			"mds: bad layout: types take %zu bytes, limit %u",
			total, MDS_LAYOUT_MAX_BYTES);
	return 0;
}

int mds_layout_check(const struct mds_layout *layout)
{
	CLF_Datatype *types;
	uint32_t n, decoded = 0;
	int err;

	err = check_limits(layout);
	if (err)
		return err;
	n = layout->nsubfiles;
	types = calloc(n, sizeof(*types));
	if (!types)
		return clf_fail(ENOMEM, "mds: bad layout: out of memory");
	for (; decoded < n; decoded++) {
		const struct mds_subfile *sf = &layout->subfiles[decoded];
		char prefix[64];

		err = CLF_Type_decode(sf->type, sf->type_len, &types[decoded]);
		if (err) {
			snprintf(prefix, sizeof(prefix), "type of subfile %u",
				 decoded);
			err = fail_with_last(err == -E2BIG || err == -ENOMEM ?
					     err : -EINVAL, prefix);
			goto free_types;
		}
	}
	err = CLF_Pattern_check((int)n, types);
	if (err)
		err = fail_with_last(err == -ENOMEM ? err : -EINVAL,
				     "not a partitioning pattern");
	/* Stored at the period (clf_pattern_resize): sizes rely on it. */
	for (uint32_t i = 1; !err && i < n; i++)
		if (CLF_Type_extent(types[i]) != CLF_Type_extent(types[0]))
			err = clf_fail(EINVAL,
				"mds: bad layout: subfile %u has extent %lld, subfile 0 %lld (send the types resized to the period)",
				i, (long long)CLF_Type_extent(types[i]),
				(long long)CLF_Type_extent(types[0]));
free_types:
	for (uint32_t i = 0; i < decoded; i++)
		CLF_Type_free(&types[i]);
	free(types);
	return err;
}

int mds_layout_encode(const struct mds_layout *layout, uint8_t **buf,
		      size_t *len)
{
	struct wire_writer w = { 0 };
	size_t need = LAYOUT_FIXED_LEN;

	for (uint32_t i = 0; i < layout->nsubfiles; i++)
		need += SUBFILE_FIXED_LEN + layout->subfiles[i].type_len;
	w.buf = malloc(need);
	if (!w.buf)
		return clf_fail(ENOMEM, "mds: out of memory encoding a layout");
	w.cap = need;
	wire_put_i64(&w, layout->disp);
	wire_put_u32(&w, layout->head_iod);
	wire_put_u32(&w, layout->nsubfiles);
	for (uint32_t i = 0; i < layout->nsubfiles; i++) {
		const struct mds_subfile *sf = &layout->subfiles[i];

		wire_put_u32(&w, sf->iod);
		wire_put_u32(&w, sf->type_len);
		wire_put_bytes(&w, sf->type, sf->type_len);
	}
	*buf = w.buf;
	*len = w.pos;
	return 0;
}

const char *mds_layout_raw_check(const uint8_t *raw, size_t len)
{
	struct wire_reader r = { .buf = raw, .len = len };
	int64_t disp = wire_get_i64(&r);
	uint32_t head_iod = wire_get_u32(&r);
	uint32_t n = wire_get_u32(&r);
	size_t total = 0;

	if (r.bad)
		return "truncated layout";
	if (disp < 0)
		return "negative displacement";
	if (head_iod >= MDS_MAX_IODS)
		return "head iod out of range";
	if (n == 0 || n > MDS_MAX_SUBFILES)
		return "subfile count out of range";
	for (uint32_t i = 0; i < n; i++) {
		uint32_t iod = wire_get_u32(&r);
		uint32_t tlen = wire_get_u32(&r);

		if (r.bad)
			return "truncated layout";
		if (iod >= MDS_MAX_IODS)
			return "subfile iod out of range";
		if (tlen == 0 || tlen > MDS_TYPE_MAX_BYTES)
			return "subfile type length out of range";
		if (!wire_take(&r, tlen))
			return "subfile type runs past the record";
		r.pos += tlen;
		total += tlen;
	}
	if (total > MDS_LAYOUT_MAX_BYTES)
		return "layout over the size limit";
	if (r.pos != len)
		return "trailing bytes";
	return NULL;
}

/*
 * One allocation for a layout of n subfiles and type_bytes bytes of types:
 * the struct, the subfile array, then the bytes, which *bytes receives.
 */
static struct mds_layout *layout_alloc(uint32_t n, size_t type_bytes,
				       uint8_t **bytes)
{
	size_t head = sizeof(struct mds_layout) +
		      n * sizeof(struct mds_subfile);
	struct mds_layout *l = calloc(1, head + type_bytes);

	if (!l)
		return NULL;
	l->nsubfiles = n;
	l->subfiles = (struct mds_subfile *)(l + 1);
	*bytes = (uint8_t *)l + head;
	return l;
}

int mds_layout_from_raw(const uint8_t *raw, size_t len,
			struct mds_layout **out)
{
	struct wire_reader r = { .buf = raw, .len = len };
	struct mds_layout *l;
	int64_t disp = wire_get_i64(&r);
	uint32_t head_iod = wire_get_u32(&r);
	uint32_t n = wire_get_u32(&r);
	uint8_t *bytes;

	/* raw passed mds_layout_raw_check: the type bytes are less than len */
	l = layout_alloc(n, len, &bytes);
	if (!l)
		return clf_fail(ENOMEM, "mds: out of memory copying a layout");
	l->disp = disp;
	l->head_iod = head_iod;
	for (uint32_t i = 0; i < n; i++) {
		struct mds_subfile *sf = &l->subfiles[i];

		sf->iod = wire_get_u32(&r);
		sf->type_len = wire_get_u32(&r);
		memcpy(bytes, raw + r.pos, sf->type_len);
		sf->type = bytes;
		bytes += sf->type_len;
		r.pos += sf->type_len;
	}
	*out = l;
	return 0;
}

int mds_layout_round_robin(int64_t stripe, uint32_t count,
			   uint32_t first_iod, uint32_t niods,
			   struct mds_layout **out)
{
	CLF_Datatype types[MDS_MAX_SUBFILES];
	struct mds_layout *l;
	size_t total = 0;
	uint8_t *bytes;
	int err;

	if (stripe <= 0 || count == 0 || count > MDS_MAX_SUBFILES ||
	    niods == 0 || niods > MDS_MAX_IODS || first_iod >= niods ||
	    stripe > INT64_MAX / count)
		return clf_fail(EINVAL,
			"mds: bad round-robin layout: stripe %lld, %u subfiles, first iod %u of %u",
			(long long)stripe, count, first_iod, niods);
	err = CLF_Type_pitfalls(0, stripe - 1, stripe * count, 1, stripe,
				(int)count, CLF_BYTE, types);
	if (err)
		return fail_with_last(err, "round robin");
	for (uint32_t i = 0; i < count; i++) {
		int64_t len = CLF_Type_encode(types[i], NULL, 0);

		if (len < 0) {
			err = fail_with_last((int)len, "round robin");
			goto free_types;
		}
		total += (size_t)len;
	}
	l = layout_alloc(count, total, &bytes);
	if (!l) {
		err = clf_fail(ENOMEM, "mds: out of memory building a layout");
		goto free_types;
	}
	l->disp = 0;
	l->head_iod = first_iod;
	for (uint32_t i = 0; i < count; i++) {
		struct mds_subfile *sf = &l->subfiles[i];
		int64_t len = CLF_Type_encode(types[i], bytes, total);

		sf->iod = (first_iod + i) % niods;
		sf->type_len = (uint32_t)len;
		sf->type = bytes;
		bytes += len;
		total -= (size_t)len;
	}
	*out = l;
free_types:
	for (uint32_t i = 0; i < count; i++)
		CLF_Type_free(&types[i]);
	return err;
}

void mds_layout_free(struct mds_layout *layout)
{
	free(layout);
}

void mds_removed_release(struct mds_removed *r)
{
	if (!r)
		return;
	mds_layout_free(r->layout);
	memset(r, 0, sizeof(*r));
}
