// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_meta.c -- the rules of the metad bodies that tie fields together:
 * layouts, LOOKUP and CREATE replies, SETATTR, APPEND.  The fields are
 * declared in proto.h; these checks run before encoding and after
 * decoding.
 */
#include <errno.h>
#include <sys/stat.h>

#include "error.h"
#include "proto_i.h"

int proto_check_layout(const void *msg)
{
	const struct clf_proto_layout *l = msg;
	uint64_t total = 0;

	switch (l->kind) {
	case CLF_PROTO_LAYOUT_ROUND_ROBIN:
		if (l->stripe_size > CLF_PROTO_STRIPE_MAX)
			return clf_fail(E2BIG,
				"proto: layout: stripe size %llu, limit %u",
				(unsigned long long)l->stripe_size,
				CLF_PROTO_STRIPE_MAX);
		if (l->stripe_count > CLF_PROTO_MAX_SUBFILES)
			return clf_fail(E2BIG,
				"proto: layout: stripe count %u, limit %d",
				l->stripe_count, CLF_PROTO_MAX_SUBFILES);
		if (l->first_iod != CLF_PROTO_IOD_DEFAULT &&
		    l->first_iod >= CLF_PROTO_MAX_IODS)
			return clf_fail(E2BIG,
				"proto: layout first iod: iod %u, limit %d",
				l->first_iod, CLF_PROTO_MAX_IODS - 1);
		return 0;
	case CLF_PROTO_LAYOUT_EXPLICIT:
		for (uint32_t i = 0; i < l->nsubfiles; i++)
			total += l->subfiles[i].type.len;
		if (total > CLF_PROTO_LAYOUT_TYPES_MAX)
			return clf_fail(E2BIG,
				"proto: layout: types take %llu bytes, limit %u",
				(unsigned long long)total,
				CLF_PROTO_LAYOUT_TYPES_MAX);
		return 0;
	}
	return clf_fail(EPROTO, "proto: layout: unknown kind %u", l->kind);
}

static int check_explicit(const struct clf_proto_layout *l, const char *what)
{
	if (l->kind != CLF_PROTO_LAYOUT_EXPLICIT)
		return clf_fail(EPROTO, "proto: %s: layout is not explicit",
				what);
	return 0;
}

int proto_check_lookup_rep(const void *msg)
{
	const struct clf_proto_lookup_rep *m = msg;

	return m->has_layout ? check_explicit(&m->layout, "LOOKUP reply") : 0;
}

int proto_check_readdirplus_rep(const void *msg)
{
	const struct clf_proto_readdirplus_rep *m = msg;

	for (uint32_t i = 0; i < m->count; i++) {
		const struct clf_proto_dirent_plus *e = &m->ents[i];
		int err;

		if (e->has_attr && e->attr.ino != e->ino)
			return clf_fail(EPROTO,
					"proto: READDIRPLUS reply: entry %u names inode %llu, its attributes %llu",
					i, (unsigned long long)e->ino,
					(unsigned long long)e->attr.ino);
		if (!e->has_layout)
			continue;
		if (!e->has_attr || (e->attr.mode & S_IFMT) != S_IFREG)
			return clf_fail(EPROTO,
					"proto: READDIRPLUS reply: entry %u has a layout but is not a regular file",
					i);
		err = check_explicit(&e->layout, "READDIRPLUS reply");
		if (err)
			return err;
	}
	return 0;
}

int proto_check_create_rep(const void *msg)
{
	const struct clf_proto_create_rep *m = msg;

	return check_explicit(&m->layout, "CREATE reply");
}

int proto_check_setattr_req(const void *msg)
{
	const struct clf_proto_setattr_req *m = msg;
	const uint32_t both_a = CLF_PROTO_SETATTR_ATIME |
				CLF_PROTO_SETATTR_ATIME_NOW;
	const uint32_t both_m = CLF_PROTO_SETATTR_MTIME |
				CLF_PROTO_SETATTR_MTIME_NOW;

	if (m->mask & ~CLF_PROTO_SETATTR_KNOWN)
		return clf_fail(EPROTO, "proto: SETATTR: unknown mask bits 0x%x",
				m->mask);
	if ((m->mask & both_a) == both_a || (m->mask & both_m) == both_m)
		return clf_fail(EPROTO,
				"proto: SETATTR: a time both given and 'now'");
	if ((m->mask & CLF_PROTO_SETATTR_MODE) &&
	    (m->mode & ~CLF_PROTO_MODE_PERM))
		return clf_fail(EPROTO,
				"proto: SETATTR: mode 0%o has more than permission bits",
				m->mode);
	if ((m->mask & CLF_PROTO_SETATTR_SIZE) && m->size < 0)
		return clf_fail(EPROTO, "proto: SETATTR size: %lld is negative",
				(long long)m->size);
	return 0;
}

int proto_check_append_req(const void *msg)
{
	const struct clf_proto_append_req *m = msg;

	if (m->at < 0 || m->length < 0 ||
	    (uint64_t)m->length > CLF_PROTO_LOCK_OFFSET_MAX - (uint64_t)m->at)
		return clf_fail(EPROTO, "proto: APPEND: bad range at %lld, %lld bytes",
				(long long)m->at, (long long)m->length);
	return 0;
}
