// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_base.c -- what every transport and the framing above them
 * share: deadlines, a write that finishes, a connection's defaults, an
 * address taken apart.
 * The bottom of the transports: transport.c (framing), transport_tcp.c
 * and transport_seal.c all call it, and it calls none of them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
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

/* The length of addr's "name://" prefix, 0 without one. */
size_t clf_addr_scheme_len(const char *addr)
{
	const char *s = addr ? strstr(addr, "://") : NULL;

	return s && !memchr(addr, ':', (size_t)(s - addr)) &&
	       !memchr(addr, '[', (size_t)(s - addr)) ? (size_t)(s - addr) + 3
						      : 0;
}

static int copy_part(char *dst, size_t dstlen, const char *src, size_t n,
		     const char *addr, const char *what)
{
	if (n >= dstlen)
		return clf_fail(ENAMETOOLONG, "clf: address '%s': %s too long",
				addr, what);
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

int clf_addr_split(const char *addr, char *host, size_t hostlen, char *port,
		   size_t portlen)
{
	const char *colon, *h;
	size_t hlen;
	char *end;
	long pnum;
	int err;

	if (!addr)
		return clf_fail(EINVAL, "clf: no address");
	addr += clf_addr_scheme_len(addr);	/* "rdma://": clf_addr_transport's */
	h = addr;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			return clf_fail(EINVAL,
					"clf: address '%s': expected [ipv6]:port",
					addr);
		h = addr + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return clf_fail(EINVAL,
					"clf: address '%s': expected host:port",
					addr);
		hlen = (size_t)(colon - addr);
		if (memchr(addr, ':', hlen))
			return clf_fail(EINVAL,
					"clf: address '%s': write IPv6 addresses as [addr]:port",
					addr);
	}
	errno = 0;
	pnum = strtol(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || pnum > 65535)
		return clf_fail(EINVAL,
				"clf: address '%s': port '%s' is not a number from 0 to 65535",
				addr, colon + 1);
	err = copy_part(host, hostlen, h, hlen, addr, "host");
	if (!err)
		err = copy_part(port, portlen, colon + 1, strlen(colon + 1),
				addr, "port");
	return err;
}
