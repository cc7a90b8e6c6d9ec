// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon_ctl.c -- the daemons of a configuration as processes of this
 * host: locality, pid files, programs, start and stop.
 */
#define _GNU_SOURCE	/* O_TMPFILE, mkostemp */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "tool.h"
#include "daemon_ctl.h"
#include "error.h"
#include "probe.h"
#include "transport.h"

/* How often the waits below look again, in milliseconds. */
#define POLL_MS 20

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const char *daemon_program(enum daemon_role role)
{
	return role == DAEMON_METAD ? "metad" : "iod";
}

/* ------------------------------------------------------------------ */
/* Which daemons live here                                             */
/* ------------------------------------------------------------------ */

static bool addr_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
	       in6->sin6_addr.s6_addr[12] == 127;
}

/* Same address, whatever the ports. */
static bool addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return IN6_ARE_ADDR_EQUAL(
			&((const struct sockaddr_in6 *)a)->sin6_addr,
			&((const struct sockaddr_in6 *)b)->sin6_addr);
	return false;
}

int daemon_host_is_local(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct ifaddrs *ifs, *ifa;
	int rc, local = 0;

	if (!*host || strcasecmp(host, "localhost") == 0)
		return 1;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc)
		return clf_fail(EHOSTUNREACH, "clf: cannot resolve '%s': %s",
				host, rc == EAI_SYSTEM ? strerror(errno)
						       : gai_strerror(rc));
	for (ai = res; ai && !local; ai = ai->ai_next)
		local = addr_is_loopback(ai->ai_addr);
	if (local)
		goto free_res;
	if (getifaddrs(&ifs)) {
		local = clf_fail(errno, "clf: cannot list this host's addresses: %s",
				 strerror(errno));
		goto free_res;
	}
	for (ai = res; ai && !local; ai = ai->ai_next)
		for (ifa = ifs; ifa && !local; ifa = ifa->ifa_next)
			local = ifa->ifa_addr &&
				addr_same_host(ai->ai_addr, ifa->ifa_addr);
	freeifaddrs(ifs);
free_res:
	freeaddrinfo(res);
	return local;
}

static int daemon_init(struct tool_daemon *d, enum daemon_role role,
		       uint32_t index, const struct clf_config_daemon *conf)
{
	const char *prog = daemon_program(role);
	int n;

	d->role = role;
	d->index = index;
	d->conf = conf;
	if (role == DAEMON_METAD && index == 0)
		snprintf(d->name, sizeof(d->name), "metad");
	else if (role == DAEMON_METAD)
		snprintf(d->name, sizeof(d->name), "metad %u", index);
	else
		snprintf(d->name, sizeof(d->name), "iod %u", index);
	n = snprintf(d->pidfile, sizeof(d->pidfile), "%s/%s.pid", conf->dir,
		     prog);
	if (n < 0 || (size_t)n >= sizeof(d->pidfile))
		return clf_fail(ENAMETOOLONG, "clf: %s: directory %s too long",
				d->name, conf->dir);
	d->local = daemon_host_is_local(conf->host);
	if (d->local < 0)
		snprintf(d->local_why, sizeof(d->local_why), "%s",
			 clf_error_reason());
	return 0;
}

int daemons_list(const struct clf_config *cfg, struct tool_daemon **out,
		 size_t *n)
{
	size_t count = (size_t)cfg->nmetads + (size_t)cfg->niods;
	struct tool_daemon *ds = calloc(count, sizeof(*ds));
	int err;

	if (!ds)
		return clf_fail(ENOMEM, "clf: out of memory");
	err = daemon_init(&ds[0], DAEMON_METAD, 0, &cfg->metad);
	for (uint32_t i = 0; !err && i < cfg->niods; i++)
		err = daemon_init(&ds[1 + i], DAEMON_IOD, i, &cfg->iods[i]);
	/* The other metads of a spread namespace come last, so that ds[0]
	 * stays metad 0 and ds[1..niods] the iods. */
	for (uint32_t i = 1; !err && i < cfg->nmetads; i++)
		err = daemon_init(&ds[cfg->niods + i], DAEMON_METAD, i,
				  &cfg->metads[i]);
	if (err) {
		free(ds);
		return err;
	}
	*out = ds;
	*n = count;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Processes and pid files                                             */
/* ------------------------------------------------------------------ */

/* Whether the executable of pid is called prog, even once replaced on
 * disk by a rebuild (the link then ends in " (deleted)"). */
static bool exe_is(pid_t pid, const char *prog)
{
	char path[64], target[PATH_MAX];
	const char *base;
	ssize_t n;
	size_t plen = strlen(prog);

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	return strncmp(base, prog, plen) == 0 &&
	       (base[plen] == '\0' || strcmp(base + plen, " (deleted)") == 0);
}

bool daemon_proc_alive(pid_t pid, const char *prog)
{
	char path[64], buf[512];
	const char *open_p, *close_p;
	size_t len;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (access("/proc/self/stat", F_OK) == 0)
			return false;	/* /proc is there: pid is gone */
		return kill(pid, 0) == 0 || errno == EPERM;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;	/* exited between open and read */
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses. */
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p || close_p[1] != ' ')
		return false;
	if (close_p[2] == 'Z' || close_p[2] == 'X' || close_p[2] == 'x')
		return false;
	/* The kernel keeps the first 15 bytes of the name; a daemon may
	 * also have renamed its main thread, hence the executable too. */
	len = (size_t)(close_p - open_p - 1);
	if (len == strnlen(prog, 15) && memcmp(open_p + 1, prog, len) == 0)
		return true;
	return exe_is(pid, prog);
}

int daemon_pid_check(const struct tool_daemon *d, pid_t *pid)
{
	char buf[32], *end;
	ssize_t n;
	long v;
	int fd;

	*pid = 0;
	fd = open(d->pidfile, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return DAEMON_PID_NONE;
	if (fd < 0)
		return clf_fail(errno, "clf: cannot read %s: %s", d->pidfile,
				strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return clf_fail(e, "clf: cannot read %s: %s", d->pidfile,
				strerror(e));
	}
	close(fd);
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	/* Half written, or not a pid file at all: nothing to trust. */
	if (errno || end == buf || *end || v < 2 || v > INT32_MAX)
		return DAEMON_PID_STALE;
	*pid = (pid_t)v;
	return daemon_proc_alive(*pid, daemon_program(d->role))
		       ? DAEMON_PID_ALIVE
		       : DAEMON_PID_STALE;
}

/* ------------------------------------------------------------------ */
/* Programs                                                            */
/* ------------------------------------------------------------------ */

static bool is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

/* dir/a (b NULL) or dir/a/b into buf when that is an executable. */
static bool try_program(char *buf, size_t len, const char *dir,
			const char *a, const char *b)
{
	int n = b ? snprintf(buf, len, "%s/%s/%s", dir, a, b)
		  : snprintf(buf, len, "%s/%s", dir, a);

	return n > 0 && (size_t)n < len && is_executable(buf);
}

int daemon_find_program(const char *prog, char *buf, size_t len)
{
	const char *bindir = getenv("CLF_BIN_DIR");
	const char *path = getenv("PATH");
	char exe[PATH_MAX], dir[PATH_MAX];
	char *slash;
	ssize_t n;

	if (bindir && *bindir) {
		/* An install (bin/metad) or a build tree (metad/metad). */
		if (try_program(buf, len, bindir, prog, NULL) ||
		    try_program(buf, len, bindir, prog, prog))
			return 0;
		return clf_fail(ENOENT,
				"clf: no %s program in $CLF_BIN_DIR (%s/%s or %s/%s/%s)",
				prog, bindir, prog, bindir, prog, prog);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		n = snprintf(dir, sizeof(dir), "%s/..", exe);
		if ((n > 0 && (size_t)n < sizeof(dir) &&
		     try_program(buf, len, dir, prog, prog)) ||
		    try_program(buf, len, exe, prog, NULL))
			return 0;
	} else {
		snprintf(exe, sizeof(exe), "(unknown: no /proc/self/exe)");
	}
	while (path && *path) {
		size_t dlen = strcspn(path, ":");

		/* An empty element of PATH means the working directory. */
		n = snprintf(dir, sizeof(dir), "%.*s", (int)dlen, path);
		if (n >= 0 && (size_t)n < sizeof(dir) &&
		    try_program(buf, len, dlen ? dir : ".", prog, NULL))
			return 0;
		path += dlen + (path[dlen] == ':');
	}
	return clf_fail(ENOENT,
			"clf: cannot find the %s program (looked in %s/../%s/, %s/ and $PATH); set CLF_BIN_DIR to its directory",
			prog, exe, prog, exe);
}

/* ------------------------------------------------------------------ */
/* Starting                                                            */
/* ------------------------------------------------------------------ */

int daemon_addr_check(const struct tool_daemon *d)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res, *ai;
	int one = 1, err = 0;

	if (getaddrinfo(d->conf->host, d->conf->port, &hints, &res))
		return 0;
	for (ai = res; ai && !err; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				ai->ai_protocol);

		if (fd < 0)
			continue;
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) &&
		    (errno == EADDRINUSE || errno == EADDRNOTAVAIL))
			err = -errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (err == -EADDRINUSE)
		return clf_fail(EADDRINUSE,
				"clf: cannot start %s (%s): address already in use",
				d->name, d->conf->addr);
	if (err)
		return clf_fail(EADDRNOTAVAIL,
				"clf: cannot start %s (%s): not an address of this host",
				d->name, d->conf->addr);
	return 0;
}

int daemon_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX], *p, c;
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return clf_fail(ENAMETOOLONG, "clf: cannot create %s: too long",
				path);
	memcpy(buf, path, len + 1);
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			return clf_fail(errno, "clf: cannot create %s: %s", buf,
					strerror(errno));
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

/*
 * A file for the daemon's standard error, with no name: what the daemon
 * says before it is ready is read back from it, and a daemon that keeps
 * the descriptor after daemonizing writes into it harmlessly (a pipe
 * would hand it SIGPIPE once we have gone).
 */
static int open_scratch(const char *dir)
{
	char tmpl[PATH_MAX];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	snprintf(tmpl, sizeof(tmpl), "%s/.clf-start-XXXXXX", dir);
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		return clf_fail(errno, "clf: cannot create a file in %s: %s",
				dir, strerror(errno));
	unlink(tmpl);
	return fd;
}

/*
 * The last line the daemon wrote on fd, without the daemon's own prefix
 * ("iod 2: ", "metad: ", "clf: "), which the caller's message repeats.
 */
static void last_line(int fd, const char *prog, char *buf, size_t len)
{
	char text[4096];
	struct stat st;
	off_t from = 0;
	ssize_t n;
	char *line, *end, *p;

	buf[0] = '\0';
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(text) - 1)
		from = st.st_size - (off_t)sizeof(text) + 1;
	n = pread(fd, text, sizeof(text) - 1, from);
	if (n <= 0)
		return;
	text[n] = '\0';
	end = text + n;
	while (end > text && isspace((unsigned char)end[-1]))
		*--end = '\0';
	line = strrchr(text, '\n');
	line = line ? line + 1 : text;
	p = line;
	if (strncmp(p, prog, strlen(prog)) == 0) {
		p += strlen(prog);
		if (*p == ' ' || *p == '[')
			while (*p && *p != ':')
				p++;
		if (p[0] == ':' && p[1] == ' ')
			line = p + 2;
	}
	if (strncmp(line, "clf: ", 5) == 0)
		line += 5;
	n = (ssize_t)strnlen(line, len - 1);
	memcpy(buf, line, (size_t)n);
	buf[n] = '\0';
}

/* In the child: stdin and stdout on /dev/null, stderr on errfd, exec.
 * Only async-signal-safe calls from here on. */
static void __attribute__((noreturn))
exec_daemon(const char *program, char *const argv[], int errfd)
{
	static const char msg[] = "cannot execute the program\n";
	int null = open("/dev/null", O_RDWR);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	dup2(errfd, STDERR_FILENO);
	execv(program, argv);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

/* Reap child within the deadline: 0 with its status, or -ETIMEDOUT. */
static int wait_child(pid_t child, int64_t deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(child, status, WNOHANG);

		if (r == child)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (clf_now_ms() >= deadline)
			return -ETIMEDOUT;
		sleep_ms(POLL_MS / 2);
	}
}

/* After the first process said it is ready: the pid file names a live
 * daemon, which answers PING. */
static int wait_ready(const struct clf_config *cfg,
		      const struct tool_daemon *d, const char *log,
		      int64_t deadline, pid_t *pid)
{
	char why[160];
	int state, err = -ETIMEDOUT;

	for (;;) {
		int64_t left = deadline - clf_now_ms();

		state = daemon_pid_check(d, pid);
		if (state < 0)
			return state;
		if (state == DAEMON_PID_ALIVE) {
			if (left > cfg->timeout_ms)
				left = cfg->timeout_ms;
			err = probe_ping_addr(cfg, d->conf->addr,
					      left < 1 ? 1 : (int)left);
			if (!err)
				return 0;
			if (err == -EACCES || err == -EPROTONOSUPPORT)
				break;
		} else if (state == DAEMON_PID_STALE && *pid > 0) {
			return clf_fail(ESRCH,
					"clf: cannot start %s (%s): it exited right after starting; see %s",
					d->name, d->conf->addr, log);
		}
		if (clf_now_ms() >= deadline)
			break;
		sleep_ms(POLL_MS);
	}
	if (state != DAEMON_PID_ALIVE)
		return clf_fail(ETIMEDOUT,
				"clf: cannot start %s (%s): it wrote no pid file %s; see %s",
				d->name, d->conf->addr, d->pidfile, log);
	tool_fmt_reason(err, why, sizeof(why));
	return clf_fail_neg(err,
			    "clf: cannot start %s (%s): it does not answer: %s; see %s",
			    d->name, d->conf->addr, why, log);
}

/* The daemon's first process failed or timed out: say why. */
static int start_failed(const struct tool_daemon *d, int errfd, int status,
			const char *log, int timeout_ms)
{
	char line[512];

	if (status < 0)
		return clf_fail(ETIMEDOUT,
				"clf: cannot start %s (%s): not ready within %d s; see %s",
				d->name, d->conf->addr, timeout_ms / 1000, log);
	last_line(errfd, daemon_program(d->role), line, sizeof(line));
	if (line[0])
		return clf_fail(EIO, "clf: cannot start %s (%s): %s", d->name,
				d->conf->addr, line);
	if (WIFSIGNALED(status))
		return clf_fail(EIO,
				"clf: cannot start %s (%s): killed by signal %d; see %s",
				d->name, d->conf->addr, WTERMSIG(status), log);
	return clf_fail(EIO, "clf: cannot start %s (%s): exit status %d; see %s",
			d->name, d->conf->addr, WEXITSTATUS(status), log);
}

/* Whatever a failed start left behind, by its pid file. */
static void kill_leftover(const struct tool_daemon *d)
{
	struct daemon_stop s = { .prog = daemon_program(d->role) };

	if (daemon_pid_check(d, &s.pid) == DAEMON_PID_ALIVE) {
		daemons_stop(&s, 1, DAEMON_KILL_TIMEOUT_MS,
			     DAEMON_KILL_TIMEOUT_MS);
		unlink(d->pidfile);
	}
}

int daemon_start(const struct clf_config *cfg, const struct tool_daemon *d,
		 const char *program, const char *conf_path, int timeout_ms,
		 pid_t *pid)
{
	int64_t deadline = clf_now_ms() + timeout_ms;
	const char *prog = daemon_program(d->role);
	char log[PATH_MAX], index[16];
	char *argv[10];
	int argc = 0, errfd, status = -1, err;
	pid_t child, dpid;

	err = daemon_addr_check(d);
	if (err)
		return err;
	err = daemon_mkdirs(d->conf->dir, 0700);
	if (err)
		return err;
	if ((size_t)snprintf(log, sizeof(log), "%s/%s.log", d->conf->dir,
			     prog) >= sizeof(log))
		return clf_fail(ENAMETOOLONG, "clf: %s: directory %s too long",
				d->name, d->conf->dir);
	snprintf(index, sizeof(index), "%u", d->index);
	/* execv wants char *const[]: these strings are never written. */
	argv[argc++] = (char *)program;
	argv[argc++] = (char *)"-c";
	argv[argc++] = (char *)conf_path;
	if (d->role == DAEMON_IOD || d->index > 0) {
		argv[argc++] = (char *)"-n";
		argv[argc++] = index;
	}
	argv[argc++] = (char *)"--log";
	argv[argc++] = log;
	argv[argc] = NULL;

	errfd = open_scratch(d->conf->dir);
	if (errfd < 0)
		return errfd;
	/* Or the child would inherit our buffered output. */
	fflush(NULL);
	child = fork();
	if (child < 0) {
		err = clf_fail(errno, "clf: cannot start %s: fork: %s", d->name,
			       strerror(errno));
		goto close_errfd;
	}
	if (child == 0)
		exec_daemon(program, argv, errfd);
	err = wait_child(child, deadline, &status);
	if (err == -ETIMEDOUT) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		kill_leftover(d);
		err = start_failed(d, errfd, -1, log, timeout_ms);
		goto close_errfd;
	}
	if (err) {
		err = clf_fail_neg(err, "clf: cannot start %s: waitpid: %s",
				   d->name, strerror(-err));
		goto close_errfd;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		kill_leftover(d);
		err = start_failed(d, errfd, status, log, timeout_ms);
		goto close_errfd;
	}
	err = wait_ready(cfg, d, log, deadline, &dpid);
	if (err) {
		kill_leftover(d);
		goto close_errfd;
	}
	*pid = dpid;
close_errfd:
	close(errfd);
	return err;
}

/* ------------------------------------------------------------------ */
/* Stopping                                                            */
/* ------------------------------------------------------------------ */

/* Whether any process of s that we still wait for is alive. */
static bool any_alive(const struct daemon_stop *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].pid > 0 && s[i].result >= 0 &&
		    daemon_proc_alive(s[i].pid, s[i].prog))
			return true;
	return false;
}

static void wait_gone(const struct daemon_stop *s, size_t n, int ms)
{
	int64_t deadline = clf_now_ms() + ms;

	while (any_alive(s, n) && clf_now_ms() < deadline)
		sleep_ms(POLL_MS);
}

void daemons_stop(struct daemon_stop *s, size_t n, int term_ms, int kill_ms)
{
	size_t i;

	for (i = 0; i < n; i++) {
		s[i].result = 0;
		if (s[i].pid > 0 && kill(s[i].pid, SIGTERM) && errno != ESRCH)
			s[i].result = -errno;
	}
	wait_gone(s, n, term_ms);
	for (i = 0; i < n; i++) {
		if (s[i].pid <= 0 || s[i].result < 0 ||
		    !daemon_proc_alive(s[i].pid, s[i].prog))
			continue;
		if (kill(s[i].pid, SIGKILL) == 0)
			s[i].result = 1;
		else if (errno != ESRCH)
			s[i].result = -errno;
	}
	wait_gone(s, n, kill_ms);
	for (i = 0; i < n; i++)
		if (s[i].pid > 0 && s[i].result >= 0 &&
		    daemon_proc_alive(s[i].pid, s[i].prog))
			s[i].result = -ETIMEDOUT;
}
