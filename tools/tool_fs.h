/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool_fs.h -- what the commands that work on the files of an instance
 * share (setlayout, getlayout, map, cp, ls): connecting, clf paths,
 * messages about a path, the layout options, sizes.
 *
 * Paths: an argument "clf:/a/b" (or "clf:a/b") names /a/b in the clf
 * namespace; anything else is a local path.  setlayout, getlayout, map
 * and ls only take clf files, so for them the prefix is optional ("/a/b"
 * is the same).  cp needs it to tell the two apart; a local file whose
 * name starts with "clf:" is written "./clf:...".  "clf://HOST[:PORT]/a/b"
 * names /a/b on the instance whose metad is HOST:PORT: with no -c or
 * --data, the commands connect to it without a configuration file.
 *
 * Like the rest of tools/, functions return 0 or a negative errno with
 * the message in CLF_Last_error(); only the cmd_* functions return exit
 * codes.
 */
#ifndef CLF_TOOL_FS_H
#define CLF_TOOL_FS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "clf.h"
#include "clf_proto.h"
#include "layout_text.h"
#include "tool.h"

#define TOOL_CLF_PREFIX "clf:"

/* Room for a normalized clf path ("/" + CLF_PROTO_PATH_MAX). */
#define TOOL_PATH_MAX (CLF_PROTO_PATH_MAX + 2)

/* Does arg name a clf file ("clf:...")? */
bool tool_is_clf_path(const char *arg);

/*
 * tool_clf_path - the clf path arg names, with or without "clf:", as
 * "/a/b" ("." and ".." resolved, no trailing '/'; "/" for the root)
 * into buf of TOOL_PATH_MAX bytes.  -ENOENT for an empty path,
 * -ENAMETOOLONG.
 */
int tool_clf_path(const char *arg, char *buf);

/*
 * tool_clf_connect - CLF_init() on the instance of --data DIR, else of
 * -c (a file or a clf://HOST:PORT URL), else of the first clf:// argument
 * (g->url), else of the library's lookup (tool_config_open), which must have
 * a secret.  Nothing is contacted yet: a daemon that is down shows at
 * the first request.  The caller ends with CLF_finalize().
 */
int tool_clf_connect(const struct tool_opts *g, const char *data_dir);

/*
 * The reason of the failure err (negative errno) for a message about a
 * path: the last error's reason when the client said it (it names the
 * daemon: "metad (127.0.0.1:7000): down: ..."); for a daemon's answer
 * (clf_error_last()->source.answered), which names the request, plain
 * words for what the
 * path is wrong about ("no such file or directory"), else the answer.
 */
void tool_clf_reason(int err, char *buf, size_t len);

/*
 * clf_fail(errnum, "clf: <reason>") with strerror's reason in lower
 * case, as the daemons' reasons are written: one style of message for
 * local and clf paths.  Returns -errnum.
 */
int tool_fail_errno(int errnum);

/* The last error without its reporter, for a message of our own. */
const char *tool_last_error(void);

/*
 * Print "clf: cannot <what> '<path>': <reason>" on stderr and return
 * CLF_EXIT_FAIL.  what is e.g. "get the layout of".
 */
int tool_fail_on(const char *what, const char *path, int err);

/*
 * tool_parse_size - a byte count: decimal digits and an optional suffix
 * k, m, g or t (powers of 1024, either case), as in the layout text.
 * 0 or -EINVAL (not a number, or > max).
 */
int tool_parse_size(const char *s, int64_t max, int64_t *out);

/*
 * A text option (opt, e.g. "--view") that does not parse: print "clf
 * CMD: bad OPT: <CLF_Last_error()>", then the text with a caret under
 * the column the message names (when the text is one printable line),
 * and the hint to --help.  Returns CLF_EXIT_USAGE.
 */
int tool_bad_text(const char *cmd, const char *opt, const char *text);

/* The parent of the normalized path ("/a" -> "/", "/a/b" -> "/a") into
 * dir (TOOL_PATH_MAX bytes); the last component is borrowed from path.
 * The root has no parent: -EINVAL. */
int tool_path_split(const char *path, char *dir, const char **name);

/* ------------------------------------------------------------------ */
/* Layout options: --pattern TEXT, or --stripe-size/-count, --first-iod */
/* ------------------------------------------------------------------ */

struct tool_layout_opts {
	const char *pattern;	/* --pattern, or NULL */
	int64_t stripe_size;	/* --stripe-size, or 0: the configuration's */
	long stripe_count;	/* --stripe-count, or 0: the configuration's */
	long first_iod;		/* --first-iod, or -1: the configuration's */
	bool force;		/* --force: more subfiles than iods is meant */
};

/* getopt_long values of the options below (above any character). */
enum {
	TOOL_OPT_PATTERN = 0x100,
	TOOL_OPT_STRIPE_SIZE,
	TOOL_OPT_STRIPE_COUNT,
	TOOL_OPT_FIRST_IOD,
	TOOL_OPT_FORCE,
};

/* The entries of the options above, for a command's option table. */
#define TOOL_LAYOUT_LONGOPTS                                               \
	{ "pattern", required_argument, NULL, TOOL_OPT_PATTERN },          \
	{ "stripe-size", required_argument, NULL, TOOL_OPT_STRIPE_SIZE },  \
	{ "stripe-count", required_argument, NULL, TOOL_OPT_STRIPE_COUNT }, \
	{ "first-iod", required_argument, NULL, TOOL_OPT_FIRST_IOD },      \
	{ "force", no_argument, NULL, TOOL_OPT_FORCE }

/* What --help says of them. */
#define TOOL_LAYOUT_HELP                                                      \
	"  --pattern TEXT      the layout in the layout text syntax\n"          \
	"                      (docs/layout-syntax.md): rr:stripe=64k,count=4,\n" \
	"                      cyclic:k=4k,p=4, grid:..., vec(...);vec(...)\n"  \
	"  --stripe-size SIZE  round robin: bytes per stripe (64k, 1m, ...)\n"   \
	"  --stripe-count N    round robin: number of subfiles\n"              \
	"  --first-iod I       round robin: the iod of subfile 0\n"            \
	"                      (the configuration gives what is left out)\n"  \
	"  --force             accept more subfiles than there are iods\n"    \
	"                      (several subfiles then share an iod)\n"

static inline void tool_layout_opts_init(struct tool_layout_opts *o)
{
	*o = (struct tool_layout_opts){ .first_iod = -1 };
}

/* Were any layout options given (--force is none)? */
bool tool_layout_given(const struct tool_layout_opts *o);

/*
 * tool_layout_opt - take option c (one of TOOL_OPT_*) with arg.
 * Returns 0, 1 when c is not a layout option, or a usage exit code
 * (message printed) for a bad value or --pattern mixed with the others.
 * A --pattern text that does not parse is bad usage too: the message
 * gives the column and shows it under the text.
 */
int tool_layout_opt(const char *cmd, struct tool_layout_opts *o, int c,
		    const char *arg);

/*
 * tool_layout_make - after tool_clf_connect, the layout the options
 * say, completed from the configuration: its text (the --pattern as
 * given, or "rr:stripe=...,count=...[,first=...]"; caller frees) and
 * desc (clf_layout_desc_release), checked against the instance's iods.
 * More subfiles than iods is refused (-EINVAL, saying why) unless
 * o->force: it is seldom meant (count=400 on 4 iods).
 */
int tool_layout_make(const struct tool_layout_opts *o, char **text,
		     struct clf_layout_desc *desc);

/* 1048576 -> "1m", 65535 -> "65535": sizes as the layout text writes
 * them. */
void tool_fmt_num(int64_t v, char *buf, size_t len);

/* The layout of inode ino as text (caller frees). */
int tool_layout_text_of(uint64_t ino, char **text);

/* "-rw-r--r--" from a mode, into buf of 11 bytes. */
void tool_fmt_mode(mode_t mode, char buf[11]);

#endif /* CLF_TOOL_FS_H */
