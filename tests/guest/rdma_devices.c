// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rdma_devices.c -- a client reaching its servers through two RDMA
 * devices registers a buffer once per device, not once per connection
 * (issue 16; transport_rdma_devcache.h).  A server process listens on
 * HOST0 (device 0) and HOST1 (device 1); the client opens two
 * connections to HOST0 and one to HOST1 and sends the same 1 MiB buffer
 * over each ROUNDS times (every send moved by the server's RDMA READ of
 * the client's registered buffer).  The client's registration cache then
 * missed twice (once per device: its protection domains) and hit every
 * other time, and the server's too (its receive buffer, once per
 * device); with the connections closed neither process keeps a cache.
 *
 *   rdma_devices HOST0 HOST1 PORT ROUNDS
 *
 * Exits 0 when so, 1 with the figures otherwise.  Run by
 * tests/guest/rdma_tests.sh in the soft-RoCE guest with two rxe devices.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "transport.h"

#define BIG ((size_t)1 << 20)
#define NCONN 3
#define TIMEOUT_MS 30000

/* Which listener each connection goes to, in the client's order. */
static const int host_of[NCONN] = { 0, 0, 1 };

struct counts {
	unsigned long bytes, hits, misses;
	size_t caches_open, caches_closed;
};

static const char *who = "client";
static pid_t server_pid;

/* Say what failed where; the client also says how the server ended. */
static void die(const char *what)
{
	fprintf(stderr, "rdma_devices: %s: %s: %s\n", who, what,
		CLF_Last_error());
	if (server_pid > 0) {
		int status = 0;

		for (int i = 0; i < 50 && !waitpid(server_pid, &status, WNOHANG);
		     i++)
			usleep(100000);
		if (WIFSIGNALED(status))
			fprintf(stderr, "rdma_devices: the server died of signal %d\n",
				WTERMSIG(status));
		kill(server_pid, SIGKILL);
	}
	_exit(1);
}

static void send_msg(struct clf_conn *c, const void *buf, size_t len)
{
	struct clf_proto_header h;

	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	if (clf_conn_send_buf(c, &h, buf, len))
		die("send");
}

static size_t recv_msg(struct clf_conn *c, void *buf, size_t cap)
{
	struct clf_proto_header h;

	if (clf_conn_recv_header(c, &h) || h.payload_len > cap ||
	    clf_conn_recv_payload(c, buf, h.payload_len))
		die("receive");
	return h.payload_len;
}

static struct counts counts_now(void)
{
	struct counts k = { 0 };
	unsigned long ops;

	clf_rdma_direct_stats(&ops, &k.bytes, &k.hits, &k.misses);
	return k;
}

static void check_rdma(struct clf_conn *c)
{
	if (strcmp(clf_conn_transport(c), "rdma")) {
		fprintf(stderr, "rdma_devices: connected over %s\n",
			clf_conn_transport(c));
		exit(1);
	}
}

/* The server: accepts the client's connections in its order, answers
 * each 1 MiB message with 16 bytes, until a 1-byte goodbye on each. */
static void serve(struct clf_listener *l[2], int pipe_w, int rounds)
{
	struct clf_conn *c[NCONN];
	char *buf = aligned_alloc(4096, BIG);
	struct counts k;

	for (int i = 0; i < NCONN; i++) {
		if (clf_listener_accept(l[host_of[i]], TIMEOUT_MS, TIMEOUT_MS,
					&c[i]))
			die("accept");
		check_rdma(c[i]);
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NCONN; i++) {
			if (recv_msg(c[i], buf, BIG) != BIG)
				die("a short message");
			send_msg(c[i], buf, 16);
		}
	k = counts_now();
	k.caches_open = clf_rdma_cache_count();
	for (int i = 0; i < NCONN; i++) {
		(void)recv_msg(c[i], buf, BIG);
		clf_conn_close(c[i]);
	}
	k.caches_closed = clf_rdma_cache_count();
	if (write(pipe_w, &k, sizeof(k)) != sizeof(k))
		exit(1);
	exit(0);
}

static bool report(const char *side, const struct counts *k, int rounds)
{
	bool ok = k->misses == 2 &&
		  k->hits == (unsigned long)(NCONN * rounds - 2) &&
		  k->caches_open == 2 && k->caches_closed == 0;

	printf("%s: %d x %d MiB over 2 devices: registration cache %lu misses, %lu hits (want 2, %d); caches %zu with the connections open (want 2), %zu closed (want 0)\n",
	       side, rounds, NCONN, k->misses, k->hits, NCONN * rounds - 2,
	       k->caches_open, k->caches_closed);
	return ok;
}

int main(int argc, char **argv)
{
	const struct clf_transport_ops *t;
	struct clf_listener *l[2];
	struct clf_conn *c[NCONN];
	struct counts cl, sv;
	char addr[2][128], *buf, ok = 1;
	int fds[2], rounds, status;
	bool good;
	pid_t pid;

	if (argc != 5) {
		fprintf(stderr, "usage: rdma_devices HOST0 HOST1 PORT ROUNDS\n");
		return 2;
	}
	for (int h = 0; h < 2; h++)
		snprintf(addr[h], sizeof(addr[h]), "%s:%s", argv[1 + h],
			 argv[3]);
	rounds = atoi(argv[4]);
	t = clf_transport_find("rdma");
	if (!t || pipe(fds))
		die("rdma");
	/* The server first: librdmacm does not survive a fork. */
	pid = fork();
	if (pid == 0) {
		who = "server";
		for (int h = 0; h < 2; h++)
			if (clf_listener_open(t, addr[h], &l[h]))
				die("listen");
		if (write(fds[1], &ok, 1) != 1)
			return 1;
		serve(l, fds[1], rounds);
	}
	server_pid = pid;
	if (read(fds[0], &ok, 1) != 1)	/* listening */
		return 1;
	buf = aligned_alloc(4096, BIG);
	memset(buf, 0x5a, BIG);
	for (int i = 0; i < NCONN; i++) {
		if (clf_conn_connect(t, addr[host_of[i]], TIMEOUT_MS, &c[i]))
			die("connect");
		check_rdma(c[i]);
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NCONN; i++) {
			send_msg(c[i], buf, BIG);
			(void)recv_msg(c[i], buf + BIG / 2, 16);
		}
	cl = counts_now();
	cl.caches_open = clf_rdma_cache_count();
	for (int i = 0; i < NCONN; i++) {
		send_msg(c[i], buf, 1);
		clf_conn_close(c[i]);
	}
	cl.caches_closed = clf_rdma_cache_count();
	if (read(fds[0], &sv, sizeof(sv)) != sizeof(sv))
		die("the server");
	waitpid(pid, &status, 0);
	good = report("client", &cl, rounds);
	good = report("server", &sv, rounds) && good;
	if (sv.bytes != (unsigned long)NCONN * rounds * BIG) {
		printf("the server READ %lu bytes, want %lu\n", sv.bytes,
		       (unsigned long)NCONN * rounds * BIG);
		good = false;
	}
	return good && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
