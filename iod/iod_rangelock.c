// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_rangelock.c -- byte-range locks on one subfile (see the header for
 * the rules).
 *
 * The requests of one lock form one list in arrival order, granted and
 * waiting alike; a request may go once no request before it overlaps it.
 * The list holds only the requests in flight on one subfile -- a handful
 * -- so a linear scan beats anything cleverer.
 */
#include <errno.h>
#include <stdbool.h>

#include "daemon.h"
#include "iod_rangelock.h"

int iod_rangelock_init(struct iod_rangelock *rl)
{
	int err;

	err = pthread_mutex_init(&rl->mutex, NULL);
	if (err)
		return -err;
	err = pthread_cond_init(&rl->cond, NULL);
	if (err) {
		pthread_mutex_destroy(&rl->mutex);
		return -err;
	}
	rl->head = NULL;
	rl->tail = &rl->head;
	return 0;
}

void iod_rangelock_destroy(struct iod_rangelock *rl)
{
	pthread_cond_destroy(&rl->cond);
	pthread_mutex_destroy(&rl->mutex);
}

static bool overlap(const struct iod_range *a, const struct iod_range *b)
{
	return a->lo < b->hi && b->lo < a->hi;
}

/* Does a request before r (or any request, r == NULL) overlap [lo, hi)? */
static bool blocked(const struct iod_rangelock *rl, const struct iod_range *r,
		    const struct iod_range *want)
{
	for (const struct iod_range *p = rl->head; p && p != r; p = p->next)
		if (overlap(p, want))
			return true;
	return false;
}

static void append(struct iod_rangelock *rl, struct iod_range *r, int64_t lo,
		   int64_t hi)
{
	r->lo = lo;
	r->hi = hi;
	r->next = NULL;
	*rl->tail = r;
	rl->tail = &r->next;
}

void iod_rangelock_lock(struct iod_rangelock *rl, struct iod_range *r,
			int64_t lo, int64_t hi)
{
	pthread_mutex_lock(&rl->mutex);
	append(rl, r, lo, hi);
	if (blocked(rl, r, r)) {
		/* The holder may need a worker to finish (daemon.h). */
		clf_daemon_wait_begin();
		while (blocked(rl, r, r))
			pthread_cond_wait(&rl->cond, &rl->mutex);
		clf_daemon_wait_end();
	}
	pthread_mutex_unlock(&rl->mutex);
}

int iod_rangelock_trylock(struct iod_rangelock *rl, struct iod_range *r,
			  int64_t lo, int64_t hi)
{
	struct iod_range want = { .lo = lo, .hi = hi };
	int ret = -EBUSY;

	pthread_mutex_lock(&rl->mutex);
	if (!blocked(rl, NULL, &want)) {
		append(rl, r, lo, hi);
		ret = 0;
	}
	pthread_mutex_unlock(&rl->mutex);
	return ret;
}

void iod_rangelock_unlock(struct iod_rangelock *rl, struct iod_range *r)
{
	struct iod_range **pp;

	pthread_mutex_lock(&rl->mutex);
	for (pp = &rl->head; *pp != r; pp = &(*pp)->next)
		;
	*pp = r->next;
	if (rl->tail == &r->next)
		rl->tail = pp;
	pthread_cond_broadcast(&rl->cond);
	pthread_mutex_unlock(&rl->mutex);
}
