/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_rdma_regcache.h -- a bounded cache of memory registrations,
 * so that a buffer used again and again is pinned once.
 *
 * Registering memory with the NIC pins its pages and costs about as much
 * as copying them; a client that writes from the same buffer every time
 * should pay that once.  The danger of any such cache is a registration
 * that outlives the mapping it pinned: if the process unmaps a range and
 * maps new memory at the same address, the old registration still names
 * the old pages, and a transfer through it would move stale bytes.  So an
 * entry is only ever found again for the same range *and generation*:
 * ops.generation reads the process's memory generation
 * (transport_rdma_memhooks.c moves it when every munmap, mremap,
 * madvise(DONTNEED/FREE/REMOVE) and shrinking brk it sees begins and when
 * it ends, and keeps malloc from unmapping behind its back), and a new
 * generation drops every entry.  While an unmap is in flight the
 * generation is CLF_REGCACHE_UNSETTLED: no entry is found then, and what
 * is registered is the range's own pages, for that one use (a page about
 * to vanish must not be kept, nor lent with a neighbour's block).  A
 * registration during which the generation moved serves once too: the
 * unmap that moved it may have taken its pages.  A range can also be
 * dropped explicitly.
 *
 * A miss registers the whole aligned block (align bytes, a power of two)
 * around the range when reg accepts it -- the neighbours of a buffer in
 * a pool or a mapping then hit -- and the range's pages alone when reg
 * refuses (part of the block is not mapped).
 *
 * Bounded in entries and in pinned bytes; the least recently used entry
 * nobody holds goes first.  An entry in use when it is dropped is
 * deregistered when its last user puts it back.  A request larger than
 * the byte bound is registered for that one use.
 *
 * Pure logic: the registration itself is the caller's (reg/dereg), so
 * tests/unit/test_rdma_regcache.c runs without a device.  Not locked: one
 * connection's cache is used under that connection's lock.
 */
#ifndef CLF_TRANSPORT_RDMA_REGCACHE_H
#define CLF_TRANSPORT_RDMA_REGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct clf_regcache_entry {
	uintptr_t start;	/* page-aligned */
	size_t len;		/* whole pages */
	void *handle;		/* what reg returned (an ibv_mr) */
	unsigned refs;		/* users now */
	uint64_t used;		/* tick of the last get, for LRU */
	bool dead;		/* dropped while in use */
	bool once;		/* not cached: deregistered when put */
};

/* The generation while memory is being unmapped. */
#define CLF_REGCACHE_UNSETTLED 0

struct clf_regcache_ops {
	/* Register [start, start + len); NULL with errno on failure. */
	void *(*reg)(void *arg, uintptr_t start, size_t len);
	void (*dereg)(void *arg, void *handle);
	/* The memory generation now, or CLF_REGCACHE_UNSETTLED. */
	uint64_t (*generation)(void *arg);
	void *arg;
};

struct clf_regcache_stats {
	unsigned long hits, misses, evictions, invalidations, uncached;
	unsigned long unsettled;	/* lookups during an unmap */
};

struct clf_regcache {
	struct clf_regcache_entry **e;	/* max_entries slots, n used */
	size_t n, max_entries;
	size_t pinned, max_pinned;	/* bytes in cached entries */
	uint64_t tick;
	uint64_t gen;			/* of every entry */
	size_t page;
	size_t align;			/* blocks tried first; >= page */
	struct clf_regcache_ops ops;
	struct clf_regcache_stats st;
};

/* 0, or -ENOMEM.  Blocks of align bytes are tried first
 * (clf_regcache_set_align). */
int clf_regcache_init(struct clf_regcache *c, size_t max_entries,
		      size_t max_pinned, const struct clf_regcache_ops *ops);

/* Try blocks of align bytes (a power of two; 0: pages only). */
void clf_regcache_set_align(struct clf_regcache *c, size_t align);

/* Deregister everything; entries still held are a caller bug (leaked). */
void clf_regcache_destroy(struct clf_regcache *c);

/*
 * A registration covering [addr, addr + len) (len > 0) valid in the
 * generation now, held until clf_regcache_put.  NULL with *err (the
 * negative errno of reg) when registering fails.
 */
struct clf_regcache_entry *clf_regcache_get(struct clf_regcache *c,
					    const void *addr, size_t len,
					    int *err);

void clf_regcache_put(struct clf_regcache *c, struct clf_regcache_entry *e);

/* Drop every entry that overlaps [addr, addr + len). */
void clf_regcache_invalidate(struct clf_regcache *c, const void *addr,
			     size_t len);

#endif /* CLF_TRANSPORT_RDMA_REGCACHE_H */
