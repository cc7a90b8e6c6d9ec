// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_lock.c -- bodies of the byte-range lock operations of metad
 * (protocol 1.1): SETLK, GETLK, their GETLK reply, UNLOCK_OWNER.
 *
 * A range is (start, length) with length 0 meaning "to the end", as in
 * struct flock.  Both ends are checked here, once, so that metad's lock
 * table can compute start + length without overflowing.
 */
#include <errno.h>

#include "error.h"
#include "proto_i.h"

static bool lock_type_known(uint32_t type)
{
	return type == CLF_PROTO_LOCK_READ || type == CLF_PROTO_LOCK_WRITE ||
	       type == CLF_PROTO_LOCK_UNLOCK;
}

/* start and, for a finite length, the last byte within off_t. */
static int check_range(uint64_t start, uint64_t length, const char *what)
{
	if (start > CLF_PROTO_LOCK_OFFSET_MAX)
		return clf_fail(EPROTO, "proto: %s: start %llu past the largest offset",
				what, (unsigned long long)start);
	if (length > CLF_PROTO_LOCK_OFFSET_MAX - start + 1)
		return clf_fail(EPROTO,
				"proto: %s: range of %llu bytes at %llu ends past the largest offset",
				what, (unsigned long long)length,
				(unsigned long long)start);
	return 0;
}

static int check_lock_req(const struct clf_proto_lock_req *m, bool getlk)
{
	const char *what = getlk ? "GETLK" : "SETLK";

	if (!lock_type_known(m->type))
		return clf_fail(EPROTO, "proto: %s: unknown lock type %u", what,
				m->type);
	if (m->flags & ~CLF_PROTO_LOCK_FLAGS)
		return clf_fail(EPROTO, "proto: %s: unknown flags 0x%x", what,
				m->flags);
	if (m->wait_ms > CLF_PROTO_LOCK_WAIT_MAX_MS)
		return clf_fail(E2BIG, "proto: %s: wait of %u ms, limit %u",
				what, m->wait_ms, CLF_PROTO_LOCK_WAIT_MAX_MS);
	if (m->wait_ms && !(m->flags & CLF_PROTO_LOCK_WAIT))
		return clf_fail(EPROTO, "proto: %s: a wait without the WAIT flag",
				what);
	if (getlk && (m->type == CLF_PROTO_LOCK_UNLOCK || m->flags))
		return clf_fail(EPROTO,
				"proto: GETLK: asks about an unlock or waits");
	if (m->type == CLF_PROTO_LOCK_UNLOCK && m->flags)
		return clf_fail(EPROTO, "proto: SETLK: an unlock cannot wait");
	return check_range(m->start, m->length, what);
}

static void put_lock_req(struct wire_writer *w,
			 const struct clf_proto_lock_req *m)
{
	wire_put_u64(w, m->ino);
	wire_put_u64(w, m->owner);
	wire_put_u64(w, m->start);
	wire_put_u64(w, m->length);
	wire_put_u32(w, m->type);
	wire_put_u32(w, m->flags);
	wire_put_u32(w, m->wait_ms);
	wire_put_u32(w, m->pid);
}

static int lock_req_encode(struct wire_writer *w,
			   const struct clf_proto_lock_req *m, bool getlk)
{
	int err = check_lock_req(m, getlk);

	if (err)
		return proto_enc_err(err);
	put_lock_req(w, m);
	return 0;
}

static int lock_req_decode(struct wire_reader *r, struct clf_proto_lock_req *m,
			   bool getlk)
{
	struct clf_proto_lock_req t;
	int err;

	t.ino = wire_get_u64(r);
	t.owner = wire_get_u64(r);
	t.start = wire_get_u64(r);
	t.length = wire_get_u64(r);
	t.type = wire_get_u32(r);
	t.flags = wire_get_u32(r);
	t.wait_ms = wire_get_u32(r);
	t.pid = wire_get_u32(r);
	err = proto_end(r, getlk ? "GETLK" : "SETLK");
	if (!err)
		err = check_lock_req(&t, getlk);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_setlk_req_encode(struct wire_writer *w,
			       const struct clf_proto_lock_req *m)
{
	return lock_req_encode(w, m, false);
}

int clf_proto_setlk_req_decode(struct wire_reader *r,
			       struct clf_proto_lock_req *m)
{
	return lock_req_decode(r, m, false);
}

int clf_proto_getlk_req_encode(struct wire_writer *w,
			       const struct clf_proto_lock_req *m)
{
	return lock_req_encode(w, m, true);
}

int clf_proto_getlk_req_decode(struct wire_reader *r,
			       struct clf_proto_lock_req *m)
{
	return lock_req_decode(r, m, true);
}

static int check_lock_holder(const struct clf_proto_lock_holder *m)
{
	if (!lock_type_known(m->type))
		return clf_fail(EPROTO, "proto: GETLK reply: unknown lock type %u",
				m->type);
	return check_range(m->start, m->length, "GETLK reply");
}

int clf_proto_lock_holder_encode(struct wire_writer *w,
				 const struct clf_proto_lock_holder *m)
{
	int err = check_lock_holder(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u32(w, m->type);
	wire_put_u64(w, m->start);
	wire_put_u64(w, m->length);
	wire_put_u32(w, m->pid);
	return 0;
}

int clf_proto_lock_holder_decode(struct wire_reader *r,
				 struct clf_proto_lock_holder *m)
{
	struct clf_proto_lock_holder t;
	int err;

	t.type = wire_get_u32(r);
	t.start = wire_get_u64(r);
	t.length = wire_get_u64(r);
	t.pid = wire_get_u32(r);
	err = proto_end(r, "GETLK reply");
	if (!err)
		err = check_lock_holder(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_unlock_owner_req_encode(struct wire_writer *w,
				      const struct clf_proto_unlock_owner_req *m)
{
	wire_put_u64(w, m->ino);
	wire_put_u64(w, m->owner);
	return 0;
}

int clf_proto_unlock_owner_req_decode(struct wire_reader *r,
				      struct clf_proto_unlock_owner_req *m)
{
	struct clf_proto_unlock_owner_req t;
	int err;

	t.ino = wire_get_u64(r);
	t.owner = wire_get_u64(r);
	err = proto_end(r, "UNLOCK_OWNER");
	if (err)
		return err;
	*m = t;
	return 0;
}
