// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * instance.c -- start and stop real daemons for integration tests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "instance.h"

static bool port_free(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* CLF_TEST_HOST=10.9.9.1: daemons on that IPv4 address (the RDMA
 * guest's, where rdma_cm cannot use loopback); 127.0.0.1 by default. */
static const char *test_host(void)
{
	const char *h = getenv("CLF_TEST_HOST");

	return h && *h ? h : "127.0.0.1";
}

static bool port_listening(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (inet_pton(AF_INET, test_host(), &a.sin_addr) != 1)
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* Ports of our own: a block derived from the pid, checked free. */
static int pick_ports(int count)
{
	for (int tries = 0; tries < 200; tries++) {
		/* Below the kernel's ephemeral range (32768 and up). */
		int base = 10000 + (int)((getpid() * 37 + tries * 101) % 22000);
		bool ok = true;

		for (int i = 0; i <= count && ok; i++)
			ok = port_free(base + i);
		if (ok)
			return base;
	}
	return -1;
}

static int find_bindir(struct instance *in)
{
	const char *o = getenv("CLF_BUILD_DIR");
	char path[PATH_MAX + 32];

	snprintf(in->bindir, sizeof(in->bindir), "%s", o ? o : "build");
	snprintf(path, sizeof(path), "%s/metad/metad", in->bindir);
	if (access(path, X_OK))
		return 77;
	snprintf(path, sizeof(path), "%s/iod/iod", in->bindir);
	return access(path, X_OK) ? 77 : 0;
}

static int write_config(struct instance *in, const char *const *iod_dirs)
{
	FILE *f = fopen(in->conf, "w");
	unsigned char key[32];
	int rnd = open("/dev/urandom", O_RDONLY);

	if (!f || rnd < 0 || read(rnd, key, sizeof(key)) != sizeof(key)) {
		perror("instance: config");
		return -1;
	}
	close(rnd);
	fprintf(f, "[global]\nsecret = ");
	for (size_t i = 0; i < sizeof(key); i++)
		fprintf(f, "%02x", key[i]);
	fprintf(f, "\nstripe_size = 64k\ntimeout_ms = %d\n", in->timeout_ms);
	/* CLF_TEST_PROTECTION=integrity|privacy: run a suite (or a bench)
	 * with every message sealed. */
	if (getenv("CLF_TEST_PROTECTION") && *getenv("CLF_TEST_PROTECTION"))
		fprintf(f, "protection = %s\n", getenv("CLF_TEST_PROTECTION"));
	/* CLF_TEST_TRANSPORT=rdma: the suite over RDMA (tests/guest). */
	if (getenv("CLF_TEST_TRANSPORT") && *getenv("CLF_TEST_TRANSPORT"))
		fprintf(f, "transport = %s\n", getenv("CLF_TEST_TRANSPORT"));
	fprintf(f, "[metad]\naddress = %s:%d\ndir = %s/meta\n", test_host(),
		in->base_port, in->dir);
	for (int m = 1; m < in->nmetads; m++)
		fprintf(f, "[metad]\naddress = 127.0.0.1:%d\ndir = %s/meta%d\n",
			in->base_port + in->niods + m, in->dir, m);
	for (int i = 0; i < in->niods; i++) {
		fprintf(f, "[iod]\naddress = %s:%d\n", test_host(),
			in->base_port + 1 + i);
		if (iod_dirs && iod_dirs[i])
			fprintf(f, "dir = %s\n", iod_dirs[i]);
		else
			fprintf(f, "dir = %s/iod%d\n", in->dir, i);
	}
	fchmod(fileno(f), 0600);
	return fclose(f) ? -1 : 0;
}

unsigned instance_iod_max_conns;

int instance_start_daemon(struct instance *in, int idx)
{
	char prog[PATH_MAX + 32], index[16], log[PATH_MAX + 32];
	char max_conns[16];
	int port = in->base_port + 1 + idx;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	pid_t pid;

	if (idx < 0) {
		snprintf(prog, sizeof(prog), "%s/metad/metad", in->bindir);
		snprintf(log, sizeof(log), "%s/metad.log", in->dir);
	} else {
		snprintf(prog, sizeof(prog), "%s/iod/iod", in->bindir);
		snprintf(log, sizeof(log), "%s/iod%d.log", in->dir, idx);
	}
	snprintf(index, sizeof(index), "%d", idx);
	snprintf(max_conns, sizeof(max_conns), "%u", instance_iod_max_conns);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (idx < 0)
			execl(prog, "metad", "-c", in->conf, "-f", "--log", log,
			      (char *)NULL);
		else if (instance_iod_max_conns)
			execl(prog, "iod", "-c", in->conf, "-n", index, "-f",
			      "--log", log, "-m", max_conns, (char *)NULL);
		else
			execl(prog, "iod", "-c", in->conf, "-n", index, "-f",
			      "--log", log, (char *)NULL);
		_exit(127);
	}
	if (idx < 0)
		in->metad = pid;
	else
		in->iods[idx] = pid;
	for (int i = 0; i < 500; i++) {	/* 10 s */
		int status;

		if (port_listening(port))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "instance: %s exited (status %d), log %s\n",
				prog, status, log);
			if (idx < 0)
				in->metad = 0;
			else
				in->iods[idx] = 0;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "instance: %s does not listen on %d\n", prog, port);
	return -1;
}

int instance_start_metad(struct instance *in, int m)
{
	char prog[PATH_MAX + 32], index[16], log[PATH_MAX + 32];
	int port = in->base_port + in->niods + m;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	pid_t pid;

	if (m == 0)
		return instance_start_daemon(in, -1);
	snprintf(prog, sizeof(prog), "%s/metad/metad", in->bindir);
	snprintf(log, sizeof(log), "%s/metad%d.log", in->dir, m);
	snprintf(index, sizeof(index), "%d", m);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(prog, "metad", "-c", in->conf, "-n", index, "-f",
		      "--log", log, (char *)NULL);
		_exit(127);
	}
	in->metads[m] = pid;
	for (int i = 0; i < 500; i++) {	/* 10 s */
		int status;

		if (port_listening(port))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "instance: metad %d exited (status %d), log %s\n",
				m, status, log);
			in->metads[m] = 0;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "instance: metad %d does not listen on %d\n", m, port);
	return -1;
}

void instance_kill_metad(struct instance *in, int m, int sig)
{
	if (m == 0) {
		instance_kill(in, -1, sig);
		return;
	}
	if (in->metads[m] <= 0)
		return;
	kill(in->metads[m], sig);
	waitpid(in->metads[m], NULL, 0);
	in->metads[m] = 0;
}

int instance_start(struct instance *in, int niods, int timeout_ms,
		   const char *const *iod_dirs)
{
	const char *env = getenv("CLF_TEST_METADS");
	int err;

	memset(in, 0, sizeof(*in));
	err = find_bindir(in);
	if (err)
		return err;
	in->nmetads = env && atoi(env) > 1 ? atoi(env) : 1;
	if (in->nmetads > INSTANCE_MAX_METADS)
		in->nmetads = INSTANCE_MAX_METADS;
	in->niods = niods;
	in->timeout_ms = timeout_ms;
	snprintf(in->dir, sizeof(in->dir), "/tmp/clf-it-XXXXXX");
	if (!mkdtemp(in->dir))
		return -1;
	snprintf(in->conf, sizeof(in->conf), "%s/clf.conf", in->dir);
	in->base_port = pick_ports(niods + in->nmetads - 1);
	if (in->base_port < 0 || write_config(in, iod_dirs))
		return -1;
	if (instance_start_daemon(in, -1))
		return -1;
	for (int i = 0; i < niods; i++)
		if (instance_start_daemon(in, i))
			return -1;
	for (int m = 1; m < in->nmetads; m++)
		if (instance_start_metad(in, m))
			return -1;
	setenv("CLF_CONFIG", in->conf, 1);
	return 0;
}

void instance_kill(struct instance *in, int idx, int sig)
{
	pid_t *pid = idx < 0 ? &in->metad : &in->iods[idx];

	if (*pid <= 0)
		return;
	kill(*pid, sig);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

int instance_set_grace(struct instance *in, int seconds)
{
	char line[64];

	snprintf(line, sizeof(line), "recovery_grace_s = %d", seconds);
	return instance_add_global(in, line);
}

int instance_add_global(struct instance *in, const char *line)
{
	char text[8192], *tail;
	FILE *f = fopen(in->conf, "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	if (f)
		fclose(f);
	text[n] = 0;
	tail = strstr(text, "[global]\n");
	f = tail ? fopen(in->conf, "w") : NULL;
	if (!f)
		return -1;
	tail += strlen("[global]\n");
	fwrite(text, 1, tail - text, f);
	fprintf(f, "%s\n%s", line, tail);
	return fclose(f) ? -1 : 0;
}

void instance_stop(struct instance *in)
{
	char cmd[PATH_MAX + 16];

	for (int i = 0; i < in->niods; i++)
		instance_kill(in, i, SIGTERM);
	for (int m = 1; m < in->nmetads; m++)
		instance_kill_metad(in, m, SIGTERM);
	instance_kill(in, -1, SIGTERM);
	if (in->dir[0] && getenv("CLF_TEST_KEEP") == NULL) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", in->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "instance: cannot remove %s\n", in->dir);
	}
}

int instance_start_native(struct instance *in, int niods, int timeout_ms,
			  int grace_s)
{
	int err = instance_start(in, niods, timeout_ms, NULL);

	if (err == 77) {
		fprintf(stderr, "SKIP: daemons not built\n");
		exit(77);
	}
	if (!err && grace_s >= 0)
		err = instance_set_grace(in, grace_s);
	if (err)
		return -1;
	if (CLF_init(in->conf)) {
		fprintf(stderr, "CLF_init: %s\n", CLF_Last_error());
		return -1;
	}
	return 0;
}

void instance_stop_native(struct instance *in)
{
	CLF_finalize();
	instance_stop(in);
}
