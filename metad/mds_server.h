/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_server.h -- metad's network side: the listener, authentication
 * and the requests, served by the daemon runtime's pool (daemon.h).
 */
#ifndef MDS_SERVER_H
#define MDS_SERVER_H

#include "mds.h"
#include "transport.h"

/*
 * Connections served at once; more are refused with -EAGAIN.  An idle
 * one costs a descriptor and a record, not a thread (daemon.h): the
 * processes of a big job each keep one.
 */
#define MDS_MAX_CONNECTIONS 16384

struct mds_server;

/*
 * mds_server_open - listen on addr ("host:port") over t
 *
 * workers serve the requests (0: clf.conf's daemon_workers).  ctx is
 * borrowed and must outlive the server.  Returns 0 and *out, or
 * the listener's error (-EADDRINUSE, ...) with a message naming addr.
 */
int mds_server_open(struct mds_ctx *ctx, const struct clf_transport_ops *t,
		    const char *addr, unsigned workers,
		    struct mds_server **out);

/*
 * mds_server_run - accept and serve connections until stop_fd (any
 * descriptor: a signalfd in metad) becomes readable
 *
 * Then stops accepting, lets every request in progress finish, and
 * closes the connections.  Returns 0,
 * or a negative errno when the server could not run at all.
 */
int mds_server_run(struct mds_server *srv, int stop_fd);

/* Requests that came while a worker watched their connection without
 * sleeping (CLF_METAD_LINGER_SPIN_US); 0 for NULL. */
unsigned long mds_server_spin_served(struct mds_server *srv);

/* Free a server that is not running; NULL ok. */
void mds_server_close(struct mds_server *srv);

#endif /* MDS_SERVER_H */
