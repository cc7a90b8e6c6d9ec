// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_getlayout.c -- `clf getlayout`: a file's physical layout, in the
 * layout text syntax, and where its bytes live: per subfile its iod, its
 * datatype and how many of the file's bytes it holds; or a directory's
 * default layout.
 *
 * The iods have no request that gives a subfile's size, and reading a
 * subfile to find its end would move its data.  The byte counts are
 * therefore computed: the bytes of subfile j below the file size, from
 * the file size and subfile j's type (clf_type_count_before), which is
 * what the iod holds for a file written without holes.  The output says
 * so.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clf_ll.h"
#include "error.h"
#include "tool_fs.h"
#include "type.h"

struct getlayout_opts {
	const char *data;	/* --data DIR, or NULL */
	bool no_header;		/* -H */
	bool json;		/* --json */
	/* Selectors, as lfs getstripe's: only these values. */
	bool sel_text;		/* -L, --layout */
	bool sel_count;		/* -C, --stripe-count (-c is clf's config) */
	bool sel_size;		/* -S, --stripe-size */
	bool sel_index;		/* -i, --stripe-index */
	const char *path;
};

static void getlayout_help(void)
{
	printf("usage: clf [-c CONFIG] getlayout [--data DIR] [-H] [--json]\n"
	       "                     [-L] [-C] [-S] [-i] PATH\n"
	       "\n"
	       "Show the physical layout of the clf file PATH (\"/a/b\" or\n"
	       "\"clf:/a/b\"), or the default layout of a directory.  For a file:\n"
	       "\n"
	       "  layout TEXT   the whole layout in the layout text syntax\n"
	       "                (docs/layout-syntax.md), as `clf setlayout\n"
	       "                --pattern` and user.clf.layout take it\n"
	       "  disp N        bytes before the pattern (kept in one extra subfile,\n"
	       "                'head')\n"
	       "  size N        the file size in bytes\n"
	       "\n"
	       "then one line per subfile:\n"
	       "\n"
	       "  SUBFILE   its index ('head' for the bytes before disp)\n"
	       "  IOD       the iod that stores it, and its ADDRESS\n"
	       "  BYTES*    bytes of the subfile below the file size, computed\n"
	       "            from the size and the subfile's type (the iods are\n"
	       "            not asked: they have no size query)\n"
	       "  TYPE      the subfile's datatype in the same syntax\n"
	       "\n"
	       "For a directory: 'default TEXT', or 'default none' and the\n"
	       "configuration's layout that new files get instead.\n"
	       "\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "  -H           no header line above the subfiles\n"
	       "  --json       one JSON object with all of the above\n"
	       "\n"
	       "Selectors, as lfs getstripe's: only the values asked for, one\n"
	       "per line (\"NAME: VALUE\" when more than one is asked):\n"
	       "\n"
	       "  -L, --layout        the layout text\n"
	       "  -C, --stripe-count  the number of subfiles (lfs's -c: clf's -c is\n"
	       "                      the configuration)\n"
	       "  -S, --stripe-size   round robin's stripe in bytes ('-' for a\n"
	       "                      layout that is not round robin)\n"
	       "  -i, --stripe-index  the iod of subfile 0\n"
	       "\n"
	       "The reason a layout is refused (by setlayout or the mount's\n"
	       "setfattr) is shown by `clf setlayout --pattern TEXT`.\n"
	       "\n"
	       "Exit status: 0 shown, 1 failure, 2 bad usage.\n");
}

static int parse_args(int argc, char **argv, struct getlayout_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'J' },
		{ "layout", no_argument, NULL, 'L' },
		{ "stripe-count", no_argument, NULL, 'C' },
		{ "stripe-size", no_argument, NULL, 'S' },
		{ "stripe-index", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":HhLCSi", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			o->json = true;
			break;
		case 'L':
			o->sel_text = true;
			break;
		case 'C':
			o->sel_count = true;
			break;
		case 'S':
			o->sel_size = true;
			break;
		case 'i':
			o->sel_index = true;
			break;
		case 'D':
			o->data = optarg;
			break;
		case 'H':
			o->no_header = true;
			break;
		case 'h':
			getlayout_help();
			return -1;
		default:
			return tool_bad_option("getlayout", c, argv);
		}
	}
	if (optind == argc)
		return tool_usage("getlayout", "which file or directory?");
	if (optind + 1 < argc)
		return tool_usage("getlayout", "unexpected argument '%s'",
				  argv[optind + 1]);
	o->path = argv[optind];
	return 0;
}

#define SUB_FMT "%-8s %-4s %-22s %14s  %s\n"

/* host:port of iod i, or "?" when the configuration lacks it. */
static const char *iod_addr(int i)
{
	const struct clf_config *cfg;

	if (clf_ll_config(&cfg) || i < 0 || (uint32_t)i >= cfg->niods)
		return "?";
	return cfg->iods[i].addr;
}

/* Round robin's stripe in the text ("rr:stripe=64k,..."), or -1. */
static int64_t rr_stripe(const char *text)
{
	const char *rr = strstr(text, "rr:"), *s;
	char num[32];
	int64_t v;
	size_t n;

	if (!rr || (rr != text && rr[-1] != ';'))
		return -1;
	s = strstr(rr, "stripe=");
	if (!s)
		return -1;
	s += strlen("stripe=");
	n = strcspn(s, ",;");
	if (n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	return tool_parse_size(num, INT64_MAX, &v) ? -1 : v;
}

static bool any_selector(const struct getlayout_opts *o)
{
	return o->sel_text || o->sel_count || o->sel_size || o->sel_index;
}

static void show_selected(const struct getlayout_opts *o, const char *text,
			  const struct clf_layout_info *info)
{
	int many = o->sel_text + o->sel_count + o->sel_size + o->sel_index > 1;
	int64_t stripe = rr_stripe(text);

	if (o->sel_text)
		printf("%s%s\n", many ? "layout: " : "", text);
	if (o->sel_count)
		printf("%s%d\n", many ? "stripe_count: " : "", info->count);
	if (o->sel_size && stripe >= 0)
		printf("%s%" PRId64 "\n", many ? "stripe_size: " : "", stripe);
	else if (o->sel_size)
		printf("%s-\n", many ? "stripe_size: " : "");
	if (o->sel_index)
		printf("%s%d\n", many ? "stripe_index: " : "",
		       info->count ? info->iods[0] : -1);
}

static int show_json(const char *path, const struct stat *st,
		     const char *text, const struct clf_layout_info *info)
{
	int64_t stripe = rr_stripe(text);
	char *type_text;
	int err = 0;

	printf("{\"path\":");
	tool_json_str(stdout, path);
	printf(",\"layout\":");
	tool_json_str(stdout, text);
	printf(",\"disp\":%" PRId64 ",\"size\":%lld,\"stripe_count\":%d,"
	       "\"stripe_size\":", info->disp, (long long)st->st_size,
	       info->count);
	if (stripe >= 0)
		printf("%" PRId64, stripe);
	else
		printf("null");
	printf(",\"stripe_index\":%d,\"subfiles\":[",
	       info->count ? info->iods[0] : -1);
	for (int j = 0; j < info->count && !err; j++) {
		int64_t n = clf_type_count_before(info->types[j], info->disp,
						  st->st_size);

		err = clf_type_text_format(info->types[j], &type_text);
		if (err)
			break;
		printf("%s{\"index\":%d,\"iod\":%d,\"address\":", j ? "," : "",
		       j, info->iods[j]);
		tool_json_str(stdout, iod_addr(info->iods[j]));
		printf(",\"bytes\":%" PRId64 ",\"type\":", n);
		tool_json_str(stdout, type_text);
		printf("}");
		free(type_text);
	}
	printf("]}\n");
	return err;
}

static int show_file(const char *path, const struct stat *st,
		     const struct getlayout_opts *o)
{
	struct clf_layout_info info;
	char *text = NULL, *type_text, idx[16], iod[16], bytes[24];
	int64_t total = 0, head;
	int err;

	err = clf_ll_get_layout(st->st_ino, &info);
	if (err)
		return tool_fail_on("get the layout of", path, err);
	err = clf_layout_text_format(info.disp, info.count, info.types,
				     info.iods, clf_ll_niods(), &text);
	if (err) {
		CLF_Layout_release(&info);
		return tool_fail_on("format the layout of", path, err);
	}
	if (o->json || any_selector(o)) {
		if (o->json)
			err = show_json(path, st, text, &info);
		else
			show_selected(o, text, &info);
		free(text);
		CLF_Layout_release(&info);
		return err ? tool_fail_on("format the layout of", path, err)
			   : CLF_EXIT_OK;
	}
	printf("layout %s\n", text);
	printf("disp   %" PRId64 "\n", info.disp);
	printf("size   %lld\n", (long long)st->st_size);
	if (!o->no_header)
		tool_print_row(SUB_FMT, "SUBFILE", "IOD", "ADDRESS", "BYTES*",
			       "TYPE");
	if (info.disp > 0) {
		head = st->st_size < info.disp ? st->st_size : info.disp;
		total += head;
		snprintf(iod, sizeof(iod), "%d", info.head_iod);
		snprintf(bytes, sizeof(bytes), "%" PRId64, head);
		tool_print_row(SUB_FMT, "head", iod, iod_addr(info.head_iod),
			       bytes, "-");
	}
	for (int j = 0; j < info.count && !err; j++) {
		int64_t n = clf_type_count_before(info.types[j], info.disp,
						  st->st_size);

		err = clf_type_text_format(info.types[j], &type_text);
		if (err)
			break;
		total += n;
		snprintf(idx, sizeof(idx), "%d", j);
		snprintf(iod, sizeof(iod), "%d", info.iods[j]);
		snprintf(bytes, sizeof(bytes), "%" PRId64, n);
		tool_print_row(SUB_FMT, idx, iod, iod_addr(info.iods[j]),
			       bytes, type_text);
		free(type_text);
	}
	if (!err)
		printf("* computed from the file size and each subfile's type (%" PRId64
		       " bytes in all); the iods have no size query\n",
		       total);
	free(text);
	CLF_Layout_release(&info);
	if (err)
		return tool_fail_on("format the layout of", path, err);
	return CLF_EXIT_OK;
}

static int show_dir(const char *path, const struct stat *st,
		    const struct getlayout_opts *o)
{
	struct clf_layout_desc desc;
	const struct clf_config *cfg;
	char *text = NULL, size[32], first[32] = "";
	int err;

	err = clf_ll_dir_default_read(st->st_ino, &text);
	if (err)
		return tool_fail_on("read the default layout of", path, err);
	if (o->json) {
		printf("{\"path\":");
		tool_json_str(stdout, path);
		printf(",\"default\":");
		if (text)
			tool_json_str(stdout, text);
		else
			printf("null");
		printf("}\n");
		free(text);
		return CLF_EXIT_OK;
	}
	if (any_selector(o) && !o->sel_text) {
		fprintf(stderr, "clf: '%s' is a directory: only its default layout (-L) can be selected\n",
			path);
		free(text);
		return CLF_EXIT_FAIL;
	}
	if (o->sel_text) {
		printf("%s\n", text ? text : "-");
		free(text);
		return CLF_EXIT_OK;
	}
	if (text) {
		printf("default %s\n", text);
		/* Say so when new files cannot get it (the mount ignores it). */
		err = clf_layout_text_parse(text, &desc);
		if (!err) {
			err = clf_ll_check_layout(&desc);
			clf_layout_desc_release(&desc);
		}
		if (err)
			fprintf(stderr, "clf: warning: the default layout of '%s' is not usable, new files get the configuration's: %s\n",
				path, CLF_Last_error());
		free(text);
		return CLF_EXIT_OK;
	}
	if (clf_ll_config(&cfg))
		return tool_fail();
	tool_fmt_num(cfg->stripe_size, size, sizeof(size));
	if (cfg->first_iod)
		snprintf(first, sizeof(first), ",first=%" PRIu32,
			 cfg->first_iod);
	printf("default none (new files get the configuration's rr:stripe=%s,count=%" PRIu32
	       "%s)\n",
	       size, cfg->stripe_count, first);
	return CLF_EXIT_OK;
}

int cmd_getlayout(const struct tool_opts *g, int argc, char **argv)
{
	struct getlayout_opts o = { 0 };
	char path[TOOL_PATH_MAX];
	struct stat st;
	int rc, err;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_clf_path(o.path, path))
		return tool_usage("getlayout", "%s", tool_last_error());
	if (tool_clf_connect(g, o.data))
		return tool_fail();
	err = CLF_stat(path, &st);
	if (err)
		rc = tool_fail_on("get the layout of", path, err);
	else if (S_ISDIR(st.st_mode))
		rc = show_dir(path, &st, &o);
	else
		rc = show_file(path, &st, &o);
	CLF_finalize();
	return rc;
}
