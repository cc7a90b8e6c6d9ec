// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * md_bench.c -- an mdtest-style metadata benchmark through the native API,
 * with a local directory (ext4 on a usual machine) as the baseline in the
 * same run.
 *
 * P client processes each take N files through five phases, every process
 * starting each phase together (mdtest's -F, files only):
 *   create  CLF_open(O_CREAT | O_EXCL | O_WRONLY) and CLF_close
 *   stat    CLF_stat
 *   lsl     the process's directory listed with the attributes of every
 *           entry, as `ls -l` does (clf: clf_ll_readdirplus pages with
 *           sizes; local: readdir and a stat per entry); its rate counts
 *           entries (in the shared arrangement each process lists them all)
 *   open    CLF_open(O_RDONLY) and CLF_close
 *   remove  CLF_unlink
 * in two arrangements: every process in one shared directory (mdtest's
 * default), and a directory per process (mdtest -u).  The same run does
 * the same with open(2), stat(2), unlink(2) in a local directory.  A rate
 * is all processes' operations over the time until the last finished.
 *
 *   md_bench [--config CFG] [--local DIR] [--procs P] [--files N]
 *            [--only shared|unique]
 *	CFG: the clf configuration ($CLF_CONFIG by default); DIR: the
 *	baseline's directory ($TMPDIR or /tmp); P: 1 (1..256); N: 500
 *
 * Prints one line per arrangement and phase:
 *   "shared create procs 2 files 1000 clf 1234.5 ops/s local 45678.9 ops/s
 *    ratio 0.027"
 * (ratio: clf over local).  Exit status 1 when an operation fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include "clf.h"
#include "clf_ll.h"

enum { PH_CREATE, PH_STAT, PH_LIST, PH_OPEN, PH_REMOVE, PH_COUNT };

static const char *const phase_name[PH_COUNT] = {
	"create", "stat", "lsl", "open", "remove",
};

struct target {
	const char *name;	/* "clf" or "local" */
	const char *root;	/* clf: "" (paths from /); local: DIR */
	bool clf;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One operation of phase ph on path; 0 or -1 with errno / clf's error. */
static int op_clf(int ph, const char *path)
{
	struct stat st;
	int fd;

	switch (ph) {
	case PH_CREATE:
		fd = CLF_open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		return fd < 0 ? -1 : (CLF_close(fd) ? -1 : 0);
	case PH_STAT:
		return CLF_stat(path, &st) ? -1 : 0;
	case PH_OPEN:
		fd = CLF_open(path, O_RDONLY);
		return fd < 0 ? -1 : (CLF_close(fd) ? -1 : 0);
	default:
		return CLF_unlink(path) ? -1 : 0;
	}
}

static int op_local(int ph, const char *path)
{
	struct stat st;
	int fd;

	switch (ph) {
	case PH_CREATE:
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		return fd < 0 ? -1 : close(fd);
	case PH_STAT:
		return stat(path, &st);
	case PH_OPEN:
		fd = open(path, O_RDONLY);
		return fd < 0 ? -1 : close(fd);
	default:
		return unlink(path);
	}
}

/* List dir with every entry's attributes; -1 on a failure, else 0. */
static int list_clf(const char *dir)
{
	struct clf_ll_dirents_plus d;
	uint64_t cookie = 0;
	struct stat st;
	bool eof = false;

	if (CLF_stat(dir, &st))
		return -1;
	while (!eof) {
		if (clf_ll_readdirplus(st.st_ino, cookie, CLF_PROTO_READDIR_MAX,
				       CLF_LL_PLUS_SIZE, &d))
			return -1;
		if (d.count)
			cookie = d.ents[d.count - 1].cookie;
		eof = d.eof || !d.count;
		clf_ll_dirents_plus_release(&d);
	}
	return 0;
}

static int list_local(const char *dir)
{
	char path[1024 + 256];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int err = d ? 0 : -1;

	while (!err && d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		err = lstat(path, &st);
	}
	if (d)
		closedir(d);
	return err;
}

static int run_phase(const struct target *t, int ph, const char *dir, int id,
		     int n)
{
	char path[1024];

	if (ph == PH_LIST) {
		if ((t->clf ? list_clf(dir) : list_local(dir)) == 0)
			return 0;
		fprintf(stderr, "md_bench: %s lsl '%s': %s\n", t->name, dir,
			t->clf ? CLF_Last_error() : strerror(errno));
		return 1;
	}

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/p%d.f%d", dir, id, i);
		if ((t->clf ? op_clf(ph, path) : op_local(ph, path)) == 0)
			continue;
		fprintf(stderr, "md_bench: %s %s '%s': %s\n", t->name,
			phase_name[ph], path,
			t->clf ? CLF_Last_error() : strerror(errno));
		return 1;
	}
	return 0;
}

static int mkdir_on(const struct target *t, const char *dir)
{
	int err = t->clf ? CLF_mkdir(dir, 0755) : mkdir(dir, 0755);

	if (err && (t->clf ? err != -EEXIST : errno != EEXIST)) {
		fprintf(stderr, "md_bench: %s mkdir '%s': %s\n", t->name, dir,
			t->clf ? CLF_Last_error() : strerror(errno));
		return 1;
	}
	return 0;
}

static void rmdir_on(const struct target *t, const char *dir)
{
	if (t->clf)
		CLF_rmdir(dir);
	else
		rmdir(dir);
}

/*
 * One client process: its directory (unique) or the shared one (made by
 * the parent), then each phase when the parent says go (a byte on go),
 * reporting each done (its status byte on done).
 */
static int client(const struct target *t, const char *top, bool unique,
		  int id, int n, int go, int done)
{
	char dir[900], c;
	int err = 0;

	if (unique)
		snprintf(dir, sizeof(dir), "%s/u%d", top, id);
	else
		snprintf(dir, sizeof(dir), "%s/shared", top);
	if (unique)
		err = mkdir_on(t, dir);
	for (int ph = 0; ph < PH_COUNT; ph++) {
		if (read(go, &c, 1) != 1)
			return 1;
		if (!err)
			err = run_phase(t, ph, dir, id, n);
		c = (char)err;
		if (write(done, &c, 1) != 1)
			return 1;
	}
	if (unique)
		rmdir_on(t, dir);
	return err;
}

/*
 * Run the four phases with procs processes on target t, arrangement
 * unique, into rate[PH_COUNT] (ops/s).  Returns 0, or 1 on a failure.
 */
static int run(const struct target *t, const char *cfg, bool unique,
	       int procs, int n, double rate[PH_COUNT])
{
	char top[800], shared[900];
	int go[256][2], done[2], bad = 0;
	char c;

	snprintf(top, sizeof(top), "%s/md_bench.%d", t->root, (int)getpid());
	snprintf(shared, sizeof(shared), "%s/shared", top);
	if (t->clf && CLF_init(cfg)) {
		fprintf(stderr, "md_bench: %s\n", CLF_Last_error());
		return 1;
	}
	if (mkdir_on(t, top) || (!unique && mkdir_on(t, shared)))
		bad = 1;
	/* The children connect on their own: no connection crosses fork. */
	if (t->clf)
		CLF_finalize();
	if (bad || pipe(done))
		return 1;
	for (int i = 0; i < procs; i++) {
		pid_t pid;

		if (pipe(go[i]))
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			int err;

			for (int j = 0; j <= i; j++)
				close(go[j][1]);
			close(done[0]);
			if (t->clf && CLF_init(cfg)) {
				fprintf(stderr, "md_bench: %s\n",
					CLF_Last_error());
				err = 2;
			} else {
				err = client(t, top, unique, i, n, go[i][0],
					     done[1]);
			}
			if (t->clf)
				CLF_finalize();
			_exit(err);
		}
		close(go[i][0]);
	}
	close(done[1]);
	for (int ph = 0; ph < PH_COUNT; ph++) {
		double t0 = now_s();

		for (int i = 0; i < procs && !bad; i++)
			if (write(go[i][1], "g", 1) != 1)
				bad = 1;
		for (int i = 0; i < procs && !bad; i++)
			if (read(done[0], &c, 1) != 1 || c)
				bad = 1;
		/* lsl: each process lists its directory, all of it. */
		rate[ph] = bad ? 0 : (double)n * procs *
			   (ph == PH_LIST && !unique ? procs : 1) /
			   (now_s() - t0);
	}
	for (int i = 0; i < procs; i++)
		close(go[i][1]);
	close(done[0]);
	for (int i = 0; i < procs; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	if (t->clf && !CLF_init(cfg)) {
		if (!unique)
			CLF_rmdir(shared);
		CLF_rmdir(top);
		CLF_finalize();
	} else if (!t->clf) {
		if (!unique)
			rmdir(shared);
		rmdir(top);
	}
	return bad;
}

static void usage(void)
{
	fprintf(stderr, "usage: md_bench [--config CFG] [--local DIR] [--procs P] [--files N] [--only shared|unique]\n");
}

int main(int argc, char **argv)
{
	const char *cfg = NULL, *only = NULL, *tmp = getenv("TMPDIR");
	struct target clf = { "clf", "", true };
	struct target local = { "local", tmp ? tmp : "/tmp", false };
	int procs = 1, n = 500, bad = 0;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			usage();
			return 2;
		}
		if (!strcmp(argv[i], "--config"))
			cfg = v;
		else if (!strcmp(argv[i], "--local"))
			local.root = v;
		else if (!strcmp(argv[i], "--procs"))
			procs = atoi(v);
		else if (!strcmp(argv[i], "--files"))
			n = atoi(v);
		else if (!strcmp(argv[i], "--only"))
			only = v;
		else {
			usage();
			return 2;
		}
		i++;
	}
	if (procs < 1 || procs > 256 || n < 1 ||
	    (only && strcmp(only, "shared") && strcmp(only, "unique"))) {
		usage();
		return 2;
	}
	for (int u = 0; u < 2 && !bad; u++) {
		const char *arr = u ? "unique" : "shared";
		double rc[PH_COUNT], rl[PH_COUNT];

		if (only && strcmp(only, arr))
			continue;
		bad = run(&clf, cfg, u, procs, n, rc) ||
		      run(&local, cfg, u, procs, n, rl);
		for (int ph = 0; ph < PH_COUNT && !bad; ph++)
			printf("%-6s %-6s procs %d files %d clf %.1f ops/s local %.1f ops/s ratio %.3f\n",
			       arr, phase_name[ph], procs, n * procs, rc[ph],
			       rl[ph], rl[ph] > 0 ? rc[ph] / rl[ph] : 0.0);
		fflush(stdout);
	}
	return bad;
}
