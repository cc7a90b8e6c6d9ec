/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon_ctl.h -- the daemons of a configuration as processes of this
 * host: which ones live here, their pid files, finding their programs,
 * starting them and stopping them.
 *
 * A daemon started without -f daemonizes once it listens (its first
 * process exits 0 when it is ready, non-zero with the error on stderr)
 * and writes its pid to <its storage dir>/<program>.pid: "metad.pid",
 * "iod.pid".  That file is how later commands find the process.
 */
#ifndef CLF_TOOL_DAEMON_CTL_H
#define CLF_TOOL_DAEMON_CTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

/* Bounds of the waits; each covers one daemon. */
#define DAEMON_START_TIMEOUT_MS 30000	/* exec to answering PING */
#define DAEMON_TERM_TIMEOUT_MS 10000	/* SIGTERM to exit, then SIGKILL */
#define DAEMON_KILL_TIMEOUT_MS 3000	/* SIGKILL to gone */

enum daemon_role { DAEMON_METAD, DAEMON_IOD };

struct tool_daemon {
	enum daemon_role role;
	uint32_t index;			/* iod or metad index */
	const struct clf_config_daemon *conf;	/* borrowed from cfg */
	char name[24];			/* "metad", "iod 2", for messages */
	char pidfile[PATH_MAX];		/* <conf->dir>/<program>.pid */
	/* 1: listens on this host; 0: elsewhere; -errno: cannot tell (the
	 * host name does not resolve). */
	int local;
	char local_why[160];	/* when local < 0: why (clf_error_reason) */
};

/* "metad" or "iod": the program, its pid file and its process name. */
const char *daemon_program(enum daemon_role role);

/*
 * daemons_list - the daemons of cfg: metad 0 first, then the iods by
 * index, then metads 1, 2, ... of a namespace spread over several
 *
 * Decides for each whether it is local (daemon_host_is_local).  Returns
 * 0 with *out (n entries, borrowing from cfg; caller frees the array), or
 * -ENOMEM / -ENAMETOOLONG with a message.
 */
int daemons_list(const struct clf_config *cfg, struct tool_daemon **out,
		 size_t *n);

/*
 * daemon_host_is_local - whether host is an address of this machine
 *
 * "localhost", 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z), or an address
 * of one of this machine's interfaces; a name is resolved first and is
 * local when any of its addresses is.  Returns 1, 0, or -EHOSTUNREACH
 * when the name does not resolve (message names it).
 */
int daemon_host_is_local(const char *host);

enum daemon_pid_state {
	DAEMON_PID_NONE,	/* no pid file */
	DAEMON_PID_STALE,	/* its process is gone, a zombie, or another
				   program: the file is left over */
	DAEMON_PID_ALIVE,	/* a live process of the daemon's program */
};

/*
 * daemon_pid_check - what d's pid file says
 *
 * Returns a daemon_pid_state with the pid in *pid (0 for NONE, and for
 * STALE when the file does not hold a pid), or a negative errno when the
 * file cannot be read.
 */
int daemon_pid_check(const struct tool_daemon *d, pid_t *pid);

/*
 * Whether pid is a live process running program prog (by its name in
 * /proc; by kill(pid, 0) alone where /proc is absent).  A zombie is not
 * alive: nobody may reap the daemons we started.
 */
bool daemon_proc_alive(pid_t pid, const char *prog);

/*
 * daemon_find_program - the executable of prog ("metad", "iod")
 *
 * In $CLF_BIN_DIR when set (DIR/prog or the build tree's DIR/prog/prog),
 * else in the build tree of this clf (../prog/prog from the directory of
 * /proc/self/exe) or beside it, else in $PATH.  Writes the path into buf.
 * Returns 0 or -ENOENT with a message saying where it looked.
 */
int daemon_find_program(const char *prog, char *buf, size_t len);

/*
 * daemon_addr_check - whether d's address can be listened on
 *
 * Tried as the transport will (SO_REUSEADDR: a port in TIME_WAIT is
 * fine, one being listened on is not), only to say plainly what is wrong
 * before anything starts; the daemon decides in the end.  0, or
 * -EADDRINUSE / -EADDRNOTAVAIL with a message "clf: cannot start iod 2
 * (127.0.0.1:7003): address already in use".
 */
int daemon_addr_check(const struct tool_daemon *d);

/* mkdir -p path, creating missing directories with mode.  0 or a
 * negative errno with a message naming the directory. */
int daemon_mkdirs(const char *path, mode_t mode);

/*
 * daemon_start - start d from program with configuration conf_path and
 * wait until it answers an authenticated PING
 *
 * Creates the storage directory if needed.  The daemon logs to
 * <dir>/<program>.log.  Waits at most timeout_ms in all.  Returns 0 with
 * the daemon's pid (from its pid file) in *pid, or a negative errno with
 * a message "clf: cannot start iod 2 (127.0.0.1:7003): <why>"; on
 * failure nothing started by this call is left running.
 */
int daemon_start(const struct clf_config *cfg, const struct tool_daemon *d,
		 const char *program, const char *conf_path, int timeout_ms,
		 pid_t *pid);

/* One process to stop, and how it went. */
struct daemon_stop {
	pid_t pid;		/* in: the process; <= 0 to skip */
	const char *prog;	/* in: its program, borrowed */
	int result;		/* out: 0 exited on SIGTERM; 1 had to be
				   killed; -errno: could not stop it */
};

/*
 * daemons_stop - SIGTERM every process of s, wait up to term_ms for all
 * of them, SIGKILL the ones left and wait up to kill_ms more.  Results
 * in s[i].result; the processes are not ours to reap, so "gone" means
 * gone or a zombie.
 */
void daemons_stop(struct daemon_stop *s, size_t n, int term_ms, int kill_ms);

#endif /* CLF_TOOL_DAEMON_CTL_H */
