/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_lock.c -- byte-range locks and the shared file pointer.
 *
 * Locks (ROMIO's SetLock for atomic mode and data sieving, and the
 * driver's own atomic accesses) are clf's byte-range locks, kept by
 * metad (CLF_FCNTL_SETLKW): they exclude every other process that locks
 * the file -- of this job, of another MPI job, a native program or a
 * shell tool on the mount -- not only the processes of this communicator.
 * They belong to the process, as POSIX locks do, so nested requests of
 * one open file (ROMIO locks a contiguous atomic write, then the driver's
 * write locks it again) are counted here rather than sent twice: the
 * inner unlock must not release the outer lock's bytes.
 *
 * The shared file pointer stays in a small MPI window that every open
 * creates on its communicator (one int64 on rank 0, in etypes, as ROMIO
 * counts it), kept in a lock_all epoch and moved by MPI_Fetch_and_op:
 * MPI only asks the pointer to be shared within the communicator, and the
 * MPI's atomics are faster than a round trip to metad.
 */

#include "ad_clf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#define ADIOI_CLF_SHFP 0

int ADIOI_CLF_Win_create(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int rank;

    MPI_Comm_rank(fd->comm, &rank);
    if (MPI_Win_allocate(rank == 0 ? sizeof(int64_t) : 0, sizeof(int64_t),
                         MPI_INFO_NULL, fd->comm, &fs->win_base, &fs->win) != MPI_SUCCESS)
        return -1;
    if (rank == 0)
        fs->win_base[ADIOI_CLF_SHFP] = 0;
    /* Nobody reaches the window before rank 0 set it. */
    MPI_Barrier(fd->comm);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, fs->win);
    return 0;
}

void ADIOI_CLF_Win_free(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (fs->win == MPI_WIN_NULL)
        return;
    MPI_Win_unlock_all(fs->win);
    MPI_Win_free(&fs->win);
}

/* One past the last byte of (start, len), len 0 meaning to the end. */
static ADIO_Offset ADIOI_CLF_Lock_end(ADIO_Offset start, ADIO_Offset len)
{
    return len == 0 ? INT64_MAX : start + len;
}

/*
 * POSIX wants a read lock on a descriptor open for reading and a write
 * lock on one open for writing: a write-only file (rare: the open makes
 * it read-write when it can) takes write locks for reads too.
 */
static int ADIOI_CLF_Lock_type(ADIOI_CLF_fs * fs, int type)
{
    int acc = fs->clf_flags & O_ACCMODE;

    if (type == F_RDLCK && acc == O_WRONLY)
        return F_WRLCK;
    if (type == F_WRLCK && acc == O_RDONLY)
        return F_RDLCK;
    return type;
}

/* Does the lock held cover (type, start, len)? */
static int ADIOI_CLF_Lock_covers(ADIOI_CLF_fs * fs, int type, ADIO_Offset start,
                                 ADIO_Offset len)
{
    return fs->lock_start <= start &&
        ADIOI_CLF_Lock_end(start, len) <= fs->lock_end &&
        (fs->lock_type == F_WRLCK || type == F_RDLCK);
}

int ADIOI_CLF_Lock(ADIO_File fd, int type, ADIO_Offset start, ADIO_Offset len)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    ADIO_Offset end;
    struct flock fl;
    int err;

    type = ADIOI_CLF_Lock_type(fs, type);
    if (start < 0 || len < 0)
        return -EINVAL;
    end = ADIOI_CLF_Lock_end(start, len);
    if (fs->lock_depth > 0) {
        if (ADIOI_CLF_Lock_covers(fs, type, start, len)) {
            fs->lock_depth++;
            return 0;
        }
        /* Widen the held lock to cover both, never weakening it: a
         * read lock over our own write lock would convert it. */
        if (fs->lock_type == F_WRLCK)
            type = F_WRLCK;
        if (fs->lock_start < start)
            start = fs->lock_start;
        if (fs->lock_end > end)
            end = fs->lock_end;
    }
    memset(&fl, 0, sizeof(fl));
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = end == INT64_MAX ? 0 : end - start;
    err = CLF_fcntl(fs->lin_fd, CLF_FCNTL_SETLKW, &fl);
    if (err)
        return err;
    fs->lock_type = type;
    fs->lock_start = start;
    fs->lock_end = end;
    fs->lock_depth++;
    return 0;
}

int ADIOI_CLF_Unlock(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct flock fl;

    if (fs->lock_depth == 0 || --fs->lock_depth > 0)
        return 0;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = fs->lock_start;
    fl.l_len = fs->lock_end == INT64_MAX ? 0 : fs->lock_end - fs->lock_start;
    return CLF_fcntl(fs->lin_fd, CLF_FCNTL_SETLK, &fl);
}

int ADIOI_CLF_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len)
{
    static char myname[] = "ADIOI_CLF_SETLOCK";
    int err = 0;

    if (type == F_UNLCK) {
        /* The next holder finds what this one wrote, size included: a
         * read past the end it knew asks the subfiles (ROMIO's data
         * sieving reads a whole buffer under the lock and writes it back,
         * so a read that stopped at an old end would write stale bytes
         * over another process's). */
        err = ADIOI_CLF_Unlock(fd);
    } else {
        /* ROMIO always asks with SEEK_SET; anything else locks it all.
         * A lock of this driver always waits: ROMIO asks with F_SETLKW
         * and ignores what SetLock returns. */
        if (whence != SEEK_SET) {
            offset = 0;
            len = 0;
        }
        /* A negative length is the len bytes before offset, as fcntl
         * has it: ROMIO's data sieving asks so for an access of no
         * bytes (end - start + 1 with the end left at 0), which its ufs
         * driver passes to fcntl as it is.  Its unlock then matches. */
        if (len < 0) {
            offset += len;
            len = -len;
        }
        if (offset < 0) {
            FPRINTF(stderr, "%s: a lock of %lld bytes at offset %lld: the offset is negative\n",
                    myname, (long long) len, (long long) offset);
            return ADIOI_CLF_Error(myname, -EINVAL, "a lock at a negative offset");
        }
        err = ADIOI_CLF_Lock(fd, type, offset, len);
    }
    (void) cmd;
    if (!err)
        return MPI_SUCCESS;
    /* ROMIO's lock macros drop the code: say it here too (the lock
     * request failed at metad, which set the message). */
    FPRINTF(stderr, "%s: %s\n", myname, CLF_Last_error());
    return ADIOI_CLF_Error(myname, err, NULL);
}

void ADIOI_CLF_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                             int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t add = incr, old;

    /* Freed in MPI_Finalize (ad_clf_common.c), for a file left open. */
    if (fs->win == MPI_WIN_NULL) {
        *error_code = ADIOI_CLF_Error("ADIOI_CLF_SHARED_FP", -EIO,
                                      "the shared file pointer is gone: MPI_Finalize has begun");
        return;
    }

    MPI_Fetch_and_op(&add, &old, MPI_INT64_T, 0, ADIOI_CLF_SHFP, MPI_SUM, fs->win);
    MPI_Win_flush(0, fs->win);
    *shared_fp = old;
    *error_code = MPI_SUCCESS;
}

void ADIOI_CLF_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t val = offset, old;

    /* Freed in MPI_Finalize (ad_clf_common.c), for a file left open. */
    if (fs->win == MPI_WIN_NULL) {
        *error_code = ADIOI_CLF_Error("ADIOI_CLF_SHARED_FP", -EIO,
                                      "the shared file pointer is gone: MPI_Finalize has begun");
        return;
    }

    MPI_Fetch_and_op(&val, &old, MPI_INT64_T, 0, ADIOI_CLF_SHFP, MPI_REPLACE, fs->win);
    MPI_Win_flush(0, fs->win);
    *error_code = MPI_SUCCESS;
}
