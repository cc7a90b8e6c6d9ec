// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_view.c -- the view registry: handles, owners, limits and
 * releasing views that are still in use.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "iod_view.h"

struct fixture {
	CLF_Datatype sub[4];	/* cyclic(16) over 4 subfiles */
	CLF_Datatype view;	/* bytes of subfile 2, as one vector */
};

static void fixture_init(struct fixture *f)
{
	ck_assert_int_eq(CLF_Type_pitfalls(0, 15, 64, 1, 16, 4, CLF_BYTE,
					   f->sub), 0);
	f->view = CLF_Type_vector(32, 47, 64, 1, CLF_BYTE);
	ck_assert_ptr_nonnull(f->view);
}

static void fixture_free(struct fixture *f)
{
	for (int i = 0; i < 4; i++)
		CLF_Type_free(&f->sub[i]);
	CLF_Type_free(&f->view);
}

static struct iod_views *registry(size_t memory, size_t min_share)
{
	struct iod_view_limits lim = { memory, min_share };
	struct iod_views *reg = NULL;

	ck_assert_int_eq(iod_views_create(&lim, &reg), 0);
	ck_assert_ptr_nonnull(reg);
	return reg;
}

START_TEST(test_register_builds_the_mapping_once)
{
	struct iod_views *reg = registry(0, 0);
	struct iod_view *v = NULL, *again;
	struct fixture f;
	uint32_t h = 0;

	fixture_init(&f);
	ck_assert_int_eq(iod_view_register(reg, 0x77, 2, f.view, 0, f.sub[2],
					   0, 5, &h), 0);
	ck_assert_uint_ne(h, 0);
	/* The registry keeps its own references to the types. */
	fixture_free(&f);
	ck_assert_int_eq(iod_view_lookup(reg, h, 5, &v), 0);
	ck_assert_uint_eq(v->handle, h);
	ck_assert_uint_eq(v->file, 0x77);
	ck_assert_uint_eq(v->subfile, 2);
	ck_assert_uint_eq(v->owner, 5);
	ck_assert_int_eq(CLF_Mapping_is_contiguous(v->map), 1);
	ck_assert_int_eq(CLF_Mapping_count(v->map, 0, 1000), 1000);
	/* Every lookup shares the mapping built at registration. */
	ck_assert_int_eq(iod_view_lookup(reg, h, 5, &again), 0);
	ck_assert_ptr_eq(again, v);
	ck_assert_ptr_eq(again->map, v->map);
	iod_view_put(again);
	iod_view_put(v);
	ck_assert_uint_eq(iod_views_count(reg), 1);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_register_accepts_decoded_types)
{
	struct iod_views *reg = registry(0, 0);
	CLF_Datatype view = NULL, sub = NULL;
	unsigned char vbuf[512], sbuf[512];
	int64_t vlen, slen;
	struct iod_view *v;
	struct fixture f;
	uint32_t h;

	fixture_init(&f);
	vlen = CLF_Type_encode(f.view, vbuf, sizeof(vbuf));
	slen = CLF_Type_encode(f.sub[3], sbuf, sizeof(sbuf));
	ck_assert_int_gt(vlen, 0);
	ck_assert_int_gt(slen, 0);
	ck_assert_int_eq(CLF_Type_decode(vbuf, (size_t)vlen, &view), 0);
	ck_assert_int_eq(CLF_Type_decode(sbuf, (size_t)slen, &sub), 0);
	ck_assert_int_eq(iod_view_register(reg, 1, 3, view, 0, sub, 0, 1, &h),
			 0);
	ck_assert_int_eq(iod_view_lookup(reg, h, 1, &v), 0);
	ck_assert_int_eq(CLF_Mapping_count(v->map, 0, 1000), 0);
	iod_view_put(v);
	CLF_Type_free(&view);
	CLF_Type_free(&sub);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_register_refuses_bad_types_with_a_message)
{
	struct iod_views *reg = registry(0, 0);
	struct fixture f;
	uint32_t h = 0;

	fixture_init(&f);
	ck_assert_int_eq(iod_view_register(reg, 0x9, 1, NULL, 0, f.sub[1], 0,
					   1, &h), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "subfile 1 of file 0x9"));
	ck_assert_int_eq(iod_view_register(reg, 0x9, 1, f.view, -1, f.sub[1],
					   0, 1, &h), -EINVAL);
	ck_assert_uint_eq(h, 0);
	ck_assert_uint_eq(iod_views_count(reg), 0);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_views_are_found_only_through_their_owner)
{
	struct iod_views *reg = registry(0, 0);
	struct iod_view *v = NULL;
	struct fixture f;
	uint32_t h;

	fixture_init(&f);
	ck_assert_int_eq(iod_view_register(reg, 1, 2, f.view, 0, f.sub[2], 0,
					   10, &h), 0);
	ck_assert_int_eq(iod_view_lookup(reg, h, 11, &v), -EBADF);
	ck_assert_ptr_null(v);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "connection 11"));
	ck_assert_int_eq(iod_view_release(reg, h, 11), -EBADF);
	ck_assert_int_eq(iod_view_lookup(reg, h + 1, 10, &v), -EBADF);
	ck_assert_int_eq(iod_view_lookup(reg, h, 10, &v), 0);
	iod_view_put(v);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_release_one_view)
{
	struct iod_views *reg = registry(0, 0);
	struct iod_view *v = NULL;
	struct fixture f;
	uint32_t a, b;

	fixture_init(&f);
	ck_assert_int_eq(iod_view_register(reg, 1, 2, f.view, 0, f.sub[2], 0,
					   3, &a), 0);
	ck_assert_int_eq(iod_view_register(reg, 1, 1, f.view, 0, f.sub[1], 0,
					   3, &b), 0);
	ck_assert_uint_ne(a, b);
	ck_assert_int_eq(iod_view_release(reg, a, 3), 0);
	ck_assert_int_eq(iod_view_release(reg, a, 3), -EBADF);
	ck_assert_int_eq(iod_view_lookup(reg, a, 3, &v), -EBADF);
	ck_assert_int_eq(iod_view_lookup(reg, b, 3, &v), 0);
	iod_view_put(v);
	ck_assert_uint_eq(iod_views_count(reg), 1);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_release_all_of_owner_frees_views)
{
	struct iod_views *reg = registry(0, 0);
	struct iod_view *v;
	struct fixture f;
	uint32_t mine[10], other;

	fixture_init(&f);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(iod_view_register(reg, 1, i % 4, f.view, 0,
						   f.sub[i % 4], 0, 7,
						   &mine[i]), 0);
	ck_assert_int_eq(iod_view_register(reg, 1, 0, f.view, 0, f.sub[0], 0,
					   8, &other), 0);
	ck_assert_uint_eq(iod_views_count(reg), 11);
	ck_assert_int_eq(iod_view_release_owner(reg, 7), 10);
	ck_assert_uint_eq(iod_views_count(reg), 1);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(iod_view_lookup(reg, mine[i], 7, &v), -EBADF);
	ck_assert_int_eq(iod_view_lookup(reg, other, 8, &v), 0);
	iod_view_put(v);
	ck_assert_int_eq(iod_view_release_owner(reg, 7), 0);
	/* The owner can start again, with its full allowance. */
	ck_assert_int_eq(iod_view_register(reg, 1, 0, f.view, 0, f.sub[0], 0,
					   7, &mine[0]), 0);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

/* Register one view of f for owner: 0 or the error. */
static int reg_one(struct iod_views *reg, struct fixture *f, uint64_t owner,
		   uint32_t *h)
{
	return iod_view_register(reg, 1, 0, f->view, 0, f->sub[0], 0, owner, h);
}

START_TEST(test_owners_get_fair_shares_of_view_memory)
{
	struct iod_views *reg = registry(0, 0);
	struct fixture f;
	size_t c;
	uint32_t h[8];

	fixture_init(&f);
	/* What one view costs, from the registry itself. */
	ck_assert_int_eq(reg_one(reg, &f, 1, &h[0]), 0);
	c = iod_views_bytes(reg, 1);
	ck_assert_uint_gt(c, sizeof(struct iod_view));
	iod_views_free(reg);

	/* 6.5 views in all: alone, an owner may take half (3.25 views). */
	reg = registry(6 * c + c / 2, c);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(reg_one(reg, &f, 1, &h[i]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 1, &h[3]), -ENOBUFS);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "view registrations of this client use"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "iod_view_memory"));
	/* A second owner still registers: a third of the pool. */
	ck_assert_int_eq(reg_one(reg, &f, 2, &h[4]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 2, &h[5]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 2, &h[6]), -ENOBUFS);
	/* A third one gets its quarter (1.6 views): the pool is full. */
	ck_assert_int_eq(reg_one(reg, &f, 3, &h[6]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 4, &h[7]), -ENOBUFS);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "view registrations of all clients use"));
	ck_assert_uint_eq(iod_views_bytes(reg, 0), 6 * c);
	/* Released bytes come back to everyone. */
	ck_assert_int_eq(iod_view_release(reg, h[0], 1), 0);
	ck_assert_int_eq(reg_one(reg, &f, 4, &h[7]), 0);
	ck_assert_uint_eq(iod_view_release_owner(reg, 1), 2);
	ck_assert_uint_eq(iod_views_bytes(reg, 1), 0);
	ck_assert_uint_eq(iod_views_bytes(reg, 0), 4 * c);
	ck_assert_uint_eq(iod_views_count(reg), 4);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_release_during_access_is_safe)
{
	struct iod_views *reg = registry(0, 0);
	struct iod_view *v;
	struct fixture f;
	uint32_t h;

	fixture_init(&f);
	ck_assert_int_eq(iod_view_register(reg, 1, 2, f.view, 0, f.sub[2], 0,
					   4, &h), 0);
	ck_assert_int_eq(iod_view_lookup(reg, h, 4, &v), 0);
	/* The connection drops while a request is reading through v. */
	ck_assert_int_eq(iod_view_release_owner(reg, 4), 1);
	ck_assert_int_eq(CLF_Mapping_count(v->map, 0, 64), 64);
	iod_views_free(reg);
	ck_assert_int_eq(CLF_Mapping_count(v->map, 0, 64), 64);
	iod_view_put(v);	/* the last reference frees the mapping */
	iod_view_put(NULL);
	iod_views_free(NULL);
	fixture_free(&f);
}
END_TEST

struct owner_thread {
	struct iod_views *reg;
	struct fixture *f;
	uint64_t owner;
};

static void *register_and_drop(void *arg)
{
	struct owner_thread *o = arg;

	for (int round = 0; round < 50; round++) {
		uint32_t h[8];

		for (int i = 0; i < 8; i++) {
			struct iod_view *v;

			if (iod_view_register(o->reg, 1, i % 4, o->f->view, 0,
					      o->f->sub[i % 4], 0, o->owner,
					      &h[i]))
				return (void *)1;
			if (iod_view_lookup(o->reg, h[i], o->owner, &v))
				return (void *)1;
			if (v->owner != o->owner || v->handle != h[i])
				return (void *)1;
			iod_view_put(v);
		}
		if (iod_view_release(o->reg, h[0], o->owner))
			return (void *)1;
		if (iod_view_release_owner(o->reg, o->owner) != 7)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_concurrent_owners_register_and_drop_independently)
{
	struct iod_views *reg = registry(0, 0);
	struct owner_thread o[4];
	struct fixture f;
	pthread_t t[4];

	fixture_init(&f);
	for (int i = 0; i < 4; i++) {
		o[i] = (struct owner_thread){ reg, &f, 100 + (uint64_t)i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, register_and_drop,
						&o[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	ck_assert_uint_eq(iod_views_count(reg), 0);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

/* k's encodings of (view, sub): buffers the caller frees. */
static struct iod_view_key make_key(CLF_Datatype view, int64_t vdisp,
				    CLF_Datatype sub)
{
	int64_t vl = CLF_Type_encode(view, NULL, 0), sl = CLF_Type_encode(sub, NULL, 0);
	uint8_t *vb = malloc(vl), *sb = malloc(sl);

	ck_assert_int_eq(CLF_Type_encode(view, vb, vl), vl);
	ck_assert_int_eq(CLF_Type_encode(sub, sb, sl), sl);
	return (struct iod_view_key){ .view_disp = vdisp, .view = vb,
				      .view_len = (uint32_t)vl, .sub = sb,
				      .sub_len = (uint32_t)sl };
}

static void key_free(struct iod_view_key *k)
{
	free((void *)k->view);
	free((void *)k->sub);
}

START_TEST(test_equal_registrations_share_one_mapping)
{
	struct iod_views *reg = registry(0, 0);
	struct iod_view_key k = { 0 }, other;
	struct iod_view *a, *b;
	struct fixture f;
	uint32_t h1, h2, h3;

	fixture_init(&f);
	k = make_key(f.view, 0, f.sub[2]);
	other = make_key(f.view, 64, f.sub[2]);
	/* Nothing yet: without types, a miss. */
	ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &k, NULL, NULL, 5,
						 &h1), -ENOENT);
	ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &k, f.view,
						 f.sub[2], 5, &h1), 0);
	/* Another connection, the same key: no types needed. */
	ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &k, NULL, NULL, 6,
						 &h2), 0);
	ck_assert_uint_eq(iod_views_maps(reg), 1);
	ck_assert_int_eq(iod_view_lookup(reg, h1, 5, &a), 0);
	ck_assert_int_eq(iod_view_lookup(reg, h2, 6, &b), 0);
	ck_assert_ptr_eq(a->map, b->map);
	ck_assert_int_eq(CLF_Mapping_count(b->map, 0, 32), 32);
	/* Released while in use: the mapping stays with the lookup. */
	ck_assert_int_eq(iod_view_release(reg, h1, 5), 0);
	ck_assert_int_eq(iod_view_release_owner(reg, 6), 1);
	ck_assert_int_eq(CLF_Mapping_count(b->map, 0, 32), 32);
	iod_view_put(a);
	iod_view_put(b);
	/* Unused, but kept: registering again is a hit. */
	ck_assert_uint_eq(iod_views_maps(reg), 1);
	ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &k, NULL, NULL, 7,
						 &h3), 0);
	ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &other, NULL, NULL,
						 7, &h3), -ENOENT);
	key_free(&k);
	key_free(&other);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_unused_mappings_are_bounded)
{
	struct iod_views *reg = registry(0, 0);
	struct fixture f;
	uint32_t h;

	fixture_init(&f);
	for (int i = 0; i < (int)IOD_VIEW_MAPS_KEPT + 40; i++) {
		struct iod_view_key k = make_key(f.view, 64 * i, f.sub[2]);

		ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &k, f.view,
							 f.sub[2], 5, &h), 0);
		ck_assert_int_eq(iod_view_release(reg, h, 5), 0);
		key_free(&k);
	}
	ck_assert_uint_le(iod_views_maps(reg), IOD_VIEW_MAPS_KEPT + 1);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_owners_bound_to_one_client_share_its_share)
{
	struct iod_views *reg = registry(0, 0);
	struct fixture f;
	size_t c;
	uint32_t h[8];

	fixture_init(&f);
	ck_assert_int_eq(reg_one(reg, &f, 1, &h[0]), 0);
	c = iod_views_bytes(reg, 1);
	iod_views_free(reg);

	/* 6.5 views: a lone client may take 3 of them, however many
	 * connections (owners) it registers through. */
	reg = registry(6 * c + c / 2, c);
	ck_assert_int_eq(iod_views_bind(reg, 1, 100), 0);
	ck_assert_int_eq(iod_views_bind(reg, 2, 100), 0);
	ck_assert_int_eq(reg_one(reg, &f, 1, &h[0]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 2, &h[1]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 1, &h[2]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 2, &h[3]), -ENOBUFS);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "view registrations of this client use"));
	/* Another client is a newcomer with its own share. */
	ck_assert_int_eq(reg_one(reg, &f, 3, &h[3]), 0);
	ck_assert_int_eq(reg_one(reg, &f, 3, &h[4]), 0);
	/* A connection of the first that goes gives its part back, and
	 * its binding: bound to nothing, owner 2 is a client of its own. */
	ck_assert_int_eq(iod_view_release_owner(reg, 2), 1);
	ck_assert_uint_eq(iod_views_bytes(reg, 0), 4 * c);
	ck_assert_int_eq(reg_one(reg, &f, 2, &h[5]), 0);
	ck_assert_uint_eq(iod_views_bytes(reg, 2), c);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

START_TEST(test_unused_mappings_are_bounded_in_bytes)
{
	struct iod_views *reg = registry(64 << 10, 0);
	struct fixture f;
	uint32_t h;

	fixture_init(&f);
	for (int i = 0; i < 200; i++) {
		struct iod_view_key k = make_key(f.view, 64 * i, f.sub[2]);

		ck_assert_int_eq(iod_view_register_keyed(reg, 1, 2, &k, f.view,
							 f.sub[2], 5, &h), 0);
		ck_assert_int_eq(iod_view_release(reg, h, 5), 0);
		key_free(&k);
	}
	ck_assert_uint_le(iod_views_idle_bytes(reg),
			  (64 << 10) / IOD_VIEW_KEPT_PART);
	ck_assert_uint_lt(iod_views_maps(reg), 200 / 4);
	ck_assert_uint_gt(iod_views_maps(reg), 0);
	fixture_free(&f);
	iod_views_free(reg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_view");
	TCase *tc = tcase_create("registry");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_register_builds_the_mapping_once);
	tcase_add_test(tc, test_register_accepts_decoded_types);
	tcase_add_test(tc, test_register_refuses_bad_types_with_a_message);
	tcase_add_test(tc, test_views_are_found_only_through_their_owner);
	tcase_add_test(tc, test_release_one_view);
	tcase_add_test(tc, test_release_all_of_owner_frees_views);
	tcase_add_test(tc, test_owners_get_fair_shares_of_view_memory);
	tcase_add_test(tc, test_release_during_access_is_safe);
	tcase_add_test(tc, test_concurrent_owners_register_and_drop_independently);
	tcase_add_test(tc, test_equal_registrations_share_one_mapping);
	tcase_add_test(tc, test_unused_mappings_are_bounded);
	tcase_add_test(tc, test_unused_mappings_are_bounded_in_bytes);
	tcase_add_test(tc, test_owners_bound_to_one_client_share_its_share);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
