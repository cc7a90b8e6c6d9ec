// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_ops_perm.c -- resolving request paths as the user of the request:
 * search permission on every directory walked (mds_perm.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_ops_i.h"

/* mds_search_fn: the directory the walk is about to search. */
static int may_search(void *arg, const struct mds_attr *dir,
		      const char *walked, size_t len)
{
	const struct mds_session *s = arg;
	char name[CLF_PROTO_PATH_MAX + 1];

	if (mds_may(s->cred, dir, MDS_MAY_EXEC))
		return 0;
	if (len)
		snprintf(name, sizeof(name), "%.*s", (int)len, walked);
	else if (dir->ino == CLF_PROTO_ROOT_INO)
		snprintf(name, sizeof(name), "/");
	else
		snprintf(name, sizeof(name), "inode %llu",
			 (unsigned long long)dir->ino);
	return mds_perm_search(s->cred, dir, name);
}

int mds_resolve_as(const struct mds_session *s, uint64_t dir,
		   const char *path, struct mds_attr *attr,
		   struct mds_layout **layout)
{
	return mds_resolve_checked(s->ctx->store, dir, path, may_search,
				   (void *)s, attr, layout);
}

const char *mds_path_dir_name(const struct mds_path *p)
{
	return p->name == p->buf ? p->dir_name : p->buf;
}

int mds_path_split_as(const struct mds_session *s, uint64_t dir,
		      struct clf_proto_str path, struct mds_path *out)
{
	int err;

	if (path.len > CLF_PROTO_PATH_MAX)
		return clf_fail(ENAMETOOLONG, "metad: path of %u bytes",
				path.len);
	memcpy(out->buf, path.ptr, path.len);
	out->buf[path.len] = '\0';
	out->name = strrchr(out->buf, '/');
	if (!out->name) {
		out->name = out->buf;
		out->dir = dir;
		if (dir == CLF_PROTO_ROOT_INO)
			snprintf(out->dir_name, sizeof(out->dir_name), "/");
		else
			snprintf(out->dir_name, sizeof(out->dir_name),
				 "inode %llu", (unsigned long long)dir);
		err = mds_getattr(s->ctx->store, dir, &out->dir_attr);
		if (!err && !S_ISDIR(out->dir_attr.mode))
			err = clf_fail(ENOTDIR, "metad: %s is not a directory",
				       out->dir_name);
		return err;
	}
	*(char *)out->name++ = '\0';
	err = mds_resolve_as(s, dir, out->buf, &out->dir_attr, NULL);
	if (err)
		return err;
	if (!S_ISDIR(out->dir_attr.mode))
		return clf_fail(ENOTDIR, "metad: '%s' is not a directory",
				out->buf);
	out->dir = out->dir_attr.ino;
	return 0;
}

int mds_attr_of(const struct mds_session *s, uint64_t ino,
		struct mds_attr *a, char *name, size_t len)
{
	snprintf(name, len, "ino %llu", (unsigned long long)ino);
	return mds_getattr(s->ctx->store, ino, a);
}

int mds_may_readdir(const struct mds_session *s, uint64_t dir)
{
	struct mds_attr a;
	char name[64];
	int err = mds_attr_of(s, dir, &a, name, sizeof(name));

	if (!err && S_ISDIR(a.mode))
		err = mds_perm_readdir(s->cred, &a,
				       dir == CLF_PROTO_ROOT_INO ? "/" : name);
	return err;
}

void mds_new_owner(const struct mds_session *s, const struct mds_path *p,
		   uint32_t req_uid, uint32_t req_gid, uint32_t *mode,
		   bool is_dir, uint32_t *uid, uint32_t *gid)
{
	struct mds_cred owner = *s->cred;

	if (s->trusted) {
		owner.uid = req_uid;
		owner.gid = req_gid;
	}
	*uid = owner.uid;
	*gid = mds_perm_new_gid(&owner, &p->dir_attr, mode, is_dir);
}

int mds_resolve_part_as(const struct mds_session *s, uint64_t dir,
			const char *path, uint64_t *ino, size_t *done)
{
	return mds_resolve_part(s->ctx->store, dir, path, may_search,
				(void *)s, ino, done);
}
