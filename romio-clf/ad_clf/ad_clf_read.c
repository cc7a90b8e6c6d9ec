/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_read.c -- contiguous reads at file offsets (the byte view).
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

void ADIOI_CLF_ReadContig(ADIO_File fd, void *buf, int count,
                          MPI_Datatype datatype, int file_ptr_type,
                          ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    static char myname[] = "ADIOI_CLF_READCONTIG";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    MPI_Count datatype_size;
    ADIO_Offset len;
    CLF_Datatype mem;
    ssize_t n = 0;

    *error_code = MPI_SUCCESS;
    ADIOI_CLF_Coop_independent(fd);
    MPI_Type_size_x(datatype, &datatype_size);
    len = (ADIO_Offset) datatype_size *(ADIO_Offset) count;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    if (len > 0) {
        double t0 = ADIOI_CLF_Prof_start(fd);

        /* Reads see every write that returned, through either
         * descriptor and from any process: clf derives the size from the
         * subfiles when a read reaches past the end it knew. */
        int64_t ahead = ADIOI_CLF_Ahead_read(fd, buf, offset, len);

        mem = ahead < len ? ADIOI_CLF_Bytes(fs, len - ahead) : NULL;
        if (ahead == len)
            n = len;
        else
            n = mem ? CLF_ncread_at(fs->lin_fd, offset + ahead, (char *) buf + ahead, mem)
                : -ENOMEM;
        if (n >= 0 && ahead < len)
            n += ahead;
        /* Inside ROMIO's write code, past the end the file reads as
         * zeros: its two-phase write (and data sieving) reads its buffer
         * before filling it when the accesses leave holes, and writes
         * the whole buffer back, the bytes this read did not reach too
         * (else what the buffer held before lands in the file's gaps
         * past its old end).  An application's read leaves the bytes past
         * what it read untouched, as MPI says. */
        if (n >= 0 && n < len && fs->romio_write)
            memset((char *) buf + n, 0, len - n);
        ADIOI_CLF_Prof_end(fd, t0);
        if (n < 0) {
            *error_code = ADIOI_CLF_Error(myname, (int) n, NULL);
            return;
        }
    }
    fd->fp_sys_posn = offset + n;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += n;
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, n);
#endif
}
