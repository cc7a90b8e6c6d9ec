/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_coop.c -- the cooperative cache's store: the collective writes
 * this process keeps, their pieces by file offset for serving reads, and
 * the flush that replays them to the iods (ad_clf_coop.h says when).
 *
 * A write is kept as it was made (view, first view byte, bytes in view
 * order), so the flush is one CLF_ncwrite_at per kept write, the same
 * requests the write would have made, not one per piece.  The pieces
 * (the write's file runs, from a mapping of the view onto the file's
 * bytes) are only an index into those bytes.
 */

#include "ad_clf_coop.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Fault hook for the tests (CLF_TEST_COOP_FAULT=name): "noflush" drops
 * the kept bytes instead of writing them, "noserve" answers no request
 * for kept bytes, "noconflict" keeps a write that overlaps kept bytes
 * without flushing first, "nooff" leaves the cache on when
 * MPI_File_set_info turns it off.  Each must make tests/integration/
 * romio/romio_coop.c fail.
 */
int ADIOI_CLF_Coop_fault(const char *name)
{
    const char *s = getenv("CLF_TEST_COOP_FAULT");

    return s && !strcmp(s, name);
}

/* The store of a file that starts caching. */
static void ADIOI_CLF_Coop_make(ADIOI_CLF_fs * fs)
{
    struct ADIOI_CLF_Coop *c = ADIOI_Calloc(1, sizeof(*c));

    c->on = 1;
    c->bound = fs->coop_size > 0 ? fs->coop_size : ADIOI_CLF_COOP_DEFAULT_SIZE;
    c->flush_fd = -1;
    fs->coop = c;
}

/* Whether this process wants the cache; then every process caches, or
 * none (they must agree on every collective decision). */
static int ADIOI_CLF_Coop_agree(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int mine, all;

    mine = fs->coop_hint == 1 && !fs->cache_dir;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, fd->comm);
    ADIOI_Info_set(fd->info, "clf_coop_cache", all ? "true" : "false");
    return all;
}

/* Collective, at the end of OpenColl.  Either collective path takes
 * it: clf's (use_romio_optimizations=false) and ROMIO's two-phase I/O
 * in file realms (true): the cache sits in front of both. */
void ADIOI_CLF_Coop_open(ADIO_File fd)
{
    if (ADIOI_CLF_Coop_agree(fd))
        ADIOI_CLF_Coop_make(fd->fs_ptr);
}

static void ADIOI_CLF_Coop_drop(struct ADIOI_CLF_Coop *c)
{
    for (int i = 0; i < c->nrecs; i++) {
        CLF_Type_free(&c->recs[i].vtype);
        ADIOI_Free(c->recs[i].data);
    }
    c->nrecs = 0;
    c->npieces = 0;
    c->bytes = 0;
    c->lo = c->hi = 0;
}

/*
 * MPI_File_set_info or set_view with an info, after the open
 * (collective): clf_coop_cache turns the cache on or off, agreed by all
 * (off unless every process asks for it, as at the open), and
 * clf_coop_cache_size changes this process's bound.  Turning it off
 * writes what each process kept, and returns after every process did:
 * a collective access that follows reads from the iods.  0 or a
 * negative errno of the flush (the cache is off all the same).
 */
int ADIOI_CLF_Coop_reset(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int on = ADIOI_CLF_Coop_agree(fd), err = 0;

    if (on && !fs->coop) {
        ADIOI_CLF_Coop_make(fs);
    } else if (!on && fs->coop && !ADIOI_CLF_Coop_fault("nooff")) {
        err = ADIOI_CLF_Coop_flush(fd);
        ADIOI_CLF_Coop_free(fd);
        MPI_Barrier(fd->comm);
    }
    if (fs->coop)
        fs->coop->bound = fs->coop_size > 0 ? fs->coop_size : ADIOI_CLF_COOP_DEFAULT_SIZE;
    return err;
}

void ADIOI_CLF_Coop_free(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Coop *c = fs ? fs->coop : NULL;

    if (!c)
        return;
    ADIOI_CLF_Coop_drop(c);
    if (c->recs)
        ADIOI_Free(c->recs);
    if (c->pieces)
        ADIOI_Free(c->pieces);
    CLF_Mapping_free(c->map);
    CLF_Type_free(&c->map_type);
    CLF_Type_free(&c->flush_view);
    for (int i = 0; i < ADIOI_CLF_COOP_SCRATCH; i++)
        if (c->scratch[i])
            ADIOI_Free(c->scratch[i]);
    if (c->flush_fd >= 0)
        CLF_close(c->flush_fd);
    ADIOI_Free(c);
    fs->coop = NULL;
}

char *ADIOI_CLF_Coop_scratch(struct ADIOI_CLF_Coop *c, int i, int64_t n)
{
    if (n > c->scratch_cap[i]) {
        int64_t cap = c->scratch_cap[i] ? 2 * c->scratch_cap[i] : 65536;

        while (cap < n)
            cap *= 2;
        c->scratch[i] = ADIOI_Realloc(c->scratch[i], cap);
        c->scratch_cap[i] = cap;
    }
    return c->scratch[i];
}

void ADIOI_CLF_Coop_scratch_trim(struct ADIOI_CLF_Coop *c)
{
    for (int i = 0; i < ADIOI_CLF_COOP_SCRATCH; i++) {
        if (c->scratch[i] && c->scratch_cap[i] > c->bound) {
            ADIOI_Free(c->scratch[i]);
            c->scratch[i] = NULL;
            c->scratch_cap[i] = 0;
        }
    }
}

/* A descriptor whose view is rec's: view_fd when it carries it. */
static int ADIOI_CLF_Coop_target(ADIOI_CLF_fs * fs, struct ADIOI_CLF_Coop_rec *r, int *cfd)
{
    struct ADIOI_CLF_Coop *c = fs->coop;
    struct clf_view view;
    int err;

    if (r->linear) {
        *cfd = fs->lin_fd;
        return 0;
    }
    if (fs->view_set && fs->view_type == r->vtype && fs->view_disp == r->vdisp) {
        *cfd = fs->view_fd;
        return 0;
    }
    if (c->flush_fd < 0) {
        c->flush_fd = CLF_open(fs->clf_path, fs->clf_flags);
        if (c->flush_fd < 0) {
            err = c->flush_fd;
            c->flush_fd = -1;
            return err;
        }
        err = ADIOI_CLF_Client_cache(fs, c->flush_fd);
        if (err)
            return err;
    }
    if (c->flush_view != r->vtype || c->flush_disp != r->vdisp) {
        view.disp = r->vdisp;
        view.type = r->vtype;
        err = CLF_fcntl(c->flush_fd, CLF_FCNTL_SETVIEW, &view);
        if (err)
            return err;
        CLF_Type_free(&c->flush_view);
        c->flush_view = CLF_Type_dup(r->vtype);
        c->flush_disp = r->vdisp;
    }
    *cfd = c->flush_fd;
    return 0;
}

/*
 * This process's kept writes to the iods, in the order they were made,
 * then forgotten.  Local: every caller that needs the others' flushed
 * too is collective, and each process flushes its own.  0 or a negative
 * errno (the first; the rest are still tried, and everything dropped).
 */
int ADIOI_CLF_Coop_flush(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Coop *c = fs ? fs->coop : NULL;
    int err, e, cfd;

    if (!c)
        return 0;
    err = c->err;
    c->err = 0;
    if (c->nrecs == 0)
        return err;
    for (int i = 0; i < c->nrecs && !ADIOI_CLF_Coop_fault("noflush"); i++) {
        struct ADIOI_CLF_Coop_rec *r = &c->recs[i];
        CLF_Datatype mem;
        ssize_t n;

        e = ADIOI_CLF_Coop_target(fs, r, &cfd);
        if (e) {
            err = err ? err : e;
            continue;
        }
        mem = ADIOI_CLF_Dtype_bytes(r->n);
        n = mem ? CLF_ncwrite_at(cfd, r->at, r->data, mem) : -ENOMEM;
        CLF_Type_free(&mem);
        if (n >= 0 && n != r->n)
            n = -EIO;
        if (n < 0 && !err)
            err = (int) n;
    }
    ADIOI_CLF_Coop_drop(c);
    return err;
}

/*
 * An independent access through this handle: what this process kept
 * goes to the iods first, and the access bypasses the cache.  That is
 * all MPI asks: an access of this process sees its own earlier writes;
 * one that conflicts with another process's kept bytes is only defined
 * after an MPI_File_sync, which writes them (the other process's older
 * bytes cannot overwrite this one's later: a correct program synced in
 * between, so they were written already).  So the caching goes on.
 */
void ADIOI_CLF_Coop_independent(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (!fs || !fs->coop || fs->coop->nrecs == 0 || fs->coop->in_coll)
        return;
    /* An error here is the access's: it may find old bytes, as a
     * failed write would leave them; the sync or close reports it. */
    fs->coop->err = ADIOI_CLF_Coop_flush(fd);
}

struct ADIOI_CLF_Coop_walk {
    struct ADIOI_CLF_Coop_run *runs;
    int64_t n, cap;
    int err;
};

static int ADIOI_CLF_Coop_run_add(int64_t view_off, int64_t file_off, int64_t len, void *arg)
{
    struct ADIOI_CLF_Coop_walk *w = arg;

    (void) view_off;
    if (w->n > 0 && w->runs[w->n - 1].off + w->runs[w->n - 1].len == file_off) {
        w->runs[w->n - 1].len += len;
        return 0;
    }
    if (w->n == w->cap) {
        int64_t cap = w->cap ? 2 * w->cap : 64;
        void *p = ADIOI_Realloc(w->runs, cap * sizeof(*w->runs));

        if (!p)
            return -ENOMEM;
        w->runs = p;
        w->cap = cap;
    }
    w->runs[w->n].off = file_off;
    w->runs[w->n].len = len;
    w->n++;
    return 0;
}

/*
 * The file runs of view bytes [at, at + n) of the current view (linear:
 * file bytes [at, at + n)), in view order; *runs is the caller's to
 * ADIOI_Free.  0 or a negative errno.
 */
int ADIOI_CLF_Coop_runs(ADIOI_CLF_fs * fs, int linear, int64_t at, int64_t n,
                        struct ADIOI_CLF_Coop_run **runs, int64_t * nruns)
{
    struct ADIOI_CLF_Coop *c = fs->coop;
    struct ADIOI_CLF_Coop_walk w = { NULL, 0, 0, 0 };
    int err;

    if (n <= 0) {
        *runs = NULL;
        *nruns = 0;
        return 0;
    }
    if (linear) {
        err = ADIOI_CLF_Coop_run_add(0, at, n, &w);
        goto out;
    }
    if (!c->map || c->map_type != fs->view_type || c->map_disp != fs->view_disp) {
        CLF_Mapping_free(c->map);
        c->map = NULL;
        CLF_Type_free(&c->map_type);
        err = CLF_Mapping_create(fs->view_type, fs->view_disp, CLF_BYTE, 0, &c->map);
        if (err)
            return err;
        c->map_type = CLF_Type_dup(fs->view_type);
        c->map_disp = fs->view_disp;
    }
    err = CLF_Mapping_foreach(c->map, at, at + n, ADIOI_CLF_Coop_run_add, &w);
  out:
    if (err) {
        if (w.runs)
            ADIOI_Free(w.runs);
        return err;
    }
    *runs = w.runs;
    *nruns = w.n;
    return 0;
}

static int ADIOI_CLF_Coop_piece_cmp(const void *a, const void *b)
{
    const struct ADIOI_CLF_Coop_piece *x = a, *y = b;

    return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Keep a collective write of n bytes (data, in view order, taken over)
 * made at view byte at (file byte when linear) of the current view,
 * whose file runs are runs.  0 or -ENOMEM (data is then the caller's).
 */
int ADIOI_CLF_Coop_keep(ADIOI_CLF_fs * fs, int linear, int64_t at, int64_t n, char *data,
                        const struct ADIOI_CLF_Coop_run *runs, int64_t nruns)
{
    struct ADIOI_CLF_Coop *c = fs->coop;
    struct ADIOI_CLF_Coop_rec *r;
    int64_t pos = 0, sorted = 1;

    if (c->nrecs == c->rcap) {
        int cap = c->rcap ? 2 * c->rcap : 16;
        void *p = ADIOI_Realloc(c->recs, cap * sizeof(*c->recs));

        if (!p)
            return -ENOMEM;
        c->recs = p;
        c->rcap = cap;
    }
    if (c->npieces + nruns > c->pcap) {
        int64_t cap = c->pcap ? 2 * c->pcap : 256;
        void *p;

        while (cap < c->npieces + nruns)
            cap *= 2;
        p = ADIOI_Realloc(c->pieces, cap * sizeof(*c->pieces));
        if (!p)
            return -ENOMEM;
        c->pieces = p;
        c->pcap = cap;
    }
    r = &c->recs[c->nrecs++];
    r->linear = linear;
    r->vtype = linear ? NULL : CLF_Type_dup(fs->view_type);
    r->vdisp = fs->view_disp;
    r->at = at;
    r->n = n;
    r->data = data;
    for (int64_t i = 0; i < nruns; i++) {
        struct ADIOI_CLF_Coop_piece *p = &c->pieces[c->npieces++];

        p->off = runs[i].off;
        p->len = runs[i].len;
        p->data = data + pos;
        pos += runs[i].len;
        if (c->npieces > 1 && p[-1].off > p->off)
            sorted = 0;
        if (c->lo == c->hi) {
            c->lo = p->off;
            c->hi = p->off + p->len;
        } else {
            c->lo = p->off < c->lo ? p->off : c->lo;
            c->hi = p->off + p->len > c->hi ? p->off + p->len : c->hi;
        }
    }
    if (!sorted)
        qsort(c->pieces, c->npieces, sizeof(*c->pieces), ADIOI_CLF_Coop_piece_cmp);
    c->bytes += n;
    return 0;
}

/*
 * Call fn for every kept byte range that lies in one of runs (file
 * ranges, any order): the piece's part inside that run, in run order.
 */
void ADIOI_CLF_Coop_lookup(struct ADIOI_CLF_Coop *c, const struct ADIOI_CLF_Coop_run *runs,
                           int64_t nruns, ADIOI_CLF_Coop_fn fn, void *arg)
{
    if (ADIOI_CLF_Coop_fault("noserve"))
        return;
    for (int64_t i = 0; i < nruns; i++) {
        int64_t lo = runs[i].off, hi = lo + runs[i].len, a = 0, b = c->npieces;

        if (hi <= c->lo || lo >= c->hi)
            continue;
        /* The first piece that ends after lo. */
        while (a < b) {
            int64_t m = a + (b - a) / 2;

            if (c->pieces[m].off + c->pieces[m].len <= lo)
                a = m + 1;
            else
                b = m;
        }
        for (; a < c->npieces && c->pieces[a].off < hi; a++) {
            struct ADIOI_CLF_Coop_piece *p = &c->pieces[a];
            int64_t s = p->off > lo ? p->off : lo;
            int64_t e = p->off + p->len < hi ? p->off + p->len : hi;

            if (e > s)
                fn(s, e - s, p->data + (s - p->off), arg);
        }
    }
}
