// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_cache.c -- MPI-IO/L's comparison of remote access methods: one
 * program that reads part or all of a file, once or more, timed from the
 * open to the close, for bench/wan.sh (part 4), which runs it on a file
 * across an emulated wide-area link: directly (a clf:// name), through
 * the hint clf_cache=DIR, and on a copy staged to local disk beforehand
 * (a ufs: name; the staging is timed by wan.sh).
 *
 *   mpi_cache FILE PERCENT PASSES [CACHE_DIR]
 *
 * The file is read in 1 MiB pieces: with PERCENT 10 every tenth piece
 * (10% of the bytes, spread over the file), with 100 all of them; the
 * pieces are dealt to the processes in turn, and the whole read is done
 * PASSES times in one open.  CACHE_DIR: opened with clf_cache=CACHE_DIR.
 * Prints the seconds (the slowest process's) and the bytes read.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define PIECE (1 << 20)

static void check(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;

	if (err == MPI_SUCCESS)
		return;
	MPI_Error_string(err, msg, &len);
	fprintf(stderr, "mpi_cache: %s: %s\n", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
	int rank, nprocs, percent, passes, every, count;
	long long pieces, i, k = 0, bytes = 0, total;
	MPI_Info info = MPI_INFO_NULL;
	MPI_Offset size;
	MPI_Status st;
	MPI_File fh;
	double t0, t, slowest;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: mpi_cache FILE PERCENT PASSES [CACHE_DIR]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	percent = atoi(argv[2]);
	passes = atoi(argv[3]);
	if (percent < 1 || percent > 100 || passes < 1) {
		fprintf(stderr, "mpi_cache: PERCENT in 1..100, PASSES >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	every = 100 / percent;
	if (argc == 5) {
		MPI_Info_create(&info);
		MPI_Info_set(info, "clf_cache", argv[4]);
	}
	buf = malloc(PIECE);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, info, &fh), "open");
	check(MPI_File_get_size(fh, &size), "get_size");
	pieces = (size + PIECE - 1) / PIECE;
	for (int p = 0; p < passes; p++)
		for (i = 0, k = 0; i < pieces; i += every, k++) {
			if (k % nprocs != rank)
				continue;
			check(MPI_File_read_at(fh, i * PIECE, buf, PIECE, MPI_BYTE, &st), "read_at");
			MPI_Get_count(&st, MPI_BYTE, &count);
			bytes += count;
		}
	check(MPI_File_close(&fh), "close");
	t = MPI_Wtime() - t0;
	MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bytes, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%.3f s, %lld bytes read of %lld\n", slowest, total, (long long)size);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	free(buf);
	MPI_Finalize();
	return 0;
}
