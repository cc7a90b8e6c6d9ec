/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_coop.h -- the cooperative cache of collective writes (hint
 * clf_coop_cache): the store (ad_clf_coop.c) and the collective accesses
 * through it (ad_clf_coop_coll.c).
 *
 * With the hint, a collective write (with either value of
 * use_romio_optimizations: the cache is in front of clf's collective
 * I/O and of ROMIO's two-phase I/O in file realms alike) is kept in the
 * memory of the process that wrote it instead of going to
 * the iods; a later collective read of the same open file asks the
 * processes that hold the bytes it reads for them (MPI_Alltoallv) and
 * the iods for the rest.  MPI-IO's consistency rules allow it: within
 * one open file, what a collective write stored is seen by the later
 * collective accesses of the same communicator (each of which exchanges
 * the holders' extents first); other opens and other programs see it
 * after MPI_File_sync or MPI_File_close, which write the kept bytes to
 * the iods.  So do a write that would overlap bytes kept anywhere (the
 * later bytes must win at the iods as they do in the cache), a process
 * that would keep more than the hint clf_coop_cache_size, atomic mode
 * and MPI_File_set_size; an independent access through this file handle
 * writes its own process's kept bytes first and bypasses the cache.
 *
 * Invariant: the kept pieces of all processes are disjoint (a write
 * overlapping any process's kept extent flushes everything first), so a
 * byte is either kept by exactly one process or current at the iods.
 */

#ifndef AD_CLF_COOP_H_INCLUDED
#define AD_CLF_COOP_H_INCLUDED

#include "ad_clf.h"

/* Default bytes a process keeps (hint clf_coop_cache_size). */
#define ADIOI_CLF_COOP_DEFAULT_SIZE ((int64_t) 256 << 20)

#define ADIOI_CLF_COOP_SCRATCH 4

/* File bytes [off, off + len), in the caller's context. */
struct ADIOI_CLF_Coop_run {
    int64_t off, len;
};

/* A kept piece: file bytes [off, off + len) at data (inside a record's). */
struct ADIOI_CLF_Coop_piece {
    int64_t off, len;
    char *data;                 /* borrowed from its record */
};

/* One collective write kept by this process, replayed as it was made. */
struct ADIOI_CLF_Coop_rec {
    int linear;                 /* at is a file offset on lin_fd */
    CLF_Datatype vtype;         /* the view, a reference; NULL when linear */
    int64_t vdisp;
    int64_t at;                 /* view byte (file byte when linear) of data[0] */
    int64_t n;                  /* bytes */
    char *data;                 /* n bytes in view order; owned */
};

struct ADIOI_CLF_Coop {
    int on;                     /* collective accesses go through the cache */
    int err;                    /* a failed flush of an independent access,
                                 * reported by the next sync or close */
    int in_coll;                /* inside ROMIO's two-phase access that the
                                 * cache passed on: its aggregators' own
                                 * accesses touch no kept byte */
    int64_t bound;              /* bytes this process may keep */
    int64_t bytes;              /* bytes kept */
    struct ADIOI_CLF_Coop_rec *recs;    /* in write order; owned */
    int nrecs, rcap;
    struct ADIOI_CLF_Coop_piece *pieces;        /* sorted by off, disjoint; owned */
    int64_t npieces, pcap;
    int64_t lo, hi;             /* hull of the pieces; lo == hi: none */
    int64_t global_end;         /* largest end kept by any process, as of
                                 * the last collective access */
    /* Views to file runs: a mapping of map_type at map_disp onto bytes. */
    CLF_Datatype map_type;      /* a reference */
    int64_t map_disp;
    CLF_Mapping *map;           /* owned */
    /* A descriptor for replaying records whose view is not view_fd's. */
    int flush_fd;               /* -1 until needed */
    CLF_Datatype flush_view;    /* flush_fd's view, a reference */
    int64_t flush_disp;
    /* Buffers of a read's exchange (pairs and bytes, sent and
     * received), kept from one read to the next (fresh pages cost more
     * than the copy) while within the bound. */
    char *scratch[ADIOI_CLF_COOP_SCRATCH];      /* owned */
    int64_t scratch_cap[ADIOI_CLF_COOP_SCRATCH];
};

/* ad_clf_coop.c: the store */
void ADIOI_CLF_Coop_open(ADIO_File fd);
int ADIOI_CLF_Coop_reset(ADIO_File fd);
void ADIOI_CLF_Coop_free(ADIO_File fd);
int ADIOI_CLF_Coop_flush(ADIO_File fd);
void ADIOI_CLF_Coop_independent(ADIO_File fd);
/* A buffer of at least n bytes in c->scratch[i], its contents kept. */
char *ADIOI_CLF_Coop_scratch(struct ADIOI_CLF_Coop *c, int i, int64_t n);
/* After a read: scratch beyond the bound goes back. */
void ADIOI_CLF_Coop_scratch_trim(struct ADIOI_CLF_Coop *c);
int ADIOI_CLF_Coop_fault(const char *name);
int ADIOI_CLF_Coop_runs(ADIOI_CLF_fs * fs, int linear, int64_t at, int64_t n,
                        struct ADIOI_CLF_Coop_run **runs, int64_t * nruns);
int ADIOI_CLF_Coop_keep(ADIOI_CLF_fs * fs, int linear, int64_t at, int64_t n, char *data,
                        const struct ADIOI_CLF_Coop_run *runs, int64_t nruns);
typedef void (*ADIOI_CLF_Coop_fn) (int64_t off, int64_t len, const char *data, void *arg);
void ADIOI_CLF_Coop_lookup(struct ADIOI_CLF_Coop *c, const struct ADIOI_CLF_Coop_run *runs,
                           int64_t nruns, ADIOI_CLF_Coop_fn fn, void *arg);

/* ad_clf_coop_coll.c: 1 when the collective access was made through the
 * cache, 0 when the caller makes it (nothing kept overlaps it). */
int ADIOI_CLF_Coop_access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                          int write, int *error_code);

#endif /* AD_CLF_COOP_H_INCLUDED */
