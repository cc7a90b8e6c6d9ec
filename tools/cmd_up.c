// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_up.c -- `clf up`: start the daemons of this host.
 *
 * The configuration is the one every other command finds: when it has no
 * secret (the built-in default never has one), up makes one and writes
 * the whole configuration to <data dir>/clf.conf, where the library
 * looks.  Then metad, then each iod, each waited for until it answers an
 * authenticated PING.  A daemon that already runs is left alone; when
 * one cannot start, the ones this call started are stopped again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"
#include "daemon_ctl.h"
#include "tool_stage.h"
#include "error.h"
#include "probe.h"

struct up_opts {
	const char *data;	/* --data DIR, or NULL */
	long iods;		/* --iods N, or 0 */
	long metads;		/* --metads N, or 0 */
	long base_port;		/* --base-port P, or 0 */
	const char *backing;	/* --backing DIR, or NULL */
};

static void up_help(void)
{
	printf("usage: clf [-c CONFIG] up [--data DIR] [--iods N] [--metads N]\n"
	       "                          [--base-port P] [--backing DIR]\n"
	       "\n"
	       "Start the daemons of the configuration that live on this host\n"
	       "(metad first, then the iods) and wait until each answers.\n"
	       "Daemons already running are left alone.  When the configuration\n"
	       "has no secret, make one, write it to <data dir>/secret and the\n"
	       "configuration naming it to <data dir>/clf.conf (both mode 0600),\n"
	       "where every later command, daemon and client finds them.\n"
	       "\n"
	       "  --data DIR       the instance in DIR: DIR/clf.conf if it\n"
	       "                   exists, else the built-in configuration\n"
	       "                   with its data in DIR\n"
	       "  --iods N         a new instance has N iods (default 4)\n"
	       "  --metads N       a new instance spreads its namespace over N\n"
	       "                   metads (default 1); metad i > 0 listens on\n"
	       "                   P+N_iods+i\n"
	       "  --base-port P    a new instance listens on ports P (metad),\n"
	       "                   P+1... (iods); default $CLF_BASE_PORT or 7000\n"
	       "  --backing DIR    a new instance is backed by DIR, a directory of\n"
	       "                   a persistent file system: the files it writes\n"
	       "                   are written back there by `clf stager`,\n"
	       "                   which `clf up` starts (docs/staging.md)\n"
	       "\n"
	       "Prints one line per daemon: ROLE INDEX ADDRESS STATE DETAIL,\n"
	       "STATE being started, running (already), or remote (not on this\n"
	       "host).  Exit status: 0 all local daemons answer, 1 failure (what\n"
	       "this call started is stopped again), 2 bad usage.\n");
}

static int parse_args(int argc, char **argv, struct up_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "iods", required_argument, NULL, 'n' },
		{ "metads", required_argument, NULL, 'm' },
		{ "base-port", required_argument, NULL, 'p' },
		{ "backing", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (!*optarg)
				return tool_usage("up", "--data: empty directory");
			o->data = optarg;
			break;
		case 'n':
			if (tool_parse_long(optarg, 1, CLF_CONFIG_MAX_IODS,
				       &o->iods))
				return tool_usage("up",
						  "--iods '%s': not a number from 1 to %d",
						  optarg, CLF_CONFIG_MAX_IODS);
			break;
		case 'm':
			if (tool_parse_long(optarg, 1, CLF_CONFIG_MAX_METADS,
				       &o->metads))
				return tool_usage("up",
						  "--metads '%s': not a number from 1 to %d",
						  optarg, CLF_CONFIG_MAX_METADS);
			break;
		case 'p':
			if (tool_parse_long(optarg, 1, 65535, &o->base_port))
				return tool_usage("up",
						  "--base-port '%s': not a port from 1 to 65535",
						  optarg);
			break;
		case 'b':
			if (!*optarg)
				return tool_usage("up", "--backing: empty directory");
			o->backing = optarg;
			break;
		case 'h':
			up_help();
			return -1;
		default:
			return tool_bad_option("up", c, argv);
		}
	}
	if (optind < argc)
		return tool_usage("up", "unexpected argument '%s'",
				  argv[optind]);
	return 0;
}

/* Replace d with a loopback daemon on port, stored in data_dir/sub. */
static int set_loopback(struct clf_config_daemon *d, const char *data_dir,
			const char *sub, long port)
{
	char p[16];

	snprintf(p, sizeof(p), "%ld", port);
	free(d->addr);
	free(d->host);
	free(d->port);
	free(d->dir);
	d->host = strdup("127.0.0.1");
	d->port = strdup(p);
	d->addr = malloc(strlen("127.0.0.1:") + strlen(p) + 1);
	d->dir = malloc(strlen(data_dir) + strlen(sub) + 2);
	d->line = 0;
	if (!d->host || !d->port || !d->addr || !d->dir)
		return clf_fail(ENOMEM, "clf: out of memory");
	sprintf(d->addr, "127.0.0.1:%s", p);
	sprintf(d->dir, "%s/%s", data_dir, sub);
	return 0;
}

/*
 * The built-in configuration reshaped by --iods and --base-port: metad
 * on base, iod i on base + 1 + i, all on loopback, as
 * clf_config_default lays them out.
 */
static int shape_default(struct clf_config *cfg, const struct up_opts *o)
{
	long base = o->base_port ? o->base_port : atol(cfg->metad.port);
	uint32_t n = o->iods ? (uint32_t)o->iods : cfg->niods;
	struct clf_config_daemon *iods;
	char sub[32];
	int err;

	uint32_t nm = o->metads ? (uint32_t)o->metads : 1;
	struct clf_config_daemon *metads;

	if (!o->iods && !o->base_port && !o->metads)
		return 0;
	if (base + (long)n + (long)nm - 1 > 65535)
		return clf_fail(EINVAL,
				"clf: ports %ld to %ld: a port is at most 65535",
				base, base + (long)n + (long)nm - 1);
	for (uint32_t i = n; i < cfg->niods; i++) {
		free(cfg->iods[i].addr);
		free(cfg->iods[i].host);
		free(cfg->iods[i].port);
		free(cfg->iods[i].dir);
	}
	iods = realloc(cfg->iods, n * sizeof(*iods));
	if (!iods) {
		cfg->niods = cfg->niods < n ? cfg->niods : n;
		return clf_fail(ENOMEM, "clf: out of memory");
	}
	if (n > cfg->niods)
		memset(iods + cfg->niods, 0, (n - cfg->niods) * sizeof(*iods));
	cfg->iods = iods;
	cfg->niods = n;
	cfg->stripe_count = n;
	cfg->first_iod = 0;
	err = set_loopback(&cfg->metad, cfg->data_dir, "meta", base);
	for (uint32_t i = 0; !err && i < n; i++) {
		snprintf(sub, sizeof(sub), "iod%u", i);
		err = set_loopback(&cfg->iods[i], cfg->data_dir, sub,
				   base + 1 + (long)i);
	}
	if (err)
		return err;
	/* Metad 0 as before; metad i > 0 after the iods, in meta<i>. */
	metads = calloc(nm, sizeof(*metads));
	if (!metads)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (uint32_t i = 0; i < cfg->nmetads; i++) {
		free(cfg->metads[i].addr);
		free(cfg->metads[i].host);
		free(cfg->metads[i].port);
		free(cfg->metads[i].dir);
	}
	free(cfg->metads);
	cfg->metads = metads;
	cfg->nmetads = nm;
	err = clf_config_daemon_copy(&metads[0], &cfg->metad) ?
	      clf_fail(ENOMEM, "clf: out of memory") : 0;
	for (uint32_t i = 1; !err && i < nm; i++) {
		snprintf(sub, sizeof(sub), "meta%u", i);
		err = set_loopback(&metads[i], cfg->data_dir, sub,
				   base + (long)n + (long)i);
	}
	return err;
}

/* Whether a and b name one directory (b may not exist yet). */
static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* --backing DIR of a new instance, made absolute as the file keeps it. */
static int set_backing(struct clf_config *cfg, const char *dir)
{
	char cwd[PATH_MAX];

	free(cfg->backing);
	cfg->backing = NULL;
	if (dir[0] == '/') {
		cfg->backing = strdup(dir);
	} else if (getcwd(cwd, sizeof(cwd))) {
		cfg->backing = malloc(strlen(cwd) + strlen(dir) + 2);
		if (cfg->backing)
			sprintf(cfg->backing, "%s/%s", cwd, dir);
	} else {
		return clf_fail(errno, "clf: getcwd: %s", strerror(errno));
	}
	return cfg->backing ? 0 : clf_fail(ENOMEM, "clf: out of memory");
}

/* A configuration file must agree with --iods and --base-port: they
 * only shape a new instance. */
static int check_file_matches(const struct clf_config *cfg,
			      const struct up_opts *o)
{
	if (o->iods && cfg->niods != (uint32_t)o->iods)
		return clf_fail(EINVAL,
				"clf: %s has %u iods, not %ld: drop --iods, or remove the file to make a new instance",
				cfg->source, cfg->niods, o->iods);
	if (o->metads && cfg->nmetads != (uint32_t)o->metads)
		return clf_fail(EINVAL,
				"clf: %s has %u metads, not %ld: drop --metads, or remove the file to make a new instance",
				cfg->source, cfg->nmetads, o->metads);
	if (o->base_port && atol(cfg->metad.port) != o->base_port)
		return clf_fail(EINVAL,
				"clf: %s has metad on port %s, not %ld: drop --base-port, or remove the file to make a new instance",
				cfg->source, cfg->metad.port, o->base_port);
	if (o->backing && (!cfg->backing || !same_dir(cfg->backing, o->backing)))
		return clf_fail(EINVAL,
				"clf: %s has %s%s as its backing directory, not %s: drop --backing, or edit the file's backing key",
				cfg->source, cfg->backing ? "" : "no ",
				cfg->backing ? cfg->backing : "directory",
				o->backing);
	return 0;
}

/* Whether paths a and b name the same existing file. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * Save secret s alone in <data dir>/secret (mode 0600, hex, as
 * clf_secret_load_file reads) and make it cfg's secret_file: a mount by
 * metad's address (-o secret_file=) and the hosts of the other daemons
 * need that file only, not the configuration.  Written whole or not at
 * all (a temporary file renamed into place).
 */
static int write_secret_file(struct clf_config *cfg,
			     const struct clf_secret *s)
{
	char hex[CLF_SECRET_HEX_MAX], path[PATH_MAX], tmp[PATH_MAX + 8];
	int fd, n, err = 0;
	size_t len;

	n = snprintf(path, sizeof(path), "%s/%s", cfg->data_dir,
		     CLF_CONFIG_SECRET_NAME);
	if (n < 0 || (size_t)n >= sizeof(path))
		return clf_fail(ENAMETOOLONG, "clf: data directory %s too long",
				cfg->data_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	err = clf_secret_to_hex(s, hex, sizeof(hex));
	if (err)
		return err;
	len = strlen(hex);
	hex[len++] = '\n';
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, hex, len) != (ssize_t)len || fsync(fd) ||
	    rename(tmp, path))
		err = clf_fail(errno, "clf: cannot write the secret file %s: %s",
			       path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (err)
		unlink(tmp);
	explicit_bzero(hex, sizeof(hex));
	if (err)
		return err;
	cfg->secret_file = strdup(path);
	if (!cfg->secret_file)
		return clf_fail(ENOMEM, "clf: out of memory");
	return 0;
}

/*
 * Give cfg a secret and save it in <data dir>/clf.conf, its path into
 * path.  A configuration file without a secret is copied there with
 * one, unless that would replace another instance's file.
 */
static int add_secret(struct clf_config *cfg, char *path, size_t len)
{
	struct clf_secret s;
	int n, err;

	n = snprintf(path, len, "%s/%s", cfg->data_dir, CLF_CONFIG_FILE_NAME);
	if (n < 0 || (size_t)n >= len)
		return clf_fail(ENAMETOOLONG, "clf: data directory %s too long",
				cfg->data_dir);
	if (cfg->source && access(path, F_OK) == 0 &&
	    !same_file(cfg->source, path))
		return clf_fail(EEXIST,
				"clf: %s has no secret, and %s, where up would save one, exists already: add 'secret = <hex>' to the first or use -c with the second",
				cfg->source, path);
	err = daemon_mkdirs(cfg->data_dir, 0700);
	if (err)
		return err;
	err = clf_secret_generate(&s);
	if (err)
		return clf_fail_neg(err, "clf: cannot make a secret: %s",
				    strerror(-err));
	clf_config_set_secret(cfg, &s);
	err = write_secret_file(cfg, &s);
	clf_secret_clear(&s);
	if (err)
		return err;
	return clf_config_write(cfg, path);
}

/*
 * up_config - the configuration to start, with a secret, and the file
 * the daemons will read (path).  *created tells that up wrote it.
 */
static int up_config(const struct tool_opts *g, const struct up_opts *o,
		     struct clf_config **out, char *path, size_t len,
		     bool *created)
{
	struct clf_config *cfg = NULL;
	char conf[PATH_MAX];
	int n, err;

	*created = false;
	if (o->data) {
		n = snprintf(conf, sizeof(conf), "%s/%s", o->data,
			     CLF_CONFIG_FILE_NAME);
		if (n < 0 || (size_t)n >= sizeof(conf))
			return clf_fail(ENAMETOOLONG, "clf: --data %s: too long",
					o->data);
		if (access(conf, F_OK) == 0) {
			err = clf_config_parse_file(conf, &cfg);
		} else if (setenv("CLF_DATA_DIR", o->data, 1)) {
			err = clf_fail(errno, "clf: setenv: %s",
				       strerror(errno));
		} else {
			err = clf_config_default(&cfg);
		}
	} else {
		/* Nothing found: a new instance in $CLF_DATA_DIR or
		 * ./clf-data, from the built-in configuration. */
		err = clf_config_find(g->config, conf, sizeof(conf));
		if (err == -ENOENT)
			err = clf_config_default(&cfg);
		else if (!err)
			err = clf_config_parse_file(conf, &cfg);
	}
	if (err)
		return err;
	err = cfg->source ? check_file_matches(cfg, o)
			  : shape_default(cfg, o);
	if (!err && !cfg->source && o->backing)
		err = set_backing(cfg, o->backing);
	if (err)
		goto fail;
	if (cfg->has_secret) {
		/* The built-in configuration has none: this is a file. */
		n = snprintf(path, len, "%s", cfg->source);
		if (n < 0 || (size_t)n >= len) {
			err = clf_fail(ENAMETOOLONG, "clf: %s: too long",
				       cfg->source);
			goto fail;
		}
	} else {
		err = add_secret(cfg, path, len);
		if (err)
			goto fail;
		*created = true;
	}
	*out = cfg;
	return 0;
fail:
	clf_config_free(cfg);
	return err;
}

/* One line of the report: ROLE INDEX ADDRESS STATE DETAIL. */
static void print_line(const struct tool_daemon *d, const char *state,
		       const char *detail)
{
	char index[16];

	snprintf(index, sizeof(index), "%u", d->index);
	printf("%-6s %-5s %-22s %-8s %s\n", daemon_program(d->role),
	       d->role == DAEMON_METAD && !d->index ? "-" : index, d->conf->addr, state,
	       detail);
	fflush(stdout);
}

/* The programs of the roles that have a local daemon, found before
 * anything starts so that a missing iod does not leave metad alone. */
static int find_programs(const struct tool_daemon *ds, size_t n,
			 char prog[2][PATH_MAX])
{
	int err;

	for (size_t i = 0; i < n; i++) {
		char *p = prog[ds[i].role];

		if (ds[i].local != 1 || p[0])
			continue;
		err = daemon_find_program(daemon_program(ds[i].role), p,
					  PATH_MAX);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Bring up one daemon: 0 when it runs now, 1 when this call started it
 * (its pid in *pid), or a negative errno.
 */
static int up_one(const struct clf_config *cfg, const struct tool_daemon *d,
		  const char *program, const char *conf_path, pid_t *pid)
{
	char why[160];
	pid_t old;
	int state, err;

	if (d->local < 0)
		return clf_fail_neg(d->local,
				    "clf: %s (%s): cannot tell whether it runs on this host: %s",
				    d->name, d->conf->addr, d->local_why);
	if (!d->local) {
		print_line(d, "remote", "not on this host");
		return 0;
	}
	state = daemon_pid_check(d, &old);
	if (state < 0)
		return state;
	if (state == DAEMON_PID_ALIVE) {
		err = probe_ping_addr(cfg, d->conf->addr, cfg->timeout_ms);
		if (err) {
			tool_fmt_reason(err, why, sizeof(why));
			return clf_fail_neg(err,
					    "clf: %s (%s): process %d of %s runs but does not answer: %s",
					    d->name, d->conf->addr, (int)old,
					    d->pidfile, why);
		}
		snprintf(why, sizeof(why), "pid %d", (int)old);
		print_line(d, "running", why);
		return 0;
	}
	if (state == DAEMON_PID_STALE && unlink(d->pidfile) && errno != ENOENT)
		return clf_fail(errno, "clf: cannot remove stale %s: %s",
				d->pidfile, strerror(errno));
	/* Run by hand in the foreground, a daemon may answer with no pid
	 * file; a second one could not listen anyway. */
	err = daemon_addr_check(d);
	if (err == -EADDRINUSE &&
	    probe_ping_addr(cfg, d->conf->addr, cfg->timeout_ms) == 0) {
		print_line(d, "running", "no pid file");
		return 0;
	}
	if (err == -EADDRINUSE)
		return daemon_addr_check(d);	/* again, for its message */
	if (err)
		return err;
	err = daemon_start(cfg, d, program, conf_path, DAEMON_START_TIMEOUT_MS,
			   pid);
	if (err)
		return err;
	snprintf(why, sizeof(why), "pid %d", (int)*pid);
	print_line(d, "started", why);
	return 1;
}

/* Stop what this call started, in reverse order, and say so. */
static void undo_started(const struct tool_daemon *ds, const pid_t *started,
			 size_t n)
{
	struct daemon_stop s;

	for (size_t i = n; i-- > 0;) {
		if (started[i] <= 0)
			continue;
		s = (struct daemon_stop){ .pid = started[i],
					  .prog = daemon_program(ds[i].role) };
		daemons_stop(&s, 1, DAEMON_TERM_TIMEOUT_MS,
			     DAEMON_KILL_TIMEOUT_MS);
		if (s.result >= 0) {
			unlink(ds[i].pidfile);
			fprintf(stderr, "clf: stopped %s (pid %d) again\n",
				ds[i].name, (int)started[i]);
		} else {
			fprintf(stderr, "clf: cannot stop %s (pid %d): %s\n",
				ds[i].name, (int)started[i],
				strerror(-s.result));
		}
	}
}

int cmd_up(const struct tool_opts *g, int argc, char **argv)
{
	struct up_opts o = { 0 };
	char conf_path[PATH_MAX], prog[2][PATH_MAX] = { "", "" };
	struct clf_config *cfg = NULL;
	struct tool_daemon *ds = NULL;
	pid_t *started = NULL;
	size_t n = 0;
	bool created;
	int rc, err;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (g->config && (o.data || o.iods || o.base_port))
		return tool_usage("up",
				  "--data, --iods and --base-port make or find an instance by its directory; with -c the file says it all");
	err = up_config(g, &o, &cfg, conf_path, sizeof(conf_path), &created);
	if (err)
		return tool_fail();
	if (created)
		printf("created %s with a new secret\n", conf_path);
	/* Later commands would still read the file without the secret. */
	if (created && cfg->source && !same_file(cfg->source, conf_path))
		fprintf(stderr,
			"clf: note: %s has no secret; the daemons use %s: give that to -c from now on\n",
			cfg->source, conf_path);
	rc = CLF_EXIT_FAIL;
	err = daemons_list(cfg, &ds, &n);
	if (err)
		goto report;
	started = calloc(n, sizeof(*started));
	if (!started) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto report;
	}
	err = find_programs(ds, n, prog);
	for (size_t i = 0; !err && i < n; i++) {
		err = up_one(cfg, &ds[i], prog[ds[i].role], conf_path,
			     &started[i]);
		if (err > 0)
			err = 0;
	}
	if (!err) {
		/* The daemons decide the same way when they start. */
		printf("authentication: %s%s\n",
		       clf_config_auth_text(clf_config_auth_methods(cfg)),
		       cfg->root_squash ? "; root_squash" : "");
		printf("protection: %s (of the messages after each handshake)\n",
		       clf_protection_name(cfg->protection));
		fflush(stdout);
		rc = CLF_EXIT_OK;
		/* Write-back to the backing directory from now on; notes
		 * an earlier stager left undone are done first. */
		if (cfg->backing && n && ds[0].local == 1 &&
		    tool_stager_start(cfg, conf_path))
			rc = CLF_EXIT_FAIL;
	}
report:
	if (err) {
		tool_fail();
		if (started)
			undo_started(ds, started, n);
	}
	free(started);
	free(ds);
	clf_config_free(cfg);
	return rc;
}
