/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_dtype.c -- MPI datatypes as clf (PITFALLS) datatypes.
 *
 * The MPI type is walked once through MPI_Type_get_envelope /
 * MPI_Type_get_contents into a small intermediate tree whose nodes are
 * normalised so that their first byte is at 0:
 *
 *   LEAF(len)             bytes [0, len)
 *   VEC(n, stride, child) n copies of child, stride bytes apart
 *   UNION(offs[], kids[]) kids at increasing offsets, one after the other
 *   CLF(type)             a clf type built already: the blocks of an
 *                         indexed or struct type, as libclf's block list
 *                         found them (regular runs become vectors there)
 *
 * Every node also knows its span (one past its last byte).  A tree exists
 * only for types whose typemap is strictly increasing (no overlap, no
 * going back): that is the order clf's linear offsets follow.  The tree is
 * then emitted as clf types (CLF_Type_vector / CLF_Type_struct) with the
 * exact extent asked for.  Nothing here is proportional to the number of
 * bytes of the type, only to the size of its description, except named
 * types with holes (MPI_SHORT_INT...), probed once with MPI_Pack.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_clf_dtype.h"

enum dnode_kind {
    DN_LEAF,
    DN_VEC,
    DN_UNION,
    DN_CLF
};

struct dnode {
    enum dnode_kind kind;
    MPI_Aint span;              /* one past the last byte; the first is at 0 */
    MPI_Count size;             /* bytes selected */
    MPI_Aint len;               /* DN_LEAF */
    MPI_Aint n, stride;         /* DN_VEC: n copies of child, stride apart */
    struct dnode *child;
    int count;                  /* DN_UNION: kids[i] at offs[i], offs[0] == 0 */
    MPI_Aint *offs;
    struct dnode **kids;
    CLF_Datatype clf;           /* DN_CLF: owned; extent span, first byte at 0 */
    struct dnode *next;         /* every node of a conversion, to free them */
};

/* A converted type: its bytes are lb0 + the node's bytes (node NULL: none). */
struct dres {
    struct dnode *node;
    MPI_Aint lb0;
};

struct conv {
    struct dnode *nodes;        /* owned: all nodes allocated */
    char *msg;                  /* borrowed: the caller's message buffer */
    int msglen;
    int err;                    /* first error, negative errno */
    int depth;                  /* recursion depth of the MPI description */
};

#define DTYPE_MAX_DEPTH 64
/* Named types with holes and unknown combiners are probed byte by byte
 * with MPI_Pack: only small ones. */
#define DTYPE_PROBE_MAX (1 << 20)
#define DTYPE_PROBE_RUNS 4096

static int conv_fail(struct conv *c, int err, const char *fmt, ...)
{
    va_list ap;

    if (c->err == 0) {
        c->err = err;
        if (c->msg && c->msglen > 0) {
            va_start(ap, fmt);
            vsnprintf(c->msg, c->msglen, fmt, ap);
            va_end(ap);
        }
    }
    return c->err;
}

static const char *combiner_name(int combiner)
{
    switch (combiner) {
        case MPI_COMBINER_NAMED:
            return "named";
        case MPI_COMBINER_DUP:
            return "dup";
        case MPI_COMBINER_CONTIGUOUS:
            return "contiguous";
        case MPI_COMBINER_VECTOR:
            return "vector";
        case MPI_COMBINER_HVECTOR:
            return "hvector";
        case MPI_COMBINER_INDEXED:
            return "indexed";
        case MPI_COMBINER_HINDEXED:
            return "hindexed";
        case MPI_COMBINER_INDEXED_BLOCK:
            return "indexed_block";
        case MPI_COMBINER_HINDEXED_BLOCK:
            return "hindexed_block";
        case MPI_COMBINER_STRUCT:
            return "struct";
        case MPI_COMBINER_SUBARRAY:
            return "subarray";
        case MPI_COMBINER_DARRAY:
            return "darray";
        case MPI_COMBINER_RESIZED:
            return "resized";
        default:
            return "other";
    }
}

static int mul_ok(MPI_Aint a, MPI_Aint b, MPI_Aint * r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static int add_ok(MPI_Aint a, MPI_Aint b, MPI_Aint * r)
{
    return !__builtin_add_overflow(a, b, r);
}

static struct dnode *node_new(struct conv *c, enum dnode_kind kind)
{
    struct dnode *d = calloc(1, sizeof(*d));

    if (!d) {
        conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        return NULL;
    }
    d->kind = kind;
    d->next = c->nodes;
    c->nodes = d;
    return d;
}

static void conv_release(struct conv *c)
{
    while (c->nodes) {
        struct dnode *d = c->nodes;

        c->nodes = d->next;
        free(d->offs);
        free(d->kids);
        CLF_Type_free(&d->clf);
        free(d);
    }
}

static struct dnode *leaf(struct conv *c, MPI_Aint len)
{
    struct dnode *d = node_new(c, DN_LEAF);

    if (d) {
        d->len = d->span = len;
        d->size = len;
    }
    return d;
}

static int node_equal(const struct dnode *a, const struct dnode *b)
{
    int i;

    if (a == b)
        return 1;
    if (a->kind != b->kind || a->span != b->span || a->size != b->size)
        return 0;
    switch (a->kind) {
        case DN_LEAF:
            return a->len == b->len;
        case DN_VEC:
            return a->n == b->n && a->stride == b->stride && node_equal(a->child, b->child);
        case DN_CLF:
            return a->clf == b->clf;
        default:
            if (a->count != b->count)
                return 0;
            for (i = 0; i < a->count; i++)
                if (a->offs[i] != b->offs[i] || !node_equal(a->kids[i], b->kids[i]))
                    return 0;
            return 1;
    }
}

/*
 * n copies of child, stride bytes apart; the caller has checked that the
 * copies follow each other (child->span <= stride when n > 1).
 */
static struct dnode *vec(struct conv *c, MPI_Aint n, MPI_Aint stride, struct dnode *child)
{
    struct dnode *d;
    MPI_Aint span, total;

    if (n == 1)
        return child;
    if (!mul_ok(n - 1, stride, &span) || !add_ok(span, child->span, &span) ||
        !mul_ok(n, child->size, &total)) {
        conv_fail(c, -EOVERFLOW, "MPI datatype too large: its extent overflows");
        return NULL;
    }
    /* Copies that touch merge: n runs of stride bytes are one run. */
    if (child->kind == DN_LEAF && child->len == stride)
        return leaf(c, span);
    /* A vector that fills its stride continues the inner one. */
    if (child->kind == DN_VEC && child->n * child->stride == stride) {
        n *= child->n;
        stride = child->stride;
        child = child->child;
    }
    d = node_new(c, DN_VEC);
    if (!d)
        return NULL;
    d->n = n;
    d->stride = stride;
    d->child = child;
    d->span = span;
    d->size = total;
    return d;
}

/* The members of a union, with their offsets, growing as needed. */
struct members {
    int count, cap;
    MPI_Aint *offs;
    struct dnode **kids;
};

static int members_push(struct conv *c, struct members *m, MPI_Aint off, struct dnode *kid)
{
    int i;

    if (kid->kind == DN_UNION) {
        for (i = 0; i < kid->count; i++)
            if (members_push(c, m, off + kid->offs[i], kid->kids[i]))
                return c->err;
        return 0;
    }
    /* A run that starts where the previous one ends extends it. */
    if (m->count > 0 && kid->kind == DN_LEAF && m->kids[m->count - 1]->kind == DN_LEAF &&
        m->offs[m->count - 1] + m->kids[m->count - 1]->len == off) {
        struct dnode *l = leaf(c, m->kids[m->count - 1]->len + kid->len);

        if (!l)
            return c->err;
        m->kids[m->count - 1] = l;
        return 0;
    }
    if (m->count == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        MPI_Aint *o = realloc(m->offs, cap * sizeof(*o));
        struct dnode **k;

        if (o)
            m->offs = o;
        k = o ? realloc(m->kids, cap * sizeof(*k)) : NULL;
        if (!k)
            return conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        m->kids = k;
        m->cap = cap;
    }
    m->offs[m->count] = off;
    m->kids[m->count] = kid;
    m->count++;
    return 0;
}

static void members_release(struct members *m)
{
    free(m->offs);
    free(m->kids);
}

/*
 * The node of members at increasing, non-overlapping offsets (offs[0] is
 * 0).  Equal members equally spaced become a vector; takes ownership of
 * the arrays of m.
 */
static struct dnode *union_of(struct conv *c, struct members *m)
{
    struct dnode *d;
    MPI_Aint step;
    MPI_Count size = 0;
    int i, regular;

    if (m->count == 1) {
        d = m->kids[0];
        members_release(m);
        return d;
    }
    step = m->offs[1] - m->offs[0];
    regular = 1;
    for (i = 1; i < m->count && regular; i++)
        regular = m->offs[i] - m->offs[i - 1] == step && node_equal(m->kids[i], m->kids[0]);
    if (regular) {
        d = vec(c, m->count, step, m->kids[0]);
        members_release(m);
        return d;
    }
    d = node_new(c, DN_UNION);
    if (!d) {
        members_release(m);
        return NULL;
    }
    for (i = 0; i < m->count; i++)
        size += m->kids[i]->size;
    d->count = m->count;
    d->offs = m->offs;
    d->kids = m->kids;
    d->span = m->offs[m->count - 1] + m->kids[m->count - 1]->span;
    d->size = size;
    return d;
}

static int convert(struct conv *c, MPI_Datatype type, struct dres *res);
static CLF_Datatype emit(struct conv *c, const struct dnode *d, MPI_Aint o, MPI_Aint E);

/*
 * n copies of r, extent bytes apart, in place in r.  The copies must go
 * forward without overlapping, as in an increasing typemap.
 */
static int repeat(struct conv *c, struct dres *r, MPI_Aint n, MPI_Aint extent,
                  const char *what)
{
    if (!r->node || n == 0) {
        r->node = NULL;
        return 0;
    }
    if (n < 0)
        return conv_fail(c, -EINVAL, "MPI datatype (%s) has a negative count", what);
    if (n > 1 && extent < r->node->span)
        return conv_fail(c, -EINVAL,
                         "MPI datatype (%s) is not expressible in clf: its copies overlap or "
                         "go backwards (%ld bytes apart, each spans %ld)",
                         what, (long) extent, (long) r->node->span);
    r->node = vec(c, n, extent, r->node);
    return r->node ? 0 : c->err;
}

/*
 * The blocks of an indexed or struct type, added one at a time in typemap
 * order to a clf block list, which finds the regular runs among them: a
 * list of millions of blocks costs O(1) per block and its result, not a
 * node per block.
 */
struct blockset {
    CLF_Blocklist list;         /* owned; NULL until the first block */
    MPI_Aint first;             /* byte of the first block's first byte */
    MPI_Aint end;               /* one past the last block's span */
    const char *what;
};

/*
 * Block i: blen copies of child (MPI extent ext) at byte displacement
 * disp; *clf caches child as a clf type.  Blocks must come in increasing
 * order without overlapping, as clf's linear order is the file's.
 */
static int blockset_add(struct conv *c, struct blockset *bs, int i, MPI_Aint blen, MPI_Aint disp,
                        const struct dres *child, MPI_Aint ext, CLF_Datatype * clf)
{
    MPI_Aint off, span;
    int err;

    if (blen == 0 || !child->node)
        return 0;
    if (blen < 0)
        return conv_fail(c, -EINVAL, "MPI datatype (%s) has a negative count", bs->what);
    if (blen > 1 && ext < child->node->span)
        return conv_fail(c, -EINVAL,
                         "MPI datatype (%s) is not expressible in clf: its copies overlap or "
                         "go backwards (%ld bytes apart, each spans %ld)",
                         bs->what, (long) ext, (long) child->node->span);
    if (!add_ok(disp, child->lb0, &off) || !mul_ok(blen - 1, ext, &span) ||
        !add_ok(span, child->node->span, &span))
        return conv_fail(c, -EOVERFLOW, "MPI datatype (%s): displacement overflows", bs->what);
    if (bs->list && off < bs->end)
        return conv_fail(c, -EINVAL,
                         "MPI datatype (%s) is not expressible in clf: block %d (at byte %ld) "
                         "overlaps or precedes the block before it", bs->what, i, (long) off);
    if (!*clf) {
        /* Copies tile with the MPI extent; a lone copy needs its span. */
        *clf = emit(c, child->node, 0, ext > child->node->span ? ext : child->node->span);
        if (!*clf)
            return c->err;
    }
    if (!bs->list) {
        bs->list = CLF_Blocklist_new();
        if (!bs->list)
            return conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        bs->first = off;
    }
    err = CLF_Blocklist_add(bs->list, off - bs->first, blen, *clf);
    if (err)
        return conv_fail(c, err, "clf cannot build the %s: %s", bs->what, CLF_Last_error());
    bs->end = off + span;
    return 0;
}

/* The node of all blocks added (NULL: none), first byte at res->lb0. */
static int blockset_finish(struct conv *c, struct blockset *bs, struct dres *res)
{
    CLF_Datatype t;
    struct dnode *d;

    res->node = NULL;
    if (!bs->list)
        return 0;
    t = CLF_Type_blocklist(&bs->list, bs->end - bs->first);
    if (!t)
        return conv_fail(c, errno ? -errno : -EINVAL, "clf cannot build the %s: %s", bs->what,
                         CLF_Last_error());
    res->lb0 = bs->first;
    if (CLF_Type_size(t) == bs->end - bs->first) {
        /* One run of bytes: a leaf keeps the vector shortcuts above. */
        CLF_Type_free(&t);
        res->node = leaf(c, bs->end - bs->first);
        return res->node ? 0 : c->err;
    }
    d = node_new(c, DN_CLF);
    if (!d) {
        CLF_Type_free(&t);
        return c->err;
    }
    d->clf = t;
    d->span = bs->end - bs->first;
    d->size = CLF_Type_size(t);
    res->node = d;
    return 0;
}

/*
 * The bytes of a small type in typemap order, by packing a buffer whose
 * bytes are labelled with their offsets (three passes, 24 bits).
 */
static int probe(struct conv *c, MPI_Datatype type, const char *what, struct dres *res)
{
    MPI_Aint true_lb, true_extent, *at = NULL;
    MPI_Count size;
    MPI_Datatype t;
    unsigned char *buf = NULL, *packed = NULL;
    struct members m = { 0 };
    int pos, pass, i;
    MPI_Aint x, run;

    MPI_Type_size_x(type, &size);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    if (size == 0) {
        res->node = NULL;
        return 0;
    }
    if (true_extent > DTYPE_PROBE_MAX || size > true_extent)
        return conv_fail(c, -EINVAL,
                         "MPI datatype (%s) is not expressible in clf: its structure is not "
                         "understood and it is too large to probe", what);
    buf = malloc(true_extent);
    packed = malloc(size);
    at = calloc(size, sizeof(*at));
    if (!buf || !packed || !at) {
        conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        goto out;
    }
    MPI_Type_dup(type, &t);
    MPI_Type_commit(&t);
    for (pass = 0; pass < 3; pass++) {
        for (x = 0; x < true_extent; x++)
            buf[x] = (unsigned char) (x >> (8 * pass));
        pos = 0;
        MPI_Pack(buf - true_lb, 1, t, packed, (int) size, &pos, MPI_COMM_SELF);
        for (i = 0; i < size; i++)
            at[i] |= (MPI_Aint) packed[i] << (8 * pass);
    }
    MPI_Type_free(&t);
    for (i = 0; i < size; i = (int) (i + run)) {
        struct dnode *l;

        if (i > 0 && at[i] <= at[i - 1]) {
            conv_fail(c, -EINVAL,
                      "MPI datatype (%s) is not expressible in clf: its bytes overlap or are "
                      "not in increasing order", what);
            goto out;
        }
        for (run = 1; i + run < size && at[i + run] == at[i] + run; run++);
        if (m.count == DTYPE_PROBE_RUNS) {
            conv_fail(c, -E2BIG, "MPI datatype (%s) has too many pieces to probe", what);
            goto out;
        }
        l = leaf(c, run);
        if (!l || members_push(c, &m, at[i] - at[0], l))
            goto out;
    }
    res->lb0 = true_lb + at[0];
    res->node = union_of(c, &m);
    m.offs = NULL;
    m.kids = NULL;
  out:
    members_release(&m);
    free(buf);
    free(packed);
    free(at);
    return c->err;
}

static int named(struct conv *c, MPI_Datatype type, struct dres *res)
{
    MPI_Aint true_lb, true_extent;
    MPI_Count size;

    MPI_Type_size_x(type, &size);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    if (size == 0) {
        res->node = NULL;
        return 0;
    }
    if (size != true_extent)    /* MPI_SHORT_INT and the like */
        return probe(c, type, "named", res);
    res->lb0 = true_lb;
    res->node = leaf(c, size);
    return res->node ? 0 : c->err;
}

/* Per dimension: the index ranges one process owns, in increasing order. */
struct dim_ranges {
    MPI_Aint first;             /* first index */
    MPI_Aint k;                 /* block length */
    MPI_Aint step;              /* distance between block starts */
    MPI_Aint nfull;             /* full blocks */
    MPI_Aint last;              /* length of a last, shorter block (0: none) */
};

/*
 * The node of one dimension: the ranges of inner (the faster dimensions),
 * inner nodes dstride bytes apart.  Offsets are relative to the first
 * owned index.
 */
static struct dnode *dim_node(struct conv *c, const struct dim_ranges *dr, struct dnode *inner,
                              MPI_Aint dstride, const char *what)
{
    struct dres blk = { inner, 0 }, part = { inner, 0 };
    struct members m = { 0 };
    MPI_Aint step;

    if (!mul_ok(dr->step, dstride, &step)) {
        conv_fail(c, -EOVERFLOW, "MPI datatype (%s): extent overflows", what);
        return NULL;
    }
    if (dr->nfull > 0) {
        if (repeat(c, &blk, dr->k, dstride, what) || repeat(c, &blk, dr->nfull, step, what))
            return NULL;
        if (dr->last == 0)
            return blk.node;
        if (members_push(c, &m, 0, blk.node))
            goto fail;
    }
    if (repeat(c, &part, dr->last, dstride, what))
        goto fail;
    if (members_push(c, &m, dr->nfull * step, part.node))
        goto fail;
    return union_of(c, &m);
  fail:
    members_release(&m);
    return NULL;
}

/*
 * Subarray and darray: ndims dimensions, each with its ranges, nested
 * from the fastest (innermost) to the slowest.  fortran: dimension 0 is
 * the fastest.
 */
static int nd_array(struct conv *c, int ndims, const int *gsizes, struct dim_ranges *dr,
                    int fortran, MPI_Datatype oldtype, const char *what, struct dres *res)
{
    struct dres child;
    MPI_Aint lb, ext, dstride, off;
    struct dnode *node;
    int i, d;

    res->node = NULL;
    for (i = 0; i < ndims; i++)
        if (dr[i].nfull == 0 && dr[i].last == 0)
            return 0;
    if (convert(c, oldtype, &child))
        return c->err;
    MPI_Type_get_extent(oldtype, &lb, &ext);
    if (!child.node)
        return 0;
    node = child.node;
    dstride = ext;
    off = child.lb0;
    for (i = ndims - 1; i >= 0; i--) {
        MPI_Aint skip;

        d = fortran ? ndims - 1 - i : i;
        node = dim_node(c, &dr[d], node, dstride, what);
        if (!node)
            return c->err;
        if (!mul_ok(dr[d].first, dstride, &skip) || !add_ok(off, skip, &off) ||
            !mul_ok(dstride, gsizes[d], &dstride))
            return conv_fail(c, -EOVERFLOW, "MPI datatype (%s): extent overflows", what);
    }
    res->node = node;
    res->lb0 = off;
    return 0;
}

static int subarray(struct conv *c, const int *ints, MPI_Datatype oldtype, struct dres *res)
{
    int ndims = ints[0], i;
    const int *sizes = ints + 1, *subsizes = ints + 1 + ndims, *starts = ints + 1 + 2 * ndims;
    struct dim_ranges *dr = calloc(ndims, sizeof(*dr));
    int err;

    if (!dr)
        return conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
    for (i = 0; i < ndims; i++) {
        dr[i].first = starts[i];
        dr[i].k = subsizes[i];
        dr[i].step = sizes[i];
        dr[i].nfull = subsizes[i] > 0;
    }
    err = nd_array(c, ndims, sizes, dr, ints[1 + 3 * ndims] == MPI_ORDER_FORTRAN, oldtype,
                   "subarray", res);
    free(dr);
    return err;
}

/* The ranges of process coordinate coord in one darray dimension. */
static int darray_dim(struct conv *c, int gsize, int distrib, int darg, int psize, int coord,
                      struct dim_ranges *dr)
{
    MPI_Aint k, start, n;

    memset(dr, 0, sizeof(*dr));
    if (distrib == MPI_DISTRIBUTE_NONE) {
        dr->k = dr->step = gsize;
        dr->nfull = gsize > 0;
        return 0;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        k = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        if (k <= 0 || k * psize < gsize)
            return conv_fail(c, -EINVAL, "MPI datatype (darray): block size %ld too small",
                             (long) k);
        start = coord * k;
        n = gsize - start < k ? gsize - start : k;
        if (n <= 0)
            return 0;
        dr->first = start;
        dr->k = dr->step = n;
        dr->nfull = 1;
        return 0;
    }
    /* MPI_DISTRIBUTE_CYCLIC */
    k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (k <= 0)
        return conv_fail(c, -EINVAL, "MPI datatype (darray): cyclic block size %ld", (long) k);
    start = coord * k;
    if (start >= gsize)
        return 0;
    dr->first = start;
    dr->k = k;
    dr->step = k * psize;
    /* Blocks start at start + j*step; full ones end by gsize. */
    dr->nfull = gsize - start >= k ? (gsize - start - k) / dr->step + 1 : 0;
    n = gsize - (start + dr->nfull * dr->step);
    dr->last = n > 0 ? (n < k ? n : k) : 0;
    if (dr->last == k) {        /* cannot happen, but keep the sets exact */
        dr->nfull++;
        dr->last = 0;
    }
    return 0;
}

static int darray(struct conv *c, const int *ints, MPI_Datatype oldtype, struct dres *res)
{
    int rank = ints[1], ndims = ints[2], i, r;
    const int *gsizes = ints + 3, *distribs = ints + 3 + ndims;
    const int *dargs = ints + 3 + 2 * ndims, *psizes = ints + 3 + 3 * ndims;
    int order = ints[3 + 4 * ndims];
    struct dim_ranges *dr = calloc(ndims, sizeof(*dr));
    int err = 0;

    if (!dr)
        return conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
    /* Process coordinates are row-major whatever the array order. */
    r = rank;
    for (i = ndims - 1; i >= 0 && !err; i--) {
        err = darray_dim(c, gsizes[i], distribs[i], dargs[i], psizes[i], r % psizes[i], &dr[i]);
        r /= psizes[i];
    }
    if (!err)
        err = nd_array(c, ndims, gsizes, dr, order == MPI_ORDER_FORTRAN, oldtype, "darray", res);
    free(dr);
    return err;
}

/* Indexed, hindexed, their _block forms and struct: blocks of children. */
static int indexed(struct conv *c, int combiner, const int *ints, const MPI_Aint * addrs,
                   const MPI_Datatype * types, struct dres *res)
{
    int n = ints[0], i, k, ntypes = combiner == MPI_COMBINER_STRUCT ? n : 1;
    int same = combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
    struct blockset bs = { .what = combiner_name(combiner) };
    struct dres *child = calloc(ntypes + 1, sizeof(*child));
    MPI_Aint *ext = calloc(ntypes + 1, sizeof(*ext)), lb, blen, disp;
    CLF_Datatype *clf = calloc(ntypes + 1, sizeof(*clf));
    char *done = calloc(ntypes + 1, 1);

    if (!child || !ext || !clf || !done) {
        conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        goto out;
    }
    for (i = 0; i < n && !c->err; i++) {
        blen = same ? ints[1] : ints[1 + i];
        k = ntypes == 1 ? 0 : i;
        /* A type used zero times does not matter, whatever it is. */
        if (blen == 0)
            continue;
        if (!done[k]) {
            if (k > 0 && types[k] == types[k - 1] && done[k - 1]) {
                child[k] = child[k - 1];
                ext[k] = ext[k - 1];
                clf[k] = CLF_Type_dup(clf[k - 1]);
            } else if (convert(c, types[k], &child[k])) {
                break;
            } else {
                MPI_Type_get_extent(types[k], &lb, &ext[k]);
            }
            done[k] = 1;
        }
        switch (combiner) {
            case MPI_COMBINER_INDEXED:
                disp = ints[1 + n + i] * ext[0];
                break;
            case MPI_COMBINER_INDEXED_BLOCK:
                disp = ints[2 + i] * ext[0];
                break;
            default:           /* hindexed, hindexed_block, struct */
                disp = addrs[i];
                break;
        }
        if (blockset_add(c, &bs, i, blen, disp, &child[k], ext[k], &clf[k]))
            break;
    }
    if (!c->err)
        blockset_finish(c, &bs, res);
  out:
    CLF_Blocklist_free(&bs.list);
    for (i = 0; clf && i < ntypes; i++)
        CLF_Type_free(&clf[i]);
    free(child);
    free(ext);
    free(clf);
    free(done);
    return c->err;
}

static int convert_contents(struct conv *c, int combiner, const int *ints,
                            const MPI_Aint * addrs, const MPI_Datatype * types,
                            MPI_Datatype type, struct dres *res)
{
    const char *what = combiner_name(combiner);
    MPI_Aint lb, ext, stride;

    switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
            /* Resizing moves the bounds, not the bytes. */
            return convert(c, types[0], res);
        case MPI_COMBINER_CONTIGUOUS:
            if (ints[0] == 0)
                return 0;
            if (convert(c, types[0], res))
                return c->err;
            MPI_Type_get_extent(types[0], &lb, &ext);
            return repeat(c, res, ints[0], ext, what);
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
            if (ints[0] == 0 || ints[1] == 0)
                return 0;
            if (convert(c, types[0], res))
                return c->err;
            MPI_Type_get_extent(types[0], &lb, &ext);
            if (combiner == MPI_COMBINER_VECTOR) {
                if (!mul_ok(ints[2], ext, &stride))
                    return conv_fail(c, -EOVERFLOW, "MPI datatype (vector): stride overflows");
            } else {
                stride = addrs[0];
            }
            if (repeat(c, res, ints[1], ext, what))
                return c->err;
            return repeat(c, res, ints[0], stride, what);
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_HINDEXED:
        case MPI_COMBINER_INDEXED_BLOCK:
        case MPI_COMBINER_HINDEXED_BLOCK:
        case MPI_COMBINER_STRUCT:
            return indexed(c, combiner, ints, addrs, types, res);
        case MPI_COMBINER_SUBARRAY:
            return subarray(c, ints, types[0], res);
        case MPI_COMBINER_DARRAY:
            return darray(c, ints, types[0], res);
        default:
            /* F90 parameterised types and anything newer: by their bytes. */
            return probe(c, type, what, res);
    }
}

static int convert(struct conv *c, MPI_Datatype type, struct dres *res)
{
    int nints, naddrs, ntypes, combiner, i;
    int *ints = NULL;
    MPI_Aint *addrs = NULL;
    MPI_Datatype *types = NULL;

    res->node = NULL;
    res->lb0 = 0;
    if (c->err)
        return c->err;
    if (type == MPI_DATATYPE_NULL)
        return conv_fail(c, -EINVAL, "MPI_DATATYPE_NULL is not a datatype");
    if (++c->depth > DTYPE_MAX_DEPTH) {
        c->depth--;
        return conv_fail(c, -E2BIG, "MPI datatype nested more than %d levels deep",
                         DTYPE_MAX_DEPTH);
    }
    MPI_Type_get_envelope(type, &nints, &naddrs, &ntypes, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        named(c, type, res);
        c->depth--;
        return c->err;
    }
    ints = malloc((nints + 1) * sizeof(*ints));
    addrs = malloc((naddrs + 1) * sizeof(*addrs));
    types = malloc((ntypes + 1) * sizeof(*types));
    if (!ints || !addrs || !types) {
        conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        goto out;
    }
    MPI_Type_get_contents(type, nints, naddrs, ntypes, ints, addrs, types);
    convert_contents(c, combiner, ints, addrs, types, type, res);
    for (i = 0; i < ntypes; i++) {
        int ni, na, nt, comb;

        MPI_Type_get_envelope(types[i], &ni, &na, &nt, &comb);
        if (comb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
  out:
    free(ints);
    free(addrs);
    free(types);
    c->depth--;
    return c->err;
}

/* ------------------------------------------------------------------ */
/* Emitting clf types                                                   */
/* ------------------------------------------------------------------ */

static CLF_Datatype clf_failed(struct conv *c, const char *what)
{
    int err = errno ? -errno : -EINVAL;

    conv_fail(c, err, "clf cannot build the %s: %s", what, CLF_Last_error());
    return NULL;
}

/* t (extent x) placed at o inside extent E; consumes t. */
static CLF_Datatype place(struct conv *c, CLF_Datatype t, MPI_Aint o, MPI_Aint E)
{
    CLF_Datatype p;
    MPI_Aint x = CLF_Type_extent(t);

    if (o == 0 && x == E)
        return t;
    p = CLF_Type_vector(o, o + x - 1, E, 1, t);
    CLF_Type_free(&t);
    return p ? p : clf_failed(c, "placement of a block");
}

static CLF_Datatype emit_vec(struct conv *c, const struct dnode *d, MPI_Aint o, MPI_Aint E)
{
    CLF_Datatype inner, parts[2], t;
    MPI_Aint all;

    if (d->child->kind == DN_LEAF) {
        /* Runs of len bytes every stride: one vector. */
        MPI_Aint len = d->child->len;

        if (o + d->n * d->stride <= E) {
            t = CLF_Type_vector(0, len - 1, d->stride, d->n, CLF_BYTE);
            if (!t)
                return clf_failed(c, "vector");
            return place(c, t, o, E);
        }
        /* The last run's stride would pass E: it goes apart. */
        t = CLF_Type_vector(0, len - 1, d->stride, d->n - 1, CLF_BYTE);
        if (!t)
            return clf_failed(c, "vector");
        parts[0] = place(c, t, o, E);
        if (!parts[0])
            return NULL;
        parts[1] = CLF_Type_vector(o + (d->n - 1) * d->stride,
                                   o + (d->n - 1) * d->stride + len - 1, E, 1, CLF_BYTE);
        if (!parts[1]) {
            CLF_Type_free(&parts[0]);
            return clf_failed(c, "vector");
        }
        t = CLF_Type_struct(2, parts);
        CLF_Type_free(&parts[0]);
        CLF_Type_free(&parts[1]);
        return t ? t : clf_failed(c, "struct");
    }

    inner = emit(c, d->child, 0, d->stride);
    if (!inner)
        return NULL;
    all = d->n * d->stride;
    if (o + all <= E) {
        t = CLF_Type_vector(o, o + all - 1, E, 1, inner);
        CLF_Type_free(&inner);
        return t ? t : clf_failed(c, "vector");
    }
    parts[0] = CLF_Type_vector(o, o + all - d->stride - 1, E, 1, inner);
    CLF_Type_free(&inner);
    if (!parts[0])
        return clf_failed(c, "vector");
    parts[1] = emit(c, d->child, o + all - d->stride, E);
    if (!parts[1]) {
        CLF_Type_free(&parts[0]);
        return NULL;
    }
    t = CLF_Type_struct(2, parts);
    CLF_Type_free(&parts[0]);
    CLF_Type_free(&parts[1]);
    return t ? t : clf_failed(c, "struct");
}

/*
 * A clf type of extent E selecting o + the bytes of d, where
 * 0 <= o and o + d->span <= E.
 */
static CLF_Datatype emit(struct conv *c, const struct dnode *d, MPI_Aint o, MPI_Aint E)
{
    CLF_Datatype *parts, t;
    int i, n = 0;

    switch (d->kind) {
        case DN_LEAF:
            t = CLF_Type_vector(o, o + d->len - 1, E, 1, CLF_BYTE);
            return t ? t : clf_failed(c, "run of bytes");
        case DN_VEC:
            return emit_vec(c, d, o, E);
        case DN_CLF:
            return place(c, CLF_Type_dup(d->clf), o, E);
        default:
            break;
    }
    parts = calloc(d->count, sizeof(*parts));
    if (!parts) {
        conv_fail(c, -ENOMEM, "out of memory converting an MPI datatype");
        return NULL;
    }
    for (n = 0; n < d->count; n++) {
        parts[n] = emit(c, d->kids[n], o + d->offs[n], E);
        if (!parts[n])
            break;
    }
    t = n == d->count ? CLF_Type_struct(n, parts) : NULL;
    if (n == d->count && !t)
        clf_failed(c, "struct");
    for (i = 0; i < n; i++)
        CLF_Type_free(&parts[i]);
    free(parts);
    return t;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

int ADIOI_CLF_Dtype_convert(MPI_Datatype type, enum ADIOI_CLF_Dtype_use use,
                            CLF_Datatype * out, MPI_Aint * window, char *msg, int msglen)
{
    struct conv c = { .msg = msg, .msglen = msglen };
    struct dres r;
    MPI_Aint lb, extent, w0;
    MPI_Count size;
    CLF_Datatype t;

    if (msg && msglen > 0)
        msg[0] = '\0';
    MPI_Type_size_x(type, &size);
    if (size == 0) {
        conv_fail(&c, -EINVAL, "the MPI datatype selects no bytes");
        goto out;
    }
    if (convert(&c, type, &r))
        goto out;
    MPI_Type_get_extent(type, &lb, &extent);
    /* A view's lower bound is no displacement of its typemap: below 0
     * it is legal as long as the bytes are not (tiled from them below). */
    if (lb < 0 && use != ADIOI_CLF_DTYPE_VIEW) {
        conv_fail(&c, -EINVAL, "the MPI datatype has a negative lower bound (%ld)", (long) lb);
        goto out;
    }
    if (extent <= 0) {
        conv_fail(&c, -EINVAL, "the MPI datatype has extent %ld", (long) extent);
        goto out;
    }
    if (use == ADIOI_CLF_DTYPE_LAYOUT && lb != 0) {
        conv_fail(&c, -EINVAL,
                  "a subfile datatype must have lower bound 0 (this one has %ld)", (long) lb);
        goto out;
    }
    if (lb >= 0 && r.lb0 >= lb && r.lb0 - lb + r.node->span <= extent) {
        w0 = lb;
    } else if (use == ADIOI_CLF_DTYPE_VIEW && r.node->span <= extent && r.lb0 >= 0) {
        /* Copies still follow each other: tile from the first byte. */
        w0 = r.lb0;
    } else {
        conv_fail(&c, -EINVAL,
                  "the MPI datatype selects bytes outside its extent [%ld, %ld): clf "
                  "cannot tile it", (long) lb, (long) (lb + extent));
        goto out;
    }
    t = emit(&c, r.node, r.lb0 - w0, extent);
    if (t) {
        *out = t;
        *window = w0;
    }
  out:
    conv_release(&c);
    return c.err;
}

int ADIOI_CLF_Dtype_layout(MPI_Datatype type, MPI_Aint period, CLF_Datatype * out, char *msg,
                           int msglen)
{
    struct conv c = {.msg = msg,.msglen = msglen };
    struct dres r;
    MPI_Count size;
    CLF_Datatype t;

    if (msg && msglen > 0)
        msg[0] = '\0';
    MPI_Type_size_x(type, &size);
    if (size == 0) {
        conv_fail(&c, -EINVAL, "the MPI datatype selects no bytes");
        goto out;
    }
    if (convert(&c, type, &r))
        goto out;
    if (r.lb0 < 0 || r.node->span > period - r.lb0) {
        conv_fail(&c, -EINVAL, "it selects bytes %ld to %ld, outside the layout's period "
                  "[0, %ld) (the largest upper bound of the subfile types)", (long) r.lb0,
                  (long) (r.lb0 + r.node->span - 1), (long) period);
        goto out;
    }
    t = emit(&c, r.node, r.lb0, period);
    if (t)
        *out = t;
  out:
    conv_release(&c);
    return c.err;
}

int ADIOI_CLF_Dtype_memtype(MPI_Datatype type, MPI_Count count, CLF_Datatype * out,
                            MPI_Aint * base, char *msg, int msglen)
{
    struct conv c = { .msg = msg, .msglen = msglen };
    struct dres r;
    MPI_Aint lb, extent;
    MPI_Count size;
    CLF_Datatype t;

    if (msg && msglen > 0)
        msg[0] = '\0';
    MPI_Type_size_x(type, &size);
    if (count <= 0 || size == 0)
        return -ENODATA;
    if (convert(&c, type, &r))
        goto out;
    if (!r.node) {
        conv_release(&c);
        return -ENODATA;
    }
    MPI_Type_get_extent(type, &lb, &extent);
    if (repeat(&c, &r, count, extent, "memory buffer"))
        goto out;
    t = emit(&c, r.node, 0, r.node->span);
    if (t) {
        *out = t;
        *base = r.lb0;
    }
  out:
    conv_release(&c);
    return c.err;
}

CLF_Datatype ADIOI_CLF_Dtype_bytes(MPI_Count len)
{
    return CLF_Type_vector(0, len - 1, len, 1, CLF_BYTE);
}
