/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_resize.c -- MPI_File_set_size (collective).
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

/*
 * Every process truncates: CLF_ftruncate first reports what that
 * descriptor wrote beyond the end, so the last operation metad sees is a
 * truncation to size whatever the order, and no descriptor keeps an old
 * end that a later report would restore.
 */
void ADIOI_CLF_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_CLF_RESIZE";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int err = 0, ok, all_ok;

    /* Kept bytes past the new end must not come back after it. */
    if (fs->coop) {
        err = ADIOI_CLF_Coop_flush(fd);
        fs->coop->global_end = 0;
        MPI_Barrier(fd->comm);
    }
    if (!err && fs->view_fd >= 0)
        err = CLF_ftruncate(fs->view_fd, size);
    if (!err)
        err = CLF_ftruncate(fs->lin_fd, size);
    ok = err == 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fd->comm);
    if (err)
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
    else if (!all_ok)
        *error_code = ADIOI_CLF_Error(myname, -EIO, "the resize failed on another process");
    else
        *error_code = MPI_SUCCESS;
}
