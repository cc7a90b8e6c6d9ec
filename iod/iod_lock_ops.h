/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_lock_ops.h -- the iod's side of extent locks on the wire: the lock
 * manager of the server (iod_lock.h), its clients' callback connections,
 * the LOCK_* handlers, and the guard every lockless access passes.
 */
#ifndef IOD_LOCK_OPS_H
#define IOD_LOCK_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "iod_conn.h"
#include "iod_ops.h"

/*
 * Create the server's locking state: 0 or a negative errno.  A holder
 * has lease_ms to release a revoked lock; 0: half the instance's
 * timeout_ms, so that a lockless client waiting behind a holder that
 * is gone is served before its own wait for the reply times out.
 */
int iod_locking_create(struct iod_server *srv, unsigned lease_ms);
void iod_locking_free(struct iod_locking *lk);

/*
 * Before the request h (body: its first len bytes) is served: when it
 * reads or writes a file's bytes under no lock (SUB_*, VIEW_READ/WRITE,
 * SUB_SIZES, TRUNCATE, REMOVE), revoke the other clients' conflicting
 * locks on that file and wait for their release or eviction.  One atomic
 * load when no client holds a lock.  Returns 0, or -EPROTO for any
 * request on a callback connection: REVOKEs are sent on it from other
 * threads, so a reply there could interleave with one; close it.
 */
int iod_lock_guard(struct iod_conn *cn, const struct clf_proto_header *h,
		    const uint8_t *body, size_t len);

/* The connection closes: a callback connection's client is evicted. */
void iod_lock_conn_closed(struct iod_conn *cn);

/* Whether any client holds an extent lock at this iod now. */
bool iod_locks_held(const struct iod_server *srv);

int iod_op_lock_callback(struct iod_conn *cn, struct iod_req *rq,
			 struct iod_reply *rep);
int iod_op_lock_enqueue(struct iod_conn *cn, struct iod_req *rq,
			struct iod_reply *rep);
int iod_op_lock_release(struct iod_conn *cn, struct iod_req *rq,
			struct iod_reply *rep);

#endif /* IOD_LOCK_OPS_H */
