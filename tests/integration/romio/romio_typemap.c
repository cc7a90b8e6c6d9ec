// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_typemap.c -- on clf's native path (use_romio_optimizations=false),
 * on ROMIO's path (=true) and on a local file through ROMIO's ufs: driver,
 * every access call puts the bytes where MPI's typemap of the filetype
 * says, for the filetypes on which ROMIO 4.0.2's own flattening went
 * wrong (the ROMIO we ship flattens by the typemap, ad_clf_flatten.c):
 * lower bounds that are not 0 (resized, resized of resized), bounds that
 * do not hold the data (a lower bound above the first byte, below the
 * first byte, below 0), zero-length blocks, negative displacements inside
 * a type whose lower bound is still >= 0, subarray and darray inside
 * another constructor.
 *
 * The oracle is MPI itself, not ROMIO: packing a buffer whose bytes are
 * labelled with their offsets (MPI_Pack, three passes for 24-bit labels)
 * names the typemap's bytes in order.  Byte j of a rank's data stream
 * must be at file byte disp + typemap[j] (tile k of the filetype at k
 * extents), and nothing else may be written.
 *
 * For each filetype and each call -- write_at, write_at_all, write,
 * write_all, iwrite, iwrite_at, iwrite_all, write_all_begin/end,
 * write_shared, write_ordered -- a file is written in two pieces (the
 * second continues where the first left the pointer), closed and read
 * whole as bytes; then read back through the same view with the matching
 * read call.  Then seek (SET, CUR, END), get_position and
 * get_byte_offset.  Before them, layouts (hint subfile_datatypes) whose
 * types have lower bounds that are not 0 and different extents.
 *
 * usage: romio_typemap [PREFIX [OPT [DIR]]]     (2 processes or more)
 *   OPT  use_romio_optimizations of every open (default false)
 *   DIR  where the files go (default "clf:/"; "ufs:/tmp/x/" for a local
 *        directory: the layouts, which need clf, are then left out)
 * Exits 0 when every check passed on every rank.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, checks, failures;
static const char *prefix = "typemap";
static const char *opt = "false";	/* use_romio_optimizations */
static const char *dir = "clf:/";

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

#define CHECK_MPI(call, ...)                                               \
	do {                                                               \
		int rc_ = (call);                                          \
		char s_[MPI_MAX_ERROR_STRING];                             \
		int l_ = 0;                                                \
		if (rc_ != MPI_SUCCESS)                                    \
			MPI_Error_string(rc_, s_, &l_);                    \
		s_[l_] = '\0';                                             \
		CHECK(rc_ == MPI_SUCCESS, "%s: %s", #call, s_);            \
	} while (0)

#define TILES 3		/* filetype copies each rank's data spans */
#define RANK_GAP 4096	/* rank r's view starts at r * RANK_GAP + 7 */

/* ------------------------------------------------------------------ */
/* The oracle                                                          */
/* ------------------------------------------------------------------ */

/* The file offsets (from the view's displacement) of the first n bytes
 * of the view of filetype t, as MPI's typemap says; caller frees. */
static long *typemap(MPI_Datatype t, long n)
{
	MPI_Aint lb, ext, tlb, text, span;
	MPI_Count size;
	unsigned char *buf, *packed;
	long *offs = calloc(n, sizeof(long)), tiles;
	int pos;

	MPI_Type_size_x(t, &size);
	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	tiles = (n + size - 1) / size;
	span = tlb + (tiles - 1) * ext + text;	/* typemap offsets are >= 0 */
	buf = malloc(span);
	packed = malloc(tiles * size);
	for (int pass = 0; pass < 3; pass++) {
		for (MPI_Aint x = 0; x < span; x++)
			buf[x] = (unsigned char)(x >> (8 * pass));
		pos = 0;
		MPI_Pack(buf, (int)tiles, t, packed, (int)(tiles * size), &pos,
			 MPI_COMM_SELF);
		for (long i = 0; i < n; i++)
			offs[i] |= (long)packed[i] << (8 * pass);
	}
	free(buf);
	free(packed);
	return offs;
}

/* Byte j of rank r's data: never 0, so a hole cannot pass for it. */
static unsigned char data_byte(int r, long j, int salt)
{
	return (unsigned char)(1 + (j * 7 + r * 31 + salt * 13) % 251);
}

/* ------------------------------------------------------------------ */
/* The filetypes                                                       */
/* ------------------------------------------------------------------ */

struct ftype {
	const char *name;
	MPI_Datatype t;
};

static MPI_Datatype hindexed(int n, const int *len, const MPI_Aint *at)
{
	MPI_Datatype t;

	MPI_Type_create_hindexed(n, len, at, MPI_BYTE, &t);
	return t;
}

static MPI_Datatype resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint ext)
{
	MPI_Datatype t;

	MPI_Type_create_resized(old, lb, ext, &t);
	MPI_Type_free(&old);
	return t;
}

static int make_ftypes(struct ftype *f)
{
	int n = 0;

	/* Issue 19's example: first tile at 100, 101, 110, 111. */
	f[n].name = "resized-lb";
	f[n++].t = resized(hindexed(2, (int[]){ 2, 2 },
				    (MPI_Aint[]){ 100, 110 }), 100, 50);
	/* A resized of a resized: only the outer bounds count. */
	f[n].name = "resized-twice";
	f[n++].t = resized(resized(hindexed(2, (int[]){ 2, 2 },
					    (MPI_Aint[]){ 30, 36 }), 24, 20),
			   10, 40);
	/* The lower bound above the first byte: bounds that hold no data. */
	f[n].name = "lb-above-data";
	f[n++].t = resized(hindexed(2, (int[]){ 2, 3 },
				    (MPI_Aint[]){ 0, 10 }), 5, 20);
	/* The lower bound below the first byte. */
	f[n].name = "lb-below-data";
	f[n++].t = resized(hindexed(2, (int[]){ 3, 1 },
				    (MPI_Aint[]){ 12, 19 }), 2, 24);
	/* Zero-length blocks before, between and after the data. */
	f[n].name = "zero-blocks";
	f[n++].t = hindexed(5, (int[]){ 0, 3, 0, 2, 0 },
			    (MPI_Aint[]){ 1, 20, 25, 30, 90 });
	/* Negative displacements inside, the lower bound still >= 0. */
	{
		MPI_Datatype in = hindexed(2, (int[]){ 2, 2 },
					   (MPI_Aint[]){ -8, -4 }), s;

		MPI_Type_create_struct(2, (int[]){ 1, 3 },
				       (MPI_Aint[]){ 20, 40 },
				       (MPI_Datatype[]){ in, MPI_BYTE }, &s);
		MPI_Type_free(&in);
		f[n].name = "negative-inside";
		f[n++].t = resized(s, 4, 48);
	}
	/* A lower bound below 0, every byte at 0 or later. */
	f[n].name = "lb-negative";
	f[n++].t = resized(hindexed(2, (int[]){ 2, 2 },
				    (MPI_Aint[]){ 0, 6 }), -4, 16);
	/* Subarrays (bounds wider than their data) inside an hindexed. */
	{
		MPI_Datatype sub;

		MPI_Type_create_subarray(2, (int[]){ 4, 4 }, (int[]){ 2, 2 },
					 (int[]){ 1, 1 }, MPI_ORDER_C, MPI_BYTE,
					 &sub);
		MPI_Type_create_hindexed(2, (int[]){ 1, 2 },
					 (MPI_Aint[]){ 0, 40 }, sub, &f[n].t);
		MPI_Type_free(&sub);
		f[n++].name = "subarray-inside";
	}
	/* A darray (process 1's half of 8 bytes) inside a vector. */
	{
		MPI_Datatype da;

		MPI_Type_create_darray(2, 1, 1, (int[]){ 8 },
				       (int[]){ MPI_DISTRIBUTE_BLOCK },
				       (int[]){ MPI_DISTRIBUTE_DFLT_DARG },
				       (int[]){ 2 }, MPI_ORDER_C, MPI_BYTE, &da);
		MPI_Type_vector(2, 1, 3, da, &f[n].t);
		MPI_Type_free(&da);
		f[n++].name = "darray-inside";
	}
	/* A struct of no blocks inside another: no bytes, no types. */
	{
		MPI_Datatype none;

		MPI_Type_create_struct(0, NULL, NULL, NULL, &none);
		MPI_Type_create_struct(2, (int[]){ 1, 3 }, (MPI_Aint[]){ 2, 5 },
				       (MPI_Datatype[]){ none, MPI_BYTE },
				       &f[n].t);
		MPI_Type_free(&none);
		f[n++].name = "empty-struct-inside";
	}
	for (int i = 0; i < n; i++)
		MPI_Type_commit(&f[i].t);
	return n;
}

/* ------------------------------------------------------------------ */
/* The access calls                                                    */
/* ------------------------------------------------------------------ */

enum call {
	AT, AT_ALL, IND, ALL, IWRITE, IWRITE_AT, IWRITE_ALL, ALL_SPLIT,
	SHARED, ORDERED, NCALLS
};

static const char *call_name[NCALLS] = {
	"at", "at_all", "individual", "all", "inonblocking", "inonblocking_at",
	"inonblocking_all", "all_begin_end", "shared", "ordered",
};

/* Shared-pointer calls by several ranks at once: order unknown, so
 * each rank gets a file of its own. */
static bool own_file(enum call c)
{
	return c == SHARED;
}

/* One piece: len bytes of buf, at view byte at for explicit offsets. */
static void access_piece(enum call c, bool write, MPI_File fh, long at,
			 unsigned char *buf, int len)
{
	MPI_Status st;
	MPI_Request rq;
	int got = -1;

#define RW(w, r) (write ? (w) : (r))
	switch (c) {
	case AT:
		CHECK_MPI(RW(MPI_File_write_at(fh, at, buf, len, MPI_BYTE, &st),
			     MPI_File_read_at(fh, at, buf, len, MPI_BYTE, &st)));
		break;
	case AT_ALL:
		CHECK_MPI(RW(MPI_File_write_at_all(fh, at, buf, len, MPI_BYTE,
						   &st),
			     MPI_File_read_at_all(fh, at, buf, len, MPI_BYTE,
						  &st)));
		break;
	case IND:
		CHECK_MPI(RW(MPI_File_write(fh, buf, len, MPI_BYTE, &st),
			     MPI_File_read(fh, buf, len, MPI_BYTE, &st)));
		break;
	case ALL:
		CHECK_MPI(RW(MPI_File_write_all(fh, buf, len, MPI_BYTE, &st),
			     MPI_File_read_all(fh, buf, len, MPI_BYTE, &st)));
		break;
	case IWRITE:
		CHECK_MPI(RW(MPI_File_iwrite(fh, buf, len, MPI_BYTE, &rq),
			     MPI_File_iread(fh, buf, len, MPI_BYTE, &rq)));
		MPI_Wait(&rq, &st);
		break;
	case IWRITE_AT:
		CHECK_MPI(RW(MPI_File_iwrite_at(fh, at, buf, len, MPI_BYTE, &rq),
			     MPI_File_iread_at(fh, at, buf, len, MPI_BYTE,
					       &rq)));
		MPI_Wait(&rq, &st);
		break;
	case IWRITE_ALL:
		CHECK_MPI(RW(MPI_File_iwrite_all(fh, buf, len, MPI_BYTE, &rq),
			     MPI_File_iread_all(fh, buf, len, MPI_BYTE, &rq)));
		MPI_Wait(&rq, &st);
		break;
	case ALL_SPLIT:
		if (write) {
			CHECK_MPI(MPI_File_write_all_begin(fh, buf, len,
							   MPI_BYTE));
			CHECK_MPI(MPI_File_write_all_end(fh, buf, &st));
		} else {
			CHECK_MPI(MPI_File_read_all_begin(fh, buf, len,
							  MPI_BYTE));
			CHECK_MPI(MPI_File_read_all_end(fh, buf, &st));
		}
		break;
	case SHARED:
		CHECK_MPI(RW(MPI_File_write_shared(fh, buf, len, MPI_BYTE, &st),
			     MPI_File_read_shared(fh, buf, len, MPI_BYTE,
						  &st)));
		break;
	case ORDERED:
		CHECK_MPI(RW(MPI_File_write_ordered(fh, buf, len, MPI_BYTE,
						    &st),
			     MPI_File_read_ordered(fh, buf, len, MPI_BYTE,
						   &st)));
		break;
	default:
		break;
	}
#undef RW
	MPI_Get_count(&st, MPI_BYTE, &got);
	CHECK(got == len, "%s %s: %d of %d bytes", call_name[c],
	      write ? "write" : "read", got, len);
}

/* Where rank r's view bytes [0, n) go in view order: the pieces of the
 * stream land at view bytes piece_at(). */
static long piece_at(enum call c, int r, int piece, long first, long n)
{
	if (c == ORDERED)	/* rank order, piece after piece */
		return piece == 0 ? r * first :
			nprocs * first + r * (n - first);
	return piece == 0 ? 0 : first;
}

static void open_view(enum call c, const char *path, int amode,
		      MPI_Datatype t, MPI_Offset disp, MPI_File *fh)
{
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", opt);
	CHECK_MPI(MPI_File_open(own_file(c) ? MPI_COMM_SELF : MPI_COMM_WORLD,
				path, amode, info, fh));
	MPI_Info_free(&info);
	CHECK_MPI(MPI_File_set_view(*fh, disp, MPI_BYTE, t, "native",
				    MPI_INFO_NULL));
}

/*
 * Rank 0 reads the file of the writers ranks lo..hi as bytes and compares
 * it with the oracle: their streams at disp + typemap, zeros elsewhere.
 */
static void check_file(const char *path, const char *what, enum call c,
		       const long *offs, long n, long first, int lo, int hi,
		       int salt)
{
	long size = 0, bad = -1;
	unsigned char *want, *got, *set;
	/* ROMIO's data sieving and two-phase I/O write back what their buffer
	 * held over the holes (MPI leaves them undefined): its path is
	 * checked on the bytes written alone. */
	bool holes = strcmp(opt, "false") != 0;
	MPI_Offset fsize = -1;
	MPI_File fh;
	MPI_Status st;

	for (int r = lo; r <= hi; r++) {
		long v = piece_at(c, r, 1, first, n) + (n - first) - 1;
		long end = (long)r * RANK_GAP + 7 + offs[v] + 1;

		if (end > size)
			size = end;
	}
	want = calloc(size + 64, 1);
	got = calloc(size + 64, 1);
	set = calloc(size + 64, 1);
	for (int r = lo; r <= hi; r++)
		for (int piece = 0; piece < 2; piece++) {
			long at = piece_at(c, r, piece, first, n);
			long from = piece ? first : 0, to = piece ? n : first;

			for (long j = from; j < to; j++) {
				long x = (long)r * RANK_GAP + 7 + offs[at + j - from];

				want[x] = data_byte(r, j, salt);
				set[x] = 1;
			}
		}
	CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
				MPI_INFO_NULL, &fh));
	MPI_File_get_size(fh, &fsize);
	CHECK(fsize == size, "%s: file size %lld, the typemap says %ld", what,
	      (long long)fsize, size);
	CHECK_MPI(MPI_File_read_at(fh, 0, got, (int)size + 64, MPI_BYTE, &st));
	for (long x = 0; x < size + 64 && bad < 0; x++)
		if (got[x] != want[x] && (set[x] || !holes))
			bad = x;
	CHECK(bad < 0, "%s: file byte %ld is %d, the typemap says %d", what,
	      bad, bad >= 0 ? got[bad] : 0, bad >= 0 ? want[bad] : 0);
	MPI_File_close(&fh);
	free(want);
	free(got);
	free(set);
}

/* One filetype, one call: write, check the file, read back. */
static void test_call(const struct ftype *f, enum call c, int salt)
{
	MPI_Count size;
	long n, first, *offs;
	char path[256], what[128];
	unsigned char *buf;
	MPI_Offset disp = (MPI_Offset)rank * RANK_GAP + 7, pos = -1;
	MPI_File fh;
	int r0 = own_file(c) ? rank : 0, r1 = own_file(c) ? rank : nprocs - 1;

	MPI_Type_size_x(f->t, &size);
	n = TILES * size;
	first = size + 1;	/* the second piece starts inside a tile */
	/* Room for the ordered calls, which put ranks one after the other. */
	offs = typemap(f->t, n * nprocs);
	buf = malloc(n);
	snprintf(what, sizeof(what), "%s, %s", f->name, call_name[c]);
	if (own_file(c))
		snprintf(path, sizeof(path), "%s%s-%s-%s-%d", dir, prefix,
			 f->name, call_name[c], rank);
	else
		snprintf(path, sizeof(path), "%s%s-%s-%s", dir, prefix, f->name,
			 call_name[c]);

	if (rank == 0 || own_file(c))
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	for (long j = 0; j < n; j++)
		buf[j] = data_byte(rank, j, salt);
	open_view(c, path, MPI_MODE_CREATE | MPI_MODE_RDWR, f->t, disp, &fh);
	/* No bytes: nothing written, the pointers stay (ROMIO's data
	 * sieving once asked clf for a lock of a negative length). */
	access_piece(c, true, fh, piece_at(c, rank, 0, first, n), buf, 0);
	access_piece(c, true, fh, piece_at(c, rank, 0, first, n), buf,
		     (int)first);
	access_piece(c, true, fh, piece_at(c, rank, 1, first, n), buf + first,
		     (int)(n - first));
	if (c == IND || c == ALL || c == IWRITE || c == IWRITE_ALL ||
	    c == ALL_SPLIT) {
		MPI_File_get_position(fh, &pos);
		CHECK(pos == n, "%s: position %lld after writing %ld", what,
		      (long long)pos, n);
	}
	CHECK_MPI(MPI_File_close(&fh));
	MPI_Barrier(MPI_COMM_WORLD);
	if (own_file(c) || rank == 0)
		check_file(path, what, c, offs, n, first, r0, r1, salt);
	MPI_Barrier(MPI_COMM_WORLD);

	memset(buf, 0, n);
	open_view(c, path, MPI_MODE_RDONLY, f->t, disp, &fh);
	access_piece(c, false, fh, piece_at(c, rank, 0, first, n), buf,
		     (int)first);
	access_piece(c, false, fh, piece_at(c, rank, 1, first, n), buf + first,
		     (int)(n - first));
	for (long j = 0; j < n; j++)
		if (buf[j] != data_byte(rank, j, salt)) {
			CHECK(false, "%s: read back: byte %ld is %d, want %d",
			      what, j, buf[j], data_byte(rank, j, salt));
			break;
		}
	CHECK_MPI(MPI_File_close(&fh));
	free(buf);
	free(offs);
}

/*
 * The pointer's arithmetic: get_byte_offset of every view byte, seek
 * SET / CUR / END, get_position, and a write right after a seek.
 */
static void test_seek(const struct ftype *f, int salt)
{
	MPI_Count size;
	long n, *offs;
	char path[256];
	unsigned char *buf, b = 0;
	MPI_Offset disp = 7 + rank, pos, byte;
	MPI_File fh;
	MPI_Status st;
	MPI_Info info;

	MPI_Type_size_x(f->t, &size);
	n = TILES * size;
	offs = typemap(f->t, n);
	buf = malloc(n);
	snprintf(path, sizeof(path), "%s%s-%s-seek-%d", dir, prefix, f->name,
		 rank);
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", opt);
	CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
	MPI_Info_free(&info);
	CHECK_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, f->t, "native",
				    MPI_INFO_NULL));

	for (long v = 0; v < n; v++) {
		byte = -1;
		MPI_File_get_byte_offset(fh, v, &byte);
		if (byte != disp + offs[v]) {
			CHECK(false, "%s: get_byte_offset(%ld) = %lld, the "
			      "typemap says %lld", f->name, v,
			      (long long)byte, (long long)(disp + offs[v]));
			break;
		}
	}
	MPI_File_get_position(fh, &pos);
	CHECK(pos == 0, "%s: position %lld after set_view", f->name,
	      (long long)pos);

	/* Every byte written alone, backwards, after a seek to it. */
	for (long v = n - 1; v >= 0; v--) {
		b = data_byte(rank, v, salt);
		CHECK_MPI(MPI_File_seek(fh, v, MPI_SEEK_SET));
		CHECK_MPI(MPI_File_write(fh, &b, 1, MPI_BYTE, &st));
		MPI_File_get_position(fh, &pos);
		if (pos != v + 1) {
			CHECK(false, "%s: position %lld after a byte at %ld",
			      f->name, (long long)pos, v);
			break;
		}
	}
	/* From view byte 1, the last one written. */
	CHECK_MPI(MPI_File_seek(fh, n - 2, MPI_SEEK_CUR));
	MPI_File_get_position(fh, &pos);
	CHECK(pos == n - 1, "%s: seek %ld from 1: position %lld", f->name,
	      n - 2, (long long)pos);
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
	MPI_File_get_position(fh, &pos);
	CHECK(pos == n, "%s: seek to the end: position %lld, want %ld",
	      f->name, (long long)pos, n);
	CHECK_MPI(MPI_File_seek(fh, -3, MPI_SEEK_CUR));
	MPI_File_get_position(fh, &pos);
	CHECK(pos == n - 3, "%s: seek -3 from the end: position %lld, want "
	      "%ld", f->name, (long long)pos, n - 3);
	CHECK_MPI(MPI_File_read(fh, buf, 3, MPI_BYTE, &st));
	for (long j = 0; j < 3; j++)
		CHECK(buf[j] == data_byte(rank, n - 3 + j, salt),
		      "%s: byte %ld after seek from the end is %d, want %d",
		      f->name, n - 3 + j, buf[j], data_byte(rank, n - 3 + j, salt));
	CHECK_MPI(MPI_File_close(&fh));

	/* What the seeks wrote is where the typemap says. */
	{
		unsigned char *got = calloc(disp + offs[n - 1] + 1, 1);
		MPI_Offset fsize = -1;

		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
					MPI_INFO_NULL, &fh));
		MPI_File_get_size(fh, &fsize);
		CHECK(fsize == disp + offs[n - 1] + 1, "%s: seeks: file size "
		      "%lld, want %lld", f->name, (long long)fsize,
		      (long long)(disp + offs[n - 1] + 1));
		CHECK_MPI(MPI_File_read_at(fh, 0, got, (int)(disp + offs[n - 1] + 1),
					   MPI_BYTE, &st));
		for (long v = 0; v < n; v++)
			if (got[disp + offs[v]] != data_byte(rank, v, salt)) {
				CHECK(false, "%s: seeks: view byte %ld is not at "
				      "file byte %lld", f->name, v,
				      (long long)(disp + offs[v]));
				break;
			}
		MPI_File_close(&fh);
		free(got);
	}
	free(buf);
	free(offs);
}

/*
 * Layouts as users write them: subfile types with lower bounds that are
 * not 0 and different extents, each taken as resized to the largest upper
 * bound, accepted when they partition it.  The file is written and read
 * back as bytes through the layout, and reports its two subfiles.
 */
static void layout_case(const char *label, MPI_Datatype t0, MPI_Datatype t1,
			long period)
{
	char path[256], hint[64], value[MPI_MAX_INFO_VAL + 1];
	long n = 3 * period + 5;
	unsigned char *buf = malloc(n), *back = calloc(n, 1);
	MPI_Info info, got;
	MPI_File fh;
	MPI_Status st;
	int flag = 0, rc;

	MPI_Type_commit(&t0);
	MPI_Type_commit(&t1);
	snprintf(path, sizeof(path), "clf:/%s-layout-%s", prefix, label);
	snprintf(hint, sizeof(hint), "%d %d", (int)MPI_Type_c2f(t0),
		 (int)MPI_Type_c2f(t1));
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Info_create(&info);
	MPI_Info_set(info, "subfile_datatypes", hint);
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
			   info, &fh);
	MPI_Info_free(&info);
	CHECK_MPI(rc);
	if (rc == MPI_SUCCESS) {
		for (long j = 0; j < n; j++)
			buf[j] = data_byte(0, j, 5);
		if (rank == 0)
			CHECK_MPI(MPI_File_write_at(fh, 0, buf, (int)n,
						    MPI_BYTE, &st));
		MPI_File_get_info(fh, &got);
		MPI_Info_get(got, "striping_factor", MPI_MAX_INFO_VAL, value,
			     &flag);
		CHECK(flag && !strcmp(value, "2"), "layout %s: striping_factor "
		      "%s", label, flag ? value : "(unset)");
		MPI_Info_free(&got);
		CHECK_MPI(MPI_File_close(&fh));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
				MPI_INFO_NULL, &fh));
	CHECK_MPI(MPI_File_read_at_all(fh, 0, back, (int)n, MPI_BYTE, &st));
	for (long j = 0; j < n; j++)
		if (back[j] != data_byte(0, j, 5)) {
			CHECK(false, "layout %s: byte %ld is %d, want %d", label,
			      j, back[j], data_byte(0, j, 5));
			break;
		}
	CHECK_MPI(MPI_File_close(&fh));
	MPI_Type_free(&t0);
	MPI_Type_free(&t1);
	free(buf);
	free(back);
}

static void test_layouts(void)
{
	MPI_Datatype t0, t1, tmp;

	/* Bytes 0-15 and 32-47; 16-31 and 48-63 (lower bound 16). */
	t0 = hindexed(2, (int[]){ 16, 16 }, (MPI_Aint[]){ 0, 32 });
	t1 = hindexed(2, (int[]){ 16, 16 }, (MPI_Aint[]){ 16, 48 });
	layout_case("lb16", t0, t1, 64);
	/* Bytes 0-7 (extent 8) and 8-15 (extent 16). */
	MPI_Type_contiguous(8, MPI_BYTE, &t0);
	t1 = resized(hindexed(1, (int[]){ 8 }, (MPI_Aint[]){ 8 }), 0, 16);
	layout_case("extents", t0, t1, 16);
	/* A lower bound below 0: bytes 0-3 (bounds -4, 4), 4-11. */
	MPI_Type_contiguous(4, MPI_BYTE, &tmp);
	t0 = resized(tmp, -4, 8);
	t1 = hindexed(1, (int[]){ 8 }, (MPI_Aint[]){ 4 });
	layout_case("neglb", t0, t1, 12);
}

int main(int argc, char **argv)
{
	struct ftype f[16];
	int nf, all_failures = 0, all_checks = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc > 1)
		prefix = argv[1];
	if (argc > 2)
		opt = argv[2];
	if (argc > 3)
		dir = argv[3];
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

	if (!strncmp(dir, "clf:", 4))
		test_layouts();
	nf = make_ftypes(f);
	for (int i = 0; i < nf; i++) {
		for (int c = 0; c < NCALLS; c++)
			test_call(&f[i], c, i * NCALLS + c);
		test_seek(&f[i], i);
		MPI_Type_free(&f[i].t);
	}

	MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM,
		      MPI_COMM_WORLD);
	MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_typemap on %d ranks (%s, use_romio_optimizations=%s): "
		       "%d filetypes, %d checks, %d failed\n", nprocs, dir, opt,
		       nf, all_checks, all_failures);
	MPI_Finalize();
	return all_failures ? 1 : 0;
}
