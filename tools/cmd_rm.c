// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_rm.c -- `clf rm`, `clf rmdir` and `clf mv`: remove and rename clf
 * files without a mount, as rm(1), rmdir(1) and mv(1) do on one.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clf_ll.h"
#include "error.h"
#include "tool_fs.h"

/* Room for a path and one more component. */
#define RM_PATH_MAX (TOOL_PATH_MAX + CLF_PROTO_NAME_MAX + 2)

struct rm_opts {
	const char *data;	/* --data DIR, or NULL */
	bool force;		/* -f: a missing file is no error */
	bool recursive;		/* -r: directories and what they hold */
};

static void rm_help(const char *cmd)
{
	if (!strcmp(cmd, "rmdir")) {
		printf("usage: clf [-c CONFIG] rmdir [--data DIR] PATH...\n"
		       "\n"
		       "Remove the empty clf directories PATH (\"/a\" or \"clf:/a\").\n"
		       "A directory holding only its default layout counts as empty.\n"
		       "\n"
		       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
		       "\n"
		       "Exit status: 0 removed, 1 failure, 2 bad usage.\n");
		return;
	}
	if (!strcmp(cmd, "mv")) {
		printf("usage: clf [-c CONFIG] mv [--data DIR] SRC DST\n"
		       "\n"
		       "Rename the clf file or directory SRC to DST (\"/a\" or \"clf:/a\");\n"
		       "when DST is a directory, SRC goes into it under its name.  An\n"
		       "existing file DST is replaced.  Both are in the same instance:\n"
		       "no data moves, the layout stays.\n"
		       "\n"
		       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
		       "\n"
		       "Exit status: 0 renamed, 1 failure, 2 bad usage.\n");
		return;
	}
	printf("usage: clf [-c CONFIG] rm [--data DIR] [-f] [-r] PATH...\n"
	       "\n"
	       "Remove the clf files PATH (\"/a\" or \"clf:/a\"): their subfiles\n"
	       "on every iod go with them.\n"
	       "\n"
	       "  -f, --force      no error for a missing PATH\n"
	       "  -r, -R, --recursive\n"
	       "                   remove directories and everything in them\n"
	       "  --data DIR       the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Exit status: 0 removed, 1 failure (the others are still removed),\n"
	       "2 bad usage.\n");
}

static int parse_args(const char *cmd, int argc, char **argv,
		      struct rm_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "force", no_argument, NULL, 'f' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *shortopts = strcmp(cmd, "rm") ? ":h" : ":frRh";
	int c;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			o->data = optarg;
			break;
		case 'f':
		case 'r':
		case 'R':
			if (strcmp(cmd, "rm"))
				return tool_usage(cmd, "unknown option '%s'",
						  argv[optind - 1]);
			if (c == 'f')
				o->force = true;
			else
				o->recursive = true;
			break;
		case 'h':
			rm_help(cmd);
			return -1;
		default:
			return tool_bad_option(cmd, c, argv);
		}
	}
	if (optind == argc)
		return tool_usage(cmd, "which %s?",
				  strcmp(cmd, "rm") ? "directory" : "file");
	if (!strcmp(cmd, "mv") && argc - optind != 2)
		return tool_usage(cmd, "need a source and a destination");
	return 0;
}

/*
 * A directory's default layout lives in a hidden file of it (see
 * clf_ll.h), which the mount's rmdir removes with it: so does ours.
 * Removed only when it is all the directory holds.
 */
static int drop_default(uint64_t ino)
{
	struct clf_ll_dirents d;
	bool only;
	int err = clf_ll_readdir(ino, 0, 2, &d);

	if (err)
		return err;
	only = d.rep.eof && d.rep.count == 1 &&
	       clf_proto_str_eq(d.rep.ents[0].name, CLF_LL_DEFAULT_LAYOUT_NAME);
	clf_ll_dirents_release(&d);
	if (!only)
		return 0;
	err = clf_ll_dir_default_remove(ino);
	return err == -ENOENT ? 0 : err;
}

/* Remove what directory path (inode ino) holds, then path itself. */
static int remove_tree(const char *path, uint64_t ino)
{
	char child[RM_PATH_MAX];
	struct clf_ll_dirents d;
	struct stat st;
	int err = 0;

	/* Always from the start: each pass removes what it read. */
	for (;;) {
		uint32_t n;

		err = clf_ll_readdir(ino, 0, CLF_PROTO_READDIR_MAX, &d);
		if (err)
			return tool_fail_on("read directory", path, err);
		n = d.rep.count;
		for (uint32_t i = 0; i < n && !err; i++) {
			const struct clf_proto_dirent *e = &d.rep.ents[i];

			snprintf(child, sizeof(child), "%s%s%.*s", path,
				 strcmp(path, "/") ? "/" : "",
				 (int)e->name.len, e->name.ptr);
			/* The hidden default layout goes with rmdir. */
			if (clf_proto_str_eq(e->name, CLF_LL_DEFAULT_LAYOUT_NAME))
				continue;
			err = CLF_stat(child, &st);
			if (!err && S_ISDIR(st.st_mode))
				err = remove_tree(child, st.st_ino) ? -EIO : 0;
			else if (!err || err == -ENOENT)
				err = CLF_unlink(child);
			if (err == -ENOENT)
				err = 0;
			if (err && err != -EIO)
				tool_fail_on("remove", child, err);
		}
		clf_ll_dirents_release(&d);
		if (err)
			return -EIO;
		/* Only the hidden file (or nothing) is left. */
		if (n <= 1)
			break;
	}
	err = drop_default(ino);
	if (!err)
		err = CLF_rmdir(path);
	if (err)
		return tool_fail_on("remove", path, err), -EIO;
	return 0;
}

static int rm_one(const struct rm_opts *o, const char *arg)
{
	char path[TOOL_PATH_MAX];
	struct stat st;
	int err;

	if (tool_clf_path(arg, path))
		return tool_fail_on("remove", arg, -ENOENT);
	err = CLF_stat(path, &st);
	if (err == -ENOENT && o->force)
		return 0;
	if (err)
		return tool_fail_on("remove", path, err);
	if (S_ISDIR(st.st_mode)) {
		if (!strcmp(path, "/")) {
			fprintf(stderr, "clf: cannot remove '/': it is the root\n");
			return CLF_EXIT_FAIL;
		}
		if (!o->recursive) {
			fprintf(stderr, "clf: cannot remove '%s': is a directory (rm -r, or rmdir)\n",
				path);
			return CLF_EXIT_FAIL;
		}
		return remove_tree(path, st.st_ino) ? CLF_EXIT_FAIL : 0;
	}
	err = CLF_unlink(path);
	if (err == -ENOENT && o->force)
		return 0;
	return err ? tool_fail_on("remove", path, err) : 0;
}

static int rmdir_one(const char *arg)
{
	char path[TOOL_PATH_MAX];
	int err;

	struct stat st;

	if (tool_clf_path(arg, path))
		return tool_fail_on("remove", arg, -ENOENT);
	err = CLF_stat(path, &st);
	if (!err && S_ISDIR(st.st_mode))
		err = drop_default(st.st_ino);
	if (!err)
		err = CLF_rmdir(path);
	return err ? tool_fail_on("remove", path, err) : 0;
}

static int mv_one(const char *from_arg, const char *to_arg)
{
	char from[TOOL_PATH_MAX], to[RM_PATH_MAX];
	const char *name;
	struct stat st;
	size_t len;
	int err;

	if (tool_clf_path(from_arg, from))
		return tool_fail_on("move", from_arg, -ENOENT);
	if (tool_clf_path(to_arg, to))
		return tool_fail_on("move to", to_arg, -ENOENT);
	err = CLF_stat(from, &st);
	if (err)
		return tool_fail_on("move", from, err);
	/* Into a directory DST, under SRC's name. */
	if (!CLF_stat(to, &st) && S_ISDIR(st.st_mode)) {
		name = strrchr(from, '/') + 1;
		len = strlen(to);
		snprintf(to + len, sizeof(to) - len, "%s%s",
			 len > 1 ? "/" : "", name);
	}
	err = CLF_rename(from, to);
	if (err) {
		char why[512];

		tool_clf_reason(err, why, sizeof(why));
		fprintf(stderr, "clf: cannot move '%s' to '%s': %s\n", from,
			to, why);
		return CLF_EXIT_FAIL;
	}
	return 0;
}

int cmd_rm(const struct tool_opts *g, int argc, char **argv)
{
	const char *cmd = argv[0];
	struct rm_opts o = { 0 };
	int rc;

	rc = parse_args(cmd, argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_clf_connect(g, o.data))
		return tool_fail();
	if (!strcmp(cmd, "mv")) {
		rc = mv_one(argv[optind], argv[optind + 1]);
	} else {
		for (int i = optind; i < argc; i++) {
			int r = strcmp(cmd, "rm") ? rmdir_one(argv[i])
						  : rm_one(&o, argv[i]);

			if (r)
				rc = CLF_EXIT_FAIL;
		}
	}
	CLF_finalize();
	return rc;
}
