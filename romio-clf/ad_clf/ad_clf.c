/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf.c -- the operations of the clf ADIO driver.
 *
 * Contiguous accesses, opening and closing, hints, size and sync are
 * clf's own.  Strided and collective accesses are clf's own too unless
 * the file's use_romio_optimizations hint is true; they then call ROMIO's
 * generic data sieving and two-phase code on top of the contiguous
 * operations (see ad_clf_io_strided.c).  Nonblocking accesses, contiguous,
 * strided and collective, run in an I/O thread and overlap with the
 * caller's computation (ad_clf_async.c); with use_romio_optimizations,
 * in atomic mode, and for collective accesses of more than 64 MiB per
 * process they complete before they return.
 */

#include "ad_clf.h"

struct ADIOI_Fns_struct ADIO_CLF_operations = {
    ADIOI_CLF_Open,     /* Open */
    ADIOI_CLF_OpenColl, /* OpenColl */
    ADIOI_CLF_ReadContig,       /* ReadContig */
    ADIOI_CLF_WriteContig,      /* WriteContig */
    ADIOI_CLF_ReadStridedColl,  /* ReadStridedColl */
    ADIOI_CLF_WriteStridedColl, /* WriteStridedColl */
    ADIOI_CLF_SeekIndividual,   /* SeekIndividual */
    ADIOI_CLF_Fcntl,    /* Fcntl */
    ADIOI_CLF_SetInfo,  /* SetInfo */
    ADIOI_CLF_ReadStrided,      /* ReadStrided */
    ADIOI_CLF_WriteStrided,     /* WriteStrided */
    ADIOI_CLF_Close,    /* Close */
    ADIOI_CLF_IreadContig,      /* IreadContig */
    ADIOI_CLF_IwriteContig,     /* IwriteContig */
    ADIOI_FAKE_IODone,  /* ReadDone */
    ADIOI_FAKE_IODone,  /* WriteDone */
    ADIOI_FAKE_IOComplete,      /* ReadComplete */
    ADIOI_FAKE_IOComplete,      /* WriteComplete */
    ADIOI_CLF_IreadStrided,     /* IreadStrided */
    ADIOI_CLF_IwriteStrided,    /* IwriteStrided */
    ADIOI_CLF_Flush,    /* Flush */
    ADIOI_CLF_Resize,   /* Resize */
    ADIOI_CLF_Delete,   /* Delete */
    ADIOI_CLF_Feature,  /* Features */
    "CLF: files with a physical layout declared with datatypes",
    ADIOI_CLF_IreadStridedColl, /* IreadStridedColl */
    ADIOI_CLF_IwriteStridedColl,        /* IwriteStridedColl */
    ADIOI_CLF_SetLock   /* SetLock */
};
