/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_store.h -- the subfiles of one iod, as local files.
 *
 * A subfile is named by (file id, subfile index) and lives at
 * <dir>/<xx>/<16 hex digits of the file id>.<index in decimal>, where xx
 * is the low byte of the file id in hex: 256 fan-out directories keep any
 * one directory small, and consecutive file ids spread over all of them.
 * Subfiles come into being at their first write or truncation; a subfile
 * that does not exist reads as empty (length 0), so a new clf file needs
 * nothing from its iods until data arrives.
 *
 * Open descriptors are kept in a bounded LRU cache of reference-counted
 * handles.  A handle in use is never closed, so a request always finishes
 * on the descriptor it started with; when more subfiles are in use than
 * the bound, the extra ones are closed as soon as they are released.
 *
 * Everything here is thread-safe: the daemon may serve requests from
 * several threads (that choice belongs to the daemon loop, not to this
 * file).  Metadata (the cache, open, unlink) is serialised by one store
 * mutex; data transfers run unlocked and in parallel.
 *
 * Errors: negative errno values; disk errors (-ENOSPC, -EIO, ...) are
 * returned unchanged, with a message for CLF_Last_error() naming the
 * subfile, e.g. "iod: cannot write subfile 3 of file 0x12: No space left
 * on device".
 *
 * Writes and the range lock: every modification of subfile bytes must hold
 * the subfile's range lock (iod_rangelock.h) over those bytes, because
 * data sieving rewrites whole spans.  The by-name calls below
 * (iod_store_write, iod_store_truncate) take it themselves; the raw handle
 * calls (iod_subfile_pwrite, iod_subfile_pwritev) do not, and are for code
 * that already holds it.
 */
#ifndef IOD_STORE_H
#define IOD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "hash.h"
#include "iod_rangelock.h"

struct iod_store;

/* Descriptors the cache keeps open, unless told otherwise. */
#define IOD_STORE_MAX_OPEN_DEFAULT 256u

/*
 * An open subfile.  Obtained from iod_subfile_get(), given back with
 * iod_subfile_put().  The fields under "immutable" may be read freely
 * while holding a reference; the rest belongs to the store.
 */
struct iod_subfile {
	/* Immutable while referenced. */
	struct iod_store *st;	   /* borrowed: the store outlives handles */
	uint64_t file;		   /* file id */
	uint32_t index;		   /* subfile index */
	int fd;			   /* owned; O_RDWR */
	struct iod_rangelock lock; /* writers of this subfile's bytes */

	/* Protected by the store mutex. */
	unsigned refs;		   /* handles given out and not put */
	int cached;		   /* in the cache (0 once removed) */
	struct clf_hnode hn;	   /* in the cache, by file and index */
	struct iod_subfile *vnext; /* in a list of handles to close */
	struct iod_subfile *lru_prev, *lru_next; /* idle list (refs == 0) */
};

/*
 * iod_store_open - open the storage directory dir
 *
 * Checks that dir exists, is a directory and is writable (by creating and
 * removing a probe file).  The cache keeps at most max_open descriptors
 * (0: IOD_STORE_MAX_OPEN_DEFAULT), more only while more subfiles than
 * that are in use at once.  dir is copied.  Returns 0 and *out, or
 * -ENOENT, -ENOTDIR, -EACCES, -EROFS, ... with a message naming dir and
 * the problem, -ENOMEM.
 */
int iod_store_open(const char *dir, unsigned max_open, struct iod_store **out);

/*
 * Close every descriptor and free the store; NULL ok.  Every handle must
 * have been put.
 */
void iod_store_free(struct iod_store *st);

/*
 * The path of a subfile, in buf (size bytes).  Returns its length, or
 * -ENAMETOOLONG when it does not fit.
 */
int iod_store_path(const struct iod_store *st, uint64_t file, uint32_t index,
		   char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Handles                                                             */
/* ------------------------------------------------------------------ */

#define IOD_CREATE 0x1	/* create the subfile when it does not exist */

/*
 * iod_subfile_get - a reference to an open subfile
 *
 * From the cache, or opened now (created, with its fan-out directory,
 * under IOD_CREATE).  Returns 0 and *out, -ENOENT when the subfile does
 * not exist and IOD_CREATE is not given, or an open/mkdir error.
 */
int iod_subfile_get(struct iod_store *st, uint64_t file, uint32_t index,
		    int flags, struct iod_subfile **out);

/* Give a reference back; NULL ok. */
void iod_subfile_put(struct iod_subfile *sf);

/*
 * Raw transfers on a handle, looping over EINTR and short transfers.
 *
 * iod_subfile_pread(v) reads until len bytes or end of file: it returns
 * the count read (short only at end of file; holes read as zeros).
 * iod_subfile_pwrite(v) returns len or a negative errno; the caller holds
 * the range lock (see above).  off >= 0 and off + len must fit in int64_t
 * (-EINVAL otherwise).  At most IOV_MAX iovecs.
 */
ssize_t iod_subfile_pread(struct iod_subfile *sf, void *buf, size_t len,
			  int64_t off);
ssize_t iod_subfile_pwrite(struct iod_subfile *sf, const void *buf,
			   size_t len, int64_t off);
ssize_t iod_subfile_preadv(struct iod_subfile *sf, const struct iovec *iov,
			   int iovcnt, int64_t off);
ssize_t iod_subfile_pwritev(struct iod_subfile *sf, const struct iovec *iov,
			    int iovcnt, int64_t off);

/*
 * A source that writes the next len bytes it carries into fd at off
 * itself (the iod's: its connection, with splice).  Returns 0 or the
 * source's negative errno; a failure of the file goes to *file_err (the
 * source then consumes and drops the rest); *written is what fd took.
 */
typedef int (*iod_source_fn)(void *arg, int fd, int64_t off, size_t len,
			     int *file_err, size_t *written);

/*
 * iod_subfile_write_from - len bytes from a source, written at off
 *
 * For writes whose bytes should not pass through a memory buffer; under
 * the caller's range lock like iod_subfile_pwrite.  Returns len, or a
 * negative errno: the subfile's (with its message; the source's bytes
 * were consumed) or, with *source_failed set, the source's.
 */
ssize_t iod_subfile_write_from(struct iod_subfile *sf, iod_source_fn source,
			       void *arg, size_t len, int64_t off,
			       bool *source_failed);

bool iod_store_direct_ok(struct iod_store *st);

/* ------------------------------------------------------------------ */
/* By name: what the SUB_*, SYNC, TRUNCATE and REMOVE requests need    */
/* ------------------------------------------------------------------ */

/* Read [off, off + len): the count read, short at end of subfile. */
ssize_t iod_store_read(struct iod_store *st, uint64_t file, uint32_t index,
		       int64_t off, void *buf, size_t len);

/* Write [off, off + len), creating the subfile (also for len 0): len
 * or a negative errno. */
ssize_t iod_store_write(struct iod_store *st, uint64_t file, uint32_t index,
			int64_t off, const void *buf, size_t len);

/*
 * iod_store_list - the subfiles of the store at or after (file, index),
 * in that order: the first max (1..IOD_STORE_LIST_MAX) of them with their
 * lengths in *out, and out->more when others follow.  For clf fsck
 * (SUB_LIST); it walks the whole directory.  0 or a negative errno.
 */
#define IOD_STORE_LIST_MAX 1024
struct iod_store_list {
	uint32_t n;
	bool more;
	uint64_t file[IOD_STORE_LIST_MAX];
	uint32_t subfile[IOD_STORE_LIST_MAX];
	int64_t length[IOD_STORE_LIST_MAX];
};
int iod_store_list(struct iod_store *st, uint64_t file, uint32_t index,
		   uint32_t max, struct iod_store_list *out);

/*
 * Make the subfile when it does not exist (empty), also when a handle
 * the store keeps is of a subfile whose name is gone.  0 or -errno.
 */
int iod_store_create(struct iod_store *st, uint64_t file, uint32_t index);

/* The length of a subfile in *len (0 when it does not exist). */
int iod_store_size(struct iod_store *st, uint64_t file, uint32_t index,
		   int64_t *len);

/*
 * Set the length of a subfile (cutting or extending with a hole),
 * creating it unless len is 0.  Waits for writes beyond len in flight.
 */
int iod_store_truncate(struct iod_store *st, uint64_t file, uint32_t index,
		       int64_t len);

/* Remove a subfile.  A subfile that does not exist is not an error. */
int iod_store_remove(struct iod_store *st, uint64_t file, uint32_t index);

/* Remove every subfile of a file held here; the count removed. */
int iod_store_remove_file(struct iod_store *st, uint64_t file);

/* fsync one subfile (a missing one is already on disk: 0). */
int iod_store_sync(struct iod_store *st, uint64_t file, uint32_t index);

/* fsync every subfile of a file held here. */
int iod_store_sync_file(struct iod_store *st, uint64_t file);

/* Flush the whole storage file system (syncfs). */
int iod_store_sync_all(struct iod_store *st);

/* Capacity of the storage directory's file system, as statvfs sees it. */
struct iod_statfs {
	uint64_t bytes_total;
	uint64_t bytes_free;	/* free, including root's reserve */
	uint64_t bytes_avail;	/* free for the iod's user */
	uint64_t files;
	uint64_t files_free;
	uint32_t block_size;
	uint32_t name_max;
};

int iod_store_statfs(struct iod_store *st, struct iod_statfs *out);

/* ------------------------------------------------------------------ */
/* Counters and fault hooks                                            */
/* ------------------------------------------------------------------ */

/*
 * Counters since the store was opened.  read_calls and write_calls count
 * data system calls (pread, preadv, pwrite, pwritev), one per call issued,
 * so that tests can prove coalescing; the daemon reports the byte counts
 * in its STATUS reply.
 */
struct iod_store_stats {
	uint64_t read_calls, write_calls;
	uint64_t bytes_read, bytes_written;
	uint64_t opens;		/* open(2) of subfiles */
	unsigned open_now;	/* descriptors open now */
};

void iod_store_stats(struct iod_store *st, struct iod_store_stats *out);

/*
 * Fault hook, off by default: the next data system call of this store
 * fails with err (a positive errno) instead of being issued.  For tests
 * of error paths that a healthy disk cannot produce on demand (EIO, and
 * EINTR, which the transfers retry).
 */
void iod_store_fail_next_io(struct iod_store *st, int err);

/*
 * Fault hook, off by default: every data system call moves at most
 * max_bytes (0: no limit), as a disk or a signal may cut any transfer
 * short; for tests of the loops that finish short transfers.
 */
void iod_store_limit_io(struct iod_store *st, size_t max_bytes);

#endif /* IOD_STORE_H */
