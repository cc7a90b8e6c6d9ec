// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * png.c -- a small PNG encoder (png.h).
 *
 * A PNG file is the 8-byte signature, then chunks: a big-endian u32
 * data length, a 4-letter type, the data, and the CRC-32 of type and
 * data.  Here: IHDR (size, 8-bit RGB), one IDAT (the zlib stream of
 * every row, each preceded by its filter byte, 0: none), IEND.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "error.h"
#include "png.h"

static const uint8_t png_signature[8] = { 0x89, 'P', 'N', 'G',
					  '\r', '\n', 0x1a, '\n' };

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Append chunk type with len bytes of data at *pos in buf. */
static void put_chunk(uint8_t *buf, size_t *pos, const char *type,
		      const uint8_t *data, uint32_t len)
{
	uint8_t *p = buf + *pos;
	uLong crc;

	put_be32(p, len);
	memcpy(p + 4, type, 4);
	if (len)
		memcpy(p + 8, data, len);
	crc = crc32(0L, p + 4, 4 + len);
	put_be32(p + 8 + len, (uint32_t)crc);
	*pos += 12 + (size_t)len;
}

int png_encode_rgb(const uint8_t *rgb, uint32_t width, uint32_t height,
		   uint8_t **out, size_t *len)
{
	size_t row = 1 + 3 * (size_t)width, raw_len, pos = 0;
	uint8_t ihdr[13], *raw = NULL, *z = NULL, *file = NULL;
	uLongf zlen;
	int err = 0;

	if (!rgb || width < 1 || height < 1 || width > PNG_MAX_SIDE ||
	    height > PNG_MAX_SIDE)
		return clf_fail(EINVAL, "png: a picture of %ux%u pixels (1 to %d a side)",
				width, height, PNG_MAX_SIDE);
	raw_len = row * height;
	raw = malloc(raw_len);
	zlen = compressBound(raw_len);
	z = malloc(zlen);
	if (!raw || !z) {
		err = clf_fail(ENOMEM, "png: out of memory");
		goto free_bufs;
	}
	for (uint32_t y = 0; y < height; y++) {
		raw[y * row] = 0;	/* filter type: none */
		memcpy(raw + y * row + 1, rgb + (size_t)y * 3 * width,
		       3 * (size_t)width);
	}
	if (compress2(z, &zlen, raw, raw_len, Z_BEST_COMPRESSION) != Z_OK) {
		err = clf_fail(EIO, "png: zlib cannot compress the picture");
		goto free_bufs;
	}
	if (zlen > UINT32_MAX - 64) {
		err = clf_fail(EINVAL, "png: picture too large");
		goto free_bufs;
	}
	put_be32(ihdr, width);
	put_be32(ihdr + 4, height);
	ihdr[8] = 8;	/* bits per sample */
	ihdr[9] = 2;	/* colour type: RGB */
	ihdr[10] = 0;	/* compression: deflate */
	ihdr[11] = 0;	/* filter method: adaptive (type per row) */
	ihdr[12] = 0;	/* not interlaced */
	file = malloc(sizeof(png_signature) + 3 * 12 + sizeof(ihdr) + zlen);
	if (!file) {
		err = clf_fail(ENOMEM, "png: out of memory");
		goto free_bufs;
	}
	memcpy(file, png_signature, sizeof(png_signature));
	pos = sizeof(png_signature);
	put_chunk(file, &pos, "IHDR", ihdr, sizeof(ihdr));
	put_chunk(file, &pos, "IDAT", z, (uint32_t)zlen);
	put_chunk(file, &pos, "IEND", NULL, 0);
	*out = file;
	*len = pos;
free_bufs:
	free(z);
	free(raw);
	return err;
}

/* strerror in lower case, as clf writes every reason. */
static const char *why(int err)
{
	static __thread char buf[128];

	snprintf(buf, sizeof(buf), "%s", strerror(err));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

int png_write_rgb(const char *path, const uint8_t *rgb, uint32_t width,
		  uint32_t height)
{
	uint8_t *png;
	size_t len;
	FILE *f;
	int err = png_encode_rgb(rgb, width, height, &png, &len);

	if (err)
		return err;
	f = fopen(path, "wb");
	if (!f) {
		err = clf_fail(errno, "clf: cannot create '%s': %s", path,
			       why(errno));
		goto free_png;
	}
	if (fwrite(png, 1, len, f) != len)
		err = clf_fail(errno ? errno : EIO, "clf: cannot write '%s': %s",
			       path, why(errno ? errno : EIO));
	if (fclose(f) && !err)
		err = clf_fail(errno, "clf: cannot write '%s': %s", path,
			       why(errno));
free_png:
	free(png);
	return err;
}

int png_check_path(const char *path)
{
	bool existed = access(path, F_OK) == 0;
	int fd = open(path, O_WRONLY | O_CREAT, 0666);

	if (fd < 0)
		return clf_fail(errno, "clf: cannot create '%s': %s", path,
				why(errno));
	close(fd);
	if (!existed)
		unlink(path);
	return 0;
}
