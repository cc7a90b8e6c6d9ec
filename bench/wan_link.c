// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * wan_link.c -- a wide-area link between two network namespaces, for
 * bench/wan.sh, where the kernel has no netem: a TUN device in each
 * namespace, and this process between them moving each packet across
 * after it was serialised at RATE and delayed by half the round trip,
 * dropping LOSS of them at random and those that find the queue full
 * (tail drop, as a router's buffer).
 *
 *   wan_link NS_A TUN_A NS_B TUN_B RTT_MS RATE_MBIT LOSS_PCT [QUEUE_KB]
 *
 * Creates TUN_A in /var/run/netns/NS_A and TUN_B in NS_B, prints "ready"
 * once both exist (the caller then gives them addresses and brings them
 * up), and runs until killed.  QUEUE_KB (default: two bandwidth-delay
 * products) bounds the bytes waiting for the wire in each direction.
 * SIGUSR1 prints, per direction, the packets delivered, lost at random
 * (LOSS), dropped (queue full) and delivered late (the far end's stack
 * had no room at their time), since the start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define PKT_MAX 2048
#define RING 65536		/* packets queued per direction, at most */

struct pkt {
	int64_t release_ns;	/* when it leaves the far end of the wire */
	uint16_t len;
	uint8_t data[PKT_MAX];
};

/* One direction: packets read from in, written to out after the link. */
struct dir {
	int in, out;
	struct pkt *ring;	/* RING slots; [head, head + n) in use */
	uint32_t head, n;
	int64_t busy_until_ns;	/* the wire is serialising until then */
	int64_t queued;		/* bytes not yet on the wire */
	uint64_t sent, lost, dropped;
	uint64_t late;		/* deliveries put off: the far stack was full */
};

static int64_t delay_ns, queue_max;
static volatile sig_atomic_t dump;	/* SIGUSR1: print the counters */

static void on_usr1(int sig)
{
	(void)sig;
	dump = 1;
}
static double ns_per_byte, loss;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A TUN device called name in namespace ns; its descriptor. */
static int tun_in(const char *ns, const char *name)
{
	char path[256];
	struct ifreq ifr = { 0 };
	int nsfd, fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET)) {
		fprintf(stderr, "wan_link: namespace %s: %s\n", ns, strerror(errno));
		exit(1);
	}
	close(nsfd);
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr)) {
		fprintf(stderr, "wan_link: tun %s in %s: %s\n", name, ns,
			strerror(errno));
		exit(1);
	}
	return fd;
}

/* Read what in has, queueing or dropping each packet. */
static void take(struct dir *d, int64_t now)
{
	for (;;) {
		struct pkt *p;
		ssize_t len;
		int64_t start;

		if (d->n == RING) {
			uint8_t junk[PKT_MAX];

			if (read(d->in, junk, sizeof(junk)) <= 0)
				return;
			d->dropped++;
			continue;
		}
		p = &d->ring[(d->head + d->n) % RING];
		len = read(d->in, p->data, sizeof(p->data));
		if (len <= 0)
			return;
		if (loss > 0 && drand48() < loss) {
			d->lost++;
			continue;
		}
		if (d->queued + len > queue_max) {
			d->dropped++;
			continue;
		}
		start = d->busy_until_ns > now ? d->busy_until_ns : now;
		d->busy_until_ns = start + (int64_t)(len * ns_per_byte);
		p->release_ns = d->busy_until_ns + delay_ns;
		p->len = (uint16_t)len;
		d->queued += len;
		d->n++;
	}
}

/* Deliver what has crossed; the time of the next release, or -1. */
static int64_t give(struct dir *d, int64_t now)
{
	while (d->n) {
		struct pkt *p = &d->ring[d->head];
		ssize_t w;

		if (p->release_ns > now)
			return p->release_ns;
		/*
		 * A burst released at once after this process waited for a
		 * CPU can fill the receiving stack's backlog: the packet
		 * stays first and goes a moment later (a late packet, as on
		 * a real link), where dropping it was a loss the link was
		 * not asked for (5-18% of a transfer's packets on a loaded
		 * machine, uncounted).
		 */
		w = write(d->out, p->data, p->len);
		if (w < 0 && (errno == EAGAIN || errno == ENOBUFS)) {
			d->late++;
			return now + 200000;
		}
		/* On the wire already: it no longer takes queue room. */
		d->queued -= p->len;
		if (w == p->len)
			d->sent++;
		else
			d->dropped++;
		d->head = (d->head + 1) % RING;
		d->n--;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct dir dirs[2];
	double rate_bps;
	int fa, fb;

	if (argc != 8 && argc != 9) {
		fprintf(stderr, "usage: wan_link NS_A TUN_A NS_B TUN_B RTT_MS RATE_MBIT LOSS_PCT [QUEUE_KB]\n");
		return 2;
	}
	delay_ns = (int64_t)(atof(argv[5]) * 1e6 / 2);
	rate_bps = atof(argv[6]) * 1e6;
	loss = atof(argv[7]) / 100;
	ns_per_byte = 8e9 / rate_bps;
	queue_max = argc == 9 ? (int64_t)atol(argv[8]) << 10
			      : (int64_t)(2 * rate_bps / 8 * 2 * delay_ns / 1e9);
	if (queue_max < 64 << 10)
		queue_max = 64 << 10;
	srand48(now_ns());
	fa = tun_in(argv[1], argv[2]);
	fb = tun_in(argv[3], argv[4]);
	dirs[0] = (struct dir){ .in = fa, .out = fb };
	dirs[1] = (struct dir){ .in = fb, .out = fa };
	for (int i = 0; i < 2; i++) {
		dirs[i].ring = malloc(sizeof(struct pkt) * RING);
		if (!dirs[i].ring) {
			fprintf(stderr, "wan_link: out of memory\n");
			return 1;
		}
	}
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd[2] = { { fa, POLLIN, 0 }, { fb, POLLIN, 0 } };
		int64_t now = now_ns(), next = -1;
		struct timespec ts, *tsp = NULL;

		for (int i = 0; i < 2; i++) {
			int64_t t = give(&dirs[i], now);

			if (t >= 0 && (next < 0 || t < next))
				next = t;
		}
		if (next >= 0) {
			int64_t wait = next - now_ns();

			if (wait < 0)
				wait = 0;
			ts.tv_sec = wait / 1000000000;
			ts.tv_nsec = wait % 1000000000;
			tsp = &ts;
		}
		if (dump) {
			dump = 0;
			printf("counters: sent %llu %llu lost %llu %llu dropped %llu %llu late %llu %llu\n",
			       (unsigned long long)dirs[0].sent,
			       (unsigned long long)dirs[1].sent,
			       (unsigned long long)dirs[0].lost,
			       (unsigned long long)dirs[1].lost,
			       (unsigned long long)dirs[0].dropped,
			       (unsigned long long)dirs[1].dropped,
			       (unsigned long long)dirs[0].late,
			       (unsigned long long)dirs[1].late);
			fflush(stdout);
		}
		if (ppoll(pfd, 2, tsp, NULL) < 0 && errno != EINTR)
			return 1;
		now = now_ns();
		if (pfd[0].revents & POLLIN)
			take(&dirs[0], now);
		if (pfd[1].revents & POLLIN)
			take(&dirs[1], now);
	}
}
