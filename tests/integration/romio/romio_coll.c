// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_coll.c -- MPI-IO collective accesses on "clf:" files go through
 * clf's collective I/O (use_romio_optimizations=false), against a real
 * instance ($CLF_CONFIG).  Run by test_romio.sh under mpiexec, with
 * CLF_TEST_ROMIO_COLL_ROUND set (bytes per process and clf call) so that
 * shares of a few KiB need several rounds.
 *
 * The file has one subfile per process, each process's view being its
 * subfile (1-D CYCLIC(BLK)), and the processes write uneven shares
 * (rank 2 of 4 none at all).  Rank 0 asks every iod for its request
 * counter (STATUS) around each access:
 *   - a collective access costs exactly one request per subfile, round
 *     and participant: the participants of a round are the processes
 *     with bytes left in it, and each sends its piece, tagged, to every
 *     subfile, as clf's collective I/O requires -- so the count proves
 *     the tagged path;
 *   - an independent access of the same bytes costs one request per
 *     process with bytes, to its own subfile only;
 *   - a planned collective access (at most a round per process) costs
 *     one request per process and subfile it has bytes on: one where its
 *     share is one run, merged or not, and none where it has no bytes.
 * Every access is checked byte for byte: write_all, read_all,
 * write_at_all / read_at_all with a strided memory type cut in rounds,
 * the split (write_all_begin/end) and nonblocking (iwrite_all,
 * iread_all) variants, and one operation in which some processes access
 * through a contiguous filetype and the others through a strided one.
 * A process waiting in a collective access for a late one sleeps rather
 * than spins (test_waiting_yields).
 *
 *   romio_coll [PREFIX]
 *
 * Exits 0 when every check passed on every rank.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "config.h"
#include "probe.h"
#include "transport.h"

static int rank, nprocs, checks, failures;
static const char *prefix = "romio";

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (!(cond)) {                                             \
			failures++;                                        \
			fprintf(stderr, "FAIL rank %d %s:%d: ", rank,      \
				__FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
		}                                                          \
	} while (0)

#define CHECK_MPI(call, what)                                              \
	do {                                                               \
		int rc_ = (call);                                          \
		char s_[MPI_MAX_ERROR_STRING];                             \
		int l_ = 0;                                                \
		if (rc_ != MPI_SUCCESS)                                    \
			MPI_Error_string(rc_, s_, &l_);                    \
		s_[l_] = '\0';                                             \
		CHECK(rc_ == MPI_SUCCESS, "%s: %s", what, s_);             \
	} while (0)

#define BLK 512		/* CYCLIC(BLK) over the processes */

static long round_bytes;	/* $CLF_TEST_ROMIO_COLL_ROUND */

/* This rank's share of view bytes: uneven, rank 2 of 4 none. */
static long share(int r)
{
	static const long mult[4] = { 3, 1, 0, 2 };

	return mult[r % 4] * round_bytes + (r % 4 == 0 ? 100 : 0) +
	       (r % 4 == 3 ? 7 : 0);
}

static long rounds_of(int r)
{
	return (share(r) + round_bytes - 1) / round_bytes;
}

static unsigned char pattern(int r, long v, int salt)
{
	return (unsigned char)(v * 131 + r * 17 + salt * 29 + 1);
}

/* ---- iod request counters (rank 0) ---- */

static struct clf_config *cfg;
static struct clf_conn *iod_conn[CLF_CONFIG_MAX_IODS];

static void iods_open(void)
{
	if (clf_config_load(NULL, &cfg)) {
		fprintf(stderr, "romio_coll: %s\n", CLF_Last_error());
		exit(1);
	}
	for (uint32_t i = 0; i < cfg->niods; i++)
		if (probe_open(cfg, cfg->iods[i].addr, cfg->timeout_ms,
			       &iod_conn[i])) {
			fprintf(stderr, "romio_coll: iod %u: %s\n", i,
				CLF_Last_error());
			exit(1);
		}
}

static void iods_close(void)
{
	for (uint32_t i = 0; i < cfg->niods; i++)
		clf_conn_close(iod_conn[i]);
	clf_config_free(cfg);
}

/* Requests the iods served since they started, on rank 0. */
static long long iod_requests(void)
{
	long long sum = 0;

	for (uint32_t i = 0; i < cfg->niods; i++) {
		struct clf_proto_status st;

		if (probe_status(iod_conn[i], &st)) {
			fprintf(stderr, "romio_coll: STATUS: %s\n",
				CLF_Last_error());
			exit(1);
		}
		sum += (long long)st.requests;
	}
	return sum;
}

static long long probe_cost;	/* requests counted by one iod_requests() */

static long long mark(void)
{
	long long n = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		n = iod_requests();
	MPI_Barrier(MPI_COMM_WORLD);
	return n;
}

/* Requests since `since` (a mark()), without the probes' own. */
static long long requests_since(long long since)
{
	return mark() - since - probe_cost;
}

/* ---- files ---- */

static void name(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "clf:/%s-coll-%s", prefix, what);
}

/* Subfile (and view) j: the j-th BLK bytes of every nprocs * BLK. */
static MPI_Datatype cyclic(int j)
{
	int size = nprocs * BLK, sub = BLK, start = j * BLK;
	MPI_Datatype t;

	MPI_Type_create_subarray(1, &size, &sub, &start, MPI_ORDER_C,
				 MPI_BYTE, &t);
	MPI_Type_commit(&t);
	return t;
}

/* The file byte of view byte v of rank r. */
static long file_byte(int r, long v)
{
	return (v / BLK) * nprocs * BLK + r * BLK + v % BLK;
}

/* Rank 0 reads every byte and checks it against pattern(salt); the
 * others wait. */
static void check_file(const char *path, int salt, const char *what)
{
	long size = 0;
	unsigned char *all;
	MPI_File fh;
	MPI_Status st;
	int got = -1, bad = 0;

	for (int r = 0; r < nprocs; r++)
		if (share(r) > 0 && file_byte(r, share(r) - 1) + 1 > size)
			size = file_byte(r, share(r) - 1) + 1;
	if (rank != 0) {
		MPI_Barrier(MPI_COMM_WORLD);
		return;
	}
	all = calloc(size + 1, 1);
	CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
				MPI_INFO_NULL, &fh), "reopen");
	CHECK_MPI(MPI_File_read_at(fh, 0, all, (int)size + 1, MPI_BYTE, &st),
		  "read whole");
	MPI_Get_count(&st, MPI_BYTE, &got);
	CHECK(got == size, "%s: file of %d bytes, want %ld", what, got, size);
	for (long f = 0; f < size && bad < 5; f++) {
		int r = (int)(f / BLK % nprocs);
		long v = f / (nprocs * BLK) * BLK + f % BLK;
		unsigned char want = v < share(r) ? pattern(r, v, salt) : 0;

		if (all[f] != want) {
			CHECK(false, "%s: byte %ld is %d, want %d", what, f,
			      all[f], want);
			bad++;
		}
	}
	MPI_File_close(&fh);
	free(all);
	MPI_Barrier(MPI_COMM_WORLD);
}

static void fill(unsigned char *buf, int salt)
{
	for (long v = 0; v < share(rank); v++)
		buf[v] = pattern(rank, v, salt);
}

static int verify(const unsigned char *buf, long stride, int salt)
{
	for (long v = 0; v < share(rank); v++)
		if (buf[v * stride] != pattern(rank, v, salt))
			return (int)v;
	return -1;
}

/* ---- the tests ---- */

static void test_tagged(MPI_File fh, const char *path)
{
	long n = share(rank), total_rounds = 0, writers = 0;
	unsigned char *buf = calloc(2 * n + 1, 1);
	long long since, got;
	MPI_Status st;
	int count = -1;

	for (int r = 0; r < nprocs; r++) {
		total_rounds += rounds_of(r);
		writers += share(r) > 0;
	}
	/* Views registered, connections open: later counts are exact. */
	fill(buf, 1);
	CHECK_MPI(MPI_File_write_all(fh, buf, (int)n, MPI_BYTE, &st),
		  "first write_all");
	since = mark();
	probe_cost = mark() - since;

	fill(buf, 2);
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
	since = mark();
	CHECK_MPI(MPI_File_write_all(fh, buf, (int)n, MPI_BYTE, &st),
		  "write_all");
	got = requests_since(since);
	MPI_Get_count(&st, MPI_BYTE, &count);
	CHECK(count == n, "write_all wrote %d of %ld", count, n);
	if (rank == 0)
		CHECK(got == total_rounds * nprocs,
		      "write_all: %lld requests at the iods, want %ld (%ld rounds of all processes x %d subfiles)",
		      got, total_rounds * nprocs, total_rounds, nprocs);
	check_file(path, 2, "write_all");

	fill(buf, 3);
	since = mark();
	CHECK_MPI(MPI_File_write_at(fh, 0, buf, (int)n, MPI_BYTE, &st),
		  "write_at");
	got = requests_since(since);
	if (rank == 0)
		CHECK(got == writers,
		      "independent write_at: %lld requests at the iods, want %ld",
		      got, writers);
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	check_file(path, 3, "write_at");

	memset(buf, 0, n);
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
	since = mark();
	CHECK_MPI(MPI_File_read_all(fh, buf, (int)n, MPI_BYTE, &st),
		  "read_all");
	got = requests_since(since);
	MPI_Get_count(&st, MPI_BYTE, &count);
	CHECK(count == n, "read_all read %d of %ld", count, n);
	CHECK(verify(buf, 1, 3) < 0, "read_all: view byte %d wrong",
	      verify(buf, 1, 3));
	if (rank == 0)
		CHECK(got == total_rounds * nprocs,
		      "read_all: %lld requests at the iods, want %ld", got,
		      total_rounds * nprocs);
	free(buf);
}

/* clf_profile: the data calls of this process are counted. */
static void test_profile(MPI_File fh)
{
	char v[MPI_MAX_INFO_VAL + 1];
	long long calls = -1;
	double secs = -1;
	MPI_Info info;
	int flag = 0;

	MPI_File_get_info(fh, &info);
	MPI_Info_get(info, "clf_io_calls", MPI_MAX_INFO_VAL, v, &flag);
	if (flag)
		calls = atoll(v);
	MPI_Info_get(info, "clf_io_time", MPI_MAX_INFO_VAL, v, &flag);
	if (flag)
		secs = atof(v);
	MPI_Info_free(&info);
	/* 3 collective accesses and one independent one so far. */
	if (share(rank) > 0)
		CHECK(calls == 3 * rounds_of(rank) + 1 && secs > 0,
		      "clf_profile: clf_io_calls %lld, clf_io_time %g", calls,
		      secs);
	else
		CHECK(calls == 0 && secs == 0,
		      "clf_profile: clf_io_calls %lld, clf_io_time %g with no bytes",
		      calls, secs);
}

/* A strided memory type cut in rounds (packed), at an explicit offset. */
static void test_strided_memory(MPI_File fh, const char *path)
{
	long n = share(rank);
	unsigned char *buf = calloc(2 * n + 2, 1);
	MPI_Datatype mem;
	MPI_Status st;
	int count = -1, holes = 0;

	MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &mem);
	MPI_Type_commit(&mem);
	for (long v = 0; v < n; v++) {
		buf[2 * v] = pattern(rank, v, 4);
		buf[2 * v + 1] = 0xee;
	}
	CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, n ? 1 : 0, mem, &st),
		  "write_at_all, strided memory");
	check_file(path, 4, "write_at_all, strided memory");

	memset(buf, 0xee, 2 * n + 2);
	CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, n ? 1 : 0, mem, &st),
		  "read_at_all, strided memory");
	MPI_Get_count(&st, mem, &count);
	CHECK(count == (n ? 1 : 0), "read_at_all: %d elements", count);
	CHECK(verify(buf, 2, 4) < 0, "read_at_all: view byte %d wrong",
	      verify(buf, 2, 4));
	for (long v = 0; v < n; v++)
		holes += buf[2 * v + 1] != 0xee;
	CHECK(holes == 0, "read_at_all wrote %d holes of the memory type",
	      holes);
	MPI_Type_free(&mem);
	free(buf);
}

static void test_split_and_nonblocking(MPI_File fh, const char *path)
{
	long n = share(rank);
	unsigned char *buf = calloc(n + 1, 1);
	MPI_Request req;
	MPI_Status st;
	int count = -1;

	fill(buf, 5);
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
	CHECK_MPI(MPI_File_write_all_begin(fh, buf, (int)n, MPI_BYTE),
		  "write_all_begin");
	CHECK_MPI(MPI_File_write_all_end(fh, buf, &st), "write_all_end");
	check_file(path, 5, "write_all_begin/end");

	fill(buf, 6);
	CHECK_MPI(MPI_File_iwrite_at_all(fh, 0, buf, (int)n, MPI_BYTE, &req),
		  "iwrite_at_all");
	CHECK_MPI(MPI_Wait(&req, &st), "wait iwrite_at_all");
	MPI_Get_count(&st, MPI_BYTE, &count);
	CHECK(count == n, "iwrite_at_all wrote %d of %ld", count, n);
	check_file(path, 6, "iwrite_at_all");

	memset(buf, 0, n);
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
	CHECK_MPI(MPI_File_iread_all(fh, buf, (int)n, MPI_BYTE, &req),
		  "iread_all");
	CHECK_MPI(MPI_Wait(&req, &st), "wait iread_all");
	CHECK(verify(buf, 1, 6) < 0, "iread_all: view byte %d wrong",
	      verify(buf, 1, 6));
	memset(buf, 0, n);
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
	CHECK_MPI(MPI_File_read_all_begin(fh, buf, (int)n, MPI_BYTE),
		  "read_all_begin");
	CHECK_MPI(MPI_File_read_all_end(fh, buf, &st), "read_all_end");
	CHECK(verify(buf, 1, 6) < 0, "read_all_begin/end: view byte %d wrong",
	      verify(buf, 1, 6));
	free(buf);
}

/*
 * Odd ranks see the file through a contiguous filetype (their byte
 * view), even ranks through the strided one: one operation, two kinds
 * of clf descriptors.  Each rank owns the region [r * REG, (r+1) * REG).
 */
#define REG (4 * BLK)
static void test_mixed_views(MPI_Info hints)
{
	char path[256];
	unsigned char *buf = malloc(REG), *all = NULL;
	MPI_Datatype ft = MPI_BYTE;
	MPI_File fh;
	MPI_Status st;
	long n = REG;

	name(path, sizeof(path), "mixed");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  "open mixed");
	if (rank % 2 == 0) {
		/* Half of the region, every other BLK bytes. */
		MPI_Type_vector(2, BLK, 2 * BLK, MPI_BYTE, &ft);
		MPI_Type_commit(&ft);
		n = REG / 2;
	}
	CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * REG, MPI_BYTE, ft,
				    "native", MPI_INFO_NULL), "set_view");
	for (long v = 0; v < n; v++)
		buf[v] = pattern(rank, v, 7);
	CHECK_MPI(MPI_File_write_all(fh, buf, (int)n, MPI_BYTE, &st),
		  "write_all, mixed views");
	CHECK_MPI(MPI_File_close(&fh), "close");
	if (rank == 0) {
		all = calloc(nprocs, REG);
		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
					MPI_INFO_NULL, &fh), "reopen");
		CHECK_MPI(MPI_File_read_at(fh, 0, all, nprocs * REG, MPI_BYTE,
					   &st), "read");
		MPI_File_close(&fh);
		for (int r = 0; r < nprocs; r++) {
			for (long x = 0, v = 0; x < REG; x++) {
				bool in = r % 2 || (x / BLK) % 2 == 0;
				unsigned char want =
					in ? pattern(r, v++, 7) : 0;

				if (all[r * REG + x] != want) {
					CHECK(false, "mixed views: byte %ld of rank %d's region is %d, want %d",
					      x, r, all[r * REG + x], want);
					break;
				}
			}
		}
		free(all);
	}
	if (ft != MPI_BYTE)
		MPI_Type_free(&ft);
	free(buf);
}

/*
 * Planned accesses (of at most a round per process): a process sends one
 * request per subfile it has bytes on and nothing elsewhere.  On the
 * layout above through the byte view, writers (processes with a share)
 * first access BLK bytes each in their own subfile (one run each: one
 * independent request per writer), then 2 * nprocs * BLK bytes each (two
 * runs in every subfile: one request per writer and subfile, merged at
 * the iods; want < 0: not counted).  Each rank then reads, collectively, what the next writer
 * wrote in the access before, with no sync: the collective read is
 * ordered after the collective write on every process.
 */
static void planned_step(MPI_File fh, long at, long n, int salt, long want,
			 long want_read, const char *what)
{
	unsigned char *buf = malloc(n + 1);
	long long since, got;
	MPI_Status st;
	int next = rank, count = -1, bad = -1;
	char s[128];

	do
		next = (next + 1) % nprocs;
	while (share(next) == 0 && next != rank);
	for (long v = 0; v < n; v++)
		buf[v] = pattern(rank, v, salt);
	since = mark();
	snprintf(s, sizeof(s), "%s: write_at_all", what);
	CHECK_MPI(MPI_File_write_at_all(fh, share(rank) ? rank * at : 0, buf,
					share(rank) ? (int)n : 0, MPI_BYTE,
					&st), s);
	got = requests_since(since);
	if (rank == 0 && want >= 0)
		CHECK(got == want, "%s: write_at_all: %lld requests at the iods, want %ld",
		      what, got, want);
	memset(buf, 0, n);
	since = mark();
	snprintf(s, sizeof(s), "%s: read_at_all", what);
	CHECK_MPI(MPI_File_read_at_all(fh, share(next) ? next * at : 0, buf,
				       share(next) ? (int)n : 0, MPI_BYTE,
				       &st), s);
	got = requests_since(since);
	MPI_Get_count(&st, MPI_BYTE, &count);
	for (long v = 0; share(next) && v < n && bad < 0; v++)
		if (buf[v] != pattern(next, v, salt))
			bad = (int)v;
	CHECK(bad < 0 && count == (share(next) ? n : 0),
	      "%s: read_at_all of rank %d's bytes: %d read, byte %d wrong",
	      what, next, count, bad);
	if (rank == 0 && want_read >= 0)
		CHECK(got == want_read, "%s: read_at_all: %lld requests at the iods, want %ld",
		      what, got, want_read);
	free(buf);
}

static void test_planned(MPI_Info hints)
{
	long writers = 0, period = (long)nprocs * BLK;
	char path[256];
	MPI_File fh;

	for (int r = 0; r < nprocs; r++)
		writers += share(r) > 0;
	name(path, sizeof(path), "planned");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  "open planned");
	/* Connections and capabilities in place: later counts are exact. */
	planned_step(fh, BLK, BLK, 8, -1, -1, "warm-up");
	planned_step(fh, 2 * period, 2 * period, 8, -1, -1, "warm-up");
	/* Every rank reads the next writer's bytes: nprocs readers. */
	planned_step(fh, BLK, BLK, 9, writers, nprocs, "one run each");
	planned_step(fh, 2 * period, 2 * period, 10, writers * nprocs,
		     (long)nprocs * nprocs, "two runs in every subfile");
	CHECK_MPI(MPI_File_close(&fh), "close planned");
}

/*
 * A process that waits in a collective access for a late one gives its
 * core away: MPICH busy-polls in every blocking call, and with as many
 * processes as cores a spinning process holds the core that the iod
 * serving the others' requests needs (ad_clf_wait.c).  The last rank
 * comes LATE_MS late to a small write_all and read_all (the planned
 * path); every other rank's thread must spend under a tenth of that
 * waiting time on a CPU (with MPI_Allreduce it spent all of it, or the
 * share of a core this machine's load left it).
 */
#define LATE_MS 300

static void test_waiting_yields(MPI_Info hints)
{
	char path[256], buf[BLK];
	MPI_File fh;
	MPI_Status st;

	name(path, sizeof(path), "waiting");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  "open waiting");
	memset(buf, rank + 1, sizeof(buf));
	/* Connections in place first. */
	CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)rank * BLK, buf, BLK,
					MPI_BYTE, &st), "warm-up write_at_all");
	for (int write = 1; write >= 0; write--) {
		struct timespec c0, c1, w0, w1;
		double cpu, wall;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == nprocs - 1)
			usleep(LATE_MS * 1000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		clock_gettime(CLOCK_MONOTONIC, &w0);
		if (write)
			CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)rank * BLK,
							buf, BLK, MPI_BYTE, &st),
				  "late write_at_all");
		else
			CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)rank * BLK,
						       buf, BLK, MPI_BYTE, &st),
				  "late read_at_all");
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		clock_gettime(CLOCK_MONOTONIC, &w1);
		cpu = (c1.tv_sec - c0.tv_sec) * 1e3 +
		      (c1.tv_nsec - c0.tv_nsec) / 1e6;
		wall = (w1.tv_sec - w0.tv_sec) * 1e3 +
		       (w1.tv_nsec - w0.tv_nsec) / 1e6;
		if (rank != nprocs - 1)
			CHECK(wall >= LATE_MS / 2 && cpu < wall / 10,
			      "%s_at_all waiting %.0f ms for a late process took %.1f ms of CPU (want under a tenth)",
			      write ? "write" : "read", wall, cpu);
	}
	CHECK(buf[0] == rank + 1 && buf[BLK - 1] == rank + 1,
	      "late read_at_all: read %d, want %d", buf[0], rank + 1);
	CHECK_MPI(MPI_File_close(&fh), "close waiting");
}

int main(int argc, char **argv)
{
	MPI_Datatype types[64], view;
	char path[256], *hint, *s = getenv("CLF_TEST_ROMIO_COLL_ROUND");
	MPI_Info hints;
	MPI_File fh;
	int all_failures = 0, all_checks = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (argc > 1)
		prefix = argv[1];
	round_bytes = s ? atol(s) : 0;
	if (round_bytes <= 0 || round_bytes % BLK || nprocs > 64) {
		if (rank == 0)
			fprintf(stderr, "romio_coll: set CLF_TEST_ROMIO_COLL_ROUND to a multiple of %d; at most 64 processes\n",
				BLK);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0)
		iods_open();

	hint = calloc(nprocs, 16);
	for (int r = 0; r < nprocs; r++) {
		types[r] = cyclic(r);
		sprintf(hint + strlen(hint), "%s%d", r ? " " : "",
			(int)MPI_Type_c2f(types[r]));
	}
	MPI_Info_create(&hints);
	MPI_Info_set(hints, "subfile_datatypes", hint);
	MPI_Info_set(hints, "use_romio_optimizations", "false");
	MPI_Info_set(hints, "clf_profile", "true");

	name(path, sizeof(path), "tagged");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  "open");
	view = cyclic(rank);
	CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, view, "native",
				    MPI_INFO_NULL), "set_view");
	test_tagged(fh, path);
	test_profile(fh);
	test_strided_memory(fh, path);
	test_split_and_nonblocking(fh, path);
	CHECK_MPI(MPI_File_close(&fh), "close");
	MPI_Info_delete(hints, "subfile_datatypes");
	test_mixed_views(hints);
	MPI_Info_set(hints, "subfile_datatypes", hint);
	test_planned(hints);
	test_waiting_yields(hints);

	MPI_Type_free(&view);
	for (int r = 0; r < nprocs; r++)
		MPI_Type_free(&types[r]);
	MPI_Info_free(&hints);
	free(hint);
	if (rank == 0)
		iods_close();

	MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM,
		      MPI_COMM_WORLD);
	MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_coll on %d ranks, %ld bytes per round: %d checks, %d failed\n",
		       nprocs, round_bytes, all_checks, all_failures);
	MPI_Finalize();
	return all_failures ? 1 : 0;
}
