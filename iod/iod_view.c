// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_view.c -- the view registry: handles, owners, limits.
 *
 * Two hash tables under one mutex: views by handle, and owner records
 * (each with the list of its views and their number, for the per-owner
 * limit and for dropping a connection in time proportional to its views).
 * The mapping is built before taking the mutex: it is the expensive part
 * and needs no shared state.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "iod_view.h"

struct iod_owner {
	uint64_t id;		   /* connection id */
	unsigned nviews;	   /* views in the list */
	struct iod_view *views;	   /* the owner's views, newest first */
	struct iod_owner *next;	   /* hash chain */
};

#define OWNER_BUCKETS 256u

struct iod_views {
	/* Immutable after creation. */
	struct iod_view_limits lim;
	size_t nbuckets;		 /* of handles, a power of two */

	pthread_mutex_t mutex;
	/* Protected by mutex. */
	struct iod_view **handles;	 /* owned array of hash chains */
	struct iod_owner *owners[OWNER_BUCKETS]; /* owned records */
	unsigned count;			 /* views registered */
	uint32_t next_handle;		 /* where the handle search starts */
};

int iod_views_create(const struct iod_view_limits *limits,
		     struct iod_views **out)
{
	struct iod_views *reg = calloc(1, sizeof(*reg));
	int err;

	if (!reg)
		return clf_fail(ENOMEM, "iod: out of memory");
	if (limits)
		reg->lim = *limits;
	if (!reg->lim.max_per_owner)
		reg->lim.max_per_owner = IOD_VIEWS_PER_OWNER_DEFAULT;
	if (!reg->lim.max_total)
		reg->lim.max_total = IOD_VIEWS_TOTAL_DEFAULT;
	reg->nbuckets = 256;
	while (reg->nbuckets < reg->lim.max_total / 4 &&
	       reg->nbuckets < 65536)
		reg->nbuckets *= 2;
	reg->handles = calloc(reg->nbuckets, sizeof(*reg->handles));
	if (!reg->handles) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto free_reg;
	}
	err = -pthread_mutex_init(&reg->mutex, NULL);
	if (err) {
		clf_fail_neg(err, "iod: cannot create a mutex: %s",
			     strerror(-err));
		goto free_handles;
	}
	reg->next_handle = 1;
	*out = reg;
	return 0;

free_handles:
	free(reg->handles);
free_reg:
	free(reg);
	return err;
}

void iod_view_put(struct iod_view *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	CLF_Mapping_free(v->map);
	free(v);
}

void iod_views_free(struct iod_views *reg)
{
	if (!reg)
		return;
	for (size_t b = 0; b < reg->nbuckets; b++) {
		struct iod_view *v = reg->handles[b];

		while (v) {
			struct iod_view *next = v->hnext;

			v->own = NULL;
			iod_view_put(v);
			v = next;
		}
	}
	for (size_t b = 0; b < OWNER_BUCKETS; b++) {
		struct iod_owner *o = reg->owners[b];

		while (o) {
			struct iod_owner *next = o->next;

			free(o);
			o = next;
		}
	}
	pthread_mutex_destroy(&reg->mutex);
	free(reg->handles);
	free(reg);
}

static struct iod_view **handle_slot(struct iod_views *reg, uint32_t handle)
{
	struct iod_view **pp = &reg->handles[(handle * 2654435761u) &
					     (reg->nbuckets - 1)];

	while (*pp && (*pp)->handle != handle)
		pp = &(*pp)->hnext;
	return pp;
}

static struct iod_owner **owner_slot(struct iod_views *reg, uint64_t id)
{
	struct iod_owner **pp =
		&reg->owners[(id * 0x9e3779b97f4a7c15ull) >> 56];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

/* A handle not in use; there is one, as count < max_total < 2^32 - 1. */
static uint32_t new_handle(struct iod_views *reg)
{
	uint32_t h;

	do {
		h = reg->next_handle++;
	} while (h == 0 || *handle_slot(reg, h));
	return h;
}

/* Insert v for its owner, within the limits; mutex held. */
static int insert(struct iod_views *reg, struct iod_view *v)
{
	struct iod_owner **op = owner_slot(reg, v->owner), *o = *op;

	if (reg->count >= reg->lim.max_total)
		return clf_fail(ENFILE,
				"iod: cannot register a view: the iod holds %u views, its limit",
				reg->lim.max_total);
	if (o && o->nviews >= reg->lim.max_per_owner)
		return clf_fail(EMFILE,
				"iod: cannot register a view: connection %" PRIu64 " holds %u views, the limit per connection",
				v->owner, reg->lim.max_per_owner);
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return clf_fail(ENOMEM, "iod: out of memory");
		o->id = v->owner;
		*op = o;
	}
	v->handle = new_handle(reg);
	*handle_slot(reg, v->handle) = v;
	v->own = o;
	v->onext = o->views;
	if (o->views)
		o->views->oprev = &v->onext;
	v->oprev = &o->views;
	o->views = v;
	o->nviews++;
	reg->count++;
	return 0;
}

int iod_view_register(struct iod_views *reg, uint64_t file, uint32_t subfile,
		      CLF_Datatype view, int64_t view_disp, CLF_Datatype sub,
		      int64_t sub_disp, uint64_t owner, uint32_t *handle)
{
	struct iod_view *v;
	CLF_Mapping *m;
	int err;

	err = CLF_Mapping_create(view, view_disp, sub, sub_disp, &m);
	if (err) {
		char why[256];

		snprintf(why, sizeof(why), "%s", CLF_Last_error());
		return clf_fail_neg(err,
				    "iod: cannot register a view of subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
				    subfile, file, why);
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto free_map;
	}
	v->owner = owner;
	v->file = file;
	v->subfile = subfile;
	v->map = m;
	atomic_init(&v->refs, 1);
	pthread_mutex_lock(&reg->mutex);
	err = insert(reg, v);
	if (!err)
		*handle = v->handle;
	pthread_mutex_unlock(&reg->mutex);
	if (err)
		goto free_view;
	return 0;

free_view:
	free(v);
free_map:
	CLF_Mapping_free(m);
	return err;
}

int iod_view_lookup(struct iod_views *reg, uint32_t handle, uint64_t owner,
		    struct iod_view **out)
{
	struct iod_view *v;
	int err = 0;

	pthread_mutex_lock(&reg->mutex);
	v = *handle_slot(reg, handle);
	if (v && v->owner == owner) {
		atomic_fetch_add(&v->refs, 1);
		*out = v;
	} else {
		err = clf_fail(EBADF,
			       "iod: connection %" PRIu64 " has no view %" PRIu32,
			       owner, handle);
	}
	pthread_mutex_unlock(&reg->mutex);
	return err;
}

/* Take v out of both tables; mutex held.  The caller puts it. */
static void detach(struct iod_views *reg, struct iod_view *v)
{
	struct iod_owner *o = v->own;

	*handle_slot(reg, v->handle) = v->hnext;
	v->hnext = NULL;
	*v->oprev = v->onext;
	if (v->onext)
		v->onext->oprev = v->oprev;
	v->own = NULL;
	reg->count--;
	if (--o->nviews == 0) {
		*owner_slot(reg, o->id) = o->next;
		free(o);
	}
}

int iod_view_release(struct iod_views *reg, uint32_t handle, uint64_t owner)
{
	struct iod_view *v;
	int err = 0;

	pthread_mutex_lock(&reg->mutex);
	v = *handle_slot(reg, handle);
	if (v && v->owner == owner)
		detach(reg, v);
	else
		err = clf_fail(EBADF,
			       "iod: connection %" PRIu64 " has no view %" PRIu32 " to release",
			       owner, handle);
	pthread_mutex_unlock(&reg->mutex);
	if (!err)
		iod_view_put(v);
	return err;
}

int iod_view_release_owner(struct iod_views *reg, uint64_t owner)
{
	struct iod_view *gone = NULL;
	struct iod_owner *o;
	int n = 0;

	pthread_mutex_lock(&reg->mutex);
	o = *owner_slot(reg, owner);
	while (o) {
		struct iod_view *v = o->views;
		int last = o->nviews == 1;

		detach(reg, v);		/* frees o with its last view */
		v->onext = gone;
		gone = v;
		n++;
		if (last)
			o = NULL;
	}
	pthread_mutex_unlock(&reg->mutex);
	while (gone) {
		struct iod_view *next = gone->onext;

		iod_view_put(gone);
		gone = next;
	}
	return n;
}

unsigned iod_views_count(struct iod_views *reg)
{
	unsigned n;

	pthread_mutex_lock(&reg->mutex);
	n = reg->count;
	pthread_mutex_unlock(&reg->mutex);
	return n;
}
