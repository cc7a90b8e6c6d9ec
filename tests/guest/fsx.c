// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsx.c -- fsx's idea (the file system exerciser of Apple and xfstests,
 * which Debian does not package) on one file of a mount, in C so that
 * 100k operations fit a guest under TCG:
 *
 *   fsx [-N OPS] [-S SEED] [-l MAXLEN] [-o MAXOP] [-p EVERY] [-MZ] FILE
 *
 * Random reads, writes, mmap reads and writes (the latter extending the
 * file first, as fsx does, and scribbling past EOF in the last page,
 * which must never show), truncations down and up, fsyncs, closes and
 * reopens, and evictions of the file's clean pages (fsync, then
 * POSIX_FADV_DONTNEED: the next read comes from the servers), each
 * checked against a model of the file: every read's bytes, the zeros
 * past EOF in an mmap read's last page, and the size (fstat) after
 * every operation.  -Z adds O_DIRECT reads and writes on a second
 * descriptor; -M leaves mmap out.  At the end the whole file is read
 * back twice: through the page cache, then from the servers.
 *
 * Exit status 0, or 1 at the first mismatch: the operation, the first
 * bad offset, the bytes, and the last operations that touched it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum op {
	OP_READ, OP_WRITE, OP_MAPREAD, OP_MAPWRITE, OP_TRUNCATE, OP_FSYNC,
	OP_REOPEN, OP_EVICT, OP_DREAD, OP_DWRITE, OP_NR
};

static const char *const op_names[OP_NR] = {
	"read", "write", "mapread", "mapwrite", "truncate", "fsync",
	"reopen", "evict", "dread", "dwrite",
};

/* Relative frequencies, as fsx's: data operations first. */
static const unsigned int op_weight[OP_NR] = {
	[OP_READ] = 20, [OP_WRITE] = 20, [OP_MAPREAD] = 15,
	[OP_MAPWRITE] = 15, [OP_TRUNCATE] = 8, [OP_FSYNC] = 3,
	[OP_REOPEN] = 4, [OP_EVICT] = 3, [OP_DREAD] = 6, [OP_DWRITE] = 6,
};

struct logent {
	long n;
	enum op op;
	off_t off;
	size_t len;
	off_t size;		/* the file's size after it */
};

#define LOG_LEN 4096
static struct logent oplog[LOG_LEN];
static long nlog;

static const char *path;
static int fd = -1, dfd = -1;
static unsigned char *good, *buf;
static off_t size;			/* the model's */
static size_t maxlen = 256 * 1024, maxop = 64 * 1024;
static long pagesize;
static uint64_t rng;
static long opno;
static int no_mmap, direct;
/*
 * Bytes scribbled past EOF through a mapping, not yet written back:
 * mappings of the page may see them (as on any Linux file system)
 * until writeback zeroes them or the size moves.
 */
static int eof_scribbled;

static uint64_t rnd(void)
{
	/* xorshift64*: the same operations for the same seed, anywhere. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static size_t rnd_below(size_t n)
{
	return n ? rnd() % n : 0;
}

static bool relevant(const struct logent *e, off_t at)
{
	if (e->op == OP_TRUNCATE || e->op == OP_REOPEN || e->op == OP_EVICT)
		return true;
	return e->op != OP_READ && e->op != OP_MAPREAD && e->op != OP_DREAD &&
	       at >= e->off && at < e->off + (off_t)e->len;
}

/* The last 20 operations, and up to 40 before them that touched at. */
static void dump_log(off_t at)
{
	long i, first = nlog > LOG_LEN ? nlog - LOG_LEN : 0, from = nlog;
	int older = 0;

	for (i = nlog - 1; i >= first; i--) {
		if (nlog - i <= 20 || (at >= 0 && relevant(&oplog[i % LOG_LEN], at)))
			from = i;
		if (nlog - i > 20 && from == i && ++older == 40)
			break;
	}
	fprintf(stderr, "fsx: the last operations, and before them those that wrote offset %jd or moved the size (newest last):\n",
		(intmax_t)at);
	for (i = from; i < nlog; i++) {
		struct logent *e = &oplog[i % LOG_LEN];

		if (nlog - i > 20 && !(at >= 0 && relevant(e, at)))
			continue;
		fprintf(stderr, "  %6ld %-8s off %7jd len %6zu -> size %jd\n",
			e->n, op_names[e->op], (intmax_t)e->off, e->len,
			(intmax_t)e->size);
	}
}

static void __attribute__((noreturn, format(printf, 2, 3)))
fail(off_t at, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fsx: FAIL: op %ld: ", opno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dump_log(at);
	exit(1);
}

static void logop(enum op op, off_t off, size_t len)
{
	struct logent *e = &oplog[nlog++ % LOG_LEN];

	e->n = opno;
	e->op = op;
	e->off = off;
	e->len = len;
	e->size = size;
}

/* got[0..len) read at off against the model. */
static void check(const char *what, const unsigned char *got, off_t off,
		  size_t len)
{
	size_t i;

	if (!memcmp(got, good + off, len))
		return;
	for (i = 0; got[i] == good[off + i]; i++)
		;
	fprintf(stderr, "fsx: %s of %zu at %jd: byte %jd is 0x%02x, want 0x%02x\n",
		what, len, (intmax_t)off, (intmax_t)(off + i), got[i],
		good[off + i]);
	fprintf(stderr, "fsx: offset  got want\n");
	for (size_t j = i; j < len && j < i + 16; j++)
		fprintf(stderr, "fsx: %7jd  %02x  %02x\n", (intmax_t)(off + j),
			got[j], good[off + j]);
	fail(off + i, "%s differs from the model", what);
}

static void fill(off_t off, size_t len)
{
	size_t i;

	/* Bytes that name their operation: (op % 255) + 1, then random. */
	for (i = 0; i < len; i++)
		buf[i] = (i & 15) ? (unsigned char)rnd() :
				    (unsigned char)(opno % 255 + 1);
	(void)off;
}

static void set_size(off_t n)
{
	/*
	 * A cut zeroes the new last page past EOF; an extension into a
	 * further page leaves the scribbled one inside the file (where the
	 * model wants zeros); one inside the same page may leave the
	 * scribble past the new EOF.
	 */
	if (n < size || n / pagesize != size / pagesize)
		eof_scribbled = 0;
	if (n > size)
		memset(good + size, 0, n - size);
	size = n;
}

static void xpread(int f, const char *what, off_t off, size_t len)
{
	ssize_t got = pread(f, buf, len, off);
	size_t want = off >= size ? 0 :
		      (size_t)(size - off) < len ? (size_t)(size - off) : len;

	if (got < 0)
		fail(off, "%s: pread %zu at %jd: %s", what, len, (intmax_t)off,
		     strerror(errno));
	if ((size_t)got != want)
		fail(off, "%s: pread %zu at %jd: %zd bytes, want %zu (size %jd)",
		     what, len, (intmax_t)off, got, want, (intmax_t)size);
	check(what, buf, off, want);
}

static void xpwrite(int f, const char *what, off_t off, size_t len)
{
	ssize_t put;

	fill(off, len);
	put = pwrite(f, buf, len, off);
	if (put < 0 || (size_t)put != len)
		fail(off, "%s: pwrite %zu at %jd: %zd (%s)", what, len,
		     (intmax_t)off, put, put < 0 ? strerror(errno) : "short");
	if (off + (off_t)len > size)
		set_size(off + len);
	memcpy(good + off, buf, len);
}

static void do_mapread(off_t off, size_t len)
{
	off_t pg = off & ~(off_t)(pagesize - 1);
	size_t mlen = off - pg + len, tail;
	unsigned char *m;

	/* The whole last page: past EOF it must read zeros. */
	if (pg + (off_t)mlen >= size)
		mlen = ((size - pg) + pagesize - 1) & ~(size_t)(pagesize - 1);
	m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, pg);
	if (m == MAP_FAILED)
		fail(off, "mmap %zu at %jd: %s", mlen, (intmax_t)pg,
		     strerror(errno));
	check("mapread", m + (off - pg), off, len);
	if (pg + (off_t)mlen > size && !eof_scribbled) {
		tail = pg + mlen - size;
		for (size_t i = 0; i < tail; i++)
			if (m[size - pg + i])
				fail(size + i, "mapread: byte %jd past EOF (%jd) is 0x%02x, not 0",
				     (intmax_t)(size + i), (intmax_t)size,
				     m[size - pg + i]);
	}
	if (munmap(m, mlen))
		fail(off, "munmap: %s", strerror(errno));
}

static void do_mapwrite(off_t off, size_t len)
{
	off_t pg = off & ~(off_t)(pagesize - 1), end;
	size_t mlen = off - pg + len;
	unsigned char *m;

	/* fsx's way: the file is extended first, then mapped. */
	if (off + (off_t)len > size) {
		if (ftruncate(fd, off + len))
			fail(off, "mapwrite: ftruncate %jd: %s",
			     (intmax_t)(off + len), strerror(errno));
		set_size(off + len);
	}
	end = (pg + mlen + pagesize - 1) & ~(off_t)(pagesize - 1);
	mlen = end - pg;
	m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
	if (m == MAP_FAILED)
		fail(off, "mmap %zu at %jd: %s", mlen, (intmax_t)pg,
		     strerror(errno));
	fill(off, len);
	memcpy(m + (off - pg), buf, len);
	memcpy(good + off, buf, len);
	/*
	 * Past EOF in the last page: POSIX says such bytes are never
	 * written to the file, and a later extension must read zeros there.
	 */
	if (end > size && rnd_below(2)) {
		memset(m + (size - pg), 0xee, end - size);
		eof_scribbled = 1;
	}
	if (rnd_below(2)) {
		if (msync(m, mlen, MS_SYNC))
			fail(off, "msync: %s", strerror(errno));
		/* Written back: the tail past EOF zeroed. */
		if (end >= size)
			eof_scribbled = 0;
	}
	if (munmap(m, mlen))
		fail(off, "munmap: %s", strerror(errno));
}

static void do_truncate(off_t n)
{
	if (ftruncate(fd, n))
		fail(n, "ftruncate %jd: %s", (intmax_t)n, strerror(errno));
	set_size(n);
}

static int open_file(int flags)
{
	int f = open(path, O_RDWR | flags);

	if (f < 0)
		fail(-1, "open %s%s: %s", path,
		     flags & O_DIRECT ? " O_DIRECT" : "", strerror(errno));
	return f;
}

static void evict(void)
{
	eof_scribbled = 0;
	if (fsync(fd))
		fail(-1, "fsync: %s", strerror(errno));
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		fail(-1, "fadvise DONTNEED: %s", strerror(errno));
}

static void check_size(const char *what)
{
	struct stat st;

	if (fstat(fd, &st))
		fail(-1, "fstat: %s", strerror(errno));
	if (st.st_size != size)
		fail(size, "after %s: size %jd, want %jd", what,
		     (intmax_t)st.st_size, (intmax_t)size);
}

static enum op pick(void)
{
	unsigned int total = 0, r;
	int i;

	for (i = 0; i < OP_NR; i++)
		total += op_weight[i];
	for (;;) {
		r = rnd_below(total);
		for (i = 0; r >= op_weight[i]; i++)
			r -= op_weight[i];
		if (no_mmap && (i == OP_MAPREAD || i == OP_MAPWRITE))
			continue;
		if (!direct && (i == OP_DREAD || i == OP_DWRITE))
			continue;
		return i;
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Seconds spent in each kind of operation, for -p's report. */
static double op_time[OP_NR];

static void one_op(long *counts)
{
	enum op op = pick();
	double t = now();
	off_t off = rnd_below(maxlen);
	size_t len = 1 + rnd_below(maxop);

	if (off + len > maxlen)
		len = maxlen - off;
	switch (op) {
	case OP_READ:
	case OP_DREAD:
		/* Mostly inside the file; sometimes across or past EOF. */
		if (size && rnd_below(8))
			off = rnd_below(size);
		xpread(op == OP_READ ? fd : dfd, op_names[op], off, len);
		break;
	case OP_WRITE:
	case OP_DWRITE:
		xpwrite(op == OP_WRITE ? fd : dfd, op_names[op], off, len);
		break;
	case OP_MAPREAD:
		if (!size)
			return;
		off = rnd_below(size);
		if (off + (off_t)len > size)
			len = size - off;
		do_mapread(off, len);
		break;
	case OP_MAPWRITE:
		do_mapwrite(off, len);
		break;
	case OP_TRUNCATE:
		/* Cuts and extensions, often inside a page. */
		off = rnd_below(4) ? (off_t)rnd_below(maxlen + 1) :
				     (off_t)rnd_below(size + 2 * pagesize);
		if (off > (off_t)maxlen)
			off = maxlen;
		len = 0;
		do_truncate(off);
		break;
	case OP_FSYNC:
		eof_scribbled = 0;
		if (fsync(fd))
			fail(-1, "fsync: %s", strerror(errno));
		off = len = 0;
		break;
	case OP_REOPEN:
		if (close(fd))
			fail(-1, "close: %s", strerror(errno));
		fd = open_file(0);
		off = len = 0;
		break;
	case OP_EVICT:
		evict();
		off = len = 0;
		break;
	default:
		abort();
	}
	counts[op]++;
	logop(op, off, len);
	check_size(op_names[op]);
	op_time[op] += now() - t;
}

static void report_times(const long *counts)
{
	int i;

	printf("fsx: ms per operation:");
	for (i = 0; i < OP_NR; i++)
		if (counts[i])
			printf(" %s %.1f", op_names[i],
			       op_time[i] * 1e3 / counts[i]);
	printf("\n");
}

static void final_check(const char *what)
{
	xpread(fd, what, 0, size + 1);
}

static void usage(void)
{
	fprintf(stderr, "usage: fsx [-N OPS] [-S SEED] [-l MAXLEN] [-o MAXOP] [-p EVERY] [-MZ] FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long nops = 10000, every = 0, counts[OP_NR] = { 0 };
	uint64_t seed = 1;
	struct timespec t0, t1;
	double s;
	int c, i;

	while ((c = getopt(argc, argv, "N:S:l:o:p:MZ")) != -1) {
		switch (c) {
		case 'N': nops = atol(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'l': maxlen = strtoul(optarg, NULL, 0); break;
		case 'o': maxop = strtoul(optarg, NULL, 0); break;
		case 'p': every = atol(optarg); break;
		case 'M': no_mmap = 1; break;
		case 'Z': direct = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !maxlen || !maxop)
		usage();
	path = argv[optind];
	pagesize = sysconf(_SC_PAGESIZE);
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	good = calloc(1, maxlen + 1);
	buf = malloc(maxlen + 1);
	if (!good || !buf)
		return 1;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail(-1, "create %s: %s", path, strerror(errno));
	if (direct)
		dfd = open_file(O_DIRECT);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (opno = 1; opno <= nops; opno++) {
		one_op(counts);
		if (every && opno % every == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			s = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
			printf("fsx: %ld operations, %.0f/s, size %jd\n", opno,
			       opno / s, (intmax_t)size);
			report_times(counts);
			fflush(stdout);
		}
	}
	opno = nops;
	final_check("the final read");
	evict();
	final_check("the final read from the servers");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("fsx: %ld operations, 0 mismatches, %.1f s (%.0f/s), final size %jd:",
	       nops, s, nops / s, (intmax_t)size);
	for (i = 0; i < OP_NR; i++)
		if (counts[i])
			printf(" %ld %s", counts[i], op_names[i]);
	printf("\n");
	return 0;
}
