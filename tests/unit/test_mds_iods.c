// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_iods.c -- iods joining a running metad (metad/mds_iods.c,
 * mds_iods_join; `clf iod add`): the configuration read again may only
 * append iods, and a reader running beside a join never sees an iod
 * counted before its slot is ready.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "config.h"
#include "mds_iods.h"
#include "transport.h"

static char dir[] = "/tmp/clf-mds-iods.XXXXXX";

/* A configuration file of n iods, iod i at 127.0.0.1:20000 + i (+ shift
 * for iod moved), stripe_count count (0: none given); loaded. */
static struct clf_config *conf(unsigned n, unsigned count, int moved,
			       unsigned shift)
{
	char path[256];
	struct clf_config *cfg = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/clf.conf", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[global]\n");
	if (count)		/* else every iod */
		fprintf(f, "stripe_count = %u\n", count);
	fprintf(f, "\n[metad]\naddress = 127.0.0.1:19999\ndir = %s/meta\n",
		dir);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "\n[iod]\naddress = 127.0.0.1:%u\ndir = %s/iod%u\n",
			20000 + i + ((int)i == moved ? shift : 0), dir, i);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(clf_config_load(path, &cfg), 0);
	return cfg;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir + strlen(dir) - 6, "XXXXXX");
}

START_TEST(test_appended_iods_join_with_the_new_stripe_count)
{
	struct clf_config *was = conf(2, 2, -1, 0), *now = conf(4, 4, -1, 0);
	struct mds_iods *io = NULL;
	uint32_t before = 0;

	ck_assert_int_eq(mds_iods_open(was, &clf_transport_tcp, &io), 0);
	ck_assert_uint_eq(mds_iods_count(io), 2);
	ck_assert_uint_eq(mds_iods_stripe_count(io), 2);
	ck_assert_int_eq(mds_iods_join(io, now, &before), 0);
	ck_assert_uint_eq(before, 2);
	ck_assert_uint_eq(mds_iods_count(io), 4);
	ck_assert_uint_eq(mds_iods_stripe_count(io), 4);
	ck_assert_str_eq(mds_iods_addr(io, 3), "127.0.0.1:20003");
	ck_assert_str_eq(mds_iods_addr(io, 4), "(not configured)");
	/* Again with nothing new: nothing changes. */
	ck_assert_int_eq(mds_iods_join(io, now, &before), 0);
	ck_assert_uint_eq(before, 4);
	ck_assert_uint_eq(mds_iods_count(io), 4);
	mds_iods_close(io);
	clf_config_free(now);
	clf_config_free(was);
}
END_TEST

START_TEST(test_a_configuration_that_moves_or_drops_an_iod_is_refused)
{
	struct clf_config *was = conf(3, 0, -1, 0);
	struct clf_config *moved = conf(4, 0, 1, 100), *fewer = conf(2, 0, -1, 0);
	struct mds_iods *io = NULL;
	uint32_t before;

	ck_assert_int_eq(mds_iods_open(was, &clf_transport_tcp, &io), 0);
	ck_assert_int_eq(mds_iods_join(io, moved, &before), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "iod 1 the address 127.0.0.1:20101"));
	ck_assert_int_eq(mds_iods_join(io, fewer, &before), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "has 2 iods, fewer than the 3"));
	ck_assert_uint_eq(mds_iods_count(io), 3);
	ck_assert_str_eq(mds_iods_addr(io, 1), "127.0.0.1:20001");
	mds_iods_close(io);
	clf_config_free(fewer);
	clf_config_free(moved);
	clf_config_free(was);
}
END_TEST

struct reader {
	struct mds_iods *io;
	atomic_bool stop;
	int bad;
};

/* Every iod counted has its address: the slot was ready before the
 * count that names it (under TSan, a race here is reported too). */
static void *read_main(void *arg)
{
	struct reader *r = arg;

	while (!atomic_load(&r->stop)) {
		uint32_t n = mds_iods_count(r->io);
		char want[32];

		snprintf(want, sizeof(want), "127.0.0.1:%u", 20000 + n - 1);
		if (strcmp(mds_iods_addr(r->io, n - 1), want))
			r->bad++;
	}
	return NULL;
}

START_TEST(test_a_reader_beside_joins_sees_only_ready_iods)
{
	struct clf_config *was = conf(1, 0, -1, 0);
	struct reader r = { 0 };
	pthread_t t;
	uint32_t before;

	ck_assert_int_eq(mds_iods_open(was, &clf_transport_tcp, &r.io), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, read_main, &r), 0);
	for (unsigned n = 2; n <= 40; n++) {
		struct clf_config *now = conf(n, 0, -1, 0);

		ck_assert_int_eq(mds_iods_join(r.io, now, &before), 0);
		ck_assert_uint_eq(before, n - 1);
		clf_config_free(now);
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	ck_assert_int_eq(r.bad, 0);
	ck_assert_uint_eq(mds_iods_count(r.io), 40);
	mds_iods_close(r.io);
	clf_config_free(was);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mds_iods");
	TCase *tc = tcase_create("join");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_appended_iods_join_with_the_new_stripe_count);
	tcase_add_test(tc, test_a_configuration_that_moves_or_drops_an_iod_is_refused);
	tcase_add_test(tc, test_a_reader_beside_joins_sees_only_ready_iods);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
