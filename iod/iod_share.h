/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_share.h -- a memory pool that clients share fairly.
 *
 * The iod lends memory to its clients in two pools: the mappings of the
 * views they register (iod_view.c) and the buffers of their requests
 * (iod_server.c).  Each pool has a limit for all clients together and
 * gives each client -- the connections of one MUNGE user, or one
 * connection authenticated with the shared secret, which tells nothing
 * of who is behind it (iod_server.h, struct iod_client) -- a share of it:
 *
 *     share = max(min_share, limit / (holders + 1))
 *
 * where holders counts the clients holding some of the pool, the asking
 * one included.  The "+ 1" keeps room for a client yet to come: one
 * client alone may take half the pool, two a third each, and so on, so
 * that no client can take everything and a newcomer always finds room
 * unless min_share times the clients exceeds the limit.  A share shrinks
 * as clients come; what a client already holds stays, but it gets no
 * more until it is under its share again.
 *
 * A request beyond the share or the limit is refused with -ENOBUFS and a
 * message that names the pool, the figures and the configuration key
 * ("iod: view registrations of this client use 1.5 MiB of its 1.5 MiB
 * share ...").  Not thread-safe: the owner of a pool holds its lock.
 */
#ifndef IOD_SHARE_H
#define IOD_SHARE_H

#include <stdbool.h>
#include <stddef.h>

struct iod_pool {
	/* Immutable after iod_pool_init. */
	const char *what;	/* "view registrations": for messages */
	const char *key;	/* the clf.conf key of the limit */
	size_t limit;		/* bytes, all clients together */
	size_t min_share;	/* bytes a client may always ask for */
	/* Protected by the owner's lock. */
	size_t used;		/* bytes held by all clients */
	unsigned holders;	/* clients holding more than 0 bytes */
};

void iod_pool_init(struct iod_pool *p, const char *what, const char *key,
		   size_t limit, size_t min_share);

/* A client's share now; mine: what it holds (a newcomer when 0). */
size_t iod_pool_share(const struct iod_pool *p, size_t mine);

/*
 * iod_pool_take - a client holding *mine bytes asks for n more
 *
 * 0 with *mine and the pool grown by n, or -ENOBUFS with the message
 * (nothing changed) when that would pass the client's share or the
 * pool's limit.
 */
int iod_pool_take(struct iod_pool *p, size_t *mine, size_t n);

/* Whether iod_pool_take would succeed; no message, nothing changed. */
bool iod_pool_fits(const struct iod_pool *p, size_t mine, size_t n);

/* Give back n of the *mine bytes the client holds. */
void iod_pool_give(struct iod_pool *p, size_t *mine, size_t n);

/* "47 KiB", "1.5 MiB": n bytes for a message, into buf. */
const char *iod_bytes_str(size_t n, char *buf, size_t len);

#endif /* IOD_SHARE_H */
