// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_rdma_wire.c -- the RDMA transport's SEND header and credit rules
 * (libclf/runtime/transport_rdma_wire.h), without a device: headers
 * round-trip and malformed ones are refused; credits are spent, owed and
 * returned as documented; and two simulated peers that follow the rules,
 * with receive buffers that really run out, exchange thousands of SENDs
 * in random orders of sending, delivery and consumption without a SEND
 * ever finding no buffer posted (an RNR error on hardware) and without
 * both waiting on each other.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "transport_rdma_wire.h"

START_TEST(test_header_round_trips)
{
	uint8_t buf[CLF_RDMA_PKT_HEADER + 5] = { 0 };
	struct clf_rdma_pkt p = { CLF_RDMA_PKT_DATA, 513, 5 }, q;

	clf_rdma_pkt_encode(buf, &p);
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf), &q), 0);
	ck_assert_uint_eq(q.type, CLF_RDMA_PKT_DATA);
	ck_assert_uint_eq(q.credits, 513);
	ck_assert_uint_eq(q.len, 5);
	/* Little-endian on the wire, whatever the host. */
	ck_assert_uint_eq(buf[2], 1);
	ck_assert_uint_eq(buf[3], 2);
	ck_assert_uint_eq(buf[4], 5);
}
END_TEST

START_TEST(test_malformed_headers_are_refused)
{
	uint8_t buf[CLF_RDMA_PKT_HEADER + 4];
	struct clf_rdma_pkt p = { CLF_RDMA_PKT_DATA, 0, 4 }, q;

	clf_rdma_pkt_encode(buf, &p);
	/* Shorter than a header. */
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, 3, &q), -EPROTO);
	/* Fewer bytes than announced. */
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf) - 1, &q),
			 -EPROTO);
	/* Another magic. */
	buf[0] ^= 0xff;
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf), &q), -EPROTO);
	buf[0] ^= 0xff;
	/* An unknown type. */
	buf[1] = 9;
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf), &q), -EPROTO);
	/* A credit message with data, or with no credits. */
	p = (struct clf_rdma_pkt){ CLF_RDMA_PKT_CREDIT, 3, 4 };
	clf_rdma_pkt_encode(buf, &p);
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf), &q), -EPROTO);
	p = (struct clf_rdma_pkt){ CLF_RDMA_PKT_CREDIT, 0, 0 };
	clf_rdma_pkt_encode(buf, &p);
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, CLF_RDMA_PKT_HEADER, &q),
			 -EPROTO);
	p.credits = 3;
	clf_rdma_pkt_encode(buf, &p);
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, CLF_RDMA_PKT_HEADER, &q), 0);
}
END_TEST

START_TEST(test_rendezvous_descriptors_round_trip)
{
	uint8_t buf[CLF_RDMA_PKT_HEADER + CLF_RDMA_DESC_SIZE];
	struct clf_rdma_desc d = { 0x7f0012345678ULL, 0xdeadbeef, 1 << 20 }, e;
	struct clf_rdma_pkt p = { CLF_RDMA_PKT_RDESC, 2, CLF_RDMA_DESC_SIZE }, q;

	clf_rdma_pkt_encode(buf, &p);
	clf_rdma_desc_encode(buf + CLF_RDMA_PKT_HEADER, &d);
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf), &q), 0);
	clf_rdma_desc_decode(buf + CLF_RDMA_PKT_HEADER, &e);
	ck_assert_uint_eq(e.addr, d.addr);
	ck_assert_uint_eq(e.rkey, d.rkey);
	ck_assert_uint_eq(e.len, d.len);
	ck_assert_uint_eq(buf[CLF_RDMA_PKT_HEADER], 0x78);
	/* A rendezvous message is one descriptor, nothing else. */
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf) - 1, &q),
			 -EPROTO);
	p.len = CLF_RDMA_DESC_SIZE - 1;
	clf_rdma_pkt_encode(buf, &p);
	ck_assert_int_eq(clf_rdma_pkt_decode(buf, sizeof(buf) - 1, &q),
			 -EPROTO);
	/* A CTS names 1 to CLF_RDMA_CTS_MAX places. */
	{
		uint8_t big[CLF_RDMA_PKT_HEADER +
			    (CLF_RDMA_CTS_MAX + 1) * CLF_RDMA_DESC_SIZE] = { 0 };
		struct clf_rdma_pkt cts = { CLF_RDMA_PKT_CTS, 0,
					    2 * CLF_RDMA_DESC_SIZE };

		clf_rdma_pkt_encode(big, &cts);
		ck_assert_int_eq(clf_rdma_pkt_decode(big, CLF_RDMA_PKT_HEADER +
						     cts.len, &q), 0);
		cts.len = (CLF_RDMA_CTS_MAX + 1) * CLF_RDMA_DESC_SIZE;
		clf_rdma_pkt_encode(big, &cts);
		ck_assert_int_eq(clf_rdma_pkt_decode(big, sizeof(big), &q),
				 -EPROTO);
	}
	/* Descriptors of the stream spend credits; their answers do not. */
	ck_assert(clf_rdma_pkt_in_stream(CLF_RDMA_PKT_RDESC));
	ck_assert(clf_rdma_pkt_in_stream(CLF_RDMA_PKT_RTS));
	ck_assert(!clf_rdma_pkt_in_stream(CLF_RDMA_PKT_CTS));
	ck_assert(!clf_rdma_pkt_in_stream(CLF_RDMA_PKT_DONE));
	ck_assert(!clf_rdma_pkt_in_stream(CLF_RDMA_PKT_CREDIT));
}
END_TEST

START_TEST(test_credits_are_spent_owed_and_returned)
{
	struct clf_rdma_credits c;

	clf_rdma_credits_init(&c, 4, 2);
	for (int i = 0; i < 4; i++) {
		ck_assert(clf_rdma_credits_can_send(&c));
		ck_assert_uint_eq(clf_rdma_credits_spend(&c), 0);
	}
	ck_assert(!clf_rdma_credits_can_send(&c));
	/* More back than is out is the peer's error. */
	ck_assert_int_eq(clf_rdma_credits_grant(&c, 5), -EPROTO);
	ck_assert_int_eq(clf_rdma_credits_grant(&c, 3), 0);
	ck_assert_uint_eq(c.tx, 3);
	/* Owed: a batch calls for a credit message; a data SEND carries
	 * what is owed and clears it. */
	clf_rdma_credits_consumed(&c);
	ck_assert(!clf_rdma_credits_update_due(&c));
	clf_rdma_credits_consumed(&c);
	ck_assert(clf_rdma_credits_update_due(&c));
	ck_assert_uint_eq(clf_rdma_credits_spend(&c), 2);
	ck_assert(!clf_rdma_credits_update_due(&c));
	clf_rdma_credits_consumed(&c);
	clf_rdma_credits_consumed(&c);
	ck_assert_uint_eq(clf_rdma_credits_take_owed(&c), 2);
	ck_assert_uint_eq(c.tx, 2);	/* a credit message spends none */
}
END_TEST

/* ------------------------------------------------------------------ */
/* Two peers, with the transport's rules and real buffer limits        */
/* ------------------------------------------------------------------ */

#define QMAX 4096

struct sim_pkt {
	uint8_t type;
	uint16_t credits;
};

struct peer {
	struct clf_rdma_credits cr;
	int posted;		/* receive buffers ready for a SEND */
	int held;		/* data buffers the application has not read */
	int arrived_data;	/* landed, not yet seen by the thread */
	/* Landed in a buffer, not yet polled: the thread's queue. */
	struct sim_pkt landed[QMAX];
	int nlanded;
	int to_send;		/* data SENDs the application still has */
	int consumed;		/* data SENDs read */
};

/* SENDs in flight towards each peer. */
struct wire {
	struct sim_pkt q[QMAX];
	int head, n;
};

static void put(struct wire *w, struct sim_pkt p)
{
	ck_assert_int_lt(w->n, QMAX);
	w->q[(w->head + w->n++) % QMAX] = p;
}

/* The thread of a peer: polls one landed SEND. */
static void poll_one(struct peer *p)
{
	struct sim_pkt k = p->landed[0];

	memmove(p->landed, p->landed + 1, sizeof(k) * (size_t)--p->nlanded);
	ck_assert_int_eq(clf_rdma_credits_grant(&p->cr, k.credits), 0);
	if (k.type == CLF_RDMA_PKT_CREDIT)
		p->posted++;	/* reposted at once */
	else
		p->held++;
}

static void credit_if_due(struct peer *p, struct wire *out)
{
	if (clf_rdma_credits_update_due(&p->cr))
		put(out, (struct sim_pkt){ CLF_RDMA_PKT_CREDIT,
					   clf_rdma_credits_take_owed(&p->cr) });
}

/*
 * Random interleavings of: a peer sends data (when it has credits), a
 * SEND lands (needs a posted buffer: the assertion an RNR error would
 * be), a thread polls, an application reads one buffer (slowly for
 * peer b when slow).
 */
static void simulate(unsigned seed, int n_ab, int n_ba, bool slow)
{
	struct peer *pr = calloc(2, sizeof(*pr));
	struct wire *w = calloc(2, sizeof(*w));	/* w[i]: towards pr[i] */
	long steps = 0;

	srand(seed);
	for (int i = 0; i < 2; i++) {
		clf_rdma_credits_init(&pr[i].cr, CLF_RDMA_WINDOW,
				      CLF_RDMA_CREDIT_BATCH);
		pr[i].posted = CLF_RDMA_RECVS;
	}
	pr[0].to_send = n_ab;
	pr[1].to_send = n_ba;
	while (pr[1].consumed < n_ab || pr[0].consumed < n_ba ||
	       w[0].n || w[1].n) {
		int who = rand() % 2, what = rand() % 4;
		struct peer *p = &pr[who];
		struct wire *in = &w[who], *out = &w[1 - who];

		ck_assert_int_lt(++steps, 10000000);
		if (what == 0 && p->to_send && clf_rdma_credits_can_send(&p->cr)) {
			p->to_send--;
			put(out, (struct sim_pkt){ CLF_RDMA_PKT_DATA,
					clf_rdma_credits_spend(&p->cr) });
		} else if (what == 1 && in->n) {
			ck_assert_msg(p->posted > 0,
				      "a SEND found no receive buffer posted");
			p->posted--;
			p->landed[p->nlanded++] = in->q[in->head];
			in->head = (in->head + 1) % QMAX;
			in->n--;
		} else if (what == 2 && p->nlanded) {
			poll_one(p);
		} else if (what == 3 && p->held &&
			   !(slow && who == 1 && rand() % 8)) {
			p->held--;
			p->posted++;
			p->consumed++;
			clf_rdma_credits_consumed(&p->cr);
			credit_if_due(p, out);
		}
	}
	ck_assert_int_eq(pr[1].consumed, n_ab);
	ck_assert_int_eq(pr[0].consumed, n_ba);
	free(pr);
	free(w);
}

START_TEST(test_one_way_stream_never_overruns_buffers)
{
	simulate(1 + (unsigned)_i, 5000, 0, false);
}
END_TEST

START_TEST(test_slow_reader_never_overruns_buffers)
{
	simulate(100 + (unsigned)_i, 3000, 0, true);
}
END_TEST

START_TEST(test_both_ways_at_once_never_overrun_or_deadlock)
{
	simulate(200 + (unsigned)_i, 3000, 3000, _i % 2);
}
END_TEST

static Suite *rdma_wire_suite(void)
{
	Suite *s = suite_create("rdma_wire");
	TCase *tc = tcase_create("wire");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_header_round_trips);
	tcase_add_test(tc, test_malformed_headers_are_refused);
	tcase_add_test(tc, test_rendezvous_descriptors_round_trip);
	tcase_add_test(tc, test_credits_are_spent_owed_and_returned);
	tcase_add_loop_test(tc, test_one_way_stream_never_overruns_buffers, 0, 4);
	tcase_add_loop_test(tc, test_slow_reader_never_overruns_buffers, 0, 4);
	tcase_add_loop_test(tc, test_both_ways_at_once_never_overrun_or_deadlock,
			    0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(rdma_wire_suite());
}
