// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * metad.c -- the clf metadata server: command line, daemonizing, signals.
 *
 *   metad [-c CONFIG] [-f|--foreground] [--log FILE]
 *
 * Reads the configuration (clf_config_load: CONFIG, else $CLF_CONFIG,
 * else ./clf-data/clf.conf, else /etc/clf/clf.conf), opens the store in the configured metad directory,
 * listens on the configured metad address and serves until SIGTERM or
 * SIGINT.  Without -f it becomes a daemon, but only once it listens: the
 * command returns 0 when the daemon is ready to serve and non-zero, with
 * the daemon's error on standard error, when it could not start.  Its pid
 * is in <dir>/metad.pid while it runs; its log is <dir>/metad.log unless
 * --log says otherwise ("-": standard error).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "durable.h"
#include "error.h"
#include "mds.h"
#include "mds_append.h"
#include "mds_gc.h"
#include "mds_replay.h"
#include "mds_iods.h"
#include "mds_lock.h"
#include "mds_server.h"
#include "notify.h"

/* How long the command waits for its daemon to report readiness. */
#define READY_WAIT_MS 60000
#define READY_OK "ready"

struct metad_opts {
	const char *config;	/* borrowed from argv; NULL: the default */
	const char *log;	/* borrowed from argv; NULL: <dir>/metad.log */
	int log_level;		/* -1: clf.conf's log_level */
	bool foreground;
};

static const char usage[] =
	"usage: metad [-c CONFIG] [-f|--foreground] [--log FILE]\n"
	"             [--log-level error|warn|info|debug]\n"
	"  -c, --config CONFIG  configuration file (default: $CLF_CONFIG,\n"
	"                       else ./clf-data/clf.conf when it exists,\n"
	"                       else " CLF_SYSCONFDIR "/clf/clf.conf)\n"
	"  -f, --foreground     do not become a daemon\n"
	"      --log FILE       log here instead of <metad dir>/metad.log;\n"
	"                       '-' for standard error\n"
	"      --log-level L    error, warn, info or debug (a line per\n"
	"                       connection); default: clf.conf's log_level\n";

static int parse_args(int argc, char **argv, struct metad_opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'L' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->log_level = -1;
	while ((ch = getopt_long(argc, argv, "c:fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->config = optarg;
			break;
		case 'f':
			o->foreground = true;
			break;
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

/* ------------------------------------------------------------------ */
/* Becoming a daemon                                                   */
/* ------------------------------------------------------------------ */

/* The command's side: wait for the daemon's word and exit with it. */
static int wait_ready(int fd)
{
	int64_t deadline = clf_now_ms() + READY_WAIT_MS;
	char buf[1024];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - clf_now_ms();
		ssize_t k;

		if (left <= 0) {
			fprintf(stderr, "metad: the daemon did not report ready within %d s\n",
				READY_WAIT_MS / 1000);
			return 1;
		}
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			break;
		k = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	if (!strcmp(buf, READY_OK))
		return 0;
	if (n)
		fprintf(stderr, "%s\n", buf);
	else
		fprintf(stderr, "metad: the daemon exited before it was ready\n");
	return 1;
}

/*
 * Fork: the parent waits for the child's readiness and exits; the child
 * leaves the terminal's session and goes on with *ready_fd to report.
 */
static int daemonize(int *ready_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return clf_fail(errno, "metad: pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return clf_fail(errno, "metad: fork: %s", strerror(errno));
	}
	if (pid > 0) {
		close(p[1]);
		exit(wait_ready(p[0]));
	}
	close(p[0]);
	setsid();
	if (chdir("/"))
		return clf_fail(errno, "metad: chdir /: %s", strerror(errno));
	*ready_fd = p[1];
	return 0;
}

/* The daemon serves: tell the command, and let go of its terminal. */
static void report_ready(int ready_fd, bool log_to_stderr)
{
	int null;

	if (ready_fd < 0)
		return;
	if (write(ready_fd, READY_OK, strlen(READY_OK)) < 0)
		mds_log_error("cannot report readiness: %s", strerror(errno));
	close(ready_fd);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return;
	dup2(null, STDIN_FILENO);
	dup2(null, STDOUT_FILENO);
	if (!log_to_stderr)
		dup2(null, STDERR_FILENO);
	close(null);
}

/* Startup failed: say why where the user will see it, and in the log. */
static void report_failure(int ready_fd, const char *msg)
{
	mds_log_error("cannot start: %s", msg);
	if (ready_fd >= 0) {
		if (write(ready_fd, msg, strlen(msg)) < 0)
			return;
		close(ready_fd);
	} else {
		fprintf(stderr, "%s\n", msg);
	}
}

/* ------------------------------------------------------------------ */
/* The daemon                                                          */
/* ------------------------------------------------------------------ */

/* SIGHUP reopens the log (clf_log_reopen_on_hup), for logrotate.
 * SIGTERM and SIGINT arrive on a descriptor that the accept loop polls:
 * blocked in every thread (they inherit this mask), handled in one
 * place, with no async-signal-safety to worry about. */
static int stop_signals_fd(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return clf_fail(EINVAL, "metad: cannot block signals");
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0)
		return clf_fail(errno, "metad: signalfd: %s", strerror(errno));
	/* A client that vanishes must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	return fd;
}

static int write_pid_file(const char *path)
{
	char buf[32];
	int fd, len, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return clf_fail(errno, "metad: cannot write '%s': %s", path,
				strerror(errno));
	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (write(fd, buf, (size_t)len) != len)
		err = clf_fail(EIO, "metad: cannot write '%s'", path);
	close(fd);
	return err;
}

static const char *signal_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal";
}

static int run(const struct clf_config *cfg, const char *pid_path,
	       int *ready_fd, bool log_to_stderr)
{
	const struct clf_transport_ops *t;
	struct mds_ctx ctx = { .cfg = cfg, .start_ms = clf_now_ms() };
	struct signalfd_siginfo si = { .ssi_signo = 0 };
	struct mds_server *srv;
	int sig_fd, err;

	t = clf_transport_find(cfg->transport);
	if (!t)
		return -ENOENT;
	err = mds_fault_init();
	if (err)
		return err;
	sig_fd = err = stop_signals_fd();
	if (err < 0)
		return err;
	/* After TERM and INT are blocked: the thread it starts must not
	 * take them from the signalfd. */
	err = clf_log_reopen_on_hup();
	if (err)
		goto close_sig;
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
		goto close_sig;
	err = mds_iods_open(cfg, t, &ctx.iods);
	if (err)
		goto close_store;
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
	err = mds_server_open(&ctx, t, cfg->metad.addr, &srv);
	if (err)
		goto stop_replay;
	err = write_pid_file(pid_path);
	if (err)
		goto close_server;

	mds_log("started: listening on %s, store '%s', %u iods, config %s",
		cfg->metad.addr, cfg->metad.dir, cfg->niods,
		cfg->source ? cfg->source : "(built in)");
	report_ready(*ready_fd, log_to_stderr);
	*ready_fd = -1;
	/* Run by systemd (Type=notify): it waits for this word too. */
	if (clf_notify_ready())
		mds_log_error("%s", CLF_Last_error());
	err = mds_server_run(srv, sig_fd);
	if (read(sig_fd, &si, sizeof(si)) != sizeof(si))
		si.ssi_signo = 0;
	mds_log("stopped on %s: connections closed, store closed",
		signal_name((int)si.ssi_signo));
	unlink(pid_path);
close_server:
	mds_server_close(srv);
stop_replay:
	mds_replay_stop(ctx.replay);
stop_gc:
	mds_gc_stop(ctx.gc);
free_appends:
	mds_appends_free(ctx.appends);
free_locks:
	mds_locks_free(ctx.locks);
close_iods:
	mds_iods_close(ctx.iods);
close_store:
	mds_store_close(ctx.store);
close_sig:
	close(sig_fd);
	return err;
}

int main(int argc, char **argv)
{
	char log_path[PATH_MAX], pid_path[PATH_MAX];
	struct clf_config *cfg = NULL;
	struct metad_opts o;
	int ready_fd = -1, err;

	if (parse_args(argc, argv, &o))
		return 2;
	clf_log_set_name("metad");
	err = clf_config_load(o.config, &cfg);
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
		err = daemonize(&ready_fd);
	if (err) {
		fprintf(stderr, "%s\n", CLF_Last_error());
		goto free_cfg;
	}
	err = run(cfg, pid_path, &ready_fd, o.log && !strcmp(o.log, "-"));
	if (err)
		report_failure(ready_fd, CLF_Last_error());
	mds_log_close();
free_cfg:
	clf_config_free(cfg);
	return err ? 1 : 0;
}
