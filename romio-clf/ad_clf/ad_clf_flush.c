/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_flush.c -- MPI_File_sync: kept bytes written, bytes durable.
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

void ADIOI_CLF_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_CLF_FLUSH";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int err;

    /* Others' writes synced before become visible now: nothing read
     * ahead before this call may be served after it. */
    ADIOI_CLF_Ahead_drop(fd);
    /* The cooperative cache's kept writes first: each process its own,
     * every process being here (MPI_File_sync is collective). */
    err = ADIOI_CLF_Coop_flush(fd);
    if (fs->coop)
        fs->coop->global_end = 0;
    if (!err && fs->view_fd >= 0)
        err = CLF_sync(fs->view_fd);
    if (!err && fs->coop && fs->coop->flush_fd >= 0)
        err = CLF_sync(fs->coop->flush_fd);
    if (!err)
        err = CLF_sync(fs->lin_fd);
    if (err) {
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
        return;
    }
    fd->dirty_write = 0;
    *error_code = MPI_SUCCESS;
}
