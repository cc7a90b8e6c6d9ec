/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_rdma_devcache.h -- the registration caches of a process, one
 * per protection domain (one per RDMA device and kind of access), shared
 * by every connection on it.
 *
 * A registration belongs to a protection domain: a queue pair of another
 * domain cannot use it.  A cache per connection registered a buffer once
 * per connection, so a client striping over 16 iods pinned and paid for
 * each buffer 16 times, and held 16 caches' worth of pinned memory.  All
 * of a process's connections on one device share one domain instead
 * (transport_rdma.c: struct rdma_dev), and with it one cache: a buffer is
 * registered once per device, which is what a client reaching its iods
 * through two NICs must pay and all it pays.
 *
 * A slot is made by the first connection on its key and freed, its
 * registrations with it, when the last one detaches: a process that no
 * longer talks over a device pins nothing for it.  Each slot's cache has
 * the bounds given at init and follows the same memory generation
 * (transport_rdma_regcache.h): an unmap the hooks see drops the entries
 * of every device.
 *
 * Pure logic (the registration is the ops' of each slot), locked: the
 * connections of a device call it from their own threads.
 */
#ifndef CLF_TRANSPORT_RDMA_DEVCACHE_H
#define CLF_TRANSPORT_RDMA_DEVCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "transport_rdma_regcache.h"

struct clf_devcache_slot {
	struct clf_devcache_slot *next;
	const void *key;	/* the protection domain */
	unsigned kind;		/* what access its registrations give */
	unsigned users;		/* connections attached */
	struct clf_regcache cache;
};

struct clf_devcache {
	pthread_mutex_t mu;
	struct clf_devcache_slot *slots;
	size_t max_entries, max_pinned;	/* of each slot */
};

#define CLF_DEVCACHE_INIT(ENTRIES, PINNED)				\
	{ .mu = PTHREAD_MUTEX_INITIALIZER, .max_entries = (ENTRIES),	\
	  .max_pinned = (PINNED) }

/*
 * The slot of (key, kind), made with ops and align (blocks tried first,
 * clf_regcache_set_align) if none is; the caller is one of its users
 * until clf_devcache_detach.  NULL with *err (-ENOMEM).
 */
struct clf_devcache_slot *clf_devcache_attach(struct clf_devcache *d,
					      const void *key, unsigned kind,
					      const struct clf_regcache_ops *ops,
					      size_t align, int *err);

/* One user less; the last one deregisters the slot's entries and frees
 * it.  Entries still held are a caller bug (clf_regcache_destroy). */
void clf_devcache_detach(struct clf_devcache *d, struct clf_devcache_slot *s);

/* clf_regcache_get under the lock; *hit says whether it was cached. */
struct clf_regcache_entry *clf_devcache_get(struct clf_devcache *d,
					    struct clf_devcache_slot *s,
					    const void *addr, size_t len,
					    bool *hit, int *err);

void clf_devcache_put(struct clf_devcache *d, struct clf_devcache_slot *s,
		      struct clf_regcache_entry *e);

/* The slot's counters and what it pins now, under the lock. */
void clf_devcache_stats(struct clf_devcache *d, struct clf_devcache_slot *s,
			struct clf_regcache_stats *st, size_t *pinned);

/* Slots now (connections' devices and kinds in use). */
size_t clf_devcache_slots(struct clf_devcache *d);

#endif /* CLF_TRANSPORT_RDMA_DEVCACHE_H */
