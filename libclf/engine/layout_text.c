// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * layout_text.c -- parse a layout text (layout_text.h) into types.
 *
 * A recursive descent over the text, one function per rule of the
 * grammar in docs/layout-syntax.md.  Every failure records the column
 * (1-based) where it was found; the first one ends the parse.
 *
 * The same grammar reads one type (clf_type_text_parse): a type of the
 * general form, or a named pattern with part=J picking subfile J's type.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "clf_proto.h"
#include "error.h"
#include "layout_text.h"
#include "layout_text_i.h"

#define LT_MAX_DEPTH 64		/* nested vec/struct/parentheses */
#define LT_IDENT_MAX 16

struct lt_parser {
	const char *text;	/* borrowed */
	size_t pos;		/* next character */
	int depth;
	bool single;		/* one type, not a layout: part= is a field */
	const char *what;	/* "layout" or "type", starts messages */
};

/*
 * Fail with "layout: at column C: <what>" ("type: ..." for one type), C
 * the column of byte at.
 */
static int lt_fail(const struct lt_parser *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lt_fail(const struct lt_parser *p, size_t at, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return clf_fail(EINVAL, "%s: at column %zu: %s", p->what, at + 1,
			what);
}

/* The same with the current message of a failed constructor. */
static int lt_fail_last(const struct lt_parser *p, size_t at, int err,
			const char *what)
{
	char why[300];

	size_t wl = strlen(what);

	snprintf(why, sizeof(why), "%s", CLF_Last_error());
	/* A text that asks for too much is as wrong as a malformed one. */
	if (err != -ENOMEM && err != -E2BIG)
		err = -EINVAL;
	/* The constructor may have named itself already ("grid: ..."). */
	if (!strncmp(why, what, wl) && !strncmp(why + wl, ": ", 2))
		return clf_fail_neg(err, "%s: at column %zu: %s", p->what,
				    at + 1, why);
	return clf_fail_neg(err, "%s: at column %zu: %s: %s", p->what, at + 1,
			    what, why);
}

static void skip_blanks(struct lt_parser *p)
{
	while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
	       p->text[p->pos] == '\n' || p->text[p->pos] == '\r')
		p->pos++;
}

/* The next non-blank character (0 at the end), not consumed. */
static char peek(struct lt_parser *p)
{
	skip_blanks(p);
	return p->text[p->pos];
}

/* Describe the character at the cursor for a message. */
static const char *found(struct lt_parser *p, char buf[16])
{
	char c = peek(p);

	if (!c)
		return "the end of the text";
	if (c >= 0x21 && c <= 0x7e)
		snprintf(buf, 16, "'%c'", c);
	else
		snprintf(buf, 16, "byte 0x%02x", (unsigned char)c);
	return buf;
}

/* Consume c or fail with "expected 'c' <after>, found ...". */
static int expect(struct lt_parser *p, char c, const char *after)
{
	char buf[16];

	if (peek(p) == c) {
		p->pos++;
		return 0;
	}
	return lt_fail(p, p->pos, "expected '%c' %s, found %s", c, after,
		       found(p, buf));
}

static bool is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || c == '_';
}

/* An identifier of lower-case letters into name ("" if none). */
static int ident(struct lt_parser *p, char name[LT_IDENT_MAX], size_t *at)
{
	size_t n = 0;

	skip_blanks(p);
	*at = p->pos;
	while (is_ident_char(p->text[p->pos])) {
		if (n + 1 >= LT_IDENT_MAX)
			return lt_fail(p, *at, "name too long");
		name[n++] = p->text[p->pos++];
	}
	name[n] = '\0';
	return 0;
}

static int expr(struct lt_parser *p, int64_t *v);

/* number[k|m|g|t] | '(' expr ')' */
static int factor(struct lt_parser *p, int64_t *v)
{
	static const char suffixes[] = "kmgt";
	size_t at;
	int64_t x = 0;
	char buf[16], c = peek(p);
	const char *s;
	int err;

	at = p->pos;
	if (c == '(') {
		if (++p->depth > LT_MAX_DEPTH)
			return lt_fail(p, at, "nested too deeply");
		p->pos++;
		err = expr(p, v);
		if (!err)
			err = expect(p, ')', "to close the parenthesis");
		p->depth--;
		return err;
	}
	if (c < '0' || c > '9')
		return lt_fail(p, at, "expected a number, found %s",
			       found(p, buf));
	while (p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
		if (!mul_ok(x, 10, &x) ||
		    !add_ok(x, p->text[p->pos] - '0', &x))
			return lt_fail(p, at, "number too large");
		p->pos++;
	}
	c = p->text[p->pos];
	if (c >= 'A' && c <= 'Z')
		c = (char)(c - 'A' + 'a');
	s = c ? strchr(suffixes, c) : NULL;
	if (s) {
		for (long i = 0; i <= s - suffixes; i++)
			if (!mul_ok(x, 1024, &x))
				return lt_fail(p, at, "number too large");
		p->pos++;
	}
	*v = x;
	return 0;
}

/* factor ('*' factor)* */
static int term(struct lt_parser *p, int64_t *v)
{
	int64_t x, y;
	size_t at = p->pos;
	int err = factor(p, &x);

	while (!err && peek(p) == '*') {
		p->pos++;
		err = factor(p, &y);
		if (!err && !mul_ok(x, y, &x))
			err = lt_fail(p, at, "product too large");
	}
	if (!err)
		*v = x;
	return err;
}

/* term (('+' | '-') term)*; the value must stay >= 0. */
static int expr(struct lt_parser *p, int64_t *v)
{
	int64_t x, y;
	size_t at;
	int err;

	skip_blanks(p);
	at = p->pos;
	err = term(p, &x);
	while (!err && (peek(p) == '+' || peek(p) == '-')) {
		char op = p->text[p->pos++];

		err = term(p, &y);
		if (err)
			break;
		if (op == '+' && !add_ok(x, y, &x))
			err = lt_fail(p, at, "sum too large");
		else if (op == '-' && y > x)
			err = lt_fail(p, at, "negative value");
		else if (op == '-')
			x -= y;
	}
	if (!err)
		*v = x;
	return err;
}

static int type(struct lt_parser *p, CLF_Datatype *out);

/* vec '(' l ',' r ',' s ',' n [',' type] ')', after "vec". */
static int vec(struct lt_parser *p, size_t at, CLF_Datatype *out)
{
	static const char *const names[] = {
		"the left offset", "the right offset", "the stride",
		"the count",
	};
	CLF_Datatype inner = CLF_BYTE, t;
	int64_t v[4];
	int err = expect(p, '(', "after vec");

	for (int i = 0; i < 4 && !err; i++) {
		err = expr(p, &v[i]);
		if (!err && i < 3) {
			char after[32];

			snprintf(after, sizeof(after), "after %s", names[i]);
			err = expect(p, ',', after);
		}
	}
	if (err)
		return err;
	if (peek(p) == ',') {
		p->pos++;
		err = type(p, &inner);
		if (err)
			return err;
	}
	err = expect(p, ')', "to close vec (after the count or the inner type)");
	if (!err) {
		t = CLF_Type_vector(v[0], v[1], v[2], v[3], inner);
		if (!t)
			err = lt_fail_last(p, at, -errno, "vec");
		else
			*out = t;
	}
	CLF_Type_free(&inner);
	return err;
}

/* struct '(' type (',' type)* ')', after "struct". */
static int structure(struct lt_parser *p, size_t at, CLF_Datatype *out)
{
	CLF_Datatype *m = NULL, t;
	int n = 0, alloc = 0;
	int err = expect(p, '(', "after struct");

	while (!err) {
		if (n == alloc) {
			int na = alloc ? 2 * alloc : 8;
			CLF_Datatype *nm = realloc(m, na * sizeof(*nm));

			if (!nm) {
				err = clf_fail(ENOMEM, "layout: out of memory");
				break;
			}
			m = nm;
			alloc = na;
		}
		err = type(p, &m[n]);
		if (err)
			break;
		n++;
		if (peek(p) != ',')
			break;
		p->pos++;
	}
	if (!err)
		err = expect(p, ')', "or ',' in struct");
	if (!err) {
		t = CLF_Type_struct(n, m);
		if (!t)
			err = lt_fail_last(p, at, -errno, "struct");
		else
			*out = t;
	}
	while (n > 0)
		CLF_Type_free(&m[--n]);
	free(m);
	return err;
}

/* byte | vec(...) | struct(...) */
static int type(struct lt_parser *p, CLF_Datatype *out)
{
	char name[LT_IDENT_MAX], buf[16];
	size_t at;
	int err = ident(p, name, &at);

	if (err)
		return err;
	if (++p->depth > LT_MAX_DEPTH) {
		p->depth--;
		return lt_fail(p, at, "types nested too deeply");
	}
	if (!strcmp(name, "byte"))
		*out = CLF_BYTE;
	else if (!strcmp(name, "vec"))
		err = vec(p, at, out);
	else if (!strcmp(name, "struct"))
		err = structure(p, at, out);
	else if (*name)
		err = lt_fail(p, at, "unknown type '%s' (expected byte, vec or struct)",
			      name);
	else
		err = lt_fail(p, at, "expected a type (byte, vec or struct), found %s",
			      found(p, buf));
	p->depth--;
	return err;
}

/* ------------------------------------------------------------------ */
/* Named patterns: kind ':' name '=' value (',' name '=' value)*       */
/* ------------------------------------------------------------------ */

enum lt_kind { LT_RR, LT_CYCLIC, LT_BLOCK, LT_GRID };

/*
 * The fields each kind takes, in the order messages list them.  The last
 * one, part, only names one subfile's type (clf_type_text_parse).
 */
#define LT_FIELDS_MAX 7
static const char *const kind_names[] = { "rr", "cyclic", "block", "grid" };
static const char *const kind_fields[][LT_FIELDS_MAX] = {
	[LT_RR] = { "stripe", "count", "first", "disp", "part", NULL },
	[LT_CYCLIC] = { "k", "p", "n", "disp", "part", NULL },
	[LT_BLOCK] = { "size", "p", "disp", "part", NULL },
	[LT_GRID] = { "rows", "cols", "p", "k", "disp", "part", NULL },
};

/* Does the parse take field i of kind?  part only for one type. */
static bool field_allowed(const struct lt_parser *p, enum lt_kind kind, int i)
{
	return p->single || strcmp(kind_fields[kind][i], "part");
}

/* The index of field name of kind. */
static int field_index(enum lt_kind kind, const char *name)
{
	int i;

	for (i = 0; kind_fields[kind][i]; i++)
		if (!strcmp(name, kind_fields[kind][i]))
			break;
	return i;
}

/* A field's value(s): one number, or two for grid's p and k ("2x2"). */
struct lt_field {
	bool set;
	size_t at;		/* column of the value */
	int64_t v[2];
};

/* "stripe, count, first, disp" */
static void field_list(const struct lt_parser *p, enum lt_kind kind,
		       char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; kind_fields[kind][i] && n < len; i++)
		if (field_allowed(p, kind, i))
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
				      kind_fields[kind][i]);
}

static int named_fields(struct lt_parser *p, enum lt_kind kind,
			struct lt_field *fields)
{
	char name[LT_IDENT_MAX], list[64], buf[16];
	size_t at;
	int err = 0, i;

	for (;;) {
		err = ident(p, name, &at);
		if (err)
			return err;
		i = field_index(kind, name);
		field_list(p, kind, list, sizeof(list));
		if (!*name)
			return lt_fail(p, at,
				       "expected a field of %s (%s), found %s",
				       kind_names[kind], list, found(p, buf));
		if (!kind_fields[kind][i] || !field_allowed(p, kind, i))
			return lt_fail(p, at,
				       "unknown field '%s' for %s (expected %s)",
				       name, kind_names[kind], list);
		if (fields[i].set)
			return lt_fail(p, at, "field '%s' given twice", name);
		err = expect(p, '=', "after the field name");
		if (err)
			return err;
		skip_blanks(p);
		fields[i].at = p->pos;
		err = expr(p, &fields[i].v[0]);
		if (!err && kind == LT_GRID && (i == 2 || i == 3)) {
			char after[64];

			snprintf(after, sizeof(after),
				 "between the two values of %s (as in 2x2)",
				 name);
			err = expect(p, 'x', after);
			if (!err)
				err = expr(p, &fields[i].v[1]);
		}
		if (err)
			return err;
		fields[i].set = true;
		if (peek(p) != ',')
			return 0;
		p->pos++;
	}
}

/* A required field, or a message at the kind's column. */
static int need(const struct lt_parser *p, size_t kind_at, enum lt_kind kind,
		const struct lt_field *fields, int i)
{
	if (fields[i].set)
		return 0;
	return lt_fail(p, kind_at, "%s needs %s=", kind_names[kind],
		       kind_fields[kind][i]);
}

/* A value that must lie in [lo, hi]. */
static int in_range(const struct lt_parser *p, const struct lt_field *f,
		    int k, int64_t lo, int64_t hi, const char *what)
{
	if (f->v[k] >= lo && f->v[k] <= hi)
		return 0;
	return lt_fail(p, f->at, "%s must be between %lld and %lld (is %lld)",
		       what, (long long)lo, (long long)hi,
		       (long long)f->v[k]);
}

struct lt_result {
	int64_t disp;
	size_t disp_at;		/* its column, when disp >= 0 */
	int n;
	CLF_Datatype *types;	/* owned */
	int first;
};

static int named_types(struct lt_parser *p, size_t at, enum lt_kind kind,
		       const struct lt_field *f, struct lt_result *res)
{
	const int64_t max = CLF_PROTO_MAX_SUBFILES;
	int err = 0, n = 0;

	switch (kind) {
	case LT_RR:
		err = need(p, at, kind, f, 0);
		if (!err)
			err = need(p, at, kind, f, 1);
		if (!err)
			err = in_range(p, &f[0], 0, 1, INT64_MAX, "stripe");
		if (!err)
			err = in_range(p, &f[1], 0, 1, max, "count");
		if (!err && f[2].set)
			err = in_range(p, &f[2], 0, 0, CLF_PROTO_MAX_IODS - 1,
				       "first");
		n = (int)f[1].v[0];
		break;
	case LT_CYCLIC:
		err = need(p, at, kind, f, 0);
		if (!err)
			err = need(p, at, kind, f, 1);
		if (!err)
			err = in_range(p, &f[0], 0, 1, INT64_MAX, "k");
		if (!err)
			err = in_range(p, &f[1], 0, 1, max, "p");
		if (!err && f[2].set)
			err = in_range(p, &f[2], 0, 1, INT64_MAX, "n");
		n = (int)f[1].v[0];
		break;
	case LT_BLOCK:
		err = need(p, at, kind, f, 0);
		if (!err)
			err = need(p, at, kind, f, 1);
		if (!err)
			err = in_range(p, &f[0], 0, 1, INT64_MAX, "size");
		if (!err)
			err = in_range(p, &f[1], 0, 1, max, "p");
		n = (int)f[1].v[0];
		break;
	case LT_GRID:
		for (int i = 0; i < 4 && !err; i++)
			err = need(p, at, kind, f, i);
		for (int i = 0; i < 2 && !err; i++)
			err = in_range(p, &f[i], 0, 1, INT64_MAX,
				       kind_fields[kind][i]);
		for (int k = 0; k < 2 && !err; k++)
			err = in_range(p, &f[2], k, 1, max, "p");
		for (int k = 0; k < 2 && !err; k++)
			err = in_range(p, &f[3], k, 1, INT64_MAX, "k");
		if (!err && f[2].v[0] * f[2].v[1] > max)
			err = lt_fail(p, f[2].at,
				      "p makes %lld subfiles, at most %lld",
				      (long long)(f[2].v[0] * f[2].v[1]),
				      (long long)max);
		n = (int)(f[2].v[0] * f[2].v[1]);
		break;
	}
	if (err)
		return err;
	res->types = calloc(n, sizeof(*res->types));
	if (!res->types)
		return clf_fail(ENOMEM, "%s: out of memory", p->what);
	switch (kind) {
	case LT_RR:
		err = clf_lt_cyclic(f[0].v[0], n, 1, res->types);
		res->first = f[2].set ? (int)f[2].v[0] : -1;
		break;
	case LT_CYCLIC:
		err = clf_lt_cyclic(f[0].v[0], n, f[2].set ? f[2].v[0] : 1,
				    res->types);
		break;
	case LT_BLOCK:
		err = clf_lt_cyclic(f[0].v[0], n, 1, res->types);
		break;
	case LT_GRID:
		err = clf_lt_grid(f[0].v[0], f[1].v[0], (int)f[2].v[0],
				  (int)f[2].v[1], f[3].v[0], f[3].v[1],
				  res->types);
		break;
	}
	if (err) {
		free(res->types);
		res->types = NULL;
		return lt_fail_last(p, at, err, kind_names[kind]);
	}
	res->n = n;
	return 0;
}

/* Keep only the type of subfile part= of a named pattern's types. */
static int pick_part(struct lt_parser *p, size_t at, enum lt_kind kind,
		     const struct lt_field *part, struct lt_result *res)
{
	int err = 0;

	if (!part->set)
		err = lt_fail(p, at, "%s needs part= (which subfile's type)",
			      kind_names[kind]);
	else if (part->v[0] >= res->n)
		err = lt_fail(p, part->at,
			      "part must be between 0 and %d (is %lld)",
			      res->n - 1, (long long)part->v[0]);
	for (int j = 0; j < res->n; j++)
		if (err || j != part->v[0])
			CLF_Type_free(&res->types[j]);
	if (err) {
		free(res->types);
		res->types = NULL;
		res->n = 0;
		return err;
	}
	res->types[0] = res->types[part->v[0]];
	res->n = 1;
	return 0;
}

static int named(struct lt_parser *p, size_t at, enum lt_kind kind,
		 struct lt_result *res)
{
	struct lt_field f[LT_FIELDS_MAX] = { { 0 } };
	int disp_i = field_index(kind, "disp"), err;

	p->pos++;	/* the ':' */
	err = named_fields(p, kind, f);
	if (err)
		return err;
	if (f[disp_i].set) {
		if (res->disp >= 0)
			return lt_fail(p, f[disp_i].at,
				       "the displacement is given twice");
		res->disp = f[disp_i].v[0];
		res->disp_at = f[disp_i].at;
	}
	err = named_types(p, at, kind, f, res);
	if (!err && p->single)
		err = pick_part(p, at, kind, &f[field_index(kind, "part")],
				res);
	return err;
}

/* ------------------------------------------------------------------ */
/* The whole text                                                      */
/* ------------------------------------------------------------------ */

static bool is_sep(char c)
{
	return c == ';' || c == '|';
}

/* type (sep type)* [sep] */
static int general(struct lt_parser *p, struct lt_result *res)
{
	int alloc = 0, err = 0;

	while (!err) {
		if (res->n == alloc) {
			int na = alloc ? 2 * alloc : 8;
			CLF_Datatype *nt;

			nt = realloc(res->types, na * sizeof(*nt));
			if (!nt)
				return clf_fail(ENOMEM, "layout: out of memory");
			res->types = nt;
			alloc = na;
		}
		if (res->n == CLF_PROTO_MAX_SUBFILES)
			return clf_fail(E2BIG,
					"layout: at column %zu: more than %d subfiles",
					p->pos + 1, CLF_PROTO_MAX_SUBFILES);
		err = type(p, &res->types[res->n]);
		if (err)
			break;
		res->n++;
		if (!is_sep(peek(p)))
			break;
		p->pos++;
		if (!peek(p))
			break;
	}
	return err;
}

/* 'disp' '=' expr sep, when the text starts with it. */
static int disp_prefix(struct lt_parser *p, struct lt_result *res)
{
	char name[LT_IDENT_MAX], buf[16];
	size_t at, start = p->pos;
	int err = ident(p, name, &at);

	if (err)
		return err;
	if (strcmp(name, "disp") || peek(p) != '=') {
		p->pos = start;
		return 0;
	}
	p->pos++;
	skip_blanks(p);
	res->disp_at = p->pos;
	err = expr(p, &res->disp);
	if (err)
		return err;
	if (!is_sep(peek(p)))
		return lt_fail(p, p->pos,
			       "expected ';' or '|' after the displacement, found %s",
			       found(p, buf));
	p->pos++;
	return 0;
}

static int parse(struct lt_parser *p, struct lt_result *res)
{
	char name[LT_IDENT_MAX];
	size_t at, start;
	int err = disp_prefix(p, res);

	if (err)
		return err;
	start = p->pos;
	err = ident(p, name, &at);
	if (err)
		return err;
	if (peek(p) == ':') {
		for (int k = LT_RR; k <= LT_GRID; k++)
			if (!strcmp(name, kind_names[k]))
				return named(p, at, k, res);
		return lt_fail(p, at,
			       "unknown layout '%s' (expected rr, cyclic, block or grid)",
			       name);
	}
	p->pos = start;
	if (!peek(p))
		return lt_fail(p, p->pos, "empty %s", p->what);
	if (!p->single)
		return general(p, res);
	res->types = calloc(1, sizeof(*res->types));
	if (!res->types)
		return clf_fail(ENOMEM, "%s: out of memory", p->what);
	err = type(p, &res->types[0]);
	if (!err)
		res->n = 1;
	return err;
}

int clf_layout_text_parse(const char *text, struct clf_layout_desc *out)
{
	struct lt_parser p = { .text = text, .what = "layout" };
	struct lt_result res = { .disp = -1, .first = -1 };
	char buf[16];
	int err;

	if (!text || !out)
		return clf_fail(EINVAL, "layout: no text");
	if (strnlen(text, CLF_LAYOUT_TEXT_MAX + 1) > CLF_LAYOUT_TEXT_MAX)
		return clf_fail(E2BIG, "layout: text longer than %d bytes",
				CLF_LAYOUT_TEXT_MAX);
	err = parse(&p, &res);
	if (!err && peek(&p))
		err = lt_fail(&p, p.pos, "unexpected %s after the layout",
			      found(&p, buf));
	if (!err) {
		err = CLF_Pattern_check(res.n, res.types);
		if (err) {
			char why[400];

			snprintf(why, sizeof(why), "%s", CLF_Last_error());
			err = clf_fail_neg(err, "layout: not a partitioning pattern: %s",
					   why);
		}
	}
	if (err) {
		for (int j = 0; j < res.n; j++)
			CLF_Type_free(&res.types[j]);
		free(res.types);
		return err;
	}
	*out = (struct clf_layout_desc){
		.disp = res.disp < 0 ? 0 : res.disp,
		.count = res.n,
		.types = res.types,
		.first_iod = res.first,
	};
	return 0;
}

void clf_layout_desc_release(struct clf_layout_desc *desc)
{
	if (!desc)
		return;
	for (int j = 0; desc->types && j < desc->count; j++)
		CLF_Type_free(&desc->types[j]);
	free(desc->types);
	memset(desc, 0, sizeof(*desc));
	desc->first_iod = -1;
}

int clf_type_text_parse(const char *text, CLF_Datatype *out, int64_t *disp)
{
	struct lt_parser p = { .text = text, .single = true, .what = "type" };
	struct lt_result res = { .disp = -1, .first = -1 };
	char buf[16];
	int err;

	if (!text || !out)
		return clf_fail(EINVAL, "type: no text");
	if (strnlen(text, CLF_LAYOUT_TEXT_MAX + 1) > CLF_LAYOUT_TEXT_MAX)
		return clf_fail(E2BIG, "type: text longer than %d bytes",
				CLF_LAYOUT_TEXT_MAX);
	err = parse(&p, &res);
	if (!err && peek(&p))
		err = lt_fail(&p, p.pos, "unexpected %s after the type",
			      found(&p, buf));
	if (!err && res.disp >= 0 && !disp)
		err = lt_fail(&p, res.disp_at,
			      "a displacement does not belong here");
	if (err) {
		for (int j = 0; j < res.n; j++)
			CLF_Type_free(&res.types[j]);
		free(res.types);
		return err;
	}
	*out = res.types[0];
	free(res.types);
	if (disp)
		*disp = res.disp;
	return 0;
}
