// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_tcp.c -- the TCP transport: IPv4 and IPv6, names through
 * getaddrinfo.
 *
 * Sockets are non-blocking and every wait is a poll() bounded by the
 * caller's deadline, so nothing here can block past it.  Writes go
 * through sendmsg(MSG_NOSIGNAL), the gather write of writev without
 * SIGPIPE when the peer has gone.  TCP_NODELAY because requests are
 * small and latency-bound; keepalive so that a peer that vanished without
 * a FIN is noticed on idle connections too.
 *
 * A payload bound for a file (the iod's writes) can move socket -> pipe
 * -> file with splice(2): the socket's pages enter the pipe by reference
 * and are copied once, into the page cache, where recv + pwrite copy
 * twice.  On 2 cores with clients and iods sharing them that copy is a
 * third of the iod's time.  The pipe is made on first use and kept.
 * Replies that carry file bytes go out with sendfile(2) likewise.
 */
#define _GNU_SOURCE	/* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "transport_i.h"

/* Keepalive: first probe after 30 s idle, then every 10 s, give up after
 * 3 unanswered: a dead peer is noticed within about a minute. */
#define KEEPALIVE_IDLE_S 30
#define KEEPALIVE_INTVL_S 10
#define KEEPALIVE_CNT 3
#define LISTEN_BACKLOG 128

/* Pipe size asked for splicing; the kernel may give less (pipe-max-size). */
#define SPLICE_PIPE_SIZE (1 << 20)
/* Scratch for dropping bytes the file would not take. */
#define DROP_CHUNK 16384

struct tcp_conn {
	struct clf_conn base;	/* first: transport.c sees only this */
	int fd;			/* owned */
	bool has_pipe;		/* pipe[] is open */
	int pipe[2];		/* owned when has_pipe: splice's middle */
	size_t pipe_cap;	/* bytes the pipe holds */
};

struct tcp_listener {
	struct clf_listener base;
	int fd;			/* owned */
};

static struct tcp_conn *tcp_of(const struct clf_conn *c)
{
	return (struct tcp_conn *)c;
}

static struct tcp_listener *tcpl_of(const struct clf_listener *l)
{
	return (struct tcp_listener *)l;
}

/* The errno of a failed transfer, in the terms of transport.h. */
static int transfer_errno(int e)
{
	switch (e) {
	case EPIPE:
	case ECONNRESET:
	case ECONNABORTED:
		return ECONNRESET;
	case ETIMEDOUT:	/* keepalive probes went unanswered */
		return EHOSTDOWN;
	case ENETUNREACH:
	case EHOSTUNREACH:
		return EHOSTUNREACH;
	}
	return e;
}

static void format_peer(char *buf, size_t len, const char *host,
			const char *port)
{
	/* Bounded so that any host name fits CLF_ADDR_MAX with its port. */
	if (strchr(host, ':'))
		snprintf(buf, len, "[%.255s]:%.15s", host, port);
	else
		snprintf(buf, len, "%.255s:%.15s", host, port);
}

static void format_sockaddr(char *buf, size_t len, const struct sockaddr *sa,
			    socklen_t salen)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (getnameinfo(sa, salen, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, len, "(unknown peer)");
	else
		format_peer(buf, len, host, port);
}

/*
 * Wait for events on fd until deadline: 1 when ready, -ETIMEDOUT, or
 * another negative errno.  Restarts after signals with the time left.
 * Callers wait only after the socket had nothing for them, so once the
 * deadline has passed this fails without looking: a peer that trickles
 * bytes just in time cannot stretch a call past it.
 */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int left = clf_deadline_left(deadline);
		int n;

		if (left == 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, left);

		if (n > 0)
			return 1;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static void tune_socket(int fd)
{
	int one = 1, idle = KEEPALIVE_IDLE_S, intvl = KEEPALIVE_INTVL_S;
	int cnt = KEEPALIVE_CNT;

	/* Best effort: a socket without them still works, only slower to
	 * notice a dead peer or to send small messages. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl,
			 sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int conn_new(int fd, const char *peer, struct clf_conn **out)
{
	struct tcp_conn *t = calloc(1, sizeof(*t));

	if (!t)
		return clf_fail(ENOMEM, "clf: no memory for a connection to %s",
				peer);
	clf_conn_base_init(&t->base, &clf_transport_tcp, peer);
	t->fd = fd;
	tune_socket(fd);
	*out = &t->base;
	return 0;
}

static int resolve(const char *host, const char *port, int flags,
		   struct addrinfo **res)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = flags | AI_NUMERICSERV,
	};
	int rc;

	if (host && (!*host || strcmp(host, "*") == 0))
		host = NULL;
	rc = getaddrinfo(host, port, &hints, res);
	if (rc == EAI_SYSTEM)
		return clf_fail(errno, "clf: cannot resolve '%s': %s",
				host ? host : "*", strerror(errno));
	if (rc)
		return clf_fail(EHOSTUNREACH, "clf: cannot resolve '%s': %s",
				host ? host : "*", gai_strerror(rc));
	return 0;
}

/* One non-blocking connect attempt: the fd, or a negative errno. */
static int connect_one(const struct addrinfo *ai, int64_t deadline)
{
	int fd, err = 0;
	socklen_t len = sizeof(err);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	clf_tcp_widen_rcvbuf(fd);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS && errno != EINTR) {
		err = -errno;
		goto close_fd;
	}
	err = wait_fd(fd, POLLOUT, deadline);
	if (err < 0)
		goto close_fd;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		err = -err;
		goto close_fd;
	}
	return fd;

close_fd:
	close(fd);
	return err;
}

/*
 * Through a forwarder (`clf forward`, $CLF_FORWARDER=HOST:PORT): ask it
 * on the new connection fd for peer with one line, "CLF-FORWARD
 * host:port\n"; it answers "OK\n" once connected there (then relays
 * bytes both ways), "ERR refused: why\n" for a peer it does not serve
 * (-EACCES), or "ERR why\n" (-EHOSTUNREACH).  0 or a negative errno.
 */
static int forward_ask(int fd, const char *peer, const char *fwd,
		       int64_t deadline)
{
	char line[CLF_ADDR_MAX + 32];
	size_t n = 0;
	int len = snprintf(line, sizeof(line), "CLF-FORWARD %s\n", peer);

	if (send(fd, line, len, MSG_NOSIGNAL) != len)
		return clf_fail(EHOSTUNREACH, "clf: forwarder %s: cannot ask for %s: %s",
				fwd, peer, strerror(errno));
	/* Byte by byte: what follows the line is the daemon's. */
	while (n < sizeof(line) - 1) {
		ssize_t r = recv(fd, line + n, 1, 0);

		if (r == 1 && line[n] == '\n')
			break;
		if (r == 1) {
			n++;
			continue;
		}
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return clf_fail(EHOSTUNREACH, "clf: forwarder %s: %s", fwd,
					strerror(errno));
		if (r == 0)
			return clf_fail(EHOSTUNREACH, "clf: forwarder %s closed the connection",
					fwd);
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0)
			return clf_fail(ETIMEDOUT, "clf: forwarder %s: no answer in time",
					fwd);
	}
	line[n] = '\0';
	/* A refusal is the forwarder's decision; anything else, a daemon
	 * out of its reach (down, perhaps restarting). */
	if (!strncmp(line, "ERR refused", 11))
		return clf_fail(EACCES, "clf: forwarder %s refuses %s: %s", fwd,
				peer, line + 13);
	if (strcmp(line, "OK"))
		return clf_fail(EHOSTUNREACH, "clf: forwarder %s cannot reach %s: %s",
				fwd, peer, strncmp(line, "ERR ", 4) ? line : line + 4);
	return 0;
}

static int tcp_connect(const char *host, const char *port, int timeout_ms,
		       struct clf_conn **out)
{
	int64_t deadline = clf_now_ms() + timeout_ms;
	const char *fwd = getenv("CLF_FORWARDER");
	char fhost[CLF_ADDR_MAX], fport[16];
	struct addrinfo *res, *ai;
	char peer[CLF_ADDR_MAX];
	int fd = -ETIMEDOUT, err;

	format_peer(peer, sizeof(peer), host, port);
	if (fwd && *fwd) {
		if (clf_addr_split(fwd, fhost, sizeof(fhost), fport, sizeof(fport)))
			return clf_fail(EINVAL, "clf: CLF_FORWARDER=%s: %s", fwd,
					clf_error_reason());
		err = resolve(fhost, fport, 0, &res);
	} else {
		err = resolve(host, port, 0, &res);
	}
	if (err)
		return err;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = connect_one(ai, deadline);
		if (fd >= 0 || fd == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		const char *why = fd == -ETIMEDOUT ? "no answer in time"
						   : strerror(-fd);

		if (fd == -ENETUNREACH)
			fd = -EHOSTUNREACH;
		return clf_fail_neg(fd, "clf: cannot connect to %s%s%s: %s", peer,
				    fwd && *fwd ? " through the forwarder " : "",
				    fwd && *fwd ? fwd : "", why);
	}
	if (fwd && *fwd) {
		err = forward_ask(fd, peer, fwd, deadline);
		if (err) {
			close(fd);
			return err;
		}
	}
	err = conn_new(fd, peer, out);
	if (err)
		close(fd);
	return err;
}

static int tcp_listen(const char *host, const char *port,
		      struct clf_listener **out)
{
	struct addrinfo *res, *ai;
	struct tcp_listener *l;
	int fd = -1, err, one = 1;

	err = resolve(host, port, AI_PASSIVE, &res);
	if (err)
		return err;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		/* Restarting daemons must rebind while old sockets linger in
		 * TIME_WAIT. */
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, LISTEN_BACKLOG) == 0)
			break;
		err = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return clf_fail_neg(err ? err : -EADDRNOTAVAIL,
				    "clf: cannot listen on %s:%s: %s",
				    *host ? host : "*", port,
				    strerror(err ? -err : EADDRNOTAVAIL));
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return clf_fail(ENOMEM, "clf: no memory for a listener");
	}
	l->base.ops = &clf_transport_tcp;
	l->fd = fd;
	*out = &l->base;
	return 0;
}

static int tcp_accept(struct clf_listener *cl, int timeout_ms,
		      struct clf_conn **out)
{
	struct tcp_listener *l = tcpl_of(cl);
	int64_t deadline = clf_now_ms() + timeout_ms;
	struct sockaddr_storage ss;
	char peer[CLF_ADDR_MAX];
	int fd, err;

	for (;;) {
		socklen_t len = sizeof(ss);

		fd = accept4(l->fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			format_sockaddr(peer, sizeof(peer),
					(struct sockaddr *)&ss, len);
			break;
		}
		/* A connection that died in the queue is not our error. */
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return clf_fail(errno, "clf: accept on %s: %s",
					cl->addr, strerror(errno));
		err = wait_fd(l->fd, POLLIN, deadline);
		if (err == -ETIMEDOUT)
			return clf_fail(ETIMEDOUT,
					"clf: no connection on %s within %d ms",
					cl->addr, timeout_ms);
		if (err < 0)
			return clf_fail_neg(err, "clf: accept on %s: %s",
					    cl->addr, strerror(-err));
	}
	err = conn_new(fd, peer, out);
	if (err)
		close(fd);
	return err;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Watch fd for input without sleeping, up to ns (clf_conn_set_recv_spin):
 * whether it came.  Each look is a poll of no time; between looks the
 * core goes to any thread queued on it (the daemon that answers us, on a
 * machine whose cores are all taken), else the look comes at once.
 */
static bool spin_readable(int fd, int64_t ns)
{
	int64_t until = mono_ns() + ns;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	do {
		if (poll(&p, 1, 0) > 0)
			return true;
		sched_yield();
	} while (mono_ns() < until);
	return false;
}

/*
 * After a transfer call on c's socket failed (errno set): 0 when it is
 * worth calling again -- interrupted, or the socket became ready for
 * events before the deadline -- else the error, with the message every
 * transfer gives.  timeout_ms is only for the message.
 */
static int retry_or_fail(struct clf_conn *c, short events, int64_t deadline,
			 int timeout_ms)
{
	const char *what = events == POLLIN ? "receive from" : "send to";
	int e = errno, err;

	if (e == EINTR)
		return 0;
	if (e != EAGAIN && e != EWOULDBLOCK)
		return clf_fail(transfer_errno(e), "clf: %s %s: %s", what,
				c->peer, strerror(e));
	if (events == POLLIN && c->recv_spin_ns > 0 &&
	    spin_readable(tcp_of(c)->fd, c->recv_spin_ns))
		return 0;
	err = wait_fd(tcp_of(c)->fd, events, deadline);
	if (err == -ETIMEDOUT && events == POLLIN)
		return clf_fail(ETIMEDOUT,
				"clf: receive from %s: no answer within %d ms",
				c->peer, timeout_ms);
	if (err == -ETIMEDOUT)
		return clf_fail(ETIMEDOUT, "clf: send to %s: timed out after %d ms",
				c->peer, timeout_ms);
	if (err < 0)
		return clf_fail_neg(err, "clf: %s %s: %s", what, c->peer,
				    strerror(-err));
	return 0;
}

static int tcp_send(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		    int64_t deadline)
{
	struct tcp_conn *t = tcp_of(c);
	struct iovec vec[CLF_CONN_MAX_IOV + 1];
	struct msghdr msg = { .msg_iov = vec };
	int first = 0, err;

	if (iovcnt > CLF_CONN_MAX_IOV + 1)
		return clf_fail(EINVAL, "clf: send to %s: %d pieces", c->peer,
				iovcnt);
	memcpy(vec, iov, sizeof(*iov) * (size_t)iovcnt);
	while (first < iovcnt) {
		ssize_t n;

		if (vec[first].iov_len == 0) {
			first++;
			continue;
		}
		msg.msg_iov = vec + first;
		msg.msg_iovlen = (size_t)(iovcnt - first);
		n = sendmsg(t->fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			err = retry_or_fail(c, POLLOUT, deadline, c->timeout_ms);
			if (err)
				return err;
			continue;
		}
		/* Short write: skip what went, resume inside a piece. */
		while (n > 0 && first < iovcnt) {
			size_t k = (size_t)n < vec[first].iov_len
					   ? (size_t)n : vec[first].iov_len;

			vec[first].iov_base = (char *)vec[first].iov_base + k;
			vec[first].iov_len -= k;
			n -= (ssize_t)k;
			if (vec[first].iov_len == 0)
				first++;
		}
	}
	return 0;
}

static int tcp_recv(struct clf_conn *c, void *buf, size_t len,
		    int64_t deadline)
{
	struct tcp_conn *t = tcp_of(c);
	size_t got = 0;
	int err;

	while (got < len) {
		ssize_t n = recv(t->fd, (char *)buf + got, len - got, 0);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return clf_fail(ECONNRESET,
					"clf: %s closed the connection%s",
					c->peer, got ? " inside a message" : "");
		err = retry_or_fail(c, POLLIN, deadline, c->timeout_ms);
		if (err)
			return err;
	}
	return 0;
}

/* Pieces per recvmsg: IOV_MAX, the kernel's limit (UIO_MAXIOV). */
#define RECV_IOV_MAX 1024

static int tcp_recvv(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		     int64_t deadline)
{
	struct tcp_conn *t = tcp_of(c);
	struct iovec vec[RECV_IOV_MAX];
	int first = 0, n = 0, err;

	while (first < iovcnt || n > 0) {
		struct msghdr msg = { .msg_iov = vec };
		ssize_t got;

		/* Refill the window of pieces still to fill. */
		while (n < RECV_IOV_MAX && first < iovcnt) {
			if (iov[first].iov_len)
				vec[n++] = iov[first];
			first++;
		}
		if (n == 0)
			break;
		msg.msg_iovlen = (size_t)n;
		got = recvmsg(t->fd, &msg, 0);
		if (got > 0) {
			int k = 0;

			/* Drop what is full, resume inside a piece. */
			while (got > 0 && (size_t)got >= vec[k].iov_len)
				got -= (ssize_t)vec[k++].iov_len;
			if (got > 0) {
				vec[k].iov_base = (char *)vec[k].iov_base + got;
				vec[k].iov_len -= (size_t)got;
			}
			memmove(vec, vec + k, sizeof(*vec) * (size_t)(n - k));
			n -= k;
			continue;
		}
		if (got == 0)
			return clf_fail(ECONNRESET,
					"clf: %s closed the connection inside a message",
					c->peer);
		err = retry_or_fail(c, POLLIN, deadline, c->timeout_ms);
		if (err)
			return err;
	}
	return 0;
}

static int tcp_poll(struct clf_conn *c, int timeout_ms)
{
	struct pollfd p = { .fd = tcp_of(c)->fd, .events = POLLIN };
	int64_t deadline = clf_now_ms() + timeout_ms;
	int n;

	/* Unlike wait_fd, a zero timeout still looks. */
	do
		n = poll(&p, 1, clf_deadline_left(deadline));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return clf_fail(errno, "clf: poll %s: %s", c->peer,
				strerror(errno));
	return n > 0;
}

static int tcp_conn_fd(const struct clf_conn *c)
{
	return tcp_of(c)->fd;
}

/* The connection's splice pipe, made on first use: 0 or -errno. */
static int tcp_pipe(struct tcp_conn *t)
{
	int size;

	if (t->has_pipe)
		return 0;
	if (pipe2(t->pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	/* Bigger steps, fewer calls; a failure leaves the default. */
	(void)fcntl(t->pipe[1], F_SETPIPE_SZ, SPLICE_PIPE_SIZE);
	size = fcntl(t->pipe[1], F_GETPIPE_SZ);
	t->pipe_cap = size > 0 ? (size_t)size : 65536;
	t->has_pipe = true;
	return 0;
}

/* Up to DROP_CHUNK of the n bytes waiting in the pipe into buf. */
static ssize_t pipe_take(struct tcp_conn *t, char *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(t->pipe[0], buf, n < DROP_CHUNK ? n : DROP_CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return clf_fail(EIO, "clf: lost bytes in a splice pipe");
		return r;
	}
}

/*
 * Move the n bytes in the pipe to fd at *off, or drop them once the file
 * failed (*file_err).  A file system that cannot splice (EINVAL) is
 * written from a bounce buffer instead: the bytes are already out of the
 * socket.
 */
static int pipe_to_file(struct tcp_conn *t, int fd, int64_t *off, size_t n,
			int *file_err)
{
	char scratch[DROP_CHUNK];
	bool bounce = false;

	while (n) {
		loff_t at = *off;
		ssize_t w;

		if (*file_err || bounce) {
			w = pipe_take(t, scratch, n);
			if (w < 0)
				return (int)w;
			if (!*file_err)
				*file_err = clf_pwrite_all(fd, scratch, (size_t)w,
							   off);
			n -= (size_t)w;
			continue;
		}
		w = splice(t->pipe[0], NULL, fd, &at, n, SPLICE_F_MOVE);
		if (w > 0) {
			*off = at;
			n -= (size_t)w;
		} else if (w < 0 && errno == EINVAL) {
			bounce = true;
		} else if (w == 0 || errno != EINTR) {
			*file_err = w < 0 ? -errno : -EIO;
		}
	}
	return 0;
}

static int tcp_recv_to_file(struct clf_conn *c, int fd, int64_t *off,
			    size_t len, int timeout_ms, int *file_err)
{
	struct tcp_conn *t = tcp_of(c);
	bool started = false;
	int err;

	if (tcp_pipe(t))
		return -ENOSYS;	/* out of descriptors: the bounce path */
	while (len) {
		size_t want = len < t->pipe_cap ? len : t->pipe_cap;
		ssize_t n = splice(t->fd, NULL, t->pipe[1], NULL, want,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n > 0) {
			started = true;
			len -= (size_t)n;
			/* The pipe is empty again after this, so EAGAIN
			 * above always means the socket had nothing. */
			err = pipe_to_file(t, fd, off, (size_t)n, file_err);
			if (err)
				return err;
			continue;
		}
		if (n == 0)
			return clf_fail(ECONNRESET,
					"clf: %s closed the connection inside a message",
					c->peer);
		if (errno == EINVAL && !started)
			return -ENOSYS;	/* no splice for this socket */
		err = retry_or_fail(c, POLLIN, clf_deadline_after(timeout_ms),
				    timeout_ms);
		if (err)
			return err;
	}
	return 0;
}

/*
 * File bytes to the socket with sendfile(2): TCP takes the page cache's
 * pages by reference, so an iod's read reply is copied once, by the
 * receiver, where pread + send copy twice more.
 */
static ssize_t tcp_send_file(struct clf_conn *c, int fd, int64_t off,
			     size_t len, int64_t deadline)
{
	struct tcp_conn *t = tcp_of(c);
	size_t sent = 0;
	int err;

	while (sent < len) {
		off_t at = off + (off_t)sent;
		ssize_t n = sendfile(t->fd, fd, &at, len - sent);

		if (n > 0) {
			sent += (size_t)n;
			continue;
		}
		if (n == 0)
			break;	/* the end of the file */
		if ((errno == EINVAL || errno == ENOSYS) && sent == 0)
			return -ENOSYS;	/* a file that cannot: bounce */
		err = retry_or_fail(c, POLLOUT, deadline, c->timeout_ms);
		if (err)
			return err;
	}
	return (ssize_t)sent;
}

static void tcp_close(struct clf_conn *c)
{
	struct tcp_conn *t = tcp_of(c);

	if (t->has_pipe) {
		close(t->pipe[0]);
		close(t->pipe[1]);
	}
	close(t->fd);
	free(t);
}

static int tcp_listener_fd(const struct clf_listener *l)
{
	return tcpl_of(l)->fd;
}

static int tcp_listener_port(const struct clf_listener *l)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(tcpl_of(l)->fd, (struct sockaddr *)&ss, &len) < 0)
		return clf_fail(errno, "clf: listener %s: %s", l->addr,
				strerror(errno));
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static void tcp_listener_close(struct clf_listener *l)
{
	struct tcp_listener *t = tcpl_of(l);

	close(t->fd);
	free(t);
}

const struct clf_transport_ops clf_transport_tcp = {
	.name = "tcp",
	.connect = tcp_connect,
	.listen = tcp_listen,
	.accept = tcp_accept,
	.send = tcp_send,
	.recv = tcp_recv,
	.recvv = tcp_recvv,
	.recv_to_file = tcp_recv_to_file,
	.send_file = tcp_send_file,
	.poll = tcp_poll,
	.conn_fd = tcp_conn_fd,
	.close = tcp_close,
	.listener_fd = tcp_listener_fd,
	.listener_port = tcp_listener_port,
	.listener_close = tcp_listener_close,
};
