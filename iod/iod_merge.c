// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_merge.c -- the pieces of a collective access, in subfile order.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "error.h"
#include "iod_merge.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

void iod_pieces_release(struct iod_pieces *ps)
{
	if (!ps)
		return;
	free(ps->p);
	ps->p = NULL;
	ps->n = ps->cap = 0;
}

int iod_pieces_add(struct iod_pieces *ps, int64_t off, size_t len, void *buf)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		struct iod_piece *bigger = realloc(ps->p, cap * sizeof(*bigger));

		if (!bigger)
			return clf_fail(ENOMEM, "iod: out of memory");
		ps->p = bigger;
		ps->cap = cap;
	}
	ps->p[ps->n++] = (struct iod_piece){ .off = off, .len = len,
					     .buf = buf };
	return 0;
}

/* The run that would make a piece too many: where the next call begins. */
#define GATHER_FULL 1

struct gather {
	struct iod_piece_src *src;
	struct iod_pieces *out;
	size_t max;		/* pieces out may hold */
	int appended;		/* pieces added by this call */
};

static int add_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct gather *g = arg;
	struct iod_piece_src *src = g->src;
	struct iod_piece *last = g->appended ? &g->out->p[g->out->n - 1]
					     : NULL;
	int err = 0;

	if (last && last->off + (int64_t)last->len == s) {
		last->len += (size_t)len;
	} else if (g->out->n >= g->max) {
		src->lo = v;
		src->frontier = s;
		return GATHER_FULL;
	} else {
		err = iod_pieces_add(g->out, s, (size_t)len, src->data);
		g->appended += !err;
	}
	src->data += len;
	return err;
}

int iod_piece_src_init(struct iod_piece_src *src, const struct iod_view *v,
		       int64_t lo, int64_t hi, void *data, size_t len)
{
	int64_t count = CLF_Mapping_count(v->map, lo, hi);

	if (count < 0 || (uint64_t)count != len)
		return clf_fail(EINVAL,
				"iod: view %" PRIu32 ": view range [%" PRId64 ", %" PRId64 ") holds %" PRId64 " bytes of subfile %" PRIu32 " of file 0x%" PRIx64 ", not %zu",
				v->handle, lo, hi, count, v->subfile, v->file,
				len);
	*src = (struct iod_piece_src){ .v = v, .lo = lo, .hi = hi,
				       .data = data, .frontier = INT64_MIN };
	if (len == 0) {
		src->lo = hi;
		src->frontier = INT64_MAX;
	}
	return 0;
}

int iod_piece_src_fill(struct iod_piece_src *src, struct iod_pieces *out,
		       size_t max)
{
	struct gather g = { .src = src, .out = out, .max = max };
	int err;

	if (src->lo >= src->hi || out->n >= max)
		return 0;
	/* Runs joined in subfile order: the data is packed in that order. */
	err = CLF_Mapping_foreach_packed(src->v->map, src->lo, src->hi, add_run,
					 &g);
	if (err == GATHER_FULL)
		return 0;
	if (err)
		return err;
	src->lo = src->hi;
	src->frontier = INT64_MAX;
	return 0;
}

int iod_view_pieces(const struct iod_view *v, int64_t lo, int64_t hi,
		    void *data, size_t len, struct iod_pieces *out)
{
	struct iod_piece_src src;
	size_t before = out->n;
	int err;

	err = iod_piece_src_init(&src, v, lo, hi, data, len);
	if (!err)
		err = iod_piece_src_fill(&src, out, SIZE_MAX);
	if (err)
		out->n = before;
	return err;
}

static int by_offset(const void *a, const void *b)
{
	const struct iod_piece *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static bool piece_before(const struct iod_piece *x, const struct iod_piece *y)
{
	return x->off < y->off || (x->off == y->off && x->len < y->len);
}

/* Merge the ordered src[a, b) and src[b, c) into dst[a, c), stably. */
static void merge_two(const struct iod_piece *src, struct iod_piece *dst,
		      size_t a, size_t b, size_t c)
{
	size_t i = a, j = b, k = a;

	while (i < b && j < c)
		dst[k++] = piece_before(&src[j], &src[i]) ? src[j++] : src[i++];
	memcpy(dst + k, src + i, (b - i) * sizeof(*dst));
	k += b - i;
	memcpy(dst + k, src + j, (c - j) * sizeof(*dst));
}

/*
 * Sort pieces by (offset, length).  A round hands over each participant's
 * pieces already in subfile order (a mapping walks a subfile forwards),
 * so the array is a few ordered runs: a natural merge sort costs one
 * pass for one participant and O(n log runs) for several, where qsort
 * paid O(n log n) calls of a comparison function -- the larger part of an
 * iod's time in a collective of 1-byte pieces.  Many runs (pieces in no
 * order) still go to qsort.
 */
static void sort_pieces(struct iod_piece *p, size_t n)
{
	size_t runs = 1, *bound, nb;
	struct iod_piece *tmp, *src = p, *dst;

	for (size_t i = 1; i < n; i++)
		runs += piece_before(&p[i], &p[i - 1]);
	if (runs == 1)
		return;
	tmp = runs <= 64 ? malloc(n * sizeof(*tmp)) : NULL;
	bound = tmp ? malloc((runs + 1) * sizeof(*bound)) : NULL;
	if (!bound) {
		free(tmp);
		qsort(p, n, sizeof(*p), by_offset);
		return;
	}
	nb = 0;
	bound[nb++] = 0;
	for (size_t i = 1; i < n; i++)
		if (piece_before(&p[i], &p[i - 1]))
			bound[nb++] = i;
	bound[nb] = n;	/* nb runs: [bound[k], bound[k + 1]) */
	dst = tmp;
	while (nb > 1) {
		size_t k, out = 0;

		for (k = 0; k + 1 < nb; k += 2) {
			merge_two(src, dst, bound[k], bound[k + 1],
				  bound[k + 2]);
			bound[out++] = bound[k];
		}
		if (k < nb) {
			memcpy(dst + bound[k], src + bound[k],
			       (bound[k + 1] - bound[k]) * sizeof(*dst));
			bound[out++] = bound[k];
		}
		bound[out] = n;
		nb = out;
		dst = src;
		src = src == p ? tmp : p;
	}
	if (src != p)
		memcpy(p, src, n * sizeof(*p));
	free(bound);
	free(tmp);
}

/* The total length of the pieces, or -EINVAL for a bad one. */
static int64_t check_pieces(uint64_t file, uint32_t subfile,
			    const struct iod_piece *p, size_t n)
{
	int64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i].off < 0 || p[i].len > (uint64_t)(INT64_MAX - p[i].off) ||
		    p[i].len > (uint64_t)(INT64_MAX - total) ||
		    (p[i].len && !p[i].buf))
			return clf_fail(EINVAL,
					"iod: bad piece %zu (%zu bytes at offset %" PRId64 ") for subfile %" PRIu32 " of file 0x%" PRIx64,
					i, p[i].len, p[i].off, subfile, file);
		total += (int64_t)p[i].len;
	}
	return total;
}

/* Zero what a short read left of iov[0..cnt) after the first got bytes. */
static void zero_tail(const struct iovec *iov, int cnt, size_t got)
{
	for (int i = 0; i < cnt; i++) {
		if (got >= iov[i].iov_len) {
			got -= iov[i].iov_len;
			continue;
		}
		memset((char *)iov[i].iov_base + got, 0, iov[i].iov_len - got);
		got = 0;
	}
}

/* One stretch of adjacent pieces [start, end) in iov[0..cnt). */
static int one_stretch(struct iod_subfile *sf, int write,
		       const struct iovec *iov, int cnt, int64_t start,
		       int64_t end)
{
	struct iod_range r;
	ssize_t n;

	if (write) {
		iod_rangelock_lock(&sf->lock, &r, start, end);
		n = iod_subfile_pwritev(sf, iov, cnt, start);
		iod_rangelock_unlock(&sf->lock, &r);
		return n < 0 ? (int)n : 0;
	}
	n = iod_subfile_preadv(sf, iov, cnt, start);
	if (n < 0)
		return (int)n;
	zero_tail(iov, cnt, (size_t)n);
	return 0;
}

/*
 * Stretches of small pieces: an iovec per piece costs the kernel more
 * than the piece's bytes, and a stretch of 1-byte pieces would take one
 * pwritev per IOV_MAX bytes.  Such a stretch goes through a staging
 * buffer instead (a memcpy per piece, one system call per STAGE_BYTES):
 * when the first SMALL_PROBE pieces of the stretch that starts at p[i]
 * average under SMALL_PIECE bytes.
 */
#define SMALL_PIECE 256
#define SMALL_PROBE 16
#define STAGE_BYTES (1 << 20)

static bool small_stretch(const struct iod_piece *p, size_t n, size_t i)
{
	int64_t start = -1, end = 0;
	size_t cnt = 0;

	for (; i < n && cnt < SMALL_PROBE; i++) {
		if (!p[i].len)
			continue;
		if (cnt && p[i].off != end)
			break;
		if (!cnt)
			start = end = p[i].off;
		end += (int64_t)p[i].len;
		cnt++;
	}
	return cnt > 1 && end - start < (int64_t)cnt * SMALL_PIECE;
}

/*
 * The stretch of adjacent pieces from p[*i] on, up to STAGE_BYTES,
 * through the staging buffer *stage (allocated at the first use); *i
 * moves past it.
 */
static int staged_stretch(struct iod_subfile *sf, int write,
			  const struct iod_piece *p, size_t n, size_t *i,
			  uint8_t **stage)
{
	size_t k = *i, first;
	int64_t start, end;
	struct iovec iov;
	int err;

	if (!*stage) {
		*stage = malloc(STAGE_BYTES);
		if (!*stage)
			return clf_fail(ENOMEM, "iod: out of memory");
	}
	while (k < n && !p[k].len)
		k++;
	first = k;
	start = end = p[k].off;
	for (; k < n; k++) {
		if (!p[k].len)
			continue;
		if (p[k].off != end ||
		    end - start + (int64_t)p[k].len > STAGE_BYTES)
			break;
		if (write)
			memcpy(*stage + (end - start), p[k].buf, p[k].len);
		end += (int64_t)p[k].len;
	}
	*i = k;
	iov = (struct iovec){ *stage, (size_t)(end - start) };
	err = one_stretch(sf, write, &iov, 1, start, end);
	if (err || write)
		return err;
	for (k = first; k < *i; k++)
		if (p[k].len)
			memcpy(p[k].buf, *stage + (p[k].off - start), p[k].len);
	return 0;
}

static int64_t merge_io(struct iod_store *st, uint64_t file,
			uint32_t subfile, struct iod_piece *p, size_t n,
			int write)
{
	struct iod_subfile *sf;
	struct iovec *iov;
	uint8_t *stage = NULL;
	int64_t total;
	size_t i = 0;
	int err;

	total = check_pieces(file, subfile, p, n);
	if (total <= 0)
		return total;
	err = iod_subfile_get(st, file, subfile, write ? IOD_CREATE : 0, &sf);
	if (err == -ENOENT && !write) {
		for (i = 0; i < n; i++)
			if (p[i].len)
				memset(p[i].buf, 0, p[i].len);
		return total;
	}
	if (err)
		return err;
	iov = malloc((n < IOV_MAX ? n : IOV_MAX) * sizeof(*iov));
	if (!iov) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto put;
	}
	sort_pieces(p, n);
	while (i < n && !err) {
		int64_t start = 0, end = 0;
		int cnt = 0;

		if (small_stretch(p, n, i)) {
			err = staged_stretch(sf, write, p, n, &i, &stage);
			continue;
		}
		for (; i < n && cnt < IOV_MAX; i++) {
			if (!p[i].len)
				continue;
			if (cnt && p[i].off != end)
				break;
			if (!cnt)
				start = end = p[i].off;
			iov[cnt++] = (struct iovec){ .iov_base = p[i].buf,
						     .iov_len = p[i].len };
			end += (int64_t)p[i].len;
		}
		if (cnt)
			err = one_stretch(sf, write, iov, cnt, start, end);
	}
	free(iov);
	free(stage);
put:
	iod_subfile_put(sf);
	return err ? err : total;
}

int64_t iod_merge_write(struct iod_store *st, uint64_t file, uint32_t subfile,
			struct iod_piece *p, size_t n)
{
	return merge_io(st, file, subfile, p, n, 1);
}

int64_t iod_merge_read(struct iod_store *st, uint64_t file, uint32_t subfile,
		       struct iod_piece *p, size_t n)
{
	return merge_io(st, file, subfile, p, n, 0);
}
