// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_stage.c -- clf stage-in and clf stage-out: a whole tree between
 * another file system and clf, in parallel, layouts kept: `clf cp -r -p
 * -j N`, with the direction checked.  A clf file's layout travels as the
 * user.clf.layout attribute of the local copy (where the local file
 * system keeps user attributes) and comes back from it, so a tree staged
 * out and in again has the layouts it had.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "tool_fs.h"
#include "tool_stage.h"

#define STAGE_DEFAULT_JOBS 4

static void stage_help(const char *cmd)
{
	bool in = !strcmp(cmd, "stage-in");

	printf("usage: clf [-c CONFIG] %s [-j N] [-q] [--data DIR] SRC DST\n"
	       "\n"
	       "Copy %s SRC (a file or a directory tree) to %s DST, N files at\n"
	       "once (default %d), each file with the layout it had (-p of clf cp):\n"
	       "clf cp -r -p -j N with the direction checked.  clf paths are\n"
	       "clf:/a/b or clf://HOST:PORT/a/b.\n"
	       "\n"
	       "  -j, --jobs N        files copied at once, by N clf processes\n"
	       "  -q, --quiet         no line per file\n"
	       "  --data DIR          the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Exit status: 0 copied, 1 a copy failed (each says why), 2 bad usage.\n",
	       cmd, in ? "the local" : "the clf", in ? "the clf" : "the local",
	       STAGE_DEFAULT_JOBS);
}

int cmd_stage(const struct tool_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "data", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *jobs = "4", *data = NULL;
	const char *cp[12];
	bool quiet = false, in = !strcmp(cmd, "stage-in");
	int c, n = 0;

	while ((c = getopt_long(argc, argv, ":j:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			jobs = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'D':
			data = optarg;
			break;
		case 'h':
			stage_help(cmd);
			return CLF_EXIT_OK;
		default:
			return tool_bad_option(cmd, c, argv);
		}
	}
	/* clf paths alone: from the instance's backing directory. */
	if (in && argc > optind) {
		bool all_clf = true;

		for (int i = optind; i < argc; i++)
			all_clf = all_clf && tool_is_clf_path(argv[i]);
		if (all_clf)
			return tool_stage_in_backing(g, data, jobs, quiet,
						     argc - optind, argv + optind);
	}
	if (argc - optind != 2)
		return tool_usage(cmd, "need a source and a destination");
	if (tool_is_clf_path(argv[optind]) == in ||
	    tool_is_clf_path(argv[optind + 1]) != in)
		return tool_usage(cmd, "%s copies %s", cmd,
				  in ? "a local SRC into clf (DST clf:/... or clf://...)"
				     : "a clf SRC (clf:/... or clf://...) to a local DST");
	cp[n++] = "cp";
	cp[n++] = "-r";
	cp[n++] = "-p";
	cp[n++] = "-j";
	cp[n++] = jobs;
	if (quiet)
		cp[n++] = "-q";
	if (data) {
		cp[n++] = "--data";
		cp[n++] = data;
	}
	cp[n++] = argv[optind];
	cp[n++] = argv[optind + 1];
	cp[n] = NULL;
	optind = 0;
	return cmd_cp(g, n, (char **)cp);
}
