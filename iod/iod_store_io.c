// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_store_io.c -- moving bytes between memory and subfiles.
 *
 * Every transfer goes to the end: the loops retry after EINTR and continue
 * after a short transfer, so callers see either the whole count, a short
 * count at end of file (reads only), or a negative errno.  Each system call
 * issued is counted, which is how the tests prove that coalescing happens.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "iod_store_i.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* The errno of an injected fault (and disarm it), or 0. */
static int injected(struct iod_store *st)
{
	return atomic_load(&st->fail_next) ? atomic_exchange(&st->fail_next, 0)
					   : 0;
}

void iod_store_fail_next_io(struct iod_store *st, int err)
{
	atomic_store(&st->fail_next, err);
}

void iod_store_limit_io(struct iod_store *st, size_t max_bytes)
{
	atomic_store(&st->limit_io, max_bytes);
}

void iod_store_stats(struct iod_store *st, struct iod_store_stats *out)
{
	out->read_calls = atomic_load(&st->read_calls);
	out->write_calls = atomic_load(&st->write_calls);
	out->bytes_read = atomic_load(&st->bytes_read);
	out->bytes_written = atomic_load(&st->bytes_written);
	out->opens = atomic_load(&st->opens);
	out->open_now = atomic_load(&st->open_now);
}

static int check_range(struct iod_subfile *sf, const char *what, int64_t off,
		       size_t len)
{
	if (off >= 0 && len <= (uint64_t)(INT64_MAX - off))
		return 0;
	return clf_fail(EINVAL,
			"iod: cannot %s subfile %" PRIu32 " of file 0x%" PRIx64 ": bad range of %zu bytes at offset %" PRId64,
			what, sf->index, sf->file, len, off);
}

static int io_error(struct iod_subfile *sf, const char *what, int err)
{
	return clf_fail(err,
			"iod: cannot %s subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
			what, sf->index, sf->file, strerror(err));
}

/*
 * One system call: reads (write == 0) or writes iovcnt iovecs at off.
 * Returns what the call returned; errno is set on -1.
 */
static ssize_t one_call(struct iod_subfile *sf, int write,
			const struct iovec *iov, int iovcnt, int64_t off)
{
	struct iod_store *st = sf->st;
	int fault = injected(st);
	ssize_t n;

	atomic_fetch_add(write ? &st->write_calls : &st->read_calls, 1);
	if (fault) {
		errno = fault;
		return -1;
	}
	if (iovcnt == 1)
		n = write ? pwrite(sf->fd, iov->iov_base, iov->iov_len, off)
			  : pread(sf->fd, iov->iov_base, iov->iov_len, off);
	else
		n = write ? pwritev(sf->fd, iov, iovcnt, off)
			  : preadv(sf->fd, iov, iovcnt, off);
	if (n > 0)
		atomic_fetch_add(write ? &st->bytes_written : &st->bytes_read,
				 (uint64_t)n);
	return n;
}

/*
 * The limit_io fault hook: shorten iov[first..) to limit bytes by cutting
 * the iovec where the limit falls (returned, with its length in *saved
 * for the caller to restore, or -1) and setting *cnt.
 */
static int clip(struct iovec *iov, int first, int iovcnt, size_t limit,
		int *cnt, size_t *saved)
{
	for (int i = first; i < iovcnt; i++) {
		if (iov[i].iov_len >= limit) {
			*saved = iov[i].iov_len;
			iov[i].iov_len = limit;
			*cnt = i - first + 1;
			return i;
		}
		limit -= iov[i].iov_len;
	}
	return -1;
}

/* Consume n bytes from iov[first..); the new first iovec. */
static int step_over(struct iovec *iov, int first, int iovcnt, size_t n)
{
	while (n > 0) {
		size_t step = n < iov[first].iov_len ? n : iov[first].iov_len;

		iov[first].iov_base = (char *)iov[first].iov_base + step;
		iov[first].iov_len -= step;
		n -= step;
		if (iov[first].iov_len == 0 && first < iovcnt - 1)
			first++;
	}
	return first;
}

/*
 * Transfer iov[0..iovcnt) at off to the end (or to end of file, reading).
 * The iovecs are copied, so the caller's array is left as it was.
 */
static ssize_t transfer(struct iod_subfile *sf, int write,
			const struct iovec *iov_in, int iovcnt, int64_t off)
{
	const char *what = write ? "write" : "read";
	size_t limit = atomic_load(&sf->st->limit_io);
	struct iovec iov[IOV_MAX];
	size_t total = 0, done = 0;
	int first = 0, err;

	if (iovcnt < 0 || iovcnt > IOV_MAX)
		return clf_fail(EINVAL,
				"iod: cannot %s subfile %" PRIu32 " of file 0x%" PRIx64 ": %d iovecs",
				what, sf->index, sf->file, iovcnt);
	for (int i = 0; i < iovcnt; i++) {
		if (iov_in[i].iov_len > SIZE_MAX - total)
			return check_range(sf, what, off, SIZE_MAX);
		total += iov_in[i].iov_len;
		iov[i] = iov_in[i];
	}
	err = check_range(sf, what, off, total);
	if (err)
		return err;
	while (done < total) {
		int cnt, clipped = -1;
		size_t saved = 0;
		ssize_t n;

		while (iov[first].iov_len == 0)
			first++;
		cnt = iovcnt - first;
		if (limit)
			clipped = clip(iov, first, iovcnt, limit, &cnt, &saved);
		n = one_call(sf, write, iov + first, cnt, off + (int64_t)done);
		if (clipped >= 0)
			iov[clipped].iov_len = saved;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return io_error(sf, what, errno);
		}
		if (n == 0) {
			if (!write)
				break;	/* end of file */
			return io_error(sf, what, EIO);
		}
		done += (size_t)n;
		first = step_over(iov, first, iovcnt, (size_t)n);
	}
	return (ssize_t)done;
}

ssize_t iod_subfile_pread(struct iod_subfile *sf, void *buf, size_t len,
			  int64_t off)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return transfer(sf, 0, &iov, 1, off);
}

ssize_t iod_subfile_pwrite(struct iod_subfile *sf, const void *buf,
			   size_t len, int64_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return transfer(sf, 1, &iov, 1, off);
}

ssize_t iod_subfile_preadv(struct iod_subfile *sf, const struct iovec *iov,
			   int iovcnt, int64_t off)
{
	return transfer(sf, 0, iov, iovcnt, off);
}

ssize_t iod_subfile_pwritev(struct iod_subfile *sf, const struct iovec *iov,
			    int iovcnt, int64_t off)
{
	return transfer(sf, 1, iov, iovcnt, off);
}

bool iod_store_direct_ok(struct iod_store *st)
{
	return atomic_load(&st->limit_io) == 0;
}

ssize_t iod_subfile_write_from(struct iod_subfile *sf, iod_source_fn source,
			       void *arg, size_t len, int64_t off,
			       bool *source_failed)
{
	struct iod_store *st = sf->st;
	int fault = injected(st), file_err, err;
	size_t written;

	*source_failed = false;
	err = check_range(sf, "write", off, len);
	if (err)
		return err;
	atomic_fetch_add(&st->write_calls, 1);
	/* An injected fault still has the source give up its bytes. */
	err = source(arg, fault ? -1 : sf->fd, off, len, &file_err, &written);
	if (written)
		atomic_fetch_add(&st->bytes_written, (uint64_t)written);
	if (err) {
		*source_failed = true;
		return err;
	}
	if (fault)
		return io_error(sf, "write", fault);
	if (file_err)
		return io_error(sf, "write", -file_err);
	return (ssize_t)len;
}

ssize_t iod_store_read(struct iod_store *st, uint64_t file, uint32_t index,
		       int64_t off, void *buf, size_t len)
{
	struct iod_subfile *sf;
	ssize_t n;

	if (off < 0 || len > (uint64_t)(INT64_MAX - off))
		return clf_fail(EINVAL,
				"iod: cannot read subfile %" PRIu32 " of file 0x%" PRIx64 ": bad range of %zu bytes at offset %" PRId64,
				index, file, len, off);
	if (len == 0)
		return 0;
	n = iod_subfile_get(st, file, index, 0, &sf);
	if (n == -ENOENT)
		return 0;	/* never written: empty */
	if (n)
		return n;
	n = iod_subfile_pread(sf, buf, len, off);
	iod_subfile_put(sf);
	return n;
}

ssize_t iod_store_write(struct iod_store *st, uint64_t file, uint32_t index,
			int64_t off, const void *buf, size_t len)
{
	struct iod_subfile *sf;
	struct iod_range r;
	ssize_t n;

	if (off < 0 || len > (uint64_t)(INT64_MAX - off))
		return clf_fail(EINVAL,
				"iod: cannot write subfile %" PRIu32 " of file 0x%" PRIx64 ": bad range of %zu bytes at offset %" PRId64,
				index, file, len, off);
	/* 0 bytes: the subfile is there now (clf fsck --repair). */
	if (len == 0)
		return iod_store_create(st, file, index);
	n = iod_subfile_get(st, file, index, IOD_CREATE, &sf);
	if (n)
		return n;
	iod_rangelock_lock(&sf->lock, &r, off, off + (int64_t)len);
	n = iod_subfile_pwrite(sf, buf, len, off);
	iod_rangelock_unlock(&sf->lock, &r);
	iod_subfile_put(sf);
	return n;
}
