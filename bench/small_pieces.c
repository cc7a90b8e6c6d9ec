// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * small_pieces.c -- the cost of one small independent access that falls
 * into many pieces: IOR's ior-hard transfer (47008 bytes) over a file
 * striped in 4 KiB round-robin over 2 iods is 12 or 13 pieces, 6 or 7
 * on each iod (docs/small-io.md).
 *
 *   small_pieces [bytes [stripe [calls [batches]]]]
 *
 * One process writes calls transfers of bytes one after the other
 * (CLF_write), then reads them back (CLF_read, checked), batches times
 * over a fresh file each; prints microseconds per call, the smallest and
 * the median batch, for writes and reads.  The smallest is the figure to
 * compare on a loaded machine: load only adds to it.  $CLF_CONFIG names
 * the instance (it must have 2 iods or more; the file uses iods 0, 1).
 * Built against another build's libclf.a, the same program measures that
 * build's client (with its own instance).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"

#define BATCHES_MAX 99

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One batch: *w and *r microseconds per call; 0 or -1. */
static int batch(int64_t bytes, int64_t stripe, int calls, uint8_t *buf,
		 uint8_t *back, double *w, double *r)
{
	CLF_Datatype sub[2];
	struct clf_subfiles sf = { 0, 2, sub };
	double t0;
	int fd, err = -1;

	if (CLF_Type_pitfalls(0, stripe - 1, 2 * stripe, 1, stripe, 2,
			      CLF_BYTE, sub))
		return -1;
	CLF_unlink("/small_pieces");
	fd = CLF_open("/small_pieces", O_CREAT | O_RDWR, 0644);
	if (fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf))
		goto out;
	t0 = now();
	for (int i = 0; i < calls; i++)
		if (CLF_write(fd, buf + (i % 2) * bytes, bytes) != bytes)
			goto out;
	*w = (now() - t0) / calls * 1e6;
	if (CLF_lseek(fd, 0, SEEK_SET) != 0)
		goto out;
	t0 = now();
	for (int i = 0; i < calls; i++)
		if (CLF_read(fd, back, bytes) != bytes ||
		    memcmp(back, buf + (i % 2) * bytes, bytes))
			goto out;
	*r = (now() - t0) / calls * 1e6;
	err = 0;
out:
	if (err)
		fprintf(stderr, "small_pieces: %s\n", CLF_Last_error());
	if (fd >= 0)
		CLF_close(fd);
	CLF_Type_free(&sub[0]);
	CLF_Type_free(&sub[1]);
	return err;
}

int main(int argc, char **argv)
{
	int64_t bytes = argc > 1 ? atoll(argv[1]) : 47008;
	int64_t stripe = argc > 2 ? atoll(argv[2]) : 4096;
	int calls = argc > 3 ? atoi(argv[3]) : 500;
	int batches = argc > 4 ? atoi(argv[4]) : 9;
	double w[BATCHES_MAX], r[BATCHES_MAX];
	uint8_t *buf, *back;

	if (bytes < 1 || stripe < 1 || calls < 1 || batches < 1 ||
	    batches > BATCHES_MAX) {
		fprintf(stderr, "usage: small_pieces [bytes [stripe [calls [batches (1..%d)]]]]\n",
			BATCHES_MAX);
		return 2;
	}
	buf = malloc(2 * bytes);
	back = malloc(bytes);
	if (!buf || !back || CLF_init(NULL)) {
		fprintf(stderr, "small_pieces: %s\n", CLF_Last_error());
		return 1;
	}
	for (int64_t i = 0; i < 2 * bytes; i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	for (int b = 0; b < batches; b++)
		if (batch(bytes, stripe, calls, buf, back, &w[b], &r[b]))
			return 1;
	CLF_unlink("/small_pieces");
	qsort(w, batches, sizeof(w[0]), cmp_double);
	qsort(r, batches, sizeof(r[0]), cmp_double);
	printf("%lld B over %lld B stripes, %d calls x %d: write min %.1f med %.1f us/call, read min %.1f med %.1f us/call\n",
	       (long long)bytes, (long long)stripe, calls, batches, w[0],
	       w[batches / 2], r[0], r[batches / 2]);
	free(buf);
	free(back);
	CLF_finalize();
	return 0;
}
