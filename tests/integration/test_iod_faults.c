// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_faults.c -- a real iod under misbehaving peers and failures:
 * malformed, truncated and oversized messages (while another client
 * keeps working), the ENOSPC and delay fault hooks, and kill -9 with a
 * restart that must find every synced byte.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define TIMEOUT_MS 1500

/* ------------------------------------------------------------------ */
/* Raw messages                                                        */
/* ------------------------------------------------------------------ */

/* Send a header with these fields and body bytes, bypassing every check
 * of the client side. */
static void send_raw(struct clf_conn *c, uint32_t magic, uint16_t op,
		     uint16_t flags, uint32_t payload_len, const void *body,
		     size_t len)
{
	struct clf_proto_header h;
	uint8_t buf[CLF_PROTO_HEADER_SIZE + 256];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	int fd = clf_conn_fd(c);
	size_t off = 0;

	ck_assert_uint_le(len, 256);
	clf_proto_header_init(&h, op, 77);
	h.magic = magic;
	h.flags = flags;
	h.payload_len = payload_len;
	clf_proto_header_encode(&w, &h);
	wire_put_bytes(&w, body, len);
	while (off < w.pos) {
		ssize_t n = write(fd, buf + off, w.pos - off);

		ck_assert_int_gt(n, 0);
		off += (size_t)n;
	}
}

static void send_zeros(struct clf_conn *c, size_t len)
{
	uint8_t *zeros = calloc(1, len);
	int fd = clf_conn_fd(c);
	size_t off = 0;

	ck_assert_ptr_nonnull(zeros);
	while (off < len) {
		struct pollfd p = { fd, POLLOUT, 0 };
		ssize_t n;

		ck_assert_int_eq(poll(&p, 1, IODH_WAIT_MS), 1);
		n = write(fd, zeros + off, len - off);
		ck_assert_msg(n > 0 || errno == EAGAIN, "write: %s",
			      strerror(errno));
		if (n > 0)
			off += (size_t)n;
	}
	free(zeros);
}

/* The next message is a reply with status want. */
static void expect_reply(struct clf_conn *c, int want)
{
	struct clf_proto_header h;
	void *pl;
	int err = clf_conn_recv(c, &h, &pl);

	ck_assert_msg(err == 0, "no reply: %s", CLF_Last_error());
	ck_assert(h.flags & CLF_PROTO_FLAG_REPLY);
	ck_assert_int_eq(h.id, 77);
	ck_assert_msg(h.status == want, "status %d, expected %d", h.status,
		      want);
	free(pl);
}

/* The iod closes the connection within ms. */
static void expect_closed(struct clf_conn *c, int ms)
{
	int fd = clf_conn_fd(c);
	int64_t end = clf_now_ms() + ms;
	char scratch[4096];

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int left = (int)(end - clf_now_ms());
		ssize_t n;

		ck_assert_msg(left > 0, "the iod kept the connection open");
		if (poll(&p, 1, left) <= 0)
			continue;
		n = read(fd, scratch, sizeof(scratch));
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return;
		ck_assert_msg(n > 0, "read: %s", strerror(errno));
	}
}

/* The other client is not disturbed, and the iod is alive. */
static void still_serving(const struct iodh *h, struct clf_conn *good)
{
	uint8_t data[64], back[64];

	memset(data, 0xc3, sizeof(data));
	ck_assert_int_eq(cl_ping(good), 0);
	ck_assert_int_eq(cl_sub_write(good, 3, 0, 0, data, sizeof(data)), 64);
	ck_assert_int_eq(cl_sub_read(good, 3, 0, 0, back, sizeof(back)), 64);
	ck_assert_mem_eq(back, data, 64);
	ck_assert_int_eq(kill(h->pid, 0), 0);
}

START_TEST(test_malformed_messages_get_an_error_or_a_close)
{
	struct iodh h;
	struct clf_conn *good, *bad;
	uint8_t body[256];
	struct wire_writer w;

	memset(body, 0xee, sizeof(body));
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	good = iodh_connect(&h);
	bad = iodh_connect(&h);

	/* Truncated body: an error, and the connection goes on. */
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_SUB_READ, 0, 10, body, 10);
	expect_reply(bad, -EPROTO);
	ck_assert_int_eq(cl_ping(bad), 0);
	/* An opcode from the future: -ENOSYS, connection kept. */
	send_raw(bad, CLF_PROTO_MAGIC, 999, 0, 5, body, 5);
	expect_reply(bad, -ENOSYS);
	ck_assert_int_eq(cl_ping(bad), 0);
	/* A metad opcode is not served here either. */
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_LOOKUP, 0, 0, NULL, 0);
	expect_reply(bad, -ENOSYS);
	/* A reply where a request belongs. */
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_PING, CLF_PROTO_FLAG_REPLY,
		 0, NULL, 0);
	expect_reply(bad, -EPROTO);
	/* Values out of range: a negative offset, a range over the limit,
	 * unknown view flags, garbage in place of a type. */
	w = (struct wire_writer){ body, sizeof(body), 0 };
	wire_put_u64(&w, 1);
	wire_put_u32(&w, 0);
	wire_put_i64(&w, -5);
	wire_put_u32(&w, 10);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_SUB_READ, 0,
		 (uint32_t)w.pos, body, w.pos);
	expect_reply(bad, -EPROTO);
	w = (struct wire_writer){ body, sizeof(body), 0 };
	wire_put_u32(&w, 1);
	wire_put_u32(&w, 0);
	wire_put_i64(&w, 0);
	wire_put_i64(&w, (int64_t)CLF_PROTO_DATA_MAX + 1);
	wire_put_u64(&w, 0);
	wire_put_u32(&w, 0);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_VIEW_READ, 0,
		 (uint32_t)w.pos, body, w.pos);
	expect_reply(bad, -E2BIG);
	body[4] = 0x80;	/* the flags field of the same request */
	body[16] = 10;
	memset(body + 17, 0, 7);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_VIEW_READ, 0,
		 (uint32_t)w.pos, body, w.pos);
	expect_reply(bad, -EPROTO);
	w = (struct wire_writer){ body, sizeof(body), 0 };
	wire_put_u64(&w, 1);
	wire_put_u32(&w, 0);
	wire_put_i64(&w, 0);
	wire_put_u32(&w, 20);
	for (int i = 0; i < 20; i++)
		wire_put_u8(&w, (uint8_t)(0x5a + i));
	wire_put_i64(&w, 0);
	wire_put_u32(&w, 20);
	for (int i = 0; i < 20; i++)
		wire_put_u8(&w, (uint8_t)(0x11 * i));
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_VIEW_REGISTER, 0,
		 (uint32_t)w.pos, body, w.pos);
	expect_reply(bad, -EPROTO);
	ck_assert_int_eq(cl_ping(bad), 0);
	still_serving(&h, good);

	/* A body far longer than the opcode allows: skipped, refused. */
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_PING, 0, 1 << 20, NULL, 0);
	send_zeros(bad, 1 << 20);
	expect_reply(bad, -E2BIG);
	ck_assert_int_eq(cl_ping(bad), 0);
	clf_conn_close(bad);
	still_serving(&h, good);

	/* Over the protocol's limit: closed. */
	bad = iodh_connect(&h);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_SUB_WRITE, 0,
		 CLF_PROTO_PAYLOAD_MAX + 1, body, 16);
	expect_closed(bad, IODH_WAIT_MS);
	clf_conn_close(bad);

	/* Not a clf message at all: closed. */
	bad = iodh_connect(&h);
	send_raw(bad, 0xdeadbeef, CLF_PROTO_OP_PING, 0, 0, NULL, 0);
	expect_closed(bad, IODH_WAIT_MS);
	clf_conn_close(bad);

	/* A body that never arrives: closed at the timeout. */
	bad = iodh_connect(&h);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_SUB_WRITE, 0, 100, body,
		 10);
	expect_closed(bad, TIMEOUT_MS + 2000);
	clf_conn_close(bad);
	still_serving(&h, good);

	/* Before authentication: a request, then garbage. */
	ck_assert_int_eq(clf_conn_connect(&clf_transport_tcp, h.addr,
					  TIMEOUT_MS, &bad), 0);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_PING, 0, 0, NULL, 0);
	expect_reply(bad, -EACCES);
	expect_closed(bad, IODH_WAIT_MS);
	clf_conn_close(bad);
	ck_assert_int_eq(clf_conn_connect(&clf_transport_tcp, h.addr,
					  TIMEOUT_MS, &bad), 0);
	ck_assert_int_eq(write(clf_conn_fd(bad), body, 200), 200);
	expect_closed(bad, IODH_WAIT_MS);
	clf_conn_close(bad);

	still_serving(&h, good);
	clf_conn_close(good);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "is not served here"));
	ck_assert(iodh_log_has(&h, "closing"));
	iodh_cleanup(&h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Fault hooks                                                         */
/* ------------------------------------------------------------------ */

START_TEST(test_enospc_hook_reaches_the_writer)
{
	struct iodh h;
	struct clf_conn *c;
	uint8_t data[4096], back[4096];
	uint32_t handle;

	memset(data, 0x3c, sizeof(data));
	iodh_init(&h, TIMEOUT_MS);
	h.env[0] = "CLF_TEST_IOD_ENOSPC_AFTER=4096";
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_sub_write(c, 1, 0, 0, data, 4096), 4096);
	ck_assert_int_eq(cl_sub_write(c, 1, 0, 4096, data, 1), -ENOSPC);
	ck_assert_msg(strstr(CLF_Last_error(),
			     "iod 0: cannot write subfile 0 of file 0x1: No space left on device"),
		      "%s", CLF_Last_error());
	ck_assert_int_eq(cl_view_register(c, 1, 1, CLF_BYTE, 0, CLF_BYTE, 0,
					  &handle), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, 10, data, 10, 0, 0),
			 -ENOSPC);
	/* What was acknowledged is there; the iod goes on. */
	ck_assert_int_eq(cl_sub_read(c, 1, 0, 0, back, 4096), 4096);
	ck_assert_mem_eq(back, data, 4096);
	ck_assert_int_eq(cl_ping(c), 0);
	clf_conn_close(c);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "CLF_TEST_IOD_ENOSPC_AFTER=4096 is on"));
	ck_assert(iodh_log_has(&h, "No space left on device"));
	iodh_cleanup(&h);
}
END_TEST

/*
 * The ENOSPC hook is consulted once per write, before its first byte is
 * written, whichever way the data travels: a write that would pass the
 * limit leaves nothing behind, whether it was received whole, spliced
 * into its subfile or written in pieces as it came.
 */
START_TEST(test_enospc_hook_fires_once_per_write_whichever_way)
{
	size_t big = (size_t)3 << 20;	/* over a piece (1 MiB) */
	/* Together over the limit (1.5 MiB), each alone under it. */
	size_t small = (size_t)768 << 10, more = (size_t)800 << 10;
	uint8_t *data = iodh_alloc(big);
	CLF_Datatype strided = CLF_Type_vector(0, 0, 2, (int64_t)big,
					       CLF_BYTE);
	uint32_t subs[2] = { 0, 1 }, handle;
	int64_t len[2];
	struct clf_conn *c;
	struct iodh h;

	memset(data, 0x5a, big);
	iodh_init(&h, TIMEOUT_MS);
	h.env[0] = "CLF_TEST_IOD_ENOSPC_AFTER=1572864";
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_view_register(c, 3, 0, strided, 0, CLF_BYTE, 0,
					  &handle), 0);
	/* Strided and over a piece: received and written in pieces. */
	ck_assert_int_eq(cl_view_write(c, handle, 0, (int64_t)big, data, big,
				       0, 0), -ENOSPC);
	/* One run: spliced into the subfile (or in pieces). */
	ck_assert_int_eq(cl_sub_write(c, 3, 1, 0, data, big), -ENOSPC);
	/* Nothing of either was written. */
	ck_assert_int_eq(cl_sub_sizes(c, 3, 2, subs, len), 0);
	ck_assert_int_eq(len[0], 0);
	ck_assert_int_eq(len[1], 0);
	/* Received whole (under a piece): the same. */
	ck_assert_int_eq(cl_view_write(c, handle, 0, (int64_t)small, data,
				       small, 0, 0), (int64_t)small);
	ck_assert_int_eq(cl_view_write(c, handle, (int64_t)small,
				       (int64_t)(small + more), data, more,
				       0, 0), -ENOSPC);
	ck_assert_int_eq(cl_sub_sizes(c, 3, 2, subs, len), 0);
	ck_assert_int_eq(len[0], 2 * (int64_t)small - 1);
	ck_assert_int_eq(cl_ping(c), 0);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	CLF_Type_free(&strided);
	free(data);
}
END_TEST

START_TEST(test_delay_hook_makes_clients_time_out)
{
	struct iodh h;
	struct clf_conn *c;
	int64_t t0;

	iodh_init(&h, 4000);
	h.env[0] = "CLF_TEST_IOD_DELAY_MS=1000";
	iodh_start(&h);
	c = iodh_connect(&h);
	clf_conn_set_timeout(c, 300);
	ck_assert_int_eq(cl_ping(c), -ETIMEDOUT);
	clf_conn_close(c);
	/* A patient client gets its answer, late. */
	c = iodh_connect(&h);
	t0 = clf_now_ms();
	ck_assert_int_eq(cl_ping(c), 0);
	ck_assert_int_ge(clf_now_ms() - t0, 900);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Crash and restart                                                   */
/* ------------------------------------------------------------------ */

START_TEST(test_synced_data_survives_kill_9)
{
	struct iodh h;
	struct clf_conn *c;
	size_t len = 1 << 20;
	uint8_t *data = iodh_alloc(len), *back = iodh_alloc(len);
	CLF_Datatype view = CLF_Type_vector(0, 1, 3, 1, CLF_BYTE);
	uint32_t handle;
	int64_t vbytes = 3000, n;

	for (size_t i = 0; i < len; i++)
		data[i] = iodh_val((int64_t)i, 4);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(cl_sub_write(c, 0x5, i, (int64_t)i * 7, data,
					      len), (int64_t)len);
	ck_assert_int_eq(cl_view_register(c, 0x6, 0, view, 0, CLF_BYTE, 0,
					  &handle), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, vbytes, data,
				       (size_t)vbytes, 0, 0), vbytes);
	ck_assert_int_eq(cl_sync(c, 0x5), 0);
	ck_assert_int_eq(cl_sync(c, CLF_PROTO_FILE_ALL), 0);
	iodh_kill9(&h);
	clf_conn_close(c);

	/* The lock died with the process: the same directory restarts. */
	iodh_restart(&h);
	c = iodh_connect(&h);
	for (uint32_t i = 0; i < 3; i++) {
		memset(back, 0, len);
		ck_assert_int_eq(cl_sub_read(c, 0x5, i, (int64_t)i * 7, back,
					     len), (int64_t)len);
		ck_assert(memcmp(back, data, len) == 0);
	}
	/* Views did not survive (they belong to connections), the bytes
	 * written through them did: file byte 3k+1 holds view byte 2k+1. */
	n = cl_sub_read(c, 0x6, 0, 0, back, 4500);
	ck_assert_int_eq(n, 4499);
	for (int64_t k = 0; k < vbytes / 2; k++) {
		if (back[3 * k] != data[2 * k])
			ck_assert_uint_eq(back[3 * k], data[2 * k]);
		if (back[3 * k + 1] != data[2 * k + 1])
			ck_assert_uint_eq(back[3 * k + 1], data[2 * k + 1]);
	}
	ck_assert_int_eq(cl_view_read(c, handle, 0, 2, back, 2, 0, 0), -EBADF);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	CLF_Type_free(&view);
	free(data);
	free(back);
}
END_TEST

/*
 * Big writes go from the socket straight into the subfile
 * (iod_xfer.c): a file error there still takes the rest of the bytes
 * off the connection, which goes on; a head whose data length lies is
 * answered like any malformed body; a payload cut short closes only its
 * connection.
 */
START_TEST(test_direct_writes_fail_cleanly)
{
	size_t big = (size_t)1 << 20;
	uint8_t *data = iodh_alloc(big), *back = iodh_alloc(big);
	uint8_t head[CLF_PROTO_SUB_WRITE_HEAD];
	struct wire_writer w = { head, sizeof(head), 0 };
	struct clf_proto_sub_write_req m = { .file = 2, .subfile = 0,
					     .offset = 0 };
	struct clf_conn *c, *bad, *good;
	uint32_t handle;
	struct iodh h;

	for (size_t i = 0; i < big; i++)
		data[i] = iodh_val((int64_t)i, 5);
	iodh_init(&h, TIMEOUT_MS);
	h.env[0] = "CLF_TEST_IOD_ENOSPC_AFTER=1048576";
	iodh_start(&h);
	c = iodh_connect(&h);
	good = iodh_connect(&h);
	ck_assert_int_eq(cl_sub_write(c, 2, 0, 0, data, big), (int64_t)big);
	ck_assert_int_eq(cl_sub_write(c, 2, 0, (int64_t)big, data, big / 2),
			 -ENOSPC);
	ck_assert_msg(strstr(CLF_Last_error(),
			     "cannot write subfile 0 of file 0x2: No space left on device"),
		      "%s", CLF_Last_error());
	ck_assert_int_eq(cl_view_register(c, 2, 1, CLF_BYTE, 0, CLF_BYTE, 0,
					  &handle), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, (int64_t)big / 4, data,
				       big / 4, 0, 0), -ENOSPC);
	/* The connection is in step: what was acknowledged is there. */
	ck_assert_int_eq(cl_ping(c), 0);
	ck_assert_int_eq(cl_sub_read(c, 2, 0, 0, back, big), (int64_t)big);
	ck_assert_mem_eq(back, data, big);

	/* A head that announces one byte less data than the body holds. */
	m.data = (struct clf_proto_bytes){ data, (uint32_t)big - 1 };
	ck_assert_int_eq(clf_proto_sub_write_req_encode_head(&w, &m), 0);
	send_raw(c, CLF_PROTO_MAGIC, CLF_PROTO_OP_SUB_WRITE, 0,
		 (uint32_t)(sizeof(head) + big), head, sizeof(head));
	send_zeros(c, big);
	expect_reply(c, -EPROTO);
	ck_assert_int_eq(cl_ping(c), 0);

	/* A body cut short, then the peer goes: that connection only. */
	bad = iodh_connect(&h);
	m.data.len = (uint32_t)big;
	w.pos = 0;
	ck_assert_int_eq(clf_proto_sub_write_req_encode_head(&w, &m), 0);
	send_raw(bad, CLF_PROTO_MAGIC, CLF_PROTO_OP_SUB_WRITE, 0,
		 (uint32_t)(sizeof(head) + big), head, sizeof(head));
	send_zeros(bad, big / 3);
	clf_conn_close(bad);
	/* (The ENOSPC hook refuses every write now: read and ping.) */
	ck_assert_int_eq(cl_ping(good), 0);
	ck_assert_int_eq(cl_sub_read(good, 2, 0, 0, back, big), (int64_t)big);
	ck_assert_mem_eq(back, data, big);
	ck_assert_int_eq(kill(h.pid, 0), 0);
	/* Its thread logs the cut (a FIN: "closed the connection inside a
	 * message"; unread bytes at close: a reset) and closes. */
	for (int i = 0; !iodh_log_has(&h, "(client): SUB_WRITE: "); i++) {
		ck_assert_msg(i < 100, "the cut body was not logged");
		usleep(50000);
	}
	clf_conn_close(good);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	free(data);
	free(back);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_faults");
	TCase *tc = tcase_create("faults");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_malformed_messages_get_an_error_or_a_close);
	tcase_add_test(tc, test_enospc_hook_reaches_the_writer);
	tcase_add_test(tc, test_enospc_hook_fires_once_per_write_whichever_way);
	tcase_add_test(tc, test_direct_writes_fail_cleanly);
	tcase_add_test(tc, test_delay_hook_makes_clients_time_out);
	tcase_add_test(tc, test_synced_data_survives_kill_9);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
