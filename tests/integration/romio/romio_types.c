// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_types.c -- every MPI datatype constructor as a file view and as a
 * subfile type of the subfile_datatypes hint, and random darray and
 * subarray views, written and read back byte-exact through MPI-IO on
 * "clf:" files; with romio_native, the same files through the native API.
 * Run by test_romio.sh under mpiexec.
 *
 * usage: romio_types write HINT DIR SALT MANIFEST
 *        romio_types read HINT DIR SALT
 *
 * HINT is the value of use_romio_optimizations (true or false) of every
 * open; DIR a clf directory.  Byte off of every file is
 * pattern_byte(off, SALT) (pattern.h).
 *
 * The cases, alike on every process and in both phases (fixed seeds):
 *   v-NAME     one per constructor (named, dup, contiguous, vector,
 *              hvector, indexed, hindexed, indexed_block, hindexed_block,
 *              struct, subarray, darray, resized): each process's
 *              filetype is built with it, and together the views cover
 *              the file exactly once (checked: the test's own premise);
 *   v-odd-extent, v-indexed-rows   filetypes whose extent has no common
 *              period with the layout (2^20 + 1; a checkerboard as one
 *              block per row piece);
 *   r-darray-K, r-subarray-K   random darray and subarray decompositions
 *              (1 to 3 dimensions, C and Fortran order, BLOCK, CYCLIC(k)
 *              and NONE, processes with less than one block, 1- to
 *              8-byte elements), behind a random header;
 *   l-NAME     a file created with subfile_datatypes made with that
 *              constructor (the first subfile; the others, the bytes it
 *              leaves, or the whole family for darray and subarray),
 *              and l-striping with striping_unit / striping_factor.
 * Accesses rotate through write_at_all, write_all, write_at, the split
 * collective, iwrite_at_all, iwrite_at and two independent pieces;
 * memory is contiguous, strided or irregular (holes must stay untouched).
 *
 * write: each case is written through its views, read back through the
 * same handle (another access), through a new open with the other HINT,
 * and whole through the byte view on rank 0; rank 0 lists the files,
 * sizes and layouts (as runs of bytes) in MANIFEST for
 * "romio_native check".
 * read: after "romio_native fill", each case is read through its views
 * (and whole on rank 0) and must hold the pattern of SALT.
 *
 * The expected bytes come from MPI itself (MPI_Pack of labelled buffers),
 * not from ROMIO or the driver.  Exits 0 when every check passed.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

#define NRANDOM 10		/* random darray and subarray cases each */
#define MAX_LAYOUT 8
#define MAX_SPAN (1 << 22)	/* bytes of a typemap the oracle handles */
#define SENTINEL 0xee

static int rank, nprocs, checks, failures;
static bool romio_opt, reading;
static const char *dir;
static uint64_t salt;
static FILE *manifest;		/* rank 0, write phase */

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

/* MPI_SUCCESS, or the error's string in the message; evaluates to ok. */
static bool check_mpi(int rc, const char *what, const char *kase, int line)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	checks++;
	if (rc == MPI_SUCCESS)
		return true;
	MPI_Error_string(rc, s, &len);
	s[len] = '\0';
	failures++;
	fprintf(stderr, "FAIL rank %d %s:%d: %s: %s: %s\n", rank, __FILE__, line,
		kase, what, s);
	return false;
}

#define CHECK_MPI(call, what, kase) check_mpi((call), (what), (kase), __LINE__)

/* ------------------------------------------------------------------ */
/* Random numbers: one stream for the cases (alike everywhere), one per */
/* process for its memory layouts.                                      */
/* ------------------------------------------------------------------ */

static uint64_t case_rng, own_rng;

/* A well-mixed state from a small seed (splitmix64). */
static uint64_t seed(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return (x ^ (x >> 31)) | 1;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Uniform in [lo, hi]. */
static long crange(long lo, long hi)
{
	return lo + (long)(next(&case_rng) % (uint64_t)(hi - lo + 1));
}

static long orange(long lo, long hi)
{
	return lo + (long)(next(&own_rng) % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------------ */
/* The oracle: typemaps from MPI_Pack                                   */
/* ------------------------------------------------------------------ */

/*
 * The byte offsets count copies of type select, in typemap order, into
 * *offs (caller frees); returns their number, -1 when the type is out of
 * the oracle's range (a negative lower bound, too large).  Offsets are
 * from the buffer's start, which is where the type's offset 0 is.
 */
static long typemap(MPI_Datatype type, long count, long **offs)
{
	MPI_Aint lb, ext, tlb, text, span;
	MPI_Count size;
	unsigned char *buf, *packed;
	long n;
	int pos;

	*offs = NULL;
	MPI_Type_size_x(type, &size);
	MPI_Type_get_extent(type, &lb, &ext);
	MPI_Type_get_true_extent(type, &tlb, &text);
	n = (long)size * count;
	if (tlb < 0 || ext < 0 || n == 0)
		return n == 0 ? 0 : -1;
	span = tlb + text + (count - 1) * ext;
	if (span > MAX_SPAN || n > MAX_SPAN)
		return -1;
	buf = malloc(span);
	packed = malloc(n);
	*offs = calloc(n, sizeof(long));
	for (int pass = 0; pass < 4; pass++) {
		for (MPI_Aint x = 0; x < span; x++)
			buf[x] = (unsigned char)(x >> (8 * pass));
		pos = 0;
		MPI_Pack(buf, (int)count, type, packed, (int)n, &pos, MPI_COMM_SELF);
		for (long i = 0; i < n; i++)
			(*offs)[i] |= (long)packed[i] << (8 * pass);
	}
	free(buf);
	free(packed);
	return n;
}

/* ------------------------------------------------------------------ */
/* Cases                                                                */
/* ------------------------------------------------------------------ */

struct kase {
	char name[64];
	MPI_Datatype ftype;	/* this process's filetype; freed if derived */
	MPI_Datatype etype;	/* named; memory is made of it too */
	MPI_Offset disp;	/* bytes */
	long reps;		/* copies of ftype this process accesses */
	long hdr;		/* bytes [0, hdr): rank 0, through the byte view */
	int nlayout;		/* subfile types of subfile_datatypes, or 0 */
	MPI_Datatype layout[MAX_LAYOUT];
	const char *unit, *factor;	/* striping hints, or NULL */
	const char *written;	/* how it was written, for messages */
};

static void kase_init(struct kase *k, const char *fmt, ...)
{
	va_list ap;

	memset(k, 0, sizeof(*k));
	va_start(ap, fmt);
	vsnprintf(k->name, sizeof(k->name), fmt, ap);
	va_end(ap);
	k->etype = MPI_BYTE;
	k->reps = 1;
}

static void type_free(MPI_Datatype *t)
{
	int ni, na, nt, c;

	if (*t == MPI_DATATYPE_NULL)
		return;
	MPI_Type_get_envelope(*t, &ni, &na, &nt, &c);
	if (c != MPI_COMBINER_NAMED)
		MPI_Type_free(t);
	*t = MPI_DATATYPE_NULL;
}

static void kase_release(struct kase *k)
{
	type_free(&k->ftype);
	for (int j = 0; j < k->nlayout; j++)
		type_free(&k->layout[j]);
}

static MPI_Datatype commit(MPI_Datatype t)
{
	MPI_Type_commit(&t);
	return t;
}

static MPI_Datatype resized(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext)
{
	MPI_Datatype r;

	MPI_Type_create_resized(t, lb, ext, &r);
	type_free(&t);
	return r;
}

/*
 * Runs of elements of M partitioned among the processes: run i covers
 * elements [start[i], start[i] + len[i]) and belongs to owner[i]; every
 * process gets at least one.  Returns the number of runs.
 */
static int partition(int m, int maxlen, int *start, int *len, int *owner)
{
	int n = 0;

	for (int s = 0; s < m; n++) {
		start[n] = s;
		len[n] = (int)crange(1, maxlen);
		if (s + len[n] > m)
			len[n] = m - s;
		owner[n] = n < nprocs ? n : (int)crange(0, nprocs - 1);
		s += len[n];
	}
	return n;
}

/* This process's runs of a partition, as (displacement, length) lists. */
static int my_runs(int n, const int *start, const int *len, const int *owner,
		   int *d, int *b)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		if (owner[i] == rank) {
			d[c] = start[i];
			b[c++] = len[i];
		}
	return c;
}

/* Grid coordinates of process r (row-major, as darray numbers them). */
static void coords(int r, int ndims, const int *p, int *c)
{
	for (int d = ndims - 1; d >= 0; d--) {
		c[d] = r % p[d];
		r /= p[d];
	}
}

/* A random block decomposition of gsizes on grid p: r's subarray. */
static MPI_Datatype subarray_tile(int ndims, const int *g, const int *p,
				  int order, MPI_Datatype old, int r,
				  int cuts[][8])
{
	int c[3], sub[3], st[3];
	MPI_Datatype t;

	coords(r, ndims, p, c);
	for (int d = 0; d < ndims; d++) {
		st[d] = cuts[d][c[d]];
		sub[d] = cuts[d][c[d] + 1] - st[d];
	}
	MPI_Type_create_subarray(ndims, g, sub, st, order, old, &t);
	return commit(t);
}

/* Cut [0, g) into p non-empty parts at random: cuts[0..p]. */
static void random_cuts(int g, int p, int *cuts)
{
	cuts[0] = 0;
	cuts[p] = g;
	for (int i = 1; i < p; i++) {
		/* Leave room for the parts still to come. */
		int lo = cuts[i - 1] + 1, hi = g - (p - i);

		cuts[i] = (int)crange(lo, hi);
	}
}

/* A 3-byte element; made at the first use, freed at the end. */
static MPI_Datatype three = MPI_DATATYPE_NULL;

/* One of the element types of the random cases (no holes). */
static MPI_Datatype random_element(void)
{
	if (three == MPI_DATATYPE_NULL) {
		MPI_Type_contiguous(3, MPI_BYTE, &three);
		MPI_Type_commit(&three);
	}
	switch (crange(0, 4)) {
	case 0:
		return MPI_BYTE;
	case 1:
		return MPI_SHORT;
	case 2:
		return MPI_INT;
	case 3:
		return MPI_DOUBLE;
	default:
		return three;
	}
}

/* The view cases, one per constructor.  Return false past the last. */
static bool view_case(int i, struct kase *k)
{
	int P = nprocs, r = rank;
	MPI_Datatype t;

	switch (i) {
	case 0:
		kase_init(k, "v-named");
		k->etype = MPI_DOUBLE;
		k->ftype = MPI_DOUBLE;
		k->reps = 37;
		k->disp = (MPI_Offset)r * 37 * 8;
		return true;
	case 1: {
		MPI_Datatype one = resized(MPI_INT, 0, 4 * P);

		kase_init(k, "v-dup");
		MPI_Type_dup(one, &t);
		MPI_Type_free(&one);
		k->ftype = commit(t);
		k->reps = 50;
		k->disp = 4 * r;
		return true;
	}
	case 2: {
		MPI_Datatype sh = resized(MPI_SHORT, 0, 2 * P);

		kase_init(k, "v-contiguous");
		MPI_Type_contiguous(3, sh, &t);
		type_free(&sh);
		k->ftype = commit(t);
		k->reps = 40;
		k->disp = 2 * r;
		return true;
	}
	case 3:
		kase_init(k, "v-vector");
		MPI_Type_vector(9, 3, 3 * P, MPI_INT, &t);
		k->ftype = commit(t);
		k->disp = 12 * r;
		return true;
	case 4:
		kase_init(k, "v-hvector");
		MPI_Type_create_hvector(7, 2, 16 * P, MPI_DOUBLE, &t);
		k->ftype = commit(t);
		k->disp = 16 * r;
		return true;
	case 5:
	case 6:
	case 7:
	case 8: {
		int start[512], len[512], owner[512], d[512], b[512], n, c;
		MPI_Aint hd[512];

		if (i == 5) {
			kase_init(k, "v-indexed");
			n = partition(150, 6, start, len, owner);
			c = my_runs(n, start, len, owner, d, b);
			MPI_Type_indexed(c, b, d, MPI_INT, &t);
		} else if (i == 6) {
			MPI_Datatype elem3;

			kase_init(k, "v-hindexed");
			MPI_Type_contiguous(3, MPI_BYTE, &elem3);
			n = partition(170, 5, start, len, owner);
			c = my_runs(n, start, len, owner, d, b);
			for (int x = 0; x < c; x++)
				hd[x] = 3 * (MPI_Aint)d[x];
			MPI_Type_create_hindexed(c, b, hd, elem3, &t);
			MPI_Type_free(&elem3);
		} else {
			/* Blocks of 2 ints or 3 shorts, each to a process. */
			int blk = i == 7 ? 2 : 3, esz = i == 7 ? 4 : 2;

			kase_init(k, i == 7 ? "v-indexed_block" : "v-hindexed_block");
			n = partition(60, 1, start, len, owner);
			c = my_runs(n, start, len, owner, d, b);
			for (int x = 0; x < c; x++) {
				d[x] *= blk;
				hd[x] = (MPI_Aint)d[x] * esz;
			}
			if (i == 7)
				MPI_Type_create_indexed_block(c, blk, d, MPI_INT, &t);
			else
				MPI_Type_create_hindexed_block(c, blk, hd, MPI_SHORT, &t);
		}
		k->ftype = commit(t);
		return true;
	}
	case 9: {
		/* Slots of 16 bytes: an int, two shorts, a double. */
		int b[9];
		MPI_Aint d[9];
		MPI_Datatype ty[9];

		kase_init(k, "v-struct");
		for (int s = 0; s < 3; s++) {
			MPI_Aint slot = ((MPI_Aint)s * P + r) * 16;

			b[3 * s] = 1, d[3 * s] = slot, ty[3 * s] = MPI_INT;
			b[3 * s + 1] = 2, d[3 * s + 1] = slot + 4, ty[3 * s + 1] = MPI_SHORT;
			b[3 * s + 2] = 1, d[3 * s + 2] = slot + 8, ty[3 * s + 2] = MPI_DOUBLE;
		}
		MPI_Type_create_struct(9, b, d, ty, &t);
		k->ftype = commit(t);
		return true;
	}
	case 10: {
		int g[2] = { 7 + P, 9 }, p[2] = { 0, 0 }, cuts[2][8];

		kase_init(k, "v-subarray");
		MPI_Dims_create(P, 2, p);
		for (int d = 0; d < 2; d++)
			random_cuts(g[d], p[d], cuts[d]);
		k->ftype = subarray_tile(2, g, p, MPI_ORDER_C, MPI_INT, r, cuts);
		k->reps = 2;
		return true;
	}
	case 11: {
		int g[2] = { 13, 10 }, p[2] = { 0, 0 };
		int dist[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK };
		int darg[2] = { 2, MPI_DISTRIBUTE_DFLT_DARG };

		kase_init(k, "v-darray");
		MPI_Dims_create(P, 2, p);
		MPI_Type_create_darray(P, r, 2, g, dist, darg, p, MPI_ORDER_FORTRAN,
				       MPI_DOUBLE, &t);
		k->ftype = commit(t);
		k->reps = 2;
		return true;
	}
	case 12:
		kase_init(k, "v-resized");
		k->etype = MPI_INT;
		MPI_Type_contiguous(5, MPI_INT, &t);
		k->ftype = commit(resized(t, 0, 20 * P));
		k->reps = 30;
		k->disp = 20 * r;
		return true;
	case 13: {
		/*
		 * 3 blocks per process in an extent of 2^20 + 1: no common
		 * period with the layout's stripes (mapped tiled).
		 */
		MPI_Aint e = (1 << 20) + 1, hd[3];
		int b[3];

		kase_init(k, "v-odd-extent");
		for (int x = 0; x < 3; x++) {
			MPI_Aint lo = e * (x * P + r) / (3 * P);

			hd[x] = lo;
			b[x] = (int)(e * (x * P + r + 1) / (3 * P) - lo);
		}
		MPI_Type_create_hindexed(3, b, hd, MPI_BYTE, &t);
		k->ftype = commit(resized(t, 0, e));
		k->reps = 2;
		return true;
	}
	case 14: {
		/*
		 * The cells of a CYCLIC(8) x CYCLIC(8) checkerboard over a
		 * 1024 x 1024-byte matrix, cell (i, j) to process (i + j) % P,
		 * as one block per row piece, from the process's first byte:
		 * extents N^2 - 16 and such, incommensurate with the stripes.
		 */
		int n = 1024, kk = 8, c = 0, *d = malloc(n * n / kk * sizeof(int));
		int first = -1;

		kase_init(k, "v-indexed-rows");
		for (int row = 0; row < n; row++)
			for (int col = 0; col < n; col += kk) {
				if ((row / kk + col / kk) % P != r)
					continue;
				if (first < 0)
					first = row * n + col;
				d[c++] = row * n + col - first;
			}
		MPI_Type_create_indexed_block(c, kk, d, MPI_BYTE, &t);
		free(d);
		k->ftype = commit(t);
		k->disp = first;
		return true;
	}
	}
	return false;
}

/* A random darray decomposition in which every process has bytes. */
static void random_darray(int i, struct kase *k)
{
	int nd, g[3], dist[3], darg[3], p[3], order;
	MPI_Datatype old, t[16];
	MPI_Count size;
	bool ok;

	kase_init(k, "r-darray-%d", i);
	do {
		long elems = 1;

		nd = (int)crange(1, 3);
		order = crange(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
		for (int d = 0; d < nd; d++) {
			g[d] = (int)crange(1, 9);
			elems *= g[d];
			dist[d] = (int)crange(0, 2) == 0 ? MPI_DISTRIBUTE_NONE
				  : crange(0, 1) ? MPI_DISTRIBUTE_CYCLIC
						 : MPI_DISTRIBUTE_BLOCK;
			p[d] = dist[d] == MPI_DISTRIBUTE_NONE ? 1 : 0;
		}
		if (nprocs > 1 && dist[0] == MPI_DISTRIBUTE_NONE) {
			bool all_none = true;

			for (int d = 0; d < nd; d++)
				all_none &= dist[d] == MPI_DISTRIBUTE_NONE;
			if (all_none) {
				dist[0] = MPI_DISTRIBUTE_CYCLIC;
				p[0] = 0;
			}
		}
		MPI_Dims_create(nprocs, nd, p);
		for (int d = 0; d < nd; d++) {
			int min = (g[d] + p[d] - 1) / p[d];

			if (dist[d] == MPI_DISTRIBUTE_BLOCK)
				darg[d] = crange(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG
						       : (int)crange(min, min + 2);
			else if (dist[d] == MPI_DISTRIBUTE_CYCLIC)
				darg[d] = crange(0, 2) ? (int)crange(1, 4)
						       : MPI_DISTRIBUTE_DFLT_DARG;
			else
				darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
		}
		old = random_element();
		ok = elems <= 400;
		for (int r = 0; r < nprocs; r++) {
			MPI_Type_create_darray(nprocs, r, nd, g, dist, darg, p, order,
					       old, &t[r]);
			MPI_Type_size_x(t[r], &size);
			ok &= size > 0;
		}
		for (int r = 0; r < nprocs; r++)
			if (r != rank || !ok)
				MPI_Type_free(&t[r]);
	} while (!ok);
	k->ftype = commit(t[rank]);
	k->reps = crange(1, 2);
	k->hdr = crange(0, 1) ? crange(1, 100) : 0;
	k->disp = k->hdr;
}

static void random_subarray(int i, struct kase *k)
{
	int nd = (int)crange(1, 3), g[3], p[3] = { 0, 0, 0 }, cuts[3][8];
	int order = crange(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;

	kase_init(k, "r-subarray-%d", i);
	MPI_Dims_create(nprocs, nd, p);
	for (int d = 0; d < nd; d++) {
		g[d] = p[d] + (int)crange(0, 6);
		random_cuts(g[d], p[d], cuts[d]);
	}
	k->ftype = subarray_tile(nd, g, p, order, random_element(), rank, cuts);
	k->reps = crange(1, 2);
	k->hdr = crange(0, 1) ? crange(1, 100) : 0;
	k->disp = k->hdr;
}

/* The bytes of [0, extent) type leaves, in nparts types (alternate runs). */
static int complement(MPI_Datatype type, int nparts, MPI_Datatype *out)
{
	MPI_Aint lb, ext;
	long *offs, n = typemap(type, 1, &offs);
	char *sel;
	int made = 0;

	MPI_Type_get_extent(type, &lb, &ext);
	sel = calloc(ext, 1);
	for (long x = 0; x < n; x++)
		sel[offs[x]] = 1;
	for (int part = 0; part < nparts; part++) {
		int b[512], c = 0, run = 0;
		MPI_Aint d[512];
		MPI_Datatype t;

		for (MPI_Aint x = 0; x < ext; x++) {
			if (sel[x] || (x > 0 && !sel[x - 1]))
				continue;
			/* A run of unselected bytes starts at x. */
			if (run++ % nparts == part) {
				d[c] = x;
				b[c] = 0;
				while (x + b[c] < ext && !sel[x + b[c]])
					b[c]++;
				c++;
			}
		}
		if (c == 0)
			continue;
		MPI_Type_create_hindexed(c, b, d, MPI_BYTE, &t);
		out[made++] = commit(resized(t, 0, ext));
	}
	free(sel);
	free(offs);
	return made;
}

/* The layout cases: the first subfile type made with the constructor. */
static bool layout_case(int i, struct kase *k)
{
	MPI_Datatype t = MPI_DATATYPE_NULL, u;
	int j;

	switch (i) {
	case 0:
		kase_init(k, "l-named");
		k->layout[0] = MPI_INT;
		k->nlayout = 1;
		return true;
	case 1:
		kase_init(k, "l-dup");
		MPI_Type_contiguous(5, MPI_BYTE, &u);
		u = resized(u, 0, 12);
		MPI_Type_dup(u, &t);
		MPI_Type_free(&u);
		break;
	case 2:
		kase_init(k, "l-contiguous");
		u = resized(MPI_SHORT, 0, 6);
		MPI_Type_contiguous(4, u, &t);
		type_free(&u);
		break;
	case 3:
		kase_init(k, "l-vector");
		MPI_Type_vector(5, 2, 7, MPI_INT, &t);
		break;
	case 4:
		kase_init(k, "l-hvector");
		MPI_Type_create_hvector(4, 3, 40, MPI_SHORT, &t);
		break;
	case 5: {
		int b[3] = { 2, 1, 4 }, d[3] = { 0, 5, 9 };

		kase_init(k, "l-indexed");
		MPI_Type_indexed(3, b, d, MPI_INT, &t);
		break;
	}
	case 6: {
		int b[3] = { 1, 2, 1 };
		MPI_Aint d[3] = { 0, 10, 31 };

		kase_init(k, "l-hindexed");
		MPI_Type_create_hindexed(3, b, d, MPI_DOUBLE, &t);
		break;
	}
	case 7: {
		int d[3] = { 0, 3, 7 };

		kase_init(k, "l-indexed_block");
		MPI_Type_create_indexed_block(3, 2, d, MPI_SHORT, &t);
		break;
	}
	case 8: {
		MPI_Aint d[3] = { 0, 12, 20 };

		kase_init(k, "l-hindexed_block");
		MPI_Type_create_hindexed_block(3, 1, d, MPI_INT, &t);
		break;
	}
	case 9: {
		int b[2] = { 1, 2 };
		MPI_Aint d[2] = { 0, 8 };
		MPI_Datatype ty[2] = { MPI_INT, MPI_SHORT };

		kase_init(k, "l-struct");
		MPI_Type_create_struct(2, b, d, ty, &t);
		break;
	}
	case 10: {
		/* The family: three tiles of a 6 x 5 array of shorts. */
		int g[2] = { 6, 5 }, p[2] = { 3, 1 }, cuts[2][8] = { { 0, 1, 4, 6 },
								     { 0, 5 } };

		kase_init(k, "l-subarray");
		for (j = 0; j < 3; j++)
			k->layout[j] = subarray_tile(2, g, p, MPI_ORDER_C, MPI_SHORT,
						     j, cuts);
		k->nlayout = 3;
		return true;
	}
	case 11: {
		int g[2] = { 7, 5 }, p[2] = { 3, 1 };
		int dist[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE };
		int darg[2] = { 2, MPI_DISTRIBUTE_DFLT_DARG };

		kase_init(k, "l-darray");
		for (j = 0; j < 3; j++) {
			MPI_Type_create_darray(3, j, 2, g, dist, darg, p, MPI_ORDER_C,
					       MPI_BYTE, &t);
			k->layout[j] = commit(t);
		}
		k->nlayout = 3;
		return true;
	}
	case 12:
		kase_init(k, "l-resized");
		t = resized(MPI_INT, 0, 10);
		break;
	case 13:
		kase_init(k, "l-striping");
		k->unit = "4096";
		k->factor = "3";
		return true;
	default:
		return false;
	}
	k->layout[0] = commit(t);
	k->nlayout = 1 + complement(k->layout[0], 2, &k->layout[1]);
	return true;
}

/* The expected layout of l-striping: round robin of 4096-byte stripes. */
static int striping_layout(MPI_Datatype *out)
{
	for (int j = 0; j < 3; j++) {
		MPI_Datatype t;
		int b = 4096, d = j * 4096;

		MPI_Type_indexed(1, &b, &d, MPI_BYTE, &t);
		out[j] = commit(resized(t, 0, 3 * 4096));
	}
	return 3;
}

/* ------------------------------------------------------------------ */
/* Accesses                                                             */
/* ------------------------------------------------------------------ */

enum access {
	AT_ALL, ALL, AT, SPLIT, IAT_ALL, IAT, TWO, NACCESS
};

static const char *access_name[NACCESS] = {
	"at_all", "all", "at", "split collective", "iat_all", "iat",
	"two independent pieces"
};

/*
 * One access of the n view bytes from view offset 0, from or to buf
 * through memtype (count 1; contiguous for TWO, counted in etypes of
 * esz bytes).  Returns the MPI error code; *done the bytes moved.
 */
static int access_view(MPI_File fh, enum access a, bool write, void *buf,
		       MPI_Datatype memtype, MPI_Datatype etype, long n,
		       long esz, long *done)
{
	MPI_Status st, st2;
	MPI_Request req;
	int rc, c = 0, c2 = 0;
	long h;

	*done = 0;
	switch (a) {
	case AT_ALL:
		rc = write ? MPI_File_write_at_all(fh, 0, buf, 1, memtype, &st)
			   : MPI_File_read_at_all(fh, 0, buf, 1, memtype, &st);
		break;
	case ALL:
		rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
		if (rc == MPI_SUCCESS)
			rc = write ? MPI_File_write_all(fh, buf, 1, memtype, &st)
				   : MPI_File_read_all(fh, buf, 1, memtype, &st);
		break;
	case AT:
		rc = write ? MPI_File_write_at(fh, 0, buf, 1, memtype, &st)
			   : MPI_File_read_at(fh, 0, buf, 1, memtype, &st);
		break;
	case SPLIT:
		rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
		if (rc == MPI_SUCCESS)
			rc = write ? MPI_File_write_all_begin(fh, buf, 1, memtype)
				   : MPI_File_read_all_begin(fh, buf, 1, memtype);
		if (rc == MPI_SUCCESS)
			rc = write ? MPI_File_write_all_end(fh, buf, &st)
				   : MPI_File_read_all_end(fh, buf, &st);
		break;
	case IAT_ALL:
		rc = write ? MPI_File_iwrite_at_all(fh, 0, buf, 1, memtype, &req)
			   : MPI_File_iread_at_all(fh, 0, buf, 1, memtype, &req);
		if (rc == MPI_SUCCESS)
			rc = MPI_Wait(&req, &st);
		break;
	case IAT:
		rc = write ? MPI_File_iwrite_at(fh, 0, buf, 1, memtype, &req)
			   : MPI_File_iread_at(fh, 0, buf, 1, memtype, &req);
		if (rc == MPI_SUCCESS)
			rc = MPI_Wait(&req, &st);
		break;
	default:
		/* The first half of the etypes at offset 0, the rest through
		 * the individual pointer. */
		h = n / esz / 2;
		rc = write ? MPI_File_write_at(fh, 0, buf, (int)h, etype, &st)
			   : MPI_File_read_at(fh, 0, buf, (int)h, etype, &st);
		if (rc == MPI_SUCCESS)
			rc = MPI_File_seek(fh, h, MPI_SEEK_SET);
		if (rc == MPI_SUCCESS)
			rc = write ? MPI_File_write(fh, (char *)buf + h * esz,
						    (int)(n / esz - h), etype, &st2)
				   : MPI_File_read(fh, (char *)buf + h * esz,
						   (int)(n / esz - h), etype, &st2);
		if (rc == MPI_SUCCESS) {
			MPI_Get_count(&st, MPI_BYTE, &c);
			MPI_Get_count(&st2, MPI_BYTE, &c2);
			*done = (long)c + c2;
		}
		return rc;
	}
	if (rc == MPI_SUCCESS) {
		MPI_Get_count(&st, MPI_BYTE, &c);
		*done = c;
	}
	return rc;
}

enum memory {
	CONTIG, STRIDED, IRREGULAR, NMEMORY
};

/* A memory type for n bytes of etypes of esz bytes (count 1). */
static MPI_Datatype memory_type(enum memory m, MPI_Datatype etype, long n,
				long esz)
{
	long cnt = n / esz;
	MPI_Datatype t;

	if (m == CONTIG) {
		MPI_Type_contiguous((int)cnt, etype, &t);
	} else if (m == STRIDED) {
		MPI_Type_vector((int)cnt, 1, 2, etype, &t);
	} else {
		int *b = malloc(sizeof(int) * cnt), c = 0;
		MPI_Aint *d = malloc(sizeof(MPI_Aint) * cnt), at = orange(0, 5);

		for (long left = cnt; left > 0; c++) {
			b[c] = (int)orange(1, 5);
			if (b[c] > left)
				b[c] = (int)left;
			d[c] = at;
			at += b[c] * esz + orange(0, 7);
			left -= b[c];
		}
		MPI_Type_create_hindexed(c, b, d, etype, &t);
		free(b);
		free(d);
	}
	return commit(t);
}

static MPI_Info hints(bool romio, const struct kase *k, bool create)
{
	char value[MPI_MAX_INFO_VAL] = "";
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", romio ? "true" : "false");
	if (create && k->nlayout && !k->unit) {
		for (int j = 0; j < k->nlayout; j++)
			snprintf(value + strlen(value), sizeof(value) - strlen(value),
				 "%s%d", j ? " " : "", (int)MPI_Type_c2f(k->layout[j]));
		MPI_Info_set(info, "subfile_datatypes", value);
	}
	if (create && k->unit) {
		MPI_Info_set(info, "striping_unit", k->unit);
		MPI_Info_set(info, "striping_factor", k->factor);
	}
	return info;
}

static bool open_file(const struct kase *k, MPI_Comm comm, int amode,
		      bool romio, MPI_File *fh)
{
	char path[512], v[MPI_MAX_INFO_VAL + 1] = "";
	MPI_Info info = hints(romio, k, amode & MPI_MODE_CREATE), got;
	int flag = 0;
	bool ok;

	snprintf(path, sizeof(path), "clf:%s/%s", dir, k->name);
	ok = CHECK_MPI(MPI_File_open(comm, path, amode, info, fh), "open", k->name);
	MPI_Info_free(&info);
	if (!ok)
		return false;
	MPI_File_get_info(*fh, &got);
	MPI_Info_get(got, "use_romio_optimizations", MPI_MAX_INFO_VAL, v, &flag);
	CHECK(flag && !strcmp(v, romio ? "true" : "false"),
	      "%s: use_romio_optimizations is '%s'", k->name, v);
	if ((k->nlayout || k->unit) && (amode & MPI_MODE_CREATE)) {
		char want[16];

		if (k->unit)
			snprintf(want, sizeof(want), "%s", k->factor);
		else
			snprintf(want, sizeof(want), "%d", k->nlayout);
		MPI_Info_get(got, "striping_factor", MPI_MAX_INFO_VAL, v, &flag);
		CHECK(flag && !strcmp(v, want), "%s: striping_factor '%s', want %s",
		      k->name, v, want);
	}
	MPI_Info_free(&got);
	return true;
}

/* ------------------------------------------------------------------ */
/* One case                                                             */
/* ------------------------------------------------------------------ */

/* Rank 0: the views of all processes cover [0, size) once; the size. */
static long coverage(const struct kase *k, const long *offs, long n)
{
	long *all = NULL, total = 0, size = 0;
	int *rc = NULL, *rd = NULL, mine = (int)n;
	char *hit;
	long bad = -1;

	if (rank == 0) {
		rc = calloc(nprocs, sizeof(int));
		rd = calloc(nprocs, sizeof(int));
	}
	MPI_Gather(&mine, 1, MPI_INT, rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		for (int r = 0; r < nprocs; r++) {
			rd[r] = (int)total;
			total += rc[r];
		}
		all = malloc(sizeof(long) * (total + 1));
	}
	MPI_Gatherv(offs, mine, MPI_LONG, all, rc, rd, MPI_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		for (long x = 0; x < total; x++)
			if (all[x] + 1 > size)
				size = all[x] + 1;
		if (k->hdr > size)
			size = k->hdr;
		hit = calloc(size, 1);
		for (long x = 0; x < k->hdr; x++)
			hit[x]++;
		for (long x = 0; x < total; x++)
			hit[all[x]]++;
		for (long x = 0; x < size && bad < 0; x++)
			if (hit[x] != 1)
				bad = x;
		CHECK(bad < 0, "%s: the views cover byte %ld %d times (the test's "
		      "premise)", k->name, bad, bad >= 0 ? hit[bad] : 0);
		free(hit);
	}
	free(rc);
	free(rd);
	free(all);
	MPI_Bcast(&size, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	return size;
}

/* Rank 0, write phase: the file and its layout in the manifest. */
static void list_in_manifest(const struct kase *k, long size)
{
	MPI_Datatype lay[MAX_LAYOUT];
	int nlay = k->nlayout;
	MPI_Aint lb, ext;

	fprintf(manifest, "file %s/%s %ld\n", dir, k->name, size);
	if (k->unit)
		nlay = striping_layout(lay);
	else
		memcpy(lay, k->layout, sizeof(lay[0]) * nlay);
	if (!nlay)
		return;
	MPI_Type_get_extent(lay[0], &lb, &ext);
	fprintf(manifest, "layout %s/%s %ld %d\n", dir, k->name, (long)ext, nlay);
	for (int j = 0; j < nlay; j++) {
		long *offs, n = typemap(lay[j], 1, &offs), runs = 0;

		for (long x = 0; x < n; x++)
			runs += x == 0 || offs[x] != offs[x - 1] + 1;
		fprintf(manifest, "sub %d %ld\n", j, runs);
		for (long x = 0, s = 0; x < n; x++)
			if (x == n - 1 || offs[x + 1] != offs[x] + 1) {
				fprintf(manifest, "run %ld %ld\n", offs[s], x - s + 1);
				s = x + 1;
			}
		free(offs);
	}
	if (k->unit)
		for (int j = 0; j < nlay; j++)
			type_free(&lay[j]);
}

/* Rank 0: the whole file through the byte view of a new open. */
static void check_whole(const struct kase *k, long size, uint64_t s)
{
	unsigned char *buf = malloc(size + 16);
	MPI_Offset fsize = -1;
	MPI_Status st;
	MPI_File fh;
	long bad = -1;
	int got = -1;

	if (open_file(k, MPI_COMM_SELF, MPI_MODE_RDONLY, romio_opt, &fh)) {
		MPI_File_get_size(fh, &fsize);
		CHECK(fsize == size, "%s: size %lld, want %ld", k->name,
		      (long long)fsize, size);
		CHECK_MPI(MPI_File_read_at(fh, 0, buf, (int)size + 16, MPI_BYTE, &st),
			  "whole-file read", k->name);
		MPI_Get_count(&st, MPI_BYTE, &got);
		CHECK(got == size, "%s: whole-file read got %d of %ld bytes",
		      k->name, got, size);
		for (long x = 0; x < got && bad < 0; x++)
			if (buf[x] != pattern_byte(x, s))
				bad = x;
		CHECK(bad < 0, "%s: byte %ld is 0x%02x, want 0x%02x", k->name, bad,
		      bad >= 0 ? buf[bad] : 0, bad >= 0 ? pattern_byte(bad, s) : 0);
		CHECK_MPI(MPI_File_close(&fh), "close", k->name);
	}
	free(buf);
}

/*
 * Read the view bytes with access a into a fresh buffer and compare:
 * view byte x must be the pattern at file offset fo[x] and memory
 * outside memtype must keep the sentinel.
 */
static void read_compare(const struct kase *k, MPI_File fh, enum access a,
			 enum memory m, const long *fo, long n, long esz,
			 uint64_t s, const char *how)
{
	MPI_Datatype mt = memory_type(a == TWO ? CONTIG : m, k->etype, n, esz);
	MPI_Aint tlb, text;
	long *mo, mn = typemap(mt, 1, &mo), done = 0, bad = -1, hole = -1;
	unsigned char *buf, *sel;

	MPI_Type_get_true_extent(mt, &tlb, &text);
	buf = malloc(tlb + text);
	sel = calloc(tlb + text, 1);
	memset(buf, SENTINEL, tlb + text);
	CHECK(mn == n, "%s: memory type of %ld bytes for %ld", k->name, mn, n);
	if (CHECK_MPI(access_view(fh, a, false, buf, mt, k->etype, n, esz, &done),
		      access_name[a], k->name)) {
		CHECK(done == n, "%s: %s read (%s) moved %ld of %ld bytes", k->name,
		      how, access_name[a], done, n);
		for (long x = 0; x < n && bad < 0; x++) {
			sel[mo[x]] = 1;
			if (buf[mo[x]] != pattern_byte(fo[x], s))
				bad = x;
		}
		CHECK(bad < 0, "%s: %s read (%s; written with %s): view byte %ld "
		      "(file byte %ld) is 0x%02x, want 0x%02x", k->name, how,
		      access_name[a], k->written, bad, bad >= 0 ? fo[bad] : 0,
		      bad >= 0 ? buf[mo[bad]] : 0,
		      bad >= 0 ? pattern_byte(fo[bad], s) : 0);
		for (long x = 0; x < n; x++)
			sel[mo[x]] = 1;
		for (MPI_Aint x = 0; x < tlb + text && hole < 0; x++)
			if (!sel[x] && buf[x] != SENTINEL)
				hole = x;
		CHECK(hole < 0, "%s: %s read (%s) wrote memory byte %ld outside "
		      "the memory type", k->name, how, access_name[a], hole);
	}
	MPI_Type_free(&mt);
	free(mo);
	free(buf);
	free(sel);
}

static void run_case(struct kase *k)
{
	enum access wa = (enum access)crange(0, NACCESS - 1);
	enum access ra = (enum access)((wa + crange(1, NACCESS - 1)) % NACCESS);
	enum memory m = (enum memory)orange(0, NMEMORY - 1);
	long *offs, n, esz, size, done = 0;
	MPI_Count esize;
	MPI_File fh;
	int amode;

	MPI_Type_size_x(k->etype, &esize);
	esz = (long)esize;
	k->written = reading ? "CLF_write" : access_name[wa];
	n = typemap(k->ftype, k->reps, &offs);
	CHECK(n > 0, "%s: no typemap (%ld)", k->name, n);
	if (n <= 0)
		return;
	/* File offsets of the view bytes. */
	for (long x = 0; x < n; x++)
		offs[x] += k->disp;
	size = coverage(k, offs, n);
	if (!reading && rank == 0)
		list_in_manifest(k, size);

	if (!reading) {
		char path[512];

		snprintf(path, sizeof(path), "clf:%s/%s", dir, k->name);
		if (rank == 0)
			MPI_File_delete(path, MPI_INFO_NULL);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	amode = reading ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_RDWR;
	if (open_file(k, MPI_COMM_WORLD, amode, romio_opt, &fh)) {
		if (k->hdr && rank == 0 && !reading) {
			unsigned char h[128];

			for (long x = 0; x < k->hdr; x++)
				h[x] = pattern_byte(x, salt);
			CHECK_MPI(MPI_File_write_at(fh, 0, h, (int)k->hdr, MPI_BYTE,
						    MPI_STATUS_IGNORE),
				  "header", k->name);
		}
		CHECK_MPI(MPI_File_set_view(fh, k->disp, k->etype, k->ftype, "native",
					    MPI_INFO_NULL), "set_view", k->name);
		if (!reading) {
			MPI_Datatype mt = memory_type(wa == TWO ? CONTIG : m, k->etype,
						      n, esz);
			MPI_Aint tlb, text;
			long *mo;
			unsigned char *buf;

			typemap(mt, 1, &mo);
			MPI_Type_get_true_extent(mt, &tlb, &text);
			buf = malloc(tlb + text);
			memset(buf, SENTINEL, tlb + text);
			for (long x = 0; x < n; x++)
				buf[mo[x]] = pattern_byte(offs[x], salt);
			if (CHECK_MPI(access_view(fh, wa, true, buf, mt, k->etype, n,
						  esz, &done),
				      access_name[wa], k->name))
				CHECK(done == n, "%s: write (%s) moved %ld of %ld "
				      "bytes", k->name, access_name[wa], done, n);
			MPI_Type_free(&mt);
			free(mo);
			free(buf);
			read_compare(k, fh, ra, (enum memory)orange(0, NMEMORY - 1),
				     offs, n, esz, salt, "same-handle");
		} else {
			read_compare(k, fh, ra, m, offs, n, esz, salt, "read-phase");
		}
		CHECK_MPI(MPI_File_close(&fh), "close", k->name);
	}

	/* Through a new open in the other mode. */
	if (!reading &&
	    open_file(k, MPI_COMM_WORLD, MPI_MODE_RDONLY, !romio_opt, &fh)) {
		CHECK_MPI(MPI_File_set_view(fh, k->disp, k->etype, k->ftype, "native",
					    MPI_INFO_NULL), "set_view", k->name);
		read_compare(k, fh, crange(0, 1) ? ALL : AT,
			     (enum memory)orange(0, NMEMORY - 1), offs, n, esz,
			     salt, "other-mode");
		CHECK_MPI(MPI_File_close(&fh), "close", k->name);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		check_whole(k, size, salt);
	MPI_Barrier(MPI_COMM_WORLD);
	free(offs);
}

/* The layout cases: interleaved blocks of b bytes, about 3.5 extents. */
static void run_layout_case(struct kase *k)
{
	MPI_Aint lb, ext = 3 * 4096;
	MPI_Datatype t;
	long b, m;

	if (k->nlayout)
		MPI_Type_get_extent(k->layout[0], &lb, &ext);
	b = crange(1, ext > 2 ? ext / 2 : 2);
	m = (7 * ext / 2 + nprocs * b - 1) / (nprocs * b);
	MPI_Type_contiguous((int)b, MPI_BYTE, &t);
	k->ftype = commit(resized(t, 0, nprocs * b));
	k->disp = rank * b;
	k->reps = m;
	run_case(k);
}

int main(int argc, char **argv)
{
	int all_failures = 0, all_checks = 0, ncases = 0;
	struct kase k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (argc < 5 || (strcmp(argv[1], "write") && strcmp(argv[1], "read")) ||
	    (strcmp(argv[2], "true") && strcmp(argv[2], "false")) ||
	    (!strcmp(argv[1], "write") && argc != 6)) {
		if (rank == 0)
			fprintf(stderr, "usage: romio_types write HINT DIR SALT MANIFEST\n"
				"       romio_types read HINT DIR SALT\n");
		MPI_Finalize();
		return 2;
	}
	if (nprocs > 16) {
		if (rank == 0)
			fprintf(stderr, "romio_types: at most 16 processes\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	reading = !strcmp(argv[1], "read");
	romio_opt = !strcmp(argv[2], "true");
	dir = argv[3];
	salt = strtoull(argv[4], NULL, 0);
	own_rng = seed(0x2545f4914f6cdd1dULL + (uint64_t)rank * 7919 + (reading ? 1 : 0));
	if (!reading && rank == 0) {
		manifest = fopen(argv[5], "w");
		if (!manifest) {
			perror(argv[5]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}

	for (int i = 0; case_rng = seed(1000 + i), view_case(i, &k); i++, ncases++) {
		run_case(&k);
		kase_release(&k);
	}
	for (int i = 0; i < NRANDOM; i++, ncases += 2) {
		case_rng = seed(2000 + i);
		random_darray(i, &k);
		run_case(&k);
		kase_release(&k);
		case_rng = seed(3000 + i);
		random_subarray(i, &k);
		run_case(&k);
		kase_release(&k);
	}
	for (int i = 0; case_rng = seed(4000 + i), layout_case(i, &k); i++, ncases++) {
		run_layout_case(&k);
		kase_release(&k);
	}

	type_free(&three);
	if (manifest && fclose(manifest) != 0)
		CHECK(false, "writing the manifest %s", argv[5]);
	MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM,
		      MPI_COMM_WORLD);
	MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_types %s use_romio_optimizations=%s on %d ranks: "
		       "%d cases, %d checks, %d failed\n", argv[1], argv[2], nprocs,
		       ncases, all_checks, all_failures);
	MPI_Finalize();
	return all_failures ? 1 : 0;
}
