/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_view.h -- the views clients declared on this iod's subfiles.
 *
 * A client sends each involved iod its view and the subfile's pattern
 * once, when it sets the view (DESIGN.md section 4, step 2).  The registry
 * intersects them right away and keeps the resulting CLF_Mapping, so that
 * every later access names only (handle, view range) and costs no more
 * than walking the stored description.
 *
 * Views belong to the connection that declared them (its "owner" id, an
 * opaque number chosen by the daemon loop): a view is found, and released,
 * only through its owner, and every view of an owner goes when its
 * connection drops.  Each mapping costs memory chosen by the client, so
 * views are charged in bytes (the view, its key and its mapping's
 * clf_mapping_footprint) to a pool that the owners share fairly
 * (iod_share.h): one client gets -ENOBUFS past its share, and the others
 * still register.  A client is an owner, or the owners bound to one
 * account (iod_views_bind: the connections of one MUNGE user).  A view sharing a mapping is charged the whole
 * mapping: what each owner is charged stays alive as long as it keeps
 * its views, whoever made the mapping first.
 *
 * Mappings are shared: a registration made with the client's encodings
 * (iod_view_register_keyed) finds the mapping of an equal one -- the same
 * view and displacement on the same subfile pattern and displacement,
 * from any connection, still registered or among the last
 * IOD_VIEW_MAPS_KEPT released -- and reuses it, so re-registering a view
 * costs no decoding and no mapping.
 *
 * Thread-safe: one mutex guards the tables; views themselves are
 * immutable and reference counted, so releasing a view while another
 * thread is still reading through it is safe -- the mapping goes with the
 * last reference.
 */
#ifndef IOD_VIEW_H
#define IOD_VIEW_H

#include <stdatomic.h>
#include <stdint.h>

#include "hash.h"
#include "clf.h"
#include "iod_share.h"

struct iod_views;
struct iod_owner;
struct iod_map;

/* One registered view.  Read-only for everyone but iod_view.c. */
struct iod_view {
	/* Immutable after registration. */
	uint32_t handle;	   /* != 0, unique while registered */
	uint64_t owner;		   /* connection id */
	uint64_t file;		   /* file id */
	uint32_t subfile;	   /* subfile index */
	CLF_Mapping *map;	   /* view -> subfile runs: owned, or
				      shared's */
	struct iod_map *shared;	   /* a reference, or NULL */
	size_t cost;		   /* bytes charged to the owner */

	atomic_uint refs;	   /* the registry's (while registered) and
				      every lookup's */

	/* Protected by the registry mutex. */
	struct clf_hnode hn;	   /* in the registry's handles */
	struct iod_view *onext;	   /* owner's list */
	struct iod_view **oprev;   /* the pointer to this one in that list */
	struct iod_owner *own;	   /* owner record, NULL once released */
};

struct iod_view_limits {
	size_t memory;		   /* bytes of all owners' views together */
	size_t min_share;	   /* bytes one owner may always hold, as
				      long as the total allows */
};

#define IOD_VIEW_MEMORY_DEFAULT ((size_t)256 << 20)
#define IOD_VIEW_MIN_SHARE_DEFAULT(memory) ((memory) / 64)

/*
 * A new, empty registry.  limits is copied; NULL or zero fields take the
 * defaults above.  Returns 0 and *out, or -ENOMEM.
 */
int iod_views_create(const struct iod_view_limits *limits,
		     struct iod_views **out);

/*
 * Free the registry and drop its reference to every view; NULL ok.
 * Views still referenced by lookups stay valid until put.
 */
void iod_views_free(struct iod_views *reg);

/*
 * iod_view_register - build and keep the mapping of a view onto a subfile
 *
 * view/view_disp: the client's view; sub/sub_disp: the pattern of subfile
 * `subfile` of file `file` (types borrowed; the mapping takes its own
 * references).  Returns 0 and a new handle in *handle, or
 * -EINVAL/-EOVERFLOW/-E2BIG from CLF_Mapping_create (bad types or
 * displacements, incommensurate patterns), -ENOBUFS when the view would
 * pass the owner's share or the registry's memory (the message gives the
 * figures: "view registrations of this client use 1.5 MiB of its 1.5 MiB
 * share ..."), -ENOMEM.
 */
int iod_view_register(struct iod_views *reg, uint64_t file, uint32_t subfile,
		      CLF_Datatype view, int64_t view_disp, CLF_Datatype sub,
		      int64_t sub_disp, uint64_t owner, uint32_t *handle);

/* Mappings kept unused, for views registered again: at most this many,
 * and at most memory / IOD_VIEW_KEPT_PART bytes of them. */
#define IOD_VIEW_MAPS_KEPT 256u
#define IOD_VIEW_KEPT_PART 8u

/* A registration as the client encoded it (clf_proto.h VIEW_REGISTER). */
struct iod_view_key {
	int64_t view_disp, sub_disp;
	const void *view, *sub;	/* encoded types, borrowed */
	uint32_t view_len, sub_len;
};

/*
 * iod_view_register_keyed - register, reusing the mapping of an equal key
 *
 * As iod_view_register for the types key encodes.  When the registry
 * holds a mapping made for an equal key, it is shared and view/sub are
 * not looked at (they may be NULL: then -ENOENT when there is none, so
 * that a caller decodes only on a miss).  Otherwise the mapping is made
 * from view and sub (decoded from key by the caller) and kept under key.
 */
int iod_view_register_keyed(struct iod_views *reg, uint64_t file,
			    uint32_t subfile, const struct iod_view_key *key,
			    CLF_Datatype view, CLF_Datatype sub,
			    uint64_t owner, uint32_t *handle);

/* Mappings the registry shares now, used or kept (for tests). */
unsigned iod_views_maps(struct iod_views *reg);

/*
 * A new reference to view `handle` of `owner` in *out, to be given back
 * with iod_view_put().  -EBADF when there is no such view for this owner.
 */
int iod_view_lookup(struct iod_views *reg, uint32_t handle, uint64_t owner,
		    struct iod_view **out);

/* Give back a reference from iod_view_lookup(); NULL ok. */
void iod_view_put(struct iod_view *v);

/* Unregister one view of owner: 0, or -EBADF when there is none. */
int iod_view_release(struct iod_views *reg, uint32_t handle, uint64_t owner);

/* Unregister every view of owner (its connection dropped): the count. */
int iod_view_release_owner(struct iod_views *reg, uint64_t owner);

/* Views registered now, all owners together (for the STATUS reply). */
unsigned iod_views_count(struct iod_views *reg);

/* Bytes charged to owner's views, or to all owners' when owner is 0. */
size_t iod_views_bytes(struct iod_views *reg, uint64_t owner);

/*
 * iod_views_bind - charge owner's views to the account `client`
 *
 * Owners bound to one client (connections of one authenticated user)
 * share one share of the pool; an owner never bound is its own client.
 * Call before the owner registers; the binding goes with
 * iod_view_release_owner.  0 or -ENOMEM.
 */
int iod_views_bind(struct iod_views *reg, uint64_t owner, uint64_t client);

/* Bytes of unused mappings kept for views registered again (for tests). */
size_t iod_views_idle_bytes(struct iod_views *reg);

#endif /* IOD_VIEW_H */
