/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_flatten.c -- ROMIO's flattened datatypes from MPI's typemap.
 *
 * ROMIO keeps every filetype and memory type as a list of (offset,
 * length) blocks (adio/common/flatten.c), from which its own code path
 * (use_romio_optimizations=true, ufs:, nfs:) places every byte, and from
 * which MPI_File_set_view checks that a filetype is legal.  ROMIO 4.0.2's
 * walk of the datatype does not give MPI's typemap for types whose
 * bounds are not their data's: a resized type comes out shifted by its
 * lower bound, a type inside an (h)indexed or struct whose first byte is
 * not at 0 loses that offset, subarray and darray inside another
 * constructor land elsewhere, and zero-length blocks confuse its count.
 * The result is data written to the wrong bytes (on a local file too),
 * and legal filetypes refused ("displacements of filetype must be in a
 * monotonically nondecreasing order").  MPICH fixed this from 4.1 on by
 * flattening with its own datatype engine (MPIX_Type_iov), which 4.0.2
 * does not export.
 *
 * This walk gives the typemap itself: every constructor places copies of
 * its child at the displacements the standard defines (copy j of a block
 * at displacement + j * the child's extent), resized changes the bounds
 * and never moves data, subarray and darray are ROMIO's own equivalent
 * constructions (built from the same constructors), and zero-length
 * blocks add nothing.  Blocks come out in typemap order, adjacent ones
 * merged; no lower/upper-bound markers (ROMIO's code takes the extent
 * from MPI and the tile's first byte from the first block).  ROMIO's
 * ADIOI_Optimize_flattened then sets the flags MPI_File_set_view checks
 * (negative, decreasing, overlapping), which are now the standard's rule
 * on the real displacements.
 *
 * Cost: O(blocks of the result + size of the description): each child
 * is walked once and its blocks copied per replica.
 */

#include <string.h>

#include "ad_clf.h"
#include "adio_extern.h"

/*
 * The blocks of a typemap, in order, adjacent ones merged: in one buffer
 * as ROMIO keeps them, cap lengths then cap offsets, so that the result
 * becomes ROMIO's node without a copy.
 */
struct flist {
    ADIO_Offset *len;           /* the buffer (ADIOI_Malloc'd) */
    ADIO_Offset *off;           /* len + cap */
    MPI_Count n, cap;
};

/* Room for at least want blocks in all (ADIOI_Realloc aborts if none). */
static int fl_reserve(struct flist *l, MPI_Count want)
{
    ADIO_Offset *buf;

    if (want <= l->cap)
        return 0;
    buf = ADIOI_Realloc(l->len, 2 * want * sizeof(*buf));
    memmove(buf + want, buf + l->cap, l->n * sizeof(*buf));
    l->len = buf;
    l->off = buf + want;
    l->cap = want;
    return 0;
}

static inline int fl_push(struct flist *l, ADIO_Offset off, ADIO_Offset len)
{
    if (len == 0)
        return 0;
    if (l->n > 0 && l->off[l->n - 1] + l->len[l->n - 1] == off) {
        l->len[l->n - 1] += len;
        return 0;
    }
    if (l->n == l->cap && fl_reserve(l, l->cap ? 2 * l->cap : 16))
        return -1;
    l->off[l->n] = off;
    l->len[l->n] = len;
    l->n++;
    return 0;
}

static void fl_free(struct flist *l)
{
    if (l->len)
        ADIOI_Free(l->len);
    memset(l, 0, sizeof(*l));
}

/* One block as long as its extent: copies side by side make one block. */
static inline int fl_dense(const struct flist *c, MPI_Aint ext)
{
    return c->n == 1 && c->len[0] == ext;
}

/*
 * Room for the blocks of times more placements of child c (a dense child
 * placed once per block of the constructor): reserved at once for long
 * lists, as doubling would copy and fault the pages over again.  Blocks
 * that merge leave some unused, so at most FL_EXPECT_MAX at a time.
 */
#define FL_EXPECT_MAX ((MPI_Count) 1 << 22)
static int fl_expect(struct flist *l, const struct flist *c, MPI_Aint ext, MPI_Count times)
{
    MPI_Count per = fl_dense(c, ext) ? 1 : c->n, more;

    if (times <= 0 || per <= 0)
        return 0;
    more = times > FL_EXPECT_MAX / per ? FL_EXPECT_MAX : times * per;
    return l->n + more > l->cap ? fl_reserve(l, l->n + more) : 0;
}

/* count copies of child c (extent ext) from at, each shifted by ext. */
static inline int fl_copies(struct flist *l, const struct flist *c, MPI_Aint ext,
                     ADIO_Offset at, MPI_Count count)
{
    /* One dense block per copy: the copies make one block. */
    if (fl_dense(c, ext))
        return fl_push(l, at + c->off[0], (ADIO_Offset) count * ext);
    for (MPI_Count j = 0; j < count; j++)
        for (MPI_Count b = 0; b < c->n; b++)
            if (fl_push(l, at + j * ext + c->off[b], c->len[b]))
                return -1;
    return 0;
}

static int is_named(MPI_Datatype t)
{
    int ni, na, nt, comb;

    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    return comb == MPI_COMBINER_NAMED;
}

/*
 * A named (or Fortran parameterized) type: its bytes, probed with
 * MPI_Pack where it has holes (MPI_SHORT_INT: 2 bytes, a hole, 4 bytes).
 */
static int flat_named(MPI_Datatype t, struct flist *l)
{
    MPI_Aint tlb, text;
    MPI_Count size;
    unsigned char in[256], out[256];
    int pos = 0, rc = 0;

    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &tlb, &text);
    if (size == 0)
        return 0;
    if (size == text)
        return fl_push(l, tlb, size);
    if (text > (MPI_Aint) sizeof(in) || size > (MPI_Count) sizeof(out))
        return -1;
    for (MPI_Aint i = 0; i < text; i++)
        in[i] = (unsigned char) i;
    if (MPI_Pack(in - tlb, 1, t, out, sizeof(out), &pos, MPI_COMM_SELF) != MPI_SUCCESS ||
        pos != size)
        return -1;
    for (MPI_Count i = 0; i < size && !rc; i++)
        rc = fl_push(l, tlb + out[i], 1);
    return rc;
}

static int flat_type(MPI_Datatype t, struct flist *l, int depth);

/* The typemap of t at 0, in a new list (a child walked once). */
static int flat_child(MPI_Datatype t, struct flist *c, MPI_Aint * ext, int depth)
{
    MPI_Aint lb;

    memset(c, 0, sizeof(*c));
    MPI_Type_get_extent(t, &lb, ext);
    if (flat_type(t, c, depth + 1)) {
        fl_free(c);
        return -1;
    }
    return 0;
}

/* Blocks i of an (h)indexed or struct: ncopies of child at displacement. */
static int flat_blocks(struct flist *l, MPI_Datatype * types, int ntypes_distinct,
                       int count, const int *bl, const int *di, const MPI_Aint * dh,
                       int cbl, int depth)
{
    struct flist c;
    MPI_Aint ext;
    int rc = 0;

    if (count <= 0)             /* a struct of no blocks has no types */
        return 0;
    if (ntypes_distinct == 1) {
        if (flat_child(types[0], &c, &ext, depth))
            return -1;
        rc = fl_expect(l, &c, ext, bl ? count : (MPI_Count) count * (fl_dense(&c, ext) ? 1 : cbl));
    }
    for (int i = 0; i < count && !rc; i++) {
        int n = bl ? bl[i] : cbl;

        if (n <= 0)
            continue;
        if (ntypes_distinct > 1) {
            if (flat_child(types[i], &c, &ext, depth))
                return -1;
        }
        rc = fl_copies(l, &c, ext, dh ? (ADIO_Offset) dh[i] : (ADIO_Offset) di[i] * ext, n);
        if (ntypes_distinct > 1)
            fl_free(&c);
    }
    if (ntypes_distinct == 1)
        fl_free(&c);
    return rc;
}

static int flat_type(MPI_Datatype t, struct flist *l, int depth)
{
    int ni, na, nt, comb, rc = -1;
    int *ints = NULL;
    MPI_Aint *adds = NULL, ext;
    MPI_Datatype *types = NULL, made = MPI_DATATYPE_NULL;
    struct flist c;

    if (depth > 64)
        return -1;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    if (comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
        comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER)
        return flat_named(t, l);
    ints = malloc((ni + 1) * sizeof(*ints));
    adds = malloc((na + 1) * sizeof(*adds));
    types = malloc((nt + 1) * sizeof(*types));
    if (!ints || !adds || !types)
        goto out_nocontents;
    MPI_Type_get_contents(t, ni, na, nt, ints, adds, types);

    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        /* Bounds only: the data stays where the child has it. */
        rc = flat_type(types[0], l, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        if (flat_child(types[0], &c, &ext, depth))
            break;
        rc = fl_copies(l, &c, ext, 0, ints[0]);
        fl_free(&c);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        if (flat_child(types[0], &c, &ext, depth))
            break;
        rc = fl_expect(l, &c, ext, (MPI_Count) ints[0] * (fl_dense(&c, ext) ? 1 : ints[1]));
        for (int i = 0; i < ints[0] && !rc && ints[1] > 0; i++) {
            ADIO_Offset at = comb == MPI_COMBINER_VECTOR ?
                (ADIO_Offset) i * ints[2] * ext : (ADIO_Offset) i * adds[0];

            rc = fl_copies(l, &c, ext, at, ints[1]);
        }
        fl_free(&c);
        break;
    case MPI_COMBINER_INDEXED:
        rc = flat_blocks(l, types, 1, ints[0], ints + 1, ints + 1 + ints[0], NULL, 0, depth);
        break;
    case MPI_COMBINER_HINDEXED:
        rc = flat_blocks(l, types, 1, ints[0], ints + 1, NULL, adds, 0, depth);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        rc = flat_blocks(l, types, 1, ints[0], NULL, ints + 2, NULL, ints[1], depth);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        rc = flat_blocks(l, types, 1, ints[0], NULL, NULL, adds, ints[1], depth);
        break;
    case MPI_COMBINER_STRUCT:
        rc = flat_blocks(l, types, ints[0] > 1 ? ints[0] : 1, ints[0], ints + 1, NULL,
                         adds, 0, depth);
        break;
    case MPI_COMBINER_SUBARRAY:{
            int nd = ints[0];

            /* ROMIO's construction of the same typemap from vectors and
             * resized types (adio/common/ad_subarray.c). */
            if (ADIO_Type_create_subarray(nd, ints + 1, ints + 1 + nd, ints + 1 + 2 * nd,
                                          ints[1 + 3 * nd], types[0], &made) != MPI_SUCCESS)
                break;
            rc = flat_type(made, l, depth + 1);
            break;
        }
    case MPI_COMBINER_DARRAY:{
            int nd = ints[2];

            if (ADIO_Type_create_darray(ints[0], ints[1], nd, ints + 3, ints + 3 + nd,
                                        ints + 3 + 2 * nd, ints + 3 + 3 * nd,
                                        ints[3 + 4 * nd], types[0], &made) != MPI_SUCCESS)
                break;
            rc = flat_type(made, l, depth + 1);
            break;
        }
    default:
        /* Unknown to this walk: ROMIO's own flattening instead. */
        break;
    }

    if (made != MPI_DATATYPE_NULL)
        MPI_Type_free(&made);
    for (int i = 0; i < nt; i++)
        if (!is_named(types[i]))
            MPI_Type_free(&types[i]);
  out_nocontents:
    free(ints);
    free(adds);
    free(types);
    return rc;
}

/*
 * The flattened form of a non-contiguous datatype by its typemap, as
 * ROMIO allocates it (one block of count lengths then count offsets), or
 * NULL when the walk cannot handle the type (ROMIO's own code then runs).
 */
ADIOI_Flatlist_node *ADIOI_CLF_Flatten_typemap(MPI_Datatype type)
{
    struct flist l = { 0 };
    ADIOI_Flatlist_node *flat;
    MPI_Count n;

    if (flat_type(type, &l, 0)) {
        fl_free(&l);
        return NULL;
    }
    flat = ADIOI_Malloc(sizeof(*flat));
    flat->type = type;
    flat->lb_idx = flat->ub_idx = -1;
    flat->refct = 1;
    flat->flag = 0;
    if (l.n == 0) {
        /* A type without data: one empty block, as ROMIO expects one. */
        fl_free(&l);
        flat->count = 1;
        flat->blocklens = ADIOI_Calloc(2, sizeof(ADIO_Offset));
        flat->indices = flat->blocklens + 1;
        return flat;
    }
    /* The offsets right after the n lengths, the rest given back. */
    n = l.n;
    memmove(l.len + n, l.off, n * sizeof(ADIO_Offset));
    flat->count = n;
    flat->blocklens = ADIOI_Realloc(l.len, 2 * n * sizeof(ADIO_Offset));
    flat->indices = flat->blocklens + n;
    return flat;
}
