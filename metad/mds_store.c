// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_store.c -- the LMDB environment of the store: open and create,
 * transactions, and the inode and superblock accessors every operation
 * shares.  Keys: mds_keys.c; LMDB's errors: mds_lmdb.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clf_proto.h"
#include "durable.h"
#include "error.h"
#include "mds_store_i.h"

/* ---- transactions and shared steps ---- */

/* The snapshots this thread's request read, whose durability its answer
 * awaits (mds_store_settle); outside a request each read awaits its own
 * when it ends. */
static _Thread_local struct {
	bool in_request;
	MDB_env *env;
	uint64_t seen;		/* the newest; 0: none */
} reads;

void mds_store_request_begin(void)
{
	reads.in_request = true;
	reads.seen = 0;
}

void mds_store_settle(void)
{
	if (reads.seen)
		mds_group_visible(reads.env, reads.seen);
	reads.seen = 0;
	reads.in_request = false;
}

/* A read of snapshot id in env ended. */
static void read_done(MDB_env *env, uint64_t id)
{
	if (!reads.in_request) {
		mds_group_visible(env, id);
		return;
	}
	reads.env = env;
	if (id > reads.seen)
		reads.seen = id;
}

int mds_txn_begin(struct mds_store *s, bool write, MDB_txn **txn,
		  const char *what)
{
	int rc = write && s->group ? mds_group_begin(s->group, txn) :
		 mdb_txn_begin(s->env, NULL, write ? 0 : MDB_RDONLY, txn);

	return rc ? mds_lmdb_fail(rc, what) : 0;
}

/* mdb_txn_commit frees the transaction whether it succeeds or not. */
int mds_txn_commit(MDB_txn *txn, const char *what)
{
	/* The outcome of the calling thread's request, if it is armed,
	 * goes in with its change (mds_reply_note.c). */
	int rc, err = mds_reply_record(txn);

	if (err) {
		mdb_txn_abort(txn);
		return err;
	}
	/* A group member returns once its group's commit is durable. */
	if (mds_group_holds(txn)) {
		rc = mds_group_commit(txn);
	} else {
		MDB_env *env = mdb_txn_env(txn);
		size_t id = mdb_txn_id(txn);

		/* Alone (opening, tools, CLF_TEST_METAD_SOLO_COMMIT): with
		 * MDB_NOMETASYNC the meta page still needs its sync; a read
		 * in a grouped store waits for its snapshot instead. */
		rc = mdb_txn_commit(txn);
		if (!rc && mdb_env_get_userctx(env))
			read_done(env, id);
		else if (!rc)
			rc = mdb_env_sync(env, 1);
	}
	mds_reply_committed(rc == 0);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

#undef mdb_txn_abort
void mds_txn_abort(MDB_txn *txn)
{
	MDB_env *env;
	size_t id;

	if (!txn)
		return;
	/* A reader's answer must not rest on a commit not yet durable
	 * (mds_group.c). */
	env = mdb_txn_env(txn);
	id = mdb_txn_id(txn);
	if (mds_group_holds(txn)) {
		/* A failed request read the group's snapshot, the commits
		 * before this group's own (id - 1): its EEXIST may rest on
		 * one not yet durable. */
		mds_group_abort(txn);
		read_done(env, id - 1);
		return;
	}
	mdb_txn_abort(txn);
	read_done(env, id);
}
#define mdb_txn_abort(txn) mds_txn_abort(txn)

int mds_name_check(const char *name, const char *what)
{
	size_t len;

	if (!name)
		return clf_fail(EINVAL, "mds: cannot %s: no name", what);
	len = strnlen(name, MDS_NAME_MAX + 1);
	if (len == 0)
		return clf_fail(EINVAL, "mds: cannot %s: empty name", what);
	if (len > MDS_NAME_MAX)
		return clf_fail(ENAMETOOLONG,
				"mds: cannot %s: name longer than %d bytes",
				what, MDS_NAME_MAX);
	if (memchr(name, '/', len))
		return clf_fail(EINVAL, "mds: cannot %s: '/' in a name", what);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return clf_fail(EINVAL, "mds: cannot %s: '%s' is reserved",
				what, name);
	return 0;
}

/* ---- inodes and superblock ---- */

static int inode_get(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		     struct mds_inode *out, const char *what,
		     const char *noun)
{
	uint8_t kbuf[MDS_INO_KEY_LEN];
	MDB_val key, val;
	const char *why;
	int rc, err;

	mds_ino_key(kbuf, ino, &key);
	rc = mdb_get(txn, s->inodes, &key, &val);
	if (rc == MDB_NOTFOUND)
		return clf_fail(ENOENT, "mds: cannot %s: %s %llu does not exist",
				what, noun, (unsigned long long)ino);
	if (rc)
		return mds_lmdb_fail(rc, what);
	err = mds_inode_decode(val.mv_data, val.mv_size, ino, out);
	if (err || !out->layout_apart)
		return err;
	rc = mdb_get(txn, s->layouts, &key, &val);
	if (rc == MDB_NOTFOUND)
		return clf_fail(EIO,
			"mds: inode %llu: corrupt record: its layout is missing",
			(unsigned long long)ino);
	if (rc)
		return mds_lmdb_fail(rc, what);
	why = val.mv_size > MDS_LAYOUT_INLINE_MAX ?
	      mds_layout_raw_check(val.mv_data, val.mv_size) :
	      "layout apart but small";
	if (why)
		return clf_fail(EIO, "mds: inode %llu: corrupt layout: %s",
				(unsigned long long)ino, why);
	out->layout = val.mv_data;
	out->layout_len = val.mv_size;
	out->layout_stored = true;
	return 0;
}

/* Here, beside the inode lookups, so that every file of the namespace
 * and of the spread over metads can ask without calling each other. */
bool mds_ino_local(const struct mds_store *s, uint64_t ino)
{
	return CLF_PROTO_INO_METAD(ino) == s->index;
}

int mds_inode_get(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		  struct mds_inode *out, const char *what)
{
	return inode_get(s, txn, ino, out, what, "inode");
}

int mds_dir_get(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		struct mds_inode *out, const char *what)
{
	struct mds_inode in;
	int err = inode_get(s, txn, ino, &in, what, "directory");

	if (err)
		return err;
	if (!S_ISDIR(in.attr.mode))
		return clf_fail(ENOTDIR, "mds: cannot %s: inode %llu is not a directory",
				what, (unsigned long long)ino);
	*out = in;
	return 0;
}

int mds_inode_put(struct mds_store *s, MDB_txn *txn,
		  const struct mds_inode *in, bool create, const char *what)
{
	uint8_t kbuf[MDS_INO_KEY_LEN], small[256], *buf = small;
	size_t len = mds_inode_encode(in, NULL, 0);
	MDB_val key, val;
	int rc;

	mds_ino_key(kbuf, in->attr.ino, &key);
	/* A layout read from the layouts database stays there untouched; a
	 * new one replaces it, or removes it when it now fits the record. */
	if (mds_layout_apart(in) && !in->layout_stored) {
		val.mv_data = (void *)in->layout;
		val.mv_size = in->layout_len;
		rc = mdb_put(txn, s->layouts, &key, &val, 0);
		if (rc)
			return mds_lmdb_fail(rc, what);
	} else if (!mds_layout_apart(in) && in->layout_apart) {
		rc = mdb_del(txn, s->layouts, &key, NULL);
		if (rc && rc != MDB_NOTFOUND)
			return mds_lmdb_fail(rc, what);
	}
	/* Encode first, then put: in->layout may point into the page that
	 * the put is about to change. */
	if (len > sizeof(small)) {
		buf = malloc(len);
		if (!buf)
			return clf_fail(ENOMEM, "mds: cannot %s: out of memory",
					what);
	}
	mds_inode_encode(in, buf, len);
	val.mv_data = buf;
	val.mv_size = len;
	rc = mdb_put(txn, s->inodes, &key, &val, create ? MDB_NOOVERWRITE : 0);
	if (create)
		mds_reply_note_created(in->attr.ino);
	if (buf != small)
		free(buf);
	if (rc == MDB_KEYEXIST)
		return clf_fail(EIO, "mds: cannot %s: inode %llu already exists "
				"(the inode counter is behind)", what,
				(unsigned long long)in->attr.ino);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

int mds_inode_del(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		  const char *what)
{
	uint8_t kbuf[MDS_INO_KEY_LEN];
	MDB_val key;
	int rc;

	mds_ino_key(kbuf, ino, &key);
	rc = mdb_del(txn, s->inodes, &key, NULL);
	if (rc == MDB_NOTFOUND)
		return clf_fail(EIO, "mds: cannot %s: inode %llu vanished",
				what, (unsigned long long)ino);
	if (!rc)
		rc = mdb_del(txn, s->layouts, &key, NULL);
	return rc && rc != MDB_NOTFOUND ? mds_lmdb_fail(rc, what) : 0;
}

int mds_fail_context(int neg_err, const char *what)
{
	return clf_fail_ctx(neg_err, "mds: cannot %s", what);
}

int mds_inode_layout(const struct mds_inode *in, struct mds_layout **out)
{
	if (!in->layout) {
		*out = NULL;
		return 0;
	}
	return mds_layout_from_raw(in->layout, in->layout_len, out);
}

static void super_key(MDB_val *key)
{
	key->mv_data = (void *)MDS_SUPER_KEY;
	key->mv_size = strlen(MDS_SUPER_KEY);
}

int mds_super_get(struct mds_store *s, MDB_txn *txn, struct mds_super *out)
{
	MDB_val key, val;
	int rc;

	super_key(&key);
	rc = mdb_get(txn, s->super, &key, &val);
	if (rc == MDB_NOTFOUND)
		return clf_fail(EIO, "mds: the superblock is missing");
	if (rc)
		return mds_lmdb_fail(rc, "read the superblock");
	return mds_super_decode(val.mv_data, val.mv_size, out);
}

int mds_super_put(struct mds_store *s, MDB_txn *txn,
		  const struct mds_super *sb, const char *what)
{
	uint8_t buf[MDS_SUPER_LEN];
	MDB_val key, val = { .mv_size = sizeof(buf), .mv_data = buf };
	int rc;

	super_key(&key);
	mds_super_encode(sb, buf);
	rc = mdb_put(txn, s->super, &key, &val, 0);
	return rc ? mds_lmdb_fail(rc, what) : 0;
}

/* ---- open and close ---- */

/* A new store: superblock and root directory, in the caller's txn. */
static int store_format(struct mds_store *s, MDB_txn *txn)
{
	struct mds_super sb = {
		.next_ino = MDS_ROOT_INO + 1,
		.next_cookie = 1,
	};
	int64_t now = clf_wall_ns();
	struct mds_inode root = {
		.attr = {
			.ino = MDS_ROOT_INO, .mode = S_IFDIR | 0755, .nlink = 2,
			.atime = now, .mtime = now, .ctime = now,
		},
		.parent = MDS_ROOT_INO,
	};
	MDB_stat st;
	int rc, err;

	rc = mdb_stat(txn, s->inodes, &st);
	if (rc)
		return mds_lmdb_fail(rc, "format the store");
	if (st.ms_entries)
		return clf_fail(EIO, "mds: %zu inodes but no superblock",
				st.ms_entries);
	if (getrandom(sb.fsid, sizeof(sb.fsid), 0) != sizeof(sb.fsid))
		return clf_fail(errno, "mds: cannot draw a file system id: %s",
				strerror(errno));
	err = mds_super_put(s, txn, &sb, "format the store");
	if (err)
		return err;
	return mds_inode_put(s, txn, &root, true, "create the root directory");
}

/* Open the databases, format a new store, read the superblock. */
static int store_init(struct mds_store *s)
{
	struct { const char *name; MDB_dbi *dbi; } dbs[] = {
		{ MDS_DB_SUPER, &s->super },
		{ MDS_DB_INODES, &s->inodes },
		{ MDS_DB_DIRENTS, &s->dirents },
		{ MDS_DB_COOKIES, &s->cookies },
		{ MDS_DB_LAYOUTS, &s->layouts },
		{ MDS_DB_GC, &s->gc },
		{ MDS_DB_REPLIES, &s->replies },
		{ MDS_DB_INTENTS, &s->intents },
	};
	struct mds_super sb;
	MDB_txn *txn;
	MDB_val key, val;
	int rc, err;

	err = mds_txn_begin(s, true, &txn, "open the store");
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++) {
		rc = mdb_dbi_open(txn, dbs[i].name, MDB_CREATE, dbs[i].dbi);
		if (rc) {
			err = mds_lmdb_fail(rc, "open the store's databases");
			goto abort;
		}
	}
	super_key(&key);
	rc = mdb_get(txn, s->super, &key, &val);
	if (rc == MDB_NOTFOUND) {
		err = store_format(s, txn);
		if (err)
			goto abort;
	} else if (rc) {
		err = mds_lmdb_fail(rc, "read the superblock");
		goto abort;
	}
	err = mds_super_get(s, txn, &sb);
	/* Written back in this metad's format: a store that may now hold
	 * layouts apart is refused by a metad that would not find them. */
	if (!err)
		err = mds_super_put(s, txn, &sb, "open the store");
	if (err)
		goto abort;
	memcpy(s->fsid, sb.fsid, sizeof(s->fsid));
	return mds_txn_commit(txn, "open the store");
abort:
	mdb_txn_abort(txn);
	return err;
}

/* Keep a second process (or handle) off the directory. */
static int lock_dir(struct mds_store *s, const char *dir)
{
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, MDS_LOCK_FILE) >=
	    sizeof(path))
		return clf_fail(ENAMETOOLONG, "mds: store directory name too long");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return clf_fail(errno, "mds: cannot open '%s': %s", path,
				strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? EBUSY : errno;

		close(fd);
		return clf_fail(err, "mds: store '%s' is in use by another process",
				dir);
	}
	s->lock_fd = fd;
	return 0;
}

static int env_open(struct mds_store *s, const char *dir)
{
	int rc, dead;

	rc = mdb_env_create(&s->env);
	if (rc)
		return mds_lmdb_fail(rc, "create the LMDB environment");
	rc = mdb_env_set_maxdbs(s->env, 8);
	if (!rc)
		rc = mdb_env_set_mapsize(s->env, MDS_STORE_MAP_SIZE);
	if (!rc)
		rc = mdb_env_set_maxreaders(s->env, MDS_STORE_MAX_READERS);
	/* Commits sync their data (no MDB_NOSYNC) until the log takes over
	 * once the store is open (mds_wal.c).  The meta page's own sync is
	 * left to the next commit or to an explicit sync, one per group
	 * (mds_group.c says why that keeps the store whole and every
	 * acknowledged change durable). */
	if (!rc)
		rc = mdb_env_open(s->env, dir, MDB_NOTLS | MDB_NOMETASYNC,
				  0600);
	/* Free reader slots of processes that died holding them. */
	if (!rc)
		rc = mdb_reader_check(s->env, &dead);
	if (rc) {
		int err = clf_fail(mds_lmdb_errno(rc),
				   "mds: cannot open store '%s': %s", dir,
				   mdb_strerror(rc));

		mdb_env_close(s->env);
		s->env = NULL;
		return err;
	}
	return 0;
}

int mds_store_open(const char *dir, struct mds_store **out)
{
	struct mds_store *s;
	bool solo;
	int err;

	if (!dir || !out)
		return clf_fail(EINVAL, "mds: open: no directory");
	s = calloc(1, sizeof(*s));
	if (!s)
		return clf_fail(ENOMEM, "mds: open: out of memory");
	s->lock_fd = -1;
	err = clf_mkdirs_durable(dir, 0700, "mds");
	if (err)
		goto free_store;
	err = lock_dir(s, dir);
	if (err)
		goto free_store;
	/* Before LMDB reads it: the last checkpoint's tree back, when the
	 * last run did not close (mds_wal.c). */
	err = mds_wal_open(dir, &s->wal);
	if (err)
		goto unlock;
	err = env_open(s, dir);
	if (err)
		goto unlock;
	/*
	 * LMDB syncs its files at every commit but never the directory
	 * that names them: a store made on first start would vanish, with
	 * every commit in it, in the first power cut (test_crash).
	 */
	err = clf_fsync_dir(dir, "mds");
	if (err)
		goto close_env;
	err = store_init(s);
	/* CLF_TEST_METAD_SOLO_COMMIT: one commit per request, as before
	 * group commit, to measure what grouping gains. */
	solo = getenv("CLF_TEST_METAD_SOLO_COMMIT") != NULL;
	if (!err)
		err = mds_wal_recover(s->wal, s->env, !solo);
	/* From the checkpoint on, a group is durable by its log record and
	 * LMDB syncs only at checkpoints. */
	if (!err && !solo) {
		int rc = mdb_env_set_flags(s->env, MDB_NOSYNC, 1);

		err = rc ? mds_lmdb_fail(rc, "open the store") : 0;
	}
	if (!err && !solo)
		err = mds_group_start(s->env, s->wal, &s->group);
	if (err)
		goto close_env;
	*out = s;
	return 0;
close_env:
	mds_wal_close(s->wal);
	s->wal = NULL;
	mdb_env_close(s->env);
unlock:
	mds_wal_close(s->wal);
	close(s->lock_fd);
free_store:
	free(s);
	return err;
}

void mds_store_commit_stats(struct mds_store *s, struct mds_commit_stats *out)
{
	mds_group_stats(s->group, out);
}

void mds_store_close(struct mds_store *s)
{
	if (!s)
		return;
	mds_group_stop(s->group);
	/* Closed cleanly: the next open replays nothing. */
	if (s->wal)
		(void)mds_wal_checkpoint(s->wal, s->env, true);
	mds_wal_close(s->wal);
	mdb_env_close(s->env);
	close(s->lock_fd);
	free(s);
}

int mds_statfs(struct mds_store *s, struct mds_statfs *out)
{
	MDB_envinfo info;
	MDB_stat st, est;
	MDB_txn *txn;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "statfs");
	if (err)
		return err;
	rc = mdb_stat(txn, s->inodes, &st);
	if (!rc)
		rc = mdb_env_info(s->env, &info);
	if (!rc)
		rc = mdb_env_stat(s->env, &est);
	mdb_txn_abort(txn);
	if (rc)
		return mds_lmdb_fail(rc, "statfs");
	out->inodes = st.ms_entries;
	out->bytes_used = ((uint64_t)info.me_last_pgno + 1) * est.ms_psize;
	out->bytes_max = info.me_mapsize;
	memcpy(out->fsid, s->fsid, sizeof(out->fsid));
	return 0;
}
