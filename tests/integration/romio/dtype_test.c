// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dtype_test.c -- the MPI -> clf datatype converter of romio-clf
 * (romio-clf/ad_clf/ad_clf_dtype.c) against a byte-level model.
 *
 * The model of an MPI type is its typemap, read from MPI itself: a buffer
 * whose bytes are labelled with their offsets is packed (MPI_Pack), three
 * times for 24-bit labels, so the packed bytes name, in typemap order, the
 * offsets the type selects.  For many random types (every combiner, valid
 * and invalid) and some fixed ones, the converted clf type must select
 * exactly those bytes in that order (CLF_Type_map over one extent and
 * CLF_Type_unmap of every linear offset), have the MPI extent, and be
 * refused, with a message, exactly when clf cannot express it.
 *
 * usage: dtype_test [ITERATIONS [SEED]]     (one MPI process is enough)
 * Exits 0 when every check passed, 1 otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_clf_dtype.h"

#define MAX_TRUE_EXTENT (1 << 16)

static int checks, failures;
static long accepted, refused;	/* as views: both must occur */

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (!(cond)) {                                             \
			failures++;                                        \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
		}                                                          \
	} while (0)

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Uniform in [lo, hi]. */
static long range(long lo, long hi)
{
	return lo + (long)(rnd() % (uint64_t)(hi - lo + 1));
}

/* The typemap of count copies of type: offsets (relative to the buffer)
 * in typemap order.  Returns the number of bytes, -1 when too large. */
static long typemap(MPI_Datatype type, int count, long **offs)
{
	MPI_Aint tlb, text, lb, ext, lo, span;
	MPI_Count size;
	unsigned char *buf, *packed;
	int pos;

	MPI_Type_size_x(type, &size);
	MPI_Type_get_true_extent(type, &tlb, &text);
	MPI_Type_get_extent(type, &lb, &ext);
	*offs = NULL;
	if (size == 0)
		return 0;
	lo = tlb + (ext < 0 ? (count - 1) * ext : 0);
	span = text + (count - 1) * (ext < 0 ? -ext : ext);
	if (span > 4 * MAX_TRUE_EXTENT || size * count > 4 * MAX_TRUE_EXTENT)
		return -1;
	buf = malloc(span);
	packed = malloc(size * count);
	*offs = calloc(size * count, sizeof(**offs));
	for (int pass = 0; pass < 3; pass++) {
		for (MPI_Aint x = 0; x < span; x++)
			buf[x] = (unsigned char)((x + lo) >> (8 * pass));
		pos = 0;
		MPI_Pack(buf - lo, count, type, packed, (int)(size * count), &pos,
			 MPI_COMM_SELF);
		for (long i = 0; i < size * count; i++)
			(*offs)[i] |= (long)packed[i] << (8 * pass);
	}
	/* Labels are offsets modulo 2^24 from 0: sign-extend. */
	for (long i = 0; i < size * count; i++)
		if ((*offs)[i] >= 1L << 23)
			(*offs)[i] -= 1L << 24;
	free(buf);
	free(packed);
	return size * count;
}

static bool increasing(const long *o, long n)
{
	for (long i = 1; i < n; i++)
		if (o[i] <= o[i - 1])
			return false;
	return true;
}

/* clf type t with displacement-free window w0 must select exactly
 * offs[0..n) - w0, in order, within one extent. */
static void check_selects(CLF_Datatype t, MPI_Aint w0, const long *offs,
			  long n, MPI_Aint extent, const char *what)
{
	char *sel = calloc(extent, 1);
	bool ok = true;
	int64_t lin, f;

	CHECK(CLF_Type_size(t) == n, "%s: clf size %" PRId64 ", MPI size %ld",
	      what, CLF_Type_size(t), n);
	for (long w = 0; w < n && ok; w++) {
		long x = offs[w] - w0;

		if (x < 0 || x >= extent) {
			ok = false;
			CHECK(false, "%s: byte %ld outside the window", what, x);
			break;
		}
		sel[x] = 1;
		ok = CLF_Type_unmap(t, 0, w, &f) == 0 && f == x;
		CHECK(ok, "%s: linear %ld -> %" PRId64 ", want %ld", what, w,
		      f, x);
	}
	for (long x = 0; x < extent && ok; x++) {
		int r = CLF_Type_map(t, 0, x, &lin);

		ok = sel[x] ? r == 0 : r == -ENOENT;
		CHECK(ok, "%s: byte %ld selected by clf: %d, by MPI: %d", what,
		      x, r == 0, sel[x]);
	}
	free(sel);
}

/* Every check on one MPI type. */
static void check_type(MPI_Datatype type, const char *what)
{
	MPI_Aint lb, ext, tlb, text, w0 = 0, base = 0;
	MPI_Count size;
	long *one, *two, n1, n2;
	bool inc1, inc2, view_ok, layout_ok;
	char msg[ADIOI_CLF_DTYPE_MSG_LEN];
	CLF_Datatype t = NULL;
	int r;

	MPI_Type_commit(&type);
	MPI_Type_size_x(type, &size);
	MPI_Type_get_extent(type, &lb, &ext);
	MPI_Type_get_true_extent(type, &tlb, &text);
	n1 = typemap(type, 1, &one);
	n2 = typemap(type, 2, &two);
	if (n1 < 0 || n2 < 0) {
		free(one);
		free(two);
		return;
	}
	inc1 = increasing(one, n1);
	inc2 = increasing(two, n2);

	/* As a filetype. */
	/* The standard asks the bytes, not the bounds, to be >= 0. */
	view_ok = size > 0 && ext > 0 && inc1 && inc2 && tlb >= 0;
	r = ADIOI_CLF_Dtype_convert(type, ADIOI_CLF_DTYPE_VIEW, &t, &w0, msg,
				    sizeof(msg));
	CHECK((r == 0) == view_ok, "%s as a view: converter says %d (%s), "
	      "model says %s (size %lld lb %ld extent %ld true lb %ld inc %d/%d)",
	      what, r, msg, view_ok ? "valid" : "invalid", (long long)size,
	      (long)lb, (long)ext, (long)tlb, inc1, inc2);
	if (r == 0)
		accepted++;
	else
		refused++;
	if (r == 0) {
		CHECK(CLF_Type_extent(t) == ext, "%s: clf extent %" PRId64
		      ", MPI extent %ld", what, CLF_Type_extent(t), (long)ext);
		check_selects(t, w0, one, n1, ext, what);
		CLF_Type_free(&t);
	} else {
		CHECK(msg[0] != '\0', "%s: refused without a message", what);
	}

	/* As a subfile of a layout. */
	layout_ok = view_ok && lb == 0 && tlb >= 0 && tlb + text <= ext;
	r = ADIOI_CLF_Dtype_convert(type, ADIOI_CLF_DTYPE_LAYOUT, &t, &w0, msg,
				    sizeof(msg));
	CHECK((r == 0) == layout_ok, "%s as a subfile: converter says %d (%s)",
	      what, r, msg);
	if (r == 0) {
		CHECK(w0 == 0, "%s: subfile window %ld", what, (long)w0);
		check_selects(t, 0, one, n1, ext, what);
		CLF_Type_free(&t);
	}

	/* As a memory type: any lower bound, one or two copies. */
	for (int count = 1; count <= 2; count++) {
		const long *o = count == 1 ? one : two;
		long n = count == 1 ? n1 : n2;
		bool ok = size > 0 && (count == 1 ? inc1 : inc2);

		r = ADIOI_CLF_Dtype_memtype(type, count, &t, &base, msg,
					    sizeof(msg));
		if (size == 0) {
			CHECK(r == -ENODATA, "%s: empty memtype gives %d", what, r);
			continue;
		}
		CHECK((r == 0) == ok, "%s as a memtype x%d: %d (%s)", what,
		      count, r, msg);
		if (r == 0) {
			int64_t ex = CLF_Type_extent(t);

			check_selects(t, base, o, n, ex, what);
			CLF_Type_free(&t);
		}
	}
	free(one);
	free(two);
}

static const MPI_Datatype named_types[] = {
	MPI_BYTE, MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_SHORT_INT,
	MPI_DOUBLE_INT, MPI_2INT, MPI_LONG_DOUBLE_INT,
};

static MPI_Aint extent_of(MPI_Datatype t)
{
	MPI_Aint lb, ext;

	MPI_Type_get_extent(t, &lb, &ext);
	return ext;
}

static MPI_Aint true_extent_of(MPI_Datatype t)
{
	MPI_Aint lb, ext;

	MPI_Type_get_true_extent(t, &lb, &ext);
	return ext;
}

/* A random type; mostly valid filetypes, sometimes not. */
static MPI_Datatype random_type(int depth)
{
	MPI_Datatype old, t, kids[3];
	int kind = depth <= 0 ? 0 : (int)range(0, 11);
	int n, bl[4], di[4];
	MPI_Aint ext, ad[4];
	bool bad = range(0, 9) == 0;	/* one in ten may overlap */

	if (kind == 0) {
		MPI_Type_dup(named_types[range(0, sizeof(named_types) /
					       sizeof(named_types[0]) - 1)],
			     &t);
		return t;
	}
	if (kind == 8) {	/* struct of different children */
		MPI_Aint at = range(0, 8);

		n = (int)range(1, 3);
		for (int i = 0; i < n; i++) {
			kids[i] = random_type(depth - 1);
			bl[i] = (int)range(0, 3);
			ad[i] = at;
			at += bl[i] * extent_of(kids[i]) +
			      (bad ? -range(0, 8) : range(0, 8));
		}
		MPI_Type_create_struct(n, bl, ad, kids, &t);
		for (int i = 0; i < n; i++)
			MPI_Type_free(&kids[i]);
		return t;
	}
	old = random_type(depth - 1);
	ext = extent_of(old);
	if (ext <= 0 || true_extent_of(old) > 2048)
		kind = 10;	/* only resize or dup what is odd or big */
	switch (kind) {
	case 1:
		MPI_Type_contiguous((int)range(1, 4), old, &t);
		break;
	case 2:
		n = (int)range(1, 3);
		MPI_Type_vector((int)range(1, 4), n,
				bad ? (int)range(-2, n) : (int)range(n, n + 3),
				old, &t);
		break;
	case 3:
		n = (int)range(1, 3);
		MPI_Type_create_hvector((int)range(1, 4), n,
					n * ext + (bad ? -range(1, 8) : range(0, 9)),
					old, &t);
		break;
	case 4:
	case 5:
		n = (int)range(1, 4);
		for (int i = 0, at = (int)range(0, 3); i < n; i++) {
			bl[i] = (int)range(0, 3);
			di[i] = at;
			ad[i] = at * ext + (kind == 5 ? range(0, 5) : 0);
			at += bl[i] + (bad ? -(int)range(0, 2) : (int)range(0, 2));
		}
		if (kind == 4)
			MPI_Type_indexed(n, bl, di, old, &t);
		else
			MPI_Type_create_hindexed(n, bl, ad, old, &t);
		break;
	case 6:
	case 7:
		n = (int)range(1, 4);
		bl[0] = (int)range(1, 3);
		for (int i = 0, at = (int)range(0, 2); i < n; i++) {
			di[i] = at;
			ad[i] = at * ext;
			at += bl[0] + (bad ? -(int)range(0, 3) : (int)range(0, 2));
		}
		if (kind == 6)
			MPI_Type_create_indexed_block(n, bl[0], di, old, &t);
		else
			MPI_Type_create_hindexed_block(n, bl[0], ad, old, &t);
		break;
	case 9: {
		int nd = (int)range(1, 3), sizes[3], subs[3], starts[3];

		for (int i = 0; i < nd; i++) {
			sizes[i] = (int)range(1, 5);
			subs[i] = (int)range(1, sizes[i]);
			starts[i] = (int)range(0, sizes[i] - subs[i]);
		}
		MPI_Type_create_subarray(nd, sizes, subs, starts,
					 range(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
					 old, &t);
		break;
	}
	case 11: {
		int nd = (int)range(1, 2), g[2], dist[2], darg[2], ps[2], np = 1;

		for (int i = 0; i < nd; i++) {
			g[i] = (int)range(1, 9);
			ps[i] = (int)range(1, 3);
			np *= ps[i];
			dist[i] = (int)range(0, 2);
			if (dist[i] == 0) {
				dist[i] = MPI_DISTRIBUTE_NONE;
				ps[i] = 1;
			} else if (dist[i] == 1) {
				dist[i] = MPI_DISTRIBUTE_BLOCK;
				darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
			} else {
				dist[i] = MPI_DISTRIBUTE_CYCLIC;
				darg[i] = range(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG
						      : (int)range(1, 3);
			}
			if (dist[i] == MPI_DISTRIBUTE_NONE)
				darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
		}
		np = 1;
		for (int i = 0; i < nd; i++)
			np *= ps[i];
		MPI_Type_create_darray(np, (int)range(0, np - 1), nd, g, dist,
				       darg, ps,
				       range(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
				       old, &t);
		break;
	}
	default: /* 10: resized, or dup */
		if (range(0, 3) == 0) {
			MPI_Type_dup(old, &t);
		} else {
			MPI_Aint lbv = range(-4, 8);
			MPI_Aint e = true_extent_of(old) + range(-4, 12);

			MPI_Type_create_resized(old, lbv, e, &t);
		}
		break;
	}
	MPI_Type_free(&old);
	return t;
}

static void check_named(void)
{
	for (size_t i = 0; i < sizeof(named_types) / sizeof(named_types[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "named type %zu", i);
		check_type(named_types[i], what);
	}
}

/* The matrix types the I/O tests use: a 2-D CYCLIC(k) darray per rank,
 * compact whatever the matrix size. */
static void check_darray_is_compact(void)
{
	int g[2] = { 16384, 16384 }, dist[2] = { MPI_DISTRIBUTE_CYCLIC,
						 MPI_DISTRIBUTE_CYCLIC };
	int darg[2] = { 1, 1 }, ps[2] = { 2, 2 };
	char msg[ADIOI_CLF_DTYPE_MSG_LEN];

	for (int rank = 0; rank < 4; rank++) {
		MPI_Datatype t;
		CLF_Datatype c = NULL;
		MPI_Aint w0;
		int64_t lin;
		int r;

		MPI_Type_create_darray(4, rank, 2, g, dist, darg, ps,
				       MPI_ORDER_C, MPI_BYTE, &t);
		r = ADIOI_CLF_Dtype_convert(t, ADIOI_CLF_DTYPE_VIEW, &c, &w0,
					    msg, sizeof(msg));
		CHECK(r == 0, "16384^2 darray rank %d: %s", rank, msg);
		if (r == 0) {
			int64_t enc = CLF_Type_encode(c, NULL, 0);
			/* Element (i, j) of this rank: i = rank/2 + 2a,
			 * j = rank%2 + 2b: linear a * 8192 + b. */
			int64_t off = (int64_t)(rank / 2 + 2 * 100) * 16384 +
				      rank % 2 + 2 * 77;

			CHECK(enc > 0 && enc < 4096,
			      "darray encodes in %" PRId64 " bytes", enc);
			CHECK(CLF_Type_extent(c) == 16384LL * 16384,
			      "darray extent %" PRId64, CLF_Type_extent(c));
			CHECK(CLF_Type_map(c, w0, off, &lin) == 0 &&
			      lin == 100 * 8192 + 77,
			      "darray rank %d maps (%d, %d) to %" PRId64, rank,
			      rank / 2 + 200, rank % 2 + 154, lin);
			CLF_Type_free(&c);
		}
		MPI_Type_free(&t);
	}
}

/*
 * The checkerboard of issue 9 written as applications write it: an
 * MPI_Type_indexed list of row pieces, 2^21 blocks per process for an
 * 8192 x 8192 byte matrix in 16 x 16 cells (cell (i, j) is process
 * (i + j) % 2's).  As a view and as a subfile type it must convert, to a
 * description of a few FALLS (it used to fail: "struct: description too
 * large").
 */
static void check_indexed_checkerboard_is_compact(void)
{
	enum { N = 8192, K = 16, NB = N * (N / (2 * K)) };
	int *len = malloc(NB * sizeof(*len)), *disp = malloc(NB * sizeof(*disp));
	char msg[ADIOI_CLF_DTYPE_MSG_LEN];

	for (int rank = 0; rank < 2 && len && disp; rank++) {
		MPI_Datatype t, f;
		CLF_Datatype c = NULL;
		MPI_Aint w0;
		int64_t lin, enc;
		int nb = 0, r;

		for (int row = 0; row < N; row++)
			for (int col = ((row / K + rank) % 2) * K; col < N;
			     col += 2 * K) {
				len[nb] = K;
				disp[nb++] = row * N + col;
			}
		MPI_Type_indexed(nb, len, disp, MPI_BYTE, &t);
		MPI_Type_create_resized(t, 0, (MPI_Aint)N * N, &f);
		MPI_Type_free(&t);
		r = ADIOI_CLF_Dtype_convert(f, ADIOI_CLF_DTYPE_VIEW, &c, &w0, msg,
					    sizeof(msg));
		CHECK(r == 0, "indexed checkerboard rank %d: %s", rank, msg);
		if (r == 0) {
			enc = CLF_Type_encode(c, NULL, 0);
			CHECK(enc > 0 && enc < 512,
			      "indexed checkerboard encodes in %" PRId64 " bytes", enc);
			CHECK(CLF_Type_extent(c) == (int64_t)N * N && w0 == 0,
			      "indexed checkerboard extent %" PRId64 " window %ld",
			      CLF_Type_extent(c), (long)w0);
			/* Row 100 holds 50 rows' worth before it; (100, 77) is
			 * in cell (6, 4): rank 0's, the 3rd of its cells. */
			if (rank == 0)
				CHECK(CLF_Type_map(c, w0, 100 * N + 77, &lin) == 0 &&
				      lin == 100 * (N / 2) + 2 * K + 77 % K,
				      "indexed checkerboard maps (100, 77) to %" PRId64,
				      lin);
			CLF_Type_free(&c);
		}
		r = ADIOI_CLF_Dtype_convert(f, ADIOI_CLF_DTYPE_LAYOUT, &c, &w0,
					    msg, sizeof(msg));
		CHECK(r == 0, "indexed checkerboard rank %d as a subfile: %s",
		      rank, msg);
		CLF_Type_free(&c);
		MPI_Type_free(&f);
	}
	free(len);
	free(disp);
}

/* Fixed cases with a known answer and message. */
static void check_refusals(void)
{
	char msg[ADIOI_CLF_DTYPE_MSG_LEN];
	MPI_Datatype t, r;
	CLF_Datatype c = NULL;
	MPI_Aint w0;
	int bl[2] = { 1, 1 }, di[2] = { 4, 0 };

	/* Overlapping blocks. */
	MPI_Type_vector(3, 4, 2, MPI_BYTE, &t);
	CHECK(ADIOI_CLF_Dtype_convert(t, ADIOI_CLF_DTYPE_VIEW, &c, &w0, msg,
				      sizeof(msg)) == -EINVAL &&
	      strstr(msg, "overlap"), "overlapping vector: %s", msg);
	MPI_Type_free(&t);
	/* Decreasing displacements. */
	MPI_Type_indexed(2, bl, di, MPI_INT, &t);
	CHECK(ADIOI_CLF_Dtype_convert(t, ADIOI_CLF_DTYPE_VIEW, &c, &w0, msg,
				      sizeof(msg)) == -EINVAL &&
	      strstr(msg, "precedes"), "decreasing indexed: %s", msg);
	MPI_Type_free(&t);
	/* A negative lower bound: a legal view (its bytes are at 0 and
	 * later), tiled from its first byte; no subfile type. */
	MPI_Type_create_resized(MPI_INT, -4, 8, &r);
	CHECK(ADIOI_CLF_Dtype_convert(r, ADIOI_CLF_DTYPE_VIEW, &c, &w0, msg,
				      sizeof(msg)) == 0 && w0 == 0 &&
	      CLF_Type_extent(c) == 8, "negative lb view: %s", msg);
	CLF_Type_free(&c);
	CHECK(ADIOI_CLF_Dtype_convert(r, ADIOI_CLF_DTYPE_LAYOUT, &c, &w0, msg,
				      sizeof(msg)) == -EINVAL &&
	      strstr(msg, "negative lower bound"), "negative lb subfile: %s",
	      msg);
	/* ... which a memory type may have. */
	CHECK(ADIOI_CLF_Dtype_memtype(r, 3, &c, &w0, msg, sizeof(msg)) == 0,
	      "negative lb memtype: %s", msg);
	CLF_Type_free(&c);
	MPI_Type_free(&r);
	/* A subfile must start at 0; a view may start later. */
	MPI_Type_create_hindexed_block(1, 1, (MPI_Aint[]){ 4 }, MPI_INT, &t);
	MPI_Type_create_resized(t, 4, 8, &r);
	MPI_Type_free(&t);
	CHECK(ADIOI_CLF_Dtype_convert(r, ADIOI_CLF_DTYPE_LAYOUT, &c, &w0, msg,
				      sizeof(msg)) == -EINVAL &&
	      strstr(msg, "lower bound 0"), "subfile lb: %s", msg);
	CHECK(ADIOI_CLF_Dtype_convert(r, ADIOI_CLF_DTYPE_VIEW, &c, &w0, msg,
				      sizeof(msg)) == 0 && w0 == 4,
	      "view lb 4: %s", msg);
	CLF_Type_free(&c);
	MPI_Type_free(&r);
	/* No bytes. */
	MPI_Type_contiguous(0, MPI_INT, &t);
	CHECK(ADIOI_CLF_Dtype_convert(t, ADIOI_CLF_DTYPE_VIEW, &c, &w0, msg,
				      sizeof(msg)) == -EINVAL &&
	      strstr(msg, "no bytes"), "empty: %s", msg);
	MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 3000;

	rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9e3779b97f4a7c15ULL;
	MPI_Init(&argc, &argv);
	check_named();
	check_refusals();
	check_darray_is_compact();
	check_indexed_checkerboard_is_compact();
	for (long i = 0; i < iterations; i++) {
		MPI_Datatype t = random_type((int)range(1, 3));
		char what[64];

		snprintf(what, sizeof(what), "random type %ld", i);
		check_type(t, what);
		MPI_Type_free(&t);
		if (failures > 20)
			break;
	}
	MPI_Finalize();
	CHECK(accepted > iterations / 4 && refused > iterations / 20,
	      "the random types are too one-sided: %ld accepted, %ld refused",
	      accepted, refused);
	printf("dtype_test: %ld types accepted and %ld refused as views; "
	       "%d checks, %d failed\n", accepted, refused, checks, failures);
	return failures ? 1 : 0;
}
