/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_async.c -- nonblocking accesses that overlap with computation
 * (MPI_File_iwrite_at, _iread_at, _iwrite, _iread on any view, and the
 * _all forms: ad_clf_io_strided.c and ad_clf_coll.c prepare those and
 * call ADIOI_CLF_Async_start), as RIO's asynchronous operations hide a
 * wide-area link's round trips: the access is handed to this process's
 * I/O thread, which makes the same blocking clf call as the blocking
 * access, and the request is an MPICH generalized request whose poll and
 * wait functions complete it from the thread that tests or waits (MPI
 * itself is never called from the I/O thread, so any thread level works;
 * a read into a packed copy is unpacked there too).
 *
 * The I/O thread takes accesses in the order they were issued, one at a
 * time: clf's client pipelines the pieces of each (libclf/client/io.c),
 * which is what fills a long link, and a later access never overtakes an
 * earlier one of the same process.  The file pointer moves at issue, by
 * the whole length, as ROMIO's own nonblocking accesses do.
 *
 * A blocking collective access waits for the nonblocking collective
 * ones of its file issued before it (ADIOI_CLF_Async_drain_colls): both
 * use the file's connections, and a connection carries one request at
 * a time.  Were the blocking one first on a connection, waiting at the
 * iod for the other processes, while another process's earlier
 * nonblocking one waited there for this process's, each would wait for
 * the other until the iods' timeout.
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct ADIOI_CLF_Job {
    struct ADIOI_CLF_Job *next; /* in the queue; guarded by lock */
    int cfd;                    /* clf descriptor: byte view, or the MPI view */
    void *buf;                  /* where the clf memory type's offsets start */
    ADIO_Offset offset;
    CLF_Datatype mem;           /* the memory type; owned */
    int write;
    /* A strided access (ADIOI_CLF_Async_start): its memory side, owned,
     * and for a read into a packed copy the file, the user's buffer and a
     * duplicate of the datatype, to unpack at completion in MPI's thread. */
    struct ADIOI_CLF_Mem m;
    ADIO_File fd;
    void *user_buf;
    MPI_Datatype unpack_type;   /* MPI_DATATYPE_NULL: nothing to unpack */
    /* A collective access's own request (planned path): merge owned. */
    int allv;
    int64_t allv_len;
    uint64_t tag;
    uint32_t *merge;
    /* Written by the I/O thread before done, read after it: */
    ssize_t n;                  /* bytes moved, or a negative errno */
    char msg[256];              /* CLF_Last_error() of a failure */
    int done;                   /* guarded by lock */
    int completed;              /* MPI_Grequest_complete called (MPI's thread) */
    MPI_Request req;
} ADIOI_CLF_Job;

static pthread_mutex_t ADIOI_CLF_Async_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ADIOI_CLF_Async_cond = PTHREAD_COND_INITIALIZER;  /* queue or done */
static ADIOI_CLF_Job *ADIOI_CLF_Queue_head, *ADIOI_CLF_Queue_tail;     /* guarded by lock */
static int ADIOI_CLF_Thread_started;    /* guarded by lock */
static MPIX_Grequest_class ADIOI_CLF_Greq_class;

/* The blocking clf call of the access, in the I/O thread. */
static void ADIOI_CLF_Job_run(ADIOI_CLF_Job * job)
{
    if (job->allv && job->write)
        job->n = CLF_ncwrite_at_allv(job->cfd, job->offset, job->buf, job->mem, job->allv_len,
                                     job->tag, job->merge);
    else if (job->allv)
        job->n = CLF_ncread_at_allv(job->cfd, job->offset, job->buf, job->mem, job->allv_len,
                                    job->tag, job->merge);
    else if (job->write)
        job->n = CLF_ncwrite_at(job->cfd, job->offset, job->buf, job->mem);
    else
        job->n = CLF_ncread_at(job->cfd, job->offset, job->buf, job->mem);
    if (job->n < 0)
        MPL_snprintf(job->msg, sizeof(job->msg), "%s", CLF_Last_error());
}

/* The job ran; the lock held. */
static void ADIOI_CLF_Job_finished(ADIOI_CLF_Job * job)
{
    job->done = 1;
    if (job->allv)
        ((ADIOI_CLF_fs *) job->fd->fs_ptr)->async_colls--;
}

void ADIOI_CLF_Async_drain_colls(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    pthread_mutex_lock(&ADIOI_CLF_Async_lock);
    while (fs->async_colls > 0)
        pthread_cond_wait(&ADIOI_CLF_Async_cond, &ADIOI_CLF_Async_lock);
    pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
}

/* The test hook CLF_TEST_ROMIO_ASYNC_DELAY_MS: the I/O thread sleeps
 * this long before each access (romio_async_order). */
static void ADIOI_CLF_Test_delay(void)
{
    const char *s = getenv("CLF_TEST_ROMIO_ASYNC_DELAY_MS");
    long ms = s ? strtol(s, NULL, 10) : 0;
    struct timespec ts;

    if (ms <= 0 || ms > 60000)
        return;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

static void *ADIOI_CLF_Io_thread(void *arg)
{
    (void) arg;
    for (;;) {
        ADIOI_CLF_Job *job;

        pthread_mutex_lock(&ADIOI_CLF_Async_lock);
        while (!ADIOI_CLF_Queue_head)
            pthread_cond_wait(&ADIOI_CLF_Async_cond, &ADIOI_CLF_Async_lock);
        job = ADIOI_CLF_Queue_head;
        ADIOI_CLF_Queue_head = job->next;
        if (!ADIOI_CLF_Queue_head)
            ADIOI_CLF_Queue_tail = NULL;
        pthread_mutex_unlock(&ADIOI_CLF_Async_lock);

        ADIOI_CLF_Test_delay();
        ADIOI_CLF_Job_run(job);

        pthread_mutex_lock(&ADIOI_CLF_Async_lock);
        ADIOI_CLF_Job_finished(job);
        pthread_cond_broadcast(&ADIOI_CLF_Async_cond);
        pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
    }
    return NULL;
}

static int ADIOI_CLF_Job_done(ADIOI_CLF_Job * job)
{
    int done;

    pthread_mutex_lock(&ADIOI_CLF_Async_lock);
    done = job->done;
    pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
    return done;
}

static int ADIOI_CLF_Job_complete(ADIOI_CLF_Job * job)
{
    if (job->completed)
        return MPI_SUCCESS;
    job->completed = 1;
    if (job->unpack_type != MPI_DATATYPE_NULL) {
        ADIOI_CLF_Mem_unpack(job->fd, &job->m, job->user_buf, job->unpack_type, job->n);
        MPI_Type_free(&job->unpack_type);
    }
    return MPI_Grequest_complete(job->req);
}

static int ADIOI_CLF_Query_fn(void *extra_state, MPI_Status * status)
{
    static char myname[] = "ADIOI_CLF_ASYNC";
    ADIOI_CLF_Job *job = extra_state;

    MPI_Status_set_elements_x(status, MPI_BYTE, job->n > 0 ? job->n : 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    if (job->n < 0)
        return ADIOI_CLF_Error(myname, (int) job->n, job->msg);
    return MPI_SUCCESS;
}

static int ADIOI_CLF_Free_fn(void *extra_state)
{
    ADIOI_CLF_Job *job = extra_state;

    if (job->m.type == job->mem)
        job->mem = NULL;        /* the Mem's, released below */
    CLF_Type_free(&job->mem);
    ADIOI_CLF_Mem_release(&job->m);
    if (job->merge)
        ADIOI_Free(job->merge);
    if (job->unpack_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&job->unpack_type);
    ADIOI_Free(job);
    return MPI_SUCCESS;
}

static int ADIOI_CLF_Cancel_fn(void *extra_state, int complete)
{
    (void) extra_state;
    (void) complete;
    return MPI_SUCCESS;         /* an access under way is not undone */
}

static int ADIOI_CLF_Poll_fn(void *extra_state, MPI_Status * status)
{
    ADIOI_CLF_Job *job = extra_state;

    (void) status;
    return ADIOI_CLF_Job_done(job) ? ADIOI_CLF_Job_complete(job) : MPI_SUCCESS;
}

/* Block until every one of the jobs is done (timeout: not used by MPICH's
 * waits, which pass 0), and complete them. */
static int ADIOI_CLF_Wait_fn(int count, void **states, double timeout, MPI_Status * status)
{
    int err = MPI_SUCCESS;

    (void) timeout;
    (void) status;
    pthread_mutex_lock(&ADIOI_CLF_Async_lock);
    for (int i = 0; i < count; i++)
        while (!((ADIOI_CLF_Job *) states[i])->done)
            pthread_cond_wait(&ADIOI_CLF_Async_cond, &ADIOI_CLF_Async_lock);
    pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
    for (int i = 0; i < count && err == MPI_SUCCESS; i++)
        err = ADIOI_CLF_Job_complete(states[i]);
    return err;
}

/* Hand job to the I/O thread (started at the first one); 0 or an errno. */
static int ADIOI_CLF_Enqueue(ADIOI_CLF_Job * job)
{
    int err = 0;

    pthread_mutex_lock(&ADIOI_CLF_Async_lock);
    if (!ADIOI_CLF_Thread_started) {
        pthread_attr_t attr;
        pthread_t tid;

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        err = pthread_create(&tid, &attr, ADIOI_CLF_Io_thread, NULL);
        pthread_attr_destroy(&attr);
        ADIOI_CLF_Thread_started = !err;
    }
    if (!err) {
        if (ADIOI_CLF_Queue_tail)
            ADIOI_CLF_Queue_tail->next = job;
        else
            ADIOI_CLF_Queue_head = job;
        ADIOI_CLF_Queue_tail = job;
        pthread_cond_broadcast(&ADIOI_CLF_Async_cond);
    }
    pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
    return err;
}

/* The job's generalized request, and the job to the I/O thread; without
 * a thread, the access now and the request complete. */
static void ADIOI_CLF_Job_submit(ADIOI_CLF_Job * job, MPI_Request * request)
{
    if (!ADIOI_CLF_Greq_class)
        MPIX_Grequest_class_create(ADIOI_CLF_Query_fn, ADIOI_CLF_Free_fn,
                                   ADIOI_CLF_Cancel_fn, ADIOI_CLF_Poll_fn,
                                   ADIOI_CLF_Wait_fn, &ADIOI_CLF_Greq_class);
    MPIX_Grequest_class_allocate(ADIOI_CLF_Greq_class, job, request);
    job->req = *request;
    if (ADIOI_CLF_Enqueue(job)) {
        ADIOI_CLF_Job_run(job);
        pthread_mutex_lock(&ADIOI_CLF_Async_lock);
        ADIOI_CLF_Job_finished(job);
        pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
        ADIOI_CLF_Job_complete(job);
    }
}

/*
 * A strided or collective access prepared by the caller, to the I/O
 * thread: cfd at clf offset at, the memory side *mem (taken over: *mem is
 * emptied), buf and datatype the user's (a read into a packed copy is
 * unpacked into buf at completion); allv: a collective access's own
 * request of allv->len view bytes with its tag and merge counts (merge
 * taken over), else NULL.  The caller moves the file pointer.
 */
void ADIOI_CLF_Async_start(ADIO_File fd, int cfd, ADIO_Offset at, struct ADIOI_CLF_Mem *mem,
                           void *buf, MPI_Datatype datatype, int write,
                           struct ADIOI_CLF_Allv *allv, MPI_Request * request)
{
    ADIOI_CLF_Job *job = ADIOI_Calloc(1, sizeof(*job));

    job->cfd = cfd;
    job->offset = at;
    job->write = write;
    job->m = *mem;
    memset(mem, 0, sizeof(*mem));
    job->mem = job->m.type;
    job->buf = job->m.ptr;
    job->fd = fd;
    job->user_buf = buf;
    job->unpack_type = MPI_DATATYPE_NULL;
    /* MPI lets the caller free its datatype before the wait. */
    if (!write && job->m.packed)
        MPI_Type_dup(datatype, &job->unpack_type);
    if (allv) {
        pthread_mutex_lock(&ADIOI_CLF_Async_lock);
        ((ADIOI_CLF_fs *) fd->fs_ptr)->async_colls++;
        pthread_mutex_unlock(&ADIOI_CLF_Async_lock);
        job->allv = 1;
        job->allv_len = allv->len;
        job->tag = allv->tag;
        job->merge = allv->merge;
        allv->merge = NULL;
    }
    if (write)
        fd->dirty_write = 1;
    ADIOI_CLF_Job_submit(job, request);
}

/* A nonblocking contiguous access; the blocking one where it cannot be. */
static void ADIOI_CLF_Icontig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, MPI_Request * request,
                              int write, int *error_code)
{
    static char myname[] = "ADIOI_CLF_ICONTIG";
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    MPI_Count datatype_size;
    ADIOI_CLF_Job *job;
    ADIO_Offset len;

    *error_code = MPI_SUCCESS;
    ADIOI_CLF_Coop_independent(fd);
    if (!write && file_ptr_type == ADIO_INDIVIDUAL) {
        /* The pointer ends after the last byte read, which a read past
         * the end makes less than asked: only the read itself knows. */
        ADIO_Status status;

        ADIOI_CLF_ReadContig(fd, buf, count, datatype, file_ptr_type, offset, &status,
                             error_code);
        ADIOI_CLF_Complete(fd, datatype, &status, request, error_code);
        return;
    }
    MPI_Type_size_x(datatype, &datatype_size);
    len = (ADIO_Offset) datatype_size *(ADIO_Offset) count;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    if (len == 0) {
        MPIO_Completed_request_create(&fd, 0, error_code, request);
        return;
    }
    job = ADIOI_Calloc(1, sizeof(*job));
    job->cfd = fs->lin_fd;
    job->buf = buf;
    job->offset = offset;
    job->write = write;
    job->mem = ADIOI_CLF_Dtype_bytes(len);
    if (!job->mem) {
        ADIOI_Free(job);
        *error_code = ADIOI_CLF_Error(myname, -ENOMEM, NULL);
        return;
    }
    job->unpack_type = MPI_DATATYPE_NULL;
    ADIOI_CLF_Job_submit(job, request);
    if (write)
        fd->dirty_write = 1;
    fd->fp_sys_posn = -1;       /* not known until it is done */
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += len;
}

void ADIOI_CLF_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code)
{
    ADIOI_CLF_Icontig(fd, (void *) buf, count, datatype, file_ptr_type, offset, request, 1,
                      error_code);
}

void ADIOI_CLF_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                           int *error_code)
{
    ADIOI_CLF_Icontig(fd, buf, count, datatype, file_ptr_type, offset, request, 0, error_code);
}
