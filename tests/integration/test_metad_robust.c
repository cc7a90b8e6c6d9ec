// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_robust.c -- the real metad against peers that misbehave:
 * garbage, other versions, truncated, oversized and random messages,
 * stalls, too many connections, many clients at once.  Each time the
 * daemon answers with an error or closes that one connection, writes a
 * log line, and goes on serving everybody else.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define TIMEOUT_MS 1000		/* the daemon's limit for slow peers */

static struct mh H;

static void setup(void)
{
	mh_init(&H, 2, TIMEOUT_MS);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

/* The daemon still runs and serves a new client. */
static void assert_serving(void)
{
	struct mc *m;

	ck_assert(mh_alive(&H));
	m = mc_open(&H);
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
}

/* Send a request with raw header fields and body on m's connection and
 * read the reply: its status. */
static int raw_request(struct mc *m, uint16_t op, const void *body,
		       uint32_t len)
{
	uint8_t hdr[CLF_PROTO_HEADER_SIZE];
	struct clf_proto_header h;
	uint64_t id = clf_conn_next_id(m->c);
	void *payload;

	raw_header(hdr, op, 0, id, len);
	raw_send(clf_conn_fd(m->c), hdr, sizeof(hdr));
	if (len)
		raw_send(clf_conn_fd(m->c), body, len);
	ck_assert_int_eq(clf_conn_recv(m->c, &h, &payload), 0);
	ck_assert_uint_eq(h.id, id);
	ck_assert_uint_eq(h.opcode, op);
	ck_assert(h.flags & CLF_PROTO_FLAG_REPLY);
	free(payload);
	return h.status;
}

START_TEST(test_garbage_before_auth_closes_that_connection)
{
	int fd = raw_connect(&H);

	raw_send(fd, "GET / HTTP/1.0\r\n\r\nxxxxxxxxxxxxxxxxxxxx", 38);
	ck_assert(raw_closed_within(fd, MH_WAIT_MS));
	close(fd);
	ck_assert(mh_log_has(&H, "refused the connection"));
	assert_serving();
}
END_TEST

START_TEST(test_another_major_version_is_told_and_closed)
{
	uint8_t hdr[CLF_PROTO_HEADER_SIZE], reply[CLF_PROTO_HEADER_SIZE];
	struct wire_reader r = { reply, sizeof(reply), 0, false };
	struct clf_proto_header h;
	int fd = raw_connect(&H);
	size_t got = 0;

	raw_header(hdr, CLF_PROTO_OP_HELLO, 0, 1, 0);
	hdr[4] = CLF_PROTO_VERSION_MAJOR + 1;
	raw_send(fd, hdr, sizeof(hdr));
	while (got < sizeof(reply)) {
		ssize_t n = read(fd, reply + got, sizeof(reply) - got);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	ck_assert_int_eq(clf_proto_header_decode(&r, &h), 0);
	ck_assert_int_eq(h.status, -EPROTONOSUPPORT);
	ck_assert_uint_eq(h.opcode, CLF_PROTO_OP_CHALLENGE);
	ck_assert(raw_closed_within(fd, MH_WAIT_MS));
	close(fd);
	assert_serving();
}
END_TEST

START_TEST(test_malformed_bodies_get_eproto_and_the_connection_goes_on)
{
	struct mc *m = mc_open(&H);
	uint8_t body[64] = { 0 };

	/* LOOKUP: dir, flags, then a path length past the end. */
	body[12] = 200;
	ck_assert_int_eq(raw_request(m, CLF_PROTO_OP_LOOKUP, body, 14),
			 -EPROTO);
	/* GETATTR with trailing bytes. */
	ck_assert_int_eq(raw_request(m, CLF_PROTO_OP_GETATTR, body, 9),
			 -EPROTO);
	/* PING with a body. */
	ck_assert_int_eq(raw_request(m, CLF_PROTO_OP_PING, body, 1), -EPROTO);
	/* A name with a NUL inside: "a\0b". */
	memset(body, 0, sizeof(body));
	body[12] = 3;
	body[14] = 'a';
	body[16] = 'b';
	ck_assert_int_eq(raw_request(m, CLF_PROTO_OP_LOOKUP, body, 17),
			 -EPROTO);
	/* READDIR asking for 0 entries; for more than the limit. */
	memset(body, 0, sizeof(body));
	ck_assert_int_eq(raw_request(m, CLF_PROTO_OP_READDIR, body, 20),
			 -EPROTO);
	body[17] = 0x10;
	ck_assert_int_ne(raw_request(m, CLF_PROTO_OP_READDIR, body, 20), 0);
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
	ck_assert(mh_log_has(&H, "malformed LOOKUP"));
	assert_serving();
}
END_TEST

/* After authentication: header problems the stream cannot recover from
 * close the connection. */
static void assert_closes(const uint8_t *hdr, size_t len)
{
	struct mc *m = mc_open(&H);
	int fd = clf_conn_fd(m->c);

	raw_send(fd, hdr, len);
	ck_assert(raw_closed_within(fd, MH_WAIT_MS));
	mc_close(m);
	assert_serving();
}

START_TEST(test_bad_headers_close_that_connection)
{
	uint8_t hdr[CLF_PROTO_HEADER_SIZE];

	raw_header(hdr, CLF_PROTO_OP_PING, 0, 1, 0);
	hdr[0] ^= 0xff;				/* magic */
	assert_closes(hdr, sizeof(hdr));
	raw_header(hdr, CLF_PROTO_OP_PING, 0x8000, 1, 0); /* unknown flag */
	assert_closes(hdr, sizeof(hdr));
	raw_header(hdr, CLF_PROTO_OP_PING, CLF_PROTO_FLAG_REPLY, 1, 0);
	assert_closes(hdr, sizeof(hdr));
	raw_header(hdr, CLF_PROTO_OP_PING, 0, 1, 0);
	hdr[4] = CLF_PROTO_VERSION_MAJOR + 1;	/* major, after auth */
	assert_closes(hdr, sizeof(hdr));
	ck_assert(mh_log_has(&H, "closing the connection"));
}
END_TEST

START_TEST(test_oversized_messages_close_that_connection)
{
	uint8_t hdr[CLF_PROTO_HEADER_SIZE];

	/* Within the protocol's limit but over metad's. */
	raw_header(hdr, CLF_PROTO_OP_CREATE, 0, 1, 48u << 20);
	assert_closes(hdr, sizeof(hdr));
	/* Over the protocol's limit. */
	raw_header(hdr, CLF_PROTO_OP_CREATE, 0, 1, 0xffffffffu);
	assert_closes(hdr, sizeof(hdr));
	/* During authentication. */
	{
		int fd = raw_connect(&H);

		raw_header(hdr, CLF_PROTO_OP_HELLO, 0, 1, 1u << 20);
		raw_send(fd, hdr, sizeof(hdr));
		ck_assert(raw_closed_within(fd, MH_WAIT_MS));
		close(fd);
	}
	ck_assert(mh_log_has(&H, "exceeds the limit"));
	assert_serving();
}
END_TEST

START_TEST(test_truncated_message_and_stalled_peer_are_dropped)
{
	uint8_t hdr[CLF_PROTO_HEADER_SIZE];
	struct mc *m = mc_open(&H);
	int fd = clf_conn_fd(m->c);

	/* Half a header, then nothing: dropped after the timeout. */
	raw_header(hdr, CLF_PROTO_OP_PING, 0, 1, 0);
	raw_send(fd, hdr, 10);
	ck_assert(raw_closed_within(fd, TIMEOUT_MS + MH_WAIT_MS));
	mc_close(m);
	/* A header announcing 100 bytes, 5 sent, then the peer leaves. */
	m = mc_open(&H);
	fd = clf_conn_fd(m->c);
	raw_header(hdr, CLF_PROTO_OP_GETATTR, 0, 1, 100);
	raw_send(fd, hdr, sizeof(hdr));
	raw_send(fd, "12345", 5);
	mc_close(m);
	/* A peer that connects and says nothing is dropped too. */
	fd = raw_connect(&H);
	ck_assert(raw_closed_within(fd, TIMEOUT_MS + MH_WAIT_MS));
	close(fd);
	ck_assert(mh_log_has(&H, "no answer within"));
	assert_serving();
}
END_TEST

START_TEST(test_random_bodies_never_hurt_the_daemon)
{
	static const uint16_t ops[] = {
		CLF_PROTO_OP_PING, CLF_PROTO_OP_STATUS, CLF_PROTO_OP_LOOKUP,
		CLF_PROTO_OP_CREATE, CLF_PROTO_OP_MKDIR, CLF_PROTO_OP_READDIR,
		CLF_PROTO_OP_RENAME, CLF_PROTO_OP_UNLINK, CLF_PROTO_OP_RMDIR,
		CLF_PROTO_OP_GETATTR, CLF_PROTO_OP_SETATTR,
		CLF_PROTO_OP_STATFS, CLF_PROTO_OP_SET_LAYOUT,
		CLF_PROTO_OP_GET_LAYOUT, CLF_PROTO_OP_UPDATE_SIZE,
		CLF_PROTO_OP_SETLK, CLF_PROTO_OP_GETLK,
		CLF_PROTO_OP_UNLOCK_OWNER, 300, 600,
	};
	unsigned seed = (unsigned)getpid();
	struct mc *m = mc_open(&H);
	uint8_t body[512];

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	for (int i = 0; i < 600; i++) {
		uint16_t op = ops[rand_r(&seed) % (sizeof(ops) / sizeof(*ops))];
		uint32_t len = (uint32_t)(rand_r(&seed) % sizeof(body));
		int status;

		for (uint32_t k = 0; k < len; k++)
			body[k] = (uint8_t)rand_r(&seed);
		/* Small inode numbers and lengths now and then, so that
		 * some bodies get past the decoder. */
		if (len >= 8 && i % 3 == 0) {
			memset(body, 0, 8);
			body[0] = (uint8_t)(1 + i % 3);
		}
		status = raw_request(m, op, body, len);
		ck_assert_int_le(status, 0);
	}
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
	assert_serving();
}
END_TEST

START_TEST(test_connections_over_the_limit_are_refused_clearly)
{
	struct mc *a, *b, *c = NULL;
	int err = -1;

	mh_stop(&H);
	H.env[0] = "CLF_TEST_METAD_MAX_CONNECTIONS=2";
	mh_start(&H);
	/*
	 * The harness's readiness probe holds a slot until metad's thread
	 * for it notices the close: retry until both clients are in.
	 */
	for (int i = 0; i < 200; i++) {
		err = mc_open_with(H.addr, &H.secret, MH_WAIT_MS, &a);
		if (!err)
			break;
		usleep(20 * 1000);
	}
	ck_assert_int_eq(err, 0);
	for (int i = 0; i < 200; i++) {
		err = mc_open_with(H.addr, &H.secret, MH_WAIT_MS, &b);
		if (!err)
			break;
		usleep(20 * 1000);
	}
	ck_assert_int_eq(err, 0);
	err = mc_open_with(H.addr, &H.secret, MH_WAIT_MS, &c);
	ck_assert_msg(err == -EAGAIN, "got %d: %s", err, CLF_Last_error());
	ck_assert_msg(strstr(CLF_Last_error(), "try again later"), "%s",
		      CLF_Last_error());
	ck_assert(mh_log_has(&H, "connections already (the limit)"));
	ck_assert_int_eq(mc_ping(a), 0);
	/* Room again once a client leaves (its thread notices at once). */
	mc_close(b);
	for (int i = 0; i < 200; i++) {
		err = mc_open_with(H.addr, &H.secret, MH_WAIT_MS, &c);
		if (!err)
			break;
		usleep(20 * 1000);
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(mc_ping(c), 0);
	mc_close(c);
	mc_close(a);
}
END_TEST

/*
 * Sockets that never authenticate take no client's slot: with more of
 * them open than metad serves connections, clients holding the secret
 * still connect at once.  Before, every slot went to the idle sockets.
 */
START_TEST(test_idle_unauthenticated_sockets_do_not_lock_out_clients)
{
	enum { LIMIT = 32, IDLE = 100, CLIENTS_IN = 5 };
	struct mc *m[CLIENTS_IN];
	char limit[64];
	int idle[IDLE];

	mh_stop(&H);
	snprintf(limit, sizeof(limit), "CLF_TEST_METAD_MAX_CONNECTIONS=%d",
		 LIMIT);
	H.env[0] = limit;
	mh_start(&H);
	for (int i = 0; i < IDLE; i++) {
		idle[i] = raw_connect(&H);
		ck_assert_int_ge(idle[i], 0);
	}
	usleep(300 * 1000);	/* metad has accepted them all */
	for (int i = 0; i < CLIENTS_IN; i++) {
		ck_assert_msg(mc_open_with(H.addr, &H.secret, MH_WAIT_MS,
					   &m[i]) == 0,
			      "client %d: %s", i, CLF_Last_error());
		ck_assert_int_eq(mc_ping(m[i]), 0);
	}
	for (int i = 0; i < CLIENTS_IN; i++)
		mc_close(m[i]);
	for (int i = 0; i < IDLE; i++)
		close(idle[i]);
	H.env[0] = NULL;
}
END_TEST

/* ---- many clients at once ---- */

#define CLIENTS 8
#define PER_CLIENT 40

struct client {
	int index;
	int failures;
	char why[256];
};

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct mc *m = NULL;
	char name[64];

	if (mc_open_with(H.addr, &H.secret, MH_WAIT_MS, &m)) {
		cl->failures = PER_CLIENT;
		return NULL;
	}
	snprintf(name, sizeof(name), "c%d", cl->index);
	if (mc_mkdir(m, ROOT, name, 0755, NULL))
		cl->failures++;
	for (int i = 0; i < PER_CLIENT; i++) {
		struct clf_proto_lookup_rep lk;

		snprintf(name, sizeof(name), "c%d/f%d", cl->index, i);
		if (mc_create(m, ROOT, name, 0644, CLF_PROTO_CREATE_EXCL,
			      NULL, NULL) ||
		    mc_lookup(m, ROOT, name, CLF_PROTO_LOOKUP_LAYOUT, &lk)) {
			snprintf(cl->why, sizeof(cl->why), "%s: %s", name,
				 CLF_Last_error());
			cl->failures++;
			continue;
		}
		clf_proto_lookup_rep_release(&lk);
	}
	mc_close(m);
	return NULL;
}

START_TEST(test_many_clients_at_once)
{
	struct client cl[CLIENTS];
	pthread_t t[CLIENTS];
	struct mc *m;

	for (int i = 0; i < CLIENTS; i++) {
		cl[i] = (struct client){ .index = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, client_main,
						&cl[i]), 0);
	}
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(cl[i].failures == 0, "client %d: %d failures, %s",
			      i, cl[i].failures, cl[i].why);
	}
	m = mc_open(&H);
	for (int i = 0; i < CLIENTS; i++) {
		struct clf_proto_readdir_rep rep;
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		ck_assert_int_eq(mc_readdir(m, mc_ino(m, name), 0,
					    CLF_PROTO_READDIR_MAX, &rep), 0);
		ck_assert_uint_eq(rep.count, PER_CLIENT);
		ck_assert(rep.eof);
		clf_proto_readdir_rep_release(&rep);
	}
	mc_close(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_robust");
	TCase *tc = tcase_create("robust");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_garbage_before_auth_closes_that_connection);
	tcase_add_test(tc, test_another_major_version_is_told_and_closed);
	tcase_add_test(tc,
		test_malformed_bodies_get_eproto_and_the_connection_goes_on);
	tcase_add_test(tc, test_bad_headers_close_that_connection);
	tcase_add_test(tc, test_oversized_messages_close_that_connection);
	tcase_add_test(tc, test_truncated_message_and_stalled_peer_are_dropped);
	tcase_add_test(tc, test_random_bodies_never_hurt_the_daemon);
	tcase_add_test(tc, test_connections_over_the_limit_are_refused_clearly);
	tcase_add_test(tc, test_idle_unauthenticated_sockets_do_not_lock_out_clients);
	tcase_add_test(tc, test_many_clients_at_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
