/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_dispatch.h -- serve one request: check it, receive it, hand it to
 * its handler and send the reply (iod_dispatch.c).
 */
#ifndef IOD_DISPATCH_H
#define IOD_DISPATCH_H

#include "iod_conn.h"
#include "proto.h"

/*
 * iod_serve - serve the request whose header h was just received on cn
 *
 * Returns 0 to go on with the connection, or a negative errno to close
 * it (the stream is unusable or the peer is misbehaving); the reason is
 * logged before returning.
 */
int iod_serve(struct iod_conn *cn, const struct clf_proto_header *h);

#endif /* IOD_DISPATCH_H */
