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

#include "client.h"
#include "client_ns.h"
#include "error.h"
#include "tool_fs.h"
#include "type.h"

struct getlayout_opts {
	const char *data;	/* --data DIR, or NULL */
	bool no_header;		/* -H */
	const char *path;
};

static void getlayout_help(void)
{
	printf("usage: clf [-c CONFIG] getlayout [--data DIR] [-H] PATH\n"
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
	       "\n"
	       "Exit status: 0 shown, 1 failure, 2 bad usage.\n");
}

static int parse_args(int argc, char **argv, struct getlayout_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":Hh", longopts, NULL)) != -1) {
		switch (c) {
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
	struct clf_client *cl;

	if (clf_client_get(&cl) || i < 0 || (uint32_t)i >= cl->cfg->niods)
		return "?";
	return cl->cfg->iods[i].addr;
}

static int show_file(const char *path, const struct stat *st,
		     const struct getlayout_opts *o)
{
	struct clf_layout_info info;
	char *text = NULL, *type_text, idx[16], iod[16], bytes[24];
	int64_t total = 0, head;
	int err;

	err = clf_ns_get_layout(st->st_ino, &info);
	if (err)
		return tool_fail_on("get the layout of", path, err);
	err = clf_layout_text_format(info.disp, info.count, info.types,
				     info.iods, clf_ns_niods(), &text);
	if (err) {
		CLF_Layout_release(&info);
		return tool_fail_on("format the layout of", path, err);
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

static int show_dir(const char *path, const struct stat *st)
{
	struct clf_layout_desc desc;
	struct clf_client *cl;
	char *text = NULL, size[32], first[32] = "";
	int err;

	err = clf_ns_dir_default_read(st->st_ino, &text);
	if (err)
		return tool_fail_on("read the default layout of", path, err);
	if (text) {
		printf("default %s\n", text);
		/* Say so when new files cannot get it (the mount ignores it). */
		err = clf_layout_text_parse(text, &desc);
		if (!err) {
			err = clf_ns_check_layout(&desc);
			clf_layout_desc_release(&desc);
		}
		if (err)
			fprintf(stderr, "clf: warning: the default layout of '%s' is not usable, new files get the configuration's: %s\n",
				path, CLF_Last_error());
		free(text);
		return CLF_EXIT_OK;
	}
	if (clf_client_get(&cl))
		return tool_fail();
	tool_fmt_num(cl->cfg->stripe_size, size, sizeof(size));
	if (cl->cfg->first_iod)
		snprintf(first, sizeof(first), ",first=%" PRIu32,
			 cl->cfg->first_iod);
	printf("default none (new files get the configuration's rr:stripe=%s,count=%" PRIu32
	       "%s)\n",
	       size, cl->cfg->stripe_count, first);
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
		rc = show_dir(path, &st);
	else
		rc = show_file(path, &st, &o);
	CLF_finalize();
	return rc;
}
