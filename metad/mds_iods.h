/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_iods.h -- metad's own client connections to the iods of the
 * configuration: one authenticated connection per iod, made on first use
 * and made again when it breaks.
 *
 * metad talks to the iods only to remove and truncate subfiles and to
 * sum their capacity: short requests, rare next to the namespace traffic.
 * So one connection per iod, shared by every connection thread under a
 * per-iod mutex, is enough; requests to one iod wait for each other,
 * requests to different iods do not.
 */
#ifndef MDS_IODS_H
#define MDS_IODS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "transport.h"

struct mds_iods;

/* After a failed connect, calls to that iod fail at once for this long
 * instead of each waiting for a connect of their own to fail. */
#define MDS_IODS_RETRY_MS 500

/*
 * mds_iods_open - the iods of cfg, not connected yet
 *
 * cfg is borrowed and must outlive the result; t is the transport.
 * Returns 0 and *out (mds_iods_close frees it), or -ENOMEM.
 */
int mds_iods_open(const struct clf_config *cfg,
		  const struct clf_transport_ops *t, struct mds_iods **out);

/*
 * The same over the metads of cfg (cfg->metads, by index): the
 * connections a metad of a spread namespace asks the others on
 * (mds_peer.h).  Calls are mds_iods_call with a metad index.
 */
int mds_iods_open_metads(const struct clf_config *cfg,
			 const struct clf_transport_ops *t,
			 struct mds_iods **out);

/* Close every connection and free io.  No call may be running.  NULL ok. */
void mds_iods_close(struct mds_iods *io);

/* How many iods the configuration has (more after mds_iods_join). */
uint32_t mds_iods_count(const struct mds_iods *io);

/* How many iods a new file spans by default (the configuration's
 * stripe_count, 0: every one; as of the last join). */
uint32_t mds_iods_stripe_count(const struct mds_iods *io);

/*
 * mds_iods_join - iods added to the configuration join a running metad
 *
 * now is the configuration read again (`clf iod add` appended an [iod]
 * section): its first mds_iods_count(io) iods must have the addresses
 * io has, and the ones after them join, with now's stripe_count.
 * Layouts may name them from then on.  *before is the count before.
 * Thread-safe against every other call; 0 or -EINVAL (the message
 * says which iod differs).  The iods of metad's own connections only
 * (mds_iods_open), never the metads.
 */
int mds_iods_join(struct mds_iods *io, const struct clf_config *now,
		  uint32_t *before);

/* "host:port" of iod (< mds_iods_count), for messages. */
const char *mds_iods_addr(const struct mds_iods *io, uint32_t iod);

/*
 * Call fn(arg, iod) whenever a connect to iod succeeds after one failed:
 * the iod is back.  fn runs in the caller's thread with iod's connection
 * lock held, so it must not call mds_iods_call; it should be quick.  Set
 * before the first call, from one thread.
 */
void mds_iods_set_on_connect(struct mds_iods *io,
			     void (*fn)(void *arg, uint32_t iod), void *arg);

/*
 * mds_iods_call - one request to iod and its reply
 *
 * Sends op with the encoded body (len bytes, borrowed) and waits for the
 * reply within the configured timeout.  A connection that turns out
 * broken (the iod restarted since it was last used) is replaced and the
 * request sent once more: metad only sends requests that may be repeated
 * (REMOVE, TRUNCATE, IOD_STATFS).  Thread-safe.
 *
 * Returns 0 with the reply's payload in *reply (the caller frees it) and
 * its length in *reply_len; or the iod's own status (its message in
 * CLF_Last_error()); or -EHOSTDOWN when the iod could not be reached or
 * the exchange failed on the way (the message says why: refused, timed
 * out, reset, wrong secret...), so that a client of metad never mistakes
 * a refused connection to an iod for one to metad.  -EINVAL for an iod
 * index outside the configuration.
 */
int mds_iods_call(struct mds_iods *io, uint32_t iod, uint16_t op,
		  const void *body, size_t len, void **reply,
		  uint32_t *reply_len);

#endif /* MDS_IODS_H */
