// SPDX-License-Identifier: GPL-2.0
/*
 * inode.c -- clf inodes: made from the daemon's attributes, refreshed
 * when older than CLF_ATTR_TIMEOUT (always with cache=none), changed
 * by setattr.
 *
 * The size: the daemon's, unless this kernel has written pages that
 * the daemon has not seen yet (dirty or under writeback), or sent it
 * writes after it answered (wseq moved): those only grow it.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "clf.h"

void clf_fill_in(struct clf_up_in *in, u32 op, struct inode *inode)
{
	memset(in, 0, sizeof(*in));
	in->op = op;
	in->ino = inode ? inode->i_ino : 0;
	in->uid = from_kuid(&init_user_ns, current_fsuid());
	in->gid = from_kgid(&init_user_ns, current_fsgid());
}

static bool has_local_writes(struct inode *inode)
{
	struct address_space *m = inode->i_mapping;

	return mapping_tagged(m, PAGECACHE_TAG_DIRTY) ||
	       mapping_tagged(m, PAGECACHE_TAG_WRITEBACK);
}

/*
 * a, asked for when the inode's wseq was wseq.  Under ci->lock, as the
 * writers' size changes are (clf_grow_size): a size read here and
 * written back must not undo one made in between.
 */
void clf_update_since(struct inode *inode, const struct clf_up_attr *a,
		      int wseq)
{
	struct clf_inode_info *ci = CLF_I(inode);
	loff_t size = a->size;

	spin_lock(&ci->lock);
	inode->i_mode = (inode->i_mode & S_IFMT) | (a->mode & ~S_IFMT);
	i_uid_write(inode, a->uid);
	i_gid_write(inode, a->gid);
	set_nlink(inode, a->nlink);
	inode->i_atime.tv_sec = a->atime;
	inode->i_atime.tv_nsec = a->atime_ns;
	inode->i_mtime.tv_sec = a->mtime;
	inode->i_mtime.tv_nsec = a->mtime_ns;
	inode->i_ctime.tv_sec = a->ctime;
	inode->i_ctime.tv_nsec = a->ctime_ns;
	inode->i_blocks = a->blocks;
	if (S_ISREG(inode->i_mode)) {
		/*
		 * Sent a write or a truncation since it was asked: the
		 * answer may predate it, ours does not.  Pages it has
		 * not seen yet only grow the file.
		 */
		if (atomic_read(&ci->wseq) != wseq ||
		    (has_local_writes(inode) && size < i_size_read(inode)))
			size = i_size_read(inode);
	}
	i_size_write(inode, size);
	ci->attr_time = jiffies;
	spin_unlock(&ci->lock);
}

/* Written up to pos here: the size, if that is past it. */
void clf_grow_size(struct inode *inode, loff_t pos)
{
	struct clf_inode_info *ci = CLF_I(inode);

	spin_lock(&ci->lock);
	if (pos > i_size_read(inode))
		i_size_write(inode, pos);
	spin_unlock(&ci->lock);
}

/*
 * The size grew from old past to: what a mapping stored past the old
 * EOF in its page (bytes POSIX never writes to the file) is now inside
 * the file, where before offset to it must read as zeros, as it does
 * at the daemon.  Called after the new size is set: the page's
 * mappings are write-protected first, under its lock, so a store after
 * the zeroing faults and waits, and then lands inside the file (later
 * kernels' pagecache_isize_extended() does the same).
 */
void clf_zero_eof(struct inode *inode, loff_t old, loff_t to)
{
	struct folio *folio;
	size_t from, end;

	if (!offset_in_page(old) || to <= old)
		return;
	folio = filemap_lock_folio(inode->i_mapping, old >> PAGE_SHIFT);
	if (IS_ERR_OR_NULL(folio))
		return;
	if (folio_mkclean(folio))
		folio_mark_dirty(folio);
	from = old - folio_pos(folio);
	end = min_t(loff_t, to - folio_pos(folio), folio_size(folio));
	if (folio_test_uptodate(folio))
		folio_zero_range(folio, from, end - from);
	folio_unlock(folio);
	folio_put(folio);
}

/* The name of inode is gone: one link less (attributes may have it). */
void clf_drop_nlink(struct inode *inode)
{
	struct clf_inode_info *ci = CLF_I(inode);

	spin_lock(&ci->lock);
	if (S_ISDIR(inode->i_mode))
		clear_nlink(inode);
	else if (inode->i_nlink)
		drop_nlink(inode);
	ci->attr_time = 0;
	spin_unlock(&ci->lock);
}

void clf_update_inode(struct inode *inode, const struct clf_up_attr *a)
{
	clf_update_since(inode, a, atomic_read(&CLF_I(inode)->wseq));
}

static void clf_init_inode(struct inode *inode, const struct clf_up_attr *a)
{
	inode->i_mode = a->mode;
	switch (a->mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &clf_file_iops;
		inode->i_fop = &clf_file_fops;
		inode->i_mapping->a_ops = &clf_aops;
		break;
	case S_IFDIR:
		inode->i_op = &clf_dir_iops;
		inode->i_fop = &clf_dir_fops;
		break;
	case S_IFLNK:
		inode->i_op = &clf_symlink_iops;
		inode_nohighmem(inode);
		break;
	default:
		inode->i_op = &clf_file_iops;
		init_special_inode(inode, a->mode,
				   new_decode_dev(a->rdev));
		break;
	}
}

/*
 * The inode of a, one more daemon lookup reference on it (every
 * attribute the daemon gives with a name is one).
 */
struct inode *clf_iget(struct super_block *sb, const struct clf_up_attr *a)
{
	struct inode *inode = iget_locked(sb, a->ino);
	struct clf_inode_info *ci;

	if (!inode)
		return ERR_PTR(-ENOMEM);
	ci = CLF_I(inode);
	if ((inode->i_state & I_NEW)) {
		clf_init_inode(inode, a);
		clf_update_inode(inode, a);
		unlock_new_inode(inode);
	} else if ((inode->i_mode & S_IFMT) == (a->mode & S_IFMT)) {
		clf_update_inode(inode, a);
	} else {
		/* metad never reuses a number: the daemon is confused. */
		iput(inode);
		return ERR_PTR(-EIO);
	}
	spin_lock(&ci->lock);
	ci->nlookup++;
	spin_unlock(&ci->lock);
	return inode;
}

/* Ask the daemon for the attributes if they are old (or force). */
int clf_refresh(struct inode *inode, bool force)
{
	struct clf_up_attr a;
	struct clf_call c = {
		.out = &a,
		.out_max = sizeof(a),
	};
	int err, wseq;

	if (!force && !CLF_SB(inode->i_sb)->cache_none &&
	    time_before(jiffies, CLF_I(inode)->attr_time + CLF_ATTR_TIMEOUT))
		return 0;
	clf_fill_in(&c.in, CLF_UP_GETATTR, inode);
	wseq = atomic_read(&CLF_I(inode)->wseq);
	err = clf_call(&c);
	if (err)
		return err;
	if (c.out_len != sizeof(a))
		return -EIO;
	clf_update_since(inode, &a, wseq);
	return 0;
}

int clf_getattr(struct user_namespace *mnt_userns, const struct path *path,
		struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct inode *inode = d_inode(path->dentry);
	int err;

	err = clf_refresh(inode, flags & AT_STATX_FORCE_SYNC);
	if (err)
		return err;
	generic_fillattr(mnt_userns, inode, stat);
	stat->blksize = CLF_UP_IO_MAX;
	/* Written here, not yet counted there. */
	stat->blocks = max_t(u64, stat->blocks,
			     DIV_ROUND_UP(stat->size, 512));
	return 0;
}

static void set_time(__s64 *sec, __u32 *nsec, struct timespec64 ts)
{
	*sec = ts.tv_sec;
	*nsec = ts.tv_nsec;
}

int clf_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
		struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct clf_up_setattr sa = { 0 };
	struct clf_up_attr a;
	struct clf_call c = {
		.data1 = &sa,
		.len1 = sizeof(sa),
		.out = &a,
		.out_max = sizeof(a),
	};
	unsigned int valid = attr->ia_valid;
	int err;

	err = setattr_prepare(mnt_userns, dentry, attr);
	if (err)
		return err;
	if (valid & ATTR_MODE) {
		sa.valid |= CLF_UP_SET_MODE;
		sa.mode = attr->ia_mode;
	}
	if (valid & ATTR_UID) {
		sa.valid |= CLF_UP_SET_UID;
		sa.uid = from_kuid(&init_user_ns, attr->ia_uid);
	}
	if (valid & ATTR_GID) {
		sa.valid |= CLF_UP_SET_GID;
		sa.gid = from_kgid(&init_user_ns, attr->ia_gid);
	}
	if (valid & ATTR_ATIME) {
		if (valid & ATTR_ATIME_SET) {
			sa.valid |= CLF_UP_SET_ATIME;
			set_time(&sa.atime, &sa.atime_ns, attr->ia_atime);
		} else {
			sa.valid |= CLF_UP_SET_ATIME_NOW;
		}
	}
	if (valid & ATTR_MTIME) {
		if (valid & ATTR_MTIME_SET) {
			sa.valid |= CLF_UP_SET_MTIME;
			set_time(&sa.mtime, &sa.mtime_ns, attr->ia_mtime);
		} else {
			sa.valid |= CLF_UP_SET_MTIME_NOW;
		}
	}
	if (valid & ATTR_SIZE) {
		if (!S_ISREG(inode->i_mode))
			return -EINVAL;
		/*
		 * A shrink: pages written before it go out first, lest
		 * their bytes past the new size land after it.  Growing
		 * leaves them dirty: all are below the new size, where a
		 * later writeback puts them all the same, and what a
		 * mapping stored past the old end is zeroed below.
		 */
		if (attr->ia_size < i_size_read(inode)) {
			err = filemap_write_and_wait(inode->i_mapping);
			if (err)
				return err;
		}
		/* Sizes asked for before now are older than this one. */
		atomic_inc(&CLF_I(inode)->wseq);
		sa.valid |= CLF_UP_SET_SIZE;
		sa.size = attr->ia_size;
		if (!(valid & ATTR_MTIME))
			sa.valid |= CLF_UP_SET_MTIME_NOW;
	}
	if (!sa.valid)
		return 0;
	clf_fill_in(&c.in, CLF_UP_SETATTR, inode);
	err = clf_call(&c);
	if (err)
		return err;
	if (c.out_len != sizeof(a))
		return -EIO;
	if (valid & ATTR_SIZE) {
		loff_t old = i_size_read(inode);

		spin_lock(&CLF_I(inode)->lock);
		i_size_write(inode, attr->ia_size);
		spin_unlock(&CLF_I(inode)->lock);
		/* truncate_setsize(), the size set under ci->lock. */
		if (attr->ia_size > old) {
			pagecache_isize_extended(inode, old, attr->ia_size);
			clf_zero_eof(inode, old, attr->ia_size);
		}
		truncate_pagecache(inode, attr->ia_size);
	}
	clf_update_inode(inode, &a);
	return 0;
}

static void clf_put_link(void *target)
{
	kfree(target);
}

static const char *clf_get_link(struct dentry *dentry, struct inode *inode,
				struct delayed_call *done)
{
	struct clf_call c = { 0 };
	char *target;
	int err;

	if (!dentry)
		return ERR_PTR(-ECHILD);
	target = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!target)
		return ERR_PTR(-ENOMEM);
	clf_fill_in(&c.in, CLF_UP_READLINK, inode);
	c.out = target;
	c.out_max = PATH_MAX - 1;
	err = clf_call(&c);
	if (err) {
		kfree(target);
		return ERR_PTR(err);
	}
	target[c.out_len] = '\0';
	set_delayed_call(done, clf_put_link, target);
	return target;
}

const struct inode_operations clf_file_iops = {
	.getattr	= clf_getattr,
	.setattr	= clf_setattr,
	.listxattr	= clf_listxattr,
};

const struct inode_operations clf_symlink_iops = {
	.get_link	= clf_get_link,
	.getattr	= clf_getattr,
};
