// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_namespace.c -- the metad directory tree: create, lookup, path
 * resolution, readdir paging, rename, unlink, rmdir.  Each test has its
 * own store in its own directory and ends by checking the store's
 * invariants.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "mds_fixture.h"

static uint64_t mkdir_(uint64_t parent, const char *name)
{
	struct mds_attr a;

	expect_err(mds_mkdir(s, parent, name, 0755, 1000, 100, &a), 0);
	return a.ino;
}

static uint64_t ino_at(const char *path)
{
	struct mds_attr a;

	expect_err(mds_resolve(s, MDS_ROOT_INO, path, &a, NULL), 0);
	return a.ino;
}

/* Set a directory's mtime to 1 so that a later change must show. */
static void age(uint64_t ino)
{
	struct mds_setattr set = { .mask = MDS_SETATTR_MTIME, .mtime = 1 };

	expect_err(mds_setattr(s, ino, &set, NULL), 0);
}

START_TEST(test_create_then_lookup_finds_file_with_layout)
{
	struct mds_layout *l = rr_layout(65536, 4), *got = NULL;
	struct mds_attr a, b;

	expect_err(mds_create(s, MDS_ROOT_INO, "data", 0640, 1000, 100, l, &a),
		   0);
	ck_assert_uint_gt(a.ino, MDS_ROOT_INO);
	ck_assert_uint_eq(a.mode, S_IFREG | 0640);
	ck_assert_uint_eq(a.uid, 1000);
	ck_assert_uint_eq(a.gid, 100);
	ck_assert_uint_eq(a.nlink, 1);
	ck_assert_int_eq(a.size, 0);
	ck_assert(a.has_layout);
	ck_assert_int_eq(a.mtime, a.ctime);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "data", &b, &got), 0);
	assert_same_attr(&a, &b);
	assert_same_layout(l, got);
	mds_layout_free(got);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "data", &b, NULL), 0);
	ck_assert_uint_eq(b.ino, a.ino);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_file_created_without_layout_has_none)
{
	struct mds_layout *got = (void *)1;
	struct mds_attr a;

	mkfile(MDS_ROOT_INO, "empty", NULL);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "empty", &a, &got), 0);
	ck_assert_ptr_null(got);
	ck_assert(!a.has_layout);
}
END_TEST

START_TEST(test_create_refuses_existing_name)
{
	struct mds_attr a;

	mkfile(MDS_ROOT_INO, "data", NULL);
	mkdir_(MDS_ROOT_INO, "d");
	expect_err(mds_create(s, MDS_ROOT_INO, "data", 0644, 0, 0, NULL, &a),
		   -EEXIST);
	ck_assert_str_eq(CLF_Last_error(),
			 "mds: cannot create 'data' in directory 1: file exists");
	expect_err(mds_create(s, MDS_ROOT_INO, "d", 0644, 0, 0, NULL, &a),
		   -EEXIST);
	expect_err(mds_mkdir(s, MDS_ROOT_INO, "data", 0755, 0, 0, &a), -EEXIST);
	expect_err(mds_mkdir(s, MDS_ROOT_INO, "d", 0755, 0, 0, &a), -EEXIST);
}
END_TEST

START_TEST(test_create_needs_an_existing_directory)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_attr a;

	expect_err(mds_create(s, 999, "x", 0644, 0, 0, NULL, &a), -ENOENT);
	expect_err(mds_create(s, f, "x", 0644, 0, 0, NULL, &a), -ENOTDIR);
	expect_err(mds_mkdir(s, f, "x", 0755, 0, 0, &a), -ENOTDIR);
	expect_err(mds_create(s, MDS_ROOT_INO, "x", 010644, 0, 0, NULL, &a),
		   -EINVAL);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "x", &a, NULL), -ENOENT);
}
END_TEST

START_TEST(test_names_are_validated)
{
	const char *bad[] = { "", ".", "..", "a/b", "/", "a/" };
	char longest[MDS_NAME_MAX + 2];
	struct mds_dirent ents[4];
	struct mds_attr a;
	bool eof;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_err(mds_create(s, MDS_ROOT_INO, bad[i], 0644, 0, 0, NULL,
				      &a), -EINVAL);
		expect_err(mds_mkdir(s, MDS_ROOT_INO, bad[i], 0755, 0, 0, &a),
			   -EINVAL);
		expect_err(mds_lookup(s, MDS_ROOT_INO, bad[i], &a, NULL),
			   -EINVAL);
		expect_err(mds_unlink(s, MDS_ROOT_INO, bad[i], NULL), -EINVAL);
	}
	expect_err(mds_create(s, MDS_ROOT_INO, NULL, 0644, 0, 0, NULL, &a),
		   -EINVAL);
	memset(longest, 'n', sizeof(longest));
	longest[MDS_NAME_MAX + 1] = '\0';
	expect_err(mds_create(s, MDS_ROOT_INO, longest, 0644, 0, 0, NULL, &a),
		   -ENAMETOOLONG);
	longest[MDS_NAME_MAX] = '\0';
	mkfile(MDS_ROOT_INO, longest, NULL);
	expect_err(mds_lookup(s, MDS_ROOT_INO, longest, &a, NULL), 0);
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 4, &eof), 1);
	ck_assert_str_eq(ents[0].name, longest);
	/* Names are bytes: anything but '/' and NUL. */
	mkfile(MDS_ROOT_INO, "\xff .x\t", NULL);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "\xff .x\t", &a, NULL), 0);
}
END_TEST

START_TEST(test_create_and_unlink_update_parent_times)
{
	struct mds_attr before, after;
	uint64_t d = mkdir_(MDS_ROOT_INO, "d");

	age(d);
	before = attr_of(d);
	ck_assert_int_eq(before.mtime, 1);
	mkfile(d, "f", NULL);
	after = attr_of(d);
	ck_assert_int_gt(after.mtime, 1);
	ck_assert_int_eq(after.mtime, after.ctime);
	ck_assert_int_ge(after.ctime, before.ctime);
	age(d);
	expect_err(mds_unlink(s, d, "f", NULL), 0);
	ck_assert_int_gt(attr_of(d).mtime, 1);
	age(d);
	mkdir_(d, "sub");
	ck_assert_int_gt(attr_of(d).mtime, 1);
	age(d);
	expect_err(mds_rmdir(s, d, "sub"), 0);
	ck_assert_int_gt(attr_of(d).mtime, 1);
}
END_TEST

START_TEST(test_mkdir_counts_links)
{
	uint64_t a = mkdir_(MDS_ROOT_INO, "a");
	struct mds_attr at = attr_of(a);

	ck_assert_uint_eq(at.mode, S_IFDIR | 0755);
	ck_assert_uint_eq(at.nlink, 2);
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 3);
	mkdir_(a, "b");
	mkfile(a, "f", NULL);
	ck_assert_uint_eq(attr_of(a).nlink, 3);
	expect_err(mds_rmdir(s, a, "b"), 0);
	ck_assert_uint_eq(attr_of(a).nlink, 2);
}
END_TEST

START_TEST(test_resolve_follows_absolute_and_relative_paths)
{
	struct mds_layout *l = rr_layout(4096, 2), *got = NULL;
	uint64_t a = mkdir_(MDS_ROOT_INO, "a");
	uint64_t b = mkdir_(a, "b");
	uint64_t f = mkfile(b, "f", l);
	struct mds_attr at;

	ck_assert_uint_eq(ino_at("/a/b/f"), f);
	ck_assert_uint_eq(ino_at("//a/./b/../b//f"), f);
	ck_assert_uint_eq(ino_at("/a/b/"), b);
	ck_assert_uint_eq(ino_at("/"), MDS_ROOT_INO);
	ck_assert_uint_eq(ino_at("/.."), MDS_ROOT_INO);
	ck_assert_uint_eq(ino_at("a/b"), b);
	expect_err(mds_resolve(s, a, "b/f", &at, &got), 0);
	ck_assert_uint_eq(at.ino, f);
	assert_same_layout(l, got);
	mds_layout_free(got);
	expect_err(mds_resolve(s, b, "../../a", &at, NULL), 0);
	ck_assert_uint_eq(at.ino, a);
	expect_err(mds_resolve(s, b, "/a", &at, NULL), 0);
	ck_assert_uint_eq(at.ino, a);
	expect_err(mds_resolve(s, b, ".", &at, NULL), 0);
	ck_assert_uint_eq(at.ino, b);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_resolve_reports_missing_and_not_directory)
{
	uint64_t a = mkdir_(MDS_ROOT_INO, "a");
	uint64_t b = mkdir_(a, "b");
	uint64_t f = mkfile(b, "f", NULL);
	char path[MDS_PATH_MAX + 2];
	struct mds_attr at;

	expect_err(mds_resolve(s, MDS_ROOT_INO, "/a/x/f", &at, NULL), -ENOENT);
	ck_assert_str_eq(CLF_Last_error(),
		"mds: cannot resolve '/a/x/f': '/a/x' does not exist");
	expect_err(mds_resolve(s, MDS_ROOT_INO, "/a/b/f/g", &at, NULL),
		   -ENOTDIR);
	ck_assert_str_eq(CLF_Last_error(),
		"mds: cannot resolve '/a/b/f/g': '/a/b/f' is not a directory");
	expect_err(mds_resolve(s, MDS_ROOT_INO, "/a/b/f/", &at, NULL),
		   -ENOTDIR);
	expect_err(mds_resolve(s, MDS_ROOT_INO, "", &at, NULL), -ENOENT);
	expect_err(mds_resolve(s, f, "x", &at, NULL), -ENOTDIR);
	expect_err(mds_resolve(s, 4242, "x", &at, NULL), -ENOENT);
	expect_err(mds_resolve(s, MDS_ROOT_INO, NULL, &at, NULL), -EINVAL);
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[MDS_NAME_MAX + 2] = '\0';
	expect_err(mds_resolve(s, MDS_ROOT_INO, path, &at, NULL),
		   -ENAMETOOLONG);
	for (size_t i = 0; i < sizeof(path) - 1; i++)
		path[i] = i % 2 ? 'a' : '/';
	path[sizeof(path) - 1] = '\0';
	expect_err(mds_resolve(s, MDS_ROOT_INO, path, &at, NULL),
		   -ENAMETOOLONG);
	ck_assert_uint_eq(b, ino_at("/a/b"));
}
END_TEST

/* Page through dir, max entries at a time; count each name's sightings. */
static uint32_t read_all(uint64_t d, uint32_t max, int *seen, int nseen,
			 uint32_t *pages)
{
	struct mds_dirent ents[64];
	uint64_t cookie = 0;
	uint32_t total = 0;
	bool eof = false;

	ck_assert_uint_le(max, 64);
	*pages = 0;
	while (!eof) {
		int n = mds_readdir(s, d, cookie, ents, max, &eof);

		ck_assert_msg(n >= 0, "readdir: %d %s", n, CLF_Last_error());
		ck_assert_int_le(n, max);
		ck_assert(eof || n == (int)max);
		for (int i = 0; i < n; i++) {
			int k = -1;

			ck_assert_int_eq(sscanf(ents[i].name, "e%d", &k), 1);
			ck_assert_int_lt(k, nseen);
			ck_assert_uint_eq(ents[i].mode & S_IFMT,
					  k % 10 ? S_IFREG : S_IFDIR);
			ck_assert_uint_gt(ents[i].cookie, cookie);
			seen[k]++;
			cookie = ents[i].cookie;
		}
		total += n;
		++*pages;
	}
	return total;
}

START_TEST(test_readdir_pages_through_many_entries_with_cookie)
{
	enum { N = 300 };
	int seen[N] = { 0 };
	uint32_t pages;
	char name[16];

	for (int k = 0; k < N; k++) {
		snprintf(name, sizeof(name), "e%d", k);
		if (k % 10)
			mkfile(MDS_ROOT_INO, name, NULL);
		else
			mkdir_(MDS_ROOT_INO, name);
	}
	ck_assert_uint_eq(read_all(MDS_ROOT_INO, 37, seen, N, &pages), N);
	ck_assert_uint_eq(pages, (N + 36) / 37);
	for (int k = 0; k < N; k++)
		ck_assert_int_eq(seen[k], 1);
	memset(seen, 0, sizeof(seen));
	/* A page that ends exactly at the last entry still says eof. */
	ck_assert_uint_eq(read_all(MDS_ROOT_INO, 50, seen, N, &pages), N);
	ck_assert_uint_eq(pages, N / 50);
}
END_TEST

START_TEST(test_readdir_of_empty_and_wrong_directories)
{
	struct mds_dirent ents[4];
	uint64_t d = mkdir_(MDS_ROOT_INO, "d");
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	bool eof = false;

	expect_err(mds_readdir(s, d, 0, ents, 4, &eof), 0);
	ck_assert(eof);
	expect_err(mds_readdir(s, f, 0, ents, 4, &eof), -ENOTDIR);
	expect_err(mds_readdir(s, 777, 0, ents, 4, &eof), -ENOENT);
	expect_err(mds_readdir(s, d, 0, ents, 0, &eof), -EINVAL);
	eof = false;
	expect_err(mds_readdir(s, MDS_ROOT_INO, UINT64_MAX, ents, 4, &eof), 0);
	ck_assert(eof);
}
END_TEST

START_TEST(test_readdir_cookie_survives_concurrent_changes)
{
	struct mds_dirent ents[16];
	int seen[12] = { 0 };
	char name[16];
	uint64_t cookie;
	bool eof;
	int n;

	for (int k = 1; k <= 10; k++) {
		snprintf(name, sizeof(name), "e%d", k);
		mkfile(MDS_ROOT_INO, name, NULL);
	}
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 4, &eof), 4);
	ck_assert(!eof);
	for (int i = 0; i < 4; i++)
		seen[atoi(ents[i].name + 1)]++;
	cookie = ents[3].cookie;
	/* Between pages: the last entry returned goes, a later one goes,
	 * one is added. */
	expect_err(mds_unlink(s, MDS_ROOT_INO, ents[3].name, NULL), 0);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "e7", NULL), 0);
	mkfile(MDS_ROOT_INO, "e11", NULL);
	n = mds_readdir(s, MDS_ROOT_INO, cookie, ents, 16, &eof);
	ck_assert_int_eq(n, 6);
	ck_assert(eof);
	for (int i = 0; i < n; i++)
		seen[atoi(ents[i].name + 1)]++;
	for (int k = 1; k <= 11; k++)
		ck_assert_int_eq(seen[k], k == 7 ? 0 : 1);
}
END_TEST

START_TEST(test_rename_moves_file_between_directories)
{
	struct mds_layout *l = rr_layout(4096, 3), *got = NULL;
	uint64_t a = mkdir_(MDS_ROOT_INO, "a"), b = mkdir_(MDS_ROOT_INO, "b");
	uint64_t f = mkfile(a, "f", l);
	struct mds_removed rm = { .attr.ino = 99 };
	struct mds_attr at;
	int64_t ctime = attr_of(f).ctime;

	age(a);
	age(b);
	expect_err(mds_rename(s, a, "f", b, "g", 0, &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, 0);
	ck_assert_ptr_null(rm.layout);
	expect_err(mds_lookup(s, a, "f", &at, NULL), -ENOENT);
	expect_err(mds_lookup(s, b, "g", &at, &got), 0);
	ck_assert_uint_eq(at.ino, f);
	ck_assert_int_ge(at.ctime, ctime);
	assert_same_layout(l, got);
	ck_assert_int_gt(attr_of(a).mtime, 1);
	ck_assert_int_gt(attr_of(b).mtime, 1);
	mds_layout_free(got);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_rename_over_existing_file_returns_its_layout)
{
	struct mds_layout *l1 = rr_layout(4096, 2), *l2 = rr_layout(8192, 3);
	struct mds_layout *got = NULL;
	uint64_t x = mkfile(MDS_ROOT_INO, "x", l1);
	uint64_t y = mkfile(MDS_ROOT_INO, "y", l2);
	struct mds_removed rm;
	struct mds_attr at;

	expect_err(mds_rename(s, MDS_ROOT_INO, "x", MDS_ROOT_INO, "y", 0, &rm),
		   0);
	ck_assert_uint_eq(rm.attr.ino, y);
	assert_same_layout(l2, rm.layout);
	mds_removed_release(&rm);
	ck_assert_ptr_null(rm.layout);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "y", &at, &got), 0);
	ck_assert_uint_eq(at.ino, x);
	assert_same_layout(l1, got);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "x", &at, NULL), -ENOENT);
	expect_err(mds_getattr(s, y, &at), -ENOENT);
	/* Over a file that has no layout yet: nothing to remove on iods. */
	mkfile(MDS_ROOT_INO, "z", NULL);
	expect_err(mds_rename(s, MDS_ROOT_INO, "y", MDS_ROOT_INO, "z", 0, &rm),
		   0);
	ck_assert_uint_ne(rm.attr.ino, 0);
	ck_assert_ptr_null(rm.layout);
	/* Not wanted: still replaced. */
	mkfile(MDS_ROOT_INO, "w", NULL);
	expect_err(mds_rename(s, MDS_ROOT_INO, "z", MDS_ROOT_INO, "w", 0, NULL),
		   0);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "w", &at, NULL), 0);
	ck_assert_uint_eq(at.ino, x);
	mds_layout_free(got);
	mds_layout_free(l1);
	mds_layout_free(l2);
}
END_TEST

static uint64_t gc_queued(void)
{
	uint64_t n = 0;

	expect_err(mds_gc_count(s, &n), 0);
	return n;
}

START_TEST(test_removed_files_queue_their_subfile_removals_durably)
{
	struct mds_layout *l4 = rr_layout(4096, 4), *l2 = rr_layout(4096, 2);
	struct mds_gc_entry e[8];
	uint64_t f = mkfile(MDS_ROOT_INO, "f", l4);
	uint64_t g = mkfile(MDS_ROOT_INO, "g", l2);
	int n, seen = 0;

	mkfile(MDS_ROOT_INO, "h", l2);
	mkfile(MDS_ROOT_INO, "bare", NULL);
	ck_assert_uint_eq(gc_queued(), 0);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", NULL), 0);
	expect_err(mds_rename(s, MDS_ROOT_INO, "h", MDS_ROOT_INO, "g", 0,
			      NULL), 0);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "bare", NULL), 0);
	/* f on iods 0..3, g on 0..1; nothing for a file without layout. */
	ck_assert_uint_eq(gc_queued(), 6);
	/* Pages of 3 after the last entry seen, in (ino, iod) order. */
	for (uint64_t ino = 0, iod = 0;
	     (n = mds_gc_list(s, ino, (uint32_t)iod, e, 3)) > 0;
	     ino = e[n - 1].ino, iod = e[n - 1].iod) {
		for (int i = 0; i < n; i++, seen++) {
			uint64_t want = seen < 4 ? f : g;

			ck_assert_uint_eq(e[i].ino, want);
			ck_assert_uint_eq(e[i].iod, seen < 4 ? seen : seen - 4);
		}
	}
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(seen, 6);
	/* Done entries leave; one already gone is no error. */
	e[0] = (struct mds_gc_entry){ f, 1 };
	e[1] = (struct mds_gc_entry){ f, 1 };
	e[2] = (struct mds_gc_entry){ 999, 7 };
	expect_err(mds_gc_done(s, e, 3), 0);
	ck_assert_uint_eq(gc_queued(), 5);
	/* The queue outlives the process. */
	mds_store_close(s);
	s = open_store(dir);
	ck_assert_uint_eq(gc_queued(), 5);
	mds_layout_free(l4);
	mds_layout_free(l2);
}
END_TEST

START_TEST(test_rename_refuses_directory_into_its_own_subtree)
{
	uint64_t a = mkdir_(MDS_ROOT_INO, "a");
	uint64_t b = mkdir_(a, "b");
	uint64_t c = mkdir_(b, "c");

	expect_err(mds_rename(s, MDS_ROOT_INO, "a", c, "z", 0, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "into itself"));
	expect_err(mds_rename(s, MDS_ROOT_INO, "a", a, "z", 0, NULL), -EINVAL);
	expect_err(mds_rename(s, a, "b", c, "b", 0, NULL), -EINVAL);
	ck_assert_uint_eq(ino_at("/a/b/c"), c);
	/* Upwards is fine. */
	expect_err(mds_rename(s, b, "c", MDS_ROOT_INO, "c", 0, NULL), 0);
	ck_assert_uint_eq(ino_at("/c/.."), MDS_ROOT_INO);
}
END_TEST

START_TEST(test_rename_checks_the_kind_of_the_target)
{
	uint64_t d1 = mkdir_(MDS_ROOT_INO, "d1");
	uint64_t d2 = mkdir_(MDS_ROOT_INO, "d2");
	uint64_t full = mkdir_(MDS_ROOT_INO, "full");
	struct mds_removed rm;

	mkfile(MDS_ROOT_INO, "f", NULL);
	mkfile(full, "inside", NULL);
	expect_err(mds_rename(s, MDS_ROOT_INO, "f", MDS_ROOT_INO, "d1", 0,
			      NULL), -EISDIR);
	expect_err(mds_rename(s, MDS_ROOT_INO, "d1", MDS_ROOT_INO, "f", 0,
			      NULL), -ENOTDIR);
	expect_err(mds_rename(s, MDS_ROOT_INO, "d1", MDS_ROOT_INO, "full", 0,
			      NULL), -ENOTEMPTY);
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 5);
	expect_err(mds_rename(s, MDS_ROOT_INO, "d1", MDS_ROOT_INO, "d2", 0,
			      &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, d2);
	ck_assert_ptr_null(rm.layout);
	ck_assert_uint_eq(ino_at("/d2"), d1);
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 4);
}
END_TEST

START_TEST(test_rename_of_directory_moves_its_links)
{
	uint64_t p = mkdir_(MDS_ROOT_INO, "p");
	uint64_t r = mkdir_(MDS_ROOT_INO, "r");
	uint64_t q = mkdir_(p, "q");

	mkfile(q, "f", NULL);
	ck_assert_uint_eq(attr_of(p).nlink, 3);
	expect_err(mds_rename(s, p, "q", r, "q2", 0, NULL), 0);
	ck_assert_uint_eq(attr_of(p).nlink, 2);
	ck_assert_uint_eq(attr_of(r).nlink, 3);
	ck_assert_uint_eq(ino_at("/r/q2/.."), r);
	ck_assert_uint_eq(ino_at("/r/q2/f"), ino_at("/r/q2/../q2/f"));
	ck_assert_uint_eq(ino_at("/r/q2"), q);
	/* Within one directory the count does not change. */
	expect_err(mds_rename(s, r, "q2", r, "q3", 0, NULL), 0);
	ck_assert_uint_eq(attr_of(r).nlink, 3);
}
END_TEST

START_TEST(test_rename_noreplace_refuses_existing_target)
{
	struct mds_attr at;

	mkfile(MDS_ROOT_INO, "a", NULL);
	mkfile(MDS_ROOT_INO, "b", NULL);
	expect_err(mds_rename(s, MDS_ROOT_INO, "a", MDS_ROOT_INO, "b",
			      MDS_RENAME_NOREPLACE, NULL), -EEXIST);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "a", &at, NULL), 0);
	expect_err(mds_rename(s, MDS_ROOT_INO, "a", MDS_ROOT_INO, "c",
			      MDS_RENAME_NOREPLACE, NULL), 0);
	expect_err(mds_rename(s, MDS_ROOT_INO, "c", MDS_ROOT_INO, "d", 0x2,
			      NULL), -EINVAL);
}
END_TEST

START_TEST(test_rename_onto_itself_does_nothing)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_removed rm = { .attr.ino = 5 };
	struct mds_attr before = attr_of(f);

	expect_err(mds_rename(s, MDS_ROOT_INO, "f", MDS_ROOT_INO, "f", 0, &rm),
		   0);
	ck_assert_uint_eq(rm.attr.ino, 0);
	ck_assert_int_eq(attr_of(f).ctime, before.ctime);
	ck_assert_uint_eq(ino_at("/f"), f);
}
END_TEST

START_TEST(test_rename_reports_missing_source_and_directories)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);

	expect_err(mds_rename(s, MDS_ROOT_INO, "nope", MDS_ROOT_INO, "x", 0,
			      NULL), -ENOENT);
	expect_err(mds_rename(s, MDS_ROOT_INO, "f", 4242, "x", 0, NULL),
		   -ENOENT);
	expect_err(mds_rename(s, MDS_ROOT_INO, "f", f, "x", 0, NULL),
		   -ENOTDIR);
	expect_err(mds_rename(s, MDS_ROOT_INO, "f", MDS_ROOT_INO, "a/b", 0,
			      NULL), -EINVAL);
	ck_assert_uint_eq(ino_at("/f"), f);
}
END_TEST

START_TEST(test_unlink_returns_layout_and_refuses_directories)
{
	struct mds_layout *l = rr_layout(1 << 20, 8);
	uint64_t f = mkfile(MDS_ROOT_INO, "f", l);
	struct mds_removed rm;
	struct mds_attr at;

	mkdir_(MDS_ROOT_INO, "d");
	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", &rm), 0);
	ck_assert_uint_eq(rm.attr.ino, f);
	assert_same_layout(l, rm.layout);
	mds_removed_release(&rm);
	mds_removed_release(NULL);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "f", &at, NULL), -ENOENT);
	expect_err(mds_getattr(s, f, &at), -ENOENT);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", &rm), -ENOENT);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "d", &rm), -EISDIR);
	mkfile(MDS_ROOT_INO, "g", NULL);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "g", NULL), 0);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_rmdir_refuses_non_empty_directory)
{
	uint64_t d = mkdir_(MDS_ROOT_INO, "d");
	struct mds_attr at;

	mkfile(d, "f", NULL);
	expect_err(mds_rmdir(s, MDS_ROOT_INO, "d"), -ENOTEMPTY);
	ck_assert_str_eq(CLF_Last_error(),
		"mds: cannot remove directory 'd' in directory 1: directory not empty");
	expect_err(mds_rmdir(s, d, "f"), -ENOTDIR);
	expect_err(mds_rmdir(s, MDS_ROOT_INO, "nope"), -ENOENT);
	expect_err(mds_unlink(s, d, "f", NULL), 0);
	expect_err(mds_rmdir(s, MDS_ROOT_INO, "d"), 0);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "d", &at, NULL), -ENOENT);
	expect_err(mds_getattr(s, d, &at), -ENOENT);
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 2);
}
END_TEST

START_TEST(test_removed_names_can_be_reused)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL), g;

	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", NULL), 0);
	g = mkfile(MDS_ROOT_INO, "f", NULL);
	ck_assert_uint_gt(g, f);
	mkdir_(MDS_ROOT_INO, "d");
	expect_err(mds_rmdir(s, MDS_ROOT_INO, "d"), 0);
	mkfile(MDS_ROOT_INO, "d", NULL);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_namespace");
	TCase *tc = tcase_create("namespace");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_create_then_lookup_finds_file_with_layout);
	tcase_add_test(tc, test_file_created_without_layout_has_none);
	tcase_add_test(tc, test_create_refuses_existing_name);
	tcase_add_test(tc, test_create_needs_an_existing_directory);
	tcase_add_test(tc, test_names_are_validated);
	tcase_add_test(tc, test_create_and_unlink_update_parent_times);
	tcase_add_test(tc, test_mkdir_counts_links);
	tcase_add_test(tc, test_resolve_follows_absolute_and_relative_paths);
	tcase_add_test(tc, test_resolve_reports_missing_and_not_directory);
	tcase_add_test(tc, test_readdir_pages_through_many_entries_with_cookie);
	tcase_add_test(tc, test_readdir_of_empty_and_wrong_directories);
	tcase_add_test(tc, test_readdir_cookie_survives_concurrent_changes);
	tcase_add_test(tc, test_rename_moves_file_between_directories);
	tcase_add_test(tc, test_rename_over_existing_file_returns_its_layout);
	tcase_add_test(tc,
		test_removed_files_queue_their_subfile_removals_durably);
	tcase_add_test(tc, test_rename_refuses_directory_into_its_own_subtree);
	tcase_add_test(tc, test_rename_checks_the_kind_of_the_target);
	tcase_add_test(tc, test_rename_of_directory_moves_its_links);
	tcase_add_test(tc, test_rename_noreplace_refuses_existing_target);
	tcase_add_test(tc, test_rename_onto_itself_does_nothing);
	tcase_add_test(tc, test_rename_reports_missing_source_and_directories);
	tcase_add_test(tc, test_unlink_returns_layout_and_refuses_directories);
	tcase_add_test(tc, test_rmdir_refuses_non_empty_directory);
	tcase_add_test(tc, test_removed_names_can_be_reused);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
