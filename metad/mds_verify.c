// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_verify.c -- check every invariant of the store (an fsck).
 *
 * Two ordered walks in one read transaction.  The walk over the entries
 * (grouped by directory, since keys start with the parent) checks each
 * entry against its cookie and its inode and collects the inodes named
 * and each directory's number of subdirectories; the walk over the inodes
 * then checks that every directory but the root is named exactly once,
 * every other inode as many times as its nlink (hard links), and that
 * directory link counts agree.  Memory: 8 bytes per entry, 16 per directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clf_proto.h"
#include "error.h"
#include "mds_store_i.h"
#include "wire.h"

struct subdirs {
	uint64_t dir;
	uint64_t count;
};

struct verify {
	struct mds_store *s;
	MDB_txn *txn;		/* borrowed, read-only */
	struct mds_super sb;
	uint32_t index, count;	/* the store's place in a spread namespace:
				   its names may be of inodes elsewhere, its
				   inodes named elsewhere (mds_remote.c) */
	size_t nremote;		/* entries naming inodes of other metads */
	uint64_t *named;	/* owned: inodes named by entries */
	size_t nnamed, cap_named;
	struct subdirs *dirs;	/* owned: by increasing dir */
	size_t ndirs, cap_dirs;
	size_t apart;		/* inodes whose layout is stored apart */
	bool in_group;		/* group is set */
	uint64_t group;		/* directory of the entries being walked */
	uint64_t group_subdirs;
};

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	p = realloc(*arr, c * size);
	if (!p)
		return clf_fail(ENOMEM, "mds: verify: out of memory");
	*arr = p;
	*cap = c;
	return 0;
}

static int end_group(struct verify *v)
{
	int err;

	if (!v->in_group)
		return 0;
	err = grow((void **)&v->dirs, &v->cap_dirs, v->ndirs, sizeof(*v->dirs));
	if (err)
		return err;
	v->dirs[v->ndirs].dir = v->group;
	v->dirs[v->ndirs++].count = v->group_subdirs;
	return 0;
}

static int bad(const char *why, uint64_t dir, const char *name, int len)
{
	return clf_fail(EIO, "mds: verify: entry '%.*s' of directory %llu: %s",
			len, name, (unsigned long long)dir, why);
}

/* The cookie entry of (dir, cookie) must name ino as name. */
static int check_cookie(struct verify *v, uint64_t dir, uint64_t cookie,
			uint64_t ino, const char *name, size_t len)
{
	uint8_t kbuf[MDS_COOKIE_KEY_LEN];
	struct wire_reader r;
	MDB_val key, val;
	int rc;

	if (cookie >= v->sb.next_cookie)
		return bad("cookie beyond the counter", dir, name, (int)len);
	mds_cookie_key(kbuf, dir, cookie, &key);
	rc = mdb_get(v->txn, v->s->cookies, &key, &val);
	if (rc == MDB_NOTFOUND)
		return bad("no cookie entry", dir, name, (int)len);
	if (rc)
		return mds_lmdb_fail(rc, "verify the cookies");
	r = (struct wire_reader){ .buf = val.mv_data, .len = val.mv_size };
	if (wire_get_u64(&r) != ino || r.bad || val.mv_size - r.pos != len ||
	    memcmp(r.buf + r.pos, name, len))
		return bad("cookie entry disagrees", dir, name, (int)len);
	return 0;
}

static int check_entry(struct verify *v, const MDB_val *key,
		       const MDB_val *val)
{
	const char *name = (const char *)key->mv_data + 8;
	size_t len = key->mv_size > 8 ? key->mv_size - 8 : 0;
	uint64_t dir, ino, cookie;
	struct mds_inode in;
	uint32_t mode;
	int err;

	if (key->mv_size < 9 || len > MDS_NAME_MAX)
		return clf_fail(EIO, "mds: verify: entry key of %zu bytes",
				key->mv_size);
	dir = mds_get_be64(key->mv_data);
	if (memchr(name, '/', len) || memchr(name, 0, len) ||
	    (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return bad("invalid name", dir, name, (int)len);
	if (mds_dirent_decode_mode(val, &ino, &cookie, &mode))
		return bad("corrupt value", dir, name, (int)len);
	if (!v->in_group || dir != v->group) {
		err = end_group(v);
		if (!err)
			err = mds_dir_get(v->s, v->txn, dir, &in, "verify");
		if (err)
			return err == -ENOENT || err == -ENOTDIR ?
			       bad("in no directory", dir, name, (int)len) : err;
		v->in_group = true;
		v->group = dir;
		v->group_subdirs = 0;
	}
	if (v->count > 1 && CLF_PROTO_INO_METAD(ino) != v->index) {
		/* An inode of another metad: its kind is in the entry. */
		if (!mode)
			return bad("names a remote inode without its kind",
				   dir, name, (int)len);
		if (S_ISDIR(mode))
			v->group_subdirs++;
		v->nremote++;
		return check_cookie(v, dir, cookie, ino, name, len);
	}
	if (ino == MDS_ROOT_INO || ino >= v->sb.next_ino)
		return bad("names an impossible inode", dir, name, (int)len);
	err = mds_inode_get(v->s, v->txn, ino, &in, "verify");
	if (err)
		return err == -ENOENT ? bad("names a missing inode", dir, name,
					    (int)len) : err;
	if (S_ISDIR(in.attr.mode)) {
		if (in.parent != dir)
			return bad("directory with another parent", dir, name,
				   (int)len);
		v->group_subdirs++;
	}
	err = check_cookie(v, dir, cookie, ino, name, len);
	if (err)
		return err;
	err = grow((void **)&v->named, &v->cap_named, v->nnamed,
		   sizeof(*v->named));
	if (err)
		return err;
	v->named[v->nnamed++] = ino;
	return 0;
}

static int walk_entries(struct verify *v)
{
	MDB_cursor *cur;
	MDB_val key, val;
	MDB_stat st;
	int rc, err = 0;

	rc = mdb_cursor_open(v->txn, v->s->dirents, &cur);
	if (rc)
		return mds_lmdb_fail(rc, "verify the entries");
	rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	while (!rc && !err) {
		err = check_entry(v, &key, &val);
		if (!err)
			rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	if (err)
		return err;
	if (rc != MDB_NOTFOUND)
		return mds_lmdb_fail(rc, "verify the entries");
	err = end_group(v);
	if (err)
		return err;
	rc = mdb_stat(v->txn, v->s->cookies, &st);
	if (rc)
		return mds_lmdb_fail(rc, "verify the cookies");
	if (st.ms_entries != v->nnamed + v->nremote)
		return clf_fail(EIO, "mds: verify: %zu cookie entries for %zu entries",
				st.ms_entries, v->nnamed + v->nremote);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t subdirs_of(const struct verify *v, uint64_t dir)
{
	size_t lo = 0, hi = v->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->dirs[mid].dir < dir)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->ndirs && v->dirs[lo].dir == dir ? v->dirs[lo].count : 0;
}

static int check_inode(struct verify *v, const MDB_val *key,
		       const MDB_val *val, size_t *next_named)
{
	struct mds_inode in;
	uint64_t ino, names = 0;
	int err;

	if (key->mv_size != MDS_INO_KEY_LEN)
		return clf_fail(EIO, "mds: verify: inode key of %zu bytes",
				key->mv_size);
	ino = mds_get_be64(key->mv_data);
	err = mds_inode_decode(val->mv_data, val->mv_size, ino, &in);
	if (!err && in.layout_apart) {
		/* Reads and checks the layout from the layouts database. */
		err = mds_inode_get(v->s, v->txn, ino, &in, "verify");
		v->apart++;
	}
	if (err)
		return err;
	if (ino >= v->sb.next_ino)
		return clf_fail(EIO, "mds: verify: inode %llu beyond the counter",
				(unsigned long long)ino);
	if (ino == MDS_ROOT_INO) {
		if (!S_ISDIR(in.attr.mode) || in.parent != MDS_ROOT_INO)
			return clf_fail(EIO, "mds: verify: bad root directory");
	} else if ((*next_named >= v->nnamed ||
		    v->named[*next_named] != ino) && v->count > 1) {
		/* Named on other metads only: a directory made here for
		 * one, a file renamed or linked across. */
		return 0;
	} else if (*next_named >= v->nnamed || v->named[*next_named] != ino) {
		return clf_fail(EIO, "mds: verify: inode %llu has no name",
				(unsigned long long)ino);
	} else {
		while (*next_named < v->nnamed && v->named[*next_named] == ino) {
			++*next_named;
			names++;
		}
	}
	if (ino != MDS_ROOT_INO && S_ISDIR(in.attr.mode) && names != 1)
		return clf_fail(EIO, "mds: verify: directory %llu has %llu names",
				(unsigned long long)ino,
				(unsigned long long)names);
	if (S_ISDIR(in.attr.mode) &&
	    in.attr.nlink != 2 + subdirs_of(v, ino))
		return clf_fail(EIO,
			"mds: verify: directory %llu has %u links, %llu subdirectories",
			(unsigned long long)ino, in.attr.nlink,
			(unsigned long long)subdirs_of(v, ino));
	if (!S_ISDIR(in.attr.mode) && in.attr.nlink != names && v->count <= 1)
		return clf_fail(EIO, "mds: verify: inode %llu has %u links, %llu names",
				(unsigned long long)ino, in.attr.nlink,
				(unsigned long long)names);
	return 0;
}

static int walk_inodes(struct verify *v)
{
	size_t next_named = 0;
	bool root = false;
	MDB_cursor *cur;
	MDB_val key, val;
	int rc, err = 0;

	if (v->nnamed)
		qsort(v->named, v->nnamed, sizeof(*v->named), cmp_u64);
	rc = mdb_cursor_open(v->txn, v->s->inodes, &cur);
	if (rc)
		return mds_lmdb_fail(rc, "verify the inodes");
	rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	while (!rc && !err) {
		root |= key.mv_size == MDS_INO_KEY_LEN &&
			mds_get_be64(key.mv_data) == MDS_ROOT_INO;
		err = check_inode(v, &key, &val, &next_named);
		if (!err)
			rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	if (err)
		return err;
	if (rc != MDB_NOTFOUND)
		return mds_lmdb_fail(rc, "verify the inodes");
	if (!root)
		return clf_fail(EIO, "mds: verify: no root directory");
	/* Every named inode was met: named entries are checked to exist. */
	return 0;
}

/* No layout stored apart without the inode that refers to it. */
static int check_layouts_apart(struct verify *v)
{
	MDB_stat st;
	int rc = mdb_stat(v->txn, v->s->layouts, &st);

	if (rc)
		return mds_lmdb_fail(rc, "verify the layouts");
	if (st.ms_entries != v->apart)
		return clf_fail(EIO,
			"mds: verify: %zu layouts stored apart, %zu inodes refer to one",
			st.ms_entries, v->apart);
	return 0;
}

/*
 * A pending removal names an inode that is gone and below the inode
 * counter: replaying it on a live inode would destroy that file's data.
 */
static int check_pending_removals(struct verify *v)
{
	MDB_cursor *cur;
	MDB_val key, val;
	int rc, err = 0;

	rc = mdb_cursor_open(v->txn, v->s->gc, &cur);
	if (rc)
		return mds_lmdb_fail(rc, "verify the pending removals");
	while (!err && !(rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT))) {
		uint64_t ino;

		if (key.mv_size != 12) {
			err = clf_fail(EIO, "mds: verify: pending removal with a key of %zu bytes",
				       key.mv_size);
			break;
		}
		ino = mds_get_be64(key.mv_data);
		key.mv_size = 8;	/* the inode key: the same first 8 bytes */
		rc = mdb_get(v->txn, v->s->inodes, &key, &val);
		if (rc != MDB_NOTFOUND || ino >= v->sb.next_ino || ino == 0)
			err = clf_fail(EIO,
				"mds: verify: a removal is pending for inode %llu, which %s",
				(unsigned long long)ino,
				rc == MDB_NOTFOUND ? "was never given out" :
				"exists");
		rc = 0;
	}
	mdb_cursor_close(cur);
	if (!err && rc && rc != MDB_NOTFOUND)
		err = mds_lmdb_fail(rc, "verify the pending removals");
	return err;
}

int mds_store_verify(struct mds_store *s)
{
	struct verify v = { .s = s };
	int err;

	err = mds_txn_begin(s, false, &v.txn, "verify the store");
	if (err)
		return err;
	err = mds_super_get(s, v.txn, &v.sb);
	if (!err)
		err = mds_store_spread(s, v.txn, &v.index, &v.count);
	if (!err)
		err = walk_entries(&v);
	if (!err)
		err = walk_inodes(&v);
	if (!err)
		err = check_layouts_apart(&v);
	if (!err)
		err = check_pending_removals(&v);
	mdb_txn_abort(v.txn);
	free(v.named);
	free(v.dirs);
	return err;
}
