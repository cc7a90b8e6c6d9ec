// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rdma_conns.c -- what an RDMA connection costs an iod in memory
 * (issue 16): an iod takes its receive buffers from a shared receive
 * queue, so idle clients do not each hold a window of pinned buffers
 * there.  Opens 1, then N authenticated connections to iod 0 of the
 * configuration and reads the iod's resident memory (/proc/PID/status)
 * with none, 1 and N open; then closes them.
 *
 *   rdma_conns CONFIG IOD_PID N MAX_KIB
 *
 * Prints the figures; exits 0 when the N-th connections cost the iod at
 * most MAX_KIB each on average, 1 otherwise.  Run by
 * tests/guest/rdma_tests.sh in the soft-RoCE guest.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "error.h"
#include "transport.h"

static long rss_kb(int pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "VmRSS: %ld", &kb);
	if (f)
		fclose(f);
	return kb;
}

/* The iod sets up its side of a connection in its own time: RSS once it
 * stayed put for a second. */
static long settled_rss_kb(int pid)
{
	long last = rss_kb(pid), now;

	for (int i = 0; i < 20; i++) {
		sleep(1);
		now = rss_kb(pid);
		if (now == last)
			break;
		last = now;
	}
	return last;
}

int main(int argc, char **argv)
{
	const struct clf_transport_ops *t;
	struct clf_config *cfg;
	struct clf_conn **c;
	long none, one, all, per;
	int pid, n, max_kb;

	if (argc != 5) {
		fprintf(stderr, "usage: rdma_conns CONFIG IOD_PID N MAX_KIB\n");
		return 2;
	}
	pid = atoi(argv[2]);
	n = atoi(argv[3]);
	max_kb = atoi(argv[4]);
	c = calloc((size_t)n, sizeof(*c));
	if (n < 2 || !c || clf_config_load(argv[1], &cfg) ||
	    !(t = clf_transport_find(cfg->transport))) {
		fprintf(stderr, "rdma_conns: %s\n", CLF_Last_error());
		return 1;
	}
	/* What is measured is memory: a guest on a loaded host may take
	 * longer than the instance's 3 s to set a connection up. */
	if (cfg->timeout_ms < 30000)
		cfg->timeout_ms = 30000;
	none = settled_rss_kb(pid);
	for (int i = 0; i < n; i++) {
		if (clf_conn_connect(t, cfg->iods[0].addr, cfg->timeout_ms,
				     &c[i]) ||
		    clf_auth_client(c[i], &cfg->secret, "clf-tool")) {
			fprintf(stderr, "rdma_conns: connection %d: %s\n", i,
				CLF_Last_error());
			return 1;
		}
		if (i == 0)
			one = settled_rss_kb(pid);
	}
	all = settled_rss_kb(pid);
	per = (all - one) / (n - 1);
	printf("iod RSS: %ld KiB with no client, %ld KiB with 1 RDMA connection, %ld KiB with %d: %ld KiB per connection (at most %d)\n",
	       none, one, all, n, per, max_kb);
	for (int i = 0; i < n; i++)
		clf_conn_close(c[i]);
	clf_config_free(cfg);
	free(c);
	return per <= max_kb ? 0 : 1;
}
