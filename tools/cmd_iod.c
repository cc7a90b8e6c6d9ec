// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_iod.c -- `clf iod add`: a new iod joins a running instance; and
 * `clf iod remove N`: move every subfile off iod N to the
 * other iods while clients go on reading and writing (docs/elastic.md).
 *
 * For each file with subfiles on iod N, one at a time:
 *   1. SUB_MOVE BEGIN at metad for each of them: a durable intent;
 *   2. FENCE MOVING at iod N: its writes refused from then on, those
 *      being served finished first; readers go on;
 *   3. copy each subfile to its new iod (a leftover partial copy there
 *      removed first), the length set with TRUNCATE (holes at the end);
 *   4. SUB_MOVE COMMIT: metad's layout names the new iods;
 *   5. FENCE GONE at iod N (reads refused too: a stale client re-asks
 *      metad), then REMOVE the old copies.
 * A client refused at step 2 or 5 asks metad for the layout and retries
 * (libclf/client/io_retry.c).  If this command dies before step 4 the
 * fence goes with its connection and the layout never changed: rolled
 * back; run again, it starts the move over.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clf.h"
#include "clf_proto.h"
#include "config.h"
#include "error.h"
#include "daemon_ctl.h"
#include "probe.h"
#include "proto.h"
#include "tool.h"
#include "transport.h"
#include "wire.h"

#define COPY_CHUNK (4u << 20)
#define MAX_ROUNDS 8	/* SUB_LIST passes: creates may add subfiles */

struct mover {
	const struct clf_config *cfg;
	uint32_t from;			/* the iod emptied */
	uint32_t *to, nto;		/* where its subfiles go: the iods
					   not retired */
	struct clf_conn *md;		/* metad */
	struct clf_conn **iod;		/* cfg->niods; NULL until used */
	uint64_t files, subfiles, bytes;
};

static int call(struct clf_conn *c, uint16_t op, const void *body,
		size_t len, void **payload, uint32_t *plen)
{
	struct iovec iov = { (void *)body, len };
	struct clf_proto_header h, reply;
	void *p = NULL;
	int err;

	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	h.payload_len = (uint32_t)len;
	err = clf_conn_call(c, &h, &iov, 1, &reply, &p);
	if (err)
		return err;
	if (payload) {
		*payload = p;
		*plen = reply.payload_len;
	} else {
		free(p);
	}
	return 0;
}

static int iod_conn(struct mover *m, uint32_t i, struct clf_conn **out)
{
	int err = 0;

	if (!m->iod[i])
		err = probe_open(m->cfg, m->cfg->iods[i].addr,
				 m->cfg->timeout_ms, &m->iod[i]);
	*out = m->iod[i];
	return err;
}

static int sub_move(struct mover *m, uint64_t ino, uint32_t sub,
		    uint32_t to, uint32_t phase)
{
	struct clf_proto_sub_move_req r = { ino, sub, m->from, to, phase };
	uint8_t body[32];
	struct wire_writer w = { body, sizeof(body), 0 };
	int err = clf_proto_sub_move_req_encode(&w, &r);

	return err ? err : call(m->md, CLF_PROTO_OP_SUB_MOVE, body, w.pos,
				NULL, NULL);
}

static int fence(struct mover *m, uint64_t file, uint32_t mode)
{
	struct clf_proto_fence_req r = { file, mode };
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };
	int err = clf_proto_fence_req_encode(&w, &r);

	return err ? err : call(m->iod[m->from], CLF_PROTO_OP_FENCE, body,
				w.pos, NULL, NULL);
}

static int remove_sub(struct clf_conn *c, uint64_t file, uint32_t sub)
{
	struct clf_proto_remove_req r = { file, sub };
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };
	int err = clf_proto_remove_req_encode(&w, &r);

	return err ? err : call(c, CLF_PROTO_OP_REMOVE, body, w.pos, NULL,
				NULL);
}

static int sub_length(struct clf_conn *c, uint64_t file, uint32_t sub,
		      int64_t *len)
{
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct wire_reader r;
	void *p;
	uint32_t plen;
	int err;

	wire_put_u64(&w, file);
	wire_put_u32(&w, 1);
	wire_put_u32(&w, sub);
	err = call(c, CLF_PROTO_OP_SUB_SIZES, body, w.pos, &p, &plen);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = p, .len = plen };
	if (wire_get_u32(&r) != 1)
		r.bad = true;
	*len = wire_get_i64(&r);
	free(p);
	return r.bad ? clf_fail(EPROTO, "clf: bad SUB_SIZES reply") : 0;
}

/* Copy subfile (file, sub) from the fenced iod to iod to. */
static int copy_sub(struct mover *m, uint64_t file, uint32_t sub,
		    uint32_t to)
{
	struct clf_conn *src = m->iod[m->from], *dst;
	uint8_t *buf = malloc(COPY_CHUNK + 64);
	int64_t len, off;
	int err = buf ? 0 : clf_fail(ENOMEM, "clf: out of memory");

	if (!err)
		err = iod_conn(m, to, &dst);
	if (!err)
		err = sub_length(src, file, sub, &len);
	/* A partial copy an earlier, interrupted move left there. */
	if (!err)
		err = remove_sub(dst, file, sub);
	for (off = 0; !err && off < len;) {
		struct clf_proto_sub_read_req rq = { file, sub, off,
			(uint32_t)(len - off < COPY_CHUNK ? len - off : COPY_CHUNK) };
		struct wire_writer w = { buf, 64, 0 };
		struct wire_reader r;
		void *p;
		uint32_t plen, n;

		err = clf_proto_sub_read_req_encode(&w, &rq);
		if (!err)
			err = call(src, CLF_PROTO_OP_SUB_READ, buf, w.pos, &p,
				   &plen);
		if (err)
			break;
		r = (struct wire_reader){ .buf = p, .len = plen };
		n = wire_get_u32(&r);
		if (r.bad || n > plen - 4 || n > COPY_CHUNK) {
			free(p);
			err = clf_fail(EPROTO, "clf: bad SUB_READ reply");
			break;
		}
		if (n == 0) {	/* a hole up to the end: TRUNCATE makes it */
			free(p);
			break;
		}
		w = (struct wire_writer){ buf, COPY_CHUNK + 64, 0 };
		wire_put_u64(&w, file);
		wire_put_u32(&w, sub);
		wire_put_i64(&w, off);
		wire_put_u32(&w, n);
		wire_put_bytes(&w, (const uint8_t *)p + 4, n);
		free(p);
		err = call(dst, CLF_PROTO_OP_SUB_WRITE, buf, w.pos, NULL, NULL);
		off += n;
		m->bytes += n;
	}
	if (!err) {
		struct clf_proto_truncate_req t = { file, sub, len };
		struct wire_writer w = { buf, 64, 0 };

		err = clf_proto_truncate_req_encode(&w, &t);
		if (!err)
			err = call(dst, CLF_PROTO_OP_TRUNCATE, buf, w.pos, NULL,
				   NULL);
	}
	free(buf);
	return err;
}

/* The iods metad's layout of ino names for its subfiles (head last);
 * -ENOENT when the file is gone. */
static int layout_iods(struct mover *m, uint64_t ino, uint32_t **iods,
		       uint32_t *n)
{
	struct clf_proto_ino q = { ino };
	struct clf_proto_layout pl;
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct wire_reader r;
	void *p;
	uint32_t plen;
	int err = clf_proto_ino_encode(&w, &q);

	if (!err)
		err = call(m->md, CLF_PROTO_OP_GET_LAYOUT, body, w.pos, &p,
			   &plen);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = p, .len = plen };
	err = clf_proto_layout_decode(&r, &pl);
	if (!err && pl.kind != CLF_PROTO_LAYOUT_EXPLICIT)
		err = clf_fail(EPROTO, "clf: metad sent a layout of kind %u",
			       pl.kind);
	if (!err) {
		*n = pl.nsubfiles;
		*iods = malloc((pl.nsubfiles + 1) * sizeof(**iods));
		if (!*iods)
			err = clf_fail(ENOMEM, "clf: out of memory");
		for (uint32_t j = 0; !err && j < pl.nsubfiles; j++)
			(*iods)[j] = pl.subfiles[j].iod;
		if (!err)
			(*iods)[pl.nsubfiles] = pl.disp_iod;
		clf_proto_layout_release(&pl);
	}
	free(p);
	return err;
}

/* The iod subfile sub of file goes to: the others not retired, in turn. */
static uint32_t target_of(const struct mover *m, uint64_t file, uint32_t sub)
{
	return m->to[(file + sub) % m->nto];
}

/*
 * IOD_STATE state (CLF_PROTO_IOD_*) of iod at every metad of cfg, since
 * each places the files it creates (mds_retire.h); *retired (niods
 * entries, caller frees; may be NULL) says which are retired after it,
 * at metad 0.
 */
static int iod_state(const struct clf_config *cfg, uint32_t iod,
		     uint32_t state, bool **retired)
{
	int err = 0;

	if (retired) {
		*retired = calloc(cfg->niods, sizeof(**retired));
		if (!*retired)
			return clf_fail(ENOMEM, "clf: out of memory");
	}
	for (uint32_t k = 0; k < cfg->nmetads && !err; k++) {
		uint8_t body[8];
		struct wire_writer w = { body, sizeof(body), 0 };
		struct wire_reader r;
		struct clf_conn *c = NULL;
		void *p;
		uint32_t plen, n;

		wire_put_u32(&w, iod);
		wire_put_u32(&w, state);
		err = probe_open(cfg, cfg->metads[k].addr, cfg->timeout_ms, &c);
		if (!err)
			err = call(c, CLF_PROTO_OP_IOD_STATE, body, w.pos, &p,
				   &plen);
		clf_conn_close(c);
		if (err)
			break;
		r = (struct wire_reader){ .buf = p, .len = plen };
		n = wire_get_u32(&r);
		for (uint32_t j = 0; j < n && !r.bad; j++) {
			uint32_t i = wire_get_u32(&r);

			if (retired && k == 0 && i < cfg->niods)
				(*retired)[i] = true;
		}
		if (r.bad)
			err = clf_fail(EPROTO, "clf: bad IOD_STATE reply");
		free(p);
	}
	if (err && retired) {
		free(*retired);
		*retired = NULL;
	}
	return err;
}

/* Move the subfiles subs[0..n) of file off iod m->from. */
static int move_file(struct mover *m, uint64_t file, const uint32_t *subs,
		     uint32_t n)
{
	uint32_t *iods = NULL, nsub = 0, mine = 0, slot;
	uint32_t sub_of[n ? n : 1];
	int err = layout_iods(m, file, &iods, &nsub);

	if (err == -ENOENT || err == -ENODATA) {
		/* Removed meanwhile: metad's queue removes the subfiles. */
		return 0;
	}
	if (err)
		return err;
	for (uint32_t k = 0; k < n; k++) {
		slot = subs[k] == CLF_PROTO_SUBFILE_HEAD ? nsub : subs[k];
		if (slot <= nsub && iods[slot] == m->from)
			sub_of[mine++] = subs[k];
		else	/* moved already; the old copy stayed behind */
			err = remove_sub(m->iod[m->from], file, subs[k]);
		if (err)
			goto out;
	}
	if (!mine)
		goto out;
	for (uint32_t k = 0; k < mine && !err; k++)
		err = sub_move(m, file, sub_of[k], target_of(m, file, sub_of[k]),
			       CLF_PROTO_MOVE_BEGIN);
	if (!err)
		err = fence(m, file, CLF_PROTO_FENCE_MOVING);
	for (uint32_t k = 0; k < mine && !err; k++)
		err = copy_sub(m, file, sub_of[k],
			       target_of(m, file, sub_of[k]));
	/* Test hook, off unless set: a mover that dies between its copy
	 * and the commit (test_elastic.sh). */
	if (!err && getenv("CLF_TEST_MOVER_DIE"))
		_exit(3);
	for (uint32_t k = 0; k < mine && !err; k++)
		err = sub_move(m, file, sub_of[k], target_of(m, file, sub_of[k]),
			       CLF_PROTO_MOVE_COMMIT);
	if (err) {
		/* Not committed: the old copies stay the file's. */
		fence(m, file, CLF_PROTO_FENCE_LIFT);
		goto out;
	}
	err = fence(m, file, CLF_PROTO_FENCE_GONE);
	for (uint32_t k = 0; k < mine && !err; k++)
		err = remove_sub(m->iod[m->from], file, sub_of[k]);
	m->files++;
	m->subfiles += mine;
out:
	free(iods);
	return err;
}

/* Everything iod m->from holds now, as (file, subfile) pairs. */
static int list_from(struct mover *m, uint64_t **files, uint32_t **subs,
		     size_t *n)
{
	struct clf_proto_sub_list_req req = { 0, 0, CLF_PROTO_SUB_LIST_MAX };
	struct clf_proto_sub_list *l = malloc(sizeof(*l));
	size_t cap = 0;
	int err = l ? 0 : clf_fail(ENOMEM, "clf: out of memory");

	*n = 0;
	while (!err) {
		uint8_t body[16];
		struct wire_writer w = { body, sizeof(body), 0 };
		struct wire_reader r;
		void *p;
		uint32_t plen;

		err = clf_proto_sub_list_req_encode(&w, &req);
		if (!err)
			err = call(m->iod[m->from], CLF_PROTO_OP_SUB_LIST, body,
				   w.pos, &p, &plen);
		if (err)
			break;
		r = (struct wire_reader){ .buf = p, .len = plen };
		err = clf_proto_sub_list_decode(&r, l);
		free(p);
		if (err)
			break;
		if (*n + l->n > cap) {
			cap = 2 * (*n + l->n);
			*files = realloc(*files, cap * sizeof(**files));
			*subs = realloc(*subs, cap * sizeof(**subs));
			if (!*files || !*subs) {
				err = clf_fail(ENOMEM, "clf: out of memory");
				break;
			}
		}
		for (uint32_t k = 0; k < l->n; k++) {
			(*files)[*n] = l->file[k];
			(*subs)[(*n)++] = l->subfile[k];
		}
		if (!l->more || !l->n)
			break;
		req.file = l->file[l->n - 1];
		req.subfile = l->subfile[l->n - 1] + 1;
		if (req.subfile == 0 && ++req.file == 0)
			break;
	}
	free(l);
	return err;
}

static int drain_iod(struct mover *m)
{
	uint64_t *files = NULL;
	uint32_t *subs = NULL;
	size_t n = 0;
	int err = 0;

	for (int round = 0; round < MAX_ROUNDS && !err; round++) {
		err = list_from(m, &files, &subs, &n);
		if (err || !n)
			break;
		/* SUB_LIST comes in (file, subfile) order. */
		for (size_t i = 0, j; i < n && !err; i = j) {
			for (j = i; j < n && files[j] == files[i]; j++)
				;
			err = move_file(m, files[i], subs + i,
					(uint32_t)(j - i));
		}
	}
	if (!err && n)
		err = clf_fail(EAGAIN,
			       "clf: iod %u still holds %zu subfiles after %d passes (new files keep coming)",
			       m->from, n, MAX_ROUNDS);
	free(files);
	free(subs);
	return err;
}

/* ------------------------------------------------------------------ */
/* clf iod add                                                         */
/* ------------------------------------------------------------------ */

/* The port of "host:port", or 0. */
static unsigned port_of(const char *addr)
{
	const char *c = strrchr(addr, ':');

	return c ? (unsigned)strtoul(c + 1, NULL, 10) : 0;
}

/* The new [iod] section for iod n, and stripe_count raised with the
 * number of iods when it named them all, appended to / changed in the
 * configuration file path. */
static int add_section(const struct clf_config *cfg, const char *path,
		       const char *addr, const char *dir)
{
	uint32_t n = cfg->niods;
	char *text = NULL, old[64], *at;
	size_t len = 0;
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f)
		return clf_fail(errno, "clf: cannot read %s: %s", path,
				strerror(errno));
	if (getdelim(&text, &len, '\0', f) < 0)
		err = clf_fail(EIO, "clf: cannot read %s", path);
	fclose(f);
	if (err)
		goto out;
	f = fopen(path, "w");
	if (!f) {
		err = clf_fail(errno, "clf: cannot write %s: %s", path,
			       strerror(errno));
		goto out;
	}
	snprintf(old, sizeof(old), "stripe_count = %u\n", n);
	at = cfg->stripe_count == n ? strstr(text, old) : NULL;
	if (at) {
		fwrite(text, 1, (size_t)(at - text), f);
		fprintf(f, "stripe_count = %u\n", n + 1);
		fputs(at + strlen(old), f);
	} else {
		fputs(text, f);
	}
	fprintf(f, "\n[iod] ; %u, by clf iod add\naddress = %s\ndir = %s\n",
		n, addr, dir);
	if (fclose(f))
		err = clf_fail(EIO, "clf: cannot write %s", path);
out:
	free(text);
	return err;
}

/* Start daemon d of cfg from the configuration file conf. */
static int start(const struct clf_config *cfg, const struct tool_daemon *d,
		 const char *conf)
{
	char program[PATH_MAX];
	pid_t pid;
	int err = daemon_find_program(daemon_program(d->role), program,
				      sizeof(program));

	return err ? err : daemon_start(cfg, d, program, conf,
					DAEMON_START_TIMEOUT_MS, &pid);
}

static int do_add(const struct tool_opts *g, const char *data,
		  const char *addr_opt, const char *dir_opt)
{
	struct clf_config *cfg = NULL, *now = NULL;
	struct tool_daemon *ds = NULL;
	char addr[300], dir[PATH_MAX], conf[PATH_MAX];
	unsigned port = 0;
	size_t nd = 0;
	uint32_t n;
	int err;

	if (tool_config_open(g, data, &cfg) || tool_config_need_secret(cfg))
		goto fail;
	if (!cfg->source) {
		clf_fail(EINVAL, "clf iod add: the built-in configuration has no file to add the iod to");
		goto fail;
	}
	n = cfg->niods;
	snprintf(conf, sizeof(conf), "%s", cfg->source);
	if (addr_opt) {
		snprintf(addr, sizeof(addr), "%s", addr_opt);
	} else {
		const char *last = cfg->iods[n - 1].addr;
		const char *c = strrchr(last, ':');

		port = port_of(cfg->metad.addr);
		for (uint32_t i = 0; i < n; i++)
			if (port_of(cfg->iods[i].addr) > port)
				port = port_of(cfg->iods[i].addr);
		snprintf(addr, sizeof(addr), "%.*s:%u",
			 (int)(c ? c - last : (long)strlen(last)), last,
			 port + 1);
	}
	if (dir_opt)
		snprintf(dir, sizeof(dir), "%s", dir_opt);
	else
		snprintf(dir, sizeof(dir), "%s/iod%u", cfg->data_dir, n);
	err = add_section(cfg, conf, addr, dir);
	if (!err)
		err = clf_config_load(conf, &now);
	if (!err && now->niods != n + 1)
		err = clf_fail(EINVAL, "clf iod add: %s has %u iods after the addition, not %u",
			       conf, now->niods, n + 1);
	if (!err)
		err = daemons_list(now, &ds, &nd);
	if (err)
		goto fail;
	/* daemons_list: metad 0 first, then the iods by index. */
	if (ds[1 + n].local == 1)
		err = start(now, &ds[1 + n], conf);
	/* Every metad reads its configuration again and takes the new iod
	 * (IOD_STATE JOIN, 1.23): no restart, no pause of its clients. */
	if (!err)
		err = iod_state(now, n, CLF_PROTO_IOD_JOIN, NULL);
	if (err)
		goto fail;
	printf("iod %u added: %s, storage %s; %s now has %u iods\n", n, addr,
	       dir, conf, n + 1);
	err = 0;
	goto out;
fail:
	err = -1;
	tool_fail();
out:
	free(ds);
	clf_config_free(now);
	clf_config_free(cfg);
	return err ? CLF_EXIT_FAIL : CLF_EXIT_OK;
}

/* clf iod add N: retired iod n takes new files again (started here if
 * it is local and not running).  metad goes on. */
static int do_readd(const struct tool_opts *g, const char *data, uint32_t n)
{
	struct clf_config *cfg = NULL;
	struct tool_daemon *ds = NULL;
	size_t nd = 0;
	pid_t pid;
	int err;

	if (tool_config_open(g, data, &cfg) || tool_config_need_secret(cfg))
		goto fail;
	if (n >= cfg->niods) {
		clf_fail(EINVAL, "clf iod add %u: %s has iods 0 to %u (a new one: clf iod add, without N)",
			 n, tool_config_name(cfg), cfg->niods - 1);
		goto fail;
	}
	err = daemons_list(cfg, &ds, &nd);
	/* daemons_list: metad 0 first, then the iods by index. */
	if (!err && ds[1 + n].local == 1 &&
	    daemon_pid_check(&ds[1 + n], &pid) != DAEMON_PID_ALIVE) {
		unlink(ds[1 + n].pidfile);
		err = start(cfg, &ds[1 + n], cfg->source);
	}
	if (!err)
		err = iod_state(cfg, n, CLF_PROTO_IOD_ACTIVE, NULL);
	if (err)
		goto fail;
	printf("iod %u is back: new files are placed on it again\n", n);
	err = 0;
	goto out;
fail:
	err = -1;
	tool_fail();
out:
	free(ds);
	clf_config_free(cfg);
	return err ? CLF_EXIT_FAIL : CLF_EXIT_OK;
}

static void iod_help(FILE *f)
{
	fprintf(f,
		"usage: clf iod add [--data DIR] [--address HOST:PORT] [--dir D]\n"
		"       clf iod add N [--data DIR]\n"
		"       clf iod remove N [--data DIR]\n"
		"\n"
		"add: a new iod joins the running instance: its [iod] section\n"
		"is added to the configuration (stripe_count raised with it when\n"
		"it named every iod), it is started (on this host), and every\n"
		"metad reads its configuration again and places new files on\n"
		"it too (no restart).  Default address: the host of the last\n"
		"iod, the port after the highest in use; default storage:\n"
		"<data_dir>/iodN.  add N: iod N, retired by a remove, takes\n"
		"new files again (started if it is local and stopped); metad\n"
		"goes on.\n"
		"\n"
		"remove:\n"
		"Move every subfile off iod N (its index in the configuration)\n"
		"to the other iods, while clients go on reading and writing:\n"
		"each file's writes at iod N pause while its subfiles are\n"
		"copied, then metad's layout names the new iods and clients\n"
		"follow.  Afterwards iod N holds nothing and may be stopped; it\n"
		"is retired at metad from the start: no new file is placed on\n"
		"it (durably) until `clf iod add N`.\n"
		"Run it again after an interruption: it starts over where it\n"
		"stopped (docs/elastic.md).\n"
		"\n"
		"Options:\n"
		"  --data DIR  the instance whose configuration is DIR/clf.conf\n"
		"  --address HOST:PORT, --dir D\n"
		"              add: where the new iod listens and stores\n"
		"  -h, --help  this text\n");
}

static int do_remove(const struct tool_opts *g, const char *data,
		     uint32_t from)
{
	struct clf_config *cfg = NULL;
	struct mover m = { 0 };
	bool *retired = NULL;
	int64_t t0 = clf_now_ms();
	int err;

	if (tool_config_open(g, data, &cfg) || tool_config_need_secret(cfg))
		goto fail;
	if (from >= cfg->niods || cfg->niods < 2) {
		clf_fail(EINVAL, "clf iod remove: iod %u is not one of %s's %u iods, or it is the only one",
			 from, tool_config_name(cfg), cfg->niods);
		goto fail;
	}
	m = (struct mover){ .cfg = cfg, .from = from };
	m.iod = calloc(cfg->niods, sizeof(*m.iod));
	m.to = calloc(cfg->niods, sizeof(*m.to));
	if (!m.iod || !m.to) {
		clf_fail(ENOMEM, "clf: out of memory");
		goto fail;
	}
	/* Retired first: no new file is placed on iod from from now on,
	 * so that the passes below end (docs/elastic.md). */
	err = iod_state(cfg, from, CLF_PROTO_IOD_RETIRED, &retired);
	for (uint32_t i = 0; !err && i < cfg->niods; i++)
		if (i != from && !retired[i])
			m.to[m.nto++] = i;
	if (!err && !m.nto)
		err = clf_fail(EBUSY, "clf iod remove: every other iod is retired: bring one back first (clf iod add N)");
	if (!err)
		err = probe_open(cfg, cfg->metad.addr, cfg->timeout_ms, &m.md);
	if (!err)
		err = probe_open(cfg, cfg->iods[from].addr, cfg->timeout_ms,
				 &m.iod[from]);
	if (!err)
		err = drain_iod(&m);
	if (err)
		goto fail;
	printf("iod %u emptied: %" PRIu64 " subfiles of %" PRIu64
	       " files, %" PRIu64 " bytes moved in %.3f s\n", from,
	       m.subfiles, m.files, m.bytes, (clf_now_ms() - t0) / 1000.0);
	printf("iod %u retired: no new files are placed on it (clf iod add %u brings it back)\n",
	       from, from);
	err = 0;
	goto close;
fail:
	err = -1;
	tool_fail();
close:
	if (m.iod)
		for (uint32_t i = 0; i < cfg->niods; i++)
			clf_conn_close(m.iod[i]);
	free(m.iod);
	free(m.to);
	free(retired);
	clf_conn_close(m.md);
	clf_config_free(cfg);
	return err ? CLF_EXIT_FAIL : CLF_EXIT_OK;
}

int cmd_iod(const struct tool_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "address", required_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *data = NULL, *addr = NULL, *dir = NULL;
	bool add = false;
	char *end;
	unsigned long n;
	int c;

	/* `clf iod remove N [--data DIR]`: the options after the verb. */
	if (argc >= 2 && (!strcmp(argv[1], "remove") ||
			  !strcmp(argv[1], "add"))) {
		add = !strcmp(argv[1], "add");
		argc--;
		argv++;
	} else if (argc < 2 || (strcmp(argv[1], "-h") &&
				strcmp(argv[1], "--help"))) {
		return tool_usage("iod", "say 'remove N'");
	}
	optind = 0;	/* glibc: start afresh, permuting */
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			data = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'D':
			dir = optarg;
			break;
		case 'h':
			iod_help(stdout);
			return CLF_EXIT_OK;
		default:
			return tool_bad_option("iod", c, argv);
		}
	}
	if (add && optind == argc)
		return do_add(g, data, addr, dir);
	if (optind + 1 != argc || (add && (addr || dir)))
		return tool_usage("iod", add ? "add takes at most N, without --address or --dir" :
				  "say 'remove N'");
	n = strtoul(argv[optind], &end, 10);
	if (*end || end == argv[optind] || n >= CLF_PROTO_MAX_IODS)
		return tool_usage("iod", "'%s' is not an iod index",
				  argv[optind]);
	if (add)
		return do_readd(g, data, (uint32_t)n);
	return do_remove(g, data, (uint32_t)n);
}
