/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport.h -- connections that carry clf messages, whatever the
 * network underneath.
 *
 * Callers use the clf_conn_* and clf_listener_* functions below; a
 * transport (TCP here, RDMA later) only implements struct
 * clf_transport_ops, in its own file, and is chosen by name from the
 * configuration.  The message framing and every check on what arrives
 * (magic, version, payload limit) live in transport.c, above the ops, so
 * that each transport gets them for free and identically.
 *
 * Time limits: every call that waits takes its limit from the connection's
 * timeout (milliseconds, from the configuration; clf_conn_set_timeout) or
 * from an explicit timeout_ms argument, and fails with -ETIMEDOUT when it
 * runs out.  The limit covers the whole call, not each system call, so a
 * peer that trickles one byte at a time cannot hold it either.  Only
 * name resolution (getaddrinfo) is bounded by the resolver's own timeouts;
 * numeric addresses never wait on it.
 *
 * Errors: 0 or a negative errno, and CLF_Last_error() names the peer:
 *   -ECONNREFUSED   nobody listens at the address
 *   -ETIMEDOUT      the time limit ran out
 *   -EHOSTUNREACH   no route, or the name does not resolve
 *   -EHOSTDOWN      the peer stopped answering (keepalive)
 *   -ECONNRESET     the peer closed or reset the connection
 *   -EPROTO, -E2BIG, -EPROTONOSUPPORT  what arrived is not a clf message
 *                   of this major version within the limits
 *   -ENOTCONN       the connection failed earlier (see below)
 *
 * After a send or receive fails the connection is broken: the stream may
 * be cut inside a message, so every later send or receive fails with
 * -ENOTCONN.  Close it and connect again.
 *
 * A connection is used by one thread at a time.
 */
#ifndef CLF_TRANSPORT_H
#define CLF_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "clock.h"
#include "proto.h"
#include "seal.h"

struct clf_conn;	/* one connection; opaque here, transport_i.h */
struct clf_listener;	/* a listening endpoint; opaque here */

#define CLF_CONN_DEFAULT_TIMEOUT_MS 5000
#define CLF_CONN_MAX_IOV 16	/* payload pieces per gather write */
#define CLF_ADDR_MAX 300	/* "[host]:port" as text, with the NUL */

/*
 * What a transport implements.  Callers never call these directly.  Every
 * op returns 0 or a negative errno with a clf_fail() message; deadlines
 * are absolute CLOCK_MONOTONIC milliseconds (clf_now_ms()).
 */
struct clf_transport_ops {
	const char *name;	/* as written in the configuration: "tcp" */
	/* A new connection to host:port, within timeout_ms. */
	int (*connect)(const char *host, const char *port, int timeout_ms,
		       struct clf_conn **out);
	/* Listen on host:port (host "" or "*": every address; port "0":
	 * any free port). */
	int (*listen)(const char *host, const char *port,
		      struct clf_listener **out);
	/* Wait up to timeout_ms for a connection; -ETIMEDOUT if none. */
	int (*accept)(struct clf_listener *l, int timeout_ms,
		      struct clf_conn **out);
	/* Send all of iov (the header is iov[0]), or fail. */
	int (*send)(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		    int64_t deadline);
	/* Receive exactly len bytes, or fail. */
	int (*recv)(struct clf_conn *c, void *buf, size_t len,
		    int64_t deadline);
	/* Optional: receive exactly the bytes of iov[0..iovcnt), or fail
	 * (NULL: recv piece by piece). */
	int (*recvv)(struct clf_conn *c, const struct iovec *iov, int iovcnt,
		     int64_t deadline);
	/*
	 * Optional: receive exactly len bytes into file descriptor fd at
	 * *off without passing them through user memory, advancing *off by
	 * what the file took.  Within timeout_ms per step of progress.  A
	 * failure of the file sets *file_err (then the bytes are received
	 * and dropped, so the stream stays usable) and returns 0; a failure
	 * of the connection is returned; -ENOSYS with nothing consumed
	 * means "not possible here", as for send_file.  NULL or -ENOSYS:
	 * transport.c receives into a bounce buffer and pwrites.
	 */
	int (*recv_to_file)(struct clf_conn *c, int fd, int64_t *off,
			    size_t len, int timeout_ms, int *file_err);
	/*
	 * Optional: send up to len bytes of fd from off without reading
	 * them into user memory (TCP: sendfile).  Returns the count sent,
	 * short only at the end of the file, or a negative errno (the
	 * connection is then unusable).  -ENOSYS with nothing sent means
	 * "not possible here": transport.c then preads into a bounce
	 * buffer.
	 */
	ssize_t (*send_file)(struct clf_conn *c, int fd, int64_t off,
			     size_t len, int64_t deadline);
	/* 1 when bytes (or an error) are ready to receive, 0 on timeout. */
	int (*poll)(struct clf_conn *c, int timeout_ms);
	/* A descriptor that polls readable when poll() would return 1. */
	int (*conn_fd)(const struct clf_conn *c);
	void (*close)(struct clf_conn *c);
	int (*listener_fd)(const struct clf_listener *l);
	/* The local port the listener is bound to. */
	int (*listener_port)(const struct clf_listener *l);
	void (*listener_close)(struct clf_listener *l);
};

extern const struct clf_transport_ops clf_transport_tcp;
/* With CONFIG_CLF_TRANSPORT_RDMA (CLF_HAVE_RDMA): transport_rdma.c. */
extern const struct clf_transport_ops clf_transport_rdma;
/* Counts of this process's RDMA SENDs posted, receives completed and
 * credit-only SENDs among the former (benchmarks); CLF_HAVE_RDMA only. */
void clf_rdma_stats(unsigned long *sends, unsigned long *recvs,
		    unsigned long *credit_sends);
/* This process's RDMA READs and WRITEs, the bytes they moved, and the
 * registration cache's hits and misses; CLF_HAVE_RDMA only. */
void clf_rdma_direct_stats(unsigned long *rdma_ops, unsigned long *bytes,
			   unsigned long *cache_hits, unsigned long *cache_misses);
/* A daemon's receive buffers over RDMA (its shared receive queues, all
 * devices): how many there are, and how many are posted now -- all of
 * them whenever no connection holds one; CLF_HAVE_RDMA only. */
void clf_rdma_pool_stats(unsigned long *posted, unsigned long *buffers);
/* Registration caches alive in this process: one per device and kind of
 * access that a connection uses now; CLF_HAVE_RDMA only. */
size_t clf_rdma_cache_count(void);

/* The transport called name ("tcp", "rdma" when built with
 * CONFIG_CLF_TRANSPORT_RDMA), or NULL with a message. */
const struct clf_transport_ops *clf_transport_find(const char *name);

/* The transports of this build, for messages: "tcp, rdma". */
const char *clf_transport_names(void);

/*
 * The transport an address names with a prefix ("rdma://host:port",
 * "tcp://host:port"), dflt for one without (the configuration's
 * transport), NULL with a message for an unknown one.  clf_conn_connect
 * and clf_listener_open follow it; clf_addr_split skips it.
 */
const struct clf_transport_ops *clf_addr_transport(
	const char *addr, const struct clf_transport_ops *dflt);

/* The name of the transport c runs over ("tcp", "rdma"): an RDMA
 * connection that fell back to TCP says "tcp". */
const char *clf_conn_transport(const struct clf_conn *c);

/*
 * clf_addr_split - "host:port" or "[ipv6]:port" into its two parts
 *
 * The host may be a name, an IPv4 address, an IPv6 address in brackets, or
 * empty (every local address, for listening); the port is decimal,
 * 0..65535.  Writes NUL-terminated strings into host and port (hostlen and
 * portlen bytes).  Returns 0, -EINVAL for a malformed address (message
 * says why), -ENAMETOOLONG when a part does not fit.
 */
int clf_addr_split(const char *addr, char *host, size_t hostlen, char *port,
		   size_t portlen);

/* ------------------------------------------------------------------ */
/* Setting up                                                          */
/* ------------------------------------------------------------------ */

/*
 * Connect to addr ("host:port") over t within timeout_ms (> 0).  The new
 * connection has timeout_ms as its timeout and this side's minor version
 * until authentication negotiates one.  The caller closes it.
 */
int clf_conn_connect(const struct clf_transport_ops *t, const char *addr,
		     int timeout_ms, struct clf_conn **out);

/* Listen on addr ("host:port", port 0 for any).  The caller closes it. */
int clf_listener_open(const struct clf_transport_ops *t, const char *addr,
		      struct clf_listener **out);

/*
 * Wait up to timeout_ms (>= 0) for a new connection; its timeout is
 * conn_timeout_ms.  Returns -ETIMEDOUT when none came; the listener stays
 * usable after any error.
 */
int clf_listener_accept(struct clf_listener *l, int timeout_ms,
			int conn_timeout_ms, struct clf_conn **out);

/* For event loops: readable when a connection waits. */
int clf_listener_fd(const struct clf_listener *l);
/* The local port, useful after listening on port 0. */
int clf_listener_port(const struct clf_listener *l);
/* Stop listening and free l; NULL ok. */
void clf_listener_close(struct clf_listener *l);

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/*
 * clf_conn_send - send one message: h, then the payload gathered from iov
 *
 * The header's payload_len is set from the iov lengths and its minor from
 * the connection (h itself is only read).  Nothing is copied: the header
 * and the pieces go out in gather writes of up to CLF_CONN_MAX_IOV + 1
 * pieces (one, usually).
 * -E2BIG (nothing sent, connection intact) when the payload exceeds the
 * connection's limit.
 */
int clf_conn_send(struct clf_conn *c, const struct clf_proto_header *h,
		  const struct iovec *iov, int iovcnt);

/*
 * clf_conn_send_file - send h, the payload of iov, then len bytes of a file
 *
 * The file's bytes [off, off + len) end the payload, taken from the page
 * cache straight to the socket where the transport can (TCP: sendfile(2))
 * -- the iod's reads of whole runs.  Past the end of the file (also one
 * that shrank meanwhile) zeros are sent, so the payload is always what
 * the header announced.  A failure after the header went breaks the
 * connection: the peer cannot be told in band.
 */
int clf_conn_send_file(struct clf_conn *c, const struct clf_proto_header *h,
		       const struct iovec *iov, int iovcnt, int fd,
		       int64_t off, size_t len);

/*
 * clf_conn_send_stream - send h, the payload of iov, then len bytes made
 * piece by piece
 *
 * For a reply too big to hold: fill(arg, scratch, off, n) writes payload
 * bytes [off, off + n) of the len into scratch (chunk bytes of room) and
 * returns 0 or a negative errno; each piece is sent before the next is
 * made, each within the timeout.  The first piece is made before the
 * header goes: when it fails, nothing was sent, the connection is intact
 * and its error is returned.  A later failure breaks the connection (the
 * peer cannot be told in band).
 */
typedef int (*clf_conn_fill_fn)(void *arg, void *buf, size_t off, size_t n);
int clf_conn_send_stream(struct clf_conn *c, const struct clf_proto_header *h,
			 const struct iovec *iov, int iovcnt, size_t len,
			 clf_conn_fill_fn fill, void *arg, void *scratch,
			 size_t chunk);

/* clf_conn_send with the payload in one buffer (len may be 0). */
int clf_conn_send_buf(struct clf_conn *c, const struct clf_proto_header *h,
		      const void *payload, size_t len);

/*
 * clf_conn_recv_header - wait for the next message and read its header
 *
 * Checks magic, major version and flags, and payload_len against the
 * connection's limit (clf_conn_set_max_payload), all before anything is
 * allocated.  Then the caller reads exactly h->payload_len bytes with
 * clf_conn_recv_payload (in pieces if it likes: straight into their final
 * place) before the next header.
 */
int clf_conn_recv_header(struct clf_conn *c, struct clf_proto_header *h);

/*
 * The same for the first message of a connection, accepting another major
 * version so that the peer can be told (see
 * clf_proto_header_decode_any_major); the caller compares h->major and
 * closes after answering.
 */
int clf_conn_recv_header_any_major(struct clf_conn *c,
				   struct clf_proto_header *h);

/* Read the next len bytes of the current payload (len <= what remains). */
int clf_conn_recv_payload(struct clf_conn *c, void *buf, size_t len);

/*
 * The same, scattered over iov[0..iovcnt) (a strided memory type's runs),
 * in as few system calls as the transport allows.
 */
int clf_conn_recv_payload_iov(struct clf_conn *c, const struct iovec *iov,
			      int iovcnt);

/*
 * clf_conn_recv_payload_to_file - the next len payload bytes into a file
 *
 * Writes them to fd at offset off, straight from the socket where the
 * transport can (TCP: splice(2) through a pipe, so the bytes are copied
 * once, into the page cache, instead of twice).  Each step of progress
 * gets the connection's timeout, like a payload received in pieces.
 * Returns a negative errno when the connection failed (it is then
 * broken); otherwise 0 with *file_err = 0 when the file took every byte,
 * or the negative errno of the file (ENOSPC, EIO...) after which the rest
 * of the payload was received and dropped: the connection goes on.
 * *written is what the file took in both cases.
 */
int clf_conn_recv_payload_to_file(struct clf_conn *c, int fd, int64_t off,
				  size_t len, int *file_err, size_t *written);

/*
 * clf_conn_recv - read one whole message
 *
 * Returns 0 with the header in *h and the payload in *payload, allocated
 * (never NULL, even for an empty payload) and freed by the caller.
 */
int clf_conn_recv(struct clf_conn *c, struct clf_proto_header *h,
		  void **payload);

/*
 * clf_conn_call - one request and its reply
 *
 * Sends the request (h with opcode and id set, payload in iov), then reads
 * the reply and checks it answers the request (REPLY flag, same id, and
 * the same opcode, or CHALLENGE/AUTH_OK for HELLO/RESPONSE).  On a reply
 * with status 0: returns 0, *reply and *payload (caller frees).  On a reply
 * with a negative status: returns that status, with the peer's message in
 * CLF_Last_error() and nothing in *payload; the connection stays usable
 * (clf_conn_broken() tells a local failure from a remote one).
 */
int clf_conn_call(struct clf_conn *c, const struct clf_proto_header *h,
		  const struct iovec *iov, int iovcnt,
		  struct clf_proto_header *reply, void **payload);

/*
 * Wait up to timeout_ms (>= 0) until a message can be received: 1 when
 * ready (or when the peer closed: the next receive says so), 0 on timeout.
 */
int clf_conn_poll(struct clf_conn *c, int timeout_ms);

/* ------------------------------------------------------------------ */
/* Properties                                                          */
/* ------------------------------------------------------------------ */

/* For event loops: readable when clf_conn_poll would return 1. */
int clf_conn_fd(const struct clf_conn *c);
/* "host:port" of the peer, for messages; valid until close. */
const char *clf_conn_peer(const struct clf_conn *c);
/* The time limit of later sends and receives, > 0 ms. */
void clf_conn_set_timeout(struct clf_conn *c, int timeout_ms);
/*
 * A receive that finds nothing watches the connection without sleeping
 * for up to ns nanoseconds (yielding the core between looks) before it
 * sleeps in poll: a reply that comes within that time is taken without
 * the wake-up of a sleeping thread (tens of microseconds on a virtual
 * machine's idle core, most of a small request's round trip).  0, the
 * default: sleep at once.  For clients on machines with cores to spare
 * (libclf/client/client.c); TCP only.
 */
void clf_conn_set_recv_spin(struct clf_conn *c, int64_t ns);
int clf_conn_timeout(const struct clf_conn *c);
/* Largest payload accepted (default CLF_PROTO_PAYLOAD_MAX) and sent. */
void clf_conn_set_max_payload(struct clf_conn *c, uint32_t max);
uint32_t clf_conn_max_payload(const struct clf_conn *c);
/* The negotiated minor version, written into every header sent. */
void clf_conn_set_minor(struct clf_conn *c, uint16_t minor);
uint16_t clf_conn_minor(const struct clf_conn *c);
/* A fresh request id for this connection (1, 2, ...). */
uint64_t clf_conn_next_id(struct clf_conn *c);
/*
 * Protection of the messages after the handshake (seal.h).  The level
 * this side asks for in the handshake (default none: take the peer's);
 * auth.c then installs the session keys of the level agreed, and every
 * later message is sealed.
 */
void clf_conn_want_protection(struct clf_conn *c, enum clf_protection level);
enum clf_protection clf_conn_wanted_protection(const struct clf_conn *c);
int clf_conn_protect(struct clf_conn *c, enum clf_protection level,
		     const uint8_t tx[CLF_SEAL_KEY], const uint8_t rx[CLF_SEAL_KEY]);
/* The level in force now. */
enum clf_protection clf_conn_protection(const struct clf_conn *c);

/* Whether an earlier failure broke the connection. */
bool clf_conn_broken(const struct clf_conn *c);
/* Close and free; NULL ok. */
void clf_conn_close(struct clf_conn *c);

#endif /* CLF_TRANSPORT_H */
