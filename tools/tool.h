/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tool.h -- what the parts of the clf command line share: the global
 * options, the subcommands, loading the configuration and formatting.
 *
 * Inside, functions return 0 or a negative errno with the message in
 * CLF_Last_error() ("clf: ..."), like libclf.  Only the cmd_* functions
 * return an exit code: CLF_EXIT_OK, CLF_EXIT_FAIL or CLF_EXIT_USAGE.
 */
#ifndef CLF_TOOL_H
#define CLF_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct clf_config;

#define CLF_EXIT_OK 0
#define CLF_EXIT_FAIL 1
#define CLF_EXIT_USAGE 2

/* Options given before the subcommand. */
struct tool_opts {
	const char *config;	/* -c FILE, or NULL: the library's lookup */
	const char *url;	/* the first clf://HOST:PORT/... argument:
				   its instance, when no -c (tool_fs.h) */
};

/* One subcommand: `clf NAME ARGS...`, argv[0] is NAME. */
struct tool_cmd {
	const char *name;
	const char *summary;	/* one line for `clf --help` */
	int (*run)(const struct tool_opts *g, int argc, char **argv);
};

int cmd_up(const struct tool_opts *g, int argc, char **argv);
int cmd_down(const struct tool_opts *g, int argc, char **argv);
int cmd_status(const struct tool_opts *g, int argc, char **argv);
int cmd_df(const struct tool_opts *g, int argc, char **argv);
int cmd_setlayout(const struct tool_opts *g, int argc, char **argv);
int cmd_getlayout(const struct tool_opts *g, int argc, char **argv);
int cmd_map(const struct tool_opts *g, int argc, char **argv);
int cmd_cp(const struct tool_opts *g, int argc, char **argv);
int cmd_stage(const struct tool_opts *g, int argc, char **argv);
int cmd_adhoc(const struct tool_opts *g, int argc, char **argv);
int cmd_stager(const struct tool_opts *g, int argc, char **argv);
int cmd_iod(const struct tool_opts *g, int argc, char **argv);
int cmd_forward(const struct tool_opts *g, int argc, char **argv);
int cmd_ls(const struct tool_opts *g, int argc, char **argv);
int cmd_mkdir(const struct tool_opts *g, int argc, char **argv);
/* rm, rmdir and mv: argv[0] says which. */
int cmd_rm(const struct tool_opts *g, int argc, char **argv);
int cmd_stat(const struct tool_opts *g, int argc, char **argv);
int cmd_fsck(const struct tool_opts *g, int argc, char **argv);
int cmd_backup(const struct tool_opts *g, int argc, char **argv);
int cmd_restore(const struct tool_opts *g, int argc, char **argv);

struct clf_config;
/*
 * clf fsck on cfg's instance (fsck.c): metad's store, read here, against
 * what every iod says it holds.  Prints what it finds; 0, -EUCLEAN with
 * a summary of what is left, or the error that stopped it.
 */
int tool_fsck(const struct clf_config *cfg, bool repair);

/*
 * Print "clf CMD: <message>" and a hint to --help on stderr; returns
 * CLF_EXIT_USAGE so that a parser can `return tool_usage(...)`.
 */
int tool_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * After getopt_long returned c, '?' or ':' (option strings start with ':'
 * and opterr is 0): say which option was wrong, as tool_usage does.
 */
int tool_bad_option(const char *cmd, int c, char **argv);

/* A whole decimal number s within [min, max] into *out (for options and
 * environment variables): 0, or -EINVAL without a message. */
int tool_parse_long(const char *s, long min, long max, long *out);

/* Print CLF_Last_error() on stderr; returns CLF_EXIT_FAIL. */
int tool_fail(void);

/*
 * tool_config_open - the configuration a command works on
 *
 * data_dir (a command's --data) names an instance by its directory: its
 * DIR/clf.conf, which must exist.  Else g->config (-c), else the
 * library's lookup order (clf_config_load(NULL)).  -EINVAL when both
 * are given.  The caller frees *out with clf_config_free.
 */
int tool_config_open(const struct tool_opts *g, const char *data_dir,
		     struct clf_config **out);

/* Where cfg came from, for messages: its file or "the built-in
 * configuration".  Borrowed from cfg. */
const char *tool_config_name(const struct clf_config *cfg);

/* 0 when cfg has a secret, else -EACCES with a message saying how to
 * get one: commands that talk to daemons cannot do without. */
int tool_config_need_secret(const struct clf_config *cfg);

/* printf one table row to stdout without trailing blanks (a last
 * column left empty), and flush it, so that rows appear as they come. */
void tool_print_row(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------ */
/* Formatting (format.c); every output is NUL-terminated and truncated */
/* to len.                                                             */
/* ------------------------------------------------------------------ */

/*
 * bytes as df -h writes them, in powers of 1024: "0", "512B", "1.5K",
 * "23M", "4.0G"; with exact, the plain decimal number of bytes.
 */
void tool_fmt_size(uint64_t bytes, bool exact, char *buf, size_t len);

/* A duration in milliseconds, two units at most: "45s", "12m03s",
 * "3h04m", "2d05h". */
void tool_fmt_duration(uint64_t ms, char *buf, size_t len);

/* A short lowercase reason for a negative errno ("connection refused"),
 * for one-line reports. */
void tool_fmt_reason(int neg_err, char *buf, size_t len);

/* s as a JSON string, quotes included, on f. */
void tool_json_str(FILE *f, const char *s);

/* used as a percentage of used + avail, rounded up like df; 0 when both
 * are 0. */
unsigned tool_percent_used(uint64_t used, uint64_t avail);

/* The options of the table commands (status, df). */
struct table_opts {
	const char *data;	/* --data DIR, or NULL */
	bool bytes;		/* -b: sizes in bytes */
	bool no_header;		/* -H */
	bool json;		/* --json: one JSON object on stdout */
};

/*
 * Parse them: 0, -1 after --help (help printed), or the usage error of
 * tool_usage()/tool_bad_option().
 */
int tool_parse_table_opts(int argc, char **argv, const char *cmd,
			  void (*help)(void), struct table_opts *o);

#endif /* CLF_TOOL_H */
