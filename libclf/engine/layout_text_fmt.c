// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * layout_text_fmt.c -- write a layout as text (layout_text.h).
 *
 * First the named patterns are tried: the parameters a pattern would
 * need are read off the types (where subfile 1 starts gives the block
 * size, and so on), the pattern is built and compared with the types;
 * only an exact match is written by name.  Anything else is written in
 * the general form, from each type's description:
 *
 *   a FALLS (l, r, s, n, inner) of a set of extent E becomes
 *   vec(l, r, s, n, <inner with extent r - l + 1>), whose extent is n*s;
 *   a set of several FALLS becomes struct(...), whose extent is the
 *   largest member's.
 *
 * Extents must come out exactly E, so a single block is written with
 * stride E (vec(l, r, E, 1)), and a vector whose n*s is not E is cut
 * before its last block, which is written with stride E.  A FALLS whose
 * first block ends past its stride (l >= s, as members of a set may)
 * cannot be a vec() of its own: it is written as one block [l, hi] whose
 * inner type is the same FALLS moved to 0.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "falls.h"
#include "layout_text.h"
#include "layout_text_i.h"
#include "type.h"

/* A growing string; err is set (-ENOMEM) once an append failed. */
struct strbuf {
	char *s;	/* owned */
	size_t len, cap;
	int err;
};

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(sb->s ? sb->s + sb->len : NULL,
			      sb->s ? sb->cap - sb->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->err = -EINVAL;
			return;
		}
		if (sb->s && sb->len + n < sb->cap) {
			sb->len += n;
			return;
		}
		size_t cap = sb->cap ? sb->cap : 128;
		char *ns;

		while (cap <= sb->len + n)
			cap *= 2;
		ns = realloc(sb->s, cap);
		if (!ns) {
			sb->err = -ENOMEM;
			return;
		}
		sb->s = ns;
		sb->cap = cap;
	}
}

/* 65536 -> "64k"; other values in decimal. */
static void put_num(struct strbuf *sb, int64_t v)
{
	static const char units[] = "kmgt";
	int u = -1;

	while (v >= 1024 && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		sb_printf(sb, "%lld", (long long)v);
	else
		sb_printf(sb, "%lld%c", (long long)v, units[u]);
}

/* A block's last byte: 65535 -> "64k-1". */
static void put_end(struct strbuf *sb, int64_t r)
{
	if (r >= 1023 && r < INT64_MAX && (r + 1) % 1024 == 0) {
		put_num(sb, r + 1);
		sb_printf(sb, "-1");
	} else {
		put_num(sb, r);
	}
}

/* ------------------------------------------------------------------ */
/* The general form                                                    */
/* ------------------------------------------------------------------ */

/*
 * One vec(...) of the output: vec(l, r, s, n, <in with extent r-l+1>),
 * or, when wrap is set, the single block [l, r] with stride s holding
 * the FALLS *wrap shifted to 0 (a vector whose blocks reach past its
 * stride cannot start at l: vec() needs right < stride).
 */
struct item {
	int64_t l, r, s, n;
	const struct fset *in;		/* borrowed; NULL: whole blocks */
	const struct falls *wrap;	/* borrowed, or NULL */
};

static void put_falls(struct strbuf *sb, const struct falls *f, int nr,
		      int64_t extent);

static void put_item(struct strbuf *sb, const struct item *it)
{
	sb_printf(sb, "vec(");
	put_num(sb, it->l);
	sb_printf(sb, ",");
	put_end(sb, it->r);
	sb_printf(sb, ",");
	put_num(sb, it->s);
	sb_printf(sb, ",");
	put_num(sb, it->n);
	if (it->wrap) {
		struct falls at0 = *it->wrap;

		at0.r -= at0.l;
		at0.hi -= at0.l;
		at0.l = 0;
		sb_printf(sb, ",");
		put_falls(sb, &at0, 1, it->r - it->l + 1);
	} else if (it->in) {
		sb_printf(sb, ",");
		put_falls(sb, it->in->f, it->in->nr, it->r - it->l + 1);
	}
	sb_printf(sb, ")");
}

/* The first n-1 blocks as they are, the last one with stride extent. */
static void cut_last(const struct falls *f, int64_t extent, struct item *a,
		     struct item *b)
{
	int64_t off = (f->n - 1) * f->s;	/* < extent: no overflow */

	*a = (struct item){ f->l, f->r, f->n > 2 ? f->s : extent, f->n - 1,
			    f->in, NULL };
	*b = (struct item){ f->l + off, f->r + off, extent, 1, f->in, NULL };
}

/*
 * The type of extent extent selecting the nr FALLS f (a set's members,
 * disjoint, inside the extent).  One byte of extent 1 is "byte".
 */
static void put_falls(struct strbuf *sb, const struct falls *f, int nr,
		      int64_t extent)
{
	struct item *items;
	int ni = 0, last_vec = -1;
	int64_t max_ext = 0;

	if (extent == 1) {
		sb_printf(sb, "byte");
		return;
	}
	/* Each member yields one item, or two when cut. */
	items = calloc(2 * (size_t)nr + 1, sizeof(*items));
	if (!items) {
		sb->err = -ENOMEM;
		return;
	}
	for (int i = 0; i < nr; i++) {
		int64_t ext;

		if (f[i].n == 1) {
			items[ni++] = (struct item){ f[i].l, f[i].r, extent, 1,
						     f[i].in, NULL };
			max_ext = extent;
		} else if (f[i].r >= f[i].s) {
			items[ni++] = (struct item){ f[i].l, f[i].hi, extent, 1,
						     NULL, &f[i] };
			max_ext = extent;
		} else if (mul_ok(f[i].n, f[i].s, &ext) && ext <= extent) {
			items[ni++] = (struct item){ f[i].l, f[i].r, f[i].s,
						     f[i].n, f[i].in, NULL };
			max_ext = max64(max_ext, ext);
			last_vec = ni - 1;
		} else {
			cut_last(&f[i], extent, &items[ni], &items[ni + 1]);
			ni += 2;
			max_ext = extent;
		}
	}
	if (max_ext < extent) {
		/* Every item is a vector shorter than the extent. */
		struct falls v = {
			.l = items[last_vec].l, .r = items[last_vec].r,
			.s = items[last_vec].s, .n = items[last_vec].n,
			.in = (struct fset *)items[last_vec].in,
		};

		cut_last(&v, extent, &items[last_vec], &items[ni]);
		ni++;
	}
	if (ni > 1)
		sb_printf(sb, "struct(");
	for (int i = 0; i < ni; i++) {
		if (i)
			sb_printf(sb, ",");
		put_item(sb, &items[i]);
	}
	if (ni > 1)
		sb_printf(sb, ")");
	free(items);
}

/* ------------------------------------------------------------------ */
/* Named patterns                                                      */
/* ------------------------------------------------------------------ */

/* Do the types equal the made ones?  Frees the made ones either way. */
static bool same_types(int n, const CLF_Datatype *types, CLF_Datatype *made)
{
	bool same = true;

	for (int j = 0; j < n; j++) {
		same = same && clf_lt_type_same(types[j], made[j]);
		CLF_Type_free(&made[j]);
	}
	return same;
}

/* cyclic(k) over n, nb rounds per period?  Fills *k and *nb. */
static bool is_cyclic(int n, const CLF_Datatype *types, CLF_Datatype *made,
		      int64_t *k, int64_t *nb)
{
	int64_t e = types[0]->extent, kk, period;

	kk = n > 1 ? types[1]->set->lo : e;
	if (kk < 1 || !mul_ok(kk, n, &period) || e % period)
		return false;
	if (clf_lt_cyclic(kk, n, e / period, made))
		return false;
	if (!same_types(n, types, made))
		return false;
	*k = kk;
	*nb = e / period;
	return true;
}

/* Up to max divisors of x (all when x <= 2^32), in *out (caller frees). */
static int divisors(int64_t x, int max, int64_t **out)
{
	int64_t *d = malloc(max * sizeof(*d));
	int n = 0;

	if (!d)
		return -ENOMEM;
	for (int64_t i = 1; i <= 65536 && i * i <= x && n + 2 <= max; i++) {
		if (x % i)
			continue;
		d[n++] = i;
		if (i != x / i)
			d[n++] = x / i;
	}
	*out = d;
	return n;
}

struct grid_guess {
	int64_t rows, cols, kr, kc;
	double score;		/* long side / short side: squarer first */
};

static int cmp_guess(const void *a, const void *b)
{
	const struct grid_guess *x = a, *y = b;

	return (x->score > y->score) - (x->score < y->score);
}

/*
 * The shapes of a pr x pc grid the types could come from.  The column
 * tile kc is where subfile 1 starts; kr rows of the matrix are where
 * subfile pc starts.  The matrix width is not determined by the types
 * (several widths give the same bytes): every width that fits is a
 * guess, the most square first.
 */
static int grid_guesses(const CLF_Datatype *types, int pr, int pc,
			struct grid_guess **out)
{
	int64_t e = types[0]->extent, kc = 0, band = 0, *d;
	struct grid_guess *g;
	int nd, ng = 0;

	if (pc > 1 && (kc = types[1]->set->lo) < 1)
		return 0;
	if (pr > 1 && (band = types[pc]->set->lo) < 1)
		return 0;
	nd = divisors(pr > 1 ? band : e, 4096, &d);
	if (nd < 0)
		return nd;
	g = calloc(nd ? nd : 1, sizeof(*g));
	if (!g) {
		free(d);
		return -ENOMEM;
	}
	for (int i = 0; i < nd; i++) {
		int64_t cols = d[i], rows, kr, tc, tr;

		if (e % cols)
			continue;
		rows = e / cols;
		kr = pr > 1 ? band / cols : rows;
		if (pc > 1 && (!mul_ok(pc, kc, &tc) || cols % tc))
			continue;
		if (!mul_ok(pr, kr, &tr) || rows % tr)
			continue;
		g[ng++] = (struct grid_guess){
			rows, cols, kr, pc > 1 ? kc : cols,
			rows > cols ? (double)rows / cols
				    : (double)cols / rows,
		};
	}
	free(d);
	qsort(g, ng, sizeof(*g), cmp_guess);
	*out = g;
	return ng;
}

/* A grid over some pr x pc = n?  *is says; then fills *found.  0 or
 * -errno. */
static int is_grid(int n, const CLF_Datatype *types, CLF_Datatype *made,
		   int *pr_out, struct grid_guess *found, bool *is)
{
	*is = false;
	for (int pr = 1; pr <= n && n >= 2; pr++) {
		struct grid_guess *g = NULL;
		int pc = n / pr, ng;

		if (n % pr)
			continue;
		ng = grid_guesses(types, pr, pc, &g);
		if (ng < 0)
			return ng;
		for (int i = 0; i < ng && i < 64; i++) {
			if (clf_lt_grid(g[i].rows, g[i].cols, pr, pc, g[i].kr,
					g[i].kc, made))
				continue;
			if (same_types(n, types, made)) {
				*pr_out = pr;
				*found = g[i];
				*is = true;
				free(g);
				return 0;
			}
		}
		free(g);
	}
	return 0;
}

/* Subfile j on iod (first + j) mod niods?  Then *first. */
static bool consecutive(int n, const int *iods, int niods, int *first)
{
	if (!iods || niods < 1 || iods[0] < 0 || iods[0] >= niods)
		return false;
	for (int j = 0; j < n; j++)
		if (iods[j] != (int)((iods[0] + (int64_t)j) % niods))
			return false;
	*first = iods[0];
	return true;
}

/* The layout by name into sb when it is a named pattern: *named says.
 * 0 or -errno. */
static int put_named(struct strbuf *sb, int64_t disp, int n,
		     const CLF_Datatype *types, const int *iods, int niods,
		     bool *named)
{
	struct grid_guess g;
	CLF_Datatype *made;
	int64_t k, nb;
	bool found = false;
	int first, pr, err = 0;

	*named = false;
	for (int j = 1; j < n; j++)
		if (types[j]->extent != types[0]->extent)
			return 0;
	made = calloc(n, sizeof(*made));
	if (!made)
		return -ENOMEM;
	if (is_cyclic(n, types, made, &k, &nb)) {
		found = true;
		if (nb == 1 && consecutive(n, iods, niods, &first)) {
			sb_printf(sb, "rr:stripe=");
			put_num(sb, k);
			sb_printf(sb, ",count=%d", n);
			if (first)
				sb_printf(sb, ",first=%d", first);
		} else {
			sb_printf(sb, "cyclic:k=");
			put_num(sb, k);
			sb_printf(sb, ",p=%d", n);
			if (nb != 1) {
				sb_printf(sb, ",n=");
				put_num(sb, nb);
			}
		}
	} else {
		err = is_grid(n, types, made, &pr, &g, &found);
		if (found) {
			sb_printf(sb, "grid:rows=");
			put_num(sb, g.rows);
			sb_printf(sb, ",cols=");
			put_num(sb, g.cols);
			sb_printf(sb, ",p=%dx%d,k=", pr, n / pr);
			put_num(sb, g.kr);
			sb_printf(sb, "x");
			put_num(sb, g.kc);
		}
	}
	if (found && disp) {
		sb_printf(sb, ",disp=");
		put_num(sb, disp);
	}
	free(made);
	if (!err)
		*named = found;
	return err;
}

int clf_layout_text_format(int64_t disp, int count, const CLF_Datatype *types,
			   const int *iods, int niods, char **out)
{
	struct strbuf sb = { 0 };
	bool named;
	int err;

	if (disp < 0 || count < 1 || !types || !out)
		return clf_fail(EINVAL, "layout: nothing to format");
	for (int j = 0; j < count; j++)
		if (!types[j])
			return clf_fail(EINVAL, "layout: subfile %d has no type",
					j);
	err = put_named(&sb, disp, count, types, iods, niods, &named);
	if (err)
		sb.err = err;
	else if (!named) {
		if (disp) {
			sb_printf(&sb, "disp=");
			put_num(&sb, disp);
			sb_printf(&sb, ";");
		}
		for (int j = 0; j < count; j++) {
			if (j)
				sb_printf(&sb, ";");
			put_falls(&sb, types[j]->set->f, types[j]->set->nr,
				  types[j]->extent);
		}
	}
	if (sb.err) {
		free(sb.s);
		return clf_fail_neg(sb.err, "layout: cannot format: %s",
				    strerror(-sb.err));
	}
	*out = sb.s;
	return 0;
}

int clf_type_text_format(CLF_Datatype type, char **out)
{
	struct strbuf sb = { 0 };

	if (!type || !out)
		return clf_fail(EINVAL, "type: nothing to format");
	put_falls(&sb, type->set->f, type->set->nr, type->extent);
	if (sb.err) {
		free(sb.s);
		return clf_fail_neg(sb.err, "type: cannot format: %s",
				    strerror(-sb.err));
	}
	*out = sb.s;
	return 0;
}
