// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * view_cache.c -- the views a file had, kept with their mappings and iod
 * registrations for when they come back.
 *
 * Libraries above MPI-IO set a view for every access (PnetCDF's
 * independent mode: a view, a few bytes, the byte view again).  Setting
 * a view costs its mapping onto every subfile and, at the first access,
 * one registration per iod; dropping it costs a release per iod.  So a
 * view that is replaced is parked here instead -- keyed by its
 * displacement and its encoded type, the exact description the iods
 * were sent -- and setting an equal view again takes it back, mapping and
 * handles included: no round trip, no recomputation.  The cache holds
 * CLF_VIEW_CACHE views per file; the least recently used one is released
 * when a new one needs its place, and all of them at close or when the
 * layout changes.
 */
#include <errno.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "error.h"

int clf_view_key(CLF_Datatype type, uint8_t **key, uint32_t *len)
{
	int64_t n = CLF_Type_encode(type, NULL, 0);
	uint8_t *buf;

	if (n < 0)
		return (int)n;
	buf = malloc(n);
	if (!buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	CLF_Type_encode(type, buf, n);
	*key = buf;
	*len = (uint32_t)n;
	return 0;
}

static bool same_view(int64_t disp, const uint8_t *key, uint32_t len,
		      int64_t disp2, const uint8_t *key2, uint32_t len2)
{
	return disp == disp2 && len == len2 && memcmp(key, key2, len) == 0;
}

/* Exchange f's current view with slot s. */
static void swap_current(struct clf_file *f, struct clf_view_slot *s)
{
	struct clf_view_slot cur = {
		.disp = f->view_disp,
		.type = f->view_type,
		.key = f->view_key,
		.key_len = f->view_key_len,
		.view = f->view,
		.handles = f->handles,
		.handle_gen = f->handle_gen,
	};

	f->view_disp = s->disp;
	f->view_type = s->type;
	f->view_key = s->key;
	f->view_key_len = s->key_len;
	f->view = s->view;
	f->handles = s->handles;
	f->handle_gen = s->handle_gen;
	*s = cur;
	s->used = ++f->view_clock;
}

/* Release slot s's registrations and free it (empty afterwards). */
static void slot_clear(struct clf_file *f, struct clf_view_slot *s)
{
	if (!s->key)
		return;
	clf_views_release(f->layout, s->handles, s->handle_gen);
	clf_viewmap_free(s->view);
	CLF_Type_free(&s->type);
	free(s->key);
	free(s->handles);
	free(s->handle_gen);
	memset(s, 0, sizeof(*s));
}

void clf_view_cache_clear(struct clf_file *f)
{
	for (int i = 0; i < CLF_VIEW_CACHE; i++)
		slot_clear(f, &f->view_cache[i]);
}

/* An empty slot, or the least recently used one, emptied. */
static struct clf_view_slot *slot_for_new(struct clf_file *f)
{
	struct clf_view_slot *lru = &f->view_cache[0];

	for (int i = 0; i < CLF_VIEW_CACHE; i++) {
		struct clf_view_slot *s = &f->view_cache[i];

		if (!s->key)
			return s;
		if (s->used < lru->used)
			lru = s;
	}
	slot_clear(f, lru);
	return lru;
}

int clf_view_cache_switch(struct clf_file *f, int64_t disp, CLF_Datatype type)
{
	struct clf_view_slot fresh = { .disp = disp };
	struct clf_view_slot *s;
	int nsub = f->layout->nsub;
	int err;

	err = clf_view_key(type, &fresh.key, &fresh.key_len);
	if (!err && !f->view_key)
		err = clf_view_key(f->view_type, &f->view_key,
				   &f->view_key_len);
	if (err)
		goto free_key;
	if (same_view(disp, fresh.key, fresh.key_len, f->view_disp,
		      f->view_key, f->view_key_len))
		goto free_key;	/* already the view */
	for (int i = 0; i < CLF_VIEW_CACHE; i++) {
		s = &f->view_cache[i];
		if (s->key && same_view(disp, fresh.key, fresh.key_len,
					 s->disp, s->key, s->key_len)) {
			swap_current(f, s);
			goto free_key;
		}
	}
	/* Its mapping is made at the first access that needs it (io.c). */
	fresh.handles = calloc(nsub, sizeof(*fresh.handles));
	fresh.handle_gen = calloc(nsub, sizeof(*fresh.handle_gen));
	if (!fresh.handles || !fresh.handle_gen) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto free_fresh;
	}
	fresh.type = CLF_Type_dup(type);
	/* The current view is parked; the new one takes its place. */
	s = slot_for_new(f);
	*s = fresh;
	swap_current(f, s);
	return 0;

free_fresh:
	free(fresh.handles);
	free(fresh.handle_gen);
free_key:
	free(fresh.key);
	return err;
}

static int enc_u32(struct wire_writer *w, const void *m)
{
	return clf_proto_u32_encode(w, m);
}

void clf_views_release(const struct clf_layout *l, uint32_t *handles,
		       uint64_t *gen)
{
	struct clf_client *cl = clf_client_instance;

	for (int j = 0; l && gen && j < l->nsub; j++) {
		/* The lane whose connection the handle is of. */
		struct clf_peer *p = clf_client_iod_of_gen(cl, l->iods[j],
							   gen[j]);
		struct clf_proto_u32 req = { handles[j] };
		struct iovec iov;
		void *body, *reply;
		uint32_t rlen;
		uint64_t id;
		size_t len;

		/* None: the handle died with an older connection.  A lane
		 * not connected now lost the handle's connection: locking
		 * it would connect it only to find the generation moved. */
		if (!gen[j] || !p || !clf_peer_connected(p)) {
			gen[j] = 0;
			continue;
		}
		/*
		 * Checked under the lock, which may have reconnected the
		 * lane: the handle is released on the connection it is
		 * of, never on its successor; a failure leaves nothing to
		 * redo (the view dies with its connection).
		 */
		if (clf_encode(enc_u32, &req, &body, &len) == 0) {
			iov = (struct iovec){ body, len };
			if (clf_peer_lock(p) == 0) {
				if (gen[j] == p->generation &&
				    clf_peer_send(p, CLF_PROTO_OP_VIEW_RELEASE,
						  &iov, 1, &id) == 0 &&
				    clf_peer_recv(p, CLF_PROTO_OP_VIEW_RELEASE,
						  id, &reply, &rlen) == 0)
					free(reply);
				clf_peer_unlock(p);
			}
			free(body);
		}
		gen[j] = 0;
	}
}

void clf_file_release_views(struct clf_file *f)
{
	clf_views_release(f->layout, f->handles, f->handle_gen);
}
