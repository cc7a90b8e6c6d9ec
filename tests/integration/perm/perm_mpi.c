// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perm_mpi.c -- MPI-IO open, write and read of a "clf:" file as whoever
 * runs it (test_perm.sh runs it with mpiexec as the test's users).
 *
 * usage: perm_mpi read|write|create PATH
 *   read    MPI_File_open MPI_MODE_RDONLY, MPI_File_read_all of 4 bytes
 *   write   MPI_File_open MPI_MODE_WRONLY, MPI_File_write_all of 4 bytes
 *   create  the same as write, with MPI_MODE_CREATE
 *
 * Rank 0 prints "OK" or "ERR <MPI error class name>: <message>"; exits
 * 0 or 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *class_name(int cls)
{
	switch (cls) {
	case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
	case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
	case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS";
	case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY";
	case MPI_ERR_IO: return "MPI_ERR_IO";
	default: return "MPI_ERR_OTHER";
	}
}

int main(int argc, char **argv)
{
	char buf[4] = "perm", msg[MPI_MAX_ERROR_STRING];
	int rank, rc, cls, len, amode;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: perm_mpi read|write|create PATH\n");
		MPI_Finalize();
		return 2;
	}
	amode = !strcmp(argv[1], "read") ? MPI_MODE_RDONLY : MPI_MODE_WRONLY;
	if (!strcmp(argv[1], "create"))
		amode |= MPI_MODE_CREATE;
	rc = MPI_File_open(MPI_COMM_WORLD, argv[2], amode, MPI_INFO_NULL, &fh);
	if (rc == MPI_SUCCESS) {
		if (amode & MPI_MODE_RDONLY)
			rc = MPI_File_read_all(fh, buf, 4, MPI_BYTE,
					       MPI_STATUS_IGNORE);
		else
			rc = MPI_File_write_all(fh, buf, 4, MPI_BYTE,
						MPI_STATUS_IGNORE);
		MPI_File_close(&fh);
	}
	if (rank == 0) {
		if (rc == MPI_SUCCESS) {
			printf("OK\n");
		} else {
			MPI_Error_class(rc, &cls);
			MPI_Error_string(rc, msg, &len);
			printf("ERR %s: %s\n", class_name(cls), msg);
		}
	}
	MPI_Finalize();
	return rc == MPI_SUCCESS ? 0 : 1;
}
