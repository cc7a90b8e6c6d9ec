// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod.c -- the I/O daemon's main: options, the storage directory's lock
 * and pid file, daemonizing, signals.
 *
 *   iod [-c CONFIG] -n INDEX [-f|--foreground] [--log FILE]
 *       [-m|--max-connections N] [--workers N]
 *
 * INDEX selects the [iod] entry of the configuration, which gives the
 * address to listen on and the storage directory.  Without -f the
 * program forks and the parent exits only once the child listens: 0 when
 * it is ready, non-zero (the child having said why on stderr) when it
 * could not start; so `iod -n 0 && next-step` never races the listener.
 * The daemon keeps <dir>/iod.pid and logs to <dir>/iod.log (--log FILE,
 * or "-" for stderr; the default with -f is stderr); SIGHUP reopens
 * it, for logrotate.  SIGTERM or SIGINT
 * end it cleanly: no new connections, requests in progress finish, the
 * pid file goes.
 *
 * One iod per storage directory: <dir>/iod.lock is held with flock() for
 * the daemon's life (the kernel drops it when the process dies, even
 * under kill -9), and a second iod on the same directory is refused.
 * Daemonizing, signals, readiness, the pid file and the accept loop are
 * the daemon runtime's (daemon.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "clf.h"
#include "daemon.h"
#include "durable.h"
#include "error.h"
#include "iod_log.h"
#include "iod_server.h"

struct iod_options {
	const char *config;	/* NULL: clf_config_load's default */
	long index;		/* -1 until given */
	int foreground;
	const char *log;	/* NULL: default for the mode */
	int log_level;		/* -1: clf.conf's log_level */
	unsigned max_conns;	/* 0: default */
	unsigned workers;	/* 0: clf.conf's daemon_workers */
};

static void usage(FILE *f)
{
	struct clf_config none = { 0 };
	struct iod_limits defaults;

	iod_limits_from_config(&none, IOD_MAX_CONNS_DEFAULT, &defaults);
	fprintf(f,
		"usage: iod [-c CONFIG] -n INDEX [-f|--foreground] [--log FILE]\n"
		"           [-m|--max-connections N] [--workers N]\n"
		"           [--log-level LEVEL]\n"
		"  -c CONFIG   configuration file (default: $CLF_CONFIG, else\n"
		"              ./clf-data/clf.conf when it exists, else\n"
		"              " CLF_SYSCONFDIR "/clf/clf.conf)\n"
		"  -n INDEX    which [iod] entry of the configuration to serve\n"
		"  -f          stay in the foreground (log to stderr)\n"
		"  --log FILE  log file ('-': stderr; default <dir>/iod.log)\n"
		"  --log-level error, warn, info or debug (a line per\n"
		"              connection); default: clf.conf's log_level\n"
		"  -m N        connections served at once (default %u)\n"
		"  --workers N threads serving requests (default: clf.conf's\n"
		"              daemon_workers, else 2 per core); a request that\n"
		"              waits for others (a collective) frees its place\n"
		"\n"
		"Memory lent to clients, from [global] of the configuration (sizes\n"
		"with k, m, g suffixes); M is this machine's memory:\n"
		"  iod_view_memory       registered views of all clients (default\n"
		"                        M/16, 64m to 8g)\n"
		"  iod_view_min_share    what one client may always register\n"
		"                        (default iod_view_memory / -m)\n"
		"  iod_buffer_memory     request and reply buffers over 1 MiB of all\n"
		"                        clients (default M/8, 256m to 16g)\n"
		"  iod_buffer_min_share  (default iod_buffer_memory / -m, 1m at least)\n"
		"Each client (a MUNGE user, or a connection authenticated with the\n"
		"secret) may take max(min share, memory / (clients + 1)); past it\n"
		"a registration fails with ENOBUFS and a message\n"
		"giving the figures, while writes and reads move in 1 MiB pieces.\n"
		"Here: views %zu MiB, buffers %zu MiB by default.\n",
		IOD_MAX_CONNS_DEFAULT, defaults.view_memory >> 20,
		defaults.buffer_memory >> 20);
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* 0, 1 for --help, or -EINVAL after printing why. */
static int parse_options(int argc, char **argv, struct iod_options *o)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "index", required_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "max-connections", required_argument, NULL, 'm' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;

	*o = (struct iod_options){ .index = -1, .log_level = -1 };
	while ((c = getopt_long(argc, argv, "c:n:fm:h", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'L':
			o->log_level = clf_log_level_parse(optarg);
			if (o->log_level < 0) {
				fprintf(stderr, "iod: --log-level %s: not error, warn, info or debug\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'n':
			if (parse_long(optarg, 0, CLF_PROTO_MAX_IODS - 1,
				       &o->index)) {
				fprintf(stderr, "iod: -n %s: not an iod index (0 to %d)\n",
					optarg, CLF_PROTO_MAX_IODS - 1);
				return -EINVAL;
			}
			break;
		case 'f':
			o->foreground = 1;
			break;
		case 'l':
			o->log = optarg;
			break;
		case 'm':
			if (parse_long(optarg, 1, 65536, &v)) {
				fprintf(stderr, "iod: -m %s: not a number from 1 to 65536\n",
					optarg);
				return -EINVAL;
			}
			o->max_conns = (unsigned)v;
			break;
		case 'w':
			if (parse_long(optarg, 1, CLF_DAEMON_WORKERS_MAX, &v)) {
				fprintf(stderr, "iod: --workers %s: not a number from 1 to %d\n",
					optarg, CLF_DAEMON_WORKERS_MAX);
				return -EINVAL;
			}
			o->workers = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("iod (clf) %s\n", CLF_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "iod: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	if (o->index < 0) {
		fprintf(stderr, "iod: which iod? give -n INDEX\n");
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int iod_hooks_from_env(struct iod_hooks *out)
{
	const char *s;
	long v;

	*out = (struct iod_hooks){ 0 };
	s = getenv("CLF_TEST_IOD_ENOSPC_AFTER");
	if (s && *s) {
		if (parse_long(s, 0, LONG_MAX, &v))
			return clf_fail(EINVAL,
					"iod: CLF_TEST_IOD_ENOSPC_AFTER='%s' is not a byte count",
					s);
		out->enospc_after = (uint64_t)v;
	}
	s = getenv("CLF_TEST_IOD_DELAY_MS");
	if (s && *s) {
		if (parse_long(s, 0, 600000, &v))
			return clf_fail(EINVAL,
					"iod: CLF_TEST_IOD_DELAY_MS='%s' is not 0 to 600000 ms",
					s);
		out->delay_ms = (unsigned)v;
	}
	s = getenv("CLF_TEST_IOD_COLL_PIECES");
	if (s && *s) {
		if (parse_long(s, 1, 1L << 30, &v))
			return clf_fail(EINVAL,
					"iod: CLF_TEST_IOD_COLL_PIECES='%s' is not 1 to 2^30 pieces",
					s);
		out->coll_pieces = (unsigned)v;
	}
	s = getenv("CLF_TEST_IOD_LOCK_LEASE_MS");
	if (s && *s) {
		if (parse_long(s, 1, 600000, &v))
			return clf_fail(EINVAL,
					"iod: CLF_TEST_IOD_LOCK_LEASE_MS='%s' is not 1 to 600000 ms",
					s);
		out->lock_lease_ms = (unsigned)v;
	}
	s = getenv("CLF_TEST_IOD_COLL_EXIT");
	if (s && *s) {
		if (strcmp(s, "0") && strcmp(s, "1"))
			return clf_fail(EINVAL,
					"iod: CLF_TEST_IOD_COLL_EXIT='%s' is not 0 or 1",
					s);
		out->coll_exit = !strcmp(s, "1");
	}
	s = getenv("CLF_TEST_IOD_LOG_COLL");
	if (s && *s) {
		if (strcmp(s, "0") && strcmp(s, "1"))
			return clf_fail(EINVAL,
					"iod: CLF_TEST_IOD_LOG_COLL='%s' is not 0 or 1",
					s);
		out->log_coll = !strcmp(s, "1");
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The storage directory: creation, lock, pid file                    */
/* ------------------------------------------------------------------ */

/* Hold <dir>/iod.lock; the descriptor, kept open for life, or -errno. */
static int lock_dir(const char *dir)
{
	char path[PATH_MAX];
	long pid;
	int fd;

	snprintf(path, sizeof(path), "%s/iod.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return clf_fail(errno, "iod: cannot open lock file '%s': %s",
				path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK) {
		snprintf(path, sizeof(path), "%s/iod.pid", dir);
		pid = clf_daemon_pid_read(path);
		snprintf(path, sizeof(path), "%s/iod.lock", dir);
		clf_fail(EBUSY,
			 "iod: storage directory '%s' is in use by another iod (pid %ld; lock file %s)",
			 dir, pid, path);
	} else {
		clf_fail(errno, "iod: cannot lock '%s': %s", path,
			 strerror(errno));
	}
	close(fd);
	return -EBUSY;
}

/* ------------------------------------------------------------------ */
/* main                                                                */
/* ------------------------------------------------------------------ */

/* Report a start-up failure: to the waiting command, or on stderr, and
 * in the log. */
static int start_failed(struct clf_daemon *d)
{
	char msg[1024];

	clf_daemon_failed(d, iod_errmsg(msg, sizeof(msg)));
	return 1;
}

int main(int argc, char **argv)
{
	struct iod_options o;
	struct iod_hooks hooks;
	struct clf_config *cfg = NULL;	/* owned */
	struct iod_server *srv;		/* owned */
	struct clf_daemon d;
	char logpath[PATH_MAX], pidpath[PATH_MAX];
	const char *dir;
	int lock_fd, rc, err;

	rc = parse_options(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 2;
	iod_log_set_name((uint32_t)o.index);
	clf_daemon_init(&d, iod_log_name());
	if (!o.foreground && clf_daemon_detach(&d)) {
		fprintf(stderr, "%s\n", CLF_Last_error());
		return 1;
	}

	rc = 1;
	err = iod_hooks_from_env(&hooks);
	if (!err)
		err = clf_config_load(o.config, &cfg);
	if (err) {
		start_failed(&d);
		goto out;
	}
	if ((uint32_t)o.index >= cfg->niods) {
		clf_fail(EINVAL, "iod: the configuration (%s) has %u iods, 0 to %u",
			 cfg->source ? cfg->source : "built in", cfg->niods,
			 cfg->niods - 1);
		start_failed(&d);
		goto free_cfg;
	}
	if (!cfg->has_secret) {
		clf_fail(EINVAL,
			 "iod: the configuration (%s) has no secret: set 'secret' or 'secret_file'",
			 cfg->source ? cfg->source : "built in");
		start_failed(&d);
		goto free_cfg;
	}
	dir = cfg->iods[o.index].dir;
	err = clf_mkdirs_durable(dir, 0700, "iod");
	if (err) {
		start_failed(&d);
		goto free_cfg;
	}
	lock_fd = lock_dir(dir);
	if (lock_fd < 0) {
		start_failed(&d);
		goto free_cfg;
	}
	if (!o.log && !o.foreground) {
		snprintf(logpath, sizeof(logpath), "%s/iod.log", dir);
		o.log = logpath;
	}
	clf_log_set_level(o.log_level >= 0 ? o.log_level : cfg->log_level);
	err = iod_log_open(o.log);
	/* Before any thread: they inherit the signals blocked. */
	if (!err)
		err = clf_daemon_signals(&d);
	if (err) {
		start_failed(&d);
		goto unlock;
	}

	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		clf_fail(ENOMEM, "iod: out of memory");
		start_failed(&d);
		goto unlock;
	}
	err = iod_server_open(srv, cfg, (uint32_t)o.index, o.max_conns,
			      o.workers, &hooks);
	if (err) {
		start_failed(&d);
		goto free_srv;
	}
	snprintf(pidpath, sizeof(pidpath), "%s/iod.pid", dir);
	err = clf_daemon_pid_write(&d, pidpath);
	if (err) {
		start_failed(&d);
		goto close_srv;
	}
	iod_log("listening on %s, storage %s, pid %ld, at most %u connections, %u workers",
		srv->addr, dir, (long)getpid(), srv->max_conns,
		srv->net.workers);
	clf_daemon_ready(&d);

	err = iod_server_run(srv, d.stop_fd);
	clf_daemon_pid_remove(&d);
	if (err) {
		/* Threads still run on the server: do not free it under
		 * them.  The kernel releases everything. */
		iod_log("stopped (without waiting for the busy connections)");
		_exit(0);
	}
	iod_log("collective operations: %" PRIu64 " run; of the participants that waited in them, %" PRIu64 " answered by the one that did the I/O, %" PRIu64 " woken to answer",
		(uint64_t)atomic_load(&srv->coll_ops),
		(uint64_t)atomic_load(&srv->coll_answered),
		(uint64_t)atomic_load(&srv->coll_woken));
	iod_log("stopped on %s", clf_daemon_stop_signal_name(&d));
	rc = 0;
close_srv:
	iod_server_close(srv);
free_srv:
	free(srv);
unlock:
	close(lock_fd);
free_cfg:
	clf_config_free(cfg);
out:
	clf_daemon_release(&d);
	return rc;
}
