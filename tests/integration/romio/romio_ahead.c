// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_ahead.c -- sequential reads of a file far away are read ahead
 * (hint clf_read_ahead, romio-clf/ad_clf/ad_clf_ahead.c), within MPI-IO's
 * consistency rules, for test_remote_names.sh, against iods that delay
 * every reply by DELAY_MS (CLF_TEST_IOD_DELAY_MS).
 *
 *   romio_ahead FILE DELAY_MS      (2 or more processes)
 *
 *  1. Rank 0 writes SIZE bytes (pattern A).  Every process opens the file
 *     read-only with clf_read_ahead=1m and reads it from the start in
 *     PIECE pieces: NPIECES reads that would each wait for a delayed
 *     reply take less than 3/4 of NPIECES x DELAY_MS (about 0.4 of it
 *     here: the open's and the first reads' round trips stay), and
 *     return the bytes of pattern A, and nothing past the end.
 *  2. What is kept: every process reads the first half again and waits
 *     until the windows ahead are read; rank 1 writes pattern B over the
 *     whole file through an open of its own, syncs and closes; barrier.
 *     A read-only handle cannot be synced (MPICH refuses), so under MPI's
 *     rules the others may see B only after a reopen -- or, here, in
 *     atomic mode: after MPI_File_set_atomicity(1) the second half reads
 *     as B, not the A the windows held; back in non-atomic mode it reads
 *     as B again (the windows were dropped); a reopen reads B too.
 * Exits 0 when every check passed.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SIZE (3 << 20)
#define PIECE (128 << 10)
#define NPIECES (SIZE / PIECE)

static int rank, failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "romio_ahead rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	failures++;
}

static void ok(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;

	if (err == MPI_SUCCESS)
		return;
	MPI_Error_string(err, msg, &len);
	fail("%s: %s", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static char byte_of(MPI_Offset at, int pattern)
{
	return (char)(at * 7 + (at >> 13) + pattern * 101);
}

static void fill(char *b, MPI_Offset at, int n, int pattern)
{
	for (int i = 0; i < n; i++)
		b[i] = byte_of(at + i, pattern);
}

static void expect(const char *b, MPI_Offset at, int n, int pattern, const char *what)
{
	for (int i = 0; i < n; i++)
		if (b[i] != byte_of(at + i, pattern)) {
			fail("%s: byte %lld is not pattern %c's", what, (long long)(at + i),
			     'A' + pattern);
			return;
		}
}

/* Read [from, to) in PIECE pieces, each checked against pattern. */
static void read_seq(MPI_File fh, MPI_Offset from, MPI_Offset to, int pattern,
		     const char *what)
{
	char *b = malloc(PIECE);
	MPI_Status st;
	int n;

	for (MPI_Offset at = from; at < to; at += PIECE) {
		ok(MPI_File_read_at(fh, at, b, PIECE, MPI_BYTE, &st), what);
		MPI_Get_count(&st, MPI_BYTE, &n);
		if (n != PIECE)
			fail("%s: %d bytes at %lld, not %d", what, n, (long long)at, PIECE);
		expect(b, at, n, pattern, what);
	}
	/* At the end of the file: nothing more. */
	if (to == SIZE) {
		ok(MPI_File_read_at(fh, SIZE, b, PIECE, MPI_BYTE, &st), what);
		MPI_Get_count(&st, MPI_BYTE, &n);
		if (n != 0)
			fail("%s: %d bytes past the end", what, n);
	}
	free(b);
}

int main(int argc, char **argv)
{
	double delay, t0, took;
	MPI_File fh, own;
	MPI_Info info;
	MPI_Status st;
	char *w;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3) {
		fprintf(stderr, "usage: romio_ahead FILE DELAY_MS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	delay = atof(argv[2]) / 1000;
	w = malloc(SIZE);

	/* 1. Pattern A, then read ahead. */
	ok(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh), "open to write");
	if (rank == 0) {
		fill(w, 0, SIZE, 0);
		ok(MPI_File_write_at(fh, 0, w, SIZE, MPI_BYTE, &st), "write A");
	}
	ok(MPI_File_close(&fh), "close");
	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_read_ahead", "1m");
	ok(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, info, &fh), "open read-only");
	t0 = MPI_Wtime();
	read_seq(fh, 0, SIZE, 0, "read ahead");
	took = MPI_Wtime() - t0;
	if (took > NPIECES * delay * 3 / 4)
		fail("%d sequential reads took %.2f s, not less than 3/4 of %d x %.2f s: not read ahead",
		     NPIECES, took, NPIECES, delay);
	else
		printf("romio_ahead rank %d: %d sequential reads of %d KiB in %.2f s (%.2f s each without read-ahead)\n",
		       rank, NPIECES, PIECE >> 10, took, delay);

	/* 2. Windows ahead of the first half, then another's writes. */
	MPI_Barrier(MPI_COMM_WORLD);
	read_seq(fh, 0, SIZE / 2, 0, "first half again");
	usleep((useconds_t)(4 * delay * 1e6));	/* the windows are read */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		ok(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDWR, MPI_INFO_NULL, &own),
		   "open to overwrite");
		fill(w, 0, SIZE, 1);
		ok(MPI_File_write_at(own, 0, w, SIZE, MPI_BYTE, &st), "write B");
		ok(MPI_File_sync(own), "sync B");
		ok(MPI_File_close(&own), "close B");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	ok(MPI_File_set_atomicity(fh, 1), "set_atomicity 1");
	read_seq(fh, SIZE / 2, SIZE, 1, "second half in atomic mode");
	ok(MPI_File_set_atomicity(fh, 0), "set_atomicity 0");
	read_seq(fh, 0, SIZE, 1, "all of it, non-atomic again");
	ok(MPI_File_close(&fh), "close read-only");
	ok(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, info, &fh), "reopen");
	read_seq(fh, 0, SIZE, 1, "reopened");
	ok(MPI_File_close(&fh), "close again");
	MPI_Info_free(&info);
	free(w);

	MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_ahead: %s\n", failures ? "FAILED" : "read ahead; dropped in atomic mode");
	MPI_Finalize();
	return failures ? 1 : 0;
}
