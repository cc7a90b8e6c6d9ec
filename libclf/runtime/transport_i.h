/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_i.h -- what a transport implementation shares with
 * transport.c.  Callers include transport.h only.
 *
 * An implementation embeds struct clf_conn (and struct clf_listener) at
 * the start of its own structs, fills them with clf_conn_base_init(), and
 * casts back in its ops.
 */
#ifndef CLF_TRANSPORT_I_H
#define CLF_TRANSPORT_I_H

#include "seal.h"
#include "transport.h"

struct clf_conn {
	const struct clf_transport_ops *ops;
	char peer[CLF_ADDR_MAX];	/* "host:port", for messages */
	int timeout_ms;			/* limit of each send and receive */
	uint32_t max_payload;		/* bytes, refused beyond on receipt */
	uint16_t minor;			/* negotiated minor version */
	bool broken;			/* a send or receive failed */
	int64_t recv_spin_ns;		/* clf_conn_set_recv_spin; 0: none */
	uint64_t rx_left;		/* payload bytes of the current message
					   not yet received */
	uint64_t next_id;		/* last request id handed out */
	/* Since 1.8, after a handshake that agreed on protection: */
	enum clf_protection want;	/* asked for in the handshake */
	struct clf_seal *seal;		/* NULL: messages go in clear */
	uint8_t *rx_msg;		/* the message received, checked */
	size_t rx_cap, rx_pos;		/* its room; next payload byte */
	uint8_t *tx_msg;		/* the message being sealed */
	size_t tx_cap;
};

struct clf_listener {
	const struct clf_transport_ops *ops;
	char addr[CLF_ADDR_MAX];	/* as given, for messages */
};

/* Defaults for every field but ops and peer, which it sets from its args. */
void clf_conn_base_init(struct clf_conn *c, const struct clf_transport_ops *ops,
			const char *peer);

/* The length of addr's "name://" prefix (clf_addr_transport's), 0
 * without one. */
size_t clf_addr_scheme_len(const char *addr);

/* Milliseconds until deadline, clamped to [0, INT_MAX]. */
int clf_deadline_left(int64_t deadline);

/* CLOCK_MONOTONIC deadline timeout_ms from now. */
int64_t clf_deadline_after(int timeout_ms);

/*
 * Write all n bytes of buf to fd at *off, advancing *off; 0, or the
 * negative errno of the file (a write that takes nothing is -EIO).
 */
int clf_pwrite_all(int fd, const void *buf, size_t n, int64_t *off);

/*
 * Sealed messages (transport_seal.c), used by transport.c when c->seal is
 * set.  The whole message is held: sent once sealed, acted upon once its
 * tag checked.
 *
 * Send h, the payload of iov and tail more bytes made by fill (a file's,
 * a stream's); returns 0 or a negative errno (the connection is broken).
 */
typedef int (*clf_seal_tail_fn)(void *arg, uint8_t *dst, size_t len);
int clf_seal_send(struct clf_conn *c, const uint8_t raw[CLF_PROTO_HEADER_SIZE],
		  const struct iovec *iov, int iovcnt, size_t tail,
		  clf_seal_tail_fn fill, void *arg, int64_t deadline);
/* Receive the payload (len bytes) and tag of the message whose header is
 * raw, and check it; later payload reads come from c->rx_msg. */
int clf_seal_recv(struct clf_conn *c, const uint8_t raw[CLF_PROTO_HEADER_SIZE],
		  size_t len, int64_t deadline);
/* Free the buffers and keys (on close). */
void clf_seal_free(struct clf_conn *c);

/* Before connect: a receive buffer as large as the system allows
 * (tcp_rcvbuf.c), so that replies queued behind others keep coming. */
void clf_tcp_widen_rcvbuf(int fd);

#endif /* CLF_TRANSPORT_I_H */
