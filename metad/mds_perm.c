// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_perm.c -- the POSIX permission checks of mds_perm.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "mds_lock.h"
#include "mds_perm.h"

const struct mds_cred mds_cred_root = { 0, 0, 1, { 0 } };

void mds_cred_resolve(struct mds_cred *c, uint32_t uid, uint32_t gid,
		      bool squash)
{
	struct passwd pw, *found = NULL;
	gid_t groups[MDS_CRED_GROUPS_MAX];
	char buf[4096];
	int n = MDS_CRED_GROUPS_MAX;

	if (squash && uid == 0)
		uid = MDS_NOBODY;
	if (squash && gid == 0)
		gid = MDS_NOBODY;
	c->uid = uid;
	c->gid = gid;
	c->groups[0] = gid;
	c->ngroups = 1;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) || !found)
		return;
	/* More groups than fit: the first MDS_CRED_GROUPS_MAX count. */
	if (getgrouplist(pw.pw_name, gid, groups, &n) < 0)
		n = MDS_CRED_GROUPS_MAX;
	for (int i = 0; i < n && c->ngroups < MDS_CRED_GROUPS_MAX; i++) {
		if (groups[i] == gid || (squash && groups[i] == 0))
			continue;
		c->groups[c->ngroups++] = groups[i];
	}
}

static bool in_group(const struct mds_cred *c, uint32_t gid)
{
	for (uint32_t i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

bool mds_may(const struct mds_cred *c, const struct mds_attr *a,
	     unsigned want)
{
	unsigned bits;

	if (c->uid == 0)
		return !(want & MDS_MAY_EXEC) || S_ISDIR(a->mode) ||
		       (a->mode & 0111);
	if (c->uid == a->uid)
		bits = a->mode >> 6;
	else if (in_group(c, a->gid))
		bits = a->mode >> 3;
	else
		bits = a->mode;
	return (want & ~bits & 7) == 0;
}

/* "read", "write and search", ... for a message. */
static const char *rights(unsigned want)
{
	switch (want) {
	case MDS_MAY_READ: return "read";
	case MDS_MAY_WRITE: return "write";
	case MDS_MAY_READ | MDS_MAY_WRITE: return "read and write";
	case MDS_MAY_EXEC: return "search";
	default: return "write and search";
	}
}

static int denied(const char *op, const char *name, unsigned want,
		  const char *on, const char *onname)
{
	return clf_fail(EACCES,
			"metad: cannot %s '%s': permission denied (no %s permission on %s '%s')",
			op, name, rights(want), on, onname);
}

int mds_perm_search(const struct mds_cred *c, const struct mds_attr *dir,
		    const char *name)
{
	if (mds_may(c, dir, MDS_MAY_EXEC))
		return 0;
	return clf_fail(EACCES,
			"metad: cannot search '%s': permission denied (no search permission on the directory)",
			name);
}

int mds_perm_dir_change(const struct mds_cred *c, const struct mds_attr *dir,
			const char *dname, const char *op, const char *name)
{
	if (mds_may(c, dir, MDS_MAY_WRITE | MDS_MAY_EXEC))
		return 0;
	return denied(op, name, MDS_MAY_WRITE | MDS_MAY_EXEC, "directory",
		      dname);
}

int mds_perm_sticky(const struct mds_cred *c, const struct mds_attr *dir,
		    const struct mds_attr *victim, const char *name)
{
	if (!(dir->mode & S_ISVTX) || c->uid == 0 || c->uid == victim->uid ||
	    c->uid == dir->uid)
		return 0;
	return clf_fail(EPERM,
			"metad: cannot remove or replace '%s': the directory is sticky and neither it nor the entry belongs to uid %u",
			name, c->uid);
}

int mds_perm_readdir(const struct mds_cred *c, const struct mds_attr *dir,
		     const char *name)
{
	if (mds_may(c, dir, MDS_MAY_READ))
		return 0;
	return denied("list", name, MDS_MAY_READ, "directory", name);
}

int mds_perm_open(const struct mds_cred *c, const struct mds_attr *a,
		  unsigned want, const char *name)
{
	if (mds_may(c, a, want))
		return 0;
	return denied("open", name, want, "file", name);
}

int mds_perm_owner(const struct mds_cred *c, const struct mds_attr *a,
		   const char *what, const char *name)
{
	if (c->uid == 0 || c->uid == a->uid)
		return 0;
	return clf_fail(EPERM,
			"metad: cannot %s '%s': operation not permitted (only its owner, uid %u, or root may)",
			what, name, a->uid);
}

/* chown and chgrp; clears setuid/setgid in set as Linux does. */
static int perm_chown(const struct mds_cred *c, const struct mds_attr *a,
		      struct mds_setattr *set, const char *name)
{
	bool uid_change = (set->mask & MDS_SETATTR_UID) && set->uid != a->uid;
	bool gid_change = (set->mask & MDS_SETATTR_GID) && set->gid != a->gid;
	uint32_t mode = set->mask & MDS_SETATTR_MODE ? set->mode
						     : a->mode & 07777;
	uint32_t drop;

	if (c->uid != 0 && uid_change)
		return clf_fail(EPERM,
				"metad: cannot change the owner of '%s': operation not permitted (only root may give a file away)",
				name);
	if (c->uid != 0 && (set->mask & (MDS_SETATTR_UID | MDS_SETATTR_GID)) &&
	    c->uid != a->uid)
		return clf_fail(EPERM,
				"metad: cannot change the owner or group of '%s': operation not permitted (only its owner, uid %u, or root may)",
				name, a->uid);
	if (c->uid != 0 && gid_change && !in_group(c, set->gid))
		return clf_fail(EPERM,
				"metad: cannot give '%s' group %u: operation not permitted (uid %u is not in it)",
				name, set->gid, c->uid);
	if (!(uid_change || gid_change) || S_ISDIR(a->mode))
		return 0;
	drop = S_ISUID | (mode & S_IXGRP ? S_ISGID : 0);
	if (mode & drop) {
		set->mask |= MDS_SETATTR_MODE;
		set->mode = mode & ~drop;
	}
	return 0;
}

int mds_perm_setattr(const struct mds_cred *c, const struct mds_attr *a,
		     struct mds_setattr *set, const char *name)
{
	uint32_t gid;
	int err;

	if (set->mask & MDS_SETATTR_MODE) {
		err = mds_perm_owner(c, a, "change the mode of", name);
		if (err)
			return err;
		gid = set->mask & MDS_SETATTR_GID ? set->gid : a->gid;
		if (c->uid != 0 && !in_group(c, gid))
			set->mode &= ~(uint32_t)S_ISGID;
	}
	err = perm_chown(c, a, set, name);
	if (err)
		return err;
	if (set->mask & (MDS_SETATTR_ATIME | MDS_SETATTR_MTIME)) {
		err = mds_perm_owner(c, a, "set the times of", name);
		if (err)
			return err;
	}
	if ((set->mask & (MDS_SETATTR_ATIME_NOW | MDS_SETATTR_MTIME_NOW)) &&
	    c->uid != a->uid && !mds_may(c, a, MDS_MAY_WRITE))
		return denied("touch", name, MDS_MAY_WRITE, "file", name);
	if ((set->mask & MDS_SETATTR_SIZE) && !mds_may(c, a, MDS_MAY_WRITE))
		return denied("truncate", name, MDS_MAY_WRITE, "file", name);
	return 0;
}

int mds_perm_lock(const struct mds_cred *c, const struct mds_attr *a,
		  uint32_t type, const char *name)
{
	unsigned want = type == MDS_LOCK_WRITE ? MDS_MAY_WRITE : MDS_MAY_READ;

	if (type == MDS_LOCK_UNLOCK || mds_may(c, a, want))
		return 0;
	return denied(type == MDS_LOCK_WRITE ? "write-lock" : "read-lock",
		      name, want, "file", name);
}

uint32_t mds_perm_new_gid(const struct mds_cred *c, const struct mds_attr *dir,
			  uint32_t *mode, bool is_dir)
{
	if (!(dir->mode & S_ISGID))
		return c->gid;
	if (is_dir)
		*mode |= S_ISGID;
	return dir->gid;
}
