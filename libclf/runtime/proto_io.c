// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_io.c -- the rules of the iod bodies that tie fields together:
 * the ranges of SUB_READ and SUB_WRITE, and VIEW_READ and VIEW_WRITE,
 * and of SUB_READV and SUB_WRITEV.
 * The fields are declared in proto.h; these checks run before encoding
 * and after decoding (a write's head too, with the length of its data).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>

#include "error.h"
#include "proto_i.h"

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

int proto_check_sub_read_req(const void *msg)
{
	const struct clf_proto_sub_read_req *m = msg;

	return check_range(m->offset, m->length, "SUB_READ");
}

int proto_check_sub_write_req(const void *msg)
{
	const struct clf_proto_sub_write_req *m = msg;

	return check_range(m->offset, m->data.len, "SUB_WRITE");
}

static int check_view_io(const struct clf_proto_view_io_req *m, bool write)
{
	const char *what = write ? "VIEW_WRITE" : "VIEW_READ";

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
	} else if (m->coll_tag || m->participants ||
		   (m->flags & CLF_PROTO_VIEW_AGAIN)) {
		return clf_fail(EPROTO,
				"proto: %s: collective fields without the flag",
				what);
	}
	if (write && m->data.len > (uint64_t)(m->hi - m->lo))
		return clf_fail(EPROTO,
				"proto: %s: %u bytes of data for a range of %lld",
				what, m->data.len, (long long)(m->hi - m->lo));
	return 0;
}

int proto_check_view_read_req(const void *m)
{
	return check_view_io(m, false);
}

int proto_check_view_write_req(const void *m)
{
	return check_view_io(m, true);
}

/* Each range fits in int64_t, all of them CLF_PROTO_SUB_VEC_DATA_MAX. */
static int check_vec(const struct clf_proto_sub_vec_req *m, bool write)
{
	const char *what = write ? "SUB_WRITEV" : "SUB_READV";
	uint64_t sum = 0;
	int err;

	for (uint32_t i = 0; i < m->n; i++) {
		err = check_range(m->offset[i], m->length[i], what);
		if (err)
			return err;
		sum += m->length[i];
	}
	if (sum > CLF_PROTO_SUB_VEC_DATA_MAX)
		return clf_fail(E2BIG, "proto: %s: ranges of %llu bytes, limit %u",
				what, (unsigned long long)sum,
				CLF_PROTO_SUB_VEC_DATA_MAX);
	if (write && m->data.len != sum)
		return clf_fail(EPROTO,
				"proto: %s: %u bytes of data for ranges of %llu",
				what, m->data.len, (unsigned long long)sum);
	return 0;
}

int proto_check_sub_readv_req(const void *m)
{
	return check_vec(m, false);
}

int proto_check_sub_writev_req(const void *m)
{
	return check_vec(m, true);
}

/* Extent locks: a client id is never 0, an extent never empty. */
int proto_check_lock_callback_req(const void *m)
{
	const struct clf_proto_lock_callback_req *r = m;

	return r->client ? 0 :
	       clf_fail(EPROTO, "proto: LOCK_CALLBACK: client id 0");
}

int proto_check_lock_enqueue_req(const void *m)
{
	const struct clf_proto_lock_enqueue_req *r = m;

	if (!r->client || r->lo >= r->hi)
		return clf_fail(EPROTO, "proto: LOCK_ENQUEUE: client 0 or empty extent");
	if (r->in_file && !r->has_stride)
		return clf_fail(EPROTO, "proto: LOCK_ENQUEUE: a file phase without a stride");
	return !r->has_stride || (r->block > 0 && r->block < r->stride) ? 0 :
	       clf_fail(EPROTO, "proto: LOCK_ENQUEUE: block %" PRId64
			" not within stride %" PRId64, r->block, r->stride);
}

int proto_check_lock_grant(const void *m)
{
	const struct clf_proto_lock_grant *r = m;

	if (!r->id || r->lo >= r->hi)
		return clf_fail(EPROTO, "proto: LOCK_ENQUEUE reply: lock 0 or empty extent");
	if (r->in_file && !r->has_stride)
		return clf_fail(EPROTO, "proto: LOCK_ENQUEUE reply: a file phase without a stride");
	return !r->has_stride || (r->block > 0 && r->block < r->stride) ? 0 :
	       clf_fail(EPROTO, "proto: LOCK_ENQUEUE reply: block %" PRId64
			" not within stride %" PRId64, r->block, r->stride);
}

int proto_check_lock_release_req(const void *m)
{
	const struct clf_proto_lock_release_req *r = m;

	/* Lock 0 (no lock has it) only binds the connection. */
	return r->client ? 0 :
	       clf_fail(EPROTO, "proto: LOCK_RELEASE: client 0");
}

int proto_check_revoke(const void *m)
{
	const struct clf_proto_revoke *r = m;

	return r->id && r->lo < r->hi ? 0 :
	       clf_fail(EPROTO, "proto: REVOKE: lock 0 or empty extent");
}
