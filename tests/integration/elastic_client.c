// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * elastic_client.c -- a client that keeps writing and checking one file
 * while `clf iod remove` moves its subfiles (test_elastic.sh).
 *
 * usage: elastic_client CONFIG PATH MIB READY STOP
 *
 * Fills PATH (MIB MiB, 64 KiB blocks), creates READY (and writes the
 * number of writes done into it every 50, a heartbeat), then until STOP
 * exists rewrites a random block with its next generation's bytes and
 * reads another random block back, compared with the generation it must
 * hold.  At the end every block is read back and compared.  Prints the
 * counts; exits 1 at the first wrong byte or failed call.  With
 * ELASTIC_COLLECTIVE=1 in the environment, the rewrites and reads after
 * the fill are collective accesses of one participant
 * (CLF_ncwrite_at_all, CLF_ncread_at_all), which meet the move at the
 * iods as those of several do.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clf.h"

#define BLOCK (64 << 10)

static CLF_Datatype coll_type;	/* BLOCK bytes; NULL: independent */
static uint64_t coll_tag;

static unsigned char byte_of(long block, unsigned gen, long i)
{
	return (unsigned char)(block * 7919 + gen * 131 + i * 31 + (i >> 8));
}

static void fill(unsigned char *buf, long block, unsigned gen)
{
	for (long i = 0; i < BLOCK; i++)
		buf[i] = byte_of(block, gen, i);
}

static int put(int fd, long block, unsigned gen, unsigned char *buf)
{
	fill(buf, block, gen);
	if (coll_type && gen > 0 &&
	    CLF_ncwrite_at_all(fd, (int64_t)block * BLOCK, buf, coll_type,
			       ++coll_tag, 1) != BLOCK) {
		fprintf(stderr, "FAIL: collective write of block %ld: %s\n",
			block, CLF_Last_error());
		return -1;
	}
	if ((!coll_type || gen == 0) &&
	    (CLF_lseek(fd, (int64_t)block * BLOCK, SEEK_SET) < 0 ||
	     CLF_write(fd, buf, BLOCK) != BLOCK)) {
		fprintf(stderr, "FAIL: write of block %ld: %s\n", block,
			CLF_Last_error());
		return -1;
	}
	return 0;
}

static int check(int fd, long block, unsigned gen, unsigned char *buf)
{
	ssize_t n;

	if (coll_type &&
	    CLF_ncread_at_all(fd, (int64_t)block * BLOCK, buf, coll_type,
			      ++coll_tag, 1) != BLOCK) {
		fprintf(stderr, "FAIL: collective read of block %ld: %s\n",
			block, CLF_Last_error());
		return -1;
	}
	if (!coll_type &&
	    (CLF_lseek(fd, (int64_t)block * BLOCK, SEEK_SET) < 0 ||
	     (n = CLF_read(fd, buf, BLOCK)) != BLOCK)) {
		fprintf(stderr, "FAIL: read of block %ld: %s\n", block,
			CLF_Last_error());
		return -1;
	}
	for (long i = 0; i < BLOCK; i++)
		if (buf[i] != byte_of(block, gen, i)) {
			fprintf(stderr, "FAIL: block %ld byte %ld is %u, generation %u wrote %u\n",
				block, i, buf[i], gen, byte_of(block, gen, i));
			return -1;
		}
	return 0;
}

static void heartbeat(const char *path, long writes)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%ld\n", writes);
	fclose(f);
	rename(tmp, path);
}

int main(int argc, char **argv)
{
	unsigned char *buf = malloc(BLOCK);
	unsigned *gen;
	long nblocks, writes = 0, reads = 0;
	int fd, rc = 1;

	if (argc != 6 || !buf) {
		fprintf(stderr, "usage: elastic_client CONFIG PATH MIB READY STOP\n");
		return 2;
	}
	nblocks = atol(argv[3]) * (1 << 20) / BLOCK;
	gen = calloc(nblocks, sizeof(*gen));
	srand((unsigned)getpid());
	if (!gen || CLF_init(argv[1])) {
		fprintf(stderr, "FAIL: init: %s\n", CLF_Last_error());
		return 1;
	}
	if (getenv("ELASTIC_COLLECTIVE") &&
	    !strcmp(getenv("ELASTIC_COLLECTIVE"), "1") &&
	    !(coll_type = CLF_Type_vector(0, BLOCK - 1, BLOCK, 1, CLF_BYTE))) {
		fprintf(stderr, "FAIL: a type of %d bytes\n", BLOCK);
		return 1;
	}
	fd = CLF_open(argv[2], O_CREAT | O_RDWR, 0644);
	if (fd < 0) {
		fprintf(stderr, "FAIL: open %s: %s\n", argv[2], CLF_Last_error());
		return 1;
	}
	for (long b = 0; b < nblocks; b++)
		if (put(fd, b, 0, buf))
			goto out;
	fclose(fopen(argv[4], "w"));
	while (access(argv[5], F_OK)) {
		long w = rand() % nblocks, r = rand() % nblocks;

		if (put(fd, w, ++gen[w], buf))
			goto out;
		if (++writes % 50 == 0)
			heartbeat(argv[4], writes);
		if (check(fd, r, gen[r], buf))
			goto out;
		reads++;
	}
	for (long b = 0; b < nblocks; b++)
		if (check(fd, b, gen[b], buf))
			goto out;
	printf("%s: %ld writes, %ld reads, %ld blocks checked at the end: ok\n",
	       argv[2], writes, reads, nblocks);
	rc = 0;
out:
	CLF_close(fd);
	if (coll_type)
		CLF_Type_free(&coll_type);
	CLF_finalize();
	free(gen);
	free(buf);
	return rc;
}
