/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_delete.c -- MPI_File_delete.
 */

#include "ad_clf.h"

void ADIOI_CLF_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_CLF_DELETE";
    char path[PATH_MAX + 2];
    int err;

    *error_code = MPI_SUCCESS;
    if (ADIOI_CLF_Init(myname, error_code))
        return;
    ADIOI_CLF_Path(filename, path, sizeof(path));
    err = CLF_unlink(path);
    if (err < 0)
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
}
