// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_async_order.c -- a blocking collective access issued after a
 * nonblocking one of the same file (use_romio_optimizations=false) does
 * not overtake it at the iods, whatever the I/O thread's speed on each
 * process (ad_clf_async.c).
 *
 *   romio_async_order PATH
 *
 * test_romio.sh runs it with the I/O thread of rank 1 slowed by the
 * driver's test hook CLF_TEST_ROMIO_ASYNC_DELAY_MS: rank 0's
 * MPI_File_iwrite_at_all is at the iods at once, rank 1's blocking
 * MPI_File_write_at_all would be first on its connections, and each
 * would wait for the other's until the iods' timeout.  Every call must
 * succeed and both writes read back.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 1024
#define BLOCKS 64	/* per process and access: 64 KiB, both iods */

static int rank, nprocs, bad;

static void check(int rc, const char *what)
{
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;

	if (rc == MPI_SUCCESS)
		return;
	MPI_Error_string(rc, s, &n);
	fprintf(stderr, "FAIL rank %d: %s: %s\n", rank, what, s);
	bad = 1;
}

static char byte_of(int access, long long i)
{
	return (char)((i * 13 + access * 101 + rank * 7) % 251 + 1);
}

int main(int argc, char **argv)
{
	static char a[BLOCK * BLOCKS], b[BLOCK * BLOCKS], back[BLOCK * BLOCKS];
	MPI_Offset second = BLOCKS;	/* the second access, in view units */
	MPI_Datatype ft;
	MPI_Request req;
	MPI_Info info;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 2) {
		fprintf(stderr, "usage: romio_async_order PATH\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (long long i = 0; i < BLOCK * BLOCKS; i++) {
		a[i] = byte_of(1, i);
		b[i] = byte_of(2, i);
	}
	/* Interleaved blocks: the pieces of both processes merge. */
	MPI_Type_vector(BLOCKS * 2, BLOCK, BLOCK * nprocs, MPI_BYTE, &ft);
	MPI_Type_commit(&ft);
	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", "false");
	check(MPI_File_open(MPI_COMM_WORLD, argv[1],
			    MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "open");
	check(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, ft,
				"native", info), "set_view");
	second *= BLOCK;
	check(MPI_File_iwrite_at_all(fh, 0, a, sizeof(a), MPI_BYTE, &req),
	      "iwrite_at_all");
	check(MPI_File_write_at_all(fh, second, b, sizeof(b), MPI_BYTE,
				    MPI_STATUS_IGNORE), "write_at_all");
	check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
	check(MPI_File_read_at_all(fh, 0, back, sizeof(back), MPI_BYTE,
				   MPI_STATUS_IGNORE), "read_at_all 1");
	if (!bad && memcmp(a, back, sizeof(a))) {
		fprintf(stderr, "FAIL rank %d: the nonblocking write's bytes differ\n",
			rank);
		bad = 1;
	}
	check(MPI_File_read_at_all(fh, second, back, sizeof(back), MPI_BYTE,
				   MPI_STATUS_IGNORE), "read_at_all 2");
	if (!bad && memcmp(b, back, sizeof(b))) {
		fprintf(stderr, "FAIL rank %d: the blocking write's bytes differ\n",
			rank);
		bad = 1;
	}
	check(MPI_File_close(&fh), "close");
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0 && !bad)
		printf("romio_async_order: a blocking write_at_all after an iwrite_at_all: ok\n");
	MPI_Type_free(&ft);
	MPI_Info_free(&info);
	MPI_Finalize();
	return bad;
}
