// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_ls.c -- `clf ls`: the entries of a clf directory (READDIR through
 * clf_ll.h), sorted by name; with -l their mode, size, time and a
 * short form of their layout (a directory's: its default layout).  With
 * -l the attributes come with the entries (READDIRPLUS: a round trip per
 * page, not a stat per entry).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clf_ll.h"
#include "error.h"
#include "tool_fs.h"

/* The longest layout text -l shows; longer ones end in "...". */
#define LS_LAYOUT_WIDTH 40

struct ls_opts {
	const char *data;	/* --data DIR, or NULL */
	bool lng;		/* -l */
	bool all;		/* -a */
	bool human;		/* -h: sizes as 1.5K, 23M */
	bool json;		/* --json */
	const char *path;	/* "/" when not given */
};

static void ls_help(void)
{
	printf("usage: clf [-c CONFIG] ls [--data DIR] [-l] [-a] [-h] [--json] [PATH]\n"
	       "\n"
	       "List the clf directory PATH (\"/a\" or \"clf:/a\"; default \"/\"),\n"
	       "sorted by name; a file is listed alone.  Names starting with '.'\n"
	       "are left out unless -a (among them .clf-default-layout, which\n"
	       "holds a directory's default layout).\n"
	       "\n"
	       "  -l           one entry per line: MODE OWNER GROUP SIZE MTIME\n"
	       "               LAYOUT NAME,\n"
	       "               LAYOUT being the file's layout in the layout text\n"
	       "               syntax, or a directory's default layout ('-' when it\n"
	       "               has none), cut to %d characters ('...'); `clf\n"
	       "               getlayout` shows it whole; a symbolic link's\n"
	       "               NAME is followed by ' -> TARGET'\n"
	       "  -a           also the names starting with '.'\n"
	       "  -h           with -l, sizes human-readable (1.5K, 23M; K = 1024)\n"
	       "  --json       a JSON array of the entries, each with what -l\n"
	       "               shows (the layout whole, sizes in bytes)\n"
	       "  --help       this text\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "\n"
	       "Exit status: 0 listed, 1 failure, 2 bad usage.\n",
	       LS_LAYOUT_WIDTH);
}

static int parse_args(int argc, char **argv, struct ls_opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'D' },
		{ "human-readable", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":lah", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			o->data = optarg;
			break;
		case 'l':
			o->lng = true;
			break;
		case 'a':
			o->all = true;
			break;
		case 'h':
			o->human = true;
			break;
		case 'J':
			o->json = true;
			break;
		case 'H':
			ls_help();
			return -1;
		default:
			return tool_bad_option("ls", c, argv);
		}
	}
	if (optind + 1 < argc)
		return tool_usage("ls", "unexpected argument '%s' (one path at a time)",
				  argv[optind + 1]);
	o->path = optind < argc ? argv[optind] : "/";
	return 0;
}

/* One line of the listing. */
struct ls_entry {
	char *name;		/* owned */
	uint64_t ino;
	/* With -l: */
	struct clf_proto_attr attr;
	bool has_attr;		/* attr came with the listing */
	char *layout;		/* owned; NULL: "-" */
	char *target;		/* owned: a symlink's; NULL for others */
};

struct ls_list {
	struct ls_entry *e;	/* owned, n of them */
	size_t n, alloc;
};

static void ls_list_release(struct ls_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->e[i].name);
		free(l->e[i].layout);
		free(l->e[i].target);
	}
	free(l->e);
	*l = (struct ls_list){ 0 };
}

/* Forget entry i. */
static void ls_drop(struct ls_list *l, size_t i)
{
	free(l->e[i].name);
	free(l->e[i].layout);
	free(l->e[i].target);
	memmove(&l->e[i], &l->e[i + 1], (l->n - i - 1) * sizeof(*l->e));
	l->n--;
}

static int ls_add(struct ls_list *l, const char *name, size_t len,
		  uint64_t ino)
{
	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 64;
		struct ls_entry *ne = realloc(l->e, na * sizeof(*ne));

		if (!ne)
			return clf_fail(ENOMEM, "clf: out of memory");
		l->e = ne;
		l->alloc = na;
	}
	l->e[l->n] = (struct ls_entry){ .name = strndup(name, len),
					.ino = ino };
	if (!l->e[l->n].name)
		return clf_fail(ENOMEM, "clf: out of memory");
	l->n++;
	return 0;
}

/* Every entry of directory ino, but dot names unless all; with attrs,
 * their attributes as stat gives them too. */
static int read_dir(uint64_t ino, bool all, bool attrs, struct ls_list *l)
{
	struct clf_ll_dirents_plus d;
	uint64_t cookie = 0;
	bool eof = false;
	int err = 0;

	while (!eof && !err) {
		/* Sizes as stat gives them: what the subfiles hold counts. */
		err = clf_ll_readdirplus(ino, cookie, CLF_PROTO_READDIR_MAX,
					 attrs ? CLF_LL_PLUS_SIZE : 0, &d);
		if (err)
			break;
		for (uint32_t i = 0; i < d.count && !err; i++) {
			const struct clf_ll_direntplus *e = &d.ents[i];

			cookie = e->cookie;
			if (!all && e->name[0] == '.')
				continue;
			err = ls_add(l, e->name, strlen(e->name), e->attr.ino);
			if (!err && attrs) {
				l->e[l->n - 1].attr = e->attr;
				l->e[l->n - 1].has_attr = true;
			}
		}
		/* No entry and no end: do not ask again forever. */
		eof = d.eof || d.count == 0;
		clf_ll_dirents_plus_release(&d);
	}
	return err;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ls_entry *)a)->name,
		      ((const struct ls_entry *)b)->name);
}

/* "rr:stripe=64k,count=4" or its first width-3 characters and "...". */
static void shorten(char *text, size_t width)
{
	if (text && strlen(text) > width)
		strcpy(text + width - 3, "...");
}

/* Attributes and layout text of e, for -l (cut to the width). */
static int ls_detail(struct ls_entry *e, bool cut)
{
	/* Sizes as stat gives them: what the subfiles hold counts. */
	int err = e->has_attr ? 0 : clf_ll_stat(e->ino, &e->attr);

	if (err)
		return err;
	if (S_ISDIR(e->attr.mode))
		err = clf_ll_dir_default_read(e->ino, &e->layout);
	else if (S_ISREG(e->attr.mode))
		err = tool_layout_text_of(e->ino, &e->layout);
	else if (S_ISLNK(e->attr.mode))
		err = clf_ll_readlink(e->ino, &e->target, NULL);
	if (cut)
		shorten(e->layout, LS_LAYOUT_WIDTH);
	return err;
}

/* A user's or group's name, else its number, into buf. */
static void owner_name(uint32_t id, bool group, char *buf, size_t len)
{
	struct passwd *pw = group ? NULL : getpwuid(id);
	struct group *gr = group ? getgrgid(id) : NULL;

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else if (gr)
		snprintf(buf, len, "%s", gr->gr_name);
	else
		snprintf(buf, len, "%u", (unsigned)id);
}

static void fmt_entry_size(const struct ls_entry *e, bool human, char *buf,
			   size_t len)
{
	tool_fmt_size((uint64_t)e->attr.size, !human, buf, len);
}

static void print_json(const struct ls_list *l)
{
	char mode[11], user[64], group[64];

	printf("[");
	for (size_t i = 0; i < l->n; i++) {
		const struct ls_entry *e = &l->e[i];

		tool_fmt_mode(e->attr.mode, mode);
		owner_name(e->attr.uid, false, user, sizeof(user));
		owner_name(e->attr.gid, true, group, sizeof(group));
		printf("%s{\"name\":", i ? "," : "");
		tool_json_str(stdout, e->name);
		printf(",\"mode\":\"%s\",\"uid\":%u,\"gid\":%u,\"user\":",
		       mode, (unsigned)e->attr.uid, (unsigned)e->attr.gid);
		tool_json_str(stdout, user);
		printf(",\"group\":");
		tool_json_str(stdout, group);
		printf(",\"size\":%lld,\"mtime_ns\":%lld,\"layout\":",
		       (long long)e->attr.size, (long long)e->attr.mtime);
		if (e->layout)
			tool_json_str(stdout, e->layout);
		else
			printf("null");
		if (e->target) {
			printf(",\"target\":");
			tool_json_str(stdout, e->target);
		}
		printf("}");
	}
	printf("]\n");
}

static void print_long(const struct ls_list *l, bool human)
{
	char mode[11], mtime[32], size[24], user[64], group[64];
	int w = 1, sw = 1, uw = 1, gw = 1;

	for (size_t i = 0; i < l->n; i++) {
		const struct ls_entry *e = &l->e[i];
		int n = e->layout ? (int)strlen(e->layout) : 1;
		int s, u, g;

		fmt_entry_size(e, human, size, sizeof(size));
		owner_name(e->attr.uid, false, user, sizeof(user));
		owner_name(e->attr.gid, true, group, sizeof(group));
		s = (int)strlen(size);
		u = (int)strlen(user);
		g = (int)strlen(group);
		w = n > w ? n : w;
		sw = s > sw ? s : sw;
		uw = u > uw ? u : uw;
		gw = g > gw ? g : gw;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct ls_entry *e = &l->e[i];
		time_t t = (time_t)(e->attr.mtime / 1000000000);
		struct tm tm;

		tool_fmt_mode(e->attr.mode, mode);
		fmt_entry_size(e, human, size, sizeof(size));
		owner_name(e->attr.uid, false, user, sizeof(user));
		owner_name(e->attr.gid, true, group, sizeof(group));
		if (localtime_r(&t, &tm))
			strftime(mtime, sizeof(mtime), "%Y-%m-%d %H:%M", &tm);
		else
			snprintf(mtime, sizeof(mtime), "?");
		tool_print_row("%s %-*s %-*s %*s %s %-*s %s%s%s", mode, uw,
			       user, gw, group, sw, size, mtime, w,
			       e->layout ? e->layout : "-", e->name,
			       e->target ? " -> " : "",
			       e->target ? e->target : "");
	}
}

int cmd_ls(const struct tool_opts *g, int argc, char **argv)
{
	struct ls_opts o = { 0 };
	struct ls_list l = { 0 };
	char path[TOOL_PATH_MAX];
	struct stat st;
	int rc, err;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_clf_path(o.path, path))
		return tool_usage("ls", "%s", tool_last_error());
	if (tool_clf_connect(g, o.data))
		return tool_fail();
	rc = CLF_EXIT_FAIL;
	err = CLF_stat(path, &st);
	if (err) {
		tool_fail_on("list", path, err);
		goto finalize;
	}
	if (S_ISDIR(st.st_mode))
		err = read_dir(st.st_ino, o.all, o.lng || o.json, &l);
	else
		err = ls_add(&l, o.path, strlen(o.path), st.st_ino);
	if (err) {
		tool_fail_on("list", path, err);
		goto release;
	}
	qsort(l.e, l.n, sizeof(*l.e), by_name);
	for (size_t i = 0; (o.lng || o.json) && i < l.n;) {
		err = ls_detail(&l.e[i], !o.json);
		/* Removed since the listing: not an error, not shown. */
		if (err == -ENOENT) {
			ls_drop(&l, i);
			continue;
		}
		if (err && !S_ISDIR(st.st_mode)) {
			tool_fail_on("list", path, err);
			goto release;
		}
		if (err) {
			char full[TOOL_PATH_MAX + CLF_PROTO_NAME_MAX + 2];

			snprintf(full, sizeof(full), "%s%s%.*s", path,
				 strcmp(path, "/") ? "/" : "",
				 CLF_PROTO_NAME_MAX, l.e[i].name);
			tool_fail_on("list", full, err);
			goto release;
		}
		i++;
	}
	if (o.json)
		print_json(&l);
	else if (o.lng)
		print_long(&l, o.human);
	else
		for (size_t i = 0; i < l.n; i++)
			printf("%s\n", l.e[i].name);
	rc = CLF_EXIT_OK;
release:
	ls_list_release(&l);
finalize:
	CLF_finalize();
	return rc;
}
