// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_view.c -- the view registry: handles, owners, limits.
 *
 * Hash tables (hash.h) under one mutex: views by handle, and owner records
 * (each with the list of its views and their number, for the per-owner
 * limit and for dropping a connection in time proportional to its views).
 * The mapping is built before taking the mutex: it is the expensive part
 * and needs no shared state.  Each view is charged its bytes in the pool
 * (iod_share.h) on insertion and gives them back on detaching.  A third table keeps mappings by the key
 * the client sent (iod_view.h), each with a count of the views using it;
 * unused ones stay, the oldest going first, up to IOD_VIEW_MAPS_KEPT.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "iod_view.h"
#include "mapping_mem.h"

/* What a client is charged: one owner's views, or several owners'. */
struct iod_account {
	uint64_t client;	   /* iod_views_bind's, or the owner id */
	unsigned owners;	   /* owner records charging it */
	size_t bytes;		   /* charged, in the pool */
	struct clf_hnode hn;	   /* in accounts, by client */
};

/* An owner bound to an account by iod_views_bind. */
struct iod_binding {
	uint64_t owner, client;
	struct clf_hnode hn;	   /* in bindings, by owner */
};

struct iod_owner {
	uint64_t id;		   /* connection id */
	unsigned nviews;	   /* views in the list */
	size_t bytes;		   /* charged for them, in the pool */
	struct iod_account *acct;  /* where they are charged */
	struct iod_view *views;	   /* the owner's views, newest first */
	struct clf_hnode hn;	   /* in owners, by id */
};

#define OWNER_BUCKETS 256u
#define MAP_BUCKETS 1024u

/* A mapping shared by the views registered with equal keys. */
struct iod_map {
	struct clf_hnode hn;	   /* in maps, by the key's hash */
	int64_t view_disp, sub_disp;
	uint8_t *keys;		   /* owned: view then sub encoding */
	uint32_t view_len, sub_len;
	CLF_Mapping *map;	   /* owned */
	size_t bytes;		   /* map, keys and this record */
	atomic_uint refs;	   /* views using it, +1 while in the table */
	/* Protected by the registry mutex. */
	unsigned users;		   /* views registered with it */
	bool listed;		   /* in the table */
	uint64_t idle_since;	   /* registry clock when users fell to 0 */
};

struct iod_views {
	/* Immutable after creation. */
	struct iod_view_limits lim;

	pthread_mutex_t mutex;
	/* Protected by mutex. */
	struct clf_htable handles;	 /* iod_views, by handle */
	struct clf_htable owners;	 /* owned iod_owners, by id */
	struct clf_htable accounts;	 /* owned iod_accounts, by client */
	struct clf_htable bindings;	 /* owned iod_bindings, by owner */
	unsigned count;			 /* views registered */
	uint32_t next_handle;		 /* where the handle search starts */
	struct clf_htable maps;		 /* shared iod_maps, by key hash */
	unsigned nmaps, idle_maps;	 /* in the table; of them unused */
	size_t idle_bytes;		 /* of the unused ones */
	size_t idle_max;		 /* bound of idle_bytes */
	struct iod_pool pool;		 /* bytes charged to owners */
	uint64_t clock;			 /* ticks at each release of a map */
};

static void release_tables(struct iod_views *reg)
{
	clf_htable_release(&reg->handles);
	clf_htable_release(&reg->owners);
	clf_htable_release(&reg->accounts);
	clf_htable_release(&reg->bindings);
	clf_htable_release(&reg->maps);
}

int iod_views_create(const struct iod_view_limits *limits,
		     struct iod_views **out)
{
	struct iod_views *reg = calloc(1, sizeof(*reg));
	size_t nbuckets;
	int err;

	if (!reg)
		return clf_fail(ENOMEM, "iod: out of memory");
	if (limits)
		reg->lim = *limits;
	if (!reg->lim.memory)
		reg->lim.memory = IOD_VIEW_MEMORY_DEFAULT;
	if (!reg->lim.min_share)
		reg->lim.min_share = IOD_VIEW_MIN_SHARE_DEFAULT(reg->lim.memory);
	iod_pool_init(&reg->pool, "view registrations", "iod_view_memory",
		      reg->lim.memory, reg->lim.min_share);
	reg->idle_max = reg->lim.memory / IOD_VIEW_KEPT_PART;
	/* A view costs 1 KiB at least: a chain of 4 at the limit. */
	nbuckets = 256;
	while (nbuckets < reg->lim.memory / 4096 && nbuckets < 65536)
		nbuckets *= 2;
	if (clf_htable_init(&reg->handles, nbuckets, nbuckets) ||
	    clf_htable_init(&reg->owners, OWNER_BUCKETS, OWNER_BUCKETS) ||
	    clf_htable_init(&reg->accounts, OWNER_BUCKETS, OWNER_BUCKETS) ||
	    clf_htable_init(&reg->bindings, OWNER_BUCKETS, OWNER_BUCKETS) ||
	    clf_htable_init(&reg->maps, MAP_BUCKETS, MAP_BUCKETS)) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto free_tables;
	}
	err = -pthread_mutex_init(&reg->mutex, NULL);
	if (err) {
		clf_fail_neg(err, "iod: cannot create a mutex: %s",
			     strerror(-err));
		goto free_tables;
	}
	reg->next_handle = 1;
	*out = reg;
	return 0;

free_tables:
	release_tables(reg);
	free(reg);
	return err;
}

static void map_put(struct iod_map *m)
{
	if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	CLF_Mapping_free(m->map);
	free(m->keys);
	free(m);
}

void iod_view_put(struct iod_view *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	if (v->shared)
		map_put(v->shared);
	else
		CLF_Mapping_free(v->map);
	free(v);
}

void iod_views_free(struct iod_views *reg)
{
	struct clf_hnode *n, *tmp;
	size_t b;

	if (!reg)
		return;
	clf_htable_for_each(&reg->handles, b, n, tmp) {
		struct iod_view *v = clf_hnode_entry(n, struct iod_view, hn);

		v->own = NULL;
		iod_view_put(v);
	}
	clf_htable_for_each(&reg->owners, b, n, tmp)
		free(clf_hnode_entry(n, struct iod_owner, hn));
	clf_htable_for_each(&reg->accounts, b, n, tmp)
		free(clf_hnode_entry(n, struct iod_account, hn));
	clf_htable_for_each(&reg->bindings, b, n, tmp)
		free(clf_hnode_entry(n, struct iod_binding, hn));
	clf_htable_for_each(&reg->maps, b, n, tmp)
		map_put(clf_hnode_entry(n, struct iod_map, hn));
	pthread_mutex_destroy(&reg->mutex);
	release_tables(reg);
	free(reg);
}

/* The records by their numbers, or NULL; mutex held. */
static struct iod_view *view_find(struct iod_views *reg, uint32_t handle)
{
	struct clf_hnode *n = clf_htable_find(&reg->handles, handle);

	return n ? clf_hnode_entry(n, struct iod_view, hn) : NULL;
}

static struct iod_owner *owner_find(struct iod_views *reg, uint64_t id)
{
	struct clf_hnode *n = clf_htable_find(&reg->owners, id);

	return n ? clf_hnode_entry(n, struct iod_owner, hn) : NULL;
}

static struct iod_binding *binding_find(struct iod_views *reg, uint64_t owner)
{
	struct clf_hnode *n = clf_htable_find(&reg->bindings, owner);

	return n ? clf_hnode_entry(n, struct iod_binding, hn) : NULL;
}

static struct iod_account *account_find(struct iod_views *reg,
					uint64_t client)
{
	struct clf_hnode *n = clf_htable_find(&reg->accounts, client);

	return n ? clf_hnode_entry(n, struct iod_account, hn) : NULL;
}

int iod_views_bind(struct iod_views *reg, uint64_t owner, uint64_t client)
{
	struct iod_binding *b = calloc(1, sizeof(*b)), *old;

	if (!b)
		return clf_fail(ENOMEM, "iod: out of memory");
	b->owner = owner;
	b->client = client;
	pthread_mutex_lock(&reg->mutex);
	old = binding_find(reg, owner);
	if (old) {
		old->client = client;
		free(b);
	} else {
		clf_htable_add(&reg->bindings, &b->hn, owner);
	}
	pthread_mutex_unlock(&reg->mutex);
	return 0;
}

/* The account of a new owner record; mutex held.  NULL: no memory. */
static struct iod_account *account_get(struct iod_views *reg, uint64_t owner)
{
	struct iod_binding *b = binding_find(reg, owner);
	uint64_t client = b ? b->client : owner;
	struct iod_account *a = account_find(reg, client);

	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return NULL;
		a->client = client;
		clf_htable_add(&reg->accounts, &a->hn, client);
	}
	a->owners++;
	return a;
}

/* An owner record goes; mutex held. */
static void account_put(struct iod_views *reg, struct iod_account *a)
{
	if (--a->owners)
		return;
	clf_htable_del(&reg->accounts, &a->hn);
	free(a);
}

/* The account owner would charge now, or NULL if it has none yet. */
static struct iod_account *account_peek(struct iod_views *reg, uint64_t owner)
{
	struct iod_binding *b = binding_find(reg, owner);

	return account_find(reg, b ? b->client : owner);
}

/* A handle not in use; there is one: each view costs over 64 bytes, so
 * fewer than 2^32 - 1 fit in memory. */
static uint32_t new_handle(struct iod_views *reg)
{
	uint32_t h;

	do {
		h = reg->next_handle++;
	} while (h == 0 || view_find(reg, h));
	return h;
}

/* Insert v for its owner, within its share; mutex held. */
static int insert(struct iod_views *reg, struct iod_view *v)
{
	struct iod_owner *o = owner_find(reg, v->owner);
	struct iod_account *a = o ? o->acct : account_peek(reg, v->owner);
	size_t mine = a ? a->bytes : 0;

	/* Refused with the figures, or charged below once o exists. */
	if (!iod_pool_fits(&reg->pool, mine, v->cost))
		return iod_pool_take(&reg->pool, &mine, v->cost);
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (o)
			o->acct = account_get(reg, v->owner);
		if (!o || !o->acct) {
			free(o);
			return clf_fail(ENOMEM, "iod: out of memory");
		}
		o->id = v->owner;
		clf_htable_add(&reg->owners, &o->hn, o->id);
	}
	iod_pool_take(&reg->pool, &o->acct->bytes, v->cost);
	o->bytes += v->cost;
	v->handle = new_handle(reg);
	clf_htable_add(&reg->handles, &v->hn, v->handle);
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

static int make_mapping(uint64_t file, uint32_t subfile, CLF_Datatype view,
			int64_t view_disp, CLF_Datatype sub, int64_t sub_disp,
			CLF_Mapping **out)
{
	int err = CLF_Mapping_create(view, view_disp, sub, sub_disp, out);
	char why[256];

	if (!err)
		return 0;
	snprintf(why, sizeof(why), "%s", CLF_Last_error());
	return clf_fail_neg(err,
			    "iod: cannot register a view of subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
			    subfile, file, why);
}

/* What a view record and its mapping cost (malloc's overhead included). */
static size_t view_cost(size_t map_bytes)
{
	if (map_bytes > SIZE_MAX / 2)
		return SIZE_MAX / 2;	/* refused by any pool */
	return sizeof(struct iod_view) + 16 + map_bytes;
}

/* Insert a view of (file, subfile) for owner, on map m (or shared sm). */
static int add_view(struct iod_views *reg, uint64_t file, uint32_t subfile,
		    CLF_Mapping *m, struct iod_map *sm, uint64_t owner,
		    uint32_t *handle)
{
	struct iod_view *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return clf_fail(ENOMEM, "iod: out of memory");
	v->cost = view_cost(sm ? sm->bytes : clf_mapping_footprint(m));
	v->owner = owner;
	v->file = file;
	v->subfile = subfile;
	v->map = sm ? sm->map : m;
	atomic_init(&v->refs, 1);
	pthread_mutex_lock(&reg->mutex);
	err = insert(reg, v);
	if (!err) {
		*handle = v->handle;
		if (sm) {
			/* The caller's reference on sm is the view's now. */
			v->shared = sm;
			if (sm->users++ == 0 && sm->listed) {
				reg->idle_maps--;
				reg->idle_bytes -= sm->bytes;
			}
		}
	}
	pthread_mutex_unlock(&reg->mutex);
	if (err)
		free(v);
	return err;
}

int iod_view_register(struct iod_views *reg, uint64_t file, uint32_t subfile,
		      CLF_Datatype view, int64_t view_disp, CLF_Datatype sub,
		      int64_t sub_disp, uint64_t owner, uint32_t *handle)
{
	CLF_Mapping *m;
	int err;

	err = make_mapping(file, subfile, view, view_disp, sub, sub_disp, &m);
	if (err)
		return err;
	err = add_view(reg, file, subfile, m, NULL, owner, handle);
	if (err)
		CLF_Mapping_free(m);
	return err;
}

/* ------------------------------------------------------------------ */
/* Shared mappings                                                     */
/* ------------------------------------------------------------------ */

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;	/* FNV-1a */
	return h;
}

static uint64_t key_hash(const struct iod_view_key *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int64_t d[2] = { k->view_disp, k->sub_disp };

	h = hash_bytes(h, d, sizeof(d));
	h = hash_bytes(h, k->view, k->view_len);
	return hash_bytes(h, k->sub, k->sub_len);
}

static bool key_equal(const struct iod_map *m, const struct iod_view_key *k)
{
	return m->view_disp == k->view_disp &&
	       m->sub_disp == k->sub_disp && m->view_len == k->view_len &&
	       m->sub_len == k->sub_len &&
	       !memcmp(m->keys, k->view, k->view_len) &&
	       !memcmp(m->keys + k->view_len, k->sub, k->sub_len);
}

/* The shared mapping of key with a new reference, or NULL; mutex held. */
static struct iod_map *map_find(struct iod_views *reg, uint64_t hash,
				const struct iod_view_key *k)
{
	struct clf_hnode *n = clf_htable_find(&reg->maps, hash);

	for (; n; n = clf_htable_next_key(n)) {
		struct iod_map *m = clf_hnode_entry(n, struct iod_map, hn);

		if (key_equal(m, k)) {
			atomic_fetch_add(&m->refs, 1);
			return m;
		}
	}
	return NULL;
}

/* Drop the oldest unused mappings beyond the bounds; mutex held. */
static void maps_trim(struct iod_views *reg)
{
	while (reg->idle_maps > IOD_VIEW_MAPS_KEPT ||
	       (reg->idle_maps && reg->idle_bytes > reg->idle_max)) {
		struct iod_map *oldest = NULL;
		struct clf_hnode *n, *tmp;
		size_t b;

		clf_htable_for_each(&reg->maps, b, n, tmp) {
			struct iod_map *m = clf_hnode_entry(n, struct iod_map,
							    hn);

			if (!m->users &&
			    (!oldest || m->idle_since < oldest->idle_since))
				oldest = m;
		}
		if (!oldest)
			return;
		clf_htable_del(&reg->maps, &oldest->hn);
		oldest->listed = false;
		reg->nmaps--;
		reg->idle_maps--;
		reg->idle_bytes -= oldest->bytes;
		map_put(oldest);
	}
}

/* A new shared mapping for key, in the table, with a reference for the
 * caller; an equal one inserted meanwhile wins.  Mutex not held. */
static int map_add(struct iod_views *reg, uint64_t hash,
		   const struct iod_view_key *k, CLF_Mapping *map,
		   struct iod_map **out)
{
	struct iod_map *m = calloc(1, sizeof(*m)), *other;

	if (m)
		m->keys = malloc(k->view_len + k->sub_len + 1);
	if (!m || !m->keys) {
		free(m);
		CLF_Mapping_free(map);
		return clf_fail(ENOMEM, "iod: out of memory");
	}
	m->view_disp = k->view_disp;
	m->sub_disp = k->sub_disp;
	m->view_len = k->view_len;
	m->sub_len = k->sub_len;
	memcpy(m->keys, k->view, k->view_len);
	memcpy(m->keys + k->view_len, k->sub, k->sub_len);
	m->map = map;
	m->bytes = clf_mapping_footprint(map);
	m->bytes = m->bytes > SIZE_MAX / 2 ? SIZE_MAX / 2 :
		   m->bytes + sizeof(*m) + k->view_len + k->sub_len + 32;
	atomic_init(&m->refs, 2);	/* the table's and the caller's */
	pthread_mutex_lock(&reg->mutex);
	other = map_find(reg, hash, k);
	if (!other) {
		clf_htable_add(&reg->maps, &m->hn, hash);
		m->listed = true;
		reg->nmaps++;
		reg->idle_maps++;	/* until its view is added */
		reg->idle_bytes += m->bytes;
		m->idle_since = ++reg->clock;
	}
	pthread_mutex_unlock(&reg->mutex);
	if (other) {
		atomic_store(&m->refs, 1);
		map_put(m);
		m = other;
	}
	*out = m;
	return 0;
}

int iod_view_register_keyed(struct iod_views *reg, uint64_t file,
			    uint32_t subfile, const struct iod_view_key *key,
			    CLF_Datatype view, CLF_Datatype sub,
			    uint64_t owner, uint32_t *handle)
{
	uint64_t hash = key_hash(key);
	struct iod_map *sm;
	CLF_Mapping *m;
	int err;

	pthread_mutex_lock(&reg->mutex);
	sm = map_find(reg, hash, key);
	pthread_mutex_unlock(&reg->mutex);
	if (!sm) {
		if (!view || !sub)
			return -ENOENT;
		err = make_mapping(file, subfile, view, key->view_disp, sub,
				   key->sub_disp, &m);
		if (!err)
			err = map_add(reg, hash, key, m, &sm);
		if (err)
			return err;
	}
	err = add_view(reg, file, subfile, NULL, sm, owner, handle);
	pthread_mutex_lock(&reg->mutex);
	maps_trim(reg);
	pthread_mutex_unlock(&reg->mutex);
	if (err)
		map_put(sm);
	return err;
}

unsigned iod_views_maps(struct iod_views *reg)
{
	unsigned n;

	pthread_mutex_lock(&reg->mutex);
	n = reg->nmaps;
	pthread_mutex_unlock(&reg->mutex);
	return n;
}

int iod_view_lookup(struct iod_views *reg, uint32_t handle, uint64_t owner,
		    struct iod_view **out)
{
	struct iod_view *v;
	int err = 0;

	pthread_mutex_lock(&reg->mutex);
	v = view_find(reg, handle);
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

	clf_htable_del(&reg->handles, &v->hn);
	*v->oprev = v->onext;
	if (v->onext)
		v->onext->oprev = v->oprev;
	v->own = NULL;
	reg->count--;
	if (v->shared && --v->shared->users == 0 && v->shared->listed) {
		v->shared->idle_since = ++reg->clock;
		reg->idle_maps++;
		reg->idle_bytes += v->shared->bytes;
	}
	iod_pool_give(&reg->pool, &o->acct->bytes, v->cost);
	o->bytes -= v->cost;
	if (--o->nviews == 0) {
		clf_htable_del(&reg->owners, &o->hn);
		account_put(reg, o->acct);
		free(o);
	}
}

int iod_view_release(struct iod_views *reg, uint32_t handle, uint64_t owner)
{
	struct iod_view *v;
	int err = 0;

	pthread_mutex_lock(&reg->mutex);
	v = view_find(reg, handle);
	if (v && v->owner == owner) {
		detach(reg, v);
		maps_trim(reg);
	} else
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
	struct iod_binding *b;
	struct iod_owner *o;
	int n = 0;

	pthread_mutex_lock(&reg->mutex);
	o = owner_find(reg, owner);
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
	b = binding_find(reg, owner);
	if (b) {
		clf_htable_del(&reg->bindings, &b->hn);
		free(b);
	}
	maps_trim(reg);
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

size_t iod_views_bytes(struct iod_views *reg, uint64_t owner)
{
	struct iod_owner *o;
	size_t n;

	pthread_mutex_lock(&reg->mutex);
	if (owner) {
		o = owner_find(reg, owner);
		n = o ? o->bytes : 0;
	} else {
		n = reg->pool.used;
	}
	pthread_mutex_unlock(&reg->mutex);
	return n;
}

size_t iod_views_idle_bytes(struct iod_views *reg)
{
	size_t n;

	pthread_mutex_lock(&reg->mutex);
	n = reg->idle_bytes;
	pthread_mutex_unlock(&reg->mutex);
	return n;
}
