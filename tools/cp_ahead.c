// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cp_ahead.c -- a clf file read sequentially with reads in flight ahead of
 * the one the caller takes, for clf cp (and stage-out) from clf.
 *
 * Over a long link one read call at a time leaves the link badly used at
 * the end of each call: the call ends when the slowest iod's connection
 * has delivered its share, and the connections that finished first sit
 * idle meanwhile (with several TCP flows sharing a link, one lags behind
 * most of the time); then nothing is asked while the caller writes the
 * bytes out.  Reads measured 54-69% of an emulated 100 Mbit/s, 50 ms link
 * (docs/performance.md).  Here readers threads each read whole chunks at
 * their own offsets into a ring of buffers, so that the next chunk's
 * requests are in flight while one drains and the caller writes the one
 * before; the caller takes the chunks in file order.
 *
 * Each reader opens the file itself: an access holds its lane's
 * connections from its first request to its last reply (client.h), so
 * readers sharing one descriptor -- one lane -- took turns and gained
 * nothing (the first try of this, which measured no gain).  With a
 * descriptor each, on lanes of their own (the caller asks for as many
 * connections per iod as readers before CLF_init), their requests are
 * truly in flight at once.  A reader stops at the first short read (the
 * end of the file, as the size was when it read).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "cp_ahead.h"

struct ahead_slot {
	char *buf;
	int64_t off;		/* file offset of the chunk */
	int64_t n;		/* bytes read, or a negative errno */
	char msg[256];		/* the failure's CLF_Last_error() */
	bool full;		/* read, not yet taken */
};

struct cp_ahead {
	const char *path;	/* the clf file, borrowed */
	int64_t start, chunk;
	int nslots;
	struct ahead_slot *slot;
	pthread_t *threads;
	int nthreads;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int64_t next;		/* the next chunk index a reader takes */
	int64_t taken;		/* chunks the caller has taken */
	int64_t released;	/* chunks whose slots are free again */
	int64_t end_chunk;	/* the first chunk past the end; -1: unknown */
	bool stop;
	CLF_Datatype type;	/* chunk bytes */
};

static bool ahead_past_end(const struct cp_ahead *a, int64_t i)
{
	return a->end_chunk >= 0 && i >= a->end_chunk;
}

/* A reader's failure to open the file, as a slot's result: the caller
 * takes it in place of the first chunk this reader would have read. */
static void ahead_open_failed(struct cp_ahead *a, int err)
{
	pthread_mutex_lock(&a->lock);
	while (!a->stop && !ahead_past_end(a, a->next) &&
	       a->next >= a->released + a->nslots)
		pthread_cond_wait(&a->cond, &a->lock);
	if (!a->stop && !ahead_past_end(a, a->next)) {
		struct ahead_slot *s = &a->slot[a->next % a->nslots];

		s->n = err;
		snprintf(s->msg, sizeof(s->msg), "%s", CLF_Last_error());
		s->full = true;
		a->end_chunk = ++a->next;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
}

static void *ahead_reader(void *arg)
{
	struct cp_ahead *a = arg;
	int fd = CLF_open(a->path, O_RDONLY);

	if (fd < 0) {
		ahead_open_failed(a, fd);
		return NULL;
	}
	pthread_mutex_lock(&a->lock);
	for (;;) {
		int64_t i;
		struct ahead_slot *s;
		ssize_t n;

		/* A chunk to read: its slot released, and not past the end. */
		while (!a->stop && !ahead_past_end(a, a->next) &&
		       a->next >= a->released + a->nslots)
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stop || ahead_past_end(a, a->next))
			break;
		i = a->next++;
		s = &a->slot[i % a->nslots];
		pthread_mutex_unlock(&a->lock);

		n = CLF_ncread_at(fd, a->start + i * a->chunk, s->buf, a->type);

		pthread_mutex_lock(&a->lock);
		s->off = a->start + i * a->chunk;
		s->n = n;
		if (n < 0)
			snprintf(s->msg, sizeof(s->msg), "%s", CLF_Last_error());
		s->full = true;
		/* A short read ends the file here: no reader goes past. */
		if (n < a->chunk && (a->end_chunk < 0 || i + 1 < a->end_chunk))
			a->end_chunk = i + 1;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	CLF_close(fd);
	return NULL;
}

void cp_ahead_stop(struct cp_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	for (int t = 0; t < a->nthreads; t++)
		pthread_join(a->threads[t], NULL);
	for (int k = 0; k < a->nslots; k++)
		free(a->slot[k].buf);
	CLF_Type_free(&a->type);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a->slot);
	free(a->threads);
	free(a);
}

struct cp_ahead *cp_ahead_start(const char *path, int64_t start, int64_t chunk,
				int readers)
{
	struct cp_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->path = path;
	a->start = start;
	a->chunk = chunk;
	/* One with the caller, one per reader, and one more: a reader done
	 * with its chunk goes on while another finishes its slowest iod's
	 * share (with readers + 1 the link ran at that one connection's
	 * rate for a second at a time). */
	a->nslots = readers + 2;
	a->end_chunk = -1;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	a->slot = calloc(a->nslots, sizeof(*a->slot));
	a->threads = calloc(readers, sizeof(*a->threads));
	a->type = CLF_Type_vector(0, chunk - 1, chunk, 1, CLF_BYTE);
	if (!a->slot || !a->threads || !a->type)
		goto fail;
	for (int k = 0; k < a->nslots; k++)
		if (!(a->slot[k].buf = malloc(chunk)))
			goto fail;
	for (; a->nthreads < readers; a->nthreads++)
		if (pthread_create(&a->threads[a->nthreads], NULL, ahead_reader, a))
			break;
	if (a->nthreads == 0)
		goto fail;
	return a;
fail:
	cp_ahead_stop(a);
	return NULL;
}

int64_t cp_ahead_take(struct cp_ahead *a, const char **buf, char *msg, size_t msglen)
{
	struct ahead_slot *s;
	int64_t n;

	pthread_mutex_lock(&a->lock);
	/* The chunk taken before this one is the caller's no more. */
	if (a->released < a->taken) {
		a->slot[a->released % a->nslots].full = false;
		a->released = a->taken;
		pthread_cond_broadcast(&a->cond);
	}
	s = &a->slot[a->taken % a->nslots];
	while (!s->full && !ahead_past_end(a, a->taken))
		pthread_cond_wait(&a->cond, &a->lock);
	if (!s->full) {
		pthread_mutex_unlock(&a->lock);
		return 0;
	}
	n = s->n;
	if (n < 0)
		snprintf(msg, msglen, "%s", s->msg);
	*buf = s->buf;
	a->taken++;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return n;
}
