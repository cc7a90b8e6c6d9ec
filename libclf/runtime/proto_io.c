// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_io.c -- bodies of the iod operations: contiguous subfile access,
 * views, truncate, remove and subfile sizes.
 */
#include <errno.h>
#include <stdint.h>

#include "error.h"
#include "proto_i.h"

static int check_subfile(uint32_t idx, bool all_ok, const char *what)
{
	if (idx < CLF_PROTO_MAX_SUBFILES || idx == CLF_PROTO_SUBFILE_HEAD ||
	    (all_ok && idx == CLF_PROTO_SUBFILE_ALL))
		return 0;
	return clf_fail(E2BIG, "proto: %s: subfile %u, limit %d", what, idx,
			CLF_PROTO_MAX_SUBFILES - 1);
}

/* offset >= 0 and offset + len fits in int64_t. */
static int check_range(int64_t offset, uint32_t len, const char *what)
{
	if (offset < 0)
		return clf_fail(EPROTO, "proto: %s: offset %lld is negative",
				what, (long long)offset);
	if (offset > INT64_MAX - (int64_t)len)
		return clf_fail(EPROTO, "proto: %s: offset %lld + %u overflows",
				what, (long long)offset, len);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SUB_READ, SUB_WRITE                                                 */
/* ------------------------------------------------------------------ */

static int check_sub_read_req(const struct clf_proto_sub_read_req *m)
{
	const char *what = "SUB_READ";
	int err = check_subfile(m->subfile, false, what);

	if (err)
		return err;
	if (m->length > CLF_PROTO_DATA_MAX)
		return clf_fail(E2BIG, "proto: %s: %u bytes, limit %u", what,
				m->length, CLF_PROTO_DATA_MAX);
	return check_range(m->offset, m->length, what);
}

int clf_proto_sub_read_req_encode(struct wire_writer *w,
				  const struct clf_proto_sub_read_req *m)
{
	int err = check_sub_read_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->file);
	wire_put_u32(w, m->subfile);
	wire_put_i64(w, m->offset);
	wire_put_u32(w, m->length);
	return 0;
}

int clf_proto_sub_read_req_decode(struct wire_reader *r,
				  struct clf_proto_sub_read_req *m)
{
	struct clf_proto_sub_read_req t;
	int err;

	t.file = wire_get_u64(r);
	t.subfile = wire_get_u32(r);
	t.offset = wire_get_i64(r);
	t.length = wire_get_u32(r);
	err = proto_end(r, "SUB_READ");
	if (!err)
		err = check_sub_read_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

static int check_sub_write_req(const struct clf_proto_sub_write_req *m)
{
	const char *what = "SUB_WRITE";
	int err = check_subfile(m->subfile, false, what);

	if (!err)
		err = proto_check_bytes(m->data, 0, CLF_PROTO_DATA_MAX,
					"SUB_WRITE data");
	if (!err)
		err = check_range(m->offset, m->data.len, what);
	return err;
}

int clf_proto_sub_write_req_encode_head(struct wire_writer *w,
					const struct clf_proto_sub_write_req *m)
{
	int err = check_sub_write_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->file);
	wire_put_u32(w, m->subfile);
	wire_put_i64(w, m->offset);
	wire_put_u32(w, m->data.len);
	return 0;
}

int clf_proto_sub_write_req_encode(struct wire_writer *w,
				   const struct clf_proto_sub_write_req *m)
{
	int err = clf_proto_sub_write_req_encode_head(w, m);

	if (err)
		return err;
	wire_put_bytes(w, m->data.ptr, m->data.len);
	return 0;
}

int clf_proto_sub_write_req_decode(struct wire_reader *r,
				   struct clf_proto_sub_write_req *m)
{
	struct clf_proto_sub_write_req t;
	int err;

	t.file = wire_get_u64(r);
	t.subfile = wire_get_u32(r);
	t.offset = wire_get_i64(r);
	err = proto_get_bytes32(r, &t.data, CLF_PROTO_DATA_MAX,
				"SUB_WRITE data");
	if (!err)
		err = proto_end(r, "SUB_WRITE");
	if (!err)
		err = check_sub_write_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

/*
 * The length of data that follows a head the caller decodes alone: it
 * must be exactly the rest of the body, which is still in the socket.
 */
static int get_data_head(struct wire_reader *r, size_t payload_len,
			 struct clf_proto_bytes *b, const char *what)
{
	uint32_t len = wire_get_u32(r);

	if (r->bad)
		return clf_fail(EPROTO, "proto: %s: truncated head", what);
	if (len > CLF_PROTO_DATA_MAX)
		return clf_fail(E2BIG, "proto: %s: %u bytes, limit %u", what,
				len, CLF_PROTO_DATA_MAX);
	if (r->pos != r->len || payload_len < r->pos ||
	    payload_len - r->pos != len)
		return clf_fail(EPROTO, "proto: %s: %u data bytes in a body of %zu",
				what, len, payload_len);
	/* The checks want bytes behind a length; these are on their way. */
	b->ptr = r->buf;
	b->len = len;
	return 0;
}

int clf_proto_sub_write_req_decode_head(struct wire_reader *r,
					size_t payload_len,
					struct clf_proto_sub_write_req *m)
{
	struct clf_proto_sub_write_req t;
	int err;

	t.file = wire_get_u64(r);
	t.subfile = wire_get_u32(r);
	t.offset = wire_get_i64(r);
	err = get_data_head(r, payload_len, &t.data, "SUB_WRITE");
	if (!err)
		err = check_sub_write_req(&t);
	if (err)
		return err;
	t.data.ptr = NULL;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* VIEW_REGISTER                                                       */
/* ------------------------------------------------------------------ */

static int check_view_register_req(const struct clf_proto_view_register_req *m)
{
	const char *what = "VIEW_REGISTER";
	int err = check_subfile(m->subfile, false, what);

	if (!err)
		err = proto_check_nonneg(m->view_disp,
					 "VIEW_REGISTER view displacement");
	if (!err)
		err = proto_check_bytes(m->view_type, 1,
					CLF_PROTO_TYPE_MAX_BYTES,
					"VIEW_REGISTER view type");
	if (!err)
		err = proto_check_nonneg(m->subfile_disp,
					 "VIEW_REGISTER subfile displacement");
	if (!err)
		err = proto_check_bytes(m->subfile_type, 1,
					CLF_PROTO_TYPE_MAX_BYTES,
					"VIEW_REGISTER subfile type");
	return err;
}

int clf_proto_view_register_req_encode(struct wire_writer *w,
				const struct clf_proto_view_register_req *m)
{
	int err = check_view_register_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->file);
	wire_put_u32(w, m->subfile);
	wire_put_i64(w, m->view_disp);
	proto_put_bytes32(w, m->view_type);
	wire_put_i64(w, m->subfile_disp);
	proto_put_bytes32(w, m->subfile_type);
	return 0;
}

int clf_proto_view_register_req_decode(struct wire_reader *r,
				struct clf_proto_view_register_req *m)
{
	struct clf_proto_view_register_req t;
	int err;

	t.file = wire_get_u64(r);
	t.subfile = wire_get_u32(r);
	t.view_disp = wire_get_i64(r);
	err = proto_get_bytes32(r, &t.view_type, CLF_PROTO_TYPE_MAX_BYTES,
				"VIEW_REGISTER view type");
	if (err)
		return err;
	t.subfile_disp = wire_get_i64(r);
	err = proto_get_bytes32(r, &t.subfile_type, CLF_PROTO_TYPE_MAX_BYTES,
				"VIEW_REGISTER subfile type");
	if (!err)
		err = proto_end(r, "VIEW_REGISTER");
	if (!err)
		err = check_view_register_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* VIEW_READ, VIEW_WRITE                                               */
/* ------------------------------------------------------------------ */

static int check_view_io(const struct clf_proto_view_io_req *m, bool write)
{
	const char *what = write ? "VIEW_WRITE" : "VIEW_READ";

	if (m->flags & ~CLF_PROTO_VIEW_FLAGS)
		return clf_fail(EPROTO, "proto: %s: unknown flags 0x%x", what,
				m->flags);
	if (m->lo < 0 || m->hi < m->lo)
		return clf_fail(EPROTO, "proto: %s: bad range [%lld, %lld)",
				what, (long long)m->lo, (long long)m->hi);
	if ((uint64_t)m->hi - (uint64_t)m->lo > CLF_PROTO_DATA_MAX)
		return clf_fail(E2BIG,
				"proto: %s: range of %lld bytes, limit %u", what,
				(long long)(m->hi - m->lo), CLF_PROTO_DATA_MAX);
	if (m->flags & CLF_PROTO_VIEW_COLLECTIVE) {
		if (m->participants > CLF_PROTO_MAX_PARTICIPANTS)
			return clf_fail(E2BIG,
					"proto: %s: %u participants, limit %u",
					what, m->participants,
					CLF_PROTO_MAX_PARTICIPANTS);
		if (m->participants == 0)
			return clf_fail(EPROTO,
					"proto: %s: collective with no participants",
					what);
	} else if (m->coll_tag || m->participants) {
		return clf_fail(EPROTO,
				"proto: %s: collective fields without the flag",
				what);
	}
	if (!write)
		return 0;
	if (m->data.len > (uint64_t)(m->hi - m->lo))
		return clf_fail(EPROTO,
				"proto: %s: %u bytes of data for a range of %lld",
				what, m->data.len, (long long)(m->hi - m->lo));
	return proto_check_bytes(m->data, 0, CLF_PROTO_DATA_MAX,
				 "VIEW_WRITE data");
}

static void put_view_io(struct wire_writer *w,
			const struct clf_proto_view_io_req *m)
{
	wire_put_u32(w, m->handle);
	wire_put_u32(w, m->flags);
	wire_put_i64(w, m->lo);
	wire_put_i64(w, m->hi);
	wire_put_u64(w, m->coll_tag);
	wire_put_u32(w, m->participants);
}

static void get_view_io(struct wire_reader *r, struct clf_proto_view_io_req *m)
{
	m->handle = wire_get_u32(r);
	m->flags = wire_get_u32(r);
	m->lo = wire_get_i64(r);
	m->hi = wire_get_i64(r);
	m->coll_tag = wire_get_u64(r);
	m->participants = wire_get_u32(r);
	m->data = (struct clf_proto_bytes){ NULL, 0 };
}

int clf_proto_view_read_req_encode(struct wire_writer *w,
				   const struct clf_proto_view_io_req *m)
{
	int err = check_view_io(m, false);

	if (err)
		return proto_enc_err(err);
	put_view_io(w, m);
	return 0;
}

int clf_proto_view_read_req_decode(struct wire_reader *r,
				   struct clf_proto_view_io_req *m)
{
	struct clf_proto_view_io_req t;
	int err;

	get_view_io(r, &t);
	err = proto_end(r, "VIEW_READ");
	if (!err)
		err = check_view_io(&t, false);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_view_write_req_encode_head(struct wire_writer *w,
					 const struct clf_proto_view_io_req *m)
{
	int err = check_view_io(m, true);

	if (err)
		return proto_enc_err(err);
	put_view_io(w, m);
	wire_put_u32(w, m->data.len);
	return 0;
}

int clf_proto_view_write_req_encode(struct wire_writer *w,
				    const struct clf_proto_view_io_req *m)
{
	int err = clf_proto_view_write_req_encode_head(w, m);

	if (err)
		return err;
	wire_put_bytes(w, m->data.ptr, m->data.len);
	return 0;
}

int clf_proto_view_write_req_decode(struct wire_reader *r,
				    struct clf_proto_view_io_req *m)
{
	struct clf_proto_view_io_req t;
	int err;

	get_view_io(r, &t);
	err = proto_get_bytes32(r, &t.data, CLF_PROTO_DATA_MAX,
				"VIEW_WRITE data");
	if (!err)
		err = proto_end(r, "VIEW_WRITE");
	if (!err)
		err = check_view_io(&t, true);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_view_write_req_decode_head(struct wire_reader *r,
					 size_t payload_len,
					 struct clf_proto_view_io_req *m)
{
	struct clf_proto_view_io_req t;
	int err;

	get_view_io(r, &t);
	err = get_data_head(r, payload_len, &t.data, "VIEW_WRITE");
	if (!err)
		err = check_view_io(&t, true);
	if (err)
		return err;
	t.data.ptr = NULL;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* TRUNCATE, REMOVE                                                    */
/* ------------------------------------------------------------------ */

static int check_truncate_req(const struct clf_proto_truncate_req *m)
{
	int err = check_subfile(m->subfile, false, "TRUNCATE");

	return err ? err : proto_check_nonneg(m->length, "TRUNCATE length");
}

int clf_proto_truncate_req_encode(struct wire_writer *w,
				  const struct clf_proto_truncate_req *m)
{
	int err = check_truncate_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->file);
	wire_put_u32(w, m->subfile);
	wire_put_i64(w, m->length);
	return 0;
}

int clf_proto_truncate_req_decode(struct wire_reader *r,
				  struct clf_proto_truncate_req *m)
{
	struct clf_proto_truncate_req t;
	int err;

	t.file = wire_get_u64(r);
	t.subfile = wire_get_u32(r);
	t.length = wire_get_i64(r);
	err = proto_end(r, "TRUNCATE");
	if (!err)
		err = check_truncate_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_remove_req_encode(struct wire_writer *w,
				const struct clf_proto_remove_req *m)
{
	int err = check_subfile(m->subfile, true, "REMOVE");

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->file);
	wire_put_u32(w, m->subfile);
	return 0;
}

int clf_proto_remove_req_decode(struct wire_reader *r,
				struct clf_proto_remove_req *m)
{
	struct clf_proto_remove_req t;
	int err;

	t.file = wire_get_u64(r);
	t.subfile = wire_get_u32(r);
	err = proto_end(r, "REMOVE");
	if (!err)
		err = check_subfile(t.subfile, true, "REMOVE");
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* SUB_SIZES                                                           */
/* ------------------------------------------------------------------ */

static int check_count(uint32_t n, const char *what)
{
	if (n >= 1 && n <= CLF_PROTO_SUB_SIZES_MAX)
		return 0;
	return clf_fail(E2BIG, "proto: %s: %u subfiles, need 1..%u", what, n,
			CLF_PROTO_SUB_SIZES_MAX);
}

int clf_proto_sub_sizes_req_encode(struct wire_writer *w,
				   const struct clf_proto_sub_sizes_req *m)
{
	int err = check_count(m->n, "SUB_SIZES");

	for (uint32_t i = 0; i < m->n && !err; i++)
		err = check_subfile(m->subfile[i], false, "SUB_SIZES");
	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->file);
	wire_put_u32(w, m->n);
	for (uint32_t i = 0; i < m->n; i++)
		wire_put_u32(w, m->subfile[i]);
	return 0;
}

int clf_proto_sub_sizes_req_decode(struct wire_reader *r,
				   struct clf_proto_sub_sizes_req *m)
{
	uint64_t file = wire_get_u64(r);
	uint32_t n = wire_get_u32(r);
	int err = r->bad ? proto_end(r, "SUB_SIZES") : check_count(n, "SUB_SIZES");

	for (uint32_t i = 0; i < n && !err; i++) {
		m->subfile[i] = wire_get_u32(r);
		if (!r->bad)
			err = check_subfile(m->subfile[i], false, "SUB_SIZES");
	}
	if (!err)
		err = proto_end(r, "SUB_SIZES");
	if (err)
		return err;
	m->file = file;
	m->n = n;
	return 0;
}

int clf_proto_sub_sizes_encode(struct wire_writer *w,
			       const struct clf_proto_sub_sizes *m)
{
	int err = check_count(m->n, "SUB_SIZES reply");

	for (uint32_t i = 0; i < m->n && !err; i++)
		err = proto_check_nonneg(m->length[i], "SUB_SIZES length");
	if (err)
		return proto_enc_err(err);
	wire_put_u32(w, m->n);
	for (uint32_t i = 0; i < m->n; i++)
		wire_put_i64(w, m->length[i]);
	return 0;
}

int clf_proto_sub_sizes_decode(struct wire_reader *r,
			       struct clf_proto_sub_sizes *m)
{
	uint32_t n = wire_get_u32(r);
	int err = r->bad ? proto_end(r, "SUB_SIZES reply")
			 : check_count(n, "SUB_SIZES reply");

	for (uint32_t i = 0; i < n && !err; i++) {
		m->length[i] = wire_get_i64(r);
		if (!r->bad)
			err = proto_check_nonneg(m->length[i],
						 "SUB_SIZES length");
	}
	if (!err)
		err = proto_end(r, "SUB_SIZES reply");
	if (err)
		return err;
	m->n = n;
	return 0;
}
