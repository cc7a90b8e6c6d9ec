// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * map_picture.c -- the picture of `clf map --png` (map_picture.h).
 *
 * Which subfile holds a byte and which bytes the view selects come from
 * mappings, not from a byte-by-byte test: subfile j's bytes are the runs
 * of the whole file (CLF_BYTE) mapped onto subfile j, the view's bytes
 * the runs of the view mapped onto the whole file.  A cell takes the
 * colour of the subfile holding its first byte, and is marked when any
 * of its bytes is a view byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "map_picture.h"
#include "png.h"
#include "type.h"

#define WHITE 0xffffff
#define OUTLINE 0x202020
#define HEAD_COLOUR 0x9a9a9a
#define NO_CELL (-2)		/* owner of a cell past the bytes drawn */

static const uint32_t palette[] = {
	0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
	0xe377c2, 0x17becf, 0xbcbd22, 0x393b79, 0xe7ba52, 0x637939,
};
#define NPALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

uint32_t map_picture_colour(int j)
{
	uint32_t c, r, g, b;
	int shade;

	if (j < 0)
		return HEAD_COLOUR;
	c = palette[j % NPALETTE];
	/* Past the palette: the same hues, darker by turns. */
	shade = (j / NPALETTE) % 3;
	r = (c >> 16) * (4 - shade) / 4;
	g = ((c >> 8) & 0xff) * (4 - shade) / 4;
	b = (c & 0xff) * (4 - shade) / 4;
	return r << 16 | g << 8 | b;
}

/* Where the bytes drawn go: the head's rows, then the pattern's. */
struct geom {
	int64_t disp;		/* the layout's */
	int64_t lo, pstart, hi;	/* head [lo, disp) when lo < disp; pattern
				   [pstart, hi) */
	int64_t cb;		/* bytes per cell */
	int cols, head_rows, rows;
};

/* Columns for per cells per layout period (0: not a whole number). */
static int choose_cols(int64_t per, int64_t ncells)
{
	if (per >= 16 && per <= MAP_PICTURE_MAX_COLS)
		return (int)per;
	if (per > MAP_PICTURE_MAX_COLS) {
		for (int c = MAP_PICTURE_MAX_COLS; c >= 64; c--)
			if (per % c == 0)
				return c;
		return MAP_PICTURE_MAX_COLS;
	}
	if (per > 0)
		return (int)(per * ceil_div(16, per));
	return ncells < MAP_PICTURE_MAX_COLS ? (int)max64(ncells, 1)
					     : MAP_PICTURE_MAX_COLS;
}

static void geom_rows(struct geom *g)
{
	int64_t head = g->lo < g->disp ? ceil_div(g->disp - g->lo, g->cb) : 0;

	g->head_rows = (int)ceil_div(head, g->cols);
	g->rows = g->head_rows +
		  (int)ceil_div(ceil_div(g->hi - g->pstart, g->cb), g->cols);
}

/* The bytes to draw and how (map_picture_write's rule). */
static void plan(const struct map_picture_in *in, struct geom *g)
{
	int64_t e = CLF_Type_extent(in->types[0]);
	int64_t ev = CLF_Type_extent(in->view);
	int64_t start = max64(in->disp, in->view_disp), p, reps, per;
	int max_rows;

	if (!lcm_ok(e, ev, &p) || p > MAP_PICTURE_MAX_BYTES)
		p = min64(e, MAP_PICTURE_MAX_BYTES);
	reps = p < 4096 ? min64(4, 4096 / p) : 1;
	g->disp = in->disp;
	/* A short head is drawn, a long one left out. */
	g->lo = start <= 65536 ? 0
			       : in->disp + (start - in->disp) / e * e;
	g->pstart = max64(g->lo, in->disp);
	g->hi = min64(start + reps * p, g->lo + MAP_PICTURE_MAX_BYTES);
	if (in->row_bytes > 0) {
		g->cb = ceil_div(in->row_bytes, MAP_PICTURE_MAX_COLS);
		while (in->row_bytes % g->cb)
			g->cb++;
		g->cols = (int)(in->row_bytes / g->cb);
		/* Narrow rows: fewer of them, not a tall strip. */
		max_rows = (int)min64(MAP_PICTURE_MAX_ROWS,
				      max64(64, 4 * (int64_t)g->cols));
		geom_rows(g);
		if (g->head_rows > max_rows / 2) {
			g->lo = g->pstart = in->disp;
			geom_rows(g);
		}
		if (g->rows > max_rows) {
			g->hi = g->pstart + (int64_t)(max_rows -
						      g->head_rows) *
						     g->cols * g->cb;
			geom_rows(g);
		}
		return;
	}
	for (g->cb = 1;; g->cb *= 2) {
		per = e % g->cb ? 0 : e / g->cb;
		g->cols = choose_cols(per, ceil_div(g->hi - g->lo, g->cb));
		geom_rows(g);
		if (g->rows <= MAP_PICTURE_MAX_ROWS)
			break;
	}
}

/*
 * Set cells[c] = v for the cells holding a byte of [a, b) (any) or
 * starting in it (!any), in both regions.
 */
static void set_cells(const struct geom *g, int64_t a, int64_t b, bool any,
		      int16_t v, int16_t *cells)
{
	const int64_t rb[2] = { g->lo, g->pstart };
	const int64_t re[2] = { g->lo < g->disp ? g->disp : g->lo, g->hi };
	const int64_t c0[2] = { 0, (int64_t)g->head_rows * g->cols };

	for (int r = 0; r < 2; r++) {
		int64_t x = max64(a, rb[r]), y = min64(b, re[r]), first;

		if (x >= y)
			continue;
		first = any ? (x - rb[r]) / g->cb
			    : ceil_div(x - rb[r], g->cb);
		for (int64_t c = first; c <= (y - 1 - rb[r]) / g->cb; c++)
			cells[c0[r] + c] = v;
	}
}

struct walk {
	const struct geom *g;
	int16_t *cells;
	int16_t v;
	bool any;
};

/* A run of file bytes: subfile_off is the file offset (CLF_BYTE, 0). */
static int mark_run(int64_t view_off, int64_t subfile_off, int64_t len,
		    void *arg)
{
	struct walk *w = arg;

	set_cells(w->g, subfile_off, subfile_off + len, w->any, w->v,
		  w->cells);
	return 0;
}

/* As mark_run, for the runs of the whole file in a subfile. */
static int own_run(int64_t view_off, int64_t subfile_off, int64_t len,
		   void *arg)
{
	struct walk *w = arg;

	set_cells(w->g, view_off, view_off + len, w->any, w->v, w->cells);
	return 0;
}

/* owner[c]: the subfile holding cell c's first byte; view[c]: 1 when it
 * holds a view byte. */
static int classify(const struct map_picture_in *in, const struct geom *g,
		    int16_t *owner, int16_t *view)
{
	struct walk w = { .g = g };
	CLF_Mapping *m;
	int err = 0;

	set_cells(g, g->lo, g->disp, false, -1, owner);
	for (int j = 0; j < in->count && !err; j++) {
		err = CLF_Mapping_create(CLF_BYTE, 0, in->types[j], in->disp,
					 &m);
		if (err)
			break;
		w = (struct walk){ g, owner, (int16_t)j, false };
		err = CLF_Mapping_foreach(m, g->pstart, g->hi, own_run, &w);
		CLF_Mapping_free(m);
	}
	if (err)
		return err;
	err = CLF_Mapping_create(in->view, in->view_disp, CLF_BYTE, 0, &m);
	if (err)
		return err;
	w = (struct walk){ g, view, 1, true };
	err = CLF_Mapping_foreach(
		m, clf_type_count_before(in->view, in->view_disp, g->lo),
		clf_type_count_before(in->view, in->view_disp, g->hi),
		mark_run, &w);
	CLF_Mapping_free(m);
	return err;
}

static void fill(uint8_t *rgb, uint32_t width, uint32_t x0, uint32_t y0,
		 uint32_t w, uint32_t h, uint32_t colour)
{
	for (uint32_t y = y0; y < y0 + h; y++) {
		uint8_t *p = rgb + ((size_t)y * width + x0) * 3;

		for (uint32_t x = 0; x < w; x++, p += 3) {
			p[0] = (uint8_t)(colour >> 16);
			p[1] = (uint8_t)(colour >> 8);
			p[2] = (uint8_t)colour;
		}
	}
}

/* colour a third of the way from white. */
static uint32_t pale(uint32_t c)
{
	uint32_t out = 0;

	for (int s = 0; s < 24; s += 8) {
		uint32_t v = (c >> s) & 0xff;

		out |= (v + (255 - v) * 2 / 3) << s;
	}
	return out;
}

static void paint(const struct geom *g, const int16_t *owner,
		  const int16_t *view, int px, uint8_t *rgb, uint32_t width,
		  uint32_t x0, uint32_t y0)
{
	/* A one-pixel gap between cells once they are big enough. */
	uint32_t in = px >= 4 ? (uint32_t)px - 1 : (uint32_t)px;

	for (int64_t c = 0; c < (int64_t)g->rows * g->cols; c++) {
		uint32_t x = x0 + (uint32_t)(c % g->cols) * px;
		uint32_t y = y0 + (uint32_t)(c / g->cols) * px;
		uint32_t colour;

		if (owner[c] == NO_CELL)
			continue;
		colour = map_picture_colour(owner[c]);
		if (!view[c]) {
			fill(rgb, width, x, y, in, in, pale(colour));
			continue;
		}
		if (in >= 4) {
			fill(rgb, width, x, y, in, in, OUTLINE);
			fill(rgb, width, x + 1, y + 1, in - 2, in - 2, colour);
		} else {
			fill(rgb, width, x, y, in, in, colour);
		}
	}
}

#define TEXT_SCALE 2
#define LINE_PX (6 * TEXT_SCALE + 4)	/* a line of words */
#define MARGIN 8
#define MIN_WIDTH 480			/* room for the words */
#define TEXT_COLOUR 0x202020
#define SWATCH 12
#define LEGEND_COL (SWATCH + 4 + 6 * 4 * TEXT_SCALE)	/* "head" and room */

/* s cut with "..." to at most width pixels, into buf. */
static const char *fit(const char *s, uint32_t width, char *buf, size_t len)
{
	size_t n = width / (4 * TEXT_SCALE);

	if (strlen(s) <= n)
		return s;
	snprintf(buf, len, "%.*s...", (int)(n > 3 ? n - 3 : 0), s);
	return buf;
}

/* The legend's entries: "head", then the subfiles. */
static int legend_entries(const struct map_picture_in *in)
{
	return (in->disp > 0) + in->count;
}

/* Lines the legend takes at width: swatches and their labels, then the
 * line about outlined and pale cells. */
static uint32_t legend_lines(const struct map_picture_in *in,
			     uint32_t width)
{
	uint32_t per = (width - 2 * MARGIN) / LEGEND_COL;
	int n = legend_entries(in);

	if (per < 1)
		per = 1;
	if (n > 64)
		n = 64;
	return (uint32_t)((n + (int)per - 1) / (int)per) + 1;
}

static void words(const struct map_picture_in *in, const struct geom *g,
		  uint8_t *rgb, uint32_t width, uint32_t height,
		  uint32_t grid_h)
{
	char line[512], cut[512];
	uint32_t room = width - 2 * MARGIN, x, y = MARGIN;
	uint32_t per = room / LEGEND_COL;
	int n = legend_entries(in);

	snprintf(line, sizeof(line), "layout %s",
		 in->layout_text ? in->layout_text : "");
	map_text_draw(rgb, width, height, MARGIN, y,
		      fit(line, room, cut, sizeof(cut)), TEXT_SCALE,
		      TEXT_COLOUR);
	y += LINE_PX;
	snprintf(line, sizeof(line), "view %s, disp %lld",
		 in->view_text ? in->view_text : "", (long long)in->view_disp);
	map_text_draw(rgb, width, height, MARGIN, y,
		      fit(line, room, cut, sizeof(cut)), TEXT_SCALE,
		      TEXT_COLOUR);
	y += LINE_PX;
	snprintf(line, sizeof(line),
		 "scale: a cell = %lld bytes, a row = %lld bytes; file bytes %lld:%lld",
		 (long long)g->cb, (long long)g->cb * g->cols,
		 (long long)(g->lo < g->disp ? g->lo : g->pstart),
		 (long long)g->hi);
	map_text_draw(rgb, width, height, MARGIN, y,
		      fit(line, room, cut, sizeof(cut)), TEXT_SCALE,
		      TEXT_COLOUR);
	y += LINE_PX + grid_h + MARGIN;
	if (per < 1)
		per = 1;
	for (int e = 0, col = 0; e < n && e < 64; e++) {
		int j = in->disp > 0 ? e - 1 : e;

		x = MARGIN + (uint32_t)col *
				     LEGEND_COL;
		fill(rgb, width, x, y, SWATCH, SWATCH, map_picture_colour(j));
		snprintf(line, sizeof(line), j < 0 ? "head" : "%d", j);
		map_text_draw(rgb, width, height, x + SWATCH + 4, y + 1, line,
			      TEXT_SCALE, TEXT_COLOUR);
		if (++col == (int)per || e + 1 == n) {
			col = 0;
			y += LINE_PX;
		}
	}
	map_text_draw(rgb, width, height, MARGIN, y,
		      fit(n > 64 ? "subfiles 0 to 63 shown. outlined: view bytes; pale: the others"
				 : "colour: the subfile. outlined: view bytes; pale: the others",
			  room, cut, sizeof(cut)),
		      TEXT_SCALE, TEXT_COLOUR);
}

int map_picture_write(const struct map_picture_in *in, const char *path,
		      struct map_picture_out *out)
{
	struct geom g;
	int16_t *owner = NULL, *view = NULL;
	uint8_t *rgb = NULL;
	size_t ncells;
	uint32_t width, height, grid_w, grid_h, top;
	int px, err;

	if (!in || in->count < 1 || !in->types || !in->view ||
	    in->view_disp < 0 || in->disp < 0)
		return clf_fail(EINVAL, "clf: nothing to draw");
	plan(in, &g);
	/* Cells no bigger than fits 1024 pixels either way: a narrow
	 * --png-row must not make a tall strip. */
	px = 1024 / (g.cols > g.rows ? g.cols : g.rows);
	px = px < 2 ? 2 : px > 24 ? 24 : px;
	grid_w = (uint32_t)(g.cols * px);
	grid_h = (uint32_t)(g.rows * px);
	width = grid_w + 2 * MARGIN;
	width = width < MIN_WIDTH ? MIN_WIDTH : width;
	top = MARGIN + 3 * LINE_PX;
	height = top + grid_h + MARGIN + legend_lines(in, width) * LINE_PX +
		 MARGIN;
	ncells = (size_t)g.rows * g.cols;
	owner = malloc(ncells * sizeof(*owner));
	view = calloc(ncells, sizeof(*view));
	rgb = malloc((size_t)width * height * 3);
	if (!owner || !view || !rgb) {
		err = clf_fail(ENOMEM, "clf: out of memory for the picture");
		goto free_all;
	}
	for (size_t c = 0; c < ncells; c++)
		owner[c] = NO_CELL;
	memset(rgb, 0xff, (size_t)width * height * 3);
	err = classify(in, &g, owner, view);
	if (err)
		goto free_all;
	paint(&g, owner, view, px, rgb, width, MARGIN, top);
	words(in, &g, rgb, width, height, grid_h);
	err = png_write_rgb(path, rgb, width, height);
	if (err)
		goto free_all;
	*out = (struct map_picture_out){
		.lo = g.lo < g.disp ? g.lo : g.pstart, .hi = g.hi,
		.cell_bytes = g.cb, .cols = g.cols, .rows = g.rows,
		.cell_px = px, .width = width, .height = height,
		.grid_x = MARGIN, .grid_y = top,
		.legend_y = top + grid_h + MARGIN,
	};
free_all:
	free(rgb);
	free(view);
	free(owner);
	return err;
}
