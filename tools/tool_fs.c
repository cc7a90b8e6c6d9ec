// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tool_fs.c -- connecting to an instance, clf paths, messages about a
 * path and the layout options of the file commands (tool_fs.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf_ll.h"
#include "config.h"
#include "error.h"
#include "tool_fs.h"

bool tool_is_clf_path(const char *arg)
{
	return !strncmp(arg, TOOL_CLF_PREFIX, strlen(TOOL_CLF_PREFIX));
}

int tool_clf_path(const char *arg, char *buf)
{
	int err;

	/* A URL keeps its instance, which clf_path_normalize checks. */
	if (tool_is_clf_path(arg) &&
	    strncmp(arg, CLF_URL_SCHEME, strlen(CLF_URL_SCHEME)))
		arg += strlen(TOOL_CLF_PREFIX);
	if (!*arg)
		return clf_fail(ENOENT, "clf: empty path");
	/* clf_path_normalize writes "a/b", relative to the root. */
	buf[0] = '/';
	err = clf_path_normalize(arg, buf + 1, TOOL_PATH_MAX - 1);
	return err;
}

int tool_path_split(const char *path, char *dir, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1])
		return clf_fail(EINVAL, "clf: '%s' has no parent directory",
				path);
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= TOOL_PATH_MAX)
		return clf_fail(ENAMETOOLONG, "clf: '%s' is too long", path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	*name = slash + 1;
	return 0;
}

int tool_clf_connect(const struct tool_opts *g, const char *data_dir)
{
	struct clf_config *cfg;
	char *path = NULL;
	int err;

	/* -c clf://HOST:PORT, or a clf:// argument with no -c or --data. */
	if (g->config && !strncmp(g->config, CLF_URL_SCHEME,
				  strlen(CLF_URL_SCHEME)))
		return CLF_init(g->config);
	if (g->url && !g->config && !data_dir)
		return CLF_init(g->url);
	err = tool_config_open(g, data_dir, &cfg);
	if (err)
		return err;
	err = tool_config_need_secret(cfg);
	if (!err && cfg->source && !(path = strdup(cfg->source)))
		err = clf_fail(ENOMEM, "clf: out of memory");
	clf_config_free(cfg);
	/* The file, not the lookup again: $CLF_CONFIG may differ from -c. */
	if (!err)
		err = CLF_init(path);
	free(path);
	return err;
}

int tool_fail_errno(int errnum)
{
	char why[128];

	snprintf(why, sizeof(why), "%s", strerror(errnum));
	if (why[0] >= 'A' && why[0] <= 'Z' &&
	    !(why[1] >= 'A' && why[1] <= 'Z'))
		why[0] = (char)(why[0] - 'A' + 'a');
	return clf_fail(errnum, "clf: %s", why);
}

const char *tool_last_error(void)
{
	return clf_error_reason();
}

void tool_clf_reason(int err, char *buf, size_t len)
{
	const struct clf_error *e = clf_error_last();
	const char *msg = CLF_Last_error();
	const char *why = NULL;

	/* The client's own messages say it best (they name the daemon). */
	if (e->reporter && !e->source.answered) {
		snprintf(buf, len, "%s", clf_error_reason());
		return;
	}
	/* A daemon's name the request, which the caller names better. */
	switch (-err) {
	case ENOENT:
		why = "no such file or directory";
		break;
	case ENOTDIR:
		why = "not a directory";
		break;
	case EISDIR:
		why = "is a directory";
		break;
	case EEXIST:
		why = "file exists";
		break;
	case ENOTEMPTY:
		why = "directory not empty";
		break;
	default:
		why = msg;
		break;
	}
	snprintf(buf, len, "%s", why);
}

int tool_fail_on(const char *what, const char *path, int err)
{
	char why[512];

	tool_clf_reason(err, why, sizeof(why));
	fprintf(stderr, "clf: cannot %s '%s': %s\n", what, path, why);
	return CLF_EXIT_FAIL;
}

int tool_parse_size(const char *s, int64_t max, int64_t *out)
{
	static const char suffixes[] = "kmgt";
	const char *u;
	int64_t v = 0;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (*s - '0');
	}
	if (*s) {
		char c = (char)(*s | 0x20);	/* lower case */

		u = strchr(suffixes, c);
		if (!u || s[1])
			return -EINVAL;
		shift = 10 * (int)(u - suffixes + 1);
		if (v > (INT64_MAX >> shift))
			return -EINVAL;
		v <<= shift;
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Layout options                                                      */
/* ------------------------------------------------------------------ */

bool tool_layout_given(const struct tool_layout_opts *o)
{
	return o->pattern || o->stripe_size || o->stripe_count ||
	       o->first_iod >= 0;
}

int tool_bad_text(const char *cmd, const char *opt, const char *text)
{
	const char *msg = CLF_Last_error(), *at = strstr(msg, "at column ");
	size_t len = strlen(text);
	long col = at ? strtol(at + strlen("at column "), NULL, 10) : 0;
	bool show = col >= 1 && (size_t)col <= len + 1 && len <= 160;

	for (size_t i = 0; show && i < len; i++)
		if (text[i] < 0x20 || text[i] > 0x7e)
			show = false;
	fprintf(stderr, "clf %s: bad %s: %s\n", cmd, opt, msg);
	if (show)
		fprintf(stderr, "  %s\n  %*s^\n", text, (int)col - 1, "");
	fprintf(stderr, "Try 'clf %s --help'.\n", cmd);
	return CLF_EXIT_USAGE;
}

int tool_layout_opt(const char *cmd, struct tool_layout_opts *o, int c,
		    const char *arg)
{
	struct clf_layout_desc desc;
	int64_t v;

	switch (c) {
	case TOOL_OPT_PATTERN:
		/* Checked now: a text is wrong whatever the instance. */
		if (clf_layout_text_parse(arg, &desc))
			return tool_bad_text(cmd, "--pattern", arg);
		clf_layout_desc_release(&desc);
		o->pattern = arg;
		break;
	case TOOL_OPT_STRIPE_SIZE:
		if (tool_parse_size(arg, CLF_PROTO_STRIPE_MAX, &v) || v < 1)
			return tool_usage(cmd,
					  "--stripe-size '%s': not a size from 1 to 1g (64k, 1m, ...)",
					  arg);
		o->stripe_size = v;
		break;
	case TOOL_OPT_STRIPE_COUNT:
		if (tool_parse_size(arg, CLF_PROTO_MAX_SUBFILES, &v) || v < 1)
			return tool_usage(cmd,
					  "--stripe-count '%s': not a number from 1 to %d",
					  arg, CLF_PROTO_MAX_SUBFILES);
		o->stripe_count = (long)v;
		break;
	case TOOL_OPT_FIRST_IOD:
		if (tool_parse_size(arg, CLF_PROTO_MAX_IODS - 1, &v))
			return tool_usage(cmd,
					  "--first-iod '%s': not an iod index from 0 to %d",
					  arg, CLF_PROTO_MAX_IODS - 1);
		o->first_iod = (long)v;
		break;
	case TOOL_OPT_FORCE:
		o->force = true;
		break;
	default:
		return 1;
	}
	if (o->pattern && (o->stripe_size || o->stripe_count ||
			   o->first_iod >= 0))
		return tool_usage(cmd,
				  "--pattern gives the whole layout: drop --stripe-size, --stripe-count and --first-iod, or write them in it (rr:stripe=...,count=...,first=...)");
	return 0;
}

void tool_fmt_num(int64_t v, char *buf, size_t len)
{
	static const char units[] = "kmgt";
	int u = -1;

	while (v >= 1024 && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%lld%c", (long long)v, units[u]);
}

int tool_layout_make(const struct tool_layout_opts *o, char **text,
		     struct clf_layout_desc *desc)
{
	struct clf_layout_desc d;
	const struct clf_config *cfg;
	char size[32], first[32] = "", *t;
	int err = clf_ll_config(&cfg);

	if (err)
		return err;
	if (o->pattern) {
		t = strdup(o->pattern);
	} else {
		tool_fmt_num(o->stripe_size ? o->stripe_size : cfg->stripe_size,
			size, sizeof(size));
		if (o->first_iod >= 0)
			snprintf(first, sizeof(first), ",first=%ld",
				 o->first_iod);
		t = malloc(96);
		if (t)
			snprintf(t, 96, "rr:stripe=%s,count=%ld%s", size,
				 o->stripe_count ? o->stripe_count
						 : (long)cfg->stripe_count,
				 first);
	}
	if (!t)
		return clf_fail(ENOMEM, "clf: out of memory");
	err = clf_layout_text_parse(t, &d);
	if (!err) {
		err = clf_ll_check_layout(&d);
		if (err)
			clf_layout_desc_release(&d);
	}
	if (!err && (unsigned)d.count > cfg->niods && !o->force) {
		err = clf_fail(EINVAL,
			       "clf: the layout has %d subfiles and the instance %u iods, so subfiles would share iods; give --force if that is meant",
			       d.count, (unsigned)cfg->niods);
		clf_layout_desc_release(&d);
	}
	if (err) {
		free(t);
		return err;
	}
	*text = t;
	*desc = d;
	return 0;
}

int tool_layout_text_of(uint64_t ino, char **text)
{
	struct clf_layout_info info;
	int err = clf_ll_get_layout(ino, &info);

	if (err)
		return err;
	err = clf_layout_text_format(info.disp, info.count, info.types,
				     info.iods, clf_ll_niods(), text);
	CLF_Layout_release(&info);
	return err;
}

void tool_fmt_mode(mode_t mode, char buf[11])
{
	static const char rwx[] = "rwxrwxrwx";

	buf[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' :
		 S_ISFIFO(mode) ? 'p' : S_ISSOCK(mode) ? 's' :
		 S_ISCHR(mode) ? 'c' : S_ISBLK(mode) ? 'b' : '-';
	for (int i = 0; i < 9; i++)
		buf[1 + i] = mode & (0400 >> i) ? rwx[i] : '-';
	if (mode & S_ISUID)
		buf[3] = mode & S_IXUSR ? 's' : 'S';
	if (mode & S_ISGID)
		buf[6] = mode & S_IXGRP ? 's' : 'S';
	if (mode & S_ISVTX)
		buf[9] = mode & S_IXOTH ? 't' : 'T';
	buf[10] = '\0';
}
