/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_conn.h -- one client connection of the iod: who it is, its
 * request and reply buffers (charged to the server's buffer pool), and
 * the one loop that receives payload bytes (iod_conn.c).
 */
#ifndef IOD_CONN_H
#define IOD_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iod_state.h"
#include "iod_viewio.h"
#include "proto.h"

struct iod_caps;

/*
 * A client, as memory is shared (iod_share.h): the connections of one
 * MUNGE user, or one connection authenticated with the shared secret
 * (which says nothing of who is behind it).
 */
struct iod_client {
	uint64_t id;			/* IOD_CLIENT_UID | uid, or owner */
	unsigned conns;			/* connections using it; srv mutex */
	size_t buf_bytes;		/* of the buffer pool; buf_lock */
	struct iod_client *next;	/* srv->clients; srv mutex */
};

#define IOD_CLIENT_UID ((uint64_t)1 << 63)

/* Where a connection is in its life. */
enum iod_conn_phase {
	IOD_CONN_NEW,		/* accepted; its admission ticket open */
	IOD_CONN_SETTLED,	/* the handshake failed; ticket settled */
	IOD_CONN_SERVED,	/* authenticated, holding a slot */
};

struct iod_conn {
	struct iod_server *srv;		/* borrowed */
	enum iod_conn_phase phase;
	struct iod_client *client;	/* a reference once authenticated */
	struct clf_conn *c;		/* owned */
	uint64_t owner;			/* view owner id, unique */
	uint64_t ticket;		/* of its handshake (admission.h) */
	char role[CLF_PROTO_ROLE_MAX + 1]; /* what the peer said it is */
	uint64_t nrequests;		/* served on this connection */

	/*
	 * Payload of the request being served (buf) and bulk data of the
	 * reply being sent (out: reads), reused from request to request.
	 * A buffer over IOD_SMALL_BUF is charged to the server's pool
	 * (iod_server.bufs) as this connection's, kept while the pool is
	 * less than half used and given back when the connection idles: a
	 * fresh 32 MiB buffer per request costs a page fault and a page
	 * clear per 4 KiB, a third of the iod's time in a stream of writes.
	 */
	uint8_t *buf;			/* owned */
	size_t cap;			/* bytes allocated */
	uint8_t *out;			/* owned */
	size_t out_cap;			/* bytes allocated */
	size_t sieve_charged;		/* of the pool, the sieve window's */
	struct iod_caps *caps;		/* owned; NULL: the peer holds the
					   secret and needs none (iod_cap.h) */
	uint64_t lock_client;		/* the caching client it speaks for
					   (its LOCK_* requests); 0: none */
	bool lock_callback;		/* it carries REVOKEs (LOCK_CALLBACK) */
	struct iod_conn *next_served;	/* srv->served; srv mutex */
};

/*
 * iod_conn_data_buffer - room for len bytes of reply data (len may be 0)
 *
 * The connection's reply buffer, grown as needed; it stays the
 * connection's (a reply borrows it) and is valid until the reply is sent.
 * Returns 0 and *out, or -ENOBUFS when the connection's share of the
 * buffer pool cannot hold it (iod_share.h; the caller may then stream
 * the reply: iod_stream.c), or -ENOMEM, with a message.
 */
int iod_conn_data_buffer(struct iod_conn *cn, size_t len, void **out);

/* The request buffer with room for len bytes: 0, -ENOBUFS or -ENOMEM. */
int iod_conn_reserve(struct iod_conn *cn, size_t len);

/* After a request: big buffers go when idle or when the pool fills up. */
void iod_conn_trim(struct iod_conn *cn, bool idle);

/* Free both buffers (the connection ends). */
void iod_conn_free_buffers(struct iod_conn *cn);

/*
 * The sieving parameters for one view access of this connection: the
 * default window (IOD_SIEVE_WINDOW_DEFAULT, held during the access) when
 * its share of the buffer pool allows, else IOD_SIEVE_WINDOW_SMALL, so
 * that a connection's sieve costs the pool or 256 KiB.  Give it back with
 * iod_conn_sieve_end after the access.
 */
#define IOD_SIEVE_WINDOW_SMALL ((size_t)256 << 10)
struct iod_sieve iod_conn_sieve_begin(struct iod_conn *cn);
void iod_conn_sieve_end(struct iod_conn *cn);

/*
 * clf_conn_recv_payload and clf_conn_recv_payload_to_file for a worker
 * of the iod: a receive that has to wait for its sender gives the
 * worker's place to another meanwhile (clf_daemon_wait_begin).
 */
int iod_recv_payload(struct clf_conn *c, void *buf, size_t len);
int iod_recv_payload_to_file(struct clf_conn *c, int fd, int64_t off,
			     size_t len, int *file_err, size_t *written);

/* What iod_conn_recv hands each piece to: 0 or a negative errno. */
typedef int (*iod_piece_fn)(void *arg, const uint8_t *piece, size_t n);

/*
 * iod_conn_recv - the next len payload bytes, in pieces of at most
 * `piece` bytes, each within the connection's timeout (a big write over a
 * slow link needs steady progress, not the whole transfer in one
 * timeout, while a peer that stalls is still cut off)
 *
 * Each piece goes to dst + its offset when `fill` is set (the payload
 * lands whole in dst), else to dst itself (the caller consumes each
 * piece); then to put(arg, piece, n) unless put is NULL.  After put
 * failed, the rest is received and dropped so that the stream stays in
 * step, and its first error is returned (its message kept).  A receive
 * error returns the connection's error with *broken set: close it.
 */
int iod_conn_recv(struct iod_conn *cn, uint8_t *dst, size_t len,
		  size_t piece, bool fill, iod_piece_fn put, void *arg,
		  bool *broken);

/* Receive and drop the next len payload bytes: 0, or the connection's
 * error (close it); CLF_Last_error() is kept on success. */
int iod_conn_drain(struct iod_conn *cn, size_t len);

#endif /* IOD_CONN_H */
