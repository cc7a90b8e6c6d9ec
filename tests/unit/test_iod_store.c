// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_store.c -- subfiles as local files: names, the descriptor
 * cache, transfers, lengths, removal, capacity and disk errors.
 */
#define _GNU_SOURCE
#include "iod_test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/statvfs.h>
#include <sys/uio.h>

#include "check_main.h"
#include "clf.h"
#include "iod_store.h"

static struct iod_store *open_store(const char *dir, unsigned max_open)
{
	struct iod_store *st = NULL;

	ck_assert_int_eq(iod_store_open(dir, max_open, &st), 0);
	ck_assert_ptr_nonnull(st);
	return st;
}

static struct iod_store_stats stats(struct iod_store *st)
{
	struct iod_store_stats s;

	iod_store_stats(st, &s);
	return s;
}

START_TEST(test_open_refuses_missing_directory)
{
	char *dir = tmp_dir();
	char path[4200];
	struct iod_store *st = NULL;

	snprintf(path, sizeof(path), "%s/nowhere", dir);
	ck_assert_int_eq(iod_store_open(path, 0, &st), -ENOENT);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "does not exist"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), path));
	rm_tree(dir);
}
END_TEST

START_TEST(test_open_refuses_a_file_as_directory)
{
	char *dir = tmp_dir();
	char path[4200];
	struct iod_store *st = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/plain", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(iod_store_open(path, 0, &st), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "not a directory"));
	rm_tree(dir);
}
END_TEST

START_TEST(test_open_refuses_unwritable_directory)
{
	char *dir = tmp_dir();
	struct iod_store *st = NULL;
	int err;

	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(iod_store_open(dir, 0, &st), -EACCES);
	} else if (mount_small_tmpfs(dir, 1 << 20, 1) == 0) {
		err = iod_store_open(dir, 0, &st);
		umount(dir);
		ck_assert_int_eq(err, -EROFS);
	} else {
		printf("SKIP test_open_refuses_unwritable_directory: root "
		       "cannot be refused by permissions and mounting a "
		       "read-only tmpfs failed: %s\n", strerror(errno));
		rm_tree(dir);
		return;
	}
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "not writable"));
	chmod(dir, 0700);
	rm_tree(dir);
}
END_TEST

START_TEST(test_subfile_path_uses_fanout_directories)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	char path[4200], want[4200];
	struct stat sb;

	snprintf(want, sizeof(want), "%s/34/0000000000001234.7", dir);
	ck_assert_int_eq(iod_store_path(st, 0x1234, 7, path, sizeof(path)),
			 (int)strlen(want));
	ck_assert_str_eq(path, want);
	ck_assert_int_eq(iod_store_path(st, 0x1234, 7, path, 10),
			 -ENAMETOOLONG);
	ck_assert_int_eq(iod_store_write(st, 0x1234, 7, 0, "x", 1), 1);
	ck_assert_int_eq(stat(want, &sb), 0);
	ck_assert_int_eq(sb.st_size, 1);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_write_then_read_is_one_call_each)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	static char in[1 << 20], out[1 << 20];
	struct iod_store_stats s0, s1;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7 + 3);
	s0 = stats(st);
	ck_assert_int_eq(iod_store_write(st, 5, 0, 4096, in, sizeof(in)),
			 sizeof(in));
	ck_assert_int_eq(iod_store_read(st, 5, 0, 4096, out, sizeof(out)),
			 sizeof(out));
	s1 = stats(st);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1);
	ck_assert_uint_eq(s1.read_calls - s0.read_calls, 1);
	ck_assert_uint_eq(s1.bytes_written - s0.bytes_written, sizeof(in));
	ck_assert_uint_eq(s1.bytes_read - s0.bytes_read, sizeof(in));
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_read_past_end_returns_zeros_then_short)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	char buf[2000];

	ck_assert_int_eq(iod_store_write(st, 9, 2, 1000, "abc", 3), 3);
	memset(buf, 'z', sizeof(buf));
	/* A hole reads as zeros; the read stops at the end of the subfile. */
	ck_assert_int_eq(iod_store_read(st, 9, 2, 0, buf, sizeof(buf)), 1003);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(buf[i], 0);
	ck_assert_mem_eq(buf + 1000, "abc", 3);
	ck_assert_int_eq(buf[1003], 'z');
	ck_assert_int_eq(iod_store_read(st, 9, 2, 1002, buf, 10), 1);
	ck_assert_int_eq(buf[0], 'c');
	ck_assert_int_eq(iod_store_read(st, 9, 2, 5000, buf, 10), 0);
	ck_assert_int_eq(iod_store_read(st, 9, 2, -1, buf, 10), -EINVAL);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_missing_subfile_reads_as_empty)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	struct iod_subfile *sf = NULL;
	int64_t len = -1;
	char buf[16];

	ck_assert_int_eq(iod_store_read(st, 77, 0, 0, buf, sizeof(buf)), 0);
	ck_assert_int_eq(iod_store_size(st, 77, 0, &len), 0);
	ck_assert_int_eq(len, 0);
	ck_assert_int_eq(iod_store_sync(st, 77, 0), 0);
	ck_assert_int_eq(iod_subfile_get(st, 77, 0, 0, &sf), -ENOENT);
	ck_assert_ptr_null(sf);
	/* Truncating to 0 does not create it either. */
	ck_assert_int_eq(iod_store_truncate(st, 77, 0, 0), 0);
	ck_assert_int_eq(iod_subfile_get(st, 77, 0, 0, &sf), -ENOENT);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_vectored_io_moves_every_iovec)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	char a[100], b[1], c[5000], got[5101], x[3000], y[2101];
	struct iovec in[4] = {
		{ a, sizeof(a) }, { b, 0 }, { b, sizeof(b) }, { c, sizeof(c) },
	};
	struct iovec out[2] = { { x, sizeof(x) }, { y, sizeof(y) } };
	struct iod_subfile *sf;
	struct iod_range r;

	memset(a, 'a', sizeof(a));
	b[0] = 'b';
	memset(c, 'c', sizeof(c));
	ck_assert_int_eq(iod_subfile_get(st, 1, 1, IOD_CREATE, &sf), 0);
	iod_rangelock_lock(&sf->lock, &r, 10, 10 + 5101);
	ck_assert_int_eq(iod_subfile_pwritev(sf, in, 4, 10), 5101);
	iod_rangelock_unlock(&sf->lock, &r);
	/* Ask for one byte more than there is: short at end of file. */
	y[2100] = 'q';
	ck_assert_int_eq(iod_subfile_preadv(sf, out, 2, 11), 5100);
	memcpy(got, x, sizeof(x));
	memcpy(got + sizeof(x), y, sizeof(y));
	ck_assert_mem_eq(got, a + 1, 99);
	ck_assert_int_eq(got[99], 'b');
	ck_assert_mem_eq(got + 100, c, 5000);
	ck_assert_int_eq(y[2100], 'q');
	iod_subfile_put(sf);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_short_and_interrupted_transfers_are_completed)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	static char a[1000], c[4100], x[3000], y[2101];
	struct iovec in[4] = {
		{ a, sizeof(a) }, { c, 0 }, { c, 1 }, { c + 1, 4099 },
	};
	struct iovec out[2] = { { x, sizeof(x) }, { y, sizeof(y) } };
	struct iod_store_stats s0, s1;
	struct iod_subfile *sf;
	struct iod_range r;

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (char)(i % 251);
	for (size_t i = 0; i < sizeof(c); i++)
		c[i] = (char)(i % 13 + 1);
	ck_assert_int_eq(iod_subfile_get(st, 1, 0, IOD_CREATE, &sf), 0);
	iod_store_limit_io(st, 7);
	iod_store_fail_next_io(st, EINTR);
	s0 = stats(st);
	iod_rangelock_lock(&sf->lock, &r, 0, 5100);
	ck_assert_int_eq(iod_subfile_pwritev(sf, in, 4, 0), 5100);
	iod_rangelock_unlock(&sf->lock, &r);
	s1 = stats(st);
	/* The interrupted call, then 5100 bytes 7 at a time. */
	ck_assert_uint_eq(s1.write_calls - s0.write_calls, 1 + 729);
	/* One byte more than there is: short at end of file. */
	ck_assert_int_eq(iod_subfile_preadv(sf, out, 2, 0), 5100);
	ck_assert_mem_eq(x, a, sizeof(a));
	ck_assert_mem_eq(x + sizeof(a), c, sizeof(x) - sizeof(a));
	ck_assert_mem_eq(y, c + sizeof(x) - sizeof(a), 2100);
	iod_store_limit_io(st, 0);
	s0 = stats(st);
	ck_assert_int_eq(iod_subfile_pread(sf, x, sizeof(x), 0), sizeof(x));
	ck_assert_uint_eq(stats(st).read_calls - s0.read_calls, 1);
	iod_subfile_put(sf);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_truncate_sets_length_and_cuts_data)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	int64_t len;
	char buf[8];

	ck_assert_int_eq(iod_store_write(st, 3, 0, 0, "12345678", 8), 8);
	ck_assert_int_eq(iod_store_truncate(st, 3, 0, 3), 0);
	ck_assert_int_eq(iod_store_size(st, 3, 0, &len), 0);
	ck_assert_int_eq(len, 3);
	ck_assert_int_eq(iod_store_truncate(st, 3, 0, 6), 0);
	ck_assert_int_eq(iod_store_read(st, 3, 0, 0, buf, 8), 6);
	ck_assert_mem_eq(buf, "123\0\0\0", 6);
	/* Truncation creates a subfile that did not exist. */
	ck_assert_int_eq(iod_store_truncate(st, 3, 1, 4096), 0);
	ck_assert_int_eq(iod_store_size(st, 3, 1, &len), 0);
	ck_assert_int_eq(len, 4096);
	ck_assert_int_eq(iod_store_truncate(st, 3, 0, -1), -EINVAL);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

struct truncation {
	struct iod_store *st;
	atomic_int done;
};

static void *truncate_to_10(void *arg)
{
	struct truncation *t = arg;

	if (iod_store_truncate(t->st, 6, 0, 10))
		return (void *)1;
	atomic_store(&t->done, 1);
	return NULL;
}

START_TEST(test_truncate_waits_for_writes_in_flight_past_the_new_end)
{
	/*
	 * A sieving write holding [50, 60) would rewrite those bytes after
	 * a truncation to 10 and resurrect them: truncation must wait.
	 */
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	struct truncation t = { .st = st };
	struct iod_subfile *sf;
	struct iod_range r;
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };
	pthread_t th;
	void *ret;
	int64_t len;

	ck_assert_int_eq(iod_store_write(st, 6, 0, 0, "0123456789abcdef", 16),
			 16);
	ck_assert_int_eq(iod_subfile_get(st, 6, 0, 0, &sf), 0);
	iod_rangelock_lock(&sf->lock, &r, 50, 60);
	ck_assert_int_eq(pthread_create(&th, NULL, truncate_to_10, &t), 0);
	nanosleep(&ms50, NULL);
	ck_assert_int_eq(atomic_load(&t.done), 0);
	ck_assert_int_eq(iod_store_size(st, 6, 0, &len), 0);
	ck_assert_int_eq(len, 16);
	iod_rangelock_unlock(&sf->lock, &r);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_ptr_null(ret);
	ck_assert_int_eq(atomic_load(&t.done), 1);
	ck_assert_int_eq(iod_store_size(st, 6, 0, &len), 0);
	ck_assert_int_eq(len, 10);
	iod_subfile_put(sf);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_remove_missing_subfile_is_not_an_error)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);

	ck_assert_int_eq(iod_store_remove(st, 42, 0), 0);
	ck_assert_int_eq(iod_store_write(st, 42, 0, 0, "x", 1), 1);
	ck_assert_int_eq(iod_store_remove(st, 42, 0), 0);
	ck_assert_int_eq(iod_store_remove(st, 42, 0), 0);
	ck_assert_int_eq(iod_store_remove_file(st, 42), 0);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_write_after_remove_goes_to_a_new_subfile)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	struct iod_subfile *held;
	int64_t len;
	char buf[8];

	ck_assert_int_eq(iod_store_write(st, 8, 0, 0, "old data", 8), 8);
	ck_assert_int_eq(iod_subfile_get(st, 8, 0, 0, &held), 0);
	/* Removed while a request still holds it. */
	ck_assert_int_eq(iod_store_remove(st, 8, 0), 0);
	ck_assert_int_eq(iod_store_size(st, 8, 0, &len), 0);
	ck_assert_int_eq(len, 0);
	ck_assert_int_eq(iod_store_write(st, 8, 0, 4, "new", 3), 3);
	ck_assert_int_eq(iod_store_read(st, 8, 0, 0, buf, 8), 7);
	ck_assert_mem_eq(buf, "\0\0\0\0new", 7);
	/* The holder still reads the removed file through its handle. */
	ck_assert_int_eq(iod_subfile_pread(held, buf, 8, 0), 8);
	ck_assert_mem_eq(buf, "old data", 8);
	iod_subfile_put(held);
	ck_assert_uint_eq(stats(st).open_now, 1);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_remove_file_removes_all_its_subfiles_and_no_other)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	int64_t len;

	/* 0x100 and 0x200 share the fan-out directory 00. */
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(iod_store_write(st, 0x100, i, 0, "ab", 2), 2);
	ck_assert_int_eq(iod_store_write(st, 0x100, 0xffffffffu, 0, "h", 1),
			 1);
	ck_assert_int_eq(iod_store_write(st, 0x200, 0, 0, "cd", 2), 2);
	ck_assert_int_eq(iod_store_sync_file(st, 0x100), 0);
	ck_assert_int_eq(iod_store_remove_file(st, 0x100), 4);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(iod_store_size(st, 0x100, i, &len), 0);
		ck_assert_int_eq(len, 0);
	}
	ck_assert_int_eq(iod_store_size(st, 0x200, 0, &len), 0);
	ck_assert_int_eq(len, 2);
	ck_assert_int_eq(iod_store_remove_file(st, 0x100), 0);
	ck_assert_int_eq(iod_store_sync_all(st), 0);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_cache_keeps_at_most_max_open_in_lru_order)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 4);
	struct iod_subfile *sf;
	uint64_t opens;

	for (uint32_t i = 0; i < 10; i++) {
		ck_assert_int_eq(iod_subfile_get(st, 1, i, IOD_CREATE, &sf), 0);
		iod_subfile_put(sf);
		ck_assert_uint_le(stats(st).open_now, 4);
	}
	opens = stats(st).opens;
	ck_assert_uint_eq(opens, 10);
	/* 6..9 are cached: no open.  Touch 6 so that 7 is the oldest. */
	for (uint32_t i = 6; i < 10; i++) {
		ck_assert_int_eq(iod_subfile_get(st, 1, i, 0, &sf), 0);
		iod_subfile_put(sf);
	}
	ck_assert_int_eq(iod_subfile_get(st, 1, 6, 0, &sf), 0);
	iod_subfile_put(sf);
	ck_assert_uint_eq(stats(st).opens, opens);
	ck_assert_int_eq(iod_subfile_get(st, 1, 0, 0, &sf), 0); /* evicts 7 */
	iod_subfile_put(sf);
	ck_assert_uint_eq(stats(st).opens, opens + 1);
	ck_assert_int_eq(iod_subfile_get(st, 1, 6, 0, &sf), 0); /* cached */
	iod_subfile_put(sf);
	ck_assert_uint_eq(stats(st).opens, opens + 1);
	ck_assert_int_eq(iod_subfile_get(st, 1, 7, 0, &sf), 0); /* reopened */
	iod_subfile_put(sf);
	ck_assert_uint_eq(stats(st).opens, opens + 2);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_file_in_use_is_never_closed)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 2);
	struct iod_subfile *held, *again, *sf;
	char buf[4];

	ck_assert_int_eq(iod_subfile_get(st, 2, 0, IOD_CREATE, &held), 0);
	for (uint32_t i = 1; i < 20; i++) {
		ck_assert_int_eq(iod_subfile_get(st, 2, i, IOD_CREATE, &sf), 0);
		iod_subfile_put(sf);
	}
	ck_assert_int_ge(fcntl(held->fd, F_GETFD), 0);
	ck_assert_int_eq(iod_store_write(st, 2, 0, 0, "live", 4), 4);
	ck_assert_int_eq(iod_subfile_pread(held, buf, 4, 0), 4);
	ck_assert_mem_eq(buf, "live", 4);
	/* One handle per subfile: a second get shares it. */
	ck_assert_int_eq(iod_subfile_get(st, 2, 0, 0, &again), 0);
	ck_assert_ptr_eq(again, held);
	iod_subfile_put(again);
	iod_subfile_put(held);
	ck_assert_uint_le(stats(st).open_now, 2);
	iod_subfile_put(NULL);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

struct churn {
	struct iod_store *st;
	int seed;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	char byte = (char)c->seed;

	for (int i = 0; i < 2000; i++) {
		uint32_t index = (uint32_t)((i * 7 + c->seed) % 5);
		struct iod_subfile *sf;

		if (iod_subfile_get(c->st, 4, index, IOD_CREATE, &sf))
			return (void *)1;
		if (iod_subfile_pwrite(sf, &byte, 1, c->seed) != 1)
			return (void *)1;
		iod_subfile_put(sf);
	}
	return NULL;
}

START_TEST(test_concurrent_gets_and_puts_keep_the_cache_consistent)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 2);
	struct churn c[4];
	pthread_t t[4];
	char buf[4];

	for (int i = 0; i < 4; i++) {
		c[i] = (struct churn){ .st = st, .seed = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn_thread,
						&c[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	ck_assert_uint_le(stats(st).open_now, 2);
	for (uint32_t index = 0; index < 5; index++) {
		ck_assert_int_eq(iod_store_read(st, 4, index, 0, buf, 4), 4);
		ck_assert_mem_eq(buf, "\0\1\2\3", 4);
	}
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_enospc_reaches_caller)
{
	char *dir = tmp_dir();
	static char big[2 << 20];
	struct iod_store *st;
	char msg[512];
	ssize_t n;

	if (mount_small_tmpfs(dir, 1 << 20, 0) != 0) {
		printf("SKIP test_enospc_reaches_caller: cannot mount a small "
		       "tmpfs (%s); needs root\n", strerror(errno));
		rm_tree(dir);
		return;
	}
	/* Unmount before asserting, so that a failure leaves no mount. */
	if (iod_store_open(dir, 0, &st) == 0) {
		memset(big, 'x', sizeof(big));
		n = iod_store_write(st, 0x12, 3, 0, big, sizeof(big));
		snprintf(msg, sizeof(msg), "%s", CLF_Last_error());
		iod_store_free(st);
	} else {
		n = 0;
		snprintf(msg, sizeof(msg), "open: %s", CLF_Last_error());
	}
	ck_assert_int_eq(umount(dir), 0);
	rm_tree(dir);
	ck_assert_int_eq(n, -ENOSPC);
	ck_assert_str_eq(msg,
			 "iod: cannot write subfile 3 of file 0x12: No space left on device");
}
END_TEST

START_TEST(test_injected_eio_reaches_caller)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	char buf[4];

	ck_assert_int_eq(iod_store_write(st, 0x12, 1, 0, "abcd", 4), 4);
	iod_store_fail_next_io(st, EIO);
	ck_assert_int_eq(iod_store_read(st, 0x12, 1, 0, buf, 4), -EIO);
	ck_assert_str_eq(CLF_Last_error(),
			 "iod: cannot read subfile 1 of file 0x12: Input/output error");
	/* One fault only. */
	ck_assert_int_eq(iod_store_read(st, 0x12, 1, 0, buf, 4), 4);
	iod_store_fail_next_io(st, EIO);
	ck_assert_int_eq(iod_store_write(st, 0x12, 1, 0, "abcd", 4), -EIO);
	iod_store_free(st);
	rm_tree(dir);
}
END_TEST

START_TEST(test_statfs_reports_the_storage_file_system)
{
	char *dir = tmp_dir();
	struct iod_store *st = open_store(dir, 0);
	struct iod_statfs fs;
	struct statvfs sv;

	ck_assert_int_eq(iod_store_statfs(st, &fs), 0);
	ck_assert_int_eq(statvfs(dir, &sv), 0);
	ck_assert_uint_eq(fs.bytes_total, (uint64_t)sv.f_blocks * sv.f_frsize);
	ck_assert_uint_le(fs.bytes_avail, fs.bytes_free);
	ck_assert_uint_le(fs.bytes_free, fs.bytes_total);
	ck_assert_uint_eq(fs.name_max, sv.f_namemax);
	ck_assert_uint_gt(fs.block_size, 0);
	iod_store_free(st);
	iod_store_free(NULL);
	rm_tree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_store");
	TCase *tc = tcase_create("store");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_open_refuses_missing_directory);
	tcase_add_test(tc, test_open_refuses_a_file_as_directory);
	tcase_add_test(tc, test_open_refuses_unwritable_directory);
	tcase_add_test(tc, test_subfile_path_uses_fanout_directories);
	tcase_add_test(tc, test_write_then_read_is_one_call_each);
	tcase_add_test(tc, test_read_past_end_returns_zeros_then_short);
	tcase_add_test(tc, test_missing_subfile_reads_as_empty);
	tcase_add_test(tc, test_vectored_io_moves_every_iovec);
	tcase_add_test(tc, test_short_and_interrupted_transfers_are_completed);
	tcase_add_test(tc, test_truncate_sets_length_and_cuts_data);
	tcase_add_test(tc, test_truncate_waits_for_writes_in_flight_past_the_new_end);
	tcase_add_test(tc, test_remove_missing_subfile_is_not_an_error);
	tcase_add_test(tc, test_write_after_remove_goes_to_a_new_subfile);
	tcase_add_test(tc, test_remove_file_removes_all_its_subfiles_and_no_other);
	tcase_add_test(tc, test_cache_keeps_at_most_max_open_in_lru_order);
	tcase_add_test(tc, test_file_in_use_is_never_closed);
	tcase_add_test(tc, test_concurrent_gets_and_puts_keep_the_cache_consistent);
	tcase_add_test(tc, test_enospc_reaches_caller);
	tcase_add_test(tc, test_injected_eio_reaches_caller);
	tcase_add_test(tc, test_statfs_reports_the_storage_file_system);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
