// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * meta_bench.c -- metadata operations per second through the native API,
 * one client, one after the other: create (CLF_open O_CREAT|O_EXCL, then
 * CLF_close), rename, unlink, mkdir, rmdir, n of each in a directory of
 * their own.  Each is one metad request and one LMDB commit; this says
 * what one commit with its fsync, and what rides along with it (the
 * reply record, metad/mds_replay.h), costs.
 *
 *   meta_bench [config] [n]     (config: NULL -> $CLF_CONFIG; n: 500)
 *
 * Prints one line per operation: "create 500 ops 812.3 ops/s".
 */
#include <fcntl.h>
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

static int run(const char *what, const char *dir, int n, int kind)
{
	char a[256], b[256];
	double t0 = now_s();

	for (int i = 0; i < n; i++) {
		int err = 0, fd;

		snprintf(a, sizeof(a), "%s/f%d", dir, i);
		snprintf(b, sizeof(b), "%s/g%d", dir, i);
		switch (kind) {
		case 0:
			fd = CLF_open(a, O_CREAT | O_EXCL | O_RDWR, 0644);
			err = fd < 0 ? fd : CLF_close(fd);
			break;
		case 1:
			err = CLF_rename(a, b);
			break;
		case 2:
			err = CLF_unlink(b);
			break;
		case 3:
			err = CLF_mkdir(a, 0755);
			break;
		case 4:
			err = CLF_rmdir(a);
			break;
		}
		if (err) {
			fprintf(stderr, "meta_bench: %s %d: %s\n", what, i,
				CLF_Last_error());
			return 1;
		}
	}
	printf("%-6s %d ops %.1f ops/s\n", what, n, n / (now_s() - t0));
	return 0;
}

int main(int argc, char **argv)
{
	const char *names[] = { "create", "rename", "unlink", "mkdir",
				"rmdir" };
	int n = argc > 2 ? atoi(argv[2]) : 500;
	char dir[64];

	if (n < 1 || CLF_init(argc > 1 ? argv[1] : NULL)) {
		fprintf(stderr, "meta_bench: %s\n",
			n < 1 ? "n must be >= 1" : CLF_Last_error());
		return 2;
	}
	snprintf(dir, sizeof(dir), "/meta_bench.%d", (int)getpid());
	if (CLF_mkdir(dir, 0755)) {
		fprintf(stderr, "meta_bench: %s\n", CLF_Last_error());
		return 1;
	}
	for (int k = 0; k < 5; k++)
		if (run(names[k], dir, n, k))
			return 1;
	CLF_rmdir(dir);
	CLF_finalize();
	return 0;
}
