// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clf.c -- the clf command: global options, then one subcommand from the
 * table below, in the manner of git.
 *
 *   clf [-c CONFIG] COMMAND [OPTIONS]
 *
 * Exit codes: 0 success, 1 failure (message on stderr), 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clf.h"
#include "tool.h"
#include "config.h"
#include "error.h"

static const struct tool_cmd commands[] = {
	{ "up", "start the daemons of this host and wait until they answer",
	  cmd_up },
	{ "down", "stop the daemons of this host", cmd_down },
	{ "adhoc", "an instance for one job, started by its launcher (mpiexec)",
	  cmd_adhoc },
	{ "iod", "empty an iod into the others, clients running (remove N)",
	  cmd_iod },
	{ "status", "show every daemon: reachable, uptime, load, capacity",
	  cmd_status },
	{ "df", "show the capacity and use of every iod", cmd_df },
	{ "setlayout", "give a file (or a directory's new files) a layout",
	  cmd_setlayout },
	{ "getlayout", "show a file's layout and where its bytes live",
	  cmd_getlayout },
	{ "map", "show how a view falls on a file's subfiles (and draw it)",
	  cmd_map },
	{ "cp", "copy a file between the local file system and clf",
	  cmd_cp },
	{ "stage-in", "copy a local tree into clf, in parallel, layouts kept",
	  cmd_stage },
	{ "stage-out", "copy a clf tree out, in parallel, layouts kept",
	  cmd_stage },
	{ "stager", "write an instance's files back to its backing directory",
	  cmd_stager },
	{ "forward", "relay clients that cannot reach the daemons to them",
	  cmd_forward },
	{ "ls", "list a clf directory, with layouts (-l)", cmd_ls },
	{ "mkdir", "make clf directories", cmd_mkdir },
	{ "rm", "remove clf files (-r: directories too)", cmd_rm },
	{ "rmdir", "remove empty clf directories", cmd_rm },
	{ "mv", "rename a clf file or directory", cmd_rm },
	{ "stat", "show a clf file's attributes and layout", cmd_stat },
	{ "fsck", "check metad's store and every iod (on metad's host)", cmd_fsck },
	{ "backup", "copy metad's store while it runs (on metad's host)",
	  cmd_backup },
	{ "restore", "put a backup in place of metad's store, metad stopped",
	  cmd_restore },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: clf [-c CONFIG] COMMAND [OPTIONS] [-c CONFIG]\n"
		   "\n"
		   "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(f, "\n"
		   "Options:\n"
		   "  -c, --config CONFIG\n"
		   "              the configuration file (before or after the\n"
		   "              command); else $CLF_CONFIG, else\n"
		   "              ./clf-data/clf.conf ($CLF_DATA_DIR/clf.conf)\n"
		   "              when it exists, else " CLF_SYSCONFDIR "/clf/clf.conf;\n"
		   "              `clf up` with none of these starts a new\n"
		   "              instance in ./clf-data (one metad and four iods\n"
		   "              on 127.0.0.1, ports from $CLF_BASE_PORT or 7000)\n"
		   "  -h, --help  this text; `clf COMMAND --help` for a command\n"
		   "  --version   the version of clf\n"
		   "\n"
		   "Files in clf are named clf:/dir/file, or\n"
		   "clf://HOST[:PORT]/dir/file on the instance of the metad at\n"
		   "HOST:PORT (7000), which needs no configuration file (the\n"
		   "secret from $CLF_SECRET_FILE, else MUNGE); the commands that only\n"
		   "take clf files (setlayout, getlayout, map, ls, mkdir, rm,\n"
		   "rmdir, mv, stat) also "
		   "take /dir/file.  Layouts and views are written in the layout\n"
		   "text syntax (docs/layout-syntax.md).\n"
		   "\n"
		   "Exit status: 0 success, 1 failure, 2 bad usage.\n");
}

int tool_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "clf%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'clf%s%s --help'.\n", cmd ? " " : "",
		cmd ? cmd : "");
	return CLF_EXIT_USAGE;
}

int tool_bad_option(const char *cmd, int c, char **argv)
{
	/* optopt names a short option; a long one is only in argv. */
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	if (optopt && strncmp(arg, "--", 2))
		arg = shortopt;
	if (c == ':')
		return tool_usage(cmd, "option '%s' needs an argument", arg);
	return tool_usage(cmd, "unknown option '%s'", arg);
}

int tool_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int tool_fail(void)
{
	fprintf(stderr, "%s\n", CLF_Last_error());
	return CLF_EXIT_FAIL;
}

int tool_config_open(const struct tool_opts *g, const char *data_dir,
		     struct clf_config **out)
{
	char path[PATH_MAX];
	int n;

	if (data_dir && g->config)
		return clf_fail(EINVAL,
				"clf: -c and --data both name the configuration; give one");
	if (!data_dir)
		return clf_config_load(g->config, out);
	n = snprintf(path, sizeof(path), "%s/%s", data_dir,
		     CLF_CONFIG_FILE_NAME);
	if (n < 0 || (size_t)n >= sizeof(path))
		return clf_fail(ENAMETOOLONG, "clf: --data %s: path too long",
				data_dir);
	if (access(path, F_OK))
		return clf_fail(errno, "clf: no configuration in %s (%s): %s",
				data_dir, path,
				errno == ENOENT ? "start it with 'clf up --data'"
						: strerror(errno));
	return clf_config_parse_file(path, out);
}

const char *tool_config_name(const struct clf_config *cfg)
{
	return cfg->source ? cfg->source : "the built-in configuration";
}

int tool_config_need_secret(const struct clf_config *cfg)
{
	if (cfg->has_secret || clf_config_uses_munge(cfg))
		return 0;
	return clf_fail(EACCES,
			"clf: %s has no secret: start the instance with 'clf up', which makes one, or add 'secret = <hex>' to it",
			tool_config_name(cfg));
}

/*
 * Descriptors 0 to 2 open, on /dev/null when they were closed: else the
 * first file or socket opened would take one of their numbers, and the
 * daemons started with it (their stdio set up by dup2 onto 0 to 2).
 */
static void keep_stdio_open(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDWR) < 0)
			break;
}

/*
 * Global options after the subcommand (`clf status -c FILE`): -c FILE,
 * -cFILE, --config FILE and --config=FILE are taken out of argv[1..]
 * (up to a "--") into g, the last one winning, as before the
 * subcommand.  No subcommand has a -c of its own.  Returns the new argc,
 * or -1 when the file name is missing.
 */
static int take_global_options(struct tool_opts *g, int argc, char **argv)
{
	int i = 1, out = 1;

	while (i < argc) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(a, "-c") || !strcmp(a, "--config")) {
			if (i + 1 == argc)
				return -1;
			g->config = argv[i + 1];
			i += 2;
		} else if (!strncmp(a, "-c", 2) || !strncmp(a, "--config=", 9)) {
			g->config = a + (a[1] == 'c' ? 2 : 9);
			i++;
		} else {
			argv[out++] = argv[i++];
		}
	}
	argv[out] = NULL;
	return out;
}

static const struct tool_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char help_opt[] = "--help";
	/* `clf help CMD` runs `clf CMD --help`. */
	char *help_argv[] = { NULL, help_opt, NULL };
	struct tool_opts g = { 0 };
	const struct tool_cmd *cmd;
	int c;

	keep_stdio_open();
	/* '+': stop at the subcommand, whose options are its own; ':' and
	 * opterr 0: tool_bad_option says what is wrong. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			g.config = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLF_EXIT_OK;
		case 'V':
			printf("clf %s\n", CLF_VERSION);
			return CLF_EXIT_OK;
		default:
			return tool_bad_option(NULL, c, argv);
		}
	}
	if (optind == argc) {
		usage(stderr);
		return CLF_EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0) {
		if (optind + 1 == argc) {
			usage(stdout);
			return CLF_EXIT_OK;
		}
		cmd = find_command(argv[optind + 1]);
		if (!cmd)
			return tool_usage(NULL, "'%s' is not a clf command",
					  argv[optind + 1]);
		help_argv[0] = argv[optind + 1];
		optind = 0;
		return cmd->run(&g, 2, help_argv);
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		return tool_usage(NULL, "'%s' is not a clf command",
				  argv[optind]);
	argc -= optind;
	argv += optind;
	argc = take_global_options(&g, argc, argv);
	if (argc < 0)
		return tool_usage(cmd->name, "option '-c' needs an argument");
	for (int i = 1; i < argc && !g.url; i++)
		if (!strncmp(argv[i], CLF_URL_SCHEME, strlen(CLF_URL_SCHEME)))
			g.url = argv[i];
	/* 0, not 1: glibc then also resets its state for the new vector. */
	optind = 0;
	return cmd->run(&g, argc, argv);
}
