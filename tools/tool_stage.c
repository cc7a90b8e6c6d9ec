// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tool_stage.c -- starting and ending the stager of an instance with a
 * backing directory (tool_stage.h).  The stager is this program again
 * (`clf -c CONF stager`), found through /proc/self/exe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"
#include "tool_stage.h"
#include "config.h"
#include "daemon_ctl.h"
#include "error.h"

#define STAGER_REPORT_S 10	/* how often down says it still waits */

int tool_self_exe(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

void tool_stager_files(const char *conf, char *pidfile, char *log,
		       size_t len)
{
	const char *slash = strrchr(conf, '/');
	int dlen = slash ? (int)(slash - conf) : 1;
	const char *src = slash ? conf : ".";

	snprintf(pidfile, len, "%.*s/stager.pid", dlen, src);
	snprintf(log, len, "%.*s/stager.log", dlen, src);
}

bool tool_stager_alive(const char *pidfile, pid_t *pid)
{
	FILE *f = fopen(pidfile, "r");
	int p = 0;

	*pid = 0;
	if (!f)
		return false;
	if (fscanf(f, "%d", &p) != 1)
		p = 0;
	fclose(f);
	*pid = p;
	return p > 0 && daemon_proc_alive(p, "clf");
}

/* `clf -c CONF stager [ARG]`, waited for, its stderr into errfile when
 * not NULL: its exit status, or -1. */
static int run_stager(const char *conf, const char *arg, const char *errfile)
{
	char self[PATH_MAX];
	int status;
	pid_t pid;

	if (tool_self_exe(self, sizeof(self)))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = errfile ? open(errfile, O_WRONLY | O_CREAT | O_TRUNC,
					0644) : -1;

		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execl(self, self, "-c", conf, "stager", arg,
		      (char *)NULL);	/* arg NULL ends the list there */
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tool_stager_start(const struct clf_config *cfg, const char *conf)
{
	char pidfile[PATH_MAX], log[PATH_MAX];
	pid_t pid;

	tool_stager_files(conf, pidfile, log, sizeof(pidfile));
	if (tool_stager_alive(pidfile, &pid)) {
		printf("stager %s running pid %d\n", cfg->backing, (int)pid);
		return 0;
	}
	if (run_stager(conf, NULL, NULL) == 0)
		return 0;
	fprintf(stderr, "clf: cannot start the stager of %s (see above)\n",
		cfg->backing);
	return -EIO;
}

int tool_stager_end(const struct clf_config *cfg, bool up, const char *errfile)
{
	char pidfile[PATH_MAX], log[PATH_MAX];
	pid_t pid;
	int waited = 0, status;

	tool_stager_files(cfg->source, pidfile, log, sizeof(pidfile));
	if (!up) {
		/* Its notes are on disk: killing it loses none. */
		if (tool_stager_alive(pidfile, &pid))
			kill(pid, SIGKILL);
		fprintf(stderr, "clf: warning: metad does not run: what is noted for write-back to %s waits for the next clf up\n",
			cfg->backing);
		return 0;
	}
	if (tool_stager_alive(pidfile, &pid)) {
		printf("stager: writing back what is noted to %s (pid %d)\n",
		       cfg->backing, (int)pid);
		fflush(stdout);
		kill(pid, SIGTERM);
		while (daemon_proc_alive(pid, "clf")) {
			usleep(50 * 1000);
			if (++waited % (STAGER_REPORT_S * 20) == 0) {
				printf("stager: still writing back to %s (pid %d, log %s)\n",
				       cfg->backing, (int)pid, log);
				fflush(stdout);
			}
		}
	}
	status = run_stager(cfg->source, "--drain", errfile);
	if (status == 0) {
		printf("stager: everything noted is written back to %s\n",
		       cfg->backing);
		return 0;
	}
	fprintf(stderr, "clf: write-back to %s is not complete (the 'not written back' lines say which file and why)\n",
		cfg->backing);
	return -EIO;
}
