// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_coll_done.c -- the record of collective operations an iod
 * ran: found by its key alone, kept across a reopen (an iod's restart),
 * never answered from a torn or foreign record.
 */
#define _GNU_SOURCE
#include "iod_test.h"

#include <errno.h>
#include <sys/mman.h>

#include "check_main.h"
#include "clf.h"
#include "iod_coll_done.h"

static struct iod_coll_done *open_in(const char *dir, char *path, size_t n)
{
	struct iod_coll_done *d = NULL;

	snprintf(path, n, "%s/collectives", dir);
	ck_assert_int_eq(iod_coll_done_open(path, &d), 0);
	ck_assert_ptr_nonnull(d);
	return d;
}

START_TEST(test_a_noted_operation_is_seen_and_no_other)
{
	char *dir = tmp_dir(), path[4200];
	struct iod_coll_done *d = open_in(dir, path, sizeof(path));

	ck_assert(!iod_coll_done_seen(d, 2, 1, 0x500000007ull));
	iod_coll_done_note(d, 2, 1, 0x500000007ull);
	ck_assert(iod_coll_done_seen(d, 2, 1, 0x500000007ull));
	/* Another tag, subfile or file is another operation. */
	ck_assert(!iod_coll_done_seen(d, 2, 1, 0x500000008ull));
	ck_assert(!iod_coll_done_seen(d, 2, 0, 0x500000007ull));
	ck_assert(!iod_coll_done_seen(d, 3, 1, 0x500000007ull));
	iod_coll_done_close(d);
	rm_tree(dir);
}
END_TEST

/* What a killed iod noted, its successor finds. */
START_TEST(test_records_outlive_a_reopen)
{
	char *dir = tmp_dir(), path[4200];
	struct iod_coll_done *d = open_in(dir, path, sizeof(path));

	for (uint64_t t = 1; t <= 100; t++)
		iod_coll_done_note(d, 9, (uint32_t)(t % 4), t << 32);
	iod_coll_done_close(d);
	d = open_in(dir, path, sizeof(path));
	for (uint64_t t = 1; t <= 100; t++)
		ck_assert_msg(iod_coll_done_seen(d, 9, (uint32_t)(t % 4), t << 32),
			      "tag %llu lost", (unsigned long long)t);
	iod_coll_done_close(d);
	rm_tree(dir);
}
END_TEST

/* A record half written when the iod died reads as none. */
START_TEST(test_a_torn_record_is_not_seen)
{
	char *dir = tmp_dir(), path[4200];
	struct iod_coll_done *d = open_in(dir, path, sizeof(path));
	size_t size;
	uint8_t *map;
	int fd, hits = 0;

	iod_coll_done_note(d, 4, 0, 77);
	iod_coll_done_close(d);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	size = (size_t)lseek(fd, 0, SEEK_END);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	/* Change the tag's word of the one record in the file. */
	for (size_t i = 16; i + 8 <= size; i += 8) {
		uint64_t w;

		memcpy(&w, map + i, 8);
		if (w == 77) {
			w = 78;
			memcpy(map + i, &w, 8);
			hits++;
		}
	}
	ck_assert_int_eq(hits, 1);
	munmap(map, size);
	close(fd);
	d = open_in(dir, path, sizeof(path));
	ck_assert(!iod_coll_done_seen(d, 4, 0, 77));
	ck_assert(!iod_coll_done_seen(d, 4, 0, 78));
	iod_coll_done_close(d);
	rm_tree(dir);
}
END_TEST

/* A file that is not a record table (another version, junk) is reset. */
START_TEST(test_a_foreign_file_is_reset)
{
	char *dir = tmp_dir(), path[4200];
	struct iod_coll_done *d;
	char junk[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/collectives", dir);
	memset(junk, 0x5a, sizeof(junk));
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	d = open_in(dir, path, sizeof(path));
	ck_assert(!iod_coll_done_seen(d, 0x5a5a5a5a5a5a5a5aull, 0x5a5a5a5a,
				      0x5a5a5a5a5a5a5a5aull));
	iod_coll_done_note(d, 1, 1, 1);
	ck_assert(iod_coll_done_seen(d, 1, 1, 1));
	iod_coll_done_close(d);
	rm_tree(dir);
}
END_TEST

START_TEST(test_an_unusable_path_fails_naming_it)
{
	struct iod_coll_done *d = NULL;
	const char *path = "/nonexistent-clf-dir/collectives";

	ck_assert_int_eq(iod_coll_done_open(path, &d), -ENOENT);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), path));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iod_coll_done");
	TCase *tc = tcase_create("records");

	tcase_add_test(tc, test_a_noted_operation_is_seen_and_no_other);
	tcase_add_test(tc, test_records_outlive_a_reopen);
	tcase_add_test(tc, test_a_torn_record_is_not_seen);
	tcase_add_test(tc, test_a_foreign_file_is_reset);
	tcase_add_test(tc, test_an_unusable_path_fails_naming_it);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
