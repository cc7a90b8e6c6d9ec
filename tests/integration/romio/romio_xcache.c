// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_xcache.c -- small independent MPI-IO accesses kept at the client
 * under the iods' extent locks (client_cache in the job's clf.conf,
 * libclf/client/xcache.h) stay coherent between processes:
 *
 *   romio_xcache PATH ROUNDS     (2 processes) in turn, 1 KiB and
 *       47008-byte transfers: one rank writes, the other reads the same
 *       bytes and writes their neighbours, the first reads those; ordered
 *       by barriers only, with no MPI_File_sync: clf promises every read
 *       the writes acknowledged before it, from any process.  Then each
 *       rank writes its own region in 1 KiB pieces, closes, and the
 *       other reads it back.
 *   romio_xcache PATH ROUNDS HINT IN_FORCE    the same, opened with the
 *       hint clf_client_cache=HINT ("-": none); the file's info must say
 *       clf_client_cache=IN_FORCE (true or false) after the open.
 *   romio_xcache PATH ROUNDS HINT IN_FORCE romio    the same with
 *       use_romio_optimizations=true.
 *
 * Exit status 0, or 1 with a message.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXLEN 47008

static int fail(const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (err != MPI_SUCCESS)
		MPI_Error_string(err, msg, &len);
	msg[len] = '\0';
	fprintf(stderr, "romio_xcache: %s: %s\n", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

static void put(MPI_File fh, MPI_Offset off, int len, int fill)
{
	static uint8_t b[MAXLEN];
	int err;

	memset(b, fill, len);
	err = MPI_File_write_at(fh, off, b, len, MPI_BYTE, MPI_STATUS_IGNORE);
	if (err)
		fail("write", err);
}

static void get(MPI_File fh, MPI_Offset off, int len, int fill,
		const char *what)
{
	static uint8_t b[MAXLEN];
	int err = MPI_File_read_at(fh, off, b, len, MPI_BYTE, MPI_STATUS_IGNORE);

	if (err)
		fail("read", err);
	for (int i = 0; i < len; i++) {
		if (b[i] != fill) {
			fprintf(stderr, "romio_xcache: %s: byte %lld + %d is %d, not %d\n",
				what, (long long)off, i, b[i], fill);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
}

/* The file's info says clf_client_cache=want. */
static void in_force(MPI_File fh, const char *want)
{
	char value[MPI_MAX_INFO_VAL + 1] = "";
	MPI_Info info;
	int flag = 0;

	MPI_File_get_info(fh, &info);
	MPI_Info_get(info, "clf_client_cache", MPI_MAX_INFO_VAL, value, &flag);
	MPI_Info_free(&info);
	if (!flag || strcmp(value, want)) {
		fprintf(stderr, "romio_xcache: clf_client_cache is %s, not %s\n",
			flag ? value : "(absent)", want);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1024, MAXLEN };
	MPI_Info info = MPI_INFO_NULL;
	MPI_File fh;
	int rank, rounds, err;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3 && argc != 5 && !(argc == 6 && !strcmp(argv[5], "romio")))
		return fail("usage: romio_xcache PATH ROUNDS [HINT IN_FORCE [romio]]",
			    MPI_SUCCESS);
	rounds = atoi(argv[2]);
	if (argc >= 5)
		MPI_Info_create(&info);
	if (argc >= 5 && strcmp(argv[3], "-"))
		MPI_Info_set(info, "clf_client_cache", argv[3]);
	if (argc == 6)
		MPI_Info_set(info, "use_romio_optimizations", "true");
	err = MPI_File_open(MPI_COMM_WORLD, argv[1],
			    MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh);
	if (err)
		return fail("open", err);
	if (argc >= 5)
		in_force(fh, argv[4]);
	for (int s = 0; s < 2; s++) {
		int n = sizes[s];

		for (int k = 0; k < rounds; k++) {
			MPI_Offset off = (MPI_Offset)k * 2 * n;
			int a = (1 + 3 * k + 50 * s) & 0xff, b = a + 1, c = a + 2;
			int me = k % 2;	/* who writes first */

			if (rank == me)
				put(fh, off, n, a);
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank != me) {
				get(fh, off, n, a, "the other's write");
				put(fh, off + n, n, b);
				put(fh, off, n, c);
			}
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == me) {
				get(fh, off + n, n, b, "the other's neighbouring write");
				get(fh, off, n, c, "the other's write over mine");
			}
			MPI_Barrier(MPI_COMM_WORLD);
		}
	}
	/* Own regions, then closed: every piece went out at the close. */
	for (int k = 0; k < 64; k++)
		put(fh, (MPI_Offset)(8 + rank) << 20 | k << 10, 1024, k + rank);
	err = MPI_File_close(&fh);
	if (err)
		return fail("close", err);
	err = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY,
			    info, &fh);
	if (err)
		return fail("open again", err);
	for (int k = 0; k < 64; k++)
		get(fh, (MPI_Offset)(9 - rank) << 20 | k << 10, 1024, k + 1 - rank,
		    "the other's region after its close");
	MPI_File_close(&fh);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	if (rank == 0)
		printf("romio_xcache: %d rounds coherent\n", rounds);
	MPI_Finalize();
	return 0;
}
