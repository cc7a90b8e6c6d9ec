// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_store.c -- the metad store as a whole: creation and reopening,
 * refusal of corrupt records, attributes, sizes, layouts, statfs and the
 * consistency check.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "mds_fixture.h"
#include "partition.h"

static void expect_message(const char *part)
{
	ck_assert_msg(strstr(CLF_Last_error(), part), "message '%s' lacks '%s'",
		      CLF_Last_error(), part);
}

static void set_mtime(uint64_t ino, int64_t mtime)
{
	struct mds_setattr set = { .mask = MDS_SETATTR_MTIME, .mtime = mtime };

	expect_err(mds_setattr(s, ino, &set, NULL), 0);
}

START_TEST(test_new_store_has_empty_root_directory)
{
	struct mds_dirent ents[2];
	struct mds_statfs st;
	struct mds_attr a = attr_of(MDS_ROOT_INO);
	uint8_t zero[16] = { 0 };
	bool eof = false;

	ck_assert_uint_eq(a.mode, S_IFDIR | 0755);
	ck_assert_uint_eq(a.nlink, 2);
	ck_assert_uint_eq(a.uid, 0);
	ck_assert_int_gt(a.ctime, 0);
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 2, &eof), 0);
	ck_assert(eof);
	expect_err(mds_statfs(s, &st), 0);
	ck_assert_uint_eq(st.inodes, 1);
	ck_assert_uint_gt(st.bytes_used, 0);
	ck_assert_uint_le(st.bytes_used, st.bytes_max);
	ck_assert(memcmp(st.fsid, zero, sizeof(zero)));
}
END_TEST

START_TEST(test_store_reopens_with_everything_committed)
{
	struct mds_layout *l = rr_layout(65536, 4), *got = NULL;
	struct mds_statfs before, after;
	struct mds_attr a, d, f;
	struct mds_setattr set = { .mask = MDS_SETATTR_MODE | MDS_SETATTR_UID,
				   .mode = 0600, .uid = 7 };

	expect_err(mds_mkdir(s, MDS_ROOT_INO, "d", 0700, 1, 2, &d), 0);
	expect_err(mds_create(s, d.ino, "f", 0644, 1, 2, l, &f), 0);
	expect_err(mds_update_size(s, f.ino, 123456, MDS_TIME_NOW, NULL), 0);
	expect_err(mds_setattr(s, f.ino, &set, &f), 0);
	mkfile(MDS_ROOT_INO, "gone", NULL);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "gone", NULL), 0);
	expect_err(mds_statfs(s, &before), 0);
	mds_store_close(s);

	s = open_store(dir);
	expect_err(mds_resolve(s, MDS_ROOT_INO, "/d/f", &a, &got), 0);
	assert_same_attr(&a, &f);
	ck_assert_int_eq(a.size, 123456);
	ck_assert_uint_eq(a.mode, S_IFREG | 0600);
	assert_same_layout(l, got);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "gone", &a, NULL), -ENOENT);
	ck_assert_uint_eq(attr_of(MDS_ROOT_INO).nlink, 3);
	expect_err(mds_statfs(s, &after), 0);
	ck_assert_uint_eq(after.inodes, before.inodes);
	ck_assert_mem_eq(after.fsid, before.fsid, sizeof(after.fsid));
	/* Numbers continue; the removed file's is not reused. */
	ck_assert_uint_gt(mkfile(MDS_ROOT_INO, "new", NULL), f.ino + 1);
	mds_layout_free(got);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_second_open_of_a_store_is_refused)
{
	struct mds_store *other = NULL;

	expect_err(mds_store_open(dir, &other), -EBUSY);
	ck_assert_ptr_null(other);
	expect_message("in use");
	mds_store_close(s);
	s = open_store(dir);
	mds_store_close(NULL);
}
END_TEST

START_TEST(test_open_creates_a_missing_directory)
{
	char sub[4200];
	struct mds_store *t;

	snprintf(sub, sizeof(sub), "%s/sub", dir);
	t = open_store(sub);
	assert_consistent(t);
	mds_store_close(t);
	rm_store_dir(strdup(sub));
}
END_TEST

START_TEST(test_corrupt_inode_record_gives_eio)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_dirent ents[4];
	struct mds_attr a;
	uint8_t key[8];
	bool eof;

	mds_store_close(s);
	ino_key(key, f);
	raw_put(dir, MDS_DB_INODES, key, sizeof(key), "garbage", 7);
	s = open_store(dir);
	expect_err(mds_getattr(s, f, &a), -EIO);
	expect_message("corrupt record");
	expect_err(mds_lookup(s, MDS_ROOT_INO, "f", &a, NULL), -EIO);
	expect_err(mds_resolve(s, MDS_ROOT_INO, "/f", &a, NULL), -EIO);
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 4, &eof), -EIO);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", NULL), -EIO);
	expect_err(mds_update_size(s, f, 10, MDS_TIME_NOW, NULL), -EIO);
	expect_err(mds_store_verify(s), -EIO);
	/* The rest of the store still works. */
	mkfile(MDS_ROOT_INO, "g", NULL);
	mds_store_close(s);
	s = NULL;
}
END_TEST

/* A valid record of a file with a two-subfile layout, for mutation. */
static size_t good_record(uint8_t *buf, size_t cap, bool dir_record)
{
	struct mds_layout *l = rr_layout(4096, 2);
	struct mds_inode in = {
		.attr = { .ino = 42, .mode = S_IFREG | 0644, .nlink = 1,
			  .size = 100, .mtime = 5 },
	};
	uint8_t *raw;
	size_t raw_len, len;

	if (dir_record) {
		in.attr.mode = S_IFDIR | 0755;
		in.attr.nlink = 2;
		in.attr.size = 0;
		in.parent = 1;
	} else {
		ck_assert_int_eq(mds_layout_encode(l, &raw, &raw_len), 0);
		in.layout = raw;
		in.layout_len = raw_len;
	}
	len = mds_inode_encode(&in, buf, cap);
	ck_assert_uint_le(len, cap);
	if (!dir_record)
		free(raw);
	mds_layout_free(l);
	return len;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void expect_corrupt(const uint8_t *buf, size_t len, uint64_t ino)
{
	struct mds_inode in = { .attr.ino = 7777 };
	char where[32];

	ck_assert_int_eq(mds_inode_decode(buf, len, ino, &in), -EIO);
	ck_assert_uint_eq(in.attr.ino, 7777);
	snprintf(where, sizeof(where), "inode %llu", (unsigned long long)ino);
	expect_message(where);
}

START_TEST(test_every_truncation_of_an_inode_record_gives_eio)
{
	uint8_t good[1024];
	size_t len = good_record(good, sizeof(good), false);
	struct mds_inode in;

	ck_assert_int_eq(mds_inode_decode(good, len, 42, &in), 0);
	ck_assert(in.attr.has_layout);
	for (size_t cut = 0; cut < len; cut++)
		expect_corrupt(good, cut, 42);
	len = good_record(good, sizeof(good), true);
	ck_assert_int_eq(mds_inode_decode(good, len, 42, &in), 0);
	ck_assert(!in.attr.has_layout);
	for (size_t cut = 0; cut < len; cut++)
		expect_corrupt(good, cut, 42);
}
END_TEST

/* Offsets in an inode record (mds_inode.c). */
enum { OFF_VERSION = 2, OFF_FLAGS = 3, OFF_INO = 4, OFF_PARENT = 12,
       OFF_MODE = 20, OFF_NLINK = 32, OFF_SIZE = 36, OFF_LAYOUT = 68,
       OFF_DISP = 68, OFF_HEAD = 76, OFF_N = 80, OFF_IOD0 = 84,
       OFF_TLEN0 = 88 };

START_TEST(test_inode_record_fields_out_of_range_give_eio)
{
	uint8_t good[1024], bad[1025];
	size_t len = good_record(good, sizeof(good), false);
	struct {
		size_t off;
		uint32_t val;
		bool wide;	/* write 4 bytes, else 1 */
	} cases[] = {
		{ OFF_VERSION, 2, false }, { OFF_VERSION, 0, false },
		{ OFF_FLAGS, 0x80, false }, { OFF_INO, 43, false },
		{ OFF_PARENT, 1, false },
		{ OFF_MODE, S_IFLNK | 0777, true },
		{ OFF_MODE, S_IFREG | 010000, true }, { OFF_NLINK, 0, true },
		{ OFF_SIZE + 7, 0x80, false }, { OFF_DISP + 7, 0x80, false },
		{ OFF_HEAD, MDS_MAX_IODS, true }, { OFF_N, 0, true },
		{ OFF_N, MDS_MAX_SUBFILES + 1, true }, { OFF_N, 3, true },
		{ OFF_N, 1, true }, { OFF_IOD0, MDS_MAX_IODS, true },
		{ OFF_TLEN0, 0, true }, { OFF_TLEN0, 1u << 30, true },
		{ OFF_TLEN0, 0xffffffffu, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, good, len);
		if (cases[i].wide)
			put_u32(bad + cases[i].off, cases[i].val);
		else
			bad[cases[i].off] = (uint8_t)cases[i].val;
		expect_corrupt(bad, len, 42);
	}
	/* A trailing byte, a layout flag lost, a key that differs. */
	memcpy(bad, good, len);
	bad[len] = 0;
	expect_corrupt(bad, len + 1, 42);
	bad[OFF_FLAGS] = 0;
	expect_corrupt(bad, len, 42);
	expect_corrupt(good, len, 41);
	ck_assert_uint_gt(len, OFF_LAYOUT);
	/* A directory with a size or a layout. */
	len = good_record(good, sizeof(good), true);
	memcpy(bad, good, len);
	bad[OFF_SIZE] = 1;
	expect_corrupt(bad, len, 42);
	memcpy(bad, good, len);
	put_u32(bad + OFF_NLINK, 1);
	expect_corrupt(bad, len, 42);
	memcpy(bad, good, len);
	bad[OFF_PARENT] = 0;
	expect_corrupt(bad, len, 42);
}
END_TEST

START_TEST(test_corrupt_superblock_refuses_open)
{
	uint8_t sb[64];
	size_t len;
	struct mds_store *t = NULL;

	mds_store_close(s);
	s = NULL;
	len = raw_get(dir, MDS_DB_SUPER, MDS_SUPER_KEY, strlen(MDS_SUPER_KEY),
		      sb, sizeof(sb));
	ck_assert_uint_eq(len, MDS_SUPER_LEN);
	sb[2] = MDS_FORMAT_VERSION + 1;
	raw_put(dir, MDS_DB_SUPER, MDS_SUPER_KEY, strlen(MDS_SUPER_KEY), sb,
		len);
	expect_err(mds_store_open(dir, &t), -EPROTONOSUPPORT);
	expect_message("newer");
	sb[2] = MDS_FORMAT_VERSION;
	sb[0] = 'X';
	raw_put(dir, MDS_DB_SUPER, MDS_SUPER_KEY, strlen(MDS_SUPER_KEY), sb,
		len);
	expect_err(mds_store_open(dir, &t), -EIO);
	sb[0] = 'M';
	raw_put(dir, MDS_DB_SUPER, MDS_SUPER_KEY, strlen(MDS_SUPER_KEY), sb,
		len - 1);
	expect_err(mds_store_open(dir, &t), -EIO);
	/* Inodes without a superblock are not a new store. */
	raw_del(dir, MDS_DB_SUPER, MDS_SUPER_KEY, strlen(MDS_SUPER_KEY));
	expect_err(mds_store_open(dir, &t), -EIO);
	ck_assert_ptr_null(t);
	raw_put(dir, MDS_DB_SUPER, MDS_SUPER_KEY, strlen(MDS_SUPER_KEY), sb,
		len);
	s = open_store(dir);
}
END_TEST

START_TEST(test_setattr_changes_masked_fields_and_ctime)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_setattr set = {
		.mask = MDS_SETATTR_MODE | MDS_SETATTR_GID | MDS_SETATTR_ATIME,
		.mode = 04711, .uid = 55, .gid = 66, .atime = 12345,
	};
	struct mds_attr before, after;

	set_mtime(f, 1);
	before = attr_of(f);
	expect_err(mds_setattr(s, f, &set, &after), 0);
	ck_assert_uint_eq(after.mode, S_IFREG | 04711);
	ck_assert_uint_eq(after.uid, before.uid);
	ck_assert_uint_eq(after.gid, 66);
	ck_assert_int_eq(after.atime, 12345);
	ck_assert_int_eq(after.mtime, 1);
	ck_assert_int_ge(after.ctime, before.ctime);
	set.mask = MDS_SETATTR_MTIME_NOW | MDS_SETATTR_UID;
	expect_err(mds_setattr(s, f, &set, &after), 0);
	ck_assert_int_gt(after.mtime, 1);
	ck_assert_uint_eq(after.uid, 55);
	set.mask = 0x100;
	expect_err(mds_setattr(s, f, &set, NULL), -EINVAL);
	set.mask = MDS_SETATTR_MODE;
	set.mode = 010000;
	expect_err(mds_setattr(s, f, &set, NULL), -EINVAL);
	set.mask = MDS_SETATTR_ATIME | MDS_SETATTR_ATIME_NOW;
	expect_err(mds_setattr(s, f, &set, NULL), -EINVAL);
	set.mask = MDS_SETATTR_SIZE;
	set.size = 0;
	expect_err(mds_setattr(s, MDS_ROOT_INO, &set, NULL), -EISDIR);
	expect_err(mds_setattr(s, 999, &set, NULL), -ENOENT);
	expect_err(mds_setattr(s, f, NULL, NULL), -EINVAL);
	ck_assert_uint_eq(attr_of(f).mode, S_IFREG | 04711);
}
END_TEST

START_TEST(test_truncate_sets_size_exactly)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_setattr set = { .mask = MDS_SETATTR_SIZE, .size = 10 };
	struct mds_attr a;

	expect_err(mds_update_size(s, f, 1000, MDS_TIME_NOW, NULL), 0);
	set_mtime(f, 1);
	expect_err(mds_setattr(s, f, &set, &a), 0);
	ck_assert_int_eq(a.size, 10);
	ck_assert_int_gt(a.mtime, 1);
	set.size = (int64_t)1 << 40;
	expect_err(mds_setattr(s, f, &set, &a), 0);
	ck_assert_int_eq(attr_of(f).size, (int64_t)1 << 40);
	/* Same size with an explicit mtime: the mtime given wins. */
	set.mask = MDS_SETATTR_SIZE | MDS_SETATTR_MTIME;
	set.size = 0;
	set.mtime = 77;
	expect_err(mds_setattr(s, f, &set, &a), 0);
	ck_assert_int_eq(a.size, 0);
	ck_assert_int_eq(a.mtime, 77);
	set.size = -1;
	expect_err(mds_setattr(s, f, &set, NULL), -EINVAL);
}
END_TEST

START_TEST(test_update_size_only_grows)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_attr a;

	set_mtime(f, 0);
	expect_err(mds_update_size(s, f, 100, 1000, &a), 0);
	ck_assert_int_eq(a.size, 100);
	ck_assert_int_eq(a.mtime, 1000);
	/* A late report of an earlier, shorter write changes nothing. */
	expect_err(mds_update_size(s, f, 50, 500, &a), 0);
	ck_assert_int_eq(a.size, 100);
	ck_assert_int_eq(a.mtime, 1000);
	ck_assert_int_eq(attr_of(f).size, 100);
	expect_err(mds_update_size(s, f, 200, MDS_TIME_NOW, NULL), 0);
	a = attr_of(f);
	ck_assert_int_eq(a.size, 200);
	ck_assert_int_gt(a.mtime, 1000);
	ck_assert_int_ge(a.ctime, a.mtime);
	expect_err(mds_update_size(s, f, -1, MDS_TIME_NOW, NULL), -EINVAL);
	expect_err(mds_update_size(s, MDS_ROOT_INO, 1, MDS_TIME_NOW, NULL),
		   -EISDIR);
	expect_err(mds_update_size(s, 999, 1, MDS_TIME_NOW, NULL), -ENOENT);
}
END_TEST

START_TEST(test_set_layout_refused_once_file_has_data)
{
	struct mds_layout *l = rr_layout(4096, 4);
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);

	expect_err(mds_update_size(s, f, 10, MDS_TIME_NOW, NULL), 0);
	expect_err(mds_set_layout(s, f, l), -EBUSY);
	ck_assert_str_eq(CLF_Last_error(), "mds: layout of inode 2 can only "
			 "be set while the file is empty");
	ck_assert(!attr_of(f).has_layout);
	expect_err(mds_set_layout(s, MDS_ROOT_INO, l), -EISDIR);
	expect_err(mds_set_layout(s, 999, l), -ENOENT);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_set_layout_on_empty_file_records_the_latest)
{
	struct mds_layout *l = rr_layout(4096, 4), *other = rr_layout(512, 2);
	struct mds_layout *got = NULL;
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);

	expect_err(mds_get_layout(s, f, &got), -ENODATA);
	ck_assert_ptr_null(got);
	expect_err(mds_set_layout(s, f, l), 0);
	ck_assert(attr_of(f).has_layout);
	expect_err(mds_get_layout(s, f, &got), 0);
	assert_same_layout(l, got);
	/* Still empty: the declared layout replaces the default one. */
	expect_err(mds_set_layout(s, f, other), 0);
	mds_layout_free(got);
	expect_err(mds_get_layout(s, f, &got), 0);
	assert_same_layout(other, got);
	expect_err(mds_get_layout(s, MDS_ROOT_INO, &got), -EISDIR);
	mds_layout_free(got);
	mds_layout_free(l);
	mds_layout_free(other);
}
END_TEST

START_TEST(test_layout_keeps_displacement_and_head_iod)
{
	struct mds_layout *l = rr_layout(1000, 3), *got = NULL;
	uint64_t f;

	l->disp = 4096;
	l->head_iod = 3;
	f = mkfile(MDS_ROOT_INO, "f", l);
	expect_err(mds_get_layout(s, f, &got), 0);
	assert_same_layout(l, got);
	ck_assert_uint_eq(got->subfiles[2].iod, 2);
	mds_layout_free(got);
	mds_layout_free(l);
}
END_TEST

START_TEST(test_layouts_that_are_not_patterns_are_refused)
{
	struct mds_layout *l = rr_layout(4096, 2);
	struct mds_subfile saved = l->subfiles[1];
	struct mds_attr a;
	uint8_t junk[20] = { 'C', 'T', 9 };

	/* The same type twice: overlap, and a hole. */
	l->subfiles[1] = l->subfiles[0];
	expect_err(mds_create(s, MDS_ROOT_INO, "f", 0644, 0, 0, l, &a),
		   -EINVAL);
	expect_message("cannot create 'f' in directory 1: bad layout");
	l->subfiles[1] = saved;
	l->subfiles[1].type = junk;
	l->subfiles[1].type_len = sizeof(junk);
	expect_err(mds_create(s, MDS_ROOT_INO, "f", 0644, 0, 0, l, &a),
		   -EINVAL);
	expect_message("type of subfile 1");
	l->subfiles[1] = saved;
	l->disp = -1;
	expect_err(mds_layout_check(l), -EINVAL);
	l->disp = 0;
	l->subfiles[0].iod = MDS_MAX_IODS;
	expect_err(mds_layout_check(l), -EINVAL);
	l->subfiles[0].iod = 0;
	l->nsubfiles = 0;
	expect_err(mds_layout_check(l), -EINVAL);
	l->nsubfiles = MDS_MAX_SUBFILES + 1;
	expect_err(mds_layout_check(l), -E2BIG);
	l->nsubfiles = 2;
	l->subfiles[0].type_len = MDS_TYPE_MAX_BYTES + 1;
	expect_err(mds_layout_check(l), -E2BIG);
	l->subfiles[0].type_len = saved.type_len;
	expect_err(mds_layout_check(l), 0);
	expect_err(mds_layout_check(NULL), -EINVAL);
	expect_err(mds_lookup(s, MDS_ROOT_INO, "f", &a, NULL), -ENOENT);
	expect_err(mds_layout_round_robin(0, 2, 0, 4, &l), -EINVAL);
	expect_err(mds_layout_round_robin(10, 2, 4, 4, &l), -EINVAL);
	mds_layout_free(l);
}
END_TEST

/*
 * A layout of a few thousand irregular pieces (partition.h): tens of KB,
 * beyond MDS_LAYOUT_INLINE_MAX.  Its type buffers follow the struct in
 * one allocation, so mds_layout_free() frees it.
 */
static struct mds_layout *big_layout(uint64_t seed)
{
	CLF_Datatype t[3];
	struct partition p;
	struct mds_layout *l;
	size_t total = 0;
	int64_t len[3];
	uint8_t *at;

	ck_assert_int_eq(partition_make(&p, 200, 3, seed), 0);
	ck_assert_int_eq(partition_types(&p, -1, t), 0);
	for (int j = 0; j < 3; j++) {
		len[j] = CLF_Type_encode(t[j], NULL, 0);
		ck_assert_int_gt(len[j], 0);
		total += len[j];
	}
	ck_assert_uint_gt(total, 8 * MDS_LAYOUT_INLINE_MAX);
	l = calloc(1, sizeof(*l) + 3 * sizeof(*l->subfiles) + total);
	ck_assert_ptr_nonnull(l);
	l->nsubfiles = 3;
	l->subfiles = (struct mds_subfile *)(l + 1);
	at = (uint8_t *)(l->subfiles + 3);
	for (int j = 0; j < 3; j++) {
		ck_assert_int_eq(CLF_Type_encode(t[j], at, len[j]), len[j]);
		l->subfiles[j] = (struct mds_subfile){ j, (uint32_t)len[j], at };
		at += len[j];
		CLF_Type_free(&t[j]);
	}
	partition_release(&p);
	return l;
}

static void expect_layout(uint64_t ino, const struct mds_layout *want)
{
	struct mds_layout *got = NULL;

	expect_err(mds_get_layout(s, ino, &got), 0);
	assert_same_layout(want, got);
	mds_layout_free(got);
}

/* The bytes of ino's inode record (the store closed and reopened). */
static size_t record_len(uint64_t ino)
{
	uint8_t key[8], buf[1024];
	size_t len;

	mds_store_close(s);
	ino_key(key, ino);
	len = raw_get(dir, MDS_DB_INODES, key, sizeof(key), buf, sizeof(buf));
	s = open_store(dir);
	return len;
}

START_TEST(test_large_layout_lives_apart_from_its_inode_record)
{
	struct mds_layout *big = big_layout(3), *other = big_layout(4);
	struct mds_layout *rr = rr_layout(4096, 4);
	uint64_t f = mkfile(MDS_ROOT_INO, "f", big), g;

	/* Attribute updates rewrite a record of a hundred bytes, not the
	 * layout's tens of KB. */
	ck_assert_uint_lt(record_len(f), 256);
	expect_layout(f, big);
	expect_err(mds_set_layout(s, f, other), 0);
	expect_layout(f, other);
	set_mtime(f, 12345);
	expect_err(mds_update_size(s, f, 1000, MDS_TIME_NOW, NULL), 0);
	ck_assert_uint_lt(record_len(f), 256);
	expect_layout(f, other);
	ck_assert_int_eq(attr_of(f).size, 1000);
	assert_consistent(s);
	/* A small layout goes back into the record; the big one is gone. */
	g = mkfile(MDS_ROOT_INO, "g", big);
	expect_err(mds_set_layout(s, g, rr), 0);
	expect_layout(g, rr);
	ck_assert_uint_gt(record_len(g), 256);
	assert_consistent(s);
	/* Removing a file removes its layout (verify counts them). */
	expect_err(mds_unlink(s, MDS_ROOT_INO, "f", NULL), 0);
	assert_consistent(s);
	mds_layout_free(big);
	mds_layout_free(other);
	mds_layout_free(rr);
}
END_TEST

START_TEST(test_statfs_counts_inodes)
{
	struct mds_statfs st;
	struct mds_attr a;

	mkfile(MDS_ROOT_INO, "a", NULL);
	mkfile(MDS_ROOT_INO, "b", NULL);
	expect_err(mds_mkdir(s, MDS_ROOT_INO, "d", 0755, 0, 0, &a), 0);
	mkfile(a.ino, "c", NULL);
	expect_err(mds_statfs(s, &st), 0);
	ck_assert_uint_eq(st.inodes, 5);
	expect_err(mds_unlink(s, MDS_ROOT_INO, "a", NULL), 0);
	expect_err(mds_statfs(s, &st), 0);
	ck_assert_uint_eq(st.inodes, 4);
}
END_TEST

/* ---- recorded outcomes (mds_replies.c) ---- */

START_TEST(test_armed_create_records_its_inode_in_its_own_commit)
{
	struct mds_reply_rec rec, got;
	uint64_t f;

	mds_reply_arm(s, 7, 1, 257);
	f = mkfile(MDS_ROOT_INO, "f", NULL);
	ck_assert(mds_reply_disarm(&rec));
	ck_assert_uint_eq(rec.op, 257);
	ck_assert_uint_eq(rec.ino, f);
	/* Durable with the file: it is there after a reopen. */
	mds_store_close(s);
	s = open_store(dir);
	expect_err(mds_reply_get(s, 7, 1, &got), 0);
	ck_assert_uint_eq(got.ino, f);
	ck_assert_uint_eq(got.op, 257);
	ck_assert_int_eq(got.time, rec.time);
	expect_err(mds_reply_get(s, 7, 2, &got), -ENOENT);
	expect_err(mds_reply_get(s, 8, 1, &got), -ENOENT);
}
END_TEST

START_TEST(test_failed_call_leaves_no_record_and_one_commit_records_once)
{
	struct mds_reply_rec rec;
	struct mds_attr a;
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	uint64_t n;

	mds_reply_arm(s, 7, 1, 257);
	expect_err(mds_create(s, MDS_ROOT_INO, "f", 0644, 0, 0, NULL, &a),
		   -EEXIST);
	ck_assert(!mds_reply_disarm(NULL));
	expect_err(mds_reply_get(s, 7, 1, &rec), -ENOENT);
	/* A named inode, and a second commit that does not record again. */
	mds_reply_arm(s, 7, 2, 264);
	mds_reply_set_ino(f);
	expect_err(mds_mkdir(s, MDS_ROOT_INO, "d", 0755, 0, 0, &a), 0);
	expect_err(mds_mkdir(s, MDS_ROOT_INO, "e", 0755, 0, 0, &a), 0);
	ck_assert(mds_reply_disarm(&rec));
	ck_assert_uint_eq(rec.ino, f);
	expect_err(mds_reply_count(s, &n), 0);
	ck_assert_uint_eq(n, 1);
	/* Disarmed: nothing more is recorded. */
	expect_err(mds_mkdir(s, MDS_ROOT_INO, "g", 0755, 0, 0, &a), 0);
	expect_err(mds_reply_count(s, &n), 0);
	ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_expire_removes_records_older_than_the_bound)
{
	struct mds_reply_rec rec;
	uint64_t n;

	for (uint64_t seq = 1; seq <= 5; seq++) {
		char name[8];

		snprintf(name, sizeof(name), "f%llu", (unsigned long long)seq);
		mds_reply_arm(s, 9, seq, 257);
		mkfile(MDS_ROOT_INO, name, NULL);
		ck_assert(mds_reply_disarm(&rec));
	}
	expect_err(mds_reply_expire(s, 0, 16), 0);
	expect_err(mds_reply_count(s, &n), 0);
	ck_assert_uint_eq(n, 5);
	/* Batches of 2: 2, 2, 1, then none left. */
	expect_err(mds_reply_expire(s, rec.time + 1, 2), 2);
	expect_err(mds_reply_expire(s, rec.time + 1, 2), 2);
	expect_err(mds_reply_expire(s, rec.time + 1, 2), 1);
	expect_err(mds_reply_expire(s, rec.time + 1, 2), 0);
	expect_err(mds_reply_count(s, &n), 0);
	ck_assert_uint_eq(n, 0);
	expect_err(mds_reply_get(s, 9, 5, &rec), -ENOENT);
}
END_TEST

START_TEST(test_verify_finds_entry_without_inode)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	struct mds_attr a;
	uint8_t key[8];

	mds_store_close(s);
	ino_key(key, f);
	raw_del(dir, MDS_DB_INODES, key, sizeof(key));
	s = open_store(dir);
	expect_err(mds_store_verify(s), -EIO);
	expect_message("names a missing inode");
	expect_err(mds_lookup(s, MDS_ROOT_INO, "f", &a, NULL), -EIO);
	mds_store_close(s);
	s = NULL;
}
END_TEST

START_TEST(test_verify_finds_a_removal_pending_for_a_live_inode)
{
	uint64_t f = mkfile(MDS_ROOT_INO, "f", NULL);
	uint8_t key[12] = { 0 };

	mds_store_close(s);
	ino_key(key, f);	/* then iod 0 */
	raw_put(dir, MDS_DB_GC, key, sizeof(key), "", 1);
	s = open_store(dir);
	expect_err(mds_store_verify(s), -EIO);
	expect_message("which exists");
	mds_store_close(s);
	s = NULL;
}
END_TEST

START_TEST(test_verify_finds_inode_without_entry)
{
	struct mds_dirent ents[2];
	uint8_t dkey[8 + 1], ckey[16];
	bool eof;

	mkfile(MDS_ROOT_INO, "f", NULL);
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 2, &eof), 1);
	mds_store_close(s);
	/* Take the entry away from both databases, leaving the inode. */
	ino_key(dkey, MDS_ROOT_INO);
	dkey[8] = 'f';
	raw_del(dir, MDS_DB_DIRENTS, dkey, sizeof(dkey));
	ino_key(ckey, MDS_ROOT_INO);
	ino_key(ckey + 8, ents[0].cookie);
	raw_del(dir, MDS_DB_COOKIES, ckey, sizeof(ckey));
	s = open_store(dir);
	expect_err(mds_store_verify(s), -EIO);
	expect_message("has no name");
	mds_store_close(s);
	s = NULL;
}
END_TEST

START_TEST(test_verify_finds_entry_without_cookie)
{
	struct mds_dirent ents[2];
	uint8_t ckey[16];
	bool eof;

	mkfile(MDS_ROOT_INO, "f", NULL);
	expect_err(mds_readdir(s, MDS_ROOT_INO, 0, ents, 2, &eof), 1);
	mds_store_close(s);
	ino_key(ckey, MDS_ROOT_INO);
	ino_key(ckey + 8, ents[0].cookie);
	raw_del(dir, MDS_DB_COOKIES, ckey, sizeof(ckey));
	s = open_store(dir);
	expect_err(mds_store_verify(s), -EIO);
	expect_message("no cookie entry");
	mds_store_close(s);
	s = NULL;
}
END_TEST

START_TEST(test_verify_finds_wrong_link_count)
{
	uint8_t key[8], rec[256];
	struct mds_inode in;
	size_t len;

	expect_err(mds_mkdir(s, MDS_ROOT_INO, "d", 0755, 0, 0, &in.attr), 0);
	mds_store_close(s);
	ino_key(key, MDS_ROOT_INO);
	len = raw_get(dir, MDS_DB_INODES, key, sizeof(key), rec, sizeof(rec));
	ck_assert_int_eq(mds_inode_decode(rec, len, MDS_ROOT_INO, &in), 0);
	in.attr.nlink = 2;
	len = mds_inode_encode(&in, rec, sizeof(rec));
	raw_put(dir, MDS_DB_INODES, key, sizeof(key), rec, len);
	s = open_store(dir);
	expect_err(mds_store_verify(s), -EIO);
	expect_message("links");
	mds_store_close(s);
	s = NULL;
}
END_TEST

enum { THREAD_FILES = 150 };

static atomic_bool writers_done;

/* Writer thread: THREAD_FILES files named <letter><i>; returns errors. */
static void *writer(void *arg)
{
	char name[16];
	long failures = 0;

	for (int i = 0; i < THREAD_FILES; i++) {
		struct mds_attr a;

		snprintf(name, sizeof(name), "%c%d", *(char *)arg, i);
		failures += mds_create(s, MDS_ROOT_INO, name, 0644, 0, 0, NULL,
				       &a) != 0;
	}
	return (void *)failures;
}

/* Reader thread: listings are snapshots, so every listing is whole and
 * its count never goes down. */
static void *reader(void *arg)
{
	struct mds_dirent ents[8];
	long failures = 0;
	uint32_t last = 0;

	while (!atomic_load(&writers_done)) {
		uint64_t cookie = 0;
		uint32_t total = 0;
		bool eof = false;
		struct mds_statfs st;

		failures += mds_statfs(s, &st) != 0;
		while (!eof) {
			int n = mds_readdir(s, MDS_ROOT_INO, cookie, ents, 8,
					    &eof);

			if (n < 0) {
				failures++;
				break;
			}
			for (int i = 0; i < n; i++) {
				struct mds_attr a;

				failures += mds_lookup(s, MDS_ROOT_INO,
						       ents[i].name, &a,
						       NULL) != 0;
				cookie = ents[i].cookie;
			}
			total += (uint32_t)n;
		}
		failures += total < last;
		last = total;
	}
	return (void *)failures;
}

START_TEST(test_concurrent_callers_share_one_store)
{
	pthread_t w1, w2, r;
	void *f1, *f2, *fr;
	struct mds_statfs st;

	atomic_store(&writers_done, false);
	ck_assert_int_eq(pthread_create(&r, NULL, reader, NULL), 0);
	ck_assert_int_eq(pthread_create(&w1, NULL, writer, "a"), 0);
	ck_assert_int_eq(pthread_create(&w2, NULL, writer, "b"), 0);
	ck_assert_int_eq(pthread_join(w1, &f1), 0);
	ck_assert_int_eq(pthread_join(w2, &f2), 0);
	atomic_store(&writers_done, true);
	ck_assert_int_eq(pthread_join(r, &fr), 0);
	ck_assert_ptr_null(f1);
	ck_assert_ptr_null(f2);
	ck_assert_ptr_null(fr);
	expect_err(mds_statfs(s, &st), 0);
	ck_assert_uint_eq(st.inodes, 1 + 2 * THREAD_FILES);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_new_store_has_empty_root_directory);
	tcase_add_test(tc, test_store_reopens_with_everything_committed);
	tcase_add_test(tc, test_second_open_of_a_store_is_refused);
	tcase_add_test(tc, test_open_creates_a_missing_directory);
	tcase_add_test(tc, test_corrupt_inode_record_gives_eio);
	tcase_add_test(tc, test_every_truncation_of_an_inode_record_gives_eio);
	tcase_add_test(tc, test_inode_record_fields_out_of_range_give_eio);
	tcase_add_test(tc, test_corrupt_superblock_refuses_open);
	tcase_add_test(tc, test_setattr_changes_masked_fields_and_ctime);
	tcase_add_test(tc, test_truncate_sets_size_exactly);
	tcase_add_test(tc, test_update_size_only_grows);
	tcase_add_test(tc, test_set_layout_refused_once_file_has_data);
	tcase_add_test(tc, test_set_layout_on_empty_file_records_the_latest);
	tcase_add_test(tc, test_layout_keeps_displacement_and_head_iod);
	tcase_add_test(tc, test_large_layout_lives_apart_from_its_inode_record);
	tcase_add_test(tc, test_layouts_that_are_not_patterns_are_refused);
	tcase_add_test(tc, test_statfs_counts_inodes);
	tcase_add_test(tc, test_armed_create_records_its_inode_in_its_own_commit);
	tcase_add_test(tc,
		test_failed_call_leaves_no_record_and_one_commit_records_once);
	tcase_add_test(tc, test_expire_removes_records_older_than_the_bound);
	tcase_add_test(tc, test_verify_finds_entry_without_inode);
	tcase_add_test(tc, test_verify_finds_inode_without_entry);
	tcase_add_test(tc,
		       test_verify_finds_a_removal_pending_for_a_live_inode);
	tcase_add_test(tc, test_verify_finds_entry_without_cookie);
	tcase_add_test(tc, test_verify_finds_wrong_link_count);
	tcase_add_test(tc, test_concurrent_callers_share_one_store);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
