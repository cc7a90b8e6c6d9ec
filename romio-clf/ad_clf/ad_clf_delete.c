/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_delete.c -- MPI_File_delete.
 */

#include "ad_clf.h"

void ADIOI_CLF_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_CLF_DELETE";
    char path[PATH_MAX + 2], config[PATH_MAX + 2];
    int err;

    *error_code = MPI_SUCCESS;
    ADIOI_CLF_Path_of(filename, path, config, sizeof(path));
    if (ADIOI_CLF_Init(myname, config, error_code))
        return;
    err = CLF_unlink(path);
    if (err < 0)
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
}
