// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * forward_coll.c -- collective writes and reads of several clients on a
 * clf:// name, for test_forward.sh (through `clf forward`) and
 * bench/forward.sh.
 *
 *   forward_coll URL P ROUNDS BLOCK [PATH]
 *       P threads, each its own client (its own descriptor, and a
 *       connection per thread at each iod), view block(BLOCK) cyclic over P; in each
 *       of ROUNDS rounds every thread writes 64 of its blocks with
 *       CLF_ncwrite_at_all and reads them back with CLF_ncread_at_all
 *       (tags 2r+1 and 2r+2), compared; then the whole file (default
 *       PATH: coll) is read independently and compared with the
 *       pattern.  Prints the seconds the collective calls took and MiB/s.
 *
 * Exits 0 when every byte was right, 1 with a message on stderr.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clf.h"
#include "clf_ll.h"

#define BLOCKS 64		/* per thread and round */

static char name[1024];
static int nproc, rounds;
static int64_t block;
static pthread_barrier_t ready;
static double coll_s;		/* thread 0's time in the collectives */

static uint8_t pattern(int64_t f)
{
	return (uint8_t)((f * 131 + (f >> 9) * 7) % 251 + 1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct part {
	int p;
	int rc;			/* 0, or the step that failed */
	char why[256];
};

static void fail(struct part *pt, int step)
{
	if (!pt->rc) {
		pt->rc = step;
		snprintf(pt->why, sizeof(pt->why), "%s", CLF_Last_error());
	}
}

static void *participant(void *arg)
{
	struct part *pt = arg;
	int64_t n = BLOCKS * block;
	uint8_t *buf = malloc(n), *back = malloc(n);
	CLF_Datatype t = CLF_Type_vector(pt->p * block,
					 (pt->p + 1) * block - 1,
					 nproc * block, 1, CLF_BYTE);
	CLF_Datatype mem = CLF_Type_vector(0, n - 1, n, 1, CLF_BYTE);
	struct clf_view v = { 0, t };
	int fd = CLF_open(name, O_RDWR);

	if (!buf || !back || fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v))
		fail(pt, 1);
	for (int r = 0; r < rounds; r++) {
		double t0;

		for (int64_t w = 0; w < n && !pt->rc; w++) {
			int64_t f;

			CLF_Type_unmap(t, 0, r * n + w, &f);
			buf[w] = pattern(f);
		}
		memset(back, 0, n);
		/* A failed participant still meets the others at the
		 * barriers; its requests are missing, so theirs time out. */
		pthread_barrier_wait(&ready);
		t0 = now_s();
		if (!pt->rc && CLF_ncwrite_at_all(fd, r * n, buf, mem,
						  2 * r + 1, nproc) != n)
			fail(pt, 2);
		pthread_barrier_wait(&ready);
		if (!pt->rc && CLF_ncread_at_all(fd, r * n, back, mem,
						 2 * r + 2, nproc) != n)
			fail(pt, 3);
		if (pt->p == 0)
			coll_s += now_s() - t0;
		if (!pt->rc && memcmp(buf, back, n))
			fail(pt, 4);
	}
	if (fd >= 0)
		CLF_close(fd);
	CLF_Type_free(&t);
	CLF_Type_free(&mem);
	free(buf);
	free(back);
	return NULL;
}

/* The whole file, read independently, against the pattern. */
static int check_file(int64_t size)
{
	uint8_t *all = malloc(size);
	int fd = CLF_open(name, O_RDONLY);
	int bad = 0;

	if (!all || fd < 0 || CLF_read(fd, all, size) != size) {
		fprintf(stderr, "FAIL: reading %s back: %s\n", name,
			CLF_Last_error());
		bad = 1;
	}
	for (int64_t f = 0; !bad && f < size; f++) {
		if (all[f] != pattern(f)) {
			fprintf(stderr, "FAIL: byte %lld of %s is %u, not %u\n",
				(long long)f, name, all[f], pattern(f));
			bad = 1;
		}
	}
	if (fd >= 0)
		CLF_close(fd);
	free(all);
	return bad;
}

int main(int argc, char **argv)
{
	struct part *pts;
	pthread_t *th;
	int64_t size;
	int fd, failed = 0;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: forward_coll URL P ROUNDS BLOCK [PATH]\n");
		return 2;
	}
	nproc = atoi(argv[2]);
	rounds = atoi(argv[3]);
	block = atoll(argv[4]);
	if (nproc < 1 || rounds < 1 || block < 1) {
		fprintf(stderr, "forward_coll: P, ROUNDS and BLOCK must be positive\n");
		return 2;
	}
	snprintf(name, sizeof(name), "%s/%s", argv[1],
		 argc == 6 ? argv[5] : "coll");
	/* A connection per client at each iod, as P processes would have. */
	clf_ll_default_iod_connections((unsigned)nproc);
	if (CLF_init(argv[1])) {
		fprintf(stderr, "FAIL: CLF_init(%s): %s\n", argv[1],
			CLF_Last_error());
		return 1;
	}
	fd = CLF_open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0 || CLF_close(fd)) {
		fprintf(stderr, "FAIL: creating %s: %s\n", name,
			CLF_Last_error());
		return 1;
	}
	pts = calloc(nproc, sizeof(*pts));
	th = calloc(nproc, sizeof(*th));
	if (!pts || !th)
		return 1;
	pthread_barrier_init(&ready, NULL, nproc);
	for (int p = 0; p < nproc; p++) {
		pts[p].p = p;
		if (pthread_create(&th[p], NULL, participant, &pts[p]))
			return 1;
	}
	for (int p = 0; p < nproc; p++) {
		pthread_join(th[p], NULL);
		if (pts[p].rc && !failed++)
			fprintf(stderr, "FAIL: participant %d at step %d: %s\n",
				p, pts[p].rc, pts[p].why);
	}
	size = (int64_t)nproc * rounds * BLOCKS * block;
	if (!failed)
		failed = check_file(size);
	if (!failed)
		printf("%d clients, %d rounds: %lld bytes written and read collectively in %.3f s (%.1f MiB/s), checked\n",
		       nproc, rounds, (long long)size, coll_s,
		       2.0 * size / (1 << 20) / (coll_s > 0 ? coll_s : 1e-9));
	CLF_finalize();
	return failed ? 1 : 0;
}
