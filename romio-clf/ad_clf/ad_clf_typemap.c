/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_typemap.c -- the individual file pointer by MPI's typemap.
 *
 * ROMIO keeps the individual pointer (fd->fp_ind) as a file byte and
 * places it with its flattened copy of the filetype: the first byte of a
 * new view (ADIO_Set_view), MPI_File_seek, get_position, get_byte_offset
 * and the end of file in etypes.  ROMIO 4.0.2's own flattening does not
 * always give MPI's typemap: a resized type comes out shifted by its new
 * lower bound (adio/common/flatten.c), so with the filetype
 * resized(hindexed{2 bytes at 100, 2 at 110}, lb 100, extent 50) its
 * pointer started at byte 200, and MPI_File_write_all wrote the first
 * tile at 200 and 210 instead of 100 and 110 (ROMIO on ufs: did the
 * same).  The ROMIO we ship now flattens by the typemap too
 * (ad_clf_flatten.c); these hooks keep the native path's pointer on the
 * very conversion its accesses map through.
 *
 * On the native path (use_romio_optimizations=false) the view is clf's
 * conversion of the filetype (ad_clf_dtype.c), which follows the typemap,
 * and every access maps the pointer through it (ADIOI_CLF_Start/Done).
 * The hooks below, called from ROMIO's common code (romio-clf.patch),
 * place the pointer with that same conversion, so that explicit offsets,
 * the individual and the shared pointer, seek and the positions all name
 * the typemap's bytes.  The pointer then always sits on a byte of the
 * view.  Each hook returns 1 when it did the work, 0 to leave it to
 * ROMIO: with use_romio_optimizations=true (ROMIO's own code reads the
 * pointer through its flattening), for a contiguous filetype (no
 * flattening involved), and for a filetype clf cannot express (the access
 * itself then fails and says why).
 *
 * Cost: the conversion happens once per MPI_File_set_view; a position is
 * O(depth) (unmap) or O(depth * log(size of the filetype)) (a count).
 */

#include "ad_clf.h"

/* The converted view when the native path places the pointer, else NULL. */
static ADIOI_CLF_fs *typemap_view(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    int contig, err = MPI_SUCCESS;

    if (!fs || fs->romio_opt || fd->etype_size <= 0)
        return NULL;
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig)
        return NULL;
    if (ADIOI_CLF_View(fd, &err))
        return NULL;
    return fs;
}

/*
 * How many bytes of the view lie at file offsets below x.  Copy k of the
 * clf type holds view bytes [k*size, (k+1)*size) within file bytes
 * [disp + k*extent, disp + (k+1)*extent): a binary search there.
 */
static int64_t typemap_count(ADIOI_CLF_fs * fs, int64_t x)
{
    int64_t extent = CLF_Type_extent(fs->view_type);
    int64_t size = CLF_Type_size(fs->view_type);
    int64_t lo, hi, mid, f;

    if (x <= fs->view_disp)
        return 0;
    lo = (x - fs->view_disp) / extent * size;
    hi = lo + size;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (CLF_Type_unmap(fs->view_type, fs->view_disp, mid, &f) || f >= x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* MPI_File_set_view: the pointer goes to the view's first byte. */
int ADIOI_CLF_Typemap_first(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = typemap_view(fd);
    int64_t first;

    if (!fs || CLF_Type_unmap(fs->view_type, fs->view_disp, 0, &first))
        return 0;
    fd->fp_ind = first;
    return 1;
}

/* MPI_File_get_position: the view bytes before the pointer, in etypes. */
int ADIOI_CLF_Typemap_position(ADIO_File fd, ADIO_Offset * offset)
{
    ADIOI_CLF_fs *fs = typemap_view(fd);

    if (!fs)
        return 0;
    *offset = typemap_count(fs, fd->fp_ind) / fd->etype_size;
    return 1;
}

/*
 * MPI_File_seek(MPI_SEEK_END): the end of file in etypes of the view;
 * an end inside a hole or an etype counts up to the next etype.
 */
int ADIOI_CLF_Typemap_eof_offset(ADIO_File fd, ADIO_Offset fsize, ADIO_Offset * eof_offset)
{
    ADIOI_CLF_fs *fs = typemap_view(fd);

    if (!fs)
        return 0;
    *eof_offset = (typemap_count(fs, fsize) + fd->etype_size - 1) / fd->etype_size;
    return 1;
}

/* MPI_File_get_byte_offset: the file byte of etype offset in the view. */
int ADIOI_CLF_Typemap_byte_offset(ADIO_File fd, ADIO_Offset offset, ADIO_Offset * disp)
{
    ADIOI_CLF_fs *fs = typemap_view(fd);
    int64_t byte;

    if (!fs || offset < 0 ||
        CLF_Type_unmap(fs->view_type, fs->view_disp, offset * fd->etype_size, &byte))
        return 0;
    *disp = byte;
    return 1;
}

/* MPI_File_seek (ROMIO turns every whence into SEEK_SET first). */
ADIO_Offset ADIOI_CLF_SeekIndividual(ADIO_File fd, ADIO_Offset offset, int whence,
                                     int *error_code)
{
    ADIO_Offset byte;

    if (!ADIOI_CLF_Typemap_byte_offset(fd, offset, &byte))
        return ADIOI_GEN_SeekIndividual(fd, offset, whence, error_code);
    fd->fp_ind = byte;
    *error_code = MPI_SUCCESS;
    return byte;
}
