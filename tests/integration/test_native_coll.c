// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_coll.c -- collectives of many participants through the
 * native API: a thousand threads of one process, each with its own file
 * descriptor (and so its own connection to each iod, clf.conf
 * iod_connections), take part in one collective write and one collective
 * read of tiny interleaved pieces, against real daemons.
 */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clf.h"
#include "instance.h"

static struct instance inst;

static uint8_t pattern(int64_t f)
{
	return (uint8_t)((f * 131 + (f >> 9) * 7) % 251 + 1);
}

static int64_t elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* One participant: view block(b) cyclic over nproc, two blocks each,
 * which land in both 64 KiB stripes of the 2-iod file. */
struct part {
	int p, nproc;
	int64_t b, n;
	pthread_barrier_t *ready;
	int rc;			/* 0, or the step that failed */
	char why[256];
};

static void *participant(void *arg)
{
	struct part *pt = arg;
	int64_t n = pt->n;
	uint8_t *buf = malloc(n), *back = calloc(1, n);
	CLF_Datatype t, mem = CLF_Type_vector(0, n - 1, n, 1, CLF_BYTE);
	struct clf_view v;
	int fd = -1;

	t = CLF_Type_vector(pt->p * pt->b, (pt->p + 1) * pt->b - 1,
			    pt->nproc * pt->b, 1, CLF_BYTE);
	v = (struct clf_view){ 0, t };
	fd = CLF_open("/many", O_RDWR);
	if (!buf || !back || fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v)) {
		pt->rc = 1;
		goto out;
	}
	for (int64_t w = 0; w < n; w++) {
		int64_t f;

		CLF_Type_unmap(t, 0, w, &f);
		buf[w] = pattern(f);
	}
	/* Everyone opened before anyone writes: the operation gathers all. */
	pthread_barrier_wait(pt->ready);
	if (CLF_ncwrite_at_all(fd, 0, buf, mem, 1, pt->nproc) != n) {
		pt->rc = 2;
		goto out;
	}
	pthread_barrier_wait(pt->ready);
	if (CLF_ncread_at_all(fd, 0, back, mem, 2, pt->nproc) != n) {
		pt->rc = 3;
		goto out;
	}
	if (memcmp(buf, back, n))
		pt->rc = 4;
out:
	if (pt->rc)
		snprintf(pt->why, sizeof(pt->why), "%s", CLF_Last_error());
	if (pt->rc == 1)
		pthread_barrier_wait(pt->ready);
	if (pt->rc <= 2)
		pthread_barrier_wait(pt->ready);
	if (fd >= 0)
		CLF_close(fd);
	CLF_Type_free(&t);
	CLF_Type_free(&mem);
	free(buf);
	free(back);
	return NULL;
}

/*
 * 1024 participants, each with 2 blocks of 64 bytes: 1024 pieces at each
 * iod.  The operation completes for all, within a bound far below the
 * time a participant at a time would take (each would wait out the
 * timeout), and the file holds every byte.
 */
START_TEST(test_collective_of_1024_threads_completes)
{
	enum { P = 1024 };
	const int64_t b = 64, n = 2 * b, size = P * n;
	struct part *pts = calloc(P, sizeof(*pts));
	pthread_t *th = calloc(P, sizeof(*th));
	pthread_barrier_t ready;
	pthread_attr_t attr;
	struct timespec t0;
	uint8_t *all = malloc(size);
	int fd, failed = 0;

	ck_assert_ptr_nonnull(pts);
	ck_assert_ptr_nonnull(th);
	ck_assert_ptr_nonnull(all);
	/* A connection per participant at each iod. */
	instance_iod_max_conns = P + 64;
	ck_assert_int_eq(instance_start(&inst, 2, 10000, NULL), 0);
	ck_assert_int_eq(instance_add_global(&inst, "iod_connections = 1100"),
			 0);
	ck_assert_msg(CLF_init(inst.conf) == 0, "%s", CLF_Last_error());
	fd = CLF_open("/many", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_close(fd), 0);

	pthread_barrier_init(&ready, NULL, P);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int p = 0; p < P; p++) {
		pts[p] = (struct part){ .p = p, .nproc = P, .b = b, .n = n,
					.ready = &ready };
		ck_assert_int_eq(pthread_create(&th[p], &attr, participant,
						&pts[p]), 0);
	}
	for (int p = 0; p < P; p++) {
		pthread_join(th[p], NULL);
		if (pts[p].rc && !failed++)
			fprintf(stderr, "participant %d failed at step %d: %s\n",
				p, pts[p].rc, pts[p].why);
	}
	printf("1024 participants: open, write and read back in %lld ms\n",
	       (long long)elapsed_ms(&t0));
	ck_assert_int_eq(failed, 0);
	ck_assert_int_lt(elapsed_ms(&t0), 60000);

	fd = CLF_open("/many", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_read(fd, all, size), size);
	for (int64_t f = 0; f < size; f++)
		if (all[f] != pattern(f))
			ck_abort_msg("byte %lld: %u, want %u", (long long)f,
				     all[f], pattern(f));
	ck_assert_int_eq(CLF_close(fd), 0);
	pthread_barrier_destroy(&ready);
	pthread_attr_destroy(&attr);
	free(all);
	free(th);
	free(pts);
	instance_stop_native(&inst);
	instance_iod_max_conns = 0;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("native_coll");
	TCase *tc = tcase_create("many");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_collective_of_1024_threads_completes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
