/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash.h -- one intrusive hash table for every table in the tree (the
 * iod's views and subfile handles, metad's locks and append ends, the
 * mount client's inodes).
 *
 * A table keeps nodes that live inside the caller's objects, chained
 * by a 64-bit key: the key itself where it is a number (an inode, a
 * handle), or a hash of a longer key, which the caller then compares in
 * full while walking the nodes with that key (clf_htable_next_key).  The
 * table spreads keys itself (Fibonacci hashing), so consecutive numbers
 * land in different buckets.
 *
 * No locking: the caller's lock guards the table and its nodes, as it
 * guarded its own chains.  The table owns its bucket array only; nodes
 * belong to the caller, who frees them (after clf_htable_del, or while
 * walking with clf_htable_for_each at the end).
 */
#ifndef CLF_HASH_H
#define CLF_HASH_H

#include <stddef.h>
#include <stdint.h>

struct clf_hnode {
	struct clf_hnode *next;		/* in its bucket */
	struct clf_hnode **pprev;	/* what points at it: O(1) delete */
	uint64_t key;
};

struct clf_htable {
	struct clf_hnode **buckets;	/* owned; nbuckets chains */
	size_t nbuckets;		/* a power of two */
	unsigned shift;			/* 64 - log2(nbuckets) */
	size_t max_buckets;		/* doubles up to this while crowded */
	size_t count;			/* nodes in the table */
};

/* The object a node is embedded in: clf_hnode_entry(n, struct x, hn). */
#define clf_hnode_entry(n, type, member) \
	((type *)((char *)(n) - offsetof(type, member)))

/*
 * Start t with at least nbuckets buckets (rounded up to a power of
 * two); while it holds more than two nodes a bucket it doubles them, up
 * to max_buckets (no more than nbuckets: it never grows).  0 or -ENOMEM.
 */
int clf_htable_init(struct clf_htable *t, size_t nbuckets, size_t max_buckets);

/* Free the bucket array; the nodes still in t are the caller's.  NULL
 * and a released table are accepted. */
void clf_htable_release(struct clf_htable *t);

/* Add n (not in any table) under key; growing is best effort. */
void clf_htable_add(struct clf_htable *t, struct clf_hnode *n, uint64_t key);

/* Take n out of t. */
void clf_htable_del(struct clf_htable *t, struct clf_hnode *n);

/* The first node with key, or NULL. */
struct clf_hnode *clf_htable_find(const struct clf_htable *t, uint64_t key);

/* The next node after n with n's key, or NULL. */
struct clf_hnode *clf_htable_next_key(const struct clf_hnode *n);

/*
 * Every node of t, in no order, as n; n may be deleted (and freed) in
 * the body, since tmp already holds the next one.  b is a size_t the
 * loop uses.  This is two loops: a break leaves the inner one only.
 */
#define clf_htable_for_each(t, b, n, tmp)				\
	for ((b) = 0; (b) < (t)->nbuckets; (b)++)			\
		for ((n) = (t)->buckets[b];				\
		     (n) && ((tmp) = (n)->next, 1); (n) = (tmp))

#endif /* CLF_HASH_H */
