// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_layout_text.c -- the layout text syntax: every named pattern and
 * the general form parse into the right types, errors say where and
 * what, and formatting round-trips (parse(format(x)) selects the same
 * bytes with the same extents as x) on thousands of random types and
 * patterns checked against the byte-by-byte model.
 *
 * CLF_TEST_SEED=n reproduces a run; CLF_TEST_ROUNDS=n scales it.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "falls.h"
#include "layout_text.h"
#include "layout_text_i.h"
#include "model.h"
#include "type.h"

static uint64_t seed_base(void)
{
	const char *s = getenv("CLF_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : 20261122;
}

static int rounds(int dflt)
{
	const char *s = getenv("CLF_TEST_ROUNDS");

	return s ? atoi(s) : dflt;
}

/* Does the type select byte x of its first period? */
static bool selects(CLF_Datatype t, int64_t x)
{
	int64_t lin;

	return CLF_Type_map(t, 0, x, &lin) == 0;
}

/* Same extent and, byte by byte, the same selection. */
static void assert_same_bytes(CLF_Datatype a, CLF_Datatype b)
{
	int64_t e = CLF_Type_extent(a);

	ck_assert_int_eq(CLF_Type_extent(b), e);
	ck_assert_int_eq(CLF_Type_size(b), CLF_Type_size(a));
	/* The same description selects the same bytes. */
	if (clf_lt_type_same(a, b))
		return;
	for (int64_t x = 0; x < e; x++)
		ck_assert_msg(selects(a, x) == selects(b, x),
			      "byte %lld differs", (long long)x);
}

static void parse_ok(const char *text, struct clf_layout_desc *d)
{
	int err = clf_layout_text_parse(text, d);

	ck_assert_msg(err == 0, "'%s': %s", text, CLF_Last_error());
}

static void parse_fails(const char *text, int want, const char *msg)
{
	struct clf_layout_desc d = { .count = -7 };

	ck_assert_int_eq(clf_layout_text_parse(text, &d), want);
	ck_assert_msg(strstr(CLF_Last_error(), msg), "'%s': got '%s', want '%s'",
		      text, CLF_Last_error(), msg);
	ck_assert_int_eq(d.count, -7);	/* untouched */
}

/* The types of cyclic(k) over p. */
static void assert_cyclic(const struct clf_layout_desc *d, int64_t k, int p)
{
	ck_assert_int_eq(d->count, p);
	for (int j = 0; j < p; j++) {
		ck_assert_int_eq(CLF_Type_extent(d->types[j]), k * p);
		for (int64_t x = 0; x < k * p; x++)
			ck_assert(selects(d->types[j], x) == (x / k == j));
	}
}

START_TEST(test_parse_rr_cyclic_block_are_one_block_per_subfile)
{
	struct clf_layout_desc d;

	parse_ok("rr:stripe=1k,count=4", &d);
	assert_cyclic(&d, 1024, 4);
	ck_assert_int_eq(d.disp, 0);
	ck_assert_int_eq(d.first_iod, -1);
	clf_layout_desc_release(&d);

	parse_ok(" rr : count = 3 , stripe=16, first=2 ", &d);
	assert_cyclic(&d, 16, 3);
	ck_assert_int_eq(d.first_iod, 2);
	clf_layout_desc_release(&d);

	parse_ok("cyclic:k=4,p=5", &d);
	assert_cyclic(&d, 4, 5);
	ck_assert_int_eq(d.first_iod, -1);
	clf_layout_desc_release(&d);

	parse_ok("block:size=100,p=2", &d);
	assert_cyclic(&d, 100, 2);
	clf_layout_desc_release(&d);

	/* n rounds per period: the extent grows, the pattern does not. */
	parse_ok("cyclic:k=2,p=3,n=4", &d);
	ck_assert_int_eq(d.count, 3);
	for (int j = 0; j < 3; j++) {
		ck_assert_int_eq(CLF_Type_extent(d.types[j]), 24);
		for (int64_t x = 0; x < 24; x++)
			ck_assert(selects(d.types[j], x) == ((x / 2) % 3 == j));
	}
	clf_layout_desc_release(&d);
	ck_assert_int_eq(d.count, 0);
	ck_assert_ptr_null(d.types);
}
END_TEST

START_TEST(test_parse_grid_deals_tiles_over_the_process_grid)
{
	const int64_t rows = 12, cols = 20, pr = 2, pc = 3, kr = 3, kc = 2;
	struct clf_layout_desc d;

	/* 12 = 2 * 3 * 2 rows, 20 is not a multiple of 3 * 2 columns. */
	parse_fails("grid:rows=12,cols=20,p=2x3,k=3x2", -EINVAL,
		    "cols (20) must be a multiple of p cols x k cols (6)");
	parse_ok("grid:rows=12,cols=24,p=2x3,k=3x2", &d);
	ck_assert_int_eq(d.count, pr * pc);
	for (int j = 0; j < d.count; j++) {
		ck_assert_int_eq(CLF_Type_extent(d.types[j]), rows * 24);
		for (int64_t i = 0; i < rows; i++)
			for (int64_t c = 0; c < 24; c++) {
				int owner = (int)(((i / kr) % pr) * pc +
						  (c / kc) % pc);

				ck_assert(selects(d.types[j], i * 24 + c) ==
					  (owner == j));
			}
	}
	clf_layout_desc_release(&d);
	(void)cols;
}
END_TEST

START_TEST(test_parse_displacement_as_prefix_or_field)
{
	struct clf_layout_desc d;

	parse_ok("disp=512;rr:stripe=64k,count=2", &d);
	ck_assert_int_eq(d.disp, 512);
	assert_cyclic(&d, 65536, 2);
	clf_layout_desc_release(&d);

	parse_ok("rr:stripe=64k,count=2,disp=1k", &d);
	ck_assert_int_eq(d.disp, 1024);
	clf_layout_desc_release(&d);

	parse_ok("byte;", &d);
	ck_assert_int_eq(d.count, 1);
	clf_layout_desc_release(&d);

	parse_ok("disp = 3 | byte", &d);
	ck_assert_int_eq(d.disp, 3);
	ck_assert_int_eq(d.count, 1);
	ck_assert_ptr_eq(d.types[0], CLF_BYTE);
	clf_layout_desc_release(&d);

	parse_fails("disp=1;rr:stripe=1,count=1,disp=2", -EINVAL,
		    "at column 33: the displacement is given twice");
}
END_TEST

START_TEST(test_parse_general_form_one_type_per_subfile)
{
	struct clf_layout_desc d;

	/* Halves of 8 KiB; '|' and ';' both separate; a trailing one. */
	parse_ok("vec(0,4k-1,8k,1,byte);vec(4k,8k-1,8k,1)|", &d);
	assert_cyclic(&d, 4096, 2);
	clf_layout_desc_release(&d);

	/* Even bytes as a struct of two, odd bytes as a nested vector. */
	parse_ok("struct(vec(0,0,4,1,byte),vec(2,2,4,1,byte)) ; "
		 "vec(0,3,4,1,vec(1,1,2,2))", &d);
	ck_assert_int_eq(d.count, 2);
	for (int64_t x = 0; x < 4; x++) {
		ck_assert(selects(d.types[0], x) == (x % 2 == 0));
		ck_assert(selects(d.types[1], x) == (x % 2 == 1));
	}
	clf_layout_desc_release(&d);

	/* Arithmetic: 2*(1k+1k)-1 = 4095. */
	parse_ok("vec(0,2*(1k+1k)-1,4*1k,1)", &d);
	ck_assert_int_eq(CLF_Type_extent(d.types[0]), 4096);
	clf_layout_desc_release(&d);
}
END_TEST

START_TEST(test_parse_errors_say_column_and_what)
{
	parse_fails("vec(0,0,2 1)", -EINVAL,
		    "layout: at column 11: expected ',' after the stride, found '1'");
	parse_fails("rr:strip=64k,count=4", -EINVAL,
		    "at column 4: unknown field 'strip' for rr (expected stripe, count, first, disp)");
	parse_fails("rr:stripe=64k", -EINVAL, "at column 1: rr needs count=");
	parse_fails("rr:stripe=64k,count=0", -EINVAL,
		    "at column 21: count must be between 1 and 1024 (is 0)");
	parse_fails("rr:stripe=64k,count=4,count=4", -EINVAL,
		    "at column 23: field 'count' given twice");
	parse_fails("stripes:k=1", -EINVAL,
		    "at column 1: unknown layout 'stripes' (expected rr, cyclic, block or grid)");
	parse_fails("", -EINVAL, "at column 1: empty layout");
	parse_fails("   ", -EINVAL, "at column 4: empty layout");
	parse_fails("vex(0,0,1,1)", -EINVAL,
		    "at column 1: unknown type 'vex' (expected byte, vec or struct)");
	parse_fails("byte byte", -EINVAL,
		    "at column 6: unexpected 'b' after the layout");
	parse_fails("vec(0,0,1,1", -EINVAL,
		    "at column 12: expected ')' to close vec");
	parse_fails("vec(3,1,4,1)", -EINVAL,
		    "at column 1: vec: vector(3, 1, 4, 1): need 0 <= left <= right < stride");
	parse_fails("vec(0,1-2,4,1)", -EINVAL, "at column 7: negative value");
	parse_fails("vec(0,99999999999999999999,4,1)", -EINVAL,
		    "at column 7: number too large");
	parse_fails("vec(0,8t*8t*8t,4,1)", -EINVAL,
		    "at column 7: product too large");
	parse_fails("grid:rows=4,cols=4,p=2,k=1x1", -EINVAL,
		    "at column 23: expected 'x' between the two values of p (as in 2x2), found ','");
	parse_fails("struct(byte,byte)", -EINVAL,
		    "at column 1: struct: members 0 and 1 overlap at byte 0");
	/* Types that do not partition. */
	parse_fails("vec(0,0,2,1)", -EINVAL,
		    "layout: not a partitioning pattern:");
	parse_fails("byte;byte", -EINVAL, "layout: not a partitioning pattern:");
	parse_fails("rr:stripe=1,count=1025", -EINVAL,
		    "count must be between 1 and 1024");
}
END_TEST

START_TEST(test_parse_refuses_deep_nesting_and_huge_text)
{
	char *s = malloc(CLF_LAYOUT_TEXT_MAX + 2);
	size_t n = 0;

	for (int i = 0; i < 100; i++)
		n += sprintf(s + n, "vec(0,0,1,1,");
	n += sprintf(s + n, "byte");
	for (int i = 0; i < 100; i++)
		s[n++] = ')';
	s[n] = '\0';
	parse_fails(s, -EINVAL, "nested too deeply");
	memset(s, ' ', CLF_LAYOUT_TEXT_MAX + 1);
	s[CLF_LAYOUT_TEXT_MAX + 1] = '\0';
	parse_fails(s, -E2BIG, "longer than");
	free(s);
}
END_TEST

static char *format(int64_t disp, int n, const CLF_Datatype *t,
		    const int *iods, int niods)
{
	char *s = NULL;
	int err = clf_layout_text_format(disp, n, t, iods, niods, &s);

	ck_assert_msg(err == 0, "%s", CLF_Last_error());
	return s;
}

/* text -> types -> the same text. */
static void assert_formats_as(const char *text, const int *iods, int niods,
			      const char *want)
{
	struct clf_layout_desc d;
	char *s;

	parse_ok(text, &d);
	s = format(d.disp, d.count, d.types, iods, niods);
	ck_assert_msg(!strcmp(s, want), "'%s' formats as '%s', want '%s'",
		      text, s, want);
	free(s);
	clf_layout_desc_release(&d);
}

START_TEST(test_format_recognizes_named_patterns)
{
	const int rr0[] = { 0, 1, 2, 3 }, rr2[] = { 2, 3, 0, 1 };
	const int odd[] = { 0, 2, 1, 3 };

	assert_formats_as("rr:stripe=65536,count=4", rr0, 4,
			  "rr:stripe=64k,count=4");
	assert_formats_as("rr:stripe=1m,count=4", rr2, 4,
			  "rr:stripe=1m,count=4,first=2");
	/* Without a round-robin placement it is a cyclic pattern. */
	assert_formats_as("rr:stripe=1m,count=4", odd, 4, "cyclic:k=1m,p=4");
	assert_formats_as("rr:stripe=1m,count=4", NULL, 0, "cyclic:k=1m,p=4");
	assert_formats_as("block:size=3000,p=2", NULL, 0, "cyclic:k=3000,p=2");
	assert_formats_as("cyclic:k=4k,p=4,n=2", rr0, 4,
			  "cyclic:k=4k,p=4,n=2");
	assert_formats_as("disp=512;rr:stripe=64k,count=4", rr0, 4,
			  "rr:stripe=64k,count=4,disp=512");
	assert_formats_as("byte", NULL, 0, "cyclic:k=1,p=1");
	assert_formats_as("grid:rows=8192,cols=8192,p=2x2,k=64x64", rr0, 4,
			  "grid:rows=8k,cols=8k,p=2x2,k=64x64");
	/*
	 * The width of the matrix is not in the types: 12 x 24 with 3 x 2
	 * tiles selects the same bytes as 16 x 18 with 4 x 2 tiles (every
	 * band of 72 bytes, pairs every 6 bytes).  The squarer is written.
	 */
	assert_formats_as("grid:rows=12,cols=24,p=2x3,k=3x2", NULL, 0,
			  "grid:rows=16,cols=18,p=2x3,k=4x2");
	/* Whole rows: bands of 600 bytes dealt cyclically. */
	assert_formats_as("grid:rows=100,cols=60,p=5x1,k=10x60", NULL, 0,
			  "cyclic:k=600,p=5,n=2");
}
END_TEST

START_TEST(test_format_general_form_examples)
{
	/* Not a named pattern: the first subfile has two bytes of three. */
	assert_formats_as("vec(0,1,3,1);vec(2,2,3,1)", NULL, 0,
			  "vec(0,1,3,1);vec(2,2,3,1)");
	assert_formats_as("disp=7;struct(vec(0,0,4,1),vec(2,2,4,1));"
			  "vec(1,1,2,2)", NULL, 0,
			  "cyclic:k=1,p=2,n=2,disp=7");
	/* Not named: three bytes of five and two of five. */
	assert_formats_as("disp=7;struct(vec(0,0,5,1),vec(2,3,5,1));"
			  "struct(vec(1,1,5,1),vec(4,4,5,1))", NULL, 0,
			  "disp=7;struct(vec(0,0,5,1),vec(2,3,5,1));"
			  "struct(vec(1,1,5,1),vec(4,4,5,1))");
	/* A vector whose last block ends before the extent. */
	assert_formats_as("struct(vec(0,0,2,2),vec(4,4,5,1));"
			  "struct(vec(1,1,5,1),vec(3,3,5,1))", NULL, 0,
			  "struct(vec(0,0,2,2),vec(4,4,5,1));"
			  "struct(vec(1,1,5,1),vec(3,3,5,1))");
	/* Blocks reaching past their stride start inside a wider block. */
	assert_formats_as("vec(10,17,20,1,struct(vec(0,1,3,2),vec(6,7,8,1)));"
			  "struct(vec(0,9,20,1),vec(12,12,20,1),"
			  "vec(15,15,20,1),vec(18,19,20,1))", NULL, 0,
			  "vec(10,17,20,1,struct(vec(0,1,3,2),vec(6,7,8,1)));"
			  "struct(vec(0,9,20,1),vec(12,15,20,1,"
			  "struct(vec(0,0,4,1),vec(3,3,4,1))),vec(18,19,20,1))");
	assert_formats_as("vec(0,64k-1,128k,1);vec(64k,128k-1,128k,1,"
			  "vec(0,1k-1,1k,1))", NULL, 0,
			  "cyclic:k=64k,p=2");
}
END_TEST

/* The complement of t in its extent (NULL when t selects everything). */
static CLF_Datatype complement(CLF_Datatype t)
{
	struct fbuild b = { .budget = CLF_BUILD_BUDGET };
	struct fset *c;

	if (t->set->size == t->extent)
		return NULL;
	c = fset_complement(&b, t->set, 0, t->extent - 1);
	ck_assert_ptr_nonnull(c);
	return clf_type_new(c, t->extent);
}

/*
 * Round trip of a pattern: the types parsed from its text select the
 * same bytes with the same extents.  (The text of those types may differ
 * from the first: one set of bytes can have several descriptions.)
 */
static void round_trip(int64_t disp, int n, const CLF_Datatype *types,
		       const int *iods, int niods)
{
	struct clf_layout_desc d;
	char *s;

	s = format(disp, n, types, iods, niods);
	parse_ok(s, &d);
	ck_assert_int_eq(d.count, n);
	ck_assert_int_eq(d.disp, disp);
	for (int j = 0; j < n; j++)
		assert_same_bytes(types[j], d.types[j]);
	free(s);
	clf_layout_desc_release(&d);
}

START_TEST(test_format_round_trips_random_types)
{
	uint64_t rs = seed_base() + 1;

	for (int it = 0; it < rounds(2000); it++) {
		struct typed x = random_type(&rs, 3, 2048);
		CLF_Datatype t[2] = { x.t, complement(x.t) };
		int64_t disp = rnd_range(&rs, 0, 1) ? rnd_range(&rs, 0, 5000) : 0;

		/* The model says the same as the type. */
		for (int64_t b = 0; b < x.m->extent; b++)
			ck_assert(selects(x.t, b) == x.m->bits[b]);
		round_trip(disp, t[1] ? 2 : 1, t, NULL, 0);
		CLF_Type_free(&t[1]);
		typed_free(&x);
	}
}
END_TEST

START_TEST(test_format_round_trips_random_patterns)
{
	uint64_t rs = seed_base() + 2;

	for (int it = 0; it < rounds(1000); it++) {
		struct typed sub[16];
		CLF_Datatype t[16];
		int iods[16], n = random_pattern(&rs, sub, 2048);
		int niods = (int)rnd_range(&rs, 1, 8), first;

		first = (int)rnd_range(&rs, 0, niods - 1);
		for (int j = 0; j < n; j++) {
			t[j] = sub[j].t;
			iods[j] = (first + j) % niods;
		}
		round_trip(rnd_range(&rs, 0, 100), n, t,
			   rnd_range(&rs, 0, 1) ? iods : NULL, niods);
		for (int j = 0; j < n; j++)
			typed_free(&sub[j]);
	}
}
END_TEST

START_TEST(test_format_names_random_named_patterns)
{
	uint64_t rs = seed_base() + 3;

	for (int it = 0; it < rounds(300); it++) {
		CLF_Datatype t[64];
		int n, kind = (int)rnd_range(&rs, 0, 1);
		char *s;

		if (kind == 0) {
			n = (int)rnd_range(&rs, 1, 64);
			ck_assert_int_eq(clf_lt_cyclic(rnd_range(&rs, 1, 5000),
						       n, rnd_range(&rs, 1, 3),
						       t), 0);
		} else {
			int pr = (int)rnd_range(&rs, 2, 8);
			int pc = (int)rnd_range(&rs, 2, 8);
			int64_t kr = rnd_range(&rs, 1, 9), kc = rnd_range(&rs, 1, 9);

			n = pr * pc;
			ck_assert_int_eq(clf_lt_grid(pr * kr * rnd_range(&rs, 1, 4),
						     pc * kc * rnd_range(&rs, 1, 4),
						     pr, pc, kr, kc, t), 0);
		}
		s = format(0, n, t, NULL, 0);
		ck_assert_msg(!strncmp(s, kind ? "grid:" : "cyclic:",
				       kind ? 5 : 7) ||
			      (kind && !strncmp(s, "cyclic:", 7)),
			      "not named: %s", s);
		free(s);
		round_trip(0, n, t, NULL, 0);
		for (int j = 0; j < n; j++)
			CLF_Type_free(&t[j]);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* One type: clf_type_text_parse / clf_type_text_format                */
/* ------------------------------------------------------------------ */

static CLF_Datatype type_ok(const char *text, int64_t *disp)
{
	CLF_Datatype t = NULL;
	int err = clf_type_text_parse(text, &t, disp);

	ck_assert_msg(err == 0, "'%s': %s", text, CLF_Last_error());
	ck_assert_ptr_nonnull(t);
	return t;
}

static void type_fails(const char *text, int64_t *disp, int want,
		       const char *msg)
{
	CLF_Datatype t = (CLF_Datatype)0x1;	/* must stay untouched */

	ck_assert_int_eq(clf_type_text_parse(text, &t, disp), want);
	ck_assert_msg(strstr(CLF_Last_error(), msg), "'%s': got '%s', want '%s'",
		      text, CLF_Last_error(), msg);
	ck_assert_ptr_eq(t, (CLF_Datatype)0x1);
}

START_TEST(test_type_parse_general_form_is_one_type)
{
	CLF_Datatype t, v;

	t = type_ok("byte", NULL);
	ck_assert_ptr_eq(t, CLF_BYTE);
	CLF_Type_free(&t);

	t = type_ok(" vec( 0 , 1k-1, 4k, 2 ) ", NULL);
	v = CLF_Type_vector(0, 1023, 4096, 2, CLF_BYTE);
	assert_same_bytes(t, v);
	CLF_Type_free(&t);
	CLF_Type_free(&v);

	/* A view may leave bytes out and need not partition anything. */
	t = type_ok("struct(vec(0,0,5,1),vec(2,3,5,1))", NULL);
	ck_assert_int_eq(CLF_Type_extent(t), 5);
	ck_assert_int_eq(CLF_Type_size(t), 3);
	for (int64_t x = 0; x < 5; x++)
		ck_assert(selects(t, x) == (x == 0 || x == 2 || x == 3));
	CLF_Type_free(&t);
}
END_TEST

START_TEST(test_type_parse_named_pattern_part_is_that_subfile)
{
	static const char *const layouts[] = {
		"rr:stripe=1k,count=4",
		"cyclic:k=16,p=3,n=2",
		"block:size=100,p=5",
		"grid:rows=12,cols=24,p=2x3,k=3x2",
	};
	char text[128];

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		struct clf_layout_desc d;

		parse_ok(layouts[i], &d);
		for (int j = 0; j < d.count; j++) {
			CLF_Datatype t;

			snprintf(text, sizeof(text), "%s,part=%d", layouts[i], j);
			t = type_ok(text, NULL);
			assert_same_bytes(t, d.types[j]);
			CLF_Type_free(&t);
		}
		clf_layout_desc_release(&d);
	}
}
END_TEST

START_TEST(test_type_parse_displacement_only_when_asked)
{
	CLF_Datatype t;
	int64_t disp = 77;

	t = type_ok("vec(0,3,8,1)", &disp);
	ck_assert_int_eq(disp, -1);
	CLF_Type_free(&t);
	t = type_ok("disp=512;vec(0,3,8,1)", &disp);
	ck_assert_int_eq(disp, 512);
	CLF_Type_free(&t);
	t = type_ok("cyclic:k=4,p=2,part=1,disp=1k", &disp);
	ck_assert_int_eq(disp, 1024);
	CLF_Type_free(&t);
	type_fails("disp=512;vec(0,3,8,1)", NULL, -EINVAL,
		   "type: at column 6: a displacement does not belong here");
	type_fails("rr:stripe=4,count=2,part=0,disp=8", NULL, -EINVAL,
		   "type: at column 33: a displacement does not belong here");
}
END_TEST

START_TEST(test_type_parse_errors_say_column_and_what)
{
	type_fails("cyclic:k=64,p=4", NULL, -EINVAL,
		   "type: at column 1: cyclic needs part= (which subfile's type)");
	type_fails("cyclic:k=64,p=4,part=4", NULL, -EINVAL,
		   "type: at column 22: part must be between 0 and 3 (is 4)");
	type_fails("cyclic:k=64,p=4,prt=1", NULL, -EINVAL,
		   "type: at column 17: unknown field 'prt' for cyclic (expected k, p, n, disp, part)");
	type_fails("byte;byte", NULL, -EINVAL,
		   "type: at column 5: unexpected ';' after the type");
	type_fails("vec(0,0,2 1)", NULL, -EINVAL,
		   "type: at column 11: expected ',' after the stride, found '1'");
	type_fails("", NULL, -EINVAL, "type: at column 1: empty type");
	type_fails("vex(1)", NULL, -EINVAL,
		   "type: at column 1: unknown type 'vex'");
	/* part= names one subfile: a layout has no use for it. */
	parse_fails("cyclic:k=64,p=4,part=1", -EINVAL,
		    "layout: at column 17: unknown field 'part' for cyclic (expected k, p, n, disp)");
}
END_TEST

START_TEST(test_type_format_round_trips_random_types)
{
	uint64_t rs = seed_base() + 4;

	for (int it = 0; it < rounds(2000); it++) {
		struct typed x = random_type(&rs, 3, 2048);
		CLF_Datatype back;
		char *s;

		ck_assert_int_eq(clf_type_text_format(x.t, &s), 0);
		back = type_ok(s, NULL);
		assert_same_bytes(x.t, back);
		CLF_Type_free(&back);
		free(s);
		typed_free(&x);
	}
}
END_TEST

/* The public pair: CLF_Layout_parse and CLF_Layout_format. */
START_TEST(test_public_layout_text_round_trips_with_placement)
{
	struct clf_layout_info li, back;
	char *text = NULL;

	ck_assert_int_eq(CLF_Layout_parse("rr:stripe=4k,count=2,first=1", &li),
			 0);
	ck_assert_int_eq(li.count, 2);
	ck_assert_int_eq(li.disp, 0);
	ck_assert_int_eq(li.iods[0], 1);
	ck_assert_int_eq(li.iods[1], 2);
	ck_assert_int_eq(CLF_Type_extent(li.types[1]), 8192);
	ck_assert_int_eq(CLF_Layout_format(&li, &text), 0);
	ck_assert_int_eq(CLF_Layout_parse(text, &back), 0);
	ck_assert_int_eq(back.count, 2);
	for (int j = 0; j < 2; j++)
		ck_assert_int_eq(CLF_Type_size(back.types[j]), 4096);
	CLF_Layout_release(&back);
	CLF_Layout_release(&li);
	free(text);

	ck_assert_int_eq(CLF_Layout_parse("cyclic:k=4k,p=2", &li), 0);
	ck_assert_int_eq(li.iods[0], -1);
	ck_assert_int_eq(li.head_iod, -1);
	CLF_Layout_release(&li);
	ck_assert_int_eq(CLF_Layout_parse("cyclic:k=4k,p=", &li), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "at column"));
	ck_assert_int_eq(CLF_Layout_parse(NULL, &li), -EINVAL);
}
END_TEST

static Suite *layout_text_suite(void)
{
	Suite *s = suite_create("layout_text");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_parse_rr_cyclic_block_are_one_block_per_subfile);
	tcase_add_test(tc, test_parse_grid_deals_tiles_over_the_process_grid);
	tcase_add_test(tc, test_parse_displacement_as_prefix_or_field);
	tcase_add_test(tc, test_parse_general_form_one_type_per_subfile);
	tcase_add_test(tc, test_parse_errors_say_column_and_what);
	tcase_add_test(tc, test_parse_refuses_deep_nesting_and_huge_text);
	tcase_add_test(tc, test_format_recognizes_named_patterns);
	tcase_add_test(tc, test_format_general_form_examples);
	tcase_add_test(tc, test_format_round_trips_random_types);
	tcase_add_test(tc, test_format_round_trips_random_patterns);
	tcase_add_test(tc, test_format_names_random_named_patterns);
	tcase_add_test(tc, test_type_parse_general_form_is_one_type);
	tcase_add_test(tc, test_type_parse_named_pattern_part_is_that_subfile);
	tcase_add_test(tc, test_type_parse_displacement_only_when_asked);
	tcase_add_test(tc, test_type_parse_errors_say_column_and_what);
	tcase_add_test(tc, test_type_format_round_trips_random_types);
	tcase_add_test(tc, test_public_layout_text_round_trips_with_placement);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(layout_text_suite());
}
