/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_features.c -- what ROMIO may expect of clf.
 */

#include "ad_clf.h"

int ADIOI_CLF_Feature(ADIO_File fd, int flag)
{
    switch (flag) {
            /* SetLock is a clf byte-range lock kept by metad
             * (ad_clf_lock.c): it excludes other jobs and programs too,
             * for atomic mode and data sieving's read-modify-write. */
        case ADIO_LOCKS:
        case ADIO_SHARED_FP:
        case ADIO_ATOMIC_MODE:
        case ADIO_DATA_SIEVING_WRITES:
            /* Every process opens by itself (OpenColl); this also keeps
             * ROMIO from deferring opens, which the collective window
             * creation in OpenColl could not survive. */
        case ADIO_SCALABLE_OPEN:
        case ADIO_TWO_PHASE:
        case ADIO_SCALABLE_RESIZE:
            return 1;
            /* A write is visible to others once its size is reported
             * (close, sync, collective write), not at once. */
        case ADIO_IMMEDIATELY_VISIBLE:
        case ADIO_UNLINK_AFTER_CLOSE:
        default:
            return 0;
    }
}
