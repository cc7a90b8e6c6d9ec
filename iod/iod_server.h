/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_server.h -- the I/O daemon's network side: the connections and
 * the request loop (iod_server.c), for iod.c.
 *
 * Below it, one way down: a request is served by iod_dispatch.c, whose
 * table names the handlers (iod_ops.c, iod_ops_io.c); they move data as
 * iod_xfer.c plans (iod_stream.c for pieces) and take part in collective
 * operations (iod_collective.c); all share the state of iod_state.h and
 * the connection of iod_conn.h.  Nothing below calls back into the
 * server.  The storage engine below them all is iod_store.h, iod_view.h,
 * iod_viewio.h and iod_merge.h.
 */
#ifndef IOD_SERVER_H
#define IOD_SERVER_H

#include <stdint.h>

#include "config.h"
#include "iod_state.h"

/*
 * iod_server_open - everything but the loop: the store of `dir`, the
 * view registry, the collective table and the listener on `addr`, with
 * `workers` serving requests (0: clf.conf's daemon_workers).
 * Returns 0 and fills *srv (which the caller allocated), or a negative
 * errno with a message naming what failed (e.g. "iod 1: cannot listen on
 * 127.0.0.1:7002: Address already in use").
 */
int iod_server_open(struct iod_server *srv, const struct clf_config *cfg,
		    uint32_t index, unsigned max_conns, unsigned workers,
		    const struct iod_hooks *hooks);

/*
 * Accept and serve connections until stop_fd (the daemon's signalfd,
 * daemon.h) is readable, then wait (up to a bound) for the requests in
 * progress to finish.  Returns 0, or -EBUSY when some threads were still
 * running at the bound: the caller must not free the server then (it
 * exits instead).
 */
int iod_server_run(struct iod_server *srv, int stop_fd);

/* Tell the connections the server stops (the runtime calls it). */
void iod_server_stop(struct iod_server *srv);

/* Free what iod_server_open made; no thread may be running. */
void iod_server_close(struct iod_server *srv);

#endif /* IOD_SERVER_H */
