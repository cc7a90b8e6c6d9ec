// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_xfer.c -- whole files between MPI-IO on "clf:" and a local file,
 * for the tests that compare MPI-IO with another path to the same bytes
 * (test_mount_romio.sh: the FUSE mount; test_romio_suite.sh: the hints
 * file).
 *
 *   romio_xfer check HINT clf:PATH LOCAL [BLOCK]
 *       PATH, read through MPI-IO, has LOCAL's size and bytes
 *   romio_xfer write HINT clf:PATH LOCAL [BLOCK]
 *       write LOCAL's bytes to PATH (created anew) through MPI-IO
 *   romio_xfer overwrite HINT clf:PATH LOCAL [BLOCK]
 *       the same into the existing PATH (same file, same size)
 *   romio_xfer hint VALUE clf:PATH
 *       an open without hints reports use_romio_optimizations=VALUE
 *       (ROMIO_HINTS reached the file)
 *   romio_xfer icheck|iwrite HINT clf:PATH LOCAL [BLOCK]
 *       check and write with independent accesses (read, write)
 *   romio_xfer remap HINT clf:PATH
 *       each process writes 1 MiB of its mmap'd memory, unmaps it, maps
 *       new pages at the same address, writes their other bytes to the
 *       next MiB, and reads both back: a transport that keeps buffers
 *       registered must see the unmap (the second write carries the new
 *       pages' bytes, not the old ones')
 *
 * HINT is the use_romio_optimizations of the opens (true or false).
 * Accesses: each process takes blocks of BLOCK bytes (default 64 KiB +
 * 13) in turn through a resized contiguous filetype, collectively
 * (read_all, write_all; or read, write); the check also reads the whole file on rank 0
 * through the byte view and compares MPI_File_get_size.  Exits 0 when
 * every check passed.
 */
#include <mpi.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long BLOCK = 65536 + 13;
static int rank, nprocs, failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	fprintf(stderr, "romio_xfer rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool ok_mpi(int rc, const char *what)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return true;
	MPI_Error_string(rc, s, &len);
	s[len] = '\0';
	fail("%s: %s", what, s);
	return false;
}

static unsigned char *slurp(const char *path, long *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;

	if (!f) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	rewind(f);
	buf = malloc(*size + 1);
	if (fread(buf, 1, *size, f) != (size_t)*size) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	fclose(f);
	return buf;
}

/* This process's blocks of a file of size bytes, packed in order. */
static long my_bytes(long size)
{
	long n = 0;

	for (long at = (long)rank * BLOCK; at < size; at += (long)nprocs * BLOCK)
		n += size - at < BLOCK ? size - at : BLOCK;
	return n;
}

static void copy_mine(unsigned char *packed, unsigned char *file, long size,
		      bool to_file)
{
	long n = 0;

	for (long at = (long)rank * BLOCK; at < size; at += (long)nprocs * BLOCK) {
		long len = size - at < BLOCK ? size - at : BLOCK;

		if (to_file)
			memcpy(file + at, packed + n, len);
		else
			memcpy(packed + n, file + at, len);
		n += len;
	}
}

static MPI_Info hints(const char *hint)
{
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", hint);
	return info;
}

static void set_blocks_view(MPI_File fh)
{
	MPI_Datatype b, t;

	MPI_Type_contiguous((int)BLOCK, MPI_BYTE, &b);
	MPI_Type_create_resized(b, 0, (MPI_Aint)nprocs * BLOCK, &t);
	MPI_Type_commit(&t);
	ok_mpi(MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, t, "native",
				 MPI_INFO_NULL), "set_view");
	MPI_Type_free(&b);
	MPI_Type_free(&t);
}

static void check(const char *hint, const char *path, const char *local,
		  bool coll)
{
	long size, n, bad = -1;
	unsigned char *want = slurp(local, &size), *mine, *got;
	MPI_Info info = hints(hint);
	MPI_Offset fsize = -1;
	MPI_Status st;
	MPI_File fh;
	int c = -1;

	n = my_bytes(size);
	mine = malloc(n + 1);
	got = malloc(n + 1);
	copy_mine(mine, want, size, false);
	if (!ok_mpi(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh),
		    "open"))
		goto out;
	MPI_File_get_size(fh, &fsize);
	if (fsize != size)
		fail("%s: size %ld, want %ld", path, (long)fsize, size);
	set_blocks_view(fh);
	if (ok_mpi(coll ? MPI_File_read_all(fh, got, (int)n, MPI_BYTE, &st)
			: MPI_File_read(fh, got, (int)n, MPI_BYTE, &st), "read")) {
		MPI_Get_count(&st, MPI_BYTE, &c);
		if (c != n)
			fail("%s: read %d of %ld bytes", path, c, n);
		for (long x = 0; x < n && bad < 0; x++)
			if (got[x] != mine[x])
				bad = x;
		if (bad >= 0)
			fail("%s: this process's byte %ld of %ld differs", path, bad, n);
	}
	ok_mpi(MPI_File_close(&fh), "close");

	/* Rank 0: the whole file through the byte view. */
	if (rank == 0 &&
	    ok_mpi(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, info, &fh),
		   "open")) {
		unsigned char *all = malloc(size + 100);

		if (ok_mpi(MPI_File_read_at(fh, 0, all, (int)size + 100, MPI_BYTE, &st),
			   "read_at")) {
			MPI_Get_count(&st, MPI_BYTE, &c);
			if (c != size)
				fail("%s: read %d of %ld bytes", path, c, size);
			bad = -1;
			for (long x = 0; x < c && bad < 0; x++)
				if (all[x] != want[x])
					bad = x;
			if (bad >= 0)
				fail("%s: byte %ld differs (of %ld)", path, bad, size);
		}
		ok_mpi(MPI_File_close(&fh), "close");
		free(all);
	}
out:
	MPI_Info_free(&info);
	free(want);
	free(mine);
	free(got);
}

static void write_file(const char *hint, const char *path, const char *local,
		       bool fresh, bool coll)
{
	long size, n;
	unsigned char *data = slurp(local, &size), *mine;
	MPI_Info info = hints(hint);
	MPI_Status st;
	MPI_File fh;
	int c = -1;

	n = my_bytes(size);
	mine = malloc(n + 1);
	copy_mine(mine, data, size, false);
	if (fresh && rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (ok_mpi(MPI_File_open(MPI_COMM_WORLD, path,
				 fresh ? MPI_MODE_CREATE | MPI_MODE_WRONLY
				       : MPI_MODE_WRONLY, info, &fh),
		   "open")) {
		set_blocks_view(fh);
		if (ok_mpi(coll ? MPI_File_write_all(fh, mine, (int)n, MPI_BYTE, &st)
				: MPI_File_write(fh, mine, (int)n, MPI_BYTE, &st),
			   "write")) {
			MPI_Get_count(&st, MPI_BYTE, &c);
			if (c != n)
				fail("%s: write wrote %d of %ld bytes", path, c, n);
		}
		ok_mpi(MPI_File_close(&fh), "close");
	}
	MPI_Info_free(&info);
	free(data);
	free(mine);
}

static void hint_reached(const char *want, const char *path)
{
	char v[MPI_MAX_INFO_VAL + 1] = "";
	MPI_Info got;
	MPI_File fh;
	int flag = 0;

	if (!ok_mpi(MPI_File_open(MPI_COMM_WORLD, path,
				  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
		    "open"))
		return;
	MPI_File_get_info(fh, &got);
	MPI_Info_get(got, "use_romio_optimizations", MPI_MAX_INFO_VAL, v, &flag);
	if (!flag || strcmp(v, want))
		fail("%s: use_romio_optimizations is '%s', want '%s'", path, v, want);
	MPI_Info_free(&got);
	ok_mpi(MPI_File_close(&fh), "close");
}

#define MIB (1L << 20)

/* The bytes of process r's k-th MiB. */
static void fill(unsigned char *p, int r, int k)
{
	for (long x = 0; x < MIB; x++)
		p[x] = (unsigned char)(x * 7 + r * 31 + k * 101 + x / 4096);
}

static void remap(const char *hint, const char *path)
{
	MPI_Info info = hints(hint);
	MPI_Offset at = (MPI_Offset)rank * 2 * MIB;
	unsigned char *p, *q, *want = malloc(MIB), *got = malloc(MIB);
	MPI_Status st;
	MPI_File fh;

	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!ok_mpi(MPI_File_open(MPI_COMM_WORLD, path,
				  MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
		    "open"))
		goto out;
	p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		fail("mmap: %m");
		goto close;
	}
	fill(p, rank, 0);
	ok_mpi(MPI_File_write_at(fh, at, p, (int)MIB, MPI_BYTE, &st), "write_at");
	/* Other pages at the same address: MAP_FIXED_NOREPLACE fails rather
	 * than replace a mapping another thread made in between. */
	munmap(p, MIB);
	q = mmap(p, MIB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != p) {
		fail("mmap at %p again: %m", (void *)p);
		goto close;
	}
	fill(q, rank, 1);
	ok_mpi(MPI_File_write_at(fh, at + MIB, q, (int)MIB, MPI_BYTE, &st),
	       "write_at");
	munmap(q, MIB);
	for (int k = 0; k < 2; k++) {
		fill(want, rank, k);
		memset(got, 0, MIB);
		if (!ok_mpi(MPI_File_read_at(fh, at + k * MIB, got, (int)MIB,
					     MPI_BYTE, &st), "read_at"))
			continue;
		if (memcmp(got, want, MIB))
			fail("%s: MiB %lld differs%s", path,
			     (long long)(at / MIB + k),
			     k ? " (the unmapped pages' bytes were written?)" : "");
	}
close:
	ok_mpi(MPI_File_close(&fh), "close");
out:
	MPI_Info_free(&info);
	free(want);
	free(got);
}

int main(int argc, char **argv)
{
	int all = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (argc == 6 && strcmp(argv[1], "hint") && strcmp(argv[1], "remap")) {
		BLOCK = strtol(argv[5], NULL, 0);
		argc = 5;
	}
	if (BLOCK < 1)
		argc = 0;
	if (argc == 5 && !strcmp(argv[1], "check"))
		check(argv[2], argv[3], argv[4], true);
	else if (argc == 5 && !strcmp(argv[1], "icheck"))
		check(argv[2], argv[3], argv[4], false);
	else if (argc == 5 && !strcmp(argv[1], "write"))
		write_file(argv[2], argv[3], argv[4], true, true);
	else if (argc == 5 && !strcmp(argv[1], "iwrite"))
		write_file(argv[2], argv[3], argv[4], true, false);
	else if (argc == 5 && !strcmp(argv[1], "overwrite"))
		write_file(argv[2], argv[3], argv[4], false, true);
	else if (argc == 4 && !strcmp(argv[1], "remap"))
		remap(argv[2], argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "hint"))
		hint_reached(argv[2], argv[3]);
	else {
		if (rank == 0)
			fprintf(stderr, "usage: romio_xfer check|icheck|write|iwrite|overwrite "
				"HINT clf:PATH LOCAL [BLOCK]\n"
				"       romio_xfer hint VALUE clf:PATH\n"
				"       romio_xfer remap HINT clf:PATH\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_xfer %s %s %s: %s\n", argv[1], argv[2], argv[3],
		       all ? "FAILED" : "ok");
	MPI_Finalize();
	return all ? 1 : 0;
}
