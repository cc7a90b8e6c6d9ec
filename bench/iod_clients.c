// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_clients.c -- total throughput of ONE iod as its clients grow.
 *
 * For c = 1, 2, 4, ... cmax client processes: a file of c subfiles cut
 * into 1 MiB stripes round-robin, all on the one iod; client p's view is
 * subfile p (the matching view), and it writes then reads mb MiB through
 * the native API.  Prints the total MB/s of the iod (bytes of all clients
 * over the slowest client's time) per client count, median of $CLF_BENCH_REPS
 * runs (default 3).  Every byte read back is checked.
 *
 *   iod_clients [mb per client] [cmax] [subfiles] [stripe bytes]
 *
 * subfiles (default 0: one per client, the matching view) fixes the
 * subfiles of the file instead, placed round-robin over the iods; client
 * p of c then reads stripes p, p + c, ... .  With $CLF_CONFIG set, that
 * running instance is used (bench/multihost_scale.sh: iods in network
 * namespaces) instead of one started here with one iod.  Also printed:
 * the clients' CPU seconds (user + system) per GB moved.
 *
 * The daemons come from $CLF_BUILD_DIR (default build): pointing it at an
 * older build measures that build's iod with this same client.  On a
 * machine with fewer cores than clients + 1 the total should hold (the
 * iod is then CPU-bound); with more cores it should rise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "instance.h"

#include <sys/resource.h>

static int64_t STRIPE = 1 << 20;	/* argv[4] */
static int nsub_arg;			/* argv[3]; 0: one per client */
#define CMAX 64
#define REPS_MAX 15

static int reps(void)
{
	const char *s = getenv("CLF_BENCH_REPS");
	int n = s ? atoi(s) : 3;

	return n < 1 ? 1 : n > REPS_MAX ? REPS_MAX : n;
}

/* The first client count: $CLF_BENCH_CMIN, default 1. */
static int cmin(void)
{
	const char *s = getenv("CLF_BENCH_CMIN");
	int n = s ? atoi(s) : 1;

	return n < 1 ? 1 : n;
}

/* CPU seconds (user + system) of this process so far. */
static double cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* CPU seconds of process pid (the iod started here), 0 when unknown. */
static double cpu_of(pid_t pid)
{
	unsigned long long ut = 0, st = 0;
	char path[64];
	FILE *f;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* Fields 14 and 15; the name (field 2) ends with the last ')'. */
	if (fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "iod_clients: %s: %s\n", what, CLF_Last_error());
	exit(1);
}

/* Subfile p of c: 1 MiB stripes round-robin; also client p's view. */
static void stripes(int c, CLF_Datatype *sub)
{
	if (CLF_Type_pitfalls(0, STRIPE - 1, (int64_t)c * STRIPE, 1, STRIPE,
			      c, CLF_BYTE, sub))
		die("round robin");
}

/* Children: "ready" on one pipe, wait for "go", report seconds. */
struct team {
	int ready[2], go[2], done[2];
};

static void child(struct team *t, int c, int p, int64_t n, int write_it)
{
	CLF_Datatype sub[CMAX];

	uint8_t *buf = malloc(n);
	struct clf_view v;
	double t0, c0, secs[2];
	char ch = 'r';
	int fd;

	CLF_finalize();	/* connections of its own */
	if (!buf || CLF_init(NULL))
		_exit(4);
	stripes(c, sub);
	v = (struct clf_view){ 0, sub[p] };
	for (int64_t i = 0; i < n; i++)
		buf[i] = write_it ? (uint8_t)(i * 7 + p) : 0;
	fd = CLF_open("/clients", O_RDWR);
	if (fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v))
		die("open/view");
	/* Register the view on the iod before the clock starts. */
	if (write_it ? CLF_write(fd, buf, 1) != 1 : CLF_read(fd, buf, 1) != 1)
		die("first byte");
	CLF_lseek(fd, 0, SEEK_SET);
	if (write(t->ready[1], &ch, 1) != 1 || read(t->go[0], &ch, 1) != 1)
		_exit(2);
	t0 = now();
	c0 = cpu_self();
	if ((write_it ? CLF_write(fd, buf, n) : CLF_read(fd, buf, n)) != n)
		die(write_it ? "write" : "read");
	secs[0] = now() - t0;
	secs[1] = cpu_self() - c0;
	if (!write_it)
		for (int64_t i = 0; i < n; i++)
			if (buf[i] != (uint8_t)(i * 7 + p)) {
				fprintf(stderr, "iod_clients: byte %lld of client %d is wrong\n",
					(long long)i, p);
				_exit(5);
			}
	if (write(t->done[1], secs, sizeof(secs)) != sizeof(secs))
		_exit(3);
	CLF_close(fd);
	CLF_finalize();
	_exit(0);
}

/* One phase with c clients: the slowest client's seconds. */
static double phase(int c, int64_t n, int write_it, double *cpu)
{
	struct team t;
	double worst = 0, secs[2];
	char go[CMAX];

	if (pipe(t.ready) || pipe(t.go) || pipe(t.done))
		exit(1);
	for (int p = 0; p < c; p++)
		if (fork() == 0)
			child(&t, c, p, n, write_it);
	for (int p = 0; p < c; p++)
		if (read(t.ready[0], &go[p], 1) != 1)
			exit(1);
	if (c < 1 || c > CMAX || write(t.go[1], go, (size_t)c) != c)
		exit(1);
	for (int p = 0; p < c; p++) {
		if (read(t.done[0], secs, sizeof(secs)) != sizeof(secs)) {
			fprintf(stderr, "iod_clients: a client failed\n");
			exit(1);
		}
		if (secs[0] > worst)
			worst = secs[0];
		*cpu += secs[1];
	}
	for (int p = 0; p < c; p++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			exit(1);
	}
	for (int i = 0; i < 2; i++) {
		close(t.ready[i]);
		close(t.go[i]);
		close(t.done[i]);
	}
	return worst;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void make_file(int c)
{
	CLF_Datatype sub[CMAX];
	struct clf_subfiles sf = { 0, c, sub };
	int fd;

	if (nsub_arg)
		c = sf.count = nsub_arg;

	CLF_unlink("/clients");
	fd = CLF_open("/clients", O_CREAT | O_RDWR, 0644);
	if (fd < 0)
		die("create");
	stripes(c, sub);
	if (CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf))
		die("layout");
	CLF_close(fd);
	for (int p = 0; p < c; p++)
		CLF_Type_free(&sub[p]);
}

int main(int argc, char **argv)
{
	int64_t mb = argc > 1 ? atoll(argv[1]) : 64;
	int cmax = argc > 2 ? atoi(argv[2]) : 8;
	int64_t n = mb << 20;
	const char *running = getenv("CLF_CONFIG");
	struct instance in = { .bindir = "" };

	nsub_arg = argc > 3 ? atoi(argv[3]) : 0;
	if (argc > 4)
		STRIPE = atoll(argv[4]);

	if (mb < 1 || cmax < 1 || cmax > CMAX || nsub_arg < 0 ||
	    nsub_arg > CMAX || STRIPE < 1 || n % STRIPE) {
		fprintf(stderr, "usage: iod_clients [MiB per client] [max clients <= %d] [subfiles] [stripe]\n",
			CMAX);
		return 2;
	}
	if (running && *running)
		snprintf(in.bindir, sizeof(in.bindir), "%s", running);
	else if (instance_start(&in, 1, 60000, NULL)) {
		fprintf(stderr, "iod_clients: cannot start metad and an iod (build them first: make)\n");
		return 1;
	}
	if (CLF_init(NULL))
		die("init");
	printf("%s, %lld MiB per client, %lld-byte stripes, %s; total MB/s, median of %d;\nCPU s/GB (user + system) of all clients / of the iod (when started here), write and read\n",
	       in.bindir, (long long)mb, (long long)STRIPE,
	       nsub_arg ? "fixed subfiles" : "matching views", reps());
	printf("%8s %8s %8s %8s %8s %8s %8s\n", "clients", "write", "read",
	       "cli-w", "cli-r", "iod-w", "iod-r");
	for (int c = cmin(); c <= cmax; c *= 2) {
		double w[REPS_MAX], r[REPS_MAX], total = (double)c * n / 1e6;

		double cw = 0, cr = 0, iw = 0, ir = 0, i0, gb;

		make_file(c);
		for (int i = 0; i < reps(); i++) {
			i0 = cpu_of(in.iods[0]);
			w[i] = total / phase(c, n, 1, &cw);
			iw += cpu_of(in.iods[0]) - i0;
			i0 = cpu_of(in.iods[0]);
			r[i] = total / phase(c, n, 0, &cr);
			ir += cpu_of(in.iods[0]) - i0;
		}
		qsort(w, reps(), sizeof(double), cmp_double);
		qsort(r, reps(), sizeof(double), cmp_double);
		gb = reps() * total / 1e3;
		printf("%8d %8.0f %8.0f %8.3f %8.3f", c, w[reps() / 2],
		       r[reps() / 2], cw / gb, cr / gb);
		if (in.iods[0] > 0)
			printf(" %8.3f %8.3f", iw / gb, ir / gb);
		printf("\n");
		fflush(stdout);
	}
	CLF_unlink("/clients");
	CLF_finalize();
	if (!running || !*running)
		instance_stop(&in);
	return 0;
}
