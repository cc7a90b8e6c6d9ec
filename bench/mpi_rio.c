// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_rio.c -- RIO's experiment (Foster et al.): a program that
 * alternates computation with writes of its results takes about the sum
 * of the two with blocking writes and about their maximum with
 * nonblocking ones, when the file is at the far end of a slow link.
 *
 *   mpi_rio FILE STEPS STEP_MB COMPUTE_MS
 *
 * Each process runs STEPS steps; a step computes for COMPUTE_MS
 * (spinning on the clock, as a computation would keep its core) and
 * writes STEP_MB MiB of results to its own part of FILE.  Timed, in turn:
 *   compute    the steps' computation alone;
 *   transfer   their writes alone (MPI_File_write_at);
 *   blocking   computation, then MPI_File_write_at, step after step;
 *   overlap    computation of step i while step i-1's MPI_File_iwrite_at
 *              is in flight (waited for before step i's is issued: two
 *              buffers), the last one waited for at the end;
 *   reads      the steps' data read back as input before each step's
 *              computation: blocking, then each read issued a step ahead
 *              with MPI_File_iread_at.
 * Prints the four times (the slowest process's), sum and max of the first
 * two, and how much of the transfer the overlap hid.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void compute(double seconds, char *buf, size_t len)
{
	double end = MPI_Wtime() + seconds;
	unsigned x = 1;

	while (MPI_Wtime() < end)
		for (int i = 0; i < 4096; i++)
			x = x * 1103515245u + 12345u;
	/* The "results": the buffer the next write sends. */
	memset(buf, (int)(x & 0xff), len);
}

static double slowest(double t)
{
	double max;

	MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return max;
}

static void check(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;

	if (err == MPI_SUCCESS)
		return;
	MPI_Error_string(err, msg, &len);
	fprintf(stderr, "mpi_rio: %s: %s\n", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
	double t, tc, tt, tb, to, trb, tro, secs;
	int rank, nprocs, steps;
	MPI_Offset step_bytes;
	MPI_Request req = MPI_REQUEST_NULL;
	MPI_File fh;
	char *buf[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 5) {
		if (!rank)
			fprintf(stderr, "usage: mpi_rio FILE STEPS STEP_MB COMPUTE_MS\n");
		MPI_Finalize();
		return 2;
	}
	steps = atoi(argv[2]);
	step_bytes = (MPI_Offset)atol(argv[3]) << 20;
	secs = atof(argv[4]) / 1000;
	buf[0] = malloc(step_bytes);
	buf[1] = malloc(step_bytes);
	check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
			    MPI_INFO_NULL, &fh), "open");
#define AT(i) (((MPI_Offset)(i) * nprocs + rank) * step_bytes)

	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < steps; i++)
		compute(secs, buf[0], step_bytes);
	tc = slowest(MPI_Wtime() - t);

	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < steps; i++)
		check(MPI_File_write_at(fh, AT(i), buf[0], (int)step_bytes, MPI_BYTE,
					MPI_STATUS_IGNORE), "write_at");
	tt = slowest(MPI_Wtime() - t);

	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < steps; i++) {
		compute(secs, buf[0], step_bytes);
		check(MPI_File_write_at(fh, AT(i), buf[0], (int)step_bytes, MPI_BYTE,
					MPI_STATUS_IGNORE), "write_at");
	}
	tb = slowest(MPI_Wtime() - t);

	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < steps; i++) {
		MPI_Status st;
		int done = 0;

		compute(secs, buf[i % 2], step_bytes);
		check(MPI_Wait(&req, &st), "wait");
		check(MPI_File_iwrite_at(fh, AT(i), buf[i % 2], (int)step_bytes, MPI_BYTE,
					 &req), "iwrite_at");
		/* Let MPI see it issued (a test, as a program's halo
		 * exchange would make progress). */
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
	}
	check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
	to = slowest(MPI_Wtime() - t);

	/* Reading the results back as input: blocking, then each step's
	 * read issued a step ahead (prefetch). */
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < steps; i++) {
		check(MPI_File_read_at(fh, AT(i), buf[0], (int)step_bytes, MPI_BYTE,
				       MPI_STATUS_IGNORE), "read_at");
		compute(secs, buf[1], 1);
	}
	trb = slowest(MPI_Wtime() - t);
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	check(MPI_File_iread_at(fh, AT(0), buf[0], (int)step_bytes, MPI_BYTE, &req),
	      "iread_at");
	for (int i = 0; i < steps; i++) {
		int done = 0;

		check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
		if (i + 1 < steps) {
			check(MPI_File_iread_at(fh, AT(i + 1), buf[(i + 1) % 2],
						(int)step_bytes, MPI_BYTE, &req), "iread_at");
			MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		}
		compute(secs, buf[i % 2], 1);
	}
	tro = slowest(MPI_Wtime() - t);
	check(MPI_File_close(&fh), "close");

	if (!rank) {
		double sum = tc + tt, max = tc > tt ? tc : tt;

		printf("RIO experiment: %d process(es), %d steps of %.0f ms computation and %.0f MiB written\n",
		       nprocs, steps, secs * 1000, (double)step_bytes / 1048576);
		printf("  compute alone   %7.2f s\n", tc);
		printf("  transfer alone  %7.2f s  (%.2f MiB/s)\n", tt,
		       (double)step_bytes * steps * nprocs / 1048576 / tt);
		printf("  sum %.2f s, max %.2f s\n", sum, max);
		printf("  blocking writes %7.2f s  (%.0f%% of the sum)\n", tb, 100 * tb / sum);
		printf("  nonblocking     %7.2f s  (%.0f%% of the max; %.0f%% of the transfer hidden)\n",
		       to, 100 * to / max, 100 * (sum - to) / (sum - max > 0 ? sum - max : 1));
		printf("  reading it back before each step's computation:\n");
		printf("  blocking reads  %7.2f s\n", trb);
		printf("  reads a step ahead (MPI_File_iread_at) %7.2f s\n", tro);
	}
	free(buf[0]);
	free(buf[1]);
	MPI_Finalize();
	return 0;
}
