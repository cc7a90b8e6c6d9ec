// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_down.c -- `clf down`: stop the daemons of this host by their pid
 * files.  The iods go first, then metad, the reverse of `clf up`, so that
 * metad never sees a live iod of an instance it no longer serves.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"
#include "daemon_ctl.h"
#include "tool_stage.h"
#include "error.h"

static void down_help(void)
{
	printf("usage: clf [-c CONFIG] down [--data DIR]\n"
	       "\n"
	       "Stop every daemon of the configuration that lives on this host:\n"
	       "SIGTERM to the process named by its pid file, up to %d s to\n"
	       "exit, then SIGKILL with a warning.  Leftover pid files are\n"
	       "removed.\n"
	       "\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Prints one line per daemon: ROLE INDEX ADDRESS STATE DETAIL,\n"
	       "STATE being stopped, killed, not-running, remote or failed.\n"
	       "Exit status: 0 none of them runs any more, 1 failure, 2 bad\n"
	       "usage.\n",
	       DAEMON_TERM_TIMEOUT_MS / 1000);
}

static int parse_args(int argc, char **argv, const char **data)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			*data = optarg;
			break;
		case 'h':
			down_help();
			return -1;
		default:
			return tool_bad_option("down", c, argv);
		}
	}
	if (optind < argc)
		return tool_usage("down", "unexpected argument '%s'",
				  argv[optind]);
	return 0;
}

static void print_line(const struct tool_daemon *d, const char *state,
		       const char *detail)
{
	char index[16];

	snprintf(index, sizeof(index), "%u", d->index);
	printf("%-6s %-5s %-22s %-11s %s\n", daemon_program(d->role),
	       d->role == DAEMON_METAD && !d->index ? "-" : index, d->conf->addr, state,
	       detail);
}

/*
 * Look at the pid file of d: stop[i].pid is set when there is a process
 * to stop; otherwise the line is printed now.  Returns 0, or -1 when the
 * daemon's state cannot be known (message printed).
 */
static int prepare(const struct tool_daemon *d, struct daemon_stop *s)
{
	char detail[64];
	pid_t pid;
	int state;

	s->pid = 0;
	s->prog = daemon_program(d->role);
	if (d->local == 0) {
		print_line(d, "remote", "not on this host");
		return 0;
	}
	if (d->local < 0) {
		fprintf(stderr, "clf: warning: %s (%s): skipped: %s\n",
			d->name, d->conf->addr, d->local_why);
		print_line(d, "failed", "host does not resolve");
		return -1;
	}
	state = daemon_pid_check(d, &pid);
	if (state < 0) {
		tool_fail();
		print_line(d, "failed", "unreadable pid file");
		return -1;
	}
	if (state == DAEMON_PID_ALIVE) {
		s->pid = pid;
		return 0;
	}
	if (state == DAEMON_PID_NONE) {
		print_line(d, "not-running", "no pid file");
		return 0;
	}
	if (unlink(d->pidfile) && errno != ENOENT) {
		fprintf(stderr, "clf: cannot remove stale %s: %s\n",
			d->pidfile, strerror(errno));
		print_line(d, "failed", "stale pid file");
		return -1;
	}
	if (pid > 0)
		snprintf(detail, sizeof(detail),
			 "removed stale pid file (pid %d)", (int)pid);
	else
		snprintf(detail, sizeof(detail), "removed stale pid file");
	print_line(d, "not-running", detail);
	return 0;
}

/* Report how stopping d went; -1 when it still runs. */
static int finish(const struct tool_daemon *d, const struct daemon_stop *s)
{
	char detail[64];
	pid_t now;

	if (s->pid <= 0)
		return 0;
	snprintf(detail, sizeof(detail), "pid %d", (int)s->pid);
	if (s->result < 0) {
		fprintf(stderr, "clf: cannot stop %s (pid %d): %s\n", d->name,
			(int)s->pid, strerror(-s->result));
		print_line(d, "failed", detail);
		return -1;
	}
	if (s->result == 1)
		fprintf(stderr,
			"clf: warning: %s (pid %d) did not exit within %d s of SIGTERM; killed it\n",
			d->name, (int)s->pid, DAEMON_TERM_TIMEOUT_MS / 1000);
	/* A daemon removes its pid file when it exits cleanly; one that
	 * was killed cannot.  Keep a file a new daemon may have written. */
	if (daemon_pid_check(d, &now) >= 0 && now == s->pid &&
	    unlink(d->pidfile) && errno != ENOENT)
		fprintf(stderr, "clf: warning: cannot remove %s: %s\n",
			d->pidfile, strerror(errno));
	print_line(d, s->result == 1 ? "killed" : "stopped", detail);
	return 0;
}

/* Stop ds[from..to) together. */
static int stop_group(const struct tool_daemon *ds, size_t from, size_t to,
		      struct daemon_stop *s)
{
	int rc = 0;

	for (size_t i = from; i < to; i++)
		if (prepare(&ds[i], &s[i]))
			rc = -1;
	daemons_stop(s + from, to - from, DAEMON_TERM_TIMEOUT_MS,
		     DAEMON_KILL_TIMEOUT_MS);
	for (size_t i = from; i < to; i++)
		if (finish(&ds[i], &s[i]))
			rc = -1;
	fflush(stdout);
	return rc;
}

int cmd_down(const struct tool_opts *g, int argc, char **argv)
{
	const char *data = NULL;
	struct clf_config *cfg = NULL;
	struct tool_daemon *ds = NULL;
	struct daemon_stop *s = NULL;
	size_t n;
	int rc;

	rc = parse_args(argc, argv, &data);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_config_open(g, data, &cfg))
		return tool_fail();
	rc = CLF_EXIT_FAIL;
	if (daemons_list(cfg, &ds, &n)) {
		tool_fail();
		goto free_cfg;
	}
	s = calloc(n, sizeof(*s));
	if (!s) {
		fprintf(stderr, "clf: out of memory\n");
		goto free_ds;
	}
	/* Write-back first, while every daemon serves its reads. */
	rc = CLF_EXIT_OK;
	if (cfg->backing && cfg->source && ds[0].local == 1) {
		pid_t pid;
		bool up = daemon_pid_check(&ds[0], &pid) == DAEMON_PID_ALIVE;

		if (tool_stager_end(cfg, up, NULL))
			rc = CLF_EXIT_FAIL;
	}
	/* ds[0] is metad: the iods first. */
	if (stop_group(ds, 1, n, s))
		rc = CLF_EXIT_FAIL;
	if (stop_group(ds, 0, 1, s))
		rc = CLF_EXIT_FAIL;
	free(s);
free_ds:
	free(ds);
free_cfg:
	clf_config_free(cfg);
	return rc;
}
