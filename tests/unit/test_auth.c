// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_auth.c -- secrets, and the challenge-response exchange over real
 * loopback sockets: right secret, wrong secret, a server that cannot
 * prove itself, another major version, and peers that skip the exchange.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "check_main.h"
#include "clf.h"
#include "clock.h"
#include "error.h"

#define WAIT_MS 5000

struct server {
	struct clf_listener *l;
	int port;
	pthread_t thread;
	struct clf_secret secret;
	void (*serve)(struct server *s, struct clf_conn *c);
	int result;
	char role[CLF_PROTO_ROLE_MAX + 1];
	char msg[512];		/* CLF_Last_error() of the server thread */
	atomic_int release;	/* set by the test to let serve() finish */
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct clf_conn *c;

	s->result = clf_listener_accept(s->l, WAIT_MS, WAIT_MS, &c);
	if (!s->result) {
		s->serve(s, c);
		clf_conn_close(c);
	}
	snprintf(s->msg, sizeof(s->msg), "%s", CLF_Last_error());
	return NULL;
}

static void start(struct server *s, const struct clf_secret *secret,
		  void (*serve)(struct server *, struct clf_conn *))
{
	memset(s, 0, sizeof(*s));
	if (secret)
		s->secret = *secret;
	s->serve = serve;
	ck_assert_int_eq(clf_listener_open(&clf_transport_tcp, "127.0.0.1:0",
					   &s->l), 0);
	s->port = clf_listener_port(s->l);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void stop(struct server *s)
{
	s->release = 1;
	pthread_join(s->thread, NULL);
	clf_listener_close(s->l);
}

static struct clf_conn *connect_to(struct server *s, int timeout_ms)
{
	char addr[64];
	struct clf_conn *c;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", s->port);
	ck_assert_int_eq(clf_conn_connect(&clf_transport_tcp, addr, timeout_ms,
					  &c), 0);
	return c;
}

static struct clf_secret secret_of(const char *hex)
{
	struct clf_secret s;

	ck_assert_int_eq(clf_secret_from_hex(&s, hex), 0);
	return s;
}

#define HEX_A "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define HEX_B "00112233445566778899aabbccddeeff00112233445566778899aabbccddeefe"

/* ------------------------------------------------------------------ */
/* Servers                                                             */
/* ------------------------------------------------------------------ */

/* A real server: authenticate, then echo one message. */
static void serve_auth(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h, rep;
	void *payload;

	s->result = clf_auth_server(c, &s->secret, s->role, sizeof(s->role));
	if (s->result)
		return;
	if (clf_conn_recv(c, &h, &payload) == 0) {
		clf_proto_header_init_reply(&rep, &h, 0);
		clf_conn_send_buf(c, &rep, payload, h.payload_len);
		free(payload);
	}
}

static void send_body(struct clf_conn *c, struct clf_proto_header *h,
		      const uint8_t *buf, size_t len)
{
	ck_assert_int_eq(clf_conn_send_buf(c, h, buf, len), 0);
}

/* A server that does not know the secret but plays along. */
static void serve_impostor(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h, rep;
	struct clf_proto_challenge ch = { .major = CLF_PROTO_VERSION_MAJOR,
					  .minor = CLF_PROTO_VERSION_MINOR,
					  .nonce = { 7 } };
	struct clf_proto_auth_ok ok = { { 1, 2, 3 } };
	uint8_t buf[128];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	void *payload;

	if ((s->result = clf_conn_recv(c, &h, &payload)))
		return;
	free(payload);
	clf_proto_challenge_encode(&w, &ch);
	clf_proto_header_init_reply(&rep, &h, 0);
	rep.opcode = CLF_PROTO_OP_CHALLENGE;
	send_body(c, &rep, buf, w.pos);
	if ((s->result = clf_conn_recv(c, &h, &payload)))
		return;
	free(payload);
	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	clf_proto_auth_ok_encode(&w, &ok);
	clf_proto_header_init_reply(&rep, &h, 0);
	rep.opcode = CLF_PROTO_OP_AUTH_OK;
	send_body(c, &rep, buf, w.pos);
	for (int i = 0; i < WAIT_MS / 10 && !s->release; i++)
		usleep(10000);
}

/* A server of the next major version: answers HELLO in its version. */
static void serve_future(struct server *s, struct clf_conn *c)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_writer w = { raw, sizeof(raw), 0 };
	struct clf_proto_header h, rep;

	if ((s->result = clf_conn_recv_header_any_major(c, &h)))
		return;
	clf_proto_header_init_reply(&rep, &h, 0);
	rep.opcode = CLF_PROTO_OP_CHALLENGE;
	rep.major = CLF_PROTO_VERSION_MAJOR + 1;
	clf_proto_header_encode(&w, &rep);
	ck_assert_int_eq(send(clf_conn_fd(c), raw, sizeof(raw), MSG_NOSIGNAL),
			 (ssize_t)sizeof(raw));
	for (int i = 0; i < WAIT_MS / 10 && !s->release; i++)
		usleep(10000);
}

static void serve_silence(struct server *s, struct clf_conn *c)
{
	for (int i = 0; i < WAIT_MS / 10 && !s->release; i++)
		usleep(10000);
}

/* A plain socket speaking raw headers. */
static int raw_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void raw_send_header(int fd, uint16_t op, uint16_t major,
			    uint32_t payload_len)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_writer w = { raw, sizeof(raw), 0 };
	struct clf_proto_header h;

	clf_proto_header_init(&h, op, 9);
	h.major = major;
	h.payload_len = payload_len;
	clf_proto_header_encode(&w, &h);
	ck_assert_int_eq(write(fd, raw, sizeof(raw)), (ssize_t)sizeof(raw));
}

/* Read one reply header from a raw socket. */
static struct clf_proto_header raw_recv_header(int fd)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_reader r = { raw, sizeof(raw), 0, false };
	struct clf_proto_header h;
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = read(fd, raw + got, sizeof(raw) - got);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	ck_assert_int_eq(clf_proto_header_decode(&r, &h), 0);
	return h;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_auth_succeeds_with_the_same_secret)
{
	struct clf_secret k = secret_of(HEX_A);
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	void *payload;

	start(&s, &k, serve_auth);
	c = connect_to(&s, WAIT_MS);
	ck_assert_msg(clf_auth_client(c, &k, "client") == 0, "%s",
		      CLF_Last_error());
	ck_assert_uint_eq(clf_conn_minor(c), CLF_PROTO_VERSION_MINOR);
	/* The connection carries requests afterwards. */
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_call(c, &h, NULL, 0, &rep, &payload), 0);
	free(payload);
	clf_conn_close(c);
	stop(&s);
	ck_assert_int_eq(s.result, 0);
	ck_assert_str_eq(s.role, "client");
}
END_TEST

START_TEST(test_auth_fails_with_wrong_secret_on_both_sides)
{
	struct clf_secret ka = secret_of(HEX_A), kb = secret_of(HEX_B);
	struct server s;
	struct clf_conn *c;
	char want[128];

	start(&s, &ka, serve_auth);
	c = connect_to(&s, WAIT_MS);
	ck_assert_int_eq(clf_auth_client(c, &kb, "iod"), -EACCES);
	snprintf(want, sizeof(want),
		 "clf: 127.0.0.1:%d: authentication failed: wrong secret",
		 s.port);
	ck_assert_str_eq(CLF_Last_error(), want);
	/* Who failed is a field, for the client to name the daemon. */
	ck_assert_int_eq(clf_error_last()->source.kind, CLF_ERROR_PEER);
	snprintf(want, sizeof(want), "127.0.0.1:%d", s.port);
	ck_assert_str_eq(clf_error_last()->source.addr, want);
	clf_conn_close(c);
	stop(&s);
	ck_assert_int_eq(s.result, -EACCES);
	ck_assert_ptr_nonnull(strstr(s.msg, "(iod) failed: wrong secret"));
}
END_TEST

START_TEST(test_client_refuses_a_server_that_does_not_know_the_secret)
{
	struct clf_secret k = secret_of(HEX_A);
	struct server s;
	struct clf_conn *c;

	start(&s, NULL, serve_impostor);
	c = connect_to(&s, WAIT_MS);
	ck_assert_int_eq(clf_auth_client(c, &k, "client"), -EACCES);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "the server does not know the secret"));
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_server_refuses_another_major_version_and_says_so)
{
	struct clf_secret k = secret_of(HEX_A);
	struct clf_proto_header rep;
	struct server s;
	char want[64];
	int fd;

	/* The peer's header carries this side's minor with the next major. */
	snprintf(want, sizeof(want), "speaks protocol %d.%d",
		 CLF_PROTO_VERSION_MAJOR + 1, CLF_PROTO_VERSION_MINOR);
	start(&s, &k, serve_auth);
	fd = raw_connect(s.port);
	raw_send_header(fd, CLF_PROTO_OP_HELLO, CLF_PROTO_VERSION_MAJOR + 1, 0);
	rep = raw_recv_header(fd);
	ck_assert_uint_eq(rep.opcode, CLF_PROTO_OP_CHALLENGE);
	ck_assert_int_eq(rep.status, -EPROTONOSUPPORT);
	ck_assert_uint_eq(rep.major, CLF_PROTO_VERSION_MAJOR);
	close(fd);
	stop(&s);
	ck_assert_int_eq(s.result, -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(s.msg, want));
}
END_TEST

START_TEST(test_client_refuses_a_server_of_another_major_version)
{
	struct clf_secret k = secret_of(HEX_A);
	struct server s;
	struct clf_conn *c;
	char want[128];

	start(&s, NULL, serve_future);
	c = connect_to(&s, WAIT_MS);
	ck_assert_int_eq(clf_auth_client(c, &k, "client"), -EPROTONOSUPPORT);
	snprintf(want, sizeof(want), "clf: 127.0.0.1:%d speaks protocol %d.%d",
		 s.port, CLF_PROTO_VERSION_MAJOR + 1, CLF_PROTO_VERSION_MINOR);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), want));
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_server_refuses_requests_before_authentication)
{
	struct clf_secret k = secret_of(HEX_A);
	struct clf_proto_header rep;
	struct server s;
	char want[64];
	int fd;

	/* The peer's header carries this side's minor with the next major. */
	snprintf(want, sizeof(want), "speaks protocol %d.%d",
		 CLF_PROTO_VERSION_MAJOR + 1, CLF_PROTO_VERSION_MINOR);
	start(&s, &k, serve_auth);
	fd = raw_connect(s.port);
	raw_send_header(fd, CLF_PROTO_OP_LOOKUP, CLF_PROTO_VERSION_MAJOR, 0);
	rep = raw_recv_header(fd);
	ck_assert_int_eq(rep.status, -EACCES);
	close(fd);
	stop(&s);
	ck_assert_int_eq(s.result, -EPROTO);
	ck_assert_ptr_nonnull(strstr(s.msg, "LOOKUP before authenticating"));
}
END_TEST

START_TEST(test_unauthenticated_peer_cannot_announce_a_big_payload)
{
	struct clf_secret k = secret_of(HEX_A);
	struct server s;
	int fd;

	start(&s, &k, serve_auth);
	fd = raw_connect(s.port);
	raw_send_header(fd, CLF_PROTO_OP_HELLO, CLF_PROTO_VERSION_MAJOR,
			CLF_AUTH_MAX_PAYLOAD + 1);
	pthread_join(s.thread, NULL);
	ck_assert_int_eq(s.result, -E2BIG);
	close(fd);
	clf_listener_close(s.l);
}
END_TEST

START_TEST(test_auth_times_out_against_a_silent_server)
{
	struct clf_secret k = secret_of(HEX_A);
	struct server s;
	struct clf_conn *c;
	int64_t t0;

	start(&s, &k, serve_silence);
	c = connect_to(&s, 200);
	t0 = clf_now_ms();
	ck_assert_int_eq(clf_auth_client(c, &k, "client"), -ETIMEDOUT);
	ck_assert_int_lt(clf_now_ms() - t0, 1500);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_auth_without_a_secret_is_refused_locally)
{
	struct clf_secret none = { 0 };
	struct server s;
	struct clf_conn *c;

	start(&s, NULL, serve_silence);
	c = connect_to(&s, WAIT_MS);
	ck_assert_int_eq(clf_auth_client(c, &none, "client"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "secret"));
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_secret_hex_round_trips)
{
	struct clf_secret a, b;
	char hex[CLF_SECRET_HEX_MAX];

	ck_assert_int_eq(clf_secret_generate(&a), 0);
	ck_assert_uint_eq(a.len, CLF_SECRET_DEFAULT);
	ck_assert_int_eq(clf_secret_to_hex(&a, hex, sizeof(hex)), 0);
	ck_assert_uint_eq(strlen(hex), 2 * CLF_SECRET_DEFAULT);
	ck_assert_int_eq(clf_secret_from_hex(&b, hex), 0);
	ck_assert_uint_eq(b.len, a.len);
	ck_assert_mem_eq(b.key, a.key, a.len);
	ck_assert_int_eq(clf_secret_from_hex(&b, "  " HEX_A "\n"), 0);
	ck_assert_int_eq(clf_secret_from_hex(&b, "00112233445566778899AABBCCDDEEFF"), 0);
	ck_assert_uint_eq(b.len, 16);
}
END_TEST

START_TEST(test_secret_refuses_short_odd_and_non_hex_without_echoing_it)
{
	struct clf_secret s;

	ck_assert_int_eq(clf_secret_from_hex(&s, "00112233445566778899aabbccddee"),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "15 bytes, must be 16"));
	ck_assert_int_eq(clf_secret_from_hex(&s, HEX_A "0"), -EINVAL);
	ck_assert_int_eq(clf_secret_from_hex(&s, "zz112233445566778899aabbccddeeff"),
			 -EINVAL);
	ck_assert_ptr_null(strstr(CLF_Last_error(), "zz11"));
	ck_assert_int_eq(clf_secret_from_hex(&s, HEX_A HEX_A HEX_A), -EINVAL);
}
END_TEST

START_TEST(test_generated_secrets_differ)
{
	struct clf_secret a, b;

	ck_assert_int_eq(clf_secret_generate(&a), 0);
	ck_assert_int_eq(clf_secret_generate(&b), 0);
	ck_assert(memcmp(a.key, b.key, a.len) != 0);
}
END_TEST

START_TEST(test_secret_file_must_be_private)
{
	char dir[] = "/tmp/clf-test-auth-XXXXXX", path[64];
	struct clf_secret s;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/secret", dir);
	ck_assert_int_eq(clf_secret_load_file(&s, path), -ENOENT);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(HEX_A "\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(clf_secret_load_file(&s, path), -EACCES);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "chmod 600"));
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(clf_secret_load_file(&s, path), 0);
	ck_assert_uint_eq(s.len, 32);
	unlink(path);
	rmdir(dir);
}
END_TEST

/*
 * auth = auto asks munged at every daemon start and CLF_init.  Whether
 * it runs or not, the answer must come at once: libmunge alone retries
 * a refused socket for about 2 s, which made every start that slow on a
 * node with munge installed and munged stopped.
 */
START_TEST(test_munge_probe_answers_at_once_whether_munged_runs_or_not)
{
	int64_t t0 = clf_now_ms();
	bool up = clf_munge_available();

	ck_assert_msg(clf_now_ms() - t0 < 500,
		      "asking whether munged runs (it %s) took %lld ms",
		      up ? "does" : "does not",
		      (long long)(clf_now_ms() - t0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("auth");
	TCase *ex = tcase_create("exchange");
	TCase *sec = tcase_create("secrets");

	tcase_set_timeout(ex, 30);
	tcase_add_test(ex, test_auth_succeeds_with_the_same_secret);
	tcase_add_test(ex, test_auth_fails_with_wrong_secret_on_both_sides);
	tcase_add_test(ex,
		test_client_refuses_a_server_that_does_not_know_the_secret);
	tcase_add_test(ex, test_server_refuses_another_major_version_and_says_so);
	tcase_add_test(ex, test_client_refuses_a_server_of_another_major_version);
	tcase_add_test(ex, test_server_refuses_requests_before_authentication);
	tcase_add_test(ex,
		test_unauthenticated_peer_cannot_announce_a_big_payload);
	tcase_add_test(ex, test_auth_times_out_against_a_silent_server);
	tcase_add_test(ex, test_auth_without_a_secret_is_refused_locally);
	tcase_add_test(ex,
		test_munge_probe_answers_at_once_whether_munged_runs_or_not);
	tcase_add_test(sec, test_secret_hex_round_trips);
	tcase_add_test(sec,
		test_secret_refuses_short_odd_and_non_hex_without_echoing_it);
	tcase_add_test(sec, test_generated_secrets_differ);
	tcase_add_test(sec, test_secret_file_must_be_private);
	suite_add_tcase(s, ex);
	suite_add_tcase(s, sec);
	return run_suite(s);
}
