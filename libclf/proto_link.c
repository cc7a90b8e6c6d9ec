// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_link.c -- bodies of the metad requests for special files and
 * hard links (1.6): SYMLINK, READLINK, LINK, MKNOD.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "proto_i.h"

/* ------------------------------------------------------------------ */
/* SYMLINK                                                             */
/* ------------------------------------------------------------------ */

static int check_target(struct clf_proto_str t, const char *what)
{
	int err = proto_check_str(t, CLF_PROTO_SYMLINK_MAX, what);

	if (!err && t.len == 0)
		err = clf_fail(EPROTO, "proto: %s: empty", what);
	return err;
}

static int check_symlink_req(const struct clf_proto_symlink_req *m)
{
	int err = proto_check_path(m->path, "SYMLINK path");

	return err ? err : check_target(m->target, "SYMLINK target");
}

int clf_proto_symlink_req_encode(struct wire_writer *w,
				 const struct clf_proto_symlink_req *m)
{
	int err = check_symlink_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	proto_put_str16(w, m->path);
	proto_put_str16(w, m->target);
	wire_put_u32(w, m->uid);
	wire_put_u32(w, m->gid);
	return 0;
}

int clf_proto_symlink_req_decode(struct wire_reader *r,
				 struct clf_proto_symlink_req *m)
{
	struct clf_proto_symlink_req t;
	int err;

	t.dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "SYMLINK path");
	if (!err)
		err = proto_get_str16(r, &t.target, CLF_PROTO_SYMLINK_MAX,
				      "SYMLINK target");
	if (err)
		return err;
	t.uid = wire_get_u32(r);
	t.gid = wire_get_u32(r);
	err = proto_end(r, "SYMLINK");
	if (!err)
		err = check_symlink_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* READLINK                                                            */
/* ------------------------------------------------------------------ */

static int check_readlink_rep(const struct clf_proto_readlink_rep *m)
{
	int err = proto_check_str(m->target, CLF_PROTO_SYMLINK_MAX,
				  "READLINK target");

	if (!err && m->target.len && m->rdev)
		err = clf_fail(EPROTO,
			       "proto: READLINK: both a target and a device number");
	return err;
}

int clf_proto_readlink_rep_encode(struct wire_writer *w,
				  const struct clf_proto_readlink_rep *m)
{
	int err = check_readlink_rep(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->rdev);
	proto_put_str16(w, m->target);
	return 0;
}

int clf_proto_readlink_rep_decode(struct wire_reader *r,
				  struct clf_proto_readlink_rep *m)
{
	struct clf_proto_readlink_rep t;
	int err;

	t.rdev = wire_get_u64(r);
	err = proto_get_str16(r, &t.target, CLF_PROTO_SYMLINK_MAX,
			      "READLINK target");
	if (!err)
		err = proto_end(r, "READLINK reply");
	if (!err)
		err = check_readlink_rep(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* LINK                                                                */
/* ------------------------------------------------------------------ */

int clf_proto_link_req_encode(struct wire_writer *w,
			      const struct clf_proto_link_req *m)
{
	int err = proto_check_path(m->new_path, "LINK new path");

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->ino);
	wire_put_u64(w, m->new_dir);
	proto_put_str16(w, m->new_path);
	return 0;
}

int clf_proto_link_req_decode(struct wire_reader *r,
			      struct clf_proto_link_req *m)
{
	struct clf_proto_link_req t;
	int err;

	t.ino = wire_get_u64(r);
	t.new_dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.new_path, CLF_PROTO_PATH_MAX,
			      "LINK new path");
	if (!err)
		err = proto_end(r, "LINK");
	if (!err)
		err = proto_check_path(t.new_path, "LINK new path");
	if (err)
		return err;
	*m = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* MKNOD                                                               */
/* ------------------------------------------------------------------ */

static int check_mknod_req(const struct clf_proto_mknod_req *m)
{
	uint32_t fmt = m->mode & S_IFMT;
	int err = proto_check_path(m->path, "MKNOD path");

	if (err)
		return err;
	if ((m->mode & ~(uint32_t)(S_IFMT | CLF_PROTO_MODE_PERM)) ||
	    (fmt != S_IFIFO && fmt != S_IFSOCK && fmt != S_IFCHR &&
	     fmt != S_IFBLK))
		return clf_fail(EPROTO, "proto: MKNOD: mode 0%o is no fifo, "
				"socket or device", m->mode);
	if ((fmt == S_IFIFO || fmt == S_IFSOCK) && m->rdev)
		return clf_fail(EPROTO,
				"proto: MKNOD: a device number for a fifo or socket");
	return 0;
}

int clf_proto_mknod_req_encode(struct wire_writer *w,
			       const struct clf_proto_mknod_req *m)
{
	int err = check_mknod_req(m);

	if (err)
		return proto_enc_err(err);
	wire_put_u64(w, m->dir);
	proto_put_str16(w, m->path);
	wire_put_u32(w, m->mode);
	wire_put_u32(w, m->uid);
	wire_put_u32(w, m->gid);
	wire_put_u64(w, m->rdev);
	return 0;
}

int clf_proto_mknod_req_decode(struct wire_reader *r,
			       struct clf_proto_mknod_req *m)
{
	struct clf_proto_mknod_req t;
	int err;

	t.dir = wire_get_u64(r);
	err = proto_get_str16(r, &t.path, CLF_PROTO_PATH_MAX, "MKNOD path");
	if (err)
		return err;
	t.mode = wire_get_u32(r);
	t.uid = wire_get_u32(r);
	t.gid = wire_get_u32(r);
	t.rdev = wire_get_u64(r);
	err = proto_end(r, "MKNOD");
	if (!err)
		err = check_mknod_req(&t);
	if (err)
		return err;
	*m = t;
	return 0;
}
