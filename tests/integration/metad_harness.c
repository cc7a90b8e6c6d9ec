// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * metad_harness.c -- start, stop and talk to the real metad (and iods)
 * for integration tests; see metad_harness.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "metad_harness.h"

#ifndef METAD_BIN
#define METAD_BIN "build/metad/metad"
#endif
#ifndef IOD_BIN
#define IOD_BIN "build/iod/iod"
#endif

#define MAX_TRACKED 64
#define START_TRIES 5

/* Where every test of this program makes its directory; set by mh_main
 * before the forks, so each test process inherits it. */
static char mh_root[MH_PATH - 64];

/* Daemons this process started and has not reaped. */
static pid_t tracked[MAX_TRACKED];

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

const char *mh_metad_bin(void)
{
	return METAD_BIN;
}

const char *mh_iod_bin(void)
{
	return IOD_BIN;
}

bool mh_have_iod(void)
{
	return access(IOD_BIN, X_OK) == 0;
}

/* ------------------------------------------------------------------ */
/* Keeping track of daemons                                            */
/* ------------------------------------------------------------------ */

static void kill_tracked(void)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] > 0)
			kill(tracked[i], SIGKILL);
}

static void untrack(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] == pid)
			tracked[i] = 0;
}

void mh_track_pid(const struct mh *h, pid_t pid)
{
	static bool registered;
	char path[MH_LONG];
	FILE *f;

	if (!registered) {
		atexit(kill_tracked);
		registered = true;
	}
	for (int i = 0; i < MAX_TRACKED; i++) {
		if (tracked[i] <= 0) {
			tracked[i] = pid;
			break;
		}
	}
	snprintf(path, sizeof(path), "%s/pids", h->base);
	f = fopen(path, "a");
	ck_assert_msg(f != NULL, "cannot record pid in %s", path);
	fprintf(f, "%ld\n", (long)pid);
	fclose(f);
}

/* Whether pid runs one of our programs (not a stranger with a reused
 * pid). */
static bool is_ours(pid_t pid)
{
	char link[64], exe[PATH_MAX], want[PATH_MAX];
	const char *bins[2] = { METAD_BIN, IOD_BIN };
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	for (int i = 0; i < 2; i++)
		if (realpath(bins[i], want) && !strcmp(exe, want))
			return true;
	return false;
}

/* Kill every daemon recorded in dir/pids that still runs. */
static void sweep_pids(const char *dir)
{
	char path[MH_PATH + 256];
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pids", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && is_ours((pid_t)pid))
			kill((pid_t)pid, SIGKILL);
	fclose(f);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void rm_tree(const char *dir)
{
	if (getenv("CLF_TEST_KEEP")) {
		fprintf(stderr, "kept %s\n", dir);
		return;
	}
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int mh_main(Suite *s)
{
	const char *tmp = getenv("TMPDIR");
	SRunner *sr;
	struct dirent *e;
	DIR *d;
	int failed;

	snprintf(mh_root, sizeof(mh_root), "%s/clf-metad-it-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(mh_root)) {
		perror("mkdtemp");
		return 1;
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	/* Tests that timed out were killed before their cleanup. */
	d = opendir(mh_root);
	while (d && (e = readdir(d))) {
		char dir[sizeof(mh_root) + 256];

		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", mh_root, e->d_name);
		sweep_pids(dir);
	}
	if (d)
		closedir(d);
	rm_tree(mh_root);
	return failed ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

static bool port_free(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A block of niods + 1 free ports, from the pid and a counter. */
static int pick_ports(int niods)
{
	static unsigned calls;

	for (int tries = 0; tries < 200; tries++) {
		unsigned r = (unsigned)getpid() * 53u + (calls++) * 211u;
		/* Below the kernel's ephemeral range (32768 and up). */
		int base = 10000 + (int)(r % 22000u);
		bool ok = true;

		for (int i = 0; i <= niods && ok; i++)
			ok = port_free(base + i);
		if (ok)
			return base;
	}
	ck_abort_msg("no free block of %d ports on 127.0.0.1", niods + 1);
	return -1;
}

static void write_config(struct mh *h)
{
	char hex[CLF_SECRET_HEX_MAX];
	FILE *f;

	ck_assert_int_eq(clf_secret_to_hex(&h->secret, hex, sizeof(hex)), 0);
	f = fopen(h->conf, "w");
	ck_assert_msg(f != NULL, "cannot write %s", h->conf);
	fchmod(fileno(f), 0600);
	fprintf(f, "[global]\nsecret = %s\nstripe_size = 64k\n", hex);
	fprintf(f, "timeout_ms = %d\ndata_dir = %s/data\n", h->timeout_ms,
		h->base);
	if (h->conf_global)
		fputs(h->conf_global, f);
	fprintf(f, "[metad]\naddress = %s\ndir = %s\n", h->addr, h->meta);
	for (int i = 0; i < h->niods; i++)
		fprintf(f, "[iod]\naddress = 127.0.0.1:%d\ndir = %s\n",
			h->port + 1 + i, h->iod_dir[i]);
	ck_assert_int_eq(fclose(f), 0);
}

void mh_write_config(struct mh *h)
{
	write_config(h);
}

static void new_ports(struct mh *h)
{
	h->port = pick_ports(h->niods);
	snprintf(h->addr, sizeof(h->addr), "127.0.0.1:%d", h->port);
	write_config(h);
}

void mh_init(struct mh *h, int niods, int timeout_ms)
{
	char base[MH_PATH];

	ck_assert_msg(mh_root[0], "mh_init outside mh_main");
	ck_assert(niods >= 1 && niods <= MH_MAX_IODS);
	memset(h, 0, sizeof(*h));
	snprintf(h->base, sizeof(h->base), "%s/t-XXXXXX", mh_root);
	ck_assert_msg(mkdtemp(h->base) != NULL, "mkdtemp %s: %s", h->base,
		      strerror(errno));
	snprintf(h->conf, sizeof(h->conf), "%s/clf.conf", h->base);
	snprintf(h->meta, sizeof(h->meta), "%s/meta", h->base);
	snprintf(h->log, sizeof(h->log), "%s/metad.log", h->base);
	snprintf(h->out, sizeof(h->out), "%s/metad.out", h->base);
	h->niods = niods;
	h->timeout_ms = timeout_ms;
	/* From a copy: the compiler takes h->base and h->iod_dir for
	 * one object and warns of an overlap that is not there. */
	memcpy(base, h->base, sizeof(base));
	for (int i = 0; i < niods; i++) {
		char *dir = h->iod_dir[i];

		snprintf(dir, MH_LONG, "%s/iod%d", base, i);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
	}
	ck_assert_int_eq(clf_secret_generate(&h->secret), 0);
	new_ports(h);
}

/* ------------------------------------------------------------------ */
/* Daemons                                                             */
/* ------------------------------------------------------------------ */

/* fork/exec prog with args; output appended to out; dies with us. */
static pid_t spawn(const struct mh *h, const char *out,
		   const char *const *env, char *const *argv)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);
		for (int i = 0; env && i < MH_MAX_ENV && env[i]; i++)
			putenv((char *)env[i]);
		execv(argv[0], argv);
		_exit(127);
	}
	mh_track_pid(h, pid);
	return pid;
}

/* The end of pid if it ended: its wait status, or -1 if it runs. */
static int reaped(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, WNOHANG) == pid) {
		untrack(pid);
		return status;
	}
	return -1;
}

/* Wait until a daemon at addr authenticates us; 0, or its wait status
 * when it ended first. */
static int wait_serving(pid_t pid, const char *addr,
			const struct clf_secret *secret, const char *what)
{
	int64_t deadline = clf_now_ms() + MH_WAIT_MS;

	while (clf_now_ms() < deadline) {
		struct mc *m;
		int status = reaped(pid);

		if (status >= 0)
			return status ? status : 1 << 8;
		if (mc_open_with(addr, secret, 1000, &m) == 0) {
			mc_close(m);
			return 0;
		}
		sleep_ms(20);
	}
	kill(pid, SIGKILL);
	ck_abort_msg("%s does not serve at %s within %d ms", what, addr,
		     MH_WAIT_MS);
	return -1;
}

int mh_try_start(struct mh *h)
{
	char *argv[] = { (char *)METAD_BIN, "-c", h->conf, "-f", "--log",
			 h->log, NULL };
	int status;

	ck_assert_msg(h->metad == 0, "metad already running");
	h->metad = spawn(h, h->out, h->env, argv);
	status = wait_serving(h->metad, h->addr, &h->secret, "metad");
	if (status)
		h->metad = 0;
	return status;
}

static bool iods_running(const struct mh *h)
{
	for (int i = 0; i < h->niods; i++)
		if (h->iods[i])
			return true;
	return false;
}

void mh_start(struct mh *h)
{
	for (int tries = 0; tries < START_TRIES; tries++) {
		int status = mh_try_start(h);

		if (!status)
			return;
		/* Someone took the port between our check and metad's
		 * bind: new ports, unless running iods use the old ones. */
		if (!mh_out_has(h, "in use") || iods_running(h))
			ck_abort_msg("metad exited with status 0x%x; see %s",
				     status, h->out);
		new_ports(h);
	}
	ck_abort_msg("metad could not find free ports in %d tries",
		     START_TRIES);
}

/* Wait for pid to end; its wait status, or -1 after the bound. */
static int wait_end(pid_t pid, int timeout_ms)
{
	int64_t deadline = clf_now_ms() + timeout_ms;

	while (clf_now_ms() < deadline) {
		int status = reaped(pid);

		if (status >= 0)
			return status;
		sleep_ms(5);
	}
	return -1;
}

void mh_stop(struct mh *h)
{
	int status;

	ck_assert_msg(h->metad > 0, "metad is not running");
	kill(h->metad, SIGTERM);
	status = wait_end(h->metad, MH_WAIT_MS);
	if (status == -1)
		kill(h->metad, SIGKILL);
	ck_assert_msg(status != -1, "metad ignored SIGTERM for %d ms",
		      MH_WAIT_MS);
	h->metad = 0;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "metad ended with status 0x%x on SIGTERM; see %s",
		      status, h->out);
}

void mh_kill9(struct mh *h)
{
	ck_assert_msg(h->metad > 0, "metad is not running");
	kill(h->metad, SIGKILL);
	ck_assert_int_ne(wait_end(h->metad, MH_WAIT_MS), -1);
	h->metad = 0;
}

int mh_wait_exit(struct mh *h)
{
	int status;

	ck_assert_msg(h->metad > 0, "metad is not running");
	status = wait_end(h->metad, MH_WAIT_MS);
	ck_assert_msg(status != -1, "metad did not end within %d ms",
		      MH_WAIT_MS);
	h->metad = 0;
	return status;
}

bool mh_alive(struct mh *h)
{
	int status;

	if (h->metad <= 0)
		return false;
	status = reaped(h->metad);
	if (status >= 0) {
		h->metad = 0;
		return false;
	}
	return true;
}

void mh_start_iod(struct mh *h, int i)
{
	char index[16], log[MH_LONG], out[MH_LONG], addr[64];
	char *argv[] = { (char *)IOD_BIN, "-c", h->conf, "-n", index, "-f",
			 "--log", log, NULL };
	int status;

	ck_assert(i >= 0 && i < h->niods && h->iods[i] == 0);
	snprintf(index, sizeof(index), "%d", i);
	snprintf(log, sizeof(log), "%s/iod%d.log", h->base, i);
	snprintf(out, sizeof(out), "%s/iod%d.out", h->base, i);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", h->port + 1 + i);
	h->iods[i] = spawn(h, out, NULL, argv);
	status = wait_serving(h->iods[i], addr, &h->secret, "iod");
	if (status)
		h->iods[i] = 0;
	ck_assert_msg(status == 0, "iod %d exited with status 0x%x; see %s",
		      i, status, out);
}

void mh_stop_iod(struct mh *h, int i, int sig)
{
	ck_assert(i >= 0 && i < h->niods && h->iods[i] > 0);
	kill(h->iods[i], sig);
	ck_assert_int_ne(wait_end(h->iods[i], MH_WAIT_MS), -1);
	h->iods[i] = 0;
}

void mh_cleanup(struct mh *h)
{
	for (int i = 0; i < h->niods; i++) {
		if (h->iods[i] > 0) {
			kill(h->iods[i], SIGKILL);
			wait_end(h->iods[i], MH_WAIT_MS);
		}
	}
	if (h->metad > 0) {
		kill(h->metad, SIGKILL);
		wait_end(h->metad, MH_WAIT_MS);
	}
	sweep_pids(h->base);
	rm_tree(h->base);
}

static bool file_has(const char *path, const char *s)
{
	char buf[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY);
	bool found = false;

	if (fd < 0)
		return false;
	/* Logs of these tests stay small; the tail is what matters. */
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		off_t size = lseek(fd, 0, SEEK_END);

		if (size > (off_t)sizeof(buf) - 1)
			n = pread(fd, buf, sizeof(buf) - 1,
				  size - (off_t)sizeof(buf) + 1);
		buf[n > 0 ? n : 0] = '\0';
		found = strstr(buf, s) != NULL;
	}
	close(fd);
	return found;
}

bool mh_log_has(const struct mh *h, const char *s)
{
	return file_has(h->log, s);
}

bool mh_out_has(const struct mh *h, const char *s)
{
	return file_has(h->out, s);
}

int mh_run_metad(const char *const *args, char *err, size_t errlen)
{
	int64_t deadline = clf_now_ms() + MH_WAIT_MS;
	char *argv[16];
	size_t n = 0, argc = 0;
	int p[2], status;
	pid_t pid;

	argv[argc++] = (char *)METAD_BIN;
	while (args[argc - 1] && argc < 15) {
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	argv[argc] = NULL;
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	/* Until the end of its standard error: a daemon lets go of it
	 * when it is ready. */
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		char buf[256];
		int64_t left = deadline - clf_now_ms();
		ssize_t k;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		k = read(p[0], buf, sizeof(buf));
		if (k <= 0)
			break;
		for (ssize_t i = 0; err && i < k && n + 1 < errlen; i++)
			err[n++] = buf[i];
	}
	close(p[0]);
	if (err && errlen)
		err[n] = '\0';
	status = wait_end(pid, (int)(deadline - clf_now_ms() > 0
					     ? deadline - clf_now_ms() : 1));
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ck_abort_msg("metad did not end within %d ms", MH_WAIT_MS);
	}
	return status;
}

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

int mc_open_with(const char *addr, const struct clf_secret *s, int timeout_ms,
		 struct mc **out)
{
	struct clf_conn *c;
	struct mc *m;
	int err;

	err = clf_conn_connect(&clf_transport_tcp, addr, timeout_ms, &c);
	if (err)
		return err;
	err = clf_auth_client(c, s, "test");
	if (err) {
		clf_conn_close(c);
		return err;
	}
	m = calloc(1, sizeof(*m));
	ck_assert_ptr_nonnull(m);
	m->c = c;
	*out = m;
	return 0;
}

/*
 * Connects again, as clf's clients do, after a handshake the daemon cut
 * off: more than CLF_ADMIT_HANDSHAKES_PER_ADDR at once from one address
 * (a test's threads on a loaded machine) end the oldest (admission.h).
 */
struct mc *mc_open(const struct mh *h)
{
	int64_t deadline = clf_now_ms() + MH_WAIT_MS;
	struct mc *m = NULL;
	int err;

	while ((err = mc_open_with(h->addr, &h->secret, MH_WAIT_MS, &m)) &&
	       clf_now_ms() < deadline)
		sleep_ms(20);
	ck_assert_msg(err == 0, "cannot connect to metad at %s: %s", h->addr,
		      CLF_Last_error());
	return m;
}

void mc_close(struct mc *m)
{
	if (!m)
		return;
	clf_conn_close(m->c);
	free(m->payload);
	free(m);
}

int mc_call(struct mc *m, uint16_t op, const void *body, size_t len,
	    struct wire_reader *r)
{
	uint8_t idbuf[CLF_PROTO_REQ_ID_SIZE];
	struct wire_writer w = { idbuf, sizeof(idbuf), 0 };
	struct iovec iov[2] = { { idbuf, 0 }, { (void *)body, len } };
	struct clf_proto_header h, rh;
	void *payload = NULL;
	int err;

	free(m->payload);
	m->payload = NULL;
	clf_proto_header_init(&h, op, clf_conn_next_id(m->c));
	if (m->reqid) {
		ck_assert_int_eq(clf_proto_reqid_encode(&w, m->reqid), 0);
		iov[0].iov_len = w.pos;
		h.flags |= CLF_PROTO_FLAG_REQ_ID;
	}
	err = clf_conn_call(m->c, &h, m->reqid ? iov : iov + 1,
			    (m->reqid ? 1 : 0) + (len ? 1 : 0), &rh, &payload);
	if (err)
		return err;
	m->payload = payload;
	*r = (struct wire_reader){ payload, rh.payload_len, 0, false };
	return 0;
}

/* A writer over m's request buffer. */
static struct wire_writer writer(struct mc *m)
{
	return (struct wire_writer){ m->buf, sizeof(m->buf), 0 };
}

/* Send what w holds (the encoder's result err) as op. */
static int send_enc(struct mc *m, int err, const struct wire_writer *w,
		    uint16_t op, struct wire_reader *r)
{
	ck_assert_msg(err == 0, "encoding %s: %s", clf_proto_op_name(op),
		      CLF_Last_error());
	ck_assert_uint_le(w->pos, w->cap);
	return mc_call(m, op, m->buf, w->pos, r);
}

int mc_ping(struct mc *m)
{
	struct wire_reader r;
	int err = mc_call(m, CLF_PROTO_OP_PING, NULL, 0, &r);

	return err ? err : clf_proto_empty_decode(&r);
}

int mc_status(struct mc *m, struct clf_proto_status *out)
{
	struct wire_reader r;
	int err = mc_call(m, CLF_PROTO_OP_STATUS, NULL, 0, &r);

	return err ? err : clf_proto_status_decode(&r, out);
}

int mc_statfs(struct mc *m, struct clf_proto_statfs *out)
{
	struct wire_reader r;
	int err = mc_call(m, CLF_PROTO_OP_STATFS, NULL, 0, &r);

	return err ? err : clf_proto_statfs_decode(&r, out);
}

int mc_lookup(struct mc *m, uint64_t dir, const char *path, uint32_t flags,
	      struct clf_proto_lookup_rep *out)
{
	struct clf_proto_lookup_req req = { dir, flags,
					    clf_proto_str_of(path) };
	struct clf_proto_lookup_rep rep;
	struct wire_writer w = writer(m);
	struct wire_reader r;
	int err = send_enc(m, clf_proto_lookup_req_encode(&w, &req), &w,
			   CLF_PROTO_OP_LOOKUP, &r);

	if (!err)
		err = clf_proto_lookup_rep_decode(&r, &rep);
	if (err)
		return err;
	if (out)
		*out = rep;
	else
		clf_proto_lookup_rep_release(&rep);
	return 0;
}

int mc_create(struct mc *m, uint64_t dir, const char *path, uint32_t mode,
	      uint32_t flags, const struct clf_proto_layout *layout,
	      struct clf_proto_create_rep *out)
{
	struct clf_proto_create_req req = {
		.dir = dir,
		.path = clf_proto_str_of(path),
		.mode = mode,
		.uid = 1000,
		.gid = 100,
		.flags = flags,
		.layout = {
			.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
			.first_iod = CLF_PROTO_IOD_DEFAULT,
		},
	};
	struct clf_proto_create_rep rep;
	struct wire_writer w = writer(m);
	struct wire_reader r;
	int err;

	if (layout)
		req.layout = *layout;
	err = send_enc(m, clf_proto_create_req_encode(&w, &req), &w,
		       CLF_PROTO_OP_CREATE, &r);
	if (!err)
		err = clf_proto_create_rep_decode(&r, &rep);
	if (err)
		return err;
	if (out)
		*out = rep;
	else
		clf_proto_create_rep_release(&rep);
	return 0;
}

int mc_mkdir(struct mc *m, uint64_t dir, const char *path, uint32_t mode,
	     struct clf_proto_attr *out)
{
	struct clf_proto_mkdir_req req = { dir, clf_proto_str_of(path), mode,
					   1000, 100 };
	struct wire_writer w = writer(m);
	struct clf_proto_attr a;
	struct wire_reader r;
	int err = send_enc(m, clf_proto_mkdir_req_encode(&w, &req), &w,
			   CLF_PROTO_OP_MKDIR, &r);

	if (!err)
		err = clf_proto_attr_decode(&r, &a);
	if (!err && out)
		*out = a;
	return err;
}

int mc_readdir(struct mc *m, uint64_t dir, uint64_t cookie, uint32_t max,
	       struct clf_proto_readdir_rep *out)
{
	struct clf_proto_readdir_req req = { dir, cookie, max };
	struct wire_writer w = writer(m);
	struct wire_reader r;
	struct clf_proto_readdir_rep rep;
	int err = send_enc(m, clf_proto_readdir_req_encode(&w, &req), &w,
			   CLF_PROTO_OP_READDIR, &r);

	if (!err)
		err = clf_proto_readdir_rep_decode(&r, &rep);
	if (err)
		return err;
	if (out)
		*out = rep;
	else
		clf_proto_readdir_rep_release(&rep);
	return 0;
}

int mc_rename(struct mc *m, uint64_t dir, const char *path, uint64_t new_dir,
	      const char *new_path, uint32_t flags)
{
	struct clf_proto_rename_req req = { dir, clf_proto_str_of(path),
					    new_dir,
					    clf_proto_str_of(new_path), flags };
	struct wire_writer w = writer(m);
	struct wire_reader r;
	int err = send_enc(m, clf_proto_rename_req_encode(&w, &req), &w,
			   CLF_PROTO_OP_RENAME, &r);

	return err ? err : clf_proto_empty_decode(&r);
}

static int path_op(struct mc *m, uint16_t op, uint64_t dir, const char *path)
{
	struct clf_proto_path_req req = { dir, clf_proto_str_of(path) };
	struct wire_writer w = writer(m);
	struct wire_reader r;
	int err = send_enc(m, clf_proto_path_req_encode(&w, &req), &w, op, &r);

	return err ? err : clf_proto_empty_decode(&r);
}

int mc_unlink(struct mc *m, uint64_t dir, const char *path)
{
	return path_op(m, CLF_PROTO_OP_UNLINK, dir, path);
}

int mc_rmdir(struct mc *m, uint64_t dir, const char *path)
{
	return path_op(m, CLF_PROTO_OP_RMDIR, dir, path);
}

int mc_getattr(struct mc *m, uint64_t ino, struct clf_proto_attr *out)
{
	struct clf_proto_ino req = { ino };
	struct wire_writer w = writer(m);
	struct wire_reader r;
	struct clf_proto_attr a;
	int err = send_enc(m, clf_proto_ino_encode(&w, &req), &w,
			   CLF_PROTO_OP_GETATTR, &r);

	if (!err)
		err = clf_proto_attr_decode(&r, &a);
	if (!err && out)
		*out = a;
	return err;
}

int mc_setattr(struct mc *m, const struct clf_proto_setattr_req *req,
	       struct clf_proto_attr *out)
{
	struct wire_writer w = writer(m);
	struct clf_proto_attr a;
	struct wire_reader r;
	int err = send_enc(m, clf_proto_setattr_req_encode(&w, req), &w,
			   CLF_PROTO_OP_SETATTR, &r);

	if (!err)
		err = clf_proto_attr_decode(&r, &a);
	if (!err && out)
		*out = a;
	return err;
}

int mc_set_layout(struct mc *m, uint64_t ino,
		  const struct clf_proto_layout *layout,
		  struct clf_proto_layout *out)
{
	struct clf_proto_set_layout_req req = { ino, *layout };
	struct wire_writer w = writer(m);
	struct clf_proto_layout l;
	struct wire_reader r;
	int err = send_enc(m, clf_proto_set_layout_req_encode(&w, &req), &w,
			   CLF_PROTO_OP_SET_LAYOUT, &r);

	if (!err)
		err = clf_proto_layout_decode(&r, &l);
	if (err)
		return err;
	if (out)
		*out = l;
	else
		clf_proto_layout_release(&l);
	return 0;
}

int mc_get_layout(struct mc *m, uint64_t ino, struct clf_proto_layout *out)
{
	struct clf_proto_ino req = { ino };
	struct wire_writer w = writer(m);
	struct wire_reader r;
	struct clf_proto_layout l;
	int err = send_enc(m, clf_proto_ino_encode(&w, &req), &w,
			   CLF_PROTO_OP_GET_LAYOUT, &r);

	if (!err)
		err = clf_proto_layout_decode(&r, &l);
	if (err)
		return err;
	if (out)
		*out = l;
	else
		clf_proto_layout_release(&l);
	return 0;
}

int mc_update_size(struct mc *m, uint64_t ino, int64_t size, int64_t mtime,
		   struct clf_proto_attr *out)
{
	struct clf_proto_update_size_req req = { ino, size, mtime };
	struct wire_writer w = writer(m);
	struct clf_proto_attr a;
	struct wire_reader r;
	int err = send_enc(m, clf_proto_update_size_req_encode(&w, &req), &w,
			   CLF_PROTO_OP_UPDATE_SIZE, &r);

	if (!err)
		err = clf_proto_attr_decode(&r, &a);
	if (!err && out)
		*out = a;
	return err;
}

uint64_t mc_ino(struct mc *m, const char *path)
{
	struct clf_proto_lookup_rep rep;
	int err = mc_lookup(m, CLF_PROTO_ROOT_INO, path, 0, &rep);

	ck_assert_msg(err == 0, "lookup '%s': %s", path, CLF_Last_error());
	return rep.attr.ino;
}

/* ------------------------------------------------------------------ */
/* Raw bytes                                                           */
/* ------------------------------------------------------------------ */

int raw_connect(const struct mh *h)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)h->port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

void raw_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_msg(n > 0, "raw send: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

void raw_header(uint8_t *out, uint16_t op, uint16_t flags, uint64_t id,
		uint32_t payload_len)
{
	struct wire_writer w = { out, CLF_PROTO_HEADER_SIZE, 0 };
	struct clf_proto_header h;

	clf_proto_header_init(&h, op, id);
	h.flags = flags;
	h.payload_len = payload_len;
	clf_proto_header_encode(&w, &h);
}

bool raw_closed_within(int fd, int timeout_ms)
{
	int64_t deadline = clf_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - clf_now_ms();
		char buf[4096];
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return true;
	}
}

long mh_log_number_before(const struct mh *h, const char *phrase)
{
	char line[512];
	long n = -1;
	FILE *f = fopen(h->log, "r");

	ck_assert_msg(f, "no metad log at %s", h->log);
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, phrase);

		if (!at)
			continue;
		while (at > line && at[-1] >= '0' && at[-1] <= '9')
			at--;
		n = strtol(at, NULL, 10);
	}
	fclose(f);
	return n;
}
