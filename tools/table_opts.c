// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * table_opts.c -- the options of the commands that print a table about
 * the daemons (status, df): --data DIR, -b, -h, -H, --json, --help.
 * -h is df's "human-readable" (the default), not help: df users type it.
 */
#include <getopt.h>

#include "tool.h"

int tool_parse_table_opts(int argc, char **argv, const char *cmd,
			  void (*help)(void), struct table_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "human-readable", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, '?' + 0x100 },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":bHh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->data = optarg;
			break;
		case 'b':
			o->bytes = true;
			break;
		case 'H':
			o->no_header = true;
			break;
		case 'h':
			o->bytes = false;
			break;
		case 'J':
			o->json = true;
			break;
		case '?' + 0x100:
			help();
			return -1;
		default:
			return tool_bad_option(cmd, c, argv);
		}
	}
	if (optind < argc)
		return tool_usage(cmd, "unexpected argument '%s'", argv[optind]);
	return 0;
}
