/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_lock.c -- shared file pointer and file lock, over MPI RMA.
 *
 * clf has no lock operation yet, so both live in a small MPI window that
 * every open creates on its communicator: two int64 on rank 0, [0] the
 * shared file pointer (in etypes, as ROMIO counts it), [1] the owner of
 * the file lock (rank + 1, or 0).  The window stays in a lock_all epoch;
 * the pointer moves by MPI_Fetch_and_op, which is atomic, and the lock is
 * taken by MPI_Compare_and_swap with a bounded back-off.  Both are
 * correct for any number of processes; they are as fast as the MPI's
 * atomics (in shared memory within a node).  The lock covers the whole
 * file: ROMIO's byte ranges only narrow what must be excluded.
 */

#include "ad_clf.h"

#include <errno.h>
#include <time.h>

#define ADIOI_CLF_SHFP 0
#define ADIOI_CLF_LOCK 1

int ADIOI_CLF_Win_create(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int rank;

    MPI_Comm_rank(fd->comm, &rank);
    if (MPI_Win_allocate(rank == 0 ? 2 * sizeof(int64_t) : 0, sizeof(int64_t),
                         MPI_INFO_NULL, fd->comm, &fs->win_base, &fs->win) != MPI_SUCCESS)
        return -1;
    if (rank == 0)
        fs->win_base[ADIOI_CLF_SHFP] = fs->win_base[ADIOI_CLF_LOCK] = 0;
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

int ADIOI_CLF_Lock(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t me, free_ = 0, owner;
    struct timespec pause = { 0, 1000 };
    int rank;

    if (fs->lock_depth++ > 0)
        return 0;
    MPI_Comm_rank(fd->comm, &rank);
    me = rank + 1;
    for (;;) {
        MPI_Compare_and_swap(&me, &free_, &owner, MPI_INT64_T, 0, ADIOI_CLF_LOCK, fs->win);
        MPI_Win_flush(0, fs->win);
        if (owner == 0)
            return 0;
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 1000 * 1000)
            pause.tv_nsec *= 2;
    }
}

int ADIOI_CLF_Unlock(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t free_ = 0, owner;

    if (fs->lock_depth == 0 || --fs->lock_depth > 0)
        return 0;
    MPI_Fetch_and_op(&free_, &owner, MPI_INT64_T, 0, ADIOI_CLF_LOCK, MPI_REPLACE, fs->win);
    MPI_Win_flush(0, fs->win);
    return 0;
}

int ADIOI_CLF_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len)
{
    static char myname[] = "ADIOI_CLF_SETLOCK";
    int err = 0;

    if (type == F_UNLCK) {
        /* The next holder must find what this one wrote, size included:
         * ROMIO's data sieving reads a whole buffer under the lock and
         * writes it back, and a read that stopped at an old end of file
         * would write stale bytes over another process's. */
        err = ADIOI_CLF_Report_pending(fd, -1);
        ADIOI_CLF_Unlock(fd);
    } else
        ADIOI_CLF_Lock(fd);
    return err ? ADIOI_CLF_Error(myname, err, NULL) : MPI_SUCCESS;
}

void ADIOI_CLF_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                             int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t add = incr, old;

    MPI_Fetch_and_op(&add, &old, MPI_INT64_T, 0, ADIOI_CLF_SHFP, MPI_SUM, fs->win);
    MPI_Win_flush(0, fs->win);
    *shared_fp = old;
    *error_code = MPI_SUCCESS;
}

void ADIOI_CLF_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t val = offset, old;

    MPI_Fetch_and_op(&val, &old, MPI_INT64_T, 0, ADIOI_CLF_SHFP, MPI_REPLACE, fs->win);
    MPI_Win_flush(0, fs->win);
    *error_code = MPI_SUCCESS;
}
