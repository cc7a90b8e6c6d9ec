/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_dtype.h -- MPI datatypes as clf (PITFALLS) datatypes.
 *
 * Depends on mpi.h and clf.h only, so that the converter can be tested
 * without ROMIO (tests/integration/romio_dtype_test.c).
 */

#ifndef AD_CLF_DTYPE_H_INCLUDED
#define AD_CLF_DTYPE_H_INCLUDED

#include <mpi.h>
#include "clf.h"

/* What a converted type is for; decides its window (see below). */
enum ADIOI_CLF_Dtype_use {
    /* A subfile of a partitioning pattern: lb must be 0 and every byte
     * must lie in [0, extent). */
    ADIOI_CLF_DTYPE_LAYOUT,
    /* A filetype: lb >= 0; the bytes may leave [lb, ub) as long as one
     * copy spans no more than the extent (then the window starts at the
     * first byte). */
    ADIOI_CLF_DTYPE_VIEW
};

#define ADIOI_CLF_DTYPE_MSG_LEN 256

/*
 * ADIOI_CLF_Dtype_convert - one copy of an MPI datatype as a clf datatype
 *
 * The MPI type's bytes are exactly { *window + x : x selected by *out },
 * in the same order (the MPI typemap order, which must be increasing),
 * and CLF_Type_extent(*out) is the MPI extent: tiling *out from
 * disp + *window tiles the MPI type from disp.  Works on the type's
 * description (MPI_Type_get_envelope / get_contents), never byte by byte,
 * except for named types with holes, which are probed with MPI_Pack.
 *
 * Returns 0 with a new reference in *out, or a negative errno with msg
 * (msglen bytes) saying why: -EINVAL for a type clf cannot express
 * (overlapping or decreasing blocks, a negative lower bound except for a
 * view, bytes outside the extent, no bytes at all), -E2BIG when the clf
 * description would be too large, -ENOMEM.
 */
int ADIOI_CLF_Dtype_convert(MPI_Datatype type, enum ADIOI_CLF_Dtype_use use,
                            CLF_Datatype * out, MPI_Aint * window, char *msg, int msglen);

/*
 * ADIOI_CLF_Dtype_layout - a subfile type of a layout of the given period
 *
 * The MPI type taken as resized to [0, period): its bytes (one copy, at
 * their own displacements, whatever its bounds) as a clf type of extent
 * period.  A layout's period is the largest upper bound among its subfile
 * types.  Returns 0 with a new reference in *out, or what
 * ADIOI_CLF_Dtype_convert returns; -EINVAL with msg also when a byte lies
 * outside [0, period).
 */
int ADIOI_CLF_Dtype_layout(MPI_Datatype type, MPI_Aint period, CLF_Datatype * out, char *msg,
                           int msglen);

/*
 * ADIOI_CLF_Dtype_memtype - count copies of an MPI datatype in memory
 *
 * For CLF_ncread/ncwrite: the bytes of (buf, count, type) are
 * { buf + *base + x : x selected by *out }, in typemap order.  Any lower
 * bound works here.  Returns 0, -ENODATA when the buffer holds no bytes
 * (*out untouched), or what ADIOI_CLF_Dtype_convert returns; the caller
 * then packs the buffer instead.
 */
int ADIOI_CLF_Dtype_memtype(MPI_Datatype type, MPI_Count count, CLF_Datatype * out,
                            MPI_Aint * base, char *msg, int msglen);

/* A contiguous run of len > 0 bytes, as a clf datatype (NULL on error). */
CLF_Datatype ADIOI_CLF_Dtype_bytes(MPI_Count len);

#endif /* AD_CLF_DTYPE_H_INCLUDED */
