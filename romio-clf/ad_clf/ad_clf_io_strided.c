/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_io_strided.c -- non-contiguous and collective accesses.
 *
 * With use_romio_optimizations=false (the default), an access is one
 * CLF_ncread_at / CLF_ncwrite_at: the MPI file view becomes a clf view
 * (converted once per MPI_File_set_view, ad_clf_dtype.c), the memory
 * datatype a clf memory type, and clf moves every byte once, straight
 * between the buffer and the subfiles that hold it.  A collective access
 * is clf's server-directed collective I/O (ad_clf_coll.c): every process
 * sends its own bytes to the iods, tagged with the operation, and each
 * iod merges all of them into ordered accesses; no exchange between
 * processes.  A collective write ends with a barrier, so that afterwards
 * every process sees every byte (clf derives sizes from the subfiles: no
 * size needs reporting).
 *
 * With use_romio_optimizations=true, ROMIO's generic data sieving and
 * two-phase code run on the byte view (ADIOI_CLF_ReadContig/WriteContig).
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"
#include "mpiu_greq.h"

#include <errno.h>

/* Recognises ROMIO's copy of the filetype that view_fd carries. */
static int ADIOI_CLF_View_keyval = MPI_KEYVAL_INVALID;

/*
 * The clf form of the current MPI view: fs->view_type tiled from
 * fs->view_disp selects the bytes of MPI's typemap of fd->filetype at
 * fd->disp, in its order.  Converted once per MPI_File_set_view (the
 * file pointers need it there, ad_clf_typemap.c), registered with clf
 * only at the first access (ADIOI_CLF_Target).  0, or -1 and *error_code
 * set when clf cannot express the filetype.
 */
int ADIOI_CLF_View(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_CLF_SETVIEW";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char msg[ADIOI_CLF_DTYPE_MSG_LEN];
    CLF_Datatype type;
    MPI_Aint window;
    void *attr;
    int flag, err;

    if (fs->view_valid && fs->view_filetype == fd->filetype && fs->view_mpi_disp == fd->disp) {
        MPI_Type_get_attr(fd->filetype, ADIOI_CLF_View_keyval, &attr, &flag);
        if (flag && attr == fs)
            return 0;
    }
    fs->view_valid = 0;
    fs->view_set = 0;

    err = ADIOI_CLF_Dtype_convert(fd->filetype, ADIOI_CLF_DTYPE_VIEW, &type, &window, msg,
                                  sizeof(msg));
    if (err) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_UNSUPPORTED_OPERATION, "**io",
                                           "the file view cannot be expressed in clf: %s "
                                           "(hint use_romio_optimizations=true accesses it "
                                           "through ROMIO)", msg);
        return -1;
    }
    CLF_Type_free(&fs->view_type);
    fs->view_type = type;
    fs->view_disp = fd->disp + window;
    fs->view_filetype = fd->filetype;
    fs->view_mpi_disp = fd->disp;
    if (ADIOI_CLF_View_keyval == MPI_KEYVAL_INVALID)
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                               &ADIOI_CLF_View_keyval, NULL);
    MPI_Type_set_attr(fd->filetype, ADIOI_CLF_View_keyval, fs);
    fs->view_valid = 1;
    return 0;
}

/*
 * Where the accesses through the current view go: *linear set when the
 * filetype is contiguous (view byte v is file byte fd->disp + v on
 * lin_fd), else view_fd with the view converted.  0, or -1 and
 * *error_code set when clf cannot express the filetype.
 */
int ADIOI_CLF_Target(ADIO_File fd, int *cfd, int *linear, int *error_code)
{
    static char myname[] = "ADIOI_CLF_SETVIEW";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct clf_view view;
    int contig, err;

    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig) {
        *cfd = fs->lin_fd;
        *linear = 1;
        return 0;
    }
    *linear = 0;
    if (ADIOI_CLF_View(fd, error_code))
        return -1;
    if (fs->view_set) {
        *cfd = fs->view_fd;
        return 0;
    }
    if (fs->view_fd < 0) {
        fs->view_fd = CLF_open(fs->clf_path, fs->clf_flags);
        if (fs->view_fd < 0) {
            *error_code = ADIOI_CLF_Error(myname, fs->view_fd, NULL);
            fs->view_fd = -1;
            return -1;
        }
        err = ADIOI_CLF_Client_cache(fs, fs->view_fd);
        if (err) {
            *error_code = ADIOI_CLF_Error(myname, err, NULL);
            return -1;
        }
    }
    view.disp = fs->view_disp;
    view.type = fs->view_type;
    err = CLF_fcntl(fs->view_fd, CLF_FCNTL_SETVIEW, &view);
    if (err) {
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
        return -1;
    }
    fs->view_set = 1;
    *cfd = fs->view_fd;
    return 0;
}

/*
 * The memory side of an access: a clf memory type over buf, or a packed
 * copy when clf cannot express the datatype or pack is set (a collective
 * access cut into rounds needs its bytes as one run).
 */
int ADIOI_CLF_Mem_init(ADIO_File fd, struct ADIOI_CLF_Mem *m, const void *buf, int count,
                       MPI_Datatype datatype, int write, int pack)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char msg[ADIOI_CLF_DTYPE_MSG_LEN];
    MPI_Count size, pos = 0;
    MPI_Aint base;
    int contig, err;

    memset(m, 0, sizeof(*m));
    MPI_Type_size_x(datatype, &size);
    m->bytes = size * count;
    if (m->bytes == 0)
        return 0;
    ADIOI_Datatype_iscontig(datatype, &contig);
    if (contig) {
        m->type = ADIOI_CLF_Bytes(fs, m->bytes);
        m->ptr = (char *) buf;
        return m->type ? 0 : -ENOMEM;
    }
    if (!pack) {
        err = ADIOI_CLF_Dtype_memtype(datatype, count, &m->type, &base, msg, sizeof(msg));
        if (err == 0) {
            m->owned = 1;
            m->ptr = (char *) buf + base;
            return 0;
        }
    }
    /* Overlapping or out-of-order memory types: MPI packs them. */
    m->packed = ADIOI_Malloc(m->bytes);
    if (!m->packed)
        return -ENOMEM;
    if (write)
        MPI_Pack_c(buf, count, datatype, m->packed, m->bytes, &pos, fd->comm);
    m->type = ADIOI_CLF_Bytes(fs, m->bytes);
    m->ptr = m->packed;
    return m->type ? 0 : -ENOMEM;
}

/*
 * After a read of n bytes into a packed copy: the n bytes to buf.  The
 * status says n bytes were read, so a last element the end of the file
 * cut is stored too, as far as it was read: MPI_Unpack moves whole
 * elements only, so that one goes through a copy of its current bytes.
 */
void ADIOI_CLF_Mem_unpack(ADIO_File fd, struct ADIOI_CLF_Mem *m, void *buf,
                          MPI_Datatype datatype, MPI_Count n)
{
    MPI_Count size, whole, rest, lb, extent, p = 0, q = 0;
    char *elem, *tmp;

    if (!m->packed || n <= 0)
        return;
    MPI_Type_size_x(datatype, &size);
    whole = n / size;
    rest = n - whole * size;
    MPI_Unpack_c(m->packed, n, &p, buf, whole, datatype, fd->comm);
    if (rest == 0)
        return;
    MPI_Type_get_extent_x(datatype, &lb, &extent);
    elem = (char *) buf + whole * extent;
    tmp = ADIOI_Malloc(size);
    if (!tmp)
        return;
    MPI_Pack_c(elem, 1, datatype, tmp, size, &q, fd->comm);
    memcpy(tmp, m->packed + whole * size, rest);
    q = 0;
    MPI_Unpack_c(tmp, size, &q, elem, 1, datatype, fd->comm);
    ADIOI_Free(tmp);
}

void ADIOI_CLF_Mem_release(struct ADIOI_CLF_Mem *m)
{
    if (m->owned)
        CLF_Type_free(&m->type);
    if (m->packed)
        ADIOI_Free(m->packed);
    m->owned = 0;
    m->packed = NULL;
}

/* The view byte where an access starts (see ADIOI_CLF_Target for linear). */
ADIO_Offset ADIOI_CLF_Start(ADIO_File fd, int file_ptr_type, ADIO_Offset offset, int linear)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    ADIO_Offset pos;
    int64_t lin;

    if (file_ptr_type == ADIO_EXPLICIT_OFFSET)
        return offset * fd->etype_size;
    if (linear)
        return fd->fp_ind - fd->disp;
    if (CLF_Type_map(fs->view_type, fs->view_disp, fd->fp_ind, &lin) == 0)
        return lin;
    /* The pointer sits in a hole (ROMIO's generic code leaves it there):
     * ROMIO counts the view bytes before it. */
    ADIOI_Get_position(fd, &pos);
    return pos * fd->etype_size;
}

/*
 * After n > 0 view bytes were written from view byte vbyte through cfd.
 * Nothing is reported: reads, MPI_File_get_size and other processes see
 * the bytes and the size as soon as the write returned.
 */
void ADIOI_CLF_Wrote(ADIO_File fd, int cfd, int linear, ADIO_Offset vbyte, ADIO_Offset n)
{
    fd->dirty_write = 1;
}

/* The individual pointer and status after n view bytes from vbyte. */
void ADIOI_CLF_Done(ADIO_File fd, int file_ptr_type, int linear, ADIO_Offset vbyte,
                    ADIO_Offset n, MPI_Datatype datatype, ADIO_Status * status)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int64_t end;

    if (file_ptr_type == ADIO_INDIVIDUAL) {
        if (linear)
            fd->fp_ind = fd->disp + vbyte + n;
        else if (CLF_Type_unmap(fs->view_type, fs->view_disp, vbyte + n, &end) == 0)
            fd->fp_ind = end;
    }
    fd->fp_sys_posn = -1;       /* no system file pointer here */
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, n);
#endif
}

/*
 * Atomic mode: lock the file bytes an access of n view bytes from view
 * byte vbyte spans -- from its first byte to its last, which the view's
 * order (file order) puts at the ends -- for reading or for writing.
 */
static int ADIOI_CLF_Access_lock(ADIO_File fd, int linear, ADIO_Offset vbyte, MPI_Count n,
                                 int write)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int type = write ? F_WRLCK : F_RDLCK;
    int64_t first, last;

    if (linear)
        return ADIOI_CLF_Lock(fd, type, fd->disp + vbyte, n);
    if (CLF_Type_unmap(fs->view_type, fs->view_disp, vbyte, &first) ||
        CLF_Type_unmap(fs->view_type, fs->view_disp, vbyte + n - 1, &last))
        return ADIOI_CLF_Lock(fd, type, 0, 0);  /* all of it, then */
    return ADIOI_CLF_Lock(fd, type, first, last - first + 1);
}

/* One access of this process: the native path. */
void ADIOI_CLF_Access(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                      int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                      int write, int *error_code)
{
    static char myname[] = "ADIOI_CLF_ACCESS";
    struct ADIOI_CLF_Mem mem;
    ADIO_Offset vbyte, at;
    int cfd, linear, err;
    ssize_t n = 0;

    *error_code = MPI_SUCCESS;
    if (ADIOI_CLF_Target(fd, &cfd, &linear, error_code))
        return;

    /* The access starts at view byte vbyte. */
    vbyte = ADIOI_CLF_Start(fd, file_ptr_type, offset, linear);
    at = linear ? fd->disp + vbyte : vbyte;

    err = ADIOI_CLF_Mem_init(fd, &mem, buf, count, datatype, write, 0);
    if (err) {
        *error_code = ADIOI_CLF_Error(myname, err, "out of memory");
        ADIOI_CLF_Mem_release(&mem);
        return;
    }
    if (mem.bytes > 0) {
        double t0;

        if (fd->atomicity && (err = ADIOI_CLF_Access_lock(fd, linear, vbyte, mem.bytes, write))) {
            *error_code = ADIOI_CLF_Error(myname, err, NULL);
            ADIOI_CLF_Mem_release(&mem);
            return;
        }
        t0 = ADIOI_CLF_Prof_start(fd);
        if (write)
            n = CLF_ncwrite_at(cfd, at, mem.ptr, mem.type);
        else
            n = CLF_ncread_at(cfd, at, mem.ptr, mem.type);
        ADIOI_CLF_Prof_end(fd, t0);
        if (write && n > 0)
            ADIOI_CLF_Wrote(fd, cfd, linear, vbyte, n);
        if (fd->atomicity)
            ADIOI_CLF_Unlock(fd);
        if (n < 0) {
            *error_code = ADIOI_CLF_Error(myname, (int) n, NULL);
            ADIOI_CLF_Mem_release(&mem);
            return;
        }
        if (!write)
            ADIOI_CLF_Mem_unpack(fd, &mem, buf, datatype, n);
    }
    ADIOI_CLF_Mem_release(&mem);
    ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, n, datatype, status);
}

/*
 * A collective access without ROMIO: clf's collective I/O, or, in atomic
 * mode, each process's own access under the file lock (a process holding
 * the lock cannot wait at the iods for one waiting for the lock).  On a
 * communicator of one process it is that process's own access: nothing
 * to merge, and a small one then goes without registering its view
 * (PnetCDF's serial tests make every access collective).
 */
static void ADIOI_CLF_Access_all(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                 int write, int *error_code)
{
    int nprocs;

    MPI_Comm_size(fd->comm, &nprocs);
    if (fd->atomicity || nprocs == 1)
        ADIOI_CLF_Access(fd, buf, count, datatype, file_ptr_type, offset, status, write,
                         error_code);
    else
        ADIOI_CLF_Coll_access(fd, buf, count, datatype, file_ptr_type, offset, status, write,
                              error_code);
}

void ADIOI_CLF_ReadStrided(ADIO_File fd, void *buf, int count,
                           MPI_Datatype datatype, int file_ptr_type,
                           ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    ADIOI_CLF_Coop_independent(fd);
    if (fs->romio_opt) {
        if (ADIOI_CLF_Realm_io(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                               error_code))
            ADIOI_GEN_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
    } else
        ADIOI_CLF_Access(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                         error_code);
}

void ADIOI_CLF_WriteStrided(ADIO_File fd, const void *buf, int count,
                            MPI_Datatype datatype, int file_ptr_type,
                            ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    ADIOI_CLF_Coop_independent(fd);
    if (fs->romio_opt) {
        if (ADIOI_CLF_Realm_io(fd, (void *) buf, count, datatype, file_ptr_type, offset,
                               status, 1, error_code)) {
            fs->romio_write++;
            ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
            fs->romio_write--;
        }
    } else
        ADIOI_CLF_Access(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                         error_code);
}

void ADIOI_CLF_ReadStridedColl(ADIO_File fd, void *buf, int count,
                               MPI_Datatype datatype, int file_ptr_type,
                               ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    /* The cooperative cache first, with either path behind it. */
    if (ADIOI_CLF_Coop_access(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                              error_code))
        return;
    if (fs->romio_opt) {
        /* A read the cache passed on meets no kept byte (ad_clf_coop_coll.c):
         * the aggregators keep what they keep. */
        if (fs->coop)
            fs->coop->in_coll = 1;
        ADIOI_CLF_Realms_coll(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                              error_code);
        if (fs->coop)
            fs->coop->in_coll = 0;
    } else
        ADIOI_CLF_Access_all(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                             error_code);
}

void ADIOI_CLF_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Status * status, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    MPI_Count size;

    if (ADIOI_CLF_Coop_access(fd, (void *) buf, count, datatype, file_ptr_type, offset,
                              status, 1, error_code))
        return;                 /* kept: the next collective access orders it */
    if (fs->romio_opt)
        ADIOI_CLF_Realms_coll(fd, (void *) buf, count, datatype, file_ptr_type, offset, status,
                              1, error_code);
    else
        ADIOI_CLF_Access_all(fd, (void *) buf, count, datatype, file_ptr_type, offset, status,
                             1, error_code);
    /* Everyone's bytes are visible to everyone when it returns (ROMIO's
     * aggregators may still be writing for a process that returned);
     * waited for without holding the core (ad_clf_wait.c). */
    MPI_Type_size_x(datatype, &size);
    ADIOI_CLF_Barrier(fd->comm, (ADIO_Offset) size * count);
}

/*
 * Nonblocking accesses done at once (atomic mode, ROMIO's optimisations,
 * accesses too large for one collective request), with the bytes moved
 * counted in bytes: a read that the end of the file cuts inside an
 * element has no count of elements (MPI_Get_count is MPI_UNDEFINED), and
 * ROMIO's FAKE variants then complete the request with a negative size,
 * which aborts the job.
 */
void ADIOI_CLF_Complete(ADIO_File fd, MPI_Datatype datatype, ADIO_Status * status,
                        ADIO_Request * request, int *error_code)
{
    MPI_Count nbytes = 0;

    if (*error_code == MPI_SUCCESS)
        MPI_Get_elements_x(status, MPI_BYTE, &nbytes);
    MPIO_Completed_request_create(&fd, nbytes, error_code, request);
}

/*
 * One nonblocking access of this process through the MPI view: prepared
 * here, moved by the I/O thread (ad_clf_async.c) while the caller goes
 * on; the file pointer moves at issue.  Atomic mode holds a lock across
 * the access, and a read through the individual pointer leaves it after
 * the last byte read, which a read past the end makes less than asked
 * (ADIOI_CLF_Done): both are done at once.
 */
static void ADIOI_CLF_Iaccess(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int write, int *error_code)
{
    static char myname[] = "ADIOI_CLF_IACCESS";
    struct ADIOI_CLF_Mem mem;
    ADIO_Status status;
    ADIO_Offset vbyte, at;
    int cfd, linear, err;

    *error_code = MPI_SUCCESS;
    if (fd->atomicity || (!write && file_ptr_type == ADIO_INDIVIDUAL)) {
        ADIOI_CLF_Access(fd, buf, count, datatype, file_ptr_type, offset, &status, write,
                         error_code);
        ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
        return;
    }
    if (ADIOI_CLF_Target(fd, &cfd, &linear, error_code))
        return;
    vbyte = ADIOI_CLF_Start(fd, file_ptr_type, offset, linear);
    at = linear ? fd->disp + vbyte : vbyte;
    err = ADIOI_CLF_Mem_init(fd, &mem, buf, count, datatype, write, 0);
    if (err) {
        *error_code = ADIOI_CLF_Error(myname, err, "out of memory");
        ADIOI_CLF_Mem_release(&mem);
        return;
    }
    ADIOI_CLF_Done(fd, file_ptr_type, linear, vbyte, mem.bytes, datatype, NULL);
    if (mem.bytes == 0) {
        ADIOI_CLF_Mem_release(&mem);
        MPIO_Completed_request_create(&fd, 0, error_code, request);
        return;
    }
    ADIOI_CLF_Async_start(fd, cfd, at, &mem, buf, datatype, write, NULL, request);
}

void ADIOI_CLF_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    ADIO_Status status;

    ADIOI_CLF_Coop_independent(fd);
    if (!fs->romio_opt) {
        ADIOI_CLF_Iaccess(fd, buf, count, datatype, file_ptr_type, offset, request, 0,
                          error_code);
        return;
    }
    ADIOI_CLF_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, &status,
                          error_code);
    ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
}

void ADIOI_CLF_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    ADIOI_CLF_Coop_independent(fd);
    if (!fs->romio_opt)
        ADIOI_CLF_Iaccess(fd, (void *) buf, count, datatype, file_ptr_type, offset, request,
                          1, error_code);
    else
        ADIOI_FAKE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                 error_code);
}

/* The nonblocking forms of ADIOI_CLF_Access_all. */
static void ADIOI_CLF_Iaccess_all(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                  int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int write, int *error_code)
{
    ADIO_Status status;
    int nprocs;

    MPI_Comm_size(fd->comm, &nprocs);
    if (!write && file_ptr_type == ADIO_INDIVIDUAL) {
        /* As ADIOI_CLF_Iaccess: the pointer depends on what is read. */
        ADIOI_CLF_Access_all(fd, buf, count, datatype, file_ptr_type, offset, &status, 0,
                             error_code);
        ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
        return;
    }
    if (fd->atomicity || nprocs == 1)
        ADIOI_CLF_Iaccess(fd, buf, count, datatype, file_ptr_type, offset, request, write,
                          error_code);
    else
        ADIOI_CLF_Coll_iaccess(fd, buf, count, datatype, file_ptr_type, offset, request, write,
                               error_code);
}

void ADIOI_CLF_IreadStridedColl(ADIO_File fd, void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type,
                                ADIO_Offset offset, ADIO_Request * request, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (fs->romio_opt && !(fs->coop && fs->coop->on)) {
        ADIOI_GEN_IreadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, request,
                                   error_code);
        return;
    }
    if (fs->coop && fs->coop->on) {
        /* Through the cooperative cache: done at once. */
        ADIO_Status status;

        ADIOI_CLF_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                  error_code);
        ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
        return;
    }
    ADIOI_CLF_Iaccess_all(fd, buf, count, datatype, file_ptr_type, offset, request, 0,
                          error_code);
}

/*
 * With use_romio_optimizations, done at once: ROMIO's nonblocking
 * two-phase write would complete on a process before the aggregators
 * have reported the size of what they wrote for it, and its next read
 * would stop short.  Without: each process's bytes are in the file when
 * its request completes; another process sees them after both completed
 * and synchronised, as MPI's consistency rules ask.
 */
void ADIOI_CLF_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type,
                                 ADIO_Offset offset, ADIO_Request * request, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    ADIO_Status status;

    if (!fs->romio_opt && !(fs->coop && fs->coop->on)) {
        ADIOI_CLF_Iaccess_all(fd, (void *) buf, count, datatype, file_ptr_type, offset,
                              request, 1, error_code);
        return;
    }
    ADIOI_CLF_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                               error_code);
    ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
}
