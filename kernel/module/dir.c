// SPDX-License-Identifier: GPL-2.0
/*
 * dir.c -- clf directories: names (lookup, create, mkdir, symlink,
 * link, unlink, rmdir, rename), their listing, and the revalidation of
 * cached names: a dentry older than CLF_ATTR_TIMEOUT (any, with
 * cache=none, and any in a walk the VFS does again with LOOKUP_REVAL
 * after an ESTALE) is looked up again, and dropped if the name is gone
 * or names another inode now.  The daemon answers ESTALE for an inode
 * that is gone, so a name another client replaced within the timeout
 * costs an open one more walk, not an error.  A negative dentry is never trusted: other
 * clients (libclf, MPI-IO, other nodes) create names without this
 * kernel knowing, and a program that opens a file another one has just
 * created must find it (the FUSE client does not cache misses either).
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "clf.h"

static void clf_set_time(struct dentry *dentry)
{
	dentry->d_time = jiffies;
}

static bool clf_name_fresh(struct dentry *dentry)
{
	return d_really_is_positive(dentry) &&
	       !CLF_SB(dentry->d_sb)->cache_none &&
	       time_before(jiffies, dentry->d_time + CLF_ATTR_TIMEOUT);
}

/*
 * A call with a name (dentry names end in NUL: sent with it) and
 * attributes back; data2 is free for a second string.
 */
static int clf_name_call(struct clf_call *c, u32 op, struct inode *dir,
			 const struct qstr *name, struct clf_up_attr *a)
{
	if (name->len > CLF_UP_NAME_MAX)
		return -ENAMETOOLONG;
	clf_fill_in(&c->in, op, dir);
	c->data1 = name->name;
	c->len1 = name->len + 1;
	c->out = a;
	c->out_max = a ? sizeof(*a) : 0;
	return 0;
}

static int clf_do_lookup(struct inode *dir, const struct qstr *name,
			 struct clf_up_attr *a)
{
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, CLF_UP_LOOKUP, dir, name, a);
	if (!err)
		err = clf_call(&c);
	if (!err && c.out_len != sizeof(*a))
		err = -EIO;
	return err;
}

static struct dentry *clf_lookup(struct inode *dir, struct dentry *dentry,
				 unsigned int flags)
{
	struct inode *inode = NULL;
	struct clf_up_attr a;
	int err;

	err = clf_do_lookup(dir, &dentry->d_name, &a);
	if (err && err != -ENOENT)
		return ERR_PTR(err);
	if (!err) {
		inode = clf_iget(dir->i_sb, &a);
		if (IS_ERR(inode))
			return ERR_CAST(inode);
	}
	clf_set_time(dentry);
	return d_splice_alias(inode, dentry);
}

static int clf_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct inode *inode, *dir;
	struct clf_up_attr a;
	struct dentry *parent;
	int err;

	/*
	 * LOOKUP_REVAL: the walk is done again because the daemon said an
	 * inode on it is gone (ESTALE), maybe within the time a name is
	 * trusted: each name is asked about.
	 */
	if (!(flags & LOOKUP_REVAL) && clf_name_fresh(dentry))
		return 1;
	if (flags & LOOKUP_RCU)
		return -ECHILD;
	parent = dget_parent(dentry);
	dir = d_inode(parent);
	inode = d_inode(dentry);
	err = clf_do_lookup(dir, &dentry->d_name, &a);
	dput(parent);
	if (err == -ENOENT) {
		if (inode)
			return 0;
		/* Still no such name: the negative dentry stands. */
		clf_set_time(dentry);
		return 1;
	}
	if (err)
		return err;
	if (!inode || inode->i_ino != a.ino ||
	    (inode->i_mode & S_IFMT) != (a.mode & S_IFMT)) {
		/* The reference the lookup took: for the new inode. */
		struct clf_up_in in;

		clf_fill_in(&in, CLF_UP_FORGET, NULL);
		in.ino = a.ino;
		in.arg = 1;
		clf_call_noreply(&in);
		return 0;
	}
	spin_lock(&CLF_I(inode)->lock);
	CLF_I(inode)->nlookup++;
	spin_unlock(&CLF_I(inode)->lock);
	clf_update_inode(inode, &a);
	clf_set_time(dentry);
	return 1;
}

const struct dentry_operations clf_dentry_ops = {
	.d_revalidate	= clf_d_revalidate,
};

/* A new name's attributes a: its inode in dentry. */
static int clf_instantiate(struct inode *dir, struct dentry *dentry,
			   const struct clf_up_attr *a)
{
	struct inode *inode = clf_iget(dir->i_sb, a);

	if (IS_ERR(inode))
		return PTR_ERR(inode);
	d_instantiate(dentry, inode);
	clf_set_time(dentry);
	/* The directory's size, times and link count moved. */
	CLF_I(dir)->attr_time = 0;
	return 0;
}

static int clf_make(struct inode *dir, struct dentry *dentry, u32 op,
		    umode_t mode)
{
	struct clf_up_attr a;
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, op, dir, &dentry->d_name, &a);
	if (err)
		return err;
	c.in.mode = mode;
	err = clf_call(&c);
	if (!err && c.out_len != sizeof(a))
		err = -EIO;
	return err ? err : clf_instantiate(dir, dentry, &a);
}

/*
 * The daemon creates and opens: the handle waits in the inode for the
 * open(2) that follows (clf_open), saving it a request.
 */
static int clf_create(struct user_namespace *mnt_userns, struct inode *dir,
		      struct dentry *dentry, umode_t mode, bool excl)
{
	struct clf_inode_info *ci;
	struct clf_up_open op;
	struct clf_call c;
	u32 gen = clf_dev_generation();
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, CLF_UP_CREATE, dir, &dentry->d_name, NULL);
	if (err)
		return err;
	c.in.mode = mode | S_IFREG;
	c.out = &op;
	c.out_max = sizeof(op);
	err = clf_call(&c);
	if (!err && c.out_len != sizeof(op))
		err = -EIO;
	if (err)
		return err;
	err = clf_instantiate(dir, dentry, &op.attr);
	if (err)
		return err;
	ci = CLF_I(d_inode(dentry));
	spin_lock(&ci->lock);
	if (!ci->created) {
		ci->created = true;
		ci->created_fh = op.fh;
		ci->created_gen = gen;
		op.fh = 0;
	}
	spin_unlock(&ci->lock);
	if (op.fh) {
		struct clf_up_in in;

		clf_fill_in(&in, CLF_UP_RELEASE, d_inode(dentry));
		in.fh = op.fh;
		clf_call_noreply(&in);
	}
	return 0;
}

static int clf_mknod(struct user_namespace *mnt_userns, struct inode *dir,
		     struct dentry *dentry, umode_t mode, dev_t rdev)
{
	struct clf_up_attr a;
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, CLF_UP_MKNOD, dir, &dentry->d_name, &a);
	if (err)
		return err;
	c.in.mode = mode;
	c.in.arg = new_encode_dev(rdev);
	err = clf_call(&c);
	if (!err && c.out_len != sizeof(a))
		err = -EIO;
	return err ? err : clf_instantiate(dir, dentry, &a);
}

static int clf_mkdir(struct user_namespace *mnt_userns, struct inode *dir,
		     struct dentry *dentry, umode_t mode)
{
	return clf_make(dir, dentry, CLF_UP_MKDIR, mode | S_IFDIR);
}

static int clf_symlink(struct user_namespace *mnt_userns, struct inode *dir,
		       struct dentry *dentry, const char *target)
{
	struct clf_up_attr a;
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, CLF_UP_SYMLINK, dir, &dentry->d_name, &a);
	if (err)
		return err;
	c.data2 = target;
	c.len2 = strlen(target) + 1;
	err = clf_call(&c);
	if (!err && c.out_len != sizeof(a))
		err = -EIO;
	return err ? err : clf_instantiate(dir, dentry, &a);
}

static int clf_link(struct dentry *old, struct inode *dir,
		    struct dentry *dentry)
{
	struct inode *inode = d_inode(old);
	struct clf_up_attr a;
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, CLF_UP_LINK, inode, &dentry->d_name, &a);
	if (err)
		return err;
	c.in.arg = dir->i_ino;
	err = clf_call(&c);
	if (!err && c.out_len != sizeof(a))
		err = -EIO;
	if (err)
		return err;
	CLF_I(inode)->attr_time = 0;
	return clf_instantiate(dir, dentry, &a);
}

static int clf_remove(struct inode *dir, struct dentry *dentry, u32 op)
{
	struct inode *inode = d_inode(dentry);
	struct clf_call c;
	int err;

	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, op, dir, &dentry->d_name, NULL);
	if (!err)
		err = clf_call(&c);
	if (err)
		return err;
	clf_drop_nlink(inode);
	CLF_I(dir)->attr_time = 0;
	return 0;
}

static int clf_unlink(struct inode *dir, struct dentry *dentry)
{
	return clf_remove(dir, dentry, CLF_UP_UNLINK);
}

static int clf_rmdir(struct inode *dir, struct dentry *dentry)
{
	return clf_remove(dir, dentry, CLF_UP_RMDIR);
}

static int clf_rename(struct user_namespace *mnt_userns,
		      struct inode *old_dir, struct dentry *old,
		      struct inode *new_dir, struct dentry *new,
		      unsigned int flags)
{
	struct clf_call c;
	int err;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	err = clf_name_call(&c, CLF_UP_RENAME, old_dir, &old->d_name, NULL);
	if (err)
		return err;
	if (new->d_name.len > CLF_UP_NAME_MAX)
		return -ENAMETOOLONG;
	c.data2 = new->d_name.name;
	c.len2 = new->d_name.len + 1;
	c.in.arg = new_dir->i_ino;
	c.in.flags = flags;
	err = clf_call(&c);
	if (err)
		return err;
	if (d_really_is_positive(new))
		clf_drop_nlink(d_inode(new));
	CLF_I(old_dir)->attr_time = 0;
	CLF_I(new_dir)->attr_time = 0;
	CLF_I(d_inode(old))->attr_time = 0;
	return 0;
}

/* Entries from ctx->pos (the daemon's offsets) until ctx is full. */
static int clf_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct clf_call c;
	size_t used;
	char *buf;
	int err = 0;

	buf = kmalloc(CLF_UP_READDIR_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		memset(&c, 0, sizeof(c));
		clf_fill_in(&c.in, CLF_UP_READDIR, dir);
		c.in.off = ctx->pos;
		c.out = buf;
		c.out_max = CLF_UP_READDIR_MAX;
		err = clf_call(&c);
		if (err)
			break;
		for (used = 0; used + sizeof(struct clf_up_dirent) <= c.out_len;) {
			struct clf_up_dirent *de = (void *)(buf + used);
			size_t size = CLF_UP_DIRENT_SIZE(de->namelen);

			if (used + size > c.out_len) {
				err = -EIO;
				goto out;
			}
			if (!dir_emit(ctx, de->name, de->namelen, de->ino,
				      de->type >> 12))
				goto out;
			ctx->pos = de->next_off;
			used += size;
		}
		if (c.out_arg || !c.out_len)
			break;
	}
out:
	kfree(buf);
	return err;
}

const struct inode_operations clf_dir_iops = {
	.lookup		= clf_lookup,
	.create		= clf_create,
	.mknod		= clf_mknod,
	.mkdir		= clf_mkdir,
	.symlink	= clf_symlink,
	.link		= clf_link,
	.unlink		= clf_unlink,
	.rmdir		= clf_rmdir,
	.rename		= clf_rename,
	.getattr	= clf_getattr,
	.setattr	= clf_setattr,
	.listxattr	= clf_listxattr,
};

/* A close drops the process's fcntl locks on the directory (POSIX). */
static int clf_dir_flush(struct file *file, fl_owner_t id)
{
	clf_unlock_owner(file, id);
	return 0;
}

/* The last close: the open directory's own (flock, OFD) locks go. */
static int clf_dir_release(struct inode *inode, struct file *file)
{
	clf_unlock_owner(file, file);
	return 0;
}

const struct file_operations clf_dir_fops = {
	.llseek		= generic_file_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= clf_iterate,
	.fsync		= noop_fsync,
	.flush		= clf_dir_flush,
	.release	= clf_dir_release,
	.lock		= clf_lock,
	.flock		= clf_flock,
};
