// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * log.c -- the daemons' log (log.h): one format for metad and the iods.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "error.h"
#include "log.h"

#define LOG_LINE_MAX 2048

static const char *const level_names[] = {
	[CLF_LOG_ERROR] = "error", [CLF_LOG_WARN] = "warn",
	[CLF_LOG_INFO] = "info", [CLF_LOG_DEBUG] = "debug",
};

/* Set before threads start, except log_fd's file, which clf_log_reopen
 * replaces under the same number. */
static int log_fd = STDERR_FILENO;
static int log_level = CLF_LOG_INFO;
static char log_name[32] = "clf";
static char log_path[4096];	/* "" for standard error */

int clf_log_level_parse(const char *s)
{
	for (int i = 0; i <= CLF_LOG_DEBUG; i++)
		if (s && !strcmp(s, level_names[i]))
			return i;
	return -EINVAL;
}

const char *clf_log_level_name(int level)
{
	if (level < CLF_LOG_ERROR || level > CLF_LOG_DEBUG)
		return "?";
	return level_names[level];
}

void clf_log_set_level(int level)
{
	log_level = level;
}

int clf_log_get_level(void)
{
	return log_level;
}

void clf_log_set_name(const char *name)
{
	snprintf(log_name, sizeof(log_name), "%s", name);
}

static int open_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	if (fd < 0)
		return clf_fail(errno, "%s: cannot open the log '%s': %s",
				log_name, path, strerror(errno));
	return fd;
}

int clf_log_open(const char *path)
{
	int fd;

	if (!path || !strcmp(path, "-")) {
		log_path[0] = '\0';
		log_fd = STDERR_FILENO;
		return 0;
	}
	if (strlen(path) >= sizeof(log_path))
		return clf_fail(ENAMETOOLONG, "%s: the log's name is too long",
				log_name);
	fd = open_path(path);
	if (fd < 0)
		return fd;
	snprintf(log_path, sizeof(log_path), "%s", path);
	log_fd = fd;
	return 0;
}

int clf_log_fd(void)
{
	return log_fd;
}

void clf_log_close(void)
{
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = STDERR_FILENO;
	log_path[0] = '\0';
}

int clf_log_reopen(void)
{
	int fd;

	if (!log_path[0] || log_fd == STDERR_FILENO)
		return 0;
	fd = open_path(log_path);
	if (fd < 0)
		return fd;
	/* dup2 swaps the file atomically: a concurrent write goes to the
	 * old file or the new one, never to a closed descriptor. */
	if (dup2(fd, log_fd) < 0) {
		int err = errno;

		close(fd);
		return clf_fail(err, "%s: cannot reopen the log: %s", log_name,
				strerror(err));
	}
	close(fd);
	return 0;
}

static void *hup_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	for (;;) {
		if (sigwait(set, &sig))
			continue;
		if (clf_log_reopen())
			clf_log(CLF_LOG_ERROR, "SIGHUP: %s", CLF_Last_error());
		else
			clf_log(CLF_LOG_INFO, "SIGHUP: log reopened");
	}
	return NULL;
}

int clf_log_reopen_on_hup(void)
{
	static sigset_t set;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (err)
		return clf_fail(err, "%s: cannot block SIGHUP", log_name);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, hup_thread, &set);
	pthread_attr_destroy(&attr);
	if (err)
		return clf_fail(err, "%s: cannot start the SIGHUP thread: %s",
				log_name, strerror(err));
	return 0;
}

void clf_log(int level, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	size_t n;
	int len;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	len = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s[%ld] %s: ",
		       ts.tv_nsec / 1000000, log_name, (long)getpid(),
		       clf_log_level_name(level));
	if (len > 0)
		n += (size_t)len;
	va_start(ap, fmt);
	len = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (len < 0)
		len = 0;
	n += (size_t)len;
	/* A line cut by the buffer still ends the line. */
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* A log that cannot be written has nowhere to say so. */
	if (write(log_fd, line, n) < 0)
		errno = 0;
}
