// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_hash.c -- the intrusive hash table (libclf/hash.h) against a
 * plain array of what should be in it.
 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check_main.h"
#include "hash.h"

struct item {
	int value;
	struct clf_hnode hn;
	bool in;
};

#define N 2000

static size_t count_all(const struct clf_htable *t)
{
	struct clf_hnode *n, *tmp;
	size_t b, count = 0;

	clf_htable_for_each(t, b, n, tmp)
		count++;
	return count;
}

START_TEST(test_a_node_is_found_by_its_key_until_deleted)
{
	struct clf_htable t;
	struct item a = { .value = 1 }, b = { .value = 2 };

	ck_assert_int_eq(clf_htable_init(&t, 8, 8), 0);
	clf_htable_add(&t, &a.hn, 42);
	clf_htable_add(&t, &b.hn, 43);
	ck_assert_ptr_eq(clf_hnode_entry(clf_htable_find(&t, 42), struct item,
					 hn), &a);
	ck_assert_ptr_eq(clf_hnode_entry(clf_htable_find(&t, 43), struct item,
					 hn), &b);
	ck_assert_ptr_null(clf_htable_find(&t, 44));
	clf_htable_del(&t, &a.hn);
	ck_assert_ptr_null(clf_htable_find(&t, 42));
	ck_assert_ptr_eq(clf_htable_find(&t, 43), &b.hn);
	ck_assert_uint_eq(t.count, 1);
	clf_htable_release(&t);
	clf_htable_release(&t);
	clf_htable_release(NULL);
}
END_TEST

START_TEST(test_nodes_with_one_key_are_all_walked)
{
	struct clf_htable t;
	struct item it[5];
	struct clf_hnode *n;
	int seen = 0;

	ck_assert_int_eq(clf_htable_init(&t, 1, 1), 0);
	for (int i = 0; i < 5; i++) {
		it[i].value = i;
		/* Keys 7 and 8 share the one bucket. */
		clf_htable_add(&t, &it[i].hn, i % 2 ? 7 : 8);
	}
	for (n = clf_htable_find(&t, 8); n; n = clf_htable_next_key(n))
		seen |= 1 << clf_hnode_entry(n, struct item, hn)->value;
	ck_assert_int_eq(seen, 1 | 4 | 16);
	clf_htable_release(&t);
}
END_TEST

START_TEST(test_a_crowded_table_grows_and_keeps_every_node)
{
	struct clf_htable t;
	struct item *it = calloc(N, sizeof(*it));

	ck_assert_int_eq(clf_htable_init(&t, 4, 1024), 0);
	for (int i = 0; i < N; i++) {
		it[i].value = i;
		clf_htable_add(&t, &it[i].hn, (uint64_t)i);
	}
	ck_assert_uint_eq(t.nbuckets, 1024);	/* grown, up to the bound */
	for (int i = 0; i < N; i++)
		ck_assert_ptr_eq(clf_htable_find(&t, (uint64_t)i), &it[i].hn);
	ck_assert_uint_eq(count_all(&t), N);
	clf_htable_release(&t);
	free(it);
}
END_TEST

START_TEST(test_a_fixed_table_does_not_grow)
{
	struct clf_htable t;
	struct item it[100];

	ck_assert_int_eq(clf_htable_init(&t, 3, 0), 0);
	ck_assert_uint_eq(t.nbuckets, 4);	/* a power of two */
	for (int i = 0; i < 100; i++)
		clf_htable_add(&t, &it[i].hn, (uint64_t)i * 1024);
	ck_assert_uint_eq(t.nbuckets, 4);
	ck_assert_uint_eq(count_all(&t), 100);
	clf_htable_release(&t);
}
END_TEST

/* Random adds and deletes, deleting while walking, against an array. */
START_TEST(test_random_adds_and_deletes_match_a_model)
{
	struct clf_htable t;
	struct item *it = calloc(N, sizeof(*it));
	struct clf_hnode *n, *tmp;
	size_t b, in = 0;

	srand(12345);
	ck_assert_int_eq(clf_htable_init(&t, 16, 4096), 0);
	for (int step = 0; step < 20 * N; step++) {
		int i = rand() % N;

		if (it[i].in) {
			clf_htable_del(&t, &it[i].hn);
			in--;
		} else {
			it[i].value = i;
			/* Keys collide in pairs. */
			clf_htable_add(&t, &it[i].hn, (uint64_t)(i / 2) << 20);
			in++;
		}
		it[i].in = !it[i].in;
	}
	ck_assert_uint_eq(t.count, in);
	for (int i = 0; i < N; i++) {
		bool found = false;

		for (n = clf_htable_find(&t, (uint64_t)(i / 2) << 20); n;
		     n = clf_htable_next_key(n))
			found |= n == &it[i].hn;
		ck_assert_int_eq(found, it[i].in);
	}
	clf_htable_for_each(&t, b, n, tmp) {
		struct item *x = clf_hnode_entry(n, struct item, hn);

		if (x->value % 3 == 0) {
			clf_htable_del(&t, n);
			x->in = false;
			in--;
		}
	}
	ck_assert_uint_eq(count_all(&t), in);
	ck_assert_uint_eq(t.count, in);
	clf_htable_release(&t);
	free(it);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("hash");

	tcase_add_test(tc, test_a_node_is_found_by_its_key_until_deleted);
	tcase_add_test(tc, test_nodes_with_one_key_are_all_walked);
	tcase_add_test(tc, test_a_crowded_table_grows_and_keeps_every_node);
	tcase_add_test(tc, test_a_fixed_table_does_not_grow);
	tcase_add_test(tc, test_random_adds_and_deletes_match_a_model);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
