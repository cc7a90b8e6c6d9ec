// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_io.c -- data through a real iod: contiguous subfile access,
 * views checked against a byte-by-byte reference, concurrent clients
 * writing interleaved views, view ownership, and the whole-subfile
 * operations (SYNC, TRUNCATE, REMOVE, IOD_STATFS, STATUS).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define TIMEOUT_MS 3000

/* ------------------------------------------------------------------ */
/* Contiguous subfile ranges                                           */
/* ------------------------------------------------------------------ */

START_TEST(test_sub_write_then_read_returns_the_bytes)
{
	struct iodh h;
	struct clf_conn *c;
	size_t len = 100000;
	uint8_t *data = iodh_alloc(len), *back = iodh_alloc(len + 2000);

	for (size_t i = 0; i < len; i++)
		data[i] = iodh_val((int64_t)i, 3);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);

	ck_assert_int_eq(cl_sub_write(c, 0x12, 3, 1000, data, len),
			 (int64_t)len);
	/* A read past the end is short; the hole before 1000 is zeros. */
	ck_assert_int_eq(cl_sub_read(c, 0x12, 3, 0, back, len + 2000),
			 (int64_t)(len + 1000));
	for (size_t i = 0; i < 1000; i++)
		if (back[i] != 0)
			ck_assert_uint_eq(back[i], 0);
	ck_assert_mem_eq(back + 1000, data, len);
	ck_assert_int_eq(cl_sub_read(c, 0x12, 3, 1000, back, len),
			 (int64_t)len);
	ck_assert_mem_eq(back, data, len);
	ck_assert_int_eq(cl_sub_read(c, 0x12, 3, 1000 + (int64_t)len, back,
				     10), 0);
	/* Never written: empty. */
	ck_assert_int_eq(cl_sub_read(c, 0x13, 0, 0, back, 10), 0);
	/* The bytes before the displacement are just another subfile. */
	ck_assert_int_eq(cl_sub_write(c, 0x12, CLF_PROTO_SUBFILE_HEAD, 5,
				      data, 77), 77);
	ck_assert_int_eq(cl_sub_read(c, 0x12, CLF_PROTO_SUBFILE_HEAD, 5, back,
				     77), 77);
	ck_assert_mem_eq(back, data, 77);
	ck_assert_int_eq(cl_sub_write(c, 0x12, 3, 0, data, 0), 0);

	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	free(data);
	free(back);
}
END_TEST

/*
 * SUB_WRITEV and SUB_READV: ranges of several subfiles (the head too) in
 * one request, served in order (a later range over an earlier one
 * wins); a read's ranges come back whole, zeros past a subfile's end or
 * of one never written; data that is not the ranges' is refused and the
 * connection goes on.
 */
START_TEST(test_sub_vectors_move_ranges_of_several_subfiles_in_order)
{
	static const uint32_t wsub[4] = { 3, CLF_PROTO_SUBFILE_HEAD, 0, 0 };
	static const int64_t woff[4] = { 1000, 5, 0, 2 };
	static const uint32_t wlen[4] = { 10, 20, 4, 4 };
	static const uint32_t rsub[4] = { 3, 3, 7, CLF_PROTO_SUBFILE_HEAD };
	static const int64_t roff[4] = { 1000, 1005, 0, 5 };
	static const uint32_t rlen[4] = { 10, 100, 16, 20 };
	struct iodh h;
	struct clf_conn *c;
	uint8_t data[38], back[146];

	for (int i = 0; i < 30; i++)
		data[i] = (uint8_t)(i + 1);
	memcpy(data + 30, "AAAABBBB", 8);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_sub_writev(c, 0x21, 4, wsub, woff, wlen, data, 38),
			 38);
	ck_assert_int_eq(cl_sub_read(c, 0x21, 3, 1000, back, 100), 10);
	ck_assert_mem_eq(back, data, 10);
	ck_assert_int_eq(cl_sub_read(c, 0x21, CLF_PROTO_SUBFILE_HEAD, 5, back,
				     20), 20);
	ck_assert_mem_eq(back, data + 10, 20);
	ck_assert_int_eq(cl_sub_read(c, 0x21, 0, 0, back, 100), 6);
	ck_assert_mem_eq(back, "AABBBB", 6);

	memset(back, 0xee, sizeof(back));
	ck_assert_int_eq(cl_sub_readv(c, 0x21, 4, rsub, roff, rlen, back,
				      sizeof(back)), 146);
	ck_assert_mem_eq(back, data, 10);
	ck_assert_mem_eq(back + 10, data + 5, 5);
	for (int i = 15; i < 126; i++)
		if (back[i] != 0)
			ck_assert_uint_eq(back[i], 0);
	ck_assert_mem_eq(back + 126, data + 10, 20);

	ck_assert_int_eq(cl_sub_writev(c, 0x21, 4, wsub, woff, wlen, data, 37),
			 -EPROTO);
	ck_assert_int_eq(cl_ping(c), 0);
	ck_assert_int_eq(cl_sub_read(c, 0x21, 0, 0, back, 100), 6);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

/* The largest data a message may carry goes through, both ways. */
START_TEST(test_largest_write_and_read_pass)
{
	struct iodh h;
	struct clf_conn *c;
	size_t len = CLF_PROTO_DATA_MAX;
	uint8_t *data = iodh_alloc(len), *back = iodh_alloc(len);
	uint32_t handle;

	for (size_t i = 0; i < len; i += 4096)
		data[i] = (uint8_t)(i >> 12);
	iodh_init(&h, 20000);
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_sub_write(c, 1, 0, 0, data, len), (int64_t)len);
	memset(back, 0xff, len);
	ck_assert_int_eq(cl_sub_read(c, 1, 0, 0, back, len), (int64_t)len);
	ck_assert(memcmp(back, data, len) == 0);
	/* A view that falls on its subfile: one range of the largest size. */
	ck_assert_int_eq(cl_view_register(c, 2, 0, CLF_BYTE, 0, CLF_BYTE, 0,
					  &handle), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, (int64_t)len, data, len,
				       0, 0), (int64_t)len);
	memset(back, 0xff, len);
	ck_assert_int_eq(cl_view_read(c, handle, 0, (int64_t)len, back, len,
				      0, 0), (int64_t)len);
	ck_assert(memcmp(back, data, len) == 0);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	free(data);
	free(back);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Views against the reference                                         */
/* ------------------------------------------------------------------ */

#define NSUB 3
#define SUB_DISP 10

/* What the test believes each subfile holds. */
struct expect {
	uint8_t bytes[NSUB][8192];
	size_t len[NSUB];
};

/* Write view range [lo, hi) to every subfile and record it. */
static void write_view(struct clf_conn *c, uint64_t file,
		       const uint32_t *handles, CLF_Datatype view, int64_t vd,
		       CLF_Datatype *subs, int64_t lo, int64_t hi, int round,
		       struct expect *e)
{
	size_t cap = (size_t)(hi - lo);
	uint8_t *packed = iodh_alloc(cap);
	int64_t *soff = iodh_alloc(cap * sizeof(*soff));

	for (int j = 0; j < NSUB; j++) {
		size_t n = iodh_ref_pack(view, vd, subs[j], SUB_DISP, lo, hi,
					 round, packed, soff);

		ck_assert_int_eq(cl_view_write(c, handles[j], lo, hi, packed,
					       n, 0, 0), (int64_t)n);
		for (size_t i = 0; i < n; i++) {
			ck_assert_int_lt(soff[i], 8192);
			e->bytes[j][soff[i]] = packed[i];
			if ((size_t)soff[i] + 1 > e->len[j])
				e->len[j] = (size_t)soff[i] + 1;
		}
	}
	free(packed);
	free(soff);
}

/* Read view range [lo, hi) from every subfile and compare. */
static void check_view(struct clf_conn *c, const uint32_t *handles,
		       CLF_Datatype view, int64_t vd, CLF_Datatype *subs,
		       int64_t lo, int64_t hi, const struct expect *e)
{
	size_t cap = (size_t)(hi - lo);
	uint8_t *got = iodh_alloc(cap);
	int64_t *soff = iodh_alloc(cap * sizeof(*soff));

	for (int j = 0; j < NSUB; j++) {
		size_t n = iodh_ref_pack(view, vd, subs[j], SUB_DISP, lo, hi,
					 0, NULL, soff);

		ck_assert_int_eq(cl_view_read(c, handles[j], lo, hi, got, cap,
					      0, 0), (int64_t)n);
		for (size_t i = 0; i < n; i++) {
			uint8_t want = (size_t)soff[i] < e->len[j] ?
				       e->bytes[j][soff[i]] : 0;

			ck_assert_msg(got[i] == want,
				      "subfile %d, view byte %zu (subfile offset %" PRId64 "): %u, expected %u",
				      j, i, soff[i], got[i], want);
		}
	}
	free(got);
	free(soff);
}

/* Every subfile, read contiguously, equals the expectation. */
static void check_subfiles(struct clf_conn *c, uint64_t file,
			   const struct expect *e)
{
	uint8_t got[8192];

	for (int j = 0; j < NSUB; j++) {
		ck_assert_int_eq(cl_sub_read(c, file, (uint32_t)j, 0, got,
					     sizeof(got)), (int64_t)e->len[j]);
		for (size_t s = 0; s < e->len[j]; s++)
			if (got[s] != e->bytes[j][s])
				ck_abort_msg("subfile %d byte %zu: %u, expected %u",
					     j, s, got[s], e->bytes[j][s]);
	}
}

START_TEST(test_view_io_matches_byte_by_byte_reference)
{
	CLF_Datatype subs[NSUB], views[4], inner;
	int64_t vdisp[4] = { 7, 0, 3, 0 };
	struct expect *e = calloc(1, sizeof(*e));
	struct iodh h;
	struct clf_conn *c;
	uint64_t file = 0xabc;

	ck_assert_ptr_nonnull(e);
	/* The file: cyclic(4) over 3 subfiles after 10 bytes. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 12, 1, 4, NSUB, CLF_BYTE,
					   subs), 0);
	/* Views: cyclic(3) of 5; even bytes of two 6-byte blocks per 32;
	 * one byte in 7; the whole file. */
	views[0] = CLF_Type_vector(0, 2, 5, 1, CLF_BYTE);
	inner = CLF_Type_vector(0, 0, 2, 1, CLF_BYTE);
	views[1] = CLF_Type_vector(0, 5, 16, 2, inner);
	views[2] = CLF_Type_vector(4, 4, 7, 1, CLF_BYTE);
	views[3] = CLF_Type_dup(CLF_BYTE);
	for (int v = 0; v < 4; v++)
		ck_assert_ptr_nonnull(views[v]);

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	for (int v = 0; v < 4; v++) {
		uint32_t handles[NSUB];

		for (int j = 0; j < NSUB; j++)
			ck_assert_msg(cl_view_register(c, file, (uint32_t)j,
						       views[v], vdisp[v],
						       subs[j], SUB_DISP,
						       &handles[j]) == 0,
				      "register: %s", CLF_Last_error());
		write_view(c, file, handles, views[v], vdisp[v], subs,
			   3 + v, 1500 + 37 * v, v + 1, e);
		check_subfiles(c, file, e);
		/* Every view reads what all the writes so far left,
		 * including zeros in holes and past the end. */
		check_view(c, handles, views[v], vdisp[v], subs, 0, 3000, e);
		check_view(c, handles, views[v], vdisp[v], subs, 1, 2, e);
	}
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	for (int v = 0; v < 4; v++)
		CLF_Type_free(&views[v]);
	CLF_Type_free(&inner);
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&subs[j]);
	free(e);
}
END_TEST

START_TEST(test_view_write_with_wrong_length_is_refused)
{
	struct iodh h;
	struct clf_conn *c;
	CLF_Datatype view = CLF_Type_vector(0, 0, 2, 1, CLF_BYTE);
	uint8_t data[100] = { 0 };
	uint32_t handle;

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	ck_assert_int_eq(cl_view_register(c, 5, 0, view, 0, CLF_BYTE, 0,
					  &handle), 0);
	/* View bytes [0, 100), every other file byte, all lie in the
	 * subfile: 100 bytes, not 99. */
	ck_assert_int_eq(cl_view_write(c, handle, 0, 100, data, 99, 0, 0),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "iod 0:"));
	ck_assert_int_eq(cl_view_write(c, handle, 0, 100, data, 100, 0, 0),
			 100);
	/* No such handle. */
	ck_assert_int_eq(cl_view_write(c, handle + 1, 0, 2, data, 1, 0, 0),
			 -EBADF);
	ck_assert_int_eq(cl_view_read(c, handle + 1, 0, 2, data, 2, 0, 0),
			 -EBADF);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	CLF_Type_free(&view);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Concurrent clients                                                  */
/* ------------------------------------------------------------------ */

#define WRITERS 4
#define CSUBS 2
#define FILE_BYTES 48000	/* a multiple of every period below */
#define CHUNK 700		/* view bytes per request */

struct writer {
	const struct iodh *h;
	int p;			/* rank: view cyclic(3) block p of 4 */
	CLF_Datatype *subs;
	int err;		/* first failure, for the main thread */
	char msg[256];
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	CLF_Datatype view = CLF_Type_vector(3 * w->p, 3 * w->p + 2, 12, 1,
					    CLF_BYTE);
	int64_t vbytes = FILE_BYTES / 4;
	uint8_t *packed = iodh_alloc(CHUNK);
	struct clf_conn *c = NULL;
	uint32_t handles[CSUBS];

	w->err = iodh_connect_with(w->h, &w->h->secret, &c);
	for (int j = 0; j < CSUBS && !w->err; j++)
		w->err = cl_view_register(c, 9, (uint32_t)j, view, 0,
					  w->subs[j], 0, &handles[j]);
	/* Chunks alternate between the subfiles so that the writers'
	 * requests interleave on both. */
	for (int64_t lo = 0; lo < vbytes && !w->err; lo += CHUNK) {
		int64_t hi = lo + CHUNK < vbytes ? lo + CHUNK : vbytes;

		for (int j = 0; j < CSUBS && !w->err; j++) {
			size_t n = iodh_ref_pack(view, 0, w->subs[j], 0, lo,
						 hi, 1, packed, NULL);
			int64_t got = cl_view_write(c, handles[j], lo, hi,
						    packed, n, 0, 0);

			if (got != (int64_t)n)
				w->err = got < 0 ? (int)got : -EIO;
		}
	}
	if (w->err)
		snprintf(w->msg, sizeof(w->msg), "%s", CLF_Last_error());
	clf_conn_close(c);
	CLF_Type_free(&view);
	free(packed);
	return NULL;
}

START_TEST(test_concurrent_clients_writing_interleaved_views)
{
	struct writer w[WRITERS];
	pthread_t tid[WRITERS];
	CLF_Datatype subs[CSUBS];
	struct iodh h;
	struct clf_conn *c;
	uint8_t *got = iodh_alloc(FILE_BYTES);

	/* cyclic(5) over 2 subfiles; the writers' views are cyclic(3) of
	 * 4, so every request touches pieces of both subfiles that its
	 * neighbours also write: sieving and range locks at work. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 4, 10, 1, 5, CSUBS, CLF_BYTE,
					   subs), 0);
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	for (int p = 0; p < WRITERS; p++) {
		w[p] = (struct writer){ .h = &h, .p = p, .subs = subs };
		ck_assert_int_eq(pthread_create(&tid[p], NULL, writer_main,
						&w[p]), 0);
	}
	for (int p = 0; p < WRITERS; p++) {
		pthread_join(tid[p], NULL);
		ck_assert_msg(w[p].err == 0, "writer %d: %d %s", p, w[p].err,
			      w[p].msg);
	}
	c = iodh_connect(&h);
	for (int j = 0; j < CSUBS; j++) {
		int64_t n = cl_sub_read(c, 9, (uint32_t)j, 0, got, FILE_BYTES);

		ck_assert_int_eq(n, FILE_BYTES / CSUBS);
		for (int64_t s = 0; s < n; s++) {
			int64_t f;

			ck_assert_int_eq(CLF_Type_unmap(subs[j], 0, s, &f), 0);
			ck_assert_msg(got[s] == iodh_val(f, 1),
				      "subfile %d byte %" PRId64 " (file %" PRId64 "): %u, expected %u",
				      j, s, f, got[s], iodh_val(f, 1));
		}
	}
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
	for (int j = 0; j < CSUBS; j++)
		CLF_Type_free(&subs[j]);
	free(got);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Views belong to their connection                                    */
/* ------------------------------------------------------------------ */

START_TEST(test_views_go_with_their_connection)
{
	struct iodh h;
	struct clf_conn *a, *b;
	uint32_t ha[3], hb;
	struct clf_proto_status st;
	uint8_t buf[4];

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	a = iodh_connect(&h);
	b = iodh_connect(&h);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(cl_view_register(a, 1, (uint32_t)i, CLF_BYTE,
						  0, CLF_BYTE, 0, &ha[i]), 0);
	ck_assert_int_eq(cl_view_register(b, 1, 0, CLF_BYTE, 0, CLF_BYTE, 0,
					  &hb), 0);
	ck_assert_int_eq(cl_status(b, &st), 0);
	ck_assert_uint_eq(st.views, 4);
	ck_assert_uint_eq(st.connections, 2);
	/* A handle is found only through the connection that made it. */
	ck_assert_int_eq(cl_view_read(b, ha[0], 0, 4, buf, 4, 0, 0), -EBADF);
	ck_assert_int_eq(cl_view_release(b, ha[0]), -EBADF);
	/* Released explicitly... */
	ck_assert_int_eq(cl_view_release(a, ha[2]), 0);
	ck_assert_int_eq(cl_view_release(a, ha[2]), -EBADF);
	iodh_wait_views(b, 3);
	/* ...and when the connection drops. */
	clf_conn_close(a);
	iodh_wait_views(b, 1);
	ck_assert_int_eq(cl_view_read(b, hb, 0, 4, buf, 4, 0, 0), 4);
	/* The count drops just after the views are released: wait. */
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(cl_status(b, &st), 0);
		if (st.connections == 1)
			break;
		usleep(10 * 1000);
	}
	ck_assert_uint_eq(st.connections, 1);
	clf_conn_close(b);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "2 views released"));
	iodh_cleanup(&h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Whole subfiles                                                      */
/* ------------------------------------------------------------------ */

static bool subfile_exists(const struct iodh *h, uint64_t file, uint32_t i)
{
	char path[700];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%02x/%016" PRIx64 ".%u", h->dir,
		 (unsigned)(file & 0xff), file, i);
	return stat(path, &sb) == 0;
}

START_TEST(test_sync_truncate_remove_statfs)
{
	struct iodh h;
	struct clf_conn *c;
	struct clf_proto_statfs sf;
	uint8_t data[1000], back[1000];

	memset(data, 0x5a, sizeof(data));
	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	c = iodh_connect(&h);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(cl_sub_write(c, 0x77, i, 0, data, 1000), 1000);
	ck_assert_int_eq(cl_sub_write(c, 0x78, 0, 0, data, 10), 10);
	ck_assert(subfile_exists(&h, 0x77, 2));

	ck_assert_int_eq(cl_sync(c, 0x77), 0);
	ck_assert_int_eq(cl_sync(c, 0x99), 0);	/* nothing here: fine */
	ck_assert_int_eq(cl_sync(c, CLF_PROTO_FILE_ALL), 0);

	ck_assert_int_eq(cl_truncate(c, 0x77, 0, 10), 0);
	ck_assert_int_eq(cl_sub_read(c, 0x77, 0, 0, back, 1000), 10);
	ck_assert_int_eq(cl_truncate(c, 0x77, 0, 100), 0);
	ck_assert_int_eq(cl_sub_read(c, 0x77, 0, 0, back, 1000), 100);
	for (int i = 10; i < 100; i++)
		if (back[i] != 0)
			ck_assert_uint_eq(back[i], 0);
	ck_assert_int_eq(cl_truncate(c, 0x79, 4, 4096), 0);
	ck_assert_int_eq(cl_sub_read(c, 0x79, 4, 0, back, 1000), 1000);
	{
		/* Lengths as the subfiles have them; a missing one is 0. */
		uint32_t sub[4] = { 0, 2, 3, CLF_PROTO_SUBFILE_HEAD };
		int64_t len[4];

		ck_assert_int_eq(cl_sub_sizes(c, 0x77, 4, sub, len), 0);
		ck_assert_int_eq(len[0], 100);
		ck_assert_int_eq(len[1], 1000);
		ck_assert_int_eq(len[2], 0);
		ck_assert_int_eq(len[3], 0);
	}

	ck_assert_int_eq(cl_remove(c, 0x77, 1), 0);
	ck_assert(!subfile_exists(&h, 0x77, 1));
	ck_assert_int_eq(cl_sub_read(c, 0x77, 1, 0, back, 1000), 0);
	ck_assert_int_eq(cl_remove(c, 0x77, 1), 0);	/* gone: fine */
	ck_assert_int_eq(cl_remove(c, 0x77, CLF_PROTO_SUBFILE_ALL), 0);
	ck_assert(!subfile_exists(&h, 0x77, 0));
	ck_assert(!subfile_exists(&h, 0x77, 2));
	ck_assert(subfile_exists(&h, 0x78, 0));
	ck_assert_int_eq(cl_sub_read(c, 0x78, 0, 0, back, 1000), 10);

	ck_assert_int_eq(cl_statfs(c, &sf), 0);
	ck_assert_uint_gt(sf.bytes_total, 0);
	ck_assert_uint_le(sf.bytes_free, sf.bytes_total);
	ck_assert_uint_le(sf.bytes_avail, sf.bytes_free);
	ck_assert_uint_gt(sf.block_size, 0);
	ck_assert_uint_ge(sf.name_max, 32);
	clf_conn_close(c);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

START_TEST(test_status_counts_requests_bytes_connections)
{
	struct iodh h;
	struct clf_conn *a, *b;
	struct clf_proto_status s1, s2;
	uint8_t data[500] = { 1 };

	iodh_init(&h, TIMEOUT_MS);
	iodh_start(&h);
	a = iodh_connect(&h);
	b = iodh_connect(&h);
	/*
	 * The iod counts a connection once its side of the authentication
	 * is done, which may be just after the client's: wait a little.
	 */
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(cl_status(a, &s1), 0);
		if (s1.connections == 2)
			break;
		usleep(10 * 1000);
	}
	ck_assert_uint_eq(s1.connections, 2);
	ck_assert_uint_eq(s1.views, 0);
	ck_assert_int_eq(cl_sub_write(b, 1, 0, 0, data, 500), 500);
	ck_assert_int_eq(cl_sub_read(b, 1, 0, 100, data, 300), 300);
	ck_assert_int_eq(cl_ping(b), 0);
	ck_assert_int_eq(cl_status(a, &s2), 0);
	ck_assert_uint_eq(s2.requests, s1.requests + 4);
	ck_assert_uint_eq(s2.bytes_written, s1.bytes_written + 500);
	ck_assert_uint_eq(s2.bytes_read, s1.bytes_read + 300);
	ck_assert_uint_ge(s2.uptime_ms, s1.uptime_ms);
	clf_conn_close(a);
	clf_conn_close(b);
	iodh_stop(&h);
	iodh_cleanup(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_io");
	TCase *tc = tcase_create("io");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sub_write_then_read_returns_the_bytes);
	tcase_add_test(tc, test_largest_write_and_read_pass);
	tcase_add_test(tc, test_sub_vectors_move_ranges_of_several_subfiles_in_order);
	tcase_add_test(tc, test_view_io_matches_byte_by_byte_reference);
	tcase_add_test(tc, test_view_write_with_wrong_length_is_refused);
	tcase_add_test(tc, test_concurrent_clients_writing_interleaved_views);
	tcase_add_test(tc, test_views_go_with_their_connection);
	tcase_add_test(tc, test_sync_truncate_remove_statfs);
	tcase_add_test(tc, test_status_counts_requests_bytes_connections);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
