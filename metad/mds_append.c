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
#include "mds_append.h"

#define BUCKETS 1024		/* a power of two */

struct append_end {
	struct append_end *next;	/* in its bucket */
	uint64_t ino;
	int64_t end;		/* one past the last reserved byte */
	int64_t last_ms;	/* clf_now_ms() of the last reservation */
};

struct mds_appends {
	pthread_mutex_t mutex;	/* guards everything below */
	int64_t hold_ms;	/* an entry's life after its last use */
	unsigned count;		/* entries in all buckets */
	struct append_end *buckets[BUCKETS];
};

struct mds_appends *mds_appends_new(int64_t hold_ms)
{
	struct mds_appends *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (pthread_mutex_init(&t->mutex, NULL)) {
		free(t);
		return NULL;
	}
	t->hold_ms = hold_ms;
	return t;
}

void mds_appends_free(struct mds_appends *t)
{
	if (!t)
		return;
	for (int b = 0; b < BUCKETS; b++) {
		while (t->buckets[b]) {
			struct append_end *e = t->buckets[b];

			t->buckets[b] = e->next;
			free(e);
		}
	}
	pthread_mutex_destroy(&t->mutex);
	free(t);
}

static struct append_end **bucket_of(struct mds_appends *t, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull;

	return &t->buckets[(h >> 32) & (BUCKETS - 1)];
}

/* Drop the expired entries of one bucket (all of them when all). */
static void prune(struct mds_appends *t, struct append_end **pp,
		  int64_t now_ms, bool all)
{
	while (*pp) {
		struct append_end *e = *pp;

		if (all || now_ms - e->last_ms >= t->hold_ms) {
			*pp = e->next;
			free(e);
			t->count--;
		} else {
			pp = &e->next;
		}
	}
}

static struct append_end *find(struct append_end *e, uint64_t ino)
{
	while (e && e->ino != ino)
		e = e->next;
	return e;
}

/* A new entry for ino in bucket pp (count checked), or an errno. */
static int add(struct mds_appends *t, struct append_end **pp, uint64_t ino,
	       int64_t now_ms, struct append_end **out)
{
	struct append_end *e;

	if (t->count >= MDS_APPENDS_MAX) {
		for (int b = 0; b < BUCKETS; b++)
			prune(t, &t->buckets[b], now_ms, false);
		if (t->count >= MDS_APPENDS_MAX)
			return clf_fail(EAGAIN,
					"metad: appends to %u files within %lld ms: no room for another",
					t->count, (long long)t->hold_ms);
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return clf_fail(ENOMEM, "metad: out of memory for an append");
	e->ino = ino;
	e->next = *pp;
	*pp = e;
	t->count++;
	*out = e;
	return 0;
}

int mds_appends_reserve(struct mds_appends *t, uint64_t ino, int64_t at,
			int64_t length, bool exact, int64_t now_ms,
			int64_t *offset)
{
	struct append_end **pp = bucket_of(t, ino), *e;
	int64_t off;
	int err = 0;

	pthread_mutex_lock(&t->mutex);
	prune(t, pp, now_ms, false);
	e = find(*pp, ino);
	off = e && e->end > at ? e->end : at;
	if (exact && off != at)
		goto out;
	if ((uint64_t)length > CLF_PROTO_LOCK_OFFSET_MAX - (uint64_t)off) {
		err = clf_fail(EFBIG, "metad: an append of %lld bytes at %lld would pass the largest offset",
			       (long long)length, (long long)off);
		goto out;
	}
	if (length == 0) {
		err = 1;
		goto out;
	}
	if (!e)
		err = add(t, pp, ino, now_ms, &e);
	if (!err) {
		e->end = off + length;
		e->last_ms = now_ms;
		err = 1;
	}
out:
	pthread_mutex_unlock(&t->mutex);
	if (err >= 0)
		*offset = off;
	return err;
}

void mds_appends_forget(struct mds_appends *t, uint64_t ino)
{
	struct append_end **pp = bucket_of(t, ino);

	pthread_mutex_lock(&t->mutex);
	while (*pp && (*pp)->ino != ino)
		pp = &(*pp)->next;
	if (*pp) {
		struct append_end *e = *pp;

		*pp = e->next;
		free(e);
		t->count--;
	}
	pthread_mutex_unlock(&t->mutex);
}

unsigned mds_appends_count(struct mds_appends *t)
{
	unsigned n;

	pthread_mutex_lock(&t->mutex);
	n = t->count;
	pthread_mutex_unlock(&t->mutex);
	return n;
}
