// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * multihost_client.c -- the client side of test_multihost.sh, through the
 * native API only.  The script runs one command per invocation:
 *
 *   multihost_client CONFIG write PATH SIZE K B
 *	create PATH with the layout cyclic(K) over 2 subfiles (subfile j on
 *	iod j), then two forked processes write it, process p through the
 *	view cyclic(B) part p of 2; read it back through the default view
 *	and compare.  SIZE must be a multiple of 2*B.
 *   multihost_client CONFIG read PATH SIZE
 *	read PATH through the default view and compare.
 *   multihost_client CONFIG stat PATH
 *	print "INODE SIZE" (the inode names the subfiles on the iods).
 *   multihost_client - subfile FILE J SIZE K
 *	FILE is a local file of an iod's storage directory: compare it with
 *	subfile J of the layout cyclic(K) over 2 in a file of SIZE bytes.
 *   multihost_client CONFIG fault PATH SIZE LIMIT_MS IOD -- BREAK... --
 *		      REPAIR...
 *	open and read PATH (connections to every iod now exist), run the
 *	command BREAK, then a read must fail with -EHOSTDOWN or -ETIMEDOUT
 *	naming iod IOD within LIMIT_MS plus a margin; metad must still
 *	answer; run REPAIR, and the same descriptor must read PATH whole
 *	again (the client reconnects by itself).
 *   multihost_client CONFIG truncate PATH SIZE
 *   multihost_client CONFIG unlink PATH
 *
 * Byte f of a file always holds pattern(f).  Exits 0 on success, 1 on a
 * failure, after saying what failed on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"

#define NSUB 2		/* subfiles = iods = writers */
#define MARGIN_MS 1000	/* allowed beyond the configured timeout */
#define CHUNK 100003	/* bytes per CLF_write: aligned to nothing */

static const char *config;

static uint8_t pattern(int64_t f)
{
	return (uint8_t)((f * 131 + (f >> 8) * 7 + (f >> 16) * 3 + 0x5a) &
			 0xff);
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "multihost_client: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	return !*s || *end || errno || *out < 0 ? -EINVAL : 0;
}

/* File offset of byte w of part j of cyclic(k) over NSUB. */
static int64_t cyclic_unmap(int64_t w, int j, int64_t k)
{
	return (w / k) * NSUB * k + j * k + w % k;
}

/* How many bytes of a file of size bytes part j of cyclic(k) holds. */
static int64_t cyclic_length(int64_t size, int j, int64_t k)
{
	int64_t rem = size % (NSUB * k) - j * k;

	return size / (NSUB * k) * k + (rem < 0 ? 0 : rem > k ? k : rem);
}

/* Read fd's whole file through its current (default) view, compare. */
static int check_fd(int fd, const char *path, int64_t size)
{
	uint8_t *buf = malloc(size + 16);
	ssize_t n;
	int rc = 0;

	if (!buf)
		return fail("no memory");
	if (CLF_lseek(fd, 0, SEEK_SET) != 0) {
		rc = fail("lseek '%s': %s", path, CLF_Last_error());
		goto out_free;
	}
	n = CLF_read(fd, buf, size + 16);
	if (n != size) {
		rc = fail("read '%s': %zd bytes, want %" PRId64 ": %s", path,
			  n, size, n < 0 ? CLF_Last_error() : "short");
		goto out_free;
	}
	for (int64_t f = 0; f < size; f++)
		if (buf[f] != pattern(f)) {
			rc = fail("'%s': byte %" PRId64 " is %u, want %u",
				  path, f, buf[f], pattern(f));
			break;
		}
out_free:
	free(buf);
	return rc;
}

static int check_file(const char *path, int64_t size)
{
	struct stat st;
	int fd, rc;

	if (CLF_stat(path, &st))
		return fail("stat '%s': %s", path, CLF_Last_error());
	if (st.st_size != size)
		return fail("'%s' has %lld bytes, want %" PRId64, path,
			    (long long)st.st_size, size);
	fd = CLF_open(path, O_RDONLY);
	if (fd < 0)
		return fail("open '%s': %s", path, CLF_Last_error());
	rc = check_fd(fd, path, size);
	if (CLF_close(fd) && !rc)
		rc = fail("close '%s': %s", path, CLF_Last_error());
	return rc;
}

/* Create path, empty, with the layout cyclic(k) on iods 0 and 1. */
static int create_cyclic(const char *path, int64_t k)
{
	CLF_Datatype t[NSUB] = { NULL };
	struct clf_subfiles sf = { 0, NSUB, t };
	struct clf_layout_info li = { 0 };
	int fd, rc = 0, err;

	fd = CLF_open(path, O_CREAT | O_EXCL | O_RDWR, 0644);
	if (fd < 0)
		return fail("create '%s': %s", path, CLF_Last_error());
	err = CLF_Type_pitfalls(0, k - 1, NSUB * k, 1, k, NSUB, CLF_BYTE, t);
	if (err) {
		rc = fail("cyclic(%" PRId64 "): %s", k, CLF_Last_error());
		goto out_close;
	}
	if (CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf)) {
		rc = fail("set the layout of '%s': %s", path, CLF_Last_error());
		goto out_types;
	}
	if (CLF_fcntl(fd, CLF_FCNTL_GETLAYOUT, &li)) {
		rc = fail("get the layout of '%s': %s", path, CLF_Last_error());
		goto out_types;
	}
	if (li.disp != 0 || li.count != NSUB)
		rc = fail("'%s': layout disp %" PRId64 ", %d subfiles", path,
			  li.disp, li.count);
	for (int j = 0; j < li.count && !rc; j++)
		if (li.iods[j] != j)
			rc = fail("'%s': subfile %d on iod %d, want %d", path, j,
				  li.iods[j], j);
	CLF_Layout_release(&li);
out_types:
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&t[j]);
out_close:
	if (CLF_close(fd) && !rc)
		rc = fail("close '%s': %s", path, CLF_Last_error());
	return rc;
}

/*
 * Writer p (a forked child): its own connections, then the view part p
 * of cyclic(b) over NSUB, written whole in CHUNK pieces.  Exit status.
 */
static int write_part(const char *path, int p, int64_t size, int64_t b)
{
	CLF_Datatype v[NSUB] = { NULL };
	int64_t n = size / NSUB;
	uint8_t *buf = malloc(n);
	int fd, rc = 0;

	CLF_finalize();
	if (!buf)
		return fail("writer %d: no memory", p);
	if (CLF_init(config)) {
		rc = fail("writer %d: init: %s", p, CLF_Last_error());
		goto out_free;
	}
	for (int64_t w = 0; w < n; w++)
		buf[w] = pattern(cyclic_unmap(w, p, b));
	fd = CLF_open(path, O_WRONLY);
	if (fd < 0) {
		rc = fail("writer %d: open '%s': %s", p, path, CLF_Last_error());
		goto out_fini;
	}
	if (CLF_Type_pitfalls(0, b - 1, NSUB * b, 1, b, NSUB, CLF_BYTE, v)) {
		rc = fail("writer %d: view: %s", p, CLF_Last_error());
		goto out_close;
	}
	{
		struct clf_view view = { 0, v[p] };

		if (CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view)) {
			rc = fail("writer %d: set view: %s", p,
				  CLF_Last_error());
			goto out_types;
		}
	}
	for (int64_t w = 0; w < n && !rc; w += CHUNK) {
		size_t len = n - w < CHUNK ? n - w : CHUNK;
		ssize_t got = CLF_write(fd, buf + w, len);

		if (got != (ssize_t)len)
			rc = fail("writer %d: write at view byte %" PRId64
				  ": %zd: %s", p, w, got, CLF_Last_error());
	}
out_types:
	for (int j = 0; j < NSUB; j++)
		CLF_Type_free(&v[j]);
out_close:
	if (CLF_close(fd) && !rc)
		rc = fail("writer %d: close: %s", p, CLF_Last_error());
out_fini:
	CLF_finalize();
out_free:
	free(buf);
	return rc;
}

static int cmd_write(const char *path, int64_t size, int64_t k, int64_t b)
{
	int rc = 0;

	if (k < 1 || b < 1 || size % (NSUB * b))
		return fail("write: SIZE must be a multiple of 2*B");
	if (create_cyclic(path, k))
		return 1;
	for (int p = 0; p < NSUB; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return fail("fork: %s", strerror(errno));
		if (pid == 0)
			_exit(write_part(path, p, size, b));
	}
	for (int p = 0; p < NSUB; p++) {
		int status;

		if (wait(&status) < 0)
			return fail("wait: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = fail("a writer failed (status %d)", status);
	}
	return rc ? rc : check_file(path, size);
}

static int cmd_subfile(const char *file, int j, int64_t size, int64_t k)
{
	int64_t len = cyclic_length(size, j, k), at = 0;
	uint8_t buf[65536];
	struct stat st;
	int fd = open(file, O_RDONLY), rc = 0;

	if (fd < 0)
		return fail("subfile %d: %s: %s", j, file, strerror(errno));
	if (fstat(fd, &st)) {
		rc = fail("subfile %d: %s: %s", j, file, strerror(errno));
		goto out_close;
	}
	if (st.st_size != len) {
		rc = fail("subfile %d: %s has %lld bytes, want %" PRId64, j,
			  file, (long long)st.st_size, len);
		goto out_close;
	}
	while (at < len && !rc) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0) {
			rc = fail("subfile %d: read %s: %s", j, file,
				  n ? strerror(errno) : "short");
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			int64_t f = cyclic_unmap(at + i, j, k);

			if (buf[i] != pattern(f)) {
				rc = fail("subfile %d: %s: byte %" PRId64
					  " (file byte %" PRId64
					  ") is %u, want %u", j, file, at + i,
					  f, buf[i], pattern(f));
				break;
			}
		}
		at += n;
	}
out_close:
	close(fd);
	return rc;
}

/* Run argv (NULL-terminated); 0 when it exits 0. */
static int run(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return fail("fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "multihost_client: %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return fail("'%s ...' failed (status %d)", argv[0], status);
	return 0;
}

static int cmd_fault(const char *path, int64_t size, int64_t limit_ms,
		     int iod, char **brk, char **repair)
{
	uint8_t *buf = malloc(size + 16);
	char want[32];
	struct stat st;
	int64_t t0, ms;
	ssize_t n;
	int fd, rc;

	if (!buf)
		return fail("no memory");
	fd = CLF_open(path, O_RDONLY);
	if (fd < 0) {
		rc = fail("open '%s': %s", path, CLF_Last_error());
		goto out_free;
	}
	rc = check_fd(fd, path, size);
	if (rc || (rc = run(brk)))
		goto out_close;
	if (CLF_lseek(fd, 0, SEEK_SET) != 0) {
		rc = fail("lseek '%s': %s", path, CLF_Last_error());
		goto out_close;
	}
	t0 = now_ms();
	n = CLF_read(fd, buf, size);
	ms = now_ms() - t0;
	printf("read with iod %d out of reach: %zd after %" PRId64
	       " ms: %s\n", iod, n, ms, n < 0 ? CLF_Last_error() : "");
	snprintf(want, sizeof(want), "iod %d", iod);
	if (n != -EHOSTDOWN && n != -ETIMEDOUT)
		rc = fail("read with iod %d out of reach returned %zd, want "
			  "%d (EHOSTDOWN) or %d (ETIMEDOUT)", iod, n,
			  -EHOSTDOWN, -ETIMEDOUT);
	else if (!strstr(CLF_Last_error(), want))
		rc = fail("the error does not name %s: %s", want,
			  CLF_Last_error());
	else if (ms > limit_ms + MARGIN_MS)
		rc = fail("the read failed after %" PRId64 " ms, the limit is "
			  "%" PRId64 " + %d ms", ms, limit_ms, MARGIN_MS);
	else if (CLF_stat(path, &st) || st.st_size != size)
		rc = fail("metad while iod %d is out of reach: %s", iod,
			  CLF_Last_error());
	if (rc)
		goto out_close;
	rc = run(repair);
	if (!rc)
		rc = check_fd(fd, path, size);
out_close:
	if (CLF_close(fd) && !rc)
		rc = fail("close '%s': %s", path, CLF_Last_error());
out_free:
	free(buf);
	return rc;
}

static int cmd_truncate(const char *path, int64_t size)
{
	int fd = CLF_open(path, O_RDWR), rc = 0;

	if (fd < 0)
		return fail("open '%s': %s", path, CLF_Last_error());
	if (CLF_ftruncate(fd, size))
		rc = fail("truncate '%s' to %" PRId64 ": %s", path, size,
			  CLF_Last_error());
	if (CLF_close(fd) && !rc)
		rc = fail("close '%s': %s", path, CLF_Last_error());
	return rc ? rc : check_file(path, size);
}

static int cmd_stat(const char *path)
{
	struct stat st;

	if (CLF_stat(path, &st))
		return fail("stat '%s': %s", path, CLF_Last_error());
	printf("%llu %lld\n", (unsigned long long)st.st_ino,
	       (long long)st.st_size);
	return 0;
}

static int cmd_unlink(const char *path)
{
	struct stat st;

	if (CLF_unlink(path))
		return fail("unlink '%s': %s", path, CLF_Last_error());
	if (CLF_stat(path, &st) != -ENOENT)
		return fail("'%s' still exists after unlink", path);
	return 0;
}

/* Split "-- BREAK... -- REPAIR..." in place; NULL-terminates BREAK. */
static int split_commands(int argc, char **argv, char ***brk, char ***repair)
{
	int sep = -1;

	if (argc < 1 || strcmp(argv[0], "--"))
		return -EINVAL;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	if (sep < 2 || sep == argc - 1)
		return -EINVAL;
	argv[sep] = NULL;
	*brk = argv + 1;
	*repair = argv + sep + 1;
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: multihost_client CONFIG write PATH SIZE K B\n"
		"       multihost_client CONFIG read|truncate PATH SIZE\n"
		"       multihost_client CONFIG stat|unlink PATH\n"
		"       multihost_client - subfile FILE J SIZE K\n"
		"       multihost_client CONFIG fault PATH SIZE LIMIT_MS IOD"
		" -- BREAK... -- REPAIR...\n");
	return 1;
}

int main(int argc, char **argv)
{
	const char *cmd, *path;
	int64_t a[4] = { 0 };
	char **brk = NULL, **repair = NULL;
	int nnum, rc;

	if (argc < 4)
		return usage();
	config = argv[1];
	cmd = argv[2];
	path = argv[3];
	nnum = !strcmp(cmd, "write") ? 3 : !strcmp(cmd, "subfile") ? 3 :
	       !strcmp(cmd, "fault") ? 3 : !strcmp(cmd, "read") ? 1 :
	       !strcmp(cmd, "truncate") ? 1 : 0;
	if (argc < 4 + nnum)
		return usage();
	for (int i = 0; i < nnum; i++)
		if (parse_i64(argv[4 + i], &a[i]))
			return fail("'%s' is not a number", argv[4 + i]);
	if (!strcmp(cmd, "subfile"))
		return argc == 7 ? cmd_subfile(path, (int)a[0], a[1], a[2]) :
				   usage();
	if (!strcmp(cmd, "fault")) {
		if (split_commands(argc - 7, argv + 7, &brk, &repair))
			return usage();
	} else if (argc != 4 + nnum) {
		return usage();
	}
	if (CLF_init(config))
		return fail("init with %s: %s", config, CLF_Last_error());
	if (!strcmp(cmd, "write"))
		rc = cmd_write(path, a[0], a[1], a[2]);
	else if (!strcmp(cmd, "read"))
		rc = check_file(path, a[0]);
	else if (!strcmp(cmd, "stat"))
		rc = cmd_stat(path);
	else if (!strcmp(cmd, "truncate"))
		rc = cmd_truncate(path, a[0]);
	else if (!strcmp(cmd, "unlink"))
		rc = cmd_unlink(path);
	else if (!strcmp(cmd, "fault"))
		rc = cmd_fault(path, a[0], a[1], (int)a[2], brk, repair);
	else
		rc = usage();
	CLF_finalize();
	return rc;
}
