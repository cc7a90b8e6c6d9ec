/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_common.c -- initialisation, error conversion and per-file state.
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"
#include "glue.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/*
 * libclf's lifetime in this process.  MPI_Finalize deletes MPI_COMM_SELF's
 * attributes in the reverse order of their setting, so a library that set
 * its own before our first open (HDF5 closes the files a program left
 * open from there) runs after our callback: libclf must outlive it, and
 * is finalized by whichever comes last, the callback or the close of the
 * last clf file.  The callback frees the shared-pointer windows of the
 * files still open, which MPI would otherwise find in use at the end
 * (UCX aborts): collectively, in the order of the opens, as every
 * process of each file's communicator opened them.
 */
static int ADIOI_CLF_Finalize_keyval = MPI_KEYVAL_INVALID;
static int ADIOI_CLF_Initialized;       /* CLF_init done, CLF_finalize not yet */
static int ADIOI_CLF_Finalizing;        /* MPI_Finalize has begun */
static ADIO_File *ADIOI_CLF_Open_files; /* MPI files open on clf, in open order */
static int ADIOI_CLF_Nopen, ADIOI_CLF_Open_max;
/* The configuration libclf was initialised with: a clf mount's, or ""
 * for $CLF_CONFIG or libclf's default; ADIOI_CLF_Env_config is the
 * former's real path. */
static char ADIOI_CLF_Config[PATH_MAX + 2], ADIOI_CLF_Env_config[PATH_MAX + 2];

static int ADIOI_CLF_Finalize_cb(MPI_Comm comm, int keyval, void *attr_val, void *extra)
{
    int i;

    ADIOI_CLF_Finalizing = 1;
    for (i = 0; i < ADIOI_CLF_Nopen; i++)
        ADIOI_CLF_Win_free(ADIOI_CLF_Open_files[i]);
    if (ADIOI_CLF_Nopen == 0 && ADIOI_CLF_Initialized) {
        CLF_finalize();
        ADIOI_CLF_Initialized = 0;
    }
    MPI_Comm_free_keyval(&ADIOI_CLF_Finalize_keyval);
    return MPI_SUCCESS;
}

/* The instance of config ("": $CLF_CONFIG or the default) is the one
 * libclf is connected to, or may be.  For a clf://HOST:PORT name libclf
 * says, at the open (its instance's metad, or -EXDEV). */
static int ADIOI_CLF_Same_instance(const char *config)
{
    if (!config[0] || !strcmp(config, ADIOI_CLF_Config) || !strncmp(config, "clf://", 6))
        return 1;
    /* A mount of the instance $CLF_CONFIG names. */
    return !ADIOI_CLF_Config[0] && !strcmp(config, ADIOI_CLF_Env_config);
}

/*
 * Connect to the clf instance of config (a clf mount's configuration
 * file; "" or NULL: $CLF_CONFIG, or libclf's defaults) at the first use,
 * and disconnect in MPI_Finalize, when MPI_COMM_SELF's attributes are
 * deleted, or at the last close after that.  A process works with one
 * instance.  Returns 0 or sets *error_code.
 */
int ADIOI_CLF_Init(const char *myname, const char *config, int *error_code)
{
    const char *msg, *env;
    char real[PATH_MAX];
    int err;

    if (!config)
        config = "";

    if (!MPIO_CLF_Version_ok(&msg)) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                           __LINE__, MPI_ERR_IO, "**io", "**io %s", msg);
        return -1;
    }
    if (ADIOI_CLF_Initialized) {
        if (ADIOI_CLF_Same_instance(config))
            return 0;
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                           __LINE__, MPI_ERR_IO, "**io", "**io %s",
                                           "clf: the file is on a mount of another instance "
                                           "than this process uses (one instance per "
                                           "process: set CLF_CONFIG to the mount's "
                                           "configuration)");
        return -1;
    }
    err = CLF_init(config[0] ? config : NULL);
    if (err < 0) {
        *error_code = ADIOI_CLF_Error(myname, err, NULL);
        return -1;
    }
    ADIOI_CLF_Initialized = 1;
    MPL_snprintf(ADIOI_CLF_Config, sizeof(ADIOI_CLF_Config), "%s", config);
    env = getenv("CLF_CONFIG");
    if (env && realpath(env, real))
        MPL_snprintf(ADIOI_CLF_Env_config, sizeof(ADIOI_CLF_Env_config), "%s", real);
    else
        ADIOI_CLF_Env_config[0] = '\0';
    /* Opened while MPI_Finalize runs: the last close finalizes. */
    if (!ADIOI_CLF_Finalizing) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ADIOI_CLF_Finalize_cb,
                               &ADIOI_CLF_Finalize_keyval, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, ADIOI_CLF_Finalize_keyval, NULL);
    }
    return 0;
}

/* fd, an MPI file on clf, was opened (MPI_File_open, on this process). */
void ADIOI_CLF_File_opened(ADIO_File fd)
{
    if (ADIOI_CLF_Nopen == ADIOI_CLF_Open_max) {
        ADIOI_CLF_Open_max = ADIOI_CLF_Open_max ? 2 * ADIOI_CLF_Open_max : 16;
        ADIOI_CLF_Open_files = ADIOI_Realloc(ADIOI_CLF_Open_files,
                                             ADIOI_CLF_Open_max * sizeof(ADIO_File));
    }
    ADIOI_CLF_Open_files[ADIOI_CLF_Nopen++] = fd;
}

/* fd was closed: after MPI_Finalize began, the last one takes libclf. */
void ADIOI_CLF_File_closed(ADIO_File fd)
{
    int i;

    for (i = 0; i < ADIOI_CLF_Nopen && ADIOI_CLF_Open_files[i] != fd; i++);
    if (i == ADIOI_CLF_Nopen)
        return;
    memmove(&ADIOI_CLF_Open_files[i], &ADIOI_CLF_Open_files[i + 1],
            (ADIOI_CLF_Nopen - i - 1) * sizeof(ADIO_File));
    ADIOI_CLF_Nopen--;
    if (ADIOI_CLF_Nopen == 0 && ADIOI_CLF_Finalizing && ADIOI_CLF_Initialized) {
        CLF_finalize();
        ADIOI_CLF_Initialized = 0;
    }
}

/*
 * The one conversion from clf's negative errno to an MPI error code: the
 * class follows the errno, the message is clf's (CLF_Last_error()) unless
 * msg gives one.
 */
int ADIOI_CLF_Error(const char *myname, int err, const char *msg)
{
    int error_class;
    const char *generic;

    switch (-err) {
        case ENOENT:
            error_class = MPI_ERR_NO_SUCH_FILE;
            generic = "**filenoexist";
            break;
        case EEXIST:
            error_class = MPI_ERR_FILE_EXISTS;
            generic = "**fileexist";
            break;
        case EACCES:
        case EPERM:
            error_class = MPI_ERR_ACCESS;
            generic = "**fileaccess";
            break;
        case ENOSPC:
            error_class = MPI_ERR_NO_SPACE;
            generic = "**filenospace";
            break;
        case EDQUOT:
            error_class = MPI_ERR_QUOTA;
            generic = "**filequota";
            break;
        case EROFS:
            error_class = MPI_ERR_READ_ONLY;
            generic = "**filerdonly";
            break;
        case ENAMETOOLONG:
        case ENOTDIR:
        case EISDIR:
            error_class = MPI_ERR_BAD_FILE;
            generic = "**filename";
            break;
        case EBUSY:
            error_class = MPI_ERR_FILE_IN_USE;
            generic = "**fileinuse";
            break;
        case ENOMEM:
            error_class = MPI_ERR_NO_MEM;
            generic = "**nomem";
            break;
        case ENOTSUP:
        case ENOSYS:
            error_class = MPI_ERR_UNSUPPORTED_OPERATION;
            generic = "**notimpl";
            break;
        default:
            /* EHOSTDOWN, ETIMEDOUT, EIO, EINVAL, ...: the message says which */
            error_class = MPI_ERR_IO;
            generic = "**io";
            break;
    }
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                error_class, generic, "%s", msg ? msg : CLF_Last_error());
}

ADIOI_CLF_fs *ADIOI_CLF_Fs_get(ADIO_File fd, int *error_code)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (!fs) {
        fs = ADIOI_Calloc(1, sizeof(*fs));
        fs->lin_fd = fs->view_fd = -1;
        fs->win = MPI_WIN_NULL;
        fs->start_iodevice = -1;
        fs->cache_fd = -1;
        /* MPI-IO's independent small accesses are cached unless the
         * hint says otherwise (docs/small-io.md, "On by default for
         * MPI-IO"): MPI promises nothing of a write's durability before
         * MPI_File_sync or the close, and clf's visibility rule holds
         * under the cache. */
        fs->client_cache = ADIOI_CLF_CACHE_DEFAULT;
        fs->read_ahead = -1;    /* not given: ad_clf_ahead.c decides */
        fd->fs_ptr = fs;
    }
    return fs;
}

void ADIOI_CLF_Fs_free(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (!fs)
        return;
    ADIOI_CLF_Coop_free(fd);
    CLF_Type_free(&fs->view_type);
    CLF_Type_free(&fs->bytes_type);
    /* ADIOI_Free refuses NULL. */
    if (fs->subfile_hint)
        ADIOI_Free(fs->subfile_hint);
    if (fs->clf_path)
        ADIOI_Free(fs->clf_path);
    if (fs->layout_hint)
        ADIOI_Free(fs->layout_hint);
    if (fs->cache_dir)
        ADIOI_Free(fs->cache_dir);
    ADIOI_Free(fs);
    fd->fs_ptr = NULL;
}

/* A contiguous memory type of len bytes, cached: most accesses repeat. */
CLF_Datatype ADIOI_CLF_Bytes(ADIOI_CLF_fs * fs, MPI_Count len)
{
    if (fs->bytes_type && fs->bytes_len == len)
        return fs->bytes_type;
    CLF_Type_free(&fs->bytes_type);
    fs->bytes_type = ADIOI_CLF_Dtype_bytes(len);
    fs->bytes_len = fs->bytes_type ? len : 0;
    return fs->bytes_type;
}

/*
 * Profiling, with the hint clf_profile=true: the time spent in clf's data
 * calls (ROMIO's contiguous accesses, which its two-phase aggregators
 * make, and the driver's own view and collective accesses), reported by
 * MPI_File_get_info as clf_io_time (seconds) and clf_io_calls.  Whatever
 * else a collective access takes -- ROMIO's exchange of data between
 * processes, above all -- is the rest of its time.
 */
double ADIOI_CLF_Prof_start(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    return fs->profile ? MPI_Wtime() : 0;
}

void ADIOI_CLF_Prof_end(ADIO_File fd, double t0)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (!fs->profile)
        return;
    fs->io_time += MPI_Wtime() - t0;
    fs->io_calls++;
    ADIOI_CLF_Prof_publish(fd);
}

/* MPI_File_get_info copies fd->info: the figures live there. */
void ADIOI_CLF_Prof_publish(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char value[64];

    MPL_snprintf(value, sizeof(value), "%.9f", fs->io_time);
    ADIOI_Info_set(fd->info, "clf_io_time", value);
    MPL_snprintf(value, sizeof(value), "%lld", fs->io_calls);
    ADIOI_Info_set(fd->info, "clf_io_calls", value);
}
