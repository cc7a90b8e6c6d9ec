// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport.c -- message framing and checks above any transport.
 *
 * A transport moves bytes; this file decides what a message is: it
 * encodes the header, refuses a bad one before allocating its payload,
 * enforces the payload limit, marks a connection broken after a failed
 * transfer and matches replies to requests.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "transport_i.h"

static int64_t deadline_after(int timeout_ms)
{
	return clf_deadline_after(timeout_ms);
}

#ifdef CLF_HAVE_RDMA
#define HAVE_NAMES "tcp, rdma"
#else
#define HAVE_NAMES "tcp"
#endif

const struct clf_transport_ops *clf_transport_find(const char *name)
{
	if (name && strcmp(name, clf_transport_tcp.name) == 0)
		return &clf_transport_tcp;
#ifdef CLF_HAVE_RDMA
	if (name && strcmp(name, clf_transport_rdma.name) == 0)
		return &clf_transport_rdma;
#endif
	clf_fail(ENOENT, "clf: no transport '%s' in this build (have: %s)",
		 name ? name : "(null)", HAVE_NAMES);
	return NULL;
}

const char *clf_transport_names(void)
{
	return HAVE_NAMES;
}

const char *clf_conn_transport(const struct clf_conn *c)
{
	return c->ops->name;
}


const struct clf_transport_ops *clf_addr_transport(
	const char *addr, const struct clf_transport_ops *dflt)
{
	size_t n = clf_addr_scheme_len(addr);
	char name[16];

	if (n == 0)
		return dflt;
	if (n - 3 >= sizeof(name)) {
		clf_fail(ENOENT, "clf: address '%s': unknown transport", addr);
		return NULL;
	}
	memcpy(name, addr, n - 3);
	name[n - 3] = '\0';
	return clf_transport_find(name);
}


/* ------------------------------------------------------------------ */
/* Setting up                                                          */
/* ------------------------------------------------------------------ */

int clf_conn_connect(const struct clf_transport_ops *t, const char *addr,
		     int timeout_ms, struct clf_conn **out)
{
	char host[CLF_ADDR_MAX], port[16];
	struct clf_conn *c;
	int err;

	if (!t || !out || timeout_ms <= 0)
		return clf_fail(EINVAL, "clf: connect to %s: bad arguments",
				addr ? addr : "(null)");
	err = clf_addr_split(addr, host, sizeof(host), port, sizeof(port));
	if (err)
		return err;
	t = clf_addr_transport(addr, t);
	if (!t)
		return -ENOENT;
	err = t->connect(host, port, timeout_ms, &c);
	if (err)
		return err;
	c->timeout_ms = timeout_ms;
	*out = c;
	return 0;
}

int clf_listener_open(const struct clf_transport_ops *t, const char *addr,
		      struct clf_listener **out)
{
	char host[CLF_ADDR_MAX], port[16];
	struct clf_listener *l;
	int err;

	if (!t || !out)
		return clf_fail(EINVAL, "clf: listen: bad arguments");
	err = clf_addr_split(addr, host, sizeof(host), port, sizeof(port));
	if (err)
		return err;
	t = clf_addr_transport(addr, t);
	if (!t)
		return -ENOENT;
	err = t->listen(host, port, &l);
	if (err)
		return err;
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	*out = l;
	return 0;
}

int clf_listener_accept(struct clf_listener *l, int timeout_ms,
			int conn_timeout_ms, struct clf_conn **out)
{
	struct clf_conn *c;
	int err;

	if (!l || !out || timeout_ms < 0 || conn_timeout_ms <= 0)
		return clf_fail(EINVAL, "clf: accept: bad arguments");
	err = l->ops->accept(l, timeout_ms, &c);
	if (err)
		return err;
	c->timeout_ms = conn_timeout_ms;
	*out = c;
	return 0;
}

int clf_listener_fd(const struct clf_listener *l)
{
	return l->ops->listener_fd(l);
}

int clf_listener_port(const struct clf_listener *l)
{
	return l->ops->listener_port(l);
}

void clf_listener_close(struct clf_listener *l)
{
	if (l)
		l->ops->listener_close(l);
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

static int check_usable(const struct clf_conn *c)
{
	if (c->broken)
		return clf_fail(ENOTCONN,
				"clf: connection to %s failed earlier; reconnect",
				c->peer);
	return 0;
}

/* Record a failure that leaves the stream unusable. */
static int broken(struct clf_conn *c, int err)
{
	c->broken = true;
	return err;
}

/* Check h and iov and encode the header, announcing iov's bytes plus
 * tail more, into raw. */
static int encode_head(struct clf_conn *c, const struct clf_proto_header *h,
		       const struct iovec *iov, int iovcnt, uint64_t tail,
		       uint8_t raw[CLF_PROTO_HEADER_SIZE])
{
	struct wire_writer w = { raw, CLF_PROTO_HEADER_SIZE, 0 };
	struct clf_proto_header hh = *h;
	uint64_t total = tail;
	int err = check_usable(c);

	if (err)
		return err;
	if (iovcnt < 0 || (iovcnt && !iov))
		return clf_fail(EINVAL, "clf: send to %s: %d payload pieces",
				c->peer, iovcnt);
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total > c->max_payload)
		return clf_fail(E2BIG,
				"clf: %s to %s: payload of %llu bytes exceeds the limit %u",
				clf_proto_op_name(h->opcode) ?: "message", c->peer,
				(unsigned long long)total, c->max_payload);
	hh.payload_len = (uint32_t)total;
	hh.minor = c->minor;
	clf_proto_header_encode(&w, &hh);
	return 0;
}

/* Send h and iov; the payload announced is iov's bytes plus tail more. */
static int send_head_dl(struct clf_conn *c, const struct clf_proto_header *h,
			const struct iovec *iov, int iovcnt, uint64_t tail,
			int64_t deadline)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct iovec vec[CLF_CONN_MAX_IOV + 1];
	int first = iovcnt < CLF_CONN_MAX_IOV ? iovcnt : CLF_CONN_MAX_IOV;
	int err = encode_head(c, h, iov, iovcnt, tail, raw);

	if (err)
		return err;
	vec[0] = (struct iovec){ raw, sizeof(raw) };
	if (first)
		memcpy(vec + 1, iov, sizeof(*iov) * (size_t)first);
	err = c->ops->send(c, vec, first + 1, deadline);
	/* More pieces (a strided memory type's runs): more gather writes. */
	for (int i = first; i < iovcnt && !err; i += CLF_CONN_MAX_IOV + 1) {
		int n = iovcnt - i < CLF_CONN_MAX_IOV + 1 ? iovcnt - i
							  : CLF_CONN_MAX_IOV + 1;

		err = c->ops->send(c, iov + i, n, deadline);
	}
	if (err)
		c->broken = true;
	return err;
}

/* The sealed form of every send: the whole message, then its tag. */
static int send_sealed(struct clf_conn *c, const struct clf_proto_header *h,
		       const struct iovec *iov, int iovcnt, size_t tail,
		       clf_seal_tail_fn fill, void *arg, int64_t deadline)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	int err = encode_head(c, h, iov, iovcnt, tail, raw);

	if (err)
		return err;
	/* A fill that fails sends nothing: the connection stays usable. */
	return clf_seal_send(c, raw, iov, iovcnt, tail, fill, arg, deadline);
}

static int send_dl(struct clf_conn *c, const struct clf_proto_header *h,
		   const struct iovec *iov, int iovcnt, int64_t deadline)
{
	if (c->seal)
		return send_sealed(c, h, iov, iovcnt, 0, NULL, NULL, deadline);
	return send_head_dl(c, h, iov, iovcnt, 0, deadline);
}

int clf_conn_send(struct clf_conn *c, const struct clf_proto_header *h,
		  const struct iovec *iov, int iovcnt)
{
	return send_dl(c, h, iov, iovcnt, deadline_after(c->timeout_ms));
}

/* Bytes per step of the generic file paths (no splice, no sendfile). */
#define BOUNCE_CHUNK ((size_t)1 << 20)

/* Zeros to pad a file that ended early. */
static const uint8_t zero_page[65536];

/* len zeros, or the connection's error. */
static int send_zeros(struct clf_conn *c, size_t len, int64_t deadline)
{
	struct iovec vec[CLF_CONN_MAX_IOV];
	int n;

	while (len) {
		for (n = 0; n < CLF_CONN_MAX_IOV && len; n++) {
			size_t k = len < sizeof(zero_page) ? len : sizeof(zero_page);

			vec[n] = (struct iovec){ (void *)zero_page, k };
			len -= k;
		}
		if (c->ops->send(c, vec, n, deadline))
			return -1;
	}
	return 0;
}

/* The generic path: pread into a bounce buffer, send from it. */
static ssize_t send_file_bounce(struct clf_conn *c, int fd, int64_t off,
				size_t len, int64_t deadline)
{
	size_t cap = len < BOUNCE_CHUNK ? len : BOUNCE_CHUNK, sent = 0;
	char *buf = malloc(cap);

	if (!buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	while (sent < len) {
		size_t want = len - sent < cap ? len - sent : cap;
		ssize_t n = pread(fd, buf, want, off + (int64_t)sent);
		struct iovec v = { buf, 0 };

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return clf_fail_neg((int)n, "clf: read for %s: %s",
					    c->peer, strerror((int)-n));
		}
		if (n == 0)
			break;
		v.iov_len = (size_t)n;
		if (c->ops->send(c, &v, 1, deadline)) {
			free(buf);
			return -ECONNRESET;
		}
		sent += (size_t)n;
	}
	free(buf);
	return (ssize_t)sent;
}

struct file_tail {
	int fd;
	int64_t off;
};

/* A sealed message's file bytes: read, zeros past the end. */
static int fill_from_file(void *arg, uint8_t *dst, size_t len)
{
	struct file_tail *t = arg;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(t->fd, dst + got, len - got,
				  t->off + (int64_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return clf_fail(errno, "clf: read: %s", strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	memset(dst + got, 0, len - got);
	return 0;
}

int clf_conn_send_file(struct clf_conn *c, const struct clf_proto_header *h,
		       const struct iovec *iov, int iovcnt, int fd,
		       int64_t off, size_t len)
{
	int64_t deadline = deadline_after(c->timeout_ms);
	struct file_tail t = { fd, off };
	ssize_t sent = -ENOSYS;
	int err;

	if (c->seal)
		return send_sealed(c, h, iov, iovcnt, len, fill_from_file, &t,
				   deadline);
	err = send_head_dl(c, h, iov, iovcnt, len, deadline);

	if (err || len == 0)
		return err;
	if (c->ops->send_file)
		sent = c->ops->send_file(c, fd, off, len, deadline);
	if (sent == -ENOSYS)
		sent = send_file_bounce(c, fd, off, len, deadline);
	if (sent < 0 || send_zeros(c, len - (size_t)sent, deadline))
		return broken(c, sent < 0 ? (int)sent : -ECONNRESET);
	return 0;
}

struct stream_tail {
	clf_conn_fill_fn fill;
	void *arg;
	size_t chunk;
};

/* A sealed message's streamed bytes, made in place chunk by chunk. */
static int fill_from_stream(void *arg, uint8_t *dst, size_t len)
{
	struct stream_tail *t = arg;

	for (size_t off = 0; off < len; off += t->chunk) {
		size_t n = len - off < t->chunk ? len - off : t->chunk;
		int err = t->fill(t->arg, dst + off, off, n);

		if (err)
			return err;
	}
	return 0;
}

int clf_conn_send_stream(struct clf_conn *c, const struct clf_proto_header *h,
			 const struct iovec *iov, int iovcnt, size_t len,
			 clf_conn_fill_fn fill, void *arg, void *scratch,
			 size_t chunk)
{
	struct stream_tail t = { fill, arg, chunk };
	size_t n = len < chunk ? len : chunk;
	int err;

	if (c->seal)
		return send_sealed(c, h, iov, iovcnt, len, fill_from_stream,
				   &t, deadline_after(c->timeout_ms));
	err = n ? fill(arg, scratch, 0, n) : 0;

	if (err)
		return err;	/* nothing sent yet: the caller can answer */
	err = send_head_dl(c, h, iov, iovcnt, len, deadline_after(c->timeout_ms));
	for (size_t off = 0; !err && off < len; off += n) {
		struct iovec v;

		n = len - off < chunk ? len - off : chunk;
		if (off)
			err = fill(arg, scratch, off, n);
		if (err)
			return broken(c, err);
		v = (struct iovec){ scratch, n };
		/* Each piece within the timeout: steady progress suffices. */
		err = c->ops->send(c, &v, 1, deadline_after(c->timeout_ms));
		if (err)
			return broken(c, err);
	}
	return err;
}

int clf_conn_send_buf(struct clf_conn *c, const struct clf_proto_header *h,
		      const void *payload, size_t len)
{
	struct iovec iov = { (void *)payload, len };

	return clf_conn_send(c, h, &iov, len ? 1 : 0);
}

static int recv_header_dl(struct clf_conn *c, struct clf_proto_header *out,
			  bool any_major, int64_t deadline)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_reader r = { raw, sizeof(raw), 0, false };
	struct clf_proto_header h;
	int err = check_usable(c);

	if (err)
		return err;
	if (c->rx_left)
		return clf_fail(EINVAL,
				"clf: from %s: %llu payload bytes of the last message unread",
				c->peer, (unsigned long long)c->rx_left);
	err = c->ops->recv(c, raw, sizeof(raw), deadline);
	if (err)
		return broken(c, err);
	err = any_major ? clf_proto_header_decode_any_major(&r, &h)
			: clf_proto_header_decode(&r, &h);
	if (err == -EPROTONOSUPPORT)
		return broken(c, clf_fail(EPROTONOSUPPORT,
			"clf: %s speaks protocol %u.%u, this side %d.%d",
			c->peer, raw[4] | raw[5] << 8, raw[6] | raw[7] << 8,
			CLF_PROTO_VERSION_MAJOR, CLF_PROTO_VERSION_MINOR));
	if (err) {
		return broken(c, clf_fail_ctx(err, "clf: from %s", c->peer));
	}
	if (h.major == CLF_PROTO_VERSION_MAJOR &&
	    h.payload_len > c->max_payload)
		return broken(c, clf_fail(E2BIG,
			"clf: from %s: %s payload of %u bytes exceeds the limit %u",
			c->peer, clf_proto_op_name(h.opcode) ?: "message",
			h.payload_len, c->max_payload));
	if (c->seal && h.major == CLF_PROTO_VERSION_MAJOR) {
		err = clf_seal_recv(c, raw, h.payload_len, deadline);
		if (err)
			return broken(c, err);
	}
	c->rx_left = h.major == CLF_PROTO_VERSION_MAJOR ? h.payload_len : 0;
	*out = h;
	return 0;
}

/* Can len more bytes of the current payload be read from c? */
static int payload_check(const struct clf_conn *c, uint64_t len)
{
	int err = check_usable(c);

	if (err)
		return err;
	if (len > c->rx_left)
		return clf_fail(EINVAL,
				"clf: from %s: reading %llu payload bytes, %llu left",
				c->peer, (unsigned long long)len,
				(unsigned long long)c->rx_left);
	return 0;
}

/* The next len bytes of a sealed message, checked already. */
static void take_sealed(struct clf_conn *c, void *buf, size_t len)
{
	memcpy(buf, c->rx_msg + c->rx_pos, len);
	c->rx_pos += len;
	c->rx_left -= len;
}

static int recv_payload_dl(struct clf_conn *c, void *buf, size_t len,
			   int64_t deadline)
{
	int err = payload_check(c, len);

	if (err)
		return err;
	if (len == 0)
		return 0;
	if (c->seal) {
		take_sealed(c, buf, len);
		return 0;
	}
	err = c->ops->recv(c, buf, len, deadline);
	if (err)
		return broken(c, err);
	c->rx_left -= len;
	return 0;
}

int clf_conn_recv_header(struct clf_conn *c, struct clf_proto_header *h)
{
	return recv_header_dl(c, h, false, deadline_after(c->timeout_ms));
}

int clf_conn_recv_header_any_major(struct clf_conn *c,
				   struct clf_proto_header *h)
{
	return recv_header_dl(c, h, true, deadline_after(c->timeout_ms));
}

int clf_conn_recv_payload(struct clf_conn *c, void *buf, size_t len)
{
	return recv_payload_dl(c, buf, len, deadline_after(c->timeout_ms));
}

int clf_conn_recv_payload_iov(struct clf_conn *c, const struct iovec *iov,
			      int iovcnt)
{
	int64_t deadline = deadline_after(c->timeout_ms);
	uint64_t len = 0;
	int err;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	err = payload_check(c, len);
	if (err)
		return err;
	if (c->seal) {
		for (int i = 0; i < iovcnt; i++)
			take_sealed(c, iov[i].iov_base, iov[i].iov_len);
		return 0;
	}
	if (c->ops->recvv) {
		err = c->ops->recvv(c, iov, iovcnt, deadline);
	} else {
		for (int i = 0; i < iovcnt && !err; i++)
			if (iov[i].iov_len)
				err = c->ops->recv(c, iov[i].iov_base,
						   iov[i].iov_len, deadline);
	}
	if (err)
		return broken(c, err);
	c->rx_left -= len;
	return 0;
}

/* The generic path: receive into a bounce buffer, pwrite from it. */
static int recv_to_file_bounce(struct clf_conn *c, int fd, int64_t *off,
			       size_t len, int *file_err)
{
	size_t cap = len < BOUNCE_CHUNK ? len : BOUNCE_CHUNK;
	char *buf = malloc(cap);
	int err = 0;

	if (!buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	while (len && !err) {
		size_t n = len < cap ? len : cap;

		err = c->ops->recv(c, buf, n, deadline_after(c->timeout_ms));
		if (!err && !*file_err)
			*file_err = clf_pwrite_all(fd, buf, n, off);
		len -= n;
	}
	free(buf);
	return err;
}

int clf_conn_recv_payload_to_file(struct clf_conn *c, int fd, int64_t off,
				  size_t len, int *file_err, size_t *written)
{
	int64_t at = off;
	int err = payload_check(c, len);

	*file_err = 0;
	*written = 0;
	if (err)
		return err;
	if (len == 0)
		return 0;
	if (c->seal) {
		*file_err = clf_pwrite_all(fd, c->rx_msg + c->rx_pos, len, &at);
		*written = (size_t)(at - off);
		c->rx_pos += len;
		c->rx_left -= len;
		return 0;
	}
	err = -ENOSYS;
	if (c->ops->recv_to_file)
		err = c->ops->recv_to_file(c, fd, &at, len, c->timeout_ms,
					   file_err);
	if (err == -ENOSYS)	/* the transport cannot here: nothing consumed */
		err = recv_to_file_bounce(c, fd, &at, len, file_err);
	*written = (size_t)(at - off);
	if (err)
		return broken(c, err);
	c->rx_left -= len;
	return 0;
}

static int recv_dl(struct clf_conn *c, struct clf_proto_header *h,
		   void **payload, int64_t deadline)
{
	struct clf_proto_header hh;
	void *buf;
	int err = recv_header_dl(c, &hh, false, deadline);

	if (err)
		return err;
	buf = malloc(hh.payload_len ? hh.payload_len : 1);
	if (!buf)
		return broken(c, clf_fail(ENOMEM,
			"clf: from %s: no memory for a payload of %u bytes",
			c->peer, hh.payload_len));
	err = recv_payload_dl(c, buf, hh.payload_len, deadline);
	if (err) {
		free(buf);
		return err;
	}
	*h = hh;
	*payload = buf;
	return 0;
}

int clf_conn_recv(struct clf_conn *c, struct clf_proto_header *h,
		  void **payload)
{
	return recv_dl(c, h, payload, deadline_after(c->timeout_ms));
}

static uint16_t reply_opcode(uint16_t op)
{
	if (op == CLF_PROTO_OP_HELLO)
		return CLF_PROTO_OP_CHALLENGE;
	if (op == CLF_PROTO_OP_RESPONSE)
		return CLF_PROTO_OP_AUTH_OK;
	return op;
}

/* A reply with status < 0: its message becomes the error. */
static int remote_error(struct clf_conn *c, const struct clf_proto_header *h,
			const void *payload)
{
	struct wire_reader r = { payload, h->payload_len, 0, false };
	struct clf_proto_error e;
	const char *op = clf_proto_op_name(h->opcode) ?: "request";

	if (clf_proto_error_decode(&r, &e) == 0 && e.message.len)
		return clf_fail_neg(h->status, "clf: %s: %.*s", c->peer,
				    (int)e.message.len, e.message.ptr);
	return clf_fail_neg(h->status, "clf: %s: %s failed: %s", c->peer, op,
			    strerror(-h->status));
}

int clf_conn_call(struct clf_conn *c, const struct clf_proto_header *h,
		  const struct iovec *iov, int iovcnt,
		  struct clf_proto_header *reply, void **payload)
{
	int64_t deadline = deadline_after(c->timeout_ms);
	struct clf_proto_header rh;
	void *buf;
	int err = send_dl(c, h, iov, iovcnt, deadline);

	if (err)
		return err;
	err = recv_dl(c, &rh, &buf, deadline);
	if (err)
		return err;
	if (!(rh.flags & CLF_PROTO_FLAG_REPLY) || rh.id != h->id ||
	    rh.opcode != reply_opcode(h->opcode)) {
		free(buf);
		return broken(c, clf_fail(EPROTO,
			"clf: %s answered %s request %llu with %s %llu",
			c->peer, clf_proto_op_name(h->opcode) ?: "a",
			(unsigned long long)h->id,
			clf_proto_op_name(rh.opcode) ?: "an unknown message",
			(unsigned long long)rh.id));
	}
	if (rh.status < 0) {
		err = remote_error(c, &rh, buf);
		free(buf);
		return err;
	}
	*reply = rh;
	*payload = buf;
	return 0;
}

int clf_conn_poll(struct clf_conn *c, int timeout_ms)
{
	int err = check_usable(c);

	if (err)
		return err;
	if (timeout_ms < 0)
		return clf_fail(EINVAL, "clf: poll %s: negative timeout",
				c->peer);
	return c->ops->poll(c, timeout_ms);
}

/* ------------------------------------------------------------------ */
/* Properties                                                          */
/* ------------------------------------------------------------------ */

int clf_conn_fd(const struct clf_conn *c)
{
	return c->ops->conn_fd(c);
}

const char *clf_conn_peer(const struct clf_conn *c)
{
	return c->peer;
}

void clf_conn_set_timeout(struct clf_conn *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
}

void clf_conn_set_recv_spin(struct clf_conn *c, int64_t ns)
{
	c->recv_spin_ns = ns > 0 ? ns : 0;
}

int clf_conn_timeout(const struct clf_conn *c)
{
	return c->timeout_ms;
}

void clf_conn_set_max_payload(struct clf_conn *c, uint32_t max)
{
	c->max_payload = max < CLF_PROTO_PAYLOAD_MAX ? max
						     : CLF_PROTO_PAYLOAD_MAX;
}

uint32_t clf_conn_max_payload(const struct clf_conn *c)
{
	return c->max_payload;
}

void clf_conn_set_minor(struct clf_conn *c, uint16_t minor)
{
	c->minor = minor;
}

uint16_t clf_conn_minor(const struct clf_conn *c)
{
	return c->minor;
}

uint64_t clf_conn_next_id(struct clf_conn *c)
{
	return ++c->next_id;
}

bool clf_conn_broken(const struct clf_conn *c)
{
	return c->broken;
}

void clf_conn_close(struct clf_conn *c)
{
	if (c) {
		clf_seal_free(c);
		c->ops->close(c);
	}
}
