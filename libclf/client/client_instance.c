// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_instance.c -- the client of this process (CLF_init makes it,
 * client_init.c) and its iods: the bottom of the client layer, which
 * every other client file may call and which calls none of them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "error.h"

struct clf_client *clf_client_instance;

int clf_client_get(struct clf_client **out)
{
	if (!clf_client_instance)
		return clf_fail(EINVAL, "clf: CLF_init() has not been called");
	*out = clf_client_instance;
	return 0;
}

unsigned clf_client_take_lane(struct clf_client *cl)
{
	unsigned best = 0, least = UINT_MAX;

	/*
	 * The first of the least used: a process with one file open at a
	 * time keeps using lane 0, whose connections are made already.
	 * Racy counts at worst put two files on one lane: still correct.
	 */
	for (unsigned lane = 0; lane < cl->lanes && least; lane++) {
		unsigned n = atomic_load(&cl->lane_files[lane]);

		if (n < least) {
			least = n;
			best = lane;
		}
	}
	atomic_fetch_add(&cl->lane_files[best], 1);
	return best;
}

void clf_client_give_lane(struct clf_client *cl, unsigned lane)
{
	atomic_fetch_sub(&cl->lane_files[lane % cl->lanes], 1);
}

void clf_peer_init(struct clf_peer *p, const struct clf_config_daemon *d,
		      enum clf_error_kind kind, uint32_t index)
{
	pthread_mutex_init(&p->lock, NULL);
	p->d = d;
	p->src = (struct clf_error_source){ .kind = kind, .index = index };
	snprintf(p->src.addr, sizeof(p->src.addr), "%s", d->addr);
	p->conn = NULL;
	p->generation = 0;
}

void clf_client_iod_peers_init(struct clf_client *cl, uint32_t i,
			   const struct clf_config_daemon *d)
{
	for (unsigned k = 0; k < cl->lanes; k++) {
		struct clf_peer *p = &cl->iods[i * cl->lanes + k];

		clf_peer_init(p, d, CLF_ERROR_IOD, i);
		p->connecting = &cl->iod_connecting[i];
	}
}

int clf_client_iod_join(struct clf_client *cl, uint32_t i)
{
	uint32_t base = cl->cfg->niods, n;
	struct clf_config *now = NULL;
	int err = 0;

	if (i >= base + CLF_CLIENT_IOD_SPARE || !cl->reread)
		return clf_fail(EINVAL, "clf: the layout names iod %u, the configuration has %u",
				i, base);
	pthread_mutex_lock(&cl->joining);
	n = atomic_load(&cl->niods);
	if (i >= n)
		err = cl->reread(cl, &now);
	for (; !err && n <= i && n < now->niods; n++) {
		struct clf_config_daemon *d = &cl->joined[n - base];

		d->addr = strdup(now->iods[n].addr);
		if (!d->addr) {
			err = clf_fail(ENOMEM, "clf: out of memory");
			break;
		}
		clf_client_iod_peers_init(cl, n, d);
		atomic_store(&cl->niods, n + 1);
	}
	if (!err && i >= n)
		err = clf_fail(EINVAL, "clf: the layout names iod %u, %s has %u",
			       i, cl->cfg->source ? cl->cfg->source
						  : cl->cfg->metad.addr, n);
	pthread_mutex_unlock(&cl->joining);
	clf_config_free(now);
	return err;
}

struct clf_peer *clf_client_iod_lane(struct clf_client *cl, uint32_t i,
				     unsigned lane)
{
	if (i >= atomic_load(&cl->niods) && clf_client_iod_join(cl, i))
		return NULL;
	return &cl->iods[(size_t)i * cl->lanes + lane % cl->lanes];
}

/* This thread's lane for calls on no file, taken at its first; +1. */
static __thread unsigned thread_lane;

void clf_client_follow_lane(unsigned lane)
{
	thread_lane = lane + 1;
}

struct clf_peer *clf_client_iod_of_gen(struct clf_client *cl, uint32_t i,
				       uint64_t gen)
{
	for (unsigned k = 0; gen && i < atomic_load(&cl->niods) &&
			     k < cl->lanes; k++)
		if (__atomic_load_n(&cl->iods[(size_t)i * cl->lanes + k]
					    .generation, __ATOMIC_RELAXED) == gen)
			return &cl->iods[(size_t)i * cl->lanes + k];
	return NULL;
}

struct clf_peer *clf_client_iod(struct clf_client *cl, uint32_t i)
{
	if (!thread_lane)
		thread_lane = atomic_fetch_add(&cl->next_thread_lane, 1) %
			      cl->lanes + 1;
	return clf_client_iod_lane(cl, i, thread_lane - 1);
}
