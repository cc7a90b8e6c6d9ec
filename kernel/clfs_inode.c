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
#define ITABLE_MAX_BUCKETS ((size_t)1 << 24)

int clfs_itable_init(struct clfs_itable *t)
{
	int err = clf_htable_init(&t->table, ITABLE_MIN_BUCKETS,
				  ITABLE_MAX_BUCKETS);

	if (err)
		return err;
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
	struct clf_hnode *n, *tmp;
	size_t b;

	if (!t->table.buckets)
		return;
	clf_htable_for_each(&t->table, b, n, tmp)
		inode_free(clf_hnode_entry(n, struct clfs_inode, hn));
	clf_htable_release(&t->table);
	pthread_mutex_destroy(&t->lock);
}

static struct clfs_inode *find_locked(struct clfs_itable *t, uint64_t ino)
{
	struct clf_hnode *n = clf_htable_find(&t->table, ino);

	return n ? clf_hnode_entry(n, struct clfs_inode, hn) : NULL;
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
	clf_htable_add(&t->table, &ip->hn, ino);
unlock:
	pthread_mutex_unlock(&t->lock);
	return ip;
}

/* Take ip out of the table and free it if nobody holds it.  t->lock. */
static void maybe_drop_locked(struct clfs_itable *t, struct clfs_inode *ip)
{
	if (ip->refs > 0 || ip->nlookup > 0)
		return;
	clf_htable_del(&t->table, &ip->hn);
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
