// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_forward.c -- clf forward: a relay for clients that cannot reach
 * the iods (RIO's forwarder nodes: a compute partition whose only way
 * out is through them).
 *
 *   clf forward --listen HOST:PORT clf://METAD_HOST:PORT
 *
 * Clients set CLF_FORWARDER=HOST:PORT; their TCP transport then opens
 * every connection here and asks for its daemon with one line
 * ("CLF-FORWARD host:port", transport_tcp.c).  The forwarder learns the
 * instance's daemons from its metad at start (INSTANCE, as any clf://
 * client, with $CLF_SECRET_FILE or MUNGE), relays only to those, answers
 * "OK" once connected, and then moves bytes both ways until either side
 * closes.  It takes no part in the handshakes: each connection still
 * authenticates end to end with the daemon (the secret or MUNGE), which
 * also decides what the client may do, and with protection = integrity
 * or privacy the forwarder can neither change nor read what it relays.
 * With the instance's secret and protection none it reads what it relays
 * to the iods and merges the collective requests of its clients, one
 * message per operation and iod (cmd_forward_merge.c).
 * One thread per relayed connection; runs in the foreground until killed.
 */
#define _GNU_SOURCE	/* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clf_ll.h"
#include "config.h"
#include "error.h"
#include "forward_merge.h"
#include "tool.h"
#include "transport.h"

#define FWD_LINE_MAX (CLF_ADDR_MAX + 32)
#define FWD_TIMEOUT_MS 10000	/* for the request line and the connect */
#define FWD_BUF (64 << 10)	/* bytes per splice: a pipe's default room */
/* How long a group of collective requests waits for the rest of its
 * operation (cmd_forward_merge.c): the requests of clients behind one
 * forwarder come within a millisecond of each other on a LAN. */
#define FWD_MERGE_WAIT_MS 10

static const struct clf_config *fwd_cfg;	/* the instance; borrowed */
static bool fwd_merging;		/* fwd_merge_start succeeded */

/* The index of the iod at addr, or -1. */
static int fwd_iod(const char *addr)
{
	for (uint32_t i = 0; i < fwd_cfg->niods; i++)
		if (!strcmp(addr, fwd_cfg->iods[i].addr))
			return (int)i;
	return -1;
}

/* Whether addr is one of the instance's daemons. */
static bool fwd_allowed(const char *addr)
{
	if (!strcmp(addr, fwd_cfg->metad.addr))
		return true;
	if (fwd_iod(addr) >= 0)
		return true;
	/* The other metads of a namespace over several (INSTANCE, 1.17). */
	for (uint32_t i = 0; i < fwd_cfg->nmetads; i++)
		if (!strcmp(addr, fwd_cfg->metads[i].addr))
			return true;
	return false;
}

static int tcp_to(const char *host, const char *port, int *out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, one = 1;

	if (getaddrinfo(host, port, &hints, &res))
		return -EHOSTUNREACH;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*out = fd;
	return 0;
}

/* Read the request line (byte by byte: what follows is the client's). */
static int read_line(int fd, char *line, size_t len)
{
	size_t n = 0;

	while (n < len - 1) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, FWD_TIMEOUT_MS) <= 0)
			return -ETIMEDOUT;
		if (recv(fd, line + n, 1, 0) != 1)
			return -EPROTO;
		if (line[n] == '\n') {
			line[n] = '\0';
			return 0;
		}
		n++;
	}
	return -EPROTO;
}

static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= w;
	}
	return 0;
}

/*
 * Move what fd has (up to FWD_BUF bytes) to out through the pipe p:
 * splice(2), so the bytes go socket -> pipe -> socket by page reference
 * and never through this process.  The count (0: end of stream), or -1.
 */
static ssize_t pass(int fd, int out, const int p[2])
{
	ssize_t n, left;

	do {
		n = splice(fd, NULL, p[1], NULL, FWD_BUF, SPLICE_F_MOVE);
	} while (n < 0 && errno == EINTR);
	for (left = n; left > 0;) {
		ssize_t w = splice(p[0], NULL, out, NULL, left, SPLICE_F_MOVE);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		left -= w;
	}
	return n;
}

/* Bytes both ways until both sides have closed (or one fails). */
void fwd_relay(int a, int b)
{
	int fds[2] = { a, b }, pipes[2][2] = { { -1, -1 }, { -1, -1 } };
	bool open_in[2] = { true, true };

	if (pipe2(pipes[0], O_CLOEXEC) || pipe2(pipes[1], O_CLOEXEC))
		goto out;
	while (open_in[0] || open_in[1]) {
		struct pollfd p[2] = {
			{ open_in[0] ? a : -1, POLLIN, 0 },
			{ open_in[1] ? b : -1, POLLIN, 0 },
		};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = pass(fds[i], fds[1 - i], pipes[i]);
			if (r > 0)
				continue;
			if (r < 0)	/* a failure: both go */
				goto out;
			open_in[i] = false;
			shutdown(fds[1 - i], SHUT_WR);
		}
	}
out:
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			if (pipes[i][j] >= 0)
				close(pipes[i][j]);
}

static void *serve(void *arg)
{
	int cfd = (int)(intptr_t)arg, dfd = -1;
	char line[FWD_LINE_MAX], host[CLF_ADDR_MAX], port[16];
	const char *addr = line + strlen("CLF-FORWARD ");
	const char *why = NULL;

	if (read_line(cfd, line, sizeof(line)) ||
	    strncmp(line, "CLF-FORWARD ", strlen("CLF-FORWARD ")))
		goto close_client;
	if (!fwd_allowed(addr))
		why = "ERR refused: not a daemon of this forwarder's instance\n";
	else if (clf_addr_split(addr, host, sizeof(host), port, sizeof(port)) ||
		 tcp_to(host, port, &dfd))
		why = "ERR cannot connect\n";
	if (why) {
		(void)write_all(cfd, why, strlen(why));
		goto close_client;
	}
	if (write_all(cfd, "OK\n", 3))
		;
	else if (fwd_merging && fwd_iod(addr) >= 0)
		fwd_merge_relay(cfd, dfd, (uint32_t)fwd_iod(addr));
	else
		fwd_relay(cfd, dfd);
	close(dfd);
close_client:
	close(cfd);
	return NULL;
}

static int listen_on(const char *addr, int *out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	char host[CLF_ADDR_MAX], port[16];
	struct addrinfo *res;
	int fd, one = 1;

	if (clf_addr_split(addr, host, sizeof(host), port, sizeof(port)))
		return clf_fail(EINVAL, "clf forward: --listen %s: %s", addr,
				clf_error_reason());
	if (getaddrinfo(*host ? host : NULL, port, &hints, &res))
		return clf_fail(EINVAL, "clf forward: cannot resolve %s", addr);
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128)) {
		int e = errno;

		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return clf_fail(e, "clf forward: cannot listen on %s: %s", addr,
				strerror(e));
	}
	freeaddrinfo(res);
	*out = fd;
	return 0;
}

int cmd_forward(const struct tool_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "no-merge", no_argument, NULL, 'n' },
		{ "merge-wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_addr = NULL;
	bool merge = true;
	long wait_ms = FWD_MERGE_WAIT_MS;
	pthread_attr_t attr;
	char *end;
	int c, lfd = -1;

	(void)g;
	while ((c = getopt_long(argc, argv, ":l:nw:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_addr = optarg;
			break;
		case 'n':
			merge = false;
			break;
		case 'w':
			errno = 0;
			wait_ms = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || wait_ms < 0 ||
			    wait_ms > 60000)
				return tool_usage("forward",
						  "--merge-wait takes 0 to 60000 ms");
			break;
		case 'h':
			printf("usage: clf forward --listen HOST:PORT [--no-merge] [--merge-wait MS]\n"
			       "                   clf://METAD_HOST[:PORT]\n"
			       "\n"
			       "Relay the connections of clients that cannot reach the instance's\n"
			       "daemons (they set CLF_FORWARDER=HOST:PORT) to them, and only to\n"
			       "them: the daemons the instance's metad names.  Each connection\n"
			       "still authenticates with its daemon end to end.  The forwarder\n"
			       "itself authenticates to metad as any clf:// client\n"
			       "($CLF_SECRET_FILE, else MUNGE).  Runs until killed.\n"
			       "\n"
			       "With the instance's secret and messages not sealed (protection\n"
			       "none), the collective requests of one operation that its clients\n"
			       "send to one iod go there as one message; the others of the\n"
			       "operation are awaited at most --merge-wait ms (default %d).\n"
			       "--no-merge relays every request as it comes.\n",
			       FWD_MERGE_WAIT_MS);
			return CLF_EXIT_OK;
		default:
			return tool_bad_option("forward", c, argv);
		}
	}
	if (!listen_addr || argc - optind != 1 ||
	    strncmp(argv[optind], CLF_URL_SCHEME, strlen(CLF_URL_SCHEME)))
		return tool_usage("forward", "need --listen HOST:PORT and clf://METAD");
	/* Its own connections go straight to the daemons. */
	unsetenv("CLF_FORWARDER");
	if (CLF_init(argv[optind]) || clf_ll_config(&fwd_cfg))
		return tool_fail();
	if (listen_on(listen_addr, &lfd))
		return tool_fail();
	signal(SIGPIPE, SIG_IGN);
	if (merge && fwd_merge_start(fwd_cfg, (unsigned)wait_ms))
		fprintf(stderr, "%s: relaying collective requests one per client\n",
			clf_error_reason());
	else if (merge)
		fwd_merging = true;
	printf("clf forward: %s to the instance of metad %s (%u iods)%s\n",
	       listen_addr, fwd_cfg->metad.addr, fwd_cfg->niods,
	       fwd_merging ? "; merging collective requests per iod" : "");
	fflush(stdout);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		int one = 1, cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t tid;

		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				usleep(100000);	/* until relays end */
				continue;
			}
			fprintf(stderr, "clf forward: accept: %s\n", strerror(errno));
			return CLF_EXIT_FAIL;
		}
		(void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&tid, &attr, serve, (void *)(intptr_t)cfd))
			close(cfd);
	}
}
