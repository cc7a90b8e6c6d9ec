// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_recovery.c -- MPI-IO through a restart of an iod (clf.h,
 * "Recovery"): rounds of MPI_File_write_at_all and MPI_File_read_at_all
 * on a "clf:" file, each process its own interleaved blocks, checked
 * byte for byte, while test_romio.sh kills the iod with SIGKILL and
 * starts it again.  Every call must succeed.
 *
 *   romio_recovery PATH OPT STOPFILE
 *
 * OPT: the use_romio_optimizations hint ("false": clf's collective I/O,
 * tagged requests the iods merge; "true": ROMIO's two-phase).  Rank 0
 * writes "ready" to STOPFILE.ready after the first round; the rounds go
 * on until STOPFILE exists, then 3 more.  Prints the longest round.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define BLOCKS 96		/* per process and round: 384 KiB */
#define AFTER 3			/* rounds after the stop file */

static int rank, nprocs;

static unsigned char byte_of(long long off, int round)
{
	return (unsigned char)((off * 7 + (off >> 12) * 13 + round) & 0xff);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int fail(const char *what, int rc)
{
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;

	MPI_Error_string(rc, s, &n);
	fprintf(stderr, "FAIL rank %d: %s: %s\n", rank, what, s);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned char *buf, *back;
	MPI_Datatype ft;
	MPI_Info info;
	MPI_File fh;
	double worst = 0;
	int rc, bad = 0, after = -1, round;
	char ready[4096];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 4) {
		fprintf(stderr, "usage: romio_recovery PATH OPT STOPFILE\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	snprintf(ready, sizeof(ready), "%s.ready", argv[3]);
	buf = malloc(BLOCK * BLOCKS);
	back = malloc(BLOCK * BLOCKS);
	/* Block i of this process at file block i * nprocs + rank. */
	MPI_Type_vector(BLOCKS, BLOCK, BLOCK * nprocs, MPI_BYTE, &ft);
	MPI_Type_commit(&ft);
	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", argv[2]);
	rc = MPI_File_open(MPI_COMM_WORLD, argv[1],
			   MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	if (rc != MPI_SUCCESS)
		return fail("open", rc);
	rc = MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, ft,
			       "native", info);
	if (rc != MPI_SUCCESS)
		return fail("set_view", rc);
	for (round = 0;; round++) {
		double t0 = now_s(), took;
		int agree[2];	/* stop (rank 0's word), anyone failed */

		for (long long i = 0; i < BLOCK * BLOCKS; i++) {
			long long off = (i / BLOCK * nprocs + rank) * BLOCK +
					i % BLOCK;

			buf[i] = byte_of(off, round);
		}
		rc = MPI_File_write_at_all(fh, 0, buf, BLOCK * BLOCKS,
					   MPI_BYTE, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			bad = fail("write_at_all", rc);
		/* Nobody goes on to a collective call that another skips:
		 * it would hang rather than fail. */
		MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX,
			      MPI_COMM_WORLD);
		if (bad)
			break;
		memset(back, 0, BLOCK * BLOCKS);
		rc = MPI_File_read_at_all(fh, 0, back, BLOCK * BLOCKS,
					  MPI_BYTE, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			bad = fail("read_at_all", rc);
		if (!bad && memcmp(buf, back, BLOCK * BLOCKS)) {
			fprintf(stderr, "FAIL rank %d: round %d read back other bytes\n",
				rank, round);
			bad = 1;
		}
		took = now_s() - t0;
		if (took > worst)
			worst = took;
		if (rank == 0 && round == 0) {
			FILE *f = fopen(ready, "w");

			if (f)
				fclose(f);
		}
		/* Everyone stops after the same round, and at once when one
		 * failed. */
		agree[0] = rank == 0 && access(argv[3], F_OK) == 0;
		agree[1] = bad;
		MPI_Allreduce(MPI_IN_PLACE, agree, 2, MPI_INT, MPI_MAX,
			      MPI_COMM_WORLD);
		if (agree[1])
			break;
		if (agree[0] && after < 0)
			after = round;
		if (after >= 0 && round >= after + AFTER)
			break;
	}
	MPI_File_close(&fh);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX,
		      MPI_COMM_WORLD);
	if (rank == 0 && !bad)
		printf("PASS: %d rounds of write_at_all/read_at_all (%s), the longest %.0f ms\n",
		       round + 1, argv[2], worst * 1000);
	MPI_Type_free(&ft);
	MPI_Info_free(&info);
	free(buf);
	free(back);
	MPI_Finalize();
	return bad;
}
