/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_cache.c -- hint clf_cache=DIR: a remote clf file read and
 * written through a copy on local disk, written back at close.
 *
 * Over a wide-area link every access to a clf:// file pays the round
 * trip and the link's rate; a program that reads the file more than once
 * pays them again each time.  With clf_cache, MPI_File_open copies the
 * whole file into DIR (each process one share of it, in parallel), and
 * every access of the open is ROMIO's generic code (pread/pwrite, data
 * sieving, two-phase) on that copy; MPI_File_close writes the copy back
 * (each process its share) when any process wrote, then deletes it.
 * MPI-IO/L's trade-off (bench/wan_cache.sh): the open costs one whole
 * transfer, so this pays off when the program reads most of the file
 * more than once, not when it reads a small part once.
 *
 * DIR must be one directory that every process of the communicator sees
 * (one node's disk, or a shared file system): the open checks it.  The
 * remote file holds the old bytes until the close; MPI_File_sync syncs
 * the local copy only.  Two programs (or two opens) writing the same
 * file through caches at once: the last close's copy wins whole, bytes
 * the other wrote included; writers that must not lose each other's
 * bytes open the file without clf_cache.
 */

#include "ad_clf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ADIOI_CLF_CACHE_CHUNK (8 << 20)
#define ADIOI_CLF_CACHE_TOKEN 32

/* This process's share [*start, *end) of size bytes, in whole chunks. */
static void ADIOI_CLF_Cache_share(ADIO_File fd, int64_t size, int64_t *start, int64_t *end)
{
    int rank, nprocs;
    int64_t chunks = (size + ADIOI_CLF_CACHE_CHUNK - 1) / ADIOI_CLF_CACHE_CHUNK;

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &nprocs);
    *start = chunks * rank / nprocs * ADIOI_CLF_CACHE_CHUNK;
    *end = chunks * (rank + 1) / nprocs * ADIOI_CLF_CACHE_CHUNK;
    if (*start > size)
        *start = size;
    if (*end > size)
        *end = size;
}

/* Copy [start, end) between the clf descriptor and the local one:
 * to_local from clf, else to clf.  0 or a negative errno, msg set. */
static int ADIOI_CLF_Cache_copy(int cfd, int lfd, int64_t start, int64_t end, int to_local,
                                char *msg, int msglen)
{
    char *buf;
    int64_t off;
    ssize_t n, m;
    size_t want;
    int err = 0;

    if (start >= end)
        return 0;
    buf = ADIOI_Malloc(ADIOI_CLF_CACHE_CHUNK);
    if (CLF_lseek(cfd, start, SEEK_SET) != start) {
        MPL_snprintf(msg, msglen, "clf_cache: seek in the remote file: %s", CLF_Last_error());
        ADIOI_Free(buf);
        return -EIO;
    }
    for (off = start; off < end && !err; off += n) {
        want = (size_t) (end - off < ADIOI_CLF_CACHE_CHUNK ? end - off : ADIOI_CLF_CACHE_CHUNK);
        if (to_local) {
            n = CLF_read(cfd, buf, want);
            if (n <= 0) {
                err = n < 0 ? (int) n : -EIO;
                MPL_snprintf(msg, msglen, "clf_cache: reading the remote file at %lld: %s",
                             (long long) off, n < 0 ? CLF_Last_error() : "it ended early");
                break;
            }
            m = pwrite(lfd, buf, (size_t) n, off);
            if (m != n) {
                err = m < 0 ? -errno : -EIO;
                MPL_snprintf(msg, msglen, "clf_cache: writing the local copy: %s",
                             strerror(m < 0 ? errno : EIO));
            }
        } else {
            n = pread(lfd, buf, want, off);
            if (n <= 0) {
                err = n < 0 ? -errno : -EIO;
                MPL_snprintf(msg, msglen, "clf_cache: reading the local copy at %lld: %s",
                             (long long) off, n < 0 ? strerror(errno) : "it ended early");
                break;
            }
            m = CLF_write(cfd, buf, (size_t) n);
            if (m != n) {
                err = m < 0 ? (int) m : -EIO;
                MPL_snprintf(msg, msglen, "clf_cache: writing back to the remote file: %s",
                             m < 0 ? CLF_Last_error() : "short write");
            }
        }
    }
    ADIOI_Free(buf);
    return err;
}

/* Every process's outcome: 0 when all succeeded, else the first error
 * (and its message, from the lowest such rank) on every process. */
static int ADIOI_CLF_Cache_agree(ADIO_File fd, int err, char *msg, int msglen)
{
    int rank, nprocs, first;
    struct {
        int failed;
        int rank;
    } mine, low;

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &nprocs);
    mine.failed = err ? 0 : 1;
    mine.rank = rank;
    MPI_Allreduce(&mine, &low, 1, MPI_2INT, MPI_MINLOC, fd->comm);
    if (low.failed)
        return 0;
    first = low.rank;
    MPI_Bcast(&err, 1, MPI_INT, first, fd->comm);
    MPI_Bcast(msg, msglen, MPI_CHAR, first, fd->comm);
    return err;
}

/* The write calls mark the copy dirty, for the write-back at close. */
#define ADIOI_CLF_CACHE_DIRTY(fd) (((ADIOI_CLF_fs *) (fd)->fs_ptr)->cache_dirty = 1)

static void ADIOI_CLF_Cache_WriteContig(ADIO_File fd, const void *buf, int count,
                                        MPI_Datatype datatype, int file_ptr_type,
                                        ADIO_Offset offset, ADIO_Status * status,
                                        int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_GEN_WriteContig(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
}

static void ADIOI_CLF_Cache_WriteStrided(ADIO_File fd, const void *buf, int count,
                                         MPI_Datatype datatype, int file_ptr_type,
                                         ADIO_Offset offset, ADIO_Status * status,
                                         int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
}

static void ADIOI_CLF_Cache_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                             MPI_Datatype datatype, int file_ptr_type,
                                             ADIO_Offset offset, ADIO_Status * status,
                                             int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                               error_code);
}

static void ADIOI_CLF_Cache_IwriteContig(ADIO_File fd, const void *buf, int count,
                                         MPI_Datatype datatype, int file_ptr_type,
                                         ADIO_Offset offset, ADIO_Request * request,
                                         int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_FAKE_IwriteContig(fd, buf, count, datatype, file_ptr_type, offset, request,
                            error_code);
}

static void ADIOI_CLF_Cache_IwriteStrided(ADIO_File fd, const void *buf, int count,
                                          MPI_Datatype datatype, int file_ptr_type,
                                          ADIO_Offset offset, ADIO_Request * request,
                                          int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_FAKE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                             error_code);
}

static void ADIOI_CLF_Cache_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                              MPI_Datatype datatype, int file_ptr_type,
                                              ADIO_Offset offset, ADIO_Request * request,
                                              int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_GEN_IwriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, request,
                                error_code);
}

static void ADIOI_CLF_Cache_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    ADIOI_CLF_CACHE_DIRTY(fd);
    ADIOI_GEN_Resize(fd, size, error_code);
}

/*
 * Write the copy back when any process wrote: the remote file takes the
 * copy's size, then each process writes its share.  Collective.
 */
static int ADIOI_CLF_Cache_write_back(ADIO_File fd, char *msg, int msglen)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int dirty = fs->cache_dirty, any = 0, rank, err = 0;
    int64_t size = 0, start, end;
    struct stat st;

    MPI_Allreduce(&dirty, &any, 1, MPI_INT, MPI_MAX, fd->comm);
    if (!any)
        return 0;
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0) {
        if (fstat(fs->cache_fd, &st)) {
            err = -errno;
            MPL_snprintf(msg, msglen, "clf_cache: the local copy: %s", strerror(errno));
        } else {
            size = st.st_size;
            err = CLF_ftruncate(fs->lin_fd, size);
            if (err)
                MPL_snprintf(msg, msglen, "clf_cache: sizing the remote file: %s",
                             CLF_Last_error());
        }
    }
    MPI_Bcast(&size, 1, MPI_INT64_T, 0, fd->comm);
    err = ADIOI_CLF_Cache_agree(fd, err, msg, msglen);
    if (err)
        return err;
    ADIOI_CLF_Cache_share(fd, size, &start, &end);
    err = ADIOI_CLF_Cache_copy(fs->lin_fd, fs->cache_fd, start, end, 0, msg, msglen);
    err = ADIOI_CLF_Cache_agree(fd, err, msg, msglen);
    if (!err)
        fs->cache_dirty = 0;
    return err;
}

/* Write back, drop the local copy, close the clf descriptors. */
static void ADIOI_CLF_Cache_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_CLF_CACHE_CLOSE";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char msg[ADIOI_CLF_MSG_LEN] = "";
    int err, rank;

    err = ADIOI_CLF_Cache_write_back(fd, msg, sizeof(msg));
    close(fs->cache_fd);
    fs->cache_fd = fd->fd_sys = -1;
    /* Every process is done with the copy before it goes. */
    MPI_Barrier(fd->comm);
    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0)
        unlink(fs->cache_name);
    ADIOI_Free(fs->cache_name);
    fs->cache_name = NULL;
    ADIOI_CLF_Close(fd, error_code);
    if (err && *error_code == MPI_SUCCESS)
        *error_code = ADIOI_CLF_Error(myname, err, msg);
}

/* ROMIO's generic code on the local copy (fd->fd_sys); the open, the
 * hints, the size as others see it at close, the shared file pointer
 * and deletes stay clf's. */
static struct ADIOI_Fns_struct ADIOI_CLF_Cache_operations = {
    ADIOI_CLF_Open,     /* Open: not called on an open file */
    ADIOI_CLF_OpenColl, /* OpenColl: idem */
    ADIOI_GEN_ReadContig,       /* ReadContig */
    ADIOI_CLF_Cache_WriteContig,        /* WriteContig */
    ADIOI_GEN_ReadStridedColl,  /* ReadStridedColl */
    ADIOI_CLF_Cache_WriteStridedColl,   /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,   /* SeekIndividual */
    ADIOI_GEN_Fcntl,    /* Fcntl */
    ADIOI_CLF_SetInfo,  /* SetInfo */
    ADIOI_GEN_ReadStrided,      /* ReadStrided */
    ADIOI_CLF_Cache_WriteStrided,       /* WriteStrided */
    ADIOI_CLF_Cache_Close,      /* Close */
    ADIOI_FAKE_IreadContig,     /* IreadContig */
    ADIOI_CLF_Cache_IwriteContig,       /* IwriteContig */
    ADIOI_FAKE_IODone,  /* ReadDone */
    ADIOI_FAKE_IODone,  /* WriteDone */
    ADIOI_FAKE_IOComplete,      /* ReadComplete */
    ADIOI_FAKE_IOComplete,      /* WriteComplete */
    ADIOI_FAKE_IreadStrided,    /* IreadStrided */
    ADIOI_CLF_Cache_IwriteStrided,      /* IwriteStrided */
    ADIOI_GEN_Flush,    /* Flush */
    ADIOI_CLF_Cache_Resize,     /* Resize */
    ADIOI_CLF_Delete,   /* Delete */
    ADIOI_CLF_Feature,  /* Features */
    "CLF through a local cache (clf_cache)",
    ADIOI_GEN_IreadStridedColl, /* IreadStridedColl */
    ADIOI_CLF_Cache_IwriteStridedColl,  /* IwriteStridedColl */
#if defined(F_SETLKW64)
    ADIOI_GEN_SetLock   /* SetLock: on the local copy */
#else
    ADIOI_GEN_SetLock64 /* SetLock: on the local copy */
#endif
};

/*
 * Rank 0 makes the copy's file in fs->cache_dir with a random token at
 * its start; every process opens it by name and must read that token
 * back (DIR shared by all).  Returns the local descriptor or a negative
 * errno, msg set; collective.
 */
static int ADIOI_CLF_Cache_make(ADIO_File fd, char *msg, int msglen)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char name[PATH_MAX], token[ADIOI_CLF_CACHE_TOKEN], seen[ADIOI_CLF_CACHE_TOKEN];
    int rank, lfd = -1, err = 0, i;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == 0) {
        srandom((unsigned) getpid() ^ (unsigned) time(NULL));
        for (i = 0; i < ADIOI_CLF_CACHE_TOKEN; i++)
            token[i] = (char) (random() & 0xff);
        if (MPL_snprintf(name, sizeof(name), "%s/clf-cache.XXXXXX", fs->cache_dir) >=
            (int) sizeof(name)) {
            err = -ENAMETOOLONG;
            MPL_snprintf(msg, msglen, "hint clf_cache='%s': too long a path", fs->cache_dir);
        } else if ((lfd = mkstemp(name)) < 0) {
            err = -errno;
            MPL_snprintf(msg, msglen, "hint clf_cache='%s': cannot make the local copy: %s",
                         fs->cache_dir, strerror(errno));
        } else if (pwrite(lfd, token, sizeof(token), 0) != (ssize_t) sizeof(token)) {
            err = -EIO;
            MPL_snprintf(msg, msglen, "hint clf_cache='%s': cannot write the local copy",
                         fs->cache_dir);
        }
    }
    err = ADIOI_CLF_Cache_agree(fd, err, msg, msglen);
    if (err) {
        if (lfd >= 0) {
            close(lfd);
            unlink(name);
        }
        return err;
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, fd->comm);
    MPI_Bcast(token, sizeof(token), MPI_CHAR, 0, fd->comm);
    if (rank != 0) {
        lfd = open(name, O_RDWR);
        if (lfd < 0) {
            err = -errno;
            MPL_snprintf(msg, msglen, "hint clf_cache: process %d cannot open %.300s (%s): "
                         "the directory must be one that every process sees", rank, name,
                         strerror(errno));
        } else if (pread(lfd, seen, sizeof(seen), 0) != (ssize_t) sizeof(seen) ||
                   memcmp(seen, token, sizeof(seen))) {
            err = -EXDEV;
            MPL_snprintf(msg, msglen, "hint clf_cache: process %d sees another %.300s: the "
                         "directory must be one that every process sees", rank, name);
        }
    }
    err = ADIOI_CLF_Cache_agree(fd, err, msg, msglen);
    if (err) {
        if (lfd >= 0)
            close(lfd);
        if (rank == 0)
            unlink(name);
        return err;
    }
    fs->cache_name = ADIOI_Strdup(name);
    return lfd;
}

/*
 * At the end of a collective open with clf_cache: copy the file into the
 * cache, and switch fd to ROMIO's generic code on the copy.  Collective;
 * on failure the copy is gone and *error_code says why.
 */
void ADIOI_CLF_Cache_open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_CLF_CACHE_OPEN";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char msg[ADIOI_CLF_MSG_LEN] = "";
    int64_t size = 0, start, end;
    int rank, lfd, err = 0;

    *error_code = MPI_SUCCESS;
    MPI_Comm_rank(fd->comm, &rank);
    lfd = ADIOI_CLF_Cache_make(fd, msg, sizeof(msg));
    if (lfd < 0) {
        *error_code = ADIOI_CLF_Error(myname, lfd, msg);
        return;
    }
    if (rank == 0) {
        size = CLF_lseek(fs->lin_fd, 0, SEEK_END);
        if (size < 0) {
            err = (int) size;
            MPL_snprintf(msg, sizeof(msg), "clf_cache: the remote file's size: %s",
                         CLF_Last_error());
        } else if (ftruncate(lfd, 0) || ftruncate(lfd, size)) {
            err = -errno;
            MPL_snprintf(msg, sizeof(msg), "clf_cache: sizing the local copy: %s",
                         strerror(errno));
        }
    }
    MPI_Bcast(&size, 1, MPI_INT64_T, 0, fd->comm);
    err = ADIOI_CLF_Cache_agree(fd, err, msg, sizeof(msg));
    if (!err) {
        ADIOI_CLF_Cache_share(fd, size, &start, &end);
        err = ADIOI_CLF_Cache_copy(fs->lin_fd, lfd, start, end, 1, msg, sizeof(msg));
        err = ADIOI_CLF_Cache_agree(fd, err, msg, sizeof(msg));
    }
    if (err) {
        close(lfd);
        MPI_Barrier(fd->comm);
        if (rank == 0)
            unlink(fs->cache_name);
        ADIOI_Free(fs->cache_name);
        fs->cache_name = NULL;
        *error_code = ADIOI_CLF_Error(myname, err, msg);
        return;
    }
    fs->cache_fd = fd->fd_sys = lfd;
    fs->cache_dirty = 0;
    fd->fns = &ADIOI_CLF_Cache_operations;
    ADIOI_Info_set(fd->info, "clf_cache", fs->cache_dir);
}
