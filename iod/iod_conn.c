// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_conn.c -- a connection's buffers and the reception of payloads
 * (iod_conn.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "clf.h"
#include "daemon.h"
#include "error.h"
#include "iod_conn.h"

/* Scratch for skipping a payload, on the stack. */
#define DRAIN_CHUNK (16u << 10)

/*
 * Whether receiving len payload bytes from c may wait on its sender: not
 * all of them are in the socket yet (or the transport cannot say).  Such
 * a receive counts as a wait (daemon.h), so that clients that announce a
 * body and stall cannot hold every worker of the pool until their
 * timeout; a body already there is read as it is, at no cost.
 */
static bool may_wait(struct clf_conn *c, size_t len)
{
	int avail;

	return ioctl(clf_conn_fd(c), FIONREAD, &avail) ||
	       (size_t)avail < len;
}

int iod_recv_payload(struct clf_conn *c, void *buf, size_t len)
{
	int err;

	if (!may_wait(c, len))
		return clf_conn_recv_payload(c, buf, len);
	clf_daemon_wait_begin();
	err = clf_conn_recv_payload(c, buf, len);
	clf_daemon_wait_end();
	return err;
}

int iod_recv_payload_to_file(struct clf_conn *c, int fd, int64_t off,
			     size_t len, int *file_err, size_t *written)
{
	int err;

	if (!may_wait(c, len))
		return clf_conn_recv_payload_to_file(c, fd, off, len, file_err,
						     written);
	clf_daemon_wait_begin();
	err = clf_conn_recv_payload_to_file(c, fd, off, len, file_err,
					    written);
	clf_daemon_wait_end();
	return err;
}

int iod_conn_recv(struct iod_conn *cn, uint8_t *dst, size_t len,
		  size_t piece, bool fill, iod_piece_fn put, void *arg,
		  bool *broken)
{
	struct clf_error why;	/* of put's first failure */
	int werr = 0, err;

	*broken = false;
	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;
		uint8_t *at = fill ? dst + off : dst;

		err = iod_recv_payload(cn->c, at, n);
		if (err) {
			*broken = true;
			return err;
		}
		if (put && !werr) {
			werr = put(arg, at, n);
			if (werr)
				why = *clf_error_last();
		}
	}
	if (!werr)
		return 0;
	why.err = werr;
	return clf_error_restore(&why);
}

int iod_conn_drain(struct iod_conn *cn, size_t len)
{
	uint8_t scratch[DRAIN_CHUNK];
	bool broken;

	return iod_conn_recv(cn, scratch, len, sizeof(scratch), false, NULL,
			     NULL, &broken);
}

/* Free one of the connection's buffers. */
static void buf_free(struct iod_conn *cn, uint8_t **buf, size_t *cap)
{
	struct iod_server *srv = cn->srv;

	if (*cap > IOD_SMALL_BUF && cn->client) {
		pthread_mutex_lock(&srv->buf_lock);
		iod_pool_give(&srv->bufs, &cn->client->buf_bytes, *cap);
		pthread_mutex_unlock(&srv->buf_lock);
	}
	free(*buf);
	*buf = NULL;
	*cap = 0;
}

/*
 * *buf with room for len bytes (at least 1); 0, or -ENOBUFS when a big
 * one passes the connection's share of the pool, or -ENOMEM.
 */
static int buf_reserve(struct iod_conn *cn, uint8_t **buf, size_t *cap,
		       size_t len, const char *what)
{
	struct iod_server *srv = cn->srv;
	uint8_t *bigger;
	int err = 0;

	if (len <= *cap && *buf)
		return 0;
	buf_free(cn, buf, cap);
	if (len > IOD_SMALL_BUF && !cn->client)
		return clf_fail(ENOBUFS, "iod: no buffer before authentication");
	if (len > IOD_SMALL_BUF) {
		pthread_mutex_lock(&srv->buf_lock);
		err = iod_pool_take(&srv->bufs, &cn->client->buf_bytes, len);
		pthread_mutex_unlock(&srv->buf_lock);
		if (err)
			return err;
	}
	bigger = malloc(len ? len : 1);
	if (!bigger) {
		if (len > IOD_SMALL_BUF) {
			pthread_mutex_lock(&srv->buf_lock);
			iod_pool_give(&srv->bufs, &cn->client->buf_bytes, len);
			pthread_mutex_unlock(&srv->buf_lock);
		}
		return clf_fail(ENOMEM, "iod: no memory for %s of %zu bytes",
				what, len);
	}
	*buf = bigger;
	*cap = len ? len : 1;
	return 0;
}

struct iod_sieve iod_conn_sieve_begin(struct iod_conn *cn)
{
	struct iod_server *srv = cn->srv;
	struct iod_sieve sv = iod_sieve_default;

	if (!cn->client) {
		sv.window = IOD_SIEVE_WINDOW_SMALL;
		return sv;
	}
	pthread_mutex_lock(&srv->buf_lock);
	if (iod_pool_fits(&srv->bufs, cn->client->buf_bytes, sv.window)) {
		iod_pool_take(&srv->bufs, &cn->client->buf_bytes, sv.window);
		cn->sieve_charged = sv.window;
	} else {
		sv.window = IOD_SIEVE_WINDOW_SMALL;
	}
	pthread_mutex_unlock(&srv->buf_lock);
	return sv;
}

void iod_conn_sieve_end(struct iod_conn *cn)
{
	struct iod_server *srv = cn->srv;

	if (!cn->sieve_charged)
		return;
	pthread_mutex_lock(&srv->buf_lock);
	iod_pool_give(&srv->bufs, &cn->client->buf_bytes, cn->sieve_charged);
	pthread_mutex_unlock(&srv->buf_lock);
	cn->sieve_charged = 0;
}

int iod_conn_reserve(struct iod_conn *cn, size_t len)
{
	return buf_reserve(cn, &cn->buf, &cn->cap, len, "a payload");
}

int iod_conn_data_buffer(struct iod_conn *cn, size_t len, void **out)
{
	int err = buf_reserve(cn, &cn->out, &cn->out_cap, len, "data");

	if (!err)
		*out = cn->out;
	return err;
}

void iod_conn_trim(struct iod_conn *cn, bool idle)
{
	struct iod_server *srv = cn->srv;
	bool full;

	if (cn->cap <= IOD_SMALL_BUF && cn->out_cap <= IOD_SMALL_BUF)
		return;
	pthread_mutex_lock(&srv->buf_lock);
	full = srv->bufs.used > srv->bufs.limit / 2;
	pthread_mutex_unlock(&srv->buf_lock);
	if (cn->cap > IOD_SMALL_BUF && (idle || full))
		buf_free(cn, &cn->buf, &cn->cap);
	if (cn->out_cap > IOD_SMALL_BUF && (idle || full))
		buf_free(cn, &cn->out, &cn->out_cap);
}

void iod_conn_free_buffers(struct iod_conn *cn)
{
	buf_free(cn, &cn->buf, &cn->cap);
	buf_free(cn, &cn->out, &cn->out_cap);
}
