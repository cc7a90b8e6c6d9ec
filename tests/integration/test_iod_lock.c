// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_lock.c -- extent locks through a real iod (protocol 1.13): a
 * caching client holds bytes back under a PW lock; another client's
 * plain read or lock request makes the iod send REVOKE on the holder's
 * callback connection and waits until the holder has written its bytes
 * and released; a holder that stays silent is evicted after the lease,
 * one whose callback connection closes at once.
 *
 * The caching client is played by hand here (a callback connection, a
 * data connection, bytes "held back" in memory), so that every step of
 * the protocol is what the test says.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "clock.h"
#include "iod_harness.h"

#define TIMEOUT_MS 5000
#define FILE_ID 0x50u
#define CLIENT_A 0xaaaa0001u
#define CLIENT_B 0xbbbb0002u

static int call(struct clf_conn *c, uint16_t op, const uint8_t *body,
		size_t len, void **pl, uint32_t *plen)
{
	struct clf_proto_header h, rep;
	struct iovec iov = { (void *)body, len };
	void *p = NULL;
	int err;

	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	err = clf_conn_call(c, &h, &iov, 1, &rep, &p);
	if (err)
		return err;
	if (pl) {
		*pl = p;
		*plen = rep.payload_len;
	} else {
		free(p);
	}
	return 0;
}

static int lock_callback(struct clf_conn *c, uint64_t client)
{
	struct clf_proto_lock_callback_req m = { client };
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };

	ck_assert_int_eq(clf_proto_lock_callback_req_encode(&w, &m), 0);
	return call(c, CLF_PROTO_OP_LOCK_CALLBACK, body, w.pos, NULL, NULL);
}

static int lock_enqueue(struct clf_conn *c, uint64_t client, uint32_t mode,
			int64_t lo, int64_t hi, struct clf_proto_lock_grant *g)
{
	struct clf_proto_lock_enqueue_req m = { client, FILE_ID, 0, mode,
						lo, hi };
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct wire_reader r;
	void *pl;
	uint32_t len;
	int err;

	ck_assert_int_eq(clf_proto_lock_enqueue_req_encode(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_LOCK_ENQUEUE, body, w.pos, &pl, &len);
	if (err)
		return err;
	r = (struct wire_reader){ pl, len, 0, false };
	ck_assert_int_eq(clf_proto_lock_grant_decode(&r, g), 0);
	free(pl);
	return 0;
}

static int lock_release(struct clf_conn *c, uint64_t client, uint64_t id)
{
	struct clf_proto_lock_release_req m = { client, id };
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };

	ck_assert_int_eq(clf_proto_lock_release_req_encode(&w, &m), 0);
	return call(c, CLF_PROTO_OP_LOCK_RELEASE, body, w.pos, NULL, NULL);
}

/* The caching client A: what its callback thread does on a REVOKE. */
struct holder {
	struct clf_conn *cb;		/* its callback connection */
	struct clf_conn *data;		/* its data connection */
	uint64_t id;			/* the lock it holds */
	uint8_t dirty[1024];		/* bytes held back at offset 0 */
	int64_t revoked_ms;		/* when the REVOKE came */
	int err;
};

static void *serve_revoke(void *arg)
{
	struct holder *ho = arg;
	struct clf_proto_header h;
	struct clf_proto_revoke m;
	struct wire_reader r;
	uint8_t body[64];

	ho->err = clf_conn_recv_header(ho->cb, &h);
	if (ho->err)
		return NULL;
	ho->revoked_ms = clf_now_ms();
	if (h.opcode != CLF_PROTO_OP_REVOKE || h.payload_len > sizeof(body)) {
		ho->err = -EPROTO;
		return NULL;
	}
	ho->err = clf_conn_recv_payload(ho->cb, body, h.payload_len);
	if (ho->err)
		return NULL;
	r = (struct wire_reader){ body, h.payload_len, 0, false };
	ho->err = clf_proto_revoke_decode(&r, &m);
	if (ho->err)
		return NULL;
	if (m.id != ho->id || m.file != FILE_ID || m.subfile != 0) {
		ho->err = -EINVAL;
		return NULL;
	}
	usleep(100 * 1000);	/* a flush takes a while */
	if (cl_sub_write(ho->data, FILE_ID, 0, 0, ho->dirty,
			 sizeof(ho->dirty)) != (int64_t)sizeof(ho->dirty)) {
		ho->err = -EIO;
		return NULL;
	}
	ho->err = lock_release(ho->data, CLIENT_A, ho->id);
	return NULL;
}

/* A holds PW on subfile 0 with 1 KiB written only in its memory. */
static void hold_dirty(struct iodh *h, struct holder *ho)
{
	struct clf_proto_lock_grant g;

	memset(ho, 0, sizeof(*ho));
	ho->cb = iodh_connect(h);
	ho->data = iodh_connect(h);
	ck_assert_int_eq(lock_callback(ho->cb, CLIENT_A), 0);
	ck_assert_int_eq(lock_enqueue(ho->data, CLIENT_A, CLF_PROTO_LOCK_PW,
				      0, 1024, &g), 0);
	ck_assert_int_eq(g.lo, 0);
	ck_assert_int_eq(g.hi, CLF_PROTO_LOCK_EOF);
	ho->id = g.id;
	memset(ho->dirty, 0xa5, sizeof(ho->dirty));
}

START_TEST(test_lockless_read_sees_bytes_a_lock_held_back)
{
	struct iodh h;
	struct holder ho;
	struct clf_conn *b;
	uint8_t back[1024];
	pthread_t t;

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	hold_dirty(&h, &ho);
	ck_assert_int_eq(pthread_create(&t, NULL, serve_revoke, &ho), 0);
	b = iodh_connect(&h);
	/* B reads under no lock: the iod revokes A's lock, A writes. */
	ck_assert_int_eq(cl_sub_read(b, FILE_ID, 0, 0, back, sizeof(back)),
			 (int64_t)sizeof(back));
	pthread_join(t, NULL);
	ck_assert_int_eq(ho.err, 0);
	ck_assert_mem_eq(back, ho.dirty, sizeof(back));
	/* The lock is gone: a second release is refused. */
	ck_assert_int_eq(lock_release(ho.data, CLIENT_A, ho.id), -ENOENT);
	clf_conn_close(b);
	clf_conn_close(ho.data);
	clf_conn_close(ho.cb);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_conflicting_lock_is_granted_after_the_holders_flush)
{
	struct iodh h;
	struct holder ho;
	struct clf_proto_lock_grant g;
	struct clf_conn *bcb, *b;
	uint8_t back[1024];
	pthread_t t;

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	hold_dirty(&h, &ho);
	ck_assert_int_eq(pthread_create(&t, NULL, serve_revoke, &ho), 0);
	bcb = iodh_connect(&h);
	b = iodh_connect(&h);
	ck_assert_int_eq(lock_callback(bcb, CLIENT_B), 0);
	/* An adjacent range: A's grant covers it. */
	ck_assert_int_eq(lock_enqueue(b, CLIENT_B, CLF_PROTO_LOCK_PR,
				      1024, 2048, &g), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(ho.err, 0);
	ck_assert_int_le(g.lo, 1024);
	ck_assert_int_ge(g.hi, 2048);
	/* B's lock does not hold back B's own read; A's bytes are home. */
	ck_assert_int_eq(cl_sub_read(b, FILE_ID, 0, 0, back, sizeof(back)),
			 (int64_t)sizeof(back));
	ck_assert_mem_eq(back, ho.dirty, sizeof(back));
	clf_conn_close(b);
	clf_conn_close(bcb);
	clf_conn_close(ho.data);
	clf_conn_close(ho.cb);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_silent_holder_is_evicted_after_the_lease)
{
	struct iodh h;
	struct holder ho;
	struct clf_conn *b;
	uint8_t back[16];
	int64_t t0, dt;

	iodh_init(&h, TIMEOUT_MS);
	h.env[0] = "CLF_TEST_IOD_LOCK_LEASE_MS=500";
	iodh_start(&h);
	hold_dirty(&h, &ho);	/* and nobody answers on its callbacks */
	b = iodh_connect(&h);
	t0 = clf_now_ms();
	ck_assert_int_eq(cl_sub_write(b, FILE_ID, 0, 0, back, sizeof(back)),
			 (int64_t)sizeof(back));
	dt = clf_now_ms() - t0;
	ck_assert_int_ge(dt, 500);
	ck_assert_int_lt(dt, 4000);
	ck_assert(iodh_log_has(&h, "evicted"));
	ck_assert_int_eq(lock_release(ho.data, CLIENT_A, ho.id), -ENOENT);
	clf_conn_close(b);
	clf_conn_close(ho.data);
	clf_conn_close(ho.cb);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_holder_whose_callback_connection_closes_is_dropped_at_once)
{
	struct iodh h;
	struct holder ho;
	struct clf_conn *b;
	uint8_t back[16];
	int64_t t0;

	iodh_init(&h, 20000);
	h.env[0] = "CLF_TEST_IOD_LOCK_LEASE_MS=15000";
	iodh_start(&h);
	hold_dirty(&h, &ho);
	clf_conn_close(ho.cb);	/* as when the client is killed */
	b = iodh_connect(&h);
	t0 = clf_now_ms();
	ck_assert_int_eq(cl_sub_read(b, FILE_ID, 0, 0, back, sizeof(back)),
			 0);
	ck_assert_int_lt(clf_now_ms() - t0, 10000);
	clf_conn_close(b);
	clf_conn_close(ho.data);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_lock_requests_are_checked)
{
	struct iodh h;
	struct clf_proto_lock_grant g;
	struct clf_conn *c, *cb, *cb2, *cb3;

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	/* No callback connection: nobody could be asked to release. */
	ck_assert_int_eq(lock_enqueue(c, CLIENT_A, CLF_PROTO_LOCK_PW, 0, 1,
				      &g), -ENOTCONN);
	cb = iodh_connect(&h);
	ck_assert_int_eq(lock_callback(cb, CLIENT_A), 0);
	/* One callback connection per client. */
	cb2 = iodh_connect(&h);
	ck_assert_int_eq(lock_callback(cb2, CLIENT_A), -EEXIST);
	clf_conn_close(cb2);
	/* A callback connection carries nothing else: the iod closes it. */
	cb3 = iodh_connect(&h);
	ck_assert_int_eq(lock_callback(cb3, CLIENT_B), 0);
	ck_assert_int_ne(cl_ping(cb3), 0);
	clf_conn_close(cb3);
	/* One connection speaks for one client. */
	ck_assert_int_eq(lock_enqueue(c, CLIENT_A, CLF_PROTO_LOCK_PR, 0, 1,
				      &g), 0);
	ck_assert_int_eq(lock_release(c, CLIENT_B, g.id), -EINVAL);
	ck_assert_int_eq(lock_release(c, CLIENT_A, g.id), 0);
	ck_assert_int_eq(lock_release(c, CLIENT_A, g.id), -ENOENT);
	ck_assert_int_eq(cl_ping(c), 0);
	clf_conn_close(cb);
	clf_conn_close(c);
	iodh_cleanup(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_lock");
	TCase *tc = tcase_create("lock");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lockless_read_sees_bytes_a_lock_held_back);
	tcase_add_test(tc, test_conflicting_lock_is_granted_after_the_holders_flush);
	tcase_add_test(tc, test_silent_holder_is_evicted_after_the_lease);
	tcase_add_test(tc, test_holder_whose_callback_connection_closes_is_dropped_at_once);
	tcase_add_test(tc, test_lock_requests_are_checked);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
