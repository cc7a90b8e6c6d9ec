/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * romio_realms.c -- ROMIO's two-phase collective I/O with the driver's
 * layout-aligned, persistent file realms (use_romio_optimizations=true,
 * ad_clf_realms.c), against the same program on a local file.
 *
 *   romio_realms CLFPREFIX UFSDIR
 *
 * For each layout, every process is an aggregator (cb_config_list *:*):
 * the file gets collective writes of several shapes -- interleaved
 * blocks of odd sizes, per-process runs of odd lengths, a later call that
 * rewrites part of an earlier one, a call past the end -- through
 * MPI_File_write_at_all, write_all and set views, on clf:CLFPREFIX-N-K with
 * realms and on ufs:UFSDIR/NAME with ROMIO's own domains.  Collective
 * reads of other shapes then come back from both, and rank 0 reads both
 * files whole: every byte must agree.  Call 6's reference on ufs is
 * written piece by piece where the typemap puts it (ROMIO's own view
 * code misplaced bytes of that filetype on ufs).  MPI_File_get_info's
 * clf_realm_period says the realms were used (the layout's period, or A
 * periods when it has fewer subfiles than aggregators), or, for layouts
 * of pieces under 128 bytes, that ROMIO's domains were (0; byte-exact
 * too: ROMIO's two-phase write reads its buffer before filling holes,
 * and the driver's read now gives zeros past the end, where the buffer's
 * old bytes landed in call 6's gaps; with CLF_TEST_REALM_SMALL=1 the
 * realms are used for them as well).  Exit 0 on
 * success, 1 with a message naming the layout and the first wrong byte.
 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "rank %d: ", rank); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static void mpi_ok(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;

    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, msg, &len);
    CHECK(0, "%s: %s", what, msg);
}

struct layout {
    const char *text;
    long period;                /* expected clf_realm_period with 2 / 3 processes */
    long period3;
    int small;                  /* pieces under 128 bytes: ROMIO's domains (period
                                 * 0), unless CLF_TEST_REALM_SMALL lowers that */
};

static const struct layout layouts[] = {
    {"rr:stripe=4k,count=2", 8192, 12288 * 2, 0},        /* 3 aggs > 2 subfiles: 3 periods */
    {"rr:stripe=1000,count=3", 3000, 3000, 0},
    {"rr:stripe=3000,count=1", 6000, 9000, 0},
    {"vec(0,2,7,1);vec(3,6,7,1)", 7, 21, 1},
    {"grid:rows=48,cols=48,p=2x2,k=8x8", 2304, 2304, 1},
};

static unsigned char byte_of(int call, int r, long i)
{
    return (unsigned char) (call * 131 + r * 17 + i * 7 + (i >> 8) + 1);
}

/*
 * Call 6's bytes as MPI's typemap places them: each 13-byte piece
 * written at its own offset.  ROMIO's view code is not the reference
 * for this filetype (a first piece not at the tile's start, a gap at
 * its end): on ufs it has put data bytes into the gap.
 */
static void write_typemap_call6(MPI_File fh, const unsigned char *buf, long n, MPI_Aint ext)
{
    MPI_Status st;
    long done = 0;

    mpi_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    for (long t = 0; done < n; t++)
        for (int j = 0; j < 4 && done < n; j++) {
            long len = n - done < 13 ? n - done : 13;

            mpi_ok(MPI_File_write_at(fh, 40009 + t * ext + (MPI_Offset) rank * 13 +
                                     (MPI_Offset) j * 13 * nprocs, buf + done, (int) len,
                                     MPI_BYTE, &st), "write_at, typemap");
            done += len;
        }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Call c's collective writes of rank r, on fh (clf or ufs alike; on
 * the reference, typemap set, call 6 by explicit offsets). */
static void write_calls(MPI_File fh, int typemap)
{
    MPI_Datatype vec, filetype;
    MPI_Status st;
    unsigned char *buf;
    long i, n;
    int blk, call;

    buf = malloc(1 << 20);
    /* 1-3: interleaved blocks of odd sizes, from odd starts */
    for (call = 1; call <= 3; call++) {
        blk = 7 + 26 * call;    /* 33, 59, 85 */
        n = (long) blk * (50 + 13 * call);
        for (i = 0; i < n; i++)
            buf[i] = byte_of(call, rank, i);
        MPI_Type_vector(n / blk, blk, blk * nprocs, MPI_BYTE, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint) blk * nprocs * (n / blk), &filetype);
        MPI_Type_commit(&filetype);
        mpi_ok(MPI_File_set_view(fh, 101 * call + (MPI_Offset) rank * blk, MPI_BYTE, filetype,
                                 "native", MPI_INFO_NULL), "set_view");
        mpi_ok(MPI_File_write_all(fh, buf, (int) n, MPI_BYTE, &st), "write_all");
        MPI_Type_free(&vec);
        MPI_Type_free(&filetype);
    }
    /* 6: a filetype whose first piece is not at its start, over many
     * tiles and a part of one: 4 blocks of 13 bytes at rank * 13 in an
     * extent of 13 * nprocs * 4 + 7 */
    {
        MPI_Aint at = (MPI_Aint) rank * 13;

        MPI_Type_vector(4, 13, 13 * nprocs, MPI_BYTE, &vec);
        MPI_Type_create_hindexed_block(1, 1, &at, vec, &filetype);
        MPI_Type_free(&vec);
        MPI_Type_create_resized(filetype, 0, (MPI_Aint) 13 * nprocs * 4 + 7, &vec);
        MPI_Type_free(&filetype);
        MPI_Type_commit(&vec);
        n = 13 * 4 * 37 + 13 * 2 + 5;
        for (i = 0; i < n; i++)
            buf[i] = byte_of(6, rank, i);
        if (typemap) {
            write_typemap_call6(fh, buf, n, (MPI_Aint) 13 * nprocs * 4 + 7);
        } else {
            mpi_ok(MPI_File_set_view(fh, 40009, MPI_BYTE, vec, "native", MPI_INFO_NULL),
                   "set_view");
            mpi_ok(MPI_File_write_all(fh, buf, (int) n, MPI_BYTE, &st), "write_all, tiles");
        }
        MPI_Type_free(&vec);
    }
    mpi_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    /* 4: one run per process, odd lengths, rewriting part of calls 1-3 */
    n = 4001 + 777 * rank;
    for (i = 0; i < n; i++)
        buf[i] = byte_of(4, rank, i);
    mpi_ok(MPI_File_write_at_all(fh, 5003 + (MPI_Offset) rank * 4001 + rank * (rank - 1) / 2 *
                                 777, buf, (int) n, MPI_BYTE, &st), "write_at_all");
    /* 5: past the end, rank 0 writes nothing */
    n = rank ? 65537 : 0;
    for (i = 0; i < n; i++)
        buf[i] = byte_of(5, rank, i);
    mpi_ok(MPI_File_write_at_all(fh, 30011 + (MPI_Offset) rank * 70000, buf, (int) n,
                                 MPI_BYTE, &st), "write_at_all past the end");
    free(buf);
}

/* Collective reads of other shapes into out (n bytes per process). */
static long read_calls(MPI_File fh, unsigned char *out)
{
    MPI_Datatype vec, filetype;
    MPI_Status st;
    long n, total = 0;
    int blk;

    /* interleaved blocks of 41 from byte 13 */
    blk = 41;
    n = (long) blk * 300;
    MPI_Type_vector(n / blk, blk, blk * nprocs, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) blk * nprocs * (n / blk), &filetype);
    MPI_Type_commit(&filetype);
    mpi_ok(MPI_File_set_view(fh, 13 + (MPI_Offset) rank * blk, MPI_BYTE, filetype, "native",
                             MPI_INFO_NULL), "set_view");
    mpi_ok(MPI_File_read_all(fh, out, (int) n, MPI_BYTE, &st), "read_all");
    total += n;
    MPI_Type_free(&vec);
    MPI_Type_free(&filetype);
    mpi_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    /* one run per process, across the others' */
    n = 9999;
    mpi_ok(MPI_File_read_at_all(fh, 777 + (MPI_Offset) rank * 5555, out + total, (int) n,
                                MPI_BYTE, &st), "read_at_all");
    total += n;
    return total;
}

static MPI_File open_file(const char *name, const char *layout, int realms)
{
    MPI_Info info;
    MPI_File fh;

    MPI_Info_create(&info);
    MPI_Info_set(info, "use_romio_optimizations", "true");
    MPI_Info_set(info, "cb_config_list", "*:*");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    /* small collective buffers: several rounds per call */
    MPI_Info_set(info, "cb_buffer_size", "4096");
    if (layout)
        MPI_Info_set(info, "clf_layout", layout);
    if (!realms)
        MPI_Info_set(info, "clf_realms", "romio");
    mpi_ok(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
           name);
    MPI_Info_free(&info);
    return fh;
}

static long info_long(MPI_File fh, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    int flag;

    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag ? atol(value) : -1;
}

int main(int argc, char **argv)
{
    char clfname[512], ufsname[512];
    unsigned char *a, *b;
    MPI_Offset size_c, size_u;
    MPI_File fc, fu;
    MPI_Status st;
    long n, i, want;
    unsigned k;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 3, "usage: romio_realms CLFPREFIX UFSDIR");
    CHECK(nprocs == 2 || nprocs == 3, "run with 2 or 3 processes");
    a = malloc(1 << 20);
    b = malloc(1 << 20);

    for (k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++) {
        snprintf(clfname, sizeof(clfname), "clf:%s-%d-%u", argv[1], nprocs, k);
        snprintf(ufsname, sizeof(ufsname), "ufs:%s/realms-%d-%u", argv[2], nprocs, k);
        fc = open_file(clfname, layouts[k].text, 1);
        fu = open_file(ufsname, NULL, 1);
        write_calls(fc, 0);
        write_calls(fu, 1);
        want = nprocs == 2 ? layouts[k].period : layouts[k].period3;
        if (layouts[k].small && !getenv("CLF_TEST_REALM_SMALL"))
            want = 0;
        CHECK(info_long(fc, "clf_realm_period") == want,
              "%s: clf_realm_period %ld, want %ld: the realms were not used", layouts[k].text,
              info_long(fc, "clf_realm_period"), want);

        n = read_calls(fc, a);
        CHECK(read_calls(fu, b) == n, "read sizes");
        for (i = 0; i < n; i++)
            CHECK(a[i] == b[i], "%s: collective read byte %ld: clf %u, ufs %u",
                  layouts[k].text, i, a[i], b[i]);

        mpi_ok(MPI_File_get_size(fc, &size_c), "get_size");
        mpi_ok(MPI_File_get_size(fu, &size_u), "get_size");
        CHECK(size_c == size_u, "%s: size %lld on clf, %lld on ufs", layouts[k].text,
              (long long) size_c, (long long) size_u);
        CHECK(size_u <= (1 << 20), "file larger than the buffers");
        if (rank == 0) {
            mpi_ok(MPI_File_read_at(fc, 0, a, (int) size_c, MPI_BYTE, &st), "read_at");
            mpi_ok(MPI_File_read_at(fu, 0, b, (int) size_u, MPI_BYTE, &st), "read_at");
            for (i = 0; i < size_c; i++)
                CHECK(a[i] == b[i], "%s: byte %ld: clf %u, ufs %u", layouts[k].text, i,
                      a[i], b[i]);
        }
        mpi_ok(MPI_File_close(&fc), "close");
        mpi_ok(MPI_File_close(&fu), "close");
        if (rank == 0)
            printf("%s: %lld bytes alike, %ld bytes read collectively, realm period %ld\n",
                   layouts[k].text, (long long) size_c, n, want);
    }

    /* ROMIO's own domains on request: no realms. */
    snprintf(clfname, sizeof(clfname), "clf:%s-%d-romio", argv[1], nprocs);
    fc = open_file(clfname, "rr:stripe=4k,count=2", 0);
    write_calls(fc, 0);
    CHECK(info_long(fc, "clf_realm_period") == 0, "clf_realms=romio: realm period %ld",
          info_long(fc, "clf_realm_period"));
    mpi_ok(MPI_File_close(&fc), "close");

    free(a);
    free(b);
    if (rank == 0)
        printf("realms: %d processes, all layouts alike with ufs\n", nprocs);
    MPI_Finalize();
    return 0;
}
