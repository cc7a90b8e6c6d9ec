// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_collective.c -- collective VIEW_WRITE/VIEW_READ at a real iod:
 * P connections whose requests form one merged operation, participants
 * with nothing to do, participants that never come or go away, and
 * requests that disagree with the operation they would join.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define TIMEOUT_MS 1500
#define P 3
#define NSUB 2
#define FILE_ID 0x42
#define VIEW_BYTES 6000		/* per participant */

/*
 * Under ThreadSanitizer (make check-tsan) every byte the iod touches has
 * shadow memory besides, and each of its threads state of its own, so
 * the RSS bound scales (as in test_iod_memory.c); data held whole would
 * still exceed it by far (its shadow too).  Under AddressSanitizer freed
 * buffers stay resident a while (its quarantine): twice the bound, still
 * under the 48 MiB of data held whole.
 */
#ifdef __SANITIZE_THREAD__
#define RSS_SCALE 4
#elif defined(__SANITIZE_ADDRESS__)
#define RSS_SCALE 2
#else
#define RSS_SCALE 1
#endif

/* One participant: its own connection, view and requests. */
struct part {
	const struct iodh *h;
	int rank;
	CLF_Datatype *subs;	/* NSUB subfile patterns; borrowed */
	int64_t lo, hi;		/* view range; lo == hi: nothing to do */
	int write;
	uint64_t tag;
	uint32_t participants;
	int nsub;		/* subfiles 0..nsub-1; 0: all NSUB */
	/* Results, read by the main thread after the join. */
	int64_t got[NSUB];	/* each reply: count or -errno */
	char msg[NSUB][256];
	int read_mismatch;	/* read data differed from the reference */
	size_t want[NSUB];	/* its packed bytes per subfile (reference) */
	int64_t elapsed_ms;
};

/* Rank p's view: cyclic(2) over P processes. */
static CLF_Datatype rank_view(int p)
{
	CLF_Datatype v = CLF_Type_vector(2 * p, 2 * p + 1, 2 * P, 1, CLF_BYTE);

	ck_assert_ptr_nonnull(v);
	return v;
}

static void *part_main(void *arg)
{
	struct part *pt = arg;
	CLF_Datatype view = rank_view(pt->rank);
	size_t cap = (size_t)(pt->hi - pt->lo) + 1, packed[NSUB];
	uint8_t *mine[NSUB], *back = iodh_alloc(cap);
	struct clf_conn *c = NULL;
	uint32_t handle[NSUB];
	int64_t t0 = clf_now_ms();
	int nsub = pt->nsub ? pt->nsub : NSUB;
	int err;

	/* Every share first: the others' clock runs once we send. */
	for (int j = 0; j < nsub; j++) {
		mine[j] = iodh_alloc(cap);
		packed[j] = iodh_ref_pack(view, 0, pt->subs[j], 0, pt->lo,
					  pt->hi, 1, mine[j], NULL);
		pt->want[j] = packed[j];
	}
	err = iodh_connect_with(pt->h, &pt->h->secret, &c);
	/* A collective reply may come a whole iod timeout late: wait for
	 * it longer than that, or our own limit would race the iod's. */
	if (!err)
		clf_conn_set_timeout(c, 3 * pt->h->timeout_ms);
	for (int j = 0; j < nsub && !err; j++)
		err = cl_view_register(c, FILE_ID, (uint32_t)j, view, 0,
				       pt->subs[j], 0, &handle[j]);
	for (int j = 0; j < nsub; j++) {
		size_t n = packed[j];

		if (err) {
			pt->got[j] = err;
			continue;
		}
		if (pt->write) {
			pt->got[j] = cl_view_write(c, handle[j], pt->lo,
						   pt->hi, mine[j], n, pt->tag,
						   pt->participants);
		} else {
			pt->got[j] = cl_view_read(c, handle[j], pt->lo, pt->hi,
						  back, cap, pt->tag,
						  pt->participants);
			if (pt->got[j] == (int64_t)n &&
			    memcmp(back, mine[j], n))
				pt->read_mismatch = 1;
		}
		if (pt->got[j] < 0)
			snprintf(pt->msg[j], sizeof(pt->msg[j]), "%s",
				 CLF_Last_error());
	}
	pt->elapsed_ms = clf_now_ms() - t0;
	clf_conn_close(c);
	CLF_Type_free(&view);
	for (int j = 0; j < nsub; j++)
		free(mine[j]);
	free(back);
	return NULL;
}

/* Run participants pts[0..n) at once and wait for all. */
static void run_parts(struct part *pts, int n)
{
	pthread_t tid[8];

	ck_assert_int_le(n, 8);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&tid[i], NULL, part_main,
						&pts[i]), 0);
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

static void make_subs(CLF_Datatype *subs)
{
	/* cyclic(4) over 2 subfiles: every rank's cyclic(2) pieces land
	 * between the others' in both subfiles. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 8, 1, 4, NSUB, CLF_BYTE,
					   subs), 0);
}

/* Count of rank p's packed bytes of [lo, hi) in subfile j. */
static size_t rank_count(int p, CLF_Datatype sub, int64_t lo, int64_t hi)
{
	CLF_Datatype v = rank_view(p);
	size_t n = iodh_ref_pack(v, 0, sub, 0, lo, hi, 0, NULL, NULL);

	CLF_Type_free(&v);
	return n;
}

/* Each subfile holds exactly what the ranks' views put there. */
static void check_contents(struct clf_conn *c, CLF_Datatype *subs,
			   int64_t sub_len)
{
	uint8_t *got = iodh_alloc((size_t)sub_len + 16);

	for (int j = 0; j < NSUB; j++) {
		ck_assert_int_eq(cl_sub_read(c, FILE_ID, (uint32_t)j, 0, got,
					     (size_t)sub_len + 16), sub_len);
		for (int64_t s = 0; s < sub_len; s++) {
			int64_t f;

			ck_assert_int_eq(CLF_Type_unmap(subs[j], 0, s, &f), 0);
			ck_assert_msg(got[s] == iodh_val(f, 1),
				      "subfile %d byte %" PRId64 ": %u, expected %u",
				      j, s, got[s], iodh_val(f, 1));
		}
	}
	free(got);
}

/* Rank p's bytes of view range [lo, hi) are where its view puts them
 * in every subfile (round 1's values). */
static void check_piece(struct clf_conn *c, CLF_Datatype *subs, int p,
			int64_t lo, int64_t hi)
{
	CLF_Datatype v = rank_view(p);
	size_t cap = (size_t)(hi - lo) + 1;
	uint8_t *want = iodh_alloc(cap), *got = iodh_alloc(1);
	int64_t *soff = iodh_alloc(cap * sizeof(*soff));

	for (int j = 0; j < NSUB; j++) {
		size_t n = iodh_ref_pack(v, 0, subs[j], 0, lo, hi, 1, want,
					 soff);

		for (size_t i = 0; i < n; i++) {
			ck_assert_int_eq(cl_sub_read(c, FILE_ID, (uint32_t)j,
						     soff[i], got, 1), 1);
			ck_assert_msg(got[0] == want[i],
				      "rank %d subfile %d byte %" PRId64 ": %u, expected %u",
				      p, j, soff[i], got[0], want[i]);
		}
	}
	CLF_Type_free(&v);
	free(want);
	free(got);
	free(soff);
}

/*
 * Three participants write view_bytes each collectively, then read them
 * back; env: a test hook for the iod, or NULL; stopped: NULL, or a line
 * the iod's log must hold once it stopped.
 */
static void write_then_read_three_log(const char *env, int64_t view_bytes,
				      int timeout_ms, const char *stopped)
{
	CLF_Datatype subs[NSUB];
	struct part pts[P];
	struct iodh h;
	struct clf_conn *c;
	struct clf_proto_status before, after;
	uint64_t total = 0;

	make_subs(subs);
	iodh_init(&h, timeout_ms);
	h.env[0] = env;
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_status(c, &before), 0);
	for (int p = 0; p < P; p++)
		pts[p] = (struct part){ .h = &h, .rank = p, .subs = subs,
					.lo = 0, .hi = view_bytes, .write = 1,
					.tag = 7, .participants = P };
	run_parts(pts, P);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < NSUB; j++) {
			size_t n = pts[p].want[j];

			ck_assert_msg(pts[p].got[j] == (int64_t)n,
				      "rank %d subfile %d: %" PRId64 " (%s), expected %zu",
				      p, j, pts[p].got[j], pts[p].msg[j], n);
			total += n;
		}
	/* The file is P * view_bytes bytes, half in each subfile. */
	check_contents(c, subs, P * view_bytes / NSUB);
	ck_assert_int_eq(cl_status(c, &after), 0);
	ck_assert_uint_eq(after.bytes_written - before.bytes_written, total);

	/* The same, read collectively: each gets its own bytes. */
	for (int p = 0; p < P; p++) {
		pts[p].write = 0;
		pts[p].tag = 8;
	}
	run_parts(pts, P);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < NSUB; j++) {
			int64_t n = (int64_t)pts[p].want[j];

			ck_assert_msg(pts[p].got[j] == n,
				      "read rank %d subfile %d: %" PRId64 " (%s)",
				      p, j, pts[p].got[j], pts[p].msg[j]);
			ck_assert_int_eq(pts[p].read_mismatch, 0);
		}
	clf_conn_close(c);
	/* The iod took the hook: these were its rounds. */
	if (env)
		ck_assert_msg(iodh_log_has(&h, env), "the iod ignored %s", env);
	iodh_stop(&h);
	if (stopped)
		ck_assert_msg(iodh_log_has(&h, stopped),
			      "the iod's log lacks \"%s\"", stopped);
	iodh_cleanup(&h);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
}

static void write_then_read_three(const char *env, int64_t view_bytes,
				  int timeout_ms)
{
	write_then_read_three_log(env, view_bytes, timeout_ms, NULL);
}

START_TEST(test_collective_write_of_three_is_merged_then_read_back)
{
	write_then_read_three(NULL, VIEW_BYTES, TIMEOUT_MS);
}
END_TEST

/*
 * 1000 pieces per participant and subfile, merged 7 at a time (rule 6a
 * of iod_collective.c): an operation with more pieces than a round is
 * cut into rounds, never refused ("more than 4194304 pieces; use
 * independent I/O" once), and every byte lands where the views say.
 * The same at full size needs 4.2 million pieces: seconds of CPU.
 */
/*
 * Rule 7 of iod_collective.c: the participant that did the I/O sends the
 * waiting participants' small replies itself, so none waits for its
 * thread's wake-up (on a machine whose cores the clients' MPI processes
 * hold, each wake-up waits for a core).  Two subfiles, a write and a
 * read: 4 operations, each with 2 participants that waited; all 8
 * answered by the last, none woken to answer.  Before, every waiting
 * participant was woken to send its own reply, one after the other
 * through the table mutex.
 */
START_TEST(test_collective_waiting_participants_are_answered_by_the_last)
{
	write_then_read_three_log(NULL, VIEW_BYTES, TIMEOUT_MS,
				  "collective operations: 4 run; of the participants that waited in them, 8 answered by the one that did the I/O, 0 woken to answer");
}
END_TEST

/*
 * Replies over IOD_COLL_ANSWER_MAX (32 KiB) are sent by their own
 * threads, in parallel, all woken at once: the writes' counts are still
 * answered by the last (4), the reads of 40000 bytes per subfile are not
 * (4 woken), and every byte reads back right.
 */
START_TEST(test_collective_big_read_replies_are_sent_by_their_own_threads)
{
	write_then_read_three_log(NULL, 80000, TIMEOUT_MS,
				  "collective operations: 4 run; of the participants that waited in them, 4 answered by the one that did the I/O, 4 woken to answer");
}
END_TEST

START_TEST(test_collective_with_more_pieces_than_a_round_goes_in_rounds)
{
	write_then_read_three("CLF_TEST_IOD_COLL_PIECES=7", VIEW_BYTES,
			      TIMEOUT_MS);
}
END_TEST


START_TEST(test_collective_participant_with_nothing_still_counts)
{
	CLF_Datatype subs[NSUB];
	struct part pts[P];
	struct iodh h;
	struct clf_conn *c;
	uint8_t buf[64];

	make_subs(subs);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	for (int p = 0; p < P; p++)
		pts[p] = (struct part){ .h = &h, .rank = p, .subs = subs,
					.lo = 0, .hi = 20, .write = 1,
					.tag = 1, .participants = P };
	pts[1].lo = pts[1].hi = 10;	/* rank 1 has no bytes */
	run_parts(pts, P);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < NSUB; j++)
			if (pts[p].got[j] != (int64_t)rank_count(p, subs[j],
								 pts[p].lo,
								 pts[p].hi))
				ck_abort_msg("rank %d subfile %d: %" PRId64 " (%s)",
					     p, j, pts[p].got[j],
					     pts[p].msg[j]);
	ck_assert_int_lt(pts[0].elapsed_ms, TIMEOUT_MS);
	/* Rank 1's bytes are holes: zeros where its view lies. */
	c = iodh_connect(&h);
	ck_assert_int_gt(cl_sub_read(c, FILE_ID, 0, 0, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[2], 0);	/* file byte 2, rank 1's */
	ck_assert_uint_eq(buf[0], iodh_val(0, 1));
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
}
END_TEST

START_TEST(test_collective_times_out_when_a_participant_never_comes)
{
	CLF_Datatype subs[NSUB];
	struct part pts[P];
	struct iodh h;
	struct clf_conn *c;

	make_subs(subs);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	/* Ranks 0 and 1 come, rank 2 never does. */
	for (int p = 0; p < 2; p++)
		pts[p] = (struct part){ .h = &h, .rank = p, .subs = subs,
					.lo = 0, .hi = 100, .write = 1,
					.tag = 5, .participants = P };
	run_parts(pts, 2);
	for (int p = 0; p < 2; p++) {
		ck_assert_msg(pts[p].got[0] == -ETIMEDOUT,
			      "rank %d: %" PRId64 " (%s)", p, pts[p].got[0],
			      pts[p].msg[0]);
		ck_assert_ptr_nonnull(strstr(pts[p].msg[0], "2 of 3"));
		ck_assert_int_le(pts[p].elapsed_ms, 2 * TIMEOUT_MS + 2000);
	}
	/* Subfile 0 waited one timeout, subfile 1 another: the rank that
	 * came first to both waited them whole. */
	ck_assert_int_ge(pts[0].elapsed_ms > pts[1].elapsed_ms ?
			 pts[0].elapsed_ms : pts[1].elapsed_ms,
			 2 * TIMEOUT_MS - 50);
	c = iodh_connect(&h);
	/* The operation merged nothing, but each piece that came is written
	 * on its own, as a piece that went straight to its subfile is. */
	for (int p = 0; p < 2; p++)
		check_piece(c, subs, p, 0, 100);
	/* The operation was discarded: the tag starts afresh. */
	for (int p = 0; p < 2; p++)
		pts[p].participants = 2;
	run_parts(pts, 2);
	for (int p = 0; p < 2; p++)
		ck_assert_msg(pts[p].got[0] ==
			      (int64_t)rank_count(p, subs[0], 0, 100),
			      "rank %d: %" PRId64 " (%s)", p, pts[p].got[0],
			      pts[p].msg[0]);
	clf_conn_close(c);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "participants came within the timeout"));
	iodh_cleanup(&h);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
}
END_TEST

/*
 * Send a collective write for rank p on subfile 0 without waiting for
 * the reply, then drop the connection.
 */
static void send_and_vanish(const struct iodh *h, CLF_Datatype *subs, int p,
			    uint64_t tag, uint32_t participants)
{
	CLF_Datatype view = rank_view(p);
	struct clf_conn *c = iodh_connect(h);
	struct clf_proto_view_io_req m = {
		.flags = CLF_PROTO_VIEW_COLLECTIVE, .lo = 0, .hi = 100,
		.coll_tag = tag, .participants = participants,
	};
	uint8_t data[100], body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_header hd;
	struct iovec iov[2];
	size_t n;

	ck_assert_int_eq(cl_view_register(c, FILE_ID, 0, view, 0, subs[0], 0,
					  &m.handle), 0);
	n = iodh_ref_pack(view, 0, subs[0], 0, 0, 100, 1, data, NULL);
	m.data = (struct clf_proto_bytes){ data, (uint32_t)n };
	ck_assert_int_eq(clf_proto_view_write_req_encode_head(&w, &m), 0);
	iov[0] = (struct iovec){ body, w.pos };
	iov[1] = (struct iovec){ data, n };
	clf_proto_header_init(&hd, CLF_PROTO_OP_VIEW_WRITE,
			      clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_send(c, &hd, iov, 2), 0);
	clf_conn_close(c);
	CLF_Type_free(&view);
}

START_TEST(test_collective_survives_participants_that_disconnect)
{
	CLF_Datatype subs[NSUB];
	struct part pt;
	struct iodh h;
	struct clf_conn *c;
	struct clf_proto_status st;
	uint8_t buf[64];
	int64_t end;

	make_subs(subs);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);

	/* Rank 0 sends and goes; rank 1 completes the pair: done, and
	 * rank 0's bytes are written though nobody hears the reply. */
	send_and_vanish(&h, subs, 0, 21, 2);
	pt = (struct part){ .h = &h, .rank = 1, .subs = subs, .lo = 0,
			    .hi = 100, .write = 1, .tag = 21,
			    .participants = 2, .nsub = 1 };
	run_parts(&pt, 1);
	ck_assert_msg(pt.got[0] == (int64_t)rank_count(1, subs[0], 0, 100),
		      "%" PRId64 " (%s)", pt.got[0], pt.msg[0]);
	ck_assert_int_gt(cl_sub_read(c, FILE_ID, 0, 0, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[0], iodh_val(0, 1));	/* rank 0's */
	ck_assert_uint_eq(buf[2], iodh_val(2, 1));	/* rank 1's */

	/* Rank 0 sends and goes, rank 2 never comes: rank 1 times out
	 * instead of hanging. */
	send_and_vanish(&h, subs, 0, 22, 3);
	pt.tag = 22;
	pt.participants = 3;
	pt.hi = 50;
	run_parts(&pt, 1);
	ck_assert_int_eq(pt.got[0], -ETIMEDOUT);
	ck_assert_int_le(pt.elapsed_ms, 2 * TIMEOUT_MS + 2000);

	/* Every connection but ours is gone, views and all. */
	end = clf_now_ms() + IODH_WAIT_MS;
	do
		ck_assert_int_eq(cl_status(c, &st), 0);
	while ((st.connections != 1 || st.views != 0) &&
	       clf_now_ms() < end);
	ck_assert_uint_eq(st.connections, 1);
	ck_assert_uint_eq(st.views, 0);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
}
END_TEST

/*
 * Run two participants of tag 9 at once that disagree; whichever comes
 * second is refused at once with a message containing `why`, the other
 * waits for its operation's timeout.
 */
static void check_disagreement(struct part *pts, const char *why)
{
	int refused, other;

	run_parts(pts, 2);
	refused = pts[0].got[0] == -EINVAL ? 0 : 1;
	other = 1 - refused;
	ck_assert_msg(pts[refused].got[0] == -EINVAL,
		      "%" PRId64 " (%s), %" PRId64 " (%s)", pts[0].got[0],
		      pts[0].msg[0], pts[1].got[0], pts[1].msg[0]);
	ck_assert_msg(strstr(pts[refused].msg[0], why), "%s",
		      pts[refused].msg[0]);
	ck_assert_int_lt(pts[refused].elapsed_ms, TIMEOUT_MS);
	ck_assert_int_eq(pts[other].got[0], -ETIMEDOUT);
}

START_TEST(test_collective_request_that_disagrees_is_refused)
{
	CLF_Datatype subs[NSUB];
	struct part pts[2];
	struct iodh h;

	make_subs(subs);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	/* A write of 3 and a write of 2. */
	pts[0] = (struct part){ .h = &h, .rank = 0, .subs = subs, .lo = 0,
				.hi = 40, .write = 1, .tag = 9,
				.participants = 3, .nsub = 1 };
	pts[1] = pts[0];
	pts[1].rank = 1;
	pts[1].participants = 2;
	check_disagreement(pts, "participants");
	/* A write and a read. */
	pts[1].participants = 3;
	pts[1].write = 0;
	check_disagreement(pts, "this request is a");
	iodh_stop(&h);
	iodh_cleanup(&h);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
}
END_TEST

/*
 * A piece that lands contiguously in its subfile goes straight from the
 * socket to the file (iod_xfer.c); a strided one is merged.  Both in
 * one operation.
 */
#define DIRECT_N ((int64_t)256 << 10)

struct direct_part {
	const struct iodh *h;
	CLF_Datatype view;	/* borrowed */
	int64_t disp, hi;	/* view displacement; range [0, hi) */
	uint8_t *data;		/* borrowed: the packed bytes */
	uint32_t participants;
	uint64_t tag;
	int read;		/* read and compare with data, not write */
	int64_t got;
	int mismatch;
	char msg[256];
};

static void *direct_part_main(void *arg)
{
	struct direct_part *d = arg;
	struct clf_conn *c = NULL;
	uint32_t handle;
	int err = iodh_connect_with(d->h, &d->h->secret, &c);

	if (!err) {
		clf_conn_set_timeout(c, 3 * TIMEOUT_MS);
		err = cl_view_register(c, FILE_ID, 0, d->view, d->disp,
				       CLF_BYTE, 0, &handle);
	}
	if (err) {
		d->got = err;
	} else if (d->read) {
		uint8_t *back = iodh_alloc((size_t)d->hi);

		d->got = cl_view_read(c, handle, 0, d->hi, back, (size_t)d->hi,
				      d->tag, d->participants);
		d->mismatch = d->got == d->hi &&
			      memcmp(back, d->data, (size_t)d->hi) != 0;
		free(back);
	} else {
		d->got = cl_view_write(c, handle, 0, d->hi, d->data,
				       (size_t)d->hi, d->tag, d->participants);
	}
	if (d->got < 0)
		snprintf(d->msg, sizeof(d->msg), "%s", CLF_Last_error());
	clf_conn_close(c);
	return NULL;
}

START_TEST(test_collective_mixes_direct_and_merged_pieces)
{
	/* A: file bytes [0, N), one run.  B: every other byte of [N, 2N). */
	CLF_Datatype va = CLF_Type_vector(0, DIRECT_N - 1, 2 * DIRECT_N, 1,
					  CLF_BYTE);
	CLF_Datatype vb = CLF_Type_vector(0, 0, 2, DIRECT_N / 2, CLF_BYTE);
	uint8_t *a = iodh_alloc(DIRECT_N), *b = iodh_alloc(DIRECT_N / 2);
	uint8_t *back = iodh_alloc(2 * DIRECT_N);
	struct direct_part d[2];
	pthread_t tid[2];
	struct iodh h;
	struct clf_conn *c;

	for (int64_t i = 0; i < DIRECT_N; i++)
		a[i] = iodh_val(i, 1);
	for (int64_t i = 0; i < DIRECT_N / 2; i++)
		b[i] = iodh_val(DIRECT_N + 2 * i, 1);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	d[0] = (struct direct_part){ .h = &h, .view = va, .disp = 0,
				     .hi = DIRECT_N, .data = a,
				     .participants = 2, .tag = 7 };
	d[1] = (struct direct_part){ .h = &h, .view = vb, .disp = DIRECT_N,
				     .hi = DIRECT_N / 2, .data = b,
				     .participants = 2, .tag = 7 };
	/* Write together, then read back together (tag 8). */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 2; i++) {
			d[i].read = round;
			d[i].tag = 7 + (uint64_t)round;
			ck_assert_int_eq(pthread_create(&tid[i], NULL,
							direct_part_main,
							&d[i]), 0);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(tid[i], NULL);
		for (int i = 0; i < 2; i++) {
			ck_assert_msg(d[i].got == d[i].hi,
				      "round %d part %d: %" PRId64 " (%s)",
				      round, i, d[i].got, d[i].msg);
			ck_assert_msg(!d[i].mismatch, "part %d read wrong", i);
		}
	}
	d[0].read = 0;
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_sub_read(c, FILE_ID, 0, 0, back, 2 * DIRECT_N),
			 2 * DIRECT_N - 1);
	ck_assert_mem_eq(back, a, DIRECT_N);
	for (int64_t i = 0; i < DIRECT_N / 2; i++) {
		if (back[DIRECT_N + 2 * i] != b[i])
			ck_assert_uint_eq(back[DIRECT_N + 2 * i], b[i]);
		if (DIRECT_N + 2 * i + 1 < 2 * DIRECT_N - 1)
			ck_assert_uint_eq(back[DIRECT_N + 2 * i + 1], 0);
	}

	/* A's view range [N, 2N) is file bytes [2N, 3N): past the end of
	 * the subfile, sent as zeros. */
	{
		uint32_t handle;
		uint8_t *zeros = iodh_alloc(DIRECT_N);

		memset(zeros, 0, DIRECT_N);
		memset(back, 0xee, DIRECT_N);
		ck_assert_int_eq(cl_view_register(c, FILE_ID, 0, va, 0,
						  CLF_BYTE, 0, &handle), 0);
		ck_assert_int_eq(cl_view_read(c, handle, DIRECT_N,
					      2 * DIRECT_N, back, DIRECT_N,
					      0, 0), DIRECT_N);
		ck_assert_mem_eq(back, zeros, DIRECT_N);
		free(zeros);
	}

	/* Alone in an operation of 2: it times out, though its direct
	 * piece is in the subfile already (rule 5). */
	memset(back, 0, 2 * DIRECT_N);
	for (int64_t i = 0; i < DIRECT_N; i++)
		a[i] = (uint8_t)~a[i];
	d[0].got = 0;
	direct_part_main(&d[0]);
	ck_assert_msg(d[0].got == -ETIMEDOUT, "%" PRId64 " (%s)", d[0].got,
		      d[0].msg);
	ck_assert_int_eq(cl_sub_read(c, FILE_ID, 0, 0, back, DIRECT_N),
			 DIRECT_N);
	ck_assert_mem_eq(back, a, DIRECT_N);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	CLF_Type_free(&va);
	CLF_Type_free(&vb);
	free(a);
	free(b);
	free(back);
}
END_TEST

/*
 * A participant alone in an operation of 2 times out.  Whichever way its
 * piece came -- held in memory for the merge (strided) or straight from
 * the socket into the subfile (one run) -- the subfile holds it after.
 */
START_TEST(test_collective_timed_out_write_leaves_the_same_bytes_either_way)
{
	/* Held: every other byte of [0, N).  Direct: file bytes [N, 2N). */
	CLF_Datatype vheld = CLF_Type_vector(0, 0, 2, DIRECT_N / 2, CLF_BYTE);
	CLF_Datatype vdirect = CLF_Type_vector(0, DIRECT_N - 1, 2 * DIRECT_N,
					       1, CLF_BYTE);
	uint8_t *held = iodh_alloc(DIRECT_N / 2), *direct = iodh_alloc(DIRECT_N);
	uint8_t *back = iodh_alloc(2 * DIRECT_N);
	struct direct_part d[2];
	struct iodh h;
	struct clf_conn *c;

	for (int64_t i = 0; i < DIRECT_N / 2; i++)
		held[i] = iodh_val(2 * i, 2);
	for (int64_t i = 0; i < DIRECT_N; i++)
		direct[i] = iodh_val(DIRECT_N + i, 2);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	d[0] = (struct direct_part){ .h = &h, .view = vheld, .disp = 0,
				     .hi = DIRECT_N / 2, .data = held,
				     .participants = 2, .tag = 11 };
	d[1] = (struct direct_part){ .h = &h, .view = vdirect,
				     .disp = DIRECT_N, .hi = DIRECT_N,
				     .data = direct, .participants = 2,
				     .tag = 12 };
	for (int i = 0; i < 2; i++) {
		direct_part_main(&d[i]);
		ck_assert_msg(d[i].got == -ETIMEDOUT, "part %d: %" PRId64 " (%s)",
			      i, d[i].got, d[i].msg);
		ck_assert_ptr_nonnull(strstr(d[i].msg, "1 of 2"));
		/* The operation's error, kept whole while its piece was
		 * written: not re-recorded as text ("iod 0: iod: ..."). */
		ck_assert_msg(!strstr(d[i].msg, "iod: collective"), "%s",
			      d[i].msg);
	}
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_sub_read(c, FILE_ID, 0, 0, back, 2 * DIRECT_N),
			 2 * DIRECT_N);
	for (int64_t i = 0; i < DIRECT_N / 2; i++)
		ck_assert_msg(back[2 * i] == held[i],
			      "held piece byte %" PRId64 ": %u, expected %u",
			      2 * i, back[2 * i], held[i]);
	ck_assert_mem_eq(back + DIRECT_N, direct, DIRECT_N);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	CLF_Type_free(&vheld);
	CLF_Type_free(&vdirect);
	free(held);
	free(direct);
	free(back);
}
END_TEST

/*
 * Participants each writing more than the iod lends them (iod_buffer_
 * memory 2m): P of them, BIG_BYTES view bytes each in 2-byte pieces
 * interleaved with the others' in both subfiles.  The operation
 * completes for all with every byte where the views put it, and the
 * iod's peak memory stays far below the pieces held whole (P * BIG_BYTES).
 * The reference is computed from the shapes (rank view cyclic(2) over P,
 * subfiles cyclic(4) over 2), not byte by byte through the engine.
 */
#define BIG_BYTES (16 << 20)

/* File offset of view byte w of rank p, and of subfile j's byte s. */
static int64_t big_file_of_view(int p, int64_t w)
{
	return (w / 2) * 2 * P + 2 * p + w % 2;
}

static int64_t big_file_of_sub(int j, int64_t s)
{
	return (s / 4) * 4 * NSUB + 4 * j + s % 4;
}

struct big_part {
	const struct iodh *h;
	CLF_Datatype *subs;
	int rank;
	int64_t got[NSUB];
	char msg[256];
};

static void *big_part_main(void *arg)
{
	struct big_part *bp = arg;
	CLF_Datatype view = rank_view(bp->rank);
	uint8_t *mine[NSUB];
	size_t n[NSUB] = { 0 };
	struct clf_conn *c = NULL;
	uint32_t handle[NSUB];
	int err;

	for (int j = 0; j < NSUB; j++)
		mine[j] = iodh_alloc(BIG_BYTES);
	for (int64_t w = 0; w < BIG_BYTES; w++) {
		int64_t f = big_file_of_view(bp->rank, w);
		int j = (int)((f / 4) % NSUB);

		mine[j][n[j]++] = iodh_val(f, 1);
	}
	err = iodh_connect_with(bp->h, &bp->h->secret, &c);
	if (!err)
		clf_conn_set_timeout(c, 3 * bp->h->timeout_ms);
	for (int j = 0; j < NSUB && !err; j++)
		err = cl_view_register(c, FILE_ID, (uint32_t)j, view, 0,
				       bp->subs[j], 0, &handle[j]);
	for (int j = 0; j < NSUB; j++) {
		bp->got[j] = err ? err
				 : cl_view_write(c, handle[j], 0, BIG_BYTES,
						 mine[j], n[j], 21, P);
		if (bp->got[j] < 0 && !bp->msg[0])
			snprintf(bp->msg, sizeof(bp->msg), "%s",
				 CLF_Last_error());
	}
	clf_conn_close(c);
	CLF_Type_free(&view);
	for (int j = 0; j < NSUB; j++)
		free(mine[j]);
	return NULL;
}

/* The iod's peak resident memory (VmHWM), bytes. */
static size_t iod_peak(const struct iodh *h)
{
	char path[64], line[256];
	size_t kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)h->pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %zu kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(kb, 0);
	return kb << 10;
}

START_TEST(test_collective_over_the_memory_budget_completes_in_bounded_memory)
{
	CLF_Datatype subs[NSUB];
	struct big_part bp[P];
	pthread_t tid[P];
	const int64_t sub_len = P * (int64_t)BIG_BYTES / NSUB;
	uint8_t *got = iodh_alloc(1 << 20), *want = iodh_alloc(1 << 20);
	size_t before, after;
	struct iodh h;
	struct clf_conn *c;
	int64_t t0;

	make_subs(subs);
	iodh_init(&h, 20000);
	h.conf_global = "iod_buffer_memory = 2m\niod_buffer_min_share = 256k\n";
	iodh_start(&h);
	before = iod_peak(&h);
	t0 = clf_now_ms();
	for (int p = 0; p < P; p++) {
		bp[p] = (struct big_part){ .h = &h, .subs = subs, .rank = p };
		ck_assert_int_eq(pthread_create(&tid[p], NULL, big_part_main,
						&bp[p]), 0);
	}
	for (int p = 0; p < P; p++)
		pthread_join(tid[p], NULL);
	after = iod_peak(&h);
	fprintf(stderr, "%d participants of %d MiB over a 2 MiB pool: %" PRId64 " ms, iod peak RSS %zu -> %zu KiB\n",
		P, BIG_BYTES >> 20, clf_now_ms() - t0, before >> 10,
		after >> 10);
	for (int p = 0; p < P; p++)
		for (int j = 0; j < NSUB; j++)
			if (bp[p].got[j] != BIG_BYTES / NSUB)
				ck_abort_msg("rank %d subfile %d: %" PRId64 " (%s)",
					     p, j, bp[p].got[j], bp[p].msg);
	/* Held whole: P * BIG_BYTES = 48 MiB at once. */
	ck_assert_msg(after < before + BIG_BYTES * RSS_SCALE,
		      "iod peak RSS grew from %zu to %zu KiB", before >> 10,
		      after >> 10);
	c = iodh_connect(&h);
	for (int j = 0; j < NSUB; j++) {
		for (int64_t at = 0; at < sub_len; at += 1 << 20) {
			ck_assert_int_eq(cl_sub_read(c, FILE_ID, (uint32_t)j, at,
						     got, 1 << 20), 1 << 20);
			for (int64_t s = 0; s < 1 << 20; s++)
				want[s] = iodh_val(big_file_of_sub(j, at + s),
						   1);
			for (int64_t s = 0; memcmp(got, want, 1 << 20) &&
					    s < 1 << 20; s++)
				if (got[s] != want[s])
					ck_abort_msg("subfile %d byte %" PRId64 ": %u, expected %u",
						     j, at + s, got[s],
						     want[s]);
		}
	}
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
	free(got);
	free(want);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_collective");
	TCase *tc = tcase_create("collective");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_collective_write_of_three_is_merged_then_read_back);
	tcase_add_test(tc, test_collective_waiting_participants_are_answered_by_the_last);
	tcase_add_test(tc, test_collective_big_read_replies_are_sent_by_their_own_threads);
	tcase_add_test(tc, test_collective_with_more_pieces_than_a_round_goes_in_rounds);
	tcase_add_test(tc, test_collective_participant_with_nothing_still_counts);
	tcase_add_test(tc, test_collective_times_out_when_a_participant_never_comes);
	tcase_add_test(tc, test_collective_survives_participants_that_disconnect);
	tcase_add_test(tc, test_collective_request_that_disagrees_is_refused);
	tcase_add_test(tc, test_collective_mixes_direct_and_merged_pieces);
	tcase_add_test(tc, test_collective_timed_out_write_leaves_the_same_bytes_either_way);
	tcase_add_test(tc, test_collective_over_the_memory_budget_completes_in_bounded_memory);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
