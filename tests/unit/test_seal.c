// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_seal.c -- messages after the handshake (libclf/runtime/seal.h) through a
 * man in the middle: a relay between a real client and a real server,
 * over loopback TCP, that passes the handshake untouched and then flips
 * a byte, replays, drops or reorders the client's messages.  With
 * integrity and privacy the server takes the messages before the attack
 * and refuses the attacked one with -EBADMSG; with none it takes them
 * all (what the levels are for).  With privacy no payload byte crosses
 * the wire in clear.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "check_main.h"
#include "clf.h"

#define WAIT_MS 5000
#define NMSG 3
#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

enum attack { PASS, FLIP, REPLAY, DROP, REORDER };

struct mitm {
	enum clf_protection level;
	enum attack attack;
	struct clf_secret secret;
	/* server */
	struct clf_listener *l;
	int got, err;		/* messages taken; the error after them */
	char payloads[NMSG + 1][32];
	char msg[512];
	/* relay */
	int relay_fd, relay_port, server_port;
	uint8_t wire[4096];	/* what the client sent after the handshake */
	size_t wire_len;
};

static void *server_main(void *arg)
{
	struct mitm *m = arg;
	char role[CLF_PROTO_ROLE_MAX + 1];
	struct clf_proto_header h;
	struct clf_conn *c;
	void *p;

	m->err = clf_listener_accept(m->l, WAIT_MS, WAIT_MS, &c);
	if (m->err)
		return NULL;
	clf_conn_want_protection(c, m->level);
	m->err = clf_auth_server(c, &m->secret, role, sizeof(role));
	while (!m->err && m->got <= NMSG) {
		m->err = clf_conn_recv(c, &h, &p);
		if (!m->err) {
			snprintf(m->payloads[m->got++], 32, "%.*s",
				 (int)h.payload_len, (char *)p);
			free(p);
		}
	}
	snprintf(m->msg, sizeof(m->msg), "%s", CLF_Last_error());
	clf_conn_close(c);
	return NULL;
}

static void read_all(int fd, uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t r = read(fd, buf, n);

		ck_assert_msg(r > 0, "relay: read: %s", strerror(errno));
		buf += r;
		n -= (size_t)r;
	}
}

static void write_all(int fd, const uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t r = write(fd, buf, n);

		ck_assert_msg(r > 0, "relay: write: %s", strerror(errno));
		buf += r;
		n -= (size_t)r;
	}
}

/* One message from fd into buf: its length; tag bytes follow sealed ones. */
static size_t read_msg(int fd, uint8_t *buf, size_t tag)
{
	uint32_t len;

	read_all(fd, buf, CLF_PROTO_HEADER_SIZE);
	len = buf[20] | buf[21] << 8 | buf[22] << 16 | (uint32_t)buf[23] << 24;
	ck_assert_uint_lt(len, 1024);
	read_all(fd, buf + CLF_PROTO_HEADER_SIZE, len + tag);
	return CLF_PROTO_HEADER_SIZE + len + tag;
}

/* Send n bytes unless the peer closed first: 0, or -1 once it did. */
static int send_until_closed(int fd, const uint8_t *buf, size_t n)
{
	while (n) {
		ssize_t r = send(fd, buf, n, MSG_NOSIGNAL);

		if (r < 0 && (errno == EPIPE || errno == ECONNRESET))
			return -1;
		ck_assert_msg(r > 0, "relay: send: %s", strerror(errno));
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

static void *relay_main(void *arg)
{
	struct mitm *m = arg;
	uint8_t msg[NMSG][2048], buf[2048];
	size_t len[NMSG], n, tag = m->level ? 16 : 0;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)m->server_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int cfd = accept(m->relay_fd, NULL, NULL);
	int sfd = socket(AF_INET, SOCK_STREAM, 0);
	int order[4], norder = 0;

	ck_assert_int_ge(cfd, 0);
	ck_assert_int_eq(connect(sfd, (struct sockaddr *)&a, sizeof(a)), 0);
	/* HELLO, CHALLENGE, RESPONSE, AUTH_OK: untouched. */
	for (int i = 0; i < 4; i++) {
		n = read_msg(i % 2 ? sfd : cfd, buf, 0);
		write_all(i % 2 ? cfd : sfd, buf, n);
	}
	for (int i = 0; i < NMSG; i++) {
		len[i] = read_msg(cfd, msg[i], tag);
		memcpy(m->wire + m->wire_len, msg[i], len[i]);
		m->wire_len += len[i];
	}
	switch (m->attack) {
	case PASS:
	case FLIP:
		order[norder++] = 0, order[norder++] = 1, order[norder++] = 2;
		if (m->attack == FLIP)
			msg[1][CLF_PROTO_HEADER_SIZE + 2] ^= 0x20;
		break;
	case REPLAY:
		order[norder++] = 0, order[norder++] = 0, order[norder++] = 1;
		order[norder++] = 2;
		break;
	case DROP:
		order[norder++] = 0, order[norder++] = 2;
		break;
	case REORDER:
		order[norder++] = 1, order[norder++] = 0, order[norder++] = 2;
		break;
	}
	/* The server may close as soon as it sees the attack; what is left
	 * then need not arrive (and must not raise SIGPIPE here). */
	for (int i = 0; i < norder; i++)
		if (send_until_closed(sfd, msg[order[i]], len[order[i]]))
			break;
	shutdown(sfd, SHUT_WR);
	/* Wait until the server is done with what it got. */
	while (read(sfd, buf, sizeof(buf)) > 0)
		;
	close(sfd);
	close(cfd);
	return NULL;
}

/* Run the client through the relay under attack; the server's outcome
 * is in m. */
static void run(struct mitm *m, enum clf_protection level, enum attack at)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	pthread_t st, rt;
	struct clf_conn *c;
	char addr[64];

	memset(m, 0, sizeof(*m));
	m->level = level;
	m->attack = at;
	ck_assert_int_eq(clf_secret_from_hex(&m->secret, HEX), 0);
	ck_assert_int_eq(clf_listener_open(&clf_transport_tcp, "127.0.0.1:0",
					   &m->l), 0);
	m->server_port = clf_listener_port(m->l);
	m->relay_fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(m->relay_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(m->relay_fd, 1), 0);
	getsockname(m->relay_fd, (struct sockaddr *)&a, &alen);
	m->relay_port = ntohs(a.sin_port);
	ck_assert_int_eq(pthread_create(&st, NULL, server_main, m), 0);
	ck_assert_int_eq(pthread_create(&rt, NULL, relay_main, m), 0);

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", m->relay_port);
	ck_assert_int_eq(clf_conn_connect(&clf_transport_tcp, addr, WAIT_MS,
					  &c), 0);
	clf_conn_want_protection(c, level);
	ck_assert_msg(clf_auth_client(c, &m->secret, "client") == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(clf_conn_protection(c), level);
	for (int i = 0; i < NMSG; i++) {
		struct clf_proto_header h;
		char body[32];

		snprintf(body, sizeof(body), "plaintext-%d", i);
		clf_proto_header_init(&h, CLF_PROTO_OP_PING,
				      clf_conn_next_id(c));
		ck_assert_int_eq(clf_conn_send_buf(c, &h, body, strlen(body)),
				 0);
	}
	pthread_join(rt, NULL);
	pthread_join(st, NULL);
	clf_conn_close(c);
	close(m->relay_fd);
	clf_listener_close(m->l);
}

/* Detected: the messages before the attacked one, then -EBADMSG. */
static void check_detected(struct mitm *m, int before)
{
	ck_assert_int_eq(m->got, before);
	ck_assert_int_eq(m->err, -EBADMSG);
	ck_assert_msg(strstr(m->msg, "closing the connection"), "%s", m->msg);
	for (int i = 0; i < before; i++) {
		char want[32];

		snprintf(want, sizeof(want), "plaintext-%d", i);
		ck_assert_str_eq(m->payloads[i], want);
	}
}

static const enum clf_protection levels[] = {
	CLF_PROTECT_INTEGRITY, CLF_PROTECT_PRIVACY,
};

START_TEST(test_flipped_byte_is_detected_and_closes)
{
	struct mitm m;

	run(&m, levels[_i], FLIP);
	check_detected(&m, 1);
}
END_TEST

START_TEST(test_replayed_message_is_detected)
{
	struct mitm m;

	run(&m, levels[_i], REPLAY);
	check_detected(&m, 1);
}
END_TEST

START_TEST(test_dropped_message_is_detected)
{
	struct mitm m;

	run(&m, levels[_i], DROP);
	check_detected(&m, 1);
}
END_TEST

START_TEST(test_reordered_messages_are_detected)
{
	struct mitm m;

	run(&m, levels[_i], REORDER);
	check_detected(&m, 0);
}
END_TEST

START_TEST(test_untouched_messages_pass_at_every_level)
{
	struct mitm m;

	run(&m, (enum clf_protection)_i, PASS);
	ck_assert_int_eq(m.got, NMSG);
	ck_assert_int_eq(m.err, -ECONNRESET);
}
END_TEST

START_TEST(test_without_protection_a_flip_goes_through)
{
	struct mitm m;

	run(&m, CLF_PROTECT_NONE, FLIP);
	ck_assert_int_eq(m.got, NMSG);
	ck_assert_str_eq(m.payloads[1], "plAintext-1");
}
END_TEST

static bool wire_has(const struct mitm *m, const char *s)
{
	return memmem(m->wire, m->wire_len, s, strlen(s)) != NULL;
}

START_TEST(test_privacy_sends_no_plaintext)
{
	struct mitm m;

	run(&m, CLF_PROTECT_INTEGRITY, PASS);
	ck_assert(wire_has(&m, "plaintext-1"));
	run(&m, CLF_PROTECT_PRIVACY, PASS);
	ck_assert(!wire_has(&m, "plaintext"));
	ck_assert_int_eq(m.got, NMSG);
}
END_TEST

START_TEST(test_client_of_1_7_is_refused_by_a_protecting_server)
{
	struct mitm m = { .level = CLF_PROTECT_INTEGRITY };
	struct clf_conn *c;
	pthread_t st;
	char addr[64];
	int err;

	ck_assert_int_eq(clf_secret_from_hex(&m.secret, HEX), 0);
	ck_assert_int_eq(clf_listener_open(&clf_transport_tcp, "127.0.0.1:0",
					   &m.l), 0);
	ck_assert_int_eq(pthread_create(&st, NULL, server_main, &m), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", clf_listener_port(m.l));
	ck_assert_int_eq(clf_conn_connect(&clf_transport_tcp, addr, WAIT_MS,
					  &c), 0);
	setenv("CLF_TEST_CLIENT_MINOR", "7", 1);
	err = clf_auth_client(c, &m.secret, "client");
	unsetenv("CLF_TEST_CLIENT_MINOR");
	ck_assert_int_eq(err, -EPROTONOSUPPORT);
	ck_assert_msg(strstr(CLF_Last_error(), "protects every message"), "%s",
		      CLF_Last_error());
	pthread_join(st, NULL);
	ck_assert_int_eq(m.err, -EPROTONOSUPPORT);
	clf_conn_close(c);
	clf_listener_close(m.l);
}
END_TEST

static Suite *seal_suite(void)
{
	Suite *s = suite_create("seal");
	TCase *tc = tcase_create("mitm");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_flipped_byte_is_detected_and_closes, 0, 2);
	tcase_add_loop_test(tc, test_replayed_message_is_detected, 0, 2);
	tcase_add_loop_test(tc, test_dropped_message_is_detected, 0, 2);
	tcase_add_loop_test(tc, test_reordered_messages_are_detected, 0, 2);
	tcase_add_loop_test(tc, test_untouched_messages_pass_at_every_level, 0,
			    3);
	tcase_add_test(tc, test_without_protection_a_flip_goes_through);
	tcase_add_test(tc, test_privacy_sends_no_plaintext);
	tcase_add_test(tc, test_client_of_1_7_is_refused_by_a_protecting_server);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(seal_suite());
}
