/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf.h -- the clf ADIO driver ("clf:" file names).
 *
 * An MPI file on clf is two clf descriptors of the same file:
 *   lin_fd   its view is the whole file as bytes: ROMIO's contiguous
 *            accesses (ReadContig/WriteContig, data sieving, two-phase
 *            aggregators) use file offsets directly;
 *   view_fd  carries the MPI file view converted to a clf datatype
 *            (CLF_FCNTL_SETVIEW), opened at the first non-contiguous
 *            access: clf then maps the view onto the subfiles once and
 *            moves every byte straight to its place.
 * Keeping both avoids registering a view again for every access.
 */

#ifndef AD_CLF_H_INCLUDED
#define AD_CLF_H_INCLUDED

#include "adio.h"
#include "clf.h"
#include "ad_clf_dtype.h"

#define ADIOI_CLF_MSG_LEN 512

/* Per-file state, in fd->fs_ptr; allocated by SetInfo at open. */
typedef struct {
    int lin_fd;                 /* clf descriptor, byte view; -1 when closed */
    int view_fd;                /* clf descriptor with the MPI view; -1 until needed */
    int clf_flags;              /* O_* flags both were opened with */
    char *clf_path;             /* the file's clf path, resolved at open; owned */

    /* The clf view of fd->filetype at fd->disp (ADIOI_CLF_View), and
     * whether view_fd carries it.  A filetype is recognised by an
     * attribute that points to this structure (ROMIO frees and re-creates
     * its copy of the filetype at each MPI_File_set_view, so handles alone
     * may repeat). */
    int view_valid;
    int view_set;               /* view_type is view_fd's view */
    MPI_Datatype view_filetype;
    ADIO_Offset view_mpi_disp;
    CLF_Datatype view_type;     /* owned */
    int64_t view_disp;          /* clf displacement: fd->disp + window */

    CLF_Datatype bytes_type;    /* cached run of bytes_len bytes, owned */
    MPI_Count bytes_len;

    /* Hints */
    int romio_opt;              /* use_romio_optimizations */
    char *subfile_hint;         /* subfile_datatypes as given, owned */
    char *layout_hint;          /* clf_layout as given, owned */
    int striping_unit, striping_factor, start_iodevice;        /* 0/-1: not given */
    int hint_error;             /* MPI error class of a malformed hint, 0: none */
    char hint_msg[ADIOI_CLF_MSG_LEN];

    /* Shared file pointer: one int64 on rank 0 of fd->comm, in etypes,
     * in a window kept in a lock_all epoch (ad_clf_lock.c). */
    MPI_Win win;
    int64_t *win_base;

    /* The clf byte-range lock this process holds on the file for ROMIO's
     * SetLock and atomic accesses (ad_clf_lock.c): nested requests only
     * count. */
    int lock_depth;             /* nested lock requests; 0: none held */
    int lock_type;              /* F_RDLCK or F_WRLCK */
    ADIO_Offset lock_start;     /* file bytes [lock_start, lock_end) */
    ADIO_Offset lock_end;       /* INT64_MAX: to the end */

    /* Collective operations (ad_clf_coll.c): the tag of the next clf
     * collective call is coll_base | (coll_seq & 0xffffffff), alike on
     * every process of fd->comm; coll_base comes from rank 0 at the first
     * collective access (coll_base_set), so that two opens of a file do
     * not share tags. */
    uint64_t coll_base;
    uint64_t coll_seq;
    int coll_base_set;
    /* Nonblocking collective accesses of this file queued or running in
     * the I/O thread (ad_clf_async.c); guarded by its lock. */
    int async_colls;

    /* Hint clf_profile: time in clf's data calls since the open. */
    int profile;
    /* Hint clf_client_cache: 1 or 0 for both descriptors
     * (CLF_FCNTL_SETCACHE); -1: clf.conf's client_cache decides;
     * ADIOI_CLF_CACHE_DEFAULT (no hint): on unless use_romio_optimizations
     * is true (ad_clf_hints.c says why). */
    int client_cache;
    double io_time;             /* seconds */
    long long io_calls;

    /* Hint clf_cache (ad_clf_cache.c): the file's copy on local disk,
     * which fd->fd_sys is while it is open. */
    char *cache_dir;            /* the hint's directory, owned; NULL: no cache */
    char *cache_name;           /* the copy's path, owned */
    int cache_fd;               /* -1: none */
    int cache_dirty;            /* this process wrote since the open */

    /* Hint clf_realms (ad_clf_realms.c): ROMIO's two-phase collective
     * I/O with file realms made of the layout's subfiles, made at the
     * first collective access and kept until the close. */
    int realms_hint;            /* 1: layout (default), 0: romio */
    int realms_state;           /* ADIOI_CLF_REALMS_* */
    int realm_io;               /* inside ROMIO's two-phase code with realms */
    /* Inside ROMIO's write code (two-phase collective writes, data
     * sieving): its contiguous reads fill a buffer that is then written
     * back whole, so they read zeros past the end of the file
     * (ad_clf_read.c). */
    int romio_write;
    int64_t realm_period;       /* bytes after which the realms repeat */

    /* Hints clf_coop_cache and clf_coop_cache_size (ad_clf_coop.h):
     * collective writes kept in the processes' memory and served to
     * the others' collective reads. */
    int coop_hint;              /* 1: true; 0: false (default) */
    int64_t coop_size;          /* bytes; 0: the default */
    struct ADIOI_CLF_Coop *coop;        /* owned; NULL: no cache */

    /* Hint clf_read_ahead (ad_clf_ahead.c): bytes per window read ahead
     * of sequential reads of a read-only file; 0: none; -1: not given
     * (the default, chosen at the first read). */
    int64_t read_ahead;
    struct ADIOI_CLF_Ahead *ahead;      /* owned; NULL: not started */
} ADIOI_CLF_fs;

#define ADIOI_CLF_REALMS_UNSET 0
#define ADIOI_CLF_REALMS_ON 1
#define ADIOI_CLF_REALMS_OFF 2

/* The memory side of an access (ad_clf_io_strided.c). */
struct ADIOI_CLF_Mem {
    CLF_Datatype type;          /* borrowed or owned (owned set) */
    int owned;
    char *ptr;                  /* where the type's offsets start */
    char *packed;               /* owned copy when the type is not expressible */
    MPI_Count bytes;
};

void ADIOI_CLF_Open(ADIO_File fd, int *error_code);
void ADIOI_CLF_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_CLF_Close(ADIO_File fd, int *error_code);
void ADIOI_CLF_ReadContig(ADIO_File fd, void *buf, int count,
                          MPI_Datatype datatype, int file_ptr_type,
                          ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_CLF_WriteContig(ADIO_File fd, const void *buf, int count,
                           MPI_Datatype datatype, int file_ptr_type,
                           ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_CLF_ReadStrided(ADIO_File fd, void *buf, int count,
                           MPI_Datatype datatype, int file_ptr_type,
                           ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_CLF_WriteStrided(ADIO_File fd, const void *buf, int count,
                            MPI_Datatype datatype, int file_ptr_type,
                            ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_CLF_ReadStridedColl(ADIO_File fd, void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type,
                               ADIO_Offset offset, ADIO_Status * status, int *error_code);
void ADIOI_CLF_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Status * status, int *error_code);
/* ad_clf_async.c: in the I/O thread */
void ADIOI_CLF_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                           int *error_code);
void ADIOI_CLF_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code);
void ADIOI_CLF_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code);
void ADIOI_CLF_IreadStridedColl(ADIO_File fd, void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Request * request, int *error_code);
void ADIOI_CLF_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type,
                                 ADIO_Offset offset, ADIO_Request * request, int *error_code);
void ADIOI_CLF_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code);
/* A collective access's own request, for the I/O thread. */
struct ADIOI_CLF_Allv {
    int64_t len;                /* view bytes */
    uint64_t tag;
    uint32_t *merge;            /* per subfile; owned */
};
/* Wait until the nonblocking collective accesses of fd issued before
 * are done (ad_clf_async.c): a blocking one must not reach the iods
 * first. */
void ADIOI_CLF_Async_drain_colls(ADIO_File fd);
void ADIOI_CLF_Async_start(ADIO_File fd, int cfd, ADIO_Offset at, struct ADIOI_CLF_Mem *mem,
                           void *buf, MPI_Datatype datatype, int write,
                           struct ADIOI_CLF_Allv *allv, MPI_Request * request);
void ADIOI_CLF_Complete(ADIO_File fd, MPI_Datatype datatype, ADIO_Status * status,
                        ADIO_Request * request, int *error_code);
void ADIOI_CLF_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_CLF_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
#define ADIOI_CLF_CACHE_DEFAULT 2

/* The clf_client_cache hint on descriptor cfd: 0 or a negative errno. */
int ADIOI_CLF_Client_cache(ADIOI_CLF_fs * fs, int cfd);
void ADIOI_CLF_Flush(ADIO_File fd, int *error_code);
void ADIOI_CLF_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_CLF_Delete(const char *filename, int *error_code);
int ADIOI_CLF_Feature(ADIO_File fd, int flag);
int ADIOI_CLF_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len);
void ADIOI_CLF_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                             int *error_code);
void ADIOI_CLF_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);

ADIO_Offset ADIOI_CLF_SeekIndividual(ADIO_File fd, ADIO_Offset offset, int whence,
                                     int *error_code);

/* ad_clf_flatten.c: ROMIO's flattened form of a type, by MPI's typemap
 * (called from ROMIO's ADIOI_Flatten_datatype, romio-clf.patch) */
ADIOI_Flatlist_node *ADIOI_CLF_Flatten_typemap(MPI_Datatype type);

/* ad_clf_io_strided.c: the parts of an access through the MPI view */
int ADIOI_CLF_View(ADIO_File fd, int *error_code);
int ADIOI_CLF_Target(ADIO_File fd, int *cfd, int *linear, int *error_code);
ADIO_Offset ADIOI_CLF_Start(ADIO_File fd, int file_ptr_type, ADIO_Offset offset, int linear);
int ADIOI_CLF_Mem_init(ADIO_File fd, struct ADIOI_CLF_Mem *m, const void *buf, int count,
                       MPI_Datatype datatype, int write, int pack);
void ADIOI_CLF_Mem_unpack(ADIO_File fd, struct ADIOI_CLF_Mem *m, void *buf,
                          MPI_Datatype datatype, MPI_Count n);
void ADIOI_CLF_Mem_release(struct ADIOI_CLF_Mem *m);
void ADIOI_CLF_Wrote(ADIO_File fd, int cfd, int linear, ADIO_Offset vbyte, ADIO_Offset n);
void ADIOI_CLF_Done(ADIO_File fd, int file_ptr_type, int linear, ADIO_Offset vbyte,
                    ADIO_Offset n, MPI_Datatype datatype, ADIO_Status * status);

/* ad_clf_io_strided.c: one access of this process on the native path */
void ADIOI_CLF_Access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                      int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                      int write, int *error_code);

/* ad_clf_realms.c */
void ADIOI_CLF_Realms_prepare(ADIO_File fd);
void ADIOI_CLF_Realms_free(ADIO_File fd);
/* ROMIO's two-phase collective access, in the file's realms when it has
 * them (use_romio_optimizations=true). */
void ADIOI_CLF_Realms_coll(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int write, int *error_code);
int ADIOI_CLF_Realm_io(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                       int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                       int write, int *error_code);

/* ad_clf_coll.c */
void ADIOI_CLF_Coll_access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int write, int *error_code);
/* Nonblocking: the clf call in the I/O thread where the access is one
 * request per process (the planned path), else done before it returns. */
void ADIOI_CLF_Coll_iaccess(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                            int write, int *error_code);

/* ad_clf_ahead.c: clf_read_ahead as now decided, into fd->info. */
void ADIOI_CLF_Ahead_report(ADIO_File fd);

/* ad_clf_wait.c: MPI_Allreduce in place, waited for without holding
 * the core once it takes long (the iods may need it); bytes: this
 * process's access, in bytes (a large one yields the core sooner) */
int ADIOI_CLF_Allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        ADIO_Offset bytes);
/* ad_clf_wait.c: MPI_Allgather and MPI_Barrier, waited for the same way. */
int ADIOI_CLF_Allgather(const void *sendbuf, int count, MPI_Datatype type, void *recvbuf,
                        MPI_Comm comm, ADIO_Offset bytes);
int ADIOI_CLF_Barrier(MPI_Comm comm, ADIO_Offset bytes);
/* ad_clf_wait.c: whether an access of bytes per process is a large one
 * (a collective read of which ends in a barrier: ad_clf_coll.c) */
int ADIOI_CLF_Wait_large(ADIO_Offset bytes);

/* ad_clf_common.c */
int ADIOI_CLF_Init(const char *myname, const char *config, int *error_code);
void ADIOI_CLF_File_opened(ADIO_File fd);
void ADIOI_CLF_File_closed(ADIO_File fd);
int ADIOI_CLF_Error(const char *myname, int err, const char *msg);
ADIOI_CLF_fs *ADIOI_CLF_Fs_get(ADIO_File fd, int *error_code);
void ADIOI_CLF_Fs_free(ADIO_File fd);
CLF_Datatype ADIOI_CLF_Bytes(ADIOI_CLF_fs * fs, MPI_Count len);

/* ad_clf_mount.c */
int ADIOI_CLF_On_mount(const char *filename);
void ADIOI_CLF_Path_of(const char *filename, char *path, char *config, size_t len);
double ADIOI_CLF_Prof_start(ADIO_File fd);
void ADIOI_CLF_Prof_end(ADIO_File fd, double t0);
void ADIOI_CLF_Prof_publish(ADIO_File fd);

/* ad_clf_lock.c */
int ADIOI_CLF_Win_create(ADIO_File fd);
void ADIOI_CLF_Win_free(ADIO_File fd);
/* Lock file bytes [start, start + len) (len 0: to the end) with type
 * F_RDLCK or F_WRLCK, waiting; 0 or a negative errno. */
int ADIOI_CLF_Lock(ADIO_File fd, int type, ADIO_Offset start, ADIO_Offset len);
int ADIOI_CLF_Unlock(ADIO_File fd);

/* ad_clf_cache.c: collective, at the end of OpenColl */
void ADIOI_CLF_Cache_open(ADIO_File fd, int *error_code);

/* ad_clf_hints.c */
void ADIOI_CLF_Report_layout(ADIO_File fd, int created);
int ADIOI_CLF_Create_with_layout(ADIO_File fd, const char *path, int flags, mode_t perm,
                                 int *created, char *msg, int msglen);
int ADIOI_CLF_Check_layout_hint(ADIO_File fd, char *msg, int msglen);

/* ad_clf_ahead.c: read-ahead of sequential reads (hint clf_read_ahead).
 * Ahead_read copies what the windows hold of [off, off + len) into buf
 * from its start and returns how many bytes (the caller reads the rest);
 * Ahead_drop forgets every window (MPI_File_sync); Ahead_free stops the
 * thread (the close, before the descriptor goes). */
int64_t ADIOI_CLF_Ahead_read(ADIO_File fd, void *buf, ADIO_Offset off, ADIO_Offset len);
void ADIOI_CLF_Ahead_drop(ADIO_File fd);
void ADIOI_CLF_Ahead_free(ADIO_File fd);

#endif /* AD_CLF_H_INCLUDED */
