// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * metad.c -- the clf metadata server: command line, daemonizing, signals.
 *
 *   metad [-c CONFIG] [-f|--foreground] [--log FILE] [--workers N]
 *
 * Reads the configuration (clf_config_load: CONFIG, else $CLF_CONFIG,
 * else ./clf-data/clf.conf, else /etc/clf/clf.conf), opens the store in the configured metad directory,
 * listens on the configured metad address and serves until SIGTERM or
 * SIGINT.  Without -f it becomes a daemon, but only once it listens: the
 * command returns 0 when the daemon is ready to serve and non-zero, with
 * the daemon's error on standard error, when it could not start.  Its pid
 * is in <dir>/metad.pid while it runs; its log is <dir>/metad.log unless
 * --log says otherwise ("-": standard error).  Daemonizing, signals,
 * readiness and the accept loop are the daemon runtime's (daemon.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "durable.h"
#include "error.h"
#include "mds.h"
#include "mds_append.h"
#include "mds_gc.h"
#include "mds_replay.h"
#include "mds_retire.h"
#include "mds_iods.h"
#include "mds_lock.h"
#include "mds_peer.h"
#include "mds_server.h"

struct metad_opts {
	const char *config;	/* borrowed from argv; NULL: the default */
	const char *log;	/* borrowed from argv; NULL: <dir>/metad.log */
	int log_level;		/* -1: clf.conf's log_level */
	uint32_t index;		/* -n: which of the configured metads */
	bool foreground;
	unsigned workers;	/* 0: clf.conf's daemon_workers */
};

static const char usage[] =
	"usage: metad [-c CONFIG] [-n|--index N] [-f|--foreground] [--log FILE]\n"
	"             [--log-level error|warn|info|debug] [--workers N]\n"
	"  -c, --config CONFIG  configuration file (default: $CLF_CONFIG,\n"
	"                       else ./clf-data/clf.conf when it exists,\n"
	"                       else " CLF_SYSCONFDIR "/clf/clf.conf)\n"
	"  -n, --index N        serve as metad N of the configuration's\n"
	"                       metads (default 0), its address and store\n"
	"  -f, --foreground     do not become a daemon\n"
	"      --log FILE       log here instead of <metad dir>/metad.log;\n"
	"                       '-' for standard error\n"
	"      --log-level L    error, warn, info or debug (a line per\n"
	"                       connection); default: clf.conf's log_level\n"
	"      --workers N      threads serving requests (default: clf.conf's\n"
	"                       daemon_workers, else 2 per core)\n";

static int parse_args(int argc, char **argv, struct metad_opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "index", required_argument, NULL, 'n' },
		{ "log", required_argument, NULL, 'L' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->log_level = -1;
	while ((ch = getopt_long(argc, argv, "c:fn:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->config = optarg;
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'n': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v >= CLF_PROTO_MAX_METADS) {
				fprintf(stderr, "metad: --index %s: not a number from 0 to %d\n",
					optarg, CLF_PROTO_MAX_METADS - 1);
				return -EINVAL;
			}
			o->index = (uint32_t)v;
			break;
		}
		case 'L':
			o->log = optarg;
			break;
		case 'l':
			o->log_level = clf_log_level_parse(optarg);
			if (o->log_level < 0) {
				fprintf(stderr, "metad: --log-level %s: not error, warn, info or debug\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'w': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || v < 1 ||
			    v > CLF_DAEMON_WORKERS_MAX) {
				fprintf(stderr, "metad: --workers %s: not a number from 1 to %d\n",
					optarg, CLF_DAEMON_WORKERS_MAX);
				return -EINVAL;
			}
			o->workers = (unsigned)v;
			break;
		}
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'V':
			printf("metad (clf) %s\n", CLF_VERSION);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "metad: unexpected argument '%s'\n%s",
			argv[optind], usage);
		return -EINVAL;
	}
	return 0;
}

/* Requests per fdatasync, for bench/md_scale.sh and whoever tunes. */
static void log_commit_stats(struct mds_store *store)
{
	struct mds_commit_stats st;

	mds_store_commit_stats(store, &st);
	clf_log(CLF_LOG_INFO, "group commit: %llu requests in %llu groups, "
		"%llu fdatasyncs (%llu not in a commit), %llu took the slot "
		"watching it%s, %llu checkpoints",
		(unsigned long long)st.requests,
		(unsigned long long)st.groups, (unsigned long long)st.syncs,
		(unsigned long long)st.explicit_syncs,
		(unsigned long long)st.watched,
		st.logged ? ", logged" : "",
		(unsigned long long)st.checkpoints);
	if (st.requests)
		clf_log(CLF_LOG_INFO, "group commit: a child held the slot "
			"%.1f us on average, %llu handoffs to a waiter took "
			"%.1f us on average, a group's commit %.1f us, a sync "
			"%.1f us",
			st.held_ns / 1e3 / st.requests,
			(unsigned long long)st.handoffs,
			st.handoffs ? st.handoff_ns / 1e3 / st.handoffs : 0.0,
			st.groups ? st.commit_ns / 1e3 / st.groups : 0.0,
			st.explicit_syncs ? st.sync_ns / 1e3 / st.explicit_syncs : 0.0);
}

static int run(const struct clf_config *cfg, uint32_t index,
	       struct clf_daemon *d, const char *pid_path, unsigned workers)
{
	const struct clf_transport_ops *t;
	struct mds_ctx ctx = { .cfg = cfg, .index = index,
			       .start_ms = clf_now_ms() };
	struct mds_server *srv;
	uint32_t pending;
	int err;

	t = clf_transport_find(cfg->transport);
	if (!t)
		return -ENOENT;
	err = mds_fault_init();
	if (err)
		return err;
	/* SIGTERM, SIGINT: d->stop_fd, which the accept loop polls;
	 * SIGHUP reopens the log.  Before any thread. */
	err = clf_daemon_signals(d);
	if (err)
		return err;
	/* Decided once: a munged that comes later needs a restart. */
	ctx.auth_methods = clf_config_auth_methods(cfg);
	mds_log("authentication: %s%s", clf_config_auth_text(ctx.auth_methods),
		cfg->root_squash ? "; root_squash" : "");
	err = mds_store_open(cfg->metad.dir, &ctx.store);
	if (err == -EBUSY)
		err = clf_fail(EBUSY,
			       "metad: another metad is running on the store in '%s'",
			       cfg->metad.dir);
	if (err)
		return err;
	err = mds_store_set_index(ctx.store, index, cfg->nmetads);
	if (!err)
		err = mds_move_pending(ctx.store, &pending);
	if (!err)
		err = mds_retired_load(ctx.store, &ctx.retired);
	if (err)
		goto close_store;
	err = mds_iods_open(cfg, t, &ctx.iods);
	if (err)
		goto close_store;
	err = mds_iods_open_metads(cfg, t, &ctx.peers);
	if (err)
		goto close_iods;
	/* In memory only: locks do not survive metad (mds_lock.h). */
	ctx.locks = mds_locks_new();
	if (!ctx.locks) {
		err = clf_fail(ENOMEM, "metad: out of memory for the lock table");
		goto close_iods;
	}
	ctx.appends = mds_appends_new(CLF_PROTO_APPEND_HOLD_MS);
	if (!ctx.appends) {
		err = clf_fail(ENOMEM, "metad: out of memory for the append table");
		goto free_locks;
	}
	/* Drains the removals a previous metad left queued, at once. */
	err = mds_gc_start(ctx.store, ctx.iods, &ctx.gc);
	if (err)
		goto free_appends;
	/* Retried requests are answered from their records; old records
	 * expire (mds_replay.h). */
	err = mds_replay_start(ctx.store, &ctx.replay);
	if (err)
		goto stop_gc;
	/* Renames across metads left half done by a crash. */
	err = mds_xrename_recover_start(&ctx);
	if (err)
		goto stop_replay;
	err = mds_server_open(&ctx, t, cfg->metad.addr, workers, &srv);
	if (err)
		goto stop_recover;
	err = clf_daemon_pid_write(d, pid_path);
	if (err)
		goto close_server;

	mds_log("started: metad %u of %u, listening on %s, store '%s', %u iods, config %s",
		index, cfg->nmetads, cfg->metad.addr, cfg->metad.dir,
		cfg->niods, cfg->source ? cfg->source : "(built in)");
	clf_daemon_ready(d);
	err = mds_server_run(srv, d->stop_fd);
	mds_log("stopped on %s: connections closed, store closed; %lu requests came while a worker watched their connection",
		clf_daemon_stop_signal_name(d), mds_server_spin_served(srv));
	clf_daemon_pid_remove(d);
close_server:
	mds_server_close(srv);
stop_recover:
	mds_xrename_recover_stop();
stop_replay:
	mds_replay_stop(ctx.replay);
stop_gc:
	mds_gc_stop(ctx.gc);
free_appends:
	mds_appends_free(ctx.appends);
free_locks:
	mds_locks_free(ctx.locks);
close_iods:
	mds_iods_close(ctx.peers);
	mds_iods_close(ctx.iods);
close_store:
	log_commit_stats(ctx.store);
	mds_store_close(ctx.store);
	mds_retired_free(ctx.retired);
	return err;
}

int main(int argc, char **argv)
{
	char log_path[PATH_MAX], pid_path[PATH_MAX];
	struct clf_config *cfg = NULL;
	struct clf_daemon d;
	struct metad_opts o;
	int err;

	if (parse_args(argc, argv, &o))
		return 2;
	clf_log_set_name("metad");
	clf_daemon_init(&d, "metad");
	err = clf_config_load(o.config, &cfg);
	/* metad N serves the address and store of the Nth [metad]. */
	if (!err)
		err = clf_config_select_metad(cfg, o.index);
	if (!err && !cfg->has_secret)
		err = clf_fail(EINVAL,
			       "metad: the configuration %s has no secret: add 'secret = <hex>' or 'secret_file = <path>' (clf up makes one)",
			       cfg->source ? cfg->source : "(built in)");
	if (!err)
		err = clf_mkdirs_durable(cfg->metad.dir, 0700, "metad");
	if (!err && (size_t)snprintf(pid_path, sizeof(pid_path), "%s/metad.pid",
				     cfg->metad.dir) >= sizeof(pid_path))
		err = clf_fail(ENAMETOOLONG, "metad: directory name too long");
	if (!err)
		snprintf(log_path, sizeof(log_path), "%s/metad.log",
			 cfg->metad.dir);
	/* Opened before becoming a daemon: a relative --log is relative to
	 * where the command ran, and its errors reach the user. */
	if (!err)
		clf_log_set_level(o.log_level >= 0 ? o.log_level :
				  cfg->log_level);
	if (!err)
		err = mds_log_open(o.log ? o.log : log_path);
	if (!err && !o.foreground)
		err = clf_daemon_detach(&d);
	if (err) {
		fprintf(stderr, "%s\n", CLF_Last_error());
		goto free_cfg;
	}
	err = run(cfg, o.index, &d, pid_path, o.workers);
	if (err)
		clf_daemon_failed(&d, CLF_Last_error());
	clf_daemon_release(&d);
	mds_log_close();
free_cfg:
	clf_config_free(cfg);
	return err ? 1 : 0;
}
