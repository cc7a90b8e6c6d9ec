// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_cache.c -- the hint clf_cache=DIR (romio-clf/ad_clf/ad_clf_cache.c),
 * for test_remote_names.sh: a remote clf file read and written through a
 * copy in DIR, written back at the close.
 *
 *   romio_cache FILE DIR
 *
 * FILE must not exist; DIR must be an empty directory.  With 2 or more
 * processes:
 *   - FILE created with clf_cache=DIR: each process writes its own
 *     5 MiB + 4321 bytes (MPI_File_write_at_all), then, through a vector
 *     view, every other 1000 bytes of a region after them (write_all);
 *   - before the close, FILE opened without the hint (the remote file
 *     itself) is still empty, and DIR holds one copy; after the close DIR
 *     is empty and the remote file has every byte (a second reader sees
 *     them);
 *   - opened read-only with the hint: every process reads the whole file
 *     back, and through the vector view (read_all);
 *   - two writers through two caches at once (process 0 alone): the last
 *     close's copy wins whole, the first's bytes are lost, as
 *     ad_clf_cache.c documents;
 *   - a DIR that does not exist fails the open, naming clf_cache.
 * Exits 0 when every check passed.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PART ((5 << 20) + 4321)
#define BLOCK 1000
#define NBLOCKS 100

static int rank, nprocs, failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "romio_cache rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	failures++;
}

static void ok(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;

	if (err == MPI_SUCCESS)
		return;
	MPI_Error_string(err, msg, &len);
	fail("%s: %s", what, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static char byte_at(MPI_Offset o)
{
	return (char)(o * 7 + (o >> 13) + 1);
}

static void fill(char *b, MPI_Offset at, MPI_Offset n)
{
	for (MPI_Offset i = 0; i < n; i++)
		b[i] = byte_at(at + i);
}

static void expect(const char *b, MPI_Offset at, MPI_Offset n, const char *what)
{
	for (MPI_Offset i = 0; i < n; i++)
		if (b[i] != byte_at(at + i)) {
			fail("%s: byte %lld differs", what, (long long)(at + i));
			return;
		}
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d) {
		fail("cannot list %s", dir);
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* The remote file's size, opened by this process without the hint. */
static MPI_Offset remote_size(const char *file)
{
	MPI_Offset size;
	MPI_File fh;

	ok(MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
	   "open without the hint");
	ok(MPI_File_get_size(fh, &size), "get_size");
	ok(MPI_File_close(&fh), "close");
	return size;
}

/* The view: every other BLOCK bytes from disp, this process's first. */
static void vector_view(MPI_File fh, MPI_Offset disp)
{
	MPI_Datatype vec, ftype;

	MPI_Type_vector(NBLOCKS, BLOCK, BLOCK * nprocs, MPI_BYTE, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)NBLOCKS * BLOCK * nprocs, &ftype);
	MPI_Type_commit(&ftype);
	ok(MPI_File_set_view(fh, disp + (MPI_Offset)rank * BLOCK, MPI_BYTE, ftype, "native",
			     MPI_INFO_NULL), "set_view");
	MPI_Type_free(&vec);
	MPI_Type_free(&ftype);
}

/* This process's bytes of the vector view, in view order, from b. */
static void view_bytes(char *b, MPI_Offset disp, int fill_them)
{
	for (int k = 0; k < NBLOCKS; k++) {
		MPI_Offset at = disp + ((MPI_Offset)k * nprocs + rank) * BLOCK;

		if (fill_them)
			fill(b + k * BLOCK, at, BLOCK);
		else
			expect(b + k * BLOCK, at, BLOCK, "the vector view's bytes");
	}
}

static void conflicting_writers(const char *file, const char *dir)
{
	char a[4096], b[4096], r[4096];
	MPI_File fa, fb;
	MPI_Info info;
	MPI_Status st;

	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_cache", dir);
	ok(MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_RDWR, info, &fa), "open A");
	ok(MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_RDWR, info, &fb), "open B");
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	ok(MPI_File_write_at(fa, 0, a, sizeof(a), MPI_BYTE, &st), "A writes");
	ok(MPI_File_write_at(fb, 8192, b, sizeof(b), MPI_BYTE, &st), "B writes");
	ok(MPI_File_close(&fa), "close A");
	ok(MPI_File_close(&fb), "close B");
	MPI_Info_free(&info);

	ok(MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_RDONLY, MPI_INFO_NULL, &fa),
	   "open without the hint");
	ok(MPI_File_read_at(fa, 0, r, sizeof(r), MPI_BYTE, &st), "read");
	expect(r, 0, sizeof(r), "A's bytes, lost to B's later close");
	ok(MPI_File_read_at(fa, 8192, r, sizeof(r), MPI_BYTE, &st), "read");
	if (memcmp(r, b, sizeof(b)))
		fail("B's bytes, the last close's, are not in the file");
	ok(MPI_File_close(&fa), "close");
}

static void missing_dir(const char *file)
{
	char msg[MPI_MAX_ERROR_STRING];
	MPI_Info info;
	MPI_File fh;
	int err, len;

	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_cache", "/nonexistent/clf-cache-dir");
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	err = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY, info, &fh);
	MPI_Info_free(&info);
	if (err == MPI_SUCCESS) {
		fail("an open with clf_cache=/nonexistent/... succeeded");
		MPI_File_close(&fh);
		return;
	}
	MPI_Error_string(err, msg, &len);
	if (!strstr(msg, "clf_cache"))
		fail("the open's error does not name clf_cache: %s", msg);
}

int main(int argc, char **argv)
{
	MPI_Offset at, vdisp, size;
	MPI_Status st;
	MPI_Info info;
	MPI_File fh;
	char *w, *r, *vw;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 3) {
		fprintf(stderr, "usage: romio_cache FILE DIR\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	at = (MPI_Offset)rank * PART;
	vdisp = (MPI_Offset)nprocs * PART;
	size = vdisp + (MPI_Offset)NBLOCKS * BLOCK * nprocs;
	w = malloc(PART);
	vw = malloc(NBLOCKS * BLOCK);
	r = malloc(size);
	fill(w, at, PART);
	view_bytes(vw, vdisp, 1);

	/* Written through the cache. */
	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_cache", argv[2]);
	ok(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
	   "open with clf_cache");
	ok(MPI_File_write_at_all(fh, at, w, PART, MPI_BYTE, &st), "write_at_all");
	vector_view(fh, vdisp);
	ok(MPI_File_write_all(fh, vw, NBLOCKS * BLOCK, MPI_BYTE, &st), "write_all (view)");
	ok(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		if (remote_size(argv[1]) != 0)
			fail("the remote file has bytes before the close: written through, not back");
		if (entries(argv[2]) != 1)
			fail("%s holds %d entries while the file is open, not its copy alone",
			     argv[2], entries(argv[2]));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	ok(MPI_File_close(&fh), "close (write-back)");

	/* A second reader: the remote file itself. */
	if (rank == 0) {
		if (entries(argv[2]) != 0)
			fail("%s still holds the copy after the close", argv[2]);
		if (remote_size(argv[1]) != size)
			fail("the remote file has %lld bytes after the close, not %lld",
			     (long long)remote_size(argv[1]), (long long)size);
		ok(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
		   "open without the hint");
		ok(MPI_File_read_at(fh, 0, r, size, MPI_BYTE, &st), "read_at");
		expect(r, 0, vdisp, "the remote file's parts");
		for (int p = 0; p < nprocs * NBLOCKS; p++)
			expect(r + vdisp + (MPI_Offset)p * BLOCK, vdisp + (MPI_Offset)p * BLOCK, BLOCK,
			       "the remote file's vector region");
		ok(MPI_File_close(&fh), "close");
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* Read through the cache, whole and through the view. */
	ok(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, info, &fh),
	   "open read-only with clf_cache");
	memset(r, 0, size);
	ok(MPI_File_read_at(fh, 0, r, size, MPI_BYTE, &st), "read_at (cache)");
	expect(r, 0, size, "the bytes read through the cache");
	vector_view(fh, vdisp);
	memset(vw, 0, NBLOCKS * BLOCK);
	ok(MPI_File_read_all(fh, vw, NBLOCKS * BLOCK, MPI_BYTE, &st), "read_all (view, cache)");
	view_bytes(vw, vdisp, 0);
	ok(MPI_File_close(&fh), "close");
	MPI_Info_free(&info);

	if (rank == 0)
		conflicting_writers(argv[1], argv[2]);
	MPI_Barrier(MPI_COMM_WORLD);
	missing_dir(argv[1]);
	if (rank == 0 && entries(argv[2]) != 0)
		fail("%s holds copies at the end", argv[2]);

	MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_cache: %s (%d processes, %lld bytes through %s)\n",
		       failures ? "FAILED" : "written back at the close, read back, last close wins",
		       nprocs, (long long)size, argv[2]);
	free(w);
	free(vw);
	free(r);
	MPI_Finalize();
	return failures ? 1 : 0;
}
