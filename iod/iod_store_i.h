/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_store_i.h -- the inside of a store, shared by iod_store.c (the
 * directory and the descriptor cache) and iod_store_io.c (transfers).
 */
#ifndef IOD_STORE_I_H
#define IOD_STORE_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "iod_store.h"

struct iod_store {
	/* Immutable after iod_store_open. */
	char *dir;			/* owned copy, for messages and paths */
	int dirfd;			/* owned; the storage directory */
	unsigned max_open;		/* descriptors the cache keeps */

	pthread_mutex_t mutex;
	/* Protected by mutex. */
	struct clf_htable cache;	/* cached handles; .count of them */
	struct iod_subfile *lru_head;	/* idle handles, most recent first */
	struct iod_subfile *lru_tail;	/* the next one to close */

	/* Atomic, no lock: counters for iod_store_stats and the fault hook. */
	atomic_uint_least64_t read_calls, write_calls;
	atomic_uint_least64_t bytes_read, bytes_written;
	atomic_uint_least64_t opens;
	atomic_uint open_now;		/* descriptors of subfiles open now */
	atomic_int fail_next;		/* errno for the next data call; 0 */
	atomic_size_t limit_io;		/* bytes per data call at most; 0 */
};

/* The subfile's name relative to the storage directory. */
int iod_store_relpath(uint64_t file, uint32_t index, char *buf, size_t size);

#endif /* IOD_STORE_I_H */
