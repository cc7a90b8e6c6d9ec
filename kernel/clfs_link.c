// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_link.c -- symbolic links, hard links, fifos, sockets and device
 * nodes of the mount client.
 *
 * metad keeps them as inodes without data (protocol 1.6): a symlink's
 * target, a device's number.  The kernel follows symlinks (it asks
 * readlink) and makes the pipe, socket or device of a special inode
 * itself, never opening it here: a fifo on clf is a rendezvous of the
 * processes of one machine, as on NFS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "clf_ll.h"
#include "clfs_i.h"
#include "clfs_log.h"

/* As clfs_ops.c: what metad would refuse, with the right errno. */
static int name_check(struct clfs *fs, const char *name)
{
	if (strlen(name) > CLF_PROTO_NAME_MAX)
		return -ENAMETOOLONG;
	if (fs->read_only)
		return -EROFS;
	if (clfs_reserved_name(name))
		return -EPERM;
	return 0;
}

int clfs_symlink(struct clfs *fs, const struct clfs_caller *who,
		 uint64_t parent, const char *name, const char *target,
		 struct stat *st)
{
	struct clf_ll_owner owner = { who->uid, who->gid };
	struct clf_proto_attr a;
	int err = name_check(fs, name);

	if (!err)
		err = clf_ll_symlink(parent, name, target, &owner, &a);
	return err ? err : clfs_entry(fs, parent, &a, st, NULL);
}

int clfs_readlink(struct clfs *fs, uint64_t ino, char **target)
{
	char *t = NULL;
	int err;

	(void)fs;
	err = clf_ll_readlink(ino, &t, NULL);
	if (!err && !t)
		err = -EINVAL;	/* a device node */
	if (!err)
		*target = t;
	return err;
}

int clfs_link(struct clfs *fs, uint64_t ino, uint64_t new_parent,
	      const char *new_name, struct stat *st)
{
	struct clf_proto_attr a;
	int err = name_check(fs, new_name);

	if (!err)
		err = clf_ll_link(ino, new_parent, new_name, &a);
	return err ? err : clfs_entry(fs, new_parent, &a, st, NULL);
}

int clfs_mknod(struct clfs *fs, const struct clfs_caller *who,
	       uint64_t parent, const char *name, mode_t mode, dev_t rdev,
	       struct stat *st)
{
	struct clf_ll_owner owner = { who->uid, who->gid };
	struct clf_proto_attr a;
	uint64_t fh;
	int err;

	if (S_ISREG(mode)) {
		/* Create and close at once. */
		err = clfs_create(fs, who, parent, name, mode & 07777,
				  O_WRONLY | O_EXCL, st, &fh);
		if (!err)
			clfs_release(fs, fh);
		return err;
	}
	err = name_check(fs, name);
	if (err)
		return err;
	if (!S_ISFIFO(mode) && !S_ISSOCK(mode) && !S_ISCHR(mode) &&
	    !S_ISBLK(mode))
		return -EINVAL;
	err = clf_ll_mknod(parent, name, mode & (S_IFMT | 07777), rdev, &owner,
			   &a);
	return err ? err : clfs_entry(fs, parent, &a, st, NULL);
}
