// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_compact.c -- long block lists and many-member structs become the
 * nested vectors they are (libclf/engine/falls_compact.c, CLF_Blocklist_*).
 *
 * Lists are generated from random nested regular patterns, with and
 * without noise, in order and shuffled; the types built from them must
 * select exactly the listed bytes (the byte-by-byte model) and, without
 * noise, stay as small as the pattern that generated them.
 *
 * CLF_TEST_SEED=n reproduces a run; CLF_TEST_ROUNDS=n scales it.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "falls_compact.h"
#include "model.h"
#include "type.h"

static uint64_t seed_base(void)
{
	const char *s = getenv("CLF_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : 20261126;
}

static int rounds(int dflt)
{
	const char *s = getenv("CLF_TEST_ROUNDS");

	return s ? atoi(s) : dflt;
}

/* ---- block lists ---- */

struct blist {
	int64_t *off, *len;
	int64_t n, alloc;
};

static void blist_add(struct blist *bl, int64_t off, int64_t len)
{
	if (bl->n == bl->alloc) {
		bl->alloc = bl->alloc ? 2 * bl->alloc : 256;
		bl->off = realloc(bl->off, bl->alloc * sizeof(*bl->off));
		bl->len = realloc(bl->len, bl->alloc * sizeof(*bl->len));
		ck_assert(bl->off && bl->len);
	}
	bl->off[bl->n] = off;
	bl->len[bl->n] = len;
	bl->n++;
}

static void blist_free(struct blist *bl)
{
	free(bl->off);
	free(bl->len);
	*bl = (struct blist){ 0 };
}

/* The list as a clf type of the given extent, blocks taken in order[]. */
static CLF_Datatype blist_type(const struct blist *bl, const int64_t *order,
			       int64_t extent)
{
	CLF_Blocklist list = CLF_Blocklist_new();

	ck_assert_ptr_nonnull(list);
	for (int64_t i = 0; i < bl->n; i++) {
		int64_t k = order ? order[i] : i;

		if (CLF_Blocklist_add(list, bl->off[k], bl->len[k], CLF_BYTE))
			ck_abort_msg("add: %s", CLF_Last_error());
	}
	return CLF_Type_blocklist(&list, extent);
}

/*
 * The type selects exactly the bytes of m: map and unmap every byte.
 * (One assertion per type: Check writes to a pipe at each assertion.)
 */
static void check_against_model(CLF_Datatype t, const struct model *m)
{
	int64_t lin, f, bad = -1;

	ck_assert_int_eq(CLF_Type_extent(t), m->extent);
	ck_assert_int_eq(CLF_Type_size(t), m->size);
	for (int64_t x = 0; x < m->extent && bad < 0; x++) {
		int r = CLF_Type_map(t, 0, x, &lin);

		if (m->bits[x] ? r != 0 || lin != m->rank[x] : r != -ENOENT)
			bad = x;
	}
	ck_assert_msg(bad < 0, "byte %lld mapped wrongly", (long long)bad);
	for (int64_t w = 0; w < m->size && bad < 0; w++)
		if (CLF_Type_unmap(t, 0, w, &f) != 0 || f != m->sel[w])
			bad = w;
	ck_assert_msg(bad < 0, "linear offset %lld unmapped wrongly",
		      (long long)bad);
}

static struct model *blist_model(const struct blist *bl, int64_t extent)
{
	uint8_t *bits = calloc(extent, 1);
	struct model *m;

	ck_assert_ptr_nonnull(bits);
	for (int64_t i = 0; i < bl->n; i++)
		memset(bits + bl->off[i], 1, bl->len[i]);
	m = model_bits(extent, bits);
	free(bits);
	return m;
}

/* ---- random nested regular patterns ---- */

enum { PAT_LEAF, PAT_REPEAT, PAT_SEQ };

struct pat {
	int kind;
	int64_t len;		  /* PAT_LEAF: bytes */
	int64_t n, stride;	  /* PAT_REPEAT: n copies of kid[0] */
	int nk;			  /* PAT_SEQ: kid[i] at off[i] */
	struct pat *kid[3];
	int64_t off[3];
	int64_t span, blocks;	  /* bytes from the first to past the last */
	int items;		  /* members once compacted, as a group sees them */
	int nodes;		  /* bounds the compacted description */
};

static void pat_free(struct pat *p)
{
	if (!p)
		return;
	for (int i = 0; i < 3; i++)
		pat_free(p->kid[i]);
	free(p);
}

static struct pat *pat_random(uint64_t *rs, int depth, int64_t max_blocks)
{
	struct pat *p = calloc(1, sizeof(*p));
	int64_t most;

	ck_assert_ptr_nonnull(p);
	if (depth == 0 || max_blocks < 4 || rnd_range(rs, 0, 4) == 0) {
		p->kind = PAT_LEAF;
		p->len = p->span = rnd_range(rs, 1, 12);
		p->blocks = p->items = p->nodes = 1;
		return p;
	}
	if (rnd_range(rs, 0, 2) > 0) {
		p->kind = PAT_REPEAT;
		p->kid[0] = pat_random(rs, depth - 1, max_blocks / 3);
		/* Groups longer than the compactor looks for stay lists. */
		while (p->kid[0]->items > FCOMPACT_MOTIF) {
			pat_free(p->kid[0]);
			p->kid[0] = pat_random(rs, depth - 1, max_blocks / 3);
		}
		most = max_blocks / p->kid[0]->blocks;
		p->n = rnd_range(rs, 3, most < 3 ? 3 : (most > 60 ? 60 : most));
		/* A gap of 0 makes copies touch: leaves then join. */
		p->stride = p->kid[0]->span + rnd_range(rs, 0, 1) *
						  rnd_range(rs, 1, 40);
		p->span = (p->n - 1) * p->stride + p->kid[0]->span;
		p->blocks = p->n * p->kid[0]->blocks;
		p->items = 1;
		/* The run may start a repetition late and end one early. */
		p->nodes = 1 + 3 * p->kid[0]->nodes;
		return p;
	}
	p->kind = PAT_SEQ;
	p->nk = (int)rnd_range(rs, 2, 3);
	for (int i = 0; i < p->nk; i++) {
		p->kid[i] = pat_random(rs, depth - 1, max_blocks / 3);
		p->off[i] = i == 0 ? 0 : p->off[i - 1] + p->kid[i - 1]->span +
						 rnd_range(rs, 0, 9);
		p->blocks += p->kid[i]->blocks;
		p->items += p->kid[i]->items;
		p->nodes += p->kid[i]->nodes;
	}
	p->span = p->off[p->nk - 1] + p->kid[p->nk - 1]->span;
	return p;
}

static void pat_emit(const struct pat *p, int64_t base, struct blist *bl)
{
	switch (p->kind) {
	case PAT_LEAF:
		blist_add(bl, base, p->len);
		break;
	case PAT_REPEAT:
		for (int64_t i = 0; i < p->n; i++)
			pat_emit(p->kid[0], base + i * p->stride, bl);
		break;
	default:
		for (int i = 0; i < p->nk; i++)
			pat_emit(p->kid[i], base + p->off[i], bl);
	}
}

/* Drop or shorten about one block in 50: regularity with exceptions. */
static void add_noise(uint64_t *rs, struct blist *bl)
{
	int64_t out = 0;

	for (int64_t i = 0; i < bl->n; i++) {
		int64_t dice = rnd_range(rs, 0, 99);

		if (dice == 0)
			continue;
		if (dice == 1 && bl->len[i] > 1)
			bl->len[i] -= rnd_range(rs, 1, bl->len[i] - 1);
		bl->off[out] = bl->off[i];
		bl->len[out] = bl->len[i];
		out++;
	}
	bl->n = out;
}

static int64_t *shuffled(uint64_t *rs, int64_t n)
{
	int64_t *o = malloc((n ? n : 1) * sizeof(*o));

	ck_assert_ptr_nonnull(o);
	for (int64_t i = 0; i < n; i++)
		o[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = rnd_range(rs, 0, i), x = o[i];

		o[i] = o[j];
		o[j] = x;
	}
	return o;
}

START_TEST(test_random_regular_lists_compact_to_the_pattern_size)
{
	uint64_t rs = seed_base() + 1;

	for (int it = 0; it < rounds(300); it++) {
		struct pat *p = pat_random(&rs, 4, 3000);
		struct blist bl = { 0 };
		int64_t extent = p->span + rnd_range(&rs, 0, 16);
		CLF_Datatype t;
		struct model *m;

		pat_emit(p, 0, &bl);
		t = blist_type(&bl, NULL, extent);
		ck_assert_msg(t, "round %d: %s", it, CLF_Last_error());
		ck_assert_msg(t->set->nodes <= p->nodes,
			      "round %d: %lld FALLS for a pattern of %d nodes (%lld blocks)",
			      it, (long long)t->set->nodes, p->nodes,
			      (long long)bl.n);
		m = blist_model(&bl, extent);
		check_against_model(t, m);
		model_free(m);
		CLF_Type_free(&t);
		blist_free(&bl);
		pat_free(p);
	}
}
END_TEST

START_TEST(test_random_lists_with_noise_match_model_in_any_order)
{
	uint64_t rs = seed_base() + 2;

	for (int it = 0; it < rounds(300); it++) {
		struct pat *p = pat_random(&rs, 4, 3000);
		struct blist bl = { 0 };
		int64_t extent = p->span + rnd_range(&rs, 0, 16), *order;
		CLF_Datatype t, u;
		struct model *m;

		pat_emit(p, 0, &bl);
		add_noise(&rs, &bl);
		if (bl.n == 0)
			blist_add(&bl, 0, 1);
		m = blist_model(&bl, extent);
		t = blist_type(&bl, NULL, extent);
		ck_assert_msg(t, "round %d: %s", it, CLF_Last_error());
		check_against_model(t, m);
		order = shuffled(&rs, bl.n);
		u = blist_type(&bl, order, extent);
		ck_assert_msg(u, "round %d shuffled: %s", it, CLF_Last_error());
		check_against_model(u, m);
		free(order);
		model_free(m);
		CLF_Type_free(&t);
		CLF_Type_free(&u);
		blist_free(&bl);
		pat_free(p);
	}
}
END_TEST

/*
 * The checkerboard of issue 9: an N x N byte matrix in k x k cells, cell
 * (i, j) owned by process (i + j) % 2; process 0's blocks, one per row
 * piece, in row order.
 */
#define CB_N 8192
#define CB_K 16

static void checkerboard(struct blist *bl, int rank, int64_t n, int64_t k)
{
	for (int64_t row = 0; row < n; row++) {
		int64_t first = ((row / k + rank) % 2) * k;

		for (int64_t col = first; col < n; col += 2 * k)
			blist_add(bl, row * n + col, k);
	}
}

/* Is byte x of the matrix owned by rank? */
static bool cb_owns(int rank, int64_t x)
{
	return ((x / CB_N / CB_K + x % CB_N / CB_K) % 2) == rank;
}

START_TEST(test_checkerboard_list_of_2M_blocks_is_depth_two)
{
	struct blist bl = { 0 };
	uint64_t rs = seed_base() + 3;

	for (int rank = 0; rank < 2; rank++) {
		CLF_Datatype t;
		int64_t lin, f;

		checkerboard(&bl, rank, CB_N, CB_K);
		ck_assert_int_eq(bl.n, 1 << 21);
		t = blist_type(&bl, NULL, (int64_t)CB_N * CB_N);
		ck_assert_msg(t, "%s", CLF_Last_error());
		ck_assert_int_eq(t->set->depth, 2);
		ck_assert_int_le(t->set->nodes, 4);
		ck_assert_int_eq(CLF_Type_size(t), (int64_t)CB_N * CB_N / 2);
		/* Row r holds N/2 owned bytes, so a byte's rank is known. */
		for (int i = 0; i < 10000; i++) {
			int64_t x = rnd_range(&rs, 0, (int64_t)CB_N * CB_N - 1);
			int64_t row = x / CB_N, col = x % CB_N, want;
			bool ok;

			if (!cb_owns(rank, x)) {
				ok = CLF_Type_map(t, 0, x, &lin) == -ENOENT;
			} else {
				want = row * (CB_N / 2) +
				       col / (2 * CB_K) * CB_K + col % CB_K;
				ok = CLF_Type_map(t, 0, x, &lin) == 0 &&
				     lin == want &&
				     CLF_Type_unmap(t, 0, lin, &f) == 0 &&
				     f == x;
			}
			if (!ok)
				ck_abort_msg("rank %d: byte %lld", rank,
					     (long long)x);
		}
		CLF_Type_free(&t);
		blist_free(&bl);
	}
}
END_TEST

START_TEST(test_reversed_list_gives_the_same_description)
{
	struct blist bl = { 0 };
	int64_t *order;
	CLF_Datatype t, u;

	checkerboard(&bl, 1, 1024, 8);
	order = malloc(bl.n * sizeof(*order));
	ck_assert_ptr_nonnull(order);
	for (int64_t i = 0; i < bl.n; i++)
		order[i] = bl.n - 1 - i;
	t = blist_type(&bl, NULL, 1024 * 1024);
	u = blist_type(&bl, order, 1024 * 1024);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(t->set->nodes, 3);
	ck_assert(fset_equal(t->set, u->set));
	free(order);
	CLF_Type_free(&t);
	CLF_Type_free(&u);
	blist_free(&bl);
}
END_TEST

START_TEST(test_blocklist_refuses_overlaps_and_bad_arguments)
{
	CLF_Blocklist list = CLF_Blocklist_new();
	CLF_Datatype t;

	/* In order, then going back onto a selected byte. */
	ck_assert_int_eq(CLF_Blocklist_add(list, 0, 4, CLF_BYTE), 0);
	ck_assert_int_eq(CLF_Blocklist_add(list, 10, 4, CLF_BYTE), 0);
	ck_assert_int_eq(CLF_Blocklist_add(list, 12, 1, CLF_BYTE), 0);
	errno = 0;
	t = CLF_Type_blocklist(&list, 20);
	ck_assert_ptr_null(t);
	ck_assert_ptr_null(list);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(CLF_Last_error(), "blocklist: blocks overlap at byte 12");

	list = CLF_Blocklist_new();
	ck_assert_int_eq(CLF_Blocklist_add(list, -1, 4, CLF_BYTE), -EINVAL);
	ck_assert_int_eq(CLF_Blocklist_add(list, 0, -1, CLF_BYTE), -EINVAL);
	ck_assert_int_eq(CLF_Blocklist_add(list, 0, 1, NULL), -EINVAL);
	ck_assert_int_eq(CLF_Blocklist_add(list, 0, 0, CLF_BYTE), 0);
	ck_assert_ptr_null(CLF_Type_blocklist(&list, 8));
	ck_assert_int_eq(errno, EINVAL);

	list = CLF_Blocklist_new();
	ck_assert_int_eq(CLF_Blocklist_add(list, 6, 4, CLF_BYTE), 0);
	ck_assert_ptr_null(CLF_Type_blocklist(&list, 8));
	ck_assert_int_eq(errno, EINVAL);
	CLF_Blocklist_free(&list);
	CLF_Blocklist_free(NULL);
}
END_TEST

START_TEST(test_blocklist_tiles_a_holey_old_type)
{
	/* old selects bytes 1 and 2 of 4; 1000 blocks of 3 copies, 16 apart. */
	CLF_Datatype old = CLF_Type_vector(1, 2, 4, 1, CLF_BYTE);
	CLF_Blocklist list = CLF_Blocklist_new();
	uint8_t bits[16000] = { 0 };
	struct model *m;
	CLF_Datatype t;

	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(CLF_Blocklist_add(list, 16 * i, 3, old), 0);
		for (int c = 0; c < 3; c++)
			bits[16 * i + 4 * c + 1] = bits[16 * i + 4 * c + 2] = 1;
	}
	t = CLF_Type_blocklist(&list, sizeof(bits));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_le(t->set->nodes, 2);
	m = model_bits(sizeof(bits), bits);
	check_against_model(t, m);
	model_free(m);
	CLF_Type_free(&t);
	CLF_Type_free(&old);
}
END_TEST

START_TEST(test_struct_of_many_members_finds_their_vector)
{
	enum { COUNT = 200000 };
	CLF_Datatype *members = malloc(COUNT * sizeof(*members));
	CLF_Datatype t, u;

	ck_assert_ptr_nonnull(members);
	/* Member i: 3 bytes of row i / 100 (rows 1000 bytes apart), 8 apart. */
	for (int i = 0; i < COUNT; i++) {
		int64_t at = i / 100 * 1000 + i % 100 * 8;

		members[i] = CLF_Type_vector(at, at + 2, 1000LL * COUNT / 100,
					     1, CLF_BYTE);
	}
	t = CLF_Type_struct(COUNT, members);
	ck_assert_msg(t, "%s", CLF_Last_error());
	ck_assert_int_eq(t->set->nodes, 2);
	ck_assert_int_eq(t->set->depth, 2);
	ck_assert_int_eq(CLF_Type_size(t), 3LL * COUNT);
	/* The same members backwards: sorted once, the same vector. */
	for (int i = 0; i < COUNT / 2; i++) {
		CLF_Datatype x = members[i];

		members[i] = members[COUNT - 1 - i];
		members[COUNT - 1 - i] = x;
	}
	u = CLF_Type_struct(COUNT, members);
	ck_assert_msg(u, "%s", CLF_Last_error());
	ck_assert(fset_equal(t->set, u->set));
	for (int i = 0; i < COUNT; i++)
		CLF_Type_free(&members[i]);
	free(members);
	CLF_Type_free(&t);
	CLF_Type_free(&u);
}
END_TEST

START_TEST(test_struct_still_names_overlapping_members)
{
	CLF_Datatype m[3];

	m[0] = CLF_Type_vector(0, 1, 16, 1, CLF_BYTE);
	m[1] = CLF_Type_vector(0, 0, 4, 4, CLF_BYTE);
	m[2] = CLF_Type_vector(5, 9, 16, 1, CLF_BYTE);
	ck_assert_ptr_null(CLF_Type_struct(3, m));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(CLF_Last_error(),
			 "struct: members 0 and 1 overlap at byte 0");
	for (int i = 0; i < 3; i++)
		CLF_Type_free(&m[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compact");
	TCase *tc = tcase_create("lists");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random_regular_lists_compact_to_the_pattern_size);
	tcase_add_test(tc, test_random_lists_with_noise_match_model_in_any_order);
	tcase_add_test(tc, test_checkerboard_list_of_2M_blocks_is_depth_two);
	tcase_add_test(tc, test_reversed_list_gives_the_same_description);
	tcase_add_test(tc, test_blocklist_refuses_overlaps_and_bad_arguments);
	tcase_add_test(tc, test_blocklist_tiles_a_holey_old_type);
	tcase_add_test(tc, test_struct_of_many_members_finds_their_vector);
	tcase_add_test(tc, test_struct_still_names_overlapping_members);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
