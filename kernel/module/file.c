// SPDX-License-Identifier: GPL-2.0
/*
 * file.c -- clf regular files: open handles of the daemon, reads and
 * writes through the page cache (pages read one per request, dirty
 * pages written back in runs of up to CLF_UP_IO_MAX bytes), and
 * O_DIRECT or cache=none straight to the daemon.
 *
 * Writeback has no struct file: it uses a writable handle of the
 * inode's open files.  A mapping holds its file open, and each close
 * writes the file's pages back first (close-to-open), so dirty pages
 * always have one.  A handle of a daemon that died fails with -EIO.
 */
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/writeback.h>

#include "clf.h"

/* Open files in a cache of their own: one left over shows at rmmod. */
static struct kmem_cache *clf_file_cachep;

int clf_file_cache_init(void)
{
	clf_file_cachep = KMEM_CACHE(clf_file, SLAB_ACCOUNT);
	return clf_file_cachep ? 0 : -ENOMEM;
}

void clf_file_cache_exit(void)
{
	kmem_cache_destroy(clf_file_cachep);
}

static int clf_fh(struct clf_file *cf, u64 *fh)
{
	if (!cf || cf->gen != clf_dev_generation())
		return -EIO;
	*fh = cf->fh;
	return 0;
}

/* A handle of inode to read (file's, else any) or write with. */
static int clf_inode_fh(struct inode *inode, struct file *file,
			bool writable, u64 *fh)
{
	struct clf_inode_info *ci = CLF_I(inode);
	struct clf_file *cf;
	int err = -EIO;

	if (file && file->private_data &&
	    (!writable || ((struct clf_file *)file->private_data)->writable))
		return clf_fh(file->private_data, fh);
	spin_lock(&ci->lock);
	list_for_each_entry(cf, &ci->files, node) {
		if (writable && !cf->writable)
			continue;
		err = clf_fh(cf, fh);
		if (!err)
			break;
	}
	spin_unlock(&ci->lock);
	return err;
}

static int clf_open(struct inode *inode, struct file *file)
{
	struct clf_inode_info *ci = CLF_I(inode);
	bool writable = file->f_mode & FMODE_WRITE;
	struct clf_up_open op;
	struct clf_call c = {
		.out = &op,
		.out_max = sizeof(op),
	};
	struct clf_file *cf;
	int err, wseq;

	cf = kmem_cache_zalloc(clf_file_cachep, GFP_KERNEL);
	if (!cf)
		return -ENOMEM;
	cf->gen = clf_dev_generation();
	spin_lock(&ci->lock);
	if (ci->created && ci->created_gen == cf->gen) {
		/* Just created (read and write): attributes known. */
		ci->created = false;
		cf->fh = ci->created_fh;
		cf->writable = writable;
		list_add(&cf->node, &ci->files);
		spin_unlock(&ci->lock);
		file->private_data = cf;
		return 0;
	}
	ci->created = false;
	spin_unlock(&ci->lock);
	/*
	 * Read and write, when writing: writing part of a page reads the
	 * rest.  O_APPEND and O_TRUNC stay here (the page cache places
	 * appends; setattr truncates).
	 */
	clf_fill_in(&c.in, CLF_UP_OPEN, inode);
	c.in.flags = writable ? O_RDWR : O_RDONLY;
	wseq = atomic_read(&ci->wseq);
	err = clf_call(&c);
	if (err == -EACCES && writable) {
		c.in.flags = O_WRONLY;
		err = clf_call(&c);
	}
	if (!err && c.out_len != sizeof(op))
		err = -EIO;
	if (err) {
		kmem_cache_free(clf_file_cachep, cf);
		return err;
	}
	cf->fh = op.fh;
	cf->writable = writable;
	file->private_data = cf;
	if (op.changed) {
		/* Another client's bytes may be in the way of ours. */
		filemap_write_and_wait(inode->i_mapping);
		invalidate_inode_pages2(inode->i_mapping);
	}
	clf_update_since(inode, &op.attr, wseq);
	spin_lock(&ci->lock);
	list_add(&cf->node, &ci->files);
	spin_unlock(&ci->lock);
	return 0;
}

static int clf_fh_call(struct file *file, u32 op)
{
	struct clf_call c = { 0 };
	int err;

	clf_fill_in(&c.in, op, file_inode(file));
	err = clf_fh(file->private_data, &c.in.fh);
	return err ? err : clf_call(&c);
}

static int clf_release(struct inode *inode, struct file *file)
{
	struct clf_file *cf = file->private_data;
	struct clf_inode_info *ci = CLF_I(inode);

	/* Its pages went out at flush; a mapping's too, at munmap. */
	if (cf->writable)
		filemap_write_and_wait(inode->i_mapping);
	spin_lock(&ci->lock);
	list_del(&cf->node);
	spin_unlock(&ci->lock);
	/* The last close: the open file's own locks (flock, OFD) go. */
	clf_unlock_owner(file, file);
	clf_fh_call(file, CLF_UP_RELEASE);
	file->private_data = NULL;
	kmem_cache_free(clf_file_cachep, cf);
	return 0;
}

/* Each close: the pages out, then the size to metad. */
static int clf_flush(struct file *file, fl_owner_t id)
{
	struct inode *inode = file_inode(file);
	int err, err2;

	/* POSIX: any close of the file drops the process's locks on it. */
	clf_unlock_owner(file, id);
	if (!(file->f_mode & FMODE_WRITE))
		return 0;
	err = filemap_write_and_wait(inode->i_mapping);
	err2 = file_check_and_advance_wb_err(file);
	if (!err)
		err = err2;
	err2 = clf_fh_call(file, CLF_UP_FLUSH);
	/* The times the daemon keeps, not the page cache's. */
	CLF_I(inode)->attr_time = 0;
	return err ? err : err2;
}

static int clf_fsync(struct file *file, loff_t start, loff_t end,
		     int datasync)
{
	int err = file_write_and_wait_range(file, start, end);

	return err ? err : clf_fh_call(file, CLF_UP_FSYNC);
}

static bool clf_direct(struct kiocb *iocb)
{
	struct inode *inode = file_inode(iocb->ki_filp);

	return (iocb->ki_flags & IOCB_DIRECT) ||
	       CLF_SB(inode->i_sb)->cache_none;
}

/* One READ of at most CLF_UP_IO_MAX bytes into buf: the count. */
static ssize_t clf_read_fh(struct inode *inode, u64 fh, void *buf,
			   size_t len, loff_t pos)
{
	struct clf_call c = {
		.out = buf,
		.out_max = len,
	};
	int err;

	clf_fill_in(&c.in, CLF_UP_READ, inode);
	c.in.fh = fh;
	c.in.off = pos;
	c.in.arg = len;
	err = clf_call(&c);
	return err ? err : c.out_len;
}

static ssize_t clf_write_fh(struct inode *inode, u64 fh, const void *buf,
			    size_t len, loff_t pos)
{
	struct clf_call c = {
		.data1 = buf,
		.len1 = len,
	};
	int err;

	clf_fill_in(&c.in, CLF_UP_WRITE, inode);
	c.in.fh = fh;
	c.in.off = pos;
	/* Attributes asked for before now may not count these bytes. */
	atomic_inc(&CLF_I(inode)->wseq);
	err = clf_call(&c);
	if (err)
		return err;
	return c.out_arg == len ? len : -EIO;
}

static ssize_t clf_direct_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	size_t want = iov_iter_count(to);
	ssize_t done = 0, n = 0;
	u64 fh;
	void *buf;
	int err;

	err = clf_fh(file->private_data, &fh);
	if (err)
		return err;
	/*
	 * The cached pages of the range, and those past it: until they
	 * reach the daemon, its size may end the file before the range.
	 */
	err = filemap_write_and_wait_range(inode->i_mapping, iocb->ki_pos,
					   LLONG_MAX);
	if (err)
		return err;
	buf = kvmalloc(min_t(size_t, want, CLF_UP_IO_MAX), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (iov_iter_count(to)) {
		size_t len = min_t(size_t, iov_iter_count(to), CLF_UP_IO_MAX);

		n = clf_read_fh(inode, fh, buf, len, iocb->ki_pos);
		if (n <= 0)
			break;
		if (copy_to_iter(buf, n, to) != n) {
			n = -EFAULT;
			break;
		}
		iocb->ki_pos += n;
		done += n;
		if (n < len)
			break;
	}
	kvfree(buf);
	return done ? done : n;
}

static ssize_t clf_direct_write(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct address_space *mapping = inode->i_mapping;
	ssize_t done = 0, n;
	loff_t start, old_size;
	void *buf;
	u64 fh;

	n = clf_fh(file->private_data, &fh);
	if (n)
		return n;
	inode_lock(inode);
	n = generic_write_checks(iocb, from);
	if (n <= 0)
		goto unlock;
	start = iocb->ki_pos;
	old_size = i_size_read(inode);
	n = filemap_write_and_wait_range(mapping, start, start + n - 1);
	if (n)
		goto unlock;
	n = file_modified(file);
	if (n)
		goto unlock;
	buf = kvmalloc(min_t(size_t, iov_iter_count(from), CLF_UP_IO_MAX),
		       GFP_KERNEL);
	n = -ENOMEM;
	if (!buf)
		goto unlock;
	while (iov_iter_count(from)) {
		size_t len = min_t(size_t, iov_iter_count(from),
				   CLF_UP_IO_MAX);

		if (copy_from_iter(buf, len, from) != len) {
			n = -EFAULT;
			break;
		}
		n = clf_write_fh(inode, fh, buf, len, iocb->ki_pos);
		if (n < 0)
			break;
		iocb->ki_pos += n;
		done += n;
	}
	kvfree(buf);
	if (done) {
		clf_grow_size(inode, iocb->ki_pos);
		clf_zero_eof(inode, old_size, start);
		invalidate_inode_pages2_range(mapping, start >> PAGE_SHIFT,
					      (iocb->ki_pos - 1) >> PAGE_SHIFT);
	}
unlock:
	inode_unlock(inode);
	return done ? done : n;
}

static ssize_t clf_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	if (clf_direct(iocb))
		return clf_direct_read(iocb, to);
	return generic_file_read_iter(iocb, to);
}

static ssize_t clf_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	if (clf_direct(iocb))
		return clf_direct_write(iocb, from);
	return generic_file_write_iter(iocb, from);
}

const struct file_operations clf_file_fops = {
	.open		= clf_open,
	.release	= clf_release,
	.flush		= clf_flush,
	.fsync		= clf_fsync,
	.llseek		= generic_file_llseek,
	.read_iter	= clf_read_iter,
	.write_iter	= clf_write_iter,
	.mmap		= generic_file_mmap,
	.lock		= clf_lock,
	.flock		= clf_flock,
	.splice_read	= generic_file_splice_read,
	.splice_write	= iter_file_splice_write,
};

/* The page's bytes from the daemon; the rest past the end zeroed. */
static int clf_read_page(struct file *file, struct page *page)
{
	struct inode *inode = page->mapping->host;
	ssize_t n;
	void *p;
	u64 fh;
	int err;

	err = clf_inode_fh(inode, file, false, &fh);
	if (err)
		return err;
	p = kmap_local_page(page);
	n = clf_read_fh(inode, fh, p, PAGE_SIZE, page_offset(page));
	if (n >= 0 && n < PAGE_SIZE)
		memset(p + n, 0, PAGE_SIZE - n);
	kunmap_local(p);
	if (n < 0)
		return n;
	flush_dcache_page(page);
	SetPageUptodate(page);
	return 0;
}

static int clf_read_folio(struct file *file, struct folio *folio)
{
	int err = clf_read_page(file, &folio->page);

	folio_unlock(folio);
	return err;
}

/*
 * The readahead window in requests of up to CLF_UP_IO_MAX bytes, not a
 * request per page.  Pages not filled stay !uptodate: read_folio
 * tries them again when they are wanted.
 */
static void clf_readahead(struct readahead_control *rac)
{
	struct inode *inode = rac->mapping->host;
	struct folio *folio;
	size_t len, got = 0, used = 0;
	loff_t pos = readahead_pos(rac);
	ssize_t n = 0;
	char *buf;
	u64 fh;

	len = min_t(size_t, readahead_length(rac), CLF_UP_IO_MAX);
	if (clf_inode_fh(inode, rac->file, false, &fh))
		return;
	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return;
	n = clf_read_fh(inode, fh, buf, len, pos);
	if (n > 0)
		got = n;
	while (n >= 0 && used < len && (folio = readahead_folio(rac))) {
		size_t fl = folio_size(folio), have;
		void *p = kmap_local_folio(folio, 0);

		have = got > used ? min(got - used, fl) : 0;
		memcpy(p, buf + used, have);
		/* Past the end of file: zeros. */
		memset(p + have, 0, fl - have);
		kunmap_local(p);
		flush_dcache_folio(folio);
		folio_mark_uptodate(folio);
		folio_unlock(folio);
		used += fl;
	}
	kvfree(buf);
}

static int clf_write_begin(struct file *file, struct address_space *mapping,
			   loff_t pos, unsigned int len, struct page **pagep,
			   void **fsdata)
{
	struct page *page;
	int err;

	page = grab_cache_page_write_begin(mapping, pos >> PAGE_SHIFT);
	if (!page)
		return -ENOMEM;
	*pagep = page;
	if (PageUptodate(page) || len == PAGE_SIZE)
		return 0;
	if (page_offset(page) >= i_size_read(mapping->host)) {
		/* Nothing there yet. */
		zero_user(page, 0, PAGE_SIZE);
		SetPageUptodate(page);
		return 0;
	}
	err = clf_read_page(file, page);
	if (err) {
		unlock_page(page);
		put_page(page);
	}
	return err;
}

static int clf_write_end(struct file *file, struct address_space *mapping,
			 loff_t pos, unsigned int len, unsigned int copied,
			 struct page *page, void *fsdata)
{
	struct inode *inode = mapping->host;
	loff_t old = i_size_read(inode);

	if (!PageUptodate(page)) {
		/* A whole page, not all of it copied: try again. */
		if (copied < len) {
			copied = 0;
			goto out;
		}
		SetPageUptodate(page);
	}
	/* Dirty first: a refresh between the two keeps the size. */
	set_page_dirty(page);
	clf_grow_size(inode, pos + copied);
out:
	unlock_page(page);
	put_page(page);
	/* A hole from the old EOF to pos: the old EOF page's part zeroed. */
	if (copied && old < pos)
		clf_zero_eof(inode, old, pos);
	return copied;
}

#define CLF_WB_PAGES (CLF_UP_IO_MAX / PAGE_SIZE)
/* Writeback requests in flight, all mounts together. */
#define CLF_WB_INFLIGHT 16

static atomic_t clf_wb_inflight = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(clf_wb_wait);

/* A run of contiguous pages under writeback, their bytes in buf. */
struct clf_wb_run {
	struct clf_call c;
	struct inode *inode;
	bool counted;			/* in clf_wb_inflight */
	char *buf;
	size_t len;
	unsigned int n;
	struct page *pages[CLF_WB_PAGES];
};

/* One writepages call: the run being gathered. */
struct clf_wb {
	struct inode *inode;
	int fh_err;
	u64 fh;
	loff_t start;
	struct clf_wb_run *run;
};

/* The daemon answered (or cannot): the pages are written, or failed. */
static void clf_wb_done(struct clf_call *c, int err)
{
	struct clf_wb_run *run = container_of(c, struct clf_wb_run, c);
	unsigned int i;

	if (!err && c->out_arg != run->len)
		err = -EIO;
	for (i = 0; i < run->n; i++) {
		if (err) {
			SetPageError(run->pages[i]);
			mapping_set_error(run->inode->i_mapping, err);
		}
		end_page_writeback(run->pages[i]);
	}
	if (run->counted) {
		atomic_dec(&clf_wb_inflight);
		wake_up(&clf_wb_wait);
	}
	kvfree(run->buf);
	kfree(run);
}

/* Send the run gathered; its pages end when the reply comes. */
static void clf_wb_send(struct clf_wb *wb)
{
	struct clf_wb_run *run = wb->run;

	wb->run = NULL;
	if (wb->fh_err) {
		clf_wb_done(&run->c, wb->fh_err);
		return;
	}
	wait_event(clf_wb_wait, atomic_add_unless(&clf_wb_inflight, 1,
						  CLF_WB_INFLIGHT));
	run->counted = true;
	clf_fill_in(&run->c.in, CLF_UP_WRITE, run->inode);
	run->c.in.fh = wb->fh;
	run->c.in.off = wb->start;
	run->c.data1 = run->buf;
	run->c.len1 = run->len;
	/* Attributes asked for before now may not count these bytes. */
	atomic_inc(&CLF_I(run->inode)->wseq);
	clf_call_async(&run->c, clf_wb_done);
}

static struct clf_wb_run *clf_wb_run_new(struct inode *inode)
{
	struct clf_wb_run *run = kzalloc(sizeof(*run), GFP_NOFS);

	if (!run)
		return NULL;
	run->buf = kvmalloc(CLF_UP_IO_MAX, GFP_NOFS);
	if (!run->buf) {
		kfree(run);
		return NULL;
	}
	run->inode = inode;
	return run;
}

static int clf_wb_page(struct page *page, struct writeback_control *wbc,
		       void *data)
{
	struct clf_wb *wb = data;
	loff_t size = i_size_read(wb->inode), off = page_offset(page);
	struct clf_wb_run *run = wb->run;
	size_t len;

	if (off >= size) {
		/* Truncated away. */
		unlock_page(page);
		return 0;
	}
	len = min_t(loff_t, PAGE_SIZE, size - off);
	/*
	 * What a mapping stored past EOF is not the file's: zeroed on
	 * each writeback of the page, as block devices' file systems do.
	 */
	if (len < PAGE_SIZE)
		zero_user_segment(page, len, PAGE_SIZE);
	if (run && (off != wb->start + run->len || run->n == CLF_WB_PAGES ||
		    (run->len & (PAGE_SIZE - 1)))) {
		clf_wb_send(wb);
		run = NULL;
	}
	if (!run) {
		run = clf_wb_run_new(wb->inode);
		if (!run) {
			redirty_page_for_writepage(wbc, page);
			unlock_page(page);
			return -ENOMEM;
		}
		wb->run = run;
		wb->start = off;
	}
	memcpy_from_page(run->buf + run->len, page, 0, len);
	run->len += len;
	run->pages[run->n++] = page;
	set_page_writeback(page);
	unlock_page(page);
	return 0;
}

/*
 * Runs of up to CLF_UP_IO_MAX bytes, several in flight: the daemon
 * writes them on its threads at once.  A sync writeback waits for them
 * (on the pages' writeback bits), as for a block device.
 */
static int clf_writepages(struct address_space *mapping,
			  struct writeback_control *wbc)
{
	struct clf_wb wb = { .inode = mapping->host };
	int err;

	/*
	 * Without a handle the pages still leave, failed: kept dirty,
	 * they would be tried for ever.
	 */
	wb.fh_err = clf_inode_fh(wb.inode, NULL, true, &wb.fh);
	err = write_cache_pages(mapping, wbc, clf_wb_page, &wb);
	if (wb.run)
		clf_wb_send(&wb);
	return err;
}

const struct address_space_operations clf_aops = {
	.read_folio	= clf_read_folio,
	.readahead	= clf_readahead,
	.writepages	= clf_writepages,
	.dirty_folio	= filemap_dirty_folio,
	.write_begin	= clf_write_begin,
	.write_end	= clf_write_end,
	.direct_IO	= noop_direct_IO,
};
