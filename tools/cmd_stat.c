// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_stat.c -- `clf stat`: what stat(1) says of a clf file, and its
 * layout, without a mount.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clf_ll.h"
#include "error.h"
#include "tool_fs.h"

static void stat_help(void)
{
	printf("usage: clf [-c CONFIG] stat [--data DIR] PATH...\n"
	       "\n"
	       "Show what stat(1) shows of the clf files PATH (\"/a\" or \"clf:/a\"),\n"
	       "and the layout (a directory's default layout):\n"
	       "\n"
	       "  File: /a\n"
	       "  Size: 12          Type: regular file\n"
	       "  Mode: (0644/-rw-r--r--)  Uid: (1000/ann)  Gid: (1000/ann)\n"
	       "  Inode: 42         Links: 1\n"
	       "  Access: ...  Modify: ...  Change: ...\n"
	       "  Layout: rr:stripe=64k,count=4\n"
	       "\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Exit status: 0 shown, 1 failure, 2 bad usage.\n");
}

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "regular file" : S_ISDIR(m) ? "directory" :
	       S_ISLNK(m) ? "symbolic link" : S_ISFIFO(m) ? "fifo" :
	       S_ISSOCK(m) ? "socket" : S_ISCHR(m) ? "character special file" :
	       S_ISBLK(m) ? "block special file" : "unknown";
}

static void fmt_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	char s[40], z[8];
	time_t t = ts->tv_sec;

	if (!localtime_r(&t, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);
	snprintf(buf, len, "%s.%09ld %s", s, ts->tv_nsec, z);
}

static int stat_one(const char *arg)
{
	char path[TOOL_PATH_MAX], mode[11], at[64], mt[64], ct[64];
	char *layout = NULL;
	struct passwd *pw;
	struct group *gr;
	struct stat st;
	int err;

	if (tool_clf_path(arg, path))
		return tool_fail_on("stat", arg, -ENOENT);
	err = CLF_stat(path, &st);
	if (err)
		return tool_fail_on("stat", path, err);
	if (S_ISDIR(st.st_mode))
		err = clf_ll_dir_default_read(st.st_ino, &layout);
	else if (S_ISREG(st.st_mode))
		err = tool_layout_text_of(st.st_ino, &layout);
	if (err)
		return tool_fail_on("stat", path, err);
	tool_fmt_mode(st.st_mode, mode);
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	fmt_time(&st.st_atim, at, sizeof(at));
	fmt_time(&st.st_mtim, mt, sizeof(mt));
	fmt_time(&st.st_ctim, ct, sizeof(ct));
	printf("  File: %s\n"
	       "  Size: %-12lld Type: %s\n"
	       "  Mode: (%04o/%s)  Uid: (%u/%s)  Gid: (%u/%s)\n"
	       " Inode: %-12llu Links: %lu\n"
	       "Access: %s\n"
	       "Modify: %s\n"
	       "Change: %s\n"
	       "Layout: %s\n",
	       path, (long long)st.st_size, type_name(st.st_mode),
	       (unsigned)(st.st_mode & 07777), mode, (unsigned)st.st_uid,
	       pw ? pw->pw_name : "-", (unsigned)st.st_gid,
	       gr ? gr->gr_name : "-", (unsigned long long)st.st_ino,
	       (unsigned long)st.st_nlink, at, mt, ct,
	       layout ? layout : S_ISDIR(st.st_mode) ? "- (no default)" : "-");
	free(layout);
	return 0;
}

int cmd_stat(const struct tool_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL;
	int c, rc = CLF_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			data = optarg;
			break;
		case 'h':
			stat_help();
			return CLF_EXIT_OK;
		default:
			return tool_bad_option("stat", c, argv);
		}
	}
	if (optind == argc)
		return tool_usage("stat", "which file?");
	if (tool_clf_connect(g, data))
		return tool_fail();
	for (int i = optind; i < argc; i++)
		if (stat_one(argv[i]))
			rc = CLF_EXIT_FAIL;
	CLF_finalize();
	return rc;
}
