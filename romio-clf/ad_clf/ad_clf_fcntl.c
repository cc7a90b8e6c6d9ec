/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_fcntl.c -- size, preallocation and atomic mode.
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

void ADIOI_CLF_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_CLF_FCNTL";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t size;

    *error_code = MPI_SUCCESS;
    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:
            /* From the subfiles: every write that returned counts,
             * this process's and the others'. */
            size = CLF_lseek(fs->lin_fd, 0, SEEK_END);
            if (size < 0) {
                *error_code = ADIOI_CLF_Error(myname, (int) size, NULL);
                return;
            }
            /* And what the cooperative cache keeps, of every process
             * as of the last collective access (the only ones that
             * change it). */
            if (fs->coop && fs->coop->global_end > size)
                size = fs->coop->global_end;
            fcntl_struct->fsize = size;
            break;

        case ADIO_FCNTL_SET_DISKSPACE:
            /* One process preallocates; the others see the size at once. */
            ADIOI_GEN_Prealloc(fd, fcntl_struct->diskspace, error_code);
            break;

        case ADIO_FCNTL_SET_ATOMICITY:
            /* Accesses take the file lock in atomic mode (ad_clf_lock.c),
             * and see each other at once: what the cooperative cache kept
             * goes to the iods (each process its own; this is collective). */
            if (fcntl_struct->atomicity && fs->coop) {
                int err = ADIOI_CLF_Coop_flush(fd);

                if (err)
                    *error_code = ADIOI_CLF_Error(myname, err, NULL);
                MPI_Barrier(fd->comm);
            }
            fd->atomicity = fcntl_struct->atomicity == 0 ? 0 : 1;
            break;

        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d", flag);
    }
}
