// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_stager.c -- `clf stager`: the write-back of an instance backed by
 * a directory of a persistent file system (the configuration's
 * `backing`; docs/staging.md).
 *
 * Clients note every file they close after opening it for writing in
 * BACKING/.clf-stage/journal (CLF_LL_STAGE_JOURNAL of clf_ll.h), on
 * disk before their close returns.  The stager reads the journal as it grows,
 * finds each noted inode's path in the namespace, copies the file with
 * `clf cp` (the client's bulk reads) to a temporary name beside its
 * place in BACKING, syncs it, renames it into place and appends
 * "D <ino> <upto> <path>" to the journal: every note of that inode
 * before offset upto is done.  A copy that fails appends "F ..." with
 * the reason and is tried again later.  Whatever is noted and not done
 * when the stager dies (kill -9, a crash of the host) is done by the
 * next stager, which reads the journal from its start: nothing noted is
 * lost.
 *
 * The journal would only grow: when every note in it is done and it has
 * grown by compact_bytes, the stager renames over it a journal that only
 * says where each file was written back (compact()), under an exclusive flock that every appender's shared
 * one (clf_ll_stage_journal_open) waits for.  Offsets in D and F lines
 * are offsets of one journal file: a line whose offset was read from a
 * journal that has been replaced since is not written (every note of
 * the old one was done), and a stager that finds another file under the
 * journal's name reads it from its start.
 *
 * `clf up` starts it when the configuration has a backing directory;
 * `clf down` ends it (SIGTERM: it finishes what is noted and exits)
 * and then runs `clf stager --drain`, which does what is left and says
 * which file could not be written back and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"
#include "tool_fs.h"
#include "tool_stage.h"
#include "clf_ll.h"
#include "config.h"
#include "daemon_ctl.h"
#include "error.h"

#define STAGER_POLL_MS 100	/* the journal looked at for new notes */
#define STAGER_RETRY_MS 2000	/* a failed copy tried again */
/* A journal whose notes are all done is replaced by an empty one from
 * this size on (CLF_STAGER_COMPACT_BYTES in tests). */
#define STAGER_COMPACT_BYTES (1 << 20)

/* One noted inode. */
struct st_file {
	uint64_t ino;
	int64_t noted;		/* end offset of its last W line */
	int64_t done;		/* W lines before this offset are done */
	char *path;		/* clf path it was last found at, or NULL */
	char *bpath;		/* BACKING path its last write-back went to
				 * (moved by renames since), or NULL */
	char why[PATH_MAX + 256];	/* last failure, "" when none */
	int64_t retry_ms;	/* not before this clf_now time */
};

struct stager {
	const char *conf;	/* the configuration file, for clf cp */
	const char *backing;
	char journal[PATH_MAX];
	dev_t jdev;		/* the journal file pos is in */
	ino_t jino;
	bool jknown;		/* jdev, jino set */
	int64_t pos;		/* journal read up to here */
	int64_t compact_bytes;
	int64_t jbase;		/* the journal's size when compacted */
	struct st_file *f;
	size_t n, alloc;
	/* Removals and renames (R, N lines), in journal order; those
	 * ending at or before ops_done are applied (X lines). */
	struct st_op { int64_t end; char kind; char *a, *b; } *ops;
	size_t nops, opsalloc;
	int64_t ops_done;
	int64_t ops_retry_ms;	/* a failed one tried again not before */
	char ops_why[PATH_MAX + 256];	/* why the first pending one failed */
	long hold_ms;		/* CLF_STAGER_TEST_HOLD_MS: tests */
	/* The namespace walk: regular files by inode. */
	struct { uint64_t ino; char *path; } *map;
	size_t nmap, mapalloc;
};

static volatile sig_atomic_t stager_stop;

static void on_term(int sig)
{
	(void)sig;
	stager_stop = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct st_file *file_of(struct stager *s, uint64_t ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->f[i].ino == ino)
			return &s->f[i];
	if (s->n == s->alloc) {
		size_t na = s->alloc ? 2 * s->alloc : 64;
		struct st_file *nf = realloc(s->f, na * sizeof(*nf));

		if (!nf)
			return NULL;
		s->f = nf;
		s->alloc = na;
	}
	s->f[s->n] = (struct st_file){ .ino = ino };
	return &s->f[s->n++];
}

/* A path of an R or N line, its escapes undone (stage_note.c), in place;
 * the end of it (the tab or the string's end). */
static char *unescape(char *p)
{
	char *w = p;

	for (; *p && *p != '\t'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			*w++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return p;
}

/* "R <path>" or "N <from>\t<to>", ending at journal offset end. */
static int op_add(struct stager *s, char *line, int64_t end)
{
	struct st_op *o;
	char *a = line + 2, *b = NULL, *tab;

	if (line[1] != ' ' || a[0] != '/')
		return 0;	/* not ours (a torn line): skipped */
	tab = strchr(a, '\t');
	if (line[0] == 'N') {
		if (!tab || tab[1] != '/')
			return 0;
		b = tab + 1;
		unescape(b);
	}
	unescape(a);
	if (s->nops == s->opsalloc) {
		size_t na = s->opsalloc ? 2 * s->opsalloc : 64;
		void *no = realloc(s->ops, na * sizeof(*s->ops));

		if (!no)
			return -ENOMEM;
		s->ops = no;
		s->opsalloc = na;
	}
	o = &s->ops[s->nops];
	o->end = end;
	o->kind = line[0];
	o->a = strdup(a);
	o->b = b ? strdup(b) : NULL;
	if (!o->a || (b && !o->b)) {
		free(o->a);
		free(o->b);
		return -ENOMEM;
	}
	s->nops++;
	return 0;
}

static void ops_clear(struct stager *s)
{
	for (size_t i = 0; i < s->nops; i++) {
		free(s->ops[i].a);
		free(s->ops[i].b);
	}
	s->nops = 0;
	s->ops_done = 0;
	s->ops_retry_ms = 0;
}

/* Ops read and not applied. */
static size_t ops_pending(const struct stager *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nops; i++)
		k += s->ops[i].end > s->ops_done;
	return k;
}

/* Take one journal line that ends at offset end. */
static int take_line(struct stager *s, char *line, int64_t end)
{
	unsigned long long ino, upto;
	struct st_file *f;
	int len = 0;

	if (line[0] == 'W' && sscanf(line, "W %llu", &ino) == 1) {
		f = file_of(s, ino);
		if (!f)
			return -ENOMEM;
		f->noted = end;
		return 0;
	}
	if (line[0] == 'R' || line[0] == 'N')
		return op_add(s, line, end);
	if (line[0] == 'X' && sscanf(line, "X %llu", &upto) == 1) {
		if ((int64_t)upto > s->ops_done)
			s->ops_done = upto;
		return 0;
	}
	if ((line[0] != 'D' && line[0] != 'F') ||
	    sscanf(line + 1, " %llu %llu %n", &ino, &upto, &len) != 2 || !len)
		return 0;	/* not ours (a torn line): skipped */
	f = file_of(s, ino);
	if (!f)
		return -ENOMEM;
	if (line[0] == 'D') {
		if ((int64_t)upto > f->done)
			f->done = upto;
		f->why[0] = '\0';
		free(f->bpath);
		f->bpath = strcmp(line + 1 + len, "-") ? strdup(line + 1 + len)
						       : NULL;
	} else {
		char *tab = strchr(line + len, '\t');

		snprintf(f->why, sizeof(f->why), "%s", tab ? tab + 1 : "");
	}
	return 0;
}

/* A new journal file: read from its start, every note of the old one
 * done (it was replaced only then). */
static void forget_journal(struct stager *s, const struct stat *st)
{
	s->pos = 0;
	for (size_t i = 0; i < s->n; i++) {
		s->f[i].noted = s->f[i].done = 0;
		s->f[i].why[0] = '\0';
		s->f[i].retry_ms = 0;
	}
	ops_clear(s);
	s->jbase = st->st_size;	/* where files are: compacted again past it */
	s->jdev = st->st_dev;
	s->jino = st->st_ino;
	s->jknown = true;
}

/* Read the journal's lines from s->pos to its last whole line. */
static int read_journal(struct stager *s)
{
	char buf[65536];
	int fd = open(s->journal, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int err = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!s->jknown) {
		s->jdev = st.st_dev;
		s->jino = st.st_ino;
		s->jknown = true;
	} else if (st.st_dev != s->jdev || st.st_ino != s->jino) {
		fprintf(stderr, "clf stager: %s was compacted (every note done): reading the new one\n",
			s->journal);
		forget_journal(s, &st);
	}
	for (;;) {
		ssize_t got = pread(fd, buf, sizeof(buf) - 1, s->pos);
		char *p = buf, *nl;

		if (got <= 0) {
			if (got < 0)
				err = -errno;
			break;
		}
		buf[got] = '\0';
		while ((nl = memchr(p, '\n', buf + got - p))) {
			*nl = '\0';
			err = take_line(s, p, s->pos + (nl + 1 - buf));
			if (err)
				break;
			p = nl + 1;
		}
		if (err || p == buf)
			break;	/* a line longer than buf: never ours */
		s->pos += p - buf;
	}
	close(fd);
	return err;
}

/* Append a D or F line whose offset is one of the journal read
 * (s->jino); not when that journal has been replaced since. */
static int append(struct stager *s, const char *line)
{
	char path[PATH_MAX];
	size_t len = strlen(line);
	struct stat st;
	int fd = clf_ll_stage_journal_open(s->backing, path, sizeof(path),
					   &st);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (s->jknown && (st.st_dev != s->jdev || st.st_ino != s->jino))
		err = 0;	/* replaced: its notes were all done */
	else if (write(fd, line, len) != (ssize_t)len || fdatasync(fd))
		err = -(errno ? errno : EIO);
	close(fd);
	return err;
}


static int map_add(struct stager *s, uint64_t ino, const char *path)
{
	if (s->nmap == s->mapalloc) {
		size_t na = s->mapalloc ? 2 * s->mapalloc : 256;
		void *nm = realloc(s->map, na * sizeof(*s->map));

		if (!nm)
			return -ENOMEM;
		s->map = nm;
		s->mapalloc = na;
	}
	s->map[s->nmap].ino = ino;
	s->map[s->nmap].path = strdup(path);
	if (!s->map[s->nmap].path)
		return -ENOMEM;
	s->nmap++;
	return 0;
}

/* Every regular file under directory dir (path) into the map. */
static int walk(struct stager *s, uint64_t dir, const char *path)
{
	struct clf_ll_dirents_plus d;
	uint64_t cookie = 0;
	bool eof = false;
	int err = 0;

	while (!eof && !err) {
		err = clf_ll_readdirplus(dir, cookie, CLF_PROTO_READDIR_MAX, 0,
					 &d);
		if (err)
			break;
		for (uint32_t i = 0; i < d.count && !err; i++) {
			const struct clf_ll_direntplus *e = &d.ents[i];
			char sub[TOOL_PATH_MAX + CLF_PROTO_NAME_MAX + 2];

			cookie = e->cookie;
			if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s",
				 strcmp(path, "/") ? path : "", e->name);
			if (S_ISDIR(e->attr.mode))
				err = walk(s, e->attr.ino, sub);
			else if (S_ISREG(e->attr.mode))
				err = map_add(s, e->attr.ino, sub);
		}
		eof = d.eof || d.count == 0;
		clf_ll_dirents_plus_release(&d);
	}
	return err;
}

static void map_clear(struct stager *s)
{
	for (size_t i = 0; i < s->nmap; i++)
		free(s->map[i].path);
	s->nmap = 0;
}

static const char *map_find(const struct stager *s, uint64_t ino)
{
	for (size_t i = 0; i < s->nmap; i++)
		if (s->map[i].ino == ino)
			return s->map[i].path;
	return NULL;
}

/* Where f lives now: the map, walked again when it does not know f or
 * the name it gives has another inode now (renamed, replaced).  NULL
 * with 0 when f is gone from the namespace. */
static int find_path(struct stager *s, const struct st_file *f,
		     const char **path)
{
	struct stat st;
	int err;

	*path = map_find(s, f->ino);
	if (*path && !CLF_stat(*path, &st) && st.st_ino == f->ino)
		return 0;
	map_clear(s);
	err = walk(s, CLF_PROTO_ROOT_INO, "/");
	*path = err ? NULL : map_find(s, f->ino);
	return err;
}

/* mkdir -p of the directories of BACKING/path (path starts with '/'). */
static int make_parents(const char *backing, const char *path, char *why,
			size_t len)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s%s", backing, path);
	for (slash = dir + strlen(backing) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			snprintf(why, len, "cannot make directory %s: %s", dir,
				 strerror(errno));
			return -1;
		}
		*slash = '/';
	}
	return 0;
}

/* `clf -c CONF cp -q clf:PATH TMP`, its last line of stderr into why. */
static int run_cp(const struct stager *s, const char *path, const char *tmp,
		  char *why, size_t len)
{
	char src[TOOL_PATH_MAX + 8], self[PATH_MAX];
	int pfd[2], status;
	ssize_t got, have = 0;
	pid_t pid;

	snprintf(src, sizeof(src), TOOL_CLF_PREFIX "%s", path);
	if (tool_self_exe(self, sizeof(self)) || pipe(pfd)) {
		snprintf(why, len, "cannot run clf cp: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[1]);
		execl(self, self, "-c", s->conf, "cp", "-q", src, tmp,
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	why[0] = '\0';
	while (pid > 0 && (got = read(pfd[0], why + have, len - 1 - have)) > 0)
		have += got;
	why[have] = '\0';
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		snprintf(why, len, "cannot run clf cp: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* "clf: cannot ...: reason\n": the message, one line. */
	while (have > 0 && why[have - 1] == '\n')
		why[--have] = '\0';
	if (!have)
		snprintf(why, len, "clf cp ended with status %d", status);
	for (char *p = why; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	return -1;
}

/* Sync what path names (a file, or a directory's entries). */
static int sync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Every note read is done and nothing was added since: rename an empty
 * journal over this one, under an exclusive flock (appenders wait, then
 * find the new file under the name).  A crash before the rename leaves
 * the old journal (all done); after it, the empty one: nothing noted and
 * not done is lost either way.  0, or a negative errno (the journal is
 * then as it was).
 */
static int compact(struct stager *s)
{
	char tmp[PATH_MAX + 32], dir[PATH_MAX];
	struct stat st, named;
	int fd = open(s->journal, O_RDWR | O_CLOEXEC), tfd, err = 0;
	int64_t was = s->pos;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) || fstat(fd, &st) || stat(s->journal, &named)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Another stager's compaction, or notes added since the read. */
	if (!s->jknown || st.st_ino != s->jino || st.st_dev != s->jdev ||
	    named.st_ino != st.st_ino || st.st_size != s->pos) {
		close(fd);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.new.%d", s->journal, (int)getpid());
	snprintf(dir, sizeof(dir), "%s/" CLF_LL_STAGE_DIR, s->backing);
	tfd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* Where each file was written back, so that a later rename of it
	 * moves that copy instead of copying it again ("D <ino> 0 <path>":
	 * no note of it is pending). */
	for (size_t i = 0; tfd >= 0 && !err && i < s->n; i++) {
		char line[PATH_MAX + 64];
		int len;

		if (!s->f[i].bpath)
			continue;
		len = snprintf(line, sizeof(line), "D %llu 0 %s\n",
			       (unsigned long long)s->f[i].ino, s->f[i].bpath);
		if (len >= (int)sizeof(line) || write(tfd, line, len) != len)
			err = -(errno ? errno : EIO);
	}
	if (!err && (tfd < 0 || fsync(tfd) || fstat(tfd, &named) ||
		     rename(tmp, s->journal)))
		err = -errno;
	if (tfd >= 0)
		close(tfd);
	if (err)
		unlink(tmp);
	else
		err = sync_path(dir);
	if (!err) {
		forget_journal(s, &named);
		fprintf(stderr, "clf stager: %s compacted: %lld bytes of notes, all done\n",
			s->journal, (long long)was);
	}
	close(fd);	/* the lock: appenders go on, on the new file */
	return err;
}

/* Write f back: copy, sync, rename into place, sync the directory. */
static int write_back(struct stager *s, struct st_file *f, const char *path)
{
	char dst[PATH_MAX], tmp[PATH_MAX + 32], dir[PATH_MAX];
	const char *name = strrchr(path, '/') + 1;
	int err;

	if (make_parents(s->backing, path, f->why, sizeof(f->why)))
		return -1;
	snprintf(dst, sizeof(dst), "%s%s", s->backing, path);
	snprintf(dir, sizeof(dir), "%s%.*s", s->backing,
		 (int)(name - 1 - path), path);
	/* Beside its place, named for this stager: a drain beside a running
	 * stager may copy the same file at once. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.clf-stage.%d", dir, name,
		 (int)getpid());
	if (run_cp(s, path, tmp, f->why, sizeof(f->why))) {
		unlink(tmp);
		return -1;
	}
	err = sync_path(tmp);
	if (!err && rename(tmp, dst))
		err = -errno;
	if (!err)
		err = sync_path(dir[0] ? dir : "/");
	if (err) {
		snprintf(f->why, sizeof(f->why), "cannot put it in place as %s: %s",
			 dst, strerror(-err));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Whether path is p or lies under directory p. */
static bool path_under(const char *path, const char *p)
{
	size_t n = strlen(p);

	return path && !strncmp(path, p, n) && (!path[n] || path[n] == '/');
}

/* Note inode ino for write-back again, as a client's close does: the
 * backing directory's copy at its place may be another file's. */
static int renote(struct stager *s, uint64_t ino)
{
	char line[32];

	snprintf(line, sizeof(line), "W %llu\n", (unsigned long long)ino);
	fprintf(stderr, "clf stager: inode %llu noted for write-back again: a removal or rename raced with its copy\n",
		(unsigned long long)ino);
	return append(s, line);
}

/* The regular file clf has at path now, if any: renote it unless the
 * backing directory holds its copy there (bpath). */
static int renote_at(struct stager *s, const char *path)
{
	struct stat st;

	if (CLF_stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->f[i].ino == st.st_ino && s->f[i].bpath &&
		    !strcmp(s->f[i].bpath, path))
			return 0;
	return renote(s, st.st_ino);
}

/* bpath from under directory or file from to under to. */
static void bpath_move(struct st_file *f, const char *from, const char *to)
{
	size_t n = strlen(from), len = strlen(to) + strlen(f->bpath) - n + 1;
	char *p = malloc(len);

	if (!p)
		return;
	snprintf(p, len, "%s%s", to, f->bpath + n);
	free(f->bpath);
	f->bpath = p;
}

/*
 * Apply one removal (R) or rename (N) to the backing directory.  clf
 * did it before the client noted it, but another client may have made
 * the name again since (its notes then come before this one): a name
 * clf has again is not removed, and its file noted for write-back.
 * 0 done, -1 failed (s->ops_why says why; tried again).
 */
static int op_apply(struct stager *s, const struct st_op *o)
{
	char a[PATH_MAX], b[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int err;

	snprintf(a, sizeof(a), "%s%s", s->backing, o->a);
	if (o->kind == 'R') {
		err = CLF_stat(o->a, &st);
		if (!err)	/* made again since: what clf has stays */
			return S_ISREG(st.st_mode) ? renote_at(s, o->a) : 0;
		if (err != -ENOENT) {
			char reason[128];

			tool_fmt_reason(err, reason, sizeof(reason));
			snprintf(s->ops_why, sizeof(s->ops_why),
				 "cannot look %.3000s up in clf: %s", o->a, reason);
			return -1;
		}
		if (!lstat(a, &st) && S_ISDIR(st.st_mode))
			err = rmdir(a) ? -errno : 0;
		else
			err = unlink(a) ? -errno : 0;
		if (err == -ENOTEMPTY || err == -EEXIST) {
			/* Files clf never had (not staged in): kept. */
			fprintf(stderr, "clf stager: %s removed in clf, kept in the backing directory: it holds files clf never had\n",
				a);
			err = 0;
		} else if (!err) {
			snprintf(dir, sizeof(dir), "%s", a);
			*strrchr(dir, '/') = '\0';
			err = sync_path(dir[0] ? dir : "/");
		} else if (err == -ENOENT) {
			err = 0;	/* never written back, or done already */
		}
		if (err) {
			snprintf(s->ops_why, sizeof(s->ops_why),
				 "cannot remove %.3000s: %s", a, strerror(-err));
			return -1;
		}
		for (size_t i = 0; i < s->n; i++)
			if (path_under(s->f[i].bpath, o->a)) {
				free(s->f[i].bpath);
				s->f[i].bpath = NULL;
			}
		return 0;
	}

	snprintf(b, sizeof(b), "%s%s", s->backing, o->b);
	if (make_parents(s->backing, o->b, s->ops_why, sizeof(s->ops_why)))
		return -1;
	err = rename(a, b) ? -errno : 0;
	if (!err) {
		snprintf(dir, sizeof(dir), "%s", a);
		*strrchr(dir, '/') = '\0';
		err = sync_path(dir[0] ? dir : "/");
		snprintf(dir, sizeof(dir), "%s", b);
		*strrchr(dir, '/') = '\0';
		if (!err)
			err = sync_path(dir[0] ? dir : "/");
		if (err) {
			snprintf(s->ops_why, sizeof(s->ops_why),
				 "cannot sync the rename of %.1500s to %.1500s: %s", a,
				 b, strerror(-err));
			return -1;
		}
		/* What was written back under the new name was replaced:
		 * written back again; what was under the old one moved. */
		for (size_t i = 0; i < s->n; i++) {
			struct st_file *f = &s->f[i];

			if (path_under(f->bpath, o->b) &&
			    !path_under(f->bpath, o->a)) {
				free(f->bpath);
				f->bpath = NULL;
				if (renote(s, f->ino))
					return -1;
			} else if (path_under(f->bpath, o->a)) {
				bpath_move(f, o->a, o->b);
			}
		}
	} else if (err == -ENOENT) {
		err = 0;	/* nothing of it written back yet */
	} else if (err == -ENOTEMPTY || err == -EEXIST || err == -EISDIR ||
		   err == -ENOTDIR) {
		fprintf(stderr, "clf stager: cannot rename %s to %s in the backing directory (%s): its files are written back under their new names\n",
			a, b, strerror(-err));
		err = 0;
		for (size_t i = 0; i < s->n && !err; i++)
			if (path_under(s->f[i].bpath, o->a))
				err = renote(s, s->f[i].ino) ? -EIO : 0;
	}
	if (err) {
		snprintf(s->ops_why, sizeof(s->ops_why),
			 "cannot rename %.1500s to %.1500s: %s", a, b, strerror(-err));
		return -1;
	}
	/* The files clf has under both names now. */
	if (renote_at(s, o->b) || renote_at(s, o->a))
		return -1;
	return 0;
}

/*
 * The removals and renames read and not applied, in journal order,
 * each followed by "X <end>" (every R and N line before end is
 * applied): before any copy of the pass, so that a copy to a name never
 * precedes a removal of that name noted before it.  Lines appended
 * meanwhile (the notes of renote()) are read and applied too.  0, or -1
 * when one failed (the rest wait: order matters).
 */
static int ops_apply(struct stager *s, bool all)
{
	char line[64];
	size_t keep = 0;

	if (!all && s->ops_retry_ms && now_ms() < s->ops_retry_ms)
		return -1;
	s->ops_retry_ms = 0;
	for (long held = 0; ops_pending(s) && held < s->hold_ms && !stager_stop;
	     held += STAGER_POLL_MS)
		usleep(STAGER_POLL_MS * 1000);
	while (ops_pending(s)) {
		for (size_t i = 0; i < s->nops; i++) {
			const struct st_op *o = &s->ops[i];

			if (o->end <= s->ops_done)
				continue;
			if (op_apply(s, o)) {
				fprintf(stderr, "clf stager: cannot %s %s%s%s in the backing directory: %s\n",
					o->kind == 'R' ? "remove" : "rename",
					o->a, o->b ? " to " : "",
					o->b ? o->b : "", s->ops_why);
				s->ops_retry_ms = now_ms() + STAGER_RETRY_MS;
				return -1;
			}
			snprintf(line, sizeof(line), "X %lld\n",
				 (long long)o->end);
			if (append(s, line))
				return -1;
			s->ops_done = o->end;
		}
		if (read_journal(s))
			return -1;
	}
	/* Applied ones are forgotten. */
	for (size_t i = 0; i < s->nops; i++) {
		if (s->ops[i].end <= s->ops_done) {
			free(s->ops[i].a);
			free(s->ops[i].b);
		} else {
			s->ops[keep++] = s->ops[i];
		}
	}
	s->nops = keep;
	s->ops_why[0] = '\0';
	return 0;
}

/* One pass over what is noted and not done: 0, or how many failed. */
static int pass(struct stager *s, bool all)
{
	int64_t upto;
	int failed = 0;
	char line[3 * PATH_MAX];

	/* The copies wait for a failed one (order matters), except at
	 * the end: then the files matter more, and the failed one checks
	 * clf's namespace when it is tried again. */
	if (ops_apply(s, all)) {
		failed++;
		if (!all)
			return failed;
	}
	upto = s->pos;
	for (size_t i = 0; i < s->n && !(stager_stop && !all); i++) {
		struct st_file *f = &s->f[i];
		const char *path;
		int err;

		if (f->noted <= f->done)
			continue;
		if (!all && f->retry_ms && now_ms() < f->retry_ms) {
			failed++;
			continue;
		}
		for (long held = 0; held < s->hold_ms && !stager_stop;
		     held += STAGER_POLL_MS)
			usleep(STAGER_POLL_MS * 1000);
		err = find_path(s, f, &path);
		if (!err && !path) {
			/* Removed before it could be written back: nothing
			 * of it is left to write. */
			fprintf(stderr, "clf stager: inode %llu is gone from the namespace: nothing to write back\n",
				(unsigned long long)f->ino);
			snprintf(line, sizeof(line), "D %llu %lld -\n",
				 (unsigned long long)f->ino, (long long)upto);
		} else if (!err && !write_back(s, f, path)) {
			free(f->path);
			f->path = strdup(path);
			free(f->bpath);
			f->bpath = strdup(path);
			snprintf(line, sizeof(line), "D %llu %lld %s\n",
				 (unsigned long long)f->ino, (long long)upto,
				 path);
		} else {
			char reason[128];

			if (err) {
				tool_fmt_reason(err, reason, sizeof(reason));
				snprintf(f->why, sizeof(f->why),
					 "cannot find it in the namespace: %s",
					 reason);
			}
			if (path && (!f->path || strcmp(f->path, path))) {
				free(f->path);
				f->path = strdup(path);
			}
			fprintf(stderr, "clf stager: cannot write back clf:%s to %s%s: %s\n",
				f->path ? f->path : "?", s->backing,
				f->path ? f->path : "", f->why);
			snprintf(line, sizeof(line), "F %llu %lld %s\t%s\n",
				 (unsigned long long)f->ino, (long long)upto,
				 f->path ? f->path : "-", f->why);
			f->retry_ms = now_ms() + STAGER_RETRY_MS;
			failed++;
		}
		if (line[0] == 'D') {
			f->done = upto;
			f->why[0] = '\0';
			f->retry_ms = 0;
		}
		err = append(s, line);
		if (err) {
			fprintf(stderr, "clf stager: cannot append to %s: %s\n",
				s->journal, strerror(-err));
			return -1;
		}
	}
	return failed;
}

static int stager_open(struct stager *s, const struct clf_config *cfg)
{
	char dir[PATH_MAX];
	const char *compact = getenv("CLF_STAGER_COMPACT_BYTES");
	int fd;

	s->backing = cfg->backing;
	s->compact_bytes = compact ? atoll(compact) : STAGER_COMPACT_BYTES;
	snprintf(dir, sizeof(dir), "%s/" CLF_LL_STAGE_DIR, s->backing);
	snprintf(s->journal, sizeof(s->journal), "%s/" CLF_LL_STAGE_JOURNAL,
		 s->backing);
	if (mkdir(s->backing, 0755) && errno != EEXIST)
		return clf_fail(errno, "clf stager: cannot make the backing directory %s: %s",
				s->backing, strerror(errno));
	if (mkdir(dir, 0755) && errno != EEXIST)
		return clf_fail(errno, "clf stager: cannot make %s: %s", dir,
				strerror(errno));
	fd = clf_ll_stage_journal_open(s->backing, dir, sizeof(dir), NULL);
	if (fd < 0)
		return clf_fail(errno, "clf stager: cannot open the journal %s: %s",
				s->journal, strerror(errno));
	close(fd);
	return 0;
}

/* Pending files now: noted and not done. */
static size_t pending(const struct stager *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		k += s->f[i].noted > s->f[i].done;
	return k + ops_pending(s);
}

static int run_loop(struct stager *s, bool drain)
{
	int err = read_journal(s);
	int failed;

	if (err)
		return clf_fail_neg(err, "clf stager: cannot read %s: %s",
				    s->journal, strerror(-err));
	if (pending(s))
		fprintf(stderr, "clf stager: %zu file(s) noted in %s and not yet written back: writing them back\n",
			pending(s), s->journal);
	while (!drain && !stager_stop) {
		if (pass(s, false) < 0)
			return -EIO;
		if (!pending(s) && s->pos >= s->jbase + s->compact_bytes)
			(void)compact(s);	/* else again later */
		usleep(STAGER_POLL_MS * 1000);
		err = read_journal(s);
		if (err)
			fprintf(stderr, "clf stager: cannot read %s: %s\n",
				s->journal, strerror(-err));
	}
	/* The end: every note so far, failures tried once more. */
	err = read_journal(s);
	if (err)
		return clf_fail_neg(err, "clf stager: cannot read %s: %s",
				    s->journal, strerror(-err));
	failed = pass(s, true);
	if (failed < 0)
		return -EIO;
	if (!failed && !pending(s) && s->pos >= s->jbase + s->compact_bytes) {
		err = compact(s);
		if (err)
			fprintf(stderr, "clf stager: cannot compact %s: %s\n",
				s->journal, strerror(-err));
	}
	for (size_t i = 0; i < s->nops; i++) {
		const struct st_op *o = &s->ops[i];

		if (o->end > s->ops_done)
			fprintf(stderr, "clf: not carried to the backing directory: %s %s%s%s%s%s\n",
				o->kind == 'R' ? "removal of" : "rename of",
				o->a, o->b ? " to " : "", o->b ? o->b : "",
				i == 0 || s->ops[i - 1].end <= s->ops_done ? ": " : "",
				i == 0 || s->ops[i - 1].end <= s->ops_done ? s->ops_why : "(waits for the one before)");
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct st_file *f = &s->f[i];

		if (f->noted > f->done)
			fprintf(stderr, "clf: not written back: clf:%s -> %s%s: %s\n",
				f->path ? f->path : "?", s->backing,
				f->path ? f->path : "", f->why);
	}
	return failed ? -EIO : 0;
}

/* mkdir -p of path's parents in clf ("/a/b/c": /a, /a/b). */
static int clf_parents(const char *path)
{
	char dir[TOOL_PATH_MAX];
	char *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		err = CLF_mkdir(dir, 0755);
		if (err && err != -EEXIST)
			return err;
		*slash = '/';
	}
	return 0;
}

/*
 * Note every regular file at or under clf path as written back up to
 * the journal's end now: they hold what the backing directory holds
 * (they were just staged in from it), so the stager need not copy them
 * back for the notes their copy-in left.
 */
static int note_staged_in(struct stager *s, const char *path)
{
	char line[3 * PATH_MAX], jpath[PATH_MAX];
	struct stat st, js;
	int err, fd;

	/* The offset and the lines in one journal file: the lock keeps a
	 * compaction out until they are written. */
	fd = clf_ll_stage_journal_open(s->backing, jpath, sizeof(jpath), &js);
	if (fd < 0)
		return -errno;
	err = CLF_stat(path, &st);
	map_clear(s);
	if (!err && S_ISDIR(st.st_mode))
		err = walk(s, st.st_ino, path);
	else if (!err && S_ISREG(st.st_mode))
		err = map_add(s, st.st_ino, path);
	for (size_t i = 0; !err && i < s->nmap; i++) {
		size_t len = (size_t)snprintf(line, sizeof(line),
					      "D %llu %lld %s\n",
					      (unsigned long long)s->map[i].ino,
					      (long long)js.st_size,
					      s->map[i].path);

		if (write(fd, line, len) != (ssize_t)len)
			err = -(errno ? errno : EIO);
	}
	if (!err && fdatasync(fd))
		err = -errno;
	close(fd);
	return err;
}

int tool_stage_in_backing(const struct tool_opts *g, const char *data,
			  const char *jobs, bool quiet, int n, char **paths)
{
	struct stager s = { 0 };
	struct clf_config *cfg = NULL;
	struct tool_opts file = *g;
	int rc = CLF_EXIT_FAIL, err;

	if (tool_config_open(g, data, &cfg))
		return tool_fail();
	if (!cfg->backing) {
		rc = tool_usage("stage-in",
				"clf paths alone are staged in from the backing directory, and %s has none (backing = DIR)",
				tool_config_name(cfg));
		goto out;
	}
	if (stager_open(&s, cfg)) {
		tool_fail();
		goto out;
	}
	/* The file found, from now on: cp and the notes agree on it. */
	file.config = cfg->source;
	file.url = NULL;
	rc = CLF_EXIT_OK;
	for (int i = 0; i < n; i++) {
		char path[TOOL_PATH_MAX], src[2 * PATH_MAX], dir[TOOL_PATH_MAX];
		char dst[TOOL_PATH_MAX + 8];
		const char *cp[12], *name;
		struct stat st;
		int k = 0;

		err = tool_clf_path(paths[i], path);
		if (!err && (!strcmp(path, "/") ||
			     !strncmp(path, "/" CLF_LL_STAGE_DIR,
				      strlen("/" CLF_LL_STAGE_DIR))))
			err = -EINVAL;
		if (err) {
			fprintf(stderr, "clf stage-in: '%s': not a file or directory under the backing directory\n",
				paths[i]);
			rc = CLF_EXIT_FAIL;
			continue;
		}
		snprintf(src, sizeof(src), "%s%s", cfg->backing, path);
		if (lstat(src, &st)) {
			fprintf(stderr, "clf stage-in: cannot stage in %s: %s: %s\n",
				path, src, strerror(errno));
			rc = CLF_EXIT_FAIL;
			continue;
		}
		tool_path_split(path, dir, &name);
		snprintf(dst, sizeof(dst), TOOL_CLF_PREFIX "%s", dir);
		err = tool_clf_connect(&file, NULL);
		if (!err)
			err = clf_parents(path);
		if (err) {
			tool_fail_on("make the directories of", path, err);
			CLF_finalize();
			rc = CLF_EXIT_FAIL;
			continue;
		}
		CLF_finalize();
		cp[k++] = "cp";
		cp[k++] = "-r";
		cp[k++] = "-p";
		cp[k++] = "-j";
		cp[k++] = jobs;
		if (quiet)
			cp[k++] = "-q";
		cp[k++] = src;
		cp[k++] = dst;
		cp[k] = NULL;
		optind = 0;
		if (cmd_cp(&file, k, (char **)cp) != CLF_EXIT_OK) {
			rc = CLF_EXIT_FAIL;
			continue;
		}
		err = tool_clf_connect(&file, NULL);
		if (!err)
			err = note_staged_in(&s, path);
		CLF_finalize();
		if (err) {
			tool_fail_on("note as written back", path, err);
			rc = CLF_EXIT_FAIL;
		}
	}
out:
	map_clear(&s);
	free(s.map);
	clf_config_free(cfg);
	return rc;
}

static void stager_help(void)
{
	printf("usage: clf [-c CONFIG] stager [--data DIR] [-f | --drain]\n"
	       "\n"
	       "Write the files of an instance with a backing directory (the\n"
	       "configuration's `backing`) back to it: every file a client closed\n"
	       "after opening it for writing, as the clients noted it in\n"
	       "BACKING/" CLF_LL_STAGE_JOURNAL ".  `clf up` starts it and `clf down`\n"
	       "ends it; notes that a stager left undone (it was killed) are done by\n"
	       "the next one.  It runs in the background, logging to\n"
	       "DIR/stager.log, its pid in DIR/stager.pid; SIGTERM makes it finish\n"
	       "what is noted and exit.\n"
	       "\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "  -f, --foreground  stay in the foreground, log on stderr\n"
	       "  --drain      write back what is noted, then exit: what `clf down`\n"
	       "               does after stopping the stager\n"
	       "\n"
	       "Exit status: 0 (with --drain: everything noted is written back), 1 a\n"
	       "file could not be written back (each says which and why) or no\n"
	       "backing directory, 2 bad usage.\n");
}

/* Into the background: the parent returns 0 once the child is on its
 * way; the child returns 1.  Log to log, pid into pidfile. */
static int background(const char *backing, const char *log,
		      const char *pidfile)
{
	pid_t pid = fork();
	int fd;
	FILE *f;

	if (pid < 0)
		return clf_fail(errno, "clf stager: fork: %s", strerror(errno));
	if (pid > 0) {
		/* Written here, so that it names the stager once we return. */
		f = fopen(pidfile, "w");
		if (!f || fprintf(f, "%d\n", (int)pid) < 0 || fclose(f)) {
			kill(pid, SIGKILL);
			return clf_fail(errno ? errno : EIO,
					"clf stager: cannot write %s: %s", pidfile,
					strerror(errno ? errno : EIO));
		}
		printf("stager %s started pid %d (log %s)\n", backing,
		       (int)pid, log);
		return 0;
	}
	setsid();
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	return 1;
}

int cmd_stager(const struct tool_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "drain", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL, *hold = getenv("CLF_STAGER_TEST_HOLD_MS");
	struct stager s = { 0 };
	struct clf_config *cfg = NULL;
	bool fg = false, drain = false, bg = false;
	char pidfile[PATH_MAX], log[PATH_MAX];
	int c, err, rc = CLF_EXIT_FAIL;
	pid_t other;

	while ((c = getopt_long(argc, argv, ":fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'f':
			fg = true;
			break;
		case 'D':
			drain = true;
			break;
		case 'h':
			stager_help();
			return CLF_EXIT_OK;
		default:
			return tool_bad_option("stager", c, argv);
		}
	}
	if (optind < argc)
		return tool_usage("stager", "unexpected argument '%s'",
				  argv[optind]);
	if (tool_config_open(g, data, &cfg))
		return tool_fail();
	if (!cfg->backing || !cfg->source) {
		clf_fail(EINVAL, "clf stager: %s has no backing directory (backing = DIR)",
			 tool_config_name(cfg));
		goto out;
	}
	s.conf = cfg->source;
	s.hold_ms = hold ? atol(hold) : 0;
	tool_stager_files(cfg->source, pidfile, log, sizeof(pidfile));
	if (!drain && tool_stager_alive(pidfile, &other)) {
		clf_fail(EEXIST, "clf stager: one runs already for %s (pid %d)",
			 cfg->backing, (int)other);
		goto out;
	}
	if (stager_open(&s, cfg))
		goto out;
	if (!drain && !fg) {
		err = background(cfg->backing, log, pidfile);
		if (err <= 0) {
			rc = err ? CLF_EXIT_FAIL : CLF_EXIT_OK;
			goto out;
		}
		bg = true;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (tool_clf_connect(g, data))
		goto out;
	err = run_loop(&s, drain);
	CLF_finalize();
	if (!err)
		rc = CLF_EXIT_OK;
out:
	if (rc != CLF_EXIT_OK && clf_error_last()->err)
		tool_fail();
	if (bg)
		unlink(pidfile);
	map_clear(&s);
	free(s.map);
	for (size_t i = 0; i < s.n; i++) {
		free(s.f[i].path);
		free(s.f[i].bpath);
	}
	free(s.f);
	ops_clear(&s);
	free(s.ops);
	clf_config_free(cfg);
	return rc;
}
