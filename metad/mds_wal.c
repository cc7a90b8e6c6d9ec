// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_wal.c -- the store's write-ahead log: a group commit is durable
 * when its record is, one small write and one fdatasync, while LMDB
 * applies it without a sync and is made durable now and then as a whole
 * (a checkpoint).
 *
 * Why: a durable LMDB commit costs two ordered flushes (its pages, then
 * its meta page: mds_group.c) and a write of every page it touched; a
 * lone create cost both, ~3 ms on a loaded disk.  A record of the
 * group's changes (each put and delete, key and value, as the request
 * made it) appended to a file written in place costs one flush of a few
 * hundred bytes.
 *
 * What keeps the store whole across a power cut, while LMDB runs with
 * MDB_NOSYNC between checkpoints: its writes then reach the disk in any
 * order, and its newest meta page may point at pages never written.  So
 * a checkpoint (1) syncs LMDB: transaction T and every page of its tree
 * are on disk; (2) copies LMDB's two meta pages, T's among them, into a
 * slot of the checkpoint file, synced; (3) begins a read transaction on
 * T and keeps it until the next checkpoint is durable: LMDB never reuses
 * a page of a snapshot a reader holds, so T's tree stays on disk as it
 * was whatever later commits write; (4) starts a new generation of the
 * log at its beginning.  Opening a store that was not closed cleanly
 * puts the saved meta pages back (LMDB opens T's tree, whole) and
 * replays, in order, the records of that generation: everything a group
 * commit acknowledged since T.  A kill -9 leaves more of LMDB than T (the
 * page cache survives), which the same steps take back to T and forward
 * again.
 *
 * Files, in the store's directory:
 *   wal   records; written in place (preallocated) so that its
 *         fdatasync does not also commit the file system's journal
 *   ckpt  two slots, written in turn; the valid one of the higher count
 *         is the checkpoint
 * A record: u32 magic, u32 length, u64 generation, u64 sequence (LMDB's
 * txnid of the group), u64 check of all of it; then the changes: u8 kind (put, del),
 * u8 database, u16 key length, u32 value length, key, value.  Replay
 * stops at the first record that is not the next of its generation
 * (torn by the cut, or left from an older generation).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable.h"
#include "error.h"
#include "log.h"
#include "mds_store_i.h"

#undef mdb_put
#undef mdb_del
#undef mdb_txn_abort

#define WAL_FILE "wal"
#define CKPT_FILE "ckpt"
#define DATA_FILE "data.mdb"
/*
 * Preallocated, room for a group of MDS_GROUP_MAX creates past the limit.
 * A checkpoint once the log holds WAL_LIMIT bytes (~100 creates; it costs
 * an LMDB sync and one of the checkpoint file): the pages LMDB frees
 * meanwhile stay taken until then (the held tree), and every request's
 * nested transaction frees a few, so a longer interval grows data.mdb
 * (16 clients, 10,000 changes: 9.8 MB with 64 KiB, 24 MB with 256 KiB,
 * 76 MB with 1 MiB; 3.5 MB when LMDB synced each group itself) for no
 * rate measured here.
 */
#define WAL_SIZE (256u << 10)
#define WAL_LIMIT (64u << 10)
#define REC_MAGIC 0x57464c43u		/* "CLFW" */
#define CKPT_MAGIC 0x4b464c43u		/* "CLFK" */
#define REC_HEAD 32
#define OP_HEAD 8
#define OP_PUT 1
#define OP_DEL 2
#define META_MAX 65536			/* two meta pages at most */
#define SLOT_HEAD 64

struct mds_wal {
	char dir[4096];
	int fd;			/* the log */
	int ckpt_fd;
	uint64_t size;		/* of the log file */
	uint64_t limit;		/* a checkpoint once past it */
	uint64_t gen;		/* generation written now */
	uint64_t off;		/* where the next record goes */
	uint64_t last_seq;	/* of the last record written */
	uint64_t ckpt_count;	/* of the last checkpoint written */
	unsigned slot;		/* the slot the next checkpoint takes */
	MDB_txn *pin;		/* reader holding the checkpoint's tree */
	/* The open group's changes; the leader writes them as one record. */
	uint8_t *pend;
	size_t len, cap;
	/* Restored at open: the checkpoint to replay from. */
	bool dirty;		/* not closed cleanly: replay */
	bool presynced;		/* LMDB synced ahead of this checkpoint */
	uint64_t replay_gen;
	unsigned long n_ckpt, n_replayed;
};

static uint64_t check64(const uint8_t *p, size_t n, uint64_t h)
{
	/* FNV-1a: a torn or stale record, not an adversary. */
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int sys_fail(const char *what, const char *path)
{
	return clf_fail(errno ? errno : EIO, "mds: cannot %s '%s': %s", what,
			path, strerror(errno ? errno : EIO));
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static ssize_t pread_all(int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, off + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void path_of(const struct mds_wal *w, const char *name, char *out,
		    size_t len)
{
	snprintf(out, len, "%s/%s", w->dir, name);
}

/* ---- the checkpoint file ---- */

/* Slot layout: u32 magic, u32 meta length, u64 count, u64 generation,
 * u64 txnid, u32 clean, pad, u64 check at 56; the meta pages at 64. */
static size_t slot_size(void)
{
	return SLOT_HEAD + META_MAX;
}

struct ckpt {
	uint64_t count, gen, txnid;
	bool clean;
	uint32_t meta_len;
	uint8_t *meta;		/* META_MAX bytes */
};

static bool slot_read(int fd, unsigned slot, uint8_t *buf, struct ckpt *c)
{
	ssize_t n = pread_all(fd, buf, slot_size(), (off_t)slot * slot_size());
	uint32_t mlen;

	if (n < (ssize_t)SLOT_HEAD || get32(buf) != CKPT_MAGIC)
		return false;
	mlen = get32(buf + 4);
	if (mlen > META_MAX || (size_t)n < SLOT_HEAD + mlen)
		return false;
	if (check64(buf, 56, check64(buf + SLOT_HEAD, mlen,
				     0xcbf29ce484222325ull)) != get64(buf + 56))
		return false;
	c->meta_len = mlen;
	c->count = get64(buf + 8);
	c->gen = get64(buf + 16);
	c->txnid = get64(buf + 24);
	c->clean = get32(buf + 32) != 0;
	c->meta = buf + SLOT_HEAD;
	return true;
}

static int ckpt_write(struct mds_wal *w, const uint8_t *meta, uint32_t mlen,
		      uint64_t txnid, bool clean)
{
	uint8_t *buf = calloc(1, SLOT_HEAD + mlen);
	char path[4200];
	int err = 0;

	if (!buf)
		return clf_fail(ENOMEM, "mds: cannot write a checkpoint: out of memory");
	put32(buf, CKPT_MAGIC);
	put32(buf + 4, mlen);
	put64(buf + 8, w->ckpt_count + 1);
	put64(buf + 16, w->gen + 1);
	put64(buf + 24, txnid);
	put32(buf + 32, clean);
	memcpy(buf + SLOT_HEAD, meta, mlen);
	put64(buf + 56, check64(buf, 56, check64(buf + SLOT_HEAD, mlen,
						0xcbf29ce484222325ull)));
	path_of(w, CKPT_FILE, path, sizeof(path));
	if (pwrite_all(w->ckpt_fd, buf, SLOT_HEAD + mlen,
		       (off_t)w->slot * slot_size()) ||
	    fdatasync(w->ckpt_fd))
		err = sys_fail("write the checkpoint", path);
	free(buf);
	if (err)
		return err;
	w->ckpt_count++;
	w->gen++;
	w->slot ^= 1;
	return 0;
}

/* ---- open: the meta pages of the last checkpoint back in place ---- */

static int open_file(struct mds_wal *w, const char *name, int *fd,
		     bool *made)
{
	char path[4200];

	path_of(w, name, path, sizeof(path));
	*made = false;
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT) {
		*fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		*made = *fd >= 0;
	}
	return *fd < 0 ? sys_fail("open", path) : 0;
}

/* A new log: zeros written, not a hole, so that writing a record in
 * place changes no file system metadata. */
static int wal_prealloc(struct mds_wal *w)
{
	static const uint8_t zero[65536];
	char path[4200];

	path_of(w, WAL_FILE, path, sizeof(path));
	for (uint64_t o = 0; o < WAL_SIZE; o += sizeof(zero))
		if (pwrite_all(w->fd, zero, sizeof(zero), (off_t)o))
			return sys_fail("write", path);
	if (fdatasync(w->fd))
		return sys_fail("sync", path);
	return 0;
}

static int restore_meta(struct mds_wal *w, const struct ckpt *c)
{
	char path[4200];
	int fd, err = 0;

	path_of(w, DATA_FILE, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : sys_fail("open", path);
	if (pwrite_all(fd, c->meta, c->meta_len, 0) || fdatasync(fd))
		err = sys_fail("put the checkpoint's meta pages back into", path);
	close(fd);
	return err;
}

int mds_wal_open(const char *dir, struct mds_wal **out)
{
	struct mds_wal *w = calloc(1, sizeof(*w));
	uint8_t *buf[2] = { NULL, NULL };
	struct ckpt c[2] = { { 0 } };
	bool made_wal, made_ckpt, ok[2];
	struct stat st;
	int err;

	if (!w)
		return clf_fail(ENOMEM, "mds: cannot open the log: out of memory");
	w->fd = w->ckpt_fd = -1;
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	err = open_file(w, WAL_FILE, &w->fd, &made_wal);
	if (!err)
		err = open_file(w, CKPT_FILE, &w->ckpt_fd, &made_ckpt);
	if (!err && made_wal)
		err = wal_prealloc(w);
	if (!err && (made_wal || made_ckpt))
		err = clf_fsync_dir(dir, "mds");
	if (!err && fstat(w->fd, &st))
		err = sys_fail("stat", WAL_FILE);
	if (err)
		goto fail;
	w->size = (uint64_t)st.st_size;
	/* Tests: checkpoints every few groups (CLF_TEST_METAD_WAL_SIZE). */
	w->limit = WAL_LIMIT;
	if (getenv("CLF_TEST_METAD_WAL_SIZE"))
		w->limit = strtoull(getenv("CLF_TEST_METAD_WAL_SIZE"), NULL, 10);
	buf[0] = malloc(slot_size());
	buf[1] = malloc(slot_size());
	if (!buf[0] || !buf[1]) {
		err = clf_fail(ENOMEM, "mds: cannot open the log: out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < 2; i++)
		ok[i] = slot_read(w->ckpt_fd, i, buf[i], &c[i]);
	if (ok[0] || ok[1]) {
		unsigned i = ok[0] && (!ok[1] || c[0].count > c[1].count) ? 0 : 1;

		w->ckpt_count = c[i].count;
		w->gen = c[i].gen;
		w->slot = i ^ 1;
		if (!c[i].clean) {
			/* Not closed cleanly: LMDB back to the checkpoint,
			 * then the log forward (mds_wal_recover). */
			err = restore_meta(w, &c[i]);
			if (err)
				goto fail;
			w->dirty = true;
			w->replay_gen = c[i].gen;
		}
	}
	free(buf[0]);
	free(buf[1]);
	*out = w;
	return 0;
fail:
	free(buf[0]);
	free(buf[1]);
	mds_wal_close(w);
	return err;
}

/* ---- checkpoints ---- */

int mds_wal_checkpoint(struct mds_wal *w, MDB_env *env, bool clean)
{
	uint8_t *meta = NULL;
	char path[4200];
	MDB_txn *pin = NULL;
	MDB_envinfo info;
	MDB_stat st;
	int rc, fd, err;

	/* No commit runs (the caller keeps them out): T is the last one. */
	rc = mdb_env_sync(env, 1);
	if (!rc)
		rc = mdb_env_info(env, &info);
	if (!rc)
		rc = mdb_env_stat(env, &st);
	if (!rc && !clean)
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &pin);
	if (rc)
		return mds_lmdb_fail(rc, "checkpoint the store");
	if (2 * (size_t)st.ms_psize > META_MAX) {
		err = clf_fail(EINVAL, "mds: LMDB pages of %u bytes: too large to checkpoint",
			       st.ms_psize);
		goto fail;
	}
	meta = malloc(2 * (size_t)st.ms_psize);
	path_of(w, DATA_FILE, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!meta || fd < 0) {
		err = meta ? sys_fail("open", path) :
		      clf_fail(ENOMEM, "mds: cannot checkpoint: out of memory");
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (pread_all(fd, meta, 2 * (size_t)st.ms_psize, 0) !=
	    (ssize_t)(2 * (size_t)st.ms_psize)) {
		err = sys_fail("read the meta pages of", path);
		close(fd);
		goto fail;
	}
	close(fd);
	err = ckpt_write(w, meta, 2 * st.ms_psize, info.me_last_txnid, clean);
	if (err)
		goto fail;
	free(meta);
	/* The new checkpoint is durable: the old tree may go. */
	if (w->pin)
		mdb_txn_abort(w->pin);
	w->pin = pin;
	w->off = 0;
	w->last_seq = info.me_last_txnid;
	w->presynced = false;
	w->n_ckpt++;
	return 0;
fail:
	free(meta);
	if (pin)
		mdb_txn_abort(pin);
	return err;
}

bool mds_wal_needs_checkpoint(const struct mds_wal *w)
{
	return w->off > w->limit;
}

bool mds_wal_take_presync(struct mds_wal *w)
{
	if (w->presynced || w->off <= w->limit / 2)
		return false;
	w->presynced = true;
	return true;
}

/* ---- recovery ---- */

static int replay_ops(MDB_txn *txn, const uint8_t *p, size_t len)
{
	while (len) {
		MDB_val key, val;
		uint32_t vlen;
		uint16_t klen;
		int rc;

		if (len < OP_HEAD)
			return MDB_CORRUPTED;
		klen = (uint16_t)(p[2] | p[3] << 8);
		vlen = get32(p + 4);
		if (len - OP_HEAD < (size_t)klen + vlen)
			return MDB_CORRUPTED;
		key.mv_size = klen;
		key.mv_data = (void *)(p + OP_HEAD);
		val.mv_size = vlen;
		val.mv_data = (void *)(p + OP_HEAD + klen);
		if (p[0] == OP_PUT)
			rc = mdb_put(txn, p[1], &key, &val, 0);
		else if (p[0] == OP_DEL)
			rc = mdb_del(txn, p[1], &key, NULL);
		else
			return MDB_CORRUPTED;
		if (rc && rc != MDB_NOTFOUND)
			return rc;
		p += OP_HEAD + klen + vlen;
		len -= OP_HEAD + (size_t)klen + vlen;
	}
	return 0;
}

int mds_wal_recover(struct mds_wal *w, MDB_env *env, bool logging)
{
	uint8_t head[REC_HEAD], *body = NULL;
	uint64_t off = 0, seq = 0;
	unsigned long n = 0;
	MDB_txn *txn = NULL;
	int rc = 0, err;

	if (w->dirty) {
		rc = mdb_txn_begin(env, NULL, 0, &txn);
		while (!rc && off + REC_HEAD <= w->size) {
			uint32_t len;
			uint8_t *nb;

			if (pread_all(w->fd, head, REC_HEAD, (off_t)off) != REC_HEAD)
				break;
			len = get32(head + 4);
			if (get32(head) != REC_MAGIC ||
			    get64(head + 8) != w->replay_gen ||
			    get64(head + 16) <= seq ||
			    off + REC_HEAD + len > w->size)
				break;
			nb = realloc(body, len ? len : 1);
			if (!nb) {
				rc = ENOMEM;
				break;
			}
			body = nb;
			if (pread_all(w->fd, body, len, (off_t)(off + REC_HEAD)) !=
			    (ssize_t)len)
				break;
			if (check64(head, 24, check64(body, len,
					0xcbf29ce484222325ull)) != get64(head + 24))
				break;
			rc = replay_ops(txn, body, len);
			seq = get64(head + 16);
			off += REC_HEAD + len;
			n++;
		}
		free(body);
		if (!rc)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
		if (rc)
			return mds_lmdb_fail(rc, "replay the store's log");
		w->n_replayed = n;
		if (n)
			clf_log(CLF_LOG_INFO, "store: %lu group commits replayed "
				"from the log", n);
	}
	w->dirty = false;
	/* Not logging (CLF_TEST_METAD_SOLO_COMMIT): LMDB syncs each commit
	 * itself, and the next open must not take it back. */
	err = mds_wal_checkpoint(w, env, !logging);
	return err;
}

/* ---- the group's record ---- */

size_t mds_wal_mark(const struct mds_wal *w)
{
	return w->len;
}

void mds_wal_truncate(struct mds_wal *w, size_t mark)
{
	if (mark < w->len)
		w->len = mark;
}

bool mds_wal_empty(const struct mds_wal *w)
{
	return !w->len;
}

int mds_wal_note(struct mds_wal *w, int kind, MDB_dbi dbi,
		 const MDB_val *key, const MDB_val *val)
{
	size_t vlen = val ? val->mv_size : 0;
	size_t need = w->len + REC_HEAD + OP_HEAD + key->mv_size + vlen;
	uint8_t *p;

	if (key->mv_size > 0xffff || vlen > 0xffffffffu || dbi > 0xff)
		return ENOMEM;
	if (need > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *nb;

		while (cap < need)
			cap *= 2;
		nb = realloc(w->pend, cap);
		if (!nb)
			return ENOMEM;
		w->pend = nb;
		w->cap = cap;
	}
	/* The record's head goes in front, at REC_HEAD: room kept. */
	p = w->pend + REC_HEAD + w->len;
	p[0] = (uint8_t)(kind == MDS_WAL_DEL ? OP_DEL : OP_PUT);
	p[1] = (uint8_t)dbi;
	p[2] = (uint8_t)key->mv_size;
	p[3] = (uint8_t)(key->mv_size >> 8);
	put32(p + 4, (uint32_t)vlen);
	memcpy(p + OP_HEAD, key->mv_data, key->mv_size);
	if (vlen)
		memcpy(p + OP_HEAD + key->mv_size, val->mv_data, vlen);
	w->len += OP_HEAD + key->mv_size + vlen;
	return 0;
}

int mds_wal_write(struct mds_wal *w, uint64_t seq)
{
	uint8_t *h = w->pend;
	uint64_t total = REC_HEAD + w->len;
	char path[4200];

	if (!w->len)
		return 0;
	put32(h, REC_MAGIC);
	put32(h + 4, (uint32_t)w->len);
	put64(h + 8, w->gen);
	put64(h + 16, seq);
	put64(h + 24, check64(h, 24, check64(h + REC_HEAD, w->len,
						  0xcbf29ce484222325ull)));
	if (pwrite_all(w->fd, h, total, (off_t)w->off)) {
		path_of(w, WAL_FILE, path, sizeof(path));
		w->len = 0;
		return sys_fail("write the log", path);
	}
	w->off += total;
	if (w->off > w->size)
		w->size = w->off;
	w->last_seq = seq;
	w->len = 0;
	return 0;
}

int mds_wal_sync(struct mds_wal *w)
{
	char path[4200];

	if (!fdatasync(w->fd))
		return 0;
	path_of(w, WAL_FILE, path, sizeof(path));
	return sys_fail("sync the log", path);
}

unsigned long mds_wal_checkpoints(const struct mds_wal *w)
{
	return w ? w->n_ckpt : 0;
}

void mds_wal_close(struct mds_wal *w)
{
	if (!w)
		return;
	if (w->pin)
		mdb_txn_abort(w->pin);
	if (w->fd >= 0)
		close(w->fd);
	if (w->ckpt_fd >= 0)
		close(w->ckpt_fd);
	free(w->pend);
	free(w);
}
