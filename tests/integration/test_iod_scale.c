// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_scale.c -- one real iod serves 2000 client connections open
 * at once, each with a small write in flight, with a bounded number of
 * threads (its pool plus a few, not one per connection: daemon.h) and
 * bounded memory, within a bounded time.  The figures go to the test's
 * output.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define CLIENTS 2000
#define WORKERS 4
/* Besides the workers: the main thread, the SIGHUP thread, and a worker
 * or two being started or ending (a handshake frees its place). */
#define THREADS_MAX (WORKERS + 6)
/* What 2000 idle connections may cost the iod: their records and
 * sockets' buffers, far below a thread stack each. */
#define RSS_GROWTH_MAX ((size_t)64 << 20)
#define FILE_ID 0x5ca1e
#define TIME_MAX_MS 90000

/* The iod's Threads: line of /proc/PID/status. */
static unsigned threads_of(const struct iodh *h)
{
	char path[64], line[256];
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)h->pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(n, 0);
	return n;
}

/* Client i's 8 bytes. */
static void value_of(unsigned i, uint8_t out[8])
{
	for (int k = 0; k < 8; k++)
		out[k] = (uint8_t)(i * 7 + (unsigned)k * 13 + 1);
}

/* Send client i's SUB_WRITE of 8 bytes at 8 * i; its reply comes later. */
static void send_write(struct clf_conn *c, unsigned i)
{
	uint8_t data[8], body[64];
	struct clf_proto_sub_write_req m = { FILE_ID, 0, 8 * (int64_t)i,
					     { data, sizeof(data) } };
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_header h;
	struct iovec iov[2];

	value_of(i, data);
	ck_assert_int_eq(clf_proto_sub_write_req_encode_head(&w, &m), 0);
	iov[0] = (struct iovec){ body, w.pos };
	iov[1] = (struct iovec){ data, sizeof(data) };
	clf_proto_header_init(&h, CLF_PROTO_OP_SUB_WRITE, clf_conn_next_id(c));
	ck_assert_msg(clf_conn_send(c, &h, iov, 2) == 0, "send %u: %s", i,
		      CLF_Last_error());
}

/* The reply to it: 8 bytes written. */
static void recv_write_reply(struct clf_conn *c, unsigned i)
{
	struct clf_proto_header h;
	struct clf_proto_u32 n;
	struct wire_reader r;
	void *pl = NULL;

	ck_assert_msg(clf_conn_recv(c, &h, &pl) == 0, "reply %u: %s", i,
		      CLF_Last_error());
	ck_assert(h.flags & CLF_PROTO_FLAG_REPLY);
	ck_assert_int_eq(h.opcode, CLF_PROTO_OP_SUB_WRITE);
	ck_assert_int_eq(h.status, 0);
	r = (struct wire_reader){ pl, h.payload_len, 0, false };
	ck_assert_int_eq(clf_proto_u32_decode(&r, &n), 0);
	ck_assert_uint_eq(n.value, 8);
	free(pl);
}

START_TEST(iod_serves_2000_connections_with_bounded_threads)
{
	struct rlimit rl;
	struct iodh h;
	struct clf_conn **c = calloc(CLIENTS, sizeof(*c));
	uint8_t *back = iodh_alloc(8 * CLIENTS);
	size_t rss0, rss_open, rss_end;
	unsigned t0, t_open, t_burst, t_end;
	int64_t start = clf_now_ms(), t_conn, t_io;

	ck_assert_ptr_nonnull(c);
	/* Both ends of 2000 connections, here and in the iod (which
	 * inherits the limit, and raises its own to the hard one). */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_msg(rl.rlim_max >= 2 * CLIENTS + 64,
		      "the hard limit of open files (%llu) is below what the test needs",
		      (unsigned long long)rl.rlim_max);
	rl.rlim_cur = rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);

	iodh_init(&h, 10000);
	h.extra_arg = "-m2100";
	h.conf_global = "daemon_workers = 4\n";
	iodh_start(&h);
	rss0 = iodh_rss(&h);
	t0 = threads_of(&h);

	for (unsigned i = 0; i < CLIENTS; i++)
		c[i] = iodh_connect(&h);
	t_conn = clf_now_ms() - start;
	rss_open = iodh_rss(&h);
	t_open = threads_of(&h);
	ck_assert_msg(t_open <= THREADS_MAX,
		      "%u threads with %d connections open (at most %d)",
		      t_open, CLIENTS, THREADS_MAX);

	/* Every connection has a request in flight at once. */
	for (unsigned i = 0; i < CLIENTS; i++)
		send_write(c[i], i);
	t_burst = threads_of(&h);
	for (unsigned i = 0; i < CLIENTS; i++)
		recv_write_reply(c[i], i);
	t_io = clf_now_ms() - start - t_conn;
	ck_assert_msg(t_burst <= THREADS_MAX,
		      "%u threads with %d requests in flight (at most %d)",
		      t_burst, CLIENTS, THREADS_MAX);

	/* What they wrote is there, each in its place. */
	ck_assert_int_eq(cl_sub_read(c[0], FILE_ID, 0, 0, back, 8 * CLIENTS),
			 8 * CLIENTS);
	for (unsigned i = 0; i < CLIENTS; i++) {
		uint8_t want[8];

		value_of(i, want);
		ck_assert_msg(memcmp(back + 8 * i, want, 8) == 0,
			      "client %u's bytes", i);
	}
	rss_end = iodh_rss(&h);
	t_end = threads_of(&h);
	ck_assert_uint_le(t_end, THREADS_MAX);
	ck_assert_msg(rss_end < rss0 + RSS_GROWTH_MAX,
		      "iod RSS %zu KiB -> %zu KiB with %d connections",
		      rss0 >> 10, rss_end >> 10, CLIENTS);
	printf("%d connections: iod threads %u idle, %u with all open, %u with all requests in flight, %u after; RSS %zu -> %zu KiB open -> %zu KiB after the writes; connecting %lld ms, %d writes %lld ms\n",
	       CLIENTS, t0, t_open, t_burst, t_end, rss0 >> 10,
	       rss_open >> 10, rss_end >> 10, (long long)t_conn, CLIENTS,
	       (long long)t_io);

	for (unsigned i = 0; i < CLIENTS; i++)
		clf_conn_close(c[i]);
	ck_assert_msg(clf_now_ms() - start < TIME_MAX_MS,
		      "took %lld ms", (long long)(clf_now_ms() - start));
	iodh_stop(&h);
	iodh_cleanup(&h);
	free(back);
	free(c);
}
END_TEST

/*
 * Clients that sent part of a request header and stall hold no worker:
 * twice as many as the pool has, and still another client is answered
 * at once; when they finish their headers they are answered too.
 */
START_TEST(stalled_headers_hold_no_worker)
{
	enum { STALLED = 2 * WORKERS };
	struct clf_conn *c[STALLED], *other;
	uint8_t raw[STALLED][CLF_PROTO_HEADER_SIZE];
	struct iodh h;
	int64_t t;

	iodh_init(&h, 10000);
	h.conf_global = "daemon_workers = 4\n";
	iodh_start(&h);
	for (int i = 0; i < STALLED; i++) {
		struct wire_writer w = { raw[i], sizeof(raw[i]), 0 };
		struct clf_proto_header ph;

		c[i] = iodh_connect(&h);
		clf_proto_header_init(&ph, CLF_PROTO_OP_PING,
				      clf_conn_next_id(c[i]));
		ph.minor = clf_conn_minor(c[i]);
		clf_proto_header_encode(&w, &ph);
		ck_assert_int_eq(write(clf_conn_fd(c[i]), raw[i], 10), 10);
	}
	other = iodh_connect(&h);
	t = clf_now_ms();
	ck_assert_int_eq(cl_ping(other), 0);
	t = clf_now_ms() - t;
	ck_assert_msg(t < 2000, "a ping took %lld ms behind stalled headers",
		      (long long)t);
	for (int i = 0; i < STALLED; i++) {
		struct clf_proto_header rh;
		void *pl = NULL;

		ck_assert_int_eq(write(clf_conn_fd(c[i]), raw[i] + 10,
				       sizeof(raw[i]) - 10),
				 (ssize_t)sizeof(raw[i]) - 10);
		ck_assert_msg(clf_conn_recv(c[i], &rh, &pl) == 0, "%s",
			      CLF_Last_error());
		ck_assert_int_eq(rh.opcode, CLF_PROTO_OP_PING);
		ck_assert_int_eq(rh.status, 0);
		free(pl);
		clf_conn_close(c[i]);
	}
	clf_conn_close(other);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_scale");
	TCase *tc = tcase_create("scale");

	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, iod_serves_2000_connections_with_bounded_threads);
	tcase_add_test(tc, stalled_headers_hold_no_worker);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
