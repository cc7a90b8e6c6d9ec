/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_realms.c -- layout-aligned, persistent file realms for ROMIO's
 * two-phase collective I/O (use_romio_optimizations=true).
 *
 * ROMIO's default two-phase code cuts the byte range of each collective
 * call into one contiguous file domain per aggregator, anew at every
 * call: a domain boundary falls anywhere in a subfile, two aggregators
 * write pieces of the same subfile and one aggregator's buffer spans
 * several subfiles.  ROMIO also has the flexible collective I/O of
 * Coloma, Isaila et al. (ADIOI_IOStridedColl, adio/common/ad_io_coll.c):
 * each aggregator owns a file realm -- a datatype tiled from an offset --
 * and with persistent file realms (cb_pfr) keeps it across the calls of
 * the open file.  ROMIO 4.0.2 never enables it (no hint sets cb_pfr);
 * this driver does, with realms made of clf's subfiles:
 *
 *   subfile j of the layout belongs to aggregator j % A (A = cb_nodes),
 *   realm a is the union of its subfiles' bytes in the layout's period;
 *   with fewer subfiles than aggregators, the pieces of A periods are
 *   dealt out in file order instead (piece i to aggregator i % A).
 *   Layouts whose pieces are under 128 bytes on average keep ROMIO's
 *   default domains (ADIOI_CLF_REALM_SMALL says why).
 *
 * For a round-robin layout with as many subfiles as aggregators that is
 * ad_lustre's stripe-cyclic assignment: every aggregator writes whole
 * stripes of its own subfiles, and the aggregator's I/O of its realm goes
 * through clf's view path (ADIOI_CLF_Realm_io): one request per subfile
 * it owns, none to the others' iods, no data sieving over their bytes.
 *
 * ROMIO's realm walk (get_next_fr_off) finds no next piece for an offset
 * past the last piece of a period; each realm's type is therefore shifted
 * so that its last piece ends at the period's end, and its start offset
 * moved back by as much (<= 0): every offset then lies before a piece of
 * the same period.  A layout with a head (disp > 0), a layout whose
 * subfiles have too many pieces per period, or a single aggregator keeps
 * ROMIO's default domains.
 */

#include "ad_clf.h"

#include <errno.h>

/* More pieces per period than this: ROMIO's default domains instead. */
#define ADIOI_CLF_REALM_MAX_PIECES 65536

/*
 * Subfile pieces smaller than this on average: ROMIO's default two-phase
 * code instead of realms.  ROMIO's flexible code (which the realms need)
 * walks every piece of every process's view against the realms
 * (find_next_off, view_state_add_region, a flattened-type lookup and an
 * extent query per piece: ad_coll_build_req_new.c), several times per
 * call; its default code walks them once, in a tight loop.  With 16-byte
 * pieces that walk, not the I/O nor the exchange, is the time
 * (bench/mpi_realms, k = 16: realms of whole 64 KiB runs of periods were
 * slower still, so the cost is the views' pieces, not the realms').
 * With 2 processes the realms lose at k = 64 (write 0.9x, read 0.5x of
 * ROMIO's domains) and win from k = 128 (2.3x, 0.9x) and k = 256 (1.5x,
 * 1.5x) on (docs/performance.md).  CLF_TEST_REALM_SMALL sets another
 * threshold (bytes; 1: realms for every layout).
 */
#define ADIOI_CLF_REALM_SMALL 128

static int64_t ADIOI_CLF_Realm_small(void)
{
    const char *s = getenv("CLF_TEST_REALM_SMALL");

    return s ? atoll(s) : ADIOI_CLF_REALM_SMALL;
}

struct ADIOI_CLF_Piece {
    int64_t off, len;
    int sub;
};

static int ADIOI_CLF_Piece_cmp(const void *a, const void *b)
{
    const struct ADIOI_CLF_Piece *x = a, *y = b;

    return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The runs of file bytes that type (of extent <= period) selects in
 * [0, period), appended to *p (*n of *cap used).  Each run is found by
 * doubling then halving its length with CLF_Type_unmap, which is
 * increasing: linear bytes l .. l+n-1 are one run iff the last one is
 * n-1 bytes after the first.  0, or -E2BIG past the limit, -ENOMEM.
 */
static int ADIOI_CLF_Runs(CLF_Datatype type, int sub, struct ADIOI_CLF_Piece **p, int *n,
                          int *cap)
{
    int64_t size = CLF_Type_size(type), l = 0, f, g, lo, hi, mid;

    while (l < size) {
        if (CLF_Type_unmap(type, 0, l, &f))
            return -EINVAL;
        /* lo: a run length known good; hi: known bad or past the end */
        lo = 1;
        hi = 2;
        while (hi <= size - l && !CLF_Type_unmap(type, 0, l + hi - 1, &g) && g == f + hi - 1) {
            lo = hi;
            hi *= 2;
        }
        if (hi > size - l + 1)
            hi = size - l + 1;
        while (hi - lo > 1) {
            mid = lo + (hi - lo) / 2;
            if (!CLF_Type_unmap(type, 0, l + mid - 1, &g) && g == f + mid - 1)
                lo = mid;
            else
                hi = mid;
        }
        if (*n == ADIOI_CLF_REALM_MAX_PIECES)
            return -E2BIG;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 64;
            *p = ADIOI_Realloc(*p, *cap * sizeof(**p));
            if (!*p)
                return -ENOMEM;
        }
        (*p)[*n].off = f;
        (*p)[*n].len = lo;
        (*p)[*n].sub = sub;
        (*n)++;
        l += lo;
    }
    return 0;
}

/*
 * Realm a as an MPI type: the pieces owned[] of a period of length
 * period, shifted by *shift so that the last ends at the period's end.
 */
static int ADIOI_CLF_Realm_type(const struct ADIOI_CLF_Piece *pc, int n, int64_t period,
                                int64_t * shift, MPI_Datatype * out)
{
    MPI_Aint *disp;
    int *len, i, m = 0;
    MPI_Datatype t;

    disp = ADIOI_Malloc(n * sizeof(*disp));
    len = ADIOI_Malloc(n * sizeof(*len));
    *shift = period - (pc[n - 1].off + pc[n - 1].len);
    for (i = 0; i < n; i++) {
        if (pc[i].len > INT_MAX)
            break;
        /* neighbours merge: ROMIO then sees one piece */
        if (m && disp[m - 1] + len[m - 1] == pc[i].off + *shift &&
            (int64_t) len[m - 1] + pc[i].len <= INT_MAX) {
            len[m - 1] += (int) pc[i].len;
            continue;
        }
        disp[m] = pc[i].off + *shift;
        len[m] = (int) pc[i].len;
        m++;
    }
    if (i < n) {
        ADIOI_Free(disp);
        ADIOI_Free(len);
        return -E2BIG;
    }
    MPI_Type_create_hindexed(m, len, disp, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, period, out);
    MPI_Type_free(&t);
    MPI_Type_commit(out);
    ADIOI_Free(disp);
    ADIOI_Free(len);
    return 0;
}

/*
 * This process's realms of the file (the same on every process: they
 * depend only on the layout and cb_nodes).  0, or a negative errno when
 * the realms cannot follow the layout.
 */
static int ADIOI_CLF_Realms_make(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int A = fd->hints->cb_nodes, i, j, a, n = 0, cap = 0, err = 0, per_period, nsub;
    struct clf_layout_info li;
    struct ADIOI_CLF_Piece *pc = NULL, *mine = NULL;
    int64_t period = 0, shift;
    ADIO_Offset *st;
    MPI_Datatype *types;

    if (A < 2)
        return -EINVAL;
    err = CLF_fcntl(fs->lin_fd, CLF_FCNTL_GETLAYOUT, &li);
    if (err)
        return err;
    if (li.disp != 0 || li.count < 1) {
        CLF_Layout_release(&li);
        return -EINVAL;
    }
    nsub = li.count;
    for (j = 0; j < li.count; j++)
        if (CLF_Type_extent(li.types[j]) > period)
            period = CLF_Type_extent(li.types[j]);
    for (j = 0; j < li.count && !err; j++)
        err = ADIOI_CLF_Runs(li.types[j], j, &pc, &n, &cap);
    CLF_Layout_release(&li);
    if (err || n == 0) {
        if (pc)
            ADIOI_Free(pc);
        return err ? err : -EINVAL;
    }
    qsort(pc, n, sizeof(*pc), ADIOI_CLF_Piece_cmp);

    /* Small pieces: ROMIO's default domains (ADIOI_CLF_REALM_SMALL). */
    if (period < (int64_t) n * ADIOI_CLF_Realm_small()) {
        ADIOI_Free(pc);
        return -EAGAIN;
    }

    /* Fewer subfiles than aggregators: A periods, pieces dealt in turn
     * (sub becomes the piece's number, its owner sub % A). */
    per_period = n;
    if (nsub < A) {
        if ((int64_t) n * A > ADIOI_CLF_REALM_MAX_PIECES) {
            ADIOI_Free(pc);
            return -E2BIG;
        }
        pc = ADIOI_Realloc(pc, (size_t) n * A * sizeof(*pc));
        for (i = 0; i < n * A; i++) {
            pc[i].off = pc[i % per_period].off + (int64_t) (i / per_period) * period;
            pc[i].len = pc[i % per_period].len;
        }
        for (i = 0; i < n * A; i++)
            pc[i].sub = i;
        n *= A;
        period *= A;
    }

    st = ADIOI_Malloc(A * sizeof(*st));
    types = ADIOI_Malloc(A * sizeof(*types));
    mine = ADIOI_Malloc(n * sizeof(*mine));
    for (a = 0; a < A && !err; a++) {
        int m = 0;

        for (i = 0; i < n; i++)
            if (pc[i].sub % A == a)
                mine[m++] = pc[i];
        if (m == 0) {
            err = -EINVAL;
            break;
        }
        err = ADIOI_CLF_Realm_type(mine, m, period, &shift, &types[a]);
        if (err)
            break;
        st[a] = -shift;
        ADIOI_Flatten_datatype(types[a]);
    }
    ADIOI_Free(mine);
    ADIOI_Free(pc);
    if (err) {
        while (a-- > 0)
            MPI_Type_free(&types[a]);
        ADIOI_Free(st);
        ADIOI_Free(types);
        return err;
    }
    fd->file_realm_st_offs = st;
    fd->file_realm_types = types;
    fs->realm_period = period;
    return 0;
}

/*
 * Before ROMIO's two-phase code runs a collective access: at the first
 * one of the open file, make the realms on every process (or agree, with
 * one MPI_Allreduce, that the file keeps ROMIO's default domains), and
 * turn ROMIO's persistent file realms on.  Later calls find them made.
 */
void ADIOI_CLF_Realms_prepare(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char value[32];
    int ok = 0, all;

    if (fs->realms_state != ADIOI_CLF_REALMS_UNSET)
        return;
    fs->realms_state = ADIOI_CLF_REALMS_OFF;
    fs->realm_period = 0;
    /* cb_nodes is alike everywhere: no agreement needed to skip. */
    if (fs->realms_hint && fd->hints->cb_nodes >= 2) {
        ok = ADIOI_CLF_Realms_make(fd) == 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, fd->comm);
        if (ok && !all)
            ADIOI_CLF_Realms_free(fd);
        if (all) {
            fd->hints->cb_pfr = ADIOI_HINT_ENABLE;
            /* The alltoall variant finds every process's realm with
             * ADIOI_Agg_idx, which ignores its rank argument (4.0.2):
             * the point-to-point one indexes ranklist itself. */
            fd->hints->cb_alltoall = ADIOI_HINT_DISABLE;
            fs->realms_state = ADIOI_CLF_REALMS_ON;
        } else {
            fs->realm_period = 0;
        }
    }
    /* Which domains the file's collective accesses get: 0 is ROMIO's. */
    MPL_snprintf(value, sizeof(value), "%lld", (long long) fs->realm_period);
    ADIOI_Info_set(fd->info, "clf_realm_period", value);
}

/*
 * ROMIO's two-phase collective access; with realms, ROMIO's flexible
 * collective code (ADIOI_GEN_*StridedColl hand over to it when cb_pfr is
 * set).  That code places an access through the individual pointer at
 * the start of the filetype whatever the pointer, so it gets the
 * pointer's position as an explicit offset, and the pointer is moved
 * past the data afterwards, as ROMIO's other collective code does.
 */
void ADIOI_CLF_Realms_coll(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int write, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    ADIO_Offset pos = offset;
    MPI_Count size;
    int individual = 0, ds_write;

    ADIOI_CLF_Realms_prepare(fd);
    /* Atomic mode: ROMIO's own two-phase code, which orders overlapping
     * writes of one call by rank; the flexible code does not. */
    if (fd->atomicity && fs->realms_state == ADIOI_CLF_REALMS_ON) {
        fd->hints->cb_pfr = ADIOI_HINT_DISABLE;
        if (write) {
            fs->romio_write++;
            ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                       error_code);
            fs->romio_write--;
        } else
            ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                      error_code);
        fd->hints->cb_pfr = ADIOI_HINT_ENABLE;
        return;
    }
    if (fs->realms_state == ADIOI_CLF_REALMS_ON && file_ptr_type == ADIO_INDIVIDUAL) {
        ADIOI_Get_position(fd, &pos);
        file_ptr_type = ADIO_EXPLICIT_OFFSET;
        individual = 1;
    }
    fs->realm_io = fs->realms_state == ADIOI_CLF_REALMS_ON;
    /* With data sieving on, ROMIO's aggregator ends a round at the end
     * of each piece of its realm (a 16-byte stripe: 16 bytes a round);
     * the aggregator's I/O here is clf's view path, which sieves none. */
    ds_write = fd->hints->ds_write;
    if (fs->realm_io)
        fd->hints->ds_write = ADIOI_HINT_DISABLE;
    if (write) {
        fs->romio_write++;
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, pos, status,
                                   error_code);
        fs->romio_write--;
    } else
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, pos, status,
                                  error_code);
    fs->realm_io = 0;
    fd->hints->ds_write = ds_write;
    if (individual && *error_code == MPI_SUCCESS) {
        int err;

        MPI_Type_size_x(datatype, &size);
        ADIO_SeekIndividual(fd, pos + size * count / fd->etype_size, ADIO_SEEK_SET, &err);
    }
}

/* At close, before ROMIO's: it would free only the first realm's type. */
void ADIOI_CLF_Realms_free(ADIO_File fd)
{
    int a;

    if (!fd->file_realm_types)
        return;
    for (a = 0; a < fd->hints->cb_nodes; a++)
        MPI_Type_free(&fd->file_realm_types[a]);
    ADIOI_Free(fd->file_realm_types);
    ADIOI_Free(fd->file_realm_st_offs);
    fd->file_realm_types = NULL;
    fd->file_realm_st_offs = NULL;
    fd->hints->cb_pfr = ADIOI_HINT_DISABLE;
}

/*
 * An aggregator's access of its collective buffer inside its realm
 * (ROMIO's ADIOI_IOFiletype sets the filetype to the pieces it holds):
 * through clf's view path, so that it touches only its own subfiles.
 * 0 when done (*error_code set), -1 when clf cannot express the pieces
 * (overlapping writes of two processes): then ROMIO's strided access.
 */
int ADIOI_CLF_Realm_io(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                       int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                       int write, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int cfd, linear, code = MPI_SUCCESS;

    if (!fs->realm_io)
        return -1;
    if (ADIOI_CLF_Target(fd, &cfd, &linear, &code))
        return -1;
    ADIOI_CLF_Access(fd, buf, count, datatype, file_ptr_type, offset, status, write,
                     error_code);
    return 0;
}
