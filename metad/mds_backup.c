// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_backup.c -- the store seen from beside a running metad: a read-only
 * handle (for `clf fsck`) and a consistent copy (`clf backup`), and a
 * copy put back in place of the store (`clf restore`, metad stopped).
 *
 * A read-only handle takes no flock (metad holds it) and opens LMDB with
 * MDB_RDONLY: LMDB's own lock file lets a reader in another process see
 * one committed snapshot per transaction while metad keeps writing, so
 * the verify and the copy are of one moment, and metad is never blocked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable.h"
#include "error.h"
#include "mds_store_i.h"

#define DATA_FILE "data.mdb"

static int env_open_readonly(const char *dir, MDB_env **out)
{
	MDB_env *env;
	int rc;

	rc = mdb_env_create(&env);
	if (rc)
		return mds_lmdb_fail(rc, "create the LMDB environment");
	rc = mdb_env_set_maxdbs(env, 8);
	if (!rc)
		rc = mdb_env_set_mapsize(env, MDS_STORE_MAP_SIZE);
	if (!rc)
		rc = mdb_env_set_maxreaders(env, MDS_STORE_MAX_READERS);
	if (!rc)
		rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600);
	if (rc) {
		int err = rc == ENOENT ? ENOENT : EIO;

		mdb_env_close(env);
		return clf_fail(err, "mds: cannot open the store '%s': %s", dir,
				mdb_strerror(rc));
	}
	*out = env;
	return 0;
}

int mds_store_open_readonly(const char *dir, struct mds_store **out)
{
	struct { const char *name; MDB_dbi *dbi; } dbs[6];
	struct mds_store *s = calloc(1, sizeof(*s));
	struct mds_super sb;
	MDB_txn *txn;
	int rc, err;

	if (!s)
		return clf_fail(ENOMEM, "mds: out of memory");
	s->lock_fd = -1;
	err = env_open_readonly(dir, &s->env);
	if (err)
		goto free_store;
	dbs[0].name = MDS_DB_SUPER, dbs[0].dbi = &s->super;
	dbs[1].name = MDS_DB_INODES, dbs[1].dbi = &s->inodes;
	dbs[2].name = MDS_DB_DIRENTS, dbs[2].dbi = &s->dirents;
	dbs[3].name = MDS_DB_COOKIES, dbs[3].dbi = &s->cookies;
	dbs[4].name = MDS_DB_LAYOUTS, dbs[4].dbi = &s->layouts;
	dbs[5].name = MDS_DB_GC, dbs[5].dbi = &s->gc;
	err = mds_txn_begin(s, false, &txn, "open the store");
	if (err)
		goto close_env;
	for (size_t i = 0; i < 6 && !err; i++) {
		rc = mdb_dbi_open(txn, dbs[i].name, 0, dbs[i].dbi);
		if (rc)
			err = clf_fail(EIO, "mds: store '%s' has no '%s' database: %s",
				       dir, dbs[i].name, mdb_strerror(rc));
	}
	/* Stores of before the replies table have none. */
	if (!err && mdb_dbi_open(txn, MDS_DB_REPLIES, 0, &s->replies))
		s->replies = 0;
	if (!err)
		err = mds_super_get(s, txn, &sb);
	if (err) {
		mdb_txn_abort(txn);
		goto close_env;
	}
	/* A read-only transaction's handles stay open after its commit. */
	rc = mdb_txn_commit(txn);
	if (rc) {
		err = mds_lmdb_fail(rc, "open the store");
		goto close_env;
	}
	memcpy(s->fsid, sb.fsid, sizeof(s->fsid));
	*out = s;
	return 0;
close_env:
	mdb_env_close(s->env);
free_store:
	free(s);
	return err;
}

int mds_store_inodes(struct mds_store *s, uint64_t **inos, size_t *n)
{
	uint64_t *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_val key, val;
	int rc, err;

	err = mds_txn_begin(s, false, &txn, "list the inodes");
	if (err)
		return err;
	rc = mdb_cursor_open(txn, s->inodes, &cur);
	if (rc) {
		mdb_txn_abort(txn);
		return mds_lmdb_fail(rc, "list the inodes");
	}
	rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	while (!rc) {
		if (key.mv_size == MDS_INO_KEY_LEN) {
			if (cnt == cap) {
				cap = cap ? 2 * cap : 256;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					err = clf_fail(ENOMEM, "mds: out of memory");
					break;
				}
				v = nv;
			}
			v[cnt++] = mds_get_be64(key.mv_data);
		}
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (!err && rc != MDB_NOTFOUND)
		err = mds_lmdb_fail(rc, "list the inodes");
	if (err) {
		free(v);
		return err;
	}
	*inos = v;
	*n = cnt;
	return 0;
}

int mds_store_backup(const char *dir, const char *dest)
{
	MDB_env *env;
	int rc, err;

	if (mkdir(dest, 0700) && errno != EEXIST)
		return clf_fail(errno, "mds: cannot make '%s': %s", dest,
				strerror(errno));
	err = env_open_readonly(dir, &env);
	if (err)
		return err;
	/* Compacting: free pages are left out; one read transaction. */
	rc = mdb_env_copy2(env, dest, MDB_CP_COMPACT);
	mdb_env_close(env);
	if (rc)
		return clf_fail(rc == EEXIST ? EEXIST : rc > 0 ? rc : EIO,
				"mds: cannot copy the store '%s' to '%s': %s%s",
				dir, dest, mdb_strerror(rc),
				rc == EEXIST ? " (it holds a backup already)" : "");
	return clf_fsync_dir(dest, "mds");
}

/* Copy file from to to (a new file), synced. */
static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16];
	int in, out, err = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return clf_fail(errno, "mds: cannot open '%s': %s", from,
				strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		err = clf_fail(errno, "mds: cannot create '%s': %s", to,
			       strerror(errno));
		goto close_in;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			err = clf_fail(errno ? errno : EIO,
				       "mds: cannot write '%s': %s", to,
				       strerror(errno ? errno : EIO));
			break;
		}
	}
	if (!err && n < 0)
		err = clf_fail(errno, "mds: cannot read '%s': %s", from,
			       strerror(errno));
	if (!err && fsync(out))
		err = clf_fail(errno, "mds: cannot sync '%s': %s", to,
			       strerror(errno));
	close(out);
close_in:
	close(in);
	return err;
}

int mds_store_restore(const char *backup, const char *dir, char *saved,
		      size_t len)
{
	char from[4096], to[4096], tmp[4200], lockf[4096];
	struct mds_store *s = NULL;
	int err;

	/* The backup must itself be a sound store. */
	err = mds_store_open_readonly(backup, &s);
	if (!err)
		err = mds_store_verify(s);
	mds_store_close(s);
	s = NULL;
	if (err)
		return err;
	/* metad must be stopped: its flock says so. */
	err = mds_store_open(dir, &s);
	if (err == -EBUSY)
		return clf_fail(EBUSY,
				"mds: metad runs on the store '%s': stop it first (clf down)",
				dir);
	if (err)
		return err;
	mds_store_close(s);
	s = NULL;
	snprintf(from, sizeof(from), "%s/%s", backup, DATA_FILE);
	snprintf(to, sizeof(to), "%s/%s", dir, DATA_FILE);
	snprintf(tmp, sizeof(tmp), "%s.restore", to);
	snprintf(saved, len, "%s.before-restore", to);
	snprintf(lockf, sizeof(lockf), "%s/lock.mdb", dir);
	unlink(tmp);
	err = copy_file(from, tmp);
	if (!err && rename(to, saved))
		err = clf_fail(errno, "mds: cannot keep '%s' as '%s': %s", to,
			       saved, strerror(errno));
	if (!err && rename(tmp, to))
		err = clf_fail(errno, "mds: cannot put '%s' in place: %s", to,
			       strerror(errno));
	if (err) {
		unlink(tmp);
		return err;
	}
	/* LMDB's reader table of the old file means nothing to the new. */
	unlink(lockf);
	err = clf_fsync_dir(dir, "mds");
	if (!err)
		err = mds_store_open(dir, &s);
	if (!err)
		err = mds_store_verify(s);
	mds_store_close(s);
	return err;
}
