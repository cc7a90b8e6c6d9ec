// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_df.c -- `clf df`: the capacity and use of every iod's storage
 * (IOD_STATFS), and their sum.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "daemon_ctl.h"
#include "probe.h"

static void df_help(void)
{
	printf("usage: clf [-c CONFIG] df [--data DIR] [-b|-h] [-H] [--json]\n"
	       "\n"
	       "Capacity and use of the storage of every iod, then their sum:\n"
	       "\n"
	       "  IOD      the iod's index, or 'total'\n"
	       "  ADDRESS  host:port from the configuration; - for the total\n"
	       "  SIZE     capacity of the file system holding its directory\n"
	       "  USED     SIZE less the free bytes\n"
	       "  AVAIL    bytes the iod may still write\n"
	       "  USE%%     USED / (USED + AVAIL), rounded up like df\n"
	       "  DETAIL   why an iod could not tell ('-' in its other fields)\n"
	       "\n"
	       "Iods sharing one file system each count it whole in the total.\n"
	       "When no iod answers, the total is '-' (\"every iod is down\").\n"
	       "\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "  -b           sizes in bytes, not human-readable (K = 1024)\n"
	       "  -h           sizes human-readable (the default; K = 1024)\n"
	       "  -H           no header line\n"
	       "  --json       one JSON object instead of the table (sizes in bytes)\n"
	       "  --help       this text\n"
	       "\n"
	       "Exit status: 0 every iod answered, 1 one did not (named on stderr)\n"
	       "or another failure, 2 bad usage.\n");
}

/* Byte counts of one iod or of the total. */
struct usage {
	uint64_t size, used, avail;
};

#define DF_FMT "%-6s %-22s %*s %*s %*s %5s %s\n"

static void print_usage(const char *iod, const char *addr,
			const struct usage *u, bool bytes)
{
	char size[24], used[24], avail[24], pct[8];
	int w = bytes ? 15 : 7;

	tool_fmt_size(u->size, bytes, size, sizeof(size));
	tool_fmt_size(u->used, bytes, used, sizeof(used));
	tool_fmt_size(u->avail, bytes, avail, sizeof(avail));
	snprintf(pct, sizeof(pct), "%u%%",
		 tool_percent_used(u->used, u->avail));
	tool_print_row(DF_FMT, iod, addr, w, size, w, used, w, avail, pct, "");
}

/* The usage of iod d into *u: 0, or a negative errno. */
static int ask(const struct clf_config *cfg, const struct tool_daemon *d,
	       struct usage *u)
{
	struct clf_proto_statfs sf;
	struct clf_conn *c;
	int err = probe_open(cfg, d->conf->addr, cfg->timeout_ms, &c);

	if (err)
		return err;
	err = probe_iod_statfs(c, &sf);
	clf_conn_close(c);
	if (err)
		return err;
	u->size = sf.bytes_total;
	/* A daemon's view may be racy (free read after total): clamp. */
	u->used = sf.bytes_free < sf.bytes_total
			  ? sf.bytes_total - sf.bytes_free
			  : 0;
	u->avail = sf.bytes_avail;
	return 0;
}

/* One iod as a JSON object (err: it did not answer, why). */
static void json_iod(const struct tool_daemon *d, const struct usage *u,
		     int err, const char *why)
{
	printf("{\"index\":%u,\"address\":", d->index);
	tool_json_str(stdout, d->conf->addr);
	if (err) {
		printf(",\"error\":");
		tool_json_str(stdout, why);
		printf("}");
		return;
	}
	printf(",\"size\":%" PRIu64 ",\"used\":%" PRIu64 ",\"avail\":%" PRIu64
	       ",\"use_percent\":%u}", u->size, u->used, u->avail,
	       tool_percent_used(u->used, u->avail));
}

int cmd_df(const struct tool_opts *g, int argc, char **argv)
{
	struct table_opts o = { 0 };
	struct clf_config *cfg = NULL;
	struct tool_daemon *ds = NULL;
	struct usage u, total = { 0 };
	char index[16], why[128], bad[256] = "";
	size_t n, nbad = 0, len = 0;
	int w, rc, err;

	rc = tool_parse_table_opts(argc, argv, "df", df_help, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_config_open(g, o.data, &cfg))
		return tool_fail();
	rc = CLF_EXIT_FAIL;
	if (tool_config_need_secret(cfg) || daemons_list(cfg, &ds, &n)) {
		tool_fail();
		goto free_cfg;
	}
	w = o.bytes ? 15 : 7;
	if (o.json)
		printf("{\"iods\":[");
	if (!o.no_header && !o.json)
		tool_print_row(DF_FMT, "IOD", "ADDRESS", w, "SIZE", w, "USED",
			       w, "AVAIL", "USE%", "DETAIL");
	/* ds[0] is metad, which stores no file data. */
	for (size_t i = 1; i < n && ds[i].role == DAEMON_IOD; i++) {
		snprintf(index, sizeof(index), "%u", ds[i].index);
		err = ask(cfg, &ds[i], &u);
		if (err)
			tool_fmt_reason(err, why, sizeof(why));
		if (o.json)
			printf("%s", i > 1 ? "," : "");
		if (o.json)
			json_iod(&ds[i], &u, err, why);
		if (err) {
			if (!o.json)
				tool_print_row(DF_FMT, index, ds[i].conf->addr, w, "-",
				       w, "-", w, "-", "-", why);
			nbad++;
			if (len < sizeof(bad))
				len += (size_t)snprintf(bad + len,
							sizeof(bad) - len,
							"%s%s (%s)",
							nbad > 1 ? ", " : "",
							ds[i].name, why);
			continue;
		}
		if (!o.json)
			print_usage(index, ds[i].conf->addr, &u, o.bytes);
		total.size += u.size;
		total.used += u.used;
		total.avail += u.avail;
	}
	/* No iod answered: a total of 0 bytes would read as a full or
	 * empty file system; there is none to add up. */
	if (nbad && nbad == n - 1) {
		if (o.json)
			printf("],\"total\":null}\n");
		else
			tool_print_row(DF_FMT, "total", "-", w, "-", w, "-", w, "-",
			       "-", "every iod is down");
		fprintf(stderr,
			"clf: none of the %zu iods answered, so there is no total: %s\n",
			n - 1, bad);
		goto free_ds;
	}
	if (o.json)
		printf("],\"total\":{\"size\":%" PRIu64 ",\"used\":%" PRIu64
		       ",\"avail\":%" PRIu64 ",\"use_percent\":%u}}\n",
		       total.size, total.used, total.avail,
		       tool_percent_used(total.used, total.avail));
	else
		print_usage("total", "-", &total, o.bytes);
	if (nbad)
		fprintf(stderr,
			"clf: %zu of %zu iods did not answer, the total is without them: %s\n",
			nbad, n - 1, bad);
	else
		rc = CLF_EXIT_OK;
free_ds:
	free(ds);
free_cfg:
	clf_config_free(cfg);
	return rc;
}
