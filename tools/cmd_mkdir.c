// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_mkdir.c -- `clf mkdir`: make clf directories without a mount, so
 * that setlayout, cp and ls have directories to work on.  A new
 * directory inherits its parent's default layout, as under the mount.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clf_ll.h"
#include "error.h"
#include "tool_fs.h"

struct mkdir_opts {
	const char *data;	/* --data DIR, or NULL */
	bool parents;		/* -p */
	mode_t mode;		/* -m, or 0777 less the umask */
};

static void mkdir_help(void)
{
	printf("usage: clf [-c CONFIG] mkdir [--data DIR] [-p] [-m MODE] PATH...\n"
	       "\n"
	       "Make the clf directories PATH (\"/a\" or \"clf:/a\").  Each new\n"
	       "directory gets the default layout of its parent, if it has one.\n"
	       "\n"
	       "  -p           make missing parents too; no error if PATH exists\n"
	       "               as a directory\n"
	       "  -m MODE      permissions in octal (default 0777 less the umask)\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Exit status: 0 made, 1 failure, 2 bad usage.\n");
}

static int parse_args(int argc, char **argv, struct mkdir_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "parents", no_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	mode_t mask = umask(0);
	char *end;
	long v;
	int c;

	umask(mask);
	o->mode = 0777 & ~mask;
	while ((c = getopt_long(argc, argv, ":pm:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			o->data = optarg;
			break;
		case 'p':
			o->parents = true;
			break;
		case 'm':
			errno = 0;
			v = strtol(optarg, &end, 8);
			if (errno || end == optarg || *end || v < 0 ||
			    v > 07777)
				return tool_usage("mkdir", "-m '%s': not an octal mode",
						  optarg);
			o->mode = (mode_t)v;
			break;
		case 'h':
			mkdir_help();
			return -1;
		default:
			return tool_bad_option("mkdir", c, argv);
		}
	}
	if (optind == argc)
		return tool_usage("mkdir", "which directory?");
	return 0;
}

/* Give the new directory path the default layout of its parent. */
static void inherit(const char *path)
{
	struct clf_ll_owner owner = { geteuid(), getegid() };
	char dir[TOOL_PATH_MAX], *text = NULL;
	struct stat pst, st;
	const char *name;

	if (tool_path_split(path, dir, &name) || CLF_stat(dir, &pst) ||
	    clf_ll_dir_default_read(pst.st_ino, &text) || !text)
		return;
	if (CLF_stat(path, &st) ||
	    clf_ll_dir_default_write(st.st_ino, &owner, text))
		fprintf(stderr, "clf: warning: '%s' did not get the default layout of '%s': %s\n",
			path, dir, CLF_Last_error());
	free(text);
}

/*
 * mkdir path, and with parents each missing ancestor first.  A failure
 * is printed (naming the directory that could not be made) and
 * returned as a negative errno.
 */
static int make(const char *path, const struct mkdir_opts *o)
{
	char dir[TOOL_PATH_MAX];
	const char *name;
	struct stat st;
	int err;

	if (o->parents) {
		err = CLF_stat(path, &st);
		if (!err && S_ISDIR(st.st_mode))
			return 0;
		if (err == -ENOENT && !tool_path_split(path, dir, &name)) {
			err = make(dir, o);
			if (err)
				return err;
		}
	}
	err = CLF_mkdir(path, o->mode);
	if (err) {
		tool_fail_on("make directory", path, err);
		return err;
	}
	inherit(path);
	return 0;
}

int cmd_mkdir(const struct tool_opts *g, int argc, char **argv)
{
	struct mkdir_opts o = { 0 };
	char path[TOOL_PATH_MAX];
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_clf_connect(g, o.data))
		return tool_fail();
	for (int i = optind; i < argc; i++) {
		if (tool_clf_path(argv[i], path)) {
			rc = tool_fail_on("make directory", argv[i], -EINVAL);
			continue;
		}
		/* Already said why. */
		if (make(path, &o))
			rc = CLF_EXIT_FAIL;
	}
	CLF_finalize();
	return rc;
}
