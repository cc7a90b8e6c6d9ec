/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_coll.c -- collective accesses through clf's collective I/O
 * (use_romio_optimizations=false).
 *
 * MPI_File_write_all / read_all and their _at_all, split and nonblocking
 * variants end here (through ADIOI_CLF_{Read,Write}StridedColl).  Each
 * process sends its own view range straight to the iods; the iods merge
 * the pieces of every process into large accesses in subfile order.
 * There is no exchange of data between processes.
 *
 * An access of at most ADIOI_CLF_COLL_ROUND bytes per process is planned
 * (libclf/client/io_coll.c): one MPI_Allreduce sums, per subfile, the processes
 * whose shares merge there, and each process then sends one request per
 * subfile it has bytes on (CLF_ncwrite_at_allv): nothing where it has
 * none, an independent request where its share is one run.  A 1 KiB
 * write_all is thus one Allreduce and one request.  The Allreduce, which
 * every process enters after its previous access returned, also orders
 * a collective access after the one before (a read_all sees what the
 * write_all before it wrote, on every process).
 *
 * Larger accesses take the roll call (ADIOI_CLF_Coll_rounds): every
 * process calls CLF_ncwrite_at_all / CLF_ncread_at_all, reaching every
 * subfile, after one MPI_Allgather of two integers per process:
 *
 *   - how many clf calls ("rounds") this process needs: clf moves at most
 *     ADIOI_CLF_COLL_ROUND view bytes per process and call, so a larger
 *     share is cut into several; -1 when this process could not prepare
 *     its access (then every process fails the access, none waits at the
 *     iods);
 *   - rank 0's salt, which makes the tags of this file handle differ from
 *     those of any other open of the same file.
 *
 * Every process then runs the same number of rounds, the largest.  The
 * participants of round r are the processes with bytes left in round r:
 * each knows them from the gathered counts, so a process with nothing
 * left makes no call at all (clf's collective calls need at least one
 * byte of memory type).  Each round has its own tag, from a counter every
 * process of the file's communicator increments alike.
 */

#include "ad_clf.h"
#include "clf_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* View bytes per process and clf collective call: 64 MiB. */
#define ADIOI_CLF_COLL_ROUND ((int64_t) CLF_PROTO_DATA_MAX)

/*
 * Files of up to this many subfiles take the planned path: its
 * MPI_Allreduce carries one integer per subfile (8 KiB at most).
 */
#define ADIOI_CLF_PLAN_SUBFILES 1024

/*
 * The bytes per round: ADIOI_CLF_COLL_ROUND, or less with the test hook
 * CLF_TEST_ROMIO_COLL_ROUND=bytes (so that tests see several rounds
 * without moving 64 MiB per process).
 */
static int64_t ADIOI_CLF_Coll_round(void)
{
    static int64_t round;
    const char *s;
    long long v;

    if (round)
        return round;
    round = ADIOI_CLF_COLL_ROUND;
    s = getenv("CLF_TEST_ROMIO_COLL_ROUND");
    if (s && *s) {
        v = atoll(s);
        if (v > 0 && v < ADIOI_CLF_COLL_ROUND)
            round = v;
    }
    return round;
}

/* 32 bits that differ between processes, opens and runs. */
static int64_t ADIOI_CLF_Salt(ADIO_File fd)
{
    static uint64_t opens;
    uint64_t x = (uint64_t) getpid() * 0x9e3779b97f4a7c15ULL;

    x ^= (uint64_t) time(NULL) + (uint64_t) (uintptr_t) fd + (++opens << 20);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return (int64_t) ((x ^ (x >> 31)) & 0xffffffffULL);
}

static int ADIOI_CLF_Coll_error(const char *myname, int line, const char *msg)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, MPI_ERR_IO,
                                "**io", "%s", msg);
}

/* The roll call: every process to every subfile, in rounds. */
static void ADIOI_CLF_Coll_rounds(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                  int write, int *error_code)
{
    static char myname[] = "ADIOI_CLF_COLL_ACCESS";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Mem mem;
    int64_t round = ADIOI_CLF_Coll_round(), mine[2], *all, rounds = 0, max_rounds = 0;
    ADIO_Offset vbyte = 0, at = 0, done = 0;
    CLF_Datatype type = NULL;   /* a round's memory type, owned unless mem.type */
    int nprocs, cfd = -1, linear = 0, err, failed = 0, any;
    int64_t r, lo, len;
    ssize_t n;

    *error_code = MPI_SUCCESS;
    memset(&mem, 0, sizeof(mem));
    MPI_Comm_size(fd->comm, &nprocs);

    /* Prepare this process's access; failures are told to everyone. */
    mine[0] = -1;
    if (ADIOI_CLF_Target(fd, &cfd, &linear, error_code) == 0) {
        MPI_Count size;

        vbyte = ADIOI_CLF_Start(fd, file_ptr_type, offset, linear);
        at = linear ? fd->disp + vbyte : vbyte;
        MPI_Type_size_x(datatype, &size);
        rounds = (size * count + round - 1) / round;
        /* Several rounds cut the bytes in runs: they must be one run. */
        err = ADIOI_CLF_Mem_init(fd, &mem, buf, count, datatype, write, rounds > 1);
        if (err)
            *error_code = ADIOI_CLF_Error(myname, err, NULL);
        else
            mine[0] = rounds;
    }
    mine[1] = ADIOI_CLF_Salt(fd);

    all = ADIOI_Malloc(2 * nprocs * sizeof(*all));
    /* Waited for without holding the core (ad_clf_wait.c). */
    ADIOI_CLF_Allgather(mine, 2, MPI_INT64_T, all, fd->comm, mem.bytes);
    if (!fs->coll_base_set) {
        fs->coll_base = (uint64_t) all[1] << 32;
        fs->coll_base_set = 1;
    }
    for (int i = 0; i < nprocs; i++) {
        if (all[2 * i] < 0)
            failed = 1;
        else if (all[2 * i] > max_rounds)
            max_rounds = all[2 * i];
    }
    if (failed) {
        if (*error_code == MPI_SUCCESS)
            *error_code = ADIOI_CLF_Coll_error(myname, __LINE__,
                                               "clf: another process could not prepare its "
                                               "part of the collective access");
        goto release;
    }

    ADIOI_CLF_Async_drain_colls(fd);
    for (r = 0; r < max_rounds; r++) {
        uint64_t tag = fs->coll_base | (fs->coll_seq++ & 0xffffffffULL);
        int participants = 0;

        for (int i = 0; i < nprocs; i++)
            if (all[2 * i] > r)
                participants++;
        n = 0;
        if (r < rounds && !failed) {
            double t0 = ADIOI_CLF_Prof_start(fd);

            lo = r * round;
            len = mem.bytes - lo < round ? mem.bytes - lo : round;
            type = rounds == 1 ? mem.type : ADIOI_CLF_Dtype_bytes(len);
            if (!type)
                n = -ENOMEM;
            else if (write)
                n = CLF_ncwrite_at_all(cfd, at + lo, mem.ptr + lo, type, tag, participants);
            else
                n = CLF_ncread_at_all(cfd, at + lo, mem.ptr + lo, type, tag, participants);
            ADIOI_CLF_Prof_end(fd, t0);
            if (type != mem.type)
                CLF_Type_free(&type);
            if (n < 0) {
                *error_code = ADIOI_CLF_Error(myname, (int) n, NULL);
                failed = 1;
            } else {
                done += n;
            }
        }
        if (max_rounds == 1)
            break;
        /* A process that failed would leave the others waiting at the
         * iods in the next round: everyone stops. */
        any = failed;
        ADIOI_CLF_Allreduce(&any, 1, MPI_INT, MPI_MAX, fd->comm, mem.bytes);
        if (any) {
            if (!failed)
                *error_code = ADIOI_CLF_Coll_error(myname, __LINE__,
                                                   "clf: another process failed in the "
                                                   "collective access");
            failed = 1;
            break;
        }
    }
    if (write && done > 0)
        ADIOI_CLF_Wrote(fd, cfd, linear, vbyte, done);
    if (!write)
        ADIOI_CLF_Mem_unpack(fd, &mem, buf, datatype, done);
    if (*error_code == MPI_SUCCESS)
        ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, done, datatype, status);

  release:
    ADIOI_Free(all);
    ADIOI_CLF_Mem_release(&mem);
}

/*
 * The planned access (CLF_coll_plan): one MPI_Allreduce of nsub + 4
 * integers, then one request per subfile this process has bytes on.
 * The sum carries each subfile's participants (the processes whose
 * shares merge there), whether a process failed to prepare, whether one
 * needs several rounds (then all take the roll call instead), rank 0's
 * salt, and how many processes move a large share (ad_clf_wait.c): a
 * blocking read with one ends in a barrier on every process, waited for
 * without holding a core.  -1: the file has too many subfiles for this
 * path.
 */
static int ADIOI_CLF_Coll_planned(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                  int write, MPI_Request * request, int *started,
                                  int *error_code)
{
    static char myname[] = "ADIOI_CLF_COLL_ACCESS";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Mem mem;
    int nsub = CLF_coll_subfiles(fs->lin_fd), rank, cfd = -1, linear = 0, err;
    int64_t *sum;
    uint32_t *merge;
    ADIO_Offset vbyte = 0, at = 0;
    int64_t n = 0;
    MPI_Count size;

    if (nsub < 1 || nsub > ADIOI_CLF_PLAN_SUBFILES)
        return -1;
    *error_code = MPI_SUCCESS;
    memset(&mem, 0, sizeof(mem));
    MPI_Comm_rank(fd->comm, &rank);
    sum = ADIOI_Calloc(nsub + 4, sizeof(*sum));
    merge = ADIOI_Calloc(nsub, sizeof(*merge));

    /* Prepare this process's access; failures are told to everyone. */
    sum[nsub] = 1;
    if (ADIOI_CLF_Target(fd, &cfd, &linear, error_code) == 0) {
        vbyte = ADIOI_CLF_Start(fd, file_ptr_type, offset, linear);
        at = linear ? fd->disp + vbyte : vbyte;
        MPI_Type_size_x(datatype, &size);
        n = (int64_t) size *count;
        if (n > ADIOI_CLF_Coll_round()) {
            sum[nsub] = 0;
            sum[nsub + 1] = 1;
        } else if ((err = ADIOI_CLF_Mem_init(fd, &mem, buf, count, datatype, write, 0))) {
            *error_code = ADIOI_CLF_Error(myname, err, NULL);
        } else if ((n = CLF_coll_plan(cfd, at, n, write, merge)) < 0) {
            *error_code = ADIOI_CLF_Error(myname, (int) n, NULL);
        } else {
            sum[nsub] = 0;
            for (int j = 0; j < nsub; j++)
                sum[j] = merge[j];
        }
    }
    if (rank == 0)
        sum[nsub + 2] = ADIOI_CLF_Salt(fd);
    sum[nsub + 3] = ADIOI_CLF_Wait_large(n);
    ADIOI_CLF_Allreduce(sum, nsub + 4, MPI_INT64_T, MPI_SUM, fd->comm, n);
    if (!fs->coll_base_set) {
        fs->coll_base = (uint64_t) sum[nsub + 2] << 32;
        fs->coll_base_set = 1;
    }
    if (sum[nsub] > 0) {
        if (*error_code == MPI_SUCCESS)
            *error_code = ADIOI_CLF_Coll_error(myname, __LINE__,
                                               "clf: another process could not prepare its "
                                               "part of the collective access");
    } else if (sum[nsub + 1] > 0) {
        /* Someone moves more than one call can: the roll call, in rounds. */
        ADIOI_CLF_Mem_release(&mem);
        ADIOI_Free(merge);
        ADIOI_CLF_Coll_rounds(fd, buf, count, datatype, file_ptr_type, offset, status, write,
                              error_code);
        if (!write && !request && sum[nsub + 3] > 0)
            ADIOI_CLF_Barrier(fd->comm, ADIOI_CLF_Coll_round());
        ADIOI_Free(sum);
        return 0;
    } else {
        uint64_t tag = fs->coll_base | (fs->coll_seq++ & 0xffffffffULL);
        ssize_t done = 0;

        for (int j = 0; j < nsub; j++)
            merge[j] = (uint32_t) sum[j];
        if (request && n > 0) {
            /* Nonblocking: the plan is everyone's; the request flies. */
            struct ADIOI_CLF_Allv allv = { n, tag, merge };

            ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, n, datatype, NULL);
            ADIOI_CLF_Async_start(fd, cfd, at, &mem, buf, datatype, write, &allv, request);
            merge = allv.merge;
            *started = 1;
        } else if (request) {
            /* Nothing of this process's to move (every process of the
             * planned path returns without waiting for the others). */
            MPIO_Completed_request_create(&fd, 0, error_code, request);
            *started = 1;
        } else if (n > 0) {
            double t0;

            ADIOI_CLF_Async_drain_colls(fd);
            t0 = ADIOI_CLF_Prof_start(fd);

            if (write)
                done = CLF_ncwrite_at_allv(cfd, at, mem.ptr, mem.type, n, tag, merge);
            else
                done = CLF_ncread_at_allv(cfd, at, mem.ptr, mem.type, n, tag, merge);
            ADIOI_CLF_Prof_end(fd, t0);
        }
        if (done < 0) {
            *error_code = ADIOI_CLF_Error(myname, (int) done, NULL);
            done = 0;
        }
        if (write && done > 0)
            ADIOI_CLF_Wrote(fd, cfd, linear, vbyte, done);
        if (!write)
            ADIOI_CLF_Mem_unpack(fd, &mem, buf, datatype, done);
        if (*error_code == MPI_SUCCESS && !*started)
            ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, done, datatype, status);
        /* The same on every process: the sum is everyone's. */
        if (!write && !request && sum[nsub + 3] > 0)
            ADIOI_CLF_Barrier(fd->comm, n);
    }
    ADIOI_CLF_Mem_release(&mem);
    ADIOI_Free(sum);
    if (merge)
        ADIOI_Free(merge);
    return 0;
}

void ADIOI_CLF_Coll_access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int write, int *error_code)
{
    int started = 0;

    if (ADIOI_CLF_Coll_planned(fd, buf, count, datatype, file_ptr_type, offset, status, write,
                               NULL, &started, error_code) < 0)
        ADIOI_CLF_Coll_rounds(fd, buf, count, datatype, file_ptr_type, offset, status, write,
                              error_code);
}

/*
 * The planning (one MPI_Allreduce, between the processes, not across the
 * link) happens here, in MPI's thread; each process's request then goes
 * to the I/O thread and the call returns.  The tag comes from the
 * counter every process increments alike at issue, so requests issued
 * in the same order on every process, as MPI asks of collectives, meet
 * at the iods whatever each one's I/O thread is doing.
 */
void ADIOI_CLF_Coll_iaccess(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                            int write, int *error_code)
{
    ADIO_Status status;
    int started = 0;

    if (ADIOI_CLF_Coll_planned(fd, buf, count, datatype, file_ptr_type, offset, &status, write,
                               request, &started, error_code) < 0)
        ADIOI_CLF_Coll_rounds(fd, buf, count, datatype, file_ptr_type, offset, &status, write,
                              error_code);
    if (started)
        return;
    /* Done at once on every process (several rounds, or a process that
     * could not prepare): as the blocking write, bytes visible on return. */
    if (write) {
        MPI_Count size;

        MPI_Type_size_x(datatype, &size);
        ADIOI_CLF_Barrier(fd->comm, (ADIO_Offset) size * count);
    }
    ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
}
