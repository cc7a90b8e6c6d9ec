// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rdma_cpu.c -- what a transport costs in CPU: the same transfers over
 * "tcp" and "rdma" (libclf/runtime/transport_*.c), each side's CPU time
 * from getrusage (every thread, the RDMA completion thread included).
 *
 *   rdma_cpu TRANSPORT HOST:PORT [MB] [SMALL]
 *
 * A server process (forked before either uses librdmacm, which does not
 * survive a fork) and a client exchange clf messages through the transport API:
 *   bulk-write  MB messages of 1 MiB payload client -> server, a 16-byte
 *               reply each (a write's shape);
 *   bulk-read   16-byte requests, 1 MiB replies (a read's);
 *   small       SMALL round trips of a 64-byte request and reply
 *               (messages per second, one in flight).
 * Prints one line per phase: wall s, MB/s (messages/s for small), client
 * and server CPU ns, user and system apart, per byte moved (per round
 * trip for small), and for rdma the client's SENDs posted, the MB moved
 * by RDMA READ/WRITE and the registration cache's hit rate (%, client
 * and server together).  CLF_RDMA_DIRECT_MIN=0 in the environment makes
 * rdma carry everything in SENDs through its bounce buffers: the row is
 * then named "rdma-bounce".
 * Under qemu TCG with soft-RoCE the absolute figures mean little; the
 * TCP/RDMA ratio of CPU per byte is what carries over (docs/performance.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "transport.h"

#define BIG ((size_t)1 << 20)
#define SMALL_LEN 64
#define REPLY_LEN 16
#define TIMEOUT_MS 30000

enum phase { BULK_WRITE, BULK_READ, SMALL };
static const char *const phase_name[] = { "bulk-write", "bulk-read", "small" };

/* CPU seconds of this process, user time in [0] and system time in [1]:
 * with soft-RoCE the "NIC" is kernel code charged as system time, which
 * a hardware NIC takes off the CPU; TCP's system time stays. */
struct cpu {
	double s[2];
};

static struct cpu cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct cpu){ { ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 } };
}

static struct cpu cpu_since(struct cpu a)
{
	struct cpu b = cpu_now();

	return (struct cpu){ { b.s[0] - a.s[0], b.s[1] - a.s[1] } };
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What went by RDMA READ/WRITE, and the registration cache's work. */
struct direct {
	unsigned long bytes, hits, misses;
};

static struct direct direct_now(void)
{
	struct direct d = { 0 };
#ifdef CLF_HAVE_RDMA
	unsigned long ops;

	clf_rdma_direct_stats(&ops, &d.bytes, &d.hits, &d.misses);
#endif
	return d;
}

static struct direct direct_since(struct direct a)
{
	struct direct b = direct_now();

	return (struct direct){ b.bytes - a.bytes, b.hits - a.hits,
				b.misses - a.misses };
}

struct phase_cost {
	struct cpu cpu;
	struct direct dir;
};

static void die(const char *what)
{
	fprintf(stderr, "rdma_cpu: %s: %s\n", what, CLF_Last_error());
	exit(1);
}

static void send_msg(struct clf_conn *c, const void *buf, size_t len)
{
	struct clf_proto_header h;

	clf_proto_header_init(&h, CLF_PROTO_OP_PING, clf_conn_next_id(c));
	if (clf_conn_send_buf(c, &h, buf, len))
		die("send");
}

static void recv_msg(struct clf_conn *c, void *buf, size_t cap)
{
	struct clf_proto_header h;

	if (clf_conn_recv_header(c, &h) || h.payload_len > cap ||
	    clf_conn_recv_payload(c, buf, h.payload_len))
		die("receive");
}

/* The server: each phase's counts come first, as a small message. */
static void serve(struct clf_listener *l, int pipe_w)
{
	struct clf_conn *c;
	char *buf = malloc(BIG);
	long n[3];
	struct phase_cost cost[3];

	if (clf_listener_accept(l, TIMEOUT_MS, TIMEOUT_MS, &c))
		die("accept");
	recv_msg(c, n, sizeof(n));
	for (int p = 0; p < 3; p++) {
		struct cpu c0 = cpu_now();
		struct direct d0 = direct_now();

		for (long i = 0; i < n[p]; i++) {
			recv_msg(c, buf, BIG);
			if (p == BULK_WRITE)
				send_msg(c, buf, REPLY_LEN);
			else if (p == BULK_READ)
				send_msg(c, buf, BIG);
			else
				send_msg(c, buf, SMALL_LEN);
		}
		cost[p].cpu = cpu_since(c0);
		cost[p].dir = direct_since(d0);
	}
	if (write(pipe_w, cost, sizeof(cost)) != sizeof(cost))
		exit(1);
	recv_msg(c, buf, BIG);	/* the client's goodbye */
	clf_conn_close(c);
	exit(0);
}

int main(int argc, char **argv)
{
	const struct clf_transport_ops *t;
	struct clf_listener *l;
	struct clf_conn *c;
	long n[3];
	struct phase_cost scost[3];
	struct direct cdir[3];
	const char *dm = getenv("CLF_RDMA_DIRECT_MIN");
	const char *name;
	int fds[2], status;
	char *buf, buf0[1];
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: rdma_cpu tcp|rdma HOST:PORT [MB] [SMALL]\n");
		return 2;
	}
	n[BULK_WRITE] = n[BULK_READ] = argc > 3 ? atol(argv[3]) : 64;
	n[SMALL] = argc > 4 ? atol(argv[4]) : 5000;
	t = clf_transport_find(argv[1]);
	if (!t)
		die("transport");
	if (pipe(fds))
		return 1;
	pid = fork();
	if (pid == 0) {
		char ok = 1;

		if (clf_listener_open(t, argv[2], &l))
			die("listen");
		if (write(fds[1], &ok, 1) != 1)
			return 1;
		serve(l, fds[1]);
	}
	if (read(fds[0], buf0, 1) != 1)	/* listening */
		return 1;
	buf = calloc(1, BIG);
	if (clf_conn_connect(t, argv[2], TIMEOUT_MS, &c))
		die("connect");
	name = strcmp(t->name, "rdma") == 0 && dm && *dm &&
		strtoul(dm, NULL, 0) == 0
		? "rdma-bounce" : t->name;
	printf("%-11s %-10s %6s %7s %7s %10s %10s %10s %10s %6s %7s %5s\n",
	       "TRANS", "PHASE", "COUNT", "WALL_S", "MB/S", "CLI_USR",
	       "CLI_SYS", "SRV_USR", "SRV_SYS", "SENDS", "RDMA_MB", "HIT%");
	send_msg(c, n, sizeof(n));
	struct cpu ccpu[3];
	double wall[3];
	unsigned long sends[3] = { 0 };

	for (int p = 0; p < 3; p++) {
		struct cpu c0 = cpu_now();
		struct direct d0 = direct_now();
		double w0 = now_s();
#ifdef CLF_HAVE_RDMA
		unsigned long s0, r, k;

		clf_rdma_stats(&s0, &r, &k);
#endif
		for (long i = 0; i < n[p]; i++) {
			if (p == BULK_WRITE) {
				send_msg(c, buf, BIG);
				recv_msg(c, buf, BIG);
			} else if (p == BULK_READ) {
				send_msg(c, buf, REPLY_LEN);
				recv_msg(c, buf, BIG);
			} else {
				send_msg(c, buf, SMALL_LEN);
				recv_msg(c, buf, BIG);
			}
		}
		ccpu[p] = cpu_since(c0);
		cdir[p] = direct_since(d0);
		wall[p] = now_s() - w0;
#ifdef CLF_HAVE_RDMA
		clf_rdma_stats(&sends[p], &r, &k);
		sends[p] -= s0;
#endif
	}
	if (read(fds[0], scost, sizeof(scost)) != sizeof(scost))
		die("server");
	send_msg(c, buf, 1);
	waitpid(pid, &status, 0);
	for (int p = 0; p < 3; p++) {
		/* Bulk: per byte of payload moved; small: per round trip. */
		double units = p == SMALL ? (double)n[p] : (double)n[p] * BIG;
		struct cpu *s = &scost[p].cpu;
		/* Each side counts the bytes its NIC moved: the server's
		 * READs/WRITEs, the client's descriptors; one of them. */
		unsigned long mb = scost[p].dir.bytes;
		unsigned long h = cdir[p].hits + scost[p].dir.hits;
		unsigned long m = cdir[p].misses + scost[p].dir.misses;

		printf("%-11s %-10s %6ld %7.2f %7.1f %10.2f %10.2f %10.2f %10.2f %6lu %7.1f %5.1f\n",
		       name, phase_name[p], n[p], wall[p],
		       p == SMALL ? n[p] / wall[p] : n[p] * (BIG / 1e6) / wall[p],
		       ccpu[p].s[0] * 1e9 / units, ccpu[p].s[1] * 1e9 / units,
		       s->s[0] * 1e9 / units, s->s[1] * 1e9 / units,
		       sends[p], mb / 1e6, h + m ? 100.0 * h / (h + m) : 0.0);
	}
	clf_conn_close(c);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
