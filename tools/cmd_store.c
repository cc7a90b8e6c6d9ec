// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_store.c -- the commands on metad's store, run on metad's host:
 * `clf fsck` (verify every invariant of the namespace), `clf backup DEST`
 * (a consistent copy while metad runs) and `clf restore BACKUP` (metad
 * stopped).  They open the store beside metad (mds_backup.c); fsck then
 * asks every iod over the network what it holds (fsck.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "config.h"
#include "daemon_ctl.h"
#include "error.h"
#include "mds_store.h"

struct store_cmd {
	const char *name;
	const char *usage;	/* after "clf [-c CONFIG] NAME [--data DIR]" */
	const char *text;	/* what it does */
	int nargs;		/* positional arguments */
};

static const struct store_cmd fsck_cmd = {
	"fsck", " [--repair]",
	"Check every invariant of metad's store (the namespace, inodes,\n"
	"layouts, link counts, pending removals) in one consistent snapshot,\n"
	"also while metad runs, then ask every iod, wherever it runs, which\n"
	"subfiles it holds: an orphan subfile belongs to no file's layout\n"
	"(left by a restore, or a crash); a missing one is in a layout and\n"
	"under metad's size but not on its iod (its bytes read as zeros); a\n"
	"subfile longer than metad's size says is reported.  Run it on\n"
	"metad's host.  Prints 'ok' lines, or what is wrong (exit 1).\n"
	"\n"
	"  --repair     remove the orphan subfiles, make the missing ones\n"
	"               (empty); sizes are only reported\n",
	0,
};

static const struct store_cmd backup_cmd = {
	"backup", " DEST",
	"Copy metad's store into the directory DEST (made if missing; it\n"
	"must not hold a backup already): one consistent, compacted snapshot\n"
	"taken while metad runs, without stopping it.  Run it on metad's\n"
	"host.  The iods' subfiles are not copied (back their directories up\n"
	"as files; docs/admin.md).\n",
	1,
};

static const struct store_cmd restore_cmd = {
	"restore", " BACKUP",
	"Put the backup in directory BACKUP (made by `clf backup`) in place\n"
	"of metad's store, metad stopped (`clf down` first).  The backup is\n"
	"verified first; the old store is kept as data.mdb.before-restore\n"
	"beside it; the result is verified.\n",
	1,
};

static void help(const struct store_cmd *c)
{
	printf("usage: clf [-c CONFIG] %s [--data DIR]%s\n\n%s\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Exit status: 0 done, 1 failure (the message says what), 2 bad\n"
	       "usage.\n", c->name, c->usage, c->text);
}

/* Parse; *arg gets the positional argument.  0, -1 after --help, or the
 * exit status of a usage error. */
static int parse(const struct store_cmd *c, int argc, char **argv,
		 const char **data, const char **arg, bool *repair)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "repair", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			*data = optarg;
			break;
		case 'r':
			if (c != &fsck_cmd)
				return tool_usage(c->name, "unknown option '--repair'");
			*repair = true;
			break;
		case 'h':
			help(c);
			return -1;
		default:
			return tool_bad_option(c->name, ch, argv);
		}
	}
	if (argc - optind != c->nargs)
		return tool_usage(c->name, c->nargs ? "need one %s" :
				  "unexpected argument%.0s",
				  c->nargs ? c->usage + 1 : "");
	*arg = c->nargs ? argv[optind] : NULL;
	return 0;
}

/* The configuration, whose metad must be on this host. */
static int open_config(const struct tool_opts *g, const char *data,
		       struct clf_config **out)
{
	struct clf_config *cfg = NULL;
	int err = tool_config_open(g, data, &cfg);

	if (err)
		return err;
	if (daemon_host_is_local(cfg->metad.host) <= 0) {
		err = clf_fail(EREMOTE,
			       "clf: metad (%s) is not on this host: run this where it runs",
			       cfg->metad.addr);
		clf_config_free(cfg);
		return err;
	}
	*out = cfg;
	return 0;
}

static int run(const struct store_cmd *c, const struct tool_opts *g,
	       int argc, char **argv)
{
	const char *data = NULL, *arg = NULL;
	char saved[PATH_MAX + 32];
	struct clf_config *cfg = NULL;
	const char *dir;
	bool repair = false;
	int err = parse(c, argc, argv, &data, &arg, &repair);

	if (err)
		return err < 0 ? CLF_EXIT_OK : err;
	err = open_config(g, data, &cfg);
	if (err)
		return tool_fail();
	dir = cfg->metad.dir;
	if (c == &fsck_cmd) {
		err = tool_fsck(cfg, repair);
	} else if (c == &backup_cmd) {
		err = mds_store_backup(dir, arg);
		if (!err)
			printf("metad store %s copied to %s\n", dir, arg);
	} else {
		err = mds_store_restore(arg, dir, saved, sizeof(saved));
		if (!err)
			printf("metad store %s restored from %s (the old one kept as %s)\n",
			       dir, arg, saved);
	}
	clf_config_free(cfg);
	return err ? tool_fail() : CLF_EXIT_OK;
}

int cmd_fsck(const struct tool_opts *g, int argc, char **argv)
{
	return run(&fsck_cmd, g, argc, argv);
}

int cmd_backup(const struct tool_opts *g, int argc, char **argv)
{
	return run(&backup_cmd, g, argc, argv);
}

int cmd_restore(const struct tool_opts *g, int argc, char **argv)
{
	return run(&restore_cmd, g, argc, argv);
}
