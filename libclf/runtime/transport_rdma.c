// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma.c -- the RDMA transport: RC queue pairs set up with
 * rdma_cm, clf's byte stream carried in SENDs (transport_rdma_wire.h).
 *
 * Each connection registers one block of CLF_RDMA_RECVS receive buffers
 * and CLF_RDMA_SENDS send buffers, all posted or free from the start;
 * a send copies the caller's bytes into free send buffers and a receive
 * copies them out of filled receive buffers, so user memory is never
 * registered and nothing can be sent from a buffer the caller freed.
 * Bulk data goes the same way, in SENDs of one buffer each: the
 * server-directed RDMA READ/WRITE of registered user memory (issue 16)
 * is not done yet.
 *
 * Completions are taken by a thread per connection that sleeps on the
 * completion channel and the connection's rdma_cm event channel: it
 * queues what arrived, returns send buffers, reposts credit-only
 * buffers, and records a disconnect or a failed work request as the
 * connection's error.  Callers wait on a condition variable with their
 * deadline; clf_conn_fd() is an eventfd that polls readable exactly
 * while received bytes (or that error) wait, as a TCP socket would.
 *
 * Peers speak both: a daemon listening with "rdma" also listens on TCP
 * on the same port (rdma_cm's port space is not the socket one), and a
 * client with no RDMA device, or none on the route to the daemon,
 * connects over TCP instead and logs that it did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "error.h"
#include "log.h"
#include "transport_i.h"
#include "transport_rdma_wire.h"

#define CLF_RDMA_SENDS 8	/* send buffers per connection */
#define SLOTS (CLF_RDMA_RECVS + CLF_RDMA_SENDS)
#define BACKLOG 64
/* rdma_cm's own limit for resolving an address or a route. */
#define RESOLVE_MS 2000

struct rdma_conn {
	struct clf_conn base;	/* first: transport.c sees only this */
	struct rdma_event_channel *ech;	/* this connection's cm events */
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;		/* SLOTS buffers of CLF_RDMA_SLOT bytes */
	int evfd;		/* readable: bytes or an error wait */
	int stop[2];		/* a pipe: the thread's end */
	pthread_t thread;
	bool has_thread;
	bool connected;		/* rdma_disconnect on close */

	pthread_mutex_t mu;	/* everything below */
	pthread_cond_t cv;
	struct clf_rdma_credits cr;
	int rxq[CLF_RDMA_RECVS];	/* filled receive buffers, in order */
	uint32_t rxlen[SLOTS];	/* data bytes of each */
	int rxhead, rxcount;
	size_t rxpos;		/* bytes of rxq[rxhead] consumed */
	int txfree[CLF_RDMA_SENDS];
	int ntxfree;
	bool credit_pending;	/* a credit SEND waits for a send buffer */
	bool readable;		/* evfd holds a count */
	int err;		/* 0, or how the connection failed */
};

struct rdma_listener {
	struct clf_listener base;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct clf_listener *tcp;	/* the same port over TCP */
	int epfd;		/* both, for clf_listener_fd */
};

static _Atomic unsigned long stat_sends, stat_recvs, stat_credit_sends;

static struct rdma_conn *rc_of(const struct clf_conn *c)
{
	return (struct rdma_conn *)c;
}

static struct rdma_listener *rl_of(const struct clf_listener *l)
{
	return (struct rdma_listener *)l;
}

static uint8_t *slot(struct rdma_conn *r, int i)
{
	return r->mem + (size_t)i * CLF_RDMA_SLOT;
}

void clf_rdma_stats(unsigned long *sends, unsigned long *recvs,
		    unsigned long *credit_sends)
{
	*sends = atomic_load(&stat_sends);
	*recvs = atomic_load(&stat_recvs);
	*credit_sends = atomic_load(&stat_credit_sends);
}

/* ------------------------------------------------------------------ */
/* Buffers and work requests                                           */
/* ------------------------------------------------------------------ */

static int post_recv(struct rdma_conn *r, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(r, i),
		.length = CLF_RDMA_SLOT,
		.lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return -ibv_post_recv(r->id->qp, &wr, &bad);
}

/* Post send buffer i with its header and len data bytes. */
static int post_send(struct rdma_conn *r, int i, uint8_t type,
		     uint16_t credits, uint32_t len)
{
	struct clf_rdma_pkt p = { type, credits, len };
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(r, i),
		.length = CLF_RDMA_PKT_HEADER + len,
		.lkey = r->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	clf_rdma_pkt_encode(slot(r, i), &p);
	atomic_fetch_add(&stat_sends, 1);
	return -ibv_post_send(r->id->qp, &wr, &bad);
}

/* Record the connection's failure (the first one wins); under mu. */
static void fail_locked(struct rdma_conn *r, int err, const char *why)
{
	uint64_t one = 1;

	if (r->err)
		return;
	r->err = err;
	clf_fail_neg(err, "clf: %s: %s", r->base.peer, why);
	if (!r->readable && write(r->evfd, &one, sizeof(one)) == sizeof(one))
		r->readable = true;
	pthread_cond_broadcast(&r->cv);
}

/* A credit-only SEND if one is due and a buffer free; under mu. */
static void send_credits_locked(struct rdma_conn *r)
{
	int i;

	if (r->err || (!r->credit_pending &&
		       !clf_rdma_credits_update_due(&r->cr)))
		return;
	if (r->ntxfree == 0) {
		r->credit_pending = true;	/* the next completion sends it */
		return;
	}
	r->credit_pending = false;
	if (r->cr.owed == 0)
		return;
	i = r->txfree[--r->ntxfree];
	atomic_fetch_add(&stat_credit_sends, 1);
	if (post_send(r, i, CLF_RDMA_PKT_CREDIT,
		      clf_rdma_credits_take_owed(&r->cr), 0))
		fail_locked(r, -ECONNRESET, "cannot post a SEND");
}

static void set_readable_locked(struct rdma_conn *r)
{
	uint64_t v = 1;
	bool want = r->rxcount > 0 || r->err;

	if (want && !r->readable) {
		if (write(r->evfd, &v, sizeof(v)) == sizeof(v))
			r->readable = true;
	} else if (!want && r->readable) {
		if (read(r->evfd, &v, sizeof(v)) == sizeof(v))
			r->readable = false;
	}
}

/* One completion, from the thread; under mu. */
static void complete_locked(struct rdma_conn *r, const struct ibv_wc *wc)
{
	struct clf_rdma_pkt p;
	int i = (int)wc->wr_id;

	if (wc->status != IBV_WC_SUCCESS) {
		char why[160];

		snprintf(why, sizeof(why), "%s failed: %s",
			 wc->opcode & IBV_WC_RECV ? "a receive" : "a send",
			 ibv_wc_status_str(wc->status));
		fail_locked(r, wc->status == IBV_WC_RETRY_EXC_ERR
			       ? -EHOSTDOWN : -ECONNRESET, why);
		return;
	}
	if (!(wc->opcode & IBV_WC_RECV)) {
		r->txfree[r->ntxfree++] = i;
		send_credits_locked(r);
		pthread_cond_broadcast(&r->cv);
		return;
	}
	atomic_fetch_add(&stat_recvs, 1);
	if (clf_rdma_pkt_decode(slot(r, i), wc->byte_len, &p) ||
	    clf_rdma_credits_grant(&r->cr, p.credits)) {
		fail_locked(r, -EPROTO, clf_error_reason());
		return;
	}
	if (p.type == CLF_RDMA_PKT_CREDIT || p.len == 0) {
		/* Outside the window: back at once, owing nothing. */
		if (post_recv(r, i))
			fail_locked(r, -ECONNRESET, "cannot post a receive");
		if (p.type == CLF_RDMA_PKT_DATA)
			clf_rdma_credits_consumed(&r->cr);
	} else {
		r->rxq[(r->rxhead + r->rxcount) % CLF_RDMA_RECVS] = i;
		r->rxlen[i] = p.len;
		r->rxcount++;
		set_readable_locked(r);
	}
	pthread_cond_broadcast(&r->cv);
}

static void drain_cq(struct rdma_conn *r)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(r->cq, 16, wc)) > 0) {
		pthread_mutex_lock(&r->mu);
		for (int k = 0; k < n; k++)
			complete_locked(r, &wc[k]);
		pthread_mutex_unlock(&r->mu);
	}
}

static void cm_event(struct rdma_conn *r)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(r->ech, &ev))
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		pthread_mutex_lock(&r->mu);
		fail_locked(r, -ECONNRESET, "closed the connection");
		pthread_mutex_unlock(&r->mu);
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

/* The completion thread: until close() writes to stop. */
static void *progress(void *arg)
{
	struct rdma_conn *r = arg;
	struct pollfd p[3] = {
		{ .fd = r->cch->fd, .events = POLLIN },
		{ .fd = r->ech->fd, .events = POLLIN },
		{ .fd = r->stop[0], .events = POLLIN },
	};

	for (;;) {
		struct ibv_cq *cq;
		void *ctx;

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[2].revents)
			break;
		if (p[0].revents && ibv_get_cq_event(r->cch, &cq, &ctx) == 0) {
			ibv_ack_cq_events(cq, 1);
			(void)ibv_req_notify_cq(r->cq, 0);
		}
		/* After re-arming: nothing that completed meanwhile is left
		 * without an event. */
		drain_cq(r);
		if (p[1].revents)
			cm_event(r);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setting up                                                          */
/* ------------------------------------------------------------------ */

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Wait up to the deadline for the next cm event on ech of type want. */
static int wait_cm(struct rdma_event_channel *ech, enum rdma_cm_event_type want,
		   int64_t deadline, int *status)
{
	struct pollfd p = { .fd = ech->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type got;

	for (;;) {
		int left = clf_deadline_left(deadline);

		if (rdma_get_cm_event(ech, &ev) == 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (left == 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			return -errno;
	}
	got = ev->event;
	*status = ev->status;
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	switch (got) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return -ENODEV;	/* no RDMA device on the way there */
	case RDMA_CM_EVENT_UNREACHABLE:
		return -EHOSTUNREACH;
	default:
		return -ECONNRESET;
	}
}

/* Memory, queues and the posted receives of a connection whose id is
 * resolved (client) or requested (server). */
static int setup_qp(struct rdma_conn *r)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = CLF_RDMA_SENDS,
			 .max_recv_wr = CLF_RDMA_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	r->pd = ibv_alloc_pd(r->id->verbs);
	r->cch = r->pd ? ibv_create_comp_channel(r->id->verbs) : NULL;
	r->cq = r->cch ? ibv_create_cq(r->id->verbs, SLOTS, r, r->cch, 0)
		       : NULL;
	r->mem = r->cq ? aligned_alloc(4096, (size_t)SLOTS * CLF_RDMA_SLOT)
		       : NULL;
	r->mr = r->mem ? ibv_reg_mr(r->pd, r->mem,
				    (size_t)SLOTS * CLF_RDMA_SLOT,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!r->mr)
		return -errno ? -errno : -ENOMEM;
	qa.send_cq = qa.recv_cq = r->cq;
	if (rdma_create_qp(r->id, r->pd, &qa))
		return -errno;
	if (ibv_req_notify_cq(r->cq, 0))
		return -errno;
	for (int i = 0; i < CLF_RDMA_RECVS; i++) {
		int err = post_recv(r, i);

		if (err)
			return err;
	}
	for (int i = 0; i < CLF_RDMA_SENDS; i++)
		r->txfree[i] = CLF_RDMA_RECVS + i;
	r->ntxfree = CLF_RDMA_SENDS;
	return 0;
}

static struct rdma_conn *conn_alloc(const char *peer)
{
	struct rdma_conn *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	clf_conn_base_init(&r->base, &clf_transport_rdma, peer);
	r->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->stop[0] = r->stop[1] = -1;
	if (r->evfd < 0 || pipe2(r->stop, O_CLOEXEC)) {
		if (r->evfd >= 0)
			close(r->evfd);
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	clf_rdma_credits_init(&r->cr, CLF_RDMA_WINDOW, CLF_RDMA_CREDIT_BATCH);
	return r;
}

static void conn_free(struct rdma_conn *r)
{
	if (r->has_thread) {
		if (write(r->stop[1], "x", 1) < 0)
			clf_log(CLF_LOG_WARN, "rdma: cannot stop a thread");
		pthread_join(r->thread, NULL);
	}
	if (r->connected)
		rdma_disconnect(r->id);
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	free(r->mem);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->cch)
		ibv_destroy_comp_channel(r->cch);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->id)
		rdma_destroy_id(r->id);
	if (r->ech)
		rdma_destroy_event_channel(r->ech);
	close(r->evfd);
	close(r->stop[0]);
	close(r->stop[1]);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

static int start(struct rdma_conn *r)
{
	int err = -pthread_create(&r->thread, NULL, progress, r);

	if (err)
		return err;
	r->has_thread = true;
	r->connected = true;
	return 0;
}

static void format_peer(char *buf, size_t len, const char *host,
			const char *port)
{
	if (strchr(host, ':'))
		snprintf(buf, len, "[%.255s]:%.15s", host, port);
	else
		snprintf(buf, len, "%.255s:%.15s", host, port);
}

/* Whether this host has an RDMA device at all. */
static bool have_device(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	return n > 0;
}

/*
 * librdmacm opens every device once per process and keeps it; in a
 * child forked after that the kernel refuses those descriptors
 * ("changed security contexts after opening file descriptor").  So a
 * process only uses RDMA if it is the one that first did.
 */
static pid_t rdma_pid;
static pthread_mutex_t rdma_pid_lock = PTHREAD_MUTEX_INITIALIZER;

static bool forked_since_first_use(void)
{
	bool forked;

	pthread_mutex_lock(&rdma_pid_lock);
	if (!rdma_pid)
		rdma_pid = getpid();
	forked = rdma_pid != getpid();
	pthread_mutex_unlock(&rdma_pid_lock);
	return forked;
}

/* Fall back to TCP, saying so once per reason and peer kind. */
static int fallback(const char *host, const char *port, int timeout_ms,
		    struct clf_conn **out, const char *why)
{
	clf_log(CLF_LOG_WARN, "rdma: %s: connecting to %s:%s over TCP", why,
		host, port);
	return clf_transport_tcp.connect(host, port, timeout_ms, out);
}

static int rdma_connect_(const char *host, const char *port, int timeout_ms,
			 struct clf_conn **out)
{
	int64_t deadline = clf_now_ms() + timeout_ms;
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV }, *ai;
	char peer[CLF_ADDR_MAX];
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_conn *r;
	int err, st = 0, rc;

	if (forked_since_first_use())
		return fallback(host, port, timeout_ms, out,
				"a process forked after its parent used RDMA");
	if (!have_device())
		return fallback(host, port, timeout_ms, out,
				"no RDMA device on this host");
	format_peer(peer, sizeof(peer), host, port);
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc)
		return clf_fail(EHOSTUNREACH, "clf: cannot resolve '%s': %s",
				host, gai_strerror(rc));
	r = conn_alloc(peer);
	if (!r) {
		freeaddrinfo(ai);
		return clf_fail(ENOMEM, "clf: no memory for a connection to %s",
				peer);
	}
	r->ech = rdma_create_event_channel();
	if (!r->ech || rdma_create_id(r->ech, &r->id, r, RDMA_PS_TCP)) {
		err = -errno;
		goto fail;
	}
	set_nonblock(r->ech->fd);
	err = rdma_resolve_addr(r->id, NULL, ai->ai_addr, RESOLVE_MS) ? -errno
		: wait_cm(r->ech, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, &st);
	if (!err)
		err = rdma_resolve_route(r->id, RESOLVE_MS) ? -errno
			: wait_cm(r->ech, RDMA_CM_EVENT_ROUTE_RESOLVED,
				  deadline, &st);
	if (err == -ENODEV || (!err && !r->id->verbs)) {
		freeaddrinfo(ai);
		conn_free(r);
		return fallback(host, port, timeout_ms, out,
				"no RDMA device on the route");
	}
	if (!err)
		err = setup_qp(r);
	if (!err)
		err = rdma_connect(r->id, &cp) ? -errno
			: wait_cm(r->ech, RDMA_CM_EVENT_ESTABLISHED, deadline,
				  &st);
	if (!err)
		err = start(r);
	if (err)
		goto fail;
	freeaddrinfo(ai);
	*out = &r->base;
	return 0;
fail:
	freeaddrinfo(ai);
	conn_free(r);
	return clf_fail_neg(err, "clf: cannot connect to %s over rdma: %s",
			    peer, err == -ETIMEDOUT ? "no answer in time"
			    : err == -ECONNREFUSED ? "refused (nobody listens)"
			    : strerror(-err));
}

static int rdma_listen_(const char *host, const char *port,
			struct clf_listener **out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai;
	struct epoll_event ev = { .events = EPOLLIN };
	struct rdma_listener *l = calloc(1, sizeof(*l));
	char tport[16];
	int err, rc;

	if (!l)
		return clf_fail(ENOMEM, "clf: no memory for a listener");
	l->epfd = -1;
	rc = getaddrinfo(*host && strcmp(host, "*") ? host : NULL, port,
			 &hints, &ai);
	if (rc) {
		free(l);
		return clf_fail(EHOSTUNREACH, "clf: cannot resolve '%s': %s",
				host, gai_strerror(rc));
	}
	l->ech = rdma_create_event_channel();
	err = !l->ech || rdma_create_id(l->ech, &l->id, l, RDMA_PS_TCP) ||
	      rdma_bind_addr(l->id, ai->ai_addr) || rdma_listen(l->id, BACKLOG)
		? -errno : 0;
	freeaddrinfo(ai);
	if (err) {
		err = clf_fail_neg(err, "clf: cannot listen on %s:%s over rdma: %s",
				   *host ? host : "*", port, strerror(-err));
		goto fail;
	}
	set_nonblock(l->ech->fd);
	/* Port 0: TCP on the port rdma_cm chose, so that both are one. */
	snprintf(tport, sizeof(tport), "%u", ntohs(rdma_get_src_port(l->id)));
	err = clf_transport_tcp.listen(host, tport, &l->tcp);
	if (err)
		goto fail;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0 ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->ech->fd, &ev) ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD,
		      clf_transport_tcp.listener_fd(l->tcp), &ev)) {
		err = clf_fail(errno, "clf: listener: %s", strerror(errno));
		goto fail;
	}
	l->base.ops = &clf_transport_rdma;
	*out = &l->base;
	return 0;
fail:
	if (l->tcp)
		clf_transport_tcp.listener_close(l->tcp);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ech)
		rdma_destroy_event_channel(l->ech);
	free(l);
	return err;
}

/* Take a connect request: its own channel, queues, accept, established. */
static int accept_request(struct rdma_listener *l, struct rdma_cm_id *id,
			  int timeout_ms, struct clf_conn **out)
{
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[NI_MAXHOST], port[NI_MAXSERV], peer[CLF_ADDR_MAX];
	struct rdma_conn *r;
	int err, st;

	if (getnameinfo(sa, sa->sa_family == AF_INET6
			? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
			host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(peer, sizeof(peer), "(unknown peer)");
	else
		format_peer(peer, sizeof(peer), host, port);
	r = conn_alloc(peer);
	if (!r) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return clf_fail(ENOMEM, "clf: no memory for a connection");
	}
	r->ech = rdma_create_event_channel();
	if (!r->ech || rdma_migrate_id(id, r->ech)) {
		err = -errno;
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		goto fail;
	}
	r->id = id;
	id->context = r;
	set_nonblock(r->ech->fd);
	err = setup_qp(r);
	if (!err)
		err = rdma_accept(id, &cp) ? -errno
			: wait_cm(r->ech, RDMA_CM_EVENT_ESTABLISHED,
				  clf_deadline_after(timeout_ms), &st);
	if (!err)
		err = start(r);
	if (!err) {
		*out = &r->base;
		return 0;
	}
fail:
	conn_free(r);
	return clf_fail_neg(err, "clf: accept over rdma from %s: %s", peer,
			    strerror(-err));
}

static int rdma_accept_(struct clf_listener *cl, int timeout_ms,
			struct clf_conn **out)
{
	struct rdma_listener *l = rl_of(cl);
	int64_t deadline = clf_now_ms() + timeout_ms;

	for (;;) {
		struct rdma_cm_event *ev;
		struct epoll_event e;
		int err;

		err = clf_transport_tcp.accept(l->tcp, 0, out);
		if (err != -ETIMEDOUT)
			return err;
		while (rdma_get_cm_event(l->ech, &ev) == 0) {
			struct rdma_cm_id *id = ev->id;
			bool req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;

			rdma_ack_cm_event(ev);
			if (req)
				return accept_request(l, id, 5000, out);
		}
		if (clf_deadline_left(deadline) == 0)
			return clf_fail(ETIMEDOUT,
					"clf: no connection on %s within %d ms",
					cl->addr, timeout_ms);
		if (epoll_wait(l->epfd, &e, 1, clf_deadline_left(deadline)) < 0 &&
		    errno != EINTR)
			return clf_fail(errno, "clf: accept on %s: %s", cl->addr,
					strerror(errno));
	}
}

/* ------------------------------------------------------------------ */
/* Moving bytes                                                        */
/* ------------------------------------------------------------------ */

/* Wait on cv until the deadline; -ETIMEDOUT when it passed. */
static int wait_locked(struct rdma_conn *r, int64_t deadline)
{
	struct timespec ts;
	int64_t left = clf_deadline_left(deadline);

	if (left == 0)
		return -ETIMEDOUT;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += left / 1000;
	ts.tv_nsec += (left % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	return 0;
}

/* The connection's error again, for this call's message. */
static int error_locked(struct rdma_conn *r, const char *what)
{
	return clf_fail_neg(r->err, "clf: %s %s: %s", what, r->base.peer,
			    r->err == -ECONNRESET ? "the peer closed the connection"
			    : strerror(-r->err));
}

static int rdma_send(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		     int64_t deadline)
{
	struct rdma_conn *r = rc_of(c);
	int k = 0;
	size_t off = 0;
	int err = 0;

	pthread_mutex_lock(&r->mu);
	while (k < iovcnt && !err) {
		uint8_t *dst;
		size_t room = CLF_RDMA_PKT_DATA_MAX, n = 0;
		int i;

		if (r->err) {
			err = error_locked(r, "send to");
			break;
		}
		if (!clf_rdma_credits_can_send(&r->cr) || r->ntxfree == 0) {
			if (wait_locked(r, deadline))
				err = clf_fail(ETIMEDOUT,
					       "clf: send to %s: timed out after %d ms",
					       c->peer, c->timeout_ms);
			continue;
		}
		i = r->txfree[--r->ntxfree];
		dst = slot(r, i) + CLF_RDMA_PKT_HEADER;
		/* Gather as much as one buffer holds. */
		while (k < iovcnt && n < room) {
			size_t take = iov[k].iov_len - off;

			if (take > room - n)
				take = room - n;
			memcpy(dst + n, (const char *)iov[k].iov_base + off,
			       take);
			n += take;
			off += take;
			if (off == iov[k].iov_len) {
				k++;
				off = 0;
			}
		}
		if (n == 0) {
			r->txfree[r->ntxfree++] = i;
			break;
		}
		if (post_send(r, i, CLF_RDMA_PKT_DATA,
			      clf_rdma_credits_spend(&r->cr), (uint32_t)n)) {
			fail_locked(r, -ECONNRESET, "cannot post a SEND");
			err = error_locked(r, "send to");
		}
	}
	pthread_mutex_unlock(&r->mu);
	return err;
}

/* Copy up to len waiting bytes into buf; returns the count; under mu. */
static size_t take_locked(struct rdma_conn *r, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len && r->rxcount) {
		int i = r->rxq[r->rxhead];
		size_t avail = r->rxlen[i] - r->rxpos;
		size_t n = avail < len - got ? avail : len - got;

		memcpy(buf + got, slot(r, i) + CLF_RDMA_PKT_HEADER + r->rxpos,
		       n);
		got += n;
		r->rxpos += n;
		if (r->rxpos < r->rxlen[i])
			break;
		r->rxpos = 0;
		r->rxhead = (r->rxhead + 1) % CLF_RDMA_RECVS;
		r->rxcount--;
		if (post_recv(r, i)) {
			fail_locked(r, -ECONNRESET, "cannot post a receive");
			break;
		}
		clf_rdma_credits_consumed(&r->cr);
		send_credits_locked(r);
	}
	set_readable_locked(r);
	return got;
}

static int rdma_recv(struct clf_conn *c, void *buf, size_t len,
		     int64_t deadline)
{
	struct rdma_conn *r = rc_of(c);
	size_t got = 0;
	int err = 0;

	pthread_mutex_lock(&r->mu);
	while (got < len) {
		got += take_locked(r, (uint8_t *)buf + got, len - got);
		if (got == len)
			break;
		if (r->err) {
			err = error_locked(r, "receive from");
			break;
		}
		if (wait_locked(r, deadline)) {
			err = clf_fail(ETIMEDOUT,
				       "clf: receive from %s: no answer within %d ms",
				       c->peer, c->timeout_ms);
			break;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return err;
}

static int rdma_poll(struct clf_conn *c, int timeout_ms)
{
	struct rdma_conn *r = rc_of(c);
	int64_t deadline = clf_now_ms() + timeout_ms;
	int ready;

	pthread_mutex_lock(&r->mu);
	while (!(ready = r->rxcount > 0 || r->err) &&
	       wait_locked(r, deadline) == 0)
		;
	pthread_mutex_unlock(&r->mu);
	return ready;
}

static int rdma_conn_fd(const struct clf_conn *c)
{
	return rc_of(c)->evfd;
}

static void rdma_close(struct clf_conn *c)
{
	conn_free(rc_of(c));
}

static int rdma_listener_fd(const struct clf_listener *l)
{
	return rl_of(l)->epfd;
}

static int rdma_listener_port(const struct clf_listener *l)
{
	return ntohs(rdma_get_src_port(rl_of(l)->id));
}

static void rdma_listener_close(struct clf_listener *cl)
{
	struct rdma_listener *l = rl_of(cl);

	clf_transport_tcp.listener_close(l->tcp);
	close(l->epfd);
	rdma_destroy_id(l->id);
	rdma_destroy_event_channel(l->ech);
	free(l);
}

const struct clf_transport_ops clf_transport_rdma = {
	.name = "rdma",
	.connect = rdma_connect_,
	.listen = rdma_listen_,
	.accept = rdma_accept_,
	.send = rdma_send,
	.recv = rdma_recv,
	.poll = rdma_poll,
	.conn_fd = rdma_conn_fd,
	.close = rdma_close,
	.listener_fd = rdma_listener_fd,
	.listener_port = rdma_listener_port,
	.listener_close = rdma_listener_close,
};
