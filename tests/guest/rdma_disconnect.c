// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rdma_disconnect.c -- clients that vanish in the middle of a message
 * must not leak at the iod (issue 16): N times, connect to iod 0 of the
 * configuration, authenticate, send the header of a 1 MiB request and
 * 256 KiB of it, and close.  The iod's descriptors and threads
 * (/proc/PID) must be back where they were after the first third of the
 * cycles, and its resident memory must not grow in the last third more
 * than 2 MiB (the allocator's arenas fill during the first two; a leak
 * of one connection's 928 KiB of buffers, or even of 40 KiB a cycle,
 * shows), or, where it did, not again over one more third (a new
 * high-water mark of the heap is not a leak), and its registered
 * (pinned) memory must not grow in the last third: every queue pair,
 * registered buffer, completion thread and event channel of those
 * connections was freed.
 *
 *   rdma_disconnect CONFIG IOD_PID CYCLES
 *
 * Exits 0 when nothing leaked, 1 with the figures otherwise.  Run by
 * tests/guest/rdma_tests.sh in the soft-RoCE guest.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "error.h"
#include "transport.h"

#define CUT (256 * 1024)	/* sent of the 1 MiB announced */
#define CHUNK (64 * 1024)

struct usage {
	long fds, threads, rss_kb;
	long pin_kb;	/* memory registered with the NIC (VmPin) */
};

static struct usage usage_of(int pid)
{
	struct usage u = { 0, 0, 0, 0 };
	char path[64], line[256];
	struct dirent *e;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && (e = readdir(d)))
		u.fds += e->d_name[0] != '.';
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Threads: %ld", &u.threads);
		sscanf(line, "VmRSS: %ld", &u.rss_kb);
		sscanf(line, "VmPin: %ld", &u.pin_kb);
	}
	if (f)
		fclose(f);
	return u;
}

static int fill(void *arg, void *buf, size_t off, size_t n)
{
	memset(buf, 0x5a, n);
	return off >= CUT ? -ECANCELED : 0;	/* cut: the client "dies" */
}

static void cycle(const struct clf_config *cfg, const struct clf_transport_ops *t)
{
	static char scratch[CHUNK];
	struct clf_proto_header h;
	struct clf_conn *c;

	if (clf_conn_connect(t, cfg->iods[0].addr, cfg->timeout_ms, &c) ||
	    clf_auth_client(c, &cfg->secret, "clf-tool")) {
		fprintf(stderr, "rdma_disconnect: %s\n", CLF_Last_error());
		exit(1);
	}
	if (strcmp(clf_conn_transport(c), "rdma")) {
		fprintf(stderr, "rdma_disconnect: connected over %s\n",
			clf_conn_transport(c));
		exit(1);
	}
	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	(void)clf_conn_send_stream(c, &h, NULL, 0, 1 << 20, fill, NULL,
				   scratch, CHUNK);
	clf_conn_close(c);
}

int main(int argc, char **argv)
{
	const struct clf_transport_ops *t;
	struct clf_config *cfg;
	struct usage base, mid, end;
	int pid, n;

	if (argc != 4) {
		fprintf(stderr, "usage: rdma_disconnect CONFIG IOD_PID CYCLES\n");
		return 2;
	}
	pid = atoi(argv[2]);
	n = atoi(argv[3]);
	if (clf_config_load(argv[1], &cfg) ||
	    !(t = clf_transport_find(cfg->transport))) {
		fprintf(stderr, "rdma_disconnect: %s\n", CLF_Last_error());
		return 1;
	}
	/* Leaks are measured, not time: a guest on a loaded host may take
	 * longer than the instance's 3 s to set a connection up. */
	if (cfg->timeout_ms < 30000)
		cfg->timeout_ms = 30000;
	/* The iod's pools and its allocator's arenas settle first. */
	for (int i = 0; i < n / 3; i++)
		cycle(cfg, t);
	sleep(1);
	base = usage_of(pid);
	for (int i = n / 3; i < 2 * n / 3; i++)
		cycle(cfg, t);
	sleep(1);
	mid = usage_of(pid);
	for (int i = 2 * n / 3; i < n; i++)
		cycle(cfg, t);
	/* The iod notices the last disconnects within its timeout; its
	 * buffer of the last request goes with them. */
	sleep(1);
	for (int i = 0; i < 50; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		end = usage_of(pid);
		if (end.fds <= base.fds + 2 && end.threads <= base.threads + 1)
			break;
		nanosleep(&ts, NULL);
	}
	printf("iod over cycles %d, %d, %d: fds %ld, %ld, %ld; threads %ld, %ld, %ld; RSS %ld, %ld, %ld KiB; registered %ld, %ld, %ld KiB\n",
	       n / 3, 2 * n / 3, n, base.fds, mid.fds, end.fds, base.threads,
	       mid.threads, end.threads, base.rss_kb, mid.rss_kb, end.rss_kb,
	       base.pin_kb, mid.pin_kb, end.pin_kb);
	/* Registrations a dead connection kept (its buffers, its cached
	 * ones) stay pinned: 333 of them would be tens of MiB.  One late
	 * connection's are 4 MiB at most. */
	if (end.pin_kb > mid.pin_kb + 4096) {
		printf("the iod's registered memory grew: a registration leaks\n");
		clf_config_free(cfg);
		return 1;
	}
	/*
	 * RSS is the heap's high-water mark: with RDMA the iod's malloc
	 * never unmaps or trims (transport_rdma_memhooks.c), so more dead
	 * connections alive at once on a loaded host raise it once.  A
	 * leak grows again over another third; a new peak does not.
	 */
	if (end.rss_kb > mid.rss_kb + 2048) {
		struct usage again;

		for (int i = 0; i < n / 3; i++)
			cycle(cfg, t);
		sleep(1);
		again = usage_of(pid);
		printf("RSS grew in the last third: %d cycles more, RSS %ld KiB\n",
		       n / 3, again.rss_kb);
		if (again.rss_kb <= end.rss_kb + 2048)
			end.rss_kb = mid.rss_kb;
	}
	clf_config_free(cfg);
	return end.fds <= base.fds + 2 && end.threads <= base.threads + 1 &&
	       end.rss_kb <= mid.rss_kb + 2048 ? 0 : 1;
}
