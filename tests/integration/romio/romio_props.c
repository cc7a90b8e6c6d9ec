// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_props.c -- a property test of MPI-IO on "clf:" files that cannot
 * be tuned to: random legal MPI datatypes as filetypes and memory types,
 * over random layouts, written and read through every access call, both
 * on clf's native path (use_romio_optimizations=false) and on ROMIO's
 * (=true), compared byte for byte with an oracle that trusts neither
 * ROMIO nor clf.  Run by test_romio_props.sh under mpiexec -n 2.
 *
 * usage: romio_props [-s SEED] [-n CASES] [-f FIRST] [-d DIR]
 *                    [-t SECONDS] [-x CLASSES] [-c CLASS]
 *   SEED     the run's seed (default $CLF_TEST_SEED, else 1); case i
 *            is drawn from (SEED, i) alone, so one case replays alone:
 *            -s SEED -f I -n 1 (or CLF_TEST_SEED=SEED CLF_TEST_CASE=I)
 *   CLASSES  comma-separated classes the generator leaves out (see
 *            skip_name[] below): the runner's way to keep a class of
 *            cases with a known, unfixed defect out of make check
 *   -c fine-layout  run only the cases of that class (the others are
 *            drawn, then passed over as passed): a replay aid for one
 *            class, e.g. CLF_PROPS_ONLY=fine-layout make soak-types
 *   -u DIR   files in the local DIR through ROMIO's ufs driver instead:
 *            a check of the test itself (with the ROMIO we ship, which
 *            flattens datatypes by their typemap: ad_clf_flatten.c)
 *   -o BOOL  use_romio_optimizations=BOOL for every open (a replay aid)
 *   SECONDS  a case that takes longer is a failure ("timeout"): the
 *            program prints the case and exits 3 (the runner goes on
 *            with the next case)
 *
 * The oracle: MPI_Pack of a buffer whose bytes count their own offsets
 * (4 passes, one byte of the offset each) gives, in typemap order, the
 * byte offsets of count tiles of a datatype -- tile i at i * extent, the
 * displacements its constructors gave, whatever its bounds.  An MPI
 * view is exactly that: view byte v of a process is file byte
 * disp + offs[v].  So a write of view bytes [o, o + L) puts memory byte
 * mo[j] (the memory type's own typemap) at file byte disp + offs[o + j],
 * and every process computes the whole file image expected from every
 * process's accesses.  No ROMIO flattening, no clf mapping is involved.
 *
 * A case (all its draws from the case's seed, alike on every process):
 *   - a filetype per process: random nesting (up to 4) of every
 *     constructor (contiguous, vector, hvector, indexed, hindexed,
 *     indexed_block, hindexed_block, struct, subarray, darray, resized,
 *     dup) over named types, with zero-length blocks, lists up to 10^5
 *     blocks, negative inner displacements, lb != 0 (negative too) and
 *     explicit bounds that do not hold the data; legal as a filetype
 *     (checked through the oracle: non-negative, strictly increasing
 *     over two tiles);
 *   - how the processes' views relate: interleaved tiles (one type,
 *     displacements one extent apart, extent doubled), complementary
 *     types (the second selects what the first leaves), a darray or
 *     subarray family, or independent types (possibly overlapping: then
 *     the processes write in turn, with sync-barrier-sync between);
 *   - the file's layout: the default, striping_unit/striping_factor
 *     (random unit), subfile_datatypes matching the views, 1-D and 2-D
 *     darray grids, 2-D subarray tiles, irregular hindexed partitions;
 *   - a memory type per process and access (contiguous, or random: any
 *     order, negative displacements; never overlapping);
 *   - the write call, alike on every process: write_at, write_at_all,
 *     iwrite_at, iwrite_at_all, write_at_all_begin/end, seek + write,
 *     seek + write_all, seek + iwrite, seek + write_all_begin/end,
 *     write_shared, write_ordered, or one half at an offset and the
 *     rest through the individual pointer; get_position and
 *     get_byte_offset after individual-pointer calls, get_position_shared
 *     after shared ones; use_romio_optimizations true or false;
 *   - a read of the same or another range (possibly past the end of the
 *     file: the count must stop there) through another random call, on
 *     the same handle or a new open in a random mode; between the
 *     processes' accesses sync-barrier-sync, or in 3 cases of 10 the
 *     barrier alone (clf shows acknowledged writes without a sync);
 *   - rank 0 then reads the whole file through the native API (libclf's
 *     CLF_open / CLF_read, not MPI), and its size must be the image's.
 * Bytes no process wrote are not compared (MPI leaves them undefined;
 * ROMIO's data sieving fills them with whatever its buffer held).
 *
 * Filetypes and memory types are drawn alike on both paths: the ROMIO
 * we ship flattens them by their typemap (romio-clf/ad_clf/
 * ad_clf_flatten.c; ROMIO 4.0.2's own flattening misplaced types whose
 * bounds are not their data's, lost bytes of memory types out of order
 * and looped on zero-length blocks, ufs: too).  What ROMIO's own strided
 * code still gets wrong is left out of its path: strided reads that
 * cross the end of the file (ROMIO reports the whole request as read)
 * stop before it there.  A filetype's lb may be negative (its bytes
 * never are).  With -u, the test checks itself against ROMIO on a local
 * file.
 *
 * Every failure prints the case, the call, and the line to replay it.
 * Exits 0 when every case passed, 1 when one failed, 3 on a timeout.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"

#define NP 2			/* processes the cases are drawn for */
#define MAX_IMAGE (48L << 20)	/* bytes of a file the oracle handles */
#define MAX_BYTES (4L << 20)	/* bytes one process accesses, at most */
#define BIG_LIST 100000		/* blocks of the longest lists */
#define SENTINEL 0xa5
#define DESC 1500

static int rank, nprocs;
static uint64_t run_seed;
static long case_no;
static const char *dir = "/props";
static bool ufs;		/* -u: a local directory through ROMIO's ufs */
static int force_opt = -1;	/* -o: use_romio_optimizations of every open */
static bool romio_case;		/* the case opens with ROMIO's path */

/* ------------------------------------------------------------------ */
/* Classes the generator can leave out (-x)                             */
/* ------------------------------------------------------------------ */

enum skip {
	SKIP_PTR_LB,		/* pointer calls on a filetype with lb != 0 */
	SKIP_BIGLIST,		/* lists of more than 1000 blocks */
	SKIP_BIGPATTERN,	/* layouts of more than 1000 pieces */
	SKIP_NATIVE,		/* use_romio_optimizations=false */
	SKIP_SHARED,		/* shared-pointer calls */
	SKIP_LAYOUT,		/* subfile_datatypes and striping hints */
	SKIP_LB,		/* resized, and filetypes with lb != 0 */
	SKIP_MEMORDER,		/* memory types out of order */
	SKIP_ROMIO_LB,		/* filetypes with lb != 0 on ROMIO's path */
	SKIP_ZERO,		/* zero-length blocks in filetypes */
	SKIP_FINE,		/* layouts of pieces under 64 bytes */
	SKIP_NOSYNC,		/* no MPI_File_sync between processes */
	SKIP_NESTED,		/* filetypes with bounds not their data's
				 * (resized, subarray, darray) inside another
				 * constructor, or negative displacements */
	NSKIP
};

static const char *skip_name[NSKIP] = {
	"ptr-lb", "biglist", "bigpattern", "native", "shared", "layout",
	"lb", "memorder", "romio-lb", "zero-blocks", "fine-layout",
	"nosync", "nested-bounds"
};

static bool skipped[NSKIP];
static bool only_fine;		/* -c fine-layout */

/* ------------------------------------------------------------------ */
/* Random numbers: one stream per case, alike on every process          */
/* ------------------------------------------------------------------ */

static uint64_t rng;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Uniform in [lo, hi]. */
static long rnd(long lo, long hi)
{
	if (hi <= lo)
		return lo;
	return lo + (long)(next() % (uint64_t)(hi - lo + 1));
}

/* True with probability pct percent. */
static bool chance(int pct)
{
	return rnd(0, 99) < pct;
}

/* Small numbers more often than large ones: about log-uniform. */
static long logrnd(long lo, long hi)
{
	long top = lo, r;

	if (hi <= lo)
		return lo;
	r = rnd(0, 62);
	while (r-- > 0 && top < hi)
		top = top * 2 + 1 > hi ? hi : top * 2 + 1;
	if (top > hi)
		top = hi;
	top = rnd(lo, top);
	return top;
}

/* ------------------------------------------------------------------ */
/* Descriptions: what a case is, printed with any failure               */
/* ------------------------------------------------------------------ */

struct desc {
	char s[DESC];
};

static void dcat(struct desc *d, const char *fmt, ...)
{
	size_t at = strlen(d->s);
	va_list ap;

	if (at >= DESC - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(d->s + at, DESC - at, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* The oracle                                                           */
/* ------------------------------------------------------------------ */

struct tinfo {
	MPI_Aint lb, ext, tlb, text;
	long size;
};

static struct tinfo info_of(MPI_Datatype t)
{
	struct tinfo i;
	MPI_Count sz;

	MPI_Type_get_extent(t, &i.lb, &i.ext);
	MPI_Type_get_true_extent(t, &i.tlb, &i.text);
	MPI_Type_size_x(t, &sz);
	i.size = (long)sz;
	return i;
}

/* Bytes from the first to the last byte of count tiles. */
static long span_of(const struct tinfo *i, long count)
{
	if (i->size == 0 || count == 0)
		return 0;
	return (long)i->text + (count - 1) * (long)i->ext;
}

/*
 * The offsets (from the type's origin) of the bytes of count tiles of t,
 * in typemap order, into *offs (the caller frees); their number, or -1
 * when the tiles span more than MAX_IMAGE bytes or run backwards.
 */
static long typemap(MPI_Datatype t, long count, long **offs)
{
	struct tinfo i = info_of(t);
	long n = i.size * count, span = span_of(&i, count);
	unsigned char *buf, *packed;
	int pos;

	*offs = NULL;
	if (n == 0)
		return 0;
	if (i.ext < 0 || span > MAX_IMAGE || n > MAX_IMAGE || count > INT32_MAX)
		return -1;
	buf = malloc(span);
	packed = malloc(n);
	*offs = calloc(n, sizeof(long));
	if (!buf || !packed || !*offs) {
		fprintf(stderr, "romio_props: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int pass = 0; pass < 4; pass++) {
		for (long x = 0; x < span; x++)
			buf[x] = (unsigned char)(x >> (8 * pass));
		pos = 0;
		/* buf holds offsets tlb .. tlb + span - 1 of the type. */
		MPI_Pack(buf - i.tlb, (int)count, t, packed, (int)n, &pos,
			 MPI_COMM_SELF);
		for (long x = 0; x < n; x++)
			(*offs)[x] |= (long)packed[x] << (8 * pass);
	}
	for (long x = 0; x < n; x++)
		(*offs)[x] += i.tlb;
	free(buf);
	free(packed);
	return n;
}

/* A legal filetype: count tiles non-negative and strictly increasing. */
static bool legal_filetype(MPI_Datatype t)
{
	struct tinfo i = info_of(t);
	long *offs, n;
	bool ok;

	if (i.size <= 0 || i.tlb < 0 || i.ext <= 0 || i.text > i.ext ||
	    span_of(&i, 2) > MAX_IMAGE)
		return false;
	n = typemap(t, 2, &offs);
	ok = n == 2 * i.size && offs[0] >= 0;
	for (long x = 1; ok && x < n; x++)
		ok = offs[x] > offs[x - 1];
	free(offs);
	return ok;
}

/* A legal memory type for count tiles: no byte twice (any order). */
static bool legal_memtype(MPI_Datatype t, long count)
{
	struct tinfo i = info_of(t);
	long *offs, n, span = span_of(&i, count);
	unsigned char *seen;
	bool ok = true;

	if (i.size <= 0 || i.ext < 0 || span > MAX_BYTES * 4)
		return false;
	n = typemap(t, count, &offs);
	if (n != i.size * count) {
		free(offs);
		return false;
	}
	seen = calloc(span, 1);
	for (long x = 0; ok && x < n; x++) {
		long at = offs[x] - i.tlb;

		ok = at >= 0 && at < span && !seen[at];
		if (ok)
			seen[at] = 1;
	}
	free(seen);
	free(offs);
	return ok;
}

/* ------------------------------------------------------------------ */
/* The generator                                                        */
/* ------------------------------------------------------------------ */

/*
 * Budgets of one type being drawn: span, the bytes its tile may cover;
 * blocks, the list entries left; mem, a memory type (blocks in any
 * order, backwards strides) rather than a filetype (increasing).
 */
struct budget {
	long span;
	long blocks;
	bool mem;
	bool nozero;		/* no zero-length blocks */
	bool noresized;		/* no bounds but the data's (resized,
				 * subarray, darray) */
};

static MPI_Datatype commit(MPI_Datatype t)
{
	MPI_Type_commit(&t);
	return t;
}

static void type_free(MPI_Datatype *t)
{
	int ni, na, nd, comb;

	if (*t == MPI_DATATYPE_NULL)
		return;
	MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
	if (comb != MPI_COMBINER_NAMED)
		MPI_Type_free(t);
	*t = MPI_DATATYPE_NULL;
}

static MPI_Datatype leaf(struct desc *d)
{
	static const struct {
		MPI_Datatype t;
		const char *name;
	} named[] = {
		{ MPI_BYTE, "byte" }, { MPI_BYTE, "byte" }, { MPI_CHAR, "char" },
		{ MPI_SHORT, "short" }, { MPI_INT, "int" }, { MPI_DOUBLE, "double" },
	};
	int k = (int)rnd(0, 5);

	dcat(d, "%s", named[k].name);
	return named[k].t;
}

/* A list length: mostly short, sometimes up to BIG_LIST. */
static long list_len(struct budget *b, long per)
{
	long n, cap = b->blocks;

	if (per > 0 && b->span / per < cap)
		cap = b->span / per;
	if (skipped[SKIP_BIGLIST] && cap > 1000)
		cap = 1000;
	if (cap < 1)
		cap = 1;
	n = chance(8) ? logrnd(1, cap) : rnd(1, cap < 12 ? cap : 12);
	if (n > cap)
		n = cap;
	b->blocks -= n;
	return n;
}

/* Order positions of a memory type: shuffled now and then. */
static void shuffle(long n, long *perm, bool mem)
{
	for (long i = 0; i < n; i++)
		perm[i] = i;
	if (!mem || !chance(50))
		return;
	if (chance(50)) {
		for (long i = 0; i < n / 2; i++) {
			long t = perm[i];

			perm[i] = perm[n - 1 - i];
			perm[n - 1 - i] = t;
		}
		return;
	}
	for (long i = n - 1; i > 0; i--) {
		long j = rnd(0, i), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

static MPI_Datatype gen(int depth, struct budget *b, struct desc *d);

/* A child that tiles (extent >= true extent) with some bytes, or a leaf. */
static MPI_Datatype child(int depth, struct budget *b, struct desc *d,
			  struct tinfo *ci)
{
	struct budget cb = *b;
	MPI_Datatype c;

	cb.span = b->span / 4 > 1 ? b->span / 4 : 1;
	if (!b->mem && skipped[SKIP_NESTED])
		cb.noresized = true;
	if (chance(50))
		cb.span = b->span / 64 > 1 ? b->span / 64 : 1;
	c = gen(depth, &cb, d);
	*ci = info_of(c);
	b->blocks = cb.blocks;
	if (ci->size <= 0 || ci->ext < ci->text || ci->ext <= 0) {
		type_free(&c);
		dcat(d, "!");
		c = leaf(d);
		*ci = info_of(c);
	}
	return c;
}

/* Bytes covered by bl consecutive copies of a child. */
static long bspan(const struct tinfo *ci, long bl)
{
	return bl ? (bl - 1) * (long)ci->ext + (long)ci->text : 0;
}

/* The list constructors: positions p[i] (of the data) increasing. */
static MPI_Datatype gen_list(int kind, int depth, struct budget *b,
			     struct desc *d)
{
	static const char *names[] = { "indexed", "hindexed", "indexed_block",
				       "hindexed_block", "struct" };
	struct tinfo ci[3];
	MPI_Datatype c[3], t = MPI_DATATYPE_NULL, *ty;
	long n, *perm, at, nc = 1, maxbl = chance(20) ? 16 : 4;
	int *bl, *di, cbl;
	MPI_Aint *dh;
	bool units = kind == 0 || kind == 2;

	dcat(d, "%s(", names[kind]);
	c[0] = child(depth - 1, b, d, &ci[0]);
	if (kind == 4 && chance(70)) {
		nc = rnd(2, 3);
		for (int j = 1; j < nc; j++) {
			dcat(d, ",");
			c[j] = child(depth - 1, b, d, &ci[j]);
		}
	}
	n = list_len(b, bspan(&ci[0], 2) + 1);
	bl = malloc(sizeof(int) * n);
	di = malloc(sizeof(int) * n);
	dh = malloc(sizeof(MPI_Aint) * n);
	ty = malloc(sizeof(MPI_Datatype) * n);
	perm = malloc(sizeof(long) * n);
	cbl = (int)rnd(chance(10) && !b->nozero ? 0 : 1, maxbl);
	/* Where the data of block i starts, in child extents or bytes. */
	at = chance(30) ? rnd(0, 40) : 0;
	for (long i = 0; i < n; i++) {
		long gap = chance(60) ? rnd(0, 3) : rnd(0, 200);
		struct tinfo *u;

		ty[i] = c[i % nc];
		u = &ci[i % nc];
		bl[i] = kind == 2 || kind == 3 ? cbl :
			(int)(chance(8) && !b->nozero ? 0 : rnd(1, maxbl));
		if (units) {
			/* Displacements in extents of the child: the
			 * child's data starts at tlb of each. */
			di[i] = (int)at;
			at += bl[i] + (chance(50) ? 0 : rnd(0, 3));
		} else {
			if (!b->mem && skipped[SKIP_NESTED] && at < u->tlb)
				at = u->tlb;
			dh[i] = at - u->tlb;
			at += bspan(u, bl[i]) + gap;
		}
	}
	shuffle(n, perm, b->mem);
	if (b->mem && perm[0] != 0) {
		/* Memory: the same blocks listed in another order. */
		int *bl2 = malloc(sizeof(int) * n), *di2 = malloc(sizeof(int) * n);
		MPI_Aint *dh2 = malloc(sizeof(MPI_Aint) * n);
		MPI_Datatype *ty2 = malloc(sizeof(MPI_Datatype) * n);

		for (long i = 0; i < n; i++) {
			bl2[i] = bl[perm[i]];
			di2[i] = di[perm[i]];
			dh2[i] = dh[perm[i]];
			ty2[i] = ty[perm[i]];
		}
		memcpy(bl, bl2, sizeof(int) * n);
		memcpy(di, di2, sizeof(int) * n);
		memcpy(dh, dh2, sizeof(MPI_Aint) * n);
		memcpy(ty, ty2, sizeof(MPI_Datatype) * n);
		free(bl2);
		free(di2);
		free(dh2);
		free(ty2);
		dcat(d, ";reordered");
	}
	switch (kind) {
	case 0:
		MPI_Type_indexed((int)n, bl, di, c[0], &t);
		break;
	case 1:
		MPI_Type_create_hindexed((int)n, bl, dh, c[0], &t);
		break;
	case 2:
		MPI_Type_create_indexed_block((int)n, cbl, di, c[0], &t);
		break;
	case 3:
		MPI_Type_create_hindexed_block((int)n, cbl, dh, c[0], &t);
		break;
	default:
		MPI_Type_create_struct((int)n, bl, dh, ty, &t);
		break;
	}
	dcat(d, ";n=%ld:", n);
	for (long i = 0; i < n && (i < 4 || (getenv("CLF_TEST_DEBUG") && i < 40)); i++)
		dcat(d, "%s%d@%ld", i ? "," : "", kind == 2 || kind == 3 ? cbl : bl[i],
		     units ? (long)di[i] : (long)dh[i]);
	dcat(d, "%s)", n > 4 ? ",..." : "");
	for (int j = 0; j < nc; j++)
		type_free(&c[j]);
	free(bl);
	free(di);
	free(dh);
	free(ty);
	free(perm);
	return t;
}

static void factor2(int size, int ndims, int *p)
{
	for (int j = 0; j < ndims; j++)
		p[j] = 1;
	/* Spread size's factors over the dimensions at random. */
	for (int f = 2; size > 1;) {
		if (size % f) {
			f++;
			continue;
		}
		p[rnd(0, ndims - 1)] *= f;
		size /= f;
	}
}

static MPI_Datatype gen_darray(int depth, struct budget *b, struct desc *d,
			       int size, int who)
{
	int ndims = (int)rnd(1, 3), g[3], dist[3], darg[3], p[3];
	int order = chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
	struct tinfo ci;
	MPI_Datatype c, t;
	long cells = 1, cap;

	dcat(d, "darray(");
	c = child(depth - 1, b, d, &ci);
	cap = b->span / (ci.ext > 0 ? ci.ext : 1);
	factor2(size, ndims, p);
	for (int j = 0; j < ndims; j++) {
		long lim = cap / cells;

		if (lim < p[j])
			lim = p[j];
		g[j] = (int)rnd(1, lim < 40 ? lim : 40);
		cells *= g[j];
		dist[j] = p[j] == 1 && chance(30) ? MPI_DISTRIBUTE_NONE :
			  chance(50) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
		darg[j] = MPI_DISTRIBUTE_DFLT_DARG;
		if (dist[j] == MPI_DISTRIBUTE_CYCLIC && chance(70))
			darg[j] = (int)rnd(1, 5);
		if (dist[j] == MPI_DISTRIBUTE_BLOCK && chance(30))
			darg[j] = (g[j] + p[j] - 1) / p[j] + (int)rnd(0, 3);
	}
	MPI_Type_create_darray(size, who, ndims, g, dist, darg, p, order, c, &t);
	dcat(d, ";%d/%d %s", who, size, order == MPI_ORDER_C ? "C" : "F");
	for (int j = 0; j < ndims; j++)
		dcat(d, " %d:%c%d/%d", g[j],
		     dist[j] == MPI_DISTRIBUTE_NONE ? 'N' :
		     dist[j] == MPI_DISTRIBUTE_BLOCK ? 'B' : 'C', darg[j], p[j]);
	dcat(d, ")");
	type_free(&c);
	return t;
}

static MPI_Datatype gen_subarray(int depth, struct budget *b, struct desc *d)
{
	int ndims = (int)rnd(1, 3), g[3], s[3], st[3];
	int order = chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
	struct tinfo ci;
	MPI_Datatype c, t;
	long cells = 1, cap;

	dcat(d, "subarray(");
	c = child(depth - 1, b, d, &ci);
	cap = b->span / (ci.ext > 0 ? ci.ext : 1);
	for (int j = 0; j < ndims; j++) {
		long lim = cap / cells;

		g[j] = (int)rnd(1, lim < 1 ? 1 : lim < 30 ? lim : 30);
		cells *= g[j];
		s[j] = (int)rnd(1, g[j]);
		st[j] = (int)rnd(0, g[j] - s[j]);
	}
	MPI_Type_create_subarray(ndims, g, s, st, order, c, &t);
	dcat(d, ";%s", order == MPI_ORDER_C ? "C" : "F");
	for (int j = 0; j < ndims; j++)
		dcat(d, " %d/%d+%d", s[j], g[j], st[j]);
	dcat(d, ")");
	type_free(&c);
	return t;
}

static MPI_Datatype darray_any(int depth, struct budget *b, struct desc *d,
			       int size);

static MPI_Datatype gen(int depth, struct budget *b, struct desc *d)
{
	struct tinfo ci;
	MPI_Datatype c, t = MPI_DATATYPE_NULL;
	long n, bl, stride;
	int k;

	if (depth <= 0 || b->span < 16 || chance(10))
		return leaf(d);
	k = (int)rnd(0, 11);
	if (k == 10 && skipped[SKIP_LB])
		k = 11;
	/* Bounds that are not the data's (resized, subarray, darray). */
	if (b->noresized && k >= 8 && k <= 10)
		k = (int)rnd(0, 7);
	switch (k) {
	case 0:
		dcat(d, "contiguous(");
		c = child(depth - 1, b, d, &ci);
		n = rnd(1, b->span / (ci.ext + 1) < 20 ? b->span / (ci.ext + 1) + 1 : 20);
		MPI_Type_contiguous((int)n, c, &t);
		dcat(d, ";%ld)", n);
		break;
	case 1:
	case 2:
		dcat(d, "%s(", k == 1 ? "vector" : "hvector");
		c = child(depth - 1, b, d, &ci);
		bl = rnd(chance(10) && !b->nozero ? 0 : 1, 4);
		n = list_len(b, bspan(&ci, bl) + ci.ext);
		if (k == 1) {
			stride = bl + (chance(30) ? 0 : rnd(0, 4));
			if (b->mem && chance(30))
				stride = -stride;
			MPI_Type_vector((int)n, (int)bl, (int)stride, c, &t);
		} else {
			stride = bspan(&ci, bl) + (chance(30) ? 0 : rnd(0, 64));
			if (b->mem && chance(30))
				stride = -stride;
			MPI_Type_create_hvector((int)n, (int)bl, stride, c, &t);
		}
		dcat(d, ";%ld,%ld,%ld)", n, bl, stride);
		break;
	case 3:
	case 4:
	case 5:
	case 6:
	case 7:
		return gen_list(k - 3, depth, b, d);
	case 8:
		return gen_subarray(depth, b, d);
	case 9:
		return darray_any(depth, b, d, (int)rnd(1, 4));
	case 10: {
		MPI_Aint lb, ext;

		dcat(d, "resized(");
		c = child(depth - 1, b, d, &ci);
		/* Bounds that need not hold the data; tiles never overlap. */
		lb = ci.tlb + (chance(30) ? 0 : rnd(-2 * ci.text - 8, 2 * ci.text + 8));
		ext = ci.text + (chance(30) ? 0 : logrnd(0, 4 * ci.text + 64));
		MPI_Type_create_resized(c, lb, ext, &t);
		dcat(d, ";lb=%ld,ext=%ld)", (long)lb, (long)ext);
		break;
	}
	default:
		dcat(d, "dup(");
		c = child(depth - 1, b, d, &ci);
		MPI_Type_dup(c, &t);
		dcat(d, ")");
		break;
	}
	type_free(&c);
	return t;
}

/* A darray of a process drawn at random. */
static MPI_Datatype darray_any(int depth, struct budget *b, struct desc *d,
			       int size)
{
	int who = (int)rnd(0, size - 1);

	return gen_darray(depth, b, d, size, who);
}

/* ------------------------------------------------------------------ */
/* Cases                                                                */
/* ------------------------------------------------------------------ */

enum call {
	C_AT, C_AT_ALL, C_IAT, C_IAT_ALL, C_SPLIT_AT, C_PTR, C_PTR_ALL,
	C_IPTR, C_SPLIT, C_TWO, C_SHARED, C_ORDERED, NCALL
};

static const char *call_name[NCALL] = {
	"at", "at_all", "iat", "iat_all", "at_all_begin/end", "seek+ptr",
	"seek+all", "seek+iptr", "seek+all_begin/end", "at+seek+ptr",
	"shared", "ordered"
};

static bool is_ptr(enum call c)
{
	return c >= C_PTR;
}

static bool is_shared(enum call c)
{
	return c == C_SHARED || c == C_ORDERED;
}

/* One process's access: view bytes [off, off + len) through memory. */
struct access {
	enum call call;
	long off, len;		/* in etypes (bytes) of the view */
	MPI_Datatype mt;	/* memory type, count mcount */
	long mcount;
	struct desc md;
};

struct kase {
	struct desc d;
	MPI_Datatype ft[NP];	/* filetypes */
	MPI_Offset disp[NP];
	bool overlap;		/* views may share bytes: write in turn */
	int nlayout;		/* subfile types, or 0 */
	MPI_Datatype layout[64];
	long unit, factor;	/* striping hints, or 0 */
	bool wopt, ropt, reopen; /* use_romio_optimizations; new open */
	bool nosync;		/* no MPI_File_sync between processes */
	bool fine;		/* a layout of pieces under 64 bytes */
	struct access w[NP], r[NP];
	long shared_at;		/* where shared-pointer calls start */
};

static void kase_free(struct kase *k)
{
	for (int p = 0; p < NP; p++) {
		type_free(&k->ft[p]);
		type_free(&k->w[p].mt);
		type_free(&k->r[p].mt);
	}
	for (int j = 0; j < k->nlayout; j++)
		type_free(&k->layout[j]);
}

/* A filetype: drawn until legal (wrapped to start at 0 or later). */
static MPI_Datatype filetype(struct budget *b0, struct desc *d)
{
	for (int tries = 0; tries < 40; tries++) {
		struct budget b = *b0;
		struct desc td = { "" };
		MPI_Datatype t = gen((int)rnd(1, 4), &b, &td);
		struct tinfo i;

		t = commit(t);
		i = info_of(t);
		if (i.size > 0 && i.tlb < 0) {
			/* A negative start: shift the whole type. */
			MPI_Aint at = -i.tlb + rnd(0, 20);
			MPI_Datatype u;

			MPI_Type_create_hindexed_block(1, 1, &at, t, &u);
			type_free(&t);
			t = commit(u);
			dcat(&td, " shifted by %ld", (long)at);
			i = info_of(t);
		}
		if (i.size > 0 && i.ext < i.text) {
			MPI_Datatype u;
			MPI_Aint ext = i.text + rnd(0, 16);

			MPI_Type_create_resized(t, i.lb, ext, &u);
			type_free(&t);
			t = commit(u);
			dcat(&td, " resized to ext %ld", (long)ext);
		}
		/* A negative lb is legal: the standard asks the typemap's
		 * displacements (the bytes) to be non-negative, not the
		 * bounds. */
		if ((skipped[SKIP_LB] || (romio_case && skipped[SKIP_ROMIO_LB])) &&
		    info_of(t).lb != 0) {
			type_free(&t);
			continue;
		}
		if (legal_filetype(t)) {
			dcat(d, "%s", td.s);
			*b0 = b;
			return t;
		}
		type_free(&t);
	}
	dcat(d, "contiguous(7,byte)");
	{
		MPI_Datatype t;

		MPI_Type_contiguous(7, MPI_BYTE, &t);
		return commit(t);
	}
}

/* The runs of [0, period) a set of offsets leaves, as an hindexed. */
static MPI_Datatype runs_type(const unsigned char *sel, long period, int want,
			      long *pieces, long shift)
{
	long c = 0, cap = 1024;
	int *bl = malloc(sizeof(int) * cap);
	MPI_Aint *dh = malloc(sizeof(MPI_Aint) * cap);
	MPI_Datatype t, u;

	for (long x = 0; x < period; x++) {
		if (sel[x] != want || (x > 0 && sel[x - 1] == want))
			continue;
		if (c == cap) {
			cap *= 2;
			bl = realloc(bl, sizeof(int) * cap);
			dh = realloc(dh, sizeof(MPI_Aint) * cap);
		}
		dh[c] = x + shift;
		bl[c] = 0;
		while (x + bl[c] < period && sel[x + bl[c]] == want)
			bl[c]++;
		c++;
	}
	*pieces += c;
	MPI_Type_create_hindexed((int)c, bl, dh, MPI_BYTE, &t);
	MPI_Type_create_resized(t, shift, period, &u);
	MPI_Type_free(&t);
	free(bl);
	free(dh);
	return commit(u);
}

/* The layout of the case's file. */
static void draw_layout(struct kase *k)
{
	int kind = (int)rnd(0, 9);
	long pieces = 0;

	if (skipped[SKIP_LAYOUT])
		kind = 0;
	switch (kind) {
	case 0:
	case 1:
		dcat(&k->d, "\n  layout: default");
		return;
	case 2:
	case 3:
		k->unit = chance(30) ? 1L << rnd(0, 16) : logrnd(1, 70000);
		if (skipped[SKIP_FINE] && k->unit < 64)
			k->unit += 64;
		k->fine = k->unit < 64;
		k->factor = rnd(1, 4);
		dcat(&k->d, "\n  layout: striping_unit=%ld striping_factor=%ld",
		     k->unit, k->factor);
		return;
	case 4:
	case 5: {
		/* Matching the views (set when the views are drawn). */
		dcat(&k->d, "\n  layout: matching the views");
		k->nlayout = -1;
		return;
	}
	case 6: {
		/* A 1-D or 2-D darray grid of bytes, one subfile a cell. */
		int n = (int)rnd(2, 4), ndims = (int)rnd(1, 2);
		int g[2], dist[2], darg[2], p[2];
		MPI_Datatype cell = MPI_BYTE;

		if (skipped[SKIP_FINE])
			MPI_Type_contiguous(64, MPI_BYTE, &cell);
		k->fine = !skipped[SKIP_FINE];
		factor2(n, ndims, p);
		dcat(&k->d, "\n  layout: darray grid of %d:", n);
		for (int x = 0; x < ndims; x++) {
			g[x] = (int)rnd(p[x], 300);
			dist[x] = chance(50) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
			darg[x] = dist[x] == MPI_DISTRIBUTE_CYCLIC ? (int)rnd(1, 9) :
				  MPI_DISTRIBUTE_DFLT_DARG;
			dcat(&k->d, " %d:%c%d/%d", g[x],
			     dist[x] == MPI_DISTRIBUTE_BLOCK ? 'B' : 'C', darg[x], p[x]);
		}
		for (int j = 0; j < n; j++) {
			MPI_Datatype t;

			MPI_Type_create_darray(n, j, ndims, g, dist, darg, p,
					       MPI_ORDER_C, cell, &t);
			k->layout[j] = commit(t);
		}
		type_free(&cell);
		k->nlayout = n;
		/* Every subfile must have bytes: else the default. */
		for (int j = 0; j < n; j++)
			if (info_of(k->layout[j]).size == 0) {
				for (int x = 0; x < n; x++)
					type_free(&k->layout[x]);
				k->nlayout = 0;
				dcat(&k->d, " (an empty subfile: default)");
				break;
			}
		return;
	}
	case 7: {
		/* 2-D subarray tiles of an R x C matrix of e-byte cells. */
		int g[2] = { (int)rnd(2, 64), (int)rnd(2, 64) }, cut[2];
		int e = (int)rnd(1, 16) + (skipped[SKIP_FINE] ? 63 : 0);
		MPI_Datatype cell;

		MPI_Type_contiguous(e, MPI_BYTE, &cell);
		k->fine = e < 64;
		cut[0] = (int)rnd(1, g[0] - 1);
		cut[1] = (int)rnd(1, g[1] - 1);
		for (int j = 0; j < 4; j++) {
			int s[2], st[2];
			MPI_Datatype t;

			st[0] = j / 2 ? cut[0] : 0;
			s[0] = j / 2 ? g[0] - cut[0] : cut[0];
			st[1] = j % 2 ? cut[1] : 0;
			s[1] = j % 2 ? g[1] - cut[1] : cut[1];
			MPI_Type_create_subarray(2, g, s, st, MPI_ORDER_C, cell, &t);
			k->layout[j] = commit(t);
		}
		MPI_Type_free(&cell);
		k->nlayout = 4;
		dcat(&k->d, "\n  layout: 2x2 subarray tiles of %dx%d cells of %d, "
		     "cut at %d,%d", g[0], g[1], e, cut[0], cut[1]);
		return;
	}
	default: {
		/* Irregular: random runs of [0, P) dealt to n subfiles. */
		long big = skipped[SKIP_BIGPATTERN] ? 1000 : 300000;
		long npieces = chance(10) ? logrnd(1000, big) : logrnd(2, 1000);
		int n = (int)rnd(2, 4);
		long P = 0, at = 0;
		unsigned char *sel;

		if (npieces > big)
			npieces = big;
		if (npieces < n)	/* no subfile without bytes */
			npieces = n;
		long *len = malloc(sizeof(long) * npieces);
		for (long i = 0; i < npieces; i++) {
			len[i] = chance(80) ? rnd(1, 16) : logrnd(1, 5000);
			if (skipped[SKIP_FINE] && len[i] < 64)
				len[i] += 64;
			k->fine |= len[i] < 64;
			P += len[i];
		}
		sel = malloc(P);
		for (long i = 0; i < npieces; i++) {
			int owner = (int)(i < n ? i : rnd(0, n - 1));

			memset(sel + at, owner, len[i]);
			at += len[i];
		}
		for (int j = 0; j < n; j++)
			k->layout[j] = runs_type(sel, P, j, &pieces, 0);
		k->nlayout = n;
		free(sel);
		free(len);
		dcat(&k->d, "\n  layout: irregular, %ld pieces over %d subfiles, "
		     "period %ld", pieces, n, P);
		return;
	}
	}
}

/* The views of the processes, and a matching layout when asked. */
static void draw_views(struct kase *k)
{
	bool romio = k->wopt || k->ropt || ufs;

	romio_case = romio;
	struct budget b = { chance(15) ? MAX_BYTES : 64 << 10,
			    chance(15) ? BIG_LIST : 2000, false,
			    skipped[SKIP_ZERO], false };
	int how = (int)rnd(0, 9);
	MPI_Offset base = chance(50) ? 0 : logrnd(0, 5000);
	struct tinfo i;

	if (how <= 2) {
		/* Interleaved tiles: one type, extent doubled. */
		MPI_Datatype t, u;

		dcat(&k->d, "\n  views: interleaved tiles of ");
		t = filetype(&b, &k->d);
		i = info_of(t);
		MPI_Type_create_resized(t, i.lb, NP * i.ext, &u);
		type_free(&t);
		for (int p = 0; p < NP; p++) {
			MPI_Type_dup(u, &k->ft[p]);
			k->ft[p] = commit(k->ft[p]);
			k->disp[p] = base + p * i.ext;
		}
		MPI_Type_free(&u);
		dcat(&k->d, "\n    resized to extent %ld, displacements %lld + p * %ld",
		     (long)(NP * i.ext), (long long)base, (long)i.ext);
	} else if (how <= 4) {
		/* Complementary: process 1 selects what process 0 leaves. */
		long *offs, n, pieces = 0;
		unsigned char *sel;

		dcat(&k->d, "\n  views: process 0 ");
		k->ft[0] = filetype(&b, &k->d);
		i = info_of(k->ft[0]);
		n = typemap(k->ft[0], 1, &offs);
		sel = calloc(i.ext, 1);
		for (long x = 0; x < n; x++)
			sel[((offs[x] - i.lb) % i.ext + i.ext) % i.ext] = 1;
		free(offs);
		if (memchr(sel, 0, i.ext)) {
			/* The residues process 0 leaves, from lb mod extent. */
			long sh = (i.lb % i.ext + i.ext) % i.ext;

			k->ft[1] = runs_type(sel, i.ext, 0, &pieces, sh);
			dcat(&k->d, "\n    process 1 its complement (%ld runs)",
			     pieces);
		} else {
			MPI_Type_dup(k->ft[0], &k->ft[1]);
			k->ft[1] = commit(k->ft[1]);
			k->overlap = true;
			dcat(&k->d, "\n    process 1 the same (no holes)");
		}
		free(sel);
		for (int p = 0; p < NP; p++)
			k->disp[p] = base;
	} else if (how <= 6) {
		/* A darray or subarray family. */
		struct budget fb = b;
		uint64_t keep = rng;

		dcat(&k->d, "\n  views: a family");
		for (int p = 0; p < NP; p++) {
			struct desc td = { "" };
			MPI_Datatype t;

			rng = keep;
			fb = b;
			if (how == 5) {
				t = gen_darray((int)rnd(1, 3), &fb, &td, NP, p);
			} else {
				/* Halves of one subarray: rows split. */
				int g[2] = { (int)rnd(2, 60), (int)rnd(1, 60) };
				int s[2], st[2], cut = (int)rnd(1, g[0] - 1);
				MPI_Datatype cell;
				int e = (int)rnd(1, 8);

				MPI_Type_contiguous(e, MPI_BYTE, &cell);
				s[0] = p ? g[0] - cut : cut;
				st[0] = p ? cut : 0;
				s[1] = g[1];
				st[1] = 0;
				MPI_Type_create_subarray(2, g, s, st, MPI_ORDER_C,
							 cell, &t);
				MPI_Type_free(&cell);
				dcat(&td, "subarray %dx%d of %d, rows %d+%d", g[0],
				     g[1], e, st[0], s[0]);
			}
			k->ft[p] = commit(t);
			if (!legal_filetype(k->ft[p]))
				k->overlap = true;
			if (p == 0)
				dcat(&k->d, " (process 0: %s)", td.s);
			k->disp[p] = base;
		}
		for (int p = 0; p < NP; p++)
			if (!legal_filetype(k->ft[p])) {
				/* Not legal as a view (e.g. an empty
				 * process): independent ones instead. */
				type_free(&k->ft[p]);
				k->ft[p] = filetype(&b, &k->d);
			}
	} else {
		dcat(&k->d, "\n  views: independent (they may overlap)");
		for (int p = 0; p < NP; p++) {
			dcat(&k->d, "\n    process %d at %lld: ", p, (long long)base);
			k->ft[p] = filetype(&b, &k->d);
			k->disp[p] = base;
			base = chance(50) ? 0 : logrnd(0, 5000);
		}
		k->overlap = true;
	}
	for (int p = 0; p < NP; p++) {
		i = info_of(k->ft[p]);
		dcat(&k->d, "\n    filetype %d: size %ld lb %ld extent %ld true lb %ld "
		     "true extent %ld", p, i.size, (long)i.lb, (long)i.ext,
		     (long)i.tlb, (long)i.text);
	}
}

/* Matching layout: each view's bytes over one period, and the rest. */
static void matching_layout(struct kase *k)
{
	struct tinfo i = info_of(k->ft[0]);
	long P = i.ext, pieces = 0, *offs, n;
	unsigned char *sel;
	int got = 0;

	for (int p = 1; p < NP; p++)
		if (info_of(k->ft[p]).ext != P || k->disp[p] % P != k->disp[0] % P) {
			P = 0;
			break;
		}
	if (P <= 0 || P > MAX_IMAGE || k->overlap) {
		k->nlayout = 0;
		dcat(&k->d, " (not a partition: default)");
		return;
	}
	sel = malloc(P);
	memset(sel, NP, P);
	for (int p = 0; p < NP; p++) {
		n = typemap(k->ft[p], 1, &offs);
		for (long x = 0; x < n; x++)
			sel[((offs[x] + k->disp[p]) % P + P) % P] = (unsigned char)p;
		free(offs);
	}
	for (int p = 0; p <= NP; p++)
		if (memchr(sel, p, P))
			k->layout[got++] = runs_type(sel, P, p, &pieces, 0);
	k->nlayout = got;
	dcat(&k->d, " (%d subfiles, period %ld, %ld pieces)", got, P, pieces);
	free(sel);
}

/* A memory type for about want bytes; its count and size set len. */
static void draw_memory(struct access *a, long want, bool any_order)
{
	struct tinfo i;

	a->md.s[0] = '\0';
	if (want < 1)
		want = 1;
	if (chance(35)) {
		a->mt = MPI_BYTE;
		a->mcount = want;
		a->len = want;
		dcat(&a->md, "%ld bytes", want);
		return;
	}
	for (int tries = 0; tries < 20; tries++) {
		struct budget b = { want * 2 + 64, chance(10) ? BIG_LIST : 500,
				    any_order, !any_order, !any_order };
		MPI_Datatype t;

		a->md.s[0] = '\0';
		t = commit(gen((int)rnd(1, 3), &b, &a->md));
		i = info_of(t);
		if (i.size > 0 && i.size <= want * 2 && i.ext >= 0) {
			a->mcount = want / i.size > 0 ? want / i.size : 1;
			if (legal_memtype(t, a->mcount)) {
				a->mt = t;
				a->len = a->mcount * i.size;
				dcat(&a->md, " x %ld", a->mcount);
				return;
			}
		}
		type_free(&t);
	}
	a->mt = MPI_BYTE;
	a->mcount = want;
	a->len = want;
	a->md.s[0] = '\0';
	dcat(&a->md, "%ld bytes", want);
}

static enum call draw_call(const struct kase *k)
{
	enum call c = (enum call)rnd(0, NCALL - 1);
	bool lb = false;

	for (int p = 0; p < NP; p++)
		lb |= info_of(k->ft[p]).lb != 0;
	if (skipped[SKIP_SHARED] && is_shared(c))
		c = (enum call)rnd(0, C_TWO);
	if (skipped[SKIP_PTR_LB] && lb && is_ptr(c))
		c = (enum call)rnd(0, C_SPLIT_AT);
	return c;
}

static void draw_case(struct kase *k)
{
	memset(k, 0, sizeof(*k));
	for (int p = 0; p < NP; p++)
		k->ft[p] = k->w[p].mt = k->r[p].mt = MPI_DATATYPE_NULL;
	rng = mix(run_seed * 0x100000001b3ULL + (uint64_t)case_no) | 1;
	dcat(&k->d, "case %ld of seed %" PRIu64 ":", case_no, run_seed);
	k->wopt = skipped[SKIP_NATIVE] ? true : chance(50);
	k->ropt = skipped[SKIP_NATIVE] ? true : chance(50);
	k->reopen = chance(60);
	if (!k->reopen)
		k->ropt = k->wopt;
	if (force_opt >= 0)
		k->wopt = k->ropt = force_opt;
	draw_layout(k);
	draw_views(k);
	if (k->nlayout < 0)
		matching_layout(k);
	k->w[0].call = draw_call(k);
	k->r[0].call = draw_call(k);
	k->shared_at = chance(50) ? 0 : rnd(0, 300);
	k->nosync = !skipped[SKIP_NOSYNC] && chance(30);
	for (int p = 0; p < NP; p++) {
		long sz = info_of(k->ft[p]).size;
		long want = chance(20) ? logrnd(1, MAX_BYTES) : logrnd(1, 64 << 10);
		long want2 = chance(40) ? want : logrnd(1, 64 << 10);

		k->w[p].call = k->w[0].call;
		k->r[p].call = k->r[0].call;
		/* Whole tiles now and then, else anywhere. */
		if (chance(30))
			want = sz * rnd(1, 4);
		/*
		 * Memory out of order (negative strides, lists in any order),
		 * zero-length blocks and resized on both paths: Debian's
		 * MPICH's ROMIO loops forever, misplaces bytes or crashes
		 * with them, the one we ship flattens them by the typemap.
		 */
		draw_memory(&k->w[p], want, !skipped[SKIP_MEMORDER]);
		draw_memory(&k->r[p], want2, !skipped[SKIP_MEMORDER]);
		k->w[p].off = chance(40) ? 0 : rnd(0, 2 * sz);
		k->r[p].off = chance(50) ? k->w[p].off : rnd(0, 2 * sz);
	}
	/* Shared pointers: the processes' ranges follow in rank order. */
	if (is_shared(k->w[0].call))
		for (int p = 0; p < NP; p++)
			k->w[p].off = p ? k->w[p - 1].off + k->w[p - 1].len : k->shared_at;
	if (is_shared(k->r[0].call))
		for (int p = 0; p < NP; p++)
			k->r[p].off = p ? k->r[p - 1].off + k->r[p - 1].len : k->shared_at;
	dcat(&k->d, "\n  write: %s, use_romio_optimizations=%s", call_name[k->w[0].call],
	     k->wopt ? "true" : "false");
	for (int p = 0; p < NP; p++)
		dcat(&k->d, "\n    process %d view bytes [%ld, +%ld) from %s", p,
		     k->w[p].off, k->w[p].len, k->w[p].md.s);
	dcat(&k->d, "\n  read: %s, %s use_romio_optimizations=%s%s", call_name[k->r[0].call],
	     k->reopen ? "new open," : "same handle,", k->ropt ? "true" : "false",
	     k->nosync ? ", after a barrier without sync" : "");
	for (int p = 0; p < NP; p++)
		dcat(&k->d, "\n    process %d view bytes [%ld, +%ld) into %s", p,
		     k->r[p].off, k->r[p].len, k->r[p].md.s);
}

/* ------------------------------------------------------------------ */
/* Running a case                                                       */
/* ------------------------------------------------------------------ */

static unsigned char *written;	/* file bytes some process wrote */
static int case_failures;
static char fail_msg[4096];

static void fail(const char *fmt, ...)
{
	va_list ap;
	size_t at = strlen(fail_msg);

	case_failures++;
	if (at < sizeof(fail_msg) - 200) {
		at += snprintf(fail_msg + at, sizeof(fail_msg) - at, "  rank %d: ", rank);
		va_start(ap, fmt);
		vsnprintf(fail_msg + at, sizeof(fail_msg) - at, fmt, ap);
		va_end(ap);
		at = strlen(fail_msg);
		snprintf(fail_msg + at, sizeof(fail_msg) - at, "\n");
	}
}

static bool ok_mpi(int rc, const char *what)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return true;
	MPI_Error_string(rc, s, &len);
	s[len] = '\0';
	fail("REFUSED %s: %s", what, s);
	return false;
}

/* The bytes process p writes: distinct per process and view byte. */
static unsigned char value(int p, long v)
{
	return (unsigned char)(mix(((uint64_t)case_no << 40) ^ ((uint64_t)p << 36) ^
				   (uint64_t)v) >> 56);
}

/*
 * One access of process me, or none (count 0) when it is not its turn
 * (a collective call is still made).  Returns the MPI error code;
 * *pos_want, where the individual pointer must be after it (-1: after
 * the bytes moved).
 */
static int access1(MPI_File fh, const struct access *a, bool write, bool active,
		   void *buf, MPI_Status *st, MPI_Offset *pos_want)
{
	int cnt = active ? (int)a->mcount : 0, rc, rc2;
	MPI_Offset off = a->off;
	MPI_Request req;
	long h;

	switch (a->call) {
	case C_AT:
		if (!active)
			return MPI_SUCCESS;
		return write ? MPI_File_write_at(fh, off, buf, cnt, a->mt, st)
			     : MPI_File_read_at(fh, off, buf, cnt, a->mt, st);
	case C_AT_ALL:
		return write ? MPI_File_write_at_all(fh, off, buf, cnt, a->mt, st)
			     : MPI_File_read_at_all(fh, off, buf, cnt, a->mt, st);
	case C_IAT:
		if (!active)
			return MPI_SUCCESS;
		rc = write ? MPI_File_iwrite_at(fh, off, buf, cnt, a->mt, &req)
			   : MPI_File_iread_at(fh, off, buf, cnt, a->mt, &req);
		return rc ? rc : MPI_Wait(&req, st);
	case C_IAT_ALL:
		rc = write ? MPI_File_iwrite_at_all(fh, off, buf, cnt, a->mt, &req)
			   : MPI_File_iread_at_all(fh, off, buf, cnt, a->mt, &req);
		return rc ? rc : MPI_Wait(&req, st);
	case C_SPLIT_AT:
		rc = write ? MPI_File_write_at_all_begin(fh, off, buf, cnt, a->mt)
			   : MPI_File_read_at_all_begin(fh, off, buf, cnt, a->mt);
		/* End it even when it failed: ROMIO counts it as begun. */
		rc2 = write ? MPI_File_write_at_all_end(fh, buf, st)
			    : MPI_File_read_at_all_end(fh, buf, st);
		return rc ? rc : rc2;
	case C_PTR:
	case C_IPTR:
	case C_TWO:
		if (!active)
			return MPI_SUCCESS;
		if (a->call == C_TWO && a->mt == MPI_BYTE && cnt > 1) {
			MPI_Status s1;
			int c1 = 0, c2 = 0;

			h = cnt / 2;
			rc = write ? MPI_File_write_at(fh, off, buf, (int)h, MPI_BYTE, &s1)
				   : MPI_File_read_at(fh, off, buf, (int)h, MPI_BYTE, &s1);
			if (rc)
				return rc;
			MPI_Get_count(&s1, MPI_BYTE, &c1);
			rc = MPI_File_seek(fh, off + h, MPI_SEEK_SET);
			if (rc)
				return rc;
			rc = write ? MPI_File_write(fh, (char *)buf + h, cnt - (int)h,
						    MPI_BYTE, st)
				   : MPI_File_read(fh, (char *)buf + h, cnt - (int)h,
						   MPI_BYTE, st);
			if (rc)
				return rc;
			MPI_Get_count(st, MPI_BYTE, &c2);
			*pos_want = off + h + c2;
			/* The status of both: a byte count. */
			MPI_Status_set_elements(st, MPI_BYTE, c1 + c2);
			return rc;
		}
		rc = MPI_File_seek(fh, off, MPI_SEEK_SET);
		if (rc)
			return rc;
		if (a->call == C_IPTR) {
			rc = write ? MPI_File_iwrite(fh, buf, cnt, a->mt, &req)
				   : MPI_File_iread(fh, buf, cnt, a->mt, &req);
			return rc ? rc : MPI_Wait(&req, st);
		}
		return write ? MPI_File_write(fh, buf, cnt, a->mt, st)
			     : MPI_File_read(fh, buf, cnt, a->mt, st);
	case C_PTR_ALL:
		/* Not its turn: no data, and its pointer stays. */
		rc = active ? MPI_File_seek(fh, off, MPI_SEEK_SET) : MPI_SUCCESS;
		if (rc)
			return rc;
		return write ? MPI_File_write_all(fh, buf, cnt, a->mt, st)
			     : MPI_File_read_all(fh, buf, cnt, a->mt, st);
	case C_SPLIT:
		rc = active ? MPI_File_seek(fh, off, MPI_SEEK_SET) : MPI_SUCCESS;
		if (rc)
			return rc;
		rc = write ? MPI_File_write_all_begin(fh, buf, cnt, a->mt)
			   : MPI_File_read_all_begin(fh, buf, cnt, a->mt);
		rc2 = write ? MPI_File_write_all_end(fh, buf, st)
			    : MPI_File_read_all_end(fh, buf, st);
		return rc ? rc : rc2;
	default:
		return MPI_ERR_OTHER;	/* shared calls: in access_all */
	}
}

/*
 * Between one process's write and another's access of the same file: the
 * standard's sync-barrier-sync, or (nosync cases) the barrier alone --
 * clf makes an acknowledged write visible to any later access without a
 * sync (issue 9 point 4), as parallel file systems do.
 */
static void sync_barrier_sync(MPI_File fh, const struct kase *k)
{
	if (!k->nosync)
		ok_mpi(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	if (!k->nosync)
		ok_mpi(MPI_File_sync(fh), "sync");
}

struct side {
	long n;			/* view bytes the oracle knows */
	long *fo;		/* their file offsets */
};

/*
 * The accesses of every process through fh: in one go, or in turn
 * (process by process, sync-barrier-sync between) when the views may
 * overlap.  Checks counts and pointers; reading, the bytes against img.
 */
static void access_all(MPI_File fh, struct kase *k, struct access *acc, bool write,
		       const struct side *sd, const unsigned char *img, long fsize)
{
	struct access *a = &acc[rank];
	struct tinfo mi = info_of(a->mt);
	long mspan = span_of(&mi, a->mcount), *mo = NULL, want = a->len;
	/* From the lower of lb and true lb to the higher of the ends:
	 * ROMIO reads the bounds of a memory type, not only its bytes. */
	long lo = mi.lb < mi.tlb ? (long)mi.lb : (long)mi.tlb;
	long hi = (long)mi.tlb + mspan;
	unsigned char *mem, *base;

	if ((long)mi.lb + a->mcount * (long)mi.ext > hi)
		hi = (long)mi.lb + a->mcount * (long)mi.ext;
	mspan = hi - lo;
	mem = malloc(mspan + 1);
	base = mem - lo;
	int turns = write && k->overlap ? NP : 1, moved = -1;
	const char *what = write ? "write" : "read";
	MPI_Status st;
	char how[128];

	snprintf(how, sizeof(how), "%s (%s)", what, call_name[a->call]);
	typemap(a->mt, a->mcount, &mo);
	memset(mem, SENTINEL, mspan + 1);
	if (write) {
		for (long v = 0; v < a->len; v++)
			base[mo[v]] = value(rank, a->off + v);
	} else {
		/* The read stops at the end of the file. */
		for (want = 0; want < a->len; want++)
			if (k->disp[rank] + sd[rank].fo[a->off + want] >= fsize)
				break;
	}
	if (is_shared(a->call)) {
		ok_mpi(MPI_File_seek_shared(fh, k->shared_at, MPI_SEEK_SET), "seek_shared");
		for (int t = 0; t < NP; t++) {
			/* Process t moves its bytes, in rank order; all
			 * at once when ordered and the views are apart. */
			bool mine = rank == t || (a->call == C_ORDERED && turns == 1);
			int rc, cnt = mine ? (int)a->mcount : 0;

			if (a->call == C_ORDERED) {
				if (turns == 1 && t > 0)
					break;
				rc = write ? MPI_File_write_ordered(fh, base, cnt, a->mt, &st)
					   : MPI_File_read_ordered(fh, base, cnt, a->mt, &st);
			} else {
				MPI_Barrier(MPI_COMM_WORLD);
				rc = MPI_SUCCESS;
				if (mine)
					rc = write ? MPI_File_write_shared(fh, base, cnt,
									   a->mt, &st)
						   : MPI_File_read_shared(fh, base, cnt,
									  a->mt, &st);
			}
			if (ok_mpi(rc, how) && mine)
				MPI_Get_count(&st, MPI_BYTE, &moved);
			if (turns > 1 && t + 1 < NP) {
				sync_barrier_sync(fh, k);
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
		{
			MPI_Offset pos = -1, end = acc[NP - 1].off + acc[NP - 1].len;

			if (!write)	/* short reads move the pointer less */
				end = -1;
			if (ok_mpi(MPI_File_get_position_shared(fh, &pos), "get_position_shared") &&
			    end >= 0 && pos != end)
				fail("after %s the shared pointer is %lld, want %lld", how,
				     (long long)pos, (long long)end);
		}
	} else {
		MPI_Offset pos_want = -1;

		for (int t = 0; t < turns; t++) {
			bool active = turns == 1 || t == rank;
			int rc = access1(fh, a, write, active, base, &st, &pos_want);

			if (active && ok_mpi(rc, how))
				MPI_Get_count(&st, MPI_BYTE, &moved);
			if (!active)
				ok_mpi(rc, how);
			if (turns > 1 && t + 1 < turns) {
				sync_barrier_sync(fh, k);
			}
		}
		if (is_ptr(a->call) && moved >= 0) {
			MPI_Offset pos = -1, byte = -1;
			MPI_Offset end = pos_want >= 0 ? pos_want : a->off + moved;

			if (ok_mpi(MPI_File_get_position(fh, &pos), "get_position") &&
			    pos != end)
				fail("after %s the individual pointer is %lld, want %lld",
				     how, (long long)pos, (long long)end);
			if (ok_mpi(MPI_File_get_byte_offset(fh, end, &byte),
				   "get_byte_offset") &&
			    byte != k->disp[rank] + sd[rank].fo[end])
				fail("get_byte_offset(%lld) is %lld, want %lld", (long long)end,
				     (long long)byte,
				     (long long)(k->disp[rank] + sd[rank].fo[end]));
		}
	}
	if (moved >= 0 && moved != want)
		fail("%s moved %d bytes, want %ld", how, moved, want);
	if (!write && moved >= 0) {
		long bad = -1, hole = -1, nbad = 0;
		unsigned char *sel = calloc(mspan + 1, 1);

		for (long v = 0; v < a->len; v++) {
			long fo = k->disp[rank] + sd[rank].fo[a->off + v];
			unsigned char want_b = v < want ? img[fo] : SENTINEL;

			sel[mo[v] - lo] = 1;
			/* Bytes no one wrote are undefined (ROMIO's data
			 * sieving fills holes with what its buffer held). */
			if (v < want && !written[fo])
				continue;
			if (base[mo[v]] != want_b) {
				nbad++;
				if (bad < 0)
					bad = v;
			}
		}
		if (bad >= 0) {
			long fo = k->disp[rank] + sd[rank].fo[a->off + bad];

			fail("%s: %ld wrong bytes; the first: view byte %ld (file byte "
			     "%ld) is 0x%02x, want 0x%02x", how, nbad, a->off + bad, fo,
			     base[mo[bad]], bad < want ? img[fo] : SENTINEL);
		}
		for (long x = 0; x < mspan && hole < 0; x++)
			if (!sel[x] && mem[x] != SENTINEL)
				hole = x;
		if (hole >= 0)
			fail("%s wrote memory byte %ld outside the memory type", how, hole);
		free(sel);
	}
	free(mo);
	free(mem);
}

static MPI_Info hints(const struct kase *k, bool opt, bool create)
{
	char v[MPI_MAX_INFO_VAL] = "";
	MPI_Info info;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", opt ? "true" : "false");
	if (create && k->nlayout > 0) {
		for (int j = 0; j < k->nlayout; j++)
			snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s%d", j ? " " : "",
				 (int)MPI_Type_c2f(k->layout[j]));
		MPI_Info_set(info, "subfile_datatypes", v);
	}
	if (create && k->unit) {
		snprintf(v, sizeof(v), "%ld", k->unit);
		MPI_Info_set(info, "striping_unit", v);
		snprintf(v, sizeof(v), "%ld", k->factor);
		MPI_Info_set(info, "striping_factor", v);
	}
	return info;
}

/* Rank 0: the whole file through libclf's native API (not MPI). */
static void native_check(const char *path, const unsigned char *img, long fsize)
{
	unsigned char *buf = malloc(fsize + 4096);
	struct stat st;
	long got = 0, bad = -1, nbad = 0;
	int fd;

	if (ufs) {
		/* Checking the test itself against ROMIO on a local file. */
		fd = open(path, O_RDONLY);
		got = fd < 0 ? -1 : pread(fd, buf, fsize + 4096, 0);
		if (fd >= 0)
			close(fd);
		if (got != fsize)
			fail("local read: %ld bytes, want %ld", got, fsize);
		for (long x = 0; x < got && x < fsize; x++)
			if (written[x] && buf[x] != img[x]) {
				nbad++;
				if (bad < 0)
					bad = x;
			}
		if (bad >= 0)
			fail("local read: %ld wrong bytes; the first: file byte %ld is "
			     "0x%02x, want 0x%02x", nbad, bad, buf[bad], img[bad]);
		free(buf);
		return;
	}
	if (CLF_stat(path, &st) != 0) {
		fail("native stat %s: %s", path, CLF_Last_error());
	} else if (st.st_size != fsize) {
		fail("native stat: size %lld, want %ld", (long long)st.st_size, fsize);
	}
	fd = CLF_open(path, O_RDONLY);
	if (fd < 0) {
		fail("native open %s: %s", path, CLF_Last_error());
		free(buf);
		return;
	}
	for (;;) {
		ssize_t n = CLF_read(fd, buf + got, fsize + 4096 - got);

		if (n < 0) {
			fail("native read at %ld: %s", got, CLF_Last_error());
			break;
		}
		if (n == 0 || got + n >= fsize + 4096) {
			got += n;
			break;
		}
		got += n;
	}
	CLF_close(fd);
	if (got != fsize)
		fail("native read: %ld bytes, want %ld", got, fsize);
	for (long x = 0; x < got && x < fsize; x++)
		if (written[x] && buf[x] != img[x]) {
			nbad++;
			if (bad < 0)
				bad = x;
		}
	if (bad >= 0)
		fail("native read: %ld wrong bytes; the first: file byte %ld is 0x%02x, "
		     "want 0x%02x", nbad, bad, buf[bad], img[bad]);
	free(buf);
}

/*
 * The oracle's side of a case: each process's view offsets over the
 * bytes its accesses reach (and one more), the image the writes leave.
 */
static bool oracle(struct kase *k, struct side *sd, unsigned char **img, long *fsize)
{
	long hi = 0;

	for (int p = 0; p < NP; p++) {
		struct tinfo i = info_of(k->ft[p]);
		long need = k->w[p].off + k->w[p].len, tiles;

		if (k->r[p].off + k->r[p].len > need)
			need = k->r[p].off + k->r[p].len;
		tiles = need / i.size + 1;
		sd[p].n = typemap(k->ft[p], tiles, &sd[p].fo);
		if (getenv("CLF_TEST_DEBUG") && rank == 0)
			for (long v = 0; v < sd[p].n && v < 60; v++)
				fprintf(stderr, "p%d fo[%ld]=%ld\n", p, v, sd[p].fo[v]);
		if (sd[p].n < 0 || k->disp[p] + span_of(&i, tiles) + i.tlb > MAX_IMAGE)
			return false;
		for (long v = 0; v < k->w[p].len; v++)
			if (k->disp[p] + sd[p].fo[k->w[p].off + v] + 1 > hi)
				hi = k->disp[p] + sd[p].fo[k->w[p].off + v] + 1;
	}
	*fsize = hi;
	/*
	 * ROMIO's strided reads report the whole request when they cross
	 * the end of the file (ufs: too), so reads on its path stop before
	 * it; clf's native path must stop at the end itself.
	 */
	for (int p = 0; (k->ropt || ufs) && p < NP; p++) {
		struct access *r = &k->r[p];
		long sz = info_of(r->mt).size, in = 0;

		if (p > 0 && is_shared(r->call))
			r->off = k->r[p - 1].off + k->r[p - 1].len;
		while (in < r->len && k->disp[p] + sd[p].fo[r->off + in] < hi)
			in++;
		if (in < r->len) {
			r->mcount = in / sz;
			r->len = r->mcount * sz;
			dcat(&k->d, "\n    (process %d reads %ld bytes: the end of the file)",
			     p, r->len);
		}
	}
	*img = calloc(hi + 1, 1);
	written = calloc(hi + 1, 1);
	/* In rank order: the last writer wins where views overlap. */
	for (int p = 0; p < NP; p++)
		for (long v = 0; v < k->w[p].len; v++)
			(*img)[k->disp[p] + sd[p].fo[k->w[p].off + v]] =
				value(p, k->w[p].off + v),
			written[k->disp[p] + sd[p].fo[k->w[p].off + v]] = 1;
	return true;
}

static volatile sig_atomic_t in_case;
static int limit_s = 120;

static void on_alarm(int sig)
{
	static const char msg[] = "\nTIMEOUT: the case below took longer than the limit\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static struct kase *current;
static const char *progress;	/* rank 0 writes the case it is in there */

/* Runs case case_no; returns the failures on every process. */
static int run_case(void)
{
	char path[256], mpath[300];
	struct kase k;
	struct side sd[NP] = { 0 };
	unsigned char *img = NULL;
	long fsize = 0;
	MPI_File fh;
	MPI_Info info;
	int all = 0;
	double t0 = MPI_Wtime();

	case_failures = 0;
	fail_msg[0] = '\0';
	if (rank == 0 && progress) {
		FILE *f = fopen(progress, "w");

		if (f) {
			fprintf(f, "%ld\n", case_no);
			fclose(f);
		}
	}
	draw_case(&k);
	current = &k;
	if (only_fine && !k.fine) {
		kase_free(&k);
		return 0;
	}
	if (rank == 0 && getenv("CLF_TEST_VERBOSE")) {
		printf("%s\n", k.d.s);
		fflush(stdout);
	}
	if (!oracle(&k, sd, &img, &fsize)) {
		/* Too large for the oracle: the draw counts as passed. */
		kase_free(&k);
		for (int p = 0; p < NP; p++)
			free(sd[p].fo);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/c%ld", dir, case_no);
	snprintf(mpath, sizeof(mpath), "%s:%s", ufs ? "ufs" : "clf", path);
	if (rank == 0)
		MPI_File_delete(mpath, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	alarm(limit_s);

	info = hints(&k, k.wopt, true);
	if (ok_mpi(MPI_File_open(MPI_COMM_WORLD, mpath, MPI_MODE_CREATE | MPI_MODE_RDWR,
				 info, &fh), "open")) {
		ok_mpi(MPI_File_set_view(fh, k.disp[rank], MPI_BYTE, k.ft[rank], "native",
					 MPI_INFO_NULL), "set_view");
		access_all(fh, &k, k.w, true, sd, img, fsize);
		sync_barrier_sync(fh, &k);
		if (k.reopen) {
			ok_mpi(MPI_File_close(&fh), "close");
			MPI_Info_free(&info);
			info = hints(&k, k.ropt, false);
			if (ok_mpi(MPI_File_open(MPI_COMM_WORLD, mpath, MPI_MODE_RDONLY,
						 info, &fh), "reopen"))
				ok_mpi(MPI_File_set_view(fh, k.disp[rank], MPI_BYTE, k.ft[rank],
							 "native", MPI_INFO_NULL), "set_view");
			else
				fh = MPI_FILE_NULL;
		}
		if (fh != MPI_FILE_NULL) {
			access_all(fh, &k, k.r, false, sd, img, fsize);
			ok_mpi(MPI_File_close(&fh), "close");
		}
	}
	MPI_Info_free(&info);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		native_check(path, img, fsize);
	alarm(0);
	MPI_Allreduce(&case_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (all) {
		/* The case, then every process's messages, from rank 0. */
		char *msgs = rank == 0 ? malloc(sizeof(fail_msg) * nprocs) : NULL;

		MPI_Gather(fail_msg, sizeof(fail_msg), MPI_CHAR, msgs, sizeof(fail_msg),
			   MPI_CHAR, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			fprintf(stderr, "FAIL %s\n", k.d.s);
			for (int p = 0; p < nprocs; p++)
				fprintf(stderr, "%s", msgs + p * sizeof(fail_msg));
			fprintf(stderr, "  replay: CLF_TEST_SEED=%" PRIu64
				" CLF_TEST_CASE=%ld make soak-types\n\n", run_seed, case_no);
			fflush(stderr);
		}
		free(msgs);
	} else if (rank == 0) {
		MPI_File_delete(mpath, MPI_INFO_NULL);
	}
	if (rank == 0 && getenv("CLF_TEST_VERBOSE"))
		printf("case %ld: %s in %.2f s\n", case_no, all ? "FAIL" : "ok",
		       MPI_Wtime() - t0);
	kase_free(&k);
	current = NULL;
	for (int p = 0; p < NP; p++)
		free(sd[p].fo);
	free(img);
	free(written);
	written = NULL;
	return all;
}

static void on_alarm_print(int sig)
{
	/* Not async-signal-safe, but the process ends here anyway. */
	if (current) {
		fprintf(stderr, "TIMEOUT rank %d after %d s: %s\n  replay: "
			"CLF_TEST_SEED=%" PRIu64 " CLF_TEST_CASE=%ld make soak-types\n",
			rank, limit_s, current->d.s, run_seed, case_no);
		fflush(stderr);
		_exit(3);
	}
	on_alarm(sig);
}

static void parse_skips(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		int j;

		for (j = 0; j < NSKIP && strcmp(tok, skip_name[j]); j++)
			;
		if (j == NSKIP) {
			if (rank == 0)
				fprintf(stderr, "romio_props: unknown class '%s'\n", tok);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		skipped[j] = true;
	}
	free(copy);
}

int main(int argc, char **argv)
{
	long ncases = 100, first = 0, failed = 0;
	const char *env;
	int opt, rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	run_seed = 1;
	if ((env = getenv("CLF_TEST_SEED")) && *env)
		run_seed = strtoull(env, NULL, 0);
	if ((env = getenv("CLF_TEST_CASE")) && *env) {
		first = strtol(env, NULL, 0);
		ncases = 1;
	}
	while ((opt = getopt(argc, argv, "s:n:f:d:u:t:x:o:c:")) != -1) {
		switch (opt) {
		case 's':
			run_seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			ncases = strtol(optarg, NULL, 0);
			break;
		case 'f':
			first = strtol(optarg, NULL, 0);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'o':
			force_opt = !strcmp(optarg, "true");
			break;
		case 'u':
			dir = optarg;
			ufs = true;
			break;
		case 't':
			limit_s = atoi(optarg);
			break;
		case 'x':
			parse_skips(optarg);
			break;
		case 'c':
			if (strcmp(optarg, skip_name[SKIP_FINE])) {
				if (rank == 0)
					fprintf(stderr, "romio_props: -c knows only %s\n",
						skip_name[SKIP_FINE]);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
			only_fine = true;
			break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: romio_props [-s SEED] [-n CASES] "
					"[-f FIRST] [-d DIR] [-t SECONDS] [-x CLASSES] "
					"[-c fine-layout]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (nprocs != NP) {
		if (rank == 0)
			fprintf(stderr, "romio_props: run it with %d processes\n", NP);
		MPI_Finalize();
		return 2;
	}
	progress = getenv("CLF_PROPS_PROGRESS");
	rc = ufs ? 0 : CLF_init(NULL);
	if (rc) {
		fprintf(stderr, "romio_props: CLF_init: %s\n", CLF_Last_error());
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0) {
		if (ufs)
			mkdir(dir, 0755);
		else
			CLF_mkdir(dir, 0755);
		printf("romio_props: seed %" PRIu64 ", cases %ld..%ld\n", run_seed, first,
		       first + ncases - 1);
		fflush(stdout);
	}
	signal(SIGALRM, on_alarm_print);
	MPI_Barrier(MPI_COMM_WORLD);
	for (case_no = first; case_no < first + ncases; case_no++)
		failed += run_case() ? 1 : 0;
	if (rank == 0)
		printf("romio_props: seed %" PRIu64 ": %ld cases, %ld failed\n", run_seed,
		       ncases, failed);
	if (!ufs)
		CLF_finalize();
	MPI_Finalize();
	return failed ? 1 : 0;
}
