// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_coop.c -- the cooperative cache (hint clf_coop_cache) keeps
 * MPI-IO's consistency rules: every byte read is the one a model of the
 * file (the same accesses applied to an array, by the views' typemaps)
 * holds.
 *
 *   romio_coop PATH CACHE [PATHWAY]
 *        (2 or more processes; CACHE true|false; PATHWAY clf (default):
 *        use_romio_optimizations=false, clf's collective I/O behind the
 *        cache; realms: use_romio_optimizations=true, every process an
 *        aggregator, ROMIO's two-phase I/O in layout-aligned file realms)
 *
 * Malformed values of the hints fail the open.  On PATH-a, opened with
 * clf_coop_cache=CACHE (which the file's info reports):
 *   1. interleaved views (blocks of 100 bytes, one per process in turn):
 *      two write_at_all of disjoint ranges, then read_at_all of the next
 *      process's part and of one's own, spanning both writes;
 *   2. MPI_File_get_size sees the kept bytes' end;
 *   3. bytes view: process 1 writes a range, then process 0 writes one
 *      overlapping it: the later bytes win, in a read_all and after the
 *      close; a process overwrites its own bytes;
 *   4. a read_all spanning bytes already at the iods and kept ones;
 *   5. nonblocking iwrite_at_all / iread_at_all, strided memory types;
 *   6. an independent read of one's own kept bytes, then more
 *      collective accesses; an independent write over one's own kept
 *      bytes wins over them;
 * then, reopened with the cache off, every byte (read_all and
 * independent reads).  On PATH-b, with clf_coop_cache=CACHE and a bound
 * of 4 KiB per process: writes over the bound, reads between them,
 * MPI_File_sync, and a second open of the file (no cache) that must see
 * everything; a write larger than the bound (written through the path
 * behind the cache; with realms, the file then reports its realm
 * period); then atomic mode makes the kept bytes visible to an
 * independent read of another process.  On PATH-c, opened without the
 * cache: MPI_File_set_info(clf_coop_cache=true) turns it on (the info
 * says so, and a write is kept: another open does not see it before a
 * sync), reads go through it; set_info(clf_coop_cache=false) turns it
 * off, and every byte is then at the iods for another open, with no sync.
 *
 * CLF_TEST_COOP_FAULT (noflush, noserve, noconflict, nooff) breaks the driver
 * on purpose: test_romio.sh checks that each one makes this fail.
 * Exit status 0, or 1 with a message.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FSZ (1 << 20)
#define BLK 100

static int rank, nprocs;
static uint8_t model[FSZ];
static int64_t model_end;
static const char *cache;
static int realms;		/* PATHWAY realms */

/*
 * MPI_Abort after a pause: hydra tears the job down at the abort, and a
 * line of stderr still on its way through the proxy is lost with it (the
 * fault checks of test_romio.sh look for that line).
 */
static void die(int code)
{
	fflush(stderr);
	usleep(200000);
	MPI_Abort(MPI_COMM_WORLD, code);
}

static void fail(const char *what, int err)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (err != MPI_SUCCESS)
		MPI_Error_string(err, msg, &len);
	msg[len] = '\0';
	fprintf(stderr, "romio_coop (rank %d, cache %s): %s: %s\n", rank, cache,
		what, msg);
	die(1);
}

static void ok(int err, const char *what)
{
	if (err != MPI_SUCCESS)
		fail(what, err);
}

static uint8_t val(int step, int r, int64_t i)
{
	return (uint8_t)(step * 31 + r * 7 + i * 13 + (i >> 8) + 1);
}

/* File byte of view byte v of process r's interleaved view at base. */
static int64_t inter_off(int r, int64_t base, int64_t v)
{
	return base + (int64_t)r * BLK + v / BLK * nprocs * BLK + v % BLK;
}

static void model_put(int64_t off, uint8_t b)
{
	if (off >= FSZ) {
		fprintf(stderr, "romio_coop: model too small\n");
		die(2);
	}
	model[off] = b;
	if (off + 1 > model_end)
		model_end = off + 1;
}

static MPI_File open_file(const char *path, const char *coop,
			  const char *size, int create)
{
	MPI_Info info;
	MPI_File fh;
	int err;

	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_coop_cache", coop);
	MPI_Info_set(info, "use_romio_optimizations", realms ? "true" : "false");
	if (realms) {
		MPI_Info_set(info, "cb_config_list", "*:*");
		MPI_Info_set(info, "romio_cb_write", "enable");
		MPI_Info_set(info, "romio_cb_read", "enable");
	}
	if (size)
		MPI_Info_set(info, "clf_coop_cache_size", size);
	err = MPI_File_open(MPI_COMM_WORLD, path,
			    MPI_MODE_RDWR | (create ? MPI_MODE_CREATE : 0),
			    info, &fh);
	MPI_Info_free(&info);
	ok(err, "open");
	return fh;
}

/* The file's info says key=want (want "!0": anything but 0). */
static void info_is(MPI_File fh, const char *key, const char *want)
{
	char value[MPI_MAX_INFO_VAL + 1] = "";
	MPI_Info info;
	int flag = 0;

	ok(MPI_File_get_info(fh, &info), "get_info");
	MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
	MPI_Info_free(&info);
	if (!flag || (strcmp(want, "!0") ? strcmp(value, want) : !strcmp(value, "0"))) {
		fprintf(stderr, "romio_coop (rank %d): %s is '%s', not %s\n", rank,
			key, flag ? value : "(none)", want);
		die(1);
	}
}

static void in_force(MPI_File fh, const char *want)
{
	info_is(fh, "clf_coop_cache", want);
}

/* MPI_File_set_info(clf_coop_cache=value) */
static void set_cache(MPI_File fh, const char *value)
{
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "clf_coop_cache", value);
	ok(MPI_File_set_info(fh, info), "set_info clf_coop_cache");
	MPI_Info_free(&info);
}

/* A malformed value fails the open, on every process. */
static void bad_hint(const char *path, const char *key, const char *value)
{
	MPI_Info info;
	MPI_File fh;
	int err;

	MPI_Info_create(&info);
	MPI_Info_set(info, key, value);
	err = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
			    info, &fh);
	MPI_Info_free(&info);
	if (err == MPI_SUCCESS) {
		fprintf(stderr, "romio_coop (rank %d): %s='%s' accepted\n", rank,
			key, value);
		die(1);
	}
}

static void inter_view(MPI_File fh, int r, int64_t base)
{
	MPI_Datatype blk, ft;

	MPI_Type_contiguous(BLK, MPI_BYTE, &blk);
	MPI_Type_create_resized(blk, 0, (MPI_Aint)nprocs * BLK, &ft);
	MPI_Type_commit(&ft);
	ok(MPI_File_set_view(fh, base + (MPI_Offset)r * BLK, MPI_BYTE, ft,
			     "native", MPI_INFO_NULL), "set_view");
	MPI_Type_free(&ft);
	MPI_Type_free(&blk);
}

static void byte_view(MPI_File fh)
{
	ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
	   "set_view bytes");
}

/* Every process writes view bytes [v, v + len[r]) of its interleaved
 * view; the model takes everyone's. */
static void inter_write(MPI_File fh, int64_t base, int64_t v, int len, int step)
{
	uint8_t *b = malloc(len + 1);

	for (int i = 0; i < len; i++)
		b[i] = val(step, rank, v + i);
	ok(MPI_File_write_at_all(fh, v, b, len, MPI_BYTE, MPI_STATUS_IGNORE),
	   "write_at_all interleaved");
	for (int r = 0; r < nprocs; r++)
		for (int64_t i = 0; i < len; i++)
			model_put(inter_off(r, base, v + i), val(step, r, v + i));
	free(b);
}

static void compare(const uint8_t *b, const int64_t *offs, int64_t n,
		    const char *what)
{
	for (int64_t i = 0; i < n; i++) {
		uint8_t want = offs[i] < model_end ? model[offs[i]] : 0;

		if (b[i] != want) {
			fprintf(stderr, "romio_coop (rank %d, cache %s): %s: file "
				"byte %lld is %d, not %d\n", rank, cache, what,
				(long long)offs[i], b[i], want);
			die(1);
		}
	}
}

/* read_at_all of view bytes [v, v + len) of process who's view. */
static void inter_check(MPI_File fh, int who, int64_t base, int64_t v, int len,
			const char *what)
{
	uint8_t *b = malloc(len + 1);
	int64_t *offs = malloc((len + 1) * sizeof(*offs));

	inter_view(fh, who, base);
	memset(b, 0xee, len);
	ok(MPI_File_read_at_all(fh, v, b, len, MPI_BYTE, MPI_STATUS_IGNORE),
	   "read_at_all interleaved");
	for (int i = 0; i < len; i++)
		offs[i] = inter_off(who, base, v + i);
	compare(b, offs, len, what);
	free(offs);
	free(b);
}

/* Bytes [off, off + len) through the byte view, collectively or not. */
static void bytes_check(MPI_File fh, int64_t off, int len, int coll,
			const char *what)
{
	uint8_t *b = malloc(len + 1);
	int64_t *offs = malloc((len + 1) * sizeof(*offs));
	MPI_Status st;
	int got = 0;

	memset(b, 0xee, len);
	if (coll)
		ok(MPI_File_read_at_all(fh, off, b, len, MPI_BYTE, &st), "read_at_all");
	else
		ok(MPI_File_read_at(fh, off, b, len, MPI_BYTE, &st), "read_at");
	MPI_Get_count(&st, MPI_BYTE, &got);
	if (off + len <= model_end && got != len) {
		fprintf(stderr, "romio_coop (rank %d, cache %s): %s: read %d of %d "
			"bytes\n", rank, cache, what, got, len);
		die(1);
	}
	for (int i = 0; i < len; i++)
		offs[i] = off + i;
	compare(b, offs, len, what);
	free(offs);
	free(b);
}

/* Process w alone writes len bytes of value step at off (the others
 * write nothing in the same write_at_all). */
static void bytes_write(MPI_File fh, int w, int64_t off, int len, int step)
{
	uint8_t *b = malloc(len + 1);

	for (int i = 0; i < len; i++)
		b[i] = val(step, w, off + i);
	ok(MPI_File_write_at_all(fh, off, b, rank == w ? len : 0, MPI_BYTE,
				 MPI_STATUS_IGNORE), "write_at_all bytes");
	for (int i = 0; i < len; i++)
		model_put(off + i, val(step, w, off + i));
	free(b);
}

static void check_size(MPI_File fh, const char *what)
{
	MPI_Offset size;

	ok(MPI_File_get_size(fh, &size), "get_size");
	if (size != model_end) {
		fprintf(stderr, "romio_coop (rank %d, cache %s): %s: size %lld, not "
			"%lld\n", rank, cache, what, (long long)size,
			(long long)model_end);
		die(1);
	}
}

/* Nonblocking accesses with a strided memory type (every other byte). */
static void strided_nonblocking(MPI_File fh, int64_t base)
{
	int n = 700;
	uint8_t *b = calloc(2 * n, 1);
	int64_t *offs = malloc(n * sizeof(*offs));
	MPI_Datatype mt;
	MPI_Request req;

	MPI_Type_vector(n, 1, 2, MPI_BYTE, &mt);
	MPI_Type_commit(&mt);
	inter_view(fh, rank, base);
	for (int i = 0; i < n; i++)
		b[2 * i] = val(5, rank, i);
	ok(MPI_File_iwrite_at_all(fh, 0, b, 1, mt, &req), "iwrite_at_all");
	ok(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait iwrite");
	for (int r = 0; r < nprocs; r++)
		for (int i = 0; i < n; i++)
			model_put(inter_off(r, base, i), val(5, r, i));
	/* The next process's part, into every other byte. */
	inter_view(fh, (rank + 1) % nprocs, base);
	memset(b, 0, 2 * n);
	ok(MPI_File_iread_at_all(fh, 0, b, 1, mt, &req), "iread_at_all");
	ok(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait iread");
	for (int i = 0; i < n; i++) {
		offs[i] = inter_off((rank + 1) % nprocs, base, i);
		b[i] = b[2 * i];
	}
	compare(b, offs, n, "5. iread_at_all, strided memory");
	MPI_Type_free(&mt);
	free(offs);
	free(b);
}

static void file_a(const char *name)
{
	MPI_File fh;
	int next = (rank + 1) % nprocs;

	bad_hint(name, "clf_coop_cache", "yes");
	bad_hint(name, "clf_coop_cache_size", "12q");
	fh = open_file(name, cache, NULL, 1);
	in_force(fh, cache);
	ok(MPI_File_set_size(fh, 0), "set_size");

	/* 1. */
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 0, 5000, 1);
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 5000, 4000, 2);
	inter_check(fh, next, 0, 0, 9000, "1. the next process's part");
	inter_check(fh, rank, 0, 2000, 5000, "1. one's own part");

	/* 2. */
	check_size(fh, "2. size with kept bytes");

	/* 3. Later bytes win, across processes and within one. */
	byte_view(fh);
	bytes_write(fh, 1 % nprocs, 40000, 1000, 3);
	bytes_write(fh, 0, 40500, 1000, 4);
	bytes_check(fh, 40000, 1500, 1, "3. a later overlapping write");
	bytes_write(fh, 0, 43000, 100, 6);
	bytes_write(fh, 0, 43050, 100, 7);
	bytes_check(fh, 43000, 150, 1, "3. a process's own overwrite");

	/* 4. Some at the iods (flushed by 3.), some kept. */
	bytes_write(fh, nprocs - 1, 41200, 2000, 8);
	bytes_check(fh, 0, (int)model_end, 1, "4. the whole file");

	/* 5. */
	strided_nonblocking(fh, 60000);

	/* 6. An independent read of one's own kept bytes. */
	inter_view(fh, rank, 80000);
	inter_write(fh, 80000, 0, 3000, 9);
	byte_view(fh);
	bytes_check(fh, inter_off(rank, 80000, 0), BLK, 0,
		    "6. an independent read of one's kept bytes");
	MPI_Barrier(MPI_COMM_WORLD);
	bytes_write(fh, 0, 90000, 500, 10);
	bytes_check(fh, 80000, 10500, 1, "6. after an independent access");
	bytes_write(fh, 0, 95000, 400, 11);
	if (rank == 0) {
		uint8_t b[100];

		for (int i = 0; i < 100; i++)
			b[i] = val(12, 0, 95100 + i);
		ok(MPI_File_write_at(fh, 95100, b, 100, MPI_BYTE, MPI_STATUS_IGNORE),
		   "write_at");
	}
	for (int i = 0; i < 100; i++)
		model_put(95100 + i, val(12, 0, 95100 + i));
	MPI_Barrier(MPI_COMM_WORLD);
	bytes_check(fh, 95000, 400, 1, "6. an independent write over kept bytes");
	check_size(fh, "6. size");
	ok(MPI_File_close(&fh), "close");

	/* Reopened without the cache: every byte, both ways. */
	fh = open_file(name, "false", NULL, 0);
	in_force(fh, "false");
	check_size(fh, "reopened: size");
	bytes_check(fh, 0, (int)model_end, 1, "reopened: read_all");
	bytes_check(fh, 0, (int)model_end, 0, "reopened: read");
	ok(MPI_File_close(&fh), "close reopened");
}

static void file_b(const char *name)
{
	MPI_File fh, other;
	int next = (rank + 1) % nprocs;

	memset(model, 0, sizeof(model));
	model_end = 0;
	fh = open_file(name, cache, "4k", 1);
	ok(MPI_File_set_size(fh, 0), "set_size b");
	for (int s = 0; s < 4; s++) {
		inter_view(fh, rank, 0);
		inter_write(fh, 0, (int64_t)s * 3000, 3000, 20 + s);
		inter_check(fh, next, 0, 0, (s + 1) * 3000, "b. over the bound");
	}
	ok(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	other = open_file(name, "false", NULL, 0);
	ok(MPI_File_sync(other), "sync other");
	bytes_check(other, 0, (int)model_end, 1, "b. another open after sync");

	/* Larger than the bound: through the path behind the cache. */
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 14000, 5000, 25);
	inter_check(fh, next, 0, 0, 19000, "b. a write larger than the bound");
	bytes_check(other, 0, (int)model_end, 1, "b. another open, larger write");
	if (realms)
		info_is(fh, "clf_realm_period", "!0");

	/* Kept bytes again; atomic mode shows them to another process. */
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 12000, 1000, 30);
	ok(MPI_File_set_atomicity(fh, 1), "set_atomicity");
	MPI_Barrier(MPI_COMM_WORLD);
	byte_view(fh);
	bytes_check(fh, inter_off(next, 0, 12000), BLK, 0,
		    "b. atomic mode: another process's bytes");
	bytes_check(other, 0, (int)model_end, 0, "b. atomic mode: another open");
	ok(MPI_File_close(&other), "close other");
	ok(MPI_File_close(&fh), "close b");
}

static void file_c(const char *name)
{
	MPI_File fh, other;
	int next = (rank + 1) % nprocs;

	memset(model, 0, sizeof(model));
	model_end = 0;
	fh = open_file(name, "false", NULL, 1);
	ok(MPI_File_set_size(fh, 0), "set_size c");
	other = open_file(name, "false", NULL, 0);
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 0, 2000, 40);
	in_force(fh, "false");

	/* On: kept from now on, served to the collective reads. */
	set_cache(fh, "true");
	in_force(fh, "true");
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 2000, 3000, 41);
	inter_check(fh, next, 0, 0, 5000, "c. read through the cache turned on");
	MPI_Barrier(MPI_COMM_WORLD);
	{
		/* Not at the iods yet: the cache keeps them. */
		uint8_t b[BLK];
		int64_t off = inter_off(rank, 0, 2000);
		int same = 0;

		ok(MPI_File_read_at(other, off, b, BLK, MPI_BYTE, MPI_STATUS_IGNORE),
		   "read_at other");
		for (int i = 0; i < BLK; i++)
			same += b[i] == model[off + i];
		if (same == BLK) {
			fprintf(stderr, "romio_coop (rank %d): c. set_info(clf_coop_cache=true): "
				"a write reached the iods before a sync\n", rank);
			die(1);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* Off: what was kept is at the iods, no sync needed. */
	set_cache(fh, "false");
	in_force(fh, "false");
	bytes_check(other, 0, (int)model_end, 1, "c. another open after the cache went off");
	inter_view(fh, rank, 0);
	inter_write(fh, 0, 5000, 1000, 42);
	inter_check(fh, next, 0, 0, 6000, "c. after the cache went off");
	bytes_check(other, 0, (int)model_end, 0, "c. another open, a write after");
	ok(MPI_File_close(&other), "close other c");
	ok(MPI_File_close(&fh), "close c");
}

int main(int argc, char **argv)
{
	char name[4096];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc < 3 || argc > 4 || nprocs < 2 ||
	    (argc == 4 && strcmp(argv[3], "clf") && strcmp(argv[3], "realms"))) {
		fprintf(stderr, "usage: mpiexec -n 2.. romio_coop PATH true|false [clf|realms]\n");
		die(2);
	}
	cache = argv[2];
	realms = argc == 4 && !strcmp(argv[3], "realms");
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	snprintf(name, sizeof(name), "%s-a", argv[1]);
	file_a(name);
	snprintf(name, sizeof(name), "%s-b", argv[1]);
	file_b(name);
	snprintf(name, sizeof(name), "%s-c", argv[1]);
	file_c(name);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_coop: %d processes, clf_coop_cache=%s, %s: every byte as "
		       "the model says\n", nprocs, cache, realms ? "realms" : "clf");
	MPI_Finalize();
	return 0;
}
