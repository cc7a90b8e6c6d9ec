// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_lock.c -- the rules of the byte-range lock bodies of metad
 * (protocol 1.1): SETLK, GETLK, their GETLK reply.  The fields are
 * declared in proto.h; these checks run before encoding and after
 * decoding.
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

int proto_check_setlk_req(const void *m)
{
	return check_lock_req(m, false);
}

int proto_check_getlk_req(const void *m)
{
	return check_lock_req(m, true);
}

int proto_check_lock_holder(const void *msg)
{
	const struct clf_proto_lock_holder *m = msg;

	if (!lock_type_known(m->type))
		return clf_fail(EPROTO, "proto: GETLK reply: unknown lock type %u",
				m->type);
	return check_range(m->start, m->length, "GETLK reply");
}
