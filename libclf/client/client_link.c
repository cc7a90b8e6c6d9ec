// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_link.c -- symbolic links, hard links and special files: the
 * metad requests of protocol 1.6 by inode (clf_ll.h) and by path
 * (CLF_symlink, CLF_readlink, CLF_link in clf.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_i.h"
#include "clf_ll.h"
#include "error.h"

static int enc_symlink(struct wire_writer *w, const void *m)
{
	return clf_proto_symlink_req_encode(w, m);
}

static int enc_link(struct wire_writer *w, const void *m)
{
	return clf_proto_link_req_encode(w, m);
}

static int enc_mknod(struct wire_writer *w, const void *m)
{
	return clf_proto_mknod_req_encode(w, m);
}

/* A request whose reply is an attr. */
static int call_attr(uint16_t op, clf_encode_fn enc, const void *msg,
		     struct clf_proto_attr *attr)
{
	struct wire_reader r;
	struct clf_proto_attr a;
	void *payload;
	uint32_t len;
	int err = clf_meta_call(op, enc, msg, &payload, &len);

	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_attr_decode(&r, &a);
	free(payload);
	if (!err && attr)
		*attr = a;
	return err;
}

int clf_ll_symlink(uint64_t dir, const char *name, const char *target,
		   const struct clf_ll_owner *owner,
		   struct clf_proto_attr *attr)
{
	struct clf_proto_symlink_req req = {
		.dir = dir,
		.path = clf_proto_str_of(name),
		.target = clf_proto_str_of(target),
		.uid = owner->uid,
		.gid = owner->gid,
	};

	if (!target || !*target)
		return clf_fail(ENOENT, "clf: symlink '%s': empty target",
				name ? name : "");
	if (strlen(target) > CLF_PROTO_SYMLINK_MAX)
		return clf_fail(ENAMETOOLONG,
				"clf: symlink '%s': target longer than %d bytes",
				name ? name : "", CLF_PROTO_SYMLINK_MAX);
	return call_attr(CLF_PROTO_OP_SYMLINK, enc_symlink, &req, attr);
}

int clf_ll_readlink(uint64_t ino, char **target, uint64_t *rdev)
{
	struct clf_proto_ino req = { ino };
	struct clf_proto_readlink_rep rep;
	struct wire_reader r;
	char *copy = NULL;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_READLINK, clf_enc_ino, &req, &payload,
			    &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_readlink_rep_decode(&r, &rep);
	if (!err && rep.target.len) {
		copy = clf_proto_str_dup(rep.target);
		if (!copy)
			err = clf_fail(ENOMEM, "clf: readlink: out of memory");
	}
	if (!err) {
		*target = copy;
		if (rdev)
			*rdev = rep.rdev;
	}
	free(payload);
	return err;
}

int clf_ll_link(uint64_t ino, uint64_t new_dir, const char *new_name,
		struct clf_proto_attr *attr)
{
	struct clf_proto_link_req req = {
		.ino = ino,
		.new_dir = new_dir,
		.new_path = clf_proto_str_of(new_name),
	};

	return call_attr(CLF_PROTO_OP_LINK, enc_link, &req, attr);
}

int clf_ll_mknod(uint64_t dir, const char *name, mode_t mode, uint64_t rdev,
		 const struct clf_ll_owner *owner, struct clf_proto_attr *attr)
{
	struct clf_proto_mknod_req req = {
		.dir = dir,
		.path = clf_proto_str_of(name),
		.mode = mode,
		.uid = owner->uid,
		.gid = owner->gid,
		.rdev = S_ISCHR(mode) || S_ISBLK(mode) ? rdev : 0,
	};

	return call_attr(CLF_PROTO_OP_MKNOD, enc_mknod, &req, attr);
}

/* ---- by path ---- */

/* A normalized path that names something other than the root. */
static int not_root(const char *path, char *rel, const char *op)
{
	int err = clf_path_normalize(path, rel, CLF_PROTO_PATH_MAX + 1);

	if (!err && !*rel)
		err = clf_fail(EEXIST, "clf: %s '/': the root exists", op);
	return err;
}

int CLF_symlink(const char *target, const char *linkpath)
{
	struct clf_ll_owner owner = { geteuid(), getegid() };
	char rel[CLF_PROTO_PATH_MAX + 1];
	int err = not_root(linkpath, rel, "symlink");

	if (err)
		return err;
	return clf_ll_symlink(CLF_PROTO_ROOT_INO, rel, target, &owner, NULL);
}

ssize_t CLF_readlink(const char *path, char *buf, size_t size)
{
	char rel[CLF_PROTO_PATH_MAX + 1];
	struct clf_proto_attr attr;
	char *target = NULL;
	size_t n;
	int err;

	if (!buf && size)
		return clf_fail(EINVAL, "clf: readlink: NULL buffer");
	err = clf_path_normalize(path, rel, sizeof(rel));
	if (!err)
		err = clf_meta_lookup(rel, &attr, NULL);
	if (!err && !S_ISLNK(attr.mode))
		err = clf_fail(EINVAL, "clf: readlink '/%s': not a symbolic link",
			       rel);
	if (!err)
		err = clf_ll_readlink(attr.ino, &target, NULL);
	if (!err && !target)
		err = clf_fail(EIO, "clf: readlink '/%s': metad gave no target",
			       rel);
	if (err)
		return err;
	n = strlen(target);
	if (n > size)
		n = size;
	memcpy(buf, target, n);
	free(target);
	return (ssize_t)n;
}

int CLF_link(const char *existing, const char *newpath)
{
	char from[CLF_PROTO_PATH_MAX + 1], to[CLF_PROTO_PATH_MAX + 1];
	struct clf_proto_attr attr;
	int err;

	err = clf_path_normalize(existing, from, sizeof(from));
	if (!err)
		err = not_root(newpath, to, "link");
	if (!err)
		err = clf_meta_lookup(from, &attr, NULL);
	if (!err && S_ISDIR(attr.mode))
		err = clf_fail(EPERM, "clf: link '/%s': a directory", from);
	if (err)
		return err;
	return clf_ll_link(attr.ino, CLF_PROTO_ROOT_INO, to, NULL);
}
