/* SPDX-License-Identifier: GPL-2.0 */
/*
 * clf.h -- the clf kernel client's own declarations.
 *
 * The module forwards VFS operations to a user-space daemon over
 * /dev/clf (dev.c; the messages are ../clf_upcall.h), which answers
 * them through libclf.  Inode numbers are clf's own: metad never
 * reuses one, so an inode outlives a daemon restart.  Open handles do
 * not: each carries the generation of the daemon that opened it.
 */
#ifndef _CLF_H
#define _CLF_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "clf_upcall.h"

#define CLF_SUPER_MAGIC		0x434c4653	/* "CLFS" */
#define CLF_ROOT_INO		1

/* Attributes and names are trusted this long (cache=normal). */
#define CLF_ATTR_TIMEOUT	HZ

struct clf_sb_info {
	bool cache_none;
};

struct clf_inode_info {
	struct inode vfs_inode;
	spinlock_t lock;		/* files, nlookup, size, attributes */
	struct list_head files;		/* open struct clf_file, for writeback */
	u64 nlookup;			/* daemon lookup references */
	unsigned long attr_time;	/* jiffies of the last attributes */
	atomic_t wseq;			/* writes the daemon has been sent */
	bool locked;			/* locks asked for: closes release */
	/* The handle create opened, for the open(2) that follows it. */
	bool created;
	u64 created_fh;
	u32 created_gen;
};

/* An open file: the daemon's handle. */
struct clf_file {
	struct list_head node;		/* in clf_inode_info.files */
	u64 fh;
	u32 gen;			/* the daemon generation of fh */
	bool writable;
};

static inline struct clf_inode_info *CLF_I(struct inode *inode)
{
	return container_of(inode, struct clf_inode_info, vfs_inode);
}

static inline struct clf_sb_info *CLF_SB(struct super_block *sb)
{
	return sb->s_fs_info;
}

/* dev.c: the upcall channel. */
struct clf_call {
	struct clf_up_in in;
	const void *data1;		/* appended after in */
	size_t len1;
	const void *data2;		/* then this */
	size_t len2;
	void *out;			/* the reply after clf_up_out */
	size_t out_max;
	size_t out_len;			/* what came */
	u64 out_arg;
};

int clf_call(struct clf_call *c);
/* A signal makes the daemon give up (CLF_UP_INTERRUPT): sleeping locks. */
int clf_call_interruptible(struct clf_call *c);
/* c and its data live until done(c, error) is called (maybe at once). */
typedef void (*clf_done_fn)(struct clf_call *c, int error);
void clf_call_async(struct clf_call *c, clf_done_fn done);
int clf_call_noreply(struct clf_up_in *in);
u32 clf_dev_generation(void);
int clf_dev_init(void);
void clf_dev_exit(void);

/* inode.c */
extern const struct inode_operations clf_file_iops;
extern const struct inode_operations clf_symlink_iops;
struct inode *clf_iget(struct super_block *sb, const struct clf_up_attr *a);
void clf_update_inode(struct inode *inode, const struct clf_up_attr *a);
void clf_update_since(struct inode *inode, const struct clf_up_attr *a,
		      int wseq);
void clf_grow_size(struct inode *inode, loff_t pos);
void clf_zero_eof(struct inode *inode, loff_t old, loff_t to);
void clf_drop_nlink(struct inode *inode);
int clf_refresh(struct inode *inode, bool force);
int clf_getattr(struct user_namespace *mnt_userns, const struct path *path,
		struct kstat *stat, u32 request_mask, unsigned int flags);
int clf_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
		struct iattr *attr);
void clf_fill_in(struct clf_up_in *in, u32 op, struct inode *inode);

/* dir.c */
extern const struct inode_operations clf_dir_iops;
extern const struct file_operations clf_dir_fops;
extern const struct dentry_operations clf_dentry_ops;

/* xattr.c */
extern const struct xattr_handler *clf_xattr_handlers[];
ssize_t clf_listxattr(struct dentry *dentry, char *list, size_t size);

/* lock.c */
int clf_lock(struct file *file, int cmd, struct file_lock *fl);
int clf_flock(struct file *file, int cmd, struct file_lock *fl);
void clf_unlock_owner(struct file *file, fl_owner_t owner);

/* file.c */
int clf_file_cache_init(void);
void clf_file_cache_exit(void);
extern const struct file_operations clf_file_fops;
extern const struct address_space_operations clf_aops;

#endif /* _CLF_H */
