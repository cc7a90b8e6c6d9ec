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

#include "error.h"
#include "iod_reply.h"
#include "iod_state.h"
#include "iod_view.h"

struct clf_proto_header;
struct iod_conn;

/*
 * A participant's reply, prepared before it joins, for the participant
 * that does the operation's I/O to send (rule 7 of iod_collective.c):
 * then the participant's reply leaves without waiting for its thread to
 * wake.  rep->sent tells the participant, on its return, that it was.
 */
struct iod_coll_answer {
	struct iod_conn *cn;			/* borrowed */
	const struct clf_proto_header *req;	/* the request; borrowed */
	struct iod_reply *rep;			/* its reply on success */
};

/*
 * Replies of at most this many bytes are sent by the participant that
 * did the I/O; bigger ones by their own threads, in parallel.  A small
 * reply fits in a socket that is not being read (a client reads its
 * iods' replies one connection after another: tcp_rcvbuf.c), so one
 * participant's slow reader never holds up the others' replies.
 */
#define IOD_COLL_ANSWER_MAX ((size_t)32 << 10)

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
 * ans: NULL, or this participant's reply on success, which the
 * participant that does the I/O then sends (when small enough) before
 * it wakes the others: ans->rep->sent says whether it did.
 *
 * again: the client sends the request again after its iod broke off
 * (CLF_PROTO_VIEW_AGAIN).  When no operation of that tag is gathering
 * and one ran before this iod restarted, the others had their replies
 * and are gone: this request is then an operation of its own.
 */
int64_t iod_coll_join(struct iod_server *srv, const struct iod_view *v,
		      uint64_t tag, uint32_t participants, int write,
		      bool again, int64_t lo, int64_t hi, void *data,
		      size_t len, struct iod_coll_answer *ans);

/* One participant's request among several (iod_coll_join_many). */
struct iod_coll_piece {
	const struct iod_view *v;	/* borrowed, for the call */
	uint64_t tag;
	uint32_t participants;
	int write;
	int64_t lo, hi;
	void *data;			/* len bytes; borrowed */
	size_t len;
};

/*
 * iod_coll_join_many - iod_coll_join for n requests at once
 *
 * The pieces of a VIEW_MERGED (several relayed connections' requests,
 * iod_ops_merged.c) join their operations together, each counting as
 * its own request would, and this call waits until every operation they
 * joined ended.  result[i] is what iod_coll_join would have returned for
 * piece i, and why[i] its error when result[i] < 0.
 */
void iod_coll_join_many(struct iod_server *srv,
			const struct iod_coll_piece *pieces, size_t n,
			int64_t *result, struct clf_error *why);

#endif /* IOD_COLLECTIVE_H */
