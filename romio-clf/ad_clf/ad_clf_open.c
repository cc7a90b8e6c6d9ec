/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_open.c -- opening a clf file, alone or collectively.
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

#include <errno.h>
#include <sys/stat.h>

static int ADIOI_CLF_Flags(int access_mode)
{
    int flags = 0;

    if (access_mode & ADIO_RDONLY)
        flags |= O_RDONLY;
    if (access_mode & ADIO_WRONLY)
        flags |= O_WRONLY;
    if (access_mode & ADIO_RDWR)
        flags |= O_RDWR;
    if (access_mode & ADIO_CREATE)
        flags |= O_CREAT;
    if (access_mode & ADIO_EXCL)
        flags |= O_EXCL;
    return flags;
}

static mode_t ADIOI_CLF_Perm(ADIO_File fd)
{
    mode_t old_mask;

    if (fd->perm != ADIO_PERM_NULL)
        return (mode_t) fd->perm;
    old_mask = umask(022);
    umask(old_mask);
    return old_mask ^ 0666;
}

/*
 * This process's own open, of the byte-view descriptor: the view
 * descriptor is opened at the first non-contiguous access.
 */
static void ADIOI_CLF_Adopt(ADIO_File fd, int cfd, int flags, int *error_code);

void ADIOI_CLF_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_CLF_OPEN";
    ADIOI_CLF_fs *fs = ADIOI_CLF_Fs_get(fd, error_code);
    const char *path = fs->clf_path;
    int flags, cfd;

    *error_code = MPI_SUCCESS;
    flags = ADIOI_CLF_Flags(fd->access_mode);
    /* ROMIO reads around what it writes when it sieves data: open
     * write-only files read-write too, as ADIOI_GEN_OpenColl does. */
    if ((flags & O_ACCMODE) == O_WRONLY) {
        cfd = CLF_open(path, (flags & ~O_ACCMODE) | O_RDWR, ADIOI_CLF_Perm(fd));
        if (cfd == -EACCES)
            cfd = CLF_open(path, flags, ADIOI_CLF_Perm(fd));
        else if (cfd >= 0)
            flags = (flags & ~O_ACCMODE) | O_RDWR;
    } else {
        cfd = CLF_open(path, flags, ADIOI_CLF_Perm(fd));
    }
    if (cfd < 0) {
        *error_code = ADIOI_CLF_Error(myname, cfd, NULL);
        return;
    }
    ADIOI_CLF_Adopt(fd, cfd, flags, error_code);
}

/* cfd, opened with flags, becomes fd's byte-view descriptor. */
static void ADIOI_CLF_Adopt(ADIO_File fd, int cfd, int flags, int *error_code)
{
    static char myname[] = "ADIOI_CLF_OPEN";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t end;
    int err, on = 0;

    fs->lin_fd = cfd;
    fs->clf_flags = flags & ~(O_CREAT | O_EXCL | O_TRUNC);
    err = ADIOI_CLF_Client_cache(fs, cfd);
    if (!err)
        err = CLF_fcntl(cfd, CLF_FCNTL_GETCACHE, &on);
    if (err) {
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
        CLF_close(cfd);
        fs->lin_fd = -1;
        return;
    }
    /* What is in force, from the hint or clf.conf's client_cache. */
    ADIOI_Info_set(fd->info, "clf_client_cache", on ? "true" : "false");
    if (fd->access_mode & ADIO_APPEND) {
        end = CLF_lseek(cfd, 0, SEEK_END);
        if (end < 0) {
            *error_code = ADIOI_CLF_Error(myname, (int) end, NULL);
            CLF_close(cfd);
            fs->lin_fd = -1;
            return;
        }
        fd->fp_ind = fd->fp_sys_posn = end;
    }
}

/*
 * Create the file on rank 0, with the layout the hints ask for, then
 * open it everywhere.  Returns 0, or a negative errno with msg set;
 * *created tells whether this call made the file (and its layout).
 * A file opened for writing keeps the create's descriptor, read-write
 * as ADIOI_CLF_Open would open it (*kept: it is fd's now): opening it
 * again cost metad a second round trip per MPI_File_open(CREATE).
 * fd->access_mode is already set (ADIOI_CLF_OpenColl): the adoption
 * reads ADIO_APPEND there, as ADIOI_CLF_Open's does.
 */
static int ADIOI_CLF_Create(ADIO_File fd, int access_mode, int *created, int *kept,
                            char *msg, int msglen)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int cfd, flags, err;

    *kept = 0;
    flags = O_RDWR | O_CREAT | ((access_mode & ADIO_EXCL) ? O_EXCL : 0);
    cfd = ADIOI_CLF_Create_with_layout(fd, fs->clf_path, flags, ADIOI_CLF_Perm(fd), created, msg,
                                       msglen);
    if (cfd < 0)
        return cfd;
    if (access_mode & (ADIO_WRONLY | ADIO_RDWR)) {
        err = MPI_SUCCESS;
        ADIOI_CLF_Adopt(fd, cfd, O_RDWR, &err);
        *kept = err == MPI_SUCCESS;
        if (!*kept) {
            MPL_snprintf(msg, msglen, "%s", CLF_Last_error());
            return -EIO;
        }
        return 0;
    }
    if (CLF_close(cfd) < 0) {
        MPL_snprintf(msg, msglen, "%s", CLF_Last_error());
        return -EIO;
    }
    return 0;
}

struct ADIOI_CLF_Outcome {
    int err;                    /* negative errno, 0: success */
    int created;
    char msg[ADIOI_CLF_MSG_LEN];
};

void ADIOI_CLF_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    static char myname[] = "ADIOI_CLF_OPENCOLL";
    ADIOI_CLF_fs *fs = ADIOI_CLF_Fs_get(fd, error_code);
    struct ADIOI_CLF_Outcome made = { 0 };
    int ok, all_ok, kept = 0, orig_mode = access_mode;
    char path[PATH_MAX + 2], config[PATH_MAX + 2];

    *error_code = MPI_SUCCESS;
    /* The driver sets fd->access_mode (ADIOI_GEN_OpenColl does), on
     * every process, whichever way it opens: ROMIO decides by it after
     * the open whether a process takes part in collectives (MPI_File_open's
     * barrier for MPI_MODE_APPEND, ADIO_Close's delete and barrier for
     * MPI_MODE_DELETE_ON_CLOSE) and whether it may read or write.  Set
     * only around ADIOI_CLF_Open, it stayed 0 (MPIO_File_create's calloc)
     * on a process 0 that kept the create's descriptor: that process
     * skipped those barriers, the others waited in them (rdwrord). */
    fd->access_mode = orig_mode;
    /* Each process resolves the name: a mount's is its own. */
    ADIOI_CLF_Path_of(fd->filename, path, config, sizeof(path));
    if (fs->clf_path)
        ADIOI_Free(fs->clf_path);
    fs->clf_path = ADIOI_Strdup(path);
    ADIOI_CLF_Init(myname, config, error_code);
    if (*error_code == MPI_SUCCESS && fs->hint_error)
        /* Every process parsed the same hints: every one says so. */
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           fs->hint_error, "**infoval", "%s", fs->hint_msg);

    /* Every process checks the layout hint, for an error of its own. */
    if (*error_code == MPI_SUCCESS && fs->subfile_hint &&
        ADIOI_CLF_Check_layout_hint(fd, made.msg, sizeof(made.msg)))
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_INFO_VALUE, "**infoval", "%s", made.msg);

    /* Rank 0 creates and lays out the file; the others learn how it went
     * (its message, for their own error code). */
    if (access_mode & ADIO_CREATE) {
        if (rank == 0) {
            if (*error_code == MPI_SUCCESS)
                made.err = ADIOI_CLF_Create(fd, access_mode, &made.created, &kept,
                                            made.msg, sizeof(made.msg));
            else
                made.err = -ECANCELED;
        }
        MPI_Bcast(&made, sizeof(made), MPI_BYTE, 0, fd->comm);
        if (*error_code == MPI_SUCCESS && made.err == -ECANCELED)
            *error_code = ADIOI_CLF_Error(myname, -EIO, "the open failed on process 0");
        else if (*error_code == MPI_SUCCESS && made.err)
            *error_code = ADIOI_CLF_Error(myname, made.err, made.msg);
        access_mode &= ~(ADIO_CREATE | ADIO_EXCL);
    }

    if (*error_code == MPI_SUCCESS && !kept) {
        fd->access_mode = access_mode;
        ADIOI_CLF_Open(fd, error_code);
        fd->access_mode = orig_mode;
    }

    /* The window below is collective: only when everyone got here. */
    ok = *error_code == MPI_SUCCESS;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fd->comm);
    if (all_ok && ADIOI_CLF_Win_create(fd)) {
        *error_code = ADIOI_CLF_Error(myname, -EIO,
                                      "cannot create the MPI window for the shared file pointer");
        ok = 0;
    }
    /* With clf_cache, every access from here on is on a local copy. */
    if (all_ok && ok && fs->cache_dir) {
        ADIOI_CLF_Cache_open(fd, error_code);
        if (*error_code != MPI_SUCCESS) {
            ADIOI_CLF_Win_free(fd);
            ok = 0;
        }
    }
    if (!all_ok || !ok) {
        if (fs->lin_fd >= 0)
            CLF_close(fs->lin_fd);
        fs->lin_fd = -1;
        if (*error_code == MPI_SUCCESS)
            *error_code = ADIOI_CLF_Error(myname, -EIO, "the open failed on another process");
        ADIOI_CLF_Fs_free(fd);
        return;
    }

    ADIOI_CLF_Report_layout(fd, made.created);
    ADIOI_CLF_Coop_open(fd);
    fd->blksize = fd->hints->striping_unit > 0 ? fd->hints->striping_unit : 4 * 1024 * 1024;
    fd->is_open = 1;
    fd->dirty_write = 0;
    ADIOI_CLF_File_opened(fd);
}
