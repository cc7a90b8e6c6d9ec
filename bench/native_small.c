// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * native_small.c -- small accesses through the native API, opened again
 * and again, against a local file in the same run.
 *
 * P processes (forked, each with its own CLF_init) write and then read
 * n accesses of B bytes each, IOR's way (access i of process p at
 * (i * P + p) * B), with the client cache on (CLF_FCNTL_SETCACHE); each
 * round opens the file, writes, closes, opens it again, reads, closes,
 * as a program that opens its file per step does.  The same loop runs on
 * a local file with pwrite/pread.  Every read is checked.
 *
 *   native_small [bytes] [calls] [procs] [rounds]
 *
 * Defaults 47008 bytes (IOR's ior-hard transfer), 300 calls, 2 processes,
 * 5 rounds.  Prints microseconds per call, the median over rounds of the
 * slowest process's mean, and the ratio to the local file.
 * $CLF_CONFIG: a running instance (else one of its own, 2 iods);
 * $TMPDIR: where the local file goes.  2 processes at most on a 2-core
 * machine: more busy processes measure the scheduler.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "instance.h"

#define PROCS_MAX 16
#define ROUNDS_MAX 32

enum { WRITE, READ, NOPS };

struct shared {
	double us[ROUNDS_MAX][2][NOPS][PROCS_MAX];	/* [round][clf, ufs] */
	int failed;
};

struct child {
	int ready[2], go[2];	/* child -> parent, parent -> child */
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Every child at the same point: each says so, the parent lets all on. */
static void barrier(struct child *c)
{
	char b = 0;

	if (write(c->ready[1], &b, 1) != 1 || read(c->go[0], &b, 1) != 1)
		_exit(3);
}

struct io {
	bool clf;
	int fd;
};

static ssize_t at(struct io *io, void *buf, size_t len, int64_t off,
		  bool wr)
{
	if (!io->clf)
		return wr ? pwrite(io->fd, buf, len, off)
			  : pread(io->fd, buf, len, off);
	if (CLF_lseek(io->fd, off, SEEK_SET) != off)
		return -1;
	return wr ? CLF_write(io->fd, buf, len) : CLF_read(io->fd, buf, len);
}

static int open_io(struct io *io, const char *path, bool wr)
{
	int on = 1, flags = wr ? O_CREAT | O_RDWR : O_RDONLY;

	io->fd = io->clf ? CLF_open(path, flags, 0644)
			 : open(path, flags, 0644);
	if (io->fd < 0)
		return -1;
	if (io->clf && CLF_fcntl(io->fd, CLF_FCNTL_SETCACHE, &on) < 0)
		return -1;
	return 0;
}

/* One phase of one process: mean microseconds per call, or -1. */
static double phase(struct io *io, const char *path, bool wr, int64_t bytes,
		    int calls, int procs, int p, uint8_t *buf, uint8_t fill)
{
	double t0, t = 0;

	if (open_io(io, path, wr))
		return -1;
	for (int i = 0; i < calls; i++) {
		int64_t off = ((int64_t)i * procs + p) * bytes;

		if (wr)
			memset(buf, fill + i, bytes);
		t0 = now_us();
		if (at(io, buf, bytes, off, wr) != bytes)
			return -1;
		t += now_us() - t0;
		if (!wr && (buf[0] != (uint8_t)(fill + i) ||
			    buf[bytes - 1] != (uint8_t)(fill + i)))
			return -1;
	}
	if (io->clf ? CLF_close(io->fd) : close(io->fd))
		return -1;
	return t / calls;
}

static void run_child(struct shared *sh, struct child *c, int p, int procs,
		      int64_t bytes, int calls, int rounds, const char *ufs)
{
	uint8_t *buf = malloc(bytes);

	if (!buf || CLF_init(NULL))
		_exit(2);
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < 2; m++) {
			struct io io = { m == 0, -1 };
			const char *path = m == 0 ? "/native_small" : ufs;

			for (int op = 0; op < NOPS; op++) {
				barrier(c);
				sh->us[r][m][op][p] =
					phase(&io, path, op == WRITE, bytes,
					      calls, procs, p, buf,
					      (uint8_t)(r * 7 + p * 3));
				if (sh->us[r][m][op][p] < 0)
					sh->failed = 1;
			}
		}
	CLF_finalize();
	free(buf);
	_exit(0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median over rounds of the slowest process's mean. */
static double figure(const struct shared *sh, int rounds, int procs, int m,
		     int op)
{
	double v[ROUNDS_MAX];

	for (int r = 0; r < rounds; r++) {
		v[r] = 0;
		for (int p = 0; p < procs; p++)
			if (sh->us[r][m][op][p] > v[r])
				v[r] = sh->us[r][m][op][p];
	}
	qsort(v, rounds, sizeof(v[0]), cmp_double);
	return v[rounds / 2];
}

int main(int argc, char **argv)
{
	int64_t bytes = argc > 1 ? atoll(argv[1]) : 47008;
	int calls = argc > 2 ? atoi(argv[2]) : 300;
	int procs = argc > 3 ? atoi(argv[3]) : 2;
	int rounds = argc > 4 ? atoi(argv[4]) : 5;
	const char *running = getenv("CLF_CONFIG");
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct child ch[PROCS_MAX];
	struct instance in;
	struct shared *sh;
	char ufs[PATH_MAX];
	int steps, status, bad = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: native_small [bytes] [calls] [procs] [rounds]\n"
		       "  (47008, 300, 2, 5): per round, open, calls writes,\n"
		       "  close, open, calls reads, close, on clf and on a local file;\n"
		       "  $CLF_CONFIG: a running instance (else one of its own)\n");
		return 0;
	}
	if (bytes < 1 || bytes > (64 << 20) || calls < 1 || procs < 1 ||
	    procs > PROCS_MAX || rounds < 1 || rounds > ROUNDS_MAX) {
		fprintf(stderr, "native_small: bytes 1..64m, calls >= 1, procs 1..%d, rounds 1..%d (--help)\n",
			PROCS_MAX, ROUNDS_MAX);
		return 2;
	}
	if (!running || !*running) {
		if (instance_start(&in, 2, 60000, NULL)) {
			fprintf(stderr, "native_small: cannot start metad and iods (build them first: make)\n");
			return 1;
		}
		running = NULL;
	}
	snprintf(ufs, sizeof(ufs), "%s/native_small.%d", tmp, (int)getpid());
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("native_small: mmap");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	for (int p = 0; p < procs; p++) {
		if (pipe(ch[p].ready) || pipe(ch[p].go)) {
			perror("native_small: pipe");
			return 1;
		}
		if (fork() == 0)
			run_child(sh, &ch[p], p, procs, bytes, calls, rounds,
				  ufs);
	}
	steps = rounds * 2 * NOPS;
	for (int s = 0; s < steps && !bad; s++) {
		char b;

		for (int p = 0; p < procs && !bad; p++)
			bad = read(ch[p].ready[0], &b, 1) != 1;
		for (int p = 0; p < procs && !bad; p++)
			bad = write(ch[p].go[1], &b, 1) != 1;
	}
	for (int p = 0; p < procs; p++) {
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad = 1;
	}
	unlink(ufs);
	CLF_init(NULL);
	CLF_unlink("/native_small");
	CLF_finalize();
	if (!running)
		instance_stop(&in);
	if (bad || sh->failed) {
		fprintf(stderr, "native_small: a process failed (an access, a check or its exit)\n");
		return 1;
	}
	printf("%lld bytes x %d processes, %d calls, us per call (median of %d rounds, each opening the file again):\n",
	       (long long)bytes, procs, calls, rounds);
	printf("%-6s %12s %12s %10s\n", "op", "clf native", "ufs", "clf/ufs");
	for (int op = 0; op < NOPS; op++) {
		double c = figure(sh, rounds, procs, 0, op);
		double u = figure(sh, rounds, procs, 1, op);

		printf("%-6s %12.1f %12.1f %10.2f\n", op == WRITE ? "write" : "read",
		       c, u, c / u);
	}
	return 0;
}
