/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_store.h -- the metadata server's durable store: the directory tree,
 * the inodes and the layout of every file, in LMDB.
 *
 * This is a library, not a daemon: metad decodes a request, calls one
 * function here, encodes the reply.  Nothing here knows the wire protocol.
 *
 * Durability and atomicity
 * ------------------------
 *   Every operation is one LMDB transaction.  A write returns once its
 *   commit is on disk (its data synced by LMDB, its meta page by the
 *   next commit or an explicit sync: mds_group.c), so an operation that
 *   returned 0 survives a crash of the process or the machine; one that
 *   did not return (killed, power cut) left either all of its changes or
 *   none.  A reader never sees half an operation, and does not return
 *   before what it saw is on disk.
 *
 * File size rule
 * --------------
 *   The data of a file lives on the iods; metad keeps the size.
 *   - A client that writes past the end of a file reports the end offset
 *     of that write with mds_update_size(): size = max(size, end).  Reports
 *     may arrive late and out of order; the maximum makes them commute.
 *   - Truncation (mds_setattr with MDS_SETATTR_SIZE) sets the size exactly,
 *     smaller or larger.
 *   - Sizes only grow through writes; only truncation shrinks a file.
 *
 * Layout rule
 * -----------
 *   A file's layout (displacement, and one encoded CLF datatype plus the
 *   iod that stores it per subfile) is given at creation or, when the file
 *   was created without one, set once by mds_set_layout() while the file
 *   is still empty.  It never changes afterwards: the bytes on the iods
 *   are placed by it.  A round-robin layout is just a pattern the caller
 *   builds (mds_layout_round_robin()).
 *
 * Threads and processes
 * ---------------------
 *   One struct mds_store per process and per directory (a second open of
 *   the same directory fails with -EBUSY).  Every function may be called
 *   from any thread at any time on the shared handle: each call runs its
 *   own transaction from start to end inside the call.  Calls that change
 *   the store take LMDB's single writer lock and run one after the other;
 *   the read-only calls (lookup, resolve, getattr, get_layout, readdir,
 *   statfs, verify) run concurrently with each other and with the writer.
 *   The environment is opened with MDB_NOTLS, so read transactions are
 *   not tied to a thread; at most MDS_STORE_MAX_READERS calls read at
 *   once (more fail with -EAGAIN).  A forked child must not use its
 *   parent's handle.
 *
 * Errors
 * ------
 *   Every function that can fail returns 0 (or a count) or a negative
 *   errno; outputs are written only on success.  CLF_Last_error() (clf.h)
 *   then says what failed and where, for the calling thread, e.g.
 *   "mds: cannot create 'a' in directory 1: file exists".  A record that
 *   fails its checks gives -EIO, never a crash.  The store does no
 *   permission checking: that is the daemon's business.
 *
 * Names are C strings of 1..MDS_NAME_MAX bytes without '/', and neither
 * "." nor ".." (-EINVAL; -ENAMETOOLONG when too long).  A daemon that
 * receives counted strings must refuse an embedded NUL before calling.
 */
#ifndef MDS_STORE_H
#define MDS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clf.h"

#define MDS_ROOT_INO 1ull
#define MDS_NAME_MAX 255		/* bytes in one name */
#define MDS_PATH_MAX 4096		/* bytes in a path for mds_resolve */
#define MDS_MAX_SUBFILES 1024		/* subfiles of one file */
#define MDS_MAX_IODS 1024		/* iod indexes are 0..MDS_MAX_IODS-1 */
/* One encoded CLF type: a 16-byte header, then per set a u32 count and
 * 33 bytes per FALLS; at most CLF_TYPE_MAX_NODES FALLS and as many sets. */
#define MDS_TYPE_MAX_BYTES (16u + 37u * CLF_TYPE_MAX_NODES)
/* All the encoded types of one layout together: what one message holds
 * (CLF_PROTO_LAYOUT_TYPES_MAX). */
#define MDS_LAYOUT_MAX_BYTES (64u << 20)
/* Size of the LMDB map: the most the store can ever hold. */
#define MDS_STORE_MAP_SIZE (64ull << 30)
#define MDS_STORE_MAX_READERS 512

/* A time argument meaning "the store's clock, now". */
#define MDS_TIME_NOW INT64_MIN

/* An open store.  Opaque; see mds_store_open(). */
struct mds_store;

/* The attributes of an inode, as the store returns them. */
struct mds_attr {
	uint64_t ino;
	uint32_t mode;		/* kind (S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO,
				   S_IFSOCK, S_IFCHR, S_IFBLK) | permission
				   bits 07777 */
	uint32_t uid;
	uint32_t gid;
	uint32_t nlink;		/* non-directories: their names (hard
				   links); directories 2 + subdirectories */
	int64_t size;		/* bytes; a symlink: its target's length;
				   0 for other kinds */
	uint64_t rdev;		/* device nodes: their device number;
				   0 for other kinds */
	int64_t atime;		/* ns since the Unix epoch */
	int64_t mtime;		/* ns */
	int64_t ctime;		/* ns */
	bool has_layout;	/* files: a layout is set */
};

/* One subfile of a layout. */
struct mds_subfile {
	uint32_t iod;		/* index of the iod that stores it */
	uint32_t type_len;	/* bytes at type, 1..MDS_TYPE_MAX_BYTES */
	const uint8_t *type;	/* CLF_Type_encode() of its datatype */
};

/*
 * The physical layout of a file: file byte disp + x (x >= 0) belongs to
 * the subfile whose datatype selects x in the pattern repeated from disp;
 * bytes before disp live in one extra subfile on head_iod.
 *
 * Layouts the store returns are one allocation, subfiles and type bytes
 * included; the caller frees them with mds_layout_free().  Layouts the
 * caller passes in are borrowed for the call, in any memory.
 */
struct mds_layout {
	int64_t disp;		/* displacement, bytes, >= 0 */
	uint32_t head_iod;	/* iod of the bytes before disp */
	uint32_t nsubfiles;	/* 1..MDS_MAX_SUBFILES */
	struct mds_subfile *subfiles; /* nsubfiles entries */
};

/* One directory entry, from mds_readdir(). */
struct mds_dirent {
	uint64_t ino;
	uint64_t cookie;	/* mds_readdir resumes after this entry */
	uint32_t mode;		/* the entry's mode, as in mds_attr */
	char name[MDS_NAME_MAX + 1]; /* NUL-terminated */
	bool has_attr;		/* the inode is this metad's: attr holds it */
	struct mds_attr attr;	/* the entry's inode, read with it */
};

/*
 * What an unlink, or a rename over an existing entry, took away.  The
 * removal of its subfiles is already queued (mds_gc_list below); the
 * caller removes them from the iods, named by attr.ino, takes each
 * (ino, iod) it removed off the queue with mds_gc_done(), then calls
 * mds_removed_release().  attr.ino == 0 when nothing was removed.
 */
struct mds_removed {
	struct mds_attr attr;
	bool remote;		/* attr.ino (with attr.mode only) lives on
				   another metad, which must take one link
				   off it (mds_nlink_change) */
	struct mds_layout *layout; /* owned; NULL for none (dirs, no layout) */
};

/* Which fields mds_setattr() changes (values equal CLF_PROTO_SETATTR_*). */
#define MDS_SETATTR_MODE 0x01u		/* permission bits only */
#define MDS_SETATTR_UID 0x02u
#define MDS_SETATTR_GID 0x04u
#define MDS_SETATTR_SIZE 0x08u		/* truncate: exact new size */
#define MDS_SETATTR_ATIME 0x10u
#define MDS_SETATTR_MTIME 0x20u
#define MDS_SETATTR_ATIME_NOW 0x40u
#define MDS_SETATTR_MTIME_NOW 0x80u
#define MDS_SETATTR_KNOWN 0xffu

struct mds_setattr {
	uint32_t mask;		/* MDS_SETATTR_* */
	uint32_t mode;		/* permission bits, <= 07777 */
	uint32_t uid;
	uint32_t gid;
	int64_t size;		/* bytes, >= 0 */
	int64_t atime;		/* ns */
	int64_t mtime;		/* ns */
};

/* mds_rename() flags */
#define MDS_RENAME_NOREPLACE 0x1u	/* -EEXIST when the target exists */
#define MDS_RENAME_FLAGS 0x1u

/* Whole-store counts, for statfs. */
struct mds_statfs {
	uint64_t inodes;	/* files and directories, root included */
	uint64_t bytes_used;	/* bytes of the store's map in use */
	uint64_t bytes_max;	/* the map size: the most it can use */
	uint8_t fsid[16];	/* random at creation, never changes */
};

/* ------------------------------------------------------------------ */
/* The store                                                           */
/* ------------------------------------------------------------------ */

/*
 * mds_store_open - open, or create, the store in directory dir
 *
 * Creates dir (mode 0700) when missing.  A new store gets a random file
 * system id and the root directory (MDS_ROOT_INO, mode 0755, owned by 0).
 * Returns 0 and a new handle in *out (close it with mds_store_close), or
 * -EBUSY when another handle has the directory open, -EIO for a corrupt
 * store, -EPROTONOSUPPORT for a store of a newer format, or the errno of
 * the failing system call.
 */
int mds_store_open(const char *dir, struct mds_store **out);

/*
 * mds_store_open_readonly - a read-only handle on the store in dir, also
 * while metad has it open (no flock; LMDB readers see committed
 * snapshots).  For mds_store_verify and reads only.  Errors as
 * mds_store_open, -ENOENT when there is no store.
 */
int mds_store_open_readonly(const char *dir, struct mds_store **out);

/*
 * The numbers of every inode in the store, ascending, in *inos (caller
 * frees) and *n: one snapshot, for clf fsck.  0, -ENOMEM or -EIO.
 */
int mds_store_inodes(struct mds_store *s, uint64_t **inos, size_t *n);

/*
 * mds_store_backup - a consistent, compacted copy of the store in dir
 * into directory dest (made if missing, mode 0700; -EEXIST when it holds
 * a store already), taken in one read transaction while metad runs.
 */
int mds_store_backup(const char *dir, const char *dest);

/*
 * mds_store_restore - put the backup in directory backup in place of the
 * store in dir, metad stopped (-EBUSY while it runs).  The backup is
 * verified first, the old data file kept as the path written to saved,
 * and the result verified.  Returns 0 or a negative errno with a message.
 */
int mds_store_restore(const char *backup, const char *dir, char *saved,
		      size_t len);

/* Close a store; waits for nothing (no call may be running).  NULL ok. */
void mds_store_close(struct mds_store *s);

/* Whole-store counts.  Returns 0, or -EIO. */
int mds_statfs(struct mds_store *s, struct mds_statfs *out);

/*
 * mds_store_verify - check the store's invariants (fsck)
 *
 * Every record decodes; every directory entry names an existing inode and
 * has its readdir cookie; every inode but the root has exactly one entry;
 * directories know their parent and count their subdirectories in nlink;
 * the inode and cookie counters are ahead of every value in use; every
 * pending subfile removal names an inode that is gone.  One
 * read transaction: a consistent snapshot.  Returns 0, or -EIO naming the
 * first inconsistency found, -ENOMEM.
 */
int mds_store_verify(struct mds_store *s);

/* ------------------------------------------------------------------ */
/* Namespace                                                           */
/* ------------------------------------------------------------------ */

/*
 * mds_lookup - the entry name in directory dir
 *
 * Writes its attributes to *attr and, when layout is not NULL, its layout
 * to *layout (NULL when it has none; the caller frees it), from one
 * snapshot.  Returns 0, -ENOENT (no such entry or directory), -ENOTDIR
 * (dir is a file), -EINVAL/-ENAMETOOLONG (bad name), -EIO.
 */
int mds_lookup(struct mds_store *s, uint64_t dir, const char *name,
	       struct mds_attr *attr, struct mds_layout **layout);

/*
 * mds_resolve - follow a path component by component
 *
 * An absolute path ("/a/b/c") starts at the root, a relative one at dir.
 * Repeated '/' count as one, "." stays, ".." goes to the parent (the
 * root's parent is the root), a trailing '/' demands a directory.  "/"
 * is the root.  Outputs as mds_lookup.  Returns 0, -ENOENT (a component
 * is missing, or the path is empty), -ENOTDIR (a component before the
 * last, or the last before a trailing '/', is a file), -EINVAL /
 * -ENAMETOOLONG (a bad component, a path over MDS_PATH_MAX), -EIO.
 */
int mds_resolve(struct mds_store *s, uint64_t dir, const char *path,
		struct mds_attr *attr, struct mds_layout **layout);

/*
 * Asked before each directory is searched for the next component (or
 * "..") during a resolution: 0 to go on, or a negative errno (with its
 * message) that the resolution returns.  walked is the path up to the
 * directory, len bytes of it ("" for the starting directory).
 */
typedef int mds_search_fn(void *arg, const struct mds_attr *dir,
			  const char *walked, size_t len);

/* mds_resolve, asking may_search (when not NULL) with arg. */
int mds_resolve_checked(struct mds_store *s, uint64_t dir, const char *path,
			mds_search_fn *may_search, void *arg,
			struct mds_attr *attr, struct mds_layout **layout);

/*
 * mds_create - a new regular file name in directory dir (O_EXCL)
 *
 * mode: permission bits (<= 07777).  layout: borrowed; checked with
 * mds_layout_check(); NULL creates the file without a layout, to be set
 * by mds_set_layout().  Sets the directory's mtime and ctime.  Writes the
 * new file's attributes to *attr.  Returns 0, -EEXIST (the name exists,
 * whatever it is), -ENOENT/-ENOTDIR (dir), -EINVAL (name, mode, layout),
 * -ENAMETOOLONG, -E2BIG (layout over the limits), -ENOSPC (store full),
 * -EIO.  A daemon implements non-exclusive create as create, then lookup
 * on -EEXIST.
 */
int mds_create(struct mds_store *s, uint64_t dir, const char *name,
	       uint32_t mode, uint32_t uid, uint32_t gid,
	       const struct mds_layout *layout, struct mds_attr *attr);

/* mds_mkdir - a new directory; as mds_create without a layout. */
int mds_mkdir(struct mds_store *s, uint64_t dir, const char *name,
	      uint32_t mode, uint32_t uid, uint32_t gid,
	      struct mds_attr *attr);

/*
 * mds_readdir - up to max entries of directory dir after cookie
 *
 * cookie 0 starts at the beginning; otherwise pass the cookie of the last
 * entry received.  Each entry's cookie is a number given when the entry
 * was made, and entries come in cookie order, so paging is stable under
 * concurrent changes: an entry that exists throughout a listing appears
 * exactly once; one created or renamed during it may appear or not.
 * "." and ".." are not stored and not returned.  Writes the entries to
 * ents[0..n-1] and *eof (no entry after the last one returned) and
 * returns n, or -ENOENT, -ENOTDIR, -EINVAL (max == 0), -EIO; after a
 * failure ents may hold garbage, *eof is untouched.  ents: caller's
 * array of max entries.
 */
int mds_readdir(struct mds_store *s, uint64_t dir, uint64_t cookie,
		struct mds_dirent *ents, uint32_t max, bool *eof);

/*
 * mds_rename - move src_dir/src_name to dst_dir/dst_name
 *
 * An existing target is replaced atomically when the kinds agree (a
 * non-directory by a non-directory, an empty directory by a directory);
 * the target loses one link, and when that was its last, what it held
 * is given back in *replaced (NULL: not wanted) so that the caller
 * removes its subfiles.  Renaming an entry onto itself, or onto another
 * name of the same inode (a hard link), does nothing (POSIX).  Updates both
 * directories' mtime and ctime and the moved inode's ctime.  Returns 0,
 * -ENOENT (source or a directory missing), -ENOTDIR (a directory argument
 * is a file; a directory over a file), -EISDIR (a file over a directory),
 * -ENOTEMPTY (over a non-empty directory), -EINVAL (a directory into its
 * own subtree; bad names or flags), -EEXIST (MDS_RENAME_NOREPLACE and the
 * target exists), -ENAMETOOLONG, -ENOSPC, -EIO.
 */
int mds_rename(struct mds_store *s, uint64_t src_dir, const char *src_name,
	       uint64_t dst_dir, const char *dst_name, uint32_t flags,
	       struct mds_removed *replaced);

/*
 * mds_unlink - remove the file name from directory dir
 *
 * The inode loses one link (and gets a new ctime); it goes with its
 * last name, and then *removed (NULL: not wanted) gets its attributes
 * and layout for the removal of its subfiles (attr.ino 0 while other
 * names remain).  Returns 0,
 * -ENOENT, -ENOTDIR (dir), -EISDIR (name is a directory), -EINVAL,
 * -ENAMETOOLONG, -EIO.
 */
int mds_unlink(struct mds_store *s, uint64_t dir, const char *name,
	       struct mds_removed *removed);

/*
 * mds_symlink - a new symbolic link name in dir pointing to target
 *
 * target: 1..MDS_SYMLINK_MAX bytes, any but NUL, kept as given and never
 * followed by the store.  The link has mode S_IFLNK | 0777 and size
 * strlen(target).  Returns as mds_create, and -ENAMETOOLONG for a
 * target over the limit, -ENOENT for an empty one.
 */
#define MDS_SYMLINK_MAX 4095		/* bytes of a target: PATH_MAX - 1 */
int mds_symlink(struct mds_store *s, uint64_t dir, const char *name,
		const char *target, uint32_t uid, uint32_t gid,
		struct mds_attr *attr);

/*
 * mds_mknod - a new fifo, socket or device node name in dir
 *
 * mode: S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK | permission bits; rdev
 * the device number of a device node (0 for the others).  These inodes
 * hold metadata only: the kernel of each client makes the pipe, socket
 * or device of them.  Returns as mds_create, and -EINVAL for another
 * kind or an rdev on a fifo or socket.
 */
int mds_mknod(struct mds_store *s, uint64_t dir, const char *name,
	      uint32_t mode, uint64_t rdev, uint32_t uid, uint32_t gid,
	      struct mds_attr *attr);

/*
 * mds_link - a new name for the existing non-directory inode ino
 *
 * Adds name to dir and one to the inode's nlink; sets the inode's ctime
 * and the directory's mtime and ctime.  Returns 0 with the inode's new
 * attributes in *attr, -ENOENT (ino or dir missing), -EEXIST, -EPERM
 * (ino is a directory), -EMLINK (nlink at MDS_LINK_MAX), -ENOTDIR,
 * -EINVAL, -ENAMETOOLONG, -ENOSPC, -EIO.
 */
#define MDS_LINK_MAX 65000u		/* names of one inode, as ext4 */
int mds_link(struct mds_store *s, uint64_t ino, uint64_t dir,
	     const char *name, struct mds_attr *attr);

/*
 * mds_readlink - a symbolic link's target
 *
 * For a symlink: 0 and a new NUL-terminated copy of its target in
 * *target (caller frees).  Returns -EINVAL for any other kind (as
 * readlink(2)), -ENOENT, -EIO, -ENOMEM.
 */
int mds_readlink(struct mds_store *s, uint64_t ino, char **target);

/* mds_rmdir - remove the empty directory name.  Returns 0, -ENOENT,
 * -ENOTDIR (dir, or name is a file), -ENOTEMPTY, -EINVAL, -ENAMETOOLONG,
 * -EIO. */
int mds_rmdir(struct mds_store *s, uint64_t dir, const char *name);

/* Free the layout in *r and clear it; NULL ok. */
void mds_removed_release(struct mds_removed *r);

/*
 * A request's answer may rest on what it read, which may be a commit not
 * yet durable (mds_group.c): call mds_store_request_begin before the
 * request's store calls and mds_store_settle before its answer leaves,
 * which waits until what it read is on disk.  Outside a request each
 * read waits so when it ends.  Per thread.
 */
void mds_store_request_begin(void);
void mds_store_settle(void);

/* Group commit's counts since the store opened (all 0 without it). */
struct mds_commit_stats {
	uint64_t requests;	/* changes committed in groups */
	uint64_t groups;	/* group commits: one fdatasync each */
	uint64_t syncs;		/* fdatasyncs in all */
	uint64_t explicit_syncs;	/* of them, not in a commit */
	uint64_t watched;	/* requests that took the child slot while
				   watching it, without a wake-up */
	uint64_t checkpoints;	/* of the log (mds_wal.c) */
	/* Where a group's time goes (ns in all): children holding the slot,
	 * the slot passing from a child to a waiter (handoffs of them), the
	 * leaders' commits and record writes, and the syncs. */
	uint64_t held_ns, handoffs, handoff_ns, commit_ns, sync_ns;
	bool logged;		/* groups go to the log, LMDB unsynced */
};
void mds_store_commit_stats(struct mds_store *s, struct mds_commit_stats *out);

/* ------------------------------------------------------------------ */
/* Attributes and layouts                                              */
/* ------------------------------------------------------------------ */

/* The attributes of inode ino.  Returns 0, -ENOENT, -EIO. */
int mds_getattr(struct mds_store *s, uint64_t ino, struct mds_attr *attr);

/*
 * mds_setattr - change the fields named by set->mask
 *
 * Sets ctime to now; a size change (truncate, files only) also sets mtime
 * unless the mask sets it.  Writes the new attributes to *attr (NULL: not
 * wanted).  Returns 0, -ENOENT, -EINVAL (unknown mask bits, mode over
 * 07777, negative size), -EISDIR (size of a directory), -EIO.
 */
int mds_setattr(struct mds_store *s, uint64_t ino,
		const struct mds_setattr *set, struct mds_attr *attr);

/*
 * mds_set_layout - give a file created without a layout its layout
 *
 * layout: borrowed, checked with mds_layout_check().  Only while the file
 * has size 0 and no layout: otherwise -EBUSY ("layout of inode N can only
 * be set while the file is empty").  Sets ctime.  Returns 0, -EBUSY,
 * -ENOENT, -EISDIR, -EINVAL, -E2BIG, -EIO.
 */
int mds_set_layout(struct mds_store *s, uint64_t ino,
		   const struct mds_layout *layout);

/* The layout of file ino in *out (caller frees).  Returns 0, -ENOENT,
 * -EISDIR, -ENODATA (no layout yet), -EIO. */
int mds_get_layout(struct mds_store *s, uint64_t ino,
		   struct mds_layout **out);

/*
 * mds_update_size - a client wrote up to end (exclusive) at time mtime
 *
 * size = max(size, end); mtime and ctime = max(their value, mtime), so
 * late reports never move time back (MDS_TIME_NOW: the store's clock).
 * Nothing is written when nothing changes.  Writes the attributes to
 * *attr (NULL: not wanted).  Returns 0, -ENOENT, -EISDIR, -EINVAL
 * (end < 0), -EIO.
 */
int mds_update_size(struct mds_store *s, uint64_t ino, int64_t end,
		    int64_t mtime, struct mds_attr *attr);

/* ------------------------------------------------------------------ */
/* Layouts                                                             */
/* ------------------------------------------------------------------ */

/*
 * mds_layout_check - is this a valid layout?
 *
 * Limits (subfiles, iod indexes, type sizes, total size), displacement
 * >= 0, every type decodes, and together they form a partitioning pattern
 * (CLF_Pattern_check: one extent, no overlap, no hole).  Returns 0,
 * -EINVAL, -E2BIG, -ENOMEM.
 */
int mds_layout_check(const struct mds_layout *layout);

/*
 * mds_layout_round_robin - the striped layout: count subfiles, stripe
 * bytes each in turn, subfile j on iod (first_iod + j) % niods.  Returns
 * 0 and a new layout in *out (caller frees), -EINVAL, -ENOMEM.
 */
int mds_layout_round_robin(int64_t stripe, uint32_t count,
			   uint32_t first_iod, uint32_t niods,
			   struct mds_layout **out);

/* Free a layout the store returned.  NULL ok. */
void mds_layout_free(struct mds_layout *layout);

/*
 * The length of one subfile, type t (borrowed) repeated from disp, in a
 * file of size bytes: how many bytes of [disp, size) the type selects.
 * Time in O(depth of t x 64), whatever size.  Returns 0 and *len, or
 * -EINVAL.
 */
int mds_subfile_length(CLF_Datatype t, int64_t disp, int64_t size,
		       int64_t *len);

/* ------------------------------------------------------------------ */
/* Pending subfile removals (mds_gcq.c)                                */
/* ------------------------------------------------------------------ */

/*
 * An unlink, or a rename that replaces a file, queues one entry (ino,
 * iod) for every iod that holds a subfile of the removed inode, in the
 * same transaction that removes it: once the name is gone, the removal
 * of its data is as durable as the unlink.  The daemon removes the
 * subfiles and then takes the entry off the queue (mds_gc_done), so an
 * iod that is down, or a metad that dies in between, delays the removal
 * but never loses it.  Inode numbers are never given out again, so an
 * entry can be replayed at any time without touching a live file.
 */
struct mds_gc_entry {
	uint64_t ino;
	uint32_t iod;
};

/*
 * Up to max queued entries after (ino, iod), in (ino, iod) order; start
 * with (0, 0).  Writes ents[0..n-1] and returns n (0: no more), or -EIO,
 * -EINVAL (max == 0).
 */
int mds_gc_list(struct mds_store *s, uint64_t ino, uint32_t iod,
		struct mds_gc_entry *ents, uint32_t max);

/* Take n entries off the queue in one transaction; entries already gone
 * are fine.  Returns 0, -EIO, -ENOSPC. */
int mds_gc_done(struct mds_store *s, const struct mds_gc_entry *ents,
		uint32_t n);

/* How many entries are queued.  Returns 0 and *n, or -EIO. */
int mds_gc_count(struct mds_store *s, uint64_t *n);

/* ------------------------------------------------------------------ */
/* Recorded outcomes (mds_reply_note.c, mds_replies.c)                 */
/* ------------------------------------------------------------------ */

/*
 * The daemon answers a request that a client sends again (after a lost
 * reply) from a record of its first outcome rather than running it
 * twice (include/clf_proto.h, "Retries").  The record must survive
 * exactly when the change does, so it is written in the change's own
 * transaction: the daemon arms its thread with the request's identity
 * before calling the store, and the first write transaction that thread
 * then commits on s carries the record (client, seq) -> (op, inode).
 * The inode is the first one the transaction creates, unless the daemon
 * names it with mds_reply_set_ino() (a SETATTR's inode).  Failed calls
 * commit nothing, so they leave no record.  Records stay until
 * mds_reply_expire() removes them.
 */
struct mds_reply_rec {
	uint16_t op;		/* the request's opcode */
	uint64_t ino;		/* the inode it made or changed; 0: none */
	int64_t time;		/* ns since the epoch, of the commit */
};

/* Arm the calling thread for one request; replaces an earlier arming. */
void mds_reply_arm(struct mds_store *s, uint64_t client, uint64_t seq,
		   uint16_t op);

/* Name the armed request's inode (before the store call). */
void mds_reply_set_ino(uint64_t ino);

/* Disarm the thread: true, with the record in *out (NULL ok), when a
 * commit wrote one since mds_reply_arm. */
bool mds_reply_disarm(struct mds_reply_rec *out);

/* The record of (client, seq): 0, -ENOENT (none), -EIO. */
int mds_reply_get(struct mds_store *s, uint64_t client, uint64_t seq,
		  struct mds_reply_rec *out);

/* Remove up to max records committed before time before (ns), in one
 * transaction.  Returns how many went (0: none left), or -errno. */
int mds_reply_expire(struct mds_store *s, int64_t before, uint32_t max);

/* How many records are kept.  Returns 0 and *n, or -EIO. */
int mds_reply_count(struct mds_store *s, uint64_t *n);

/* ------------------------------------------------------------------ */
/* A namespace over several metads (mds_remote.c)                      */
/* ------------------------------------------------------------------ */

/*
 * The store of metad index of count (include/clf_proto.h "Several
 * metads"): new inode numbers carry index in their top bits, and the
 * store remembers its place (mds_store_verify then knows that names
 * and inodes may live on other metads).  Call once, after
 * mds_store_open and before any other call.  Returns 0, -EINVAL (index
 * too large), -EIO (a store of another index).
 */
int mds_store_set_index(struct mds_store *s, uint32_t index, uint32_t count);

/* Whether inode ino lives in this store (its metad's number says). */
bool mds_ino_local(const struct mds_store *s, uint64_t ino);

/*
 * mds_resolve_part - walk path from directory dir as far as this store
 * holds it: *ino the inode reached and *done the bytes of path
 * consumed, all of them or up to and including the name of an entry
 * whose inode lives on another metad.  Errors as mds_resolve_checked.
 */
int mds_resolve_part(struct mds_store *s, uint64_t dir, const char *path,
		     mds_search_fn *may_search, void *arg, uint64_t *ino,
		     size_t *done);

/*
 * The entry name of dir, local or remote: its inode number and kind
 * (mode; the whole mode for a local inode).  0, -ENOENT, -ENOTDIR, -EIO.
 */
int mds_entry_lookup(struct mds_store *s, uint64_t dir, const char *name,
		     uint64_t *ino, uint32_t *mode);

/*
 * mds_mkdir_detached - a new directory inode with no entry in this
 * store: its name lives in directory parent on another metad, which
 * enters it afterwards (mds_entry_add_remote).  Returns as mds_mkdir.
 */
int mds_mkdir_detached(struct mds_store *s, uint64_t parent, uint32_t mode,
		       uint32_t uid, uint32_t gid, struct mds_attr *attr);

/*
 * mds_entry_add_remote - name an inode of another metad: name -> ino in
 * dir, with ino's mode kept in the entry; a directory adds one to dir's
 * nlink.  -EEXIST when the name exists, else as mds_link.
 */
int mds_entry_add_remote(struct mds_store *s, uint64_t dir, const char *name,
			 uint64_t ino, uint32_t mode);

/*
 * mds_entry_del_remote - take away the entry name of dir, which names
 * remote inode ino (-ENOENT when it is gone or names another inode).
 * *mode: the kind it had.
 */
int mds_entry_del_remote(struct mds_store *s, uint64_t dir, const char *name,
			 uint64_t ino, uint32_t *mode);

/*
 * mds_nlink_change - one name more (delta 1) or less (-1) for local
 * non-directory inode ino, named on another metad; the inode goes with
 * its last name, like mds_unlink (*removed).  *attr: its attributes
 * after (NULL: not wanted).  0, -ENOENT, -EISDIR, -EMLINK, -EIO.
 */
int mds_nlink_change(struct mds_store *s, uint64_t ino, int delta,
		     struct mds_attr *attr, struct mds_removed *removed);

/*
 * mds_rmdir_detached - remove local directory inode ino, whose name
 * lives on another metad: -ENOTEMPTY while it has entries, -ENOENT when
 * it is gone already, -ENOTDIR.
 */
int mds_rmdir_detached(struct mds_store *s, uint64_t ino);

/* Directory ino's parent into *parent; 0, -ENOENT, -ENOTDIR, -EIO. */
int mds_dir_parent(struct mds_store *s, uint64_t ino, uint64_t *parent);

/* Directory ino moved under parent (another metad's entry changed):
 * its parent link and ctime.  0, -ENOENT, -ENOTDIR, -EIO. */
int mds_dir_set_parent(struct mds_store *s, uint64_t ino, uint64_t parent);

/* Whether directory ino has entries: 0 no, 1 yes, or a negative errno. */
int mds_dir_nonempty(struct mds_store *s, uint64_t ino);

/* ------------------------------------------------------------------ */
/* Renames across metads: durable intents (mds_intents.c)              */
/* ------------------------------------------------------------------ */

/*
 * A rename between two metads is a two-phase commit (metad/
 * mds_xrename.c).  Each side keeps its part as an intent, in the
 * transaction that makes it, until the rename is finished or rolled
 * back, so that a restart of either knows what is left to do.
 *   coordinator (the source directory's metad): PREPARED from before
 *	it asks the participant; COMMITTED in the transaction that takes
 *	the source name away (the decision); gone once the participant
 *	has entered the new name.
 *   participant (the destination's): PREPARED from its yes to the
 *	commit that enters the name (or the abort), which removes it.
 */
#define MDS_INTENT_COORD 1
#define MDS_INTENT_PART 2
#define MDS_INTENT_PREPARED 1
#define MDS_INTENT_COMMITTED 2

struct mds_intent {
	uint64_t txid;		/* the key; the coordinator's index in its
				   top bits */
	uint8_t role;		/* MDS_INTENT_COORD or _PART */
	uint8_t state;		/* MDS_INTENT_PREPARED or _COMMITTED */
	uint32_t peer;		/* the other side's metad index */
	uint64_t src_dir, dst_dir, ino;
	uint32_t mode;		/* of ino: its kind */
	uint32_t flags;		/* MDS_RENAME_* */
	char src_name[MDS_NAME_MAX + 1];	/* coordinator only */
	char dst_name[MDS_NAME_MAX + 1];
};

/* Write (or replace) intent in; read one (-ENOENT); remove one (gone
 * already is fine); list up to max (returns how many).  -EIO, -ENOSPC. */
/* Log the moves of subfiles between iods that began and did not commit
 * (mds_move.c); their count in *n.  Returns 0, -EIO. */
int mds_move_pending(struct mds_store *s, uint32_t *n);

int mds_intent_put(struct mds_store *s, const struct mds_intent *in);
int mds_intent_get(struct mds_store *s, uint64_t txid, struct mds_intent *out);
int mds_intent_del(struct mds_store *s, uint64_t txid);
int mds_intent_list(struct mds_store *s, struct mds_intent *out, uint32_t max);

/*
 * The coordinator's decision: in one transaction, take src_name of
 * src_dir away (it must still name in->ino: -ENOENT), move a local
 * directory under dst_dir, and mark the intent COMMITTED.
 */
int mds_xr_decide(struct mds_store *s, struct mds_intent *in);

/*
 * The participant's yes: check that dst_name may be entered in local
 * directory dst_dir (-EEXIST with NOREPLACE, -ENOTDIR, -EISDIR,
 * -ENOTEMPTY as rename) and keep the intent.  *noop: the name names
 * in->ino already (POSIX: nothing to do; no intent kept).
 */
int mds_xr_prepare(struct mds_store *s, const struct mds_intent *in,
		   bool *noop);

/*
 * The participant's commit of txid: enter the name (replacing what it
 * names: *replaced as after mds_rename) and drop the intent, in one
 * transaction.  0 also when there is no such intent (done before).
 */
int mds_xr_commit(struct mds_store *s, uint64_t txid,
		  struct mds_removed *replaced);

#endif /* MDS_STORE_H */
