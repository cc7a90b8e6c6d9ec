// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_random.c -- the engine against the byte-by-byte model, on
 * thousands of random nested types, partition patterns and view ranges.
 *
 * CLF_TEST_SEED=n reproduces a run; CLF_TEST_ROUNDS=n scales it.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "mapping_i.h"
#include "mapping_prog.h"
#include "model.h"

static uint64_t seed_base(void)
{
	const char *s = getenv("CLF_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : 20261121;
}

/*
 * Under AddressSanitizer the engine runs several times slower (CI:
 * 523 s for this program): a quarter of the cases still take every
 * path for memory errors, and the plain build runs them all.
 */
#ifdef __SANITIZE_ADDRESS__
#define ROUNDS_SCALE 4
#else
#define ROUNDS_SCALE 1
#endif

static int rounds(int dflt)
{
	const char *s = getenv("CLF_TEST_ROUNDS");

	return s ? atoi(s) : dflt / ROUNDS_SCALE;
}

START_TEST(test_random_types_match_model_size_extent_map_unmap)
{
	uint64_t rs = seed_base() + 1;

	for (int it = 0; it < rounds(3000); it++) {
		struct typed x = random_type(&rs, 3, 4096);
		int64_t disp = rnd_range(&rs, 0, 40), lin, f;

		ck_assert_int_eq(CLF_Type_size(x.t), x.m->size);
		ck_assert_int_eq(CLF_Type_extent(x.t), x.m->extent);
		for (int k = 0; k < 20; k++) {
			int64_t off = rnd_range(&rs, 0, disp + 3 * x.m->extent);
			int64_t want = model_map(x.m, disp, off);
			int err = CLF_Type_map(x.t, disp, off, &lin);

			if (want < 0 && err != -ENOENT)
				ck_assert_int_eq(err, -ENOENT);
			if (want >= 0 && (err || lin != want)) {
				ck_assert_int_eq(err, 0);
				ck_assert_int_eq(lin, want);
			}
			lin = rnd_range(&rs, 0, 3 * x.m->size);
			err = CLF_Type_unmap(x.t, disp, lin, &f);
			if (err || f != model_unmap(x.m, disp, lin)) {
				ck_assert_int_eq(err, 0);
				ck_assert_int_eq(f, model_unmap(x.m, disp, lin));
			}
		}
		typed_free(&x);
	}
}
END_TEST

START_TEST(test_random_patterns_pass_check_and_broken_ones_fail)
{
	uint64_t rs = seed_base() + 2;

	for (int it = 0; it < rounds(1000); it++) {
		struct typed sub[16];
		CLF_Datatype t[17];
		int n = random_pattern(&rs, sub, 2048);

		for (int j = 0; j < n; j++)
			t[j] = sub[j].t;
		ck_assert_msg(CLF_Pattern_check(n, t) == 0, "%s",
			      CLF_Last_error());
		if (n > 1) {
			/* Without one subfile, its bytes are nobody's. */
			ck_assert_int_eq(CLF_Pattern_check(n - 1, t), -EINVAL);
			/* With one twice, bytes are in two subfiles. */
			t[n] = t[0];
			ck_assert_int_eq(CLF_Pattern_check(n + 1, t), -EINVAL);
		}
		for (int j = 0; j < n; j++)
			typed_free(&sub[j]);
	}
}
END_TEST

struct run {
	int64_t v, s, len;
};

struct runs {
	struct run *r;
	int nr, alloc;
};

static void runs_add(struct runs *rr, int64_t v, int64_t s, int64_t len)
{
	if (rr->nr == rr->alloc) {
		rr->alloc = rr->alloc ? 2 * rr->alloc : 64;
		rr->r = realloc(rr->r, rr->alloc * sizeof(*rr->r));
		ck_assert_ptr_nonnull(rr->r);
	}
	rr->r[rr->nr++] = (struct run){ v, s, len };
}

static int collect(int64_t v, int64_t s, int64_t len, void *arg)
{
	runs_add(arg, v, s, len);
	return 0;
}

/* The maximal runs of view bytes [lo, hi) in the subfile, byte by byte. */
static void model_runs(const struct typed *view, int64_t vd,
		       const struct typed *sub, int64_t sd, int64_t lo,
		       int64_t hi, struct runs *out)
{
	for (int64_t v = lo; v < hi; v++) {
		int64_t f = model_unmap(view->m, vd, v);
		int64_t s = model_map(sub->m, sd, f);
		struct run *last = out->nr ? &out->r[out->nr - 1] : NULL;

		if (s < 0)
			continue;
		if (last && last->v + last->len == v && last->s + last->len == s)
			last->len++;
		else
			runs_add(out, v, s, 1);
	}
}

struct prog_cp {
	uint8_t *packed, *buf;
	int64_t xmin;
};

static int prog_gather(const struct clf_prog *p, void *arg)
{
	struct prog_cp *cp = arg;

	clf_prog_copy(p, cp->packed, cp->buf, cp->xmin, true);
	return 0;
}

static int prog_scatter(const struct clf_prog *p, void *arg)
{
	struct prog_cp *cp = arg;

	clf_prog_copy(p, cp->packed, cp->buf, cp->xmin, false);
	return 0;
}

/* Progressions expanded byte by byte: packed offset c -> x. */
struct prog_bytes {
	int64_t *x;		/* x[c - from], for c in [from, to) */
	int64_t from, to, next;	/* next: the c expected next */
	int nprog;
};

static int prog_expand(const struct clf_prog *p, void *arg)
{
	struct prog_bytes *b = arg;

	if (p->c != b->next || p->n < 1 || p->len < 1 ||
	    (p->n > 1 && p->dx <= p->len)) {
		ck_assert_int_eq(p->c, b->next);
		ck_assert_int_ge(p->n, 1);
		ck_assert_int_ge(p->len, 1);
		ck_assert_int_gt(p->dx, p->len);
	}
	for (int64_t i = 0; i < p->n; i++)
		for (int64_t k = 0; k < p->len; k++) {
			int64_t c = p->c + i * p->len + k;

			if (c >= b->to)
				ck_assert_int_lt(c, b->to);
			b->x[c - b->from] = p->x + i * p->dx + k;
		}
	b->next = p->c + p->n * p->len;
	b->nprog++;
	return 0;
}

/*
 * m's progressions of [lo, hi) on both sides, whole and clipped to a
 * random stretch of the packed bytes, put each byte where the model's
 * runs do; the copy loops move the bytes there; a cut ends where the
 * model's wanted byte does.
 */
static void expect_progs(const CLF_Mapping *m, int64_t lo, int64_t hi,
			 const struct runs *want, int64_t sum)
{
	static uint64_t rs = 77;
	int64_t *wx[2];
	int64_t c = 0, at;

	wx[0] = malloc((sum + 1) * sizeof(int64_t));
	wx[1] = malloc((sum + 1) * sizeof(int64_t));
	for (int k = 0; k < want->nr; k++)
		for (int64_t i = 0; i < want->r[k].len; i++, c++) {
			wx[CLF_PROG_VIEW][c] = want->r[k].v + i;
			wx[CLF_PROG_SUB][c] = want->r[k].s + i;
		}
	for (int side = 0; side < 2; side++) {
		int64_t from = sum ? rnd_range(&rs, 0, sum - 1) : 0;
		int64_t to = from + rnd_range(&rs, 0, sum - from);
		struct prog_bytes b = { malloc((sum + 1) * sizeof(int64_t)), 0,
					sum, 0, 0 };
		int64_t xmin, xmax;
		uint8_t *packed, *buf;

		ck_assert_int_eq(clf_mapping_progs(m, lo, hi, side, 0, INT64_MAX,
						   prog_expand, &b), 0);
		ck_assert_int_eq(b.next, sum);
		for (int64_t k = 0; k < sum; k++)
			if (b.x[k] != wx[side][k])
				ck_assert_int_eq(b.x[k], wx[side][k]);
		b.from = b.next = from;
		b.to = to;
		ck_assert_int_eq(clf_mapping_progs(m, lo, hi, side, from, to,
						   prog_expand, &b), 0);
		ck_assert_int_eq(b.next, to);
		for (int64_t k = from; k < to; k++)
			if (b.x[k - from] != wx[side][k])
				ck_assert_int_eq(b.x[k - from], wx[side][k]);
		free(b.x);
		if (!sum)
			continue;
		/* Gather through the copy loops, then scatter back. */
		xmin = wx[side][0];
		xmax = wx[side][sum - 1];
		buf = malloc(xmax - xmin + 1);
		packed = calloc(sum, 1);
		for (int64_t x = xmin; x <= xmax; x++)
			buf[x - xmin] = (uint8_t)(x * 31 + 7);
		b = (struct prog_bytes){ 0 };
		ck_assert_int_eq(clf_mapping_progs(m, lo, hi, side, 0, INT64_MAX,
						   prog_gather, &(struct prog_cp){
							   packed, buf, xmin }),
				 0);
		for (int64_t k = 0; k < sum; k++) {
			uint8_t byte = (uint8_t)(wx[side][k] * 31 + 7);

			if (packed[k] != byte)
				ck_assert_uint_eq(packed[k], byte);
		}
		memset(buf, 0, xmax - xmin + 1);
		ck_assert_int_eq(clf_mapping_progs(m, lo, hi, side, 0, INT64_MAX,
						   prog_scatter, &(struct prog_cp){
							   packed, buf, xmin }),
				 0);
		for (int64_t k = 0; k < sum; k++) {
			uint8_t byte = (uint8_t)(wx[side][k] * 31 + 7);

			if (buf[wx[side][k] - xmin] != byte)
				ck_assert_uint_eq(buf[wx[side][k] - xmin], byte);
		}
		free(buf);
		free(packed);
	}
	/* A cut after want bytes ends after the want-th byte's view offset. */
	for (int t = 0; t < 3 && sum; t++) {
		int64_t w = rnd_range(&rs, 1, sum);

		ck_assert_int_eq(clf_mapping_cut(m, lo, hi, w, &at), 0);
		ck_assert_int_eq(at, wx[CLF_PROG_VIEW][w - 1] + 1);
	}
	ck_assert_int_eq(clf_mapping_cut(m, lo, hi, sum + 1, &at), 0);
	ck_assert_int_eq(at, hi);
	free(wx[0]);
	free(wx[1]);
}

/* m's runs of view bytes [lo, hi) and its count are the model's. */
static void expect_runs(const CLF_Mapping *m, int64_t lo, int64_t hi,
			const struct runs *want, int64_t sum)
{
	struct runs got = { 0 };

	ck_assert_int_eq(CLF_Mapping_foreach(m, lo, hi, collect, &got), 0);
	ck_assert_int_eq(CLF_Mapping_count(m, lo, hi), sum);
	ck_assert_int_eq(got.nr, want->nr);
	for (int k = 0; k < got.nr; k++) {
		if (got.r[k].v == want->r[k].v && got.r[k].s == want->r[k].s &&
		    got.r[k].len == want->r[k].len)
			continue;
		ck_assert_int_eq(got.r[k].v, want->r[k].v);
		ck_assert_int_eq(got.r[k].s, want->r[k].s);
		ck_assert_int_eq(got.r[k].len, want->r[k].len);
	}
	/* Maximal: no run continues the one before it on both sides. */
	for (int k = 1; k < got.nr; k++)
		if (got.r[k - 1].v + got.r[k - 1].len == got.r[k].v &&
		    got.r[k - 1].s + got.r[k - 1].len == got.r[k].s)
			ck_abort_msg("runs %d and %d continue each other", k - 1,
				     k);
	free(got.r);
	/* Packed: the same runs, joined wherever the subfile continues. */
	got = (struct runs){ 0 };
	ck_assert_int_eq(CLF_Mapping_foreach_packed(m, lo, hi, collect, &got),
			 0);
	for (int k = 0, g = 0; k < want->nr; g++) {
		int64_t len = want->r[k].len;

		if (g >= got.nr || got.r[g].v != want->r[k].v ||
		    got.r[g].s != want->r[k].s) {
			ck_assert_int_lt(g, got.nr);
			ck_assert_int_eq(got.r[g].v, want->r[k].v);
			ck_assert_int_eq(got.r[g].s, want->r[k].s);
		}
		for (k++; k < want->nr &&
			  want->r[k].s == want->r[k - 1].s + want->r[k - 1].len;
		     k++)
			len += want->r[k].len;
		if (got.r[g].len != len)
			ck_assert_int_eq(got.r[g].len, len);
		if (k == want->nr && got.nr != g + 1)
			ck_assert_int_eq(got.nr, g + 1);
	}
	if (!want->nr)
		ck_assert_int_eq(got.nr, 0);
	free(got.r);
}

static void check_mapping(uint64_t *rs, const struct typed *view,
			  const struct typed *sub, int nsub, int64_t disp,
			  bool partition)
{
	int64_t vd = rnd_range(rs, 0, 30);
	int64_t span = 3 * view->m->size + rnd_range(rs, 0, 2000);
	int64_t lo = rnd_range(rs, 0, 2 * view->m->size);
	int64_t hi = lo + rnd_range(rs, 0, span);
	int64_t total = 0;

	for (int j = 0; j < nsub; j++) {
		struct runs want = { 0 };
		int64_t sum = 0;

		model_runs(view, vd, &sub[j], disp, lo, hi, &want);
		for (int k = 0; k < want.nr; k++)
			sum += want.r[k].len;
		total += sum;
		/*
		 * Each mapping three ways: with its run table (if small;
		 * every other time the table may hold only 4 runs, so that
		 * tables of sub-periods are built), with cursors over the
		 * common period, tiled.
		 */
		for (int path = 0; path < 3; path++) {
			static unsigned turn;
			CLF_Mapping *m;
			int err;

			map_table_max = path ? 0 : turn++ % 2 ? 4 : MAP_TABLE_MAX;
			map_tiles_always = path == 2;
			err = CLF_Mapping_create(view->t, vd, sub[j].t, disp, &m);
			map_table_max = MAP_TABLE_MAX;
			map_tiles_always = 0;
			ck_assert_msg(err == 0, "mapping: %s", CLF_Last_error());
			ck_assert_int_eq(m->tiled, path == 2 || m->tiled);
			expect_runs(m, lo, hi, &want, sum);
			expect_progs(m, lo, hi, &want, sum);
			CLF_Mapping_free(m);
		}
		free(want.r);
	}
	/* Past the displacement each file byte is in exactly one subfile. */
	if (partition && vd >= disp)
		ck_assert_int_eq(total, hi - lo);
}

START_TEST(test_random_views_map_onto_random_patterns_like_the_model)
{
	uint64_t rs = seed_base() + 3;

	for (int it = 0; it < rounds(1500); it++) {
		struct typed view = random_type(&rs, 3, 2048);
		struct typed sub[16];
		int n = random_pattern(&rs, sub, 2048);

		check_mapping(&rs, &view, sub, n, rnd_range(&rs, 0, 30), true);
		for (int j = 0; j < n; j++)
			typed_free(&sub[j]);
		typed_free(&view);
	}
}
END_TEST

START_TEST(test_random_views_map_onto_random_types_like_the_model)
{
	uint64_t rs = seed_base() + 4;

	/* Subfile patterns need not partition for a mapping: any type. */
	for (int it = 0; it < rounds(1500); it++) {
		struct typed view = random_type(&rs, 3, 1024);
		struct typed sub = random_type(&rs, 3, 1024);

		check_mapping(&rs, &view, &sub, 1, rnd_range(&rs, 0, 30), false);
		typed_free(&sub);
		typed_free(&view);
	}
}
END_TEST

START_TEST(test_random_mappings_walk_alike_with_unordered_sets_kept_whole)
{
	uint64_t rs = seed_base() + 6;

	/*
	 * The walk cuts unordered sets into ordered chains, one cursor each;
	 * with no cutting, the cursor answers those levels by description
	 * walks instead.  Both must give the model's runs.
	 */
	fsplit_max = 1;
	for (int it = 0; it < rounds(1000) / 2; it++) {
		struct typed view = random_type(&rs, 3, 1024);
		struct typed sub = random_type(&rs, 3, 1024);

		check_mapping(&rs, &view, &sub, 1, rnd_range(&rs, 0, 30), false);
		typed_free(&sub);
		typed_free(&view);
	}
	fsplit_max = FSPLIT_MAX;
}
END_TEST

/*
 * A view of extent e holding 1 to 3 random types, each tiled a few times
 * from a random offset: an MPI filetype whose extent (a large prime, 2^20
 * + 1, ...) has nothing to do with the layout's period.
 */
static struct typed random_wide_view(uint64_t *rs, int64_t e)
{
	int count = (int)rnd_range(rs, 1, 3);
	struct typed members[3], x;
	CLF_Datatype t[3];
	struct model *m[3];
	int64_t off = rnd_range(rs, 0, 1) ? 0 : rnd_range(rs, 0, e / 4);

	for (int j = 0; j < count; j++) {
		struct typed in = random_type(rs, 2, 2048);
		int64_t len = in.m->extent * rnd_range(rs, 1, 3);

		if (j == count - 1 && rnd_range(rs, 0, 1))
			off = e - len;	/* ends at the extent: tiles abut */
		members[j].t = CLF_Type_vector(off, off + len - 1, e, 1, in.t);
		members[j].m = model_vector(off, off + len - 1, e, 1, in.m);
		ck_assert_ptr_nonnull(members[j].t);
		ck_assert_ptr_nonnull(members[j].m);
		t[j] = members[j].t;
		m[j] = members[j].m;
		off += len + rnd_range(rs, 0, 3) * rnd_range(rs, 0, e / 8);
		typed_free(&in);
		if (off + 3 * 2048 >= e) {
			count = j + 1;
			break;
		}
	}
	x.t = CLF_Type_struct(count, t);
	x.m = model_struct(count, m);
	ck_assert_ptr_nonnull(x.t);
	ck_assert_ptr_nonnull(x.m);
	for (int j = 0; j < count; j++)
		typed_free(&members[j]);
	return x;
}

/* Round-robin over p subfiles in stripes of k bytes. */
static int round_robin(uint64_t *rs, struct typed *out)
{
	int64_t k = rnd_range(rs, 4096, 65536), p = rnd_range(rs, 1, 4);
	struct model *byte = model_byte();
	CLF_Datatype t[4];

	ck_assert_int_eq(CLF_Type_pitfalls(0, k - 1, p * k, 1, k, (int)p,
					   CLF_BYTE, t), 0);
	for (int j = 0; j < p; j++) {
		out[j].t = t[j];
		out[j].m = model_vector(j * k, j * k + k - 1, p * k, 1, byte);
	}
	model_free(byte);
	return (int)p;
}

START_TEST(test_random_incommensurate_views_map_like_the_model)
{
	/* Primes near 2^20 and 10^6, 2^20 + 1, and odd extents. */
	static const int64_t extents[] = { 1048573, 999983, (1 << 20) + 1 };
	uint64_t rs = seed_base() + 7;
	int tiled = 0, maps = 0;

	for (int it = 0; it < rounds(1500) / 15; it++) {
		int64_t e = rnd_range(&rs, 0, 3) ? extents[it % 3]
						 : 2 * rnd_range(&rs, 1 << 18, 1 << 19) + 1;
		struct typed view = random_wide_view(&rs, e);
		struct typed sub[16];
		int64_t disp = rnd_range(&rs, 0, 30);
		int n = rnd_range(&rs, 0, 2) ? round_robin(&rs, sub)
					     : random_pattern(&rs, sub, 2048);

		/* Left to itself, the engine goes tiled where it must. */
		for (int j = 0; j < n; j++) {
			CLF_Mapping *m;

			ck_assert_int_eq(CLF_Mapping_create(view.t, 0, sub[j].t,
							    disp, &m), 0);
			tiled += m->tiled;
			maps++;
			CLF_Mapping_free(m);
		}
		check_mapping(&rs, &view, sub, n, disp, true);
		for (int j = 0; j < n; j++)
			typed_free(&sub[j]);
		typed_free(&view);
	}
	ck_assert_int_gt(tiled, maps / 4);
	ck_assert_int_lt(tiled, maps);
}
END_TEST

START_TEST(test_random_types_survive_encode_decode)
{
	uint64_t rs = seed_base() + 5;

	for (int it = 0; it < rounds(1000); it++) {
		struct typed x = random_type(&rs, 3, 4096);
		int64_t len = CLF_Type_encode(x.t, NULL, 0), lin, lin2;
		unsigned char *buf = malloc(len), *buf2 = malloc(len);
		CLF_Datatype y;

		ck_assert_int_gt(len, 0);
		ck_assert_int_eq(CLF_Type_encode(x.t, buf, len), len);
		ck_assert_int_eq(CLF_Type_decode(buf, len, &y), 0);
		ck_assert_int_eq(CLF_Type_size(y), x.m->size);
		ck_assert_int_eq(CLF_Type_extent(y), x.m->extent);
		ck_assert_int_eq(CLF_Type_encode(y, buf2, len), len);
		ck_assert_mem_eq(buf, buf2, len);
		for (int k = 0; k < 10; k++) {
			int64_t off = rnd_range(&rs, 0, 2 * x.m->extent);
			int e1 = CLF_Type_map(x.t, 0, off, &lin);
			int e2 = CLF_Type_map(y, 0, off, &lin2);

			ck_assert_int_eq(e1, e2);
			if (!e1)
				ck_assert_int_eq(lin, lin2);
		}
		/* Every truncation is refused cleanly. */
		for (int64_t cut = 0; cut < len; cut += 1 + len / 16) {
			CLF_Datatype z = NULL;

			ck_assert_int_lt(CLF_Type_decode(buf, cut, &z), 0);
			ck_assert_ptr_null(z);
		}
		CLF_Type_free(&y);
		free(buf);
		free(buf2);
		typed_free(&x);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("random");
	TCase *tc = tcase_create("against the model");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_random_types_match_model_size_extent_map_unmap);
	tcase_add_test(tc, test_random_patterns_pass_check_and_broken_ones_fail);
	tcase_add_test(tc, test_random_views_map_onto_random_patterns_like_the_model);
	tcase_add_test(tc, test_random_views_map_onto_random_types_like_the_model);
	tcase_add_test(tc, test_random_mappings_walk_alike_with_unordered_sets_kept_whole);
	tcase_add_test(tc, test_random_incommensurate_views_map_like_the_model);
	tcase_add_test(tc, test_random_types_survive_encode_decode);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
