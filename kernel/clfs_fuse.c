// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_fuse.c -- the libfuse low-level adapter: each request is handed
 * to clfs_ops.h and its result turned into a FUSE reply.  Nothing here
 * knows clf; nothing in clfs_ops knows FUSE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "clfs_fuse.h"
#include "clfs_log.h"
#include "clf_ll.h"

#define CLFS_MAX_IO (1u << 20)	/* max_read, max_write, readahead */

/* renameat2(2) flags, the kernel's ABI (linux/fs.h). */
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/*
 * The file system of req.  Every handler starts with it, so it is also
 * where the handling thread takes on the caller: metad checks the
 * requests made for req as that user (clf_ll_act_as).
 */
static struct clfs_fuse *cfs(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	clf_ll_act_as(c->uid, c->gid);
	return fuse_req_userdata(req);
}

static struct clfs_caller caller(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	return (struct clfs_caller){ c->uid, c->gid };
}

/*
 * Reply err (a negative errno, or 0).  Failures that are not the usual
 * answers to a question are logged with what libclf said.
 */
static void reply_err(fuse_req_t req, const char *op, uint64_t ino, int err)
{
	switch (-err) {
	case 0:
	case ENOENT:
	case ESTALE:		/* the inode is gone: clfs_stale */
	case EEXIST:
	case ENOTEMPTY:
	case ENODATA:
	case ERANGE:
	case ENOTDIR:
	case EISDIR:
	case EOPNOTSUPP:
	case ENOSYS:
	case EPERM:
	case EACCES:
	case EROFS:
	case ENAMETOOLONG:
	case EBUSY:		/* the calls that refuse log why */
	case EINVAL:
	case E2BIG:
	case EAGAIN:		/* a lock in the way */
	case EDEADLK:
	case EINTR:
	case EMLINK:
	case ELOOP:
		clfs_log(CLFS_LOG_DEBUG, "%s %llu: %s", op,
			 (unsigned long long)ino, strerror(-err));
		break;
	default:
		clfs_log(CLFS_LOG_WARNING, "%s %llu: %s (%s)", op,
			 (unsigned long long)ino, strerror(-err),
			 CLF_Last_error());
	}
	fuse_reply_err(req, -err);
}

static void reply_entry(fuse_req_t req, const char *op, uint64_t parent,
			const struct stat *st, int err)
{
	struct fuse_entry_param e;

	if (err) {
		reply_err(req, op, parent, err);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = st->st_ino;
	e.attr = *st;
	e.attr_timeout = cfs(req)->timeout;
	e.entry_timeout = cfs(req)->timeout;
	clfs_log(CLFS_LOG_DEBUG, "%s %llu: inode %llu", op,
		 (unsigned long long)parent, (unsigned long long)e.ino);
	fuse_reply_entry(req, &e);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_write = CLFS_MAX_IO;
	conn->max_read = CLFS_MAX_IO;
	conn->max_readahead = CLFS_MAX_IO;
	/* Plain copies through our buffers; no splicing. */
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE);
	clfs_log(CLFS_LOG_INFO,
		 "mounted (max_write %u, max_read %u, fcntl locks %s, flock %s)",
		 conn->max_write, conn->max_read,
		 conn->want & FUSE_CAP_POSIX_LOCKS ? "on metad" : "local",
		 conn->want & FUSE_CAP_FLOCK_LOCKS ? "on metad" : "local");
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct stat st;
	int err = clfs_lookup(cfs(req)->fs, parent, name, &st);

	reply_entry(req, "lookup", parent, &st, err);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	clfs_forget(cfs(req)->fs, ino, nlookup);
	fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		clfs_forget(cfs(req)->fs, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;
	int err = clfs_getattr(cfs(req)->fs, ino, &st);

	(void)fi;
	if (err)
		reply_err(req, "getattr", ino, clfs_stale(err));
	else
		fuse_reply_attr(req, &st, cfs(req)->timeout);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	static const struct {
		int fuse;
		unsigned clfs;
	} bits[] = {
		{ FUSE_SET_ATTR_MODE, CLFS_SET_MODE },
		{ FUSE_SET_ATTR_UID, CLFS_SET_UID },
		{ FUSE_SET_ATTR_GID, CLFS_SET_GID },
		{ FUSE_SET_ATTR_SIZE, CLFS_SET_SIZE },
		{ FUSE_SET_ATTR_ATIME, CLFS_SET_ATIME },
		{ FUSE_SET_ATTR_MTIME, CLFS_SET_MTIME },
		{ FUSE_SET_ATTR_ATIME_NOW, CLFS_SET_ATIME_NOW },
		{ FUSE_SET_ATTR_MTIME_NOW, CLFS_SET_MTIME_NOW },
	};
	unsigned set = 0;
	struct stat st;
	int err;

	(void)fi;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (to_set & bits[i].fuse)
			set |= bits[i].clfs;
	/* ctime alone (FUSE_SET_ATTR_CTIME) is metad's business. */
	err = set ? clfs_setattr(cfs(req)->fs, ino, attr, set, &st)
		  : clfs_getattr(cfs(req)->fs, ino, &st);
	if (err)
		reply_err(req, "setattr", ino, clfs_stale(err));
	else
		fuse_reply_attr(req, &st, cfs(req)->timeout);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct clfs_caller who = caller(req);
	struct stat st;
	int err = clfs_mkdir(cfs(req)->fs, &who, parent, name, mode, &st);

	reply_entry(req, "mkdir", parent, &st, err);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	struct clfs_caller who = caller(req);
	struct stat st;
	int err = clfs_mknod(cfs(req)->fs, &who, parent, name, mode, rdev, &st);

	reply_entry(req, "mknod", parent, &st, err);
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	struct clfs_caller who = caller(req);
	struct stat st;
	int err = clfs_symlink(cfs(req)->fs, &who, parent, name, link, &st);

	reply_entry(req, "symlink", parent, &st, err);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char *target = NULL;
	int err = clfs_readlink(cfs(req)->fs, ino, &target);

	if (err)
		reply_err(req, "readlink", ino, clfs_stale(err));
	else
		fuse_reply_readlink(req, target);
	free(target);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct stat st;
	int err = clfs_link(cfs(req)->fs, ino, newparent, newname, &st);

	reply_entry(req, "link", newparent, &st, err);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_err(req, "unlink", parent, clfs_unlink(cfs(req)->fs, parent, name));
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	reply_err(req, "rmdir", parent, clfs_rmdir(cfs(req)->fs, parent, name));
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	unsigned f = 0;

	if (flags & RENAME_NOREPLACE)
		f |= CLFS_RENAME_NOREPLACE;
	if (flags & ~RENAME_NOREPLACE) {
		/* RENAME_EXCHANGE, RENAME_WHITEOUT */
		reply_err(req, "rename", parent, -EINVAL);
		return;
	}
	reply_err(req, "rename", parent,
		  clfs_rename(cfs(req)->fs, parent, name, newparent, newname,
			      f));
}

static void set_open_flags(fuse_req_t req, struct fuse_file_info *fi)
{
	/*
	 * O_APPEND writes land where metad reserves, not at the offset the
	 * kernel chose: through the page cache the kernel would keep the
	 * bytes at its offset.  Such handles bypass it.
	 */
	fi->direct_io = cfs(req)->direct_io || (fi->flags & O_APPEND);
	/* Close-to-open: pages of an earlier open may be stale. */
	fi->keep_cache = 0;
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	bool changed = false;
	uint64_t fh;
	int err = clfs_open(cfs(req)->fs, ino, fi->flags, &fh, &changed);

	if (err) {
		reply_err(req, "open", ino, clfs_stale(err));
		return;
	}
	/*
	 * Another client changed the file: the kernel must forget the
	 * attributes it trusts for a while yet (close-to-open, as NFS).
	 * Only attributes (offset < 0): no page is locked, no deadlock.
	 */
	if (changed && cfs(req)->se) {
		int e = fuse_lowlevel_notify_inval_inode(cfs(req)->se, ino,
							 -1, 0);

		clfs_log(CLFS_LOG_DEBUG, "open %llu: changed elsewhere (%s)",
			 (unsigned long long)ino, strerror(-e));
	}
	fi->fh = fh;
	set_open_flags(req, fi);
	if (fuse_reply_open(req, fi))
		clfs_release(cfs(req)->fs, fh);	/* the opener is gone */
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct clfs_caller who = caller(req);
	uint64_t fh;
	struct stat st;
	int err = clfs_create(cfs(req)->fs, &who, parent, name, mode & 07777,
			      fi->flags, &st, &fh);

	if (err) {
		reply_err(req, "create", parent, err);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = st.st_ino;
	e.attr = st;
	e.attr_timeout = cfs(req)->timeout;
	e.entry_timeout = cfs(req)->timeout;
	fi->fh = fh;
	set_open_flags(req, fi);
	if (fuse_reply_create(req, &e, fi))
		clfs_release(cfs(req)->fs, fh);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	char *buf = malloc(size ? size : 1);
	ssize_t n;

	if (!buf) {
		reply_err(req, "read", ino, -ENOMEM);
		return;
	}
	n = clfs_read(cfs(req)->fs, fi->fh, buf, size, off);
	if (n < 0)
		reply_err(req, "read", ino, (int)n);
	else
		fuse_reply_buf(req, buf, n);
	free(buf);
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n = clfs_write(cfs(req)->fs, fi->fh, buf, size, off);

	if (n < 0)
		reply_err(req, "write", ino, (int)n);
	else
		fuse_reply_write(req, n);
}

/*
 * Each close(2).  The kernel leaves fcntl locks to a file system that
 * has them: close must release the closing process's (POSIX), and
 * lock_owner names it.
 */
static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int err = clfs_flush(cfs(req)->fs, fi->fh);

	/* A failure is logged; the close itself went well. */
	(void)clfs_unlock_owner(cfs(req)->fs, fi->fh, fi->lock_owner);
	reply_err(req, "flush", ino, err);
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)datasync;
	reply_err(req, "fsync", ino, clfs_fsync(cfs(req)->fs, fi->fh));
}

static void ll_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	/* The last close of an open file that holds a flock(2) lock. */
	if (fi->flock_release)
		(void)clfs_unlock_owner(cfs(req)->fs, fi->fh, fi->lock_owner);
	reply_err(req, "release", ino, clfs_release(cfs(req)->fs, fi->fh));
}

/* Between the bounded waits of a blocking lock. */
static bool interrupted(void *req)
{
	return fuse_req_interrupted(req);
}

static void ll_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock)
{
	int err = clfs_getlk(cfs(req)->fs, fi->fh, fi->lock_owner, lock);

	if (err)
		reply_err(req, "getlk", ino, err);
	else
		fuse_reply_lock(req, lock);
}

/*
 * A sleeping setlk keeps this worker thread until granted; the session
 * loop has others for the rest of the mount (clfs_main.c).
 */
static void ll_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock, int sleep)
{
	reply_err(req, "setlk", ino,
		  clfs_setlk(cfs(req)->fs, fi->fh, fi->lock_owner, lock,
			     sleep != 0, interrupted, req));
}

static void ll_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     int op)
{
	reply_err(req, "flock", ino,
		  clfs_flock(cfs(req)->fs, fi->fh, fi->lock_owner, op,
			     interrupted, req));
}

/* A readdir reply under construction. */
struct dirbuf {
	fuse_req_t req;
	char *buf;
	size_t size, used;
};

static int fill(void *arg, const char *name, uint64_t ino, mode_t mode,
		uint64_t next_off)
{
	struct dirbuf *d = arg;
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t n = fuse_add_direntry(d->req, d->buf + d->used,
				     d->size - d->used, name, &st,
				     (off_t)next_off);

	if (n > d->size - d->used)
		return 1;
	d->used += n;
	return 0;
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct dirbuf d = { req, malloc(size ? size : 1), size, 0 };
	int err;

	(void)fi;
	if (!d.buf) {
		reply_err(req, "readdir", ino, -ENOMEM);
		return;
	}
	err = clfs_readdir(cfs(req)->fs, ino, (uint64_t)off, fill, &d);
	/* What fits is an answer even if the rest failed. */
	if (err && !d.used)
		reply_err(req, "readdir", ino, err);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static int fill_plus(void *arg, const char *name, const struct stat *st,
		     bool counted, uint64_t next_off)
{
	struct dirbuf *d = arg;
	struct fuse_entry_param e;
	size_t n;

	memset(&e, 0, sizeof(e));
	e.attr = *st;
	/* "." and "..": no inode for the kernel to count or cache. */
	if (counted) {
		e.ino = st->st_ino;
		e.attr_timeout = cfs(d->req)->timeout;
		e.entry_timeout = cfs(d->req)->timeout;
	}
	n = fuse_add_direntry_plus(d->req, d->buf + d->used, d->size - d->used,
				   name, &e, (off_t)next_off);
	if (n > d->size - d->used)
		return 1;
	d->used += n;
	return 0;
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct dirbuf d = { req, malloc(size ? size : 1), size, 0 };
	int err;

	(void)fi;
	if (!d.buf) {
		reply_err(req, "readdirplus", ino, -ENOMEM);
		return;
	}
	err = clfs_readdirplus(cfs(req)->fs, ino, (uint64_t)off, size,
			       fill_plus, &d);
	/* What fits is an answer even if the rest failed. */
	if (err && !d.used)
		reply_err(req, "readdirplus", ino, err);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	int err = clfs_statfs(cfs(req)->fs, &sv);

	if (err)
		reply_err(req, "statfs", ino, err);
	else
		fuse_reply_statfs(req, &sv);
}

static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	struct clfs_caller who = caller(req);

	reply_err(req, "setxattr", ino,
		  clfs_setxattr(cfs(req)->fs, &who, ino, name, value, size,
				flags));
}

/* getxattr and listxattr answer alike: a size, or the bytes. */
static void reply_xattr(fuse_req_t req, const char *op, uint64_t ino,
			size_t size, ssize_t n, const void *buf)
{
	if (n < 0)
		reply_err(req, op, ino, (int)n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t n;

	if (size && !buf) {
		reply_err(req, "getxattr", ino, -ENOMEM);
		return;
	}
	n = clfs_getxattr(cfs(req)->fs, ino, name, buf, size);
	reply_xattr(req, "getxattr", ino, size, n, buf);
	free(buf);
}

static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t n;

	if (size && !buf) {
		reply_err(req, "listxattr", ino, -ENOMEM);
		return;
	}
	n = clfs_listxattr(cfs(req)->fs, ino, buf, size);
	reply_xattr(req, "listxattr", ino, size, n, buf);
	free(buf);
}

static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	reply_err(req, "removexattr", ino,
		  clfs_removexattr(cfs(req)->fs, ino, name));
}

const struct fuse_lowlevel_ops clfs_fuse_ops = {
	.init = ll_init,
	.lookup = ll_lookup,
	.forget = ll_forget,
	.forget_multi = ll_forget_multi,
	.getattr = ll_getattr,
	.setattr = ll_setattr,
	.mknod = ll_mknod,
	.symlink = ll_symlink,
	.readlink = ll_readlink,
	.link = ll_link,
	.mkdir = ll_mkdir,
	.unlink = ll_unlink,
	.rmdir = ll_rmdir,
	.rename = ll_rename,
	.open = ll_open,
	.create = ll_create,
	.read = ll_read,
	.write = ll_write,
	.flush = ll_flush,
	.fsync = ll_fsync,
	.release = ll_release,
	.getlk = ll_getlk,
	.setlk = ll_setlk,
	.flock = ll_flock,
	.readdir = ll_readdir,
	.readdirplus = ll_readdirplus,
	.statfs = ll_statfs,
	.setxattr = ll_setxattr,
	.getxattr = ll_getxattr,
	.listxattr = ll_listxattr,
	.removexattr = ll_removexattr,
};
