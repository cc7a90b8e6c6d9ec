/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * png.h -- a small PNG encoder for the pictures of `clf map --png`:
 * 8-bit RGB, not interlaced, no filtering, the pixels deflated by zlib
 * in one IDAT chunk (PNG specification, ISO/IEC 15948).
 */
#ifndef CLF_TOOL_PNG_H
#define CLF_TOOL_PNG_H

#include <stddef.h>
#include <stdint.h>

/* The largest picture, pixels on a side (and PNG's own limit is 2^31-1). */
#define PNG_MAX_SIDE 16384

/*
 * png_encode_rgb - the PNG file of a width x height picture
 *
 * rgb: height rows of width pixels, 3 bytes each (red, green, blue),
 * top row first (borrowed).  Returns 0 and the file's bytes in *out
 * (caller frees) and their number in *len; -EINVAL for a side of 0 or
 * over PNG_MAX_SIDE, -ENOMEM, -EIO when zlib fails.
 */
int png_encode_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
		   uint8_t **out, size_t *len);

/*
 * png_write_rgb - png_encode_rgb into the file path (created or
 * replaced, mode 0666 less the umask).  Errors as png_encode_rgb, or
 * the errno of creating or writing the file, with a message naming it.
 */
int png_write_rgb(const char *path, const uint8_t *rgb, uint32_t width,
		  uint32_t height);

/*
 * png_check_path - can path be written?  A file is created there (and
 * removed again when it was not there before): 0, or the errno with
 * the message png_write_rgb would give.  For saying so before work.
 */
int png_check_path(const char *path);

#endif /* CLF_TOOL_PNG_H */
