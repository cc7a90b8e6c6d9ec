/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_close.c -- close: write what the cooperative cache kept, free
 * the window (collective).
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

void ADIOI_CLF_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_CLF_CLOSE";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int err = 0, e;

    *error_code = MPI_SUCCESS;
    if (!fs)
        return;
    ADIOI_CLF_Ahead_free(fd);   /* its thread reads through lin_fd */
    err = ADIOI_CLF_Coop_flush(fd);
    ADIOI_CLF_Coop_free(fd);
    ADIOI_CLF_Win_free(fd);
    ADIOI_CLF_Realms_free(fd);
    if (fs->view_fd >= 0) {
        e = CLF_close(fs->view_fd);
        if (e < 0 && !err)
            err = e;
    }
    if (fs->lin_fd >= 0) {
        e = CLF_close(fs->lin_fd);
        if (e < 0 && !err)
            err = e;
    }
    fs->view_fd = fs->lin_fd = -1;
    if (err)
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
    ADIOI_CLF_Fs_free(fd);
    ADIOI_CLF_File_closed(fd);
}
