// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_layout.c -- layouts, and gathering/scattering view ranges per
 * subfile, against a per-byte reference built with map/unmap.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "layout.h"
#include "model.h"

/* Where view byte v lives: subfile (CLF_HEAD for the head) and offset. */
static void locate(const struct clf_layout *l, const struct clf_viewmap *v,
		   int64_t vb, int *sub, int64_t *off)
{
	int64_t f;

	ck_assert_int_eq(CLF_Type_unmap(v->type, v->disp, vb, &f), 0);
	if (f < l->disp) {
		*sub = CLF_HEAD(l);
		*off = f;
		return;
	}
	for (int j = 0; j < l->nsub; j++)
		if (CLF_Type_map(l->types[j], l->disp, f, off) == 0) {
			*sub = j;
			return;
		}
	ck_abort_msg("byte %lld in no subfile", (long long)f);
}

static void check_gather_scatter(const struct clf_layout *l, int64_t vdisp,
				 CLF_Datatype vtype, CLF_Datatype memtype,
				 int64_t lo)
{
	struct clf_viewmap *v;
	struct clf_memlayout mem;
	int64_t n = memtype ? CLF_Type_size(memtype) : 777;
	int64_t mext = memtype ? CLF_Type_extent(memtype) : n;
	uint8_t *user = malloc(mext), *back = calloc(mext, 1);
	uint8_t *packed = malloc(n), *want = malloc(n);
	int64_t total = 0;

	for (int64_t i = 0; i < mext; i++)
		user[i] = (uint8_t)(i * 7 + 3);
	ck_assert_int_eq(clf_viewmap_create(l, vdisp, vtype, &v), 0);
	ck_assert_int_eq(clf_memlayout_init(&mem, memtype), 0);
	for (int j = 0; j <= l->nsub; j++) {
		int64_t k = 0, got;

		/* Reference: walk the view bytes one by one. */
		for (int64_t w = 0; w < n; w++) {
			int64_t off, moff = w;
			int sub;

			locate(l, v, lo + w, &sub, &off);
			if (sub != j)
				continue;
			if (memtype)
				ck_assert_int_eq(CLF_Type_unmap(memtype, 0, w,
								&moff), 0);
			want[k++] = user[moff];
		}
		ck_assert_int_eq(clf_viewmap_count(v, j, lo, lo + n), k);
		got = clf_viewmap_gather(v, j, lo, lo + n, lo, user, &mem,
					 packed);
		ck_assert_int_eq(got, k);
		ck_assert_mem_eq(packed, want, k);
		ck_assert_int_eq(clf_viewmap_scatter(v, j, lo, lo + n, lo, back,
						     &mem, packed), k);
		total += k;
	}
	ck_assert_int_eq(total, n);
	/* Every byte the memory type selects came back; no other. */
	for (int64_t w = 0; w < n; w++) {
		int64_t moff = w;

		if (memtype)
			CLF_Type_unmap(memtype, 0, w, &moff);
		ck_assert_int_eq(back[moff], user[moff]);
		user[moff] = 0;
	}
	for (int64_t i = 0; i < mext; i++)
		ck_assert_int_eq(user[i] == 0 ? 0 : back[i], 0);
	clf_memlayout_release(&mem);
	clf_viewmap_free(v);
	free(user);
	free(back);
	free(packed);
	free(want);
}

START_TEST(test_round_robin_layout_places_stripes_on_iods)
{
	struct clf_layout *l;
	int64_t lin;

	ck_assert_int_eq(clf_layout_round_robin(4096, 3, 2, 4, &l), 0);
	ck_assert_int_eq(l->nsub, 3);
	ck_assert_int_eq(l->iods[0], 2);
	ck_assert_int_eq(l->iods[2], 0);
	ck_assert_int_eq(CLF_Type_map(l->types[1], 0, 4096 * 4 + 5, &lin), 0);
	ck_assert_int_eq(lin, 4096 + 5);
	clf_layout_free(l);
	ck_assert_int_eq(clf_layout_round_robin(0, 3, 0, 4, &l), -EINVAL);
}
END_TEST

START_TEST(test_layout_refuses_a_pattern_that_is_not_a_partition)
{
	CLF_Datatype t[2];
	struct clf_layout *l = NULL;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 12, 1, 4, 2, CLF_BYTE, t), 0);
	ck_assert_int_eq(clf_layout_create(0, 2, t, NULL, 0, &l), -EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "no subfile"));
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_view_bytes_before_displacement_go_to_head)
{
	CLF_Datatype t[3];
	struct clf_layout *l;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 4, 15, 1, 5, 3, CLF_BYTE, t), 0);
	ck_assert_int_eq(clf_layout_create(37, 3, t, NULL, 1, &l), 0);
	check_gather_scatter(l, 0, CLF_BYTE, NULL, 0);
	check_gather_scatter(l, 5, CLF_BYTE, NULL, 20);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&t[j]);
	clf_layout_free(l);
}
END_TEST

START_TEST(test_random_views_and_memory_types_gather_like_reference)
{
	uint64_t rs = 4242;

	for (int it = 0; it < 300; it++) {
		struct typed sub[16], view = random_type(&rs, 3, 512);
		struct typed mem = random_type(&rs, 2, 2048);
		CLF_Datatype t[16];
		struct clf_layout *l;
		int n = random_pattern(&rs, sub, 1024);

		for (int j = 0; j < n; j++)
			t[j] = sub[j].t;
		ck_assert_int_eq(clf_layout_create(rnd_range(&rs, 0, 40), n, t,
						   NULL, 0, &l), 0);
		check_gather_scatter(l, rnd_range(&rs, 0, 50), view.t,
				     rnd_range(&rs, 0, 1) ? mem.t : NULL,
				     rnd_range(&rs, 0, 300));
		clf_layout_free(l);
		for (int j = 0; j < n; j++)
			typed_free(&sub[j]);
		typed_free(&view);
		typed_free(&mem);
	}
}
END_TEST

START_TEST(test_strided_memory_of_many_runs_gathers_over_a_fine_layout)
{
	/*
	 * Memory: 3 bytes of every 4, 4000 runs (the gather reads them in
	 * batches); view: every other byte; layout: 1-byte stripes on 3
	 * subfiles.  Each subfile run meets a different memory run.
	 */
	CLF_Datatype rr[3], view = CLF_Type_vector(1, 1, 2, 1, CLF_BYTE);
	CLF_Datatype mem = CLF_Type_vector(0, 2, 4, 4000, CLF_BYTE);
	struct clf_layout *l;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 0, 3, 1, 1, 3, CLF_BYTE, rr), 0);
	ck_assert_int_eq(clf_layout_create(5, 3, rr, NULL, 0, &l), 0);
	check_gather_scatter(l, 3, view, mem, 17);
	check_gather_scatter(l, 0, CLF_BYTE, mem, 0);
	clf_layout_free(l);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&rr[j]);
	CLF_Type_free(&view);
	CLF_Type_free(&mem);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layouts and views");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_round_robin_layout_places_stripes_on_iods);
	tcase_add_test(tc, test_layout_refuses_a_pattern_that_is_not_a_partition);
	tcase_add_test(tc, test_view_bytes_before_displacement_go_to_head);
	tcase_add_test(tc, test_random_views_and_memory_types_gather_like_reference);
	tcase_add_test(tc, test_strided_memory_of_many_runs_gathers_over_a_fine_layout);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
