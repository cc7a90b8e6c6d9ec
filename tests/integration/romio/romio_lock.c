// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_lock.c -- MPI-IO locks are clf byte-range locks, which exclude
 * processes outside the MPI job (test_romio.sh runs it):
 *
 *   romio_lock atomic PATH OFF MINWAIT_MS   (2 processes) in atomic mode,
 *       rank 0 writes at file offset OFF, which a native process holds
 *       write-locked (romio_native lock): its write must wait at least
 *       MINWAIT_MS; rank 1 writes one MiB further, outside the lock,
 *       and must not wait for it.  Both bytes are then read back.
 *   romio_lock sieve PATH WHICH ROUNDS      (1 process, run as two jobs
 *       at once, WHICH 0 and 1) data sieving writes with ROMIO's own
 *       views (use_romio_optimizations=true): the bytes WHICH, WHICH+2,
 *       ... of region r get round r's value, ROUNDS regions, each a
 *       read-modify-write of the whole region by both jobs
 *   romio_lock check PATH ROUNDS             (1 process) every byte of
 *       every region holds what its job wrote: no update was lost
 *
 * Exit status 0, or 1 with a message.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REGION_BYTES 65536	/* per job and region: every other byte */

static int fail(const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (err != MPI_SUCCESS)
		MPI_Error_string(err, msg, &len);
	msg[len] = '\0';
	fprintf(stderr, "romio_lock: %s: %s\n", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

static uint8_t value(int round, int which)
{
	return (uint8_t)(1 + round * 2 + which);
}

static int atomic(const char *path, MPI_Offset off, double min_wait)
{
	MPI_File fh;
	double t0, waited;
	int rank, err;
	char c = 'A', back = 0;
	MPI_Offset at;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	at = rank == 0 ? off : off + (1 << 20);
	err = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
			    MPI_INFO_NULL, &fh);
	if (err)
		return fail("open", err);
	MPI_File_set_atomicity(fh, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	err = MPI_File_write_at(fh, at, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
	waited = (MPI_Wtime() - t0) * 1000;
	if (err)
		return fail("write_at", err);
	err = MPI_File_read_at(fh, at, &back, 1, MPI_CHAR, MPI_STATUS_IGNORE);
	if (err || back != c)
		return fail("read back", err);
	/* Rank 0's write waited for the lock if it ended after the holder
	 * let go: the caller compares "done_at" with the holder's time (a
	 * duration would depend on how long mpiexec took to start). */
	if (rank == 0) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		printf("done_at %lld\n",
		       (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
	}
	if (rank == 1 && waited >= min_wait) {
		fprintf(stderr, "romio_lock: the write outside the locked range waited %.0f ms\n",
			waited);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	printf("atomic: rank %d waited %.0f ms\n", rank, waited);
	MPI_File_close(&fh);
	return 0;
}

static int sieve(const char *path, int which, int rounds)
{
	uint8_t *buf = malloc(REGION_BYTES);
	MPI_Datatype every_other, filetype;
	MPI_Info info;
	MPI_File fh;
	int err;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", "true");
	MPI_Info_set(info, "romio_ds_write", "enable");
	err = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh);
	if (err)
		return fail("open", err);
	MPI_Type_vector(1, 1, 2, MPI_BYTE, &every_other);
	MPI_Type_create_resized(every_other, 0, 2, &filetype);
	MPI_Type_commit(&filetype);
	err = MPI_File_set_view(fh, which, MPI_BYTE, filetype, "native", info);
	if (err)
		return fail("set_view", err);
	for (int r = 0; r < rounds; r++) {
		memset(buf, value(r, which), REGION_BYTES);
		err = MPI_File_write_at(fh, (MPI_Offset)r * REGION_BYTES, buf, REGION_BYTES,
					MPI_BYTE, MPI_STATUS_IGNORE);
		if (err)
			return fail("write_at", err);
	}
	MPI_File_close(&fh);
	MPI_Type_free(&filetype);
	MPI_Type_free(&every_other);
	MPI_Info_free(&info);
	free(buf);
	printf("sieve: job %d wrote %d regions\n", which, rounds);
	return 0;
}

static int check(const char *path, int rounds)
{
	size_t len = (size_t)rounds * 2 * REGION_BYTES;
	uint8_t *buf = malloc(len);
	long lost = 0;
	MPI_File fh;
	int err;

	err = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	if (err)
		return fail("open", err);
	err = MPI_File_read_at(fh, 0, buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
	if (err)
		return fail("read_at", err);
	for (size_t i = 0; i < len; i++) {
		int r = (int)(i / (2 * REGION_BYTES));

		if (buf[i] != value(r, (int)(i % 2)))
			lost++;
	}
	MPI_File_close(&fh);
	free(buf);
	if (lost) {
		fprintf(stderr, "romio_lock: %ld bytes lost their update\n", lost);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	printf("check: %d regions, no update lost\n", rounds);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	MPI_Init(&argc, &argv);
	if (argc == 5 && !strcmp(argv[1], "atomic"))
		rc = atomic(argv[2], atoll(argv[3]), atof(argv[4]));
	else if (argc == 5 && !strcmp(argv[1], "sieve"))
		rc = sieve(argv[2], atoi(argv[3]), atoi(argv[4]));
	else if (argc == 4 && !strcmp(argv[1], "check"))
		rc = check(argv[2], atoi(argv[3]));
	else
		fprintf(stderr, "usage: romio_lock atomic PATH OFF MINWAIT_MS | sieve PATH WHICH ROUNDS | check PATH ROUNDS\n");
	MPI_Finalize();
	return rc;
}
