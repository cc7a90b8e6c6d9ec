// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_viewio.c -- scatter and gather through registered views,
 * checked byte for byte against a reference computed with the model, and
 * the system calls it takes counted where coalescing is claimed.
 */
#define _GNU_SOURCE
#include "iod_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check_main.h"
#include "clf.h"
#include "iod_store.h"
#include "iod_view.h"
#include "iod_viewio.h"
#include "iod_viewref.h"
#include "model.h"

#define FILE_ID 0x12

static const struct iod_sieve sieve_off = { 0, 0 };

/* A store and a registry in a fresh directory. */
struct bench {
	char *dir;
	struct iod_store *st;
	struct iod_views *reg;
};

static void bench_init(struct bench *b)
{
	b->dir = tmp_dir();
	ck_assert_int_eq(iod_store_open(b->dir, 0, &b->st), 0);
	ck_assert_int_eq(iod_views_create(NULL, &b->reg), 0);
}

static void bench_free(struct bench *b)
{
	iod_views_free(b->reg);
	iod_store_free(b->st);
	rm_tree(b->dir);
}

static struct iod_view *view_of(struct bench *b, const struct typed *view,
				int64_t vd, const struct typed *sub, int64_t sd,
				uint32_t index)
{
	struct iod_view *v;
	uint32_t h;

	ck_assert_int_eq(iod_view_register(b->reg, FILE_ID, index, view->t,
					   vd, sub->t, sd, 1, &h), 0);
	ck_assert_int_eq(iod_view_lookup(b->reg, h, 1, &v), 0);
	ck_assert_int_eq(iod_view_release(b->reg, h, 1), 0);
	return v;	/* our reference keeps it alive */
}

static struct iod_store_stats stats(struct iod_store *st)
{
	struct iod_store_stats s;

	iod_store_stats(st, &s);
	return s;
}

/*
 * Write view bytes [lo, hi) into subfile `index` through the iod, as a
 * client would (packed data from the reference), and record them in exp.
 */
static void write_through(struct bench *b, const struct typed *view,
			  int64_t vd, const struct typed *sub, int64_t sd,
			  uint32_t index, int64_t lo, int64_t hi, int round,
			  const struct iod_sieve *sv, struct subref *exp)
{
	struct iod_view *v = view_of(b, view, vd, sub, sd, index);
	unsigned char *data = malloc((size_t)(hi - lo) + 1);
	size_t n;

	ck_assert_ptr_nonnull(data);
	n = view_reference(view->m, vd, sub->m, sd, lo, hi, round, NULL, data,
			   NULL);
	ck_assert_int_eq(iod_view_write(b->st, v, lo, hi, data, n, sv),
			 (int64_t)n);
	if (exp)
		subref_write(exp, view->m, vd, sub->m, sd, lo, hi, round);
	free(data);
	iod_view_put(v);
}

/* Read view bytes [lo, hi) back and compare with what exp says. */
static void read_through(struct bench *b, const struct typed *view,
			 int64_t vd, const struct typed *sub, int64_t sd,
			 uint32_t index, int64_t lo, int64_t hi,
			 const struct iod_sieve *sv, const struct subref *exp)
{
	struct iod_view *v = view_of(b, view, vd, sub, sd, index);
	size_t room = (size_t)(hi - lo) + 1, n;
	unsigned char *want = malloc(room), *got = malloc(room);

	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	n = view_reference(view->m, vd, sub->m, sd, lo, hi, 0, exp, want,
			   NULL);
	memset(got, 0xee, room);
	ck_assert_int_eq(iod_view_read(b->st, v, lo, hi, got, n, sv),
			 (int64_t)n);
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			ck_abort_msg("view byte %zu of [%ld, %ld): %u, expected %u",
				     i, (long)lo, (long)hi, got[i], want[i]);
	ck_assert_int_eq(got[n], 0xee);
	free(want);
	free(got);
	iod_view_put(v);
}

/* Round robin: stripe bytes per subfile over p subfiles. */
static void round_robin(int64_t stripe, int p, struct typed *sub)
{
	for (int j = 0; j < p; j++)
		sub[j] = tv(j * stripe, (j + 1) * stripe - 1, p * stripe, 1,
			    NULL);
}

static void free_all(struct typed *t, int n)
{
	for (int i = 0; i < n; i++)
		typed_free(&t[i]);
}

START_TEST(test_identity_view_write_is_one_pwrite)
{
	struct typed sub[4], view;
	static unsigned char data[1 << 20], back[1 << 20];
	struct iod_store_stats s0, s1, s2;
	struct iod_view *v;
	struct bench b;
	struct subref exp = { 0 };
	size_t n;

	bench_init(&b);
	round_robin(4096, 4, sub);
	view = tv(4096, 8191, 16384, 1, NULL);	/* = subfile 1 */
	v = view_of(&b, &view, 0, &sub[1], 0, 1);
	n = view_reference(view.m, 0, sub[1].m, 0, 100, 100 + sizeof(data), 0,
			   NULL, data, NULL);
	ck_assert_uint_eq(n, sizeof(data));
	s0 = stats(b.st);
	ck_assert_int_eq(iod_view_write(b.st, v, 100, 100 + sizeof(data), data,
					sizeof(data), NULL), sizeof(data));
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 0);
	ck_assert_int_eq(iod_view_read(b.st, v, 100, 100 + sizeof(back), back,
				       sizeof(back), NULL), sizeof(back));
	s2 = stats(b.st);
	ck_assert_uint_eq(s2.read_calls - s1.read_calls, 1);
	ck_assert_uint_eq(s2.write_calls - s1.write_calls, 0);
	ck_assert_mem_eq(back, data, sizeof(data));
	subref_write(&exp, view.m, 0, sub[1].m, 0, 100, 100 + sizeof(data), 0);
	subref_check(b.st, FILE_ID, 1, &exp);
	free(exp.bytes);
	iod_view_put(v);
	typed_free(&view);
	free_all(sub, 4);
	bench_free(&b);
}
END_TEST

START_TEST(test_view_write_refuses_wrong_length)
{
	struct typed sub[2], view = tbyte();
	struct iod_view *v;
	struct bench b;
	char data[200] = { 0 };
	size_t len;

	bench_init(&b);
	round_robin(10, 2, sub);
	v = view_of(&b, &view, 0, &sub[0], 0, 0);
	/* [0, 100) of the whole file holds 50 bytes of subfile 0. */
	ck_assert_int_eq(iod_view_write(b.st, v, 0, 100, data, 51, NULL),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "holds 50 bytes"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "subfile 0 of file 0x12, not 51"));
	ck_assert_int_eq(iod_view_write(b.st, v, 0, 100, data, 49, NULL),
			 -EINVAL);
	ck_assert_int_eq(iod_view_read(b.st, v, 0, 100, data, 0, NULL),
			 -EINVAL);
	ck_assert_int_eq(iod_view_write(b.st, v, 100, 0, data, 0, NULL),
			 -EINVAL);
	ck_assert_int_eq(iod_view_write(b.st, v, -1, 10, data, 0, NULL),
			 -EINVAL);
	/* Nothing reached the disk. */
	ck_assert_ptr_null(slurp_subfile(b.st, FILE_ID, 0, &len));
	/* A range with no byte in the subfile is an empty success. */
	ck_assert_int_eq(iod_view_write(b.st, v, 10, 20, data, 0, NULL), 0);
	ck_assert_ptr_null(slurp_subfile(b.st, FILE_ID, 0, &len));
	iod_view_put(v);
	typed_free(&view);
	free_all(sub, 2);
	bench_free(&b);
}
END_TEST

/*
 * Rows x cols bytes; subfile (pi, pj) of a 2 x 2 block-cyclic(k) grid,
 * as in test_mapping.c.
 */
static struct typed cyclic_2d(int64_t rows, int64_t cols, int64_t k, int pi,
			      int pj)
{
	struct typed row = tv(pj * k, pj * k + k - 1, 2 * k, cols / (2 * k),
			      NULL);
	struct typed t = tv(pi * k * cols, (pi * k + k) * cols - 1,
			    2 * k * cols, rows / (2 * k), &row);

	typed_free(&row);
	return t;
}

static const struct iod_sieve sieves[] = {
	{ IOD_SIEVE_WINDOW_DEFAULT, IOD_SIEVE_CALL_COST_DEFAULT },
	{ 0, 0 },			/* off */
	{ 64, 32 },			/* small windows */
	{ 7, 1 << 20 },			/* everything small sieved, tiny spans */
};

START_TEST(test_views_partitioning_a_matrix_land_where_the_reference_says)
{
	/*
	 * A 64 x 64 matrix stored 2 x 2 block-cyclic(4); four processes
	 * view it by row blocks (BLOCK over rows) and one by columns: each
	 * process writes three matrices' worth through its view into each
	 * subfile, then reads back -- with each sieving setting, and again
	 * with every system call cut short to 3 bytes.
	 */
	const int nsieves = (int)(sizeof(sieves) / sizeof(sieves[0]));
	const struct iod_sieve *sv = &sieves[_i % nsieves];
	struct typed sub[4], view[5];
	struct subref exp[4] = { { 0 } };
	struct bench b;

	bench_init(&b);
	if (_i >= nsieves)
		iod_store_limit_io(b.st, 3);
	for (int p = 0; p < 4; p++) {
		sub[p] = cyclic_2d(64, 64, 4, p / 2, p % 2);
		view[p] = tv(p * 16 * 64, (p + 1) * 16 * 64 - 1, 4096, 1, NULL);
	}
	view[4] = tv(8, 15, 64, 64, NULL);	/* columns 8..15 */
	for (int p = 0; p < 4; p++)
		for (uint32_t j = 0; j < 4; j++)
			write_through(&b, &view[p], 0, &sub[j], 0, j, 0,
				      3 * 1024, 0, sv, &exp[j]);
	/* Overwrite columns 8..15 of the second matrix only. */
	for (uint32_t j = 0; j < 4; j++)
		write_through(&b, &view[4], 0, &sub[j], 0, j, 512, 1024, 1, sv,
			      &exp[j]);
	for (uint32_t j = 0; j < 4; j++) {
		subref_check(b.st, FILE_ID, j, &exp[j]);
		for (int p = 0; p < 5; p++)
			read_through(&b, &view[p], 0, &sub[j], 0, j, 0, 4096,
				     sv, &exp[j]);
		free(exp[j].bytes);
	}
	free_all(sub, 4);
	free_all(view, 5);
	bench_free(&b);
}
END_TEST

START_TEST(test_random_views_on_random_patterns_match_the_reference)
{
	uint64_t rs = 0x5eed0000u + (uint64_t)_i;

	for (int iter = 0; iter < 25; iter++) {
		struct typed sub[16], view[3];
		struct subref exp[16] = { { 0 } };
		int64_t fd = rnd_range(&rs, 0, 3) ? 0 : rnd_range(&rs, 1, 40);
		int64_t vd[3], lo[3], hi[3];
		int n = random_pattern(&rs, sub, 512);
		struct bench b;

		bench_init(&b);
		for (int k = 0; k < 3; k++) {
			view[k] = random_type(&rs, 3, 512);
			vd[k] = rnd_range(&rs, 0, 1) ? 0 : rnd_range(&rs, 0, 60);
			lo[k] = rnd_range(&rs, 0, 300);
			hi[k] = lo[k] + rnd_range(&rs, 0, 3000);
		}
		for (int k = 0; k < 3; k++)
			for (int j = 0; j < n; j++)
				write_through(&b, &view[k], vd[k], &sub[j], fd,
					      (uint32_t)j, lo[k], hi[k], k,
					      &sieves[rnd_range(&rs, 0, 3)],
					      &exp[j]);
		for (int j = 0; j < n; j++) {
			subref_check(b.st, FILE_ID, (uint32_t)j, &exp[j]);
			for (int k = 0; k < 3; k++)
				read_through(&b, &view[k], vd[k], &sub[j], fd,
					     (uint32_t)j, 0, hi[k] + 100,
					     &sieves[rnd_range(&rs, 0, 3)],
					     &exp[j]);
			free(exp[j].bytes);
		}
		free_all(view, 3);
		free_all(sub, n);
		bench_free(&b);
	}
}
END_TEST

START_TEST(test_fine_cyclic_view_over_round_robin_is_sieved)
{
	/*
	 * CYCLIC(1) over 2 processes on a 64-byte round robin over 2
	 * subfiles: in subfile 0 each process has every other byte.
	 */
	struct typed sub[2], view[2];
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct bench b;

	bench_init(&b);
	round_robin(64, 2, sub);
	view[0] = tv(0, 0, 2, 1, NULL);
	view[1] = tv(1, 1, 2, 1, NULL);
	s0 = stats(b.st);
	write_through(&b, &view[0], 0, &sub[0], 0, 0, 0, 65536, 0, NULL, &exp);
	s1 = stats(b.st);
	/* 32768 one-byte runs over a 64 KiB span: read it, write it. */
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 1);
	s0 = s1;
	write_through(&b, &view[1], 0, &sub[0], 0, 0, 0, 65536, 0, &sieve_off,
		      &exp);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 32768);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 0);
	subref_check(b.st, FILE_ID, 0, &exp);
	s0 = stats(b.st);
	read_through(&b, &view[1], 0, &sub[0], 0, 0, 0, 65536, NULL, &exp);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 1);
	free(exp.bytes);
	free_all(sub, 2);
	free_all(view, 2);
	bench_free(&b);
}
END_TEST

/*
 * A collective of two CYCLIC(1) views over 64 KiB stripes, one byte in
 * two each: the iod moves both through one staging window (a read and a
 * write of the span), not a piece per byte; bytes outside the
 * participants' ranges keep their value, and a read gives each its own.
 */
START_TEST(test_collective_of_fine_views_goes_through_one_window)
{
	struct typed sub[2], view[2], whole = tbyte();
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct iod_coll_src src[2];
	struct iod_view *v[2];
	unsigned char *data[2], *back[2];
	int64_t lo[2] = { 10, 0 }, hi[2] = { 150000, 150001 }, n[2];
	struct bench b;

	bench_init(&b);
	round_robin(65536, 2, sub);
	view[0] = tv(0, 0, 2, 1, NULL);
	view[1] = tv(1, 1, 2, 1, NULL);
	/* Round 0 everywhere first: the collective must keep what it skips. */
	write_through(&b, &whole, 0, &sub[0], 0, 0, 0, 400000, 0, NULL, &exp);
	for (int k = 0; k < 2; k++) {
		v[k] = view_of(&b, &view[k], 0, &sub[0], 0, 0);
		data[k] = malloc((size_t)(hi[k] - lo[k]));
		back[k] = malloc((size_t)(hi[k] - lo[k]));
		n[k] = (int64_t)view_reference(view[k].m, 0, sub[0].m, 0, lo[k],
					       hi[k], 1, NULL, data[k], NULL);
		src[k] = (struct iod_coll_src){ v[k]->map, lo[k], hi[k],
						data[k], n[k] };
		subref_write(&exp, view[k].m, 0, sub[0].m, 0, lo[k], hi[k], 1);
	}
	ck_assert(iod_view_coll_fits(src, 2));
	s0 = stats(b.st);
	ck_assert_int_eq(iod_view_coll_io(b.st, FILE_ID, 0, src, 2, 1),
			 n[0] + n[1]);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 1);
	subref_check(b.st, FILE_ID, 0, &exp);
	for (int k = 0; k < 2; k++)
		src[k].data = back[k];
	ck_assert_int_eq(iod_view_coll_io(b.st, FILE_ID, 0, src, 2, 0),
			 n[0] + n[1]);
	for (int k = 0; k < 2; k++) {
		ck_assert_mem_eq(back[k], data[k], (size_t)n[k]);
		free(data[k]);
		free(back[k]);
		iod_view_put(v[k]);
	}
	free(exp.bytes);
	free_all(sub, 2);
	free_all(view, 2);
	typed_free(&whole);
	bench_free(&b);
}
END_TEST

START_TEST(test_sieving_window_bounds_each_span)
{
	struct typed sub[2], view;
	struct iod_sieve small = { 4096, IOD_SIEVE_CALL_COST_DEFAULT };
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct bench b;

	bench_init(&b);
	round_robin(1 << 20, 2, sub);
	view = tv(0, 0, 2, 1, NULL);
	s0 = stats(b.st);
	/* 32 KiB of view bytes, every other byte of a 64 KiB span. */
	write_through(&b, &view, 0, &sub[0], 0, 0, 0, 32768, 0, &small, &exp);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 16);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 16);
	subref_check(b.st, FILE_ID, 0, &exp);
	read_through(&b, &view, 0, &sub[0], 0, 0, 0, 40000, &small, &exp);
	free(exp.bytes);
	free_all(sub, 2);
	typed_free(&view);
	bench_free(&b);
}
END_TEST

START_TEST(test_subfile_contiguous_runs_become_one_write)
{
	/* The whole file onto cyclic(1): 1-byte runs, contiguous in the
	 * subfile -- one write even with sieving off. */
	struct typed sub[2], view = tbyte();
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct bench b;

	bench_init(&b);
	round_robin(1, 2, sub);
	s0 = stats(b.st);
	write_through(&b, &view, 0, &sub[1], 0, 1, 3, 100003, 0, &sieve_off,
		      &exp);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 0);
	subref_check(b.st, FILE_ID, 1, &exp);
	free(exp.bytes);
	free_all(sub, 2);
	typed_free(&view);
	bench_free(&b);
}
END_TEST

START_TEST(test_large_runs_far_apart_stay_direct)
{
	/* One subfile holding everything; 64 KiB of every MiB in view. */
	struct typed sub = tbyte(), view;
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct bench b;

	bench_init(&b);
	view = tv(0, 65535, 1 << 20, 1, NULL);
	s0 = stats(b.st);
	write_through(&b, &view, 0, &sub, 0, 0, 0, 4 * 65536, 0, NULL, &exp);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 4);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 0);
	subref_check(b.st, FILE_ID, 0, &exp);
	free(exp.bytes);
	typed_free(&sub);
	typed_free(&view);
	bench_free(&b);
}
END_TEST

START_TEST(test_read_past_end_of_subfile_gives_zeros)
{
	struct typed sub[2], view;
	struct subref exp = { 0 };
	struct iod_store_stats s0, s1;
	struct bench b;

	bench_init(&b);
	round_robin(16, 2, sub);
	view = tv(0, 2, 4, 1, NULL);
	/* Never written: zeros, and no system call at all. */
	s0 = stats(b.st);
	read_through(&b, &view, 0, &sub[0], 0, 0, 0, 3000, NULL, &exp);
	s1 = stats(b.st);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 0);
	write_through(&b, &view, 0, &sub[0], 0, 0, 0, 300, 0, NULL, &exp);
	for (size_t i = 0; i < sizeof(sieves) / sizeof(sieves[0]); i++)
		read_through(&b, &view, 0, &sub[0], 0, 0, 100, 3000,
			     &sieves[i], &exp);
	free(exp.bytes);
	free_all(sub, 2);
	typed_free(&view);
	bench_free(&b);
}
END_TEST

struct writer {
	struct bench *b;
	struct typed *view, *sub;
	const struct iod_sieve *sv;
	int64_t chunk;		/* view bytes per request */
	int until_done;		/* repeat until the single-pass ones end */
	pthread_barrier_t *start;
	atomic_int *done;	/* single-pass writers finished */
};

/* One pass of a writer over view bytes [0, 65536), chunk by chunk. */
static int write_pass(struct writer *w, unsigned char *data)
{
	const int64_t total = 65536;

	for (int64_t lo = 0; lo < total; lo += w->chunk) {
		int64_t hi = lo + w->chunk < total ? lo + w->chunk : total;
		struct iod_view *v;
		uint32_t h;
		size_t n;
		int err;

		if (iod_view_register(w->b->reg, FILE_ID, 0, w->view->t, 0,
				      w->sub->t, 0, 1, &h) ||
		    iod_view_lookup(w->b->reg, h, 1, &v))
			return -1;
		n = view_reference(w->view->m, 0, w->sub->m, 0, lo, hi, 1,
				   NULL, data, NULL);
		err = iod_view_write(w->b->st, v, lo, hi, data, n, w->sv) !=
		      (int64_t)n;
		iod_view_put(v);
		iod_view_release(w->b->reg, h, 1);
		if (err)
			return -1;
	}
	return 0;
}

static void *write_concurrently(void *arg)
{
	struct writer *w = arg;
	unsigned char *data = malloc((size_t)w->chunk);
	void *ret = (void *)1;

	if (!data)
		return ret;
	pthread_barrier_wait(w->start);
	do {
		if (write_pass(w, data))
			goto out;
	} while (w->until_done && atomic_load(w->done) < 2);
	if (!w->until_done)
		atomic_fetch_add(w->done, 1);
	ret = NULL;
out:
	free(data);
	return ret;
}

START_TEST(test_concurrent_writers_of_interleaved_bytes_lose_nothing)
{
	/*
	 * Four writers, CYCLIC(1) over 4 processes, into subfile 0 of a
	 * round robin: every span a writer sieves holds bytes of the three
	 * others.  Two sieve, over and over, while two write their bytes
	 * once each, directly, one byte per call.  Without the range lock
	 * a read-modify-write would put back a stale (zero) byte of another
	 * writer, and as nobody rewrites it the loss would show.
	 */
	static const struct iod_sieve wide = { 4096, 1 << 20 };
	struct typed sub[2], view[4];
	struct writer w[4];
	struct subref exp = { 0 };
	pthread_barrier_t start;
	atomic_int done = 0;
	pthread_t t[4];
	struct bench b;

	bench_init(&b);
	round_robin(4096, 2, sub);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, 4), 0);
	for (int p = 0; p < 4; p++) {
		view[p] = tv(p, p, 4, 1, NULL);
		w[p] = (struct writer){ &b, &view[p], &sub[0],
					p < 2 ? &wide : &sieve_off,
					97 + 64 * p, p < 2, &start, &done };
	}
	for (int p = 0; p < 4; p++)
		ck_assert_int_eq(pthread_create(&t[p], NULL, write_concurrently,
						&w[p]), 0);
	for (int p = 0; p < 4; p++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[p], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	pthread_barrier_destroy(&start);
	for (int p = 0; p < 4; p++)
		subref_write(&exp, view[p].m, 0, sub[0].m, 0, 0, 65536, 1);
	subref_check(b.st, FILE_ID, 0, &exp);
	free(exp.bytes);
	free_all(sub, 2);
	free_all(view, 4);
	bench_free(&b);
}
END_TEST

START_TEST(test_disk_errors_reach_the_view_writer)
{
	struct typed sub[2], view = tv(0, 0, 2, 1, NULL);
	unsigned char data[4096];
	struct iod_view *v;
	struct bench b;

	bench_init(&b);
	round_robin(64, 2, sub);
	v = view_of(&b, &view, 0, &sub[0], 0, 0);
	memset(data, 1, sizeof(data));
	/* Sieved: the read of the span fails. */
	iod_store_fail_next_io(b.st, EIO);
	ck_assert_int_eq(iod_view_write(b.st, v, 0, 8192, data, 4096, NULL),
			 -EIO);
	ck_assert_str_eq(CLF_Last_error(),
			 "iod: cannot read subfile 0 of file 0x12: Input/output error");
	/* Direct: the write fails. */
	iod_store_fail_next_io(b.st, EIO);
	ck_assert_int_eq(iod_view_write(b.st, v, 0, 8192, data, 4096,
					&sieve_off), -EIO);
	ck_assert_str_eq(CLF_Last_error(),
			 "iod: cannot write subfile 0 of file 0x12: Input/output error");
	iod_store_fail_next_io(b.st, EIO);
	ck_assert_int_eq(iod_view_read(b.st, v, 0, 8192, data, 4096, NULL),
			 -EIO);
	/* And the range locks were all given back: this would hang. */
	ck_assert_int_eq(iod_view_write(b.st, v, 0, 8192, data, 4096, NULL),
			 4096);
	iod_view_put(v);
	typed_free(&view);
	free_all(sub, 2);
	bench_free(&b);
}
END_TEST

START_TEST(test_enospc_reaches_the_view_writer)
{
	struct typed sub[2], view = tv(0, 0, 2, 1, NULL);
	static unsigned char data[1 << 20];
	struct iod_store *st = NULL;
	struct iod_views *reg = NULL;
	struct iod_view *v = NULL;
	char *dir = tmp_dir();
	int64_t n = 0;
	char msg[512];
	uint32_t h;
	int ok;

	if (mount_small_tmpfs(dir, 1 << 20, 0) != 0) {
		printf("SKIP test_enospc_reaches_the_view_writer: cannot mount "
		       "a small tmpfs (%s); needs root\n", strerror(errno));
		typed_free(&view);
		rm_tree(dir);
		return;
	}
	/* Unmount before asserting, so that a failure leaves no mount. */
	round_robin(1 << 20, 2, sub);
	ok = iod_store_open(dir, 0, &st) == 0;
	ok = ok && iod_views_create(NULL, &reg) == 0;
	ok = ok && iod_view_register(reg, FILE_ID, 0, view.t, 0, sub[0].t, 0,
				     1, &h) == 0;
	ok = ok && iod_view_lookup(reg, h, 1, &v) == 0;
	/* 1 MiB of every other byte: a 2 MiB span does not fit. */
	if (ok)
		n = iod_view_write(st, v, 0, 2 << 20, data, sizeof(data), NULL);
	snprintf(msg, sizeof(msg), "%s", CLF_Last_error());
	if (ok)
		iod_view_put(v);
	iod_views_free(reg);
	iod_store_free(st);
	ck_assert_int_eq(umount(dir), 0);
	rm_tree(dir);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_str_eq(msg,
			 "iod: cannot write subfile 0 of file 0x12: No space left on device");
	typed_free(&view);
	free_all(sub, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_viewio");
	TCase *tc = tcase_create("view io");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_identity_view_write_is_one_pwrite);
	tcase_add_test(tc, test_view_write_refuses_wrong_length);
	tcase_add_loop_test(tc,
		test_views_partitioning_a_matrix_land_where_the_reference_says,
		0, 2 * (int)(sizeof(sieves) / sizeof(sieves[0])));
	tcase_add_loop_test(tc,
		test_random_views_on_random_patterns_match_the_reference, 0, 4);
	tcase_add_test(tc, test_fine_cyclic_view_over_round_robin_is_sieved);
	tcase_add_test(tc, test_sieving_window_bounds_each_span);
	tcase_add_test(tc, test_collective_of_fine_views_goes_through_one_window);
	tcase_add_test(tc, test_subfile_contiguous_runs_become_one_write);
	tcase_add_test(tc, test_large_runs_far_apart_stay_direct);
	tcase_add_test(tc, test_read_past_end_of_subfile_gives_zeros);
	tcase_add_test(tc, test_concurrent_writers_of_interleaved_bytes_lose_nothing);
	tcase_add_test(tc, test_disk_errors_reach_the_view_writer);
	tcase_add_test(tc, test_enospc_reaches_the_view_writer);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
