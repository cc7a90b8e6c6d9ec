// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_inode.c -- the inode table of the mount client: a hash table of
 * the inodes the kernel holds (lookup references) or a request is using
 * (our references), keyed by clf inode number.  An inode leaves the
 * table when both counts reach zero.
 */
#include <errno.h>
#include <stdlib.h>

#include "clfs_i.h"

#define ITABLE_MIN_BUCKETS 1024

/* Fibonacci hashing: consecutive inode numbers spread out. */
static size_t hash(uint64_t ino, size_t nbuckets)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 20) & (nbuckets - 1);
}

static size_t bucket_of(const struct clfs_itable *t, uint64_t ino)
{
	return hash(ino, t->nbuckets);
}

int clfs_itable_init(struct clfs_itable *t)
{
	t->buckets = calloc(ITABLE_MIN_BUCKETS, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->nbuckets = ITABLE_MIN_BUCKETS;
	t->count = 0;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

static void inode_free(struct clfs_inode *ip)
{
	pthread_mutex_destroy(&ip->lock);
	free(ip->dflt);
	free(ip);
}

void clfs_itable_destroy(struct clfs_itable *t)
{
	for (size_t b = 0; t->buckets && b < t->nbuckets; b++) {
		while (t->buckets[b]) {
			struct clfs_inode *ip = t->buckets[b];

			t->buckets[b] = ip->next;
			inode_free(ip);
		}
	}
	free(t->buckets);
	t->buckets = NULL;
	pthread_mutex_destroy(&t->lock);
}

/* Double the buckets when chains grow long; best effort. */
static void maybe_grow(struct clfs_itable *t)
{
	size_t n = t->nbuckets * 2;
	struct clfs_inode **nb;

	if (t->count < 2 * t->nbuckets)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	for (size_t b = 0; b < t->nbuckets; b++) {
		while (t->buckets[b]) {
			struct clfs_inode *ip = t->buckets[b];
			size_t to;

			t->buckets[b] = ip->next;
			to = hash(ip->ino, n);
			ip->next = nb[to];
			nb[to] = ip;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->nbuckets = n;
}

static struct clfs_inode *find_locked(struct clfs_itable *t, uint64_t ino)
{
	struct clfs_inode *ip = t->buckets[bucket_of(t, ino)];

	while (ip && ip->ino != ino)
		ip = ip->next;
	return ip;
}

struct clfs_inode *clfs_ifind(struct clfs_itable *t, uint64_t ino)
{
	struct clfs_inode *ip;

	pthread_mutex_lock(&t->lock);
	ip = find_locked(t, ino);
	if (ip)
		ip->refs++;
	pthread_mutex_unlock(&t->lock);
	return ip;
}

struct clfs_inode *clfs_iget(struct clfs_itable *t, uint64_t ino)
{
	struct clfs_inode *ip;
	size_t b;

	pthread_mutex_lock(&t->lock);
	ip = find_locked(t, ino);
	if (ip) {
		ip->refs++;
		goto unlock;
	}
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		goto unlock;
	ip->ino = ino;
	ip->refs = 1;
	pthread_mutex_init(&ip->lock, NULL);
	maybe_grow(t);
	b = bucket_of(t, ino);
	ip->next = t->buckets[b];
	t->buckets[b] = ip;
	t->count++;
unlock:
	pthread_mutex_unlock(&t->lock);
	return ip;
}

/* Unlink ip from its chain and free it if nobody holds it.  t->lock. */
static void maybe_drop_locked(struct clfs_itable *t, struct clfs_inode *ip)
{
	struct clfs_inode **pp;

	if (ip->refs > 0 || ip->nlookup > 0)
		return;
	for (pp = &t->buckets[bucket_of(t, ip->ino)]; *pp != ip;
	     pp = &(*pp)->next)
		;
	*pp = ip->next;
	t->count--;
	inode_free(ip);
}

void clfs_iput(struct clfs_itable *t, struct clfs_inode *ip)
{
	if (!ip)
		return;
	pthread_mutex_lock(&t->lock);
	ip->refs--;
	maybe_drop_locked(t, ip);
	pthread_mutex_unlock(&t->lock);
}

void clfs_ilookup_ref(struct clfs_itable *t, struct clfs_inode *ip)
{
	pthread_mutex_lock(&t->lock);
	ip->nlookup++;
	pthread_mutex_unlock(&t->lock);
}

void clfs_iforget(struct clfs_itable *t, uint64_t ino, uint64_t n)
{
	struct clfs_inode *ip;

	pthread_mutex_lock(&t->lock);
	ip = find_locked(t, ino);
	if (ip) {
		ip->nlookup = n > ip->nlookup ? 0 : ip->nlookup - n;
		maybe_drop_locked(t, ip);
	}
	pthread_mutex_unlock(&t->lock);
}
