// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_store.c -- the commands on metad's store, run on metad's host:
 * `clf fsck` (verify every invariant of the namespace), `clf backup DEST`
 * (a consistent copy while metad runs) and `clf restore BACKUP` (metad
 * stopped).  They open the store beside metad (mds_backup.c).  fsck
 * also looks through the directories of the iods of this host for
 * orphan subfiles (of no inode, and not queued for removal), which
 * --repair removes.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	"also while metad runs, then the directories of the iods of this\n"
	"host: a subfile whose inode does not exist and is not queued for\n"
	"removal is an orphan (left by a restore, or a crash).  Run it on\n"
	"metad's host.  Prints 'ok' lines, or what is wrong (exit 1).\n"
	"\n"
	"  --repair     remove the orphan subfiles\n",
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

/* ------------------------------------------------------------------ */
/* Orphan subfiles                                                     */
/* ------------------------------------------------------------------ */

struct subfile {
	uint64_t file;		/* the inode number */
	uint32_t index;
	char path[PATH_MAX + 280];	/* dir/XX/name */
};

/*
 * The subfiles under an iod's directory: DIR/XX/<file:016x>.<index>, as
 * iod_store_relpath names them.  Other names are not the iod's and are
 * left alone.  *out (caller frees) and *n.
 */
static int list_subfiles(const char *dir, struct subfile **out, size_t *n)
{
	struct subfile *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	struct dirent *fan, *de;
	DIR *top, *d;
	char sub[PATH_MAX];
	int err = 0;

	top = opendir(dir);
	if (!top)
		return errno == ENOENT ? 0 :
		       clf_fail(errno, "clf: cannot list '%s': %s", dir,
				strerror(errno));
	while (!err && (fan = readdir(top))) {
		if (strlen(fan->d_name) != 2 ||
		    strspn(fan->d_name, "0123456789abcdef") != 2)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, fan->d_name);
		d = opendir(sub);
		if (!d)
			continue;
		while (!err && (de = readdir(d))) {
			unsigned long long file;
			unsigned idx;
			int used = 0;

			if (strlen(de->d_name) < 18 || de->d_name[16] != '.' ||
			    sscanf(de->d_name, "%16llx.%u%n", &file, &idx,
				   &used) != 2 || de->d_name[used])
				continue;
			if (cnt == cap) {
				cap = cap ? 2 * cap : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					err = clf_fail(ENOMEM, "clf: out of memory");
					break;
				}
				v = nv;
			}
			v[cnt].file = file;
			v[cnt].index = idx;
			snprintf(v[cnt].path, sizeof(v[cnt].path), "%s/%s", sub,
				 de->d_name);
			cnt++;
		}
		closedir(d);
	}
	closedir(top);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* Whether ino has a removal queued (for any iod). */
static int queued(struct mds_store *s, uint64_t ino)
{
	struct mds_gc_entry e;
	int n;

	/* The first entry after (ino - 1, UINT32_MAX) is ino's, if any. */
	if (ino == 0)
		return 0;
	n = mds_gc_list(s, ino - 1, UINT32_MAX, &e, 1);
	if (n < 0)
		return n;
	return n == 1 && e.ino == ino;
}

/*
 * Orphans on iod i's directory: listed before the store is read, so that
 * a subfile seen belongs to an inode made before that read (a file's
 * inode comes before its data).  Returns how many remain (removed with
 * repair), or a negative errno.
 */
static int check_iod(struct mds_store *s, const struct clf_config *cfg,
		     uint32_t i, bool repair)
{
	struct subfile *v = NULL;
	struct mds_attr attr;
	size_t n = 0, left = 0;
	int err;

	err = list_subfiles(cfg->iods[i].dir, &v, &n);
	if (err)
		return err;
	for (size_t k = 0; k < n; k++) {
		err = mds_getattr(s, v[k].file, &attr);
		if (err == 0)
			continue;
		if (err != -ENOENT)
			break;
		err = queued(s, v[k].file);
		if (err < 0)
			break;
		if (err)
			continue;
		err = 0;
		if (repair && unlink(v[k].path) == 0) {
			printf("iod %u: removed orphan subfile %u of file 0x%" PRIx64 " (%s)\n",
			       i, v[k].index, v[k].file, v[k].path);
			continue;
		}
		printf("iod %u: orphan subfile %u of file 0x%" PRIx64 " (%s)%s\n",
		       i, v[k].index, v[k].file, v[k].path,
		       repair ? ": cannot remove it" : "");
		left++;
	}
	if (!err && !left)
		printf("iod %u store %s: ok (%zu subfiles)\n", i,
		       cfg->iods[i].dir, n);
	free(v);
	return err < 0 ? err : (int)left;
}

static int fsck(const struct clf_config *cfg, bool repair)
{
	struct mds_store *s = NULL;
	size_t bad = 0;
	int err;

	err = mds_store_open_readonly(cfg->metad.dir, &s);
	if (!err)
		err = mds_store_verify(s);
	if (err)
		goto out;
	printf("metad store %s: ok\n", cfg->metad.dir);
	for (uint32_t i = 0; i < cfg->niods && !err; i++) {
		if (daemon_host_is_local(cfg->iods[i].host) <= 0)
			continue;
		err = check_iod(s, cfg, i, repair);
		if (err > 0) {
			bad += (size_t)err;
			err = 0;
		}
	}
	if (!err && bad)
		err = clf_fail(EUCLEAN, "clf: %zu orphan subfile%s%s", bad,
			       bad == 1 ? "" : "s",
			       repair ? " left" : " (clf fsck --repair removes them)");
out:
	mds_store_close(s);
	return err;
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
		err = fsck(cfg, repair);
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
