// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma_regcache.c -- the registration cache
 * (transport_rdma_regcache.h).  A few dozen entries at most: a linear
 * scan costs less than any index would save.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "transport_rdma_regcache.h"

int clf_regcache_init(struct clf_regcache *c, size_t max_entries,
		      size_t max_pinned, const struct clf_regcache_ops *ops)
{
	long pg = sysconf(_SC_PAGESIZE);

	*c = (struct clf_regcache){ .max_entries = max_entries,
				    .max_pinned = max_pinned, .ops = *ops,
				    .gen = CLF_REGCACHE_UNSETTLED,
				    .page = pg > 0 ? (size_t)pg : 4096 };
	c->align = c->page;
	c->e = calloc(max_entries ? max_entries : 1, sizeof(*c->e));
	return c->e ? 0 : -ENOMEM;
}

void clf_regcache_set_align(struct clf_regcache *c, size_t align)
{
	c->align = align > c->page ? align : c->page;
}

static void release(struct clf_regcache *c, struct clf_regcache_entry *e)
{
	c->ops.dereg(c->ops.arg, e->handle);
	free(e);
}

/* Take slot i out of the cache: freed now, or by its last put. */
static void drop(struct clf_regcache *c, size_t i)
{
	struct clf_regcache_entry *e = c->e[i];

	c->pinned -= e->len;
	c->e[i] = c->e[--c->n];
	if (e->refs)
		e->dead = true;
	else
		release(c, e);
}

void clf_regcache_destroy(struct clf_regcache *c)
{
	while (c->n)
		drop(c, c->n - 1);
	free(c->e);
	c->e = NULL;
}

void clf_regcache_invalidate(struct clf_regcache *c, const void *addr,
			     size_t len)
{
	uintptr_t a = (uintptr_t)addr;

	for (size_t i = c->n; i-- > 0;) {
		struct clf_regcache_entry *e = c->e[i];

		if (e->start < a + len && a < e->start + e->len) {
			drop(c, i);
			c->st.invalidations++;
		}
	}
}

/* Make room for len more pinned bytes and one more entry, evicting the
 * least recently used entries nobody holds; false if that is not enough. */
static bool make_room(struct clf_regcache *c, size_t len)
{
	while (c->n >= c->max_entries || c->pinned + len > c->max_pinned) {
		size_t victim = c->n;

		for (size_t i = 0; i < c->n; i++)
			if (!c->e[i]->refs &&
			    (victim == c->n || c->e[i]->used < c->e[victim]->used))
				victim = i;
		if (victim == c->n)
			return false;
		drop(c, victim);
		c->st.evictions++;
	}
	return true;
}

/* A new registration of [start, end), or of the aligned block around it
 * when block; NULL with errno. */
static struct clf_regcache_entry *reg(struct clf_regcache *c, uintptr_t start,
				      uintptr_t end, bool block)
{
	struct clf_regcache_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	*e = (struct clf_regcache_entry){ .refs = 1, .used = c->tick };
	if (block && c->align > c->page) {
		uintptr_t bs = start & ~(uintptr_t)(c->align - 1);
		uintptr_t be = (end + c->align - 1) & ~(uintptr_t)(c->align - 1);

		if (be - bs <= c->max_pinned) {
			errno = 0;
			e->handle = c->ops.reg(c->ops.arg, bs, be - bs);
			e->start = bs;
			e->len = be - bs;
		}
	}
	if (!e->handle) {
		errno = 0;
		e->handle = c->ops.reg(c->ops.arg, start, end - start);
		e->start = start;
		e->len = end - start;
	}
	if (!e->handle) {
		if (!errno)
			errno = ENOMEM;
		free(e);
		return NULL;
	}
	return e;
}

struct clf_regcache_entry *clf_regcache_get(struct clf_regcache *c,
					    const void *addr, size_t len,
					    int *err)
{
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(c->page - 1);
	uintptr_t end = ((uintptr_t)addr + len + c->page - 1) &
			~(uintptr_t)(c->page - 1);
	uint64_t gen = c->ops.generation(c->ops.arg);
	bool settled = gen != CLF_REGCACHE_UNSETTLED;
	struct clf_regcache_entry *e;

	if (settled && gen != c->gen) {
		/* Memory may have been unmapped since: trust nothing. */
		c->st.invalidations += c->n;
		while (c->n)
			drop(c, c->n - 1);
		c->gen = gen;
	}
	c->tick++;
	for (size_t i = 0; settled && i < c->n; i++) {
		e = c->e[i];
		if (e->start <= start && end <= e->start + e->len) {
			e->refs++;
			e->used = c->tick;
			c->st.hits++;
			return e;
		}
	}
	c->st.misses++;
	e = reg(c, start, end, settled);
	if (!e) {
		*err = -errno;
		return NULL;
	}
	/* Kept only if no unmap began or ended since gen was read: one that
	 * overlapped the registration may have taken some of its pages. */
	if (!settled || c->ops.generation(c->ops.arg) != gen) {
		e->once = true;
		c->st.unsettled++;
		return e;
	}
	if (e->len > c->max_pinned || !make_room(c, e->len)) {
		e->once = true;
		c->st.uncached++;
		return e;
	}
	c->e[c->n++] = e;
	c->pinned += e->len;
	return e;
}

void clf_regcache_put(struct clf_regcache *c, struct clf_regcache_entry *e)
{
	if (--e->refs == 0 && (e->dead || e->once))
		release(c, e);
}
