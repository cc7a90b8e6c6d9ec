// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_status.c -- `clf status`: one line per daemon of the configuration,
 * asked over the network (STATUS, and IOD_STATFS for iods), with the pid
 * file as a hint of why a local daemon does not answer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "daemon_ctl.h"
#include "probe.h"

static void status_help(void)
{
	printf("usage: clf [-c CONFIG] status [--data DIR] [-b|-h] [-H] [--json]\n"
	       "\n"
	       "Ask every daemon of the configuration how it is.  One line per\n"
	       "daemon, metad first:\n"
	       "\n"
	       "  ROLE     metad or iod\n"
	       "  INDEX    the iod's index; - for metad\n"
	       "  ADDRESS  host:port from the configuration; rdma://host:port\n"
	       "           (tcp://...) when this connection went over RDMA (fell\n"
	       "           back to TCP) where the configuration asks for RDMA\n"
	       "  STATE    reachable, unreachable (no authenticated answer) or\n"
	       "           failing (answered, but a request failed)\n"
	       "  UPTIME   since the daemon started\n"
	       "  CONNS    connections open at the daemon, not counting this one\n"
	       "  VIEWS    views registered at an iod\n"
	       "  TOTAL    capacity of an iod's storage\n"
	       "  AVAIL    bytes the iod may still write (as df's AVAIL)\n"
	       "  DETAIL   why a daemon is not reachable\n"
	       "\n"
	       "A field that does not apply or is unknown is '-'.\n"
	       "\n"
	       "  --data DIR   the instance whose configuration is DIR/clf.conf\n"
	       "  -b           sizes in bytes, not human-readable\n"
	       "  -h           sizes human-readable (the default; K = 1024)\n"
	       "  -H           no header line\n"
	       "  --json       one JSON object instead of the table (sizes in bytes;\n"
	       "               an iod's rdma_rx_buffers and rdma_rx_posted: its RDMA\n"
	       "               receive pool and the buffers posted now, all of them\n"
	       "               while no message waits; null from an iod before 1.25;\n"
	       "               an iod's bytes_read and bytes_written: the subfile\n"
	       "               bytes it moved since it started)\n"
	       "  --help       this text\n"
	       "\n"
	       "Exit status: 0 every daemon is reachable, 1 one is not (named on\n"
	       "stderr) or another failure, 2 bad usage.\n");
}

/* One row; every field is text so that unknown ones print as "-". */
struct row {
	char state[16];
	char uptime[16];
	char conns[16];
	char views[16];
	char total[24];
	char free[24];
	char detail[256];
	char transport[8];	/* of this tool's connection: "tcp", "rdma" */
	char addr[CLF_ADDR_MAX + 8];
	/* The same as numbers for --json; -1: unknown. */
	int64_t uptime_ms, conns_n, views_n, total_b, avail_b;
	int64_t requests;	/* served since the daemon started */
	int64_t bytes_read, bytes_written;	/* an iod's, since then */
	int64_t rx_buffers, rx_posted;	/* an iod's RDMA receive pool */
};

#define ROW_FMT "%-6s %-5s %-22s %-12s %-8s %-6s %-6s %-8s %-8s %s\n"

/* What the pid file of a local daemon adds to "unreachable". */
static void pid_hint(const struct tool_daemon *d, char *buf, size_t len)
{
	pid_t pid;
	int state;

	buf[0] = '\0';
	if (d->local != 1)
		return;
	state = daemon_pid_check(d, &pid);
	if (state == DAEMON_PID_NONE)
		snprintf(buf, len, "; not running (no pid file)");
	else if (state == DAEMON_PID_STALE && pid > 0)
		snprintf(buf, len, "; not running (pid %d is gone)", (int)pid);
	else if (state == DAEMON_PID_STALE)
		snprintf(buf, len, "; not running (bad pid file)");
	else if (state == DAEMON_PID_ALIVE)
		snprintf(buf, len, "; pid %d is alive", (int)pid);
}

/* Fill r for d; 0 when it is reachable and every request succeeded. */
static int ask(const struct clf_config *cfg, const struct tool_daemon *d,
	       const struct table_opts *o, struct row *r)
{
	struct clf_proto_status st;
	struct clf_proto_statfs sf;
	struct clf_conn *c;
	char why[128], hint[64];
	int err;

	*r = (struct row){ .state = "reachable", .uptime = "-", .conns = "-",
			   .transport = "-",
			   .views = "-", .total = "-", .free = "-",
			   .uptime_ms = -1, .conns_n = -1, .views_n = -1,
			   .total_b = -1, .avail_b = -1, .requests = -1,
			   .bytes_read = -1, .bytes_written = -1,
			   .rx_buffers = -1, .rx_posted = -1 };
	err = probe_open(cfg, d->conf->addr, cfg->timeout_ms, &c);
	if (err) {
		tool_fmt_reason(err, why, sizeof(why));
		pid_hint(d, hint, sizeof(hint));
		snprintf(r->state, sizeof(r->state), "unreachable");
		snprintf(r->detail, sizeof(r->detail), "%s%s", why, hint);
		return err;
	}
	snprintf(r->transport, sizeof(r->transport), "%s",
		 clf_conn_transport(c));
	/* Plain host:port for TCP as configured: tables stay as they were. */
	if (strcmp(cfg->transport, "tcp") || strstr(d->conf->addr, "://"))
		snprintf(r->addr, sizeof(r->addr), "%s://%s", r->transport,
			 strstr(d->conf->addr, "://")
			 ? strstr(d->conf->addr, "://") + 3 : d->conf->addr);
	err = probe_status(c, &st);
	if (!err) {
		tool_fmt_duration(st.uptime_ms, r->uptime, sizeof(r->uptime));
		r->uptime_ms = (int64_t)st.uptime_ms;
		r->requests = (int64_t)st.requests;
		if (d->role == DAEMON_IOD) {
			r->bytes_read = (int64_t)st.bytes_read;
			r->bytes_written = (int64_t)st.bytes_written;
		}
		r->conns_n = st.connections ? st.connections - 1 : 0;
		if (d->role == DAEMON_IOD)
			r->views_n = st.views;
		if (d->role == DAEMON_IOD && st.has_rx_pool) {
			r->rx_buffers = st.rx_buffers;
			r->rx_posted = st.rx_posted;
		}
		/* Our own connection is one of them. */
		snprintf(r->conns, sizeof(r->conns), "%" PRIu32,
			 st.connections ? st.connections - 1 : 0);
		if (d->role == DAEMON_IOD)
			snprintf(r->views, sizeof(r->views), "%" PRIu32,
				 st.views);
	}
	if (!err && d->role == DAEMON_IOD) {
		err = probe_iod_statfs(c, &sf);
		if (!err) {
			r->total_b = (int64_t)sf.bytes_total;
			r->avail_b = (int64_t)sf.bytes_avail;
			tool_fmt_size(sf.bytes_total, o->bytes, r->total,
				      sizeof(r->total));
			tool_fmt_size(sf.bytes_avail, o->bytes, r->free,
				      sizeof(r->free));
		}
	}
	if (err) {
		tool_fmt_reason(err, why, sizeof(why));
		snprintf(r->state, sizeof(r->state), "failing");
		snprintf(r->detail, sizeof(r->detail), "%s", why);
	}
	clf_conn_close(c);
	return err;
}

static void json_num(const char *key, int64_t v)
{
	if (v < 0)
		printf(",\"%s\":null", key);
	else
		printf(",\"%s\":%" PRId64, key, v);
}

static void json_row(const struct tool_daemon *d, const struct row *r)
{
	printf("{\"role\":\"%s\",\"index\":", daemon_program(d->role));
	if (d->role == DAEMON_METAD)
		printf("null");
	else
		printf("%u", d->index);
	printf(",\"address\":");
	tool_json_str(stdout, d->conf->addr);
	printf(",\"state\":\"%s\"", r->state);
	printf(",\"transport\":\"%s\"", r->transport);
	json_num("uptime_ms", r->uptime_ms);
	json_num("connections", r->conns_n);
	json_num("requests", r->requests);
	json_num("bytes_read", r->bytes_read);
	json_num("bytes_written", r->bytes_written);
	json_num("views", r->views_n);
	json_num("total", r->total_b);
	json_num("avail", r->avail_b);
	json_num("rdma_rx_buffers", r->rx_buffers);
	json_num("rdma_rx_posted", r->rx_posted);
	printf(",\"detail\":");
	tool_json_str(stdout, r->detail);
	printf("}");
}

int cmd_status(const struct tool_opts *g, int argc, char **argv)
{
	struct table_opts o = { 0 };
	struct clf_config *cfg = NULL;
	struct tool_daemon *ds = NULL;
	char index[16], bad[256] = "";
	size_t n, nbad = 0, len = 0;
	struct row r;
	int rc;

	rc = tool_parse_table_opts(argc, argv, "status", status_help, &o);
	if (rc)
		return rc < 0 ? CLF_EXIT_OK : rc;
	if (tool_config_open(g, o.data, &cfg))
		return tool_fail();
	rc = CLF_EXIT_FAIL;
	if (tool_config_need_secret(cfg) || daemons_list(cfg, &ds, &n)) {
		tool_fail();
		goto free_cfg;
	}
	if (o.json)
		printf("{\"daemons\":[");
	if (!o.no_header && !o.json)
		tool_print_row(ROW_FMT, "ROLE", "INDEX", "ADDRESS", "STATE",
			       "UPTIME", "CONNS", "VIEWS", "TOTAL", "AVAIL",
			       "DETAIL");
	for (size_t i = 0; i < n; i++) {
		const struct tool_daemon *d = &ds[i];

		if (ask(cfg, d, &o, &r)) {
			nbad++;
			if (len < sizeof(bad))
				len += (size_t)snprintf(bad + len,
					sizeof(bad) - len, "%s%s",
					nbad > 1 ? ", " : "", d->name);
		}
		snprintf(index, sizeof(index), "%u", d->index);
		if (o.json) {
			printf("%s", i ? "," : "");
			json_row(d, &r);
			continue;
		}
		tool_print_row(ROW_FMT, daemon_program(d->role),
			       d->role == DAEMON_METAD && !d->index ? "-" : index,
			       r.addr[0] ? r.addr : d->conf->addr, r.state,
			       r.uptime, r.conns,
			       r.views, r.total, r.free, r.detail);
	}
	if (o.json)
		printf("]}\n");
	if (nbad)
		fprintf(stderr,
			"clf: %zu of %zu daemons unreachable or failing: %s\n",
			nbad, n, bad);
	else
		rc = CLF_EXIT_OK;
	free(ds);
free_cfg:
	clf_config_free(cfg);
	return rc;
}
