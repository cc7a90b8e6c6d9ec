// SPDX-License-Identifier: GPL-2.0
/*
 * xattr.c -- extended attributes, the daemon's: clf has one,
 * user.clf.layout (a file's layout, a directory's default layout, as
 * text); the daemon refuses others.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xattr.h>

#include "clf.h"

/* "user." + name: the daemon wants the whole name. */
static int clf_xattr_name(const char *name, char *full)
{
	if (strlen(name) > XATTR_NAME_MAX - XATTR_USER_PREFIX_LEN)
		return -ERANGE;
	strcpy(full, XATTR_USER_PREFIX);
	strcat(full, name);
	return 0;
}

static int clf_xattr_get(const struct xattr_handler *handler,
			 struct dentry *dentry, struct inode *inode,
			 const char *name, void *buffer, size_t size)
{
	char full[XATTR_NAME_MAX + 1];
	struct clf_call c;
	int err = clf_xattr_name(name, full);

	if (err)
		return err;
	memset(&c, 0, sizeof(c));
	clf_fill_in(&c.in, CLF_UP_GETXATTR, inode);
	c.data1 = full;
	c.len1 = strlen(full) + 1;
	c.in.arg = min_t(size_t, size, CLF_UP_IO_MAX);
	c.out = buffer;
	c.out_max = c.in.arg;
	err = clf_call(&c);
	return err ? err : c.out_arg;
}

static int clf_xattr_set(const struct xattr_handler *handler,
			 struct user_namespace *mnt_userns,
			 struct dentry *dentry, struct inode *inode,
			 const char *name, const void *value, size_t size,
			 int flags)
{
	char full[XATTR_NAME_MAX + 1];
	struct clf_call c;
	int err = clf_xattr_name(name, full);

	if (err)
		return err;
	memset(&c, 0, sizeof(c));
	clf_fill_in(&c.in, value ? CLF_UP_SETXATTR : CLF_UP_REMOVEXATTR,
		    inode);
	c.data1 = full;
	c.len1 = strlen(full) + 1;
	c.data2 = value;
	c.len2 = value ? size : 0;
	c.in.flags = flags;
	err = clf_call(&c);
	if (!err)
		CLF_I(inode)->attr_time = 0;
	return err;
}

ssize_t clf_listxattr(struct dentry *dentry, char *list, size_t size)
{
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	clf_fill_in(&c.in, CLF_UP_LISTXATTR, d_inode(dentry));
	c.in.arg = min_t(size_t, size, CLF_UP_IO_MAX);
	c.out = list;
	c.out_max = c.in.arg;
	err = clf_call(&c);
	return err ? err : c.out_arg;
}

static const struct xattr_handler clf_user_xattr_handler = {
	.prefix	= XATTR_USER_PREFIX,
	.get	= clf_xattr_get,
	.set	= clf_xattr_set,
};

const struct xattr_handler *clf_xattr_handlers[] = {
	&clf_user_xattr_handler,
	NULL
};
