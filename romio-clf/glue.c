/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * glue.c -- ROMIO's MPICH glue, rebuilt on what Debian's libmpich exports.
 *
 * Inside MPICH, ROMIO's mpi-io/glue/mpich calls libmpich internals
 * (MPIR_Err_create_code_valist, MPIR_Get_file_error_routine, MPIR_Ext_*,
 * MPL).  Debian's libmpich.so exports none of them, so libromio-clf.so
 * carries this replacement instead, built on the exported
 * MPIR_Err_create_code and the public error-handler calls.  The error
 * handlers themselves stay in libmpich (MPI_File_set_errhandler and
 * friends): they read the err_handler field of our ADIOI_FileD, which is
 * why libromio-clf.so must come from the very ROMIO that libmpich was
 * built with (checked here at run time and by build-romio.sh).
 */

#include "mpioimpl.h"
#include "adio_extern.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "glue.h"

/* The variadic entry point that libmpich exports. */
int MPIR_Err_create_code(int lastcode, int fatal, const char fcname[], int line,
                         int error_class, const char generic_msg[], const char specific_msg[],
                         ...);

/* Called by ROMIO's iscontig.c, which declares it itself. */
void MPIR_Datatype_iscontig(MPI_Datatype datatype, int *flag);

/* 0: not checked yet, 1: same MPICH, -1: another MPICH (see glue.h). */
static int version_state;
static char version_msg[256];

int MPIO_CLF_Version_ok(const char **msg)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    const char *p, *want = CLF_ROMIO_MPICH_VERSION;
    size_t n = strlen(want);
    int len = 0;

    if (version_state == 0) {
        version_state = -1;
        /* Allowed before MPI_Init. */
        if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS)
            lib[0] = '\0';
        p = strstr(lib, "MPICH Version:");
        if (p) {
            p += strlen("MPICH Version:");
            p += strspn(p, " \t");
            if (strncmp(p, want, n) == 0 && strchr(" \t\r\n", p[n]) && p[n] != '\0')
                version_state = 1;
        }
        if (version_state < 0)
            snprintf(version_msg, sizeof(version_msg),
                     "libromio-clf.so was built from the ROMIO of MPICH %s (Debian %s) "
                     "but runs with another MPICH; rebuild it", want, CLF_ROMIO_DEBIAN_VERSION);
    }
    if (msg)
        *msg = version_msg;
    return version_state > 0;
}

/*
 * MPI_File_set_errhandler(MPI_FILE_NULL, e) lands in libmpich's copy of
 * ROMIO's default handler, not in ours: read it back from there whenever
 * a file is created, so that new files inherit what the program set.
 * The reference MPI_File_get_errhandler takes becomes the new file's:
 * MPI_File_close releases one (MPICH's own ROMIO forgets to take it, and
 * a user handler is then freed once too often).
 */
static void sync_default_errhandler(void)
{
    MPI_Errhandler e;
    int initialized = 0, finalized = 0;

    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return;
    if (MPI_File_get_errhandler(MPI_FILE_NULL, &e) != MPI_SUCCESS)
        return;
    ADIOI_DFLT_ERR_HANDLER = e;
}

MPI_File MPIO_File_create(int size)
{
    if (!MPIO_CLF_Version_ok(NULL)) {
        /* MPI_File_open can only say "out of memory" from here. */
        FPRINTF(stderr, "romio-clf: %s\n", version_msg);
        return MPI_FILE_NULL;
    }
    sync_default_errhandler();
    return (MPI_File) ADIOI_Calloc(size, 1);
}

ADIO_File MPIO_File_resolve(MPI_File mpi_fh)
{
    return mpi_fh;
}

void MPIO_File_free(MPI_File * mpi_fh)
{
    ADIOI_Free(*mpi_fh);
    *mpi_fh = MPI_FILE_NULL;
}

/* Fortran handles are indices into ADIOI_Ftable (pointers do not fit). */
MPI_File MPIO_File_f2c(MPI_Fint fh)
{
    if (fh <= 0 || fh > ADIOI_Ftable_ptr)
        return MPI_FILE_NULL;
    return ADIOI_Ftable[fh];
}

MPI_Fint MPIO_File_c2f(MPI_File fh)
{
    int i;

    if (fh == MPI_FILE_NULL || fh->cookie != ADIOI_FILE_COOKIE)
        return (MPI_Fint) 0;
    if (fh->fortran_handle != -1)
        return fh->fortran_handle;
    if (!ADIOI_Ftable) {
        ADIOI_Ftable_max = 1024;
        ADIOI_Ftable = (MPI_File *) ADIOI_Malloc(ADIOI_Ftable_max * sizeof(MPI_File));
        ADIOI_Ftable_ptr = 0;   /* 0 is MPI_FILE_NULL's */
        for (i = 0; i < ADIOI_Ftable_max; i++)
            ADIOI_Ftable[i] = MPI_FILE_NULL;
    }
    if (ADIOI_Ftable_ptr == ADIOI_Ftable_max - 1) {
        ADIOI_Ftable = (MPI_File *) ADIOI_Realloc(ADIOI_Ftable,
                                                  (ADIOI_Ftable_max + 1024) * sizeof(MPI_File));
        for (i = ADIOI_Ftable_max; i < ADIOI_Ftable_max + 1024; i++)
            ADIOI_Ftable[i] = MPI_FILE_NULL;
        ADIOI_Ftable_max += 1024;
    }
    ADIOI_Ftable_ptr++;
    ADIOI_Ftable[ADIOI_Ftable_ptr] = fh;
    fh->fortran_handle = ADIOI_Ftable_ptr;
    return (MPI_Fint) ADIOI_Ftable_ptr;
}

/* The kinds of argument an MPICH message format takes. */
enum glue_arg_kind { GLUE_INT, GLUE_LL, GLUE_PTR };

union glue_arg {
    int i;
    long long ll;
    const void *p;
};

/*
 * Parse the % directives of an MPICH instance message ("**io %s"):
 * %d %i %x take an int, %L %X %c a long long (MPI_Count), the others
 * (%s %p and MPICH's handle forms) a pointer-sized value.  Returns the
 * number of arguments, or -1 beyond max or for a directive we do not know.
 */
static int parse_format(const char *fmt, enum glue_arg_kind *kinds, int max)
{
    int n = 0;

    for (; *fmt; fmt++) {
        if (*fmt != '%')
            continue;
        fmt++;
        if (*fmt == '%')
            continue;
        if (n == max)
            return -1;
        switch (*fmt) {
            case 'd':
            case 'i':
            case 'x':
                kinds[n++] = GLUE_INT;
                break;
            case 'L':
            case 'X':
            case 'c':
                kinds[n++] = GLUE_LL;
                break;
            case 's':
            case 'p':
            case 'F':
                kinds[n++] = GLUE_PTR;
                break;
            default:
                return -1;
        }
    }
    return n;
}

#define GLUE_CALL(...) \
    MPIR_Err_create_code(lastcode, fatal, fcname, line, error_class, generic_msg, \
                         specific_msg, __VA_ARGS__)

/* Pass one argument of the right type, then the second one. */
static int create_with_2(int lastcode, int fatal, const char fcname[], int line,
                         int error_class, const char generic_msg[], const char specific_msg[],
                         enum glue_arg_kind k0, union glue_arg a0,
                         enum glue_arg_kind k1, union glue_arg a1)
{
    switch (k0 * 3 + k1) {
        case GLUE_INT * 3 + GLUE_INT:
            return GLUE_CALL(a0.i, a1.i);
        case GLUE_INT * 3 + GLUE_LL:
            return GLUE_CALL(a0.i, a1.ll);
        case GLUE_INT * 3 + GLUE_PTR:
            return GLUE_CALL(a0.i, a1.p);
        case GLUE_LL * 3 + GLUE_INT:
            return GLUE_CALL(a0.ll, a1.i);
        case GLUE_LL * 3 + GLUE_LL:
            return GLUE_CALL(a0.ll, a1.ll);
        case GLUE_LL * 3 + GLUE_PTR:
            return GLUE_CALL(a0.ll, a1.p);
        case GLUE_PTR * 3 + GLUE_INT:
            return GLUE_CALL(a0.p, a1.i);
        case GLUE_PTR * 3 + GLUE_LL:
            return GLUE_CALL(a0.p, a1.ll);
        default:
            return GLUE_CALL(a0.p, a1.p);
    }
}

/*
 * MPIR_Err_create_code takes "...", not a va_list, so the arguments are
 * read here by the format's directives and passed on with their types.
 * ROMIO's messages take at most two; a longer one keeps its generic part.
 */
int MPIO_Err_create_code(int lastcode, int fatal, const char fcname[],
                         int line, int error_class, const char generic_msg[],
                         const char specific_msg[], ...)
{
    enum glue_arg_kind kinds[2];
    union glue_arg args[2];
    va_list ap;
    int n, i;

    n = specific_msg ? parse_format(specific_msg, kinds, 2) : 0;
    if (n < 0)
        return MPIR_Err_create_code(lastcode, fatal, fcname, line, error_class,
                                    generic_msg, NULL);
    va_start(ap, specific_msg);
    for (i = 0; i < n; i++) {
        if (kinds[i] == GLUE_INT)
            args[i].i = va_arg(ap, int);
        else if (kinds[i] == GLUE_LL)
            args[i].ll = va_arg(ap, long long);
        else
            args[i].p = va_arg(ap, const void *);
    }
    va_end(ap);

    if (n == 0)
        return MPIR_Err_create_code(lastcode, fatal, fcname, line, error_class,
                                    generic_msg, specific_msg);
    if (n == 2)
        return create_with_2(lastcode, fatal, fcname, line, error_class, generic_msg,
                             specific_msg, kinds[0], args[0], kinds[1], args[1]);
    switch (kinds[0]) {
        case GLUE_INT:
            return GLUE_CALL(args[0].i);
        case GLUE_LL:
            return GLUE_CALL(args[0].ll);
        default:
            return GLUE_CALL(args[0].p);
    }
}

/*
 * libmpich's MPI_File_call_errhandler reads the handler of the file (or
 * the default one for MPI_FILE_NULL) and calls it in the right language,
 * aborting for MPI_ERRORS_ARE_FATAL: exactly what ROMIO wants here.
 */
int MPIO_Err_return_file(MPI_File mpi_fh, int error_code)
{
    if (error_code != MPI_SUCCESS)
        MPI_File_call_errhandler(mpi_fh, error_code);
    return error_code;
}

int MPIO_Err_return_comm(MPI_Comm mpi_comm, int error_code)
{
    MPI_Comm_call_errhandler(mpi_comm, error_code);
    return error_code;
}

static int run_of(MPI_Datatype type, MPI_Aint * start, MPI_Count * len);
static int tiles(MPI_Datatype type);

/*
 * Whether blocks of copies of child, in order, make one run, and where
 * it ends (*end; *started says whether it began): block b is blen(b)
 * copies of child at byte disp(b) * unit + k * extent(child).  The
 * copies of a block touch when child is one run as long as its extent;
 * each non-empty block must start where the previous one ended.
 */
static int blocks_run(MPI_Datatype child, int n, const int *blens, int blen_all,
                      const MPI_Aint * disps, MPI_Aint unit, int *started, MPI_Aint * end)
{
    MPI_Aint cstart, lb, extent;
    MPI_Count clen;
    int b, copies = 0;

    /* No copy of child, whatever it is: nothing to add. */
    for (b = 0; b < n && !copies; b++)
        copies = (blens ? blens[b] : blen_all) > 0;
    if (!copies)
        return 1;
    if (!run_of(child, &cstart, &clen))
        return 0;
    if (clen == 0)
        return 1;
    MPI_Type_get_extent(child, &lb, &extent);
    for (b = 0; b < n; b++) {
        int blen = blens ? blens[b] : blen_all;

        if (blen == 0)
            continue;
        if (blen > 1 && extent != clen)
            return 0;
        if (*started && disps[b] * unit + cstart != *end)
            return 0;
        *started = 1;
        *end = disps[b] * unit + cstart + (MPI_Aint) blen *clen;
    }
    return 1;
}

/*
 * Whether one copy of type selects one run of bytes, in typemap order;
 * then *start is its first byte and *len its length (the type's size).
 * Subarray and darray place copies of their element in increasing order:
 * one of them is a run when its element tiles and its true extent has no
 * hole.
 */
static int run_of(MPI_Datatype type, MPI_Aint * start, MPI_Count * len)
{
    int nints, naddrs, ntypes, combiner, *ints = NULL, i, run = 0, started = 0;
    MPI_Aint *addrs = NULL, true_lb, true_extent, lb, extent = 0, *d = NULL, end = 0;
    MPI_Datatype *types = NULL;
    MPI_Count size;

    MPI_Type_size_x(type, &size);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    *start = true_lb;
    *len = size;
    /* A hole or an overlap in the true extent: no run. */
    if (size != 0 && size != true_extent)
        return 0;
    MPI_Type_get_envelope(type, &nints, &naddrs, &ntypes, &combiner);
    if (size == 0 || combiner == MPI_COMBINER_NAMED)
        return 1;
    ints = ADIOI_Malloc((nints + 1) * sizeof(int));
    addrs = ADIOI_Malloc((naddrs + 1) * sizeof(MPI_Aint));
    types = ADIOI_Malloc((ntypes + 1) * sizeof(MPI_Datatype));
    d = ADIOI_Malloc((nints + 2) * sizeof(MPI_Aint));
    MPI_Type_get_contents(type, nints, naddrs, ntypes, ints, addrs, types);
    if (ntypes > 0)
        MPI_Type_get_extent(types[0], &lb, &extent);

    switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
            run = run_of(types[0], start, len);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            /* One block of count copies. */
            d[0] = 0;
            run = blocks_run(types[0], 1, NULL, ints[0], d, 1, &started, &end);
            break;
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
            /* Equal gaps: the first two blocks tell. */
            d[0] = 0;
            d[1] = combiner == MPI_COMBINER_VECTOR ? (MPI_Aint) ints[2] * extent : addrs[0];
            run = blocks_run(types[0], ints[0] < 2 ? ints[0] : 2, NULL, ints[1], d, 1,
                             &started, &end);
            break;
        case MPI_COMBINER_INDEXED:
            for (i = 0; i < ints[0]; i++)
                d[i] = ints[1 + ints[0] + i];
            run = blocks_run(types[0], ints[0], &ints[1], 0, d, extent, &started, &end);
            break;
        case MPI_COMBINER_HINDEXED:
            run = blocks_run(types[0], ints[0], &ints[1], 0, addrs, 1, &started, &end);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            for (i = 0; i < ints[0]; i++)
                d[i] = ints[2 + i];
            run = blocks_run(types[0], ints[0], NULL, ints[1], d, extent, &started, &end);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:
            run = blocks_run(types[0], ints[0], NULL, ints[1], addrs, 1, &started, &end);
            break;
        case MPI_COMBINER_SUBARRAY:
        case MPI_COMBINER_DARRAY:
            run = tiles(types[0]);
            break;
        case MPI_COMBINER_STRUCT:
            /* One block per member type, carrying on from the last. */
            run = 1;
            for (i = 0; i < ints[0] && run; i++)
                run = blocks_run(types[i], 1, &ints[1 + i], 0, &addrs[i], 1, &started, &end);
            break;
        default:
            run = 0;
            break;
    }
    *start = true_lb;
    *len = size;

    for (i = 0; i < ntypes; i++) {
        int ni, na, nt, c;

        MPI_Type_get_envelope(types[i], &ni, &na, &nt, &c);
        if (c != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    ADIOI_Free(ints);
    ADIOI_Free(addrs);
    ADIOI_Free(types);
    ADIOI_Free(d);
    return run;
}

/*
 * Whether any number of copies of type, tiled, are one run of bytes in
 * typemap order: one copy is one run, as long as the extent, and starts
 * at the lower bound.  An empty type of extent 0 is one too.
 */
static int tiles(MPI_Datatype type)
{
    MPI_Aint lb, extent, start;
    MPI_Count size, len;

    MPI_Type_size_x(type, &size);
    MPI_Type_get_extent(type, &lb, &extent);
    if (size == 0)
        return extent == 0;
    return run_of(type, &start, &len) && extent == size && lb == start;
}

/*
 * MPICH's is_contig, from the type's description.  ROMIO relies on the
 * answer for more than speed: it reads a large contiguous memory type
 * through its small buffer instead, growing the buffer at every step
 * (MPICH's test/mpi/io/bigtype: minutes instead of seconds); and its
 * flattening goes wrong on the empty vectors ADIO_Type_create_darray
 * makes for a process with less than one block in a dimension (ROMIO's
 * test/darray_read), which MPICH, as here, calls contiguous.  Where the
 * description is not enough (a subarray or darray of an element whose
 * lower bound is not its first byte), the answer is "no", which is only
 * slower.
 */
void MPIR_Datatype_iscontig(MPI_Datatype datatype, int *flag)
{
    *flag = tiles(datatype);
}
