// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma_devcache.c -- one registration cache per protection
 * domain (transport_rdma_devcache.h).  A process has a device or two:
 * a list is the index.
 */
#include <errno.h>
#include <stdlib.h>

#include "transport_rdma_devcache.h"

struct clf_devcache_slot *clf_devcache_attach(struct clf_devcache *d,
					      const void *key, unsigned kind,
					      const struct clf_regcache_ops *ops,
					      size_t align, int *err)
{
	struct clf_devcache_slot *s;

	pthread_mutex_lock(&d->mu);
	for (s = d->slots; s && (s->key != key || s->kind != kind); s = s->next)
		;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || clf_regcache_init(&s->cache, d->max_entries,
					    d->max_pinned, ops)) {
			pthread_mutex_unlock(&d->mu);
			free(s);
			*err = -ENOMEM;
			return NULL;
		}
		clf_regcache_set_align(&s->cache, align);
		s->key = key;
		s->kind = kind;
		s->next = d->slots;
		d->slots = s;
	}
	s->users++;
	pthread_mutex_unlock(&d->mu);
	return s;
}

void clf_devcache_detach(struct clf_devcache *d, struct clf_devcache_slot *s)
{
	struct clf_devcache_slot **p;

	pthread_mutex_lock(&d->mu);
	if (--s->users) {
		pthread_mutex_unlock(&d->mu);
		return;
	}
	for (p = &d->slots; *p != s; p = &(*p)->next)
		;
	*p = s->next;
	pthread_mutex_unlock(&d->mu);
	clf_regcache_destroy(&s->cache);
	free(s);
}

struct clf_regcache_entry *clf_devcache_get(struct clf_devcache *d,
					    struct clf_devcache_slot *s,
					    const void *addr, size_t len,
					    bool *hit, int *err)
{
	struct clf_regcache_entry *e;
	unsigned long hits;

	pthread_mutex_lock(&d->mu);
	hits = s->cache.st.hits;
	e = clf_regcache_get(&s->cache, addr, len, err);
	*hit = s->cache.st.hits != hits;
	pthread_mutex_unlock(&d->mu);
	return e;
}

void clf_devcache_put(struct clf_devcache *d, struct clf_devcache_slot *s,
		      struct clf_regcache_entry *e)
{
	pthread_mutex_lock(&d->mu);
	clf_regcache_put(&s->cache, e);
	pthread_mutex_unlock(&d->mu);
}

void clf_devcache_stats(struct clf_devcache *d, struct clf_devcache_slot *s,
			struct clf_regcache_stats *st, size_t *pinned)
{
	pthread_mutex_lock(&d->mu);
	*st = s->cache.st;
	*pinned = s->cache.pinned;
	pthread_mutex_unlock(&d->mu);
}

size_t clf_devcache_slots(struct clf_devcache *d)
{
	size_t n = 0;

	pthread_mutex_lock(&d->mu);
	for (struct clf_devcache_slot *s = d->slots; s; s = s->next)
		n++;
	pthread_mutex_unlock(&d->mu);
	return n;
}
