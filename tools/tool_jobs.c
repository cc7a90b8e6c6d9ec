// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tool_jobs.c -- copies run by other clf processes, several at a time
 * (clf cp -j, clf stage-in, clf stage-out): each file is one `clf cp` of
 * its own, started with posix_spawn from /proc/self/exe, so that no
 * process shares the connections of another (a forked child would write
 * into its parent's), and all of them move data at once: over a long
 * link, files are in flight together.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "tool_jobs.h"

extern char **environ;

struct job {
	pid_t pid;		/* 0: a free slot */
	char *src, *dst;	/* owned, for messages */
};

static struct job *jobs;	/* max slots */
static int max_jobs, running, failed;
static const char **argv_head;	/* borrowed, NULL-terminated */
static int nhead;
static bool say;		/* print "SRC -> DST" per file */

int tool_jobs_init(int max, const char **head, bool verbose)
{
	jobs = calloc(max, sizeof(*jobs));
	if (!jobs)
		return clf_fail(ENOMEM, "clf: out of memory");
	max_jobs = max;
	argv_head = head;
	for (nhead = 0; head[nhead]; nhead++)
		;
	say = verbose;
	return 0;
}

/* Wait for one job to end and account for it. */
static void reap_one(void)
{
	int status;
	pid_t pid;

	do {
		pid = waitpid(-1, &status, 0);
	} while (pid < 0 && errno == EINTR);
	if (pid < 0)
		return;
	for (int i = 0; i < max_jobs; i++) {
		struct job *j = &jobs[i];

		if (j->pid != pid)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "clf: the copy of '%s' to '%s' failed\n",
				j->src, j->dst);
			failed++;
		} else if (say) {
			printf("%s -> %s\n", j->src, j->dst);
		}
		free(j->src);
		free(j->dst);
		*j = (struct job){ 0 };
		running--;
		return;
	}
}

int tool_jobs_run(const char *src, const char *dst)
{
	const char **argv = calloc(nhead + 3, sizeof(*argv));
	struct job *j = NULL;
	int err;

	if (!argv)
		return clf_fail(ENOMEM, "clf: out of memory");
	while (running == max_jobs)
		reap_one();
	for (int i = 0; i < max_jobs && !j; i++)
		if (!jobs[i].pid)
			j = &jobs[i];
	memcpy(argv, argv_head, nhead * sizeof(*argv));
	argv[nhead] = src;
	argv[nhead + 1] = dst;
	fflush(stdout);
	err = posix_spawn(&j->pid, "/proc/self/exe", NULL, NULL,
			  (char *const *)argv, environ);
	free(argv);
	if (err) {
		j->pid = 0;
		return clf_fail(err, "clf: cannot start a copy of '%s': %s", src,
				strerror(err));
	}
	j->src = strdup(src);
	j->dst = strdup(dst);
	running++;
	return 0;
}

int tool_jobs_finish(void)
{
	while (running)
		reap_one();
	free(jobs);
	jobs = NULL;
	return failed;
}
