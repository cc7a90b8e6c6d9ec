// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_collective.c -- collective VIEW_READ and VIEW_WRITE: server-directed
 * I/O (DESIGN.md section 4, step 4).
 *
 * The rules, as a client sees them at one iod:
 *
 *  1. A collective request is a VIEW_READ or VIEW_WRITE with the flag
 *     CLF_PROTO_VIEW_COLLECTIVE, a u64 tag and a participant count P.
 *     The requests with the same (tag, file, subfile) -- file and subfile
 *     being those of the view each request names -- form one operation.
 *
 *  2. Every request of an operation gives the same P and the same
 *     direction (all reads or all writes).  A request that disagrees with
 *     the operation it would join is refused (-EINVAL) and does not count.
 *     No constant bounds P: the operation's table of participants (P
 *     entries of struct coll_part, made by its first request) is charged
 *     to the buffer pool as the collectives' own client, and an operation
 *     whose table the pool cannot take is refused (-E2BIG), request by
 *     request.  A refused write's piece is written on its own all the
 *     same, as under rule 5.
 *
 *  3. Each participant is one connection.  A connection serves its
 *     requests one at a time, so it is in at most one operation at a time
 *     and is never counted twice.
 *
 *  4. P is always the number of requests to wait for at this subfile.
 *     Clients choose who counts: with CLF_ncwrite_at_all every process
 *     does, and one with no bytes here sends an empty range (lo == hi);
 *     a planned access (libclf/client/io_coll.c) counts only the processes
 *     whose pieces merge here, and the others send nothing.
 *
 *  5. An operation begins when its first request arrives and waits at most
 *     the configured timeout (timeout_ms) for the others.  Joining costs
 *     a participant O(depth of its mapping) (a count that checks its
 *     data's length): no mapping is walked before everyone came, so one
 *     participant's computation never uses up the others' time.  If it is still
 *     incomplete then, it is discarded: every participant that came gets
 *     -ETIMEDOUT, nothing was read or written by the operation, and a
 *     later request with the same tag begins a new operation.  A write
 *     piece is written all the same, as an independent write would be:
 *     on arrival when it went straight to its subfile (iod_xfer.c), after
 *     the operation when it was held for the merge (iod_ops_io.c), so
 *     that a timed-out write leaves the same bytes either way.  So a
 *     participant that never comes, or whose connection drops before its
 *     request arrives, costs the others one timeout, never a hang.
 *
 *  6. When the P-th request arrives, its thread does the I/O for all: the
 *     pieces of every participant (iod_piece_src_fill), in subfile order,
 *     adjacent pieces in one pwritev/preadv (iod_merge.h).
 *
 *  6a. There is no ceiling on the pieces of an operation: they are merged
 *     in rounds of at most COLL_ROUND_PIECES (CLF_TEST_IOD_COLL_PIECES
 *     lowers it for tests).  Each participant keeps a buffer of at most
 *     ROUND / (participants with bytes) pieces, refilled from its mapping
 *     where it stopped; a round takes, from every buffer, the pieces
 *     below the lowest subfile offset that a participant with bytes left
 *     has not reached (its frontier), and merges them.  That
 *     participant's whole buffer goes, so every round makes progress;
 *     the others keep their later pieces for the next round.  Rounds are
 *     thus in subfile order and each is one sorted merge: the disk still
 *     sees large ordered requests, and the iod holds at most two rounds
 *     of pieces (24 bytes each) whatever the access.  A write that fails
 *     in round k has done rounds before k.
 *
 *  6b. Overlapping writes of one operation: MPI leaves their bytes
 *     undefined; at each iod clf writes them in this order.  A piece
 *     that is not held -- one run of the subfile, or more than its
 *     connection's share of the buffer pool (iod_ops_io.c) -- is written
 *     through as it arrives, so such pieces land in the order their
 *     participants came; the held pieces land together after them, once
 *     the last came, in subfile order (the later arrival last where two
 *     start at the same offset).  So where a held piece overlaps one
 *     written through, the held one is what stays.  Nothing orders the
 *     iods against each other: overlaps across subfiles cannot occur.
 *
 *  7. Then every participant gets its reply: a write the count of its own
 *     bytes, a read its own packed data (zeros past the end of the
 *     subfile).  If the I/O fails, every participant gets the same error
 *     and message, and a write may be partly done.  The participant that
 *     did the I/O sends the waiting participants' small replies itself
 *     (struct iod_coll_answer), then wakes them all at once (one futex
 *     wake; they leave without the table mutex): no reply waits for its
 *     thread's wake-up, and no wake-up waits for another's.  On a
 *     machine whose cores are all busy (the clients' processes
 *     busy-poll in MPI) each wake-up waits for a core, so a chain of
 *     P - 1 of them cost the last reply P - 1 scheduling delays.
 *     Bigger replies are sent by their own threads, in parallel.
 *
 *  8. A participant whose connection drops after its request arrived
 *     still counts; only its reply is lost.  Its data stays in memory
 *     until the operation ends, because its thread waits in it.
 *
 *  9. Tags are the clients' choice; a tag must not name two operations in
 *     progress on the same subfile, and may be reused once one ended.
 *
 * 10. A request sent again after its iod broke off (the flag
 *     CLF_PROTO_VIEW_AGAIN) joins its operation as any other -- unless
 *     none of its tag is gathering and one of its (tag, file, subfile)
 *     started its I/O before this iod restarted, within
 *     IOD_COLL_DONE_KEEP_S (iod_coll_done.c): then every participant
 *     had come, the others had their replies and are gone, and this one
 *     is served alone, as a collective of one.
 *
 * Memory: each participant's buffer (and view) belongs to its connection
 * thread, which stays inside iod_coll_join until the operation ended, so
 * the pieces never outlive what they point to.  The operation itself is
 * freed by the last participant to leave, who gives its table's charge
 * back to the pool.  What a participant's data costs is bounded apart:
 * a piece is held for the merge only within its connection's share of
 * the buffer pool (iod_xfer.c); a bigger one is streamed into its
 * subfile as it arrives (iod_ops_io.c), so the iod holds no more than
 * the pool however many participants come and however much each sends.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "daemon.h"
#include "error.h"
#include "iod_coll_done.h"
#include "iod_collective.h"
#include "iod_log.h"
#include "iod_merge.h"
#include "iod_viewio.h"

/* How often a waiting participant looks at the stop flag, ms. */
#define COLL_POLL_MS 200
/*
 * Pieces merged in one round (rule 6a): 24 bytes each, so 24 MiB for the
 * round and as much for the participants' buffers, whereas a
 * byte-granular interleaving of 64 MiB requests would need 1.5 GiB per
 * request at once.  A round of 2^20 pieces is still thousands of large
 * writes' worth.
 */
#define COLL_ROUND_PIECES (1u << 20)
/*
 * A round's pieces and the participants' buffers (2 * pieces * 24 bytes)
 * are charged to the buffer pool as the collectives' own client
 * (iod_server.coll_charged); when the pool cannot take them, rounds are
 * cut to COLL_ROUND_MIN pieces (768 KiB), slower but as ordered.
 */
#define COLL_ROUND_MIN (1u << 14)

/* One participant's bytes, and the pieces made but not yet merged. */
struct coll_part {
	struct iod_piece_src src;
	size_t len;			/* its packed bytes */
	struct iod_pieces buf;		/* owned array */
	struct iod_coll_answer *ans;	/* borrowed; NULL: it answers */
};

enum coll_state {
	COLL_GATHERING,		/* waiting for participants; in the table */
	COLL_RUNNING,		/* the last one does the I/O */
	COLL_DONE,		/* result set; participants leave */
};

struct coll_op {
	/* Immutable after creation. */
	uint64_t tag, file;
	uint32_t subfile;
	uint32_t participants;
	int write;
	int64_t deadline_ms;		/* clf_now_ms() when it is discarded */
	size_t charged;			/* of srv->bufs: the parts table */
	/* 1 once DONE, with result and error set (release); a futex word
	 * the participants wait on, without the table mutex. */
	atomic_uint done;
	/* Threads inside iod_coll_join: taken under the table mutex while
	 * GATHERING, given back by each as it leaves. */
	atomic_uint refs;

	/* Protected by the table mutex (the pieces too, except while
	 * RUNNING, when only the thread doing the I/O touches them). */
	enum coll_state state;
	uint32_t joined;		/* requests that arrived */
	/* parts[0..joined): one per participant, participants entries;
	 * owned (their buffers too); views and data borrowed. */
	struct coll_part *parts;
	int64_t result;			/* when DONE: bytes, or -errno */
	struct clf_error error;		/* when DONE and result < 0 */
	struct coll_op *next;		/* table list, while GATHERING */
};

struct iod_colls {
	pthread_mutex_t mutex;
	/* Protected by mutex. */
	struct coll_op *gathering;	/* operations waiting for requests */
	struct iod_coll_done *done;	/* those whose I/O started */
};

int iod_colls_create(const char *dir, struct iod_colls **out)
{
	struct iod_colls *cs = calloc(1, sizeof(*cs));
	char path[4096];
	int err;

	if (!cs)
		return clf_fail(ENOMEM, "iod: out of memory");
	if (snprintf(path, sizeof(path), "%s/collectives", dir) >=
	    (int)sizeof(path)) {
		free(cs);
		return clf_fail(ENAMETOOLONG, "iod: the path '%s' is too long",
				dir);
	}
	err = iod_coll_done_open(path, &cs->done);
	if (err) {
		free(cs);
		return err;
	}
	err = -pthread_mutex_init(&cs->mutex, NULL);
	if (err) {
		iod_coll_done_close(cs->done);
		free(cs);
		return clf_fail_neg(err, "iod: cannot create a mutex");
	}
	*out = cs;
	return 0;
}

void iod_colls_free(struct iod_colls *cs)
{
	if (!cs)
		return;
	iod_coll_done_close(cs->done);
	pthread_mutex_destroy(&cs->mutex);
	free(cs);
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

static struct coll_op *op_find(struct iod_colls *cs, uint64_t tag,
			       uint64_t file, uint32_t subfile)
{
	for (struct coll_op *op = cs->gathering; op; op = op->next)
		if (op->tag == tag && op->file == file &&
		    op->subfile == subfile)
			return op;
	return NULL;
}

static void op_unlink(struct iod_colls *cs, struct coll_op *op)
{
	for (struct coll_op **pp = &cs->gathering; *pp; pp = &(*pp)->next) {
		if (*pp == op) {
			*pp = op->next;
			op->next = NULL;
			return;
		}
	}
}

/* Charge (take) or give back n bytes of the collectives' pool share. */
static bool coll_charge(struct iod_server *srv, size_t n, bool take)
{
	bool ok = true;

	pthread_mutex_lock(&srv->buf_lock);
	if (!take)
		iod_pool_give(&srv->bufs, &srv->coll_charged, n);
	else if ((ok = iod_pool_fits(&srv->bufs, srv->coll_charged, n)))
		iod_pool_take(&srv->bufs, &srv->coll_charged, n);
	pthread_mutex_unlock(&srv->buf_lock);
	return ok;
}

static void op_free(struct iod_server *srv, struct coll_op *op)
{
	for (uint32_t i = 0; op->parts && i < op->participants; i++)
		iod_pieces_release(&op->parts[i].buf);
	free(op->parts);
	if (op->charged)
		coll_charge(srv, op->charged, false);
	free(op);
}

/* A new operation in the table, with its deadline from now. */
static int op_create(struct iod_server *srv, const struct iod_view *v,
		     uint64_t tag, uint32_t participants, int write,
		     struct coll_op **out)
{
	struct iod_colls *cs = srv->colls;
	size_t table = (size_t)participants * sizeof(struct coll_part);
	struct coll_op *op;
	char b[32];

	/* The bound on P (rule 2): memory, not a count. */
	if (!coll_charge(srv, table, true))
		return clf_fail(E2BIG,
				"iod: collective operation 0x%" PRIx64 " of %" PRIu32 " participants: its table (%s) passes what this iod lends collectives now (iod_buffer_memory)",
				tag, participants,
				iod_bytes_str(table, b, sizeof(b)));
	op = calloc(1, sizeof(*op));
	if (op)
		op->parts = calloc(participants, sizeof(*op->parts));
	if (!op || !op->parts) {
		free(op);
		coll_charge(srv, table, false);
		return clf_fail(ENOMEM, "iod: out of memory");
	}
	op->charged = table;
	atomic_init(&op->done, 0);
	atomic_init(&op->refs, 0);
	op->tag = tag;
	op->file = v->file;
	op->subfile = v->subfile;
	op->participants = participants;
	op->write = write;
	op->deadline_ms = clf_now_ms() + srv->timeout_ms;
	op->state = COLL_GATHERING;
	op->next = cs->gathering;
	cs->gathering = op;
	*out = op;
	return 0;
}

/* Wait on a futex word while it holds val, at most ms. */
static void futex_wait_ms(atomic_uint *word, unsigned val, int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)(ms % 1000) * 1000000L };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* End the operation with result (when < 0, the last error says why) and
 * wake every participant waiting in it, in one call; the table mutex is
 * held. */
static void op_finish(struct iod_colls *cs, struct coll_op *op,
		      int64_t result)
{
	if (op->state == COLL_GATHERING)
		op_unlink(cs, op);
	op->state = COLL_DONE;
	op->result = result;
	if (result < 0) {
		op->error = *clf_error_last();
		op->error.err = (int)result;
	}
	atomic_store_explicit(&op->done, 1, memory_order_release);
	syscall(SYS_futex, &op->done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
}

/*
 * Move the pieces of part p below bound into round (rule 6a); the rest
 * stays in p's buffer, in order.
 */
static int take_below(struct coll_part *p, int64_t bound,
		      struct iod_pieces *round)
{
	size_t k = 0;

	while (k < p->buf.n && p->buf.p[k].off < bound)
		k++;
	if (!k)
		return 0;
	if (round->n + k > round->cap) {
		size_t cap = round->n + k;
		struct iod_piece *bigger;

		if (cap < 2 * round->cap)
			cap = 2 * round->cap;
		bigger = realloc(round->p, cap * sizeof(*bigger));
		if (!bigger)
			return clf_fail(ENOMEM, "iod: out of memory");
		round->p = bigger;
		round->cap = cap;
	}
	memcpy(round->p + round->n, p->buf.p, k * sizeof(*round->p));
	round->n += k;
	memmove(p->buf.p, p->buf.p + k, (p->buf.n - k) * sizeof(*p->buf.p));
	p->buf.n -= k;
	return 0;
}

/*
 * Dense fine-grained operations skip the pieces: every participant's
 * runs go through one staging window by its mapping's progressions
 * (iod_view_coll_io).  *done: whether it did; not with the test hook
 * that makes rounds small, whose tests are about the rounds.  The window
 * is charged to the buffer pool as the rounds' piece tables are; with
 * the pool full the pieces do it in their smallest rounds.
 */
static int64_t op_staged(struct iod_server *srv, struct coll_op *op,
			 bool *done)
{
	struct iod_coll_src *s;
	int64_t n = 0;
	bool fits;

	*done = false;
	if (srv->hooks.coll_pieces)
		return 0;
	pthread_mutex_lock(&srv->buf_lock);
	fits = iod_pool_fits(&srv->bufs, srv->coll_charged, IOD_COLL_WINDOW);
	if (fits)
		iod_pool_take(&srv->bufs, &srv->coll_charged, IOD_COLL_WINDOW);
	pthread_mutex_unlock(&srv->buf_lock);
	if (!fits)
		return 0;
	s = calloc(op->joined ? op->joined : 1, sizeof(*s));
	if (!s)
		goto give;	/* the pieces will do */
	for (uint32_t i = 0; i < op->joined; i++) {
		const struct iod_piece_src *src = &op->parts[i].src;

		s[i] = (struct iod_coll_src){ src->v->map, src->lo, src->hi,
					      src->data,
					      (int64_t)op->parts[i].len };
	}
	if (iod_view_coll_fits(s, (int)op->joined)) {
		n = iod_view_coll_io(srv->st, op->file, op->subfile, s,
				     (int)op->joined, op->write);
		*done = true;
	}
	free(s);
give:
	pthread_mutex_lock(&srv->buf_lock);
	iod_pool_give(&srv->bufs, &srv->coll_charged, IOD_COLL_WINDOW);
	pthread_mutex_unlock(&srv->buf_lock);
	return n;
}

/* The merged I/O of every participant's pieces, round by round. */
static int64_t op_rounds(struct iod_server *srv, struct coll_op *op)
{
	size_t limit = srv->hooks.coll_pieces ? srv->hooks.coll_pieces
					      : COLL_ROUND_PIECES;
	struct iod_pieces round = IOD_PIECES_INIT;
	int64_t done = 0, n = 0;
	size_t per, busy = 0, charged = 0;
	bool staged;

	n = op_staged(srv, op, &staged);
	if (staged)
		return n;
	if (limit > COLL_ROUND_MIN) {
		size_t want = 2 * limit * sizeof(struct iod_piece);

		pthread_mutex_lock(&srv->buf_lock);
		if (iod_pool_fits(&srv->bufs, srv->coll_charged, want)) {
			iod_pool_take(&srv->bufs, &srv->coll_charged, want);
			charged = want;
		} else {
			limit = COLL_ROUND_MIN;
		}
		pthread_mutex_unlock(&srv->buf_lock);
	}

	for (uint32_t i = 0; i < op->joined; i++)
		busy += op->parts[i].len > 0;
	per = busy ? limit / busy : limit;
	if (per == 0)
		per = 1;
	for (;;) {
		int64_t bound = INT64_MAX;

		for (uint32_t i = 0; i < op->joined && n >= 0; i++) {
			struct coll_part *p = &op->parts[i];

			n = iod_piece_src_fill(&p->src, &p->buf, per);
			if (p->src.frontier < bound)
				bound = p->src.frontier;
		}
		round.n = 0;
		for (uint32_t i = 0; i < op->joined && n >= 0; i++)
			n = take_below(&op->parts[i], bound, &round);
		if (n < 0 || round.n == 0)
			break;
		if (op->write)
			n = iod_merge_write(srv->st, op->file, op->subfile,
					    round.p, round.n);
		else
			n = iod_merge_read(srv->st, op->file, op->subfile,
					   round.p, round.n);
		if (n < 0)
			break;
		done += n;
	}
	iod_pieces_release(&round);
	for (uint32_t i = 0; i < op->joined; i++)
		iod_pieces_release(&op->parts[i].buf);
	if (charged) {
		pthread_mutex_lock(&srv->buf_lock);
		iod_pool_give(&srv->bufs, &srv->coll_charged, charged);
		pthread_mutex_unlock(&srv->buf_lock);
	}
	return n < 0 ? n : done;
}

/*
 * After the I/O succeeded, the participant that did it sends the others'
 * small replies (rule 7); the last part is its own, which it sends on
 * its return as any request's.  Each is sent before its participant is
 * woken, so that thread finds its connection as it left it.
 */
static void op_answer(struct iod_server *srv, struct coll_op *op)
{
	for (uint32_t i = 0; i + 1 < op->joined; i++) {
		struct iod_coll_answer *a = op->parts[i].ans;

		if (!a || a->rep->head_len + a->rep->data_len >
			  IOD_COLL_ANSWER_MAX)
			continue;
		a->rep->sent_err = iod_reply_send(a->cn, a->req, a->rep);
		a->rep->sent = true;
		atomic_fetch_add(&srv->coll_answered, 1);
	}
}

/* The last participant: the I/O for everyone, without the mutex. */
static void op_perform(struct iod_server *srv, struct coll_op *op)
{
	struct iod_colls *cs = srv->colls;
	int64_t total = 0, n;

	for (uint32_t i = 0; i < op->joined; i++)
		total += (int64_t)op->parts[i].len;
	if (op->write)
		iod_hook_before_write(srv, (size_t)total);
	n = op_rounds(srv, op);
	atomic_fetch_add(&srv->coll_ops, 1);
	if (n >= 0)
		op_answer(srv, op);
	pthread_mutex_lock(&cs->mutex);
	op_finish(cs, op, n);
	pthread_mutex_unlock(&cs->mutex);
}

/*
 * Wait until the operation is DONE; called with the table mutex held,
 * returns without it.  A gathering operation is discarded at its
 * deadline, or when the iod stops, by whichever participant notices
 * first.  The wait itself is on the futex word op->done, so that the
 * participants woken at the end leave at once, none waiting for the
 * table mutex (a chain of wake-ups, one per participant).
 */
static void op_wait(struct iod_server *srv, struct coll_op *op)
{
	struct iod_colls *cs = srv->colls;

	for (;;) {
		int64_t now = clf_now_ms(), until = now + COLL_POLL_MS;

		if (op->state == COLL_DONE)
			break;
		if (op->state == COLL_GATHERING && now >= op->deadline_ms) {
			clf_fail(ETIMEDOUT,
				 "iod: collective operation 0x%" PRIx64 " on subfile %" PRIu32 " of file 0x%" PRIx64 ": %" PRIu32 " of %" PRIu32 " participants came within the timeout",
				 op->tag, op->subfile, op->file, op->joined,
				 op->participants);
			op_finish(cs, op, -ETIMEDOUT);
			break;
		}
		if (op->state == COLL_GATHERING && atomic_load(&srv->stop)) {
			clf_fail(ESHUTDOWN,
				 "iod: stopping; collective operation discarded");
			op_finish(cs, op, -ESHUTDOWN);
			break;
		}
		/* While RUNNING the I/O goes on past the deadline: it is
		 * bounded by the disk, and its result is everyone's. */
		if (op->state == COLL_GATHERING && op->deadline_ms < until)
			until = op->deadline_ms;
		pthread_mutex_unlock(&cs->mutex);
		futex_wait_ms(&op->done, 0, until - now);
		if (atomic_load_explicit(&op->done, memory_order_acquire))
			return;
		pthread_mutex_lock(&cs->mutex);
	}
	pthread_mutex_unlock(&cs->mutex);
}

/* Find or begin the operation this request belongs to; mutex held. */
static int op_enter(struct iod_server *srv, const struct iod_view *v,
		    uint64_t tag, uint32_t participants, int write,
		    struct coll_op **out)
{
	struct coll_op *op = op_find(srv->colls, tag, v->file, v->subfile);

	if (!op)
		return op_create(srv, v, tag, participants, write, out);
	if (op->participants != participants || op->write != write)
		return clf_fail(EINVAL,
				"iod: collective operation 0x%" PRIx64 " on subfile %" PRIu32 " of file 0x%" PRIx64 " is a %s of %" PRIu32 " participants; this request is a %s of %" PRIu32,
				tag, v->subfile, v->file,
				op->write ? "write" : "read", op->participants,
				write ? "write" : "read", participants);
	*out = op;
	return 0;
}

int64_t iod_coll_join(struct iod_server *srv, const struct iod_view *v,
		      uint64_t tag, uint32_t participants, int write,
		      bool again, int64_t lo, int64_t hi, void *data,
		      size_t len, struct iod_coll_answer *ans)
{
	struct iod_colls *cs = srv->colls;
	struct coll_op *op = NULL;	/* shared; freed by the last to leave */
	struct iod_piece_src src;
	struct clf_error why;
	int64_t result;
	bool last;
	int err;

	/* O(depth): the pieces are made once everyone came (rule 5). */
	err = iod_piece_src_init(&src, v, lo, hi, data, len);
	if (err)
		return err;
	pthread_mutex_lock(&cs->mutex);
	/* A late participant of an operation that ran before this iod
	 * restarted: the others are gone; served alone (iod_coll_done.c). */
	if (again && !op_find(cs, tag, v->file, v->subfile) &&
	    iod_coll_done_seen(cs->done, v->file, v->subfile, tag)) {
		iod_log("collective operation 0x%" PRIx64 " on subfile %" PRIu32 " of file 0x%" PRIx64 " ran before this iod restarted: its late participant is served alone",
			tag, v->subfile, v->file);
		participants = 1;
	}
	err = op_enter(srv, v, tag, participants, write, &op);
	if (err) {
		pthread_mutex_unlock(&cs->mutex);
		return err;
	}
	op->parts[op->joined].src = src;
	op->parts[op->joined].len = len;
	op->parts[op->joined].ans = ans;
	op->joined++;
	atomic_fetch_add(&op->refs, 1);
	if (op->joined == op->participants) {
		op_unlink(cs, op);
		op->state = COLL_RUNNING;
		iod_coll_done_note(cs->done, op->file, op->subfile, op->tag);
		pthread_mutex_unlock(&cs->mutex);
		op_perform(srv, op);
		iod_hook_after_coll(srv);
	} else {
		/* Waiting for the others frees this worker's place for
		 * their requests (daemon.h). */
		clf_daemon_wait_begin();
		op_wait(srv, op);
		clf_daemon_wait_end();
		if (!ans || !ans->rep->sent)
			atomic_fetch_add(&srv->coll_woken, 1);
	}
	/* DONE: result and error are set for good (op->done, acquire). */
	result = op->result;
	if (result < 0)
		why = op->error;
	last = atomic_fetch_sub(&op->refs, 1) == 1;
	if (last)
		op_free(srv, op);
	if (result < 0)
		err = clf_error_restore(&why);
	return err ? err : (int64_t)len;
}

/*
 * Join piece i (mutex held): its operation in ops[i], or NULL with
 * result[i] and why[i] set.  An operation it completes is marked
 * RUNNING, for the caller to perform.  A piece has no answer for the
 * performer to send: its reply goes in the VIEW_MERGED's.
 */
static bool many_enter(struct iod_server *srv,
		       const struct iod_coll_piece *pc, struct coll_op **opp,
		       int64_t *result, struct clf_error *why)
{
	struct iod_colls *cs = srv->colls;
	struct iod_piece_src src;
	struct coll_op *op;
	int err = iod_piece_src_init(&src, pc->v, pc->lo, pc->hi, pc->data,
				     pc->len);

	if (!err)
		err = op_enter(srv, pc->v, pc->tag, pc->participants,
			       pc->write, &op);
	if (err) {
		*opp = NULL;
		*result = err;
		*why = *clf_error_last();
		return false;
	}
	op->parts[op->joined].src = src;
	op->parts[op->joined].len = pc->len;
	op->parts[op->joined].ans = NULL;
	op->joined++;
	atomic_fetch_add(&op->refs, 1);
	*opp = op;
	if (op->joined < op->participants)
		return false;
	op_unlink(cs, op);
	op->state = COLL_RUNNING;
	iod_coll_done_note(cs->done, op->file, op->subfile, op->tag);
	return true;
}

void iod_coll_join_many(struct iod_server *srv,
			const struct iod_coll_piece *pieces, size_t n,
			int64_t *result, struct clf_error *why)
{
	struct iod_colls *cs = srv->colls;
	struct coll_op **ops = calloc(n ? n : 1, sizeof(*ops));
	bool *run = calloc(n ? n : 1, sizeof(*run));

	if (!ops || !run) {
		clf_fail(ENOMEM, "iod: out of memory");
		for (size_t i = 0; i < n; i++) {
			result[i] = -ENOMEM;
			why[i] = *clf_error_last();
		}
		goto out;
	}
	pthread_mutex_lock(&cs->mutex);
	for (size_t i = 0; i < n; i++)
		run[i] = many_enter(srv, &pieces[i], &ops[i], &result[i],
				    &why[i]);
	pthread_mutex_unlock(&cs->mutex);
	/* Operations these pieces completed: their I/O, for everyone. */
	for (size_t i = 0; i < n; i++) {
		if (!run[i])
			continue;
		op_perform(srv, ops[i]);
		iod_hook_after_coll(srv);
	}
	for (size_t i = 0; i < n; i++) {
		struct coll_op *op = ops[i];

		if (!op)
			continue;
		if (!atomic_load_explicit(&op->done, memory_order_acquire)) {
			pthread_mutex_lock(&cs->mutex);
			clf_daemon_wait_begin();
			op_wait(srv, op);	/* unlocks */
			clf_daemon_wait_end();
		}
		/* DONE: result and error are set for good. */
		result[i] = op->result < 0 ? op->result
					   : (int64_t)pieces[i].len;
		if (op->result < 0)
			why[i] = op->error;
		if (atomic_fetch_sub(&op->refs, 1) == 1)
			op_free(srv, op);
	}
out:
	free(ops);
	free(run);
}
