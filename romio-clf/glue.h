/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * glue.h -- what romio-clf/glue.c offers the clf driver.
 */

#ifndef CLF_ROMIO_GLUE_H_INCLUDED
#define CLF_ROMIO_GLUE_H_INCLUDED

/*
 * Whether the MPICH this process runs with is the one whose ROMIO
 * libromio-clf.so was built from (checked once).  If not, *msg (when
 * msg is not NULL) says so; MPI-IO must then not be used.
 */
int MPIO_CLF_Version_ok(const char **msg);

#endif /* CLF_ROMIO_GLUE_H_INCLUDED */
