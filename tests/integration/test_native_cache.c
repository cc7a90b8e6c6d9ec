// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_cache.c -- small accesses kept at the client under the
 * iods' extent locks (client_cache, libclf/client/xcache.h), between two
 * processes that both cache, against real daemons: each sees the other's
 * acknowledged writes of the same and neighbouring bytes at once; a
 * holder that idles answers the revocation; a holder killed with its
 * bytes kept back loses them and holds nobody up; sync and close send
 * them; the cache's bound sends them; a revocation of one lock keeps
 * the bytes under the subfile's other locks; IOR's 47008-byte writes are
 * kept, and a sequential writer of them reuses the cache's buffers; a
 * reader going forward reads further ahead at each miss.
 *
 * The other process is a forked child with its own CLF_init, driven over
 * pipes, one command at a time.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "clock.h"
#include "instance.h"

#define MAXLEN 47008
#define LEASE_MS 2500		/* half the instance's timeout */

static struct instance inst;

enum op { OP_OPEN, OP_WRITE, OP_READ, OP_SYNC, OP_CLOSE, OP_CACHE };

struct cmd {
	enum op op;
	int64_t off, len;
	int fill;
	char path[32];
};

struct answer {
	int64_t result;
	uint8_t data[MAXLEN];
};

struct child {
	pid_t pid;
	int to, from;
	const char *path;
};

static char small_conf[PATH_MAX + 32], none_conf[PATH_MAX + 32];
static char big_conf[PATH_MAX + 32];

/* A copy of the configuration with its client_cache line replaced. */
static void conf_copy(char *dst, size_t cap, const char *suffix,
		      const char *cache_line)
{
	char line[512];
	FILE *in, *out;

	snprintf(dst, cap, "%s.%s", inst.conf, suffix);
	in = fopen(inst.conf, "r");
	out = fopen(dst, "w");
	ck_assert(out && fchmod(fileno(out), 0600) == 0);
	ck_assert(in && out);
	while (fgets(line, sizeof(line), in))
		fputs(strncmp(line, "client_cache", 12) ? line : cache_line, out);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
}

/* One instance for every test (each its own file), started once: a
 * start takes seconds on a loaded machine.  The bound's test reads a
 * copy of the configuration with a small client_cache. */
static void setup(void)
{
	int err = instance_start(&inst, 2, 5000, NULL);

	if (err == 77) {
		fprintf(stderr, "SKIP: daemons not built\n");
		exit(77);
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(instance_add_global(&inst, "client_cache = 1m"), 0);
	conf_copy(small_conf, sizeof(small_conf), "small", "client_cache = 4k\n");
	conf_copy(none_conf, sizeof(none_conf), "none", "client_cache = 0\n");
	conf_copy(big_conf, sizeof(big_conf), "big", "client_cache = 16m\n");
	/* Kept bytes go out at the bound, close, sync or a revocation
	 * only: not a second after (xcache.c), which a loaded machine
	 * could reach between a write and a kill. */
	setenv("CLF_TEST_CACHE_FLUSH_MS", "600000", 1);
}

static void teardown(void)
{
	instance_stop(&inst);
}

static int full(int fd, void *buf, size_t len, bool rd)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = rd ? read(fd, (char *)buf + done, len - done)
			       : write(fd, (char *)buf + done, len - done);

		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static int64_t pwr(int fd, const void *b, int64_t len, int64_t off)
{
	int64_t r = CLF_lseek(fd, off, SEEK_SET);

	return r < 0 ? r : CLF_write(fd, b, len);
}

static int64_t prd(int fd, void *b, int64_t len, int64_t off)
{
	int64_t r = CLF_lseek(fd, off, SEEK_SET);

	return r < 0 ? r : CLF_read(fd, b, len);
}

static int64_t run(int *fd, const struct cmd *c, struct answer *a)
{
	uint8_t buf[MAXLEN];

	switch (c->op) {
	case OP_OPEN:
		return *fd = CLF_open(c->path, O_CREAT | O_RDWR, 0644);
	case OP_WRITE:
		memset(buf, c->fill, c->len);
		return pwr(*fd, buf, c->len, c->off);
	case OP_READ:
		return prd(*fd, a->data, c->len, c->off);
	case OP_SYNC:
		return CLF_sync(*fd);
	case OP_CLOSE:
		return CLF_close(*fd);
	case OP_CACHE: {
		int on = c->fill, now = -1;
		int64_t r = CLF_fcntl(*fd, CLF_FCNTL_SETCACHE, &on);

		if (!r)
			r = CLF_fcntl(*fd, CLF_FCNTL_GETCACHE, &now);
		return r ? r : now;
	}
	}
	return -ENOSYS;
}

static void child_main(int in, int out)
{
	static struct answer a;
	struct cmd c;
	int fd = -1;

	if (CLF_init(NULL))
		_exit(10);
	while (full(in, &c, sizeof(c), true) == 0) {
		a.result = run(&fd, &c, &a);
		if (a.result < 0)
			fprintf(stderr, "child: %s\n", CLF_Last_error());
		if (full(out, &a, sizeof(a), false))
			_exit(11);
	}
	CLF_finalize();
	_exit(0);
}

/* Fork the other process first: it must not inherit our client. */
static struct child child_start(void)
{
	int to[2], from[2];
	struct child ch;

	ck_assert_int_eq(pipe(to), 0);
	ck_assert_int_eq(pipe(from), 0);
	ch.pid = fork();
	ck_assert_int_ge(ch.pid, 0);
	if (ch.pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ch.to = to[1];
	ch.from = from[0];
	return ch;
}

static struct answer *child_do(struct child *ch, enum op op, int64_t off,
			       int64_t len, int fill)
{
	static struct answer a;
	struct cmd c = { op, off, len, fill, "" };

	snprintf(c.path, sizeof(c.path), "%s", ch->path);
	ck_assert_int_eq(full(ch->to, &c, sizeof(c), false), 0);
	ck_assert_int_eq(full(ch->from, &a, sizeof(a), true), 0);
	return &a;
}

static void child_stop(struct child *ch)
{
	int status;

	close(ch->to);
	close(ch->from);
	ck_assert_int_eq(waitpid(ch->pid, &status, 0), ch->pid);
}

static void child_kill(struct child *ch)
{
	int status;

	kill(ch->pid, SIGKILL);
	ck_assert_int_eq(waitpid(ch->pid, &status, 0), ch->pid);
	close(ch->to);
	close(ch->from);
}

/* Both processes with path open; we write it whole first. */
static struct child pair(const char *path, int *fd, int64_t size)
{
	static uint8_t zero[4 * MAXLEN];
	struct child ch = child_start();

	ch.path = path;
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	*fd = CLF_open(path, O_CREAT | O_RDWR, 0644);
	ck_assert_msg(*fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(pwr(*fd, zero, size, 0), size);
	ck_assert_int_eq(CLF_sync(*fd), 0);
	ck_assert_int_ge(child_do(&ch, OP_OPEN, 0, 0, 0)->result, 0);
	return ch;
}

static void expect(const uint8_t *b, int64_t len, int fill, const char *what)
{
	for (int64_t i = 0; i < len; i++)
		if (b[i] != fill)
			ck_abort_msg("%s: byte %lld is %d, not %d", what,
				     (long long)i, b[i], fill);
}

static void our_read(int fd, int64_t off, int64_t len, int fill,
		     const char *what)
{
	static uint8_t b[MAXLEN];

	ck_assert_int_eq(prd(fd, b, len, off), len);
	expect(b, len, fill, what);
}

static void our_write(int fd, int64_t off, int64_t len, int fill)
{
	static uint8_t b[MAXLEN];

	memset(b, fill, len);
	ck_assert_int_eq(pwr(fd, b, len, off), len);
}

static void their_read(struct child *ch, int64_t off, int64_t len, int fill,
		       const char *what)
{
	struct answer *a = child_do(ch, OP_READ, off, len, 0);

	ck_assert_int_eq(a->result, len);
	expect(a->data, len, fill, what);
}

/*
 * IOR's segments of 2 processes, blocks [from, to) of b bytes in turn:
 * ours at the even ones (block k at 2 k b, filled 1 + k % 50), theirs at
 * the odd ones (filled 100 + k % 50).
 */
static void write_blocks(int fd, struct child *ch, int64_t b, int from, int to)
{
	for (int k = from; k < to; k++) {
		our_write(fd, 2 * b * k, b, 1 + k % 50);
		ck_assert_int_eq(child_do(ch, OP_WRITE, 2 * b * k + b, b,
					  100 + k % 50)->result, b);
	}
}

/* Same and neighbouring bytes, 1 KiB and 47008-byte accesses, in turn:
 * every read sees the write acknowledged before it, from either side. */
START_TEST(test_interleaved_small_writes_are_seen_by_the_other_process)
{
	int64_t sizes[] = { 1024, MAXLEN };
	int fd;
	struct child ch = pair("/interleaved", &fd, 4 * MAXLEN);

	for (int s = 0; s < 2; s++) {
		int64_t n = sizes[s];

		for (int k = 0; k < 6; k++) {
			int64_t off = k * n;
			int a = 1 + 4 * k + s, b = a + 1, c = a + 2;

			ck_assert_int_eq(child_do(&ch, OP_WRITE, off, n, a)->result, n);
			our_read(fd, off, n, a, "their write");
			our_write(fd, off + n, n, b);	/* the neighbour */
			their_read(&ch, off + n, n, b, "our neighbouring write");
			their_read(&ch, off, n, a, "their own write");
			our_write(fd, off, n, c);	/* the same bytes */
			their_read(&ch, off, n, c, "our write over theirs");
			our_read(fd, off + n, n, b, "our own write");
		}
	}
	ck_assert_int_eq(child_do(&ch, OP_CLOSE, 0, 0, 0)->result, 0);
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* The child keeps its write back and waits for its next command: its
 * cache's thread answers our read's revocation, well within the lease. */
START_TEST(test_an_idle_holder_answers_the_revocation)
{
	int fd;
	struct child ch = pair("/idle", &fd, 8192);
	int64_t t0;

	ck_assert_int_eq(child_do(&ch, OP_WRITE, 1000, 1024, 7)->result, 1024);
	t0 = clf_now_ms();
	our_read(fd, 1000, 1024, 7, "an idle holder's write");
	ck_assert_msg(clf_now_ms() - t0 < LEASE_MS,
		      "the read waited %lld ms: the holder was evicted, not asked",
		      (long long)(clf_now_ms() - t0));
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* A holder killed with its write kept back: the write is lost (the
 * process died before anyone saw it), and nobody waits for it. */
START_TEST(test_a_killed_holder_loses_its_kept_bytes_and_holds_nobody_up)
{
	int fd;
	struct child ch = pair("/killed", &fd, 8192);
	int64_t t0;

	ck_assert_int_eq(child_do(&ch, OP_WRITE, 0, 1024, 9)->result, 1024);
	child_kill(&ch);
	t0 = clf_now_ms();
	our_read(fd, 0, 1024, 0, "a killed holder's unsent write");
	our_write(fd, 0, 1024, 3);
	our_read(fd, 0, 1024, 3, "our write after the kill");
	ck_assert_msg(clf_now_ms() - t0 < 2 * LEASE_MS, "waited %lld ms",
		      (long long)(clf_now_ms() - t0));
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* CLF_sync and CLF_close send the kept bytes: a kill after them loses
 * nothing. */
START_TEST(test_sync_and_close_send_the_kept_bytes)
{
	int fd;
	struct child ch = pair("/synced", &fd, 8192);

	ck_assert_int_eq(child_do(&ch, OP_WRITE, 0, 1024, 5)->result, 1024);
	ck_assert_int_eq(child_do(&ch, OP_SYNC, 0, 0, 0)->result, 0);
	ck_assert_int_eq(child_do(&ch, OP_WRITE, 4096, 1024, 6)->result, 1024);
	ck_assert_int_eq(child_do(&ch, OP_CLOSE, 0, 0, 0)->result, 0);
	child_kill(&ch);
	our_read(fd, 0, 1024, 5, "a synced write");
	our_read(fd, 4096, 1024, 6, "a write before close");
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* client_cache = 4k: the fifth 1 KiB write goes over it and sends all
 * five; the three after it are kept, and die with the process. */
START_TEST(test_the_bound_sends_the_kept_bytes)
{
	int fd;
	struct child ch;

	setenv("CLF_CONFIG", small_conf, 1);
	ch = pair("/bound", &fd, 8192);

	for (int k = 0; k < 8; k++)
		ck_assert_int_eq(child_do(&ch, OP_WRITE, k * 1024, 1024,
					  k + 1)->result, 1024);
	child_kill(&ch);
	for (int k = 0; k < 8; k++)
		our_read(fd, k * 1024, 1024, k < 5 ? k + 1 : 0,
			 k < 5 ? "a write sent at the bound"
			       : "a write kept under the bound");
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* client_cache = 0 in clf.conf, CLF_FCNTL_SETCACHE on for one
 * descriptor (the clf_client_cache hint): the child's write is kept
 * back, so its kill loses it. */
START_TEST(test_setcache_turns_the_cache_on_for_one_descriptor)
{
	int fd;
	struct child ch;

	setenv("CLF_CONFIG", none_conf, 1);
	ch = pair("/on", &fd, 8192);
	ck_assert_int_eq(child_do(&ch, OP_CACHE, 0, 0, 1)->result, 1);
	ck_assert_int_eq(child_do(&ch, OP_WRITE, 0, 1024, 4)->result, 1024);
	child_kill(&ch);
	our_read(fd, 0, 1024, 0, "a write kept by a descriptor's cache");
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* client_cache = 1m, the cache turned off: what was kept goes out at
 * once, and later writes are not kept. */
START_TEST(test_setcache_off_sends_what_was_kept_and_keeps_nothing_more)
{
	int fd, bad = 2;
	struct child ch = pair("/off", &fd, 8192);

	ck_assert_int_eq(child_do(&ch, OP_WRITE, 0, 1024, 5)->result, 1024);
	ck_assert_int_eq(child_do(&ch, OP_CACHE, 0, 0, 0)->result, 0);
	ck_assert_int_eq(child_do(&ch, OP_WRITE, 4096, 1024, 6)->result, 1024);
	child_kill(&ch);
	our_read(fd, 0, 1024, 5, "a write kept before the cache went off");
	our_read(fd, 4096, 1024, 6, "a write after the cache went off");
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETCACHE, &bad), -EINVAL);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* Requests the iods served so far (clf status --json); ours counts
 * one more each time, the same in every sample. */
/* The iods' count of what (a key of clf status --json), summed. */
static long iod_count(const char *what)
{
	const char *o = getenv("CLF_BUILD_DIR");
	char cmd[3 * PATH_MAX];
	long n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "%s/tools/clf -c %s status --json | python3 -c '"
		 "import json, sys\n"
		 "print(sum(d[\"%s\"] for d in json.load(sys.stdin)"
		 "[\"daemons\"] if d[\"role\"] == \"iod\"))'",
		 o ? o : "build", inst.conf, what);
	p = popen(cmd, "r");
	ck_assert(p);
	ck_assert_int_eq(fscanf(p, "%ld", &n), 1);
	ck_assert_int_eq(pclose(p), 0);
	return n;
}

static long iod_requests(void)
{
	return iod_count("requests");
}

/*
 * We hold locks on two ranges of subfile 0 (stripe_size 64k over 2
 * iods: file offset 2 * S is subfile 0's offset S), [0, 2M) and from
 * 3M, with bytes read and written kept under the first; the child's
 * write at 5M revokes the second.  The bytes under the first are still
 * ours: read again, they cost no request at all, and our kept write
 * still reaches the child.
 */
START_TEST(test_a_revocation_keeps_the_bytes_under_the_other_locks)
{
	const int64_t M = 1 << 20;
	int fd;
	struct child ch = pair("/ranges", &fd, 8192);
	long idle, before, after;

	ck_assert_int_eq(CLF_ftruncate(fd, 12 * M), 0);
	our_read(fd, 0, 1024, 0, "the first range");	/* [0, EOF) */
	/* Their write at 2M takes [2M, 3M): ours goes. */
	ck_assert_int_eq(child_do(&ch, OP_WRITE, 2 * 2 * M, 1024, 3)->result, 1024);
	our_read(fd, 0, 1024, 0, "the first range");	/* [0, 2M) */
	our_write(fd, 2 * M, 1024, 8);			/* at 1M, kept */
	our_read(fd, 2 * 4 * M, 1024, 0, "the second range"); /* [3M, EOF) */
	ck_assert_int_eq(child_do(&ch, OP_WRITE, 2 * 5 * M, 1024, 4)->result, 1024);
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	our_read(fd, 0, 1024, 0, "the first range again");
	our_read(fd, 2048, 1024, 0, "the first range's read-ahead");
	our_read(fd, 2 * M, 1024, 8, "our kept write");
	after = iod_requests();
	ck_assert_msg(after - before == idle,
		      "reading kept bytes again cost %ld requests",
		      after - before - idle);
	our_read(fd, 2 * 5 * M, 1024, 4, "their write in the second range");
	their_read(&ch, 2 * M, 1024, 8, "our write, kept until they read");
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * IOR's 47008-byte transfers (issue 15): once this process holds the
 * locks of both subfiles, a write of 47008 bytes costs no request at
 * all (it was sent to the iods before, being over 16 KiB), and the
 * other process still reads it at once.
 */
START_TEST(test_47008_byte_writes_are_kept_under_the_locks)
{
	int fd;
	struct child ch = pair("/big", &fd, 8192);
	long idle, before, after;

	our_write(fd, 0, MAXLEN, 1);		/* subfile 0 */
	our_write(fd, MAXLEN, MAXLEN, 2);	/* subfiles 0 and 1 */
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	our_write(fd, 2 * MAXLEN, MAXLEN, 3);
	after = iod_requests();
	ck_assert_msg(after - before == idle,
		      "a 47008-byte write under our locks cost %ld requests",
		      after - before - idle);
	their_read(&ch, 2 * MAXLEN, MAXLEN, 3, "our kept 47008-byte write");
	their_read(&ch, 0, MAXLEN, 1, "our first 47008-byte write");
	our_read(fd, MAXLEN, MAXLEN, 2, "our own second write");
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* Minor page faults of this process so far. */
static long minor_faults(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/*
 * One process writes 48 MiB in 47008-byte blocks one after the other
 * (IOR's ior-hard shape at one process), client_cache = 16m: after the
 * first 16 MiB the cache's buffers come back from its pool at each flush
 * of the bound, with no page to map again.  Its one extent grew by
 * doubling to the bound instead, past the pool's classes, and the pool
 * freed what went over the bound: 8,208 faults for the last 32 MiB
 * (8,192 pages), and in mpi_small 250 us a write where a local file
 * takes 9.  Every block is checked after.
 */
START_TEST(test_a_sequential_writer_reuses_the_cache_buffers)
{
	const int per_round = (16 << 20) / MAXLEN + 1, rounds = 3;
	long faults = 0;
	int fd;

	setenv("CLF_CONFIG", big_conf, 1);
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	fd = CLF_open("/sequential", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	for (int r = 0; r < rounds; r++) {
		long before = minor_faults();

		for (int k = r * per_round; k < (r + 1) * per_round; k++)
			our_write(fd, (int64_t)k * MAXLEN, MAXLEN, k % 251 + 1);
		/* The first round maps the pool's buffers. */
		if (r > 0)
			faults += minor_faults() - before;
	}
	/* Under half a fault for each page written: no buffer mapped
	 * again, what a sanitizer's allocator maps for the requests aside
	 * (ASan: ~1,200 a round, this build ~0). */
	ck_assert_msg(faults < (rounds - 1) * (16 << 20) / 4096 / 2,
		      "writing %d x 16 MiB more took %ld page faults",
		      rounds - 1, faults);
	ck_assert_int_eq(CLF_close(fd), 0);
	fd = CLF_open("/sequential", O_RDONLY);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	for (int k = 0; k < rounds * per_round; k++)
		our_read(fd, (int64_t)k * MAXLEN, MAXLEN, k % 251 + 1,
			 "a sequential 47008-byte write");
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * Each of several opens writes 8 MiB in 47008-byte blocks one after the
 * other and reads them back, client_cache = 16m: after the first open
 * the cache's buffers come back from its pool, kept across the closes.
 * The pool was given back at the last close, and glibc gave the heap's
 * top back to the kernel: every open mapped its buffers and reached each
 * page again (~25 us a page on a virtual machine), 200-290 us a write
 * and 180-250 a read where a local file takes 9 and 7.  Every block is
 * checked.
 */
START_TEST(test_a_file_opened_again_reuses_the_cache_buffers)
{
	const int blocks = (8 << 20) / MAXLEN + 1, opens = 4;
	long faults = 0;

	setenv("CLF_CONFIG", big_conf, 1);
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	for (int r = 0; r < opens; r++) {
		long before = minor_faults();
		int fd = CLF_open("/reopened", O_CREAT | O_RDWR, 0644);

		ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
		for (int k = 0; k < blocks; k++)
			our_write(fd, (int64_t)k * MAXLEN, MAXLEN,
				  (k + r) % 251 + 1);
		ck_assert_int_eq(CLF_close(fd), 0);
		fd = CLF_open("/reopened", O_RDONLY);
		ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
		for (int k = 0; k < blocks; k++)
			our_read(fd, (int64_t)k * MAXLEN, MAXLEN,
				 (k + r) % 251 + 1, "a block written at this open");
		ck_assert_int_eq(CLF_close(fd), 0);
		/* The first open maps the pool's buffers. */
		if (r > 0)
			faults += minor_faults() - before;
	}
	/* Under half a fault for each page written and read again, what a
	 * sanitizer's allocator maps for the requests aside. */
	ck_assert_msg(faults < (opens - 1) * 2 * (8 << 20) / 4096 / 2,
		      "%d more opens writing and reading 8 MiB took %ld page faults",
		      opens - 1, faults);
	CLF_finalize();
}
END_TEST

/*
 * 1 KiB reads going forward over 2 MiB (1 MiB of each subfile), with
 * client_cache = 16m: each miss of a subfile reads twice as far ahead as
 * the one before, up to 1 MiB, so the whole costs a lock and about five
 * reads per iod.  With 64 KiB windows it cost 34 requests.
 */
START_TEST(test_a_forward_reader_reads_further_ahead_at_each_miss)
{
	const int64_t M = 1 << 20;
	int fd;
	struct child ch;
	long idle, before, after;

	setenv("CLF_CONFIG", big_conf, 1);
	ch = pair("/forward", &fd, 8192);
	ck_assert_int_eq(CLF_ftruncate(fd, 2 * M), 0);
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	for (int64_t off = 0; off < 2 * M; off += 1024)
		our_read(fd, off, 1024, 0, "a forward read");
	after = iod_requests();
	ck_assert_msg(after - before - idle <= 14,
		      "reading 2 MiB forward cost %ld requests",
		      after - before - idle);
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * Two processes each writing their own region (IOR's -b 1m): ours from
 * 0, theirs from 512 KiB of subfile 0 (file offset 1 MiB).  Their first
 * write takes back only the part of our lock from 512 KiB up (the iod
 * shrinks it), so our next write below costs no request at all; the
 * whole lock went before, and ours then took theirs back.
 */
START_TEST(test_a_neighbours_write_leaves_us_our_part_of_the_lock)
{
	const int64_t M = 1 << 20;
	int fd;
	struct child ch = pair("/regions", &fd, 8192);
	long idle, before, after;

	our_write(fd, 0, 1024, 1);		/* subfile 0: [0, EOF) */
	ck_assert_int_eq(child_do(&ch, OP_WRITE, M, 1024, 2)->result, 1024);
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	our_write(fd, 4096, 1024, 3);		/* subfile 0 at 4 KiB */
	after = iod_requests();
	ck_assert_msg(after - before == idle,
		      "a write below the neighbour's region cost %ld requests",
		      after - before - idle);
	their_read(&ch, 0, 1024, 1, "our first write");
	their_read(&ch, 4096, 1024, 3, "our write under the shrunk lock");
	our_read(fd, M, 1024, 2, "their write");
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * IOR's interleaved 1 KiB writes (issue 15): ours at every even KiB of
 * subfile 0, theirs at every odd one.  After a few writes each of us
 * asks for a strided lock over its own blocks (protocol 1.26), and then
 * neither takes the other's: 24 more writes on each side (all in the
 * first 64 KiB stripe) cost no request at all.  With plain locks every write of one took the lock
 * of the other.  Then each reads the other's bytes.
 */
START_TEST(test_interleaving_writers_settle_on_strided_locks)
{
	int fd;
	struct child ch = pair("/strided", &fd, 8192);
	long idle, before, after;
	int k;

	write_blocks(fd, &ch, 1024, 0, 8);
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	write_blocks(fd, &ch, 1024, 8, 32);
	after = iod_requests();
	ck_assert_msg(after - before == idle,
		      "24 interleaved writes each cost %ld requests",
		      after - before - idle);
	for (k = 0; k < 32; k++) {
		their_read(&ch, 2048 * k, 1024, 1 + k % 50, "our write");
		our_read(fd, 2048 * k + 1024, 1024, 100 + k % 50, "their write");
	}
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * IOR's 47008-byte segments over the instance's 64 KiB stripes (issue
 * 15): ours are blocks 0, 2, 4... of the file, theirs 1, 3, 5...  No
 * stride of a subfile describes them (each subfile holds pieces of
 * changing sizes of both), but one of the file does: after a few
 * writes each asks for locks strided in the file's bytes (protocol
 * 1.27) and neither takes the other's: 12 more writes on each side cost
 * no request at all.  With locks strided in a subfile only, they passed
 * their locks back and forth, then went lockless (a request per write).
 * Then each reads the other's blocks.
 */
START_TEST(test_interleaving_47008_byte_writers_settle_on_file_strided_locks)
{
	const int64_t B = MAXLEN;
	int fd, k;
	struct child ch;
	long idle, before, after;

	setenv("CLF_CONFIG", big_conf, 1);
	ch = pair("/fstrided", &fd, 8192);
	write_blocks(fd, &ch, B, 0, 8);
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	write_blocks(fd, &ch, B, 8, 20);
	after = iod_requests();
	ck_assert_msg(after - before == idle,
		      "12 interleaved 47008-byte writes each cost %ld requests",
		      after - before - idle);
	for (k = 0; k < 20; k++) {
		their_read(&ch, 2 * B * k, B, 1 + k % 50, "our block");
		our_read(fd, 2 * B * k + B, B, 100 + k % 50, "their block");
	}
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * IOR's 47008-byte segments read back: ours are blocks 0, 2, 4... of the
 * file, theirs 1, 3, 5...  After a few reads ours go at a stride in the
 * file, and each miss then reads exactly the pieces of our next blocks
 * (one vector request per iod): reading 80 of our blocks moves them, the
 * first misses' windows and at most one read-ahead (1 MiB) more from the
 * iods.  Windows around every miss moved theirs as well: twice the bytes.
 */
START_TEST(test_a_strided_reader_reads_ahead_only_its_own_blocks)
{
	const int64_t B = MAXLEN, M = 1 << 20, N = 80;
	int fd, k;
	struct child ch;
	long before, moved;

	setenv("CLF_CONFIG", big_conf, 1);
	ch = pair("/ownra", &fd, 8192);
	write_blocks(fd, &ch, B, 0, N);
	ck_assert_int_eq(child_do(&ch, OP_SYNC, 0, 0, 0)->result, 0);
	ck_assert_int_eq(CLF_close(fd), 0);	/* nothing of ours kept */
	fd = CLF_open("/ownra", O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	before = iod_count("bytes_read");
	for (k = 0; k < N; k++)
		our_read(fd, 2 * B * k, B, 1 + k % 50, "our block");
	moved = iod_count("bytes_read") - before;
	ck_assert_msg(moved <= N * B + M + M / 2,
		      "reading %lld bytes of our blocks moved %ld",
		      (long long)(N * B), moved);
	for (k = 0; k < N; k += 7)
		our_read(fd, 2 * B * k + B, B, 100 + k % 50, "their block");
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/*
 * Two processes interleaving writes of changing sizes, no stride (a
 * record each, of its own length, one after the other's): no lock of
 * either can cover the next write without the other's, so with locks
 * every write would revoke the other's lock and wait for its flush.  A
 * subfile whose locks keep being revoked before they serve anything
 * goes lockless for a while (xcache.c, THRASH_REVOKES): past the first
 * writes, at most two requests per write.  Then each reads the other's.
 */
START_TEST(test_writers_that_keep_taking_each_others_locks_go_lockless)
{
	int fd;
	struct child ch = pair("/records", &fd, 8192);
	long idle, before, after;
	int64_t at = 0, offs[80], lens[80];
	int k;

	for (k = 0; k < 80; k++) {
		offs[k] = at;
		lens[k] = 700 + (k * 37) % 900;
		at += lens[k];
	}
	for (k = 0; k < 40; k += 2) {
		our_write(fd, offs[k], lens[k], 1 + k);
		ck_assert_int_eq(child_do(&ch, OP_WRITE, offs[k + 1], lens[k + 1],
					  2 + k)->result, lens[k + 1]);
	}
	before = iod_requests();
	idle = iod_requests() - before;
	before = iod_requests();
	for (; k < 80; k += 2) {
		our_write(fd, offs[k], lens[k], 1 + k);
		ck_assert_int_eq(child_do(&ch, OP_WRITE, offs[k + 1], lens[k + 1],
					  2 + k)->result, lens[k + 1]);
	}
	after = iod_requests();
	ck_assert_msg(after - before - idle <= 2 * 40,
		      "40 interleaved record writes cost %ld requests",
		      after - before - idle);
	for (k = 0; k < 80; k += 2) {
		their_read(&ch, offs[k], lens[k], 1 + k, "our record");
		our_read(fd, offs[k + 1], lens[k + 1], 2 + k, "their record");
	}
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

/* The model of the changing-patterns test: what the file must hold. */
#define MIXED_SPAN (256 * 1024)
static uint8_t mixed_model[MIXED_SPAN];

/* One write of len bytes of fill at off, by us or the child. */
static void mixed_write(struct child *ch, int fd, bool ours, int64_t off,
			int64_t len, int fill)
{
	if (ours)
		our_write(fd, off, len, fill);
	else
		ck_assert_int_eq(child_do(ch, OP_WRITE, off, len, fill)->result,
				 len);
	memset(mixed_model + off, fill, len);
}

/* Read [off, off + len) on either side and hold it against the model. */
static void mixed_check(struct child *ch, int fd, bool ours, int64_t off,
			int64_t len, int step)
{
	static uint8_t b[MAXLEN];
	const uint8_t *got = b;

	if (ours) {
		ck_assert_int_eq(prd(fd, b, len, off), len);
	} else {
		struct answer *a = child_do(ch, OP_READ, off, len, 0);

		ck_assert_int_eq(a->result, len);
		got = a->data;
	}
	for (int64_t i = 0; i < len; i++)
		if (got[i] != mixed_model[off + i])
			ck_abort_msg("step %d, %s read: byte %lld is %d, not %d",
				     step, ours ? "our" : "their",
				     (long long)(off + i), got[i],
				     mixed_model[off + i]);
}

/*
 * Interleaved strided runs of both sides (which make each ask for
 * strided locks, of several strides, blocks and phases), plain writes
 * across them and reads, in a pseudo-random turn over four stripes:
 * every read
 * sees what the last write put there, whichever side wrote it and
 * whatever locks each held (shapes that interleave, meet, or shrink).
 */
START_TEST(test_changing_patterns_keep_every_byte_where_the_last_write_put_it)
{
	static const int64_t strides[] = { 2048, 3072, 4096, 1536 };
	static const int64_t blocks[] = { 1024, 512, 1000 };
	unsigned seed = 15;
	int fd;
	struct child ch = pair("/mixed", &fd, 8192);

	ck_assert_int_eq(CLF_ftruncate(fd, MIXED_SPAN), 0);
	memset(mixed_model, 0, sizeof(mixed_model));
	for (int step = 0; step < 160; step++) {
		bool ours = rand_r(&seed) % 2;
		int kind = rand_r(&seed) % 4, fill = 1 + step % 250;

		if (kind < 2 && step % 3 == 2)
			kind = 2;	/* fewer runs: each is 16 writes */

		if (kind < 2) {
			/* Both sides in turn, each in its own blocks of
			 * one stride (IOR's pattern): strided locks. */
			int64_t stride = strides[rand_r(&seed) % 4];
			int64_t block = blocks[rand_r(&seed) % 3];
			int64_t off = rand_r(&seed) % (MIXED_SPAN - 9 * stride);

			for (int k = 0; k < 8; k++) {
				mixed_write(&ch, fd, ours, off + k * stride,
					    block, fill);
				mixed_write(&ch, fd, !ours,
					    off + k * stride + stride / 2,
					    block, fill + 1);
			}
		} else if (kind == 2) {
			int64_t len = 1 + rand_r(&seed) % 8192;

			mixed_write(&ch, fd, ours,
				    rand_r(&seed) % (MIXED_SPAN - len), len,
				    fill);
		} else {
			int64_t len = 1 + rand_r(&seed) % 16384;

			mixed_check(&ch, fd, ours,
				    rand_r(&seed) % (MIXED_SPAN - len), len,
				    step);
		}
	}
	for (int64_t off = 0; off < MIXED_SPAN; off += 32768) {
		mixed_check(&ch, fd, true, off, 32768, -1);
		mixed_check(&ch, fd, false, off, 32768, -1);
	}
	child_stop(&ch);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_finalize();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("native_cache");
	TCase *tc = tcase_create("cache");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_interleaved_small_writes_are_seen_by_the_other_process);
	tcase_add_test(tc, test_an_idle_holder_answers_the_revocation);
	tcase_add_test(tc, test_a_killed_holder_loses_its_kept_bytes_and_holds_nobody_up);
	tcase_add_test(tc, test_sync_and_close_send_the_kept_bytes);
	tcase_add_test(tc, test_the_bound_sends_the_kept_bytes);
	tcase_add_test(tc, test_setcache_turns_the_cache_on_for_one_descriptor);
	tcase_add_test(tc, test_setcache_off_sends_what_was_kept_and_keeps_nothing_more);
	tcase_add_test(tc, test_a_revocation_keeps_the_bytes_under_the_other_locks);
	tcase_add_test(tc, test_47008_byte_writes_are_kept_under_the_locks);
	tcase_add_test(tc, test_a_sequential_writer_reuses_the_cache_buffers);
	tcase_add_test(tc, test_a_file_opened_again_reuses_the_cache_buffers);
	tcase_add_test(tc, test_a_forward_reader_reads_further_ahead_at_each_miss);
	tcase_add_test(tc, test_a_neighbours_write_leaves_us_our_part_of_the_lock);
	tcase_add_test(tc, test_interleaving_writers_settle_on_strided_locks);
	tcase_add_test(tc, test_interleaving_47008_byte_writers_settle_on_file_strided_locks);
	tcase_add_test(tc, test_a_strided_reader_reads_ahead_only_its_own_blocks);
	tcase_add_test(tc, test_changing_patterns_keep_every_byte_where_the_last_write_put_it);
	tcase_add_test(tc, test_writers_that_keep_taking_each_others_locks_go_lockless);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
