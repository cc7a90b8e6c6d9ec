/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wire.h -- explicit little-endian encoding on bounds-checked cursors.
 *
 * Nothing crosses the wire as a C struct.  A writer counts what it would
 * write even past the end of its buffer (so a first pass with no buffer
 * measures); a reader that runs short sets `bad` and from then on reads
 * zeros, so a decoder checks once, at the end or before trusting a value.
 */
#ifndef CLF_WIRE_H
#define CLF_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wire_writer {
	uint8_t *buf;	/* may be NULL when cap == 0 */
	size_t cap;
	size_t pos;	/* bytes written or that would have been */
};

struct wire_reader {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	bool bad;	/* ran past the end */
};

static inline void wire_put_bytes(struct wire_writer *w, const void *p,
				  size_t n)
{
	if (w->pos <= w->cap && n <= w->cap - w->pos) {
		const uint8_t *s = p;

		for (size_t i = 0; i < n; i++)
			w->buf[w->pos + i] = s[i];
	}
	w->pos += n;
}

static inline void wire_put_u8(struct wire_writer *w, uint8_t v)
{
	wire_put_bytes(w, &v, 1);
}

static inline void wire_put_u16(struct wire_writer *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	wire_put_bytes(w, b, 2);
}

static inline void wire_put_u32(struct wire_writer *w, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wire_put_bytes(w, b, 4);
}

static inline void wire_put_u64(struct wire_writer *w, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wire_put_bytes(w, b, 8);
}

static inline void wire_put_i64(struct wire_writer *w, int64_t v)
{
	wire_put_u64(w, (uint64_t)v);
}

static inline bool wire_take(struct wire_reader *r, size_t n)
{
	if (r->bad || r->pos > r->len || n > r->len - r->pos) {
		r->bad = true;
		return false;
	}
	return true;
}

static inline uint8_t wire_get_u8(struct wire_reader *r)
{
	if (!wire_take(r, 1))
		return 0;
	return r->buf[r->pos++];
}

static inline uint16_t wire_get_u16(struct wire_reader *r)
{
	uint16_t v;

	if (!wire_take(r, 2))
		return 0;
	v = (uint16_t)(r->buf[r->pos] | r->buf[r->pos + 1] << 8);
	r->pos += 2;
	return v;
}

static inline uint32_t wire_get_u32(struct wire_reader *r)
{
	uint32_t v = 0;

	if (!wire_take(r, 4))
		return 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)r->buf[r->pos + i] << (8 * i);
	r->pos += 4;
	return v;
}

static inline uint64_t wire_get_u64(struct wire_reader *r)
{
	uint64_t v = 0;

	if (!wire_take(r, 8))
		return 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)r->buf[r->pos + i] << (8 * i);
	r->pos += 8;
	return v;
}

static inline int64_t wire_get_i64(struct wire_reader *r)
{
	return (int64_t)wire_get_u64(r);
}

#endif /* CLF_WIRE_H */
