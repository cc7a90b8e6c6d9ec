// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_viewio.c -- scatter and gather by a stored mapping (the rules are in
 * the header).
 *
 * One walk of the mapping over [lo, hi) turns runs into extents (runs
 * that continue each other in the subfile) and extents into groups.  A
 * group is a stretch of consecutive extents, hence a contiguous view
 * range and a contiguous slice of the packed data; when a group closes
 * it is either sieved or done extent by extent, and both walk the mapping
 * again over the group's view range only.  So nothing is stored per run
 * or per extent, whatever their number, and memory stays within one
 * sieving window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "iod_viewio.h"
#include "mapping_prog.h"

const struct iod_sieve iod_sieve_default = {
	.window = IOD_SIEVE_WINDOW_DEFAULT,
	.call_cost = IOD_SIEVE_CALL_COST_DEFAULT,
};

/* Runs continuing each other in the subfile (and so in the packed data). */
struct extent {
	int64_t vlo, vhi;	/* view range covering its runs */
	int64_t sub;		/* subfile offset of its first byte */
	int64_t len;
	size_t data;		/* offset of its first byte in the data */
};

typedef int (*extent_fn)(const struct extent *e, void *arg);

/* Coalescing runs into extents, during a CLF_Mapping_foreach. */
struct coalesce {
	extent_fn emit;
	void *arg;
	struct extent cur;	/* being built, when have */
	int have;
	size_t next_data;	/* data offset of the next run */
};

static int on_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct coalesce *c = arg;
	int err;

	if (c->have && c->cur.sub + c->cur.len == s) {
		c->cur.len += len;
		c->cur.vhi = v + len;
	} else {
		if (c->have) {
			err = c->emit(&c->cur, c->arg);
			if (err)
				return err;
		}
		c->cur = (struct extent){ .vlo = v, .vhi = v + len, .sub = s,
					  .len = len, .data = c->next_data };
		c->have = 1;
	}
	c->next_data += (size_t)len;
	return 0;
}

/* Call emit for each extent of view range [vlo, vhi), data from data0. */
static int for_each_extent(const CLF_Mapping *m, int64_t vlo, int64_t vhi,
			   size_t data0, extent_fn emit, void *arg)
{
	struct coalesce c = { .emit = emit, .arg = arg, .next_data = data0 };
	int err;

	err = CLF_Mapping_foreach(m, vlo, vhi, on_run, &c);
	if (!err && c.have)
		err = emit(&c.cur, arg);
	return err;
}

/* One view read or write in progress; lives on view_io's stack. */
struct viewio {
	struct iod_subfile *sf;	/* a reference, put by view_io */
	const CLF_Mapping *map;	/* borrowed from the view */
	char *data;		/* packed view bytes; const when writing */
	int write;
	int64_t k;		/* passes over a sieved span: 1 read, 2 write */
	struct iod_sieve sv;
	char *buf;		/* owned sieving buffer, bufcap bytes */
	size_t bufcap;

	/* The group being formed (consecutive extents), when ngroup > 0. */
	int64_t ngroup;		/* extents in it */
	int64_t glo, ghi;	/* subfile span */
	int64_t gvlo, gvhi;	/* view range */
	size_t gdata;		/* data offset of its first byte */
	size_t gend;		/* and after its last (progressions) */
	int64_t lo, hi;		/* the view range (progressions) */
};

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Read [off, off + len) of the subfile into buf, zeros past its end. */
static int read_zero_filled(struct iod_subfile *sf, char *buf, int64_t len,
			    int64_t off)
{
	ssize_t n = iod_subfile_pread(sf, buf, (size_t)len, off);

	if (n < 0)
		return (int)n;
	memset(buf + n, 0, (size_t)(len - n));
	return 0;
}

static int direct_extent(const struct extent *e, void *arg)
{
	struct viewio *w = arg;
	struct iod_range r;
	ssize_t n;

	if (!w->write)
		return read_zero_filled(w->sf, w->data + e->data, e->len,
					e->sub);
	iod_rangelock_lock(&w->sf->lock, &r, e->sub, e->sub + e->len);
	n = iod_subfile_pwrite(w->sf, w->data + e->data, (size_t)e->len,
			       e->sub);
	iod_rangelock_unlock(&w->sf->lock, &r);
	return n < 0 ? (int)n : 0;
}

/* Copy one extent between the packed data and the sieving buffer. */
static int copy_extent(const struct extent *e, void *arg)
{
	struct viewio *w = arg;
	char *in_buf = w->buf + (e->sub - w->glo);

	if (w->write)
		memcpy(in_buf, w->data + e->data, (size_t)e->len);
	else
		memcpy(w->data + e->data, in_buf, (size_t)e->len);
	return 0;
}

/*
 * Sieve the group [glo, ghi): read it whole into w->buf, let copy move
 * the data between w->buf and the request's buffer, and for a write put
 * it back, all under the range lock.
 */
static int sieve_span(struct viewio *w, int (*copy)(struct viewio *w))
{
	int64_t span = w->ghi - w->glo;
	struct iod_range r;
	ssize_t n;
	int err;

	if ((size_t)span > w->bufcap) {
		char *bigger = realloc(w->buf, (size_t)span);

		if (!bigger)
			return clf_fail(ENOMEM, "iod: out of memory");
		w->buf = bigger;
		w->bufcap = (size_t)span;
	}
	if (w->write)
		iod_rangelock_lock(&w->sf->lock, &r, w->glo, w->ghi);
	err = read_zero_filled(w->sf, w->buf, span, w->glo);
	if (!err)
		err = copy(w);
	if (!err && w->write) {
		n = iod_subfile_pwrite(w->sf, w->buf, (size_t)span, w->glo);
		err = n < 0 ? (int)n : 0;
	}
	if (w->write)
		iod_rangelock_unlock(&w->sf->lock, &r);
	return err;
}

static int copy_extents(struct viewio *w)
{
	return for_each_extent(w->map, w->gvlo, w->gvhi, w->gdata,
			       copy_extent, w);
}

static int sieve_group(struct viewio *w)
{
	return sieve_span(w, copy_extents);
}

/* Is the group better sieved?  (n - k) * call_cost > k * span. */
static int worth_sieving(const struct viewio *w)
{
	unsigned __int128 saved, extra;

	if (w->ngroup <= w->k)
		return 0;
	saved = (unsigned __int128)(w->ngroup - w->k) * w->sv.call_cost;
	extra = (unsigned __int128)w->k * (uint64_t)(w->ghi - w->glo);
	return saved > extra;
}

static int flush_group(struct viewio *w)
{
	int err;

	if (!w->ngroup)
		return 0;
	if (worth_sieving(w))
		err = sieve_group(w);
	else
		err = for_each_extent(w->map, w->gvlo, w->gvhi, w->gdata,
				      direct_extent, w);
	w->ngroup = 0;
	return err;
}


/* Place one extent of the first walk: into the group, or directly. */
static int place_extent(const struct extent *e, void *arg)
{
	struct viewio *w = arg;
	uint64_t cost = (uint64_t)w->sv.call_cost;
	int64_t lo, hi;
	int err;

	/* k * len >= cost, without overflow */
	if (!cost || (uint64_t)e->len >= (cost + (uint64_t)w->k - 1) / w->k) {
		err = flush_group(w);
		return err ? err : direct_extent(e, w);
	}
	if (w->ngroup) {
		lo = min64(w->glo, e->sub);
		hi = max64(w->ghi, e->sub + e->len);
		if ((uint64_t)(hi - lo) <= w->sv.window &&
		    (uint64_t)(w->k * ((hi - lo) - (w->ghi - w->glo))) <= cost) {
			w->glo = lo;
			w->ghi = hi;
			w->gvhi = e->vhi;
			w->ngroup++;
			return 0;
		}
		err = flush_group(w);
		if (err)
			return err;
	}
	w->ngroup = 1;
	w->glo = e->sub;
	w->ghi = e->sub + e->len;
	w->gvlo = e->vlo;
	w->gvhi = e->vhi;
	w->gdata = e->data;
	return 0;
}

/*
 * With the mapping's progressions by subfile (mapping_prog.h): the same
 * rules, one progression at a time.  Each run of a progression is an
 * extent; runs of a progression are equally spaced, so how many of them
 * join the group is one division, not one step each.  A closing group
 * walks its packed bytes [gdata, gend) again, from a binary search of
 * the table, and copies them with the compiled loops.
 */
static int prog_direct(const struct clf_prog *p, void *arg)
{
	struct viewio *w = arg;
	int err = 0;

	for (int64_t i = 0; i < p->n && !err; i++) {
		struct extent e = { .sub = p->x + i * p->dx, .len = p->len,
				    .data = (size_t)(p->c + i * p->len) };

		err = direct_extent(&e, w);
	}
	return err;
}

static int prog_copy(const struct clf_prog *p, void *arg)
{
	struct viewio *w = arg;

	clf_prog_copy_owned(p, (uint8_t *)w->data, (uint8_t *)w->buf, w->glo,
			    !w->write);
	return 0;
}

static int copy_progs(struct viewio *w)
{
	return clf_mapping_progs(w->map, w->lo, w->hi, CLF_PROG_SUB,
				 (int64_t)w->gdata, (int64_t)w->gend,
				 prog_copy, w);
}

static int prog_flush_group(struct viewio *w)
{
	int sieve;

	if (!w->ngroup)
		return 0;
	sieve = worth_sieving(w);
	w->ngroup = 0;
	if (!sieve)
		return clf_mapping_progs(w->map, w->lo, w->hi, CLF_PROG_SUB,
					 (int64_t)w->gdata, (int64_t)w->gend,
					 prog_direct, w);
	return sieve_span(w, copy_progs);
}

/* Run i of p joins the group, or closes it and starts the next. */
static int prog_join(struct viewio *w, const struct clf_prog *p, int64_t i)
{
	int64_t s = p->x + i * p->dx, c = p->c + i * p->len;
	int err;

	if (w->ngroup) {
		int64_t hi = max64(w->ghi, s + p->len);

		if ((uint64_t)(hi - w->glo) <= w->sv.window &&
		    (uint64_t)(w->k * (hi - w->ghi)) <= w->sv.call_cost) {
			w->ghi = hi;
			w->gend = (size_t)(c + p->len);
			w->ngroup++;
			return 0;
		}
		err = prog_flush_group(w);
		if (err)
			return err;
	}
	w->ngroup = 1;
	w->glo = s;
	w->ghi = s + p->len;
	w->gdata = (size_t)c;
	w->gend = (size_t)(c + p->len);
	return 0;
}

static int place_prog(const struct clf_prog *p, void *arg)
{
	struct viewio *w = arg;
	uint64_t cost = (uint64_t)w->sv.call_cost;
	int64_t i = 0;
	int err;

	/* k * len >= cost: never sieved (as place_extent) */
	if (!cost || (uint64_t)p->len >= (cost + (uint64_t)w->k - 1) / w->k) {
		err = prog_flush_group(w);
		return err ? err : prog_direct(p, w);
	}
	while (i < p->n) {
		err = prog_join(w, p, i++);
		if (err)
			return err;
		/* The next runs each grow the span by dx: all that fit. */
		if (i < p->n && (uint64_t)(w->k * p->dx) <= cost) {
			int64_t room = ((int64_t)w->sv.window -
					(w->ghi - w->glo)) / p->dx;
			int64_t add = min64(room, p->n - i);

			if (add > 0) {
				w->ghi += add * p->dx;
				w->ngroup += add;
				i += add;
				w->gend = (size_t)(p->c + i * p->len);
			}
		}
	}
	return 0;
}

static int64_t view_io(struct iod_store *st, const struct iod_view *v,
		       int64_t lo, int64_t hi, char *data, size_t len,
		       const struct iod_sieve *sv, int write)
{
	const char *what = write ? "write" : "read";
	struct viewio w = {
		.map = v->map,
		.data = data,
		.write = write,
		.k = write ? 2 : 1,
		.sv = sv ? *sv : iod_sieve_default,
	};
	int64_t count;
	int err;

	count = CLF_Mapping_count(v->map, lo, hi);
	if (count < 0)
		return clf_fail_neg((int)count,
				    "iod: cannot %s view %" PRIu32 ": bad view range [%" PRId64 ", %" PRId64 ")",
				    what, v->handle, lo, hi);
	if ((uint64_t)count != len || (len && !data))
		return clf_fail(EINVAL,
				"iod: cannot %s view %" PRIu32 ": view range [%" PRId64 ", %" PRId64 ") holds %" PRId64 " bytes of subfile %" PRIu32 " of file 0x%" PRIx64 ", not %zu",
				what, v->handle, lo, hi, count, v->subfile,
				v->file, len);
	if (len == 0)
		return 0;
	err = iod_subfile_get(st, v->file, v->subfile,
			      write ? IOD_CREATE : 0, &w.sf);
	if (err == -ENOENT && !write) {
		memset(data, 0, len);	/* never written: all holes */
		return (int64_t)len;
	}
	if (err)
		return err;
	if (clf_mapping_has_progs(v->map, CLF_PROG_SUB)) {
		w.lo = lo;
		w.hi = hi;
		err = clf_mapping_progs(v->map, lo, hi, CLF_PROG_SUB, 0,
					INT64_MAX, place_prog, &w);
		if (!err)
			err = prog_flush_group(&w);
	} else {
		err = for_each_extent(v->map, lo, hi, 0, place_extent, &w);
		if (!err)
			err = flush_group(&w);
	}
	free(w.buf);
	iod_subfile_put(w.sf);
	return err ? err : (int64_t)len;
}

int64_t iod_view_write(struct iod_store *st, const struct iod_view *v,
		       int64_t lo, int64_t hi, const void *data, size_t len,
		       const struct iod_sieve *sv)
{
	/* Only read from when writing. */
	return view_io(st, v, lo, hi, (char *)data, len, sv, 1);
}

int64_t iod_view_read(struct iod_store *st, const struct iod_view *v,
		      int64_t lo, int64_t hi, void *data, size_t len,
		      const struct iod_sieve *sv)
{
	return view_io(st, v, lo, hi, data, len, sv, 0);
}

/* ------------------------------------------------------------------ */
/* Collective accesses through a staging window                        */
/* ------------------------------------------------------------------ */

#define COLL_STOP 1		/* internal: the window ends, stop the walk */

/* One participant being moved window after window. */
struct coll_cursor {
	const struct iod_coll_src *src;
	int64_t c;		/* next packed byte */
	int64_t x;		/* its subfile offset; INT64_MAX: none left */
};

static int first_x(const struct clf_prog *p, void *arg)
{
	*(int64_t *)arg = p->x;
	return COLL_STOP;
}

/* The subfile offset of packed byte c of src, or INT64_MAX past the end. */
static int64_t x_of(const struct iod_coll_src *src, int64_t c)
{
	int64_t x = INT64_MAX;
	int err;

	if (c >= src->len)
		return INT64_MAX;
	err = clf_mapping_progs(src->map, src->lo, src->hi, CLF_PROG_SUB, c,
				c + 1, first_x, &x);
	return err < 0 ? err : x;
}

/* Copying one participant's runs that start in the window [a, wend). */
struct coll_copy {
	uint8_t *stage;
	uint8_t *data;
	int64_t a, wend;
	int64_t stop;		/* packed byte where the window ended */
	int64_t end;		/* subfile offset after the last byte moved */
	bool to_packed;
};

static int coll_copy_prog(const struct clf_prog *p, void *arg)
{
	struct coll_copy *cc = arg;
	struct clf_prog q = *p;
	int64_t nin, xl;

	if (p->x >= cc->wend) {
		cc->stop = p->c;
		return COLL_STOP;
	}
	nin = p->n == 1 ? 1 : min64(p->n, (cc->wend - 1 - p->x) / p->dx + 1);
	xl = p->x + (nin - 1) * p->dx;
	q.n = xl + p->len > cc->wend ? nin - 1 : nin;
	if (q.n)
		clf_prog_copy_owned(&q, cc->data, cc->stage, cc->a,
				    cc->to_packed);
	if (q.n < nin) {
		/* The last run crosses the window's end: its head. */
		struct clf_prog h = { p->c + q.n * p->len, xl, cc->wend - xl,
				      0, 1 };

		clf_prog_copy_owned(&h, cc->data, cc->stage, cc->a,
				    cc->to_packed);
		cc->end = cc->wend;
		cc->stop = h.c + h.len;
		return COLL_STOP;
	}
	cc->end = max64(cc->end, xl + p->len);
	if (nin < p->n) {
		cc->stop = p->c + nin * p->len;
		return COLL_STOP;
	}
	return 0;
}

bool iod_view_coll_fits(const struct iod_coll_src *s, int n)
{
	int64_t total = 0, lo = INT64_MAX, hi = 0;

	for (int i = 0; i < n; i++) {
		int64_t first, last;

		if (!s[i].len)
			continue;
		if (!clf_mapping_has_progs(s[i].map, CLF_PROG_SUB))
			return false;
		first = x_of(&s[i], 0);
		last = x_of(&s[i], s[i].len - 1);
		if (first < 0 || last < 0)
			return false;
		lo = min64(lo, first);
		hi = max64(hi, last + 1);
		total += s[i].len;
	}
	/* Dense enough that moving the span twice costs less than pieces. */
	return total > 0 && hi - lo <= 2 * total;
}

/* The staging window (iod_viewio.h): two system calls per window. */
#define COLL_WINDOW IOD_COLL_WINDOW

int64_t iod_view_coll_io(struct iod_store *st, uint64_t file,
			 uint32_t subfile, const struct iod_coll_src *s, int n,
			 int write)
{
	size_t window = COLL_WINDOW;
	struct coll_cursor *cur;
	struct iod_subfile *sf = NULL;
	uint8_t *stage = NULL;
	int64_t total = 0, last_end = 0;
	int err;

	cur = calloc(n ? n : 1, sizeof(*cur));
	if (!cur)
		return clf_fail(ENOMEM, "iod: out of memory");
	for (int i = 0; i < n; i++) {
		cur[i] = (struct coll_cursor){ &s[i], 0, x_of(&s[i], 0) };
		if (s[i].len)
			last_end = max64(last_end, x_of(&s[i], s[i].len - 1) + 1);
		total += s[i].len;
	}
	err = iod_subfile_get(st, file, subfile, write ? IOD_CREATE : 0, &sf);
	if (err == -ENOENT && !write) {
		for (int i = 0; i < n; i++)
			if (s[i].len)
				memset(s[i].data, 0, (size_t)s[i].len);
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	stage = malloc(window);
	if (!stage) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto out;
	}
	for (;;) {
		int64_t a = INT64_MAX, wend, end = 0;
		struct iod_range r;

		for (int i = 0; i < n; i++) {
			if (cur[i].x < 0) {
				err = (int)cur[i].x;
				goto out;
			}
			a = min64(a, cur[i].x);
		}
		if (a == INT64_MAX)
			break;
		wend = min64(a + (int64_t)window, last_end);
		if (write)
			iod_rangelock_lock(&sf->lock, &r, a, wend);
		err = read_zero_filled(sf, (char *)stage, wend - a, a);
		for (int i = 0; i < n && !err; i++) {
			struct coll_copy cc = { stage, (uint8_t *)s[i].data, a,
						wend, s[i].len, a, !write };

			if (cur[i].x >= wend)
				continue;
			err = clf_mapping_progs(s[i].map, s[i].lo, s[i].hi,
						CLF_PROG_SUB, cur[i].c,
						INT64_MAX, coll_copy_prog, &cc);
			if (err == COLL_STOP)
				err = 0;
			cur[i].c = cc.stop;
			cur[i].x = x_of(&s[i], cc.stop);
			end = max64(end, cc.end);
		}
		if (!err && write) {
			ssize_t w = iod_subfile_pwrite(sf, stage,
						       (size_t)(end - a), a);

			err = w < 0 ? (int)w : 0;
		}
		if (write)
			iod_rangelock_unlock(&sf->lock, &r);
		if (err)
			goto out;
	}
out:
	free(stage);
	if (sf)
		iod_subfile_put(sf);
	free(cur);
	return err ? err : total;
}
