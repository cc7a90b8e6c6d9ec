// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_append.c -- the append ends of files (mds_append.h): a hash of
 * inodes under one mutex; expired entries go when their bucket is
 * walked, or all at once when the table is full.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "clf_proto.h"
#include "error.h"
#include "hash.h"
#include "mds_append.h"

#define BUCKETS 1024

struct append_end {
	struct clf_hnode hn;	/* in mds_appends.table, by inode */
	int64_t end;		/* one past the last reserved byte */
	int64_t last_ms;	/* clf_now_ms() of the last reservation */
};

struct mds_appends {
	pthread_mutex_t mutex;	/* guards everything below */
	int64_t hold_ms;	/* an entry's life after its last use */
	struct clf_htable table;	/* of append_end; .count: entries */
};

struct mds_appends *mds_appends_new(int64_t hold_ms)
{
	struct mds_appends *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (clf_htable_init(&t->table, BUCKETS, BUCKETS)) {
		free(t);
		return NULL;
	}
	if (pthread_mutex_init(&t->mutex, NULL)) {
		clf_htable_release(&t->table);
		free(t);
		return NULL;
	}
	t->hold_ms = hold_ms;
	return t;
}

void mds_appends_free(struct mds_appends *t)
{
	struct clf_hnode *n, *tmp;
	size_t b;

	if (!t)
		return;
	clf_htable_for_each(&t->table, b, n, tmp)
		free(clf_hnode_entry(n, struct append_end, hn));
	clf_htable_release(&t->table);
	pthread_mutex_destroy(&t->mutex);
	free(t);
}

static void drop(struct mds_appends *t, struct append_end *e)
{
	clf_htable_del(&t->table, &e->hn);
	free(e);
}

static bool expired(const struct mds_appends *t, const struct append_end *e,
		    int64_t now_ms)
{
	return now_ms - e->last_ms >= t->hold_ms;
}

static struct append_end *find(struct mds_appends *t, uint64_t ino)
{
	struct clf_hnode *n = clf_htable_find(&t->table, ino);

	return n ? clf_hnode_entry(n, struct append_end, hn) : NULL;
}

/* Drop every expired entry. */
static void prune_all(struct mds_appends *t, int64_t now_ms)
{
	struct clf_hnode *n, *tmp;
	size_t b;

	clf_htable_for_each(&t->table, b, n, tmp) {
		struct append_end *e = clf_hnode_entry(n, struct append_end, hn);

		if (expired(t, e, now_ms))
			drop(t, e);
	}
}

/* A new entry for ino (count checked), or an errno. */
static int add(struct mds_appends *t, uint64_t ino, int64_t now_ms,
	       struct append_end **out)
{
	struct append_end *e;

	if (t->table.count >= MDS_APPENDS_MAX) {
		prune_all(t, now_ms);
		if (t->table.count >= MDS_APPENDS_MAX)
			return clf_fail(EAGAIN,
					"metad: appends to %zu files within %lld ms: no room for another",
					t->table.count, (long long)t->hold_ms);
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return clf_fail(ENOMEM, "metad: out of memory for an append");
	clf_htable_add(&t->table, &e->hn, ino);
	*out = e;
	return 0;
}

int mds_appends_reserve(struct mds_appends *t, uint64_t ino, int64_t at,
			int64_t length, bool exact, int64_t now_ms,
			int64_t *offset, bool *reserved)
{
	struct append_end *e;
	bool done = false;
	int64_t off;
	int err = 0;

	pthread_mutex_lock(&t->mutex);
	e = find(t, ino);
	if (e && expired(t, e, now_ms)) {
		drop(t, e);
		e = NULL;
	}
	off = e && e->end > at ? e->end : at;
	if (exact && off != at)
		goto out;
	if ((uint64_t)length > CLF_PROTO_LOCK_OFFSET_MAX - (uint64_t)off) {
		err = clf_fail(EFBIG, "metad: an append of %lld bytes at %lld would pass the largest offset",
			       (long long)length, (long long)off);
		goto out;
	}
	if (length == 0) {
		done = true;
		goto out;
	}
	if (!e)
		err = add(t, ino, now_ms, &e);
	if (!err) {
		e->end = off + length;
		e->last_ms = now_ms;
		done = true;
	}
out:
	pthread_mutex_unlock(&t->mutex);
	if (!err) {
		*offset = off;
		if (reserved)
			*reserved = done;
	}
	return err;
}

void mds_appends_forget(struct mds_appends *t, uint64_t ino)
{
	struct append_end *e;

	pthread_mutex_lock(&t->mutex);
	e = find(t, ino);
	if (e)
		drop(t, e);
	pthread_mutex_unlock(&t->mutex);
}

unsigned mds_appends_count(struct mds_appends *t)
{
	unsigned n;

	pthread_mutex_lock(&t->mutex);
	n = (unsigned)t->table.count;
	pthread_mutex_unlock(&t->mutex);
	return n;
}
