/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_coop_coll.c -- collective accesses through the cooperative
 * cache (hint clf_coop_cache; the rules are in ad_clf_coop.h).
 *
 * Every collective access starts with one MPI_Allgather of a few
 * integers per process: the file bytes the access spans, the extent of
 * what the process keeps, how many runs its access has, whether it would
 * go over its bound or could not prepare its access.  Every process then
 * takes the same decision from the same numbers:
 *
 *   - atomic mode, or a process that could not prepare its access: all
 *     flush, and the access takes clf's collective path;
 *   - a write: all flush first when it overlaps anything kept (so that
 *     the later bytes win at the iods too) or a process would go over
 *     its bound; then each process keeps its bytes; a process whose
 *     access alone exceeds its bound makes everyone flush and write
 *     through clf's collective path;
 *   - a read that meets nothing kept takes clf's collective path; else
 *     each process sends its file runs to the processes whose kept
 *     extent they meet, those answer with the bytes they hold (point to
 *     point, between the partners the gathered numbers name: no other
 *     synchronisation), and a process that was not given every byte
 *     reads its access from the iods before laying the answers over it;
 *     a read that meets only its own process's kept bytes exchanges
 *     nothing.
 */

#include "ad_clf_coop.h"

#include <errno.h>
#include <stdlib.h>

/* What each process tells the others at the start of an access. */
enum { ADIOI_CLF_CI_LO, ADIOI_CLF_CI_HI, ADIOI_CLF_CI_KLO, ADIOI_CLF_CI_KHI,
    ADIOI_CLF_CI_NRUNS, ADIOI_CLF_CI_FLAGS, ADIOI_CLF_CI_NR
};

#define ADIOI_CLF_CF_FAIL 2     /* could not prepare its access */
#define ADIOI_CLF_CF_BIG 4      /* the access alone exceeds the bound */
#define ADIOI_CLF_CF_OVER 8     /* kept + access exceed the bound */

static int ADIOI_CLF_Overlap(int64_t a, int64_t b, int64_t c, int64_t d)
{
    return a < b && c < d && a < d && c < b;
}

/* A piece of the read's buffer and where its bytes come from: src, or,
 * while src is NULL, byte doff of owner's data (NULL after the data was
 * received in place). */
struct ADIOI_CLF_Coop_hit {
    int64_t pos, len;
    const char *src;
    int owner;
    int64_t doff;
};

struct ADIOI_CLF_Coop_place {
    const struct ADIOI_CLF_Coop_run *runs;
    int64_t *start;             /* buffer position of each run */
    int64_t nruns;
    int sorted;                 /* runs by increasing offset */
    struct ADIOI_CLF_Coop_hit *hits;
    int64_t nhits, cap;
};

/* The run of the read holding file byte off, or -1. */
static int64_t ADIOI_CLF_Coop_run_of(struct ADIOI_CLF_Coop_place *pl, int64_t off)
{
    const struct ADIOI_CLF_Coop_run *r = pl->runs;

    if (pl->sorted) {
        int64_t a = 0, b = pl->nruns;

        while (a < b) {
            int64_t m = a + (b - a) / 2;

            if (r[m].off + r[m].len <= off)
                a = m + 1;
            else
                b = m;
        }
        return a < pl->nruns && r[a].off <= off ? a : -1;
    }
    for (int64_t i = 0; i < pl->nruns; i++)
        if (r[i].off <= off && off < r[i].off + r[i].len)
            return i;
    return -1;
}

/* File bytes [off, off + len) go to the buffer from src (or from
 * owner's data at doff); 0, or -1 when the read did not ask for them. */
static int ADIOI_CLF_Coop_hit_add(struct ADIOI_CLF_Coop_place *pl, int64_t off, int64_t len,
                                  const char *src, int owner, int64_t doff)
{
    int64_t i = ADIOI_CLF_Coop_run_of(pl, off);
    struct ADIOI_CLF_Coop_hit *h;

    if (i < 0 || off + len > pl->runs[i].off + pl->runs[i].len)
        return -1;
    if (pl->nhits == pl->cap) {
        pl->cap = pl->cap ? 2 * pl->cap : 64;
        pl->hits = ADIOI_Realloc(pl->hits, pl->cap * sizeof(*pl->hits));
    }
    h = &pl->hits[pl->nhits++];
    h->pos = pl->start[i] + (off - pl->runs[i].off);
    h->len = len;
    h->src = src;
    h->owner = owner;
    h->doff = doff;
    return 0;
}

static void ADIOI_CLF_Coop_place(int64_t off, int64_t len, const char *data, void *arg)
{
    (void) ADIOI_CLF_Coop_hit_add(arg, off, len, data, -1, 0);
}

static int ADIOI_CLF_Hit_cmp(const void *a, const void *b)
{
    const struct ADIOI_CLF_Coop_hit *x = a, *y = b;

    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Bytes of [0, n) the hits cover, and the end of the last one. */
static int64_t ADIOI_CLF_Coop_covered(struct ADIOI_CLF_Coop_place *pl, int64_t * end)
{
    struct ADIOI_CLF_Coop_hit *h;
    int64_t sum = 0, reach = 0;

    *end = 0;
    if (pl->nhits == 0)
        return 0;
    h = ADIOI_Malloc(pl->nhits * sizeof(*h));
    memcpy(h, pl->hits, pl->nhits * sizeof(*h));
    qsort(h, pl->nhits, sizeof(*h), ADIOI_CLF_Hit_cmp);
    for (int64_t i = 0; i < pl->nhits; i++) {
        int64_t s = h[i].pos > reach ? h[i].pos : reach, e = h[i].pos + h[i].len;

        if (e > s)
            sum += e - s;
        if (e > reach)
            reach = e;
    }
    ADIOI_Free(h);
    *end = reach;
    return sum;
}

/* The kept pieces an owner found for one read, in the read's order. */
struct ADIOI_CLF_Coop_found {
    struct ADIOI_CLF_Coop_piece *p;
    int64_t n, cap;
};

static void ADIOI_CLF_Coop_find(int64_t off, int64_t len, const char *data, void *arg)
{
    struct ADIOI_CLF_Coop_found *f = arg;

    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 256;
        f->p = ADIOI_Realloc(f->p, f->cap * sizeof(*f->p));
    }
    f->p[f->n].off = off;
    f->p[f->n].len = len;
    f->p[f->n].data = (char *) data;
    f->n++;
}

/* Tags of a read's messages on the file's communicator (ROMIO's own
 * duplicate; no two-phase I/O runs on it beside the cache): the runs
 * asked for, the (offset, length) pairs of the pieces found, and their
 * bytes, in that order. */
#define ADIOI_CLF_COOP_TAG_ASK 27101
#define ADIOI_CLF_COOP_TAG_META 27102
#define ADIOI_CLF_COOP_TAG_DATA 27103

static void ADIOI_CLF_Displs(const MPI_Count * cnt, MPI_Aint * displ, int nprocs)
{
    displ[0] = 0;
    for (int i = 1; i < nprocs; i++)
        displ[i] = displ[i - 1] + cnt[i - 1];
}

/*
 * The read through the cache: n bytes from view byte at (file byte when
 * linear) into mem.ptr, whose file runs are runs; all is everyone's
 * gathered numbers; remote: some process reads what another keeps (the
 * same on every process).  Collective; returns the bytes read or a negative
 * errno (after the exchange, which every process completes).
 */
static int64_t ADIOI_CLF_Coop_read(ADIO_File fd, int cfd, int64_t at, int64_t n, char *ptr,
                                   const struct ADIOI_CLF_Coop_run *runs, int64_t nruns,
                                   const int64_t * all, int remote)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Coop *c = fs->coop;
    struct ADIOI_CLF_Coop_place pl = { runs, NULL, nruns, 1, NULL, 0, 0 };
    struct ADIOI_CLF_Coop_found found = { NULL, 0, 0 };
    int nprocs, rank, nsreqs = 0, nrreqs = 0, *owner, *reader, *sdirect, *direct;
    MPI_Count *rcnt, *mcnt, *dcnt;
    MPI_Aint *rdis, *mdis, *ddis, *hfirst, *fdis;
    MPI_Request *sreqs, *rreqs;
    MPI_Status *sts;
    MPI_Message *msgs;
    int64_t *rreq = NULL, *meta, *rmeta, nrreq = 0, nmeta = 0, ndata = 0, covered, end,
        got = n;
    char *copy, *rdata = NULL;
    const int64_t *me;

    MPI_Comm_size(fd->comm, &nprocs);
    MPI_Comm_rank(fd->comm, &rank);
    me = all + (int64_t) rank * ADIOI_CLF_CI_NR;
    rcnt = ADIOI_Calloc(3 * nprocs, sizeof(*rcnt));
    mcnt = rcnt + nprocs;
    dcnt = mcnt + nprocs;
    rdis = ADIOI_Calloc(5 * nprocs + 1, sizeof(*rdis));
    mdis = rdis + nprocs;
    ddis = mdis + nprocs;
    hfirst = ddis + nprocs;
    fdis = hfirst + nprocs;     /* nprocs + 1 */
    owner = ADIOI_Calloc(4 * nprocs, sizeof(*owner));
    reader = owner + nprocs;
    sdirect = reader + nprocs;
    direct = sdirect + nprocs;
    sreqs = ADIOI_Malloc(4 * nprocs * sizeof(*sreqs));
    rreqs = sreqs + 3 * nprocs;
    sts = ADIOI_Malloc(3 * nprocs * sizeof(*sts));
    msgs = ADIOI_Malloc(nprocs * sizeof(*msgs));

    pl.start = ADIOI_Malloc((nruns + 1) * sizeof(*pl.start));
    for (int64_t i = 0, pos = 0; i < nruns; i++) {
        pl.start[i] = pos;
        pos += runs[i].len;
        if (i > 0 && runs[i].off < runs[i - 1].off + runs[i - 1].len)
            pl.sorted = 0;
    }

    if (!remote) {
        /* Nobody reads what another keeps: no exchange at all. */
        ADIOI_CLF_Coop_lookup(c, runs, nruns, ADIOI_CLF_Coop_place, &pl);
        goto place;
    }

    /* Point to point with the partners the gathered numbers name: this
     * process asks each owner whose kept extent meets its read for the
     * bytes of all its runs, and answers each reader whose read meets
     * its kept extent (the owner picks what it keeps).  Every request
     * is sent before anyone waits, so nobody waits for a waiter. */
    for (int j = 0; j < nprocs; j++) {
        const int64_t *o = all + (int64_t) j * ADIOI_CLF_CI_NR;

        if (j == rank)
            continue;
        if (ADIOI_CLF_Overlap(me[ADIOI_CLF_CI_LO], me[ADIOI_CLF_CI_HI],
                              o[ADIOI_CLF_CI_KLO], o[ADIOI_CLF_CI_KHI])) {
            owner[j] = 1;
            MPI_Isend_c(runs, 2 * nruns, MPI_INT64_T, j, ADIOI_CLF_COOP_TAG_ASK, fd->comm,
                        &sreqs[nsreqs++]);
        }
        if (ADIOI_CLF_Overlap(o[ADIOI_CLF_CI_LO], o[ADIOI_CLF_CI_HI],
                              me[ADIOI_CLF_CI_KLO], me[ADIOI_CLF_CI_KHI])) {
            reader[j] = 1;
            rcnt[j] = 2 * o[ADIOI_CLF_CI_NRUNS];
        }
    }
    ADIOI_CLF_Displs(rcnt, rdis, nprocs);
    for (int j = 0; j < nprocs; j++)
        nrreq += rcnt[j];
    rreq = ADIOI_Malloc((nrreq + 1) * sizeof(*rreq));
    for (int j = 0; j < nprocs; j++)
        if (reader[j])
            MPI_Irecv_c(rreq + rdis[j], rcnt[j], MPI_INT64_T, j, ADIOI_CLF_COOP_TAG_ASK,
                        fd->comm, &rreqs[nrreqs++]);
    MPI_Waitall(nrreqs, rreqs, sts);

    /* Answer each reader: the pieces' (offset, length) pairs, then their
     * bytes, straight from the kept write when they follow each other
     * there (a read of whole kept writes), else gathered into a copy. */
    for (int j = 0; j < nprocs; j++) {
        fdis[j] = found.n;
        if (reader[j])
            ADIOI_CLF_Coop_lookup(c, (const struct ADIOI_CLF_Coop_run *) (rreq + rdis[j]),
                                  rcnt[j] / 2, ADIOI_CLF_Coop_find, &found);
    }
    fdis[nprocs] = found.n;
    meta = (int64_t *) ADIOI_CLF_Coop_scratch(c, 0, (2 * found.n + 1) * sizeof(*meta));
    for (int64_t k = 0; k < found.n; k++) {
        meta[2 * k] = found.p[k].off;
        meta[2 * k + 1] = found.p[k].len;
    }
    for (int j = 0; j < nprocs; j++) {
        int contiguous = 1;

        dcnt[j] = 0;
        for (int64_t k = fdis[j]; k < fdis[j + 1]; k++) {
            if (k > fdis[j] && found.p[k].data != found.p[k - 1].data + found.p[k - 1].len)
                contiguous = 0;
            dcnt[j] += found.p[k].len;
        }
        sdirect[j] = contiguous;
        if (!contiguous)
            ndata += dcnt[j];
    }
    copy = ADIOI_CLF_Coop_scratch(c, 1, ndata + 1);
    ndata = 0;
    for (int j = 0; j < nprocs; j++) {
        const char *from = fdis[j] < fdis[j + 1] ? found.p[fdis[j]].data : copy;

        if (!reader[j])
            continue;
        if (!sdirect[j]) {
            from = copy + ndata;
            for (int64_t k = fdis[j]; k < fdis[j + 1]; k++) {
                memcpy(copy + ndata, found.p[k].data, found.p[k].len);
                ndata += found.p[k].len;
            }
        }
        MPI_Isend_c(meta + 2 * fdis[j], 2 * (fdis[j + 1] - fdis[j]), MPI_INT64_T, j,
                    ADIOI_CLF_COOP_TAG_META, fd->comm, &sreqs[nsreqs++]);
        MPI_Isend_c(from, dcnt[j], MPI_BYTE, j, ADIOI_CLF_COOP_TAG_DATA, fd->comm,
                    &sreqs[nsreqs++]);
    }

    /* The owners' pairs, each sized as it arrives, then where they go. */
    for (int j = 0; j < nprocs; j++) {
        if (!owner[j])
            continue;
        MPI_Mprobe(j, ADIOI_CLF_COOP_TAG_META, fd->comm, &msgs[j], &sts[0]);
        MPI_Get_count_c(&sts[0], MPI_INT64_T, &mcnt[j]);
    }
    ADIOI_CLF_Displs(mcnt, mdis, nprocs);
    for (int j = 0; j < nprocs; j++)
        nmeta += mcnt[j];
    rmeta = (int64_t *) ADIOI_CLF_Coop_scratch(c, 2, (nmeta + 1) * sizeof(*rmeta));
    for (int j = 0; j < nprocs; j++)
        if (owner[j])
            MPI_Mrecv_c(rmeta + mdis[j], mcnt[j], MPI_INT64_T, &msgs[j], MPI_STATUS_IGNORE);
    ndata = 0;
    for (int j = 0; j < nprocs; j++) {
        int64_t first = pl.nhits, doff = 0, *m = rmeta + mdis[j];

        if (j == rank) {
            ADIOI_CLF_Coop_lookup(c, runs, nruns, ADIOI_CLF_Coop_place, &pl);
            continue;
        }
        direct[j] = 1;
        hfirst[j] = first;
        for (int64_t k = 0; k + 1 < mcnt[j]; k += 2) {
            if (m[k + 1] < 0 || ADIOI_CLF_Coop_hit_add(&pl, m[k], m[k + 1], NULL, j, doff))
                direct[j] = 0;
            else if (pl.nhits - 1 > first &&
                     pl.hits[pl.nhits - 1].pos != pl.hits[pl.nhits - 2].pos +
                     pl.hits[pl.nhits - 2].len)
                direct[j] = 0;
            doff += m[k + 1] > 0 ? m[k + 1] : 0;
        }
        dcnt[j] = doff;
        ddis[j] = ndata;
        if (!direct[j])
            ndata += doff;
    }

  place:
    /* The rest from the iods first, then the answers over it. */
    covered = ADIOI_CLF_Coop_covered(&pl, &end);
    if (covered < n) {
        CLF_Datatype mem = ADIOI_CLF_Dtype_bytes(n);
        ssize_t r = mem ? CLF_ncread_at(cfd, at, ptr, mem) : -ENOMEM;

        CLF_Type_free(&mem);
        got = r;
        if (r >= 0) {
            memset(ptr + r, 0, n - r);
            got = r > end ? r : end;
        }
    }
    if (remote) {
        /* The owners' bytes: in place when their pieces follow each
         * other in the buffer, else through a copy.  Received even
         * after a failed read, which the owners sent anyway. */
        nrreqs = 0;
        rdata = ADIOI_CLF_Coop_scratch(c, 3, ndata + 1);
        for (int j = 0; j < nprocs; j++) {
            char *to = rdata + ddis[j];

            if (!owner[j])
                continue;
            if (direct[j] && dcnt[j] > 0)
                to = ptr + pl.hits[hfirst[j]].pos;
            MPI_Irecv_c(to, dcnt[j], MPI_BYTE, j, ADIOI_CLF_COOP_TAG_DATA, fd->comm,
                        &rreqs[nrreqs++]);
        }
        MPI_Waitall(nrreqs, rreqs, sts);
        MPI_Waitall(nsreqs, sreqs, sts);
    }
    if (got < 0)
        goto out;
    for (int64_t i = 0; i < pl.nhits; i++) {
        struct ADIOI_CLF_Coop_hit *h = &pl.hits[i];

        if (h->src)
            memcpy(ptr + h->pos, h->src, h->len);
        else if (h->owner >= 0 && !direct[h->owner])
            memcpy(ptr + h->pos, rdata + ddis[h->owner] + h->doff, h->len);
    }

  out:
    ADIOI_CLF_Coop_scratch_trim(c);
    if (rreq)
        ADIOI_Free(rreq);
    if (found.p)
        ADIOI_Free(found.p);
    ADIOI_Free(pl.start);
    if (pl.hits)
        ADIOI_Free(pl.hits);
    ADIOI_Free(rcnt);
    ADIOI_Free(rdis);
    ADIOI_Free(owner);
    ADIOI_Free(sreqs);
    ADIOI_Free(sts);
    ADIOI_Free(msgs);
    return got;
}

/* Keep this process's n bytes of a collective write; 0 or -ENOMEM. */
static int ADIOI_CLF_Coop_write(ADIO_File fd, struct ADIOI_CLF_Mem *mem, int linear,
                                int64_t at, int64_t n, const struct ADIOI_CLF_Coop_run *runs,
                                int64_t nruns)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char *data;
    int err;

    if (n == 0)
        return 0;
    if (mem->packed) {
        data = mem->packed;     /* taken over */
        mem->packed = NULL;
    } else {
        data = ADIOI_Malloc(n);
        if (!data)
            return -ENOMEM;
        memcpy(data, mem->ptr, n);
    }
    err = ADIOI_CLF_Coop_keep(fs, linear, at, n, data, runs, nruns);
    if (err)
        ADIOI_Free(data);
    return err;
}

int ADIOI_CLF_Coop_access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                          int write, int *error_code)
{
    static char myname[] = "ADIOI_CLF_COOP_ACCESS";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Coop *c = fs->coop;
    struct ADIOI_CLF_Coop_run *runs = NULL;
    struct ADIOI_CLF_Mem mem;
    int64_t mine[ADIOI_CLF_CI_NR] = { 0 }, *all, nruns = 0, n = 0, at = 0, end = 0;
    int64_t flags = 0;
    ADIO_Offset vbyte = 0;
    int nprocs, cfd = -1, linear = 0, err, handled = 0, flush = 0, bypass = 0, big = 0;
    int touch = 0, remote = 0, e2 = MPI_SUCCESS;
    MPI_Count size;

    if (!c || !c->on)
        return 0;
    *error_code = MPI_SUCCESS;
    memset(&mem, 0, sizeof(mem));
    MPI_Comm_size(fd->comm, &nprocs);

    if (ADIOI_CLF_Target(fd, &cfd, &linear, &e2) == 0) {
        vbyte = ADIOI_CLF_Start(fd, file_ptr_type, offset, linear);
        at = linear ? fd->disp + vbyte : vbyte;
        MPI_Type_size_x(datatype, &size);
        n = (int64_t) size *count;
        /* The bytes as one run: kept as they are, or read into. */
        if (ADIOI_CLF_Coop_runs(fs, linear, at, n, &runs, &nruns) ||
            ADIOI_CLF_Mem_init(fd, &mem, buf, count, datatype, write, 1))
            flags |= ADIOI_CLF_CF_FAIL;
    } else {
        flags |= ADIOI_CLF_CF_FAIL;
    }
    for (int64_t i = 0; i < nruns; i++) {
        int64_t lo = runs[i].off, hi = lo + runs[i].len;

        if (i == 0 || lo < mine[ADIOI_CLF_CI_LO])
            mine[ADIOI_CLF_CI_LO] = lo;
        if (i == 0 || hi > mine[ADIOI_CLF_CI_HI])
            mine[ADIOI_CLF_CI_HI] = hi;
    }
    mine[ADIOI_CLF_CI_KLO] = c->lo;
    mine[ADIOI_CLF_CI_KHI] = c->hi;
    mine[ADIOI_CLF_CI_NRUNS] = nruns;
    if (n > c->bound)
        flags |= ADIOI_CLF_CF_BIG;
    if (c->bytes + n > c->bound)
        flags |= ADIOI_CLF_CF_OVER;
    mine[ADIOI_CLF_CI_FLAGS] = flags;

    all = ADIOI_Malloc((int64_t) nprocs * ADIOI_CLF_CI_NR * sizeof(*all));
    MPI_Allgather(mine, ADIOI_CLF_CI_NR, MPI_INT64_T, all, ADIOI_CLF_CI_NR, MPI_INT64_T,
                  fd->comm);
    for (int i = 0; i < nprocs; i++) {
        const int64_t *a = all + (int64_t) i * ADIOI_CLF_CI_NR;

        if (a[ADIOI_CLF_CI_FLAGS] & ADIOI_CLF_CF_FAIL)
            bypass = 1;
        if (a[ADIOI_CLF_CI_FLAGS] & ADIOI_CLF_CF_BIG)
            big = 1;
        if (a[ADIOI_CLF_CI_FLAGS] & ADIOI_CLF_CF_OVER)
            flush = 1;
        for (int j = 0; j < nprocs; j++) {
            const int64_t *b = all + (int64_t) j * ADIOI_CLF_CI_NR;

            if (ADIOI_CLF_Overlap(a[ADIOI_CLF_CI_LO], a[ADIOI_CLF_CI_HI],
                                  b[ADIOI_CLF_CI_KLO], b[ADIOI_CLF_CI_KHI])) {
                touch = 1;
                if (i != j)
                    remote = 1;
            }
        }
        if (a[ADIOI_CLF_CI_KHI] > end)
            end = a[ADIOI_CLF_CI_KHI];
    }
    if (fd->atomicity)
        bypass = 1;

    if (bypass || (write && big)) {
        err = ADIOI_CLF_Coop_flush(fd);
        c->global_end = 0;
        if (err)
            *error_code = ADIOI_CLF_Error(myname, err, NULL);
        goto out;               /* clf's collective path, on every process */
    }
    if (!write) {
        c->global_end = end;
        if (!touch)
            goto out;
        n = ADIOI_CLF_Coop_read(fd, cfd, at, n, mem.ptr, runs, nruns, all, remote);
        handled = 1;
        if (n < 0) {
            *error_code = ADIOI_CLF_Error(myname, (int) n, NULL);
            goto out;
        }
        ADIOI_CLF_Mem_unpack(fd, &mem, buf, datatype, n);
        ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, n, datatype, status);
        goto out;
    }

    /* A write: the later bytes must win at the iods too. */
    if (touch && !ADIOI_CLF_Coop_fault("noconflict"))
        flush = 1;
    if (flush) {
        err = ADIOI_CLF_Coop_flush(fd);
        if (err)
            *error_code = ADIOI_CLF_Error(myname, err, NULL);
        end = 0;
    }
    handled = 1;
    err = ADIOI_CLF_Coop_write(fd, &mem, linear, at, n, runs, nruns);
    if (err) {
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
        goto out;
    }
    for (int i = 0; i < nprocs; i++) {
        int64_t hi = all[(int64_t) i * ADIOI_CLF_CI_NR + ADIOI_CLF_CI_HI];

        if (hi > end)
            end = hi;
    }
    c->global_end = end;
    if (n > 0)
        fd->dirty_write = 1;
    if (*error_code == MPI_SUCCESS)
        ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, n, datatype, status);

  out:
    ADIOI_CLF_Mem_release(&mem);
    ADIOI_Free(all);
    if (runs)
        ADIOI_Free(runs);
    return handled;
}
