// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_crash.c -- kill -9 a process in the middle of changing a store
 * and check what survives.
 *
 * A child runs a deterministic workload (op_of) on a fresh store and,
 * after each operation returns 0, writes the operation's number to a
 * pipe.  The parent kills it at a random moment, reads every
 * acknowledgement that reached the pipe, reopens the store and demands:
 * the invariants hold (mds_store_verify), and the tree is exactly the
 * tree after the acknowledged operations, or after those and the one in
 * flight -- never anything in between, never less.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "mds_test.h"

#define ROUNDS 8
#define MAX_OPS 100000
#define MAX_ACKS 80		/* the most acks the parent waits for */
#define PATH_LEN 64

enum op_kind { OP_MKDIR, OP_CREATE, OP_RENAME, OP_UNLINK };

struct op {
	enum op_kind kind;
	char dir[PATH_LEN];	/* OP_RENAME: the target directory */
	char name[PATH_LEN];	/* in the root */
	char to[PATH_LEN];	/* OP_RENAME: the new name in dir */
	bool layout;		/* OP_CREATE: with a layout */
};

/*
 * Operation k: every 8th a directory d<k>; k = 3 mod 4 moves f<k-1>
 * (a file made by op k-1) into the latest directory as g<k-1>;
 * k = 5 mod 16 unlinks f<k-4> (made by op k-4, never moved); the rest
 * create f<k>, every third with a layout.
 */
static void op_of(uint32_t k, struct op *op)
{
	memset(op, 0, sizeof(*op));
	if (k % 8 == 0) {
		op->kind = OP_MKDIR;
		snprintf(op->name, PATH_LEN, "d%u", k);
	} else if (k % 4 == 3) {
		op->kind = OP_RENAME;
		snprintf(op->name, PATH_LEN, "f%u", k - 1);
		snprintf(op->dir, PATH_LEN, "d%u", k & ~7u);
		snprintf(op->to, PATH_LEN, "g%u", k - 1);
	} else if (k % 16 == 5) {
		op->kind = OP_UNLINK;
		snprintf(op->name, PATH_LEN, "f%u", k - 4);
	} else {
		op->kind = OP_CREATE;
		snprintf(op->name, PATH_LEN, "f%u", k);
		op->layout = k % 3 == 0;
	}
}

/* ---- the child ---- */

static int run_op(struct mds_store *st, const struct op *op,
		  const struct mds_layout *l)
{
	struct mds_attr a;
	char path[PATH_LEN + 1];

	switch (op->kind) {
	case OP_MKDIR:
		return mds_mkdir(st, MDS_ROOT_INO, op->name, 0755, 0, 0, &a);
	case OP_CREATE:
		return mds_create(st, MDS_ROOT_INO, op->name, 0644, 0, 0,
				  op->layout ? l : NULL, &a);
	case OP_UNLINK:
		return mds_unlink(st, MDS_ROOT_INO, op->name, NULL);
	case OP_RENAME:
		snprintf(path, sizeof(path), "/%s", op->dir);
		if (mds_resolve(st, MDS_ROOT_INO, path, &a, NULL))
			return -1;
		return mds_rename(st, MDS_ROOT_INO, op->name, a.ino, op->to,
				  0, NULL);
	}
	return -1;
}

/* Never returns; no Check calls here, this is not the test process. */
static __attribute__((noreturn)) void child(const char *dir, int ack_fd)
{
	struct mds_layout *l = NULL;
	struct mds_store *st;
	struct op op;

	if (mds_layout_round_robin(65536, 4, 0, 4, &l) ||
	    mds_store_open(dir, &st)) {
		fprintf(stderr, "child: %s\n", CLF_Last_error());
		_exit(2);
	}
	for (uint32_t k = 0; k < MAX_OPS; k++) {
		op_of(k, &op);
		if (run_op(st, &op, l)) {
			fprintf(stderr, "child: op %u: %s\n", k,
				CLF_Last_error());
			_exit(3);
		}
		if (write(ack_fd, &k, sizeof(k)) != sizeof(k))
			_exit(4);
	}
	_exit(5);
}

/* ---- the model and the check ---- */

/* A tree as sorted lines "path kind", kind F (file), L (file with a
 * layout) or D. */
struct tree {
	char (*line)[2 * PATH_LEN + 4];
	size_t n, cap;
};

static void tree_add(struct tree *t, const char *path, char kind)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->line = realloc(t->line, t->cap * sizeof(*t->line));
		ck_assert_ptr_nonnull(t->line);
	}
	snprintf(t->line[t->n++], sizeof(*t->line), "%s %c", path, kind);
}

/* Remove the line of path; returns its kind. */
static char tree_del(struct tree *t, const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < t->n; i++) {
		if (!strncmp(t->line[i], path, len) && t->line[i][len] == ' ') {
			char kind = t->line[i][len + 1];

			memcpy(t->line[i], t->line[--t->n], sizeof(*t->line));
			return kind;
		}
	}
	ck_abort_msg("model: no %s", path);
	return 0;
}

static void model_apply(struct tree *t, const struct op *op)
{
	char path[2 * PATH_LEN + 2];

	switch (op->kind) {
	case OP_MKDIR:
		tree_add(t, op->name, 'D');
		break;
	case OP_CREATE:
		tree_add(t, op->name, op->layout ? 'L' : 'F');
		break;
	case OP_UNLINK:
		tree_del(t, op->name);
		break;
	case OP_RENAME:
		snprintf(path, sizeof(path), "%s/%s", op->dir, op->to);
		tree_add(t, path, tree_del(t, op->name));
		break;
	}
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void tree_sort(struct tree *t)
{
	if (t->n)
		qsort(t->line, t->n, sizeof(*t->line), cmp_line);
}

static bool tree_equal(const struct tree *a, const struct tree *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->line[i], b->line[i]))
			return false;
	return true;
}

/* What the store holds under directory d (path prefix), into t. */
static void tree_read(struct mds_store *st, uint64_t d, const char *prefix,
		      struct tree *t)
{
	struct mds_dirent ents[16];
	uint64_t cookie = 0;
	bool eof = false;

	while (!eof) {
		int n = mds_readdir(st, d, cookie, ents, 16, &eof);

		ck_assert_msg(n >= 0, "readdir: %s", CLF_Last_error());
		for (int i = 0; i < n; i++) {
			char path[2 * PATH_LEN + 2];
			struct mds_attr a;

			snprintf(path, sizeof(path), "%s%s%s", prefix,
				 *prefix ? "/" : "", ents[i].name);
			cookie = ents[i].cookie;
			if (S_ISDIR(ents[i].mode)) {
				tree_add(t, path, 'D');
				tree_read(st, ents[i].ino, path, t);
				continue;
			}
			ck_assert_int_eq(mds_getattr(st, ents[i].ino, &a), 0);
			tree_add(t, path, a.has_layout ? 'L' : 'F');
		}
	}
}

static void check_survivors(const char *dir, uint32_t acked, unsigned seed)
{
	struct tree done = { 0 }, maybe = { 0 }, got = { 0 };
	struct mds_store *st = open_store(dir);
	struct op op;
	int err;

	err = mds_store_verify(st);
	ck_assert_msg(err == 0, "seed %u, %u acked: %s", seed, acked,
		      CLF_Last_error());
	for (uint32_t k = 0; k < acked; k++) {
		op_of(k, &op);
		model_apply(&done, &op);
		model_apply(&maybe, &op);
	}
	op_of(acked, &op);
	model_apply(&maybe, &op);
	tree_read(st, MDS_ROOT_INO, "", &got);
	tree_sort(&done);
	tree_sort(&maybe);
	tree_sort(&got);
	ck_assert_msg(tree_equal(&got, &done) || tree_equal(&got, &maybe),
		      "seed %u: after %u acknowledged operations the store has "
		      "%zu entries, expected %zu or %zu", seed, acked, got.n,
		      done.n, maybe.n);
	if (getenv("MDS_CRASH_VERBOSE"))
		printf("  %u acknowledged, the one in flight %s\n", acked,
		       tree_equal(&got, &done) ? "lost" : "committed");
	mds_store_close(st);
	free(done.line);
	free(maybe.line);
	free(got.line);
}

/* Read one ack; false at end of file. */
static bool read_ack(int fd, uint32_t *k)
{
	size_t have = 0;

	while (have < sizeof(*k)) {
		ssize_t r = read(fd, (char *)k + have, sizeof(*k) - have);

		if (r < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(r, 0);
		if (r == 0) {
			ck_assert_uint_eq(have, 0);
			return false;
		}
		have += (size_t)r;
	}
	return true;
}

START_TEST(test_acknowledged_creates_survive_kill_9)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();

	printf("test_mds_crash: seed %u\n", seed);
	srand(seed);
	for (int round = 0; round < ROUNDS; round++) {
		char *dir = new_store_dir();
		uint32_t target = (uint32_t)rand() % MAX_ACKS, acked = 0, k;
		int fds[2], status;
		pid_t pid;

		ck_assert_int_eq(pipe(fds), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(fds[0]);
			child(dir, fds[1]);
		}
		close(fds[1]);
		while (acked < target && read_ack(fds[0], &k)) {
			ck_assert_uint_eq(k, acked);
			acked++;
		}
		usleep((useconds_t)(rand() % 4000));
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) &&
			      WTERMSIG(status) == SIGKILL,
			      "the child ended by itself, status %#x", status);
		/* Acks written before the kill are still in the pipe. */
		while (read_ack(fds[0], &k)) {
			ck_assert_uint_eq(k, acked);
			acked++;
		}
		close(fds[0]);
		check_survivors(dir, acked, seed);
		rm_store_dir(dir);
	}
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_crash");
	TCase *tc = tcase_create("kill -9");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_acknowledged_creates_survive_kill_9);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
