// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_meta.c -- bodies of the metad operations: attributes, layouts,
 * the namespace requests and READDIR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "proto_i.h"

/* Smallest encodings, to bound counts by what is left before allocating. */
#define SUBFILE_MIN_WIRE (4 + 4 + 1)		/* iod, length, one byte */
#define DIRENT_MIN_WIRE (8 + 8 + 4 + 2 + 1)	/* ino, cookie, mode, name */

/* ------------------------------------------------------------------ */
/* Attributes                                                          */
/* ------------------------------------------------------------------ */

static void put_attr(struct wire_writer *w, const struct clf_proto_attr *a)
{
	wire_put_u64(w, a->ino);
	wire_put_u32(w, a->mode);
	wire_put_u32(w, a->uid);
	wire_put_u32(w, a->gid);
	wire_put_u32(w, a->nlink);
	wire_put_i64(w, a->size);
	wire_put_i64(w, a->atime);
	wire_put_i64(w, a->mtime);
	wire_put_i64(w, a->ctime);
}

/* Fields only; the caller checks r->bad and then check_attr(). */
static void get_attr(struct wire_reader *r, struct clf_proto_attr *a)
{
	a->ino = wire_get_u64(r);
	a->mode = wire_get_u32(r);
	a->uid = wire_get_u32(r);
	a->gid = wire_get_u32(r);
	a->nlink = wire_get_u32(r);
	a->size = wire_get_i64(r);
	a->atime = wire_get_i64(r);
	a->mtime = wire_get_i64(r);
	a->ctime = wire_get_i64(r);
}

static int check_attr(const struct clf_proto_attr *a)
{
	return proto_check_nonneg(a->size, "attr size");
}

int clf_proto_attr_encode(struct wire_writer *w, const struct clf_proto_attr *m)
{
	int err = check_attr(m);

	if (err)
		return proto_enc_err(err);
	put_attr(w, m);
	return 0;
}

int clf_proto_attr_decode(struct wire_reader *r, struct clf_proto_attr *m)
{
	struct clf_proto_attr t;
	int err;

	get_attr(r, &t);
	err = proto_end(r, "attr");
	if (!err)
		err = check_attr(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Layouts                                                             */
/* ------------------------------------------------------------------ */

static int check_iod(uint32_t iod, const char *what)
{
	if (iod >= CLF_PROTO_MAX_IODS)
		return clf_fail(E2BIG, "proto: %s: iod %u, limit %d", what, iod,
				CLF_PROTO_MAX_IODS - 1);
	return 0;
}

static int check_subfile_entry(const struct clf_proto_subfile *sf)
{
	int err = check_iod(sf->iod, "layout subfile iod");

	if (err)
		return err;
	return proto_check_bytes(sf->type, 1, CLF_PROTO_TYPE_MAX_BYTES,
				 "layout subfile type");
}

static int check_layout(const struct clf_proto_layout *l)
{
	uint64_t total = 0;
	int err;

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
		if (l->first_iod != CLF_PROTO_IOD_DEFAULT)
			return check_iod(l->first_iod, "layout first iod");
		return 0;
	case CLF_PROTO_LAYOUT_EXPLICIT:
		err = proto_check_nonneg(l->disp, "layout displacement");
		if (!err)
			err = check_iod(l->disp_iod, "layout displacement iod");
		if (err)
			return err;
		if (l->nsubfiles > CLF_PROTO_MAX_SUBFILES)
			return clf_fail(E2BIG, "proto: layout: %u subfiles, limit %d",
					l->nsubfiles, CLF_PROTO_MAX_SUBFILES);
		if (l->nsubfiles == 0 || !l->subfiles)
			return clf_fail(EPROTO, "proto: layout: no subfiles");
		for (uint32_t i = 0; i < l->nsubfiles; i++) {
			err = check_subfile_entry(&l->subfiles[i]);
			if (err)
				return err;
			total += l->subfiles[i].type.len;
		}
		if (total > CLF_PROTO_LAYOUT_TYPES_MAX)
			return clf_fail(E2BIG,
				"proto: layout: types take %llu bytes, limit %u",
				(unsigned long long)total,
				CLF_PROTO_LAYOUT_TYPES_MAX);
		return 0;
	}
	return clf_fail(EPROTO, "proto: layout: unknown kind %u", l->kind);
}

static void put_layout(struct wire_writer *w, const struct clf_proto_layout *l)
{
	wire_put_u8(w, l->kind);
	if (l->kind == CLF_PROTO_LAYOUT_ROUND_ROBIN) {
		wire_put_u64(w, l->stripe_size);
		wire_put_u32(w, l->stripe_count);
		wire_put_u32(w, l->first_iod);
		return;
	}
	wire_put_i64(w, l->disp);
	wire_put_u32(w, l->disp_iod);
	wire_put_u32(w, l->nsubfiles);
	for (uint32_t i = 0; i < l->nsubfiles; i++) {
		wire_put_u32(w, l->subfiles[i].iod);
		proto_put_bytes32(w, l->subfiles[i].type);
	}
}

/*
 * Decode a layout in the middle of a body and check it; on success the
 * caller owns out->subfiles.
 */
static int get_layout(struct wire_reader *r, struct clf_proto_layout *out)
{
	struct clf_proto_layout l = { .kind = wire_get_u8(r) };
	int err;

	if (l.kind == CLF_PROTO_LAYOUT_ROUND_ROBIN) {
		l.stripe_size = wire_get_u64(r);
		l.stripe_count = wire_get_u32(r);
		l.first_iod = wire_get_u32(r);
		if (r->bad)
			return clf_fail(EPROTO, "proto: layout: truncated");
		err = check_layout(&l);
		if (err)
			return err;
		*out = l;
		return 0;
	}
	if (l.kind != CLF_PROTO_LAYOUT_EXPLICIT)
		return r->bad ? clf_fail(EPROTO, "proto: layout: truncated")
			      : clf_fail(EPROTO, "proto: layout: unknown kind %u",
					 l.kind);
	l.disp = wire_get_i64(r);
	l.disp_iod = wire_get_u32(r);
	l.nsubfiles = wire_get_u32(r);
	if (r->bad)
		return clf_fail(EPROTO, "proto: layout: truncated");
	if (l.nsubfiles > CLF_PROTO_MAX_SUBFILES)
		return clf_fail(E2BIG, "proto: layout: %u subfiles, limit %d",
				l.nsubfiles, CLF_PROTO_MAX_SUBFILES);
	if (l.nsubfiles == 0)
		return clf_fail(EPROTO, "proto: layout: no subfiles");
	if (l.nsubfiles > proto_left(r) / SUBFILE_MIN_WIRE)
		return clf_fail(EPROTO,
				"proto: layout: %u subfiles cannot fit in %zu bytes",
				l.nsubfiles, proto_left(r));
	l.subfiles = calloc(l.nsubfiles, sizeof(*l.subfiles));
	if (!l.subfiles)
		return clf_fail(ENOMEM, "proto: layout: out of memory for %u subfiles",
				l.nsubfiles);
	for (uint32_t i = 0; i < l.nsubfiles; i++) {
		l.subfiles[i].iod = wire_get_u32(r);
		err = proto_get_bytes32(r, &l.subfiles[i].type,
					CLF_PROTO_TYPE_MAX_BYTES,
					"layout subfile type");
		if (err)
			goto free_subfiles;
	}
	err = check_layout(&l);
	if (err)
		goto free_subfiles;
	*out = l;
	return 0;

free_subfiles:
	free(l.subfiles);
	return err;
}

void clf_proto_layout_release(struct clf_proto_layout *m)
{
	if (!m)
		return;
	free(m->subfiles);
	m->subfiles = NULL;
	m->nsubfiles = 0;
}

int clf_proto_layout_encode(struct wire_writer *w,
			    const struct clf_proto_layout *m)
{
	int err = check_layout(m);

	if (err)
		return proto_enc_err(err);
	put_layout(w, m);
	return 0;
}

int clf_proto_layout_decode(struct wire_reader *r, struct clf_proto_layout *m)
{
	struct clf_proto_layout t;
	int err = get_layout(r, &t);

	if (err)
		return err;
	err = proto_end(r, "layout");
	if (err) {
		clf_proto_layout_release(&t);
		return err;
	}
	*m = t;
	return 0;
}

static int check_explicit(const struct clf_proto_layout *l, const char *what)
{
	if (l->kind != CLF_PROTO_LAYOUT_EXPLICIT)
		return clf_fail(EPROTO, "proto: %s: layout is not explicit",
				what);
	return 0;
}

/* ------------------------------------------------------------------ */
/* LOOKUP                                                              */
/* ------------------------------------------------------------------ */

static int check_lookup_req(const struct clf_proto_lookup_req *m)
{
	if (m->flags & ~CLF_PROTO_LOOKUP_FLAGS)
		return clf_fail(EPROTO, "proto: LOOKUP: unknown flags 0x%x",
				m->flags);
	return proto_check_path(m->path, "LOOKUP path");
}

int clf_proto_lookup_req_encode(struct wire_writer *w,
				const struct clf_proto_lookup_req *m)
{
	int err = check_lookup_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	wire_put_u32(w, m->flags);
	proto_put_str16(w, m->path);
	return 0;
}

int clf_proto_lookup_req_decode(struct wire_reader *r,
				struct clf_proto_lookup_req *m)
{
	struct clf_proto_lookup_req t;
	int err;

	t.dir = wire_get_u64(r);
	t.flags = wire_get_u32(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "LOOKUP path");
	if (!err)
		err = proto_end(r, "LOOKUP");
	if (!err)
		err = check_lookup_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_lookup_rep_encode(struct wire_writer *w,
				const struct clf_proto_lookup_rep *m)
{
	int err = check_attr(&m->attr);

	if (!err && m->has_layout)
		err = check_explicit(&m->layout, "LOOKUP reply");
	if (!err && m->has_layout)
		err = check_layout(&m->layout);
	if (err)
		return proto_enc_err(err);
	put_attr(w, &m->attr);
	wire_put_u8(w, m->has_layout);
	if (m->has_layout)
		put_layout(w, &m->layout);
	return 0;
}

int clf_proto_lookup_rep_decode(struct wire_reader *r,
				struct clf_proto_lookup_rep *m)
{
	struct clf_proto_lookup_rep t = { .has_layout = false };
	uint8_t has_layout;
	int err;

	get_attr(r, &t.attr);
	has_layout = wire_get_u8(r);
	if (r->bad)
		return clf_fail(EPROTO, "proto: LOOKUP reply: truncated");
	err = check_attr(&t.attr);
	if (!err)
		err = proto_check_bool(has_layout, "LOOKUP reply has_layout");
	if (err)
		return err;
	if (has_layout) {
		err = get_layout(r, &t.layout);
		if (err)
			return err;
		t.has_layout = true;
		err = check_explicit(&t.layout, "LOOKUP reply");
	}
	if (!err)
		err = proto_end(r, "LOOKUP reply");
	if (err) {
		clf_proto_lookup_rep_release(&t);
		return err;
	}
	*m = t;
	return 0;
}

void clf_proto_lookup_rep_release(struct clf_proto_lookup_rep *m)
{
	if (m && m->has_layout)
		clf_proto_layout_release(&m->layout);
}

/* ------------------------------------------------------------------ */
/* CREATE, MKDIR                                                       */
/* ------------------------------------------------------------------ */

static int check_perm(uint32_t mode, const char *what)
{
	if (mode & ~CLF_PROTO_MODE_PERM)
		return clf_fail(EPROTO,
				"proto: %s: mode 0%o has more than permission bits",
				what, mode);
	return 0;
}

static int check_create_req(const struct clf_proto_create_req *m)
{
	int err = proto_check_path(m->path, "CREATE path");

	if (!err)
		err = check_perm(m->mode, "CREATE");
	if (!err && (m->flags & ~CLF_PROTO_CREATE_FLAGS))
		err = clf_fail(EPROTO, "proto: CREATE: unknown flags 0x%x",
			       m->flags);
	if (!err)
		err = check_layout(&m->layout);
	return err;
}

int clf_proto_create_req_encode(struct wire_writer *w,
				const struct clf_proto_create_req *m)
{
	int err = check_create_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	proto_put_str16(w, m->path);
	wire_put_u32(w, m->mode);
	wire_put_u32(w, m->uid);
	wire_put_u32(w, m->gid);
	wire_put_u32(w, m->flags);
	put_layout(w, &m->layout);
	return 0;
}

int clf_proto_create_req_decode(struct wire_reader *r,
				struct clf_proto_create_req *m)
{
	struct clf_proto_create_req t;
	int err;

	t.dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "CREATE path");
	if (err)
		return err;
	t.mode = wire_get_u32(r);
	t.uid = wire_get_u32(r);
	t.gid = wire_get_u32(r);
	t.flags = wire_get_u32(r);
	err = get_layout(r, &t.layout);	/* checks r->bad too */
	if (err)
		return err;
	err = proto_end(r, "CREATE");
	if (!err)
		err = check_create_req(&t);
	if (err) {
		clf_proto_layout_release(&t.layout);
		return err;
	}
	*m = t;
	return 0;
}

void clf_proto_create_req_release(struct clf_proto_create_req *m)
{
	if (m)
		clf_proto_layout_release(&m->layout);
}

int clf_proto_create_rep_encode(struct wire_writer *w,
				const struct clf_proto_create_rep *m)
{
	int err = check_attr(&m->attr);

	if (!err)
		err = check_explicit(&m->layout, "CREATE reply");
	if (!err)
		err = check_layout(&m->layout);
	if (err)
		return proto_enc_err(err);
	put_attr(w, &m->attr);
	put_layout(w, &m->layout);
	return 0;
}

int clf_proto_create_rep_decode(struct wire_reader *r,
				struct clf_proto_create_rep *m)
{
	struct clf_proto_create_rep t;
	int err;

	get_attr(r, &t.attr);
	err = get_layout(r, &t.layout);
	if (err)
		return err;
	err = proto_end(r, "CREATE reply");
	if (!err)
		err = check_attr(&t.attr);
	if (!err)
		err = check_explicit(&t.layout, "CREATE reply");
	if (err) {
		clf_proto_layout_release(&t.layout);
		return err;
	}
	*m = t;
	return 0;
}

void clf_proto_create_rep_release(struct clf_proto_create_rep *m)
{
	if (m)
		clf_proto_layout_release(&m->layout);
}

static int check_mkdir_req(const struct clf_proto_mkdir_req *m)
{
	int err = proto_check_path(m->path, "MKDIR path");

	return err ? err : check_perm(m->mode, "MKDIR");
}

int clf_proto_mkdir_req_encode(struct wire_writer *w,
			       const struct clf_proto_mkdir_req *m)
{
	int err = check_mkdir_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	proto_put_str16(w, m->path);
	wire_put_u32(w, m->mode);
	wire_put_u32(w, m->uid);
	wire_put_u32(w, m->gid);
	return 0;
}

int clf_proto_mkdir_req_decode(struct wire_reader *r,
			       struct clf_proto_mkdir_req *m)
{
	struct clf_proto_mkdir_req t;
	int err;

	t.dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "MKDIR path");
	if (err)
		return err;
	t.mode = wire_get_u32(r);
	t.uid = wire_get_u32(r);
	t.gid = wire_get_u32(r);
	err = proto_end(r, "MKDIR");
	if (!err)
		err = check_mkdir_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* READDIR                                                             */
/* ------------------------------------------------------------------ */

static int check_readdir_req(const struct clf_proto_readdir_req *m)
{
	if (m->max > CLF_PROTO_READDIR_MAX)
		return clf_fail(E2BIG, "proto: READDIR: %u entries, limit %d",
				m->max, CLF_PROTO_READDIR_MAX);
	if (m->max == 0)
		return clf_fail(EPROTO, "proto: READDIR: asks for no entries");
	return 0;
}

int clf_proto_readdir_req_encode(struct wire_writer *w,
				 const struct clf_proto_readdir_req *m)
{
	int err = check_readdir_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	wire_put_u64(w, m->cookie);
	wire_put_u32(w, m->max);
	return 0;
}

int clf_proto_readdir_req_decode(struct wire_reader *r,
				 struct clf_proto_readdir_req *m)
{
	struct clf_proto_readdir_req t;
	int err;

	t.dir = wire_get_u64(r);
	t.cookie = wire_get_u64(r);
	t.max = wire_get_u32(r);
	err = proto_end(r, "READDIR");
	if (!err)
		err = check_readdir_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

static int check_readdir_rep(const struct clf_proto_readdir_rep *m)
{
	if (m->count > CLF_PROTO_READDIR_MAX)
		return clf_fail(E2BIG, "proto: READDIR reply: %u entries, limit %d",
				m->count, CLF_PROTO_READDIR_MAX);
	if (m->count && !m->ents)
		return clf_fail(EPROTO, "proto: READDIR reply: no entries");
	for (uint32_t i = 0; i < m->count; i++) {
		int err = proto_check_name(m->ents[i].name,
					   "READDIR reply name");

		if (err)
			return err;
	}
	return 0;
}

int clf_proto_readdir_rep_encode(struct wire_writer *w,
				 const struct clf_proto_readdir_rep *m)
{
	int err = check_readdir_rep(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u32(w, m->count);
	wire_put_u8(w, m->eof);
	for (uint32_t i = 0; i < m->count; i++) {
		wire_put_u64(w, m->ents[i].ino);
		wire_put_u64(w, m->ents[i].cookie);
		wire_put_u32(w, m->ents[i].mode);
		proto_put_str16(w, m->ents[i].name);
	}
	return 0;
}

int clf_proto_readdir_rep_decode(struct wire_reader *r,
				 struct clf_proto_readdir_rep *m)
{
	struct clf_proto_readdir_rep t = { 0 };
	uint8_t eof;
	int err;

	t.count = wire_get_u32(r);
	eof = wire_get_u8(r);
	if (r->bad)
		return clf_fail(EPROTO, "proto: READDIR reply: truncated");
	if (t.count > CLF_PROTO_READDIR_MAX)
		return clf_fail(E2BIG, "proto: READDIR reply: %u entries, limit %d",
				t.count, CLF_PROTO_READDIR_MAX);
	if (t.count > proto_left(r) / DIRENT_MIN_WIRE)
		return clf_fail(EPROTO,
				"proto: READDIR reply: %u entries cannot fit in %zu bytes",
				t.count, proto_left(r));
	err = proto_check_bool(eof, "READDIR reply eof");
	if (err)
		return err;
	t.eof = eof;
	if (t.count) {
		t.ents = calloc(t.count, sizeof(*t.ents));
		if (!t.ents)
			return clf_fail(ENOMEM,
					"proto: READDIR reply: out of memory for %u entries",
					t.count);
	}
	for (uint32_t i = 0; i < t.count; i++) {
		t.ents[i].ino = wire_get_u64(r);
		t.ents[i].cookie = wire_get_u64(r);
		t.ents[i].mode = wire_get_u32(r);
		err = proto_get_str16(r, &t.ents[i].name, CLF_PROTO_NAME_MAX,
				      "READDIR reply name");
		if (err)
			goto free_ents;
	}
	err = proto_end(r, "READDIR reply");
	if (!err)
		err = check_readdir_rep(&t);
	if (err)
		goto free_ents;
	*m = t;
	return 0;

free_ents:
	free(t.ents);
	return err;
}

void clf_proto_readdir_rep_release(struct clf_proto_readdir_rep *m)
{
	if (!m)
		return;
	free(m->ents);
	m->ents = NULL;
	m->count = 0;
}

/* ------------------------------------------------------------------ */
/* RENAME, UNLINK, RMDIR                                               */
/* ------------------------------------------------------------------ */

static int check_rename_req(const struct clf_proto_rename_req *m)
{
	int err = proto_check_path(m->path, "RENAME path");

	if (!err)
		err = proto_check_path(m->new_path, "RENAME new path");
	if (!err && (m->flags & ~CLF_PROTO_RENAME_FLAGS))
		err = clf_fail(EPROTO, "proto: RENAME: unknown flags 0x%x",
			       m->flags);
	return err;
}

int clf_proto_rename_req_encode(struct wire_writer *w,
				const struct clf_proto_rename_req *m)
{
	int err = check_rename_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	proto_put_str16(w, m->path);
	wire_put_u64(w, m->new_dir);
	proto_put_str16(w, m->new_path);
	wire_put_u32(w, m->flags);
	return 0;
}

int clf_proto_rename_req_decode(struct wire_reader *r,
				struct clf_proto_rename_req *m)
{
	struct clf_proto_rename_req t;
	int err;

	t.dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "RENAME path");
	if (err)
		return err;
	t.new_dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.new_path, CLF_PROTO_PATH_MAX,
			      "RENAME new path");
	if (err)
		return err;
	t.flags = wire_get_u32(r);
	err = proto_end(r, "RENAME");
	if (!err)
		err = check_rename_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_path_req_encode(struct wire_writer *w,
			      const struct clf_proto_path_req *m)
{
	int err = proto_check_path(m->path, "path");

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	proto_put_str16(w, m->path);
	return 0;
}

int clf_proto_path_req_decode(struct wire_reader *r,
			      struct clf_proto_path_req *m)
{
	struct clf_proto_path_req t;
	int err;

	t.dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "path");
	if (!err)
		err = proto_end(r, "path request");
	if (!err)
		err = proto_check_path(t.path, "path");
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* SETATTR, SET_LAYOUT, UPDATE_SIZE                                    */
/* ------------------------------------------------------------------ */

static int check_setattr_req(const struct clf_proto_setattr_req *m)
{
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
	if (m->mask & CLF_PROTO_SETATTR_MODE) {
		int err = check_perm(m->mode, "SETATTR");

		if (err)
			return err;
	}
	if (m->mask & CLF_PROTO_SETATTR_SIZE)
		return proto_check_nonneg(m->size, "SETATTR size");
	return 0;
}

int clf_proto_setattr_req_encode(struct wire_writer *w,
				 const struct clf_proto_setattr_req *m)
{
	int err = check_setattr_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->ino);
	wire_put_u32(w, m->mask);
	wire_put_u32(w, m->mode);
	wire_put_u32(w, m->uid);
	wire_put_u32(w, m->gid);
	wire_put_i64(w, m->atime);
	wire_put_i64(w, m->mtime);
	wire_put_i64(w, m->size);
	return 0;
}

int clf_proto_setattr_req_decode(struct wire_reader *r,
				 struct clf_proto_setattr_req *m)
{
	struct clf_proto_setattr_req t;
	int err;

	t.ino = wire_get_u64(r);
	t.mask = wire_get_u32(r);
	t.mode = wire_get_u32(r);
	t.uid = wire_get_u32(r);
	t.gid = wire_get_u32(r);
	t.atime = wire_get_i64(r);
	t.mtime = wire_get_i64(r);
	t.size = wire_get_i64(r);
	err = proto_end(r, "SETATTR");
	if (!err)
		err = check_setattr_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_set_layout_req_encode(struct wire_writer *w,
				    const struct clf_proto_set_layout_req *m)
{
	int err = check_layout(&m->layout);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->ino);
	put_layout(w, &m->layout);
	return 0;
}

int clf_proto_set_layout_req_decode(struct wire_reader *r,
				    struct clf_proto_set_layout_req *m)
{
	struct clf_proto_set_layout_req t;
	int err;

	t.ino = wire_get_u64(r);
	err = get_layout(r, &t.layout);
	if (err)
		return err;
	err = proto_end(r, "SET_LAYOUT");
	if (err) {
		clf_proto_layout_release(&t.layout);
		return err;
	}
	*m = t;
	return 0;
}

void clf_proto_set_layout_req_release(struct clf_proto_set_layout_req *m)
{
	if (m)
		clf_proto_layout_release(&m->layout);
}

int clf_proto_update_size_req_encode(struct wire_writer *w,
				     const struct clf_proto_update_size_req *m)
{
	int err = proto_check_nonneg(m->size, "UPDATE_SIZE size");

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->ino);
	wire_put_i64(w, m->size);
	wire_put_i64(w, m->mtime);
	return 0;
}

int clf_proto_update_size_req_decode(struct wire_reader *r,
				     struct clf_proto_update_size_req *m)
{
	struct clf_proto_update_size_req t;
	int err;

	t.ino = wire_get_u64(r);
	t.size = wire_get_i64(r);
	t.mtime = wire_get_i64(r);
	err = proto_end(r, "UPDATE_SIZE");
	if (!err)
		err = proto_check_nonneg(t.size, "UPDATE_SIZE size");
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* APPEND                                                              */
/* ------------------------------------------------------------------ */

static int check_append_req(const struct clf_proto_append_req *m)
{
	if (m->flags & ~CLF_PROTO_APPEND_FLAGS)
		return clf_fail(EPROTO, "proto: APPEND: unknown flags 0x%x",
				m->flags);
	if (m->at < 0 || m->length < 0 ||
	    (uint64_t)m->length > CLF_PROTO_LOCK_OFFSET_MAX - (uint64_t)m->at)
		return clf_fail(EPROTO, "proto: APPEND: bad range at %lld, %lld bytes",
				(long long)m->at, (long long)m->length);
	return 0;
}

int clf_proto_append_req_encode(struct wire_writer *w,
				const struct clf_proto_append_req *m)
{
	int err = check_append_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->ino);
	wire_put_i64(w, m->at);
	wire_put_i64(w, m->length);
	wire_put_u32(w, m->flags);
	return 0;
}

int clf_proto_append_req_decode(struct wire_reader *r,
				struct clf_proto_append_req *m)
{
	struct clf_proto_append_req t;
	int err;

	t.ino = wire_get_u64(r);
	t.at = wire_get_i64(r);
	t.length = wire_get_i64(r);
	t.flags = wire_get_u32(r);
	err = proto_end(r, "APPEND");
	if (!err)
		err = check_append_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

int clf_proto_append_rep_encode(struct wire_writer *w,
				const struct clf_proto_append_rep *m)
{
	int err = proto_check_nonneg(m->offset, "APPEND offset");

	if (err)
		return proto_enc_err(err);
	wire_put_i64(w, m->offset);
	return 0;
}

int clf_proto_append_rep_decode(struct wire_reader *r,
				struct clf_proto_append_rep *m)
{
	struct clf_proto_append_rep t;
	int err;

	t.offset = wire_get_i64(r);
	err = proto_end(r, "APPEND reply");
	if (!err)
		err = proto_check_nonneg(t.offset, "APPEND offset");
	if (err)
		return err;
	*m = t;
	return 0;
}
