// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_base.c -- what every transport and the framing above them
 * share: deadlines, a write that finishes, a connection's defaults.
 * The bottom of the transports: transport.c (framing), transport_tcp.c
 * and transport_seal.c all call it, and it calls none of them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "transport_i.h"

int clf_deadline_left(int64_t deadline)
{
	int64_t left = deadline - clf_now_ms();

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

int64_t clf_deadline_after(int timeout_ms)
{
	return clf_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
}

int clf_pwrite_all(int fd, const void *buf, size_t n, int64_t *off)
{
	const char *p = buf;

	while (n) {
		ssize_t w = pwrite(fd, p, n, *off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		*off += w;
	}
	return 0;
}

void clf_conn_base_init(struct clf_conn *c, const struct clf_transport_ops *ops,
			const char *peer)
{
	*c = (struct clf_conn){
		.ops = ops,
		.timeout_ms = CLF_CONN_DEFAULT_TIMEOUT_MS,
		.max_payload = CLF_PROTO_PAYLOAD_MAX,
		.minor = CLF_PROTO_VERSION_MINOR,
	};
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
}
