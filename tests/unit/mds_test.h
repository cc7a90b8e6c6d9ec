/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_test.h -- what the metad store tests share: a private directory per
 * test, layouts to compare, and raw access to the LMDB databases to break
 * a store on purpose.
 */
#ifndef CLF_MDS_TEST_H
#define CLF_MDS_TEST_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mds_store.h"
#include "mds_store_i.h"

/* A new empty directory; the caller removes it with rm_store_dir. */
static inline char *new_store_dir(void)
{
	const char *base = getenv("TMPDIR");
	size_t len;
	char *dir;

	if (!base || !*base)
		base = "/tmp";
	len = strlen(base) + sizeof("/clf-mds-XXXXXX");
	dir = malloc(len);
	ck_assert_ptr_nonnull(dir);
	snprintf(dir, len, "%s/clf-mds-XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/* Remove a store directory: files only, no subdirectories. */
static inline void rm_store_dir(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ck_assert_int_eq(unlink(path), 0);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(dir), 0);
	free(dir);
}

static inline struct mds_store *open_store(const char *dir)
{
	struct mds_store *s = NULL;
	int err = mds_store_open(dir, &s);

	ck_assert_msg(err == 0, "open: %d %s", err, CLF_Last_error());
	return s;
}

/* Fail the test unless the store's invariants hold. */
static inline void assert_consistent(struct mds_store *s)
{
	int err = mds_store_verify(s);

	ck_assert_msg(err == 0, "verify: %d %s", err, CLF_Last_error());
}

/* stripe-byte round robin over count subfiles and 4 iods. */
static inline struct mds_layout *rr_layout(int64_t stripe, uint32_t count)
{
	struct mds_layout *l = NULL;

	ck_assert_int_eq(mds_layout_round_robin(stripe, count, 0, 4, &l), 0);
	return l;
}

static inline void assert_same_attr(const struct mds_attr *a,
				    const struct mds_attr *b)
{
	ck_assert_uint_eq(a->ino, b->ino);
	ck_assert_uint_eq(a->mode, b->mode);
	ck_assert_uint_eq(a->uid, b->uid);
	ck_assert_uint_eq(a->gid, b->gid);
	ck_assert_uint_eq(a->nlink, b->nlink);
	ck_assert_int_eq(a->size, b->size);
	ck_assert_int_eq(a->atime, b->atime);
	ck_assert_int_eq(a->mtime, b->mtime);
	ck_assert_int_eq(a->ctime, b->ctime);
	ck_assert_int_eq(a->has_layout, b->has_layout);
}

static inline void assert_same_layout(const struct mds_layout *a,
				      const struct mds_layout *b)
{
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(a->disp, b->disp);
	ck_assert_uint_eq(a->head_iod, b->head_iod);
	ck_assert_uint_eq(a->nsubfiles, b->nsubfiles);
	for (uint32_t i = 0; i < a->nsubfiles; i++) {
		ck_assert_uint_eq(a->subfiles[i].iod, b->subfiles[i].iod);
		ck_assert_uint_eq(a->subfiles[i].type_len,
				  b->subfiles[i].type_len);
		ck_assert_mem_eq(a->subfiles[i].type, b->subfiles[i].type,
				 a->subfiles[i].type_len);
	}
}

/* ---- raw LMDB access; the store must be closed ---- */

struct raw_db {
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
};

static inline void raw_open(struct raw_db *r, const char *dir, const char *db)
{
	ck_assert_int_eq(mdb_env_create(&r->env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(r->env, 4), 0);
	ck_assert_int_eq(mdb_env_set_mapsize(r->env, MDS_STORE_MAP_SIZE), 0);
	ck_assert_int_eq(mdb_env_open(r->env, dir, MDB_NOTLS, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(r->env, NULL, 0, &r->txn), 0);
	ck_assert_int_eq(mdb_dbi_open(r->txn, db, 0, &r->dbi), 0);
}

static inline void raw_close(struct raw_db *r)
{
	ck_assert_int_eq(mdb_txn_commit(r->txn), 0);
	mdb_env_close(r->env);
}

/* Copy the value at key into buf; returns its length. */
static inline size_t raw_get(const char *dir, const char *db, const void *k,
			     size_t klen, void *buf, size_t cap)
{
	struct raw_db r;
	MDB_val key = { .mv_size = klen, .mv_data = (void *)k }, val;

	raw_open(&r, dir, db);
	ck_assert_int_eq(mdb_get(r.txn, r.dbi, &key, &val), 0);
	ck_assert_uint_le(val.mv_size, cap);
	memcpy(buf, val.mv_data, val.mv_size);
	raw_close(&r);
	return val.mv_size;
}

static inline void raw_put(const char *dir, const char *db, const void *k,
			   size_t klen, const void *v, size_t vlen)
{
	struct raw_db r;
	MDB_val key = { .mv_size = klen, .mv_data = (void *)k };
	MDB_val val = { .mv_size = vlen, .mv_data = (void *)v };

	raw_open(&r, dir, db);
	ck_assert_int_eq(mdb_put(r.txn, r.dbi, &key, &val, 0), 0);
	raw_close(&r);
}

static inline void raw_del(const char *dir, const char *db, const void *k,
			   size_t klen)
{
	struct raw_db r;
	MDB_val key = { .mv_size = klen, .mv_data = (void *)k };

	raw_open(&r, dir, db);
	ck_assert_int_eq(mdb_del(r.txn, r.dbi, &key, NULL), 0);
	raw_close(&r);
}

/* The key of inode ino in the inodes database. */
static inline void ino_key(uint8_t k[8], uint64_t ino)
{
	for (int i = 0; i < 8; i++)
		k[i] = (uint8_t)(ino >> (56 - 8 * i));
}

#endif /* CLF_MDS_TEST_H */
