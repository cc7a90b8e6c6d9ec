// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_fence.c -- fences on files whose subfiles leave this iod (see
 * iod_fence.h; the whole move in docs/elastic.md).
 *
 * The fast path costs a data request two atomic additions on a counter
 * of its file's bucket and one atomic load: the table is looked at only
 * while some file is fenced.  A request counts itself before it looks
 * for a fence and a fence is entered before it waits for the count
 * (both sequentially consistent), so either the request sees the fence
 * or the fence waits for the request.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "iod_fence.h"
#include "iod_view.h"

/* How long FENCE waits for the requests of the file being served. */
#define FENCE_DRAIN_MS 30000

int iod_fences_init(struct iod_fences *fs)
{
	memset(fs->chains, 0, sizeof(fs->chains));
	atomic_init(&fs->nfences, 0);
	for (int i = 0; i < IOD_FENCE_BUCKETS; i++)
		atomic_init(&fs->inflight[i], 0);
	return -pthread_mutex_init(&fs->lock, NULL);
}

void iod_fences_destroy(struct iod_fences *fs)
{
	for (int i = 0; i < IOD_FENCE_BUCKETS; i++) {
		while (fs->chains[i]) {
			struct iod_fence *f = fs->chains[i];

			fs->chains[i] = f->next;
			free(f);
		}
	}
	pthread_mutex_destroy(&fs->lock);
}

static unsigned bucket_of(uint64_t file)
{
	return (unsigned)((file * 0x9e3779b97f4a7c15ull) >> 54) %
	       IOD_FENCE_BUCKETS;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The file of a data request, and whether it writes; false for other
 * requests (and for a view handle that is not known: its handler says
 * so). */
static bool file_of(struct iod_views *views, uint64_t owner,
		    const struct clf_proto_header *h, const uint8_t *body,
		    size_t len, uint64_t *file, bool *write)
{
	struct iod_view *v;
	uint32_t handle;

	*write = false;
	switch (h->opcode) {
	case CLF_PROTO_OP_SUB_WRITE:
	case CLF_PROTO_OP_SUB_WRITEV:
	case CLF_PROTO_OP_TRUNCATE:
		*write = true;
		/* fall through */
	case CLF_PROTO_OP_SUB_READ:
	case CLF_PROTO_OP_SUB_READV:
	case CLF_PROTO_OP_VIEW_REGISTER:
		if (len < 8)
			return false;
		*file = get_u64(body);
		return true;
	case CLF_PROTO_OP_VIEW_WRITE:
		*write = true;
		/* fall through */
	case CLF_PROTO_OP_VIEW_READ:
		if (len < 4)
			return false;
		handle = body[0] | body[1] << 8 | body[2] << 16 |
			 (uint32_t)body[3] << 24;
		if (iod_view_lookup(views, handle, owner, &v))
			return false;
		*file = v->file;
		iod_view_put(v);
		return true;
	default:
		return false;
	}
}

/* The link to the fence of file (*link NULL: none); fs->lock held. */
static struct iod_fence **find(struct iod_fences *fs, uint64_t file)
{
	struct iod_fence **link = &fs->chains[bucket_of(file)];

	while (*link && (*link)->file != file)
		link = &(*link)->next;
	return link;
}

int iod_fence_enter(struct iod_fences *fs, struct iod_views *views,
		    uint64_t owner, const struct clf_proto_header *h,
		    const uint8_t *body, size_t len, int *slot)
{
	const struct iod_fence *f;
	uint64_t file;
	bool write, refuse = false;
	unsigned b;

	*slot = -1;
	if (!file_of(views, owner, h, body, len, &file, &write))
		return 0;
	b = bucket_of(file);
	atomic_fetch_add(&fs->inflight[b], 1);
	if (atomic_load(&fs->nfences)) {
		pthread_mutex_lock(&fs->lock);
		f = *find(fs, file);
		refuse = f && f->owner != owner &&
			 (write || f->mode == CLF_PROTO_FENCE_GONE);
		pthread_mutex_unlock(&fs->lock);
	}
	if (refuse) {
		atomic_fetch_sub(&fs->inflight[b], 1);
		return clf_fail(ESTALE,
				"iod: file %" PRIu64 " is moving to another iod; ask metad for its layout again",
				file);
	}
	*slot = (int)b;
	return 0;
}

void iod_fence_leave(struct iod_fences *fs, int slot)
{
	if (slot >= 0)
		atomic_fetch_sub(&fs->inflight[slot], 1);
}

void iod_fence_owner_closed(struct iod_fences *fs, uint64_t owner)
{
	if (!atomic_load(&fs->nfences))
		return;
	pthread_mutex_lock(&fs->lock);
	for (int i = 0; i < IOD_FENCE_BUCKETS; i++) {
		struct iod_fence **link = &fs->chains[i], *f;

		while ((f = *link)) {
			if (f->mode == CLF_PROTO_FENCE_MOVING &&
			    f->owner == owner) {
				*link = f->next;
				free(f);
				atomic_fetch_sub(&fs->nfences, 1);
			} else {
				link = &f->next;
			}
		}
	}
	pthread_mutex_unlock(&fs->lock);
}

/* Put (or lift) the fence of file; fs->lock held. */
static int set(struct iod_fences *fs, uint64_t file, uint32_t mode,
	       uint64_t owner)
{
	struct iod_fence **link = find(fs, file), *f = *link;

	if (mode == CLF_PROTO_FENCE_LIFT) {
		if (f) {
			*link = f->next;
			free(f);
			atomic_fetch_sub(&fs->nfences, 1);
		}
		return 0;
	}
	if (!f) {
		if (atomic_load(&fs->nfences) >= IOD_FENCE_MAX)
			return clf_fail(EBUSY,
					"iod: %u files are fenced already; stop this iod, it has been emptied",
					IOD_FENCE_MAX);
		f = calloc(1, sizeof(*f));
		if (!f)
			return clf_fail(ENOMEM, "iod: out of memory for a fence");
		*link = f;
		atomic_fetch_add(&fs->nfences, 1);
	}
	f->file = file;
	f->mode = mode;
	f->owner = owner;
	return 0;
}

/* Wait until no request of file's bucket is being served. */
static int drain(struct iod_fences *fs, uint64_t file)
{
	struct timespec tick = { 0, 1000000 };
	unsigned b = bucket_of(file);

	for (int waited = 0; atomic_load(&fs->inflight[b]); waited++) {
		if (waited >= FENCE_DRAIN_MS)
			return clf_fail(ETIMEDOUT,
					"iod: requests of file %" PRIu64 " still served after %d ms",
					file, FENCE_DRAIN_MS);
		nanosleep(&tick, NULL);
	}
	return 0;
}

int iod_fence_set(struct iod_fences *fs, uint64_t file, uint32_t mode,
		  uint64_t owner)
{
	int err;

	pthread_mutex_lock(&fs->lock);
	err = set(fs, file, mode, owner);
	pthread_mutex_unlock(&fs->lock);
	if (err || mode == CLF_PROTO_FENCE_LIFT)
		return err;
	return drain(fs, file);
}
