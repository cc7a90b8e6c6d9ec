/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_hints.c -- clf's hints and the layout of a new file.
 *
 *   subfile_datatypes        space-separated Fortran handles (MPI_Type_c2f)
 *                            of MPI datatypes, one per subfile: the
 *                            partitioning pattern of a file being created
 *   clf_layout               the same in words, in the layout text syntax
 *                            (docs/layout-syntax.md): cyclic:k=4k,p=2
 *   use_romio_optimizations  false (default): clf's own views and
 *                            collective accesses; true: ROMIO's data
 *                            sieving and two-phase I/O on the byte view
 *   striping_unit, striping_factor, start_iodevice
 *                            a round-robin layout for a file being created
 *   clf_profile              false (default), true: MPI_File_get_info
 *                            reports clf_io_time and clf_io_calls, the
 *                            seconds spent in clf's data calls and their
 *                            number since the open (ad_clf_common.c)
 *   clf_cache                DIR: the file is copied into DIR (local disk,
 *                            seen by every process) at the open, read and
 *                            written there, and written back at the close
 *                            (ad_clf_cache.c)
 *   clf_coop_cache           false (default), true: collective writes are
 *                            kept in the processes' memory and served to
 *                            later collective reads, written to the iods
 *                            at sync, close and conflicting accesses
 *                            (ad_clf_coop.h)
 *   clf_coop_cache_size      bytes each process keeps at most (256 MiB;
 *                            k, m, g suffixes)
 *   clf_read_ahead           bytes per window read ahead of sequential
 *                            reads of a file opened read-only, two windows
 *                            at a time (k, m, g suffixes; 0: none; default
 *                            16m for a clf:// name, else 0; ad_clf_ahead.c)
 *
 * A malformed hint, or an unknown one whose name starts with clf_, makes
 * MPI_File_open fail on every process with a message saying what is
 * wrong; MPI_File_get_info reports the layout in effect, which for an
 * existing file is the one it has, as clf_layout text.
 */

#include "ad_clf.h"
#include "ad_clf_coop.h"
#include "hint_fns.h"

#include <errno.h>
#include <limits.h>

static void ADIOI_CLF_Hint_error(ADIOI_CLF_fs * fs, int error_class, const char *fmt, ...)
{
    va_list ap;

    if (fs->hint_error)
        return;
    fs->hint_error = error_class;
    va_start(ap, fmt);
    vsnprintf(fs->hint_msg, sizeof(fs->hint_msg), fmt, ap);
    va_end(ap);
}

/* true/TRUE: 1, false/FALSE: 0, else -1. */
static int ADIOI_CLF_Parse_bool(const char *s)
{
    if (!strcmp(s, "true") || !strcmp(s, "TRUE"))
        return 1;
    if (!strcmp(s, "false") || !strcmp(s, "FALSE"))
        return 0;
    return -1;
}

/* A whole decimal number in [min, INT_MAX]. */
static int ADIOI_CLF_Parse_int(const char *s, int min, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min || v > INT_MAX)
        return -1;
    *out = (int) v;
    return 0;
}

static void ADIOI_CLF_Int_hint(ADIOI_CLF_fs * fs, MPI_Info info, const char *key, int min,
                               int *out, char *value)
{
    int flag;

    ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (flag && ADIOI_CLF_Parse_int(value, min, out))
        ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                             "hint %s='%s': not an integer >= %d", key, value, min);
}

/* The clf_ hints this driver knows; clf_io_* are what get_info reports
 * with clf_profile, so that a file's info can open another file. */
static const char *const ADIOI_CLF_Known_hints[] = {
    "clf_layout", "clf_profile", "clf_io_time", "clf_io_calls", "clf_cache",
    "clf_client_cache", "clf_realms", "clf_realm_period", "clf_coop_cache",
    "clf_coop_cache_size", "clf_read_ahead", NULL
};

/* An unknown key that starts with clf_ is a mistake, not another MPI's. */
static void ADIOI_CLF_Unknown_hints(ADIOI_CLF_fs * fs, MPI_Info info)
{
    char key[MPI_MAX_INFO_KEY + 1];
    int nkeys = 0, i, k;

    MPI_Info_get_nkeys(info, &nkeys);
    for (i = 0; i < nkeys; i++) {
        if (MPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS || strncmp(key, "clf_", 4))
            continue;
        for (k = 0; ADIOI_CLF_Known_hints[k] && strcmp(key, ADIOI_CLF_Known_hints[k]); k++);
        if (!ADIOI_CLF_Known_hints[k])
            ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_KEY, "hint %s: no such clf hint (clf's are "
                                 "clf_layout, clf_profile, clf_cache, "
                                 "clf_client_cache, clf_realms, clf_coop_cache, "
                                 "clf_coop_cache_size and clf_read_ahead)", key);
    }
}

/* A size in bytes, with an optional k, m or g (binary) suffix; -1 if
 * it is not one. */
static int64_t ADIOI_CLF_Parse_size(const char *s)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || v < 1)
        return -1;
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    else if (*end == 'g' || *end == 'G')
        v <<= 30;
    else
        end--;
    end++;
    return *end ? -1 : (int64_t) v;
}

/* clf_coop_cache and clf_coop_cache_size: the processes agree on them
 * at the open (ADIOI_CLF_Coop_open) and at each later MPI_File_set_info
 * or set_view with an info (ADIOI_CLF_Coop_reset). */
static void ADIOI_CLF_Coop_hints(ADIOI_CLF_fs * fs, MPI_Info info, ADIO_File fd, char *value)
{
    int flag, b;

    ADIOI_Info_get(info, "clf_coop_cache", MPI_MAX_INFO_VAL, value, &flag);
    if (flag) {
        b = ADIOI_CLF_Parse_bool(value);
        if (b < 0)
            ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                                 "hint clf_coop_cache='%s': not true or false", value);
        else
            fs->coop_hint = b;
    }
    ADIOI_Info_get(info, "clf_coop_cache_size", MPI_MAX_INFO_VAL, value, &flag);
    if (flag) {
        int64_t v = ADIOI_CLF_Parse_size(value);

        if (v < 0)
            ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE, "hint clf_coop_cache_size='%s': not "
                                 "a size in bytes (k, m, g suffixes)", value);
        else
            fs->coop_size = v;
    }
}

/* clf_read_ahead, read at the open only; a clf:// name (a file far
 * away, most likely) is read ahead by default. */
static void ADIOI_CLF_Ahead_hint(ADIOI_CLF_fs * fs, MPI_Info info, ADIO_File fd, char *value)
{
    int flag;

    ADIOI_Info_get(info, "clf_read_ahead", MPI_MAX_INFO_VAL, value, &flag);
    if (flag) {
        int64_t v = strcmp(value, "0") ? ADIOI_CLF_Parse_size(value) : 0;

        if (v < 0 || v > (1 << 30))
            ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE, "hint clf_read_ahead='%s': not "
                                 "a size in bytes up to 1g (k, m, g suffixes), or 0", value);
        else
            fs->read_ahead = v;
    }
    /* Not given for a file whose name is not known yet: decided, and
     * reported, at the first read (ad_clf_ahead.c).  Never reported as
     * -1, which an open given this file's info back would refuse (as
     * PnetCDF does when it reopens a file). */
    if (fs->read_ahead >= 0)
        ADIOI_CLF_Ahead_report(fd);
}

/* Whether the clf_layout text is a layout; else the hint's error. */
static void ADIOI_CLF_Layout_hint(ADIOI_CLF_fs * fs, const char *text)
{
    struct clf_layout_info li;

    if (CLF_Layout_parse(text, &li)) {
        ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE, "hint clf_layout='%s': %s", text,
                             CLF_Last_error());
        return;
    }
    CLF_Layout_release(&li);
    fs->layout_hint = ADIOI_Strdup(text);
    if (fs->subfile_hint)
        ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE, "hints clf_layout and subfile_datatypes "
                             "both give the layout: give one");
}

/*
 * With no hint the cache is on, except under use_romio_optimizations=true:
 * ROMIO's two-phase I/O writes and reads the aggregators' file domains
 * through independent calls, and small domains of two aggregators
 * interleave within a stripe, so the extent locks would pass from one
 * to the other at every collective call (a 4 KiB write_all at 2
 * processes: 34-58 us without the cache, 131-224 us with it).
 */
int ADIOI_CLF_Client_cache(ADIOI_CLF_fs * fs, int cfd)
{
    int on = fs->client_cache;

    if (on < 0 || cfd < 0)
        return 0;
    if (on == ADIOI_CLF_CACHE_DEFAULT)
        on = !fs->romio_opt;
    return CLF_fcntl(cfd, CLF_FCNTL_SETCACHE, &on);
}

/* clf_client_cache, at the open or later: both descriptors follow. */
static void ADIOI_CLF_Client_cache_hint(ADIOI_CLF_fs * fs, MPI_Info info, ADIO_File fd,
                                        char *value)
{
    int flag, b;

    ADIOI_Info_get(info, "clf_client_cache", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return;
    b = ADIOI_CLF_Parse_bool(value);
    if (b < 0) {
        ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                             "hint clf_client_cache='%s': not true or false", value);
        return;
    }
    fs->client_cache = b;
    ADIOI_Info_set(fd->info, "clf_client_cache", b ? "true" : "false");
    if (ADIOI_CLF_Client_cache(fs, fs->lin_fd) || ADIOI_CLF_Client_cache(fs, fs->view_fd))
        ADIOI_CLF_Hint_error(fs, MPI_ERR_IO, "hint clf_client_cache: %s", CLF_Last_error());
}

void ADIOI_CLF_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_CLF_SETINFO";
    ADIOI_CLF_fs *fs = ADIOI_CLF_Fs_get(fd, error_code);
    int opening = fd->info == MPI_INFO_NULL, flag, had_error = fs->hint_error;
    char *value;

    *error_code = MPI_SUCCESS;
    if (opening) {
        MPI_Info_create(&fd->info);
        ADIOI_Info_set(fd->info, "use_romio_optimizations", "false");
        ADIOI_Info_set(fd->info, "clf_realms", "layout");
        fs->realms_hint = 1;
    }
    if (users_info != MPI_INFO_NULL) {
        value = ADIOI_Malloc(MPI_MAX_INFO_VAL + 1);
        ADIOI_Info_get(users_info, "use_romio_optimizations", MPI_MAX_INFO_VAL, value, &flag);
        if (flag) {
            int b = ADIOI_CLF_Parse_bool(value);

            if (b >= 0)
                fs->romio_opt = b;
            else
                ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                                     "hint use_romio_optimizations='%s': not true or false",
                                     value);
            ADIOI_Info_set(fd->info, "use_romio_optimizations",
                           fs->romio_opt ? "true" : "false");
            /* The default cache follows the path (ADIOI_CLF_Client_cache). */
            if (!opening && fs->client_cache == ADIOI_CLF_CACHE_DEFAULT) {
                if (ADIOI_CLF_Client_cache(fs, fs->lin_fd) ||
                    ADIOI_CLF_Client_cache(fs, fs->view_fd))
                    ADIOI_CLF_Hint_error(fs, MPI_ERR_IO, "clf_client_cache: %s",
                                         CLF_Last_error());
                ADIOI_Info_set(fd->info, "clf_client_cache", fs->romio_opt ? "false" : "true");
            }
        }
        /* Read at the first collective access with ROMIO's two-phase
         * code (ad_clf_realms.c); the file keeps that choice. */
        ADIOI_Info_get(users_info, "clf_realms", MPI_MAX_INFO_VAL, value, &flag);
        if (flag && fs->realms_state == ADIOI_CLF_REALMS_UNSET) {
            if (!strcmp(value, "layout") || !strcmp(value, "romio"))
                fs->realms_hint = !strcmp(value, "layout");
            else
                ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                                     "hint clf_realms='%s': not layout or romio", value);
            ADIOI_Info_set(fd->info, "clf_realms", fs->realms_hint ? "layout" : "romio");
        }
        ADIOI_Info_get(users_info, "clf_profile", MPI_MAX_INFO_VAL, value, &flag);
        if (flag) {
            int b = ADIOI_CLF_Parse_bool(value);

            if (b >= 0)
                fs->profile = b;
            else
                ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                                     "hint clf_profile='%s': not true or false", value);
            ADIOI_Info_set(fd->info, "clf_profile", fs->profile ? "true" : "false");
            if (fs->profile)
                ADIOI_CLF_Prof_publish(fd);
        }
        ADIOI_CLF_Client_cache_hint(fs, users_info, fd, value);
        ADIOI_CLF_Coop_hints(fs, users_info, fd, value);
        if (!opening && fs->lin_fd >= 0) {
            int err = ADIOI_CLF_Coop_reset(fd);

            if (err)
                ADIOI_CLF_Hint_error(fs, MPI_ERR_IO, "hint clf_coop_cache=false: writing "
                                     "what the cache kept: %s", CLF_Last_error());
        }
        /* The layout hints only matter when the file is created. */
        if (opening) {
            ADIOI_Info_get(users_info, "subfile_datatypes", MPI_MAX_INFO_VAL, value, &flag);
            if (flag)
                fs->subfile_hint = ADIOI_Strdup(value);
            ADIOI_Info_get(users_info, "clf_layout", MPI_MAX_INFO_VAL, value, &flag);
            if (flag)
                ADIOI_CLF_Layout_hint(fs, value);
            ADIOI_Info_get(users_info, "clf_cache", MPI_MAX_INFO_VAL, value, &flag);
            if (flag && value[0])
                fs->cache_dir = ADIOI_Strdup(value);
            else if (flag)
                ADIOI_CLF_Hint_error(fs, MPI_ERR_INFO_VALUE,
                                     "hint clf_cache='': give a local directory");
            ADIOI_CLF_Ahead_hint(fs, users_info, fd, value);
            ADIOI_CLF_Int_hint(fs, users_info, "striping_unit", 1, &fs->striping_unit, value);
            ADIOI_CLF_Int_hint(fs, users_info, "striping_factor", 1, &fs->striping_factor,
                               value);
            ADIOI_CLF_Int_hint(fs, users_info, "start_iodevice", 0, &fs->start_iodevice,
                               value);
        }
        ADIOI_CLF_Unknown_hints(fs, users_info);
        ADIOI_Free(value);
    }
    /* Collective buffering, data sieving...: ROMIO's own hints. */
    ADIOI_GEN_SetInfo(fd, users_info, error_code);

    /* At open, OpenColl reports it on every process; later, here. */
    if (!opening && fs->hint_error && !had_error && *error_code == MPI_SUCCESS) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           fs->hint_error, "**infoval", "%s", fs->hint_msg);
        fs->hint_error = 0;
    }
}

/* A datatype handle given by a hint: is it one? (MPI would abort.) */
static int ADIOI_CLF_Valid_type(MPI_Datatype type)
{
    MPI_Errhandler old;
    int ni, na, nt, combiner, rc;

    if (type == MPI_DATATYPE_NULL)
        return 0;
    /* Errors on datatypes go to MPI_COMM_WORLD's handler. */
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Type_get_envelope(type, &ni, &na, &nt, &combiner);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, old);
    MPI_Errhandler_free(&old);
    return rc == MPI_SUCCESS;
}

/* The MPI datatypes the subfile_datatypes hint names; 0 or -EINVAL with
 * msg.  *types (caller frees) holds *count handles, not references. */
static int ADIOI_CLF_Subfile_handles(ADIOI_CLF_fs * fs, MPI_Datatype ** types, int *count,
                                     char *msg, int msglen)
{
    char *copy, *tok, *save = NULL;
    MPI_Datatype *t = NULL;
    int n = 0, handle, err = 0;

    copy = ADIOI_Strdup(fs->subfile_hint);
    for (tok = strtok_r(copy, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
        if (ADIOI_CLF_Parse_int(tok, INT_MIN, &handle)) {
            MPL_snprintf(msg, msglen, "hint subfile_datatypes: '%s' is not a datatype handle"
                         " (MPI_Type_c2f)", tok);
            err = -EINVAL;
            break;
        }
        t = ADIOI_Realloc(t, (n + 1) * sizeof(*t));
        t[n] = MPI_Type_f2c(handle);
        if (!ADIOI_CLF_Valid_type(t[n])) {
            MPL_snprintf(msg, msglen, "hint subfile_datatypes: %s is not a valid datatype "
                         "handle", tok);
            err = -EINVAL;
            break;
        }
        n++;
    }
    ADIOI_Free(copy);
    if (!err && n == 0) {
        MPL_snprintf(msg, msglen, "hint subfile_datatypes: no datatype handle given");
        err = -EINVAL;
    }
    if (!err && fs->striping_factor > 0 && fs->striping_factor != n) {
        MPL_snprintf(msg, msglen, "hint subfile_datatypes: %d type%s for %d subfiles "
                     "(striping_factor)", n, n == 1 ? "" : "s", fs->striping_factor);
        err = -EINVAL;
    }
    if (err) {
        if (t)
            ADIOI_Free(t);
        return err;
    }
    *types = t;
    *count = n;
    return 0;
}

/*
 * The clf types of the subfile_datatypes hint; 0 or -EINVAL with msg.
 * The layout's period is the largest upper bound among the MPI types,
 * each taken as resized to [0, period) (ADIOI_CLF_Dtype_layout): users
 * write them with any lower bound and extent, as long as together they
 * select every byte of the period once.
 */
static int ADIOI_CLF_Subfile_types(ADIOI_CLF_fs * fs, CLF_Datatype ** types, int *count,
                                   char *msg, int msglen)
{
    char conv_msg[ADIOI_CLF_DTYPE_MSG_LEN];
    MPI_Datatype *mt;
    CLF_Datatype *t;
    MPI_Aint lb, extent, period = 0;
    int n = 0, i, err;

    err = ADIOI_CLF_Subfile_handles(fs, &mt, count, msg, msglen);
    if (err)
        return err;
    for (i = 0; i < *count; i++) {
        MPI_Type_get_extent(mt[i], &lb, &extent);
        if (lb + extent > period)
            period = lb + extent;
    }
    t = ADIOI_Calloc(*count, sizeof(*t));
    if (period <= 0) {
        MPL_snprintf(msg, msglen, "hint subfile_datatypes: the largest upper bound of the "
                     "datatypes is %ld: no period", (long) period);
        err = -EINVAL;
    }
    for (; !err && n < *count; n++) {
        err = ADIOI_CLF_Dtype_layout(mt[n], period, &t[n], conv_msg, sizeof(conv_msg));
        if (err)
            MPL_snprintf(msg, msglen, "hint subfile_datatypes: datatype %d (handle %d): %s",
                         n, (int) MPI_Type_c2f(mt[n]), conv_msg);
    }
    if (!err && CLF_Pattern_check(n, t)) {
        MPL_snprintf(msg, msglen, "hint subfile_datatypes: not a partitioning pattern of "
                     "period %ld (the largest upper bound): %s", (long) period,
                     CLF_Last_error());
        err = -EINVAL;
    }
    ADIOI_Free(mt);
    if (err) {
        for (i = 0; i < *count; i++)
            CLF_Type_free(&t[i]);
        ADIOI_Free(t);
        return err;
    }
    *types = t;
    return 0;
}

/* Whether subfile_datatypes makes a valid layout: 0 or -EINVAL, msg. */
int ADIOI_CLF_Check_layout_hint(ADIO_File fd, char *msg, int msglen)
{
    CLF_Datatype *types;
    int count, err;

    err = ADIOI_CLF_Subfile_types(fd->fs_ptr, &types, &count, msg, msglen);
    if (err)
        return err;
    while (count > 0)
        CLF_Type_free(&types[--count]);
    ADIOI_Free(types);
    return 0;
}

/*
 * Create the file at path with the layout its hints ask for, in clf's
 * create itself (CLF_create), or open it if it exists: another process
 * may have opened it already, and an existing file keeps its layout, as
 * ROMIO's drivers apply creation hints only at creation.  Striping hints
 * make a round-robin layout, the configured values filling in the ones
 * not given.  Returns a descriptor, or a negative errno with msg; *created
 * tells whether this call made the file.
 */
int ADIOI_CLF_Create_with_layout(ADIO_File fd, const char *path, int flags, mode_t perm,
                                 int *created, char *msg, int msglen)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct clf_create_layout want = { 0 };
    struct clf_subfiles sf = { 0 };
    struct clf_layout_info li = { 0 };
    CLF_Datatype *types = NULL;
    int count = 0, err, j, cfd;

    *created = 0;
    if (fs->layout_hint) {
        err = CLF_Layout_parse(fs->layout_hint, &li);
        if (err) {
            MPL_snprintf(msg, msglen, "hint clf_layout: %s", CLF_Last_error());
            return err;
        }
        if (li.iods[0] >= 0 && li.disp == 0) {
            /* rr with first=: round robin, placed where it says. */
            want.stripes.unit = CLF_Type_extent(li.types[0]) / li.count;
            want.stripes.count = li.count;
            want.stripes.first_iod = li.iods[0];
        } else {
            sf.disp = li.disp;
            sf.count = li.count;
            sf.types = li.types;
            want.subfiles = &sf;
        }
    } else if (fs->subfile_hint) {
        err = ADIOI_CLF_Subfile_types(fs, &types, &count, msg, msglen);
        if (err)
            return err;
        sf.count = count;
        sf.types = types;
        want.subfiles = &sf;
    } else if (fs->striping_unit <= 0 && fs->striping_factor <= 0 && fs->start_iodevice < 0) {
        /* No layout hint: the directory's default, or the configured one. */
        cfd = CLF_create(path, flags, perm, NULL, created);
        if (cfd < 0)
            MPL_snprintf(msg, msglen, "%s", CLF_Last_error());
        return cfd;
    } else {
        want.stripes.unit = fs->striping_unit > 0 ? fs->striping_unit : 0;
        want.stripes.count = fs->striping_factor > 0 ? fs->striping_factor : 0;
        want.stripes.first_iod = fs->start_iodevice;
    }
    cfd = CLF_create(path, flags, perm, &want, created);
    if (cfd < 0)
        MPL_snprintf(msg, msglen, "%s", CLF_Last_error());
    CLF_Layout_release(&li);
    for (j = 0; j < count; j++)
        CLF_Type_free(&types[j]);
    if (types)
        ADIOI_Free(types);
    return cfd;
}

/*
 * Report the layout in effect in fd->info: striping_factor (subfiles),
 * start_iodevice (the iod of the first byte after the displacement),
 * striping_unit (when the layout is round-robin), clf_layout (the layout
 * text, which the hint clf_layout takes back) and what became of the
 * layout hints: never the datatype handles, which mean nothing to
 * another process or program.
 */
void ADIOI_CLF_Report_layout(ADIO_File fd, int created)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct clf_layout_info li;
    char value[MPI_MAX_INFO_VAL + 1], *p = NULL;
    int j, rr, unit = 0, first = -1, len;
    int64_t off;

    if (CLF_fcntl(fs->lin_fd, CLF_FCNTL_GETLAYOUT, &li))
        return;
    /* Round-robin: every subfile one run of unit bytes per period. */
    rr = CLF_Type_extent(li.types[0]) % li.count == 0;
    if (rr)
        unit = (int) (CLF_Type_extent(li.types[0]) / li.count);
    for (j = 0; j < li.count; j++) {
        if (CLF_Type_unmap(li.types[j], 0, 0, &off) == 0 && off == 0)
            first = j;
        if (rr)
            rr = CLF_Type_size(li.types[j]) == unit &&
                CLF_Type_extent(li.types[j]) == CLF_Type_extent(li.types[0]) &&
                CLF_Type_unmap(li.types[j], 0, 0, &off) == 0 && off % unit == 0 &&
                CLF_Type_unmap(li.types[j], 0, unit - 1, &off) == 0 && off % unit == unit - 1;
    }

    MPL_snprintf(value, sizeof(value), "%d", li.count);
    ADIOI_Info_set(fd->info, "striping_factor", value);
    fd->hints->striping_factor = li.count;
    MPL_snprintf(value, sizeof(value), "%d", first >= 0 ? li.iods[first] : li.iods[0]);
    ADIOI_Info_set(fd->info, "start_iodevice", value);
    fd->hints->start_iodevice = first >= 0 ? li.iods[first] : li.iods[0];
    if (rr) {
        MPL_snprintf(value, sizeof(value), "%d", unit);
        ADIOI_Info_set(fd->info, "striping_unit", value);
        fd->hints->striping_unit = unit;
    } else {
        int vlen, flag;

        MPI_Info_get_valuelen(fd->info, "striping_unit", &vlen, &flag);
        if (flag)
            MPI_Info_delete(fd->info, "striping_unit");
        fd->hints->striping_unit = 0;
    }

    if (CLF_Layout_format(&li, &p) == 0 && strlen(p) < sizeof(value)) {
        ADIOI_Info_set(fd->info, "clf_layout", p);
    } else {
        /* Too long for an info value: the summary. */
        len = MPL_snprintf(value, sizeof(value), "disp %lld, %d subfiles (%s) on iods",
                           (long long) li.disp, li.count, rr ? "round-robin" : "datatypes");
        for (j = 0; j < li.count && len < (int) sizeof(value) - 16; j++)
            len += MPL_snprintf(value + len, sizeof(value) - len, "%s%d", j ? "," : " ",
                                li.iods[j]);
        ADIOI_Info_set(fd->info, "clf_layout", value);
    }
    free(p);
    CLF_Layout_release(&li);

    if (fs->subfile_hint)
        ADIOI_Info_set(fd->info, "subfile_datatypes", created ? "applied: the layout is "
                       "clf_layout" : "ignored: the file exists and keeps its layout");
}
