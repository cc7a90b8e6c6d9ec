// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_io.c -- open handles of the mount client: create, open, read,
 * write, flush, fsync, release.
 *
 * Each handle is a CLF descriptor on the file, with the default view
 * (file bytes).  Data goes to the iods at once; the size the writes
 * reach is kept in the inode and told metad when a handle is flushed
 * (each close(2)), synced or released, or before a setattr, one metad
 * request per close rather than per write.  Reads use the inode's size,
 * so this client sees its own writes at once; lookup, getattr and open
 * derive the size from the subfiles (clf_ll_stat), so it sees other
 * clients' writes as soon as they returned, reported or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "clf_ll.h"
#include "clfs_i.h"
#include "clfs_log.h"

/* A new handle on ip (whose reference it takes) for descriptor fd. */
static int handle_new(struct clfs *fs, struct clfs_inode *ip, int fd,
		      int flags, uint64_t *fh)
{
	struct clfs_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->fd = fd;
	h->ip = ip;
	h->flags = flags;
	pthread_mutex_lock(&ip->lock);
	h->next = ip->handles;
	ip->handles = h;
	pthread_mutex_unlock(&ip->lock);
	pthread_mutex_lock(&fs->open_lock);
	fs->nopen++;
	pthread_mutex_unlock(&fs->open_lock);
	*fh = (uint64_t)(uintptr_t)h;
	return 0;
}

/*
 * The CLF descriptor's mode: a handle opened for writing may also read
 * (the kernel reads pages around partial writes through any handle).
 */
static int clf_flags(int flags)
{
	int acc = (flags & O_ACCMODE) == O_RDONLY ? O_RDONLY : O_RDWR;

	return acc | (flags & O_APPEND);
}

static bool writable(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

/* The layout new files in dir get: its default, or NULL. */
static int dir_layout(struct clfs *fs, uint64_t dir,
		      struct clf_layout_desc *desc)
{
	char *text = NULL;
	int err = clfs_dir_default(fs, dir, &text);

	if (err || !text)
		return err ? err : 0;
	err = clf_layout_text_parse(text, desc);
	if (!err) {
		err = clf_ll_check_layout(desc);
		if (err)
			clf_layout_desc_release(desc);
	}
	if (err)
		clfs_log(CLFS_LOG_WARNING,
			 "directory %llu: ignoring its default layout '%s': %s",
			 (unsigned long long)dir, text, CLF_Last_error());
	free(text);
	return err ? 0 : 1;
}

int clfs_create(struct clfs *fs, const struct clfs_caller *who,
		uint64_t parent, const char *name, mode_t mode, int flags,
		struct stat *st, uint64_t *fh)
{
	struct clf_ll_owner owner = { who->uid, who->gid };
	struct clf_layout_desc desc;
	struct clf_proto_attr a;
	struct clfs_inode *ip;
	int err, fd, has_layout;

	if (strlen(name) > CLF_PROTO_NAME_MAX)
		return -ENAMETOOLONG;
	if (fs->read_only)
		return -EROFS;
	if (clfs_reserved_name(name))
		return -EPERM;
	has_layout = dir_layout(fs, parent, &desc);
	if (has_layout < 0)
		return has_layout;
	fd = clf_ll_create(parent, name, mode, &owner, flags & O_EXCL,
			   has_layout ? &desc : NULL, clf_flags(flags), &a);
	if (has_layout)
		clf_layout_desc_release(&desc);
	if (fd < 0)
		return fd;
	/* An existing file (created meanwhile by someone else). */
	if ((flags & O_TRUNC) && writable(flags) && a.size > 0) {
		struct clf_proto_attr to = { .size = 0 };

		err = clf_ll_setattr(a.ino, CLF_PROTO_SETATTR_SIZE |
				     CLF_PROTO_SETATTR_MTIME_NOW, &to, &a);
		if (err)
			goto close_fd;
	}
	err = clfs_entry(fs, parent, &a, st, &ip);
	if (err)
		goto close_fd;
	err = handle_new(fs, ip, fd, flags, fh);
	if (!err)
		return 0;
	clfs_forget(fs, a.ino, 1);
	clfs_iput(&fs->itab, ip);
close_fd:
	CLF_close(fd);
	return err;
}

int clfs_open(struct clfs *fs, uint64_t ino, int flags, uint64_t *fh,
	      bool *changed)
{
	struct clf_proto_attr a;
	struct clfs_inode *ip;
	int64_t old_size, old_mtime;
	struct stat st;
	uint64_t seq;
	bool known;
	int err, fd;

	if (fs->read_only && (writable(flags) || (flags & O_TRUNC)))
		return -EROFS;
	ip = clfs_iget(&fs->itab, ino);
	if (!ip)
		return -ENOMEM;
	seq = clfs_write_seq(ip);
	fd = clf_ll_open(ino, clf_flags(flags), &a);
	if (fd < 0) {
		clfs_iput(&fs->itab, ip);
		return fd;
	}
	/* Close-to-open: what metad says now, unless we know more. */
	pthread_mutex_lock(&ip->lock);
	known = ip->have_attr;
	old_size = ip->given_size;
	old_mtime = ip->given_mtime;
	pthread_mutex_unlock(&ip->lock);
	clfs_attr_take_since(ip, &a, &st, seq);
	*changed = known && (st.st_size != old_size || a.mtime != old_mtime);
	if ((flags & O_TRUNC) && writable(flags) && st.st_size > 0) {
		struct stat want = { .st_size = 0 };

		err = clfs_setattr(fs, ino, &want,
				   CLFS_SET_SIZE | CLFS_SET_MTIME_NOW, &st);
		if (err)
			goto put_inode;
	}
	err = handle_new(fs, ip, fd, flags, fh);
	if (!err)
		return 0;
put_inode:
	clfs_iput(&fs->itab, ip);
	CLF_close(fd);
	return err;
}

ssize_t clfs_read(struct clfs *fs, uint64_t fh, void *buf, size_t size,
		  off_t off)
{
	struct clfs_handle *h = clfs_handle_of(fh);
	int64_t end;

	(void)fs;
	pthread_mutex_lock(&h->ip->lock);
	end = h->ip->size;
	pthread_mutex_unlock(&h->ip->lock);
	return clf_ll_pread(h->fd, buf, (int64_t)size, off, end);
}

/* After n bytes were written at off: the size and the change. */
static void wrote(struct clfs_inode *ip, off_t off, ssize_t n)
{
	if (n <= 0)
		return;
	if (off + n > ip->size) {
		ip->size = off + n;
		ip->size_dirty = true;
	}
	ip->mtime_dirty = true;
	ip->wseq++;
}

ssize_t clfs_write(struct clfs *fs, uint64_t fh, const void *buf,
		   size_t size, off_t off)
{
	struct clfs_handle *h = clfs_handle_of(fh);
	struct clfs_inode *ip = h->ip;
	ssize_t n;

	if (fs->read_only)
		return -EROFS;
	if (h->flags & O_APPEND) {
		/*
		 * At the end of file, whatever off (the end the kernel
		 * knows) says, in a range metad reserves: no append of
		 * another handle, mount or client overlaps it.  The handle
		 * has no page cache (clfs_ops.h, O_APPEND), so the kernel
		 * keeps no copy at off.
		 */
		int64_t at;

		n = clf_ll_append(h->fd, buf, (int64_t)size, &at);
		pthread_mutex_lock(&ip->lock);
		wrote(ip, at, n);
		pthread_mutex_unlock(&ip->lock);
		return n;
	}
	n = clf_ll_pwrite(h->fd, buf, (int64_t)size, off);
	pthread_mutex_lock(&ip->lock);
	wrote(ip, off, n);
	pthread_mutex_unlock(&ip->lock);
	return n;
}

int clfs_flush(struct clfs *fs, uint64_t fh)
{
	struct clfs_inode *ip = clfs_handle_of(fh)->ip;
	int err;

	(void)fs;
	pthread_mutex_lock(&ip->lock);
	err = clfs_report_locked(ip);
	pthread_mutex_unlock(&ip->lock);
	if (err)
		clfs_log(CLFS_LOG_ERR, "inode %llu: cannot report its size: %s",
			 (unsigned long long)ip->ino, CLF_Last_error());
	return err;
}

int clfs_fsync(struct clfs *fs, uint64_t fh)
{
	int err = clfs_flush(fs, fh);

	return err ? err : CLF_sync(clfs_handle_of(fh)->fd);
}

int clfs_release(struct clfs *fs, uint64_t fh)
{
	struct clfs_handle *h = clfs_handle_of(fh), **pp;
	struct clfs_inode *ip = h->ip;
	uint64_t gone_dir = 0;
	int err;

	pthread_mutex_lock(&ip->lock);
	err = clfs_report_locked(ip);
	for (pp = &ip->handles; *pp != h; pp = &(*pp)->next)
		;
	*pp = h->next;
	if (!ip->handles) {
		gone_dir = ip->unlinked_dir;
		ip->unlinked_dir = 0;
	}
	pthread_mutex_unlock(&ip->lock);
	if (err)
		clfs_log(CLFS_LOG_ERR, "inode %llu: cannot report its size: %s",
			 (unsigned long long)ip->ino, CLF_Last_error());
	CLF_close(h->fd);
	if (gone_dir) {
		char name[48];
		int e;

		clfs_unlinked_name(ip->ino, name);
		e = clf_ll_unlink(gone_dir, name);
		if (e)
			clfs_log(CLFS_LOG_ERR,
				 "cannot remove '%s' in directory %llu, unlinked while open: %s",
				 name, (unsigned long long)gone_dir,
				 CLF_Last_error());
	}
	pthread_mutex_lock(&fs->open_lock);
	fs->nopen--;
	pthread_mutex_unlock(&fs->open_lock);
	clfs_iput(&fs->itab, ip);
	free(h);
	return err;
}
