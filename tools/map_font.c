// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * map_font.c -- a 3x5 pixel font for the words on `clf map --png`
 * pictures (title, scale, legend): digits, letters (drawn upper case)
 * and the punctuation of layout texts.  Anything else is drawn as '?'.
 */
#include <string.h>

#include "map_picture.h"

/* Five rows of three pixels each, the left one in bit 2. */
static const unsigned char glyphs[128][5] = {
	['0'] = { 7, 5, 5, 5, 7 }, ['1'] = { 2, 6, 2, 2, 7 },
	['2'] = { 7, 1, 7, 4, 7 }, ['3'] = { 7, 1, 7, 1, 7 },
	['4'] = { 5, 5, 7, 1, 1 }, ['5'] = { 7, 4, 7, 1, 7 },
	['6'] = { 7, 4, 7, 5, 7 }, ['7'] = { 7, 1, 2, 2, 2 },
	['8'] = { 7, 5, 7, 5, 7 }, ['9'] = { 7, 5, 7, 1, 7 },
	['A'] = { 2, 5, 7, 5, 5 }, ['B'] = { 6, 5, 6, 5, 6 },
	['C'] = { 3, 4, 4, 4, 3 }, ['D'] = { 6, 5, 5, 5, 6 },
	['E'] = { 7, 4, 6, 4, 7 }, ['F'] = { 7, 4, 6, 4, 4 },
	['G'] = { 3, 4, 5, 5, 3 }, ['H'] = { 5, 5, 7, 5, 5 },
	['I'] = { 7, 2, 2, 2, 7 }, ['J'] = { 1, 1, 1, 5, 2 },
	['K'] = { 5, 5, 6, 5, 5 }, ['L'] = { 4, 4, 4, 4, 7 },
	['M'] = { 5, 7, 7, 5, 5 }, ['N'] = { 6, 5, 5, 5, 5 },
	['O'] = { 2, 5, 5, 5, 2 }, ['P'] = { 6, 5, 6, 4, 4 },
	['Q'] = { 2, 5, 5, 6, 3 }, ['R'] = { 6, 5, 6, 5, 5 },
	['S'] = { 3, 4, 2, 1, 6 }, ['T'] = { 7, 2, 2, 2, 2 },
	['U'] = { 5, 5, 5, 5, 7 }, ['V'] = { 5, 5, 5, 5, 2 },
	['W'] = { 5, 5, 7, 7, 5 }, ['X'] = { 5, 5, 2, 5, 5 },
	['Y'] = { 5, 5, 2, 2, 2 }, ['Z'] = { 7, 1, 2, 4, 7 },
	[':'] = { 0, 2, 0, 2, 0 }, ['='] = { 0, 7, 0, 7, 0 },
	[','] = { 0, 0, 0, 2, 4 }, ['.'] = { 0, 0, 0, 0, 2 },
	['('] = { 1, 2, 2, 2, 1 }, [')'] = { 4, 2, 2, 2, 4 },
	['-'] = { 0, 0, 7, 0, 0 }, ['/'] = { 1, 1, 2, 4, 4 },
	['#'] = { 5, 7, 5, 7, 5 }, ['+'] = { 0, 2, 7, 2, 0 },
	['%'] = { 5, 1, 2, 4, 5 }, ['*'] = { 0, 5, 2, 5, 0 },
	['_'] = { 0, 0, 0, 0, 7 }, [';'] = { 0, 2, 0, 2, 4 },
	['['] = { 3, 2, 2, 2, 3 }, [']'] = { 6, 2, 2, 2, 6 },
	['?'] = { 7, 1, 2, 0, 2 }, ['<'] = { 1, 2, 4, 2, 1 },
	['>'] = { 4, 2, 1, 2, 4 },
};

static const unsigned char *glyph(char c)
{
	unsigned char u = (unsigned char)c;

	if (u >= 'a' && u <= 'z')
		u = (unsigned char)(u - 'a' + 'A');
	if (u == ' ')
		return glyphs[' '];
	if (u >= 128 || !memcmp(glyphs[u], glyphs[0], 5))
		return glyphs['?'];
	return glyphs[u];
}

uint32_t map_text_width(const char *s, int scale)
{
	return (uint32_t)(strlen(s) * 4 * scale);
}

static void put(uint8_t *rgb, uint32_t width, uint32_t height, uint32_t x,
		uint32_t y, uint32_t colour)
{
	uint8_t *p;

	if (x >= width || y >= height)
		return;
	p = rgb + ((size_t)y * width + x) * 3;
	p[0] = (uint8_t)(colour >> 16);
	p[1] = (uint8_t)(colour >> 8);
	p[2] = (uint8_t)colour;
}

void map_text_draw(uint8_t *rgb, uint32_t width, uint32_t height,
		   uint32_t x, uint32_t y, const char *s, int scale,
		   uint32_t colour)
{
	uint32_t k = (uint32_t)scale;

	for (; *s; s++, x += 4 * k) {
		const unsigned char *g = glyph(*s);

		for (uint32_t r = 0; r < 5 * k; r++)
			for (uint32_t c = 0; c < 3 * k; c++)
				if (g[r / k] & (4 >> (c / k)))
					put(rgb, width, height, x + c, y + r,
					    colour);
	}
}
