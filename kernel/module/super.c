// SPDX-License-Identifier: GPL-2.0
/*
 * super.c -- the clf file system type: mount (the fs_context API),
 * statfs, inode allocation and eviction, unmount, and the module.
 *
 *   mount -t clf -o cache=none SOURCE DIR
 *
 * SOURCE is told to the daemon, which refuses one that is not its
 * instance.  Each mount asks the daemon for the root; each unmount
 * tells it how many mounts are left (it exits at none).
 */
#include <linux/atomic.h>
#include <linux/backing-dev.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <linux/string.h>

#include "clf.h"

static struct kmem_cache *clf_inode_cachep;
static atomic_t clf_mounts = ATOMIC_INIT(0);

static struct inode *clf_alloc_inode(struct super_block *sb)
{
	struct clf_inode_info *ci;

	ci = alloc_inode_sb(sb, clf_inode_cachep, GFP_KERNEL);
	if (!ci)
		return NULL;
	spin_lock_init(&ci->lock);
	INIT_LIST_HEAD(&ci->files);
	ci->nlookup = 0;
	ci->attr_time = 0;
	atomic_set(&ci->wseq, 0);
	ci->created = false;
	return &ci->vfs_inode;
}

static void clf_free_inode(struct inode *inode)
{
	kmem_cache_free(clf_inode_cachep, CLF_I(inode));
}

/* The daemon may forget what the kernel no longer holds. */
static void clf_evict_inode(struct inode *inode)
{
	struct clf_inode_info *ci = CLF_I(inode);
	struct clf_up_in in;

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (ci->created && ci->created_gen == clf_dev_generation()) {
		/* Created, never opened. */
		clf_fill_in(&in, CLF_UP_RELEASE, inode);
		in.fh = ci->created_fh;
		clf_call_noreply(&in);
	}
	if (ci->nlookup) {
		clf_fill_in(&in, CLF_UP_FORGET, inode);
		in.arg = ci->nlookup;
		clf_call_noreply(&in);
	}
}

static int clf_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct clf_up_statfs sf;
	struct clf_call c = {
		.out = &sf,
		.out_max = sizeof(sf),
	};
	int err;

	clf_fill_in(&c.in, CLF_UP_STATFS, d_inode(dentry));
	err = clf_call(&c);
	if (err)
		return err;
	if (c.out_len != sizeof(sf))
		return -EIO;
	buf->f_type = CLF_SUPER_MAGIC;
	buf->f_bsize = sf.bsize;
	buf->f_frsize = sf.bsize;
	buf->f_blocks = sf.blocks;
	buf->f_bfree = sf.bfree;
	buf->f_bavail = sf.bavail;
	buf->f_files = sf.files;
	buf->f_ffree = sf.ffree;
	buf->f_namelen = sf.namelen;
	return 0;
}

static const struct super_operations clf_sops = {
	.alloc_inode	= clf_alloc_inode,
	.free_inode	= clf_free_inode,
	.evict_inode	= clf_evict_inode,
	.statfs		= clf_statfs,
};

enum { OPT_CACHE };

static const struct constant_table clf_cache_modes[] = {
	{ "normal", 0 },
	{ "none", 1 },
	{}
};

static const struct fs_parameter_spec clf_fs_params[] = {
	fsparam_enum("cache", OPT_CACHE, clf_cache_modes),
	{}
};

static int clf_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct clf_sb_info *sbi = fc->s_fs_info;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, clf_fs_params, param, &result);
	if (opt < 0)
		return opt;
	if (opt == OPT_CACHE)
		sbi->cache_none = result.uint_32;
	return 0;
}

/* The daemon's root for fc->source. */
static int clf_mount_root(struct fs_context *fc, struct clf_up_attr *root)
{
	const char *source = fc->source ? fc->source : "";
	struct clf_call c = {
		.data1 = source,
		.len1 = strlen(source) + 1,
		.out = root,
		.out_max = sizeof(*root),
	};
	int err;

	memset(&c.in, 0, sizeof(c.in));
	c.in.op = CLF_UP_MOUNT;
	c.in.ino = CLF_ROOT_INO;
	err = clf_call(&c);
	if (err == -EIO)
		return invalfc(fc, "clf: no daemon serves /dev/clf");
	if (err)
		return err;
	return c.out_len == sizeof(*root) ? 0 : -EIO;
}

static int clf_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct clf_up_attr root;
	struct inode *inode;
	int err;

	err = clf_mount_root(fc, &root);
	if (err)
		return err;
	/* A bdi of its own: writeback, and readahead of daemon size. */
	err = super_setup_bdi(sb);
	if (err)
		return err;
	sb->s_bdi->ra_pages = CLF_UP_IO_MAX / PAGE_SIZE;
	sb->s_bdi->io_pages = CLF_UP_IO_MAX / PAGE_SIZE;
	sb->s_magic = CLF_SUPER_MAGIC;
	sb->s_op = &clf_sops;
	sb->s_d_op = &clf_dentry_ops;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_time_gran = 1;
	sb->s_xattr = clf_xattr_handlers;
	inode = clf_iget(sb, &root);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	sb->s_root = d_make_root(inode);
	if (!sb->s_root)
		return -ENOMEM;
	atomic_inc(&clf_mounts);
	return 0;
}

static int clf_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, clf_fill_super);
}

static void clf_free_fc(struct fs_context *fc)
{
	kfree(fc->s_fs_info);
}

static const struct fs_context_operations clf_context_ops = {
	.parse_param	= clf_parse_param,
	.get_tree	= clf_get_tree,
	.free		= clf_free_fc,
};

static int clf_init_fs_context(struct fs_context *fc)
{
	struct clf_sb_info *sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);

	if (!sbi)
		return -ENOMEM;
	fc->s_fs_info = sbi;
	fc->ops = &clf_context_ops;
	return 0;
}

static void clf_kill_sb(struct super_block *sb)
{
	bool mounted = sb->s_root;
	struct clf_up_in in;

	kill_anon_super(sb);
	kfree(sb->s_fs_info);
	if (!mounted)
		return;
	memset(&in, 0, sizeof(in));
	in.op = CLF_UP_UMOUNT;
	in.arg = atomic_dec_return(&clf_mounts);
	clf_call_noreply(&in);
}

static struct file_system_type clf_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "clf",
	.init_fs_context	= clf_init_fs_context,
	.parameters		= clf_fs_params,
	.kill_sb		= clf_kill_sb,
};
MODULE_ALIAS_FS("clf");

static void clf_inode_once(void *p)
{
	struct clf_inode_info *ci = p;

	inode_init_once(&ci->vfs_inode);
}

static int __init clf_init(void)
{
	int err;

	clf_inode_cachep = kmem_cache_create("clf_inode_cache",
					     sizeof(struct clf_inode_info), 0,
					     SLAB_RECLAIM_ACCOUNT |
					     SLAB_MEM_SPREAD | SLAB_ACCOUNT,
					     clf_inode_once);
	if (!clf_inode_cachep)
		return -ENOMEM;
	err = clf_file_cache_init();
	if (err)
		goto free_cache;
	err = clf_dev_init();
	if (err)
		goto free_files;
	err = register_filesystem(&clf_fs_type);
	if (err)
		goto dev_exit;
	return 0;
dev_exit:
	clf_dev_exit();
free_files:
	clf_file_cache_exit();
free_cache:
	kmem_cache_destroy(clf_inode_cachep);
	return err;
}

static void __exit clf_exit(void)
{
	unregister_filesystem(&clf_fs_type);
	clf_dev_exit();
	clf_file_cache_exit();
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	kmem_cache_destroy(clf_inode_cachep);
}

module_init(clf_init);
module_exit(clf_exit);

MODULE_DESCRIPTION("clf parallel file system client (upcalls to clf daemon)");
MODULE_LICENSE("GPL");
