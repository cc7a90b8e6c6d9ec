// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_transport.c -- the TCP transport over real loopback sockets: a
 * server thread and a client in one process, peers that misbehave on
 * purpose (never answer, trickle, lie about lengths, close mid-message),
 * and the time limits that keep every call from hanging.
 *
 * Only 127.0.0.1 and ::1 are ever contacted; ports are chosen by the
 * kernel (port 0), so parallel runs do not collide.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "log.h"
#include "transport.h"

#define WAIT_MS 5000	/* generous bound for what must happen */

struct server {
	struct clf_listener *l;
	int port;
	pthread_t thread;
	void (*serve)(struct server *s, struct clf_conn *c);
	int result;		/* what serve() saw, for the test to check */
	uint8_t *data;		/* what serve() received; the test frees it */
	size_t len;
	atomic_int release;	/* set by the test to let serve() finish */
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct clf_conn *c;

	s->result = clf_listener_accept(s->l, WAIT_MS, WAIT_MS, &c);
	if (s->result)
		return NULL;
	s->serve(s, c);
	clf_conn_close(c);
	return NULL;
}

static void start(struct server *s, const char *addr,
		  void (*serve)(struct server *, struct clf_conn *))
{
	memset(s, 0, sizeof(*s));
	s->serve = serve;
	ck_assert_msg(clf_listener_open(&clf_transport_tcp, addr, &s->l) == 0,
		      "%s", CLF_Last_error());
	s->port = clf_listener_port(s->l);
	ck_assert_int_gt(s->port, 0);
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
	ck_assert_msg(clf_conn_connect(&clf_transport_tcp, addr, timeout_ms,
				       &c) == 0, "%s", CLF_Last_error());
	return c;
}

/* A plain socket, to send what a correct clf peer never would. */
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

static void raw_header(int fd, uint32_t magic, uint16_t major,
		       uint32_t payload_len)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_writer w = { raw, sizeof(raw), 0 };
	struct clf_proto_header h;

	clf_proto_header_init(&h, CLF_PROTO_OP_PING, 1);
	h.magic = magic;
	h.major = major;
	h.payload_len = payload_len;
	clf_proto_header_encode(&w, &h);
	ck_assert_int_eq(write(fd, raw, sizeof(raw)), (ssize_t)sizeof(raw));
}

static void wait_release(struct server *s)
{
	for (int i = 0; i < WAIT_MS / 10 && !s->release; i++)
		usleep(10000);
}

/* ------------------------------------------------------------------ */
/* Servers                                                             */
/* ------------------------------------------------------------------ */

/* Echo every request back as its reply, until the client goes. */
static void serve_echo(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h, rep;
	void *payload;

	while ((s->result = clf_conn_recv(c, &h, &payload)) == 0) {
		clf_proto_header_init_reply(&rep, &h, 0);
		s->result = clf_conn_send_buf(c, &rep, payload, h.payload_len);
		free(payload);
		if (s->result)
			return;
	}
}

/* Echo one message 30 ms after it came. */
static void serve_late_echo(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h, rep;
	void *payload;

	s->result = clf_conn_recv(c, &h, &payload);
	if (s->result)
		return;
	usleep(30000);
	clf_proto_header_init_reply(&rep, &h, 0);
	s->result = clf_conn_send_buf(c, &rep, payload, h.payload_len);
	free(payload);
	wait_release(s);
}

/* Accept, then say nothing until the test is over. */
static void serve_silence(struct server *s, struct clf_conn *c)
{
	wait_release(s);
}

/* Receive one message and keep the outcome. */
static void serve_recv_one(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h;
	void *payload;

	clf_conn_set_max_payload(c, 1000);
	s->result = clf_conn_recv(c, &h, &payload);
	if (s->result == 0) {
		s->data = payload;
		s->len = h.payload_len;
	}
}

/* Answer a request with an error and a message. */
static void serve_error(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h, rep;
	struct clf_proto_error e = { clf_proto_str_of("no such file 'x/y'") };
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	void *payload;

	s->result = clf_conn_recv(c, &h, &payload);
	if (s->result)
		return;
	free(payload);
	clf_proto_header_init_reply(&rep, &h, -ENOENT);
	clf_proto_error_encode(&w, &e);
	s->result = clf_conn_send_buf(c, &rep, buf, w.pos);
	/* A second request must still get through. */
	if (!s->result)
		serve_echo(s, c);
}

/* Answer with the wrong request id. */
static void serve_wrong_id(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h, rep;
	void *payload;

	s->result = clf_conn_recv(c, &h, &payload);
	if (s->result)
		return;
	free(payload);
	clf_proto_header_init_reply(&rep, &h, 0);
	rep.id++;
	s->result = clf_conn_send_buf(c, &rep, NULL, 0);
	wait_release(s);
}

/* Send the header of a reply one byte every 50 ms. */
static void serve_trickle(struct server *s, struct clf_conn *c)
{
	struct clf_proto_header h;
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_writer w = { raw, sizeof(raw), 0 };
	int fd = clf_conn_fd(c);

	clf_proto_header_init(&h, CLF_PROTO_OP_PING, 1);
	clf_proto_header_encode(&w, &h);
	for (size_t i = 0; i < sizeof(raw) && !s->release; i++) {
		if (send(fd, raw + i, 1, MSG_NOSIGNAL) != 1)
			return;
		usleep(50000);
	}
}

/* Accept and hang up at once. */
static void serve_hangup(struct server *s, struct clf_conn *c)
{
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_send_and_recv_round_trip_a_message_over_loopback)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	struct iovec iov[2] = { { "hello, ", 7 }, { "world", 5 } };
	void *payload;

	start(&s, "127.0.0.1:0", serve_echo);
	c = connect_to(&s, WAIT_MS);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_call(c, &h, iov, 2, &rep, &payload), 0);
	ck_assert_uint_eq(rep.payload_len, 12);
	ck_assert_mem_eq(payload, "hello, world", 12);
	ck_assert_uint_eq(rep.id, h.id);
	ck_assert(rep.flags & CLF_PROTO_FLAG_REPLY);
	free(payload);
	clf_conn_close(c);
	stop(&s);
	ck_assert_int_eq(s.result, -ECONNRESET);	/* client went away */
}
END_TEST

/* Times this thread slept (blocked) so far. */
static long thread_sleeps(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_nvcsw;
}

/* A call to serve_late_echo with a receive spin of spin_us: how many
 * times this thread slept in it. */
static long late_call_sleeps(int64_t spin_us)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	struct iovec iov = { "late", 4 };
	void *payload;
	long before;

	start(&s, "127.0.0.1:0", serve_late_echo);
	c = connect_to(&s, WAIT_MS);
	clf_conn_set_recv_spin(c, spin_us * 1000);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	before = thread_sleeps();
	ck_assert_int_eq(clf_conn_call(c, &h, &iov, 1, &rep, &payload), 0);
	before = thread_sleeps() - before;
	ck_assert_uint_eq(rep.payload_len, 4);
	ck_assert_mem_eq(payload, "late", 4);
	free(payload);
	clf_conn_close(c);
	stop(&s);
	return before;
}

/*
 * clf_conn_set_recv_spin: a reply that comes within the spin is taken
 * without the receiving thread ever sleeping (so without a wake-up on
 * the reply's path); without a spin, or when the spin runs out first,
 * the receive sleeps in poll and still gets the reply.
 */
START_TEST(test_recv_spin_takes_a_reply_within_it_without_sleeping)
{
	ck_assert_int_eq(late_call_sleeps(2000000), 0);
	ck_assert_int_ge(late_call_sleeps(0), 1);
	ck_assert_int_ge(late_call_sleeps(1000), 1);
}
END_TEST

START_TEST(test_peer_names_are_numeric_host_and_port)
{
	struct server s;
	struct clf_conn *c;
	char want[64];

	start(&s, "127.0.0.1:0", serve_silence);
	c = connect_to(&s, WAIT_MS);
	snprintf(want, sizeof(want), "127.0.0.1:%d", s.port);
	ck_assert_str_eq(clf_conn_peer(c), want);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_large_payload_survives_short_reads_and_writes)
{
	const size_t n = 8u << 20;
	uint8_t *big = malloc(n);
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	void *payload;

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 131 + (i >> 13));
	start(&s, "127.0.0.1:0", serve_echo);
	c = connect_to(&s, WAIT_MS);
	clf_proto_header_init(&h, CLF_PROTO_OP_SUB_WRITE, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_send_buf(c, &h, big, n), 0);
	ck_assert_int_eq(clf_conn_recv(c, &rep, &payload), 0);
	ck_assert_uint_eq(rep.payload_len, n);
	ck_assert(memcmp(payload, big, n) == 0);
	free(payload);
	free(big);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_ipv6_loopback_works)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	char addr[64];
	void *payload;

	start(&s, "[::1]:0", serve_echo);
	snprintf(addr, sizeof(addr), "[::1]:%d", s.port);
	ck_assert_msg(clf_conn_connect(&clf_transport_tcp, addr, WAIT_MS,
				       &c) == 0, "%s", CLF_Last_error());
	ck_assert_str_eq(clf_conn_peer(c), addr);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_call(c, &h, NULL, 0, &rep, &payload), 0);
	ck_assert_uint_eq(rep.payload_len, 0);
	free(payload);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_recv_times_out_when_the_server_never_answers)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	void *payload;
	int64_t t0, took;

	start(&s, "127.0.0.1:0", serve_silence);
	c = connect_to(&s, 300);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	t0 = clf_now_ms();
	ck_assert_int_eq(clf_conn_call(c, &h, NULL, 0, &rep, &payload),
			 -ETIMEDOUT);
	took = clf_now_ms() - t0;
	ck_assert_int_ge(took, 290);
	ck_assert_int_lt(took, 1500);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "no answer within 300 ms"));
	/* The stream may now be cut inside a reply: refuse to go on. */
	ck_assert(clf_conn_broken(c));
	ck_assert_int_eq(clf_conn_send_buf(c, &h, NULL, 0), -ENOTCONN);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_trickling_peer_cannot_hold_a_receive_past_its_deadline)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h;
	int64_t t0, took;

	start(&s, "127.0.0.1:0", serve_trickle);
	c = connect_to(&s, 300);
	t0 = clf_now_ms();
	ck_assert_int_eq(clf_conn_recv_header(c, &h), -ETIMEDOUT);
	took = clf_now_ms() - t0;
	ck_assert_int_lt(took, 1000);	/* 32 bytes at 50 ms would be 1.6 s */
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_connect_to_a_closed_port_is_refused)
{
	struct clf_listener *l;
	struct clf_conn *c = NULL;
	char addr[64];
	int port;

	ck_assert_int_eq(clf_listener_open(&clf_transport_tcp, "127.0.0.1:0",
					   &l), 0);
	port = clf_listener_port(l);
	clf_listener_close(l);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	ck_assert_int_eq(clf_conn_connect(&clf_transport_tcp, addr, WAIT_MS,
					  &c), -ECONNREFUSED);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), addr));
}
END_TEST

START_TEST(test_accept_times_out_without_clients)
{
	struct clf_listener *l;
	struct clf_conn *c = NULL;
	int64_t t0 = clf_now_ms();

	ck_assert_int_eq(clf_listener_open(&clf_transport_tcp, "127.0.0.1:0",
					   &l), 0);
	ck_assert_int_eq(clf_listener_accept(l, 100, WAIT_MS, &c), -ETIMEDOUT);
	ck_assert_int_lt(clf_now_ms() - t0, 1000);
	ck_assert_ptr_null(c);
	clf_listener_close(l);
}
END_TEST

START_TEST(test_recv_refuses_payload_over_limit)
{
	struct server s;
	int fd;
	int64_t t0 = clf_now_ms();

	start(&s, "127.0.0.1:0", serve_recv_one);
	fd = raw_connect(s.port);
	/* Claims far more than the limit and sends none of it: refused from
	 * the header alone, without waiting for (or allocating) a payload. */
	raw_header(fd, CLF_PROTO_MAGIC, CLF_PROTO_VERSION_MAJOR, 50000000);
	pthread_join(s.thread, NULL);
	ck_assert_int_eq(s.result, -E2BIG);
	ck_assert_int_lt(clf_now_ms() - t0, 2000);
	close(fd);
	clf_listener_close(s.l);
}
END_TEST

START_TEST(test_recv_refuses_wrong_magic)
{
	struct server s;
	int fd;

	start(&s, "127.0.0.1:0", serve_recv_one);
	fd = raw_connect(s.port);
	raw_header(fd, 0x50545448 /* "HTTP" */, CLF_PROTO_VERSION_MAJOR, 0);
	stop(&s);
	ck_assert_int_eq(s.result, -EPROTO);
	close(fd);
}
END_TEST

START_TEST(test_recv_refuses_wrong_major_version)
{
	struct server s;
	int fd;

	start(&s, "127.0.0.1:0", serve_recv_one);
	fd = raw_connect(s.port);
	raw_header(fd, CLF_PROTO_MAGIC, CLF_PROTO_VERSION_MAJOR + 1, 0);
	stop(&s);
	ck_assert_int_eq(s.result, -EPROTONOSUPPORT);
	close(fd);
}
END_TEST

START_TEST(test_peer_closing_mid_message_is_a_reset)
{
	struct server s;
	int fd;

	start(&s, "127.0.0.1:0", serve_recv_one);
	fd = raw_connect(s.port);
	raw_header(fd, CLF_PROTO_MAGIC, CLF_PROTO_VERSION_MAJOR, 100);
	ck_assert_int_eq(write(fd, "only ten b", 10), 10);
	close(fd);
	stop(&s);
	ck_assert_int_eq(s.result, -ECONNRESET);
}
END_TEST

START_TEST(test_send_refuses_payload_over_limit_and_keeps_connection)
{
	static uint8_t buf[2000];
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h;

	start(&s, "127.0.0.1:0", serve_recv_one);
	c = connect_to(&s, WAIT_MS);
	clf_conn_set_max_payload(c, 1000);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_send_buf(c, &h, buf, 1001), -E2BIG);
	ck_assert(!clf_conn_broken(c));
	ck_assert_int_eq(clf_conn_send_buf(c, &h, "fine", 4), 0);
	stop(&s);
	ck_assert_int_eq(s.result, 0);
	ck_assert_uint_eq(s.len, 4);
	ck_assert_mem_eq(s.data, "fine", 4);
	free(s.data);
	clf_conn_close(c);
}
END_TEST

START_TEST(test_call_returns_remote_error_with_its_message)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	void *payload = NULL;

	start(&s, "127.0.0.1:0", serve_error);
	c = connect_to(&s, WAIT_MS);
	clf_proto_header_init(&h, CLF_PROTO_OP_LOOKUP, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_call(c, &h, NULL, 0, &rep, &payload),
			 -ENOENT);
	ck_assert_ptr_null(payload);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "no such file 'x/y'"));
	ck_assert(!clf_conn_broken(c));
	h.id = clf_conn_next_id(c);
	ck_assert_int_eq(clf_conn_call(c, &h, NULL, 0, &rep, &payload), 0);
	free(payload);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_call_refuses_a_reply_to_another_request)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	void *payload;

	start(&s, "127.0.0.1:0", serve_wrong_id);
	c = connect_to(&s, WAIT_MS);
	clf_proto_header_init(&h, CLF_PROTO_OP_GETATTR, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_call(c, &h, NULL, 0, &rep, &payload),
			 -EPROTO);
	ck_assert(clf_conn_broken(c));
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_poll_reports_readiness)
{
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h, rep;
	void *payload;

	start(&s, "127.0.0.1:0", serve_echo);
	c = connect_to(&s, WAIT_MS);
	ck_assert_int_eq(clf_conn_poll(c, 0), 0);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_send_buf(c, &h, NULL, 0), 0);
	ck_assert_int_eq(clf_conn_poll(c, WAIT_MS), 1);
	ck_assert_int_eq(clf_conn_poll(c, 0), 1);	/* zero still looks */
	ck_assert_int_eq(clf_conn_recv(c, &rep, &payload), 0);
	free(payload);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

/* /proc/sys value number field of path, or 0. */
static long sysctl_field(const char *path, int field)
{
	long v[3] = { 0, 0, 0 };
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%ld %ld %ld", &v[0], &v[1], &v[2]);
	fclose(f);
	return n > field ? v[field] : 0;
}

/*
 * Replies queued behind another iod's wait in the socket: a client's
 * connection must offer a window as large as the system allows from the
 * start, not autotuning's 128 KiB default (tcp_rcvbuf.c).  Linux reports
 * twice the size asked for (its bookkeeping overhead).
 */
START_TEST(test_connect_asks_for_the_largest_receive_buffer_allowed)
{
	long max = sysctl_field("/proc/sys/net/core/rmem_max", 0);
	long def = sysctl_field("/proc/sys/net/ipv4/tcp_rmem", 1);
	long tmax = sysctl_field("/proc/sys/net/ipv4/tcp_rmem", 2);
	struct server s;
	struct clf_conn *c;
	socklen_t len = sizeof(int);
	int got = 0;

	if (tmax > 0 && max > tmax)
		max = tmax;
	start(&s, "127.0.0.1:0", serve_silence);
	c = connect_to(&s, WAIT_MS);
	ck_assert_int_eq(getsockopt(clf_conn_fd(c), SOL_SOCKET, SO_RCVBUF,
				    &got, &len), 0);
	if (def > 0 && max >= 4 * def)
		ck_assert_int_ge(got, 2 * max);
	else		/* a small rmem_max: autotuning's, untouched */
		ck_assert_int_le(got, 2 * def);
	clf_conn_close(c);
	stop(&s);
}
END_TEST

START_TEST(test_send_to_a_vanished_peer_fails_without_sigpipe)
{
	static uint8_t buf[1 << 16];
	struct server s;
	struct clf_conn *c;
	struct clf_proto_header h;
	int err = 0;

	start(&s, "127.0.0.1:0", serve_hangup);
	c = connect_to(&s, WAIT_MS);
	pthread_join(s.thread, NULL);
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, 1);
	for (int i = 0; i < 200 && !err; i++) {
		err = clf_conn_send_buf(c, &h, buf, sizeof(buf));
		usleep(1000);
	}
	ck_assert_int_eq(err, -ECONNRESET);
	clf_conn_close(c);
	clf_listener_close(s.l);
}
END_TEST

START_TEST(test_addr_split_accepts_host_port_and_bracketed_ipv6)
{
	char host[64], port[8];
	static const char *const bad[] = {
		"nohost", "h:", "h:abc", "h:70000", "::1:7000", "[::1]7000",
		"[::1", "h:-1", "h:7000x",
	};

	ck_assert_int_eq(clf_addr_split("127.0.0.1:7000", host, sizeof(host),
					port, sizeof(port)), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_str_eq(port, "7000");
	ck_assert_int_eq(clf_addr_split("[::1]:7001", host, sizeof(host), port,
					sizeof(port)), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_str_eq(port, "7001");
	ck_assert_int_eq(clf_addr_split(":0", host, sizeof(host), port,
					sizeof(port)), 0);
	ck_assert_str_eq(host, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(clf_addr_split(bad[i], host, sizeof(host), port,
					     sizeof(port)) == -EINVAL,
			      "'%s' accepted", bad[i]);
	ck_assert_int_eq(clf_addr_split("a-very-long-host-name:1", host, 8,
					port, sizeof(port)), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_unknown_transport_is_refused_by_name)
{
	ck_assert_ptr_eq(clf_transport_find("tcp"), &clf_transport_tcp);
	ck_assert_ptr_null(clf_transport_find("carrier-pigeon"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "carrier-pigeon"));
#ifndef CLF_HAVE_RDMA
	ck_assert_ptr_null(clf_transport_find("rdma"));
#endif
}
END_TEST

START_TEST(test_address_prefix_names_the_transport)
{
	char host[64], port[16];

	ck_assert_int_eq(clf_addr_split("rdma://10.9.9.1:7001", host,
					sizeof(host), port, sizeof(port)), 0);
	ck_assert_str_eq(host, "10.9.9.1");
	ck_assert_str_eq(port, "7001");
	ck_assert_int_eq(clf_addr_split("tcp://[::1]:7", host, sizeof(host),
					port, sizeof(port)), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_ptr_eq(clf_addr_transport("tcp://[::1]:7", NULL),
			 &clf_transport_tcp);
	ck_assert_ptr_eq(clf_addr_transport("1.2.3.4:7", &clf_transport_tcp),
			 &clf_transport_tcp);
	ck_assert_ptr_null(clf_addr_transport("udp://1.2.3.4:7",
					      &clf_transport_tcp));
#ifdef CLF_HAVE_RDMA
	ck_assert_ptr_eq(clf_addr_transport("rdma://h:1", &clf_transport_tcp),
			 clf_transport_find("rdma"));
#endif
}
END_TEST

#ifdef CLF_HAVE_RDMA
/* A client asked for RDMA where no RDMA device leads to the daemon (none
 * on this host, or none on the route: rdma_cm cannot use loopback)
 * connects over TCP and says so in its log. */
START_TEST(test_rdma_without_a_device_on_the_way_falls_back_to_tcp_and_says_so)
{
	char log[] = "/tmp/clf-test-transport-log-XXXXXX", addr[64], text[4096];
	const struct clf_transport_ops *rdma = clf_transport_find("rdma");
	struct iovec iov = { "over tcp", 8 };
	struct clf_proto_header h, rep;
	struct server s;
	struct clf_conn *c;
	void *payload;
	ssize_t n;
	int fd = mkstemp(log);

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(rdma);
	ck_assert_int_eq(clf_log_open(log), 0);
	start(&s, "127.0.0.1:0", serve_echo);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", s.port);
	ck_assert_msg(clf_conn_connect(rdma, addr, WAIT_MS, &c) == 0, "%s",
		      CLF_Last_error());
	ck_assert_str_eq(clf_conn_transport(c), "tcp");
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	ck_assert_int_eq(clf_conn_call(c, &h, &iov, 1, &rep, &payload), 0);
	ck_assert_mem_eq(payload, "over tcp", 8);
	free(payload);
	clf_conn_close(c);
	stop(&s);
	clf_log_close();
	n = read(fd, text, sizeof(text) - 1);
	ck_assert_int_gt(n, 0);
	text[n] = '\0';
	ck_assert_msg(strstr(text, "rdma: no RDMA device") &&
		      strstr(text, "over TCP"), "log: %s", text);
	close(fd);
	unlink(log);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("tcp loopback");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_send_and_recv_round_trip_a_message_over_loopback);
	tcase_add_test(tc, test_peer_names_are_numeric_host_and_port);
	tcase_add_test(tc, test_recv_spin_takes_a_reply_within_it_without_sleeping);
	tcase_add_test(tc, test_large_payload_survives_short_reads_and_writes);
	tcase_add_test(tc, test_ipv6_loopback_works);
	tcase_add_test(tc, test_recv_times_out_when_the_server_never_answers);
	tcase_add_test(tc,
		test_trickling_peer_cannot_hold_a_receive_past_its_deadline);
	tcase_add_test(tc, test_connect_to_a_closed_port_is_refused);
	tcase_add_test(tc, test_accept_times_out_without_clients);
	tcase_add_test(tc, test_recv_refuses_payload_over_limit);
	tcase_add_test(tc, test_recv_refuses_wrong_magic);
	tcase_add_test(tc, test_recv_refuses_wrong_major_version);
	tcase_add_test(tc, test_peer_closing_mid_message_is_a_reset);
	tcase_add_test(tc,
		test_send_refuses_payload_over_limit_and_keeps_connection);
#ifdef CLF_HAVE_RDMA
	tcase_add_test(tc,
		test_rdma_without_a_device_on_the_way_falls_back_to_tcp_and_says_so);
#endif
	tcase_add_test(tc, test_call_returns_remote_error_with_its_message);
	tcase_add_test(tc, test_call_refuses_a_reply_to_another_request);
	tcase_add_test(tc, test_poll_reports_readiness);
	tcase_add_test(tc, test_send_to_a_vanished_peer_fails_without_sigpipe);
	tcase_add_test(tc, test_connect_asks_for_the_largest_receive_buffer_allowed);
	tcase_add_test(tc, test_addr_split_accepts_host_port_and_bracketed_ipv6);
	tcase_add_test(tc, test_unknown_transport_is_refused_by_name);
	tcase_add_test(tc, test_address_prefix_names_the_transport);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
