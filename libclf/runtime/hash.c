// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hash.c -- the intrusive hash table (hash.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "hash.h"

/* Fibonacci hashing: the top bits of key times 2^64 / golden ratio. */
static size_t bucket_of(const struct clf_htable *t, uint64_t key)
{
	if (t->shift >= 64)
		return 0;
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> t->shift);
}

static unsigned shift_of(size_t nbuckets)
{
	unsigned bits = 0;

	while (((size_t)1 << bits) < nbuckets)
		bits++;
	return 64 - bits;
}

int clf_htable_init(struct clf_htable *t, size_t nbuckets, size_t max_buckets)
{
	size_t n = 1;

	while (n < nbuckets)
		n *= 2;
	t->buckets = calloc(n, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->nbuckets = n;
	t->shift = shift_of(n);
	t->max_buckets = max_buckets;
	t->count = 0;
	return 0;
}

void clf_htable_release(struct clf_htable *t)
{
	if (!t)
		return;
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = 0;
	t->count = 0;
}

static void link_node(struct clf_hnode **head, struct clf_hnode *n)
{
	n->next = *head;
	if (n->next)
		n->next->pprev = &n->next;
	n->pprev = head;
	*head = n;
}

/* Double the buckets; on no memory the table stays as it is. */
static void grow(struct clf_htable *t)
{
	size_t n = t->nbuckets * 2;
	struct clf_htable bigger = { .nbuckets = n, .shift = shift_of(n) };

	bigger.buckets = calloc(n, sizeof(*bigger.buckets));
	if (!bigger.buckets)
		return;
	for (size_t b = 0; b < t->nbuckets; b++) {
		while (t->buckets[b]) {
			struct clf_hnode *node = t->buckets[b];

			t->buckets[b] = node->next;
			link_node(&bigger.buckets[bucket_of(&bigger, node->key)],
				  node);
		}
	}
	free(t->buckets);
	t->buckets = bigger.buckets;
	t->nbuckets = n;
	t->shift = bigger.shift;
}

void clf_htable_add(struct clf_htable *t, struct clf_hnode *n, uint64_t key)
{
	if (t->count >= 2 * t->nbuckets && t->nbuckets < t->max_buckets)
		grow(t);
	n->key = key;
	link_node(&t->buckets[bucket_of(t, key)], n);
	t->count++;
}

void clf_htable_del(struct clf_htable *t, struct clf_hnode *n)
{
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
	t->count--;
}

struct clf_hnode *clf_htable_find(const struct clf_htable *t, uint64_t key)
{
	struct clf_hnode *n = t->buckets[bucket_of(t, key)];

	while (n && n->key != key)
		n = n->next;
	return n;
}

struct clf_hnode *clf_htable_next_key(const struct clf_hnode *n)
{
	uint64_t key = n->key;

	for (n = n->next; n && n->key != key; n = n->next)
		;
	return (struct clf_hnode *)n;
}
