/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_collective.h -- collective operations (iod_collective.c, which
 * states their rules).
 */
#ifndef IOD_COLLECTIVE_H
#define IOD_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iod_state.h"
#include "iod_view.h"

/* The record of operations run (iod_coll_done.c) lives in dir. */
int iod_colls_create(const char *dir, struct iod_colls **out);
/* NULL ok; no operation may be in progress. */
void iod_colls_free(struct iod_colls *cs);

/*
 * iod_coll_join - take part in collective operation `tag` with view v
 *
 * data holds len bytes: what this participant writes (write != 0) or
 * where its read goes.  Blocks until all `participants` requests for
 * (tag, v->file, v->subfile) arrived and the merged I/O was done, or
 * until timeout_ms after the first of them arrived.  Returns len, or a
 * negative errno for this participant: -ETIMEDOUT (the operation is
 * discarded for everyone), -EINVAL (this request disagrees with the
 * operation it joins, or len is wrong), -E2BIG (the table of so many
 * participants passes the memory the iod lends collectives now),
 * -ESHUTDOWN (the iod is stopping), or the
 * I/O error every participant gets.  With the first four the operation
 * did no I/O with this participant's data.
 *
 * again: the client sends the request again after its iod broke off
 * (CLF_PROTO_VIEW_AGAIN).  When no operation of that tag is gathering
 * and one ran before this iod restarted, the others had their replies
 * and are gone: this request is then an operation of its own.
 */
int64_t iod_coll_join(struct iod_server *srv, const struct iod_view *v,
		      uint64_t tag, uint32_t participants, int write,
		      bool again, int64_t lo, int64_t hi, void *data,
		      size_t len);

#endif /* IOD_COLLECTIVE_H */
