// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_async.c -- nonblocking MPI-IO on clf overlaps with computation,
 * for test_remote_names.sh, against iods that delay every reply by
 * DELAY_MS (CLF_TEST_IOD_DELAY_MS: a far-away instance).
 *
 *   romio_async FILE DELAY_MS
 *
 * Each process, on its own 4 MiB of FILE:
 *   - a blocking MPI_File_write_at takes W >= DELAY_MS; then
 *     MPI_File_iwrite_at returns within W / 2, and C = max(W, 2 x
 *     DELAY_MS) of computation after it plus the wait take less than
 *     C + W / 2 (not the C + W of a write done first); the status counts
 *     4 MiB;
 *   - two iwrite_at in flight (halves), MPI_Waitall;
 *   - MPI_File_iread_at polled with MPI_Test to completion reads the
 *     bytes back; an iread_at past the end of the file counts the bytes
 *     there are;
 *   - MPI_File_iwrite / iread through the individual file pointer;
 *   - through a vector view: MPI_File_iwrite_all and iwrite_at return
 *     within half a blocking write_at_all and overlap alike, iread_at_all
 *     returns at once and reads the bytes back, iread_at into an
 *     out-of-order memory type (packed, unpacked at completion; the type
 *     freed before the wait) too.
 * Exits 0 when every check passed.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE (4 << 20)
#define BLOCK 65536

static int rank, nprocs, failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "romio_async rank %d: ", rank);
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

static void spin(double seconds)
{
	double end = MPI_Wtime() + seconds;
	volatile unsigned x = 1;

	while (MPI_Wtime() < end)
		x = x * 1103515245u + 12345u;
}

static void fill(char *b, MPI_Offset at, int n)
{
	for (int i = 0; i < n; i++)
		b[i] = (char)((at + i) * 7 + ((at + i) >> 13));
}

static void expect(const char *b, MPI_Offset at, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (b[i] != (char)((at + i) * 7 + ((at + i) >> 13))) {
			fail("%s: byte %lld differs", what, (long long)(at + i));
			return;
		}
}

static void count_is(MPI_Status *st, int want, const char *what)
{
	int n;

	MPI_Get_count(st, MPI_BYTE, &n);
	if (n != want)
		fail("%s: status counts %d bytes, not %d", what, n, want);
}

/* File byte of view byte v: every nprocs-th BLOCK from base. */
static MPI_Offset view_byte(MPI_Offset base, MPI_Offset v)
{
	return base + ((v / BLOCK) * nprocs + rank) * BLOCK + v % BLOCK;
}

static void fill_view(char *b, MPI_Offset base)
{
	for (MPI_Offset k = 0; k < SIZE / BLOCK; k++)
		fill(b + k * BLOCK, view_byte(base, k * BLOCK), BLOCK);
}

static void expect_view(const char *b, MPI_Offset base, const char *what)
{
	for (MPI_Offset k = 0; k < SIZE / BLOCK; k++)
		expect(b + k * BLOCK, view_byte(base, k * BLOCK), BLOCK, what);
}

/* issue and total of a nonblocking access against blocking: the checks
 * of the contiguous iwrite_at above. */
static void overlapped(const char *what, double issue, double total, double compute,
		       double blocking)
{
	if (issue > blocking / 2)
		fail("%s took %.0f ms to return (blocking %.0f ms): it blocks", what,
		     issue * 1000, blocking * 1000);
	if (total > compute + blocking / 2)
		fail("%s + %.0f ms of computation + wait took %.0f ms (blocking %.0f ms): less than half of it hidden",
		     what, compute * 1000, total * 1000, blocking * 1000);
	printf("rank %d: blocking %.0f ms; %s returned in %.1f ms, and with %.0f ms of computation done in %.0f ms\n",
	       rank, blocking * 1000, what, issue * 1000, compute * 1000, total * 1000);
}

/*
 * Non-contiguous views and the _all forms: a vector view (every
 * nprocs-th BLOCK from base, this process's first), written with
 * MPI_File_iwrite_all and MPI_File_iwrite_at, read with iread_all and
 * with iread_at into an out-of-order memory type (MPI packs it: the
 * bytes are unpacked at completion).
 */
static void strided(MPI_File fh, MPI_Offset base, double delay, char *w, char *r)
{
	MPI_Datatype vec, ftype, swap, mtype;
	int lens[2] = { BLOCK, BLOCK };
	MPI_Aint displs[2] = { BLOCK, 0 };
	double t0, issue, total, blocking, compute;
	MPI_Request req;
	MPI_Status st;

	MPI_Type_vector(SIZE / BLOCK, BLOCK, BLOCK * nprocs, MPI_BYTE, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)SIZE * nprocs, &ftype);
	MPI_Type_commit(&ftype);
	ok(MPI_File_set_view(fh, base + (MPI_Offset)rank * BLOCK, MPI_BYTE, ftype, "native",
			     MPI_INFO_NULL), "set_view");
	MPI_Type_free(&vec);
	MPI_Type_free(&ftype);
	fill_view(w, base);

	ok(MPI_File_write_at_all(fh, 0, w, SIZE, MPI_BYTE, &st), "write_at_all");
	t0 = MPI_Wtime();
	ok(MPI_File_write_at_all(fh, 0, w, SIZE, MPI_BYTE, &st), "write_at_all");
	blocking = MPI_Wtime() - t0;
	compute = blocking > 2 * delay ? blocking : 2 * delay;

	t0 = MPI_Wtime();
	ok(MPI_File_iwrite_all(fh, w, SIZE, MPI_BYTE, &req), "iwrite_all");
	issue = MPI_Wtime() - t0;
	spin(compute);
	ok(MPI_Wait(&req, &st), "wait");
	total = MPI_Wtime() - t0;
	count_is(&st, SIZE, "iwrite_all");
	overlapped("MPI_File_iwrite_all", issue, total, compute, blocking);
	MPI_Barrier(MPI_COMM_WORLD);

	memset(r, 0, SIZE);
	t0 = MPI_Wtime();
	ok(MPI_File_iread_at_all(fh, 0, r, SIZE, MPI_BYTE, &req), "iread_at_all");
	issue = MPI_Wtime() - t0;
	ok(MPI_Wait(&req, &st), "wait");
	count_is(&st, SIZE, "iread_at_all");
	expect_view(r, base, "iread_at_all");
	if (issue > blocking / 2)
		fail("MPI_File_iread_at_all took %.0f ms to return: it blocks", issue * 1000);

	/* Independent, through the view. */
	t0 = MPI_Wtime();
	ok(MPI_File_iwrite_at(fh, 0, w, SIZE, MPI_BYTE, &req), "iwrite_at (view)");
	issue = MPI_Wtime() - t0;
	spin(compute);
	ok(MPI_Wait(&req, &st), "wait");
	total = MPI_Wtime() - t0;
	count_is(&st, SIZE, "iwrite_at (view)");
	overlapped("MPI_File_iwrite_at through a vector view", issue, total, compute, blocking);

	MPI_Type_create_hindexed(2, lens, displs, MPI_BYTE, &swap);
	MPI_Type_create_resized(swap, 0, 2 * BLOCK, &mtype);
	MPI_Type_commit(&mtype);
	MPI_Type_free(&swap);
	memset(r, 0, SIZE);
	ok(MPI_File_iread_at(fh, 0, r, SIZE / (2 * BLOCK), mtype, &req), "iread_at (swapped)");
	/* Freed before the completion, as MPI allows; polled, so that the
	 * unpacking runs from MPI_Test. */
	MPI_Type_free(&mtype);
	for (int flag = 0; !flag;)
		ok(MPI_Test(&req, &flag, &st), "test");
	for (MPI_Offset k = 0; k < SIZE / BLOCK; k++)
		expect(r + (k ^ 1) * BLOCK, view_byte(base, k * BLOCK), BLOCK,
		       "iread_at into an out-of-order memory type");
	ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
}

int main(int argc, char **argv)
{
	MPI_Offset at, end;
	MPI_Request req[2];
	MPI_Status st[2];
	double delay, t0, issue, total, blocking, compute;
	char *w, *r;
	MPI_File fh;
	int done = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 3) {
		fprintf(stderr, "usage: romio_async FILE DELAY_MS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	delay = atof(argv[2]) / 1000;
	at = (MPI_Offset)rank * SIZE;
	end = (MPI_Offset)nprocs * SIZE;
	w = malloc(SIZE);
	r = malloc(2 * SIZE);
	fill(w, at, SIZE);
	ok(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
			 MPI_INFO_NULL, &fh), "open");

	/* A blocking write, once to register the view at the iods, then
	 * timed: what the nonblocking one must hide. */
	ok(MPI_File_write_at(fh, at, w, SIZE, MPI_BYTE, &st[0]), "write_at");
	t0 = MPI_Wtime();
	ok(MPI_File_write_at(fh, at, w, SIZE, MPI_BYTE, &st[0]), "write_at");
	blocking = MPI_Wtime() - t0;
	if (blocking < delay)
		fail("a blocking write took %.0f ms, less than the iods' delay", blocking * 1000);
	compute = blocking > 2 * delay ? blocking : 2 * delay;

	/* Overlap: the write flies while the process computes. */
	t0 = MPI_Wtime();
	ok(MPI_File_iwrite_at(fh, at, w, SIZE, MPI_BYTE, &req[0]), "iwrite_at");
	issue = MPI_Wtime() - t0;
	spin(compute);
	ok(MPI_Wait(&req[0], &st[0]), "wait");
	total = MPI_Wtime() - t0;
	count_is(&st[0], SIZE, "iwrite_at");
	if (issue > blocking / 2)
		fail("MPI_File_iwrite_at took %.0f ms to return (a blocking write %.0f ms): it blocks",
		     issue * 1000, blocking * 1000);
	if (total > compute + blocking / 2)
		fail("iwrite_at + %.0f ms of computation + wait took %.0f ms (a blocking write %.0f ms): less than half of it hidden",
		     compute * 1000, total * 1000, blocking * 1000);
	printf("rank %d: blocking write %.0f ms; iwrite_at returned in %.1f ms, and with %.0f ms of computation done in %.0f ms\n",
	       rank, blocking * 1000, issue * 1000, compute * 1000, total * 1000);

	/* Two in flight, waited for together. */
	fill(w, at, SIZE);
	ok(MPI_File_iwrite_at(fh, at, w, SIZE / 2, MPI_BYTE, &req[0]), "iwrite_at 1/2");
	ok(MPI_File_iwrite_at(fh, at + SIZE / 2, w + SIZE / 2, SIZE / 2, MPI_BYTE, &req[1]),
	   "iwrite_at 2/2");
	ok(MPI_Waitall(2, req, st), "waitall");
	count_is(&st[0], SIZE / 2, "first half");
	count_is(&st[1], SIZE / 2, "second half");
	MPI_Barrier(MPI_COMM_WORLD);

	/* Read back, polled. */
	memset(r, 0, SIZE);
	ok(MPI_File_iread_at(fh, at, r, SIZE, MPI_BYTE, &req[0]), "iread_at");
	while (!done)
		ok(MPI_Test(&req[0], &done, &st[0]), "test");
	count_is(&st[0], SIZE, "iread_at");
	expect(r, at, SIZE, "iread_at");

	/* Past the end: the bytes there are. */
	ok(MPI_File_iread_at(fh, end - SIZE / 4, r, 2 * SIZE, MPI_BYTE, &req[0]),
	   "iread_at past the end");
	ok(MPI_Wait(&req[0], &st[0]), "wait");
	count_is(&st[0], SIZE / 4, "iread_at past the end");
	expect(r, end - SIZE / 4, SIZE / 4, "iread_at past the end");

	/* The individual file pointer moves at issue. */
	ok(MPI_File_seek(fh, at, MPI_SEEK_SET), "seek");
	ok(MPI_File_iread(fh, r, SIZE / 2, MPI_BYTE, &req[0]), "iread 1/2");
	ok(MPI_File_iread(fh, r + SIZE / 2, SIZE / 2, MPI_BYTE, &req[1]), "iread 2/2");
	ok(MPI_Waitall(2, req, st), "waitall");
	expect(r, at, SIZE, "iread through the file pointer");

	strided(fh, end, delay, w, r);

	ok(MPI_File_close(&fh), "close");
	free(w);
	free(r);
	MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return failures ? 1 : 0;
}
