// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native.c -- the native API against real daemons on loopback.
 *
 * Every test starts its own metad and iods (instance.h) in a fresh
 * directory, and stops them.  Contents are always checked against a
 * reference computed in the test: byte f of a file holds pattern(f).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "check_main.h"
#include "clf_ll.h"
#include "clf.h"
#include "instance.h"
#include "model.h"
#include "partition.h"

static struct instance inst;

static uint8_t pattern(int64_t f, int salt)
{
	return (uint8_t)((f * 131 + (f >> 8) * 7 + salt) & 0xff);
}

static void start(int niods, int timeout_ms)
{
	ck_assert_int_eq(instance_start_native(&inst, niods, timeout_ms, -1), 0);
}

static void stop(void)
{
	instance_stop_native(&inst);
}

/* Read the whole file through the default view and compare. */
static void check_file(const char *path, int64_t size, int salt)
{
	int fd = CLF_open(path, O_RDONLY);
	uint8_t *buf = malloc(size + 16);
	struct stat st;

	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, size);
	ck_assert_int_eq(CLF_read(fd, buf, size + 16), size);
	for (int64_t f = 0; f < size; f++)
		if (buf[f] != pattern(f, salt))
			ck_abort_msg("%s: byte %lld is %u, want %u", path,
				     (long long)f, buf[f], pattern(f, salt));
	ck_assert_int_eq(CLF_close(fd), 0);
	free(buf);
}

START_TEST(test_default_view_round_trips_a_file)
{
	int64_t size = 3 * 1000 * 1000 + 17;
	uint8_t *buf = malloc(size);
	int fd;

	start(4, 5000);
	for (int64_t f = 0; f < size; f++)
		buf[f] = pattern(f, 1);
	fd = CLF_open("/data.bin", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	ck_assert_int_eq(CLF_close(fd), 0);
	check_file("/data.bin", size, 1);
	/* Seek, overwrite in the middle, append. */
	fd = CLF_open("/data.bin", O_RDWR);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_END), size);
	ck_assert_int_eq(CLF_lseek(fd, 1000, SEEK_SET), 1000);
	ck_assert_int_eq(CLF_write(fd, buf + 1000, 5000), 5000);
	ck_assert_int_eq(CLF_close(fd), 0);
	check_file("/data.bin", size, 1);
	free(buf);
	stop();
}
END_TEST

/* The layout fd's file has: subfile count and the first subfile's iod. */
static void layout_of(int fd, int *count, int *iod0, int64_t *extent)
{
	struct clf_layout_info info;

	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_GETLAYOUT, &info) == 0, "%s",
		      CLF_Last_error());
	*count = info.count;
	*iod0 = info.iods[0];
	*extent = CLF_Type_extent(info.types[0]);
	CLF_Layout_release(&info);
}

START_TEST(test_new_files_take_their_directory_default_layout)
{
	struct clf_ll_owner owner = { getuid(), getgid() };
	int64_t size = 100000, extent;
	uint8_t *buf = malloc(size);
	int fd, count, iod0;
	struct stat st;

	start(4, 5000);
	for (int64_t f = 0; f < size; f++)
		buf[f] = pattern(f, 4);
	ck_assert_int_eq(CLF_mkdir("/d", 0755), 0);
	ck_assert_int_eq(CLF_stat("/d", &st), 0);
	ck_assert_int_eq(clf_ll_dir_default_write(st.st_ino, &owner,
						  "rr:stripe=4k,count=2,first=1"), 0);
	fd = CLF_open("/d/f", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 2);
	ck_assert_int_eq(iod0, 1);
	ck_assert_int_eq(extent, 8192);
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	ck_assert_int_eq(CLF_close(fd), 0);
	check_file("/d/f", size, 4);

	/* Elsewhere, metad's default; an existing file keeps its layout;
	 * O_EXCL creations get the default too. */
	fd = CLF_open("/g", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_ne(count, 2);
	ck_assert_int_eq(CLF_close(fd), 0);
	ck_assert_int_eq(clf_ll_dir_default_write(st.st_ino, &owner,
						  "rr:stripe=8k,count=3"), 0);
	fd = CLF_open("/d/f", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 2);
	ck_assert_int_eq(CLF_close(fd), 0);
	fd = CLF_open("/d/h", O_CREAT | O_EXCL | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 3);
	ck_assert_int_eq(extent, 3 * 8192);
	ck_assert_int_eq(CLF_close(fd), 0);
	ck_assert_int_eq(CLF_open("/d/h", O_CREAT | O_EXCL | O_RDWR, 0644),
			 -EEXIST);
	check_file("/d/f", size, 4);
	free(buf);
	stop();
}
END_TEST

/*
 * CLF_create gives a new file its layout in the create itself; an
 * existing file, even an empty one, keeps its own; the directory's
 * default does not override what was asked.
 */
START_TEST(test_create_lays_out_only_the_file_it_makes)
{
	struct clf_ll_owner owner = { getuid(), getgid() };
	struct clf_create_layout rr = { .stripes = { 4096, 3, 2 } };
	CLF_Datatype types[2];
	struct clf_subfiles sf = { 0, 2, types };
	struct clf_create_layout ex = { .subfiles = &sf };
	int fd, count, iod0, created = -1;
	int64_t extent;
	struct stat st;

	start(4, 5000);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 99, 200, 1, 100, 2, CLF_BYTE, types), 0);
	ck_assert_int_eq(CLF_mkdir("/d", 0755), 0);
	ck_assert_int_eq(CLF_stat("/d", &st), 0);
	ck_assert_int_eq(clf_ll_dir_default_write(st.st_ino, &owner,
						  "rr:stripe=8k,count=4"), 0);
	fd = CLF_create("/d/rr", O_RDWR, 0644, &rr, &created);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(created, 1);
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 3);
	ck_assert_int_eq(iod0, 2);
	ck_assert_int_eq(extent, 3 * 4096);
	ck_assert_int_eq(CLF_close(fd), 0);

	/* It exists (and is empty): it keeps its layout. */
	fd = CLF_create("/d/rr", O_RDWR, 0644, &ex, &created);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(created, 0);
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 3);
	ck_assert_int_eq(CLF_close(fd), 0);
	ck_assert_int_eq(CLF_create("/d/rr", O_RDWR | O_EXCL, 0644, &ex, NULL), -EEXIST);

	fd = CLF_create("/ex", O_RDWR, 0644, &ex, &created);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(created, 1);
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 2);
	ck_assert_int_eq(extent, 200);
	ck_assert_int_eq(CLF_close(fd), 0);

	/* No layout: as CLF_open, the directory's default. */
	fd = CLF_create("/d/plain", O_RDWR, 0644, NULL, &created);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	layout_of(fd, &count, &iod0, &extent);
	ck_assert_int_eq(count, 4);
	ck_assert_int_eq(extent, 4 * 8192);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_Type_free(&types[0]);
	CLF_Type_free(&types[1]);
	stop();
}
END_TEST

START_TEST(test_namespace_calls_reach_metad)
{
	struct stat st;
	int fd, err;

	start(2, 5000);
	ck_assert_int_eq(CLF_mkdir("/d", 0755), 0);
	ck_assert_int_eq(CLF_mkdir("/d", 0755), -EEXIST);
	fd = CLF_open("/d/../d/./f", O_CREAT | O_EXCL | O_WRONLY, 0600);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	ck_assert_int_eq(CLF_open("/d/f", O_CREAT | O_EXCL | O_WRONLY, 0600),
			 -EEXIST);
	ck_assert_int_eq(CLF_stat("/d/f", &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(CLF_rename("/d/f", "/g"), 0);
	ck_assert_int_eq(CLF_stat("/d/f", &st), -ENOENT);
	ck_assert_int_eq(CLF_rmdir("/d"), 0);
	ck_assert_int_eq(CLF_unlink("/g"), 0);
	ck_assert_int_eq(CLF_open("/g", O_RDONLY), -ENOENT);
	/* Removed while open and written: the close still succeeds, as
	 * POSIX has it (an MPI program's rank 0 deletes a file that its
	 * other ranks are still closing). */
	fd = CLF_open("/h", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, "0123456789", 10), 10);
	ck_assert_int_eq(CLF_unlink("/h"), 0);
	err = CLF_close(fd);
	ck_assert_msg(err == 0, "close: %d: %s", err, CLF_Last_error());
	ck_assert_int_eq(CLF_open("/", O_RDONLY), -EISDIR);
	ck_assert_int_eq(CLF_stat("/", &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	stop();
}
END_TEST

/*
 * A random partition pattern as the physical layout, the file written
 * by nproc processes at once, each through the view made of some of the
 * pattern's types (views from a second random pattern), then read back
 * whole through the default view.
 */
static void write_through_views(uint64_t seed, int nproc)
{
	uint64_t rs = seed;
	struct typed lay[16], views[16];
	CLF_Datatype lt[16];
	int nl = random_pattern(&rs, lay, 4096);
	int nv = random_pattern(&rs, views, 4096);
	int64_t disp = rnd_range(&rs, 0, 100);
	int64_t vext = views[0].m->extent, periods = 1 + 300000 / vext;
	int64_t size = disp + periods * vext;
	struct clf_subfiles sf = { disp, nl, lt };
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/f%llu", (unsigned long long)seed);
	for (int j = 0; j < nl; j++)
		lt[j] = lay[j].t;
	fd = CLF_open(path, O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	/* The bytes before disp: written through the default view. */
	{
		uint8_t head[128];

		for (int64_t f = 0; f < disp; f++)
			head[f] = pattern(f, 2);
		ck_assert_int_eq(CLF_write(fd, head, disp), disp);
	}
	ck_assert_int_eq(CLF_close(fd), 0);

	for (int p = 0; p < nproc; p++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid)
			continue;
		/* Child: its own connections, views p, p + nproc, ... */
		CLF_finalize();
		if (CLF_init(NULL))
			_exit(10);
		fd = CLF_open(path, O_WRONLY);
		if (fd < 0)
			_exit(11);
		for (int v = p; v < nv; v += nproc) {
			struct clf_view view = { disp, views[v].t };
			int64_t n = periods * views[v].m->size;
			uint8_t *buf = malloc(n);

			for (int64_t w = 0; w < n; w++)
				buf[w] = pattern(model_unmap(views[v].m, disp, w), 2);
			if (CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view) ||
			    CLF_write(fd, buf, n) != n) {
				fprintf(stderr, "child %d: %s\n", p,
					CLF_Last_error());
				_exit(12);
			}
			free(buf);
		}
		_exit(CLF_close(fd) ? 13 : 0);
	}
	for (int p = 0; p < nproc; p++) {
		int status;

		ck_assert_int_gt(wait(&status), 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "a writer failed: status %d", status);
	}
	check_file(path, size, 2);
	for (int j = 0; j < nl; j++)
		typed_free(&lay[j]);
	for (int j = 0; j < nv; j++)
		typed_free(&views[j]);
}

START_TEST(test_random_layouts_written_by_processes_through_views)
{
	start(4, 10000);
	for (uint64_t seed = 1; seed <= 12; seed++)
		write_through_views(seed * 7919, 3);
	stop();
}
END_TEST

/* Requests served by iod i so far (its STATUS). */
static uint64_t iod_requests(int i)
{
	struct clf_client *cl;
	struct clf_proto_status st;
	struct wire_reader r;
	void *reply;
	uint32_t len;

	ck_assert_int_eq(clf_client_get(&cl), 0);
	ck_assert_int_eq(clf_peer_call(clf_client_iod(cl, i),
				       CLF_PROTO_OP_STATUS, NULL, 0, &reply,
				       &len), 0);
	r = (struct wire_reader){ .buf = reply, .len = len };
	ck_assert_int_eq(clf_proto_status_decode(&r, &st), 0);
	free(reply);
	return st.requests;
}

START_TEST(test_view_on_one_subfile_is_one_transfer)
{
	/* CYCLIC(1000) over 4 iods; the view is subfile 2's pattern. */
	CLF_Datatype sub[4];
	struct clf_subfiles sf = { 0, 4, sub };
	struct clf_view view;
	uint64_t before[4], after[4];
	int64_t n = 8 << 20;
	uint8_t *buf = malloc(n), *back = malloc(n);
	int fd;

	start(4, 5000);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 999, 4000, 1, 1000, 4, CLF_BYTE,
					   sub), 0);
	view = (struct clf_view){ 0, sub[2] };
	for (int64_t w = 0; w < n; w++)
		buf[w] = (uint8_t)(w * 13);
	fd = CLF_open("/cyc", O_CREAT | O_RDWR, 0644);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf), 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view), 0);
	/* Register the view with a first write (larger than what goes as
	 * plain subfile ranges without one). */
	ck_assert_int_eq(CLF_write(fd, buf, 1 << 20), 1 << 20);
	for (int i = 0; i < 4; i++)
		before[i] = iod_requests(i);
	ck_assert_int_eq(CLF_ncwrite_at(fd, 0, buf, NULL), -EINVAL);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_write(fd, buf, n), n);
	for (int i = 0; i < 4; i++)
		after[i] = iod_requests(i);
	/* One VIEW_WRITE to iod 2 (plus the STATUS), nothing elsewhere. */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(after[i] - before[i], i == 2 ? 2 : 1);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_read(fd, back, n), n);
	ck_assert_mem_eq(back, buf, n);

	/* Strided memory: runs of 2 KiB go out as they lie (an iovec
	 * each), runs of 100 bytes are packed; one VIEW_WRITE either way. */
	for (int run = 100; run <= 2048; run += 1948) {
		int64_t count = n / (2 * run);
		CLF_Datatype mem = CLF_Type_vector(0, run - 1, 2 * run, count,
						   CLF_BYTE);
		int64_t bytes = count * run;

		for (int64_t w = 0; w < n; w++)
			buf[w] = (uint8_t)(w * 7 + run);
		for (int i = 0; i < 4; i++)
			before[i] = iod_requests(i);
		ck_assert_int_eq(CLF_ncwrite_at(fd, 0, buf, mem), bytes);
		for (int i = 0; i < 4; i++)
			after[i] = iod_requests(i);
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(after[i] - before[i], i == 2 ? 2 : 1);
		ck_assert_int_eq(CLF_ncread_at(fd, 0, back, NULL), -EINVAL);
		ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
		ck_assert_int_eq(CLF_read(fd, back, bytes), bytes);
		/* ck_abort_msg on a mismatch, not ck_assert per byte: Check
		 * records every passed assertion (a GiB for these loops). */
		for (int64_t v = 0; v < bytes; v++)
			if (back[v] != buf[(v / run) * 2 * run + v % run])
				ck_abort_msg("run %d: view byte %lld", run,
					     (long long)v);
		/* And back into strided memory, the gaps untouched. */
		memset(back, 0xee, n);
		ck_assert_int_eq(CLF_ncread_at(fd, 0, back, mem), bytes);
		for (int64_t m = 0; m < 2 * bytes; m++)
			if (back[m] != (m % (2 * run) < run ? buf[m] : 0xee))
				ck_abort_msg("run %d: memory byte %lld", run,
					     (long long)m);
		CLF_Type_free(&mem);
	}
	ck_assert_int_eq(CLF_close(fd), 0);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&sub[j]);
	free(buf);
	free(back);
	stop();
}
END_TEST

/*
 * A gather that fails (the hook stands for an allocation failure in the
 * mapping walk) fails the write: nothing of an unfilled buffer reaches
 * the file.  A scatter that fails fails the read.
 */
START_TEST(test_failed_gather_fails_the_write_and_writes_nothing)
{
	int64_t size = 1 << 20;
	CLF_Datatype strided = CLF_Type_vector(0, 99, 200, 1, CLF_BYTE);
	struct clf_view view = { 0, strided };
	uint8_t *buf = malloc(size);
	int fd;

	start(4, 5000);
	for (int64_t f = 0; f < size; f++)
		buf[f] = pattern(f, 3);
	fd = CLF_open("/gather", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	/* 100-byte runs over 4 round-robin subfiles: packed, gathered. */
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view), 0);
	memset(buf, 0x5a, size);
	setenv("CLF_TEST_CLIENT_FAIL_COPY", "1", 1);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_write(fd, buf, size / 2), -ENOMEM);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_read(fd, buf, size / 2), -ENOMEM);
	unsetenv("CLF_TEST_CLIENT_FAIL_COPY");
	ck_assert_int_eq(CLF_close(fd), 0);
	check_file("/gather", size, 3);
	CLF_Type_free(&strided);
	free(buf);
	stop();
}
END_TEST

struct racer {
	int fd;
	int64_t last;		/* what the loop ended on */
};

static void *use_until_closed(void *arg)
{
	struct racer *r = arg;

	while ((r->last = CLF_lseek(r->fd, 0, SEEK_CUR)) >= 0)
		;
	return NULL;
}

/*
 * Threads using a descriptor while another closes it (the mount's FUSE
 * workers do): each sees -EBADF once it is closed, and none touches the
 * freed file (ASan in CI catches the use after free this once was).
 */
START_TEST(test_close_while_other_threads_use_the_file)
{
	start(2, 5000);
	for (int round = 0; round < 200; round++) {
		struct racer r[2];
		pthread_t t[2];
		int fd = CLF_open("/race", O_CREAT | O_RDWR, 0644);

		ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
		for (int i = 0; i < 2; i++) {
			r[i] = (struct racer){ fd, 0 };
			ck_assert_int_eq(pthread_create(&t[i], NULL,
						use_until_closed, &r[i]), 0);
		}
		usleep(round % 7 * 50);
		ck_assert_int_eq(CLF_close(fd), 0);
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			ck_assert_int_eq(r[i].last, -EBADF);
		}
	}
	stop();
}
END_TEST

/* Whether log holds "fsync dir" at or after line from. */
static bool fsynced_after(char **lines, int n, int from, const char *dir)
{
	for (int i = from; i < n; i++)
		if (!strncmp(lines[i], "fsync ", 6) &&
		    !strcmp(lines[i] + 6, dir))
			return true;
	return false;
}

/*
 * What CLF_sync promises survives a power cut: the iods' fsyncs are
 * recorded by an LD_PRELOAD shim (fsync_log.so), and every subfile that
 * was fsynced must have its directory, and that directory's parent,
 * fsynced after it -- else the synced file may be unreachable after the
 * cut, which is what the iods did before.
 */
START_TEST(test_synced_subfiles_have_durable_directory_entries)
{
	char so[PATH_MAX], log[] = "/tmp/clf-fsync-XXXXXX", line[PATH_MAX + 16];
	char *lines[4096], asan[256];
	const char *o = getenv("CLF_BUILD_DIR"), *old = getenv("ASAN_OPTIONS");
	int64_t size = 300 * 1024;
	uint8_t *buf = malloc(size);
	int fd, n = 0, subfiles = 0;
	FILE *f;

	snprintf(line, sizeof(line), "%s/tests/integration/fsync_log.so",
		 o ? o : "build");
	ck_assert_msg(realpath(line, so), "%s: not built", line);
	fd = mkstemp(log);
	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("CLF_TEST_FSYNC_LOG", log, 1);
	setenv("LD_PRELOAD", so, 1);
	/* A sanitized iod accepts the shim loaded before its runtime. */
	snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0",
		 old ? old : "", old ? ":" : "");
	setenv("ASAN_OPTIONS", asan, 1);
	start(2, 5000);
	unsetenv("LD_PRELOAD");
	for (int64_t i = 0; i < size; i++)
		buf[i] = pattern(i, 5);
	fd = CLF_open("/durable", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	ck_assert_int_eq(CLF_sync(fd), 0);
	ck_assert_int_eq(CLF_close(fd), 0);

	f = fopen(log, "r");
	ck_assert_ptr_nonnull(f);
	while (n < 4096 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		lines[n++] = strdup(line);
	}
	fclose(f);
	for (int i = 0; i < n; i++) {
		char dir[PATH_MAX], iods[PATH_MAX + 8];
		struct stat st;

		snprintf(iods, sizeof(iods), "%s/iod", inst.dir);
		if (strncmp(lines[i], "fsync ", 6) ||
		    strncmp(lines[i] + 6, iods, strlen(iods)) ||
		    stat(lines[i] + 6, &st) || !S_ISREG(st.st_mode))
			continue;
		subfiles++;
		snprintf(dir, sizeof(dir), "%s", lines[i] + 6);
		*strrchr(dir, '/') = '\0';
		ck_assert_msg(fsynced_after(lines, n, i + 1, dir),
			      "%s synced, its directory never after", lines[i] + 6);
		*strrchr(dir, '/') = '\0';
		ck_assert_msg(fsynced_after(lines, n, 0, dir),
			      "%s: the store directory %s never synced",
			      lines[i] + 6, dir);
	}
	ck_assert_int_ge(subfiles, 2);
	for (int i = 0; i < n; i++)
		free(lines[i]);
	unlink(log);
	free(buf);
	stop();
}
END_TEST

#define TORN_LEN (256 * 1024)	/* over 4 iods of 64 KiB stripes */
#define TORN_ROUNDS 150

/* Lock [0, TORN_LEN) of fd as type (F_RDLCK, F_WRLCK, F_UNLCK). */
static int lock_range(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = TORN_LEN };

	return CLF_fcntl(fd, type == F_UNLCK ? CLF_FCNTL_SETLK
					     : CLF_FCNTL_SETLKW, &fl);
}

/* The writer: whole-range writes of one value each, under a lock. */
static void torn_writer(void)
{
	static uint8_t buf[TORN_LEN];
	int fd;

	CLF_finalize();		/* its own connections, its own locks */
	if (CLF_init(NULL))
		_exit(10);
	fd = CLF_open("/torn", O_RDWR);
	if (fd < 0)
		_exit(11);
	for (int i = 1; i <= TORN_ROUNDS; i++) {
		memset(buf, i, sizeof(buf));
		if (lock_range(fd, F_WRLCK) ||
		    CLF_lseek(fd, 0, SEEK_SET) != 0 ||
		    CLF_write(fd, buf, TORN_LEN) != TORN_LEN ||
		    lock_range(fd, F_UNLCK))
			_exit(12);
	}
	_exit(0);
}

/*
 * clf promises close-to-open consistency, so a read concurrent with a
 * write that spans iods may see part of each (clf.h, "Consistency").
 * Byte-range locks are the way to atomic accesses: a reader holding a
 * read lock over the range never sees a write half done.
 */
START_TEST(test_locked_reads_never_see_a_torn_write)
{
	static uint8_t buf[TORN_LEN];
	int fd, status, reads = 0;
	pid_t pid;

	start(4, 5000);
	fd = CLF_open("/torn", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, TORN_LEN), TORN_LEN);
	/* No file open across the fork: the writer's CLF_finalize would
	 * close it on the connections it shares with us. */
	ck_assert_int_eq(CLF_close(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		torn_writer();
	fd = CLF_open("/torn", O_RDWR);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	while (waitpid(pid, &status, WNOHANG) == 0) {
		ck_assert_int_eq(lock_range(fd, F_RDLCK), 0);
		ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
		ck_assert_int_eq(CLF_read(fd, buf, TORN_LEN), TORN_LEN);
		ck_assert_int_eq(lock_range(fd, F_UNLCK), 0);
		for (int64_t i = 1; i < TORN_LEN; i++)
			if (buf[i] != buf[0])
				ck_abort_msg("read %d: byte %lld is %u, byte 0 is %u",
					     reads, (long long)i, buf[i],
					     buf[0]);
		reads++;
	}
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "writer ended with status %d", status);
	ck_assert_int_gt(reads, 0);
	ck_assert_int_eq(CLF_close(fd), 0);
	stop();
}
END_TEST

START_TEST(test_layout_period_is_the_largest_extent)
{
	/* Bytes [0, 4) of extent 4 and [4, 16) of extent 16: one period of
	 * 16, the first type once in it.  The file reports both at 16, and
	 * a view of subfile 0's bytes reads back what was written there. */
	CLF_Datatype t[2], v;
	struct clf_subfiles sf = { 0, 2, t };
	struct clf_view view;
	struct clf_layout_info info;
	uint8_t buf[64], back[16];
	int fd;

	start(2, 5000);
	t[0] = CLF_Type_vector(0, 3, 4, 1, CLF_BYTE);
	t[1] = CLF_Type_vector(4, 15, 16, 1, CLF_BYTE);
	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)(i + 1);
	fd = CLF_open("/periods", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, 64), 64);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_GETLAYOUT, &info), 0);
	ck_assert_int_eq(info.count, 2);
	ck_assert_int_eq(CLF_Type_extent(info.types[0]), 16);
	ck_assert_int_eq(CLF_Type_extent(info.types[1]), 16);
	ck_assert_int_eq(CLF_Type_size(info.types[0]), 4);
	CLF_Layout_release(&info);
	v = CLF_Type_vector(0, 3, 16, 1, CLF_BYTE);
	view = (struct clf_view){ 0, v };
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view), 0);
	ck_assert_int_eq(CLF_read(fd, back, 16), 16);
	for (int i = 0; i < 16; i++)
		if (back[i] != buf[(i / 4) * 16 + i % 4])
			ck_assert_int_eq(back[i], buf[(i / 4) * 16 + i % 4]);
	ck_assert_int_eq(CLF_close(fd), 0);

	/* Not tiled: [0, 4) of 4 and [4, 8) of 16 leave 8 to 15. */
	CLF_Type_free(&t[1]);
	t[1] = CLF_Type_vector(4, 7, 16, 1, CLF_BYTE);
	fd = CLF_open("/holes", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(),
				     "byte 8 is in no subfile"));
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_Type_free(&v);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
	stop();
}
END_TEST

START_TEST(test_layout_rules_are_enforced_with_the_rule_named)
{
	CLF_Datatype bad[2];
	struct clf_subfiles sf = { 0, 2, bad };
	int fd;

	start(2, 5000);
	bad[0] = CLF_Type_vector(0, 5, 8, 1, CLF_BYTE);
	bad[1] = CLF_Type_vector(4, 7, 8, 1, CLF_BYTE);
	fd = CLF_open("/bad", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "overlap at byte 4"));
	ck_assert_int_eq(CLF_write(fd, "x", 1), 1);
	CLF_Type_free(&bad[1]);
	bad[1] = CLF_Type_vector(6, 7, 8, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf), -EBUSY);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "empty"));
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_Type_free(&bad[0]);
	CLF_Type_free(&bad[1]);
	stop();
}
END_TEST

static int64_t elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 +
	       (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

START_TEST(test_killed_iod_fails_fast_and_comes_back_with_its_data)
{
	int64_t size = 1 << 20;
	uint8_t *buf = malloc(size);
	struct timespec t0;
	int fd;

	start(4, 2000);
	/* Fast: a second's grace for its restart (test_native_recovery). */
	CLF_finalize();
	ck_assert_int_eq(instance_set_grace(&inst, 1), 0);
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	for (int64_t f = 0; f < size; f++)
		buf[f] = pattern(f, 3);
	fd = CLF_open("/k", O_CREAT | O_RDWR, 0644);
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	ck_assert_int_eq(CLF_sync(fd), 0);
	instance_kill(&inst, 1, SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_read(fd, buf, size), -EHOSTDOWN);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "iod 1"));
	ck_assert_int_lt(elapsed_ms(&t0), 2000 + 500);
	/* A file whose one subfile lives on iod 0 keeps working. */
	{
		CLF_Datatype one = CLF_Type_vector(0, 4095, 4096, 1, CLF_BYTE);
		struct clf_subfiles sf = { 0, 1, &one };
		int g = CLF_open("/other", O_CREAT | O_RDWR, 0644);
		char back[6];

		ck_assert_int_ge(g, 0);
		ck_assert_msg(CLF_fcntl(g, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
			      CLF_Last_error());
		ck_assert_int_eq(CLF_write(g, "alive", 6), 6);
		ck_assert_int_eq(CLF_lseek(g, 0, SEEK_SET), 0);
		ck_assert_int_eq(CLF_read(g, back, 6), 6);
		ck_assert_str_eq(back, "alive");
		ck_assert_int_eq(CLF_close(g), 0);
		CLF_Type_free(&one);
		ck_assert_int_eq(CLF_mkdir("/still-there", 0755), 0);
	}
	ck_assert_int_eq(instance_start_daemon(&inst, 1), 0);
	ck_assert_int_eq(CLF_close(fd), 0);
	check_file("/k", size, 3);
	free(buf);
	stop();
}
END_TEST

START_TEST(test_metad_and_iods_restart_with_data_intact)
{
	int64_t size = 700001;
	uint8_t *buf = malloc(size);
	int fd;

	start(3, 5000);
	for (int64_t f = 0; f < size; f++)
		buf[f] = pattern(f, 4);
	fd = CLF_open("/r", O_CREAT | O_RDWR, 0644);
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	ck_assert_int_eq(CLF_sync(fd), 0);
	ck_assert_int_eq(CLF_close(fd), 0);
	instance_kill(&inst, -1, SIGKILL);
	for (int i = 0; i < 3; i++)
		instance_kill(&inst, i, SIGKILL);
	ck_assert_int_eq(instance_start_daemon(&inst, -1), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(instance_start_daemon(&inst, i), 0);
	check_file("/r", size, 4);
	free(buf);
	stop();
}
END_TEST

START_TEST(test_full_disk_on_an_iod_reaches_the_writer)
{
	char small[PATH_MAX];
	const char *dirs[2] = { NULL, NULL };
	int64_t size = 4 << 20;
	uint8_t *buf = calloc(size, 1);
	ssize_t n;
	int fd, err;

	snprintf(small, sizeof(small), "/tmp/clf-enospc-%d", getpid());
	mkdir(small, 0700);
	if (mount("tmpfs", small, "tmpfs", 0, "size=1m")) {
		fprintf(stderr, "SKIP: cannot mount a tmpfs: %s\n",
			strerror(errno));
		rmdir(small);
		exit(77);
	}
	dirs[1] = small;
	err = instance_start(&inst, 2, 5000, dirs);
	if (err == 77)
		exit(77);
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(CLF_init(NULL), 0);
	fd = CLF_open("/big", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	n = CLF_write(fd, buf, size);
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "space"));
	CLF_close(fd);
	stop();
	umount(small);
	rmdir(small);
	free(buf);
}
END_TEST


/*
 * Collective write and read: nproc processes, views cyclic(b) over them,
 * on a round-robin file; each process sends its bytes once, the iods
 * merge.  Then one participant stays away: the others time out.
 */
static int collective_child(const char *path, int p, int nproc, int64_t b,
			    int64_t size, uint64_t tag, bool read_back)
{
	CLF_Datatype t[8];
	int64_t n = size / nproc;
	uint8_t *buf = malloc(n), *back = malloc(n);
	struct clf_view v;
	int fd, rc = 0;

	CLF_finalize();
	if (CLF_init(NULL) || CLF_Type_pitfalls(0, b - 1, nproc * b, 1, b,
						nproc, CLF_BYTE, t))
		return 20;
	v = (struct clf_view){ 0, t[p] };
	fd = CLF_open(path, O_RDWR);
	if (fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v))
		return 21;
	for (int64_t w = 0; w < n; w++) {
		int64_t f;

		CLF_Type_unmap(t[p], 0, w, &f);
		buf[w] = pattern(f, 5);
	}
	/* An operation where nobody has bytes still completes for all. */
	if (read_back &&
	    CLF_ncwrite_at_all(fd, 0, NULL, NULL, tag + 100, nproc) != 0) {
		fprintf(stderr, "empty collective %d: %s\n", p,
			CLF_Last_error());
		rc = 25;
	}
	{
		CLF_Datatype mem = CLF_Type_vector(0, n - 1, n, 1, CLF_BYTE);

		if (!read_back) {
			if (CLF_ncwrite_at_all(fd, 0, buf, mem, tag, nproc) != n) {
				fprintf(stderr, "collective write %d: %s\n", p,
					CLF_Last_error());
				rc = 22;
			}
		} else {
			ssize_t got = CLF_ncread_at_all(fd, 0, back, mem, tag,
							nproc);

			if (got != n || memcmp(back, buf, n)) {
				fprintf(stderr, "collective read %d: %zd %s\n", p,
					got, CLF_Last_error());
				rc = 23;
			}
		}
		CLF_Type_free(&mem);
	}
	if (CLF_close(fd))
		rc = 24;
	for (int j = 0; j < nproc; j++)
		CLF_Type_free(&t[j]);
	free(buf);
	free(back);
	return rc;
}

static void run_collective(const char *path, int nproc, int present,
			   int64_t b, int64_t size, uint64_t tag, bool read_back,
			   int want)
{
	for (int p = 0; p < present; p++)
		if (fork() == 0)
			_exit(collective_child(path, p, nproc, b, size, tag,
					       read_back));
	for (int p = 0; p < present; p++) {
		int status;

		ck_assert_int_gt(wait(&status), 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == want,
			      "participant status %d, want exit %d", status,
			      want);
	}
}

START_TEST(test_collective_write_and_read_are_merged_by_the_iods)
{
	int64_t b = 1000, size = 3 * b * 700;
	struct timespec t0;
	int fd;

	start(4, 3000);
	fd = CLF_open("/coll", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_close(fd), 0);
	run_collective("/coll", 3, 3, b, size, 1, false, 0);
	check_file("/coll", size, 5);
	run_collective("/coll", 3, 3, b, size, 2, true, 0);
	/* Two of three come: both fail within the timeout (x2 + margin). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_collective("/coll", 3, 2, b, size, 3, false, 22);
	ck_assert_int_lt(elapsed_ms(&t0), 2 * 3000 + 2000);
	stop();
}
END_TEST

/*
 * A planned collective write (CLF_coll_plan, CLF_ncwrite_at_allv) on 3
 * subfiles of 1000-byte stripes, 3 processes through the byte view:
 * process 0 writes [0, 4500) (two runs in subfiles 0 and 1, one in 2),
 * process 1 [9500, 13000) (two runs in subfile 0, one in 1 and 2),
 * process 2 [7000, 9000) (one run in 1 and 2).  Subfile 0's merge waits
 * for 2, subfile 1's for 1, subfile 2 has none: nobody waits for a
 * process that has nothing to merge there.  The writers keep the file
 * open; another process then sees the size and the bytes, and the size
 * stays after metad is killed and restarted, and after the writers exit
 * without closing: it is the subfiles', never a report's.
 */
static const int64_t planned_range[3][2] = {
	{ 0, 4500 }, { 9500, 13000 }, { 7000, 9000 },
};

static int planned_child(int p, const uint32_t *participants, int done,
			 int go)
{
	int64_t lo = planned_range[p][0], n = planned_range[p][1] - lo;
	uint8_t *buf = malloc(n);
	char c;
	int fd;

	CLF_finalize();
	if (!buf || CLF_init(NULL))
		_exit(40);
	for (int64_t v = 0; v < n; v++)
		buf[v] = pattern(lo + v, 12);
	fd = CLF_open("/planned", O_RDWR);
	if (fd < 0)
		_exit(41);
	if (CLF_ncwrite_at_allv(fd, lo, buf, NULL, n, 7, participants) != n) {
		fprintf(stderr, "planned write %d: %s\n", p, CLF_Last_error());
		_exit(42);
	}
	if (write(done, "w", 1) != 1 || read(go, &c, 1) != 1)
		_exit(43);
	_exit(0);		/* neither closed nor synced */
}

static void planned_check(int64_t size)
{
	uint8_t *back = calloc(1, size + 16);
	struct stat st;
	int fd;

	ck_assert_msg(CLF_stat("/planned", &st) == 0, "%s", CLF_Last_error());
	ck_assert_int_eq(st.st_size, size);
	fd = CLF_open("/planned", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_read(fd, back, size + 16), size);
	for (int64_t f = 0; f < size; f++) {
		bool written = false;

		for (int p = 0; p < 3; p++)
			written = written || (f >= planned_range[p][0] &&
					      f < planned_range[p][1]);
		if (back[f] != (written ? pattern(f, 12) : 0))
			ck_abort_msg("byte %lld is %u", (long long)f, back[f]);
	}
	ck_assert_int_eq(CLF_close(fd), 0);
	free(back);
}

START_TEST(test_planned_collective_meets_only_where_pieces_merge)
{
	static const uint32_t want_merge[3][3] = {
		{ 1, 1, 0 }, { 1, 0, 0 }, { 0, 0, 0 },
	};
	CLF_Datatype t[3];
	struct clf_subfiles sf = { 0, 3, t };
	uint32_t merge[3], participants[3] = { 0, 0, 0 };
	struct timespec t0;
	int fd, done[2], go[2];
	char c;

	start(3, 3000);
	for (int j = 0; j < 3; j++)
		ck_assert_ptr_nonnull(t[j] = CLF_Type_vector(j * 1000,
				j * 1000 + 999, 3000, 1, CLF_BYTE));
	fd = CLF_open("/planned", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_coll_subfiles(fd), 3);
	/* What each process's plan says, summed as MPI_Allreduce would. */
	for (int p = 0; p < 3; p++) {
		int64_t lo = planned_range[p][0];
		int64_t n = planned_range[p][1] - lo;

		ck_assert_int_eq(CLF_coll_plan(fd, lo, n, 1, merge), n);
		for (int j = 0; j < 3; j++) {
			if (merge[j] != want_merge[p][j])
				ck_abort_msg("process %d, subfile %d: merge %u",
					     p, j, merge[j]);
			participants[j] += merge[j];
		}
	}
	/* A read is planned up to the end of file: nothing yet. */
	ck_assert_int_eq(CLF_coll_plan(fd, 0, 100, 0, merge), 0);
	ck_assert_int_eq(CLF_close(fd), 0);

	ck_assert_int_eq(pipe(done), 0);
	ck_assert_int_eq(pipe(go), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int p = 0; p < 3; p++)
		if (fork() == 0)
			planned_child(p, participants, done[1], go[0]);
	for (int p = 0; p < 3; p++)
		ck_assert_int_eq(read(done[0], &c, 1), 1);
	/* Nobody waited for a participant that had nothing to bring. */
	ck_assert_int_lt(elapsed_ms(&t0), 3000);
	planned_check(13000);
	fd = CLF_open("/planned", O_RDONLY);
	ck_assert_int_eq(CLF_coll_plan(fd, 12000, 5000, 0, merge), 1000);
	ck_assert_int_eq(CLF_close(fd), 0);

	instance_kill(&inst, -1, SIGKILL);
	ck_assert_int_eq(instance_start_daemon(&inst, -1), 0);
	planned_check(13000);
	for (int p = 0; p < 3; p++) {
		int status;

		ck_assert_int_eq(write(go[1], "g", 1), 1);
		ck_assert_int_gt(wait(&status), 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "writer status %d", status);
	}
	planned_check(13000);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&t[j]);
	stop();
}
END_TEST

/*
 * Views whose extent has nothing to do with the layout's period: a prime
 * e near 2^20 against 64 KiB round-robin stripes on 4 subfiles (no
 * common period is formed: the mappings are tiled, at the client and at
 * the iods).  Process 0 takes bytes [0, 16) of every 48 and the tail of
 * each tile, process 1 bytes [16, 48): together every byte.
 */
static CLF_Datatype odd_view(int p, int64_t e)
{
	int64_t len = 48 * ((e - 100) / 48);
	CLF_Datatype in = CLF_Type_vector(p ? 16 : 0, p ? 47 : 15, 48, 1,
					  CLF_BYTE);
	CLF_Datatype m[2] = {
		CLF_Type_vector(0, len - 1, e, 1, in),
		CLF_Type_vector(len, e - 1, e, 1, CLF_BYTE),
	};
	CLF_Datatype v = p ? CLF_Type_dup(m[0]) : CLF_Type_struct(2, m);

	CLF_Type_free(&in);
	CLF_Type_free(&m[0]);
	CLF_Type_free(&m[1]);
	return v;
}

/*
 * Child p: half its view bytes written independently, half collectively,
 * then all read back collectively and a window independently.
 */
static int odd_view_child(const char *path, int p, int64_t disp, int64_t e,
			  int64_t tiles)
{
	CLF_Datatype t = odd_view(p, e), mem, half;
	int64_t n = tiles * CLF_Type_size(t), h = n / 2 + 7, w0 = n / 3;
	uint8_t *buf = malloc(n), *back = calloc(1, n);
	struct clf_view v = { disp, t };
	int fd, rc = 0;

	CLF_finalize();
	if (!t || !buf || !back || CLF_init(NULL))
		return 30;
	for (int64_t w = 0; w < n; w++) {
		int64_t f;

		CLF_Type_unmap(t, disp, w, &f);
		buf[w] = pattern(f, 7);
	}
	mem = CLF_Type_vector(0, n - 1, n, 1, CLF_BYTE);
	half = CLF_Type_vector(0, n - h - 1, n - h, 1, CLF_BYTE);
	fd = CLF_open(path, O_RDWR);
	if (fd < 0 || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v))
		rc = 31;
	else if (CLF_write(fd, buf, h) != h)
		rc = 32;
	else if (CLF_ncwrite_at_all(fd, h, buf + h, half, 1, 2) != n - h)
		rc = 33;
	else if (CLF_ncread_at_all(fd, 0, back, mem, 2, 2) != n ||
		 memcmp(back, buf, n))
		rc = 34;
	else if (memset(back, 0, n) &&
		 (CLF_lseek(fd, w0, SEEK_SET) != w0 ||
		  CLF_read(fd, back, 100000) != 100000 ||
		  memcmp(back, buf + w0, 100000)))
		rc = 35;
	if (rc)
		fprintf(stderr, "odd view %d: step %d: %s\n", p, rc,
			CLF_Last_error());
	if (fd >= 0 && CLF_close(fd))
		rc = rc ? rc : 36;
	CLF_Type_free(&half);
	CLF_Type_free(&mem);
	CLF_Type_free(&t);
	free(buf);
	free(back);
	return rc;
}

START_TEST(test_views_of_incommensurate_extent_write_and_read_through_iods)
{
	int64_t e = 1048573, disp = 100, tiles = 3, size = disp + tiles * e;
	CLF_Datatype rr[4];
	struct clf_subfiles sf = { disp, 4, rr };
	uint8_t head[100];
	int fd;

	start(4, 10000);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 65535, 4 * 65536, 1, 65536, 4,
					   CLF_BYTE, rr), 0);
	fd = CLF_open("/odd", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	for (int64_t f = 0; f < disp; f++)
		head[f] = pattern(f, 7);
	ck_assert_int_eq(CLF_write(fd, head, disp), disp);
	ck_assert_int_eq(CLF_close(fd), 0);
	for (int p = 0; p < 2; p++)
		if (fork() == 0)
			_exit(odd_view_child("/odd", p, disp, e, tiles));
	for (int p = 0; p < 2; p++) {
		int status;

		ck_assert_int_gt(wait(&status), 0);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "a process failed: status %d", status);
	}
	check_file("/odd", size, 7);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&rr[j]);
	stop();
}
END_TEST

/*
 * A layout with no compact description: about 120k pieces per subfile
 * (partition.h), far beyond the 65536 FALLS an encoded type once held.
 * metad stores it, a fresh open gets it back, the iods map views against
 * it, and every byte lands where the layout says.
 */
START_TEST(test_layout_of_300k_irregular_pieces_is_stored_and_used)
{
	struct partition p;
	CLF_Datatype sub[3];
	struct clf_subfiles sf = { 0, 3, sub };
	struct clf_layout_info info;
	struct clf_view view;
	int64_t size, vsize, w = 0;
	uint8_t *buf, *back;
	int8_t *owner;
	int fd;

	start(3, 20000);
	/* ~120k pieces per subfile: ~85k FALLS once CLF_Type_struct has
	 * folded the groups that repeat by chance. */
	ck_assert_int_eq(partition_make(&p, 45000, 3, 7), 0);
	ck_assert_msg(partition_types(&p, -1, sub) == 0, "%s",
		      CLF_Last_error());
	size = p.period + p.period / 2 + 5;
	owner = malloc(p.period);
	buf = malloc(size);
	back = malloc(size);
	ck_assert(owner && buf && back);
	memset(owner, 0, p.period);
	for (int i = 0; i < p.n; i++)
		memset(owner + p.lo[i], p.owner[i], p.hi[i] - p.lo[i] + 1);
	for (int64_t f = 0; f < size; f++)
		buf[f] = pattern(f, 3);

	fd = CLF_open("/irregular", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, size), size);
	ck_assert_int_eq(CLF_close(fd), 0);

	/* From metad, as stored. */
	fd = CLF_open("/irregular", O_RDWR);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_GETLAYOUT, &info), 0);
	ck_assert_int_eq(info.count, 3);
	for (int j = 0; j < 3; j++) {
		/* Beyond 65536 FALLS, at least 33 bytes each.  (Decoding
		 * may merge a few more neighbours than the construction
		 * did, so the encodings need not be equal byte for byte.) */
		ck_assert_int_gt(CLF_Type_encode(info.types[j], NULL, 0),
				 20 + 33 * 65536);
		ck_assert_int_eq(CLF_Type_size(info.types[j]),
				 CLF_Type_size(sub[j]));
		ck_assert_int_eq(CLF_Type_extent(info.types[j]), p.period);
	}
	CLF_Layout_release(&info);
	check_file("/irregular", size, 3);

	/* A view of subfile 1's 80k FALLS, read then rewritten. */
	view = (struct clf_view){ 0, sub[1] };
	vsize = CLF_Type_size(sub[1]);
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_read(fd, back, vsize), vsize);
	for (int64_t f = 0; f < p.period; f++) {
		if (owner[f] != 1)
			continue;
		if (back[w] != pattern(f, 3))
			ck_abort_msg("view byte %lld (file %lld) is %u, want %u",
				     (long long)w, (long long)f, back[w],
				     pattern(f, 3));
		buf[f] = back[w] ^ 0x5a;
		back[w++] ^= 0x5a;
	}
	ck_assert_int_eq(w, vsize);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_write(fd, back, vsize), vsize);
	ck_assert_int_eq(CLF_close(fd), 0);

	fd = CLF_open("/irregular", O_RDONLY);
	ck_assert_int_eq(CLF_read(fd, back, size), size);
	ck_assert_int_eq(CLF_close(fd), 0);
	for (int64_t f = 0; f < size; f++)
		if (back[f] != buf[f])
			ck_abort_msg("byte %lld is %u, want %u", (long long)f,
				     back[f], buf[f]);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&sub[j]);
	partition_release(&p);
	free(owner);
	free(buf);
	free(back);
	stop();
}
END_TEST

/*
 * A child process writes and keeps the file open (no close, no sync):
 * every read, stat and SEEK_END of this process that starts after its
 * write returned sees the bytes and the size -- also a descriptor opened
 * before, and past the displacement's head, through the layout.
 */
START_TEST(test_writes_are_visible_to_other_processes_without_sync)
{
	CLF_Datatype t[3];
	struct clf_subfiles sf = { 100, 3, t };
	int64_t sizes[2] = { 100 + 2 * 3000 + 1234, 100 + 5 * 3000 + 17 };
	int64_t max = sizes[1];
	uint8_t *buf = malloc(max + 64);
	int go[2], done[2], fd, early, status;
	struct stat st;
	pid_t pid;
	char c;

	start(4, 5000);
	for (int j = 0; j < 3; j++)
		ck_assert_ptr_nonnull(t[j] = CLF_Type_vector(j * 1000,
				j * 1000 + 999, 3000, 1, CLF_BYTE));
	fd = CLF_open("/vis", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	early = CLF_open("/vis", O_RDONLY);
	ck_assert_int_ge(early, 0);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Child: its own connections; two writes, each announced. */
		CLF_finalize();
		if (CLF_init(NULL))
			_exit(10);
		fd = CLF_open("/vis", O_WRONLY);
		for (int64_t f = 0; f < max; f++)
			buf[f] = pattern(f, 9);
		for (int k = 0; k < 2; k++) {
			int64_t from = k ? sizes[0] : 0;

			if (fd < 0 || CLF_lseek(fd, from, SEEK_SET) != from ||
			    CLF_write(fd, buf + from, sizes[k] - from) !=
				    sizes[k] - from ||
			    write(done[1], "w", 1) != 1 ||
			    read(go[0], &c, 1) != 1)
				_exit(11);
		}
		_exit(0);	/* neither closed nor synced */
	}
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(read(done[0], &c, 1), 1);
		ck_assert_msg(CLF_stat("/vis", &st) == 0, "%s",
			      CLF_Last_error());
		ck_assert_int_eq(st.st_size, sizes[k]);
		fd = CLF_open("/vis", O_RDONLY);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_END), sizes[k]);
		ck_assert_int_eq(CLF_close(fd), 0);
		/* Opened before the write: reads past the end it knew. */
		memset(buf, 0, max + 64);
		ck_assert_int_eq(CLF_lseek(early, 0, SEEK_SET), 0);
		ck_assert_int_eq(CLF_read(early, buf, max + 64), sizes[k]);
		for (int64_t f = 0; f < sizes[k]; f++)
			if (buf[f] != pattern(f, 9))
				ck_abort_msg("byte %lld is %u, want %u",
					     (long long)f, buf[f], pattern(f, 9));
		ck_assert_int_eq(write(go[1], "g", 1), 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "writer status %d", status);
	/* Truncation still sets the size, down and up. */
	fd = CLF_open("/vis", O_RDWR);
	ck_assert_int_eq(CLF_ftruncate(fd, 2500), 0);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_END), 2500);
	ck_assert_int_eq(CLF_ftruncate(fd, 7777), 0);
	ck_assert_int_eq(CLF_stat("/vis", &st), 0);
	ck_assert_int_eq(st.st_size, 7777);
	ck_assert_int_eq(CLF_close(fd), 0);
	ck_assert_int_eq(CLF_close(early), 0);
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&t[j]);
	free(buf);
	stop();
}
END_TEST

/*
 * Small accesses go as plain subfile ranges while their view is not
 * registered; larger ones register it; views come back from the cache.
 * Random layouts (with a head), random views set again and again (two
 * descriptors, so that each also sees the other's writes), accesses of
 * 1..300 bytes and now and then 100 KiB, contiguous or strided memory,
 * reads past the end: every byte against a model of the file.
 */
static void small_accesses(uint64_t seed)
{
	enum { MAXF = 1 << 20 };
	uint64_t rs = seed;
	struct typed lay[16], views[8];
	CLF_Datatype lt[16];
	int nl = random_pattern(&rs, lay, 3000);
	int64_t disp = rnd_range(&rs, 0, 100), size = 0;
	struct clf_subfiles sf = { disp, nl, lt };
	uint8_t *ref = calloc(MAXF, 1), *buf = malloc(2 * 200000),
		*back = malloc(MAXF + 16);
	int64_t vdisp[8];
	char path[64];
	int fd[2];

	snprintf(path, sizeof(path), "/small%llu", (unsigned long long)seed);
	for (int j = 0; j < nl; j++)
		lt[j] = lay[j].t;
	for (int v = 0; v < 8; v++) {
		views[v] = random_type(&rs, 3, 2000);
		vdisp[v] = rnd_range(&rs, 0, 300);
	}
	fd[0] = CLF_open(path, O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd[0] >= 0, "%s", CLF_Last_error());
	ck_assert_msg(CLF_fcntl(fd[0], CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	fd[1] = CLF_open(path, O_RDWR);
	ck_assert_int_ge(fd[1], 0);
	for (int it = 0; it < 400; it++) {
		int d = (int)rnd_range(&rs, 0, 1), v = (int)rnd_range(&rs, 0, 7);
		struct clf_view view = { vdisp[v], views[v].t };
		bool big = rnd_range(&rs, 0, 20) == 0, write = rnd_next(&rs) & 1;
		int64_t n = big ? 100000 : rnd_range(&rs, 1, 300);
		int64_t lo = rnd_range(&rs, 0, 2000), want = 0, got;
		int run = (int)rnd_range(&rs, 1, 40);
		bool strided = rnd_range(&rs, 0, 2) == 0 && n % run == 0;
		CLF_Datatype mem = NULL;

		if (model_unmap(views[v].m, vdisp[v], lo + n - 1) >= MAXF)
			continue;
		ck_assert_msg(CLF_fcntl(fd[d], CLF_FCNTL_SETVIEW, &view) == 0,
			      "%s", CLF_Last_error());
		if (strided)
			mem = CLF_Type_vector(0, run - 1, 2 * run, n / run,
					      CLF_BYTE);
		else
			mem = CLF_Type_vector(0, n - 1, n, 1, CLF_BYTE);
		ck_assert_ptr_nonnull(mem);
		if (write) {
			for (int64_t w = 0; w < n; w++) {
				uint8_t x = (uint8_t)rnd_next(&rs);
				int64_t f = model_unmap(views[v].m, vdisp[v],
							lo + w);

				buf[strided ? w / run * 2 * run + w % run : w] = x;
				ref[f] = x;
				if (f + 1 > size)
					size = f + 1;
			}
			got = CLF_ncwrite_at(fd[d], lo, buf, mem);
			ck_assert_msg(got == n, "seed %llu it %d: write %lld: %s",
				      (unsigned long long)seed, it,
				      (long long)got, CLF_Last_error());
		} else {
			memset(back, 0xee, 2 * n);
			while (want < n && model_unmap(views[v].m, vdisp[v],
						       lo + want) < size)
				want++;
			got = CLF_ncread_at(fd[d], lo, back, mem);
			ck_assert_msg(got == want,
				      "seed %llu it %d: read %lld of %lld: %s",
				      (unsigned long long)seed, it,
				      (long long)got, (long long)want,
				      CLF_Last_error());
			for (int64_t w = 0; w < want; w++) {
				int64_t f = model_unmap(views[v].m, vdisp[v],
							lo + w);
				uint8_t b = back[strided ? w / run * 2 * run +
							  w % run : w];

				ck_assert_msg(b == ref[f],
					      "seed %llu it %d: file byte %lld is %u, want %u",
					      (unsigned long long)seed, it,
					      (long long)f, b, ref[f]);
			}
		}
		CLF_Type_free(&mem);
	}
	for (int d = 0; d < 2; d++)
		ck_assert_int_eq(CLF_close(fd[d]), 0);
	/* Whole, through the default view of a new descriptor. */
	fd[0] = CLF_open(path, O_RDONLY);
	ck_assert_int_ge(fd[0], 0);
	ck_assert_int_eq(CLF_read(fd[0], back, MAXF + 16), size);
	ck_assert_int_eq(memcmp(back, ref, size), 0);
	ck_assert_int_eq(CLF_close(fd[0]), 0);
	for (int j = 0; j < nl; j++)
		typed_free(&lay[j]);
	for (int v = 0; v < 8; v++)
		typed_free(&views[v]);
	free(ref);
	free(buf);
	free(back);
}

START_TEST(test_small_accesses_through_changing_views_match_a_model)
{
	start(4, 10000);
	for (uint64_t seed = 1; seed <= 6; seed++)
		small_accesses(seed * 104729);
	stop();
}
END_TEST

/*
 * A small access in many pieces is one request per iod: a view of 100
 * bytes every 1000 over CYCLIC(1000) on 2 iods puts 15 pieces of a
 * 3000-byte write on each iod, which takes them in one SUB_WRITEV (then
 * one SUB_READV), plus the STATUS that counts.  A piece past the end of
 * its subfile (but not of the file) reads as zeros, as it did with a
 * request per piece.  A client of 1.10 still sends one per piece.
 */
START_TEST(test_small_access_in_pieces_is_one_request_per_iod)
{
	CLF_Datatype sub[2], view, m100, m1300;
	struct clf_subfiles sf = { 0, 2, sub };
	struct clf_view v;
	uint64_t before[2], after[2];
	uint8_t buf[3000], last[100], back[1300];
	int fd;

	start(2, 5000);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 999, 2000, 1, 1000, 2, CLF_BYTE,
					   sub), 0);
	view = CLF_Type_vector(0, 99, 1000, 1, CLF_BYTE);
	m100 = CLF_Type_vector(0, 99, 100, 1, CLF_BYTE);
	m1300 = CLF_Type_vector(0, 1299, 1300, 1, CLF_BYTE);
	v = (struct clf_view){ 0, view };
	for (int i = 0; i < 3000; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	memset(last, 0x5a, sizeof(last));
	fd = CLF_open("/pieces", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf), 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v), 0);
	for (int i = 0; i < 2; i++)
		before[i] = iod_requests(i);
	ck_assert_int_eq(CLF_write(fd, buf, 3000), 3000);
	for (int i = 0; i < 2; i++)
		after[i] = iod_requests(i);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(after[i] - before[i], 2);
	/* Block 32 (subfile 0): block 31 is past subfile 1's end. */
	ck_assert_int_eq(CLF_ncwrite_at(fd, 3200, last, m100), 100);
	for (int i = 0; i < 2; i++)
		before[i] = iod_requests(i);
	memset(back, 0xee, sizeof(back));
	ck_assert_int_eq(CLF_ncread_at(fd, 2000, back, m1300), 1300);
	for (int i = 0; i < 2; i++)
		after[i] = iod_requests(i);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(after[i] - before[i], 2);
	ck_assert_mem_eq(back, buf + 2000, 1000);
	for (int i = 1000; i < 1200; i++)
		if (back[i] != 0)
			ck_assert_uint_eq(back[i], 0);
	ck_assert_mem_eq(back + 1200, last, 100);
	ck_assert_int_eq(CLF_close(fd), 0);

	/* A client of protocol 1.10 sends a request per piece, and the
	 * same bytes land. */
	ck_assert_int_eq(CLF_finalize(), 0);
	setenv("CLF_TEST_CLIENT_MINOR", "10", 1);
	ck_assert_msg(CLF_init(inst.conf) == 0, "%s", CLF_Last_error());
	for (int i = 0; i < 3000; i++)
		buf[i] = (uint8_t)(i * 5 + 3);
	fd = CLF_open("/pieces", O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v), 0);
	for (int i = 0; i < 2; i++)
		before[i] = iod_requests(i);
	ck_assert_int_eq(CLF_write(fd, buf, 3000), 3000);
	for (int i = 0; i < 2; i++)
		after[i] = iod_requests(i);
	unsetenv("CLF_TEST_CLIENT_MINOR");
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(after[i] - before[i], 16);
	memset(back, 0xee, sizeof(back));
	ck_assert_int_eq(CLF_ncread_at(fd, 2000, back, m1300), 1300);
	ck_assert_mem_eq(back, buf + 2000, 1000);
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_Type_free(&view);
	CLF_Type_free(&m100);
	CLF_Type_free(&m1300);
	for (int j = 0; j < 2; j++)
		CLF_Type_free(&sub[j]);
	stop();
}
END_TEST

/* A view set again finds its registrations: no VIEW_REGISTER. */
START_TEST(test_views_set_again_are_not_registered_again)
{
	CLF_Datatype sub[4], half[2];
	struct clf_subfiles sf = { 0, 4, sub };
	int64_t n = 1 << 20;
	uint8_t *buf = calloc(n, 1);
	uint64_t before[4], after[4];
	CLF_Datatype mem;
	int fd;

	start(4, 5000);
	mem = CLF_Type_vector(0, n - 1, n, 1, CLF_BYTE);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 999, 4000, 1, 1000, 4, CLF_BYTE,
					   sub), 0);
	ck_assert_int_eq(CLF_Type_pitfalls(0, 1999, 4000, 1, 2000, 2, CLF_BYTE,
					   half), 0);
	fd = CLF_open("/again", O_CREAT | O_RDWR, 0644);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf), 0);
	for (int round = 0; round < 3; round++) {
		for (int h = 0; h < 2; h++) {
			struct clf_view view = { 0, half[h] };

			ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &view), 0);
			for (int i = 0; i < 4; i++)
				before[i] = iod_requests(i);
			ck_assert_int_eq(CLF_ncwrite_at(fd, 0, buf, mem), n);
			for (int i = 0; i < 4; i++)
				after[i] = iod_requests(i);
			/* View h covers subfiles 2h, 2h + 1: a VIEW_WRITE
			 * each (and a VIEW_REGISTER the first time), plus
			 * the STATUS. */
			for (int i = 0; i < 4; i++)
				ck_assert_int_eq(after[i] - before[i],
						 i / 2 != h ? 1 : round ? 2 : 3);
		}
	}
	ck_assert_int_eq(CLF_close(fd), 0);
	CLF_Type_free(&mem);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&sub[j]);
	for (int h = 0; h < 2; h++)
		CLF_Type_free(&half[h]);
	free(buf);
	stop();
}
END_TEST

/* Insert lines at the head of [global] of the instance's configuration. */
static void conf_add_global(const char *lines)
{
	char text[8192], *at;
	FILE *f = fopen(inst.conf, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	at = strstr(text, "[global]\n");
	ck_assert_ptr_nonnull(at);
	at += strlen("[global]\n");
	f = fopen(inst.conf, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(text, 1, (size_t)(at - text), f);
	fputs(lines, f);
	fputs(at, f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_views_over_the_iod_share_fail_with_a_clear_error)
{
	CLF_Datatype sub[4], view, mem;
	struct clf_subfiles sf = { 0, 4, sub };
	static uint8_t buf[100000];
	int fd[64], n = 0;
	ssize_t rc = 0;

	ck_assert_int_eq(instance_start(&inst, 1, 5000, NULL), 0);
	/* An iod that lends 1 MiB to views: half of it to a lone client. */
	conf_add_global("iod_view_memory = 1m\niod_view_min_share = 64k\n");
	instance_kill(&inst, 0, SIGTERM);
	ck_assert_int_eq(instance_start_daemon(&inst, 0), 0);
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_Type_pitfalls(0, 65535, 262144, 1, 65536, 4,
					   CLF_BYTE, sub), 0);
	/* Some 47 KiB of mapping per subfile at the iod. */
	view = CLF_Type_vector(0, 99, 1000, 1, CLF_BYTE);
	/* Over io_small.c's bound: the view goes to the iod. */
	mem = CLF_Type_vector(0, 99999, 100000, 1, CLF_BYTE);
	fd[0] = CLF_open("/shares", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd[0], 0);
	ck_assert_int_eq(CLF_fcntl(fd[0], CLF_FCNTL_SUBFILES, &sf), 0);
	ck_assert_int_eq(CLF_close(fd[0]), 0);
	/* Each handle its own view, kept registered while it is open. */
	for (n = 0; n < 64; n++) {
		struct clf_view v = { 1000 * n, view };

		fd[n] = CLF_open("/shares", O_RDWR);
		ck_assert_int_ge(fd[n], 0);
		ck_assert_int_eq(CLF_fcntl(fd[n], CLF_FCNTL_SETVIEW, &v), 0);
		rc = CLF_ncwrite_at(fd[n], 0, buf, mem);
		if (rc < 0)
			break;
		ck_assert_int_eq(rc, 100000);
	}
	ck_assert_int_lt(n, 64);
	ck_assert_int_eq(rc, -ENOBUFS);
	ck_assert_msg(strstr(CLF_Last_error(),
			     "iod 0: view registrations of this client use"),
		      "message: %s", CLF_Last_error());
	for (int i = 0; i <= n; i++)
		ck_assert_int_eq(CLF_close(fd[i]), 0);
	/* Closed handles gave their views back. */
	fd[0] = CLF_open("/shares", O_RDWR);
	ck_assert_int_eq(CLF_ncwrite_at(fd[0], 0, buf, mem), 100000);
	ck_assert_int_eq(CLF_close(fd[0]), 0);
	for (int j = 0; j < 4; j++)
		CLF_Type_free(&sub[j]);
	CLF_Type_free(&view);
	CLF_Type_free(&mem);
	stop();
}
END_TEST

/*
 * clf_ll_readdirplus: every entry with clf_ll_stat's attributes, a page
 * at a time, the size of a file being written (not reported to metad)
 * derived from its subfiles with CLF_LL_PLUS_SIZE and metad's without.
 */
START_TEST(test_readdirplus_gives_stat_of_every_entry)
{
	enum { N = 40, GROW = 300000 };
	static uint8_t buf[GROW];
	struct clf_ll_dirents_plus d;
	uint64_t dir, cookie = 0;
	bool eof = false, grow_seen = false;
	char path[64];
	struct stat st;
	int total = 0, fd, grow;

	start(4, 5000);
	ck_assert_int_eq(CLF_mkdir("/d", 0755), 0);
	ck_assert_int_eq(CLF_mkdir("/d/sub", 0700), 0);
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "/d/f%02d", i);
		fd = CLF_open(path, O_CREAT | O_WRONLY, 0600 + i % 8);
		ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
		ck_assert_int_eq(CLF_write(fd, buf, i * 1000), i * 1000);
		ck_assert_int_eq(CLF_close(fd), 0);
	}
	grow = CLF_open("/d/growing", O_CREAT | O_WRONLY, 0644);
	ck_assert_msg(grow >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(grow, buf, GROW), GROW);
	ck_assert_int_eq(CLF_stat("/d", &st), 0);
	dir = st.st_ino;
	while (!eof) {
		ck_assert_int_eq(clf_ll_readdirplus(dir, cookie, 7,
						    CLF_LL_PLUS_SIZE, &d), 0);
		ck_assert_uint_le(d.count, 7);
		for (uint32_t i = 0; i < d.count; i++) {
			const struct clf_ll_direntplus *e = &d.ents[i];
			struct clf_proto_attr a;

			ck_assert_int_eq(clf_ll_stat(e->attr.ino, &a), 0);
			ck_assert_msg(!memcmp(&a, &e->attr, sizeof(a)),
				      "%s: attributes differ from stat's (size %lld, stat %lld)",
				      e->name, (long long)e->attr.size,
				      (long long)a.size);
			snprintf(path, sizeof(path), "/d/%s", e->name);
			ck_assert_int_eq(CLF_stat(path, &st), 0);
			ck_assert_int_eq(st.st_size, e->attr.size);
			ck_assert_uint_eq(st.st_mode, e->attr.mode);
			if (!strcmp(e->name, "growing")) {
				ck_assert_int_eq(e->attr.size, GROW);
				grow_seen = true;
			}
			cookie = e->cookie;
			total++;
		}
		eof = d.eof;
		clf_ll_dirents_plus_release(&d);
	}
	ck_assert_int_eq(total, N + 2);
	ck_assert(grow_seen);
	/* Without the flag: metad's size, which has not heard of it. */
	ck_assert_int_eq(clf_ll_readdirplus(dir, 0, CLF_PROTO_READDIR_MAX, 0,
					    &d), 0);
	ck_assert_uint_eq(d.count, N + 2);
	ck_assert(d.eof);
	for (uint32_t i = 0; i < d.count; i++)
		if (!strcmp(d.ents[i].name, "growing"))
			ck_assert_int_eq(d.ents[i].attr.size, 0);
	clf_ll_dirents_plus_release(&d);
	ck_assert_int_eq(clf_ll_readdirplus(dir, 0, 0, 0, &d), -EINVAL);
	ck_assert_int_eq(CLF_close(grow), 0);
	stop();
}
END_TEST

/*
 * CLF_TEST_ONLY=name,name...: only those tests (the RDMA guest runs the
 * quick ones under emulation, tests/guest/rdma_tests.sh).
 */
static void add_chosen(TCase *tc, const TTest *t, const char *name)
{
	const char *only = getenv("CLF_TEST_ONLY");
	size_t n = strlen(name);

	for (const char *p = only; p && (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (!p[n] || p[n] == ','))
			goto add;
	if (only && *only)
		return;
add:
	tcase_add_test_raise_signal(tc, t, 0);
}
#undef tcase_add_test
#define tcase_add_test(tc, t) add_chosen(tc, t, #t)

int main(void)
{
	Suite *s = suite_create("native");
	TCase *tc = tcase_create("against real daemons");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_default_view_round_trips_a_file);
	tcase_add_test(tc, test_namespace_calls_reach_metad);
	tcase_add_test(tc, test_readdirplus_gives_stat_of_every_entry);
	tcase_add_test(tc, test_new_files_take_their_directory_default_layout);
	tcase_add_test(tc, test_create_lays_out_only_the_file_it_makes);
	/* CLF_TEST_METADS=3 (test_native_metads.sh): the namespace tests
	 * above against a namespace spread over that many metads. */
	if (getenv("CLF_TEST_METADS")) {
		suite_add_tcase(s, tc);
		return run_suite(s);
	}
	tcase_add_test(tc, test_random_layouts_written_by_processes_through_views);
	tcase_add_test(tc, test_view_on_one_subfile_is_one_transfer);
	tcase_add_test(tc, test_layout_period_is_the_largest_extent);
	tcase_add_test(tc, test_layout_rules_are_enforced_with_the_rule_named);
	tcase_add_test(tc, test_failed_gather_fails_the_write_and_writes_nothing);
	tcase_add_test(tc, test_close_while_other_threads_use_the_file);
	tcase_add_test(tc, test_synced_subfiles_have_durable_directory_entries);
	tcase_add_test(tc, test_locked_reads_never_see_a_torn_write);
	tcase_add_test(tc, test_killed_iod_fails_fast_and_comes_back_with_its_data);
	tcase_add_test(tc, test_metad_and_iods_restart_with_data_intact);
	tcase_add_test(tc, test_full_disk_on_an_iod_reaches_the_writer);
	tcase_add_test(tc, test_collective_write_and_read_are_merged_by_the_iods);
	tcase_add_test(tc, test_planned_collective_meets_only_where_pieces_merge);
	tcase_add_test(tc, test_views_of_incommensurate_extent_write_and_read_through_iods);
	tcase_add_test(tc, test_layout_of_300k_irregular_pieces_is_stored_and_used);
	tcase_add_test(tc, test_writes_are_visible_to_other_processes_without_sync);
	tcase_add_test(tc, test_small_accesses_through_changing_views_match_a_model);
	tcase_add_test(tc, test_views_set_again_are_not_registered_again);
	tcase_add_test(tc, test_small_access_in_pieces_is_one_request_per_iod);
	tcase_add_test(tc, test_views_over_the_iod_share_fail_with_a_clear_error);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
