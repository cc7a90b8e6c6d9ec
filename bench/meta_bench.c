// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * meta_bench.c -- metadata operations per second through the native API,
 * one client, one after the other: create (CLF_open O_CREAT|O_EXCL, then
 * CLF_close), rename, unlink, mkdir, rmdir, n of each in a directory of
 * their own.  Each is one metad request and one LMDB commit; this says
 * what one commit with its fsync, and what rides along with it (the
 * reply record, metad/mds_replay.h), costs.
 *
 *   meta_bench [config] [n] [clients]
 *	config: NULL -> $CLF_CONFIG; "posix:DIR": the same operations on a
 *	local directory DIR (the baseline); n: 500 per client; clients: 1
 *
 * Every client does n of each in its own directory; the clients start
 * each operation together, and the rate is all clients' operations over
 * the time until the last finished.  Prints one line per operation:
 * "create 500 ops 812.3 ops/s" (ops: of all clients).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *local;	/* "posix:DIR": DIR, else NULL */

static int op(int kind, const char *a, const char *b)
{
	int fd;

	if (local) {
		switch (kind) {
		case 0:
			fd = open(a, O_CREAT | O_EXCL | O_RDWR, 0644);
			return fd < 0 ? -1 : close(fd);
		case 1: return rename(a, b);
		case 2: return unlink(b);
		case 3: return mkdir(a, 0755);
		default: return rmdir(a);
		}
	}
	switch (kind) {
	case 0:
		fd = CLF_open(a, O_CREAT | O_EXCL | O_RDWR, 0644);
		return fd < 0 ? fd : CLF_close(fd);
	case 1: return CLF_rename(a, b);
	case 2: return CLF_unlink(b);
	case 3: return CLF_mkdir(a, 0755);
	default: return CLF_rmdir(a);
	}
}

static int run(const char *what, const char *dir, int n, int kind)
{
	char a[600], b[600];

	for (int i = 0; i < n; i++) {
		snprintf(a, sizeof(a), "%s/f%d", dir, i);
		snprintf(b, sizeof(b), "%s/g%d", dir, i);
		if (op(kind, a, b)) {
			fprintf(stderr, "meta_bench: %s %d: %s\n", what, i,
				local ? strerror(errno) : CLF_Last_error());
			return 1;
		}
	}
	return 0;
}

/* One client: its directory, then each operation when the parent says
 * go (a byte on go), reporting each done (a byte on done). */
static int client(int id, int n, int go, int done)
{
	const char *names[] = { "create", "rename", "unlink", "mkdir",
				"rmdir" };
	char dir[512], c = 0;
	int err = 0;

	if (local)
		snprintf(dir, sizeof(dir), "%s/meta_bench.%d.%d", local,
			 (int)getppid(), id);
	else
		snprintf(dir, sizeof(dir), "/meta_bench.%d.%d",
			 (int)getppid(), id);
	if (op(3, dir, NULL)) {
		fprintf(stderr, "meta_bench: %s: %s\n", dir,
			local ? strerror(errno) : CLF_Last_error());
		err = 1;
	}
	for (int k = 0; k < 5; k++) {
		if (read(go, &c, 1) != 1)
			return 1;
		if (!err)
			err = run(names[k], dir, n, k);
		c = (char)err;
		if (write(done, &c, 1) != 1)
			return 1;
	}
	op(4, dir, NULL);
	return err;
}

int main(int argc, char **argv)
{
	const char *names[] = { "create", "rename", "unlink", "mkdir",
				"rmdir" };
	const char *cfg = argc > 1 ? argv[1] : NULL;
	int n = argc > 2 ? atoi(argv[2]) : 500;
	int clients = argc > 3 ? atoi(argv[3]) : 1;
	int go[256][2], done[2], bad = 0;
	char c;

	if (n < 1 || clients < 1 || clients > 256) {
		fprintf(stderr, "meta_bench: n must be >= 1, clients 1..256\n");
		return 2;
	}
	if (cfg && !strncmp(cfg, "posix:", 6))
		local = cfg + 6;
	if (pipe(done)) {
		perror("meta_bench: pipe");
		return 1;
	}
	/* A go pipe each: a client done early must not take another's go. */
	for (int i = 0; i < clients; i++) {
		pid_t pid;

		if (pipe(go[i])) {
			perror("meta_bench: pipe");
			return 1;
		}
		pid = fork();

		if (pid < 0) {
			perror("meta_bench: fork");
			return 1;
		}
		if (pid == 0) {
			int err;

			for (int j = 0; j <= i; j++)
				close(go[j][1]);
			close(done[0]);
			if (!local && CLF_init(cfg)) {
				fprintf(stderr, "meta_bench: %s\n",
					CLF_Last_error());
				err = 2;
			} else {
				err = client(i, n, go[i][0], done[1]);
			}
			if (!local)
				CLF_finalize();
			_exit(err);
		}
		close(go[i][0]);
	}
	close(done[1]);
	for (int k = 0; k < 5 && !bad; k++) {
		double t0 = now_s();

		for (int i = 0; i < clients; i++)
			if (write(go[i][1], "g", 1) != 1)
				bad = 1;
		for (int i = 0; i < clients; i++)
			if (read(done[0], &c, 1) != 1 || c)
				bad = 1;
		if (!bad)
			printf("%-6s %d ops %.1f ops/s\n", names[k], n * clients,
			       n * clients / (now_s() - t0));
		fflush(stdout);
	}
	for (int i = 0; i < clients; i++)
		close(go[i][1]);
	for (int i = 0; i < clients; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	return bad;
}
