// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_png.c -- the PNG encoder of the clf command line (tools/png.h)
 * and the picture of `clf map --png` (tools/map_picture.h): what they
 * write is decoded here independently (chunk lengths and CRCs, IHDR,
 * the zlib stream, one filter byte per row) and the pixels compared.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check_main.h"
#include "clf.h"
#include "map_picture.h"
#include "png.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/*
 * Decode an 8-bit RGB, non-interlaced PNG whose rows all use filter 0:
 * its size and pixels (caller frees).  Fails the test on anything else.
 */
static uint8_t *decode(const uint8_t *png, size_t len, uint32_t *w,
		       uint32_t *h)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n',
					0x1a, '\n' };
	uint8_t *idat = NULL, *raw, *rgb;
	size_t pos = 8, nidat = 0;
	bool ihdr = false, iend = false;
	uLongf rawlen;

	ck_assert_uint_ge(len, 8);
	ck_assert_int_eq(memcmp(png, sig, 8), 0);
	while (pos < len) {
		uint32_t n, crc;
		const uint8_t *type, *data;

		ck_assert(!iend);	/* nothing after IEND */
		ck_assert_uint_ge(len - pos, 12);
		n = be32(png + pos);
		ck_assert_uint_ge(len - pos - 12, n);
		type = png + pos + 4;
		data = type + 4;
		crc = (uint32_t)crc32(0L, type, 4 + n);
		ck_assert_uint_eq(be32(data + n), crc);
		if (!memcmp(type, "IHDR", 4)) {
			ck_assert(!ihdr && pos == 8);
			ck_assert_uint_eq(n, 13);
			*w = be32(data);
			*h = be32(data + 4);
			ck_assert_uint_eq(data[8], 8);	/* bit depth */
			ck_assert_uint_eq(data[9], 2);	/* RGB */
			ck_assert_uint_eq(data[10], 0);
			ck_assert_uint_eq(data[11], 0);
			ck_assert_uint_eq(data[12], 0);	/* not interlaced */
			ihdr = true;
		} else if (!memcmp(type, "IDAT", 4)) {
			ck_assert(ihdr);
			idat = realloc(idat, nidat + n + 1);
			ck_assert_ptr_nonnull(idat);
			memcpy(idat + nidat, data, n);
			nidat += n;
		} else if (!memcmp(type, "IEND", 4)) {
			ck_assert_uint_eq(n, 0);
			iend = true;
		}
		pos += 12 + (size_t)n;
	}
	ck_assert(ihdr && iend && nidat > 0);
	rawlen = (uLongf)(*h) * (1 + 3 * (uLongf)(*w));
	raw = malloc(rawlen);
	ck_assert_ptr_nonnull(raw);
	ck_assert_int_eq(uncompress(raw, &rawlen, idat, nidat), Z_OK);
	ck_assert_uint_eq(rawlen, (uLongf)(*h) * (1 + 3 * (uLongf)(*w)));
	rgb = malloc((size_t)*w * *h * 3);
	ck_assert_ptr_nonnull(rgb);
	for (uint32_t y = 0; y < *h; y++) {
		const uint8_t *row = raw + (size_t)y * (1 + 3 * (size_t)*w);

		ck_assert_uint_eq(row[0], 0);
		memcpy(rgb + (size_t)y * 3 * *w, row + 1, 3 * (size_t)*w);
	}
	free(raw);
	free(idat);
	return rgb;
}

START_TEST(test_png_encodes_pixels_that_decode_back)
{
	const uint32_t sizes[][2] = { { 1, 1 }, { 3, 2 }, { 17, 9 },
				      { 256, 64 } };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t w = sizes[k][0], h = sizes[k][1], dw, dh;
		size_t n = (size_t)w * h * 3, len;
		uint8_t *rgb = malloc(n), *png, *back;

		ck_assert_ptr_nonnull(rgb);
		/* Noise in one half (incompressible), runs in the other. */
		for (size_t i = 0; i < n; i++)
			rgb[i] = i < n / 2 ? (uint8_t)(i * 2654435761u >> 13)
					   : (uint8_t)(i / 97);
		ck_assert_int_eq(png_encode_rgb(rgb, w, h, &png, &len), 0);
		back = decode(png, len, &dw, &dh);
		ck_assert_uint_eq(dw, w);
		ck_assert_uint_eq(dh, h);
		ck_assert_int_eq(memcmp(back, rgb, n), 0);
		free(back);
		free(png);
		free(rgb);
	}
}
END_TEST

START_TEST(test_png_refuses_empty_and_huge_pictures)
{
	uint8_t px[3] = { 1, 2, 3 }, *png = (uint8_t *)"untouched";
	size_t len = 7;

	ck_assert_int_eq(png_encode_rgb(px, 0, 1, &png, &len), -EINVAL);
	ck_assert_int_eq(png_encode_rgb(px, 1, 0, &png, &len), -EINVAL);
	ck_assert_int_eq(png_encode_rgb(px, PNG_MAX_SIDE + 1, 1, &png, &len),
			 -EINVAL);
	ck_assert_int_eq(png_encode_rgb(NULL, 1, 1, &png, &len), -EINVAL);
	ck_assert_str_eq((char *)png, "untouched");
	ck_assert_uint_eq(len, 7);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "png:"));
}
END_TEST

START_TEST(test_png_write_names_the_file_it_cannot_create)
{
	uint8_t px[3] = { 0 };

	ck_assert_int_eq(png_write_rgb("/nonexistent-dir/x.png", px, 1, 1),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "'/nonexistent-dir/x.png'"));
}
END_TEST

/* Read the whole file path (caller frees). */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint32_t pixel(const uint8_t *rgb, uint32_t w, uint32_t x, uint32_t y)
{
	const uint8_t *p = rgb + ((size_t)y * w + x) * 3;

	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* The colour of subfile j a third of the way from white, as unmarked
 * cells are painted. */
static uint32_t pale(int j)
{
	uint32_t c = map_picture_colour(j), out = 0;

	for (int s = 0; s < 24; s += 8) {
		uint32_t v = (c >> s) & 0xff;

		out |= (v + (255 - v) * 2 / 3) << s;
	}
	return out;
}

START_TEST(test_picture_colours_cells_by_subfile_and_marks_the_view)
{
	char path[] = "/tmp/clf-test-png-XXXXXX";
	CLF_Datatype t[2], view;
	struct map_picture_out out;
	uint32_t w, h;
	uint8_t *png, *rgb;
	size_t len;
	int fd;

	/* cyclic(4) over 2 after 4 bytes of head; the view is subfile 1. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 3, 8, 1, 4, 2, CLF_BYTE, t), 0);
	view = CLF_Type_dup(t[1]);
	struct map_picture_in in = {
		.disp = 4, .count = 2, .types = t, .view = view,
		.view_disp = 4, .row_bytes = 8,
	};

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(map_picture_write(&in, path, &out), 0);
	png = slurp(path, &len);
	rgb = decode(png, len, &w, &h);
	unlink(path);
	ck_assert_int_eq(out.cell_bytes, 1);
	ck_assert_int_eq(out.cols, 8);
	ck_assert_int_eq(out.lo, 0);
	/* The cells, with room for the title above and legend below. */
	ck_assert_uint_ge(w, out.grid_x + (uint32_t)out.cols * out.cell_px);
	ck_assert_uint_gt(out.grid_y, 0);
	ck_assert_uint_gt(h, out.legend_y);
	ck_assert_uint_eq(out.legend_y,
			  out.grid_y + (uint32_t)out.rows * out.cell_px + 8);
	/* Row 0: the head (4 cells, grey, pale: not in the view), then
	 * rows of one period each: 4 cells of subfile 0, 4 of 1. */
	for (int r = 0; r < out.rows; r++) {
		for (int c = 0; c < out.cols; c++) {
			uint32_t cx = out.grid_x +
				      (uint32_t)(c * out.cell_px + out.cell_px / 2);
			uint32_t cy = out.grid_y +
				      (uint32_t)(r * out.cell_px + out.cell_px / 2);
			uint32_t want;

			if (r == 0)
				want = c < 4 ? pale(-1) : 0xffffff;
			else if (c < 4)
				want = pale(0);
			else
				want = map_picture_colour(1);
			ck_assert_msg(pixel(rgb, w, cx, cy) == want,
				      "cell (%d, %d): %06x, want %06x", r, c,
				      pixel(rgb, w, cx, cy), want);
		}
	}
	/* View cells are outlined. */
	ck_assert_uint_eq(pixel(rgb, w, out.grid_x + 4 * out.cell_px,
				out.grid_y + out.cell_px),
			  0x202020);
	/* The legend: subfile 0, pale in the cells, in full colour below
	 * them; the title: dark words above them. */
	{
		bool swatch = false, words = false;

		for (uint32_t y = out.legend_y; y < h && !swatch; y++)
			for (uint32_t x = 0; x < w && !swatch; x++)
				swatch = pixel(rgb, w, x, y) ==
					 map_picture_colour(0);
		for (uint32_t y = 0; y < out.grid_y && !words; y++)
			for (uint32_t x = 0; x < w && !words; x++)
				words = pixel(rgb, w, x, y) == 0x202020;
		ck_assert_msg(swatch, "no legend swatch of subfile 0");
		ck_assert_msg(words, "no title");
	}
	free(rgb);
	free(png);
	CLF_Type_free(&view);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
}
END_TEST

START_TEST(test_picture_keeps_within_its_bounds)
{
	char path[] = "/tmp/clf-test-png-XXXXXX";
	CLF_Datatype t[4];
	struct map_picture_out out;
	int fd;

	/* Round robin of 1 MiB stripes: far more bytes than cells. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, (1 << 20) - 1, 4 << 20, 1,
					   1 << 20, 4, CLF_BYTE, t), 0);
	struct map_picture_in in = {
		.count = 4, .types = t, .view = t[2],
	};

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(map_picture_write(&in, path, &out), 0);
	unlink(path);
	ck_assert_int_le(out.cols, MAP_PICTURE_MAX_COLS);
	ck_assert_int_le(out.rows, MAP_PICTURE_MAX_ROWS);
	ck_assert_int_eq(out.hi - out.lo, 4 << 20);
	ck_assert_int_ge(out.cell_bytes * out.cols * out.rows, 4 << 20);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&t[j]);
}
END_TEST

static Suite *png_suite(void)
{
	Suite *s = suite_create("png");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_png_encodes_pixels_that_decode_back);
	tcase_add_test(tc, test_png_refuses_empty_and_huge_pictures);
	tcase_add_test(tc, test_png_write_names_the_file_it_cannot_create);
	tcase_add_test(tc, test_picture_colours_cells_by_subfile_and_marks_the_view);
	tcase_add_test(tc, test_picture_keeps_within_its_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(png_suite());
}
