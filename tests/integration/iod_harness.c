// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_harness.c -- starting, stopping and talking to a real iod.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iod_harness.h"

#ifndef IOD_BIN
#define IOD_BIN "build/iod/iod"
#endif

#define START_ATTEMPTS 5	/* ports tried when another process took one */
#define MAX_TRACKED 16

/* ------------------------------------------------------------------ */
/* Processes                                                           */
/* ------------------------------------------------------------------ */

static pid_t tracked[MAX_TRACKED];

static void kill_tracked(void)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] > 0)
			kill(tracked[i], SIGKILL);
}

void iodh_track_pid(pid_t pid)
{
	static int registered;

	if (!registered) {
		atexit(kill_tracked);
		registered = 1;
	}
	for (int i = 0; i < MAX_TRACKED; i++) {
		if (tracked[i] <= 0) {
			tracked[i] = pid;
			return;
		}
	}
	ck_abort_msg("more than %d processes started by one test", MAX_TRACKED);
}

static void untrack(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] == pid)
			tracked[i] = 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* waitpid within ms: 1 and *status when it ended, 0 when not yet. */
static int wait_for(pid_t pid, int ms, int *status)
{
	int64_t end = clf_now_ms() + ms;

	do {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid) {
			untrack(pid);
			return 1;
		}
		ck_assert_msg(r == 0, "waitpid %d: %s", pid, strerror(errno));
		sleep_ms(10);
	} while (clf_now_ms() < end);
	return 0;
}

const char *iodh_binary(void)
{
	const char *env = getenv("CLF_IOD_BIN");

	return env && *env ? env : IOD_BIN;
}

void *iodh_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* The whole of a small text file, NUL-terminated (caller frees). */
static char *slurp(const char *path)
{
	char *buf = iodh_alloc(1 << 20);
	ssize_t n = 0;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		n = read(fd, buf, (1 << 20) - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

bool iodh_log_has(const struct iodh *h, const char *s)
{
	char *text = slurp(h->log);
	bool has = strstr(text, s) != NULL;

	free(text);
	return has;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

/* A port nobody listens on now (another process may take it later). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_int_ge(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

void iodh_init(struct iodh *h, int timeout_ms)
{
	char tmpl[] = "/tmp/clf-iod-it.XXXXXX";

	memset(h, 0, sizeof(*h));
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	h->base = strdup(tmpl);
	ck_assert_ptr_nonnull(h->base);
	snprintf(h->conf, sizeof(h->conf), "%s/clf.conf", h->base);
	snprintf(h->dir, sizeof(h->dir), "%s/iod0", h->base);
	snprintf(h->log, sizeof(h->log), "%s/iod.log", h->base);
	h->timeout_ms = timeout_ms;
	ck_assert_int_eq(clf_secret_generate(&h->secret), 0);
}

void iodh_write_config(struct iodh *h)
{
	char hex[CLF_SECRET_HEX_MAX];
	int port = free_port(), mport;
	FILE *f;

	do
		mport = free_port();
	while (mport == port);
	snprintf(h->addr, sizeof(h->addr), "127.0.0.1:%d", port);
	ck_assert_int_eq(clf_secret_to_hex(&h->secret, hex, sizeof(hex)), 0);
	f = fopen(h->conf, "w");
	ck_assert_ptr_nonnull(f);
	fchmod(fileno(f), 0600);
	fprintf(f, "[global]\nsecret = %s\ntimeout_ms = %d\n", hex,
		h->timeout_ms);
	if (h->conf_global)
		fputs(h->conf_global, f);
	fprintf(f, "[metad]\naddress = 127.0.0.1:%d\n", mport);
	fprintf(f, "[iod]\naddress = %s\ndir = %s\n", h->addr, h->dir);
	ck_assert_int_eq(fclose(f), 0);
}

size_t iodh_rss(const struct iodh *h)
{
	char path[64], line[256];
	size_t kb = 0;
	FILE *f;

	ck_assert_int_gt(h->pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)h->pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %zu kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(kb, 0);
	return kb << 10;
}

/* ------------------------------------------------------------------ */
/* Starting and stopping                                               */
/* ------------------------------------------------------------------ */

/* fork/exec the iod in the foreground; its stderr goes to errpath. */
static pid_t spawn(struct iodh *h, const char *errpath)
{
	pid_t parent = getpid(), pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *args[] = { "iod", "-c", h->conf, "-n", "0", "-f",
				       "--log", h->log, "--log-level", "debug",
				       h->extra_arg, NULL };
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		/* Die with the test, whatever ends it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		for (int i = 0; i < IODH_MAX_ENV; i++)
			if (h->env[i])
				putenv((char *)h->env[i]);
		execv(iodh_binary(), (char *const *)args);
		fprintf(stderr, "cannot run %s: %s\n", iodh_binary(),
			strerror(errno));
		_exit(127);
	}
	iodh_track_pid(pid);
	return pid;
}

/* Occurrences of s in the file at path. */
static int count_in(const char *path, const char *s)
{
	char *text = slurp(path), *p = text;
	int n = 0;

	while ((p = strstr(p, s))) {
		n++;
		p += strlen(s);
	}
	free(text);
	return n;
}

/*
 * Start and wait for its "listening on" log line (one more than before).
 * 1 when up, 0 when it failed because the port was taken (retry), and
 * an assertion failure otherwise.
 */
static int start_once(struct iodh *h)
{
	char errpath[600];
	int before = count_in(h->log, "listening on"), status;
	int64_t end = clf_now_ms() + IODH_WAIT_MS;
	char *err;

	snprintf(errpath, sizeof(errpath), "%s/iod.stderr", h->base);
	h->pid = spawn(h, errpath);
	while (clf_now_ms() < end) {
		if (count_in(h->log, "listening on") > before)
			return 1;
		if (wait_for(h->pid, 10, &status)) {
			h->pid = 0;
			err = slurp(errpath);
			if (strstr(err, "in use")) {
				free(err);
				return 0;
			}
			ck_abort_msg("iod exited (status 0x%x) before listening: %s",
				     status, err);
		}
	}
	ck_abort_msg("iod did not listen within %d ms", IODH_WAIT_MS);
	return 0;
}

void iodh_start(struct iodh *h)
{
	for (int i = 0; i < START_ATTEMPTS; i++) {
		iodh_write_config(h);
		if (start_once(h))
			return;
	}
	ck_abort_msg("no free port in %d attempts", START_ATTEMPTS);
}

void iodh_restart(struct iodh *h)
{
	ck_assert_int_eq(h->pid, 0);
	ck_assert_msg(start_once(h), "the port was taken during the restart");
}

void iodh_stop(struct iodh *h)
{
	int status;

	ck_assert_int_gt(h->pid, 0);
	ck_assert_int_eq(kill(h->pid, SIGTERM), 0);
	ck_assert_msg(wait_for(h->pid, IODH_WAIT_MS, &status),
		      "iod did not stop within %d ms of SIGTERM", IODH_WAIT_MS);
	h->pid = 0;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "iod ended with status 0x%x after SIGTERM", status);
}

void iodh_kill9(struct iodh *h)
{
	int status;

	ck_assert_int_gt(h->pid, 0);
	ck_assert_int_eq(kill(h->pid, SIGKILL), 0);
	ck_assert(wait_for(h->pid, IODH_WAIT_MS, &status));
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	h->pid = 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

void iodh_cleanup(struct iodh *h)
{
	int status;

	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		wait_for(h->pid, IODH_WAIT_MS, &status);
		h->pid = 0;
	}
	if (h->base) {
		/* A test may have mounted a tmpfs on the iod's directory. */
		umount2(h->dir, MNT_DETACH);
		if (getenv("CLF_TEST_KEEP"))
			fprintf(stderr, "kept %s\n", h->base);
		else
			nftw(h->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		free(h->base);
		h->base = NULL;
	}
	clf_secret_clear(&h->secret);
}

int iodh_run(const char *const *args, char *err, size_t errlen)
{
	const char *argv[16] = { "iod" };
	int fds[2], status, n = 1;
	size_t got = 0;
	int64_t end;
	pid_t pid;

	for (; args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(iodh_binary(), (char *const *)argv);
		_exit(127);
	}
	iodh_track_pid(pid);
	close(fds[1]);
	end = clf_now_ms() + IODH_WAIT_MS;
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		char scratch[256];
		int left = (int)(end - clf_now_ms());
		ssize_t r;

		ck_assert_msg(left > 0, "iod kept its stderr open too long");
		if (poll(&p, 1, left) <= 0)
			continue;
		if (err && got + 1 < errlen)
			r = read(fds[0], err + got, errlen - 1 - got);
		else
			r = read(fds[0], scratch, sizeof(scratch));
		if (r <= 0)
			break;
		if (err && got + 1 < errlen)
			got += (size_t)r;
	}
	close(fds[0]);
	if (err)
		err[got] = '\0';
	ck_assert_msg(wait_for(pid, IODH_WAIT_MS, &status),
		      "iod did not exit within %d ms", IODH_WAIT_MS);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

int iodh_connect_with(const struct iodh *h, const struct clf_secret *s,
		      struct clf_conn **out)
{
	struct clf_conn *c;
	int err = clf_conn_connect(&clf_transport_tcp, h->addr, h->timeout_ms,
				   &c);

	if (err)
		return err;
	err = clf_auth_client(c, s, "client");
	if (err) {
		clf_conn_close(c);
		return err;
	}
	*out = c;
	return 0;
}

struct clf_conn *iodh_connect(const struct iodh *h)
{
	struct clf_conn *c = NULL;
	int err = iodh_connect_with(h, &h->secret, &c);

	ck_assert_msg(err == 0, "connect to the iod: %s", CLF_Last_error());
	return c;
}

/*
 * One request: the body encoded by the caller in body (len bytes) plus
 * optional bulk data; the reply's payload in *payload (caller frees) and
 * its length in *plen.
 */
static int call(struct clf_conn *c, uint16_t op, const void *body,
		size_t len, const void *data, size_t dlen, void **payload,
		uint32_t *plen)
{
	struct clf_proto_header h, rep;
	struct iovec iov[2] = { { (void *)body, len }, { (void *)data, dlen } };
	void *pl = NULL;
	int err;

	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	err = clf_conn_call(c, &h, iov, dlen ? 2 : (len ? 1 : 0), &rep, &pl);
	if (err)
		return err;
	if (payload) {
		*payload = pl;
		*plen = rep.payload_len;
	} else {
		ck_assert_int_eq(rep.payload_len, 0);
		free(pl);
	}
	return 0;
}

/* A reply body that must be a u32. */
static int64_t reply_u32(void *pl, uint32_t len)
{
	struct wire_reader r = { pl, len, 0, false };
	struct clf_proto_u32 m;

	ck_assert_int_eq(clf_proto_u32_decode(&r, &m), 0);
	free(pl);
	return m.value;
}

int cl_ping(struct clf_conn *c)
{
	return call(c, CLF_PROTO_OP_PING, NULL, 0, NULL, 0, NULL, NULL);
}

int cl_status(struct clf_conn *c, struct clf_proto_status *st)
{
	void *pl;
	uint32_t len;
	int err = call(c, CLF_PROTO_OP_STATUS, NULL, 0, NULL, 0, &pl, &len);
	struct wire_reader r;

	if (err)
		return err;
	r = (struct wire_reader){ pl, len, 0, false };
	ck_assert_int_eq(clf_proto_status_decode(&r, st), 0);
	free(pl);
	return 0;
}

int cl_statfs(struct clf_conn *c, struct clf_proto_statfs *st)
{
	void *pl;
	uint32_t len;
	int err = call(c, CLF_PROTO_OP_IOD_STATFS, NULL, 0, NULL, 0, &pl,
		       &len);
	struct wire_reader r;

	if (err)
		return err;
	r = (struct wire_reader){ pl, len, 0, false };
	ck_assert_int_eq(clf_proto_statfs_decode(&r, st), 0);
	free(pl);
	return 0;
}

int64_t cl_sub_write(struct clf_conn *c, uint64_t file, uint32_t sub,
		     int64_t off, const void *data, size_t len)
{
	struct clf_proto_sub_write_req m = { file, sub, off,
					     { data, (uint32_t)len } };
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	void *pl;
	uint32_t plen;
	int err;

	ck_assert_int_eq(clf_proto_sub_write_req_encode_head(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_SUB_WRITE, body, w.pos, data, len, &pl,
		   &plen);
	return err ? err : reply_u32(pl, plen);
}

int64_t cl_sub_read(struct clf_conn *c, uint64_t file, uint32_t sub,
		    int64_t off, void *buf, size_t len)
{
	struct clf_proto_sub_read_req m = { file, sub, off, (uint32_t)len };
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_data d;
	struct wire_reader r;
	void *pl;
	uint32_t plen;
	int err;

	ck_assert_int_eq(clf_proto_sub_read_req_encode(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_SUB_READ, body, w.pos, NULL, 0, &pl, &plen);
	if (err)
		return err;
	r = (struct wire_reader){ pl, plen, 0, false };
	ck_assert_int_eq(clf_proto_data_decode(&r, &d), 0);
	ck_assert_uint_le(d.data.len, len);
	memcpy(buf, d.data.ptr, d.data.len);
	free(pl);
	return d.data.len;
}

int64_t cl_sub_writev(struct clf_conn *c, uint64_t file, uint32_t n,
		      const uint32_t *sub, const int64_t *off,
		      const uint32_t *len, const void *data, size_t dlen)
{
	static struct clf_proto_sub_vec_req m;
	uint8_t body[8 + 4 + 16 * CLF_PROTO_SUB_VEC_MAX + 4];
	struct wire_writer w = { body, sizeof(body), 0 };
	void *pl;
	uint32_t plen;
	int err;

	m.file = file;
	m.n = n;
	for (uint32_t i = 0; i < n; i++) {
		m.subfile[i] = sub[i];
		m.offset[i] = off[i];
		m.length[i] = len[i];
	}
	m.data = (struct clf_proto_bytes){ data, (uint32_t)dlen };
	if (clf_proto_sub_writev_req_encode_head(&w, &m)) {
		/* Data that is not the ranges' (a test of the iod's check):
		 * the head as if it were, then these bytes. */
		uint32_t sum = 0;

		for (uint32_t i = 0; i < n; i++)
			sum += len[i];
		m.data.len = sum;
		ck_assert_int_eq(clf_proto_sub_writev_req_encode_head(&w, &m), 0);
		w.pos -= 4;
		wire_put_u32(&w, (uint32_t)dlen);
	}
	err = call(c, CLF_PROTO_OP_SUB_WRITEV, body, w.pos, data, dlen, &pl,
		   &plen);
	return err ? err : reply_u32(pl, plen);
}

int64_t cl_sub_readv(struct clf_conn *c, uint64_t file, uint32_t n,
		     const uint32_t *sub, const int64_t *off,
		     const uint32_t *len, void *buf, size_t max)
{
	static struct clf_proto_sub_vec_req m;
	uint8_t body[8 + 4 + 16 * CLF_PROTO_SUB_VEC_MAX];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_data d;
	struct wire_reader r;
	void *pl;
	uint32_t plen;
	int err;

	m.file = file;
	m.n = n;
	for (uint32_t i = 0; i < n; i++) {
		m.subfile[i] = sub[i];
		m.offset[i] = off[i];
		m.length[i] = len[i];
	}
	ck_assert_int_eq(clf_proto_sub_readv_req_encode(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_SUB_READV, body, w.pos, NULL, 0, &pl,
		   &plen);
	if (err)
		return err;
	r = (struct wire_reader){ pl, plen, 0, false };
	ck_assert_int_eq(clf_proto_data_decode(&r, &d), 0);
	ck_assert_uint_le(d.data.len, max);
	memcpy(buf, d.data.ptr, d.data.len);
	free(pl);
	return d.data.len;
}

int cl_view_register(struct clf_conn *c, uint64_t file, uint32_t sub,
		     CLF_Datatype view, int64_t vdisp, CLF_Datatype subtype,
		     int64_t sdisp, uint32_t *handle)
{
	int64_t vlen = CLF_Type_encode(view, NULL, 0);
	int64_t slen = CLF_Type_encode(subtype, NULL, 0);
	uint8_t *vb = iodh_alloc((size_t)vlen), *sb = iodh_alloc((size_t)slen);
	struct clf_proto_view_register_req m;
	struct wire_writer w = { NULL, 0, 0 };
	uint8_t *body;
	void *pl;
	uint32_t plen;
	int err;

	ck_assert_int_eq(CLF_Type_encode(view, vb, (size_t)vlen), vlen);
	ck_assert_int_eq(CLF_Type_encode(subtype, sb, (size_t)slen), slen);
	m = (struct clf_proto_view_register_req){
		file, sub, vdisp, { vb, (uint32_t)vlen }, sdisp,
		{ sb, (uint32_t)slen },
	};
	ck_assert_int_eq(clf_proto_view_register_req_encode(&w, &m), 0);
	body = iodh_alloc(w.pos);
	w = (struct wire_writer){ body, w.pos, 0 };
	ck_assert_int_eq(clf_proto_view_register_req_encode(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_VIEW_REGISTER, body, w.pos, NULL, 0, &pl,
		   &plen);
	free(body);
	free(vb);
	free(sb);
	if (err)
		return err;
	*handle = (uint32_t)reply_u32(pl, plen);
	return 0;
}

int cl_view_release(struct clf_conn *c, uint32_t handle)
{
	struct clf_proto_u32 m = { handle };
	uint8_t body[8];
	struct wire_writer w = { body, sizeof(body), 0 };

	ck_assert_int_eq(clf_proto_u32_encode(&w, &m), 0);
	return call(c, CLF_PROTO_OP_VIEW_RELEASE, body, w.pos, NULL, 0, NULL,
		    NULL);
}

static struct clf_proto_view_io_req view_io(uint32_t handle, int64_t lo,
					    int64_t hi, uint64_t tag,
					    uint32_t participants)
{
	struct clf_proto_view_io_req m = {
		.handle = handle, .lo = lo, .hi = hi, .coll_tag = tag,
		.participants = participants,
	};

	if (participants)
		m.flags = CLF_PROTO_VIEW_COLLECTIVE;
	return m;
}

int64_t cl_view_write(struct clf_conn *c, uint32_t handle, int64_t lo,
		      int64_t hi, const void *data, size_t len, uint64_t tag,
		      uint32_t participants)
{
	struct clf_proto_view_io_req m = view_io(handle, lo, hi, tag,
						 participants);
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	void *pl;
	uint32_t plen;
	int err;

	m.data = (struct clf_proto_bytes){ data, (uint32_t)len };
	ck_assert_int_eq(clf_proto_view_write_req_encode_head(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_VIEW_WRITE, body, w.pos, data, len, &pl,
		   &plen);
	return err ? err : reply_u32(pl, plen);
}

int64_t cl_view_read(struct clf_conn *c, uint32_t handle, int64_t lo,
		     int64_t hi, void *buf, size_t cap, uint64_t tag,
		     uint32_t participants)
{
	struct clf_proto_view_io_req m = view_io(handle, lo, hi, tag,
						 participants);
	uint8_t body[64];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_data d;
	struct wire_reader r;
	void *pl;
	uint32_t plen;
	int err;

	ck_assert_int_eq(clf_proto_view_read_req_encode(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_VIEW_READ, body, w.pos, NULL, 0, &pl, &plen);
	if (err)
		return err;
	r = (struct wire_reader){ pl, plen, 0, false };
	ck_assert_int_eq(clf_proto_data_decode(&r, &d), 0);
	ck_assert_uint_le(d.data.len, cap);
	memcpy(buf, d.data.ptr, d.data.len);
	free(pl);
	return d.data.len;
}

int cl_sync(struct clf_conn *c, uint64_t file)
{
	struct clf_proto_ino m = { file };
	uint8_t body[16];
	struct wire_writer w = { body, sizeof(body), 0 };

	ck_assert_int_eq(clf_proto_ino_encode(&w, &m), 0);
	return call(c, CLF_PROTO_OP_SYNC, body, w.pos, NULL, 0, NULL, NULL);
}

int cl_truncate(struct clf_conn *c, uint64_t file, uint32_t sub, int64_t len)
{
	struct clf_proto_truncate_req m = { file, sub, len };
	uint8_t body[32];
	struct wire_writer w = { body, sizeof(body), 0 };

	ck_assert_int_eq(clf_proto_truncate_req_encode(&w, &m), 0);
	return call(c, CLF_PROTO_OP_TRUNCATE, body, w.pos, NULL, 0, NULL,
		    NULL);
}

int cl_remove(struct clf_conn *c, uint64_t file, uint32_t sub)
{
	struct clf_proto_remove_req m = { file, sub };
	uint8_t body[32];
	struct wire_writer w = { body, sizeof(body), 0 };

	ck_assert_int_eq(clf_proto_remove_req_encode(&w, &m), 0);
	return call(c, CLF_PROTO_OP_REMOVE, body, w.pos, NULL, 0, NULL, NULL);
}

int cl_sub_sizes(struct clf_conn *c, uint64_t file, uint32_t n,
		 const uint32_t *sub, int64_t *len)
{
	static struct clf_proto_sub_sizes_req m;
	static struct clf_proto_sub_sizes rep;
	uint8_t body[8 + 4 + 4 * CLF_PROTO_SUB_SIZES_MAX];
	struct wire_writer w = { body, sizeof(body), 0 };
	struct wire_reader r;
	uint32_t plen;
	void *pl;
	int err;

	m.file = file;
	m.n = n;
	memcpy(m.subfile, sub, n * sizeof(*sub));
	ck_assert_int_eq(clf_proto_sub_sizes_req_encode(&w, &m), 0);
	err = call(c, CLF_PROTO_OP_SUB_SIZES, body, w.pos, NULL, 0, &pl,
		   &plen);
	if (err)
		return err;
	r = (struct wire_reader){ pl, plen, 0, false };
	ck_assert_int_eq(clf_proto_sub_sizes_decode(&r, &rep), 0);
	free(pl);
	ck_assert_uint_eq(rep.n, n);
	memcpy(len, rep.length, n * sizeof(*len));
	return 0;
}

void iodh_wait_views(struct clf_conn *c, uint32_t want)
{
	struct clf_proto_status st;
	int64_t end = clf_now_ms() + IODH_WAIT_MS;

	do {
		ck_assert_int_eq(cl_status(c, &st), 0);
		if (st.views == want)
			return;
		sleep_ms(10);
	} while (clf_now_ms() < end);
	ck_abort_msg("the iod holds %u views, expected %u", st.views, want);
}

/* ------------------------------------------------------------------ */
/* Reference                                                           */
/* ------------------------------------------------------------------ */

size_t iodh_ref_pack(CLF_Datatype view, int64_t vd, CLF_Datatype sub,
		     int64_t sd, int64_t lo, int64_t hi, int r, uint8_t *out,
		     int64_t *soff)
{
	size_t n = 0;

	for (int64_t y = lo; y < hi; y++) {
		int64_t f, s;

		ck_assert_int_eq(CLF_Type_unmap(view, vd, y, &f), 0);
		if (CLF_Type_map(sub, sd, f, &s) != 0)
			continue;
		if (out)
			out[n] = iodh_val(f, r);
		if (soff)
			soff[n] = s;
		n++;
	}
	return n;
}
