// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon.c -- becoming a daemon, readiness, the pid file and signals,
 * for metad and the iods (daemon.h).
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clf.h"
#include "clock.h"
#include "daemon.h"
#include "error.h"
#include "log.h"
#include "notify.h"

/* How long the command waits for its daemon to report readiness. */
#define READY_WAIT_MS 60000
/* What the daemon says when it serves; anything else is its failure. */
#define READY_OK "ready"

void clf_daemon_init(struct clf_daemon *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->ready_fd = -1;
	d->stop_fd = -1;
}

/* The command's side: wait for the daemon's word and exit with it. */
static int wait_ready(const char *name, int fd, pid_t pid)
{
	int64_t deadline = clf_now_ms() + READY_WAIT_MS;
	char buf[1024];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - clf_now_ms();
		ssize_t k;

		if (left <= 0) {
			fprintf(stderr, "%s: the daemon did not report ready within %d s\n",
				name, READY_WAIT_MS / 1000);
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
		fprintf(stderr, "%s: the daemon exited before it was ready\n",
			name);
	/* Reap it, so that a caller sees it gone when we return. */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 1;
}

int clf_daemon_detach(struct clf_daemon *d)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return clf_fail(errno, "%s: cannot create a pipe: %s", d->name,
				strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return clf_fail(errno, "%s: cannot fork: %s", d->name,
				strerror(errno));
	}
	if (pid > 0) {
		close(p[1]);
		_exit(wait_ready(d->name, p[0], pid));
	}
	close(p[0]);
	/* Only fails for a process group leader, which a child is not. */
	(void)setsid();
	d->ready_fd = p[1];
	return 0;
}

int clf_daemon_signals(struct clf_daemon *d)
{
	sigset_t set;
	int err;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (err)
		return clf_fail(err, "%s: cannot block signals: %s", d->name,
				strerror(err));
	d->stop_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->stop_fd < 0)
		return clf_fail(errno, "%s: signalfd: %s", d->name,
				strerror(errno));
	/* Sends use MSG_NOSIGNAL; a client that vanishes must not kill
	 * the daemon through anything else either. */
	signal(SIGPIPE, SIG_IGN);
	/* After TERM and INT are blocked: its thread must not take them
	 * from the signalfd. */
	return clf_log_reopen_on_hup();
}

const char *clf_daemon_stop_signal_name(struct clf_daemon *d)
{
	struct signalfd_siginfo si;

	if (!d->stop_signal && d->stop_fd >= 0 &&
	    read(d->stop_fd, &si, sizeof(si)) == sizeof(si))
		d->stop_signal = (int)si.ssi_signo;
	return d->stop_signal == SIGTERM ? "SIGTERM" :
	       d->stop_signal == SIGINT ? "SIGINT" : "a signal";
}

long clf_daemon_pid_read(const char *path)
{
	char text[32], *end;
	long pid;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	errno = 0;
	pid = strtol(text, &end, 10);
	if (errno || end == text || (*end && *end != '\n') || pid <= 0)
		return 0;
	return pid;
}

int clf_daemon_pid_write(struct clf_daemon *d, const char *path)
{
	char tmp[PATH_MAX + 8], text[32];
	int fd, n, err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp) ||
	    strlen(path) >= sizeof(d->pid_path))
		return clf_fail(ENAMETOOLONG, "%s: pid file name too long",
				d->name);
	n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return clf_fail(errno, "%s: cannot write pid file '%s': %s",
				d->name, tmp, strerror(errno));
	if (write(fd, text, (size_t)n) != n)
		err = clf_fail(EIO, "%s: cannot write pid file '%s'", d->name,
			       tmp);
	close(fd);
	if (!err && rename(tmp, path) < 0)
		err = clf_fail(errno, "%s: cannot write pid file '%s': %s",
			       d->name, path, strerror(errno));
	if (err) {
		(void)unlink(tmp);
		return err;
	}
	snprintf(d->pid_path, sizeof(d->pid_path), "%s", path);
	return 0;
}

void clf_daemon_pid_remove(struct clf_daemon *d)
{
	if (d->pid_path[0])
		(void)unlink(d->pid_path);
	d->pid_path[0] = '\0';
}

void clf_daemon_ready(struct clf_daemon *d)
{
	int null, log = clf_log_fd();

	if (d->ready_fd >= 0) {
		/* Every path in use is absolute by now; do not keep the
		 * directory we were started from busy. */
		if (chdir("/") < 0)
			clf_log(CLF_LOG_WARN, "cannot chdir to /: %s",
				strerror(errno));
		if (write(d->ready_fd, READY_OK, strlen(READY_OK)) < 0)
			clf_log(CLF_LOG_ERROR, "cannot report readiness: %s",
				strerror(errno));
		close(d->ready_fd);
		d->ready_fd = -1;
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			/* Stray writes to stderr (sanitizer reports...) go
			 * to the log, unless the log is stderr itself. */
			if (log != STDERR_FILENO)
				dup2(log, STDERR_FILENO);
			close(null);
		}
	}
	/* Run by systemd (Type=notify): it waits for this word too. */
	if (clf_notify_ready())
		clf_log(CLF_LOG_WARN, "%s", CLF_Last_error());
}

void clf_daemon_failed(struct clf_daemon *d, const char *msg)
{
	if (clf_log_fd() != STDERR_FILENO)
		clf_log(CLF_LOG_ERROR, "cannot start: %s", msg);
	if (d->ready_fd >= 0) {
		if (write(d->ready_fd, msg, strlen(msg)) < 0)
			errno = 0;	/* the command is gone: nobody to tell */
		close(d->ready_fd);
		d->ready_fd = -1;
	} else {
		fprintf(stderr, "%s\n", msg);
	}
}

void clf_daemon_release(struct clf_daemon *d)
{
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	if (d->ready_fd >= 0)
		close(d->ready_fd);
	d->stop_fd = d->ready_fd = -1;
}
