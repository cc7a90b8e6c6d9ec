/* SPDX-License-Identifier: (GPL-2.0 OR LGPL-2.1-or-later) */
/*
 * clf_upcall.h -- the messages between the clf kernel module and its
 * user-space daemon, over the misc device /dev/clf.  The one definition:
 * kernel/module/ and the daemon (kernel/clfs_upcall.c) both include it.
 *
 * The daemon read(2)s one request per call (a buffer of at least
 * CLF_UP_BUF_MAX bytes) and write(2)s one reply per call.  Several
 * threads may read and write the same descriptor: replies carry the
 * request's unique number and may come in any order.  Only one daemon
 * may hold the device at a time; when it closes (or dies), every
 * request waiting for it fails with EIO, and so does every new one
 * until a daemon opens the device again.
 *
 * A request: struct clf_up_in, then the operation's fixed arguments,
 * then its variable part (names as NUL-terminated strings, or a write's
 * bytes).  A reply: struct clf_up_out, then the operation's result.
 * Little-endian, native layout: the daemon runs on the kernel's host.
 * CLF_UP_VERSION changes with any change here; each request carries
 * the module's, and a daemon of another version answers -EPROTO.
 */
#ifndef CLF_UPCALL_H
#define CLF_UPCALL_H

#include <linux/types.h>

#define CLF_UP_VERSION		4
#define CLF_UP_DEVICE		"/dev/clf"

/* Data moved by one READ or WRITE, and the largest message. */
#define CLF_UP_IO_MAX		(1024u * 1024u)
#define CLF_UP_BUF_MAX		(CLF_UP_IO_MAX + 4096u)
#define CLF_UP_NAME_MAX		255
/* The most a READDIR reply holds. */
#define CLF_UP_READDIR_MAX	16384u

enum clf_up_op {
	CLF_UP_MOUNT = 1,		/* in: source string; out: root attr */
	CLF_UP_UMOUNT,		/* no reply; arg: mounts left */
	CLF_UP_LOOKUP,		/* ino: parent; name; out: attr */
	CLF_UP_FORGET,		/* no reply; arg: nlookup */
	CLF_UP_GETATTR,		/* out: attr */
	CLF_UP_SETATTR,		/* struct clf_up_setattr; out: attr */
	CLF_UP_CREATE,		/* parent; mode; name; out: clf_up_open */
	CLF_UP_MKDIR,		/* parent; mode; name; out: attr */
	CLF_UP_UNLINK,		/* parent; name */
	CLF_UP_RMDIR,		/* parent; name */
	CLF_UP_RENAME,		/* parent; arg: new parent; flags; two names */
	CLF_UP_READDIR,		/* off; out: clf_up_dirent... */
	CLF_UP_STATFS,		/* out: struct clf_up_statfs */
	CLF_UP_OPEN,		/* flags; out: struct clf_up_open */
	CLF_UP_RELEASE,		/* fh */
	CLF_UP_READ,		/* fh, off, size; out: the bytes */
	CLF_UP_WRITE,		/* fh, off; the bytes; out: count in arg */
	CLF_UP_FLUSH,		/* fh */
	CLF_UP_FSYNC,		/* fh */
	CLF_UP_SYMLINK,		/* parent; name, target; out: attr */
	CLF_UP_READLINK,	/* out: the target */
	CLF_UP_LINK,		/* ino; arg: new parent; name; out: attr */
	CLF_UP_MKNOD,		/* parent; mode; arg: rdev; name; out: attr */
	CLF_UP_GETXATTR,	/* arg: size (0: ask); name; out: value */
	CLF_UP_SETXATTR,	/* flags; name, then the value's bytes */
	CLF_UP_LISTXATTR,	/* arg: size (0: ask); out: names */
	CLF_UP_REMOVEXATTR,	/* name */
	/* fh: 0 on a directory (its ino's locks, it has no handle) */
	CLF_UP_GETLK,		/* fh; struct clf_up_lock; out: the same */
	CLF_UP_SETLK,		/* fh; struct clf_up_lock */
	CLF_UP_UNLOCK_OWNER,	/* fh; arg: the owner whose locks go */
	CLF_UP_INTERRUPT,	/* no reply; arg: unique of a sleeping SETLK */
	CLF_UP_OP_MAX
};

struct clf_up_in {
	__u32 len;		/* of the whole message */
	__u32 version;		/* CLF_UP_VERSION */
	__u32 op;		/* enum clf_up_op */
	__u32 flags;		/* open/create flags, rename flags */
	__u64 unique;		/* echoed in the reply */
	__u64 ino;		/* the inode (or parent directory) */
	__u64 fh;		/* open handle, for I/O */
	__u64 off;		/* I/O or readdir offset */
	__u64 arg;		/* size, new parent, nlookup, mounts left */
	__u32 uid, gid;		/* the caller: owner of what it creates */
	__u32 mode;		/* create/mkdir mode */
	__u32 pad;
};

struct clf_up_out {
	__u32 len;		/* of the whole message */
	__s32 error;		/* 0 or a negative errno */
	__u64 unique;
	__u64 arg;		/* written; readdir's end; xattr length */
};

struct clf_up_attr {
	__u64 ino, size, blocks;
	__s64 atime, mtime, ctime;
	__u32 atime_ns, mtime_ns, ctime_ns;
	__u32 mode, nlink, uid, gid, rdev, blksize;
	__u32 pad;
};

/* CLF_UP_SETATTR: what to set (CLF_UP_SET_*, clfs_ops.h's values). */
struct clf_up_setattr {
	__u32 valid;
	__u32 mode, uid, gid;
	__u64 size;
	__s64 atime, mtime;
	__u32 atime_ns, mtime_ns;
};

#define CLF_UP_SET_MODE		0x01
#define CLF_UP_SET_UID		0x02
#define CLF_UP_SET_GID		0x04
#define CLF_UP_SET_SIZE		0x08
#define CLF_UP_SET_ATIME	0x10
#define CLF_UP_SET_MTIME	0x20
#define CLF_UP_SET_ATIME_NOW	0x40
#define CLF_UP_SET_MTIME_NOW	0x80

struct clf_up_open {
	__u64 fh;
	__u32 changed;		/* size or mtime moved: drop cached pages */
	__u32 pad;
	struct clf_up_attr attr;
};

/* READDIR replies: entries, each padded to 8 bytes. */
struct clf_up_dirent {
	__u64 ino;
	__u64 next_off;
	__u32 type;		/* S_IFMT bits of the mode */
	__u16 namelen;
	__u16 pad;
	char name[];
};

#define CLF_UP_DIRENT_SIZE(namelen) \
	((sizeof(struct clf_up_dirent) + (namelen) + 7) & ~7ul)

struct clf_up_statfs {
	__u64 blocks, bfree, bavail, files, ffree;
	__u32 bsize, namelen;
};

/*
 * Byte-range locks, kept by metad (fcntl, OFD and flock locks alike).
 * owner: the kernel's lock owner (a files_struct or a struct file),
 * unique on this host while it holds locks.  end is inclusive,
 * CLF_UP_LOCK_EOF: to the end of the file.  A SETLK with sleep waits
 * for the lock until it is granted or a CLF_UP_INTERRUPT naming it
 * comes (then -EINTR, nothing held); the module resends the interrupt
 * each second until the SETLK is answered.
 */
#define CLF_UP_LOCK_EOF		(~0ull)

struct clf_up_lock {
	__u64 owner;
	__u64 start, end;
	__u32 type;		/* F_RDLCK, F_WRLCK, F_UNLCK */
	__u32 pid;		/* of the holder (GETLK's answer) */
	__u32 sleep;		/* SETLK: wait for it */
	__u32 pad;
};

#endif /* CLF_UPCALL_H */
