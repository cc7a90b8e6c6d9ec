// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_map.c -- `clf map`: how a view falls on the subfiles of a file.
 *
 * The view is intersected with every subfile as CLF_FCNTL_SETVIEW does
 * (clf_viewmap_create: one CLF_Mapping per subfile, the head's clipped
 * to the bytes before the displacement).  For a range of view bytes
 * each subfile then shows how many of them it holds
 * (CLF_Mapping_count), in how many runs (CLF_Mapping_foreach, walked up
 * to a bound), whether the whole view lies in it as one run
 * (CLF_Mapping_is_contiguous), and its first runs.  Nothing is read:
 * only the layout comes from metad, and with --layout not even that.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arith.h"
#include "clf_ll.h"
#include "error.h"
#include "layout.h"
#include "map_picture.h"
#include "mapping.h"
#include "png.h"
#include "tool_fs.h"
#include "type.h"

/* Runs walked per subfile at most, and in all (then counts end in +). */
#define MAP_RUNS_WALK 1000000
#define MAP_RUNS_WALK_ALL 4000000
/* The default range spans at most this many periods of the view. */
#define MAP_DEFAULT_TILES 64

struct map_opts {
	const char *data;	/* --data DIR, or NULL */
	const char *layout;	/* --layout TEXT instead of a file */
	const char *view;	/* --view SPEC */
	int64_t disp;		/* --disp, or -1 */
	int64_t lo, hi;		/* --range, or hi = -1 */
	long runs;		/* --runs: runs listed per subfile */
	const char *png;	/* --png FILE, or NULL */
	int64_t png_row;	/* --png-row BYTES, or 0 */
	const char *path;	/* the file, or NULL with --layout */
};

static void map_help(void)
{
	printf("usage: clf [-c CONFIG] map [--data DIR] FILE --view SPEC [--disp D]\n"
	       "                              [--range LO:HI] [--runs N]\n"
	       "                              [--png OUT.png [--png-row BYTES]]\n"
	       "       clf map --layout TEXT --view SPEC ...\n"
	       "\n"
	       "Show how a view of the clf file FILE (\"/a\" or \"clf:/a\") falls on\n"
	       "its subfiles, as the client maps it when a program sets that view:\n"
	       "per subfile the view bytes it holds, in how many runs (pieces\n"
	       "contiguous in the view and in the subfile: one request each), and\n"
	       "whether the whole view lies in it as one run (CONTIGUOUS: then an\n"
	       "access is one contiguous transfer whatever its granularity).\n"
	       "\n"
	       "  --view SPEC      the view's type, ONE type in the layout text\n"
	       "                   syntax: byte, vec(l,r,s,n[,T]), struct(...), or a\n"
	       "                   named pattern with part=J for its J-th subfile's\n"
	       "                   type: cyclic:k=64,p=4,part=2\n"
	       "  --disp D         the view's displacement in bytes (default 0, or\n"
	       "                   a disp= in SPEC)\n"
	       "  --range LO:HI    the view bytes [LO, HI) (sizes as 64k, 1m); default:\n"
	       "                   the view's bytes below the file size, or one period\n"
	       "                   of view and layout together for an empty file (one\n"
	       "                   of the view when that is over 64 of the view's\n"
	       "                   and their extents are incommensurate)\n"
	       "  --runs N         runs listed per subfile (default 8; counting\n"
	       "                   stops at %d runs per subfile: 'N+')\n"
	       "  --png OUT.png    also draw it: file bytes as cells coloured by\n"
	       "                   subfile (grey: the head before disp), the view's\n"
	       "                   cells outlined in full colour, the others pale;\n"
	       "                   titled with the layout, the view and the scale,\n"
	       "                   with the colour key below (a path that cannot\n"
	       "                   be written fails before anything is printed)\n"
	       "  --png-row BYTES  file bytes per row of the picture (default: the\n"
	       "                   layout's period when it fits)\n"
	       "  --layout TEXT    a layout instead of a file: no instance needed\n"
	       "  --data DIR       the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Example: a 4-way cyclic file read by process 2 of 4:\n"
	       "  clf map /f --view cyclic:k=64,p=4,part=2\n"
	       "\n"
	       "Exit status: 0 shown, 1 failure, 2 bad usage (a SPEC or TEXT that\n"
	       "does not parse is shown with its column).\n",
	       MAP_RUNS_WALK);
}

static int parse_range(const char *arg, struct map_opts *o)
{
	const char *colon = strchr(arg, ':');
	char lo[64];

	if (!colon || (size_t)(colon - arg) >= sizeof(lo))
		return -EINVAL;
	memcpy(lo, arg, colon - arg);
	lo[colon - arg] = '\0';
	if (tool_parse_size(lo, INT64_MAX, &o->lo) ||
	    tool_parse_size(colon + 1, INT64_MAX, &o->hi) || o->hi <= o->lo)
		return -EINVAL;
	return 0;
}

static int parse_args(int argc, char **argv, struct map_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "layout", required_argument, NULL, 'L' },
		{ "view", required_argument, NULL, 'v' },
		{ "disp", required_argument, NULL, 'd' },
		{ "range", required_argument, NULL, 'r' },
		{ "runs", required_argument, NULL, 'n' },
		{ "png", required_argument, NULL, 'p' },
		{ "png-row", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			o->data = optarg;
			break;
		case 'L':
			o->layout = optarg;
			break;
		case 'v':
			o->view = optarg;
			break;
		case 'd':
			if (tool_parse_size(optarg, INT64_MAX, &o->disp))
				return tool_usage("map", "--disp '%s': not a size in bytes",
						  optarg);
			break;
		case 'r':
			if (parse_range(optarg, o))
				return tool_usage("map",
						  "--range '%s': not LO:HI with LO < HI (view bytes, as 0:1m)",
						  optarg);
			break;
		case 'n':
			if (tool_parse_size(optarg, 1000000, &v))
				return tool_usage("map", "--runs '%s': not a number from 0 to 1000000",
						  optarg);
			o->runs = (long)v;
			break;
		case 'p':
			o->png = optarg;
			break;
		case 'w':
			if (tool_parse_size(optarg, INT64_MAX, &o->png_row) ||
			    o->png_row < 1)
				return tool_usage("map", "--png-row '%s': not a size in bytes",
						  optarg);
			break;
		case 'h':
			map_help();
			return -1;
		default:
			return tool_bad_option("map", c, argv);
		}
	}
	if (optind < argc)
		o->path = argv[optind++];
	if (optind < argc)
		return tool_usage("map", "unexpected argument '%s'",
				  argv[optind]);
	if (!o->view)
		return tool_usage("map", "which view? (--view SPEC)");
	if (!o->path == !o->layout)
		return tool_usage("map", "give a FILE or --layout TEXT, one of them");
	if (o->png_row && !o->png)
		return tool_usage("map", "--png-row without --png");
	return 0;
}

/* The layout being mapped, from the file or from --layout. */
struct map_layout {
	int64_t disp;
	int head_iod;		/* -1: unknown (--layout) */
	int count;
	CLF_Datatype *types;	/* owned references */
	int *iods;		/* owned, or NULL (--layout) */
	int64_t size;		/* the file's, or -1 */
	char *text;		/* formatted; owned */
};

static void map_layout_release(struct map_layout *l)
{
	for (int j = 0; l->types && j < l->count; j++)
		CLF_Type_free(&l->types[j]);
	free(l->types);
	free(l->iods);
	free(l->text);
	*l = (struct map_layout){ 0 };
}

static int layout_of_text(const char *text, struct map_layout *l)
{
	struct clf_layout_desc d;
	int err = clf_layout_text_parse(text, &d);

	if (err)
		return err;
	*l = (struct map_layout){ .disp = d.disp, .head_iod = -1,
				  .count = d.count, .types = d.types,
				  .size = -1 };
	d.types = NULL;		/* taken */
	d.count = 0;
	clf_layout_desc_release(&d);
	return clf_layout_text_format(l->disp, l->count, l->types, NULL, 0,
				      &l->text);
}

static int layout_of_file(const char *path, struct map_layout *l)
{
	struct clf_layout_info info;
	struct stat st;
	int err = CLF_stat(path, &st);

	if (!err && S_ISDIR(st.st_mode))
		err = clf_fail(EISDIR, "clf: is a directory");
	if (!err)
		err = clf_ll_get_layout(st.st_ino, &info);
	if (err)
		return err;
	*l = (struct map_layout){ .disp = info.disp, .head_iod = info.head_iod,
				  .count = info.count, .types = info.types,
				  .iods = info.iods, .size = st.st_size };
	return clf_layout_text_format(l->disp, l->count, l->types, l->iods,
				      clf_ll_niods(), &l->text);
}

/* What one subfile holds of the range. */
struct sub_stat {
	int64_t bytes;
	int64_t runs;
	bool more;		/* stopped counting runs */
	int contiguous;		/* 1, 0, or -1: holds nothing */
	struct run {
		int64_t view_off, sub_off, len;
	} *first;		/* the first nlist runs; owned */
	int64_t nlist, alloc;
};

struct run_walk {
	struct sub_stat *s;
	int64_t limit;		/* runs to walk */
	int64_t keep;		/* runs to keep */
};

#define WALK_STOP 1

static int count_run(int64_t view_off, int64_t sub_off, int64_t len,
		     void *arg)
{
	struct run_walk *w = arg;
	struct sub_stat *s = w->s;

	if (s->runs == w->limit) {
		s->more = true;
		return WALK_STOP;
	}
	if (s->nlist < w->keep) {
		if (s->nlist == s->alloc) {
			int64_t na = min64(w->keep, s->alloc ? 2 * s->alloc : 8);
			struct run *nf = realloc(s->first, na * sizeof(*nf));

			if (!nf)
				return clf_fail(ENOMEM, "clf: out of memory");
			s->first = nf;
			s->alloc = na;
		}
		s->first[s->nlist++] = (struct run){ view_off, sub_off, len };
	}
	s->runs++;
	return 0;
}

/* Subfile j of the view (the head when j == count). */
static int stat_sub(const struct clf_viewmap *vm, int j, int64_t lo,
		    int64_t hi, int64_t keep, int64_t limit,
		    struct sub_stat *s)
{
	struct run_walk w = { s, limit, keep };
	const CLF_Mapping *m = vm->maps[j];
	int err;

	*s = (struct sub_stat){ .contiguous = -1 };
	if (!m)
		return 0;
	s->bytes = clf_viewmap_count(vm, j, lo, hi);
	if (s->bytes < 0)
		return (int)s->bytes;
	err = clf_viewmap_foreach(vm, j, lo, hi, count_run, &w);
	if (err && err != WALK_STOP)
		return err;
	if (j < vm->nmaps - 1)
		s->contiguous = CLF_Mapping_is_contiguous(m);
	else	/* The head is a piece of the file: one run or not. */
		s->contiguous = s->runs <= 1 && !s->more;
	if (s->bytes == 0)
		s->contiguous = -1;
	return 0;
}

/* Whether the view maps onto the layout's first subfile tiled. */
static bool mapping_is_tiled(CLF_Datatype view, int64_t vdisp,
			     const struct map_layout *l)
{
	CLF_Mapping *m;
	bool tiled;

	if (CLF_Mapping_create(view, vdisp, l->types[0], l->disp, &m))
		return true;
	tiled = clf_mapping_tiled(m);
	CLF_Mapping_free(m);
	return tiled;
}

/* The default range: the view below the file size, or one period. */
static void default_range(const struct map_layout *l, CLF_Datatype view,
			  int64_t vdisp, int64_t *hi, const char **why)
{
	int64_t p, end;

	if (l->size > 0) {
		*hi = clf_type_count_before(view, vdisp, l->size);
		*why = "the view's bytes below the file size";
		if (*hi > 0)
			return;
	}
	*why = "one period of the view and the layout together";
	/*
	 * Not when that is many of the view's own periods and the mapping
	 * is tiled (incommensurate extents: its walks and counts cost per
	 * piece); a periodic mapping walks such a range cheaply.
	 */
	if (lcm_ok(CLF_Type_extent(view), CLF_Type_extent(l->types[0]), &p) &&
	    (p / CLF_Type_extent(view) <= MAP_DEFAULT_TILES ||
	     !mapping_is_tiled(view, vdisp, l)) &&
	    add_ok(max64(l->disp, vdisp), p, &end)) {
		*hi = clf_type_count_before(view, vdisp, end);
		return;
	}
	*hi = CLF_Type_size(view);
	*why = "one period of the view";
}

/* "3", or "head" for the subfile after the count ones. */
static void sub_name(int j, int count, char *buf, size_t len)
{
	if (j == count)
		snprintf(buf, len, "head");
	else
		snprintf(buf, len, "%d", j);
}

#define SUM_FMT "%-8s %-4s %14s %10s  %s\n"
#define RUN_FMT "%-8s %14s %14s %12s\n"

static void print_runs(const char *name, const struct sub_stat *s)
{
	char v[24], o[24], n[24], more[48];

	for (int64_t i = 0; i < s->nlist; i++) {
		snprintf(v, sizeof(v), "%" PRId64, s->first[i].view_off);
		snprintf(o, sizeof(o), "%" PRId64, s->first[i].sub_off);
		snprintf(n, sizeof(n), "%" PRId64, s->first[i].len);
		tool_print_row(RUN_FMT, name, v, o, n);
	}
	if (s->runs > s->nlist || s->more) {
		snprintf(more, sizeof(more), "(%" PRId64 "%s more)",
			 s->runs - s->nlist, s->more ? "+" : "");
		tool_print_row("%-8s %s\n", name, more);
	}
}

static int report(const struct map_opts *o, const struct map_layout *l,
		  CLF_Datatype view, int64_t vdisp, const char *vtext)
{
	struct clf_layout *cl = NULL;
	struct clf_viewmap *vm = NULL;
	struct sub_stat *s = NULL;
	uint32_t *iods = NULL;
	int64_t lo = o->lo, hi = o->hi, limit, total = 0, truns = 0;
	const char *why = "given";
	char name[16], iod[16], bytes[24], runs[24];
	bool tmore = false;
	int n = l->count + 1, err;

	iods = calloc(l->count, sizeof(*iods));
	s = calloc(n, sizeof(*s));
	if (!iods || !s) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto free_all;
	}
	for (int j = 0; j < l->count; j++)
		iods[j] = l->iods ? (uint32_t)l->iods[j] : (uint32_t)j;
	err = clf_layout_create(l->disp, l->count, l->types, iods,
				l->head_iod > 0 ? (uint32_t)l->head_iod : 0,
				&cl);
	if (!err)
		err = clf_viewmap_create(cl, vdisp, view, &vm);
	if (err)
		goto free_all;
	if (hi < 0) {
		lo = 0;
		default_range(l, view, vdisp, &hi, &why);
	}
	limit = min64(MAP_RUNS_WALK, max64(1000, MAP_RUNS_WALK_ALL / n));
	for (int j = 0; j < n && !err; j++)
		err = stat_sub(vm, j, lo, hi, o->runs, limit, &s[j]);
	if (err)
		goto free_all;
	printf("layout  %s\n", l->text);
	printf("view    %s", o->view);
	if (strcmp(o->view, vtext))
		printf(" = %s", vtext);
	printf(", disp %" PRId64 ": %" PRId64 " of every %" PRId64 " bytes\n",
	       vdisp, CLF_Type_size(view), CLF_Type_extent(view));
	printf("range   view bytes %" PRId64 ":%" PRId64 " (%s)\n", lo, hi, why);
	tool_print_row(SUM_FMT, "SUBFILE", "IOD", "BYTES", "RUNS",
		       "CONTIGUOUS");
	for (int j = 0; j < n; j++) {
		bool head = j == l->count;
		int io = head ? l->head_iod : l->iods ? l->iods[j] : -1;

		/* No head line when the layout has none. */
		if (head && l->disp == 0)
			continue;
		sub_name(j, l->count, name, sizeof(name));
		if (io >= 0)
			snprintf(iod, sizeof(iod), "%d", io);
		else
			snprintf(iod, sizeof(iod), "-");
		snprintf(bytes, sizeof(bytes), "%" PRId64, s[j].bytes);
		snprintf(runs, sizeof(runs), "%" PRId64 "%s", s[j].runs,
			 s[j].more ? "+" : "");
		tool_print_row(SUM_FMT, name, iod, bytes, runs,
			       s[j].contiguous < 0 ? "-" :
			       s[j].contiguous ? "yes" : "no");
		total += s[j].bytes;
		truns += s[j].runs;
		tmore |= s[j].more;
	}
	snprintf(bytes, sizeof(bytes), "%" PRId64, total);
	snprintf(runs, sizeof(runs), "%" PRId64 "%s", truns, tmore ? "+" : "");
	tool_print_row(SUM_FMT, "total", "", bytes, runs, "");
	if (o->runs > 0 && truns > 0) {
		printf("\n");
		tool_print_row(RUN_FMT, "SUBFILE", "VIEW_OFF", "SUBFILE_OFF",
			       "LENGTH");
		for (int j = 0; j < n; j++) {
			sub_name(j, l->count, name, sizeof(name));
			print_runs(name, &s[j]);
		}
	}
free_all:
	for (int j = 0; s && j < n; j++)
		free(s[j].first);
	free(s);
	clf_viewmap_free(vm);
	clf_layout_free(cl);
	free(iods);
	return err;
}

/* Draw the picture and say what it shows. */
static int picture(const struct map_opts *o, const struct map_layout *l,
		   CLF_Datatype view, int64_t vdisp, const char *vtext)
{
	struct map_picture_in in = {
		.disp = l->disp, .count = l->count, .types = l->types,
		.view = view, .view_disp = vdisp, .row_bytes = o->png_row,
		.layout_text = l->text, .view_text = o->view,
	};
	struct map_picture_out out;
	int err = map_picture_write(&in, o->png, &out);

	if (err)
		return err;
	printf("\npng     %s: %ux%u pixels, %d x %d cells of %" PRId64
	       " bytes (file bytes %" PRId64 ":%" PRId64 ", %" PRId64
	       " a row); view bytes outlined\n",
	       o->png, out.width, out.height, out.cols, out.rows,
	       out.cell_bytes, out.lo, out.hi, out.cols * out.cell_bytes);
	printf("colours");
	if (l->disp > 0)
		printf(" head #%06x", map_picture_colour(-1));
	for (int j = 0; j < l->count && j < 64; j++)
		printf(" %d #%06x", j, map_picture_colour(j));
	printf("%s\n", l->count > 64 ? " ..." : "");
	return 0;
}

int cmd_map(const struct tool_opts *g, int argc, char **argv)
{
	struct map_opts o = { .disp = -1, .hi = -1, .runs = 8 };
	struct map_layout l = { 0 };
	char path[TOOL_PATH_MAX], *vtext = NULL;
	CLF_Datatype view = NULL;
	bool connected = false;
	int64_t tdisp;
	int rc, err;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (clf_type_text_parse(o.view, &view, &tdisp))
		return tool_bad_text("map", "--view", o.view);
	if (tdisp >= 0 && o.disp >= 0 && tdisp != o.disp) {
		CLF_Type_free(&view);
		return tool_usage("map", "--disp %" PRId64 " and the view's disp=%" PRId64 " differ",
				  o.disp, tdisp);
	}
	o.disp = o.disp >= 0 ? o.disp : tdisp >= 0 ? tdisp : 0;
	rc = CLF_EXIT_FAIL;
	err = clf_type_text_format(view, &vtext);
	if (err) {
		tool_fail();
		goto free_view;
	}
	if (o.layout) {
		err = layout_of_text(o.layout, &l);
		if (err) {
			rc = tool_bad_text("map", "--layout", o.layout);
			goto free_view;
		}
		snprintf(path, sizeof(path), "the layout");
	} else {
		if (tool_clf_path(o.path, path)) {
			rc = tool_usage("map", "%s", tool_last_error());
			goto free_view;
		}
		if (tool_clf_connect(g, o.data)) {
			tool_fail();
			goto free_view;
		}
		connected = true;
		err = layout_of_file(path, &l);
		if (err) {
			tool_fail_on("get the layout of", path, err);
			goto free_layout;
		}
	}
	/* A picture that cannot be written is said before the table. */
	if (o.png && png_check_path(o.png)) {
		tool_fail();
		goto free_layout;
	}
	err = report(&o, &l, view, o.disp, vtext);
	if (err) {
		tool_fail_on("map the view onto", path, err);
		goto free_layout;
	}
	if (o.png) {
		err = picture(&o, &l, view, o.disp, vtext);
		if (err) {
			tool_fail();
			goto free_layout;
		}
	}
	rc = CLF_EXIT_OK;
free_layout:
	map_layout_release(&l);
	if (connected)
		CLF_finalize();
free_view:
	free(vtext);
	CLF_Type_free(&view);
	return rc;
}
