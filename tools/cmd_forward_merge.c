// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_forward_merge.c -- `clf forward` merging the collective requests of
 * its clients: one VIEW_MERGED per operation and iod where the clients
 * sent one request each (include/clf_proto.h, "Merged collectives").
 *
 * A relayed connection to an iod is read message by message (header,
 * then the payload spliced through as before) once its handshake showed
 * protection none: with integrity or privacy every message carries a
 * tag under keys only the two ends hold, so the forwarder can neither
 * take a request out of the stream nor answer in the iod's name; it then
 * relays bytes as they come and says so in its log once.
 *
 * A collective VIEW_WRITE or VIEW_READ (COLLECTIVE, not AGAIN, no cred
 * prefix, at most MERGE_PIECE_MAX bytes of data or, a read, of view
 * range) is held: once every earlier
 * request of its connection was answered (so that the iod finds that
 * connection idle, and replies stay in request order), it joins the
 * group of its (iod, tag).  A group goes to its iod as one VIEW_MERGED
 * when it holds as many requests as the operation's participants, or
 * wait_ms after its first came (participants not behind this forwarder
 * come on their own; wait_ms is at most a quarter of the instance's
 * timeout, which the iod gives the operation), or when the next would
 * pass MERGED_MAX pieces or MERGE_BYTES_MAX bytes, or when a request of
 * the operation went to the iod as it came (too big to hold): then the
 * others would only wait, and they go as they come for wait_ms.  Each client then gets its answer as the reply
 * to its own request.  A VIEW_MERGED that the iod refuses did nothing:
 * each request then goes on its own connection, as without merging.
 *
 * The VIEW_MERGED connections hold the instance's secret (an iod takes
 * the op only from such a connection): they are opened on demand, one
 * per group in flight, and kept for the next.
 */
#define _GNU_SOURCE	/* splice */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "error.h"
#include "forward_merge.h"
#include "proto.h"
#include "transport.h"

/*
 * A bigger piece passes as it came, spliced: its message costs the iod
 * little beside its bytes, whereas a merged one goes through this
 * process's memory (measured: 1 MiB pieces of 2 clients took 40 ms per
 * call merged, 32 ms relayed; docs/performance.md).
 */
#define MERGE_PIECE_MAX (256u << 10)
#define MERGE_BYTES_MAX (32u << 20)	/* request bytes in one VIEW_MERGED */
#define HANDSHAKE_BODY_MAX (64u << 10)	/* more: not a handshake we know */
#define POOL_MAX 8			/* idle VIEW_MERGED connections per iod */
#define RELAY_BUF (64 << 10)
/* The body of a VIEW_READ: handle, flags, lo, hi, tag, participants. */
#define VIEW_IO_FIXED 36

enum piece_state { PIECE_WAIT, PIECE_DONE, PIECE_ALONE };

/* A held request; the relay's, answered by a group's sender. */
struct piece {
	uint8_t hdr[CLF_PROTO_HEADER_SIZE];	/* as the client sent it */
	uint8_t *body;			/* owned by the relay */
	uint32_t len;
	uint16_t port, opcode;
	uint64_t tag;
	uint32_t participants;
	/* Under mg.mutex: */
	enum piece_state state;
	int32_t status;			/* of the answer, 0 or -errno */
	uint8_t *reply;			/* its body; owned by the relay */
	uint32_t reply_len;
	struct piece *next;		/* in its group */
};

struct group {
	uint32_t iod;
	uint64_t tag;
	uint32_t participants;		/* of the first piece */
	uint32_t n;
	size_t bytes;
	int64_t first_ms;
	/* A request of the operation went to this iod as it came (too big
	 * to hold): the others would wait for nothing, so they go as they
	 * come too, until wait_ms after it. */
	bool relayed;
	struct piece *head, **tail;
	struct group *next;		/* mg.groups, while gathering */
};

static struct {
	const struct clf_config *cfg;	/* borrowed */
	const struct clf_transport_ops *t;
	unsigned wait_ms;
	pthread_mutex_t mutex;
	pthread_cond_t tick;		/* a group began: the timer looks */
	pthread_cond_t answered;	/* pieces were answered */
	struct group *groups;		/* gathering; mutex */
	int64_t timer_next;		/* when the timer wakes; mutex */
	struct clf_conn **idle;		/* POOL_MAX per iod; mutex */
	unsigned *nidle;		/* per iod; mutex */
	atomic_bool sealed_said;
	atomic_bool refused_said;
} mg;

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* ------------------------------------------------------------------ */
/* Bytes                                                               */
/* ------------------------------------------------------------------ */

/* n bytes of fd: 0, 1 at the end of the stream before any, -1 else. */
static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, (uint8_t *)buf + got, n - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 && got == 0 ? 1 : -1;
		got += r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	while (n) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf = (const uint8_t *)buf + w;
		n -= w;
	}
	return 0;
}

/* Exactly n bytes from `from` to `to` through the pipe p (splice). */
static int pass_n(int from, int to, size_t n, const int p[2])
{
	while (n) {
		ssize_t in = splice(from, NULL, p[1], NULL,
				    n < RELAY_BUF ? n : RELAY_BUF, SPLICE_F_MOVE);

		if (in < 0 && errno == EINTR)
			continue;
		if (in <= 0)
			return -1;
		n -= in;
		while (in > 0) {
			ssize_t out = splice(p[0], NULL, to, NULL, in,
					     SPLICE_F_MOVE);

			if (out < 0 && errno == EINTR)
				continue;
			if (out <= 0)
				return -1;
			in -= out;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* VIEW_MERGED connections                                             */
/* ------------------------------------------------------------------ */

static int pool_get(uint32_t iod, struct clf_conn **out)
{
	const struct clf_config *cfg = mg.cfg;
	struct clf_conn *c = NULL;
	int err;

	pthread_mutex_lock(&mg.mutex);
	if (mg.nidle[iod])
		c = mg.idle[iod * POOL_MAX + --mg.nidle[iod]];
	pthread_mutex_unlock(&mg.mutex);
	if (c) {
		*out = c;
		return 0;
	}
	err = clf_conn_connect(mg.t, cfg->iods[iod].addr, cfg->timeout_ms, &c);
	if (err)
		return err;
	clf_conn_want_protection(c, cfg->protection);
	err = clf_auth_client(c, &cfg->secret, "forward");
	if (err) {
		clf_conn_close(c);
		return err;
	}
	/* The iod answers once the operation ended: up to its timeout
	 * for the participants, then the I/O. */
	clf_conn_set_timeout(c, 2 * cfg->timeout_ms + 10000);
	*out = c;
	return 0;
}

static void pool_put(uint32_t iod, struct clf_conn *c)
{
	if (clf_conn_broken(c)) {
		clf_conn_close(c);
		return;
	}
	pthread_mutex_lock(&mg.mutex);
	if (mg.nidle[iod] < POOL_MAX) {
		mg.idle[iod * POOL_MAX + mg.nidle[iod]++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&mg.mutex);
	clf_conn_close(c);
}

/* ------------------------------------------------------------------ */
/* Groups                                                              */
/* ------------------------------------------------------------------ */

/* An error answer (status err, message msg) for every piece of g. */
static void answer_error(struct group *g, int err, const char *msg)
{
	for (struct piece *p = g->head; p; p = p->next) {
		uint8_t body[2 + CLF_PROTO_ERRMSG_MAX];
		struct wire_writer w = { body, sizeof(body), 0 };
		struct clf_proto_error e = { clf_proto_str_of(msg) };

		if (e.message.len > CLF_PROTO_ERRMSG_MAX)
			e.message.len = CLF_PROTO_ERRMSG_MAX;
		if (clf_proto_error_encode(&w, &e) || w.pos > w.cap)
			w.pos = 0;
		p->reply = malloc(w.pos ? w.pos : 1);
		if (p->reply)
			memcpy(p->reply, body, w.pos);
		p->reply_len = p->reply ? (uint32_t)w.pos : 0;
		p->status = err;
		p->state = PIECE_DONE;
	}
}

/* Hand the iod's answers to the pieces: 0, or -EPROTO for a reply that
 * does not answer them (then none was handed). */
static int answer_all(struct group *g, void *payload, uint32_t len)
{
	struct wire_reader r = { payload, len, 0, false };
	struct clf_proto_view_merged_rep m;
	uint32_t i = 0;

	if (clf_proto_view_merged_rep_decode(&r, &m))
		return -EPROTO;
	if (m.n != g->n) {
		clf_proto_view_merged_rep_release(&m);
		return -EPROTO;
	}
	for (struct piece *p = g->head; p; p = p->next, i++) {
		const struct clf_proto_merged_answer *a = &m.answers[i];

		p->reply = malloc(a->body.len ? a->body.len : 1);
		if (p->reply)
			memcpy(p->reply, a->body.ptr, a->body.len);
		p->reply_len = p->reply ? a->body.len : 0;
		p->status = p->reply ? -(int32_t)a->status : -ENOMEM;
	}
	clf_proto_view_merged_rep_release(&m);
	return 0;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/*
 * The VIEW_MERGED body of g as clf_proto_view_merged_req_encode lays it
 * out (u32 n, then per piece u16 port, u16 opcode, bytes32 body), with
 * the bodies sent from where they are: *iov (2n + 1 pieces) and *heads
 * (their fixed fields), which the caller frees.  0 or -ENOMEM.
 */
static int encode_group(struct group *g, uint8_t **heads, struct iovec **iov)
{
	uint8_t *h = malloc(4 + 8 * (size_t)g->n);
	struct iovec *v = calloc(1 + 2 * (size_t)g->n, sizeof(*v));
	int k = 1;

	if (!h || !v) {
		free(h);
		free(v);
		return -ENOMEM;
	}
	put32(h, g->n);
	v[0] = (struct iovec){ h, 4 };
	for (struct piece *p = g->head; p; p = p->next) {
		uint8_t *f = h + 4 + 8 * (k / 2);

		put16(f, p->port);
		put16(f + 2, p->opcode);
		put32(f + 4, p->len);
		v[k++] = (struct iovec){ f, 8 };
		v[k++] = (struct iovec){ p->body, p->len };
	}
	*heads = h;
	*iov = v;
	return 0;
}

/* A group's thread: its VIEW_MERGED, and the answers handed out. */
static void *send_group(void *arg)
{
	struct group *g = arg;
	struct clf_proto_header h, rh;
	struct clf_conn *c = NULL;
	void *payload = NULL;
	uint8_t *heads = NULL;
	char msg[CLF_PROTO_ERRMSG_MAX];
	struct iovec *iov = NULL;
	int err, answered = -1;

	err = encode_group(g, &heads, &iov);
	if (!err)
		err = pool_get(g->iod, &c);
	if (!err) {
		clf_proto_header_init(&h, CLF_PROTO_OP_VIEW_MERGED,
				      clf_conn_next_id(c));
		err = clf_conn_call(c, &h, iov, 1 + 2 * (int)g->n, &rh,
				    &payload);
		if (!err)
			answered = answer_all(g, payload, rh.payload_len);
	}
	pthread_mutex_lock(&mg.mutex);
	if (answered == 0) {
		for (struct piece *p = g->head; p; p = p->next)
			p->state = PIECE_DONE;
	} else if (!err || (c && clf_conn_broken(c))) {
		/* The iod may have done it: its clients are told, not
		 * served twice. */
		snprintf(msg, sizeof(msg),
			 "clf forward: lost the merged collective at iod %u: %s",
			 g->iod, err ? clf_error_reason() : "a reply that does not answer it");
		answer_error(g, err ? err : -EPROTO, msg);
	} else {
		/* Refused (or never sent): nothing was done; each goes on
		 * its own connection. */
		if (!atomic_exchange(&mg.refused_said, true))
			fprintf(stderr, "clf forward: iod %u refused a merged collective (%s); such requests go on their own connections\n",
				g->iod, clf_error_reason());
		for (struct piece *p = g->head; p; p = p->next)
			p->state = PIECE_ALONE;
	}
	pthread_cond_broadcast(&mg.answered);
	pthread_mutex_unlock(&mg.mutex);
	if (c)
		pool_put(g->iod, c);
	free(payload);
	free(heads);
	free(iov);
	free(g);
	return NULL;
}

/* Take g out of the table (mg.mutex held). */
static void group_unlink(struct group *g)
{
	for (struct group **pp = &mg.groups; *pp; pp = &(*pp)->next) {
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	}
}

/* Take g out of the table and send it from a thread of its own
 * (mg.mutex held). */
static void group_go(struct group *g)
{
	pthread_attr_t attr;
	pthread_t tid;

	group_unlink(g);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&tid, &attr, send_group, g)) {
		for (struct piece *p = g->head; p; p = p->next)
			p->state = PIECE_ALONE;
		pthread_cond_broadcast(&mg.answered);
		free(g);
	}
	pthread_attr_destroy(&attr);
}

/*
 * Put p into its group; mg.mutex held.  Returns the group when p
 * completed it, out of the table, for the caller to send (no thread to
 * start and wake where every participant is behind this forwarder).
 */
static struct group *group_add(struct piece *p, uint32_t iod)
{
	struct group *g;

	for (g = mg.groups; g; g = g->next)
		if (g->iod == iod && g->tag == p->tag)
			break;
	if (g && g->relayed) {
		p->state = PIECE_ALONE;
		return NULL;
	}
	if (g && (g->n >= CLF_PROTO_MERGED_MAX ||
		  g->bytes + p->len > MERGE_BYTES_MAX)) {
		group_go(g);
		g = NULL;
	}
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g) {
			p->state = PIECE_ALONE;
			return NULL;
		}
		*g = (struct group){ .iod = iod, .tag = p->tag,
				     .participants = p->participants,
				     .first_ms = clf_now_ms(), .next = mg.groups };
		g->tail = &g->head;
		mg.groups = g;
		/* A wake-up only where the timer would sleep past it: most
		 * groups are full long before. */
		if (g->first_ms + mg.wait_ms < mg.timer_next)
			pthread_cond_signal(&mg.tick);
	}
	*g->tail = p;
	g->tail = &p->next;
	g->n++;
	g->bytes += p->len;
	if (g->n < g->participants)
		return NULL;
	group_unlink(g);
	return g;
}

/* The timer: groups whose others did not come within wait_ms go. */
static void *timer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mg.mutex);
	for (;;) {
		int64_t now = clf_now_ms(), next = INT64_MAX;
		struct group *g = mg.groups, *after;
		struct timespec ts;

		for (; g; g = after) {
			after = g->next;
			if (now >= g->first_ms + mg.wait_ms && g->relayed) {
				group_unlink(g);
				free(g);
			} else if (now >= g->first_ms + mg.wait_ms) {
				group_go(g);
			}
			else if (g->first_ms + mg.wait_ms < next)
				next = g->first_ms + mg.wait_ms;
		}
		mg.timer_next = next;
		if (next == INT64_MAX) {
			pthread_cond_wait(&mg.tick, &mg.mutex);
			continue;
		}
		ts.tv_sec = next / 1000;
		ts.tv_nsec = (next % 1000) * 1000000L;
		pthread_cond_timedwait(&mg.tick, &mg.mutex, &ts);
	}
	return NULL;
}

/*
 * A collective request of (iod, tag) went as it came: what is held of
 * its operation goes now, and what comes goes as it comes (see
 * group.relayed).
 */
static void merge_passed(uint32_t iod, uint64_t tag)
{
	struct group *g;

	pthread_mutex_lock(&mg.mutex);
	for (g = mg.groups; g; g = g->next)
		if (g->iod == iod && g->tag == tag)
			break;
	if (g && !g->relayed)
		group_go(g);
	if (!g || !g->relayed) {
		g = calloc(1, sizeof(*g));
		if (g) {
			*g = (struct group){ .iod = iod, .tag = tag,
					     .relayed = true,
					     .first_ms = clf_now_ms(),
					     .next = mg.groups };
			mg.groups = g;
			if (g->first_ms + mg.wait_ms < mg.timer_next)
				pthread_cond_signal(&mg.tick);
		}
	}
	pthread_mutex_unlock(&mg.mutex);
}

int fwd_merge_start(const struct clf_config *cfg, unsigned wait_ms)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t tid;

	if (!cfg->has_secret)
		return clf_fail(EACCES,
				"clf forward: merging needs the instance's secret ($CLF_SECRET_FILE)");
	mg.cfg = cfg;
	/* Held requests must reach the iod well within its wait for the
	 * operation's others. */
	if (cfg->timeout_ms > 0 && wait_ms > (unsigned)cfg->timeout_ms / 4)
		wait_ms = (unsigned)cfg->timeout_ms / 4;
	mg.wait_ms = wait_ms;
	mg.timer_next = INT64_MAX;
	mg.t = clf_transport_find(cfg->transport);
	mg.idle = calloc((size_t)cfg->niods * POOL_MAX, sizeof(*mg.idle));
	mg.nidle = calloc(cfg->niods, sizeof(*mg.nidle));
	if (!mg.t || !mg.idle || !mg.nidle)
		return clf_fail(ENOMEM, "clf forward: out of memory");
	pthread_mutex_init(&mg.mutex, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mg.tick, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&mg.answered, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&tid, &attr, timer, NULL)) {
		pthread_attr_destroy(&attr);
		return clf_fail(EAGAIN, "clf forward: cannot start a thread");
	}
	pthread_attr_destroy(&attr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* One relayed connection                                              */
/* ------------------------------------------------------------------ */

struct rconn {
	int cfd, dfd;
	uint32_t iod;
	uint16_t port;			/* dfd's own: the iod's peer port */
	int pipes[2][2];		/* client->iod, iod->client */
	pthread_mutex_t wlock;		/* writes to cfd */
	pthread_mutex_t lock;		/* of: */
	pthread_cond_t cond;
	unsigned outstanding;		/* requests sent, not answered */
	bool iod_gone;			/* the iod->client side ended */
};

/*
 * The handshake, a message each way at a time: 1 when it ended with
 * protection none (messages can be read from now on), 0 when the rest
 * must go as bytes (sealed, refused, not a handshake we know), -1 when
 * a side closed.
 */
static int handshake(struct rconn *r)
{
	uint8_t h[CLF_PROTO_HEADER_SIZE], *body;
	uint32_t len;
	uint16_t op;
	int32_t status;
	int prot;

	for (int round = 0; round < 4; round++) {
		if (read_full(r->cfd, h, sizeof(h)) ||
		    write_full(r->dfd, h, sizeof(h)) ||
		    pass_n(r->cfd, r->dfd, le32(h + 20), r->pipes[0]))
			return -1;
		if (read_full(r->dfd, h, sizeof(h)))
			return -1;
		op = le16(h + 8);
		len = le32(h + 20);
		status = (int32_t)le32(h + 24);
		if (len > HANDSHAKE_BODY_MAX) {
			if (write_full(r->cfd, h, sizeof(h)))
				return -1;
			return 0;
		}
		body = malloc(len ? len : 1);
		if (!body || read_full(r->dfd, body, len) ||
		    write_full(r->cfd, h, sizeof(h)) ||
		    write_full(r->cfd, body, len)) {
			free(body);
			return -1;
		}
		prot = op == CLF_PROTO_OP_CHALLENGE && len > 36 ? body[36] : 0;
		free(body);
		if (status || prot) {
			if (prot && !atomic_exchange(&mg.sealed_said, true)) {
				fprintf(stderr, "clf forward: the iods seal their messages (protection %s): collective requests are relayed as they come, one per client, not merged\n",
					prot == 1 ? "integrity" : "privacy");
				fflush(stderr);
			}
			return 0;
		}
		if (op == CLF_PROTO_OP_AUTH_OK)
			return 1;
	}
	return 0;
}

/* The iod->client side: messages as they come, counting the replies. */
static void *iod_side(void *arg)
{
	struct rconn *r = arg;
	uint8_t h[CLF_PROTO_HEADER_SIZE];

	for (;;) {
		bool ok;

		if (read_full(r->dfd, h, sizeof(h)))
			break;
		pthread_mutex_lock(&r->wlock);
		ok = !write_full(r->cfd, h, sizeof(h)) &&
		     !pass_n(r->dfd, r->cfd, le32(h + 20), r->pipes[1]);
		pthread_mutex_unlock(&r->wlock);
		pthread_mutex_lock(&r->lock);
		if ((le16(h + 10) & CLF_PROTO_FLAG_REPLY) && r->outstanding)
			r->outstanding--;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (!ok)
			break;
	}
	pthread_mutex_lock(&r->lock);
	r->iod_gone = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	shutdown(r->cfd, SHUT_WR);
	return NULL;
}

/* Send a request: header h, the first `have` bytes of its payload from
 * body, the rest of its len still in cfd. */
static int to_iod(struct rconn *r, const uint8_t *h, const uint8_t *body,
		  uint32_t have, uint32_t len)
{
	pthread_mutex_lock(&r->lock);
	r->outstanding++;
	pthread_mutex_unlock(&r->lock);
	if (write_full(r->dfd, h, CLF_PROTO_HEADER_SIZE) ||
	    (have && write_full(r->dfd, body, have)))
		return -1;
	return pass_n(r->cfd, r->dfd, len - have, r->pipes[0]);
}

/* Whether a view io body (its fixed part) is a first collective request. */
static bool first_coll(const uint8_t *body)
{
	return (le32(body + 4) & (CLF_PROTO_VIEW_COLLECTIVE |
				  CLF_PROTO_VIEW_AGAIN)) ==
	       CLF_PROTO_VIEW_COLLECTIVE;
}

/* The reply to the held request p, from its answer. */
static int answer_client(struct rconn *r, const struct piece *p)
{
	uint8_t h[CLF_PROTO_HEADER_SIZE];
	int err;

	memcpy(h, p->hdr, 8);		/* magic, major, negotiated minor */
	memcpy(h + 8, p->hdr + 8, 2);	/* opcode */
	h[10] = CLF_PROTO_FLAG_REPLY;
	h[11] = 0;
	memcpy(h + 12, p->hdr + 12, 8);	/* id */
	for (int i = 0; i < 4; i++) {
		h[20 + i] = (uint8_t)(p->reply_len >> (8 * i));
		h[24 + i] = (uint8_t)((uint32_t)p->status >> (8 * i));
		h[28 + i] = 0;
	}
	pthread_mutex_lock(&r->wlock);
	err = write_full(r->cfd, h, sizeof(h)) ||
	      write_full(r->cfd, p->reply, p->reply_len);
	pthread_mutex_unlock(&r->wlock);
	return err ? -1 : 0;
}

/*
 * A collective request held: once its connection is idle, into its
 * group; answered, or sent alone when the iod refused the group.
 */
static int held(struct rconn *r, const uint8_t *h, uint8_t *body,
		uint32_t len)
{
	struct piece p = { .body = body, .len = len, .port = r->port,
			   .opcode = le16(h + 8), .tag = le64(body + 24),
			   .participants = le32(body + 32),
			   .state = PIECE_WAIT };
	struct group *full;
	bool gone;
	int err;

	memcpy(p.hdr, h, sizeof(p.hdr));
	pthread_mutex_lock(&r->lock);
	while (r->outstanding && !r->iod_gone)
		pthread_cond_wait(&r->cond, &r->lock);
	gone = r->iod_gone;
	pthread_mutex_unlock(&r->lock);
	if (gone)
		return -1;
	pthread_mutex_lock(&mg.mutex);
	full = group_add(&p, r->iod);
	pthread_mutex_unlock(&mg.mutex);
	if (full)
		send_group(full);
	pthread_mutex_lock(&mg.mutex);
	while (p.state == PIECE_WAIT)
		pthread_cond_wait(&mg.answered, &mg.mutex);
	pthread_mutex_unlock(&mg.mutex);
	if (p.state == PIECE_ALONE)
		return to_iod(r, h, body, len, len);
	err = answer_client(r, &p);
	free(p.reply);
	return err;
}

/* The client->iod side: held collective requests, the rest as it came. */
static void client_side(struct rconn *r)
{
	uint8_t h[CLF_PROTO_HEADER_SIZE];

	for (;;) {
		uint16_t op, flags;
		uint32_t len;
		uint8_t *body;
		int err;

		if (read_full(r->cfd, h, sizeof(h)))
			break;
		op = le16(h + 8);
		flags = le16(h + 10);
		len = le32(h + 20);
		if ((op != CLF_PROTO_OP_VIEW_WRITE &&
		     op != CLF_PROTO_OP_VIEW_READ) || flags ||
		    len < VIEW_IO_FIXED) {
			if (to_iod(r, h, NULL, 0, len))
				break;
			continue;
		}
		if (len > MERGE_PIECE_MAX) {
			uint8_t fixed[VIEW_IO_FIXED];

			if (read_full(r->cfd, fixed, sizeof(fixed)))
				break;
			if (first_coll(fixed))
				merge_passed(r->iod, le64(fixed + 24));
			if (to_iod(r, h, fixed, sizeof(fixed), len))
				break;
			continue;
		}
		body = malloc(len);
		if (!body || read_full(r->cfd, body, len)) {
			free(body);
			break;
		}
		if (!first_coll(body)) {
			err = to_iod(r, h, body, len, len);
		} else if (op == CLF_PROTO_OP_VIEW_READ &&
			   le64(body + 16) - le64(body + 8) > MERGE_PIECE_MAX) {
			/* A read whose range may hold more than a held
			 * piece (its reply would come through memory). */
			merge_passed(r->iod, le64(body + 24));
			err = to_iod(r, h, body, len, len);
		} else {
			err = held(r, h, body, len);
		}
		free(body);
		if (err)
			break;
	}
	shutdown(r->dfd, SHUT_WR);
}

void fwd_merge_relay(int cfd, int dfd, uint32_t iod)
{
	struct rconn r = { .cfd = cfd, .dfd = dfd, .iod = iod,
			   .pipes = { { -1, -1 }, { -1, -1 } } };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	pthread_t tid;
	int mode;

	if (getsockname(dfd, (struct sockaddr *)&ss, &sl) == 0)
		r.port = ntohs(ss.ss_family == AF_INET6
			       ? ((struct sockaddr_in6 *)&ss)->sin6_port
			       : ((struct sockaddr_in *)&ss)->sin_port);
	if (pipe2(r.pipes[0], O_CLOEXEC) || pipe2(r.pipes[1], O_CLOEXEC))
		goto out;
	mode = handshake(&r);
	if (mode == 0)
		fwd_relay(cfd, dfd);
	if (mode != 1)
		goto out;
	pthread_mutex_init(&r.wlock, NULL);
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	if (pthread_create(&tid, NULL, iod_side, &r) == 0) {
		client_side(&r);
		pthread_join(tid, NULL);
	}
	pthread_cond_destroy(&r.cond);
	pthread_mutex_destroy(&r.lock);
	pthread_mutex_destroy(&r.wlock);
out:
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			if (r.pipes[i][j] >= 0)
				close(r.pipes[i][j]);
}
