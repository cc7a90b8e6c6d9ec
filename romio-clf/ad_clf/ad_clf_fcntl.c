/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_fcntl.c -- size, preallocation and atomic mode.
 */

#include "ad_clf.h"

void ADIOI_CLF_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_CLF_FCNTL";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t size;
    int err;

    *error_code = MPI_SUCCESS;
    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:
            /* The size metad knows, once this process's writes through
             * either descriptor are counted. */
            err = ADIOI_CLF_Report_pending(fd, -1);
            size = err ? err : CLF_lseek(fs->lin_fd, 0, SEEK_END);
            if (size < 0) {
                *error_code = ADIOI_CLF_Error(myname, (int) size, NULL);
                return;
            }
            fcntl_struct->fsize = size;
            break;

        case ADIO_FCNTL_SET_DISKSPACE:
            /* Only one process preallocates: the others must see the size. */
            ADIOI_GEN_Prealloc(fd, fcntl_struct->diskspace, error_code);
            err = ADIOI_CLF_Report_pending(fd, -1);
            if (err && *error_code == MPI_SUCCESS)
                *error_code = ADIOI_CLF_Error(myname, err, NULL);
            break;

        case ADIO_FCNTL_SET_ATOMICITY:
            /* Accesses take the file lock in atomic mode (ad_clf_lock.c). */
            fd->atomicity = fcntl_struct->atomicity == 0 ? 0 : 1;
            break;

        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d", flag);
    }
}
