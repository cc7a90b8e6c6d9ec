// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_life.c -- the driver's lifecycle around MPI_File_open and
 * MPI_Finalize, against a real clf instance ($CLF_CONFIG).  Run by
 * test_romio.sh under mpiexec.
 *
 * usage: romio_life TEST PATH [N]
 *   shutdown   as HDF5 does: an MPI_COMM_SELF attribute set before the
 *              first open, whose delete callback (run in MPI_Finalize,
 *              after the driver's own, which was set later) writes to a
 *              file the program left open, collectively, and closes it;
 *              a second file is left open for good
 *   check      read PATH back: every byte what shutdown wrote
 *   race       N rounds: every process opens the same new file alone
 *              (MPI_COMM_SELF, MPI_MODE_CREATE, striping hints) and writes
 *              its block at once; whoever made the file, its layout is
 *              the hinted one from the start: no open fails, every byte
 *              is where it was written, and every process's
 *              MPI_File_get_info reports the file's layout
 *   amode      files opened collectively with MPI_MODE_CREATE keep their
 *              access mode on every process, process 0 (which created
 *              them) included: a write-only one refuses reads, an
 *              appended one starts at its end (both file pointers), and
 *              MPI_MODE_DELETE_ON_CLOSE deletes it at a close that every
 *              process leaves (with ordered accesses first, as MPICH's
 *              rdwrord does)
 *
 * Exits 0 when every check passed on this process.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, checks, failures;

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

#define BLOCK 65536

static unsigned char byte_at(long long off, int salt)
{
	return (unsigned char)(off * 7 + off / 251 + salt);
}

static void fill(unsigned char *buf, long long off, int len, int salt)
{
	for (int i = 0; i < len; i++)
		buf[i] = byte_at(off + i, salt);
}

/* ------------------------------------------------------------------ */
/* shutdown / check                                                    */
/* ------------------------------------------------------------------ */

static MPI_File left_open;

/*
 * What HDF5's H5_mpi_delete_cb does for a file left open: flush (here a
 * collective write of the second half) and close.  Its failures are
 * counted like any check's.
 */
static int close_at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	unsigned char buf[BLOCK];
	long long off = (long long)(nprocs + rank) * BLOCK;

	fill(buf, off, BLOCK, 1);
	CHECK_MPI(MPI_File_write_at_all(left_open, off, buf, BLOCK, MPI_BYTE,
					MPI_STATUS_IGNORE),
		  "write_at_all in MPI_Finalize");
	CHECK_MPI(MPI_File_close(&left_open), "close in MPI_Finalize");
	return MPI_SUCCESS;
}

static void test_shutdown(const char *path)
{
	unsigned char buf[BLOCK];
	char other[1024];
	MPI_File forgotten;
	int keyval;

	/* Set before any clf open, as HDF5 sets its own at H5open. */
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_at_finalize, &keyval, NULL);
	MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);

	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
				MPI_INFO_NULL, &left_open), "open");
	MPI_File_set_errhandler(left_open, MPI_ERRORS_RETURN);
	fill(buf, (long long)rank * BLOCK, BLOCK, 1);
	CHECK_MPI(MPI_File_write_at_all(left_open, (long long)rank * BLOCK, buf, BLOCK,
					MPI_BYTE, MPI_STATUS_IGNORE), "write_at_all");

	/* And one that nobody closes. */
	snprintf(other, sizeof(other), "%s-forgotten", path);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR,
				MPI_INFO_NULL, &forgotten), "open a second file");
	CHECK_MPI(MPI_File_write_at_all(forgotten, rank, buf, 1, MPI_BYTE,
					MPI_STATUS_IGNORE), "write the second file");
}

static void test_check(const char *path)
{
	long long size = (long long)2 * nprocs * BLOCK;
	unsigned char *buf = malloc(size);
	MPI_Offset got;
	MPI_File fh;
	long long bad = -1;

	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
		  "open to check");
	CHECK_MPI(MPI_File_get_size(fh, &got), "get_size");
	CHECK(got == size, "size %lld, want %lld", (long long)got, size);
	memset(buf, 0, size);
	CHECK_MPI(MPI_File_read_at(fh, 0, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE),
		  "read");
	for (long long i = 0; i < size && bad < 0; i++)
		if (buf[i] != byte_at(i, 1))
			bad = i;
	CHECK(bad < 0, "byte %lld is %d, want %d", bad, bad < 0 ? 0 : buf[bad],
	      byte_at(bad, 1));
	CHECK_MPI(MPI_File_close(&fh), "close");
	free(buf);
}

/* ------------------------------------------------------------------ */
/* race                                                                */
/* ------------------------------------------------------------------ */

static void info_value(MPI_File fh, const char *key, char *value)
{
	MPI_Info info;
	int flag;

	MPI_File_get_info(fh, &info);
	MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
	if (!flag)
		strcpy(value, "(unset)");
	MPI_Info_free(&info);
}

static void race_round(const char *dir, int round)
{
	unsigned char buf[BLOCK], *all;
	char path[1024], factor[MPI_MAX_INFO_VAL + 1];
	long long size = (long long)nprocs * BLOCK, bad = -1;
	MPI_Info hints;
	MPI_File fh;
	int rc;

	snprintf(path, sizeof(path), "%s-%d", dir, round);
	MPI_Info_create(&hints);
	/* Unlike the test instance's default (4 iods, 64 KiB). */
	MPI_Info_set(hints, "striping_factor", "3");
	MPI_Info_set(hints, "striping_unit", "4096");

	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh);
	CHECK_MPI(rc, "independent open with MPI_MODE_CREATE and striping hints");
	if (rc == MPI_SUCCESS) {
		fill(buf, (long long)rank * BLOCK, BLOCK, round);
		CHECK_MPI(MPI_File_write_at(fh, (long long)rank * BLOCK, buf, BLOCK, MPI_BYTE,
					    MPI_STATUS_IGNORE), "write right after the open");
		info_value(fh, "striping_factor", factor);
		CHECK(!strcmp(factor, "3"), "round %d: get_info says striping_factor %s, "
		      "the file has 3", round, factor);
		CHECK_MPI(MPI_File_close(&fh), "close");
	}
	MPI_Info_free(&hints);
	MPI_Barrier(MPI_COMM_WORLD);

	/* Every byte where it was written, through a fresh open. */
	all = calloc(size, 1);
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	CHECK_MPI(rc, "open to read back");
	if (rc == MPI_SUCCESS) {
		CHECK_MPI(MPI_File_read_at_all(fh, 0, all, (int)size, MPI_BYTE,
					       MPI_STATUS_IGNORE), "read back");
		for (long long i = 0; i < size && bad < 0; i++)
			if (all[i] != byte_at(i, round))
				bad = i;
		CHECK(bad < 0, "round %d: byte %lld is %d, want %d", round, bad,
		      bad < 0 ? 0 : all[bad], byte_at(bad, round));
		info_value(fh, "striping_factor", factor);
		CHECK(!strcmp(factor, "3"), "round %d: the file has striping_factor %s, want 3",
		      round, factor);
		CHECK_MPI(MPI_File_close(&fh), "close after reading back");
	}
	free(all);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
}

/* ------------------------------------------------------------------ */
/* amode                                                               */
/* ------------------------------------------------------------------ */

static void amode_wronly(const char *path)
{
	MPI_File fh;
	char c = 0;
	int rc, class = MPI_SUCCESS;

	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
				MPI_INFO_NULL, &fh), "open write-only with MPI_MODE_CREATE");
	rc = MPI_File_read_at(fh, 0, &c, 1, MPI_BYTE, MPI_STATUS_IGNORE);
	MPI_Error_class(rc, &class);
	CHECK(class == MPI_ERR_ACCESS, "a read of a write-only file gave error class %d, "
	      "want MPI_ERR_ACCESS (%d)", class, MPI_ERR_ACCESS);
	CHECK_MPI(MPI_File_write_at(fh, rank, &c, 1, MPI_BYTE, MPI_STATUS_IGNORE),
		  "write a write-only file");
	CHECK_MPI(MPI_File_close(&fh), "close the write-only file");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
}

static void amode_append(const char *path)
{
	unsigned char buf[100];
	MPI_Offset pos = -1, shared = -1;
	MPI_File fh;

	if (rank == 0) {
		MPI_File_delete(path, MPI_INFO_NULL);
		fill(buf, 0, sizeof(buf), 3);
		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
					MPI_INFO_NULL, &fh), "open to write 100 bytes");
		CHECK_MPI(MPI_File_write(fh, buf, sizeof(buf), MPI_BYTE, MPI_STATUS_IGNORE),
			  "write 100 bytes");
		CHECK_MPI(MPI_File_close(&fh), "close after 100 bytes");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_APPEND,
				MPI_INFO_NULL, &fh), "open to append with MPI_MODE_CREATE");
	CHECK_MPI(MPI_File_get_position(fh, &pos), "get_position");
	CHECK(pos == 100, "MPI_MODE_APPEND: the individual pointer is at %lld, want 100",
	      (long long)pos);
	CHECK_MPI(MPI_File_get_position_shared(fh, &shared), "get_position_shared");
	CHECK(shared == 100, "MPI_MODE_APPEND: the shared pointer is at %lld, want 100",
	      (long long)shared);
	CHECK_MPI(MPI_File_close(&fh), "close the appended file");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
}

/* A process that skipped the close's barrier hangs the others here. */
static void amode_delete_on_close(const char *path)
{
	MPI_File fh;
	int in = rank, out = -1, rc, class = MPI_SUCCESS;

	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
				MPI_INFO_NULL, &fh), "open with MPI_MODE_DELETE_ON_CLOSE");
	CHECK_MPI(MPI_File_write_ordered(fh, &in, 1, MPI_INT, MPI_STATUS_IGNORE),
		  "write_ordered");
	CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), "seek_shared");
	CHECK_MPI(MPI_File_read_ordered(fh, &out, 1, MPI_INT, MPI_STATUS_IGNORE),
		  "read_ordered");
	CHECK(out == rank, "read_ordered read %d, want %d", out, rank);
	CHECK_MPI(MPI_File_close(&fh), "close with MPI_MODE_DELETE_ON_CLOSE");
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	MPI_Error_class(rc, &class);
	CHECK(class == MPI_ERR_NO_SUCH_FILE, "after a close with MPI_MODE_DELETE_ON_CLOSE, "
	      "an open gave error class %d, want MPI_ERR_NO_SUCH_FILE (%d)", class,
	      MPI_ERR_NO_SUCH_FILE);
	if (rc == MPI_SUCCESS)
		MPI_File_close(&fh);
}

static void test_amode(const char *dir)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s-wronly", dir);
	amode_wronly(path);
	snprintf(path, sizeof(path), "%s-append", dir);
	amode_append(path);
	snprintf(path, sizeof(path), "%s-doc", dir);
	amode_delete_on_close(path);
}

int main(int argc, char **argv)
{
	const char *test = argc > 1 ? argv[1] : "", *path = argc > 2 ? argv[2] : "";
	int n = argc > 3 ? atoi(argv[3]) : 40;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (!strcmp(test, "shutdown")) {
		test_shutdown(path);
	} else if (!strcmp(test, "check")) {
		test_check(path);
	} else if (!strcmp(test, "race")) {
		for (int i = 0; i < n; i++)
			race_round(path, i);
	} else if (!strcmp(test, "amode")) {
		test_amode(path);
	} else {
		fprintf(stderr, "usage: romio_life shutdown|check|race|amode PATH [N]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Finalize();
	/* After MPI_Finalize: the shutdown callback's checks count too. */
	if (failures == 0 && rank == 0)
		printf("romio_life %s: %d checks passed\n", test, checks);
	return failures ? 1 : 0;
}
