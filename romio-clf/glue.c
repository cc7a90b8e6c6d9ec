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

/*
 * Whether datatype's bytes are one contiguous run in typemap order.  A
 * "no" is always safe (ROMIO then takes its general path), so anything
 * not obviously contiguous is reported as not contiguous.
 */
void MPIR_Datatype_iscontig(MPI_Datatype datatype, int *flag)
{
    int nints, naddrs, ntypes, combiner, *ints = NULL;
    MPI_Aint *addrs = NULL, lb, extent, true_lb, true_extent;
    MPI_Datatype *types = NULL;
    MPI_Count size;
    int i, contig = 0;

    /* Tiled, the copies must touch too: no hole at either end. */
    MPI_Type_size_x(datatype, &size);
    MPI_Type_get_extent(datatype, &lb, &extent);
    MPI_Type_get_true_extent(datatype, &true_lb, &true_extent);
    if (size != true_extent || size != extent || lb != true_lb) {
        *flag = 0;
        return;
    }
    MPI_Type_get_envelope(datatype, &nints, &naddrs, &ntypes, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        *flag = 1;
        return;
    }
    ints = ADIOI_Malloc((nints + 1) * sizeof(int));
    addrs = ADIOI_Malloc((naddrs + 1) * sizeof(MPI_Aint));
    types = ADIOI_Malloc((ntypes + 1) * sizeof(MPI_Datatype));
    MPI_Type_get_contents(datatype, nints, naddrs, ntypes, ints, addrs, types);

    switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:
            MPIR_Datatype_iscontig(types[0], &contig);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            /* Copies follow each other when the child's extent is its size. */
            MPIR_Datatype_iscontig(types[0], &contig);
            MPI_Type_get_extent(types[0], &lb, &extent);
            if (contig && ints[0] > 1 && extent != true_extent / ints[0])
                contig = 0;
            break;
        default:
            /* A single-block vector or struct is still worth a look:
             * the size equals the true extent, so one child in one block
             * covers it without holes. */
            if ((combiner == MPI_COMBINER_VECTOR || combiner == MPI_COMBINER_HVECTOR) &&
                ints[0] == 1) {
                MPIR_Datatype_iscontig(types[0], &contig);
                MPI_Type_get_extent(types[0], &lb, &extent);
                if (contig && ints[1] > 1 && extent * ints[1] != true_extent)
                    contig = 0;
            }
            break;
    }

    for (i = 0; i < ntypes; i++) {
        int ni, na, nt, c;

        MPI_Type_get_envelope(types[i], &ni, &na, &nt, &c);
        if (c != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    ADIOI_Free(ints);
    ADIOI_Free(addrs);
    ADIOI_Free(types);
    *flag = contig;
}
