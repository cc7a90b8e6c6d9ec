/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * map_picture.h -- the picture of `clf map --png`: file bytes as a grid
 * of small cells, one colour per subfile (grey: the head, the bytes
 * before the displacement), the cells holding view bytes in full colour
 * and outlined, the others pale.  Rows follow the layout's period where
 * it fits, so that each subfile's share shows as columns or bands.
 */
#ifndef CLF_TOOL_MAP_PICTURE_H
#define CLF_TOOL_MAP_PICTURE_H

#include <stdint.h>

#include "clf.h"

/* Bounds of a picture. */
#define MAP_PICTURE_MAX_COLS 256
#define MAP_PICTURE_MAX_ROWS 256
#define MAP_PICTURE_MAX_BYTES (16 << 20)	/* file bytes drawn */

/* The layout and view drawn (all borrowed). */
struct map_picture_in {
	int64_t disp;			/* the layout's */
	int count;
	const CLF_Datatype *types;	/* count subfile types */
	CLF_Datatype view;
	int64_t view_disp;
	int64_t row_bytes;		/* file bytes per row; 0: chosen */
	const char *layout_text;	/* for the title; NULL: none */
	const char *view_text;		/* for the title; NULL: none */
};

/* How it came out, for the caller to tell. */
struct map_picture_out {
	int64_t lo, hi;		/* file bytes drawn: [lo, hi) */
	int64_t cell_bytes;	/* file bytes per cell */
	int cols, rows;		/* cells */
	int cell_px;		/* pixels on a cell's side */
	uint32_t grid_x, grid_y;	/* pixels: the top left of cell 0 */
	uint32_t legend_y;	/* pixels: the top of the legend */
	uint32_t width, height;	/* pixels */
};

/* Words on a picture (map_font.c): a 3x5 font drawn scale times as
 * big, 4 * scale pixels a character. */
uint32_t map_text_width(const char *s, int scale);
void map_text_draw(uint8_t *rgb, uint32_t width, uint32_t height,
		   uint32_t x, uint32_t y, const char *s, int scale,
		   uint32_t colour);

/* The colour of subfile j as 0xRRGGBB; j < 0: the head. */
uint32_t map_picture_colour(int j);

/*
 * map_picture_write - draw in and write it as a PNG file to path
 *
 * The bytes drawn are the head (when short), then one period of the
 * layout and view together (the least common multiple of their extents
 * past both displacements), repeated when short, within
 * MAP_PICTURE_MAX_BYTES and MAP_PICTURE_MAX_ROWS rows.  Above the
 * cells: a title (the layout and view texts) and the scale (bytes per
 * cell and per row, the file bytes drawn); below: a legend (the colour
 * of each subfile, what outlined and pale cells mean).  Returns 0 and
 * *out, or a negative errno with a message.
 */
int map_picture_write(const struct map_picture_in *in, const char *path,
		      struct map_picture_out *out);

#endif /* CLF_TOOL_MAP_PICTURE_H */
