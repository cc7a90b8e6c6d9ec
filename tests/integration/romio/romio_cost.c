// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_cost.c -- legal accesses whose mapping once cost a scan per run
 * must finish within the instance's timeout (test_romio.sh runs it with
 * 2 processes).
 *
 *   romio_cost PATH HINT BOUND_MS
 *
 * The case of issue 19: each rank's filetype is a vector of 25586 blocks
 * of 28 bytes every 56 (rank r's at 28 r), resized to an extent of
 * 25586 * 56 + 2 bytes; the file's layout (subfile_datatypes) is a 1-D
 * BLOCK darray of 173 bytes over 2 subfiles; the view is set at
 * displacement 84; rank 0 writes 827424 bytes and rank 1 1901432 with
 * MPI_File_write_all, then both read them back with MPI_File_read_all.
 * The view's extent and the layout's period are incommensurate, and
 * their intersection interleaves thousands of members: a mapping that
 * answered each run by a scan over them took 10 to 160 s and let the
 * iods time out, where the same access with an extent of 25586 * 56
 * takes 0.2 s.
 *
 * HINT is use_romio_optimizations.  set_view, write_all and read_all
 * must each take less than BOUND_MS; every byte is checked, rank 0
 * reading the whole file through a byte view against the typemap
 * computed here (zeros where nobody wrote).  Prints the times.  Exit
 * status 0, or 1 with a message.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 25586
#define BLEN 28
#define STRIDE 56
#define EXTENT ((MPI_Aint)BLOCKS * STRIDE + 2)
#define DISP 84
#define SUB_BLOCK 173

static const long share[2] = { 827424, 1901432 };
static int rank;

static int fail(const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (err != MPI_SUCCESS)
		MPI_Error_string(err, msg, &len);
	msg[len] = '\0';
	fprintf(stderr, "romio_cost rank %d: %s: %s\n", rank, what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* The value rank r writes as its k-th view byte; never 0. */
static unsigned char value(int r, long k)
{
	return (unsigned char)(1 + (k * 7 + r * 101 + k / 251) % 255);
}

/* The file offset of rank r's k-th view byte, by the MPI typemap. */
static long file_offset(int r, long k)
{
	long tile = k / ((long)BLOCKS * BLEN), w = k % ((long)BLOCKS * BLEN);

	return DISP + tile * EXTENT + BLEN * r + (w / BLEN) * STRIDE +
	       w % BLEN;
}

static MPI_Datatype filetype(int r)
{
	MPI_Datatype vec, placed, t;
	int one = 1;
	MPI_Aint at = (MPI_Aint)BLEN * r;

	MPI_Type_vector(BLOCKS, BLEN, STRIDE, MPI_BYTE, &vec);
	MPI_Type_create_struct(1, &one, &at, &vec, &placed);
	MPI_Type_create_resized(placed, 0, EXTENT, &t);
	MPI_Type_commit(&t);
	MPI_Type_free(&vec);
	MPI_Type_free(&placed);
	return t;
}

/* Info for the open: the hint, and the layout when creating. */
static MPI_Info open_info(const char *hint, MPI_Datatype sub[2])
{
	char value[64];
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", hint);
	snprintf(value, sizeof(value), "%d %d", (int)MPI_Type_c2f(sub[0]),
		 (int)MPI_Type_c2f(sub[1]));
	MPI_Info_set(info, "subfile_datatypes", value);
	return info;
}

/*
 * Rank 0, the byte view set: every byte of the file against the typemap
 * of both ranks.
 */
static long check_file(MPI_File fh, const char *hint)
{
	long size = file_offset(1, share[1] - 1) + 1, bad = 0;
	unsigned char *want = calloc(size, 1), *got = malloc(size);
	MPI_Status st;
	int err;

	if (!want || !got)
		return fail("out of memory", MPI_SUCCESS);
	for (int r = 0; r < 2; r++)
		for (long k = 0; k < share[r]; k++)
			want[file_offset(r, k)] = value(r, k);
	err = MPI_File_read_at(fh, 0, got, (int)size, MPI_BYTE, &st);
	if (err)
		fail("read through the byte view", err);
	for (long off = 0; off < size; off++) {
		if (got[off] == want[off])
			continue;
		if (bad++ < 5)
			fprintf(stderr,
				"romio_cost (%s): file byte %ld is %u, the typemap says %u\n",
				hint, off, got[off], want[off]);
	}
	free(want);
	free(got);
	return bad;
}

int main(int argc, char **argv)
{
	MPI_Datatype ftype, sub[2];
	unsigned char *buf, *back;
	double t[4], bound;
	long n, bad = 0, any;
	int nprocs, err, gs = 2 * SUB_BLOCK, distrib = MPI_DISTRIBUTE_BLOCK;
	int darg = MPI_DISTRIBUTE_DFLT_DARG, psize = 2;
	const char *path, *hint;
	MPI_Status st;
	MPI_Info info;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 4 || nprocs != 2) {
		fprintf(stderr, "usage: mpiexec -n 2 romio_cost PATH HINT BOUND_MS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	path = argv[1];
	hint = argv[2];
	bound = atof(argv[3]) / 1000;
	n = share[rank];
	for (int j = 0; j < 2; j++) {
		MPI_Type_create_darray(2, j, 1, &gs, &distrib, &darg, &psize,
				       MPI_ORDER_C, MPI_BYTE, &sub[j]);
		MPI_Type_commit(&sub[j]);
	}
	ftype = filetype(rank);
	buf = malloc(n);
	back = malloc(n);
	if (!buf || !back)
		return fail("out of memory", MPI_SUCCESS);
	for (long k = 0; k < n; k++)
		buf[k] = value(rank, k);

	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	info = open_info(hint, sub);
	err = MPI_File_open(MPI_COMM_WORLD, path,
			    MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
	if (err)
		fail("open", err);

	MPI_Barrier(MPI_COMM_WORLD);
	t[0] = MPI_Wtime();
	err = MPI_File_set_view(fh, DISP, MPI_BYTE, ftype, "native", info);
	if (err)
		fail("set_view", err);
	t[1] = MPI_Wtime();
	err = MPI_File_write_all(fh, buf, (int)n, MPI_BYTE, &st);
	if (err)
		fail("write_all", err);
	t[2] = MPI_Wtime();
	err = MPI_File_seek(fh, 0, MPI_SEEK_SET);
	if (!err)
		err = MPI_File_read_all(fh, back, (int)n, MPI_BYTE, &st);
	if (err)
		fail("read_all", err);
	t[3] = MPI_Wtime();
	if (memcmp(buf, back, n)) {
		fprintf(stderr, "romio_cost (%s) rank %d: read_all differs from what write_all wrote\n",
			hint, rank);
		bad++;
	}
	printf("romio_cost (%s) rank %d: set_view %.3f s, write_all %.3f s, read_all %.3f s\n",
	       hint, rank, t[1] - t[0], t[2] - t[1], t[3] - t[2]);
	for (int i = 0; i < 3; i++) {
		if (t[i + 1] - t[i] < bound)
			continue;
		fprintf(stderr, "romio_cost (%s) rank %d: %s took %.3f s, more than %.3f s\n",
			hint, rank,
			i == 0 ? "set_view" : i == 1 ? "write_all" : "read_all",
			t[i + 1] - t[i], bound);
		bad++;
	}
	err = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
				MPI_INFO_NULL);
	if (err)
		fail("set_view of bytes", err);
	if (rank == 0)
		bad += check_file(fh, hint);
	MPI_File_close(&fh);
	MPI_Info_free(&info);
	MPI_Allreduce(&bad, &any, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < 3; i++)
		t[i] = t[i + 1] - t[i];
	MPI_Reduce(rank ? t : MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, 0,
		   MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_cost (%s): %s; slowest rank: set_view %.3f s, write_all %.3f s, read_all %.3f s\n",
		       hint, any ? "FAILED" : "ok", t[0], t[1], t[2]);
	MPI_Type_free(&ftype);
	for (int j = 0; j < 2; j++)
		MPI_Type_free(&sub[j]);
	free(buf);
	free(back);
	MPI_Finalize();
	return any ? 1 : 0;
}
