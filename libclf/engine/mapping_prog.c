// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mapping_prog.c -- runs as progressions (mapping_prog.h); their copy
 * loops are in mapping_copy.c.
 *
 * With a table, a walk of view range [lo, hi) turns the range into the
 * common bytes it holds -- [C0, C0 + count), I's bytes being in file
 * order past the origin and so in both linear orders -- and reads the
 * stretch's progressions from the one holding C0, clipping the first and
 * the last.  Without one, the runs of CLF_Mapping_foreach are joined into
 * progressions as they come.
 */
#include <errno.h>
#include <stdlib.h>

#include "arith.h"
#include "error.h"
#include "mapping_i.h"
#include "mapping_prog.h"

/* ------------------------------------------------------------------ */
/* Walking                                                             */
/* ------------------------------------------------------------------ */

bool clf_mapping_has_progs(const CLF_Mapping *m, enum clf_prog_side side)
{
	return m && !m->tiled && m->prog[side];
}

/* The common index of view byte v: I's bytes before its file offset. */
static int common_index(const struct clf_mapping *m, int64_t v, int64_t *c)
{
	int64_t f;
	int err = CLF_Type_unmap(m->view, m->view_disp, v, &f);

	if (err)
		return err;
	*c = f <= m->origin ? 0 : map_common_before(m, f);
	return 0;
}

/* The first progression of side's table ending after common byte r. */
static int first_prog_after(const struct clf_prog *t, int nt, int64_t r)
{
	int a = 0, z = nt;

	while (a < z) {
		int mid = a + (z - a) / 2;

		if (t[mid].c + t[mid].n * t[mid].len <= r)
			a = mid + 1;
		else
			z = mid;
	}
	return a;
}

/*
 * Progressions on their way out: one that continues the pending one
 * (the same runs at the same stride, or a run going on) joins it, so
 * stretches whose runs continue each other's give one progression, not
 * one per stretch.
 */
struct pemit {
	struct clf_prog cur;	/* pending, when cur.n */
	int64_t c0;		/* made relative to this */
	clf_prog_fn fn;
	void *arg;
};

static int pemit_flush(struct pemit *e)
{
	struct clf_prog p = e->cur;

	if (!p.n)
		return 0;
	e->cur.n = 0;
	p.c -= e->c0;
	return e->fn(&p, e->arg);
}

static int emit(struct pemit *e, struct clf_prog p)
{
	struct clf_prog *c = &e->cur;

	if (c->n && c->n == 1 && p.n == 1 && c->x + c->len == p.x) {
		c->len += p.len;
		return 0;
	}
	if (c->n && p.len == c->len) {
		int64_t dx = c->n > 1 ? c->dx : p.x - c->x;

		if (dx > c->len && p.x == c->x + c->n * dx &&
		    (p.n == 1 || p.dx == dx)) {
			c->dx = dx;
			c->n += p.n;
			return 0;
		}
	}
	if (c->n) {
		int err = pemit_flush(e);

		if (err)
			return err;
	}
	*c = p;
	return 0;
}

/*
 * Common bytes [cf, ct) by the table of side; c0: the range's first.
 * Stretch k's progressions are the table's, c shifted by k * tcper and
 * x by k * (view or subfile bytes of a stretch).
 */
static int walk_table(const struct clf_mapping *m, enum clf_prog_side side,
		      int64_t c0, int64_t cf, int64_t ct, clf_prog_fn fn,
		      void *arg)
{
	const struct clf_prog *t = m->prog[side];
	int nt = m->nprog[side];
	int64_t xper = side == CLF_PROG_SUB ? m->tsper : m->tvper;
	int64_t x0 = side == CLF_PROG_SUB ? m->s0 : m->v0;
	int64_t k = cf / m->tcper;
	int i = first_prog_after(t, nt, cf - k * m->tcper);
	struct pemit e = { .c0 = c0, .fn = fn, .arg = arg };
	int err;

	for (;; k++, i = 0) {
		int64_t bc = k * m->tcper, bx = x0 + k * xper;

		for (; i < nt; i++) {
			struct clf_prog p = t[i];
			int64_t full;

			p.c += bc;
			p.x += bx;
			if (p.c >= ct)
				return pemit_flush(&e);
			if (p.c < cf) {
				int64_t j = (cf - p.c) / p.len;
				int64_t off = cf - p.c - j * p.len;

				if (off) {
					struct clf_prog r = {
						cf, p.x + j * p.dx + off,
						min64(p.len - off, ct - cf), 0, 1
					};

					err = emit(&e, r);
					if (err)
						return err;
					if (cf + r.len >= ct)
						return pemit_flush(&e);
					j++;
				}
				p.c += j * p.len;
				p.x += j * p.dx;
				p.n -= j;
				if (p.n <= 0)
					continue;
			}
			/* Whole (the usual case): no division. */
			if (p.c + p.n * p.len <= ct) {
				err = emit(&e, p);
				if (err)
					return err;
				continue;
			}
			full = (ct - p.c) / p.len;
			if (full) {
				struct clf_prog h = p;

				h.n = full;
				err = emit(&e, h);
				if (err)
					return err;
			}
			if (ct > p.c + full * p.len) {
				struct clf_prog r = {
					p.c + full * p.len, p.x + full * p.dx,
					ct - p.c - full * p.len, 0, 1
				};

				err = emit(&e, r);
			}
			return err ? err : pemit_flush(&e);
		}
	}
}

/* Runs joined into progressions as they come, without a table. */
struct joiner {
	enum clf_prog_side side;
	int64_t c, from, to;	/* packed offset of the next run; the clip */
	struct clf_prog cur;	/* pending, when cur.n */
	clf_prog_fn fn;
	void *arg;
};

#define JOIN_DONE 1	/* internal: past c_to, stop the walk */

static int join_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct joiner *j = arg;
	int64_t x = j->side == CLF_PROG_SUB ? s : v, c = j->c;
	int err;

	j->c += len;
	if (c + len <= j->from)
		return 0;
	if (c >= j->to)
		return JOIN_DONE;
	if (c < j->from) {
		x += j->from - c;
		len -= j->from - c;
		c = j->from;
	}
	if (c + len > j->to)
		len = j->to - c;
	if (j->cur.n == 1 && j->cur.x + j->cur.len == x) {
		j->cur.len += len;
		return 0;
	}
	if (j->cur.n && clf_prog_continues(&j->cur, c, x, len)) {
		if (j->cur.n == 1)
			j->cur.dx = x - j->cur.x;
		j->cur.n++;
		return 0;
	}
	if (j->cur.n) {
		err = j->fn(&j->cur, j->arg);
		if (err)
			return err;
	}
	j->cur = (struct clf_prog){ c, x, len, 0, 1 };
	return 0;
}

int clf_mapping_progs(const CLF_Mapping *m, int64_t lo, int64_t hi,
		      enum clf_prog_side side, int64_t c_from, int64_t c_to,
		      clf_prog_fn fn, void *arg)
{
	struct joiner j = { side, 0, max64(c_from, 0), c_to, { 0 }, fn, arg };
	int64_t c0, n;
	int err;

	if (!m || !fn || lo < 0 || hi < lo)
		return clf_fail(EINVAL, "mapping: bad view range [%lld, %lld)",
				(long long)lo, (long long)hi);
	if (lo == hi || j.from >= c_to)
		return 0;
	if (clf_mapping_has_progs(m, side)) {
		n = CLF_Mapping_count(m, lo, hi);
		if (n <= 0)
			return (int)n;
		err = common_index(m, lo, &c0);
		if (err)
			return err;
		if (j.from >= n)
			return 0;
		return walk_table(m, side, c0, c0 + j.from,
				  c0 + min64(c_to, n), fn, arg);
	}
	err = side == CLF_PROG_SUB
		      ? CLF_Mapping_foreach_packed(m, lo, hi, join_run, &j)
		      : CLF_Mapping_foreach(m, lo, hi, join_run, &j);
	if (err && err != JOIN_DONE)
		return err;
	return j.cur.n ? fn(&j.cur, arg) : 0;
}

/* ------------------------------------------------------------------ */
/* Cutting                                                             */
/* ------------------------------------------------------------------ */

struct cut {
	int64_t want, got;	/* packed bytes wanted, seen */
	int64_t at;		/* view offset after the last one seen */
};

#define CUT_DONE 1	/* stops the walk: not a negative errno */

static int cut_run(int64_t v, int64_t s, int64_t len, void *arg)
{
	struct cut *c = arg;

	(void)s;
	if (c->got + len >= c->want) {
		c->at = v + (c->want - c->got);
		c->got = c->want;
		return CUT_DONE;
	}
	c->got += len;
	c->at = v + len;
	return 0;
}

static int cut_prog(const struct clf_prog *p, void *arg)
{
	int64_t *at = arg;
	int64_t i = p->n - 1;

	/* The last byte of the walked bytes, plus one. */
	*at = p->x + i * p->dx + p->len;
	return 0;
}

int clf_mapping_cut(const CLF_Mapping *m, int64_t lo, int64_t hi,
		    int64_t want, int64_t *at)
{
	struct cut c = { want, 0, hi };
	int err;

	if (want > 0 && clf_mapping_has_progs(m, CLF_PROG_VIEW)) {
		int64_t n = CLF_Mapping_count(m, lo, hi), a = hi;

		if (n < 0)
			return (int)n;
		if (want <= n) {
			err = clf_mapping_progs(m, lo, hi, CLF_PROG_VIEW,
						want - 1, want, cut_prog, &a);
			if (err)
				return err;
		}
		*at = a;
		return 0;
	}
	err = CLF_Mapping_foreach(m, lo, hi, cut_run, &c);
	if (err && err != CUT_DONE)
		return err;
	*at = err == CUT_DONE ? c.at : hi;
	return 0;
}
