// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_adhoc.c -- `clf adhoc`: an instance for one job, started by the
 * job's own launcher (mpiexec, srun), stopped when the job says so or
 * the launcher is killed.
 *
 *   mpiexec -n N clf adhoc start --data SHARED [--iods-per-host K] ... &
 *   clf adhoc wait --data SHARED          (until it answers)
 *   ... the job's steps, with CLF_CONFIG=SHARED/clf.conf ...
 *   clf adhoc stop --data SHARED          (stage-out, then stop all)
 *
 * The clf command is not an MPI program: each rank learns its rank and
 * the job's size from the launcher's environment (PMI_RANK/PMI_SIZE of
 * hydra, SLURM_PROCID/SLURM_NTASKS of srun) and the ranks meet through
 * files in SHARED/adhoc/, a directory every host of the job sees:
 *
 *   instance    written first by rank 0: a name of this instance alone
 *   rank.R      rank R's host (where its daemons listen)
 *   conf        written by rank 0 once every rank is known: the iods
 *               are the first K ranks of each host; then SHARED/clf.conf
 *   metad.up    rank 0's metad answers
 *   iod.I.up    iod I answers; when all are up rank 0 writes `ready`
 *   stop        asked by `clf adhoc stop` or by a rank that got SIGTERM
 *               or SIGINT
 *   staged      rank 0 copied the --stage-out trees out (iods still up)
 *   iod.I.down  iod I stopped; after all, rank 0 stops metad: `down`
 *   failed      why the instance could not start (everyone stops)
 *
 * Each daemon runs in the foreground as a child of its rank, with
 * PR_SET_PDEATHSIG: when the launcher kills the rank, the daemon goes
 * with it, so a killed job leaves no daemon behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"
#include "daemon_ctl.h"
#include "auth.h"
#include "error.h"
#include "probe.h"
#include "tool_fs.h"
#include "tool_stage.h"

#define ADHOC_POLL_MS 50
#define ADHOC_MEET_TIMEOUT_S 120	/* all ranks known, daemons up */
#define ADHOC_STAGE_TIMEOUT_S 3600	/* stop asked to iods stopped */
#define ADHOC_MAX_STAGE 16

struct adhoc_opts {
	const char *data;	/* shared directory */
	const char *local;	/* iods' storage root, default data */
	const char *config_out;
	char *backing;		/* --backing DIR, absolute; owned */
	const char *stage[ADHOC_MAX_STAGE];	/* "clf:/src=DIR" */
	int nstage;
	long per_host;
	long base_port;
	long timeout_s;
};

/* Signals received: the first stops the instance in order (stage-out
 * first), a second one stops waiting for the other ranks. */
static volatile sig_atomic_t adhoc_signal;

static void on_signal(int sig)
{
	(void)sig;
	adhoc_signal++;
}

static void adhoc_help(void)
{
	printf("usage: clf adhoc start --data DIR [--iods-per-host K] [--local DIR]\n"
	       "                       [--base-port P] [--config-out FILE]\n"
	       "                       [--stage-out CLFPATH=DIR]... [--backing DIR]\n"
	       "       clf adhoc wait --data DIR [--timeout S]\n"
	       "       clf adhoc stop --data DIR [--timeout S]\n"
	       "\n"
	       "An instance for one job.  `start` runs as every rank of a job step\n"
	       "(mpiexec -n N clf adhoc start ..., or srun): rank 0 runs metad, the\n"
	       "first K ranks of each host (default 1) run an iod, on ports P\n"
	       "(metad), P+1... (default $CLF_BASE_PORT or 7000).  DIR is a\n"
	       "directory every host sees: the ranks meet there, and the\n"
	       "configuration of the job's other steps is DIR/clf.conf (also\n"
	       "copied to --config-out).  The step stays up until `clf adhoc\n"
	       "stop`, or until a rank gets SIGTERM or SIGINT; then rank 0 copies\n"
	       "each --stage-out CLFPATH out to DIR (clf stage-out) and every\n"
	       "daemon stops.  A rank killed outright takes its daemons with it.\n"
	       "\n"
	       "  --local DIR   the iods store their subfiles in DIR/iod<i> (a\n"
	       "                host's own disk); default the shared DIR\n"
	       "  --backing B   back the instance by B, a directory of a persistent\n"
	       "                file system: rank 0 runs `clf stager`, which writes\n"
	       "                every file closed after a write back to B; stop\n"
	       "                waits until all of it is written back (docs/staging.md)\n"
	       "\n"
	       "`wait` returns when the instance answers (printing the\n"
	       "configuration's path), `stop` when every daemon has stopped.\n"
	       "Exit status: 0 done, 1 failure, 2 bad usage.\n");
}

static int parse_args(int argc, char **argv, struct adhoc_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "local", required_argument, NULL, 'l' },
		{ "config-out", required_argument, NULL, 'o' },
		{ "stage-out", required_argument, NULL, 's' },
		{ "backing", required_argument, NULL, 'b' },
		{ "iods-per-host", required_argument, NULL, 'k' },
		{ "base-port", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->data = optarg;
			break;
		case 'l':
			o->local = optarg;
			break;
		case 'o':
			o->config_out = optarg;
			break;
		case 's':
			if (o->nstage == ADHOC_MAX_STAGE)
				return tool_usage("adhoc", "at most %d --stage-out",
						  ADHOC_MAX_STAGE);
			if (!strchr(optarg, '=') || !tool_is_clf_path(optarg))
				return tool_usage("adhoc",
						  "--stage-out '%s': not CLFPATH=DIR (clf:/a=/local/dir)",
						  optarg);
			o->stage[o->nstage++] = optarg;
			break;
		case 'b':
			free(o->backing);
			o->backing = optarg[0] == '/' ? strdup(optarg)
						      : realpath(".", NULL);
			if (o->backing && optarg[0] != '/') {
				char *abs = malloc(strlen(o->backing) +
						   strlen(optarg) + 2);

				if (abs)
					sprintf(abs, "%s/%s", o->backing, optarg);
				free(o->backing);
				o->backing = abs;
			}
			if (!o->backing)
				return tool_usage("adhoc", "--backing '%s': %s",
						  optarg, strerror(errno));
			break;
		case 'k':
			if (tool_parse_long(optarg, 1, 64, &o->per_host))
				return tool_usage("adhoc",
						  "--iods-per-host '%s': not a number from 1 to 64",
						  optarg);
			break;
		case 'p':
			if (tool_parse_long(optarg, 1, 65535, &o->base_port))
				return tool_usage("adhoc",
						  "--base-port '%s': not a port", optarg);
			break;
		case 't':
			if (tool_parse_long(optarg, 1, 86400, &o->timeout_s))
				return tool_usage("adhoc",
						  "--timeout '%s': not seconds from 1 to 86400",
						  optarg);
			break;
		case 'h':
			adhoc_help();
			return -1;
		default:
			return tool_bad_option("adhoc", c, argv);
		}
	}
	if (!o->data)
		return tool_usage("adhoc", "--data DIR is needed (a directory every host sees)");
	return 0;
}

/* DIR/adhoc/<name>, or DIR/adhoc itself for name NULL. */
static void state_path(const struct adhoc_opts *o, const char *name,
		       char *buf, size_t len)
{
	snprintf(buf, len, "%s/adhoc%s%s", o->data, name ? "/" : "",
		 name ? name : "");
}

static bool state_has(const struct adhoc_opts *o, const char *name)
{
	char p[PATH_MAX];

	state_path(o, name, p, sizeof(p));
	return access(p, F_OK) == 0;
}

/* Write text to path whole or not at all (temporary file renamed). */
static int put_file(const char *path, const char *text, mode_t mode)
{
	char tmp[PATH_MAX + 16];
	size_t len = strlen(text);
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) ||
	    rename(tmp, path))
		err = clf_fail(errno, "clf adhoc: cannot write %s: %s", path,
			       strerror(errno));
	if (fd >= 0)
		close(fd);
	if (err)
		unlink(tmp);
	return err;
}

static int state_put(const struct adhoc_opts *o, const char *name,
		     const char *text)
{
	char p[PATH_MAX];

	state_path(o, name, p, sizeof(p));
	return put_file(p, text, 0600);
}

/* Read a small state file into buf; 0 or a negative errno. */
static int state_get(const struct adhoc_opts *o, const char *name, char *buf,
		     size_t len)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	state_path(o, name, p, sizeof(p));
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static void sleep_poll(void)
{
	struct timespec ts = { 0, ADHOC_POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* Tell every rank to give up, saying why (first writer wins). */
static void fail_all(const struct adhoc_opts *o, const char *why)
{
	if (!state_has(o, "failed"))
		state_put(o, "failed", why);
}

/*
 * Wait until state file name exists; false (with a message) when the
 * instance failed, a signal came, or timeout_s passed.
 */
static bool wait_for(const struct adhoc_opts *o, const char *name,
		     long timeout_s, int signals)
{
	time_t end = time(NULL) + timeout_s;
	char why[512];

	for (;;) {
		if (state_has(o, name))
			return true;
		if (state_get(o, "failed", why, sizeof(why)) == 0) {
			fprintf(stderr, "clf adhoc: the instance failed: %s\n",
				why);
			return false;
		}
		if (adhoc_signal > signals || time(NULL) >= end) {
			fprintf(stderr,
				"clf adhoc: gave up waiting for %s/adhoc/%s\n",
				o->data, name);
			return false;
		}
		sleep_poll();
	}
}

/* The launcher's name for this process: rank, size, and host. */
struct adhoc_rank {
	long rank, size;
	char host[256];
};

static int env_num(const char *const names[], long *out)
{
	for (int i = 0; names[i]; i++) {
		const char *v = getenv(names[i]);

		if (v && !tool_parse_long(v, 0, 1L << 30, out))
			return 0;
	}
	return -ENOENT;
}

static int find_rank(struct adhoc_rank *r)
{
	static const char *const ranks[] = { "PMI_RANK", "PMIX_RANK",
		"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", NULL };
	static const char *const sizes[] = { "PMI_SIZE", "SLURM_NTASKS",
		"SLURM_NPROCS", "OMPI_COMM_WORLD_SIZE", NULL };
	const char *h = getenv("CLF_ADHOC_HOST");

	if (env_num(ranks, &r->rank) || env_num(sizes, &r->size) ||
	    r->rank >= r->size)
		return clf_fail(EINVAL,
				"clf adhoc: start runs under a launcher (mpiexec, srun): no PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS here");
	if (h && *h)
		snprintf(r->host, sizeof(r->host), "%s", h);
	else if (gethostname(r->host, sizeof(r->host)))
		return clf_fail(errno, "clf adhoc: gethostname: %s",
				strerror(errno));
	r->host[sizeof(r->host) - 1] = '\0';
	return 0;
}

/*
 * Rank 0: every rank's host known, the layout of the instance: iod i is
 * the (i)-th rank, in rank order, among the first per_host ranks of its
 * host.  iod_of[rank] is its iod index or -1.  Writes DIR/clf.conf.
 */
static int plan(const struct adhoc_opts *o, const struct adhoc_rank *me,
		long *iod_of, char (*hosts)[256])
{
	struct clf_secret s;
	char hex[CLF_SECRET_HEX_MAX], p[PATH_MAX], name[32];
	long base = o->base_port, niods = 0;
	size_t cap = 4096, len = 0;
	char *text;
	int err;

	for (long r = 0; r < me->size; r++) {
		long same = 0;

		snprintf(name, sizeof(name), "rank.%ld", r);
		if (state_get(o, name, hosts[r], 256))
			return clf_fail(EIO, "clf adhoc: %s/adhoc/%s vanished",
					o->data, name);
		for (long q = 0; q < r; q++)
			if (!strcmp(hosts[q], hosts[r]))
				same++;
		iod_of[r] = same < o->per_host ? niods++ : -1;
	}
	if (base + niods > 65535)
		return clf_fail(EINVAL, "clf adhoc: %ld iods from port %ld: past 65535",
				niods, base);
	err = clf_secret_generate(&s);
	if (err)
		return clf_fail_neg(err, "clf adhoc: cannot make a secret: %s",
				    strerror(-err));
	err = clf_secret_to_hex(&s, hex, sizeof(hex));
	clf_secret_clear(&s);
	if (err)
		return err;
	cap += (size_t)niods * (2 * PATH_MAX + 300) + PATH_MAX;
	text = malloc(cap);
	if (!text)
		return clf_fail(ENOMEM, "clf: out of memory");
	len += snprintf(text + len, cap - len,
			"; clf adhoc: the instance of one job\n[global]\n"
			"secret = %s\ndata_dir = %s\nstripe_count = %ld\n"
			"\n[metad]\naddress = %s:%ld\ndir = %s/meta\n",
			hex, o->data, niods, hosts[0], base, o->data);
	for (long r = 0; r < me->size; r++)
		if (iod_of[r] >= 0)
			len += snprintf(text + len, cap - len,
					"\n[iod] ; rank %ld\naddress = %s:%ld\ndir = %s/iod%ld\n",
					r, hosts[r], base + 1 + iod_of[r],
					o->local, iod_of[r]);
	if (o->backing)
		len += snprintf(text + len, cap - len,
				"\n[global]\nbacking = %s\n", o->backing);
	explicit_bzero(hex, sizeof(hex));
	snprintf(p, sizeof(p), "%s/%s", o->data, CLF_CONFIG_FILE_NAME);
	err = put_file(p, text, 0600);
	explicit_bzero(text, len);
	free(text);
	return err;
}

/* A daemon of ours: a child in the foreground, dying with us. */
struct adhoc_daemon {
	struct tool_daemon d;
	pid_t pid;
};

static int start_daemon(const struct clf_config *cfg, const char *conf,
			struct adhoc_daemon *a)
{
	const char *prog = daemon_program(a->d.role);
	char program[PATH_MAX], log[PATH_MAX], index[16];
	pid_t parent = getpid();
	int64_t end;
	int err, status;

	err = daemon_find_program(prog, program, sizeof(program));
	if (!err)
		err = daemon_mkdirs(a->d.conf->dir, 0700);
	if (!err)
		err = daemon_addr_check(&a->d);
	if (err)
		return err;
	snprintf(log, sizeof(log), "%s/%s.log", a->d.conf->dir, prog);
	snprintf(index, sizeof(index), "%u", a->d.index);
	fflush(NULL);
	a->pid = fork();
	if (a->pid < 0)
		return clf_fail(errno, "clf adhoc: fork: %s", strerror(errno));
	if (a->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* The daemon dies with its rank, however the rank ends,
		 * but only the rank stops it otherwise: a launcher that
		 * signals the rank's process group would stop metad
		 * before the stage-out. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_IGN);	/* the rank decides */
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		if (a->d.role == DAEMON_IOD)
			execl(program, program, "-f", "-c", conf, "-n", index,
			      "--log", log, (char *)NULL);
		else
			execl(program, program, "-f", "-c", conf, "--log", log,
			      (char *)NULL);
		_exit(127);
	}
	end = clf_now_ms() + DAEMON_START_TIMEOUT_MS;
	for (;;) {
		if (waitpid(a->pid, &status, WNOHANG) == a->pid) {
			a->pid = 0;
			return clf_fail(EIO,
					"clf adhoc: %s (%s) exited at start; see %s",
					a->d.name, a->d.conf->addr, log);
		}
		if (!probe_ping_addr(cfg, a->d.conf->addr, 1000))
			return 0;
		if (clf_now_ms() >= end) {
			kill(a->pid, SIGKILL);
			waitpid(a->pid, NULL, 0);
			a->pid = 0;
			return clf_fail(ETIMEDOUT,
					"clf adhoc: %s (%s) does not answer; see %s",
					a->d.name, a->d.conf->addr, log);
		}
		sleep_poll();
	}
}

static void stop_daemon(struct adhoc_daemon *a)
{
	struct daemon_stop s = { .pid = a->pid,
				 .prog = daemon_program(a->d.role) };

	if (a->pid <= 0)
		return;
	daemons_stop(&s, 1, DAEMON_TERM_TIMEOUT_MS, DAEMON_KILL_TIMEOUT_MS);
	waitpid(a->pid, NULL, 0);
	a->pid = 0;
	printf("clf adhoc: stopped %s (%s)\n", a->d.name, a->d.conf->addr);
	fflush(stdout);
}

/* Whether our daemon died on its own (said once). */
static bool daemon_died(struct adhoc_daemon *a)
{
	int status;

	if (a->pid <= 0 || waitpid(a->pid, &status, WNOHANG) != a->pid)
		return false;
	fprintf(stderr, "clf adhoc: %s (%s) exited on its own (status 0x%x)\n",
		a->d.name, a->d.conf->addr, status);
	a->pid = 0;
	return true;
}

/*
 * Rank 0 with --backing, once the instance is ready: `clf stager -f` as
 * a child that dies with the rank (its journal keeps what it had to
 * do), logging to DIR/stager.log.  Its pid, or -1 with the reason said.
 */
static pid_t start_stager(const struct adhoc_opts *o, const char *conf)
{
	char self[PATH_MAX], log[PATH_MAX];
	pid_t parent = getpid(), pid;

	if (!realpath("/proc/self/exe", self)) {
		fprintf(stderr, "clf adhoc: /proc/self/exe: %s\n",
			strerror(errno));
		return -1;
	}
	snprintf(log, sizeof(log), "%s/stager.log", o->data);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			      0644);

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_IGN);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(self, self, "-c", conf, "stager", "-f", (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		fprintf(stderr, "clf adhoc: cannot start the stager: %s\n",
			strerror(errno));
	else
		printf("clf adhoc: stager writes back to %s (log %s)\n",
		       o->backing, log);
	return pid;
}

/*
 * Rank 0 at stop, every daemon still up: the stager finishes what is
 * noted (SIGTERM), then `clf stager --drain` does what is left and says
 * which file could not be written back and why.  0 or -EIO.
 */
static int end_stager(const struct adhoc_opts *o,
		      const struct clf_config *cfg, pid_t pid)
{
	char errfile[PATH_MAX], line[1024];
	int status, err;
	FILE *f;

	if (pid > 0) {
		printf("clf adhoc: waiting for the write-back to %s\n",
		       cfg->backing);
		fflush(stdout);
		kill(pid, SIGTERM);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	/* What is not written back, for `clf adhoc stop` to say too. */
	state_path(o, "writeback", errfile, sizeof(errfile));
	err = tool_stager_end(cfg, true, errfile);
	f = fopen(errfile, "r");
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stderr);
	if (f)
		fclose(f);
	if (!err)
		unlink(errfile);
	return err;
}

/* Rank 0 at stop: `clf stage-out` of each CLFPATH=DIR, as a child. */
static int stage_out(const struct adhoc_opts *o, const char *conf)
{
	char self[PATH_MAX], src[PATH_MAX];
	int rc = 0;

	if (!realpath("/proc/self/exe", self))
		return clf_fail(errno, "clf adhoc: /proc/self/exe: %s",
				strerror(errno));
	for (int i = 0; i < o->nstage; i++) {
		const char *eq = strchr(o->stage[i], '=');
		int status;
		pid_t pid;

		snprintf(src, sizeof(src), "%.*s", (int)(eq - o->stage[i]),
			 o->stage[i]);
		if (daemon_mkdirs(eq + 1, 0700)) {
			tool_fail();
			rc = -EIO;
			continue;
		}
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			execl(self, self, "-c", conf, "stage-out", "-q", src,
			      eq + 1, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "clf adhoc: stage-out of %s to %s failed\n",
				src, eq + 1);
			rc = -EIO;
		} else {
			printf("clf adhoc: staged out %s to %s\n", src, eq + 1);
		}
	}
	fflush(stdout);
	return rc;
}

/*
 * Remove a finished instance's meeting directory at once: renamed away
 * first, then emptied.  Emptied in place, a rank of the new instance
 * that saw conf go would write its rank.R while rank 0 still unlinks
 * the old names, its own among them; rank 0 then waited for that rank
 * until ADHOC_MEET_TIMEOUT_S.  CLF_ADHOC_TEST_CLEAR_MS (tests) pauses
 * after each file removed, which widened that window.
 */
static int clear_state(const struct adhoc_opts *o)
{
	char dir[PATH_MAX], old[PATH_MAX + 32], p[PATH_MAX + 300];
	const char *pause = getenv("CLF_ADHOC_TEST_CLEAR_MS");
	struct timespec ts = { 0, 0 };
	struct dirent *e;
	DIR *d;

	if (pause)
		ts.tv_nsec = (atol(pause) % 1000) * 1000000L;
	state_path(o, NULL, dir, sizeof(dir));
	snprintf(old, sizeof(old), "%s.old.%d", dir, (int)getpid());
	if (rename(dir, old))
		return clf_fail(errno, "clf adhoc: cannot clear %s: %s", dir,
				strerror(errno));
	d = opendir(old);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", old, e->d_name);
			unlink(p);
			nanosleep(&ts, NULL);
		}
	if (d)
		closedir(d);
	rmdir(old);
	return 0;
}

/* Whether the metad of DIR/clf.conf answers: an instance runs there. */
static bool instance_answers(const struct adhoc_opts *o)
{
	struct clf_config *cfg = NULL;
	char conf[PATH_MAX];
	bool up;

	snprintf(conf, sizeof(conf), "%s/%s", o->data, CLF_CONFIG_FILE_NAME);
	if (access(conf, R_OK) || clf_config_parse_file(conf, &cfg))
		return false;
	up = probe_ping_addr(cfg, cfg->metad.addr, 1000) == 0;
	clf_config_free(cfg);
	return up;
}

/*
 * Whether DIR/adhoc holds what an earlier instance left: it stopped
 * (down), failed, or was killed outright (ready, and nobody answers).
 * One that is starting has conf and no ready yet: not stale.
 */
static bool state_stale(const struct adhoc_opts *o)
{
	if (state_has(o, "down") || state_has(o, "failed"))
		return true;
	return state_has(o, "ready") && !instance_answers(o);
}

/*
 * Rank 0, first thing in the new meeting directory: `instance`, a name
 * no earlier instance had.  A waiter that found an earlier instance's
 * files believes ready or failed only once `instance` differs from
 * what it read first (it used to wait for a moment with neither ready,
 * down nor failed, which a loaded machine could let it miss).
 */
static int put_instance(const struct adhoc_opts *o, const struct adhoc_rank *me)
{
	char text[512];
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(text, sizeof(text), "%s %d %lld.%09ld\n", me->host,
		 (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
	return state_put(o, "instance", text);
}

/* Until stop is asked or something ends the instance. */
static void serve(const struct adhoc_opts *o, struct adhoc_daemon *a,
		  size_t na)
{
	for (;;) {
		if (state_has(o, "stop") || state_has(o, "failed"))
			return;
		if (adhoc_signal) {
			state_put(o, "stop", "signal\n");
			return;
		}
		for (size_t i = 0; i < na; i++)
			if (daemon_died(&a[i])) {
				fail_all(o, "a daemon exited on its own");
				return;
			}
		sleep_poll();
	}
}

static int adhoc_start(struct adhoc_opts *o)
{
	struct adhoc_rank me;
	struct clf_config *cfg = NULL;
	struct tool_daemon *ds = NULL;
	struct adhoc_daemon mine[4];
	char conf[PATH_MAX], name[64], dir[PATH_MAX], v[32];
	char (*hosts)[256] = NULL;
	long *iod_of = NULL;
	size_t nd = 0, na = 0;
	int rc = CLF_EXIT_FAIL, stage_rc = 0;
	pid_t stager = -1;
	bool ok = true;

	if (find_rank(&me))
		return tool_fail();
	if (!o->per_host)
		o->per_host = 1;
	if (!o->base_port) {
		const char *b = getenv("CLF_BASE_PORT");

		o->base_port = 7000;
		if (b && tool_parse_long(b, 1, 65535, &o->base_port))
			return tool_usage("adhoc", "CLF_BASE_PORT '%s': not a port", b);
	}
	if (!o->local)
		o->local = o->data;
	snprintf(conf, sizeof(conf), "%s/%s", o->data, CLF_CONFIG_FILE_NAME);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);

	/* What an earlier instance left goes (rank 0) before anyone
	 * meets; a live one is not replaced. */
	if (me.rank == 0 && state_has(o, "conf") && !state_has(o, "down") &&
	    instance_answers(o)) {
		clf_fail(EBUSY, "clf adhoc: an instance runs in %s already: clf adhoc stop --data %s first",
			 o->data, o->data);
		return tool_fail();
	}
	if (me.rank == 0 && (state_has(o, "down") || state_has(o, "failed") ||
			     state_has(o, "conf")) && clear_state(o))
		return tool_fail();
	for (time_t end = time(NULL) + ADHOC_MEET_TIMEOUT_S;
	     me.rank && (state_has(o, "down") || state_has(o, "conf") ||
			 state_has(o, "failed"));) {
		if (adhoc_signal || time(NULL) >= end) {
			fprintf(stderr, "clf adhoc: rank %ld: %s/adhoc still holds an earlier instance\n",
				me.rank, o->data);
			return CLF_EXIT_FAIL;
		}
		sleep_poll();
	}
	state_path(o, NULL, dir, sizeof(dir));
	if (daemon_mkdirs(dir, 0700))
		return tool_fail();
	snprintf(name, sizeof(name), "rank.%ld", me.rank);
	if (me.rank == 0 && put_instance(o, &me))
		return tool_fail();
	if (state_put(o, name, me.host))
		return tool_fail();

	if (me.rank == 0) {
		time_t end = time(NULL) + ADHOC_MEET_TIMEOUT_S;

		for (long r = 1; r < me.size && ok;) {
			snprintf(name, sizeof(name), "rank.%ld", r);
			if (state_has(o, name)) {
				r++;
				continue;
			}
			if (adhoc_signal || time(NULL) >= end) {
				fprintf(stderr, "clf adhoc: rank %ld never came\n", r);
				ok = false;
			}
			sleep_poll();
		}
		hosts = calloc((size_t)me.size, sizeof(*hosts));
		iod_of = calloc((size_t)me.size, sizeof(*iod_of));
		if (ok && (!hosts || !iod_of))
			ok = !clf_fail(ENOMEM, "clf: out of memory");
		if (ok && plan(o, &me, iod_of, hosts))
			ok = false;
		for (long r = 0; ok && r < me.size; r++) {
			if (iod_of[r] < 0)
				continue;
			snprintf(name, sizeof(name), "iod.rank.%ld", r);
			snprintf(v, sizeof(v), "%ld\n", iod_of[r]);
			ok = !state_put(o, name, v);
		}
		if (ok && state_put(o, "conf", "\n"))
			ok = false;
		if (!ok) {
			tool_fail();
			fail_all(o, "rank 0 could not make the configuration");
		}
	}
	ok = ok && wait_for(o, "conf", ADHOC_MEET_TIMEOUT_S, 0);
	if (ok && clf_config_parse_file(conf, &cfg))
		ok = false;
	if (ok && daemons_list(cfg, &ds, &nd))
		ok = false;
	/* This rank's daemons: metad for rank 0, then its iod (rank 0
	 * said which in iod.rank.R). */
	for (size_t i = 0; ok && i < nd; i++)
		if (ds[i].role == DAEMON_METAD && ds[i].index == 0 &&
		    me.rank == 0)
			mine[na++] = (struct adhoc_daemon){ .d = ds[i] };
	snprintf(name, sizeof(name), "iod.rank.%ld", me.rank);
	if (ok && state_get(o, name, v, sizeof(v)) == 0)
		for (size_t i = 0; i < nd; i++)
			if (ds[i].role == DAEMON_IOD &&
			    (long)ds[i].index == atol(v))
				mine[na++] = (struct adhoc_daemon){ .d = ds[i] };
	if (!ok)
		goto out;

	/* metad first, then the iods. */
	for (size_t i = 0; ok && i < na; i++) {
		if (mine[i].d.role == DAEMON_IOD &&
		    !wait_for(o, "metad.up", ADHOC_MEET_TIMEOUT_S, 0)) {
			ok = false;
			break;
		}
		if (start_daemon(cfg, conf, &mine[i])) {
			tool_fail();
			fail_all(o, "a daemon did not start");
			ok = false;
			break;
		}
		printf("clf adhoc: rank %ld runs %s (%s)\n", me.rank,
		       mine[i].d.name, mine[i].d.conf->addr);
		fflush(stdout);
		if (mine[i].d.role == DAEMON_METAD)
			snprintf(name, sizeof(name), "metad.up");
		else
			snprintf(name, sizeof(name), "iod.%u.up",
				 mine[i].d.index);
		state_put(o, name, "\n");
	}
	if (ok && me.rank == 0) {
		for (uint32_t i = 0; ok && i < cfg->niods; i++) {
			snprintf(name, sizeof(name), "iod.%u.up", i);
			ok = wait_for(o, name, ADHOC_MEET_TIMEOUT_S, 0);
		}
		if (ok && o->config_out) {
			FILE *f = fopen(conf, "r");
			char buf[65536];
			size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

			if (f)
				fclose(f);
			buf[n] = '\0';
			if (!n || put_file(o->config_out, buf, 0600)) {
				tool_fail();
				ok = false;
			}
			explicit_bzero(buf, sizeof(buf));
		}
		if (ok) {
			printf("clf adhoc: ready: %u iods, metad %s; CLF_CONFIG=%s\n",
			       cfg->niods, cfg->metad.addr, conf);
			fflush(stdout);
			if (cfg->backing)
				stager = start_stager(o, conf);
			state_put(o, "ready", conf);
		} else {
			fail_all(o, "not every iod started");
		}
	}
	if (ok)
		serve(o, mine, na);

	/* Stop: stage-out while every iod is up, then iods, then metad. */
	if (me.rank == 0) {
		if (ok && cfg->backing && end_stager(o, cfg, stager))
			stage_rc = -EIO;
		if (ok && stage_out(o, conf))
			stage_rc = -EIO;
		state_put(o, "staged", "\n");
	} else if (!wait_for(o, "staged", ADHOC_STAGE_TIMEOUT_S, 1)) {
		fprintf(stderr, "clf adhoc: rank %ld stops without stage-out\n",
			me.rank);
	}
	for (size_t i = 0; i < na; i++)
		if (mine[i].d.role == DAEMON_IOD) {
			stop_daemon(&mine[i]);
			snprintf(name, sizeof(name), "iod.%u.down",
				 mine[i].d.index);
			state_put(o, name, "\n");
		}
	if (me.rank == 0) {
		for (uint32_t i = 0; cfg && i < cfg->niods; i++) {
			time_t end = time(NULL) + ADHOC_MEET_TIMEOUT_S;

			snprintf(name, sizeof(name), "iod.%u.up", i);
			if (!state_has(o, name))
				continue;
			snprintf(name, sizeof(name), "iod.%u.down", i);
			while (!state_has(o, name) && time(NULL) < end)
				sleep_poll();
		}
		for (size_t i = 0; i < na; i++)
			stop_daemon(&mine[i]);
		state_put(o, "down", "\n");
	}
	if (ok && me.rank == 0)
		rc = stage_rc ? CLF_EXIT_FAIL : CLF_EXIT_OK;
	else if (ok)
		rc = CLF_EXIT_OK;
out:
	for (size_t i = 0; i < na; i++)
		stop_daemon(&mine[i]);
	free(ds);
	free(hosts);
	free(iod_of);
	clf_config_free(cfg);
	return rc;
}

/* `stop` once down: what the write-back left, if anything, said. */
static int stop_writeback(const struct adhoc_opts *o)
{
	char path[PATH_MAX], line[1024];
	FILE *f;

	state_path(o, "writeback", path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return CLF_EXIT_OK;
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
	return CLF_EXIT_FAIL;
}

int cmd_adhoc(const struct tool_opts *g, int argc, char **argv)
{
	struct adhoc_opts o = { 0 };
	const char *what;
	char v[PATH_MAX];
	time_t end;
	int rc;

	(void)g;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		adhoc_help();
		return argc < 2 ? CLF_EXIT_USAGE : CLF_EXIT_OK;
	}
	what = argv[1];
	rc = parse_args(argc - 1, argv + 1, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (!strcmp(what, "start")) {
		rc = adhoc_start(&o);
		free(o.backing);
		return rc;
	}
	if (strcmp(what, "wait") && strcmp(what, "stop"))
		return tool_usage("adhoc", "'%s': not start, wait or stop", what);
	end = time(NULL) + (o.timeout_s ? o.timeout_s : ADHOC_MEET_TIMEOUT_S);
	if (!strcmp(what, "stop")) {
		char dir[PATH_MAX];

		state_path(&o, NULL, dir, sizeof(dir));
		if (access(dir, F_OK))
			return tool_usage("adhoc", "no instance in %s", o.data);
		if (!state_has(&o, "down") && state_put(&o, "stop", "stop\n"))
			return tool_fail();
	}
	if (!strcmp(what, "stop")) {
		while (time(NULL) < end) {
			if (state_has(&o, "down"))
				return stop_writeback(&o);
			sleep_poll();
		}
		what = "down";
	} else {
		/* What an earlier instance left is not an answer: wait
		 * until a new rank 0 has replaced it (put_instance). */
		char was[512] = "", now[512];
		bool stale;

		state_get(&o, "instance", was, sizeof(was));
		stale = state_stale(&o);
		while (time(NULL) < end) {
			if (stale &&
			    !state_get(&o, "instance", now, sizeof(now)) &&
			    strcmp(now, was))
				stale = false;
			if (!stale && state_has(&o, "ready") &&
			    instance_answers(&o) &&
			    !state_get(&o, "ready", v, sizeof(v))) {
				printf("%s\n", v);
				return CLF_EXIT_OK;
			}
			if (!stale &&
			    state_get(&o, "failed", v, sizeof(v)) == 0) {
				fprintf(stderr, "clf adhoc: the instance failed: %s\n",
					v);
				return CLF_EXIT_FAIL;
			}
			sleep_poll();
		}
		what = "ready";
	}
	fprintf(stderr, "clf adhoc: no %s in %s/adhoc within the timeout\n",
		what, o.data);
	return CLF_EXIT_FAIL;
}
