/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clfs_ops.h -- a mounted clf file system, as the kernel asks for it:
 * requests on inode numbers, answered through libclf, independent of
 * FUSE (kernel/clfs_fuse.c adapts libfuse's low-level API to these; a
 * kernel module can adapt the VFS to the same calls).
 *
 * Inode numbers are clf's own (metad never reuses one; the root is 1,
 * which is also FUSE's root).  The table behind them (clfs_inode.c)
 * keeps, per inode the kernel holds, its lookup count and what only
 * this client knows: the size its writes reached before metad was told
 * (at flush, fsync, release), its open handles, a directory's default
 * layout.  Files appear as plain byte streams (the default view).
 *
 * Every call returns 0, a count, or a negative errno.  Permission checks
 * are the kernel's (FUSE's default_permissions): these calls do what
 * they are asked.  Names are single components.
 *
 * Reserved names (invisible, refused): ".clf-default-layout", the file
 * holding a directory's default layout (user.clf.layout on the
 * directory), and ".clf-unlinked-<16 hex digits>", a file unlinked while
 * still open, removed at its last release (as NFS does).
 */
#ifndef CLFS_OPS_H
#define CLFS_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

struct clfs;

/* The caller of a request: the owner of what it creates. */
struct clfs_caller {
	uid_t uid;
	gid_t gid;
};

/* What clfs_setattr changes. */
#define CLFS_SET_MODE		0x01
#define CLFS_SET_UID		0x02
#define CLFS_SET_GID		0x04
#define CLFS_SET_SIZE		0x08
#define CLFS_SET_ATIME		0x10
#define CLFS_SET_MTIME		0x20
#define CLFS_SET_ATIME_NOW	0x40
#define CLFS_SET_MTIME_NOW	0x80

/* clfs_rename flags. */
#define CLFS_RENAME_NOREPLACE	0x1

/* The one extended attribute: a file's layout as text. */
#define CLFS_LAYOUT_XATTR "user.clf.layout"

/*
 * clfs_new - the file system of the clf instance CLF_init() connected to
 *
 * read_only refuses every change with -EROFS.  Checks that metad
 * answers (the root's attributes), so that a mount fails early.
 */
int clfs_new(bool read_only, struct clfs **out);

/* Close every open handle and free the table; NULL ok. */
void clfs_free(struct clfs *fs);

/* Name lookup; each success is one reference for clfs_forget. */
int clfs_lookup(struct clfs *fs, uint64_t parent, const char *name,
		struct stat *st);
void clfs_forget(struct clfs *fs, uint64_t ino, uint64_t nlookup);

int clfs_getattr(struct clfs *fs, uint64_t ino, struct stat *st);

/*
 * Change what to_set (CLFS_SET_*) says, from want: st_mode's permission
 * bits, st_uid, st_gid, st_size, st_atim, st_mtim.  The new attributes
 * in *st.
 */
int clfs_setattr(struct clfs *fs, uint64_t ino, const struct stat *want,
		 unsigned to_set, struct stat *st);

/* mkdir, and create + open; each success is one lookup reference. */
int clfs_mkdir(struct clfs *fs, const struct clfs_caller *who,
	       uint64_t parent, const char *name, mode_t mode,
	       struct stat *st);
int clfs_create(struct clfs *fs, const struct clfs_caller *who,
		uint64_t parent, const char *name, mode_t mode, int flags,
		struct stat *st, uint64_t *fh);

/*
 * Symbolic links, hard links and special files; each success but
 * readlink is one lookup reference.  symlink's target is kept as given
 * (the kernel follows it); readlink gives a new string (caller frees).
 * link gives inode ino (not a directory) the name new_name in
 * new_parent.  mknod makes a fifo, socket or character or block device
 * (mode: the kind | permission bits; rdev for devices), which is
 * metadata on clf: the kernel of each machine makes the pipe, socket or
 * device of it; a regular file (S_IFREG) is created empty.
 */
int clfs_symlink(struct clfs *fs, const struct clfs_caller *who,
		 uint64_t parent, const char *name, const char *target,
		 struct stat *st);
int clfs_readlink(struct clfs *fs, uint64_t ino, char **target);
int clfs_link(struct clfs *fs, uint64_t ino, uint64_t new_parent,
	      const char *new_name, struct stat *st);
int clfs_mknod(struct clfs *fs, const struct clfs_caller *who,
	       uint64_t parent, const char *name, mode_t mode, dev_t rdev,
	       struct stat *st);

int clfs_unlink(struct clfs *fs, uint64_t parent, const char *name);
int clfs_rmdir(struct clfs *fs, uint64_t parent, const char *name);
int clfs_rename(struct clfs *fs, uint64_t parent, const char *name,
		uint64_t new_parent, const char *new_name, unsigned flags);

/*
 * Directory entries from offset off (0: the start; else the next_off of
 * the last entry taken).  fill is called per entry, "." and ".." first;
 * it returns non-zero when it has no room for that entry, which ends the
 * call (the entry is not taken).  Returns 0 or a negative errno.
 */
typedef int (*clfs_fill_fn)(void *arg, const char *name, uint64_t ino,
			    mode_t mode, uint64_t next_off);
int clfs_readdir(struct clfs *fs, uint64_t ino, uint64_t off,
		 clfs_fill_fn fill, void *arg);

/*
 * The same with the attributes of each entry, as a lookup gives them
 * (READDIRPLUS: one round trip to metad per page and one to each iod
 * for the sizes, not a lookup per entry); room: the bytes of the reply,
 * to ask metad for about as many entries.  fill gets st (for "." and
 * "..", only st_ino and st_mode; counted says whether the entry counts
 * as a lookup of its inode, which this call took: it gives it back when
 * fill has no room).
 */
typedef int (*clfs_fill_plus_fn)(void *arg, const char *name,
				 const struct stat *st, bool counted,
				 uint64_t next_off);
int clfs_readdirplus(struct clfs *fs, uint64_t ino, uint64_t off,
		     size_t room, clfs_fill_plus_fn fill, void *arg);

int clfs_statfs(struct clfs *fs, struct statvfs *sv);

/*
 * Open handles: *fh names one open of one file (a CLF descriptor).
 * flags: O_ACCMODE, O_APPEND, O_TRUNC.  read returns fewer bytes only at
 * the end of file; write all or an error.  A handle opened O_APPEND
 * writes at the end of file, in a range metad reserves (clf_ll_append),
 * whatever off says, so its writes must not go through the page cache
 * (the kernel would keep them at off): the caller opens it direct_io.  flush (each close(2)) and
 * release (the last) tell metad the size the handle's writes reached.
 *
 * open asks metad for the attributes (close-to-open consistency) and
 * sets *changed when the size or mtime differ from what was last handed
 * out: the kernel should forget what it cached of the inode.
 */
int clfs_open(struct clfs *fs, uint64_t ino, int flags, uint64_t *fh,
	      bool *changed);
ssize_t clfs_read(struct clfs *fs, uint64_t fh, void *buf, size_t size,
		  off_t off);
ssize_t clfs_write(struct clfs *fs, uint64_t fh, const void *buf,
		   size_t size, off_t off);
int clfs_flush(struct clfs *fs, uint64_t fh);
int clfs_fsync(struct clfs *fs, uint64_t fh);
int clfs_release(struct clfs *fs, uint64_t fh);

/*
 * Byte-range locks (clfs_lock.c), kept by metad so that they hold
 * across mounts, hosts and the native API (clf.h, CLF_FCNTL_SETLK).
 * owner is the kernel's lock owner (a process's open files for fcntl
 * locks, the open file for flock).  lk uses SEEK_SET, l_len >= 0 (0: to
 * the end), and l_pid is the asking process's, reported to GETLK of
 * others.  A setlk that may sleep waits until granted, -EDEADLK, or
 * interrupted(arg) (NULL: never) returns true (-EINTR).
 *
 * flock(2) locks (op LOCK_SH, LOCK_EX, LOCK_UN, with LOCK_NB) are
 * whole-file locks of the same table, as NFS makes them: they exclude
 * fcntl locks of other owners too.
 *
 * flush (each close(2)) releases the locks of its owner on the file, as
 * POSIX wants; a release that says so releases a flock owner's.
 */
typedef bool (*clfs_interrupted_fn)(void *arg);
int clfs_getlk(struct clfs *fs, uint64_t fh, uint64_t owner,
	       struct flock *lk);
int clfs_setlk(struct clfs *fs, uint64_t fh, uint64_t owner,
	       const struct flock *lk, bool sleep,
	       clfs_interrupted_fn interrupted, void *arg);
int clfs_flock(struct clfs *fs, uint64_t fh, uint64_t owner, int op,
	       clfs_interrupted_fn interrupted, void *arg);
/*
 * What a front end answers for err from a request on an inode (not on a
 * name in a directory): an inode that is gone, which another client
 * removed or replaced under the same name, is a stale handle (ESTALE,
 * as NFS answers), not a missing name.  The kernel then walks the path
 * again asking about each name (LOOKUP_REVAL), and an open or stat of a
 * name that now names another inode finds that one.
 */
static inline int clfs_stale(int err)
{
	return err == -ENOENT ? -ESTALE : err;
}

/* Release every lock of owner on fh's file, if this mount took any. */
int clfs_unlock_owner(struct clfs *fs, uint64_t fh, uint64_t owner);
/*
 * The same on inode ino, with no open handle: the kernel module's
 * directories, which it does not open here (their locks are metad's as
 * files' are).  The unlock is sent whatever this mount took: the
 * module asks only when it has asked for a lock on the inode.
 */
int clfs_getlk_ino(struct clfs *fs, uint64_t ino, uint64_t owner,
		   struct flock *lk);
int clfs_setlk_ino(struct clfs *fs, uint64_t ino, uint64_t owner,
		   const struct flock *lk, bool sleep,
		   clfs_interrupted_fn interrupted, void *arg);
int clfs_unlock_owner_ino(struct clfs *fs, uint64_t ino, uint64_t owner);

/*
 * Extended attributes: only CLFS_LAYOUT_XATTR, in the syntax of
 * libclf/engine/layout_text.h.  On a file it is the layout, settable while the
 * file is empty (-EBUSY otherwise, -EINVAL for a bad text, whose reason
 * is logged); on a directory, the default layout of files created in it
 * (and inherited by new subdirectories).  get returns the length, and
 * fills buf when size > 0 (-ERANGE when it is too small).
 */
ssize_t clfs_getxattr(struct clfs *fs, uint64_t ino, const char *name,
		      void *buf, size_t size);
int clfs_setxattr(struct clfs *fs, const struct clfs_caller *who,
		  uint64_t ino, const char *name, const void *value,
		  size_t size, int flags);
ssize_t clfs_listxattr(struct clfs *fs, uint64_t ino, void *buf,
		       size_t size);
int clfs_removexattr(struct clfs *fs, uint64_t ino, const char *name);

#endif /* CLFS_OPS_H */
