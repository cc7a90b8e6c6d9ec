// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_setlayout.c -- `clf setlayout`: give a file its physical layout
 * (creating it when missing), or a directory the default layout of the
 * files created in it, like `lfs setstripe`.
 *
 * A file's layout can only change while it holds no byte (metad's
 * rule).  A directory's default is the text in its hidden
 * .clf-default-layout file, read and written by libclf/client/clf_ll.h for
 * the mount and this command alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clf_ll.h"
#include "error.h"
#include "tool_fs.h"

struct setlayout_opts {
	const char *data;	/* --data DIR, or NULL */
	struct tool_layout_opts layout;
	bool remove;		/* -d: drop a directory's default */
	bool use_default;	/* --default: the configuration's round robin */
	const char *path;	/* the operand */
};

static void setlayout_help(void)
{
	printf("usage: clf [-c CONFIG] setlayout [--data DIR] [LAYOUT OPTIONS] PATH\n"
	       "       clf [-c CONFIG] setlayout [--data DIR] -d DIR\n"
	       "\n"
	       "Give the clf file PATH (\"/a/b\" or \"clf:/a/b\") a physical layout:\n"
	       "a displacement and one datatype per subfile.  A missing file is\n"
	       "created, empty; an existing one must be empty.  On a directory,\n"
	       "set the default layout of the files created in it from now on\n"
	       "(the same as the mount's user.clf.layout on the directory).\n"
	       "\n"
	       TOOL_LAYOUT_HELP
	       "  --default           round robin with the configuration's stripe\n"
	       "                      size and count\n"
	       "  -d, --delete        remove the default layout of directory DIR\n"
	       "  --data DIR          the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "A layout must be given (--default for the configuration's round\n"
	       "robin): without one setlayout refuses, rather than replace a\n"
	       "file's layout with the default.  Examples:\n"
	       "\n"
	       "  clf setlayout --stripe-size 1m --stripe-count 2 /big\n"
	       "  clf setlayout --pattern 'cyclic:k=4k,p=4' /out\n"
	       "  clf setlayout --pattern 'disp=512;vec(0,4k-1,8k,1);vec(4k,8k-1,8k,1)' /h\n"
	       "  clf setlayout --pattern 'grid:rows=8k,cols=8k,p=2x2,k=64x64' /matrices\n"
	       "\n"
	       "Exit status: 0 done, 1 failure (a non-empty file, an instance that\n"
	       "does not answer, ...), 2 bad usage (a --pattern that does not parse\n"
	       "is shown with its column).\n");
}

static int parse_args(int argc, char **argv, struct setlayout_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "delete", no_argument, NULL, 'd' },
		{ "default", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		TOOL_LAYOUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, ":dh", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			o->data = optarg;
			break;
		case 'd':
			o->remove = true;
			break;
		case 'R':
			o->use_default = true;
			break;
		case 'h':
			setlayout_help();
			return -1;
		case '?':
		case ':':
			return tool_bad_option("setlayout", c, argv);
		default:
			rc = tool_layout_opt("setlayout", &o->layout, c, optarg);
			if (rc)
				return rc;
		}
	}
	if (optind == argc)
		return tool_usage("setlayout", "which file or directory?");
	if (optind + 1 < argc)
		return tool_usage("setlayout", "unexpected argument '%s'",
				  argv[optind + 1]);
	if (o->remove && tool_layout_given(&o->layout))
		return tool_usage("setlayout",
				  "-d removes a directory's default: it takes no layout");
	if (o->use_default && tool_layout_given(&o->layout))
		return tool_usage("setlayout",
				  "--default is the configuration's round robin: it takes no other layout option");
	/* No layout at all would silently put the configuration's round
	 * robin in place of what the file or directory has now. */
	if (!o->remove && !o->use_default && !tool_layout_given(&o->layout))
		return tool_usage("setlayout",
				  "which layout? give --pattern or --stripe-size/--stripe-count/--first-iod, or --default for the configuration's round robin");
	o->path = argv[optind];
	return 0;
}

/* Create the missing file path (mode 0666 less the umask) with desc. */
static int create_with(const char *path, const struct clf_layout_desc *desc)
{
	struct clf_ll_owner owner = { geteuid(), getegid() };
	char dir[TOOL_PATH_MAX];
	struct clf_proto_attr a;
	const char *name;
	struct stat st;
	mode_t mask;
	int err, fd;

	err = tool_path_split(path, dir, &name);
	if (err)
		return tool_fail_on("create", path, err);
	err = CLF_stat(dir, &st);
	if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (err == -ENOENT) {
		fprintf(stderr, "clf: cannot create '%s': no such directory '%s'\n",
			path, dir);
		return CLF_EXIT_FAIL;
	}
	if (err == -ENOTDIR) {
		fprintf(stderr, "clf: cannot create '%s': '%s' is not a directory\n",
			path, dir);
		return CLF_EXIT_FAIL;
	}
	if (err)
		return tool_fail_on("create", path, err);
	mask = umask(0);
	umask(mask);
	fd = clf_ll_create(st.st_ino, name, 0666 & ~mask, &owner, true, desc,
			   O_RDONLY, &a);
	if (fd < 0)
		return tool_fail_on("create", path, fd);
	err = CLF_close(fd);
	if (err)
		return tool_fail_on("create", path, err);
	return CLF_EXIT_OK;
}

/* The layout of the empty regular file of st. */
static int set_file(const char *path, const struct stat *st,
		    const struct clf_layout_desc *desc)
{
	int err;

	if (!S_ISREG(st->st_mode)) {
		fprintf(stderr, "clf: cannot set the layout of '%s': not a regular file or directory\n",
			path);
		return CLF_EXIT_FAIL;
	}
	err = st->st_size > 0 ? -EBUSY : clf_ll_set_layout(st->st_ino, desc);
	if (err == -EBUSY) {
		/* metad refuses too when bytes arrived since the stat. */
		if (st->st_size > 0)
			fprintf(stderr, "clf: cannot set the layout of '%s': the file is not empty (%lld bytes)\n",
				path, (long long)st->st_size);
		else
			fprintf(stderr, "clf: cannot set the layout of '%s': the file is not empty\n",
				path);
		return CLF_EXIT_FAIL;
	}
	if (err)
		return tool_fail_on("set the layout of", path, err);
	return CLF_EXIT_OK;
}

static int set_dir(const char *path, const struct stat *st, const char *text)
{
	struct clf_ll_owner owner = { geteuid(), getegid() };
	int err = clf_ll_dir_default_write(st->st_ino, &owner, text);

	if (err)
		return tool_fail_on("set the default layout of directory",
				    path, err);
	return CLF_EXIT_OK;
}

static int remove_default(const char *path)
{
	struct stat st;
	int err = CLF_stat(path, &st);

	if (!err && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "clf: cannot remove the default layout of '%s': not a directory (a file always has a layout)\n",
			path);
		return CLF_EXIT_FAIL;
	}
	if (!err)
		err = clf_ll_dir_default_remove(st.st_ino);
	if (err == -ENOENT && !CLF_stat(path, &st)) {
		fprintf(stderr, "clf: cannot remove the default layout of '%s': it has none\n",
			path);
		return CLF_EXIT_FAIL;
	}
	if (err)
		return tool_fail_on("remove the default layout of", path, err);
	return CLF_EXIT_OK;
}

int cmd_setlayout(const struct tool_opts *g, int argc, char **argv)
{
	struct setlayout_opts o = { 0 };
	struct clf_layout_desc desc;
	char path[TOOL_PATH_MAX], *text = NULL;
	struct stat st;
	int rc, err;

	tool_layout_opts_init(&o.layout);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_clf_path(o.path, path))
		return tool_usage("setlayout", "%s", tool_last_error());
	if (tool_clf_connect(g, o.data))
		return tool_fail();
	if (o.remove) {
		rc = remove_default(path);
		goto finalize;
	}
	err = tool_layout_make(&o.layout, &text, &desc);
	if (err) {
		rc = tool_fail_on("set the layout of", path, err);
		goto finalize;
	}
	err = CLF_stat(path, &st);
	if (err == -ENOENT)
		rc = create_with(path, &desc);
	else if (err)
		rc = tool_fail_on("set the layout of", path, err);
	else if (S_ISDIR(st.st_mode))
		rc = set_dir(path, &st, text);
	else
		rc = set_file(path, &st, &desc);
	clf_layout_desc_release(&desc);
	free(text);
finalize:
	CLF_finalize();
	return rc;
}
