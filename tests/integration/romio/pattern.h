/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pattern.h -- the bytes the MPI-IO cross-path tests write: byte off of a
 * file is pattern_byte(off, salt), whoever writes it (an MPI view, the
 * native API, the mount), so any reader can check any byte without being
 * told what the writer's view was.  Shared by romio_types.c,
 * romio_native.c and romio_xfer.c.
 *
 * Manifests (written by romio_types, read by romio_native), one record a
 * line:
 *   file PATH SIZE              a file of SIZE bytes, all of the pattern
 *   layout PATH EXTENT COUNT    its layout: COUNT subfile types of one
 *                               EXTENT, displacement 0, each followed by
 *   sub J NRUNS                 subfile J selects NRUNS runs of [0, EXTENT)
 *   run OFF LEN                 ... in increasing order
 */
#ifndef ROMIO_TEST_PATTERN_H
#define ROMIO_TEST_PATTERN_H

#include <stdint.h>

static inline unsigned char pattern_byte(uint64_t off, uint64_t salt)
{
	uint64_t z = off * 0x9e3779b97f4a7c15ULL + salt * 0xbf58476d1ce4e5b9ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (unsigned char)((z ^ (z >> 31)) >> 56);
}

#endif /* ROMIO_TEST_PATTERN_H */
