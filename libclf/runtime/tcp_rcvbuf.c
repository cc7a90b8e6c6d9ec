// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tcp_rcvbuf.c -- the receive buffer of a connection we open.
 *
 * A client reads the replies of one access connection by connection: all
 * of one iod's share, then the next iod's (libclf/client/io.c), while the
 * other iods' bytes wait in their sockets.  Linux grows a socket's
 * receive buffer (and so the window it offers) only as the application
 * reads from it, from tcp_rmem's default of 128 KiB: a connection not
 * being read keeps a window of about 64 KiB, which over a 50 ms round
 * trip lets its iod send 1.3 MB/s.  Measured over bench/wan.sh's 100
 * Mbit/s link, each new connection's first shares came at that rate for
 * about a second and reads reached 54-69% of the link.  So each socket
 * we connect asks at once for the most the system allows
 * (net.core.rmem_max, at most tcp_rmem's own maximum), before connect,
 * so that the window scale covers it: a buffer is a limit, not memory
 * taken, and an iod sends only what was asked for.  Where rmem_max is
 * small (212992 on many systems) a fixed buffer would cap the window
 * below what autotuning reaches, so below 4 times tcp_rmem's default the
 * socket is left to autotuning.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>

#include "transport_i.h"

/* Below this many times tcp_rmem's default, autotuning is left alone. */
#define RCVBUF_MIN_GAIN 4

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int rcvbuf;		/* bytes to ask for; 0: leave the default */

static long read_long(const char *path, int field)
{
	long v[3] = { 0, 0, 0 };
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%ld %ld %ld", &v[0], &v[1], &v[2]);
	fclose(f);
	return n > field ? v[field] : 0;
}

static void rcvbuf_choose(void)
{
	long max = read_long("/proc/sys/net/core/rmem_max", 0);
	long tcp_def = read_long("/proc/sys/net/ipv4/tcp_rmem", 1);
	long tcp_max = read_long("/proc/sys/net/ipv4/tcp_rmem", 2);

	if (tcp_max > 0 && max > tcp_max)
		max = tcp_max;
	if (max > (1L << 30))
		max = 1L << 30;
	if (tcp_def > 0 && max >= RCVBUF_MIN_GAIN * tcp_def)
		rcvbuf = (int)max;
}

void clf_tcp_widen_rcvbuf(int fd)
{
	pthread_once(&once, rcvbuf_choose);
	if (rcvbuf)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				 sizeof(rcvbuf));
}
