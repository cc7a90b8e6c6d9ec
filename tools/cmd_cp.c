// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_cp.c -- `clf cp`: copy a file between the local file system and
 * clf, either way, or from clf to clf.
 *
 * "clf:/a/b" names a clf file, anything else a local one ("-": standard
 * input or output).  A new clf file gets, in this order: the layout of
 * --pattern / --stripe-*, its directory's default layout, the
 * configuration's round robin -- what the mount gives a new file too.
 * An existing clf destination is emptied and, with layout options,
 * given the new layout.  The mode of the source is kept.
 *
 * Data moves in COPY_CHUNK pieces through the native API's default view
 * (the file as plain bytes): one chunk is one parallel access to every
 * iod holding part of it.  A sparse local file keeps its holes.
 */
#define _GNU_SOURCE	/* SEEK_DATA, SEEK_HOLE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "clf_ll.h"
#include "cp_ahead.h"
#include "error.h"
#include "tool_fs.h"
#include "tool_jobs.h"

/* From clf: readers, each on connections of its own, reading chunks
 * ahead of the one being written (cp_ahead.c). */
#define CP_AHEAD_READERS 2
#define CP_AHEAD_CHUNK (16 << 20)
#define COPY_CHUNK (32 << 20)	/* bytes per read and write: each waits for
				   its reply, a round trip on a long link */
#define CLF_LAYOUT_XATTR "user.clf.layout"	/* as the mount names it */
#define PROGRESS_EVERY_NS 100000000LL	/* redraw the bar at most 10/s */

struct cp_opts {
	const char *data;	/* --data DIR, or NULL */
	struct tool_layout_opts layout;
	bool quiet;		/* -q */
	int preserve;		/* -p 1, --no-preserve-layout 0, else -1 */
	bool recursive;		/* -r: directories and what they hold */
	int jobs;		/* -j N: files copied by N processes at once */
	const char *src, *dst;	/* the operands, as given */
};

/* One end of the copy. */
struct cp_end {
	bool clf;
	const char *arg;	/* as given, for messages */
	char path[TOOL_PATH_MAX + CLF_PROTO_NAME_MAX + 2];
	int fd;			/* local or CLF descriptor; -1: none */
	bool std;		/* "-": standard input or output */
	bool slash;		/* given with a trailing '/': a directory */
	int64_t size;		/* a clf source's, when opened */
};

static void cp_help(void)
{
	printf("usage: clf [-c CONFIG] cp [--data DIR] [-q] [-p] [-r] [LAYOUT OPTIONS] SRC DST\n"
	       "\n"
	       "Copy the file SRC to DST, at least one of them in clf: a path\n"
	       "\"clf:/a/b\" names a clf file, any other a local one (\"./clf:x\" for a\n"
	       "local file whose name starts with \"clf:\"; \"-\" for standard input\n"
	       "or output).  Local to clf, clf to local and clf to clf.  When DST\n"
	       "is a directory, the copy goes into it under SRC's name.  The mode\n"
	       "of SRC is kept.\n"
	       "\n"
	       "A new clf DST gets the layout of the options below, else SRC's\n"
	       "(-p; the default from clf to clf), else the default layout of its\n"
	       "directory, else the configuration's; an existing one is emptied\n"
	       "first (and, with layout options or -p, given that layout).\n"
	       "\n"
	       TOOL_LAYOUT_HELP
	       "  -p, --preserve-layout\n"
	       "                      give DST the layout of SRC: a clf file's, or a\n"
	       "                      local file's user.clf.layout (on a clf mount);\n"
	       "                      to a local DST on a clf mount, set its\n"
	       "                      user.clf.layout before the data\n"
	       "  --no-preserve-layout\n"
	       "                      clf to clf: DST's directory decides instead\n"
	       "  -r, -R, --recursive copy directories and everything in them (a\n"
	       "                      DST directory takes SRC under its name)\n"
	       "  -j, --jobs N        with -r, copy N files at once, each by a clf\n"
	       "                      process of its own (clf stage-in/stage-out)\n"
	       "  -q, --quiet         no progress bar and no summary\n"
	       "  --data DIR          the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "On a terminal, stderr shows a progress bar; at the end stdout (stderr\n"
	       "when DST is \"-\") gets one line: SRC -> DST: BYTES bytes in SECONDS s.\n"
	       "Examples:\n"
	       "\n"
	       "  clf cp results.dat clf:/runs/results.dat\n"
	       "  clf cp --pattern 'cyclic:k=4k,p=4' in.dat clf:/in.dat\n"
	       "  clf cp clf:/runs/results.dat .\n"
	       "\n"
	       "Exit status: 0 copied, 1 failure (what was written stays), 2 bad usage.\n");
}

static int parse_args(int argc, char **argv, struct cp_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "preserve-layout", no_argument, NULL, 'p' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "no-preserve-layout", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		TOOL_LAYOUT_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, ":qprRhj:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->jobs = atoi(optarg);
			if (o->jobs < 1 || o->jobs > 256)
				return tool_usage("cp", "-j %s: give 1 to 256 processes",
						  optarg);
			break;
		case 'p':
			o->preserve = 1;
			break;
		case 'P':
			o->preserve = 0;
			break;
		case 'r':
		case 'R':
			o->recursive = true;
			break;
		case 'D':
			o->data = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			cp_help();
			return -1;
		case '?':
		case ':':
			return tool_bad_option("cp", c, argv);
		default:
			rc = tool_layout_opt("cp", &o->layout, c, optarg);
			if (rc)
				return rc;
		}
	}
	if (argc - optind < 2)
		return tool_usage("cp", "need a source and a destination");
	if (argc - optind > 2)
		return tool_usage("cp", "unexpected argument '%s' (one file at a time)",
				  argv[optind + 2]);
	o->src = argv[optind];
	o->dst = argv[optind + 1];
	if (!tool_is_clf_path(o->src) && !tool_is_clf_path(o->dst))
		return tool_usage("cp",
				  "neither '%s' nor '%s' is a clf path (clf:/...): for two local files use cp(1)",
				  o->src, o->dst);
	if (tool_layout_given(&o->layout) && !tool_is_clf_path(o->dst))
		return tool_usage("cp",
				  "layout options are for a clf destination; '%s' is local",
				  o->dst);
	if (tool_layout_given(&o->layout) && o->preserve == 1)
		return tool_usage("cp",
				  "-p keeps the source's layout: it takes no layout options");
	/* clf to clf keeps the layout unless told otherwise. */
	if (o->preserve < 0)
		o->preserve = tool_is_clf_path(o->src) &&
			      tool_is_clf_path(o->dst) &&
			      !tool_layout_given(&o->layout);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Progress                                                            */
/* ------------------------------------------------------------------ */

struct progress {
	bool on;		/* stderr is a terminal and not -q */
	int64_t total;		/* bytes, -1 when unknown */
	int64_t start_ns, last_ns;
	const char *name;	/* the destination, borrowed */
};

static int term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	return 80;
}

static void progress_draw(struct progress *p, int64_t done, bool last)
{
	char sdone[24], stotal[24], srate[24], bar[64];
	int64_t now = clf_now_ns(), el;
	int width, pct, fill;

	if (!p->on || (!last && now - p->last_ns < PROGRESS_EVERY_NS))
		return;
	p->last_ns = now;
	el = now - p->start_ns;
	tool_fmt_size((uint64_t)done, false, sdone, sizeof(sdone));
	tool_fmt_size(el > 0 ? (uint64_t)((double)done * 1e9 / el) : 0, false,
		      srate, sizeof(srate));
	if (p->total < 0) {
		fprintf(stderr, "\r\033[K%s  %s  %s/s", p->name, sdone, srate);
		return;
	}
	tool_fmt_size((uint64_t)p->total, false, stotal, sizeof(stotal));
	pct = p->total ? (int)(done * 100 / p->total) : 100;
	/* name, " 100% [", bar, "] 1.5G/2.0G 1.2G/s" */
	width = term_width() - 36;
	width = width > (int)sizeof(bar) - 1 ? (int)sizeof(bar) - 1 : width;
	width = width < 10 ? 10 : width;
	fill = width * pct / 100;
	memset(bar, '#', fill);
	memset(bar + fill, '.', width - fill);
	bar[width] = '\0';
	fprintf(stderr, "\r\033[K%3d%% [%s] %s/%s %s/s", pct, bar, sdone,
		stotal, srate);
}

static void progress_end(struct progress *p, int64_t done)
{
	if (!p->on)
		return;
	progress_draw(p, done, true);
	fprintf(stderr, "\r\033[K");
}

/* ------------------------------------------------------------------ */
/* The two ends                                                        */
/* ------------------------------------------------------------------ */

static int end_init(struct cp_end *e, const char *arg)
{
	int n;

	*e = (struct cp_end){ .clf = tool_is_clf_path(arg), .arg = arg,
			      .fd = -1, .std = !strcmp(arg, "-") };
	n = (int)strlen(arg);
	e->slash = n > 0 && arg[n - 1] == '/';
	if (e->clf)
		return tool_clf_path(arg, e->path);
	n = snprintf(e->path, sizeof(e->path), "%s", arg);
	if (n < 0 || (size_t)n >= sizeof(e->path))
		return clf_fail(ENAMETOOLONG, "clf: '%s' is too long", arg);
	return 0;
}

/* "clf:/a/b" or the local path, for messages. */
static void end_name(const struct cp_end *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", e->clf ? TOOL_CLF_PREFIX : "", e->path);
}

/* Open the source; its mode and size (-1: unknown) into *st. */
static int open_src(struct cp_end *s, struct stat *st)
{
	int err;

	if (s->clf) {
		err = CLF_stat(s->path, st);
		/* Not in clf: an open stages it in from the instance's
		 * backing directory when that has it (docs/staging.md). */
		if (err == -ENOENT) {
			int fd = CLF_open(s->path, O_RDONLY);

			if (fd >= 0) {
				CLF_close(fd);
				err = CLF_stat(s->path, st);
			}
		}
		if (!err && S_ISDIR(st->st_mode))
			err = clf_fail(EISDIR, "clf: is a directory");
		if (!err)
			err = CLF_open(s->path, O_RDONLY);
		if (err < 0)
			return err;
		s->fd = err;
		s->size = st->st_size;
		return 0;
	}
	if (s->std) {
		s->fd = STDIN_FILENO;
		if (fstat(s->fd, st))
			return tool_fail_errno(errno);
		if (!S_ISREG(st->st_mode)) {
			mode_t mask = umask(0);

			umask(mask);
			st->st_size = -1;
			st->st_mode = S_IFREG | (0666 & ~mask);
		}
		return 0;
	}
	s->fd = open(s->path, O_RDONLY);
	if (s->fd < 0)
		return tool_fail_errno(errno);
	if (fstat(s->fd, st))
		return tool_fail_errno(errno);
	if (S_ISDIR(st->st_mode))
		return clf_fail(EISDIR, "clf: is a directory");
	if (!S_ISREG(st->st_mode))
		st->st_size = -1;
	return 0;
}

/* The last component of a source path ("-": "stdin"). */
static const char *base_name(const struct cp_end *s)
{
	const char *p = s->std ? "stdin" : s->path;
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	while (n > 0 && p[n - 1] != '/')
		n--;
	return p + n;
}

/*
 * The layout text of the source for -p into *text (caller frees), or
 * NULL: a clf file's, or a local file's user.clf.layout (a file on a
 * clf mount); a local file without one has none to keep.
 */
static int src_layout(const struct cp_end *s, const struct stat *st,
		      char **text)
{
	ssize_t n, got;
	char *buf;

	*text = NULL;
	if (s->clf)
		return tool_layout_text_of(st->st_ino, text);
	if (s->std)
		return 0;
	n = fgetxattr(s->fd, CLF_LAYOUT_XATTR, NULL, 0);
	if (n < 0)
		return errno == ENODATA || errno == ENOTSUP
			       ? 0 : tool_fail_errno(errno);
	if (n > CLF_LAYOUT_TEXT_MAX)
		return clf_fail(E2BIG, "clf: its layout is too long");
	buf = malloc((size_t)n + 1);
	if (!buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	got = fgetxattr(s->fd, CLF_LAYOUT_XATTR, buf, (size_t)n);
	if (got < 0) {
		free(buf);
		return tool_fail_errno(errno);
	}
	buf[got] = '\0';
	*text = buf;
	return 0;
}

/* When the destination is a directory, go into it under src's name. */
static int into_dir(struct cp_end *d, const struct cp_end *s)
{
	const char *name = base_name(s);
	size_t len = strlen(d->path), nl = strcspn(name, "/");
	struct stat st;
	int err;

	if (d->std)
		return 0;
	err = d->clf ? CLF_stat(d->path, &st) : stat(d->path, &st) ? -errno : 0;
	/* "DIR/" names a directory, as for cp(1): never a new file. */
	if (d->slash && (err == -ENOENT || (!err && !S_ISDIR(st.st_mode))))
		return clf_fail(ENOTDIR, "clf: not a directory");
	if (err || !S_ISDIR(st.st_mode))
		return 0;
	if (len + 1 + nl + 1 > sizeof(d->path))
		return clf_fail(ENAMETOOLONG, "clf: '%s/%.*s' is too long",
				d->path, (int)nl, name);
	if (len == 0 || d->path[len - 1] != '/')
		d->path[len++] = '/';
	memcpy(d->path + len, name, nl);
	d->path[len + nl] = '\0';
	return 0;
}

/* The layout a new file in directory dir gets without options. */
static int dir_layout(uint64_t dir, struct clf_layout_desc *desc)
{
	char *text = NULL;
	int err = clf_ll_dir_default_read(dir, &text);

	if (err || !text)
		return err;
	err = clf_layout_text_parse(text, desc);
	if (!err) {
		err = clf_ll_check_layout(desc);
		if (err)
			clf_layout_desc_release(desc);
	}
	/* As the mount does: a broken default is no reason to fail. */
	if (err)
		fprintf(stderr, "clf: warning: ignoring the default layout '%s' of the destination's directory: %s\n",
			text, CLF_Last_error());
	free(text);
	return err ? 0 : 1;
}

/* Create the missing clf file d->path with mode and the right layout. */
static int create_clf(struct cp_end *d, mode_t mode,
		      const struct tool_layout_opts *lo)
{
	struct clf_ll_owner owner = { geteuid(), getegid() };
	struct clf_layout_desc desc;
	char dir[TOOL_PATH_MAX], *text = NULL;
	struct clf_proto_attr a;
	const char *name;
	struct stat st;
	int err, has;

	err = tool_path_split(d->path, dir, &name);
	if (!err)
		err = CLF_stat(dir, &st);
	if (err == -ENOENT)
		return clf_fail(ENOENT, "clf: no such directory '%s'", dir);
	if (!err && !S_ISDIR(st.st_mode))
		return clf_fail(ENOTDIR, "clf: '%s' is not a directory", dir);
	if (err)
		return err;
	if (tool_layout_given(lo)) {
		err = tool_layout_make(lo, &text, &desc);
		has = err ? err : 1;
		free(text);
	} else {
		has = dir_layout(st.st_ino, &desc);
	}
	if (has < 0)
		return has;
	err = clf_ll_create(st.st_ino, name, mode, &owner, false,
			    has ? &desc : NULL, O_WRONLY, &a);
	if (has)
		clf_layout_desc_release(&desc);
	if (err < 0)
		return err;
	d->fd = err;
	return 0;
}

/* Open the existing clf file of st for writing, emptied, with mode. */
static int reopen_clf(struct cp_end *d, const struct stat *st, mode_t mode,
		      const struct tool_layout_opts *lo)
{
	struct clf_proto_attr to = { .mode = mode & 07777 }, a;
	struct clf_layout_desc desc;
	char *text = NULL;
	int err, fd;

	fd = CLF_open(d->path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return fd;
	d->fd = fd;
	if (tool_layout_given(lo)) {
		err = tool_layout_make(lo, &text, &desc);
		if (err)
			return err;
		free(text);
		err = clf_ll_set_layout(st->st_ino, &desc);
		clf_layout_desc_release(&desc);
		if (!err)
			err = clf_ll_reload_layout(fd);
		if (err)
			return err;
	}
	if ((st->st_mode & 07777) == (mode & 07777))
		return 0;
	return clf_ll_setattr(st->st_ino, CLF_PROTO_SETATTR_MODE, &to, &a);
}

static int open_dst(struct cp_end *d, const struct cp_end *s,
		    const struct stat *sst, const struct tool_layout_opts *lo)
{
	mode_t mode = sst->st_mode & 07777;
	struct stat st;
	int err;

	if (d->std) {
		d->fd = STDOUT_FILENO;
		return 0;
	}
	if (!d->clf) {
		d->fd = open(d->path, O_WRONLY | O_CREAT | O_TRUNC, mode);
		/* Also for a file that existed, and despite the umask. */
		if (d->fd < 0 || fchmod(d->fd, mode))
			return tool_fail_errno(errno);
		return 0;
	}
	err = CLF_stat(d->path, &st);
	if (!err && s->clf) {
		struct stat ss;

		/* The same file: emptying it would lose the data. */
		if (!CLF_stat(s->path, &ss) && ss.st_ino == st.st_ino)
			return clf_fail(EINVAL, "clf: it is the source");
	}
	if (err == -ENOENT)
		return create_clf(d, mode, lo);
	if (err)
		return err;
	if (!S_ISREG(st.st_mode))
		return clf_fail(EISDIR, "clf: not a regular file");
	return reopen_clf(d, &st, mode, lo);
}

/* Read up to len bytes, as many as there are before the end. */
static int64_t read_full(const struct cp_end *s, char *buf, int64_t len)
{
	int64_t got = 0;

	while (got < len) {
		ssize_t n = s->clf ? CLF_read(s->fd, buf + got, len - got)
				   : read(s->fd, buf + got, len - got);

		if (n < 0 && !s->clf && errno == EINTR)
			continue;
		if (n < 0)
			return s->clf ? n : tool_fail_errno(errno);
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

static int write_full(const struct cp_end *d, const char *buf, int64_t len)
{
	while (len > 0) {
		ssize_t n = d->clf ? CLF_write(d->fd, buf, len)
				   : write(d->fd, buf, len);

		if (n < 0 && !d->clf && errno == EINTR)
			continue;
		if (n < 0)
			return d->clf ? (int)n : tool_fail_errno(errno);
		if (n == 0)
			return clf_fail(EIO, "clf: wrote nothing");
		buf += n;
		len -= n;
	}
	return 0;
}

static int end_close(struct cp_end *e)
{
	int fd = e->fd;

	e->fd = -1;
	if (fd < 0 || e->std)
		return 0;
	if (e->clf)
		return CLF_close(fd);
	return close(fd) ? tool_fail_errno(errno) : 0;
}

/* "cannot <what> 'name': why" for one end. */
static int end_fail(const struct cp_end *e, const char *what, int err)
{
	char name[sizeof(e->path) + 8];

	end_name(e, name, sizeof(name));
	return tool_fail_on(what, name, err);
}

/*
 * All of a clf source from its position, read ahead (cp_ahead.c): the
 * next chunks' reads are in flight while one is written out.  *started
 * false: the readers could not start (copy as before); else an exit
 * code as copy_bytes's.
 */
static int copy_ahead(struct cp_end *s, struct cp_end *d, struct progress *p,
		      int64_t *done, bool *started)
{
	int64_t start = CLF_lseek(s->fd, 0, SEEK_CUR), n;
	char msg[256];
	const char *buf;
	struct cp_ahead *a;
	int err = 0;

	*started = false;
	if (start < 0)
		return 0;
	a = cp_ahead_start(s->path, start, CP_AHEAD_CHUNK, CP_AHEAD_READERS);
	if (!a)
		return 0;
	*started = true;
	while ((n = cp_ahead_take(a, &buf, msg, sizeof(msg))) > 0) {
		err = write_full(d, buf, n);
		if (err) {
			err = end_fail(d, "write", err);
			break;
		}
		*done += n;
		progress_draw(p, *done, false);
	}
	if (n < 0) {
		clf_fail(-(int)n, "%s", msg);
		err = end_fail(s, "read", (int)n);
	}
	cp_ahead_stop(a);
	return err;
}

/* Move up to len bytes (-1: all) from the source's position to the
 * destination's, fewer when the source ends first; *done counts them. */
static int copy_bytes(struct cp_end *s, struct cp_end *d, char *buf,
		      int64_t len, struct progress *p, int64_t *done)
{
	if (len < 0 && s->clf && !s->std && s->size > CP_AHEAD_CHUNK) {
		bool started;
		int err = copy_ahead(s, d, p, done, &started);

		if (started)
			return err;
	}
	while (len) {
		int64_t want = len < 0 || len > COPY_CHUNK ? COPY_CHUNK : len;
		int64_t n = read_full(s, buf, want);
		int err;

		if (n < 0)
			return end_fail(s, "read", (int)n);
		if (n == 0)
			return 0;
		err = write_full(d, buf, n);
		if (err)
			return end_fail(d, "write", err);
		*done += n;
		if (len > 0)
			len -= n;
		progress_draw(p, *done, false);
	}
	return 0;
}

/*
 * Whether the source is a local file with holes that lseek(SEEK_HOLE)
 * finds, and its size.  A file system that cannot tell says the whole
 * file is data, and the plain copy runs.
 */
static bool local_holes(const struct cp_end *s, struct cp_end *d,
			int64_t *size)
{
	struct stat st;
	off_t hole;

	if (s->clf || s->std || !d->clf || fstat(s->fd, &st) ||
	    !S_ISREG(st.st_mode))
		return false;
	hole = lseek(s->fd, 0, SEEK_HOLE);
	if (lseek(s->fd, 0, SEEK_SET) != 0)
		return false;
	*size = st.st_size;
	return hole >= 0 && hole < st.st_size;
}

/*
 * A sparse local file into clf, as cp --sparse=auto: only its data
 * extents are written, so its holes stay holes (the destination was
 * emptied when opened, and an iod makes a subfile at its first write:
 * a subfile whose stripes all fall in holes is never made), then the
 * size is set where a hole ends the file.
 */
static int copy_sparse(struct cp_end *s, struct cp_end *d, char *buf,
		       int64_t size, struct progress *p, int64_t *done)
{
	int64_t off = 0, r;
	int err;

	while (off < size) {
		off_t data = lseek(s->fd, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break;		/* a hole to the end */
		if (data < 0)
			return end_fail(s, "read", -errno);
		hole = lseek(s->fd, data, SEEK_HOLE);
		if (hole < 0 || lseek(s->fd, data, SEEK_SET) != data)
			return end_fail(s, "read", -errno);
		*done += data - off;
		r = CLF_lseek(d->fd, data, SEEK_SET);
		if (r < 0)
			return end_fail(d, "write", (int)r);
		err = copy_bytes(s, d, buf, hole - data, p, done);
		if (err)
			return err;
		off = hole;
	}
	if (off < size) {
		/* Only when a hole ends the file: a truncate reaches every
		 * iod, and each makes its subfile. */
		err = CLF_ftruncate(d->fd, size);
		if (err)
			return end_fail(d, "truncate", err);
		*done += size - off;
	}
	progress_draw(p, *done, false);
	return 0;
}

/* Move every byte; *done counts them. */
static int copy_data(struct cp_end *s, struct cp_end *d, struct progress *p,
		     int64_t *done)
{
	char *buf = malloc(COPY_CHUNK);
	int64_t size;
	int err;

	if (!buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	if (local_holes(s, d, &size))
		err = copy_sparse(s, d, buf, size, p, done);
	else
		err = copy_bytes(s, d, buf, -1, p, done);
	free(buf);
	return err;
}

/* Copy the file src to dst (as given on the command line): an exit
 * code, the failure said. */
static int copy_one(const struct cp_opts *o, const char *src,
		    const char *dst)
{
	struct tool_layout_opts lo = o->layout;
	struct cp_end s, d;
	struct progress p = { 0 };
	char sname[sizeof(s.path) + 8], dname[sizeof(d.path) + 8];
	struct stat st;
	int64_t done = 0;
	char *keep = NULL;
	double secs;
	int rc, err;

	if (end_init(&s, src) || end_init(&d, dst))
		return tool_usage("cp", "%s", tool_last_error());
	rc = CLF_EXIT_FAIL;
	err = open_src(&s, &st);
	if (err) {
		end_fail(&s, "open", err);
		goto close;
	}
	if (o->preserve == 1) {
		err = src_layout(&s, &st, &keep);
		if (err) {
			end_fail(&s, "read the layout of", err);
			goto close;
		}
		if (keep && d.clf) {
			lo.pattern = keep;
			lo.force = true;	/* it is the source's */
		}
	}
	err = into_dir(&d, &s);
	if (!err)
		err = open_dst(&d, &s, &st, &lo);
	if (!err && keep && !d.clf && !d.std &&
	    fsetxattr(d.fd, CLF_LAYOUT_XATTR, keep, strlen(keep), 0))
		fprintf(stderr, "clf: warning: '%s' does not keep the layout %s: %s (only a file on a clf mount can)\n",
			d.path, keep, strerror(errno));
	if (err) {
		end_fail(&d, "create", err);
		goto close;
	}
	end_name(&s, sname, sizeof(sname));
	end_name(&d, dname, sizeof(dname));
	p = (struct progress){ .on = !o->quiet && isatty(STDERR_FILENO),
			       .total = st.st_size, .start_ns = clf_now_ns(),
			       .name = dname };
	err = copy_data(&s, &d, &p, &done);
	progress_end(&p, done);
	if (err)
		goto close;
	/* Closing a clf destination reports its size to metad. */
	err = end_close(&d);
	if (err) {
		end_fail(&d, "finish writing", err);
		goto close;
	}
	secs = (double)(clf_now_ns() - p.start_ns) / 1e9;
	if (!o->quiet)
		fprintf(d.std ? stderr : stdout,
			"%s -> %s: %lld bytes in %.2f s\n", sname, dname,
			(long long)done, secs);
	rc = CLF_EXIT_OK;
close:
	end_close(&d);
	end_close(&s);
	free(keep);
	return rc;
}

/* ------------------------------------------------------------------ */
/* -r: directories                                                     */
/* ------------------------------------------------------------------ */

#define CP_ARG_MAX (TOOL_PATH_MAX + 8)

/* stat of a path as given ("clf:/a" or local): 0 or a negative errno. */
static int arg_stat(const char *arg, struct stat *st)
{
	char path[TOOL_PATH_MAX];
	int err;

	if (!tool_is_clf_path(arg))
		return stat(arg, st) ? -errno : 0;
	err = tool_clf_path(arg, path);
	return err ? err : CLF_stat(path, st);
}

static int arg_mkdir(const char *arg, mode_t mode)
{
	char path[TOOL_PATH_MAX];
	int err;

	if (!tool_is_clf_path(arg))
		return mkdir(arg, mode) ? tool_fail_errno(errno) : 0;
	err = tool_clf_path(arg, path);
	return err ? err : CLF_mkdir(path, mode);
}

/* The names in directory arg (not ".", "..", nor the hidden default
 * layout), into a NULL-ended array (caller frees each and it). */
static int arg_names(const char *arg, const struct stat *st, char ***out)
{
	size_t n = 0, alloc = 16;
	char **v = malloc(alloc * sizeof(*v));
	int err = 0;

	if (!v)
		return clf_fail(ENOMEM, "clf: out of memory");
	if (!tool_is_clf_path(arg)) {
		DIR *dir = opendir(arg);
		struct dirent *e;

		if (!dir) {
			free(v);
			return tool_fail_errno(errno);
		}
		while (!err && (e = readdir(dir))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (n + 1 == alloc) {
				char **nv = realloc(v, 2 * alloc * sizeof(*v));

				if (!nv) {
					err = clf_fail(ENOMEM, "clf: out of memory");
					break;
				}
				v = nv;
				alloc *= 2;
			}
			if (!(v[n++] = strdup(e->d_name)))
				err = clf_fail(ENOMEM, "clf: out of memory");
		}
		closedir(dir);
	} else {
		struct clf_ll_dirents d;
		uint64_t cookie = 0;
		bool eof = false;

		while (!eof && !err) {
			err = clf_ll_readdir(st->st_ino, cookie,
					     CLF_PROTO_READDIR_MAX, &d);
			if (err)
				break;
			for (uint32_t i = 0; i < d.rep.count && !err; i++) {
				const struct clf_proto_dirent *e = &d.rep.ents[i];

				cookie = e->cookie;
				if (clf_proto_str_eq(e->name,
						     CLF_LL_DEFAULT_LAYOUT_NAME))
					continue;
				if (n + 1 == alloc) {
					char **nv = realloc(v, 2 * alloc *
								   sizeof(*v));

					if (!nv) {
						err = clf_fail(ENOMEM, "clf: out of memory");
						break;
					}
					v = nv;
					alloc *= 2;
				}
				v[n] = strndup(e->name.ptr, e->name.len);
				if (!v[n++])
					err = clf_fail(ENOMEM, "clf: out of memory");
			}
			eof = d.rep.eof || d.rep.count == 0;
			clf_ll_dirents_release(&d);
		}
	}
	v[n] = NULL;
	if (err) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

/* The last component of arg ("clf:/a/b/" -> "b"). */
static void arg_base(const char *arg, char *buf, size_t len)
{
	size_t n = strlen(arg), e;

	while (n > 1 && arg[n - 1] == '/')
		n--;
	e = n;
	while (n > 0 && arg[n - 1] != '/' && arg[n - 1] != ':')
		n--;
	snprintf(buf, len, "%.*s", (int)(e - n), arg + n);
}

/* Give the clf directory target the default layout of the one of st. */
static int copy_default(const struct stat *st, const char *target)
{
	struct clf_ll_owner owner = { geteuid(), getegid() };
	struct stat dt;
	char *text = NULL;
	int err = clf_ll_dir_default_read(st->st_ino, &text);

	if (!err && text)
		err = arg_stat(target, &dt);
	if (!err && text)
		err = clf_ll_dir_default_write(dt.st_ino, &owner, text);
	free(text);
	return err;
}

/*
 * Copy src to dst, a directory with what it holds under -r.  top: dst
 * as given, which takes src under its name when it is a directory (cp
 * semantics); below, dst is the path itself.
 */
static int copy_tree(const struct cp_opts *o, const char *src,
		     const char *dst, bool top)
{
	char target[CP_ARG_MAX], base[CLF_PROTO_NAME_MAX + 1];
	char cs[CP_ARG_MAX + CLF_PROTO_NAME_MAX + 2];
	char cd[CP_ARG_MAX + CLF_PROTO_NAME_MAX + 2];
	struct stat st, dt;
	char **names = NULL;
	int err, rc = CLF_EXIT_OK;

	if (strcmp(src, "-") == 0 || arg_stat(src, &st) ||
	    !S_ISDIR(st.st_mode)) {
		if (o->jobs > 1 && !top)
			return tool_jobs_run(src, dst) ? tool_fail() : CLF_EXIT_OK;
		return copy_one(o, src, dst);
	}
	if (!o->recursive) {
		fprintf(stderr, "clf: -r not given; omitting directory '%s'\n",
			src);
		return CLF_EXIT_FAIL;
	}
	snprintf(target, sizeof(target), "%s", dst);
	err = arg_stat(dst, &dt);
	if (top && !err && S_ISDIR(dt.st_mode)) {
		size_t n = strlen(target);

		arg_base(src, base, sizeof(base));
		snprintf(target + n, sizeof(target) - n, "%s%s",
			 n && target[n - 1] == '/' ? "" : "/", base);
		err = arg_stat(target, &dt);
	}
	if (!err && !S_ISDIR(dt.st_mode)) {
		fprintf(stderr, "clf: cannot copy directory '%s' onto '%s': not a directory\n",
			src, target);
		return CLF_EXIT_FAIL;
	}
	if (err) {
		err = arg_mkdir(target, st.st_mode & 07777);
		if (err)
			return tool_fail_on("create directory", target, err);
	}
	/* -p between clf directories: the default layout too. */
	if (o->preserve == 1 && tool_is_clf_path(src) &&
	    tool_is_clf_path(target)) {
		err = copy_default(&st, target);
		if (err)
			return tool_fail_on("copy the default layout to",
					    target, err);
	}
	err = arg_names(src, &st, &names);
	if (err)
		return tool_fail_on("read directory", src, err);
	for (char **nm = names; *nm; nm++) {
		size_t sl = strlen(src), dl = strlen(target);

		snprintf(cs, sizeof(cs), "%s%s%s", src,
			 sl && src[sl - 1] == '/' ? "" : "/", *nm);
		snprintf(cd, sizeof(cd), "%s%s%s", target,
			 dl && target[dl - 1] == '/' ? "" : "/", *nm);
		if (copy_tree(o, cs, cd, false))
			rc = CLF_EXIT_FAIL;
		free(*nm);
	}
	free(names);
	return rc;
}

/*
 * -j N: the files under -r go to `clf [-c C] cp -q [-p] [--data D]` runs
 * of their own, N at once.  Layout options are the parent's to apply to
 * new files, which the children would not know: refused with -j.
 */
static int start_jobs(const struct tool_opts *g, const struct cp_opts *o)
{
	static const char *head[10];
	int n = 0;

	if (tool_layout_given(&o->layout))
		return tool_usage("cp", "-j takes no layout options (use -p, or a directory's default layout)");
	head[n++] = "clf";
	if (g->config) {
		head[n++] = "-c";
		head[n++] = g->config;
	}
	head[n++] = "cp";
	head[n++] = "-q";
	if (o->preserve >= 0)
		head[n++] = o->preserve ? "-p" : "--no-preserve-layout";
	if (o->data) {
		head[n++] = "--data";
		head[n++] = o->data;
	}
	head[n] = NULL;
	if (tool_jobs_init(o->jobs, head, !o->quiet))
		return tool_fail();
	return 0;
}

int cmd_cp(const struct tool_opts *g, int argc, char **argv)
{
	struct cp_opts o = { 0 };
	int rc;

	tool_layout_opts_init(&o.layout);
	o.preserve = -1;
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	/* A lane per reader ahead (unless clf.conf sets iod_connections). */
	clf_ll_default_iod_connections(CP_AHEAD_READERS);
	if (tool_clf_connect(g, o.data))
		return tool_fail();
	if (o.jobs > 1 && o.recursive) {
		rc = start_jobs(g, &o);
		if (rc)
			goto out;
	}
	rc = copy_tree(&o, o.src, o.dst, true);
	if (o.jobs > 1 && o.recursive && tool_jobs_finish() && !rc)
		rc = CLF_EXIT_FAIL;
out:
	CLF_finalize();
	return rc;
}
