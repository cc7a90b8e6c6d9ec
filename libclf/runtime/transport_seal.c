// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_seal.c -- sending and receiving sealed messages (seal.h).
 *
 * Sealing needs the whole message in one place: the tag covers all of
 * it, and a receiver must not act on a byte before the tag checked (an
 * iod would write an altered payload to disk).  So a sealed message is
 * gathered into a buffer of the connection, kept between messages up to
 * KEEP_BYTES so that a stream of requests does not allocate each time.
 * The zero-copy paths (sendfile, splice) are for protection none.
 */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "transport_i.h"

#define KEEP_BYTES ((size_t)4 << 20)
#define PIECE ((size_t)1 << 20)	/* received within one timeout */

static int room(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;

	if (*cap >= need)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return clf_fail(ENOMEM, "clf: no memory for a message of %zu bytes",
				need);
	*buf = p;
	*cap = need;
	return 0;
}

static void trim(uint8_t **buf, size_t *cap)
{
	if (*cap > KEEP_BYTES) {
		free(*buf);
		*buf = NULL;
		*cap = 0;
	}
}

int clf_seal_send(struct clf_conn *c, const uint8_t raw[CLF_PROTO_HEADER_SIZE],
		  const struct iovec *iov, int iovcnt, size_t tail,
		  clf_seal_tail_fn fill, void *arg, int64_t deadline)
{
	size_t len = CLF_PROTO_HEADER_SIZE + tail, at = CLF_PROTO_HEADER_SIZE;
	struct iovec v;
	int err;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	err = room(&c->tx_msg, &c->tx_cap, len + CLF_SEAL_TAG);
	if (err)
		return err;
	memcpy(c->tx_msg, raw, CLF_PROTO_HEADER_SIZE);
	for (int i = 0; i < iovcnt; i++) {
		memcpy(c->tx_msg + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	if (tail) {
		err = fill(arg, c->tx_msg + at, tail);
		if (err)
			return err;
	}
	clf_seal_out(c->seal, c->tx_msg, len, c->tx_msg + len);
	v = (struct iovec){ c->tx_msg, len + CLF_SEAL_TAG };
	err = c->ops->send(c, &v, 1, deadline);
	if (err)
		c->broken = true;
	trim(&c->tx_msg, &c->tx_cap);
	return err;
}

int clf_seal_recv(struct clf_conn *c, const uint8_t raw[CLF_PROTO_HEADER_SIZE],
		  size_t len, int64_t deadline)
{
	size_t all = CLF_PROTO_HEADER_SIZE + len;
	uint64_t seq = c->seal->rx_seq;
	int err;

	trim(&c->rx_msg, &c->rx_cap);
	err = room(&c->rx_msg, &c->rx_cap, all + CLF_SEAL_TAG);
	if (err)
		return err;
	memcpy(c->rx_msg, raw, CLF_PROTO_HEADER_SIZE);
	/* Steady progress suffices, as for a payload read in pieces: each
	 * piece gets the connection's timeout. */
	for (size_t at = 0; at < len + CLF_SEAL_TAG; at += PIECE) {
		size_t n = len + CLF_SEAL_TAG - at < PIECE
				   ? len + CLF_SEAL_TAG - at : PIECE;

		err = c->ops->recv(c, c->rx_msg + CLF_PROTO_HEADER_SIZE + at,
				   n, at ? clf_deadline_after(c->timeout_ms)
					 : deadline);
		if (err)
			return err;
	}
	if (clf_seal_in(c->seal, c->rx_msg, all, c->rx_msg + all))
		return clf_fail(EBADMSG,
				"clf: message %llu from %s fails its %s check (altered, replayed, reordered or lost on the way): closing the connection",
				(unsigned long long)seq, c->peer,
				clf_protection_name(c->seal->level));
	c->rx_pos = CLF_PROTO_HEADER_SIZE;
	return 0;
}

int clf_conn_protect(struct clf_conn *c, enum clf_protection level,
		     const uint8_t tx[CLF_SEAL_KEY], const uint8_t rx[CLF_SEAL_KEY])
{
	if (level == CLF_PROTECT_NONE)
		return 0;
	c->seal = calloc(1, sizeof(*c->seal));
	if (!c->seal)
		return clf_fail(ENOMEM, "clf: out of memory");
	c->seal->level = level;
	memcpy(c->seal->tx, tx, CLF_SEAL_KEY);
	memcpy(c->seal->rx, rx, CLF_SEAL_KEY);
	return 0;
}

enum clf_protection clf_conn_protection(const struct clf_conn *c)
{
	return c->seal ? c->seal->level : CLF_PROTECT_NONE;
}

void clf_conn_want_protection(struct clf_conn *c, enum clf_protection level)
{
	c->want = level;
}

enum clf_protection clf_conn_wanted_protection(const struct clf_conn *c)
{
	return c->want;
}

void clf_seal_free(struct clf_conn *c)
{
	free(c->rx_msg);
	free(c->tx_msg);
	c->rx_msg = c->tx_msg = NULL;
	c->rx_cap = c->tx_cap = 0;
	if (c->seal) {
		sodium_memzero(c->seal, sizeof(*c->seal));
		free(c->seal);
		c->seal = NULL;
	}
}
