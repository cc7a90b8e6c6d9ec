/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_store_i.h -- inside the store: the handle, the databases, the
 * record encodings and the helpers every operation shares.
 *
 * Databases of the LMDB environment (all keys compared as bytes):
 *
 *   super    "super" -> superblock record (mds_super_*)
 *   inodes   u64 ino, big-endian -> inode record (mds_inode_*)
 *   dirents  u64 parent ino, big-endian, + name bytes (no NUL)
 *            -> u64 child ino, u64 cookie (little-endian)
 *   cookies  u64 parent ino, big-endian, + u64 cookie, big-endian
 *            -> u64 child ino (little-endian) + name bytes
 *   layouts  u64 ino, big-endian -> layout section (format 2): the
 *            layouts over MDS_LAYOUT_INLINE_MAX bytes, kept apart from
 *            their inode record so that an attribute update (a size, a
 *            time) rewrites a small record, not megabytes of layout
 *   gc       u64 ino, big-endian, + u32 iod, big-endian -> one byte 0:
 *            the subfiles of removed inode ino still on iod (mds_gcq.c)
 *   replies  u64 client, big-endian, + u64 seq, big-endian -> u16 op,
 *            u16 0, u32 0, u64 ino, i64 time (little-endian): the
 *            outcome of a request that changed the store (mds_replies.c)
 *
 * Big-endian keys make a cursor range list one directory: by name in
 * dirents (lookup, emptiness), by cookie in cookies (readdir).  Values are
 * little-endian like everything clf encodes (wire.h).
 */
#ifndef MDS_STORE_I_H
#define MDS_STORE_I_H

#include <lmdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "mds_store.h"

#define MDS_DB_SUPER "super"
#define MDS_DB_INODES "inodes"
#define MDS_DB_DIRENTS "dirents"
#define MDS_DB_COOKIES "cookies"
#define MDS_DB_LAYOUTS "layouts"
#define MDS_DB_GC "gc"
#define MDS_DB_REPLIES "replies"
#define MDS_DB_INTENTS "intents"
#define MDS_SUPER_KEY "super"
#define MDS_SPREAD_KEY "metads"	/* in super: u32 index, u32 count,
				   when the namespace is spread */
#define MDS_LOCK_FILE "metad.lock"

/* Of the store as a whole.  2: layouts may live in the layouts
 * database.  3: symlinks, fifos, sockets and device nodes (inode
 * records with a special section), files with several names.  A store
 * is raised to this metad's format when it opens it, so that an older
 * metad refuses it rather than meet records it cannot read. */
#define MDS_FORMAT_VERSION 3
#define MDS_INODE_VERSION 1	/* of one inode record */
/* Layouts up to this many bytes stay inside their inode record (every
 * round-robin layout); larger ones go to the layouts database. */
#define MDS_LAYOUT_INLINE_MAX 2048

/* Bound on the parent walk, against a corrupt parent cycle. */
#define MDS_MAX_DEPTH 65536

struct mds_store {
	MDB_env *env;		/* owned */
	MDB_dbi super;		/* handles, valid until env closes */
	MDB_dbi inodes;
	MDB_dbi dirents;
	MDB_dbi cookies;
	MDB_dbi layouts;
	MDB_dbi gc;
	MDB_dbi replies;
	struct mds_group *group; /* owned; NULL: each write transaction
				    commits on its own (opening, tools) */
	struct mds_wal *wal;	/* owned; the log (mds_wal.c) */
	int lock_fd;		/* holds the flock that keeps others out */
	uint32_t index;		/* this metad's, of several; 0 alone
				   (mds_store_set_index), set before use */
	MDB_dbi intents;	/* cross-metad renames (mds_xrename.c) */
	uint8_t fsid[16];	/* copy of the superblock's, never changes */
};

/* The superblock: counters every create advances. */
struct mds_super {
	uint8_t fsid[16];
	uint64_t next_ino;	/* > every inode number in use */
	uint64_t next_cookie;	/* > every readdir cookie in use */
};

/*
 * An inode as the code handles it.  The layout stays encoded: it is
 * checked when the record is decoded, copied out by mds_layout_from_raw
 * and otherwise carried over unchanged when the record is rewritten.
 */
struct mds_inode {
	struct mds_attr attr;	/* attr.ino is the key */
	uint64_t parent;	/* dirs: their directory (root: itself);
				   files: 0 */
	const uint8_t *layout;	/* borrowed: the encoded layout, inside
				   the record, the layouts database or a
				   caller's buffer; NULL when the file has
				   none */
	size_t layout_len;
	bool layout_apart;	/* the record says: in the layouts database
				   (set by decode; mds_inode_get reads it) */
	bool layout_stored;	/* layout is the one stored apart: a put
				   leaves it where it is */
	const uint8_t *target;	/* symlinks: borrowed, like layout; not
				   NUL-terminated; NULL for other kinds */
	uint32_t target_len;	/* bytes at target, 1..MDS_SYMLINK_MAX */
};

/* ---- group commit (mds_group.c) ---- */

struct mds_group;

/* Start group commit on env, logging each group to wal (NULL: LMDB
 * syncs each group itself); stop it (no request inside). */
int mds_group_start(MDB_env *env, struct mds_wal *wal,
		    struct mds_group **out);
void mds_group_stop(struct mds_group *g);
/* A write transaction inside the current group (LMDB result). */
int mds_group_begin(struct mds_group *g, MDB_txn **txn);
/* Whether txn is the group member this thread holds. */
bool mds_group_holds(MDB_txn *txn);
/* Commit the member into its group and wait until the group's commit
 * is durable; its LMDB result. */
int mds_group_commit(MDB_txn *txn);
void mds_group_abort(MDB_txn *txn);
void mds_group_stats(struct mds_group *g, struct mds_commit_stats *out);
/* A transaction of env that saw snapshot txnid ended: wait until that
 * snapshot is durable (nothing when env has no group, or it is). */
void mds_group_visible(MDB_env *env, uint64_t txnid);

/* ---- the write-ahead log (mds_wal.c) ---- */

struct mds_wal;

enum { MDS_WAL_PUT, MDS_WAL_DEL };

/* Before LMDB opens dir: the last checkpoint's meta pages back in place
 * when the last run did not close cleanly. */
int mds_wal_open(const char *dir, struct mds_wal **out);
/* After the environment opened: replay the log, then checkpoint (a clean
 * one when not logging: LMDB then syncs each commit itself). */
int mds_wal_recover(struct mds_wal *w, MDB_env *env, bool logging);
/* LMDB synced, its meta pages saved, the tree held, the log restarted;
 * no commit may run meanwhile.  clean: nothing to replay at the next
 * open (the store closes). */
int mds_wal_checkpoint(struct mds_wal *w, MDB_env *env, bool clean);
bool mds_wal_needs_checkpoint(const struct mds_wal *w);
/* Half way to a checkpoint, once: whether to sync LMDB now, while
 * commits go on, so that the checkpoint's own sync, which holds them
 * off, finds little left to write. */
bool mds_wal_take_presync(struct mds_wal *w);
void mds_wal_close(struct mds_wal *w);
/* The open group's changes: a mark to roll a failed member back to, a
 * change (LMDB result), the group's record written (seq: its txnid) and
 * synced (0 or a negative errno). */
size_t mds_wal_mark(const struct mds_wal *w);
void mds_wal_truncate(struct mds_wal *w, size_t mark);
bool mds_wal_empty(const struct mds_wal *w);
int mds_wal_note(struct mds_wal *w, int kind, MDB_dbi dbi,
		 const MDB_val *key, const MDB_val *val);
int mds_wal_write(struct mds_wal *w, uint64_t seq);
int mds_wal_sync(struct mds_wal *w);
unsigned long mds_wal_checkpoints(const struct mds_wal *w);

/*
 * Every change of the store goes through these (mds_group.c): inside a
 * group member it is also noted for the group's log record.
 */
int mds_store_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val,
		  unsigned int flags);
int mds_store_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *val);
#define mdb_put(t, d, k, v, f) mds_store_put(t, d, k, v, f)
#define mdb_del(t, d, k, v) mds_store_del(t, d, k, v)

/*
 * Abort a transaction, a group member included (which must let the next
 * member in).  Every store file aborts through this: mdb_txn_abort is
 * redirected so that no abort path, present or future, can forget it.
 */
void mds_txn_abort(MDB_txn *txn);
#define mdb_txn_abort(txn) mds_txn_abort(txn)

/* Kinds kept with a special section (no layout, no children). */
static inline bool mds_mode_special(uint32_t mode)
{
	uint32_t fmt = mode & 0170000u;

	return fmt == 0120000u || fmt == 0010000u || fmt == 0140000u ||
	       fmt == 0020000u || fmt == 0060000u;
}

/* Whether in's layout is written to the layouts database. */
static inline bool mds_layout_apart(const struct mds_inode *in)
{
	return in->layout && in->layout_len > MDS_LAYOUT_INLINE_MAX;
}

/* ---- records (mds_inode.c) ---- */

/*
 * Encode in into buf (cap bytes; buf NULL and cap 0 to measure).
 * Returns the record's length, which may exceed cap.
 */
size_t mds_inode_encode(const struct mds_inode *in, uint8_t *buf, size_t cap);

/*
 * Decode and check the record of inode ino.  out->layout points into buf,
 * or is NULL with out->layout_apart set when the layout lives in the
 * layouts database.  Returns 0 or -EIO ("mds: inode N: corrupt record:
 * why").
 */
int mds_inode_decode(const uint8_t *buf, size_t len, uint64_t ino,
		     struct mds_inode *out);

/* Superblock record; decode gives -EIO or -EPROTONOSUPPORT. */
#define MDS_SUPER_LEN (4 + 16 + 8 + 8)
void mds_super_encode(const struct mds_super *sb, uint8_t buf[MDS_SUPER_LEN]);
int mds_super_decode(const uint8_t *buf, size_t len, struct mds_super *out);

/* The value of a dirents record; decode gives -EIO without a message
 * (the caller knows which entry). */
#define MDS_DIRENT_LEN 16
void mds_dirent_encode(uint64_t ino, uint64_t cookie,
		       uint8_t buf[MDS_DIRENT_LEN]);
int mds_dirent_decode(const MDB_val *v, uint64_t *ino, uint64_t *cookie);
/* An entry naming an inode of another metad keeps its mode, u32 after
 * the two numbers (several metads): encode with mode 0 for a local
 * inode (MDS_DIRENT_LEN bytes, returned), else MDS_DIRENT_REMOTE_LEN;
 * decode gives mode 0 for the short form. */
#define MDS_DIRENT_REMOTE_LEN 20
size_t mds_dirent_encode_mode(uint64_t ino, uint64_t cookie, uint32_t mode,
			      uint8_t buf[MDS_DIRENT_REMOTE_LEN]);
int mds_dirent_decode_mode(const MDB_val *v, uint64_t *ino, uint64_t *cookie,
			   uint32_t *mode);

/* ---- entries, for the operations across metads (mds_remote.c) ---- */

/* Entry name of dir: -ENOENT without a message; mode: the one kept in
 * a remote entry, 0 for a local one. */
int mds_entry_read(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		   const char *name, uint64_t *ino, uint64_t *cookie,
		   uint32_t *mode, const char *what);
/* Add name -> ino (mode kept when ino is remote) with the next cookie. */
int mds_entry_add(struct mds_store *s, MDB_txn *txn, struct mds_super *sb,
		  uint64_t dir, const char *name, uint64_t ino, uint32_t mode,
		  const char *what);
int mds_entry_del(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		  const char *name, uint64_t cookie, const char *what);
int mds_dir_changed(struct mds_store *s, MDB_txn *txn, struct mds_inode *dir,
		    int delta, int64_t now, const char *what);

/* An entry as its directory holds it. */
struct mds_entry {
	uint64_t ino;
	uint64_t cookie;
	uint32_t mode;		/* kept for a remote inode; 0 for a local one */
};

/* Check name, then begin a transaction for an operation on it. */
int mds_entry_begin(struct mds_store *s, bool write, const char *name,
		    MDB_txn **txn, const char *what);
/*
 * Directory dir into *parent and its entry name into *e (mds_entry.c).
 * A missing name: -ENOENT, "mds: cannot WHAT: MISSING".
 */
int mds_entry_find(struct mds_store *s, MDB_txn *txn, uint64_t dir,
		   const char *name, struct mds_inode *parent,
		   struct mds_entry *e, const char *missing, const char *what);
/* Directory dir into *parent, and name not in it yet (else -EEXIST). */
int mds_entry_check_new(struct mds_store *s, MDB_txn *txn, uint64_t dir,
			const char *name, struct mds_inode *parent,
			const char *what);
/* The store's place in a spread namespace (index 0 of 1 when alone). */
int mds_store_spread(struct mds_store *s, MDB_txn *txn, uint32_t *index,
		     uint32_t *count);
/* 0 no entries, 1 some, or a negative errno. */
int mds_dir_has_entries(struct mds_store *s, MDB_txn *txn, uint64_t dir,
			const char *what);

/* ---- layouts (mds_layout.c) ---- */

/*
 * The encoded layout section of an inode record, in a new buffer the
 * caller frees.  layout must have passed mds_layout_check.  Returns 0 or
 * -ENOMEM.
 */
int mds_layout_encode(const struct mds_layout *layout, uint8_t **buf,
		      size_t *len);

/*
 * Check an encoded layout section's structure (not its types).  Returns
 * NULL when it is sound, else why not.
 */
const char *mds_layout_raw_check(const uint8_t *raw, size_t len);

/* A new layout (one allocation) from a checked encoded section.  Returns
 * 0 or -ENOMEM. */
int mds_layout_from_raw(const uint8_t *raw, size_t len,
			struct mds_layout **out);

/* ---- keys (mds_keys.c), LMDB errors (mds_lmdb.c), transactions and
 * shared steps (mds_store.c) ---- */

#define MDS_INO_KEY_LEN 8
#define MDS_DIRENT_KEY_MAX (8 + MDS_NAME_MAX)
#define MDS_COOKIE_KEY_LEN 16

void mds_put_be64(uint8_t *p, uint64_t v);
uint64_t mds_get_be64(const uint8_t *p);
void mds_ino_key(uint8_t buf[MDS_INO_KEY_LEN], uint64_t ino, MDB_val *key);
void mds_dirent_key(uint8_t buf[MDS_DIRENT_KEY_MAX], uint64_t dir,
		    const char *name, size_t len, MDB_val *key);
void mds_cookie_key(uint8_t buf[MDS_COOKIE_KEY_LEN], uint64_t dir,
		    uint64_t cookie, MDB_val *key);

/* An LMDB return code as a positive errno (LMDB's own codes mapped). */
int mds_lmdb_errno(int rc);

/* An LMDB return code as a negative errno, with the message
 * "mds: cannot WHAT: lmdb's reason". */
int mds_lmdb_fail(int rc, const char *what);

/* Begin a read (write == false) or write transaction; commit a write.
 * Failures set a message naming what. */
int mds_txn_begin(struct mds_store *s, bool write, MDB_txn **txn,
		  const char *what);
int mds_txn_commit(MDB_txn *txn, const char *what);

/*
 * Read inode ino in txn.  out->layout borrows from the database and is
 * valid until the next write in txn or its end.  Returns 0, -ENOENT
 * ("mds: cannot WHAT: inode N does not exist"), -EIO.
 */
int mds_inode_get(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		  struct mds_inode *out, const char *what);

/* Same, demanding a directory (-ENOTDIR). */
int mds_dir_get(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		struct mds_inode *out, const char *what);

/*
 * Write inode in: a new record when create (-EIO if the number is taken:
 * the counter is behind), else a replacement.  Encodes before the write,
 * so in->layout may borrow from the record it replaces; but a pointer
 * borrowed from any other record may move with any write, so operations
 * read and copy everything first, then write.
 */
int mds_inode_put(struct mds_store *s, MDB_txn *txn,
		  const struct mds_inode *in, bool create, const char *what);

/* Delete inode ino's record (-EIO when it is missing). */
int mds_inode_del(struct mds_store *s, MDB_txn *txn, uint64_t ino,
		  const char *what);

/* Superblock read and write in txn. */
int mds_super_get(struct mds_store *s, MDB_txn *txn, struct mds_super *out);
int mds_super_put(struct mds_store *s, MDB_txn *txn,
		  const struct mds_super *sb, const char *what);

/*
 * Check a name.  Returns 0, or -EINVAL / -ENAMETOOLONG with the message
 * "mds: cannot WHAT: why".
 */
int mds_name_check(const char *name, const char *what);

/*
 * Fail again with the calling thread's last message behind "mds: cannot
 * WHAT: ", for errors from helpers that do not know the operation.
 * Returns neg_err.
 */
int mds_fail_context(int neg_err, const char *what);

/* The layout of in, copied out (NULL when it has none). */
int mds_inode_layout(const struct mds_inode *in, struct mds_layout **out);

/* Queue the removal of the subfiles of inode in, about to be deleted in
 * txn, on every iod of its layout (mds_gcq.c).  Nothing for no layout. */
int mds_gc_queue(struct mds_store *s, MDB_txn *txn,
		 const struct mds_inode *in, const char *what);

/* ---- recorded outcomes (mds_reply_note.c, mds_replies.c) ---- */

#define MDS_REPLY_KEY_LEN 16
#define MDS_REPLY_VAL_LEN 24	/* u16 op, u16 0, u32 0, u64 ino, i64 time */

/* The key of request (client, seq)'s record (mds_keys.c). */
void mds_reply_key(uint8_t buf[MDS_REPLY_KEY_LEN], uint64_t client,
		   uint64_t seq, MDB_val *key);

/* In mds_txn_commit, before the commit: the armed request's record into
 * txn (nothing when the thread is not armed or already recorded).
 * Returns 0 or the LMDB failure. */
int mds_reply_record(MDB_txn *txn);

/* After the commit: whether it succeeded. */
void mds_reply_committed(bool ok);

/* mds_inode_put made inode ino: the armed request's inode unless it
 * named one already. */
void mds_reply_note_created(uint64_t ino);

#endif /* MDS_STORE_I_H */
