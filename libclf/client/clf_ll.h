/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clf_ll.h -- the low-level client API: the interface of libclf's client
 * layer to the programs of this tree that work on inodes and handles
 * rather than paths (the mount client, kernel/; the clf command line,
 * tools/; a kernel upcall daemon), as libfuse's low-level API serves
 * its file systems.  Manual: clf_ll(3).
 *
 * The public API (clf.h) names files by path; these calls name them by
 * inode and (directory inode, name), send the same metad requests with a
 * directory inode instead of the root, take the caller's identity for
 * new inodes, and give metad's attribute record back (struct
 * clf_proto_attr of runtime.h, passed through unchanged as libfuse
 * passes struct stat; a caller builds no request).  An open file is a CLF_*
 * descriptor (CLF_close, CLF_fsync).  Every function returns 0 (or a
 * count or descriptor) or a negative errno with CLF_Last_error() saying
 * what failed.  CLF_init() must have run.
 *
 * Nothing else of libclf/client is for use outside it: client.h,
 * client_i.h and lock.h are private (scripts/depgraph.sh checks it).
 * These calls are in libclf.a only; libclf.so exports clf.h alone.
 *
 * A name is one path component (no '/', not "." or "..").
 */
#ifndef CLF_LL_H
#define CLF_LL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "clf.h"
#include "runtime.h"

/*
 * "/a/./b//c/../d" -> "a/b/d" ("" for the root), relative to the root,
 * as CLF_open and the other path calls resolve a name; a negative errno
 * for an empty path, a name or path too long (outlen bytes at most).
 * "clf://HOST:PORT/a/b" is "a/b" when HOST:PORT is the metad of the
 * process's instance (-EXDEV when another; any before CLF_init).
 */
int clf_path_normalize(const char *path, char *out, size_t outlen);

/* Who owns what a call creates. */
struct clf_ll_owner {
	uid_t uid;
	gid_t gid;
};

/*
 * From now on this thread's metad requests act for user uid, gid: metad
 * checks permissions as that user (and resolves its supplementary
 * groups).  Only a process that holds the secret may act for another
 * user; the mount calls it with the caller of each request.
 */
void clf_ll_act_as(uid_t uid, gid_t gid);

/*
 * The connections to each iod (clf.conf iod_connections) when clf.conf
 * does not say: 1 unless this is called before CLF_init.  The mount
 * asks for 4, so that its callers' files are served at once.
 */
void clf_ll_default_iod_connections(unsigned n);

int clf_ll_lookup(uint64_t dir, const char *name, struct clf_proto_attr *attr);
/* LOOKUP, with the size as clf_ll_stat() gives it (one more round trip,
 * to the file's iods). */
int clf_ll_lookup_stat(uint64_t dir, const char *name,
		       struct clf_proto_attr *attr);
int clf_ll_getattr(uint64_t ino, struct clf_proto_attr *attr);

/*
 * metad's attributes, with the size of a regular file derived from its
 * subfiles as well (clf.h, "File size and visibility"): what stat shows.
 * Two round trips to metad and one to the file's iods.
 */
int clf_ll_stat(uint64_t ino, struct clf_proto_attr *attr);

/*
 * Change what mask (CLF_PROTO_SETATTR_*) names of inode ino to its value
 * in to (mode: permission bits only; uid, gid, size, atime, mtime; the
 * _NOW bits need none), as libfuse's setattr takes attributes and the
 * set to apply.  *attr: the new attributes.
 */
int clf_ll_setattr(uint64_t ino, uint32_t mask,
		   const struct clf_proto_attr *to, struct clf_proto_attr *attr);

/*
 * Create name in dir (or open it when it exists and excl is false) and
 * open it with flags (O_ACCMODE and O_APPEND bits).  layout: NULL for
 * the configuration's round robin, else its types (rr's first_iod, or
 * the configuration's first iod, places subfile 0; the others follow).
 * A layout is only applied to a file this call creates.  Returns a
 * descriptor (CLF_close) and *attr.
 */
int clf_ll_create(uint64_t dir, const char *name, mode_t mode,
		  const struct clf_ll_owner *owner, bool excl,
		  const struct clf_layout_desc *layout, int flags,
		  struct clf_proto_attr *attr);

int clf_ll_mkdir(uint64_t dir, const char *name, mode_t mode,
		 const struct clf_ll_owner *owner, struct clf_proto_attr *attr);
int clf_ll_unlink(uint64_t dir, const char *name);
int clf_ll_rmdir(uint64_t dir, const char *name);

/* flags: CLF_PROTO_RENAME_NOREPLACE or 0. */
int clf_ll_rename(uint64_t dir, const char *name, uint64_t new_dir,
		  const char *new_name, uint32_t flags);

/*
 * Special files and hard links (client_link.c; protocol 1.6: a metad of
 * an older minor answers -ENOSYS).  symlink makes name in dir point to
 * target (kept as given, never followed by metad); readlink gives a
 * symlink's target (a new string, caller frees) and a device node's
 * rdev (target then NULL), -EINVAL for other kinds; link gives inode
 * ino (not a directory: -EPERM) the new name new_name in new_dir, its
 * new attributes in *attr; mknod makes a fifo, socket or device node
 * (mode: the kind | permission bits).
 */
int clf_ll_symlink(uint64_t dir, const char *name, const char *target,
		   const struct clf_ll_owner *owner,
		   struct clf_proto_attr *attr);
int clf_ll_readlink(uint64_t ino, char **target, uint64_t *rdev);
int clf_ll_link(uint64_t ino, uint64_t new_dir, const char *new_name,
		struct clf_proto_attr *attr);
int clf_ll_mknod(uint64_t dir, const char *name, mode_t mode, uint64_t rdev,
		 const struct clf_ll_owner *owner, struct clf_proto_attr *attr);

/*
 * Entries of dir after cookie (0: from the start).  The names borrow
 * from payload: both live until clf_ll_dirents_release.
 */
struct clf_ll_dirents {
	struct clf_proto_readdir_rep rep;
	void *payload;		/* owned */
};
int clf_ll_readdir(uint64_t dir, uint64_t cookie, uint32_t max,
		   struct clf_ll_dirents *out);
void clf_ll_dirents_release(struct clf_ll_dirents *d);

/*
 * Entries of dir after cookie (0: from the start) with their attributes,
 * at most max (1..CLF_PROTO_READDIR_MAX; metad may send fewer, a page
 * being at most CLF_PROTO_READDIRPLUS_BYTES): one READDIRPLUS round trip
 * to metad (protocol 1.14) instead of a GETATTR per entry.  With
 * CLF_LL_PLUS_SIZE the size of each regular file is what clf_ll_stat
 * gives (derived from its subfiles, with one SUB_SIZES_MANY per iod for
 * the whole page; an iod out of reach leaves metad's size, as CLF_stat);
 * without it, metad's size.  Against a metad older than 1.14, READDIR
 * and one clf_ll_stat (or clf_ll_getattr) per entry.  The next page
 * starts after the last entry's cookie; eof says there is none.
 */
#define CLF_LL_PLUS_SIZE 0x1u
struct clf_ll_direntplus {
	uint64_t cookie;
	const char *name;	/* NUL-terminated; borrows from the page */
	struct clf_proto_attr attr;
};
struct clf_ll_dirents_plus {
	uint32_t count;
	bool eof;
	struct clf_ll_direntplus *ents;	/* count, owned */
	char *names;			/* owned */
};
int clf_ll_readdirplus(uint64_t dir, uint64_t cookie, uint32_t max,
		       unsigned flags, struct clf_ll_dirents_plus *out);
/* Free what a page holds; NULL ok. */
void clf_ll_dirents_plus_release(struct clf_ll_dirents_plus *d);

int clf_ll_statfs(struct clf_proto_statfs *st);

/* The number of iods of the configuration (for placing subfiles). */
int clf_ll_niods(void);

/*
 * The configuration this client runs with (the file CLF_init read, or
 * the built-in one): *out borrows it until CLF_finalize.  Read only.
 */
int clf_ll_config(const struct clf_config **out);

/* Can desc be placed on the iods of the configuration?  0 or -EINVAL. */
int clf_ll_check_layout(const struct clf_layout_desc *desc);

/*
 * Open inode ino (a regular file) with flags (O_ACCMODE, O_APPEND):
 * its attributes and layout from metad, a descriptor back.  -EISDIR for
 * a directory.
 */
int clf_ll_open(uint64_t ino, int flags, struct clf_proto_attr *attr);

/* The layout of inode ino (release with CLF_Layout_release). */
int clf_ll_get_layout(uint64_t ino, struct clf_layout_info *info);

/*
 * Give the empty file ino the layout desc (placed as in clf_ll_create);
 * -EBUSY when it holds data.  Open descriptors of the file keep the old
 * layout until clf_ll_reload_layout.
 */
int clf_ll_set_layout(uint64_t ino, const struct clf_layout_desc *desc);

/* Fetch the layout of fd's file again and use it from now on. */
int clf_ll_reload_layout(int fd);

/*
 * Positioned access to the bytes of fd's file (its view must be the
 * default one).  pread reads at most up to size, which the caller knows
 * to be the file size (it may know more than metad: its own writes are
 * reported by clf_ll_report_size).  pwrite leaves reporting the new end
 * to the caller: closing fd will not report it.  Return the bytes moved.
 */
int64_t clf_ll_pread(int fd, void *buf, int64_t len, int64_t off,
		     int64_t size);
int64_t clf_ll_pwrite(int fd, const void *buf, int64_t len, int64_t off);

/*
 * An O_APPEND write of len bytes to fd's file (default view): at the end
 * of file, in a range metad reserved for it, so that appends of other
 * clients and of other descriptors never overlap it (clf.h, "O_APPEND").
 * Returns the bytes written and *off, the offset they start at.  The
 * caller reports the end, as for clf_ll_pwrite.
 */
int64_t clf_ll_append(int fd, const void *buf, int64_t len, int64_t *off);

/* Tell metad that the file ino ends at size or beyond (with mtime now). */
int clf_ll_report_size(uint64_t ino, int64_t size,
		       struct clf_proto_attr *attr);

/*
 * Byte-range locks by inode, for an explicit owner (libclf/client/lock.c; the
 * semantics and their limits: include/clf_proto.h "Locks").  The owner
 * is any number that names the holder within this process (the mount
 * uses the kernel's lock owner); CLF_fcntl(CLF_FCNTL_SETLK...) uses one
 * number per process.  Locks are held on a connection to metad of their
 * own, and end when this process ends or metad stops.
 */
struct clf_ll_lock {
	uint64_t owner;
	uint32_t pid;		/* the holder's, reported by GETLK */
	short type;		/* F_RDLCK, F_WRLCK or F_UNLCK */
	uint64_t start;		/* byte offset */
	uint64_t length;	/* bytes; 0: to the end of the file */
};

/* Asked between the bounded waits of a blocking lock: true stops it
 * with -EINTR (the FUSE request was interrupted). */
typedef bool (*clf_ll_interrupted_fn)(void *arg);

/*
 * clf_ll_setlk - lock, convert or unlock (F_UNLCK) a range of inode ino
 *
 * Without wait, -EAGAIN when another owner's lock is in the way.  With
 * wait, metad waits up to about a second at a time, and this call asks
 * again until granted, -EDEADLK (waiting would close a cycle of owners
 * waiting for each other), interrupted() (NULL: never) says stop
 * (-EINTR), or another error.  -EINVAL for a bad type or a range past
 * the largest offset; -ENOLCK when metad cannot take more locks or
 * speaks a protocol without them.
 */
int clf_ll_setlk(uint64_t ino, const struct clf_ll_lock *lk, bool wait,
		 clf_ll_interrupted_fn interrupted, void *arg);

/*
 * clf_ll_getlk - would lk (F_RDLCK or F_WRLCK) be granted?  Then 0 with
 * lk->type F_UNLCK; else 0 with *lk describing the first lock in the way
 * (type, start, length, pid; owner is left alone).
 */
int clf_ll_getlk(uint64_t ino, struct clf_ll_lock *lk);

/* Release every lock of owner on inode ino (close, FUSE flush). */
int clf_ll_unlock_owner(uint64_t ino, uint64_t owner);

/*
 * Directory default layouts.  metad keeps no extended attributes, so a
 * directory's default layout is its text (layout_text.h) in a hidden
 * file of the directory, one line: it needs no metad change, survives
 * restarts, goes with the directory, and every client sees it -- the
 * mount (user.clf.layout on a directory, kernel/clfs_xattr.c), the clf
 * command line (clf setlayout DIR), native programs.  Whoever creates a
 * file in the directory without a layout of its own should give it this
 * one; the mount and `clf cp` do.
 */
#define CLF_LL_DEFAULT_LAYOUT_NAME CLF_PROTO_DIR_DEFAULT_NAME
/* The longest default layout text read back, in bytes. */
#define CLF_LL_DEFAULT_LAYOUT_MAX 65536

/*
 * The default layout text of directory dir: 0 and a new string in *text
 * (caller frees; trailing blanks and newline removed), or *text NULL
 * when dir has none (or an empty one).  -EFBIG with a message when the
 * hidden file is longer than CLF_LL_DEFAULT_LAYOUT_MAX; other errors of
 * the lookup and the read.  The text is not checked.
 */
int clf_ll_dir_default_read(uint64_t dir, char **text);

/*
 * Make text (plus a newline) the whole hidden file of dir, created with
 * mode 0644 for owner when missing.  The caller checks the text first
 * (clf_layout_text_parse, clf_ll_check_layout).
 */
int clf_ll_dir_default_write(uint64_t dir, const struct clf_ll_owner *owner,
			     const char *text);

/* Remove dir's default layout: 0, or -ENOENT when it had none. */
int clf_ll_dir_default_remove(uint64_t dir);

/*
 * The write-back journal of an instance with a backing directory
 * (docs/staging.md), under that directory.  Clients append at close
 * (stage_note.c); `clf stager` reads it.  Lines, in the order they
 * reached the file:
 *   W <ino>                    a client closed inode ino after opening it
 *                              for writing
 *   D <ino> <upto> <path>      the stager wrote ino back as <path>: every
 *                              W of ino before byte offset upto is done
 *   F <ino> <upto> <path>\t<why>  it could not; it tries again
 *   R <path>                   a client removed path (a file or an empty
 *                              directory) in clf
 *   N <from>\t<to>             a client renamed from to to in clf (R and
 *                              N paths escape backslash, newline, tab
 *                              as \\, \n, \t)
 *   X <upto>                   the stager applied every R and N before
 *                              byte offset upto to the backing directory
 */
#define CLF_LL_STAGE_DIR ".clf-stage"
#define CLF_LL_STAGE_JOURNAL CLF_LL_STAGE_DIR "/journal"

/*
 * clf_ll_stage_journal_open - the journal of backing, for appending
 *
 * Opens BACKING/CLF_LL_STAGE_JOURNAL (O_APPEND, made with its directory
 * when missing) and takes a shared flock on it, on the file that has the
 * journal's name once the lock is held: the stager compacts a journal
 * whose notes are all done by renaming an empty one over it under an
 * exclusive lock, and an append to the old file would be lost.  path
 * (len bytes) gets the journal's name, *st (may be NULL) its stat (its
 * size is the offset the next line lands at, while the lock is held).
 * Returns the descriptor (close releases the lock) or -1 with errno.
 */
int clf_ll_stage_journal_open(const char *backing, char *path, size_t len,
			      struct stat *st);

#endif /* CLF_LL_H */
