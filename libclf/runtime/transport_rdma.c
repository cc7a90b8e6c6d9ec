// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma.c -- the RDMA transport: RC queue pairs set up with
 * rdma_cm, clf's byte stream carried in SENDs (transport_rdma_wire.h).
 *
 * Each connection registers one block of CLF_RDMA_SENDS send buffers,
 * and a client one of CLF_RDMA_RECVS receive buffers too, all posted or
 * free from the start; small messages are copied into free send buffers
 * and out of filled receive buffers.  A server (a daemon, with many
 * clients, most of them idle at any time) takes its receive buffers from
 * a shared receive queue per device instead (struct rdma_srq): the pool
 * grows by CLF_RDMA_RECVS buffers with each connection up to SRQ_BUFS,
 * so a connection costs the daemon its send buffers only.  The credits
 * still bound what each client has in flight; when many send at once and
 * the pool runs dry, the NIC answers RNR and the sender's NIC retries
 * (rnr_retry_count 7: for ever) -- slower, never lost.
 *
 * Bulk data (a piece of at least CLF_RDMA_DIRECT_MIN bytes in one iovec)
 * is moved by the server -- the side that accepted -- with RDMA, as
 * Lustre and OrangeFS do, so a daemon's memory is never open to clients:
 *   client sends:  RDESC {addr, rkey, len} in the stream; the server's
 *                  receive READs those bytes straight into its buffer
 *                  and answers DONE, which releases the client's send;
 *   server sends:  RTS {len} in the stream; the client's receive answers
 *                  CTS {addr, rkey, n} naming its own buffer, the server
 *                  WRITEs n bytes there and answers DONE; again until len.
 * The client's buffers are registered through a cache
 * (transport_rdma_regcache.h, safety in transport_rdma_memhooks.c), the
 * server's too, with local access only; one cache per device and side,
 * shared by the process's connections on it, as its protection domain is
 * (struct rdma_dev, transport_rdma_devcache.h).  A client that cannot register
 * (memlock limit, read-only memory) sends those bytes inline instead, and
 * answers an RTS with CTS {len 0}: "send them inline", which the server
 * then does after the RTS.  A client waiting in a send for DONE answers
 * every RTS that arrives so, since it has no buffer to name yet: two
 * peers never wait on each other's rendezvous.
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
#include "transport_rdma_devcache.h"
#include "transport_rdma_memhooks.h"
#include "transport_rdma_regcache.h"
#include "transport_rdma_wire.h"
#include <sys/resource.h>

#define CLF_RDMA_SENDS 8	/* send buffers per connection */
/* Buffer numbers: send buffers 0..CLF_RDMA_SENDS-1 in a connection's own
 * block, receive buffers from CLF_RDMA_SENDS on (in the block, or the
 * SRQ's k-th at CLF_RDMA_SENDS + k). */
#define SLOTS (CLF_RDMA_SENDS + CLF_RDMA_RECVS)
/* A server's shared receive queue: a chunk more with each connection. */
#define SRQ_CHUNK CLF_RDMA_RECVS
#define SRQ_CHUNKS_MAX 8
#define SRQ_BUFS (SRQ_CHUNK * SRQ_CHUNKS_MAX)
#define BUF_IDS (CLF_RDMA_SENDS + SRQ_BUFS)
#define BACKLOG 64
/* The largest piece one descriptor names. */
#define DIRECT_PIECE ((size_t)16 << 20)
/* Big pieces moved one after another without waiting in between. */
#define RUN_MAX 16
/* wr_id of RDMA READ/WRITE work requests (others are buffer numbers). */
#define WR_RDMA (1ULL << 62)
/* The registration cache of one device (all its connections). */
#define CACHE_ENTRIES 64
#define CACHE_BYTES ((size_t)64 << 20)
/* Registered around a miss when mapped: a pool's neighbours then hit. */
#define CACHE_BLOCK ((size_t)1 << 20)
/* rdma_cm's own limit for resolving an address or a route. */
#define RESOLVE_MS 2000

/*
 * The receive buffers that every connection a server accepted on one
 * device shares (they need one protection domain: theirs).  Never freed:
 * a daemon keeps listening.
 */
struct rdma_srq {
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	pthread_mutex_t mu;	/* growing */
	int nchunks;
	uint8_t *mem[SRQ_CHUNKS_MAX];	/* SRQ_CHUNK buffers each */
	struct ibv_mr *mr[SRQ_CHUNKS_MAX];
	/* Buffers on the queue now: nchunks * SRQ_CHUNK when no connection
	 * holds one (clf_rdma_pool_stats); fewer for good is a leak. */
	atomic_long posted;
};

/* What a registration through a device's cache opens, and to whom. */
struct rdma_access {
	struct ibv_pd *pd;
	int access;
};

/*
 * What a process's connections on one device share: its protection
 * domain (a registration serves the queue pairs of its own domain only),
 * and so the registration caches (transport_rdma_devcache.h), and a
 * server's shared receive queue.  Never freed: librdmacm keeps the
 * device open for the process's life too.
 */
struct rdma_dev {
	struct rdma_dev *next;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	/* [server]: a client's registrations are open to its peers' READs
	 * and WRITEs, a server's to its own NIC only. */
	struct rdma_access acc[2];
	struct rdma_srq *srq;	/* a server's, made at its first accept */
	bool srq_tried;
};

struct rdma_conn {
	struct clf_conn base;	/* first: transport.c sees only this */
	struct rdma_event_channel *ech;	/* this connection's cm events */
	struct rdma_cm_id *id;
	struct rdma_dev *dev;
	struct ibv_pd *pd;	/* the device's */
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;		/* SLOTS buffers of CLF_RDMA_SLOT bytes, or
				 * CLF_RDMA_SENDS with an srq */
	struct rdma_srq *srq;	/* server: where it receives; NULL: mem */
	int evfd;		/* readable: bytes or an error wait */
	int stop[2];		/* a pipe: the thread's end */
	pthread_t thread;
	bool has_thread;
	bool connected;		/* rdma_disconnect on close */
	bool server;		/* accepted: moves the bulk data */
	struct clf_devcache_slot *cache;	/* the device's; NULL: none */
	atomic_ulong cache_hits, cache_misses;	/* this connection's */

	pthread_mutex_t mu;	/* everything below */
	pthread_cond_t cv;
	struct clf_rdma_credits cr;
	int rxq[CLF_RDMA_RECVS];	/* filled receive buffers, in order */
	uint32_t rxlen[BUF_IDS];	/* data bytes of each; RDESC/RTS: all */
	uint8_t rxtype[BUF_IDS];	/* DATA, RDESC or RTS */
	struct clf_rdma_desc rxdesc[BUF_IDS];	/* RDESC/RTS: what is left */
	bool rxinline[BUF_IDS];	/* RTS answered CTS {0}: DATA follows */
	bool cts_ready;		/* server: a CTS came, in cts[0..ncts) */
	struct clf_rdma_desc cts[CLF_RDMA_CTS_MAX];
	int ncts;
	uint64_t done_bytes;	/* client: bytes DONE told of, ever */
	uint64_t done_owed;	/* server: bytes READ, DONE not yet sent */
	int rdma_pending;	/* READs/WRITEs posted, not completed */
	unsigned long direct_ops, direct_bytes;	/* server: for the log */
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
static _Atomic unsigned long stat_rdma_ops, stat_direct_bytes, stat_hits,
	stat_misses;

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
	int k = i - CLF_RDMA_SENDS;

	if (r->srq && k >= 0)
		return r->srq->mem[k / SRQ_CHUNK] +
		       (size_t)(k % SRQ_CHUNK) * CLF_RDMA_SLOT;
	return r->mem + (size_t)i * CLF_RDMA_SLOT;
}

void clf_rdma_stats(unsigned long *sends, unsigned long *recvs,
		    unsigned long *credit_sends)
{
	*sends = atomic_load(&stat_sends);
	*recvs = atomic_load(&stat_recvs);
	*credit_sends = atomic_load(&stat_credit_sends);
}

void clf_rdma_direct_stats(unsigned long *rdma_ops, unsigned long *bytes,
			   unsigned long *cache_hits, unsigned long *cache_misses)
{
	*rdma_ops = atomic_load(&stat_rdma_ops);
	*bytes = atomic_load(&stat_direct_bytes);
	*cache_hits = atomic_load(&stat_hits);
	*cache_misses = atomic_load(&stat_misses);
}

/* Pieces from this size on go by RDMA READ/WRITE; CLF_RDMA_DIRECT_MIN
 * in the environment changes it, 0 turns it off (benchmarks). */
static size_t direct_min(void)
{
	static size_t v = (size_t)-1;

	if (v == (size_t)-1) {
		const char *e = getenv("CLF_RDMA_DIRECT_MIN");

		v = e && *e ? strtoull(e, NULL, 0) : CLF_RDMA_DIRECT_MIN;
	}
	return v;
}

/* ------------------------------------------------------------------ */
/* Buffers and work requests                                           */
/* ------------------------------------------------------------------ */

/* Receive buffer k of the pool back on its queue. */
static int srq_post(struct rdma_srq *q, int k)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->mem[k / SRQ_CHUNK] +
				    (size_t)(k % SRQ_CHUNK) * CLF_RDMA_SLOT),
		.length = CLF_RDMA_SLOT,
		.lkey = q->mr[k / SRQ_CHUNK]->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)(CLF_RDMA_SENDS + k),
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = -ibv_post_srq_recv(q->srq, &wr, &bad);

	if (!err)
		atomic_fetch_add(&q->posted, 1);
	return err;
}

/* A completion of work request wr_id took a buffer off r's shared
 * receive queue (flushed ones too): the count of posted ones says so. */
static void srq_taken(struct rdma_conn *r, uint64_t wr_id)
{
	if (r->srq && !(wr_id & WR_RDMA) && (int)wr_id >= CLF_RDMA_SENDS)
		atomic_fetch_sub(&r->srq->posted, 1);
}

static int post_recv(struct rdma_conn *r, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(r, i),
		.length = CLF_RDMA_SLOT,
		.lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (r->srq)
		return srq_post(r->srq, i - CLF_RDMA_SENDS);
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

	if (wc->wr_id & WR_RDMA) {
		r->rdma_pending--;
		pthread_cond_broadcast(&r->cv);
	}
	srq_taken(r, wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS) {
		char why[160];

		/* A flushed receive of the pool: the pool's again (the
		 * opcode of a failed completion means nothing). */
		if (r->srq && !(wc->wr_id & WR_RDMA) && i >= CLF_RDMA_SENDS)
			(void)post_recv(r, i);

		snprintf(why, sizeof(why), "%s failed: %s",
			 i >= CLF_RDMA_SENDS && !(wc->wr_id & WR_RDMA)
			 ? "a receive" : "a send",
			 ibv_wc_status_str(wc->status));
		fail_locked(r, wc->status == IBV_WC_RETRY_EXC_ERR
			       ? -EHOSTDOWN : -ECONNRESET, why);
		return;
	}
	if (wc->wr_id & WR_RDMA)
		return;
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
	if (p.type >= CLF_RDMA_PKT_RDESC) {
		struct clf_rdma_desc d;
		/* Each kind comes from one side only. */
		bool from_client = p.type == CLF_RDMA_PKT_RDESC ||
				   p.type == CLF_RDMA_PKT_CTS;

		clf_rdma_desc_decode(slot(r, i) + CLF_RDMA_PKT_HEADER, &d);
		if (from_client != r->server ||
		    (clf_rdma_pkt_in_stream(p.type) && d.len == 0)) {
			fail_locked(r, -EPROTO, "a rendezvous message out of turn");
			return;
		}
		if (p.type == CLF_RDMA_PKT_CTS) {
			r->ncts = (int)(p.len / CLF_RDMA_DESC_SIZE);
			for (int k = 0; k < r->ncts; k++)
				clf_rdma_desc_decode(slot(r, i) +
						     CLF_RDMA_PKT_HEADER +
						     k * CLF_RDMA_DESC_SIZE,
						     &r->cts[k]);
			r->cts_ready = true;
		} else if (p.type == CLF_RDMA_PKT_DONE) {
			r->done_bytes += d.len;
		} else {
			r->rxdesc[i] = d;
			r->rxinline[i] = false;
		}
		p.len = d.len;
	}
	if (!clf_rdma_pkt_in_stream(p.type) || p.len == 0) {
		/* Outside the window: back at once, owing nothing. */
		if (post_recv(r, i))
			fail_locked(r, -ECONNRESET, "cannot post a receive");
		if (p.type == CLF_RDMA_PKT_DATA)
			clf_rdma_credits_consumed(&r->cr);
	} else {
		r->rxq[(r->rxhead + r->rxcount) % CLF_RDMA_RECVS] = i;
		r->rxlen[i] = p.len;
		r->rxtype[i] = p.type;
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

/* Registration for a device's cache (arg: its struct rdma_access). */
static void *mr_reg(void *arg, uintptr_t start, size_t len)
{
	struct rdma_access *a = arg;

	return ibv_reg_mr(a->pd, (void *)start, len, a->access);
}

static void mr_dereg(void *arg, void *mr)
{
	(void)arg;
	ibv_dereg_mr(mr);
}

/* Pinned bytes one device's cache may hold: within a quarter of the
 * memlock limit, which registrations count against (root has none). */
static size_t cache_bytes(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    geteuid() == 0)
		return CACHE_BYTES;
	return rl.rlim_cur / 4 < CACHE_BYTES ? rl.rlim_cur / 4 : CACHE_BYTES;
}

static atomic_bool unwatched_said;

_Static_assert(CLF_RDMA_MEM_UNSETTLED == CLF_REGCACHE_UNSETTLED,
	       "the cache's unsettled generation is the memory hooks'");

static uint64_t mem_generation(void *arg)
{
	return clf_rdma_mem_generation();
}

/* The registration caches of this process: one per device and kind. */
static struct clf_devcache caches = CLF_DEVCACHE_INIT(CACHE_ENTRIES, 0);

static int cache_init(struct rdma_conn *r)
{
	struct clf_regcache_ops ops = { mr_reg, mr_dereg, mem_generation,
					&r->dev->acc[r->server] };
	int err = 0;

	if (!direct_min())
		return 0;
	clf_rdma_mem_hold();
	if (!clf_rdma_mem_watched() &&
	    !atomic_exchange(&unwatched_said, true))
		clf_log(CLF_LOG_INFO, "rdma: this process's munmap is not libclf's and no UCX reports unmaps: each registration serves one transfer (transport_rdma_memhooks.c)");
	pthread_mutex_lock(&caches.mu);
	if (!caches.max_pinned)
		caches.max_pinned = cache_bytes();
	pthread_mutex_unlock(&caches.mu);
	/* Blocks on the server only: a client opens no more of its memory
	 * to the server than the pages of its buffers. */
	r->cache = clf_devcache_attach(&caches, r->pd, r->server, &ops,
				       r->server ? CACHE_BLOCK : 0, &err);
	return err;
}

static struct rdma_dev *devs;	/* the devices this process used */
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the connections on device verbs share, made on first use; NULL
 * with errno when its protection domain cannot be had. */
static struct rdma_dev *dev_of(struct ibv_context *verbs)
{
	struct rdma_dev *d;

	pthread_mutex_lock(&devs_lock);
	for (d = devs; d && d->verbs != verbs; d = d->next)
		;
	if (!d && (d = calloc(1, sizeof(*d)))) {
		d->verbs = verbs;
		d->pd = ibv_alloc_pd(verbs);
		if (d->pd) {
			d->acc[0] = (struct rdma_access){ d->pd,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_WRITE };
			d->acc[1] = (struct rdma_access){ d->pd,
							  IBV_ACCESS_LOCAL_WRITE };
			d->next = devs;
			devs = d;
		} else {
			free(d);
			d = NULL;
		}
	}
	pthread_mutex_unlock(&devs_lock);
	return d;
}

/* The shared receive queue of a server's device, made on first use;
 * NULL where the device has none (the connection then posts its own). */
static struct rdma_srq *srq_of(struct rdma_dev *d)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = SRQ_BUFS, .max_sge = 1 },
	};
	struct rdma_srq *q;

	pthread_mutex_lock(&devs_lock);
	if (!d->srq_tried && (q = calloc(1, sizeof(*q)))) {
		d->srq_tried = true;
		q->pd = d->pd;
		q->srq = ibv_create_srq(q->pd, &sa);
		if (q->srq) {
			pthread_mutex_init(&q->mu, NULL);
			d->srq = q;
		} else {
			clf_log(CLF_LOG_INFO, "rdma: %s has no shared receive queue (%s): each connection posts its own receive buffers",
				ibv_get_device_name(d->verbs->device),
				strerror(errno));
			free(q);
		}
	}
	q = d->srq;
	pthread_mutex_unlock(&devs_lock);
	return q;
}

void clf_rdma_pool_stats(unsigned long *posted, unsigned long *buffers)
{
	*posted = *buffers = 0;
	pthread_mutex_lock(&devs_lock);
	for (struct rdma_dev *d = devs; d; d = d->next) {
		if (!d->srq)
			continue;
		pthread_mutex_lock(&d->srq->mu);
		*buffers += (unsigned long)d->srq->nchunks * SRQ_CHUNK;
		pthread_mutex_unlock(&d->srq->mu);
		*posted += (unsigned long)atomic_load(&d->srq->posted);
	}
	pthread_mutex_unlock(&devs_lock);
}

size_t clf_rdma_cache_count(void)
{
	return clf_devcache_slots(&caches);
}

/* One chunk more for one connection more, up to SRQ_CHUNKS_MAX.  A chunk
 * that cannot be had is no error: the pool is smaller, RNR makes up. */
static void srq_grow(struct rdma_srq *q)
{
	size_t len = (size_t)SRQ_CHUNK * CLF_RDMA_SLOT;
	int c;

	pthread_mutex_lock(&q->mu);
	c = q->nchunks;
	if (c < SRQ_CHUNKS_MAX) {
		q->mem[c] = aligned_alloc(4096, len);
		q->mr[c] = q->mem[c] ? ibv_reg_mr(q->pd, q->mem[c], len,
						  IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (q->mr[c]) {
			q->nchunks++;
			for (int k = 0; k < SRQ_CHUNK; k++)
				if (srq_post(q, c * SRQ_CHUNK + k))
					clf_log(CLF_LOG_WARN, "rdma: cannot post a shared receive buffer");
		} else {
			free(q->mem[c]);
		}
	}
	pthread_mutex_unlock(&q->mu);
}

/* Memory, queues and the posted receives of a connection whose id is
 * resolved (client) or requested (server). */
static int setup_qp(struct rdma_conn *r)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = CLF_RDMA_SENDS + 2 * RUN_MAX + 2,
			 .max_recv_wr = CLF_RDMA_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int nbufs = SLOTS;

	r->dev = dev_of(r->id->verbs);
	if (!r->dev)
		return errno ? -errno : -ENOMEM;
	r->pd = r->dev->pd;
	r->srq = r->server ? srq_of(r->dev) : NULL;
	if (r->srq) {
		srq_grow(r->srq);
		qa.srq = r->srq->srq;
		qa.cap.max_recv_wr = 0;
		nbufs = CLF_RDMA_SENDS;
	}
	r->cch = ibv_create_comp_channel(r->id->verbs);
	r->cq = r->cch ? ibv_create_cq(r->id->verbs, SLOTS + 2 * RUN_MAX + 2, r,
					 r->cch, 0)
		       : NULL;
	r->mem = r->cq ? aligned_alloc(4096, (size_t)nbufs * CLF_RDMA_SLOT)
		       : NULL;
	r->mr = r->mem ? ibv_reg_mr(r->pd, r->mem,
				    (size_t)nbufs * CLF_RDMA_SLOT,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!r->mr)
		return -errno ? -errno : -ENOMEM;
	qa.send_cq = qa.recv_cq = r->cq;
	if (rdma_create_qp(r->id, r->pd, &qa))
		return -errno;
	if (ibv_req_notify_cq(r->cq, 0))
		return -errno;
	for (int i = CLF_RDMA_SENDS; !r->srq && i < SLOTS; i++) {
		int err = post_recv(r, i);

		if (err)
			return err;
	}
	for (int i = 0; i < CLF_RDMA_SENDS; i++)
		r->txfree[i] = i;
	r->ntxfree = CLF_RDMA_SENDS;
	return cache_init(r);
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

/*
 * A closing server connection gives the pool back what it holds: the
 * buffers filled and not yet read, and those its queue pair took and
 * then completed or flushed (its completion thread has stopped; the
 * queue pair in the error state takes no more, and flushes what it was
 * filling).
 */
static void srq_release(struct rdma_conn *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int64_t deadline = clf_deadline_after(100);
	int64_t quiet = clf_deadline_after(10);
	struct ibv_wc wc[16];

	(void)ibv_modify_qp(r->id->qp, &a, IBV_QP_STATE);
	for (; r->rxcount; r->rxcount--) {
		(void)post_recv(r, r->rxq[r->rxhead]);
		r->rxhead = (r->rxhead + 1) % CLF_RDMA_RECVS;
	}
	/* Flushes come soon after the state change, not within it: until
	 * 10 ms pass with none (100 ms at most). */
	while (clf_deadline_left(quiet) > 0 && clf_deadline_left(deadline) > 0) {
		int n = ibv_poll_cq(r->cq, 16, wc);

		for (int k = 0; k < n; k++) {
			srq_taken(r, wc[k].wr_id);
			if (!(wc[k].wr_id & WR_RDMA) &&
			    (int)wc[k].wr_id >= CLF_RDMA_SENDS)
				(void)post_recv(r, (int)wc[k].wr_id);
		}
		if (n > 0)
			quiet = clf_deadline_after(10);
		else
			usleep(1000);
	}
}

static void conn_free(struct rdma_conn *r)
{
	if (r->direct_ops && r->cache) {
		struct clf_regcache_stats st;
		size_t pinned;

		clf_devcache_stats(&caches, r->cache, &st, &pinned);
		clf_log(CLF_LOG_INFO, "rdma: %s: %lu bytes moved by %lu RDMA READs/WRITEs; registration cache %lu hits, %lu misses (the device's: %lu hits, %lu misses, %lu dropped, %zu KiB pinned)",
			r->base.peer, r->direct_bytes, r->direct_ops,
			atomic_load(&r->cache_hits),
			atomic_load(&r->cache_misses), st.hits, st.misses,
			st.invalidations + st.evictions, pinned >> 10);
	}
	if (r->has_thread) {
		if (write(r->stop[1], "x", 1) < 0)
			clf_log(CLF_LOG_WARN, "rdma: cannot stop a thread");
		pthread_join(r->thread, NULL);
	}
	if (r->connected)
		rdma_disconnect(r->id);
	if (r->srq && r->id && r->id->qp)
		srq_release(r);
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->cache)
		clf_devcache_detach(&caches, r->cache);
	free(r->mem);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->cch)
		ibv_destroy_comp_channel(r->cch);
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
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7,
				      .responder_resources = 4,
				      .initiator_depth = 4 };
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
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7,
				      .responder_resources = 4,
				      .initiator_depth = 4 };
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
	r->server = true;
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

/* Stop the NIC from touching our memory: the queue pair to the error
 * state, then wait (bounded) for the READs and WRITEs in flight to be
 * flushed.  Under mu. */
static void kill_qp_locked(struct rdma_conn *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int64_t deadline = clf_deadline_after(5000);

	(void)ibv_modify_qp(r->id->qp, &a, IBV_QP_STATE);
	while (r->rdma_pending > 0 && wait_locked(r, deadline) == 0)
		;
}

/* A transfer ran out of time: the connection is done for (the peer may
 * still be moving bytes), and the call says why.  Under mu. */
static int timeout_locked(struct rdma_conn *r, const char *what)
{
	fail_locked(r, -ETIMEDOUT, "a transfer timed out");
	kill_qp_locked(r);
	return clf_fail(ETIMEDOUT, "clf: %s %s: timed out after %d ms", what,
			r->base.peer, r->base.timeout_ms);
}

/* Send a rendezvous message; those of the stream spend a credit.  Under
 * mu; waits for a send buffer (and credit) until the deadline. */
static int post_descs_locked(struct rdma_conn *r, uint8_t type,
			     const struct clf_rdma_desc *d, int nd,
			     int64_t deadline, const char *what)
{
	bool in_stream = clf_rdma_pkt_in_stream(type);
	uint16_t credits;
	int i;

	for (;;) {
		if (r->err)
			return error_locked(r, what);
		if ((!in_stream || clf_rdma_credits_can_send(&r->cr)) &&
		    r->ntxfree > 0)
			break;
		if (wait_locked(r, deadline))
			return timeout_locked(r, what);
	}
	i = r->txfree[--r->ntxfree];
	for (int k = 0; k < nd; k++)
		clf_rdma_desc_encode(slot(r, i) + CLF_RDMA_PKT_HEADER +
				     k * CLF_RDMA_DESC_SIZE, &d[k]);
	credits = in_stream ? clf_rdma_credits_spend(&r->cr)
			    : clf_rdma_credits_take_owed(&r->cr);
	if (post_send(r, i, type, credits,
		      (uint32_t)(nd * CLF_RDMA_DESC_SIZE))) {
		fail_locked(r, -ECONNRESET, "cannot post a SEND");
		return error_locked(r, what);
	}
	return 0;
}

static int post_desc_locked(struct rdma_conn *r, uint8_t type,
			    const struct clf_rdma_desc *d, int64_t deadline,
			    const char *what)
{
	return post_descs_locked(r, type, d, 1, deadline, what);
}

/* A cached registration of [p, p + n), NULL when none can be had (the
 * caller then goes through its buffers).  Outside mu: registering may
 * take long. */
static struct clf_regcache_entry *cache_get(struct rdma_conn *r,
					    const void *p, size_t n)
{
	struct clf_regcache_entry *e;
	bool hit;
	int err;

	if (!r->cache)
		return NULL;
	e = clf_devcache_get(&caches, r->cache, p, n, &hit, &err);
	atomic_fetch_add(hit ? &stat_hits : &stat_misses, 1);
	atomic_fetch_add(hit ? &r->cache_hits : &r->cache_misses, 1);
	return e;
}

static void cache_put_unlocked(struct rdma_conn *r,
			       struct clf_regcache_entry *e)
{
	pthread_mutex_unlock(&r->mu);
	clf_devcache_put(&caches, r->cache, e);
	pthread_mutex_lock(&r->mu);
}

/* Wait until the READs and WRITEs posted completed.  Under mu. */
static int wait_rdma_locked(struct rdma_conn *r, int64_t deadline,
			    const char *what)
{
	while (r->rdma_pending > 0) {
		if (r->err) {
			kill_qp_locked(r);
			return error_locked(r, what);
		}
		if (wait_locked(r, deadline))
			return timeout_locked(r, what);
	}
	return r->err ? error_locked(r, what) : 0;
}

/*
 * The server's side of a transfer: READ (op IBV_WR_RDMA_READ) n bytes
 * of the client's memory at raddr into local, or WRITE them from local.
 * local is registered through the cache, or, when it cannot be, the
 * bytes go through a send buffer a slot at a time.  Under mu.
 */
static int rdma_op_locked(struct rdma_conn *r, enum ibv_wr_opcode op,
			  uint8_t *local, size_t n, uint64_t raddr,
			  uint32_t rkey, int64_t deadline, const char *what)
{
	struct clf_regcache_entry *e;
	size_t done = 0;
	int err = 0;

	pthread_mutex_unlock(&r->mu);
	e = cache_get(r, local, n);
	pthread_mutex_lock(&r->mu);
	while (done < n && !err) {
		size_t k = n - done;
		struct ibv_sge sge = { .addr = (uintptr_t)(local + done) };
		struct ibv_send_wr wr = {
			.wr_id = WR_RDMA, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = raddr + done, .rkey = rkey },
		}, *bad;
		int ti = -1;

		if (e) {
			sge.lkey = ((struct ibv_mr *)e->handle)->lkey;
		} else {
			while (!r->err && r->ntxfree == 0)
				if (wait_locked(r, deadline)) {
					err = timeout_locked(r, what);
					break;
				}
			if (err || r->err)
				break;
			ti = r->txfree[--r->ntxfree];
			if (k > CLF_RDMA_SLOT)
				k = CLF_RDMA_SLOT;
			if (op == IBV_WR_RDMA_WRITE)
				memcpy(slot(r, ti), local + done, k);
			sge.addr = (uintptr_t)slot(r, ti);
			sge.lkey = r->mr->lkey;
		}
		sge.length = (uint32_t)k;
		if (ibv_post_send(r->id->qp, &wr, &bad)) {
			fail_locked(r, -ECONNRESET, "cannot post an RDMA request");
		} else {
			r->rdma_pending++;
			err = wait_rdma_locked(r, deadline, what);
		}
		if (!err && ti >= 0 && op == IBV_WR_RDMA_READ)
			memcpy(local + done, slot(r, ti), k);
		if (ti >= 0)
			r->txfree[r->ntxfree++] = ti;
		done += k;
	}
	if (!err && r->err)
		err = error_locked(r, what);
	if (!err) {
		atomic_fetch_add(&stat_rdma_ops, 1);
		atomic_fetch_add(&stat_direct_bytes, n);
		r->direct_ops++;
		r->direct_bytes += n;
	}
	if (e)
		cache_put_unlocked(r, e);
	return err;
}

/* Client, waiting for its own rendezvous: every RTS it has not answered
 * is answered "inline", so that the server's send goes on.  Under mu. */
static void answer_rts_inline_locked(struct rdma_conn *r, int64_t deadline)
{
	struct clf_rdma_desc none = { 0 };

	for (int k = 0; k < r->rxcount && !r->err; k++) {
		int i = r->rxq[(r->rxhead + k) % CLF_RDMA_RECVS];

		if (r->rxtype[i] != CLF_RDMA_PKT_RTS || r->rxinline[i])
			continue;
		r->rxinline[i] = true;
		(void)post_desc_locked(r, CLF_RDMA_PKT_CTS, &none, deadline,
				       "send to");
	}
}

/* Client: wait until DONE told of every byte up to until, answering the
 * server's RTSs meanwhile.  Under mu. */
static int wait_done_locked(struct rdma_conn *r, uint64_t until,
			    int64_t deadline)
{
	while (r->done_bytes < until) {
		answer_rts_inline_locked(r, deadline);
		if (r->err)
			return error_locked(r, "send to");
		if (wait_locked(r, deadline))
			return timeout_locked(r, "send to");
	}
	return 0;
}

/* Put back registrations held by a transfer.  Under mu. */
static void put_all_locked(struct rdma_conn *r, struct clf_regcache_entry **e,
			   int *n)
{
	if (!*n)
		return;
	pthread_mutex_unlock(&r->mu);
	while (*n)
		clf_devcache_put(&caches, r->cache, e[--*n]);
	pthread_mutex_lock(&r->mu);
}

/*
 * Server: WRITE len bytes of the iovec from (*kp, *offp) on to the
 * client's memory at raddr, every piece's WRITE posted before waiting
 * for any; advances (*kp, *offp).  Under mu.
 */
static int write_run_locked(struct rdma_conn *r, const struct iovec *iov,
			    int *kp, size_t *offp, size_t len, uint64_t raddr,
			    uint32_t rkey, int64_t deadline,
			    struct clf_regcache_entry **held, int *nheldp)
{
	int nheld = *nheldp, err = 0;
	size_t done = 0;

	while (done < len && !err) {
		uint8_t *p = (uint8_t *)iov[*kp].iov_base + *offp;
		size_t n = iov[*kp].iov_len - *offp;
		struct clf_regcache_entry *e = NULL;

		if (n > len - done)
			n = len - done;
		if (nheld == RUN_MAX) {
			/* Room for more: wait for those in flight. */
			err = wait_rdma_locked(r, deadline, "send to");
			put_all_locked(r, held, &nheld);
			if (err)
				break;
		}
		pthread_mutex_unlock(&r->mu);
		e = cache_get(r, p, n);
		pthread_mutex_lock(&r->mu);
		if (!e) {
			err = wait_rdma_locked(r, deadline, "send to");
			if (!err)
				err = rdma_op_locked(r, IBV_WR_RDMA_WRITE, p, n,
						     raddr + done, rkey, deadline,
						     "send to");
		} else {
			struct ibv_sge sge = {
				.addr = (uintptr_t)p, .length = (uint32_t)n,
				.lkey = ((struct ibv_mr *)e->handle)->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = WR_RDMA, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = raddr + done,
					     .rkey = rkey },
			}, *bad;

			held[nheld++] = e;
			if (r->err || ibv_post_send(r->id->qp, &wr, &bad)) {
				fail_locked(r, -ECONNRESET,
					    "cannot post an RDMA request");
				err = error_locked(r, "send to");
			} else {
				r->rdma_pending++;
				atomic_fetch_add(&stat_rdma_ops, 1);
				atomic_fetch_add(&stat_direct_bytes, n);
				r->direct_ops++;
				r->direct_bytes += n;
			}
		}
		done += n;
		*offp += n;
		if (*offp == iov[*kp].iov_len) {
			(*kp)++;
			*offp = 0;
		}
	}
	*nheldp = nheld;
	return err;
}

/*
 * Server: one RTS for the run of total bytes from (*kp, *offp) -- big
 * pieces one after another -- then the WRITEs each CTS asks for, each
 * answered DONE.  *inline_left: bytes of the run the client asked to
 * get inline (CTS {0}).  Under mu.
 */
static int send_rts_locked(struct rdma_conn *r, const struct iovec *iov,
			   int *kp, size_t *offp, size_t total,
			   int64_t deadline, size_t *inline_left)
{
	struct clf_rdma_desc d = { 0, 0, (uint32_t)total };
	size_t done = 0;
	int err;

	*inline_left = 0;
	err = post_desc_locked(r, CLF_RDMA_PKT_RTS, &d, deadline, "send to");
	while (!err && done < total) {
		struct clf_regcache_entry *held[RUN_MAX];
		int nheld = 0, werr;
		size_t asked = 0;

		if (!r->cts_ready) {
			if (r->err)
				err = error_locked(r, "send to");
			else if (wait_locked(r, deadline))
				err = timeout_locked(r, "send to");
			continue;
		}
		r->cts_ready = false;
		for (int q = 0; q < r->ncts; q++)
			asked += r->cts[q].len;
		if (asked == 0) {
			*inline_left = total - done;
			return 0;
		}
		if (asked > total - done) {
			fail_locked(r, -EPROTO, "a CTS for more than was offered");
			return error_locked(r, "send to");
		}
		/* Every place's WRITEs posted, then one wait. */
		for (int q = 0; q < r->ncts && !err; q++)
			err = write_run_locked(r, iov, kp, offp, r->cts[q].len,
					       r->cts[q].addr, r->cts[q].rkey,
					       deadline, held, &nheld);
		werr = r->rdma_pending ? wait_rdma_locked(r, deadline, "send to")
				       : 0;
		put_all_locked(r, held, &nheld);
		if (!err)
			err = werr;
		d.len = (uint32_t)asked;
		if (!err)
			err = post_desc_locked(r, CLF_RDMA_PKT_DONE, &d, deadline,
					       "send to");
		done += asked;
	}
	return err;
}

/* The run of big pieces from (k, off): its bytes, at most DIRECT_PIECE
 * and RUN_MAX pieces (a piece longer than DIRECT_PIECE is cut). */
static size_t run_length(const struct iovec *iov, int iovcnt, int k,
			 size_t off, size_t dmin)
{
	size_t total = 0;

	for (int m = 0; k < iovcnt && m < RUN_MAX; k++, m++, off = 0) {
		size_t n = iov[k].iov_len - off;

		if (n < dmin)
			break;
		if (n > DIRECT_PIECE - total)
			return total ? total : DIRECT_PIECE;
		total += n;
	}
	return total;
}

static int rdma_send(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		     int64_t deadline)
{
	struct rdma_conn *r = rc_of(c);
	size_t dmin = r->cache ? direct_min() : 0;
	size_t inline_left = 0;	/* from (k, off): bytes to send inline */
	struct clf_regcache_entry *held[RUN_MAX];	/* client: RDESCs' */
	int nheld = 0;
	uint64_t until;
	int k = 0;
	size_t off = 0;
	int err = 0;

	pthread_mutex_lock(&r->mu);
	until = r->done_bytes;
	while (k < iovcnt && !err) {
		uint8_t *dst;
		size_t room = CLF_RDMA_PKT_DATA_MAX, n = 0;
		int i;

		if (r->err) {
			err = error_locked(r, "send to");
			break;
		}
		if (dmin && !inline_left && iov[k].iov_len - off >= dmin &&
		    r->server) {
			size_t len = run_length(iov, iovcnt, k, off, dmin);

			err = send_rts_locked(r, iov, &k, &off, len, deadline,
					      &inline_left);
			continue;
		}
		if (dmin && !inline_left && iov[k].iov_len - off >= dmin) {
			/* Client: an RDESC, not waited for until the end. */
			const uint8_t *p = (const uint8_t *)iov[k].iov_base + off;
			size_t len = iov[k].iov_len - off;
			struct clf_regcache_entry *e = NULL;
			struct clf_rdma_desc d;

			if (len > DIRECT_PIECE)
				len = DIRECT_PIECE;
			if (nheld == RUN_MAX) {
				err = wait_done_locked(r, until, deadline);
				put_all_locked(r, held, &nheld);
				if (err)
					break;
			}
			pthread_mutex_unlock(&r->mu);
			e = cache_get(r, p, len);
			pthread_mutex_lock(&r->mu);
			if (!e) {
				inline_left = len;
				continue;
			}
			held[nheld++] = e;
			d = (struct clf_rdma_desc){
				(uintptr_t)p,
				((struct ibv_mr *)e->handle)->rkey,
				(uint32_t)len };
			err = post_desc_locked(r, CLF_RDMA_PKT_RDESC, &d,
					       deadline, "send to");
			until += len;
			atomic_fetch_add(&stat_direct_bytes, len);
			off += len;
			if (off == iov[k].iov_len) {
				k++;
				off = 0;
			}
			continue;
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
		/* Gather as much as one buffer holds, up to the next piece
		 * that goes by RDMA. */
		while (k < iovcnt && n < room) {
			size_t take = iov[k].iov_len - off;

			if (inline_left) {
				if (take > inline_left)
					take = inline_left;
			} else if (dmin && take >= dmin) {
				break;
			}
			if (take > room - n)
				take = room - n;
			memcpy(dst + n, (const char *)iov[k].iov_base + off,
			       take);
			n += take;
			off += take;
			if (inline_left)
				inline_left -= take;
			if (off == iov[k].iov_len) {
				k++;
				off = 0;
			}
		}
		if (n == 0) {
			r->txfree[r->ntxfree++] = i;
			continue;
		}
		if (post_send(r, i, CLF_RDMA_PKT_DATA,
			      clf_rdma_credits_spend(&r->cr), (uint32_t)n)) {
			fail_locked(r, -ECONNRESET, "cannot post a SEND");
			err = error_locked(r, "send to");
		}
	}
	/* The client's memory is the server's to READ until DONE. */
	if (!err && nheld)
		err = wait_done_locked(r, until, deadline);
	put_all_locked(r, held, &nheld);
	pthread_mutex_unlock(&r->mu);
	return err;
}

/* The buffer at the head of the receive queue is used up: repost it and
 * owe its credit.  Under mu. */
static void pop_head_locked(struct rdma_conn *r)
{
	int i = r->rxq[r->rxhead];

	r->rxpos = 0;
	r->rxhead = (r->rxhead + 1) % CLF_RDMA_RECVS;
	r->rxcount--;
	if (post_recv(r, i)) {
		fail_locked(r, -ECONNRESET, "cannot post a receive");
		return;
	}
	clf_rdma_credits_consumed(&r->cr);
	send_credits_locked(r);
}

static bool head_is_data(const struct rdma_conn *r)
{
	return r->rxcount &&
	       r->rxtype[r->rxq[r->rxhead]] == CLF_RDMA_PKT_DATA;
}

/* Copy up to len waiting bytes into buf, up to a rendezvous message;
 * returns the count; under mu.  Bytes that arrived before the peer
 * closed are read first, as from a TCP socket: a peer that sends its last
 * message and closes at once (a goodbye, an error reply) is heard. */
static size_t take_locked(struct rdma_conn *r, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len && head_is_data(r)) {
		int i = r->rxq[r->rxhead];
		size_t avail = r->rxlen[i] - r->rxpos;
		size_t n = avail < len - got ? avail : len - got;

		memcpy(buf + got, slot(r, i) + CLF_RDMA_PKT_HEADER + r->rxpos,
		       n);
		got += n;
		r->rxpos += n;
		if (r->rxpos < r->rxlen[i])
			break;
		pop_head_locked(r);
	}
	set_readable_locked(r);
	return got;
}

/*
 * Server, an RDESC at the head: READ the bytes of the RDESCs queued
 * there, as far as buf goes, all posted before waiting for any.  DONE
 * waits while another RDESC is queued at the head (the client waits for
 * all of its own at the end of its send).  *got: bytes now in buf.
 */
static int read_run_locked(struct rdma_conn *r, uint8_t *buf, size_t want,
			   size_t *got, int64_t deadline)
{
	struct clf_regcache_entry *e;
	size_t total = 0, left;
	int m = 0, err = 0;

	for (; m < r->rxcount && m < RUN_MAX && total < want; m++) {
		int i = r->rxq[(r->rxhead + m) % CLF_RDMA_RECVS];
		size_t n = r->rxdesc[i].len;

		if (r->rxtype[i] != CLF_RDMA_PKT_RDESC)
			break;
		total += n < want - total ? n : want - total;
	}
	pthread_mutex_unlock(&r->mu);
	e = cache_get(r, buf, total);
	pthread_mutex_lock(&r->mu);
	if (!e) {
		/* Through a buffer of ours, the head's bytes only. */
		struct clf_rdma_desc *d = &r->rxdesc[r->rxq[r->rxhead]];

		total = want < d->len ? want : d->len;
		err = rdma_op_locked(r, IBV_WR_RDMA_READ, buf, total, d->addr,
				     d->rkey, deadline, "receive from");
	} else {
		size_t off = 0;

		for (int q = 0; q < m && off < total && !err; q++) {
			int i = r->rxq[(r->rxhead + q) % CLF_RDMA_RECVS];
			struct clf_rdma_desc *d = &r->rxdesc[i];
			size_t n = d->len < total - off ? d->len : total - off;
			struct ibv_sge sge = {
				.addr = (uintptr_t)(buf + off),
				.length = (uint32_t)n,
				.lkey = ((struct ibv_mr *)e->handle)->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = WR_RDMA, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_READ,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { .remote_addr = d->addr,
					     .rkey = d->rkey },
			}, *bad;

			if (r->err || ibv_post_send(r->id->qp, &wr, &bad)) {
				fail_locked(r, -ECONNRESET,
					    "cannot post an RDMA request");
				err = error_locked(r, "receive from");
				break;
			}
			r->rdma_pending++;
			r->direct_ops++;
			atomic_fetch_add(&stat_rdma_ops, 1);
			off += n;
		}
		if (r->rdma_pending) {
			int werr = wait_rdma_locked(r, deadline, "receive from");

			if (!err)
				err = werr;
		}
		if (!err) {
			r->direct_bytes += total;
			atomic_fetch_add(&stat_direct_bytes, total);
		}
		cache_put_unlocked(r, e);
	}
	if (err)
		return err;
	for (left = total; left;) {
		int i = r->rxq[r->rxhead];
		struct clf_rdma_desc *d = &r->rxdesc[i];
		size_t n = d->len < left ? d->len : left;

		d->addr += n;
		d->len -= (uint32_t)n;
		left -= n;
		if (d->len == 0) {
			r->done_owed += r->rxlen[i];
			pop_head_locked(r);
		}
	}
	*got = total;
	set_readable_locked(r);
	if (r->done_owed && !(r->rxcount &&
			      r->rxtype[r->rxq[r->rxhead]] == CLF_RDMA_PKT_RDESC)) {
		struct clf_rdma_desc d = { 0, 0, (uint32_t)r->done_owed };

		r->done_owed = 0;
		return post_desc_locked(r, CLF_RDMA_PKT_DONE, &d, deadline,
					"receive from");
	}
	return 0;
}

/*
 * Client, an RTS at the head: post the CTS naming cts[0..nd) (held[]
 * their registrations), wait until the server's DONEs say its WRITEs
 * filled them -- the buffers stay registered until then -- give the
 * registrations back, and take those bytes off the RTS, popping it when
 * nothing of it is left.  Under mu.
 */
static int wait_direct_locked(struct rdma_conn *r,
			      const struct clf_rdma_desc *cts,
			      struct clf_regcache_entry **held, int nd,
			      int64_t deadline)
{
	struct clf_rdma_desc *d = &r->rxdesc[r->rxq[r->rxhead]];
	uint64_t n = 0, until;
	int err;

	for (int j = 0; j < nd; j++)
		n += cts[j].len;
	until = r->done_bytes + n;
	err = post_descs_locked(r, CLF_RDMA_PKT_CTS, cts, nd, deadline,
				"receive from");
	while (!err && r->done_bytes < until) {
		if (r->err)
			err = error_locked(r, "receive from");
		else if (wait_locked(r, deadline))
			err = timeout_locked(r, "receive from");
	}
	put_all_locked(r, held, &nd);
	if (err)
		return err;
	atomic_fetch_add(&stat_direct_bytes, n);
	d->len -= (uint32_t)n;
	if (!d->len) {
		pop_head_locked(r);
		set_readable_locked(r);
	}
	return 0;
}

/*
 * The head of the receive queue is an RDESC (server: READ the bytes) or
 * an RTS (client: name buf for the server's WRITE, or ask for the bytes
 * inline when buf is small or cannot be registered).  *got: bytes now in
 * buf.  Under mu.
 */
static int recv_direct_locked(struct rdma_conn *r, uint8_t *buf, size_t want,
			      size_t *got, int64_t deadline)
{
	int i = r->rxq[r->rxhead];
	struct clf_rdma_desc *d = &r->rxdesc[i];
	struct clf_regcache_entry *e = NULL;
	size_t n = want < d->len ? want : d->len;
	struct clf_rdma_desc cts = { 0 };
	int err;

	*got = 0;
	if (n > DIRECT_PIECE)
		n = DIRECT_PIECE;
	if (r->rxtype[i] == CLF_RDMA_PKT_RDESC)
		return read_run_locked(r, buf, want, got, deadline);
	if (!r->rxinline[i] && n >= direct_min()) {
		pthread_mutex_unlock(&r->mu);
		e = cache_get(r, buf, n);
		pthread_mutex_lock(&r->mu);
	}
	if (!e) {
		/* What is left of it comes inline, after it. */
		if (!r->rxinline[i])
			err = post_desc_locked(r, CLF_RDMA_PKT_CTS, &cts, deadline,
					       "receive from");
		else
			err = 0;
		pop_head_locked(r);
		set_readable_locked(r);
		return err;
	}
	cts = (struct clf_rdma_desc){ (uintptr_t)buf,
				      ((struct ibv_mr *)e->handle)->rkey,
				      (uint32_t)n };
	err = wait_direct_locked(r, &cts, &e, 1, deadline);
	if (!err)
		*got = n;
	return err;
}

static int rdma_recv(struct clf_conn *c, void *buf, size_t len,
		     int64_t deadline)
{
	struct rdma_conn *r = rc_of(c);
	size_t got = 0;
	int err = 0;

	pthread_mutex_lock(&r->mu);
	while (got < len) {
		if (r->rxcount && !head_is_data(r) && !r->err) {
			size_t n;

			err = recv_direct_locked(r, (uint8_t *)buf + got,
						 len - got, &n, deadline);
			if (err)
				break;
			got += n;
			continue;
		}
		got += take_locked(r, (uint8_t *)buf + got, len - got);
		if (got == len)
			break;
		if (r->err) {
			err = error_locked(r, "receive from");
			break;
		}
		if (r->rxcount)
			continue;
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

/*
 * Client, an RTS at the head and the iovec's pieces from (*kp, *offp) to
 * fill: one CTS naming up to CLF_RDMA_CTS_MAX of them, for the server to
 * WRITE in one go.  Under mu.
 */
static int recv_rts_iov_locked(struct rdma_conn *r, const struct iovec *iov,
			       int iovcnt, int *kp, size_t *offp,
			       int64_t deadline)
{
	int i = r->rxq[r->rxhead];
	struct clf_rdma_desc *d = &r->rxdesc[i];
	struct clf_regcache_entry *held[CLF_RDMA_CTS_MAX];
	struct clf_rdma_desc cts[CLF_RDMA_CTS_MAX];
	int nd = 0, k = *kp, err;
	size_t off = *offp, sum = 0;

	while (k < iovcnt && nd < CLF_RDMA_CTS_MAX && sum < d->len) {
		uint8_t *p = (uint8_t *)iov[k].iov_base + off;
		size_t n = iov[k].iov_len - off;
		struct clf_regcache_entry *e;

		if (n > d->len - sum)
			n = d->len - sum;
		if (n == 0) {
			k++;
			off = 0;
			continue;
		}
		pthread_mutex_unlock(&r->mu);
		e = cache_get(r, p, n);
		pthread_mutex_lock(&r->mu);
		if (!e)
			break;
		held[nd] = e;
		cts[nd++] = (struct clf_rdma_desc){
			(uintptr_t)p, ((struct ibv_mr *)e->handle)->rkey,
			(uint32_t)n };
		sum += n;
		off += n;
		if (off == iov[k].iov_len) {
			k++;
			off = 0;
		}
	}
	if (nd == 0) {
		/* Nothing registered: the rest comes inline, after it. */
		struct clf_rdma_desc none = { 0 };

		err = post_desc_locked(r, CLF_RDMA_PKT_CTS, &none, deadline,
				       "receive from");
		pop_head_locked(r);
		set_readable_locked(r);
		return err;
	}
	err = wait_direct_locked(r, cts, held, nd, deadline);
	if (err)
		return err;
	*kp = k;
	*offp = off;
	return 0;
}

static int rdma_recvv(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		      int64_t deadline)
{
	struct rdma_conn *r = rc_of(c);
	int k = 0;
	size_t off = 0;

	while (k < iovcnt) {
		bool rts;
		int err;

		if (off == iov[k].iov_len) {
			k++;
			off = 0;
			continue;
		}
		pthread_mutex_lock(&r->mu);
		rts = !r->server && r->cache && r->rxcount &&
		      !head_is_data(r) && !r->err &&
		      !r->rxinline[r->rxq[r->rxhead]];
		err = rts ? recv_rts_iov_locked(r, iov, iovcnt, &k, &off,
						deadline) : 0;
		pthread_mutex_unlock(&r->mu);
		if (err)
			return err;
		if (rts)
			continue;
		err = rdma_recv(c, (uint8_t *)iov[k].iov_base + off,
				iov[k].iov_len - off, deadline);
		if (err)
			return err;
		k++;
		off = 0;
	}
	return 0;
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
	.recvv = rdma_recvv,
	.poll = rdma_poll,
	.conn_fd = rdma_conn_fd,
	.close = rdma_close,
	.listener_fd = rdma_listener_fd,
	.listener_port = rdma_listener_port,
	.listener_close = rdma_listener_close,
};
