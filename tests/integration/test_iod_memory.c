// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_memory.c -- what one client can make a real iod hold: view
 * registrations within a fair share of iod_view_memory, big writes
 * received in pieces however slowly they come, collective buffers within
 * iod_buffer_memory, and replies streamed when a client's share is used
 * up -- measured on the iod's resident memory (VmRSS).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define MIB ((size_t)1 << 20)

/*
 * Under ThreadSanitizer (make check-tsan) every byte the iod touches has
 * shadow memory besides (about four times its size), so the RSS bounds
 * scale with it; data held whole would still pass them by far.
 */
#ifdef __SANITIZE_THREAD__
#define RSS_SCALE 4
#else
#define RSS_SCALE 1
#endif

/* Subfile 0 holds bytes 0..14 of every 16 (byte 15 is another's); a
 * view of the whole file meets it in runs of 15 bytes. */
struct layout {
	CLF_Datatype sub;
	CLF_Datatype view;
};

static void layout_init(struct layout *l)
{
	l->sub = CLF_Type_vector(0, 14, 16, 1, CLF_BYTE);
	l->view = CLF_Type_vector(0, 15, 16, 1, CLF_BYTE);
	ck_assert_ptr_nonnull(l->sub);
	ck_assert_ptr_nonnull(l->view);
}

static void layout_free(struct layout *l)
{
	CLF_Type_free(&l->sub);
	CLF_Type_free(&l->view);
}

/* The view range whose bytes in subfile 0 are the first n packed ones. */
static int64_t view_hi(size_t n)
{
	return (int64_t)(n / 15) * 16 + (int64_t)(n % 15);
}

/* Packed byte i of the view lands at this subfile-0 offset. */
static int64_t sub_off(size_t i)
{
	return (int64_t)i;
}

/*
 * Send a VIEW_WRITE announcing len data bytes but only the first sent of
 * them, straight on the socket, and leave the rest unsent.
 */
static void send_partial_write(struct clf_conn *c, uint32_t handle,
			       int64_t hi, size_t len, size_t sent,
			       uint64_t tag, uint32_t participants)
{
	struct clf_proto_view_io_req m = {
		.handle = handle, .lo = 0, .hi = hi, .coll_tag = tag,
		.participants = participants,
		.flags = participants ? CLF_PROTO_VIEW_COLLECTIVE : 0,
	};
	uint8_t raw[CLF_PROTO_HEADER_SIZE + 64];
	struct wire_writer w = { raw + CLF_PROTO_HEADER_SIZE, 64, 0 };
	struct wire_writer hw = { raw, CLF_PROTO_HEADER_SIZE, 0 };
	struct clf_proto_header h;
	uint8_t *junk = iodh_alloc(MIB);
	int fd = clf_conn_fd(c);

	memset(junk, 0x5a, MIB);
	/* The encoder reads the length only. */
	m.data = (struct clf_proto_bytes){ junk, (uint32_t)len };
	ck_assert_int_eq(clf_proto_view_write_req_encode_head(&w, &m), 0);
	clf_proto_header_init(&h, CLF_PROTO_OP_VIEW_WRITE, clf_conn_next_id(c));
	h.minor = clf_conn_minor(c);
	h.payload_len = (uint32_t)(w.pos + len);
	clf_proto_header_encode(&hw, &h);
	/* A fresh socket has room for a header. */
	ck_assert_int_eq(write(fd, raw, CLF_PROTO_HEADER_SIZE + w.pos),
			 (ssize_t)(CLF_PROTO_HEADER_SIZE + w.pos));
	while (sent) {
		size_t n = sent < MIB ? sent : MIB;
		struct pollfd p = { fd, POLLOUT, 0 };
		ssize_t k = write(fd, junk, n);

		if (k < 0 && errno == EAGAIN) {
			/* The iod takes it as fast as it writes it. */
			ck_assert_int_eq(poll(&p, 1, IODH_WAIT_MS), 1);
			continue;
		}
		ck_assert_int_gt(k, 0);
		sent -= (size_t)k;
	}
	free(junk);
}

/* The iod still serves a client that comes now. */
static void another_client_is_served(const struct iodh *h, uint32_t file)
{
	struct clf_conn *c = iodh_connect(h);
	uint8_t buf[100], back[100];

	memset(buf, 7, sizeof(buf));
	ck_assert_int_eq(cl_ping(c), 0);
	ck_assert_int_eq(cl_sub_write(c, file, 1, 0, buf, sizeof(buf)), 100);
	ck_assert_int_eq(cl_sub_read(c, file, 1, 0, back, sizeof(back)), 100);
	ck_assert_mem_eq(back, buf, sizeof(buf));
	clf_conn_close(c);
}

/* Give the iod time to take what was sent (it reads as it comes). */
static void settle(void)
{
	usleep(800 * 1000);
}

START_TEST(test_one_client_over_its_view_share_gets_enobufs_others_register)
{
	CLF_Datatype sub[4], view;
	struct clf_conn *a, *b;
	struct iodh h;
	uint32_t handle;
	int n = 0, err = 0;

	/* About 47 KiB a view: a table of some 2000 runs. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 65535, 262144, 1, 65536, 4,
					   CLF_BYTE, sub), 0);
	view = CLF_Type_vector(0, 99, 1000, 1, CLF_BYTE);
	iodh_init(&h, 5000);
	h.conf_global = "iod_view_memory = 4m\niod_view_min_share = 64k\n";
	iodh_start(&h);
	a = iodh_connect(&h);
	b = iodh_connect(&h);
	/* Distinct displacements: a mapping each, none shared. */
	while (n < 1000) {
		err = cl_view_register(a, 1, 0, view, 1000 * n, sub[0], 0,
				       &handle);
		if (err)
			break;
		n++;
	}
	ck_assert_int_eq(err, -ENOBUFS);
	ck_assert_msg(strstr(CLF_Last_error(),
			     "iod 0: view registrations of this client use"),
		      "message: %s", CLF_Last_error());
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "iod_view_memory"));
	/* Half of 4 MiB, at 47 KiB a view. */
	ck_assert_int_ge(n, 20);
	ck_assert_int_le(n, 60);
	/* Another client still registers, views of its own. */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(cl_view_register(b, 1, 0, view, 7 + 1000 * i,
						  sub[0], 0, &handle), 0);
	/* The first stays refused; it gets room back by releasing. */
	ck_assert_int_eq(cl_view_register(a, 1, 0, view, 999999, sub[0], 0,
					  &handle), -ENOBUFS);
	clf_conn_close(a);
	clf_conn_close(b);
	for (int i = 0; i < 4; i++)
		CLF_Type_free(&sub[i]);
	CLF_Type_free(&view);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_big_writes_announced_without_their_data_do_not_grow_the_iod)
{
	enum { BOGUS = 10, REAL = 10 };
	struct clf_conn *c[BOGUS + REAL];
	struct layout l;
	struct iodh h;
	uint32_t handle;
	size_t before, after;

	layout_init(&l);
	iodh_init(&h, 20000);
	/* Fewer workers than stalled senders: each body that does not come
	 * must give its worker's place up, or the next client waits for
	 * the 20 s timeout of the first ones. */
	h.conf_global = "daemon_workers = 2\n";
	iodh_start(&h);
	before = iodh_rss(&h);
	for (int i = 0; i < BOGUS + REAL; i++) {
		c[i] = iodh_connect(&h);
		if (i < BOGUS) {
			/* No such view: the data has nowhere to go. */
			send_partial_write(c[i], 12345, 64 * MIB, 64 * MIB,
					   16 * MIB, 0, 0);
			continue;
		}
		ck_assert_int_eq(cl_view_register(c[i], 0x40 + i, 0, l.view, 0,
						  l.sub, 0, &handle), 0);
		send_partial_write(c[i], handle, view_hi(56 * MIB), 56 * MIB,
				   4 * MIB, 0, 0);
	}
	settle();
	after = iodh_rss(&h);
	fprintf(stderr, "big writes without data: iod RSS %zu -> %zu KiB\n",
		before >> 10, after >> 10);
	/* Held whole, as they came: 200 MiB.  In pieces: 1 MiB each. */
	ck_assert_msg(after < before + RSS_SCALE * 48 * MIB,
		      "iod RSS grew from %zu to %zu KiB", before >> 10,
		      after >> 10);
	another_client_is_served(&h, 0x99);
	for (int i = 0; i < BOGUS + REAL; i++)
		clf_conn_close(c[i]);
	layout_free(&l);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_slow_collective_writes_stay_within_the_buffer_memory)
{
	enum { N = 20 };
	struct clf_conn *c[N];
	struct layout l;
	struct iodh h;
	uint32_t handle;
	size_t before, after;

	layout_init(&l);
	iodh_init(&h, 20000);
	h.conf_global = "iod_buffer_memory = 32m\niod_buffer_min_share = 4m\n";
	iodh_start(&h);
	before = iodh_rss(&h);
	for (int i = 0; i < N; i++) {
		c[i] = iodh_connect(&h);
		ck_assert_int_eq(cl_view_register(c[i], 0x50, 0, l.view, 0,
						  l.sub, 0, &handle), 0);
		/* One operation none of them completes. */
		send_partial_write(c[i], handle, view_hi(16 * MIB), 16 * MIB,
				   6 * MIB, 77, N + 1);
	}
	settle();
	after = iodh_rss(&h);
	fprintf(stderr, "slow collective writes: iod RSS %zu -> %zu KiB\n",
		before >> 10, after >> 10);
	/* Held whole: 120 MiB.  Within the pool: 32 MiB, plus pieces. */
	ck_assert_msg(after < before + RSS_SCALE * (32 * MIB + N * 2 * MIB),
		      "iod RSS grew from %zu to %zu KiB", before >> 10,
		      after >> 10);
	another_client_is_served(&h, 0x98);
	for (int i = 0; i < N; i++)
		clf_conn_close(c[i]);
	layout_free(&l);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_writes_and_reads_over_the_share_move_in_pieces_intact)
{
	size_t len = 3 * MIB + 100, clen = 2 * MIB + 7;
	uint8_t *data = iodh_alloc(len), *back = iodh_alloc(len);
	struct clf_conn *c;
	struct layout l;
	struct iodh h;
	uint32_t handle;
	uint8_t byte;

	for (size_t i = 0; i < len; i++)
		data[i] = iodh_val((int64_t)i, 5);
	layout_init(&l);
	iodh_init(&h, 10000);
	/* No buffer over 1 MiB for anyone: everything streams. */
	h.conf_global = "iod_buffer_memory = 64k\niod_buffer_min_share = 64k\n";
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_view_register(c, 0x60, 0, l.view, 0, l.sub, 0,
					  &handle), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, view_hi(len), data, len,
				       0, 0), (int64_t)len);
	ck_assert_int_eq(cl_view_read(c, handle, 0, view_hi(len), back, len,
				      0, 0), (int64_t)len);
	ck_assert_mem_eq(back, data, len);
	/* Each packed byte at its subfile offset. */
	for (size_t i = 0; i < len; i += 99991) {
		ck_assert_int_eq(cl_sub_read(c, 0x60, 0, sub_off(i), &byte, 1),
				 1);
		ck_assert_uint_eq(byte, data[i]);
	}
	/* A collective write of one participant: written at once. */
	for (size_t i = 0; i < clen; i++)
		data[i] = iodh_val((int64_t)i, 6);
	ck_assert_int_eq(cl_view_write(c, handle, 0, view_hi(clen), data, clen,
				       9, 1), (int64_t)clen);
	ck_assert_int_eq(cl_view_read(c, handle, 0, view_hi(clen), back, clen,
				      10, 1), (int64_t)clen);
	ck_assert_mem_eq(back, data, clen);
	/* A read of a subfile never written: empty. */
	ck_assert_int_eq(cl_sub_read(c, 0x61, 0, 0, back, 2 * MIB), 0);
	clf_conn_close(c);
	free(data);
	free(back);
	layout_free(&l);
	iodh_cleanup(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_memory");
	TCase *tc = tcase_create("memory");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_one_client_over_its_view_share_gets_enobufs_others_register);
	tcase_add_test(tc, test_big_writes_announced_without_their_data_do_not_grow_the_iod);
	tcase_add_test(tc, test_slow_collective_writes_stay_within_the_buffer_memory);
	tcase_add_test(tc, test_writes_and_reads_over_the_share_move_in_pieces_intact);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
