// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_append.c -- O_APPEND is atomic across clients: processes,
 * each with its own connections, appending to one file through libclf
 * never overwrite each other's records (clf.h, "O_APPEND").
 *
 * Every test starts its own metad and iods (instance.h).  Records have
 * distinct contents and lengths that cross stripe boundaries; the file
 * must hold each record exactly once, whole, and nothing else.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "instance.h"

#define WRITERS 3
#define RECORDS 150
#define RECORD_MAX 200

static struct instance inst;

/*
 * With holes: the view of the second test, the first 100 bytes of every
 * 200, so that where a record's bytes end depends on where it starts.
 */
static bool holes;

/* Writer 0 holds a write lock on the whole file (l_len 0) meanwhile. */
static bool locked;

static int set_view(int fd)
{
	struct clf_view v = { 0, NULL };
	int err;

	if (!holes)
		return 0;
	v.type = CLF_Type_vector(0, 99, 200, 1, CLF_BYTE);
	if (!v.type)
		return -ENOMEM;
	err = CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v);
	CLF_Type_free(&v.type);
	return err;
}

static void start(int niods)
{
	ck_assert_int_eq(instance_start_native(&inst, niods, 5000, -1), 0);
}

static void stop(void)
{
	instance_stop_native(&inst);
}

/*
 * Record r of writer w: "<w> <r> " then a filler of w's letter, of a
 * length that varies with r, then '\n'; 20..RECORD_MAX bytes.
 */
static int record(int w, int r, char *buf)
{
	int n = snprintf(buf, RECORD_MAX, "%d %d ", w, r);
	int len = 20 + (r * 37 + w * 11) % (RECORD_MAX - 20);

	memset(buf + n, 'a' + w, len - n - 1);
	buf[len - 1] = '\n';
	return len;
}

static double elapsed_us(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e6 +
	       (t1.tv_nsec - t0->tv_nsec) / 1e3;
}

/* A writer process: its own connections, one write(2) per record. */
static void append_records(const char *path, int w, int ready_fd, int go_fd)
{
	char buf[RECORD_MAX], c;
	struct timespec t0;
	int fd;

	CLF_finalize();
	if (CLF_init(NULL))
		_exit(10);
	fd = CLF_open(path, O_WRONLY | O_APPEND);
	if (fd < 0 || set_view(fd))
		_exit(11);
	if (locked && w == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		if (CLF_fcntl(fd, CLF_FCNTL_SETLKW, &fl))
			_exit(15);
	}
	/* Everyone starts together, so that the appends do race. */
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		_exit(12);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < RECORDS; r++) {
		int len = record(w, r, buf);

		if (CLF_write(fd, buf, len) != len) {
			fprintf(stderr, "writer %d: %s\n", w, CLF_Last_error());
			_exit(13);
		}
	}
	fprintf(stderr, "writer %d: %.1f us per append (%d racing)\n", w,
		elapsed_us(&t0) / RECORDS, WRITERS);
	_exit(CLF_close(fd) ? 14 : 0);
}

/* Every record of every writer once, whole, in a file of exactly them. */
static void check_records(const char *path)
{
	int seen[WRITERS][RECORDS] = { { 0 } };
	int64_t want = 0, off = 0, size;
	char rec[RECORD_MAX], *buf;
	struct stat st;
	int fd;

	for (int w = 0; w < WRITERS; w++)
		for (int r = 0; r < RECORDS; r++)
			want += record(w, r, rec);
	/* Through the view: 100 bytes of every 200, the last block full
	 * up to where the last record ends. */
	size = holes ? (want - 1) / 100 * 200 + (want - 1) % 100 + 1 : want;
	ck_assert_int_eq(CLF_stat(path, &st), 0);
	ck_assert_msg(st.st_size == size, "%s is %lld bytes, the records %lld",
		      path, (long long)st.st_size, (long long)size);
	buf = malloc(want + 1);
	fd = CLF_open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(set_view(fd), 0);
	ck_assert_int_eq(CLF_read(fd, buf, want + 1), want);
	ck_assert_int_eq(CLF_close(fd), 0);
	buf[want] = '\0';
	while (off < want) {
		int w, r, len;

		ck_assert_msg(sscanf(buf + off, "%d %d ", &w, &r) == 2 &&
			      w >= 0 && w < WRITERS && r >= 0 && r < RECORDS,
			      "no record at byte %lld: '%.40s'",
			      (long long)off, buf + off);
		len = record(w, r, rec);
		ck_assert_msg(off + len <= want &&
			      memcmp(buf + off, rec, len) == 0,
			      "record %d of writer %d at byte %lld is damaged",
			      r, w, (long long)off);
		ck_assert_msg(!seen[w][r]++, "record %d of writer %d twice", r,
			      w);
		off += len;
	}
	free(buf);
}

/* WRITERS processes append RECORDS records each to path at once. */
static void race_appenders(const char *path)
{
	int ready[2], go[2], status;
	pid_t pid[WRITERS];
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	for (int w = 0; w < WRITERS; w++) {
		pid[w] = fork();
		ck_assert_int_ge(pid[w], 0);
		if (pid[w] == 0)
			append_records(path, w, ready[1], go[0]);
	}
	for (int w = 0; w < WRITERS; w++)
		ck_assert_int_eq(read(ready[0], &c, 1), 1);
	for (int w = 0; w < WRITERS; w++)
		ck_assert_int_eq(write(go[1], "g", 1), 1);
	for (int w = 0; w < WRITERS; w++) {
		ck_assert_int_eq(waitpid(pid[w], &status, 0), pid[w]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "writer %d ended with status %d", w, status);
	}
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/*
 * Round robin over 3 iods of 256-byte stripes: records cross stripes
 * and iods, so a half-written neighbour or an overlap shows.
 */
START_TEST(test_appends_of_several_processes_keep_every_record)
{
	CLF_Datatype t[3];
	struct clf_subfiles sf = { 0, 3, t };
	int fd;

	start(3);
	for (int j = 0; j < 3; j++)
		ck_assert_ptr_nonnull(t[j] = CLF_Type_vector(j * 256,
				j * 256 + 255, 768, 1, CLF_BYTE));
	fd = CLF_open("/log", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SUBFILES, &sf) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	holes = false;
	race_appenders("/log");
	check_records("/log");
	for (int j = 0; j < 3; j++)
		CLF_Type_free(&t[j]);
	stop();
}
END_TEST

/*
 * Appends take no byte-range lock and wait for none: a process holding
 * a write lock on the whole file appends, and so do the others.
 */
START_TEST(test_a_whole_file_lock_neither_blocks_nor_deadlocks_appends)
{
	int fd;

	start(2);
	fd = CLF_open("/locked", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	holes = false;
	locked = true;
	race_appenders("/locked");
	locked = false;
	check_records("/locked");
	stop();
}
END_TEST

/*
 * Through a view with holes the file bytes of a record depend on where
 * it starts: the range is asked for exactly, and again when another
 * append came first.
 */
START_TEST(test_appends_through_a_view_with_holes_keep_every_record)
{
	int fd;

	start(2);
	fd = CLF_open("/sparse", O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	holes = true;
	race_appenders("/sparse");
	check_records("/sparse");
	stop();
}
END_TEST

/*
 * metad remembers where the last append ended (for appends still on
 * their way); a truncation makes it forget, so the next append starts
 * at the new end, not after the old records (a hole).
 */
START_TEST(test_an_append_after_a_truncation_starts_at_the_new_end)
{
	char buf[64];
	struct stat st;
	int fd;

	start(2);
	fd = CLF_open("/trunc", O_CREAT | O_RDWR | O_APPEND, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(CLF_write(fd, "0123456789", 10), 10);
	ck_assert_int_eq(CLF_ftruncate(fd, 5), 0);
	ck_assert_int_eq(CLF_write(fd, "abc", 3), 3);
	ck_assert_int_eq(CLF_stat("/trunc", &st), 0);
	ck_assert_int_eq(st.st_size, 8);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_read(fd, buf, sizeof(buf)), 8);
	ck_assert_int_eq(memcmp(buf, "01234abc", 8), 0);
	ck_assert_int_eq(CLF_close(fd), 0);
	stop();
}
END_TEST

/*
 * Against a metad older than protocol 1.5 (played here by a client that
 * offers 1.4) an O_APPEND write cannot be made atomic: it fails with
 * EOPNOTSUPP and a message rather than overwrite others' records.
 */
START_TEST(test_appends_to_an_older_metad_are_refused_with_a_message)
{
	char buf[8] = { 0 };
	int fd;

	start(2);
	CLF_finalize();
	ck_assert_int_eq(setenv("CLF_TEST_CLIENT_MINOR", "4", 1), 0);
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	fd = CLF_open("/old", O_CREAT | O_WRONLY | O_APPEND, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, "record\n", 7), -EOPNOTSUPP);
	ck_assert_msg(strstr(CLF_Last_error(), "protocol 1.4") &&
		      strstr(CLF_Last_error(), "O_APPEND"), "message: %s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	/* Everything else still works at 1.4. */
	fd = CLF_open("/old", O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_write(fd, "plain\n", 6), 6);
	ck_assert_int_eq(CLF_lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(CLF_read(fd, buf, sizeof(buf)), 6);
	ck_assert_int_eq(memcmp(buf, "plain\n", 6), 0);
	ck_assert_int_eq(CLF_close(fd), 0);
	unsetenv("CLF_TEST_CLIENT_MINOR");
	stop();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("native_append");
	TCase *tc = tcase_create("against real daemons");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_appends_of_several_processes_keep_every_record);
	tcase_add_test(tc, test_appends_through_a_view_with_holes_keep_every_record);
	tcase_add_test(tc, test_a_whole_file_lock_neither_blocks_nor_deadlocks_appends);
	tcase_add_test(tc, test_an_append_after_a_truncation_starts_at_the_new_end);
	tcase_add_test(tc, test_appends_to_an_older_metad_are_refused_with_a_message);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
