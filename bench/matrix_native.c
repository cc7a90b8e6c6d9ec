// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * matrix_native.c -- the 2-D matrix experiment through the native API.
 *
 * A side x side byte matrix is written and then read by 2 client
 * processes over 2 iods.  The matrix is cut CYCLIC(k) x CYCLIC(k) into a
 * 2 x 2 grid of cells; process 0 owns the cells (0,0) and (1,1), process
 * 1 the cells (0,1) and (1,0) -- a checkerboard, so every view is nested
 * strided.  For each k = 1, 2, 4, ... kmax, two physical layouts:
 *   (a) matching: subfile p = the view of process p (one subfile per iod),
 *   (b) round-robin: 64 KiB stripes over the 2 iods.
 * The reference, in the same run: each process streams the same number of
 * bytes over loopback TCP to a receiver process that splices them into a
 * file on the same disk (and, for reads, sends them back with sendfile):
 * the least copying this traffic can have.
 *
 *   matrix_native [side] [kmax] [csv] [layouts]
 *
 * layouts: "ab" (default), "a" or "b" to run only one of them.
 *
 * With $CLF_CONFIG set, the instance of that file, already running (2
 * iods or more), is used instead of one started on free ports, and the
 * reference's files go to a directory of $TMPDIR: so `clf up --base-port
 * P` then `CLF_CONFIG=.../clf.conf matrix_native` runs on chosen ports.
 *
 * Every figure is the median of $CLF_BENCH_REPS runs (default 5) (a 64 MiB write lasts only tens
 * of milliseconds), each timed after one untimed pass of the same access
 * (clf_child says why).  Prints MB/s per k and the ratio to the reference; with a csv path, also
 * writes the table there (bench/plot.sh draws it).  2 processes only: this
 * machine has 2 cores and more busy processes measure the scheduler.
 */
#define _GNU_SOURCE	/* splice */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "instance.h"

#define NPROC 2
#define CHUNK (1 << 20)
#define REPS_MAX 15

/* Runs per figure: $CLF_BENCH_REPS, default 5. */
static int reps(void)
{
	const char *s = getenv("CLF_BENCH_REPS");
	int n = s ? atoi(s) : 5;

	return n < 1 ? 1 : n > REPS_MAX ? REPS_MAX : n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "matrix_native: %s: %s\n", what, CLF_Last_error());
	exit(1);
}

/* Cell (ci, cj) of the 2 x 2 CYCLIC(k) grid. */
static CLF_Datatype cell(int64_t side, int64_t k, int ci, int cj)
{
	CLF_Datatype row = CLF_Type_vector(cj * k, cj * k + k - 1, 2 * k,
					   side / (2 * k), CLF_BYTE);
	CLF_Datatype t = CLF_Type_vector(ci * k * side, (ci * k + k) * side - 1,
					 2 * k * side, side / (2 * k), row);

	CLF_Type_free(&row);
	if (!t)
		die("cell type");
	return t;
}

/* The checkerboard view of process p: two diagonal cells. */
static CLF_Datatype view_of(int64_t side, int64_t k, int p)
{
	CLF_Datatype c[2] = { cell(side, k, 0, p), cell(side, k, 1, 1 - p) };
	CLF_Datatype t = CLF_Type_struct(2, c);

	CLF_Type_free(&c[0]);
	CLF_Type_free(&c[1]);
	if (!t)
		die("view type");
	return t;
}

/*
 * Children synchronise through pipes: each says "ready", waits for "go",
 * works, and reports its time.  The parent takes the slowest.
 */
struct team {
	int ready[2], go[2], done[2];
};

static void team_init(struct team *t)
{
	if (pipe(t->ready) || pipe(t->go) || pipe(t->done))
		exit(1);
}

static void team_close(struct team *t)
{
	close(t->ready[0]);
	close(t->ready[1]);
	close(t->go[0]);
	close(t->go[1]);
	close(t->done[0]);
	close(t->done[1]);
}

static void child_wait_go(struct team *t)
{
	char c = 'r';

	if (write(t->ready[1], &c, 1) != 1 || read(t->go[0], &c, 1) != 1)
		_exit(2);
}

static void child_report(struct team *t, double secs)
{
	if (write(t->done[1], &secs, sizeof(secs)) != sizeof(secs))
		_exit(3);
}

/* Release the children together; the wall time of the slowest. */
static double team_run(struct team *t)
{
	double worst = 0, secs;
	char c[NPROC] = { 0 };

	for (int p = 0; p < NPROC; p++)
		if (read(t->ready[0], &c[p], 1) != 1)
			exit(1);
	if (write(t->go[1], c, NPROC) != NPROC)
		exit(1);
	for (int p = 0; p < NPROC; p++) {
		if (read(t->done[0], &secs, sizeof(secs)) != sizeof(secs)) {
			fprintf(stderr, "matrix_native: a process failed\n");
			exit(1);
		}
		if (secs > worst)
			worst = secs;
	}
	for (int p = 0; p < NPROC; p++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			exit(1);
	}
	return worst;
}

/* One process's share through clf: write (or read) its whole view. */
static void clf_child(struct team *t, const char *path, int64_t side,
		      int64_t k, int p, int write_it)
{
	int64_t n = side * side / NPROC;
	uint8_t *buf = malloc(n);
	CLF_Datatype view = view_of(side, k, p);
	struct clf_view v = { 0, view };
	double t0;
	int fd;

	/* Connections of its own: the parent's stay the parent's. */
	CLF_finalize();
	if (!buf || CLF_init(NULL))
		_exit(4);
	for (int64_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 7 + p);
	fd = CLF_open(path, O_RDWR);
	if (fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v))
		die("open/view");
	/*
	 * One untimed pass first, as mpi_matrix and mpi_btio make: it
	 * registers the view on every iod, and the kernel reaches every
	 * page of buf once.  Under this machine's hypervisor the kernel's
	 * first reach of a freshly mapped user page costs ~10 us: cold,
	 * the 32 MiB of a process wrote at 600 MB/s in (a) where warm they
	 * write at 3500, a cost of the buffer that the reference (one
	 * small buffer, reused) never pays.  A read's buffer is cleared
	 * after it, so that the check sees only what the timed read got.
	 */
	if ((write_it ? CLF_write(fd, buf, n) : CLF_read(fd, buf, n)) != n)
		die("untimed pass");
	if (!write_it)
		memset(buf, 0, n);
	CLF_lseek(fd, 0, SEEK_SET);
	child_wait_go(t);
	t0 = now();
	if ((write_it ? CLF_write(fd, buf, n) : CLF_read(fd, buf, n)) != n)
		die(write_it ? "write" : "read");
	child_report(t, now() - t0);
	if (!write_it)
		for (int64_t i = 0; i < n; i++)
			if (buf[i] != (uint8_t)(i * 7 + p)) {
				fprintf(stderr, "matrix_native: byte %lld of process %d is wrong\n",
					(long long)i, p);
				_exit(5);
			}
	CLF_close(fd);
	CLF_Type_free(&view);
	CLF_finalize();
	free(buf);
	_exit(0);
}

/* Create the file with layout (a) or (b) for this k. */
static void make_file(const char *path, int64_t side, int64_t k, int matching)
{
	CLF_Datatype sub[NPROC];
	struct clf_subfiles sf = { 0, NPROC, sub };
	int fd;

	CLF_unlink(path);
	fd = CLF_open(path, O_CREAT | O_RDWR, 0644);
	if (fd < 0)
		die("create");
	if (matching) {
		for (int p = 0; p < NPROC; p++)
			sub[p] = view_of(side, k, p);
	} else if (CLF_Type_pitfalls(0, 65535, NPROC * 65536, 1, 65536, NPROC,
				     CLF_BYTE, sub)) {
		die("round robin");
	}
	if (CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf))
		die("layout");
	CLF_close(fd);
	for (int p = 0; p < NPROC; p++)
		CLF_Type_free(&sub[p]);
}

static double clf_phase_once(const char *path, int64_t side, int64_t k,
			     int write_it)
{
	struct team t;
	double secs;

	team_init(&t);
	for (int p = 0; p < NPROC; p++)
		if (fork() == 0)
			clf_child(&t, path, side, k, p, write_it);
	secs = team_run(&t);
	team_close(&t);
	return secs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static double clf_phase(const char *path, int64_t side, int64_t k,
			int write_it)
{
	double secs[REPS_MAX];

	for (int r = 0; r < reps(); r++)
		secs[r] = clf_phase_once(path, side, k, write_it);
	return median(secs, reps());
}

/*
 * ---- the reference: TCP streams spliced into a file, sendfile back ----
 *
 * The fewest copies the traffic allows, as the iods move it: socket ->
 * pipe -> file with splice(2) (one copy, into the page cache), and
 * sendfile(2) from the page cache for reads (one copy, at the receiver).
 */

static void receiver(int lfd, const char *file, int64_t n, int write_it)
{
	int s = accept(lfd, NULL, NULL), fd, pipefd[2];

	fd = open(file, O_RDWR | O_CREAT, 0644);
	if (s < 0 || fd < 0 || pipe(pipefd))
		_exit(6);
	(void)fcntl(pipefd[1], F_SETPIPE_SZ, CHUNK);
	for (int64_t off = 0; off < n;) {
		ssize_t got;

		if (write_it) {
			got = splice(s, NULL, pipefd[1], NULL, CHUNK,
				     SPLICE_F_MOVE);
			if (got <= 0)
				_exit(7);
			for (ssize_t left = got; left > 0;) {
				loff_t at = off + (got - left);
				ssize_t w = splice(pipefd[0], NULL, fd, &at,
						   (size_t)left, SPLICE_F_MOVE);

				if (w <= 0)
					_exit(7);
				left -= w;
			}
		} else {
			off_t at = off;

			got = sendfile(s, fd, &at, n - off < CHUNK ? n - off : CHUNK);
			if (got <= 0)
				_exit(8);
		}
		off += got;
	}
	close(s);
	close(fd);
	_exit(0);
}

static void sender(struct team *t, int port, int64_t n, int write_it)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	uint8_t *buf = malloc(CHUNK);
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	double t0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(buf, 0x5a, CHUNK);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)))
		_exit(9);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	child_wait_go(t);
	t0 = now();
	for (int64_t off = 0; off < n;) {
		ssize_t len = n - off < CHUNK ? n - off : CHUNK;

		len = write_it ? write(s, buf, len) : read(s, buf, len);
		if (len <= 0)
			_exit(10);
		off += len;
	}
	if (write_it)
		shutdown(s, SHUT_WR);
	/* Wait for the receiver to finish its pwrites. */
	while (write_it && read(s, buf, 1) > 0)
		;
	child_report(t, now() - t0);
	_exit(0);
}

static double reference_once(const char *dir, int64_t side, int write_it)
{
	int64_t n = side * side / NPROC;
	pid_t recv_pid[NPROC];
	struct team t;
	double secs;

	team_init(&t);
	for (int p = 0; p < NPROC; p++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);
		int lfd = socket(AF_INET, SOCK_STREAM, 0);
		char file[PATH_MAX + 32];

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(lfd, 1) ||
		    getsockname(lfd, (struct sockaddr *)&a, &alen))
			exit(1);
		snprintf(file, sizeof(file), "%s/reference.%d", dir, p);
		recv_pid[p] = fork();
		if (recv_pid[p] == 0)
			receiver(lfd, file, n, write_it);
		if (fork() == 0)
			sender(&t, ntohs(a.sin_port), n, write_it);
		close(lfd);
	}
	secs = team_run(&t);
	for (int p = 0; p < NPROC; p++)
		waitpid(recv_pid[p], NULL, 0);
	team_close(&t);
	return secs;
}

static double reference(const char *dir, int64_t side, int write_it)
{
	double secs[REPS_MAX];

	for (int r = 0; r < reps(); r++)
		secs[r] = reference_once(dir, side, write_it);
	return median(secs, reps());
}

int main(int argc, char **argv)
{
	int64_t side = argc > 1 ? atoll(argv[1]) : 8192;
	int64_t kmax = argc > 2 ? atoll(argv[2]) : 1024;
	FILE *csv = argc > 3 && strcmp(argv[3], "-") ? fopen(argv[3], "w") : NULL;
	const char *layouts = argc > 4 ? argv[4] : "ab";
	double mb = (double)side * side / 1e6, ref_w, ref_r;
	const char *running = getenv("CLF_CONFIG");
	char tmpl[PATH_MAX], *dir;
	struct instance in;
	int err;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: matrix_native [side] [kmax] [csv|-] [ab|a|b]\n"
		       "  side x side bytes (8192), k = 1, 2, 4 ... kmax (1024),\n"
		       "  the table also to csv, layouts (a) matching, (b) round-robin;\n"
		       "  $CLF_CONFIG: a running instance (else one of its own),\n"
		       "  $CLF_BENCH_REPS: runs per figure (5)\n");
		return 0;
	}
	if (side < 2 || kmax < 1 || side % (2 * kmax)) {
		fprintf(stderr, "matrix_native: side must be a multiple of 2 * kmax (--help)\n");
		return 2;
	}
	if (running && *running) {
		snprintf(tmpl, sizeof(tmpl), "%s/clf-matrix-native.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		dir = mkdtemp(tmpl);
		if (!dir) {
			perror("matrix_native: mkdtemp");
			return 1;
		}
	} else {
		running = NULL;
		err = instance_start(&in, NPROC, 60000, NULL);
		if (err) {
			fprintf(stderr, "matrix_native: cannot start metad and iods (build them first: make)\n");
			return 1;
		}
		dir = in.dir;
	}
	if (CLF_init(NULL))
		die("init");
	ref_w = mb / reference(dir, side, 1);
	ref_r = mb / reference(dir, side, 0);
	printf("matrix %lld x %lld bytes (%.0f MB), %d processes, %d iods on loopback\n",
	       (long long)side, (long long)side, mb, NPROC, NPROC);
	printf("reference (TCP streams spliced into files / sendfile back): write %.0f MB/s, read %.0f MB/s\n",
	       ref_w, ref_r);
	printf("%6s | %12s %12s %7s | %12s %12s %7s\n", "k", "(a) write", "(a) read",
	       "ratio", "(b) write", "(b) read", "ratio");
	if (csv)
		fprintf(csv, "k,a_write,a_read,b_write,b_read,ref_write,ref_read\n");
	for (int64_t k = 1; k <= kmax; k *= 2) {
		double r[4] = { 0, 0, 0, 0 };

		for (int layout = 0; layout < 2; layout++) {
			if (!strchr(layouts, "ab"[layout]))
				continue;
			make_file("/matrix", side, k, layout == 0);
			r[2 * layout] = mb / clf_phase("/matrix", side, k, 1);
			r[2 * layout + 1] = mb / clf_phase("/matrix", side, k, 0);
		}
		printf("%6lld | %8.0f MB/s %7.0f MB/s %6.2f | %7.0f MB/s %7.0f MB/s %6.2f\n",
		       (long long)k, r[0], r[1], r[0] / ref_w, r[2], r[3],
		       r[2] / ref_w);
		fflush(stdout);
		if (csv)
			fprintf(csv, "%lld,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n",
				(long long)k, r[0], r[1], r[2], r[3], ref_w,
				ref_r);
	}
	printf("ratio = write MB/s / reference write MB/s; medians of %d runs\n",
	       reps());
	if (csv)
		fclose(csv);
	CLF_unlink("/matrix");
	CLF_finalize();
	if (running) {
		char file[PATH_MAX + 32];

		for (int p = 0; p < NPROC; p++) {
			snprintf(file, sizeof(file), "%s/reference.%d", dir, p);
			unlink(file);
		}
		rmdir(dir);
	}
	else
		instance_stop(&in);
	return 0;
}
