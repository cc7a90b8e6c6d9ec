/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool_stage.h -- the stager of an instance with a backing directory
 * (tools/cmd_stager.c, docs/staging.md) as `clf up`, `clf down` and
 * `clf adhoc` start and end it.
 */
#ifndef CLF_TOOL_STAGE_H
#define CLF_TOOL_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct clf_config;
struct tool_opts;

/* This program's path (/proc/self/exe) into buf: 0 or -errno. */
int tool_self_exe(char *buf, size_t len);

/* The stager's pid file and log of the instance of configuration file
 * conf: beside it, stager.pid and stager.log. */
void tool_stager_files(const char *conf, char *pidfile, char *log,
		       size_t len);

/* Whether pidfile names a live stager; its pid into *pid. */
bool tool_stager_alive(const char *pidfile, pid_t *pid);

/*
 * Start the stager of cfg (which has a backing directory), read from
 * file conf, in the background, unless one runs.  0, or -EIO with the
 * message printed.
 */
int tool_stager_start(const struct clf_config *cfg, const char *conf);

/*
 * The end of write-back for cfg's instance (cfg->source its file), while
 * its daemons still run (up): SIGTERM to the stager (it finishes what is
 * noted), wait for it, then `clf stager --drain` for what it left.  Says
 * on stdout what it waits for.  0 when everything noted is written back;
 * -EIO when not, with each file and why on stderr.  With metad down
 * (!up) nothing can be read: the stager is stopped, and what is noted
 * waits for the next `clf up` (a warning says so).  errfile: where the
 * lines about files not written back go instead of stderr, or NULL.
 */
int tool_stager_end(const struct clf_config *cfg, bool up,
		    const char *errfile);

/*
 * `clf stage-in [-j N] [-q] clf:/PATH...` on an instance with a backing
 * directory B: B/PATH (a file or a tree) copied to clf:/PATH (clf cp -r
 * -p -j N), its clf parents made, and the copies noted as written back
 * (they hold what B holds).  Returns an exit code.
 */
int tool_stage_in_backing(const struct tool_opts *g, const char *data,
			  const char *jobs, bool quiet, int n, char **paths);

#endif
