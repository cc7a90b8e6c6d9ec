/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xcache.h -- small independent accesses kept at the client under the
 * iods' extent locks (docs/small-io.md, "Client caching under locks").
 *
 * With client_cache (clf.conf) above 0, a write of at most 64 KiB or a
 * read of at most 16 KiB (a larger one when all of it is kept) through
 * the small path (io_small.c) whose
 * pieces all lie under extent locks this process holds is served here
 * without a round trip: a write's bytes are kept back (write-back, PW),
 * a read is copied from bytes kept or read before (PR or PW).  Pieces
 * not under a lock take one LOCK_ENQUEUE per piece's iod first, every
 * iod at once (grants expand, so a process that works alone in a region
 * asks once).  Misses, flushes and releases go to every iod at once too:
 * one round trip each, whatever the iods.
 *
 * The rule of clf.h stands: every access of another process that
 * conflicts with a lock (a lock request, or any lockless access) makes
 * the iod revoke it, and the iod serves that access only after this
 * client sent the bytes it kept and released the lock.  A thread of the
 * cache reads the REVOKEs on a callback connection per iod and answers
 * them on a connection of its own (so a main thread that waits in a lock
 * request cannot hold it up), also while the application is idle.
 *
 * Written bytes kept back go to the iods at a revocation, at CLF_sync and
 * CLF_close (MPI_File_sync, MPI_File_close), when the cache holds
 * client_cache bytes, and at the latest a second after they were written.
 * A process that dies before that loses them, as a process that dies
 * loses its stdio buffers: clf.h, "Client cache".
 */
#ifndef CLF_XCACHE_H
#define CLF_XCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct clf_file;

/* One piece of a small access: subfile bytes [soff, soff + len) of wire
 * subfile sub at iod, file bytes [foff, foff + len), and where they are
 * in memory. */
struct clf_xc_piece {
	uint32_t iod, sub;
	int64_t soff, len;
	int64_t foff;
	uint8_t *buf;
};

/*
 * The caller's map of file bytes [off, off + len) of f to pieces, at
 * out[0..max): their count, 0 when they are more than max, or a
 * negative errno.  buf is NULL.  (A strided reader's read-ahead asks for
 * its next blocks; the caller owns the layout walk: io_small.c.)
 */
typedef int (*clf_xc_map_fn)(struct clf_file *f, int64_t off, int64_t len,
			     struct clf_xc_piece *out, int max);

/*
 * Serve the pieces of a small access of f from the cache, taking the
 * locks they need.  *done false: the cache does not take this access
 * (off, an iod older than 1.13, a lock not granted): the caller goes
 * to the iods.  Returns 0 or a negative errno with a message.
 */
int clf_xcache_io(struct clf_file *f, const struct clf_xc_piece *p, int n,
		  bool write, clf_xc_map_fn map, bool *done);

/* f->cache: what CLF_FCNTL_SETCACHE chose; calloc's 0 is clf.conf's. */
enum clf_xcache_choice {
	CLF_XCACHE_CONFIG = 0,	/* on when client_cache > 0 */
	CLF_XCACHE_ON,
	CLF_XCACHE_OFF,
};

/* Is the cache on for f? */
bool clf_xcache_wanted(const struct clf_file *f);

/* CLF_FCNTL_SETCACHE: on or off for f; off sends and releases first. */
int clf_xcache_choose(struct clf_file *f, bool on);

/* Send f's kept bytes to the iods (CLF_sync): 0 or a negative errno. */
int clf_xcache_flush_file(struct clf_file *f);

/* f closes: its kept bytes go out, its locks are released. */
int clf_xcache_close_file(struct clf_file *f);

/* CLF_finalize: every file is closed; stop the thread, close connections. */
void clf_xcache_shutdown(void);

#endif /* CLF_XCACHE_H */
