// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rdma_remap_so.c -- a program linked against libclf.so, with no UCX:
 * libclf.so cannot export munmap (its CLF_0 version node), so this
 * program's unmaps go to libc's and libclf never sees them; its
 * registration cache must then treat every lookup as a generation of its
 * own (transport_rdma_memhooks.c, "unwatched").  Through the public API
 * only, over RDMA: write 1 MiB from mmap'd pages, unmap them, map other
 * pages at the same address with other bytes, write those to the next
 * MiB, read both back.  A registration of the old pages kept for the
 * same address would send the first MiB's bytes again.
 *
 *   rdma_remap_so CONFIG PATH
 *
 * Exits 0 when both MiB read back as written; 1 otherwise.  Run by
 * tests/guest/rdma_tests.sh in the soft-RoCE guest, which also checks on
 * standard error that the library said it was in that mode.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <clf.h>

#define MIB (1 << 20)

/* A pattern per half that no other offset or half repeats. */
static void fill(unsigned char *p, int half)
{
	for (size_t i = 0; i < MIB; i++)
		p[i] = (unsigned char)(i * 7 + i / 4096 + half * 101 + 1);
}

static int fail(const char *what, long r)
{
	fprintf(stderr, "rdma_remap_so: %s: %ld\n", what, r);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned char *p, *q, *got = malloc(2 * MIB), *want = malloc(MIB);
	ssize_t r;
	int fd;

	if (argc != 3 || !got || !want)
		return fail("usage: rdma_remap_so CONFIG PATH", -1);
	if ((r = CLF_init(argv[1])) < 0)
		return fail("CLF_init", r);
	fd = CLF_open(argv[2], O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0)
		return fail("CLF_open", fd);
	p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return fail("mmap", -1);
	fill(p, 0);
	if ((r = CLF_write(fd, p, MIB)) != MIB)
		return fail("first write", r);
	munmap(p, MIB);
	/* NOREPLACE: fails rather than take a mapping made in between. */
	q = mmap(p, MIB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p)
		return fail("mmap at the same address", (long)(q - p));
	fill(q, 1);
	if ((r = CLF_write(fd, q, MIB)) != MIB)
		return fail("second write", r);
	if ((r = CLF_lseek(fd, 0, SEEK_SET)) != 0)
		return fail("lseek", r);
	if ((r = CLF_read(fd, got, 2 * MIB)) != 2 * MIB)
		return fail("read", r);
	for (int half = 0; half < 2; half++) {
		fill(want, half);
		if (memcmp(got + (size_t)half * MIB, want, MIB)) {
			fill(want, 0);
			fprintf(stderr, "rdma_remap_so: MiB %d read back other bytes%s\n",
				half, half && !memcmp(got + MIB, want, MIB) ?
				": the old pages' (a stale registration)" : "");
			return 1;
		}
	}
	CLF_close(fd);
	munmap(q, MIB);
	CLF_finalize();
	printf("rdma_remap_so: 2 MiB through remapped pages read back as written\n");
	return 0;
}
