/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clfs_i.h -- what the parts of the mount client's request handling
 * share: the file system, its inode table and open handles.
 *
 *   clfs_inode.c   the table: inode number -> struct clfs_inode
 *   clfs_attr.c    attributes taken from metad, entries, size reports
 *   clfs_xattr.c   user.clf.layout and directory default layouts
 *   clfs_ops.c     names and attributes (lookup ... statfs)
 *   clfs_io.c      open handles: create, open, read, write, release
 *   clfs_link.c    symlinks, hard links, fifos, sockets, device nodes
 *   clfs_fs.c      the file system's life (clfs_new, clfs_free)
 *
 * Each file calls only those listed above it (scripts/depgraph.sh
 * --objs shows the calls), so no two of them call each other.
 *
 * Locks: the table lock (clfs_itable.lock) guards the hash chains and
 * every inode's reference counts; an inode's own lock guards the rest of
 * it and is taken after the table lock, never before.  Requests to the
 * daemons may be made under an inode lock (they then wait for each
 * other on that inode only), never under the table lock.
 */
#ifndef CLFS_I_H
#define CLFS_I_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "clf_ll.h"
#include "clfs_ops.h"
#include "proto.h"

/* The hidden file of a directory's default layout (clf_ll.h). */
#define CLFS_DEFAULT_LAYOUT_NAME CLF_LL_DEFAULT_LAYOUT_NAME
#define CLFS_UNLINKED_PREFIX ".clf-unlinked-"
/* How long a directory's default layout is trusted, in ns. */
#define CLFS_DEFAULT_LAYOUT_TTL 1000000000LL

struct clfs_handle;

struct clfs_inode {
	/* Under the table lock: */
	uint64_t ino;
	uint64_t nlookup;	/* the kernel's references */
	int refs;		/* ours: handles, calls in progress */
	struct clf_hnode hn;	/* in clfs_itable.table, by ino */

	pthread_mutex_t lock;	/* guards everything below */
	bool have_attr;		/* is_dir is known */
	bool is_dir;
	uint64_t parent;	/* a directory's, as last looked up; 0: unknown */
	/*
	 * The size: metad's, or more while writes through this mount went
	 * past it and were not reported yet (size_dirty).
	 */
	int64_t size;
	bool size_dirty;
	bool mtime_dirty;	/* written since the last report */
	uint64_t wseq;		/* writes through this mount so far */
	/* The size and mtime (ns) last handed to the kernel. */
	int64_t given_size, given_mtime;
	struct clfs_handle *handles;	/* open handles, linked by next */
	/* Unlinked while open: renamed to this name in this directory,
	 * which is not a name the user gave: stat shows one link less. */
	uint64_t unlinked_dir;	/* 0: not */
	/* Device nodes: their number, asked of metad once (it never
	 * changes; inode numbers are never reused). */
	bool have_rdev;
	dev_t rdev;
	/* Directories: the default layout text, or NULL; owned. */
	char *dflt;
	int64_t dflt_read_ns;	/* when read from metad; 0: never */
	/* A byte-range lock was asked for through this mount: closes must
	 * release their owner's locks (clfs_lock.c). */
	bool locked;
};

struct clfs_itable {
	pthread_mutex_t lock;
	struct clf_htable table;	/* of clfs_inode; .count: inodes */
};

struct clfs_handle {
	int fd;			/* the CLF descriptor; owned */
	struct clfs_inode *ip;	/* holds a reference */
	int flags;		/* of the open */
	struct clfs_handle *next;	/* in ip->handles; ip->lock */
};

struct clfs {
	bool read_only;
	struct clfs_itable itab;
	pthread_mutex_t open_lock;	/* guards nopen */
	long nopen;		/* open handles in the whole file system */
};

/* ---- clfs_inode.c ---- */

int clfs_itable_init(struct clfs_itable *t);
void clfs_itable_destroy(struct clfs_itable *t);

/*
 * The inode ino, created when absent, with one more reference of ours
 * (clfs_iput).  NULL on ENOMEM.
 */
struct clfs_inode *clfs_iget(struct clfs_itable *t, uint64_t ino);

/* The inode ino with one more reference of ours, or NULL if absent. */
struct clfs_inode *clfs_ifind(struct clfs_itable *t, uint64_t ino);

/* Drop one reference of ours; the inode goes with the last reference. */
void clfs_iput(struct clfs_itable *t, struct clfs_inode *ip);

/* One more lookup reference of the kernel. */
void clfs_ilookup_ref(struct clfs_itable *t, struct clfs_inode *ip);

/* The kernel drops n lookup references of inode ino. */
void clfs_iforget(struct clfs_itable *t, uint64_t ino, uint64_t n);

/* ---- clfs_attr.c ---- */

/* Is name one of the reserved names (clfs_ops.h)? */
bool clfs_reserved_name(const char *name);

/* The name a file unlinked while open goes by until its last release. */
void clfs_unlinked_name(uint64_t ino, char name[48]);

/*
 * Take metad's attributes a into ip (its size unless ours is ahead) and
 * give them as a struct stat.  Takes ip->lock.
 */
void clfs_attr_take(struct clfs_inode *ip, const struct clf_proto_attr *a,
		    struct stat *st);

/*
 * The same for attributes fetched after wseq was seq (clfs_write_seq):
 * a write through this mount since then may not be in a, so a smaller
 * size in a is then no news, not a truncation -- taking it would move
 * the end back under the appends of another handle.
 */
void clfs_attr_take_since(struct clfs_inode *ip, const struct clf_proto_attr *a,
			  struct stat *st, uint64_t seq);
uint64_t clfs_write_seq(struct clfs_inode *ip);

/*
 * The inode of a, with one more lookup reference, and its struct stat.
 * -ENOMEM when the table cannot grow.
 */
int clfs_entry(struct clfs *fs, uint64_t parent,
	       const struct clf_proto_attr *a, struct stat *st,
	       struct clfs_inode **out);

/* a as a struct stat, with size as its size (no inode to keep it in). */
void clfs_attr_to_stat(const struct clf_proto_attr *a, int64_t size,
		       struct stat *st);

/*
 * For a device node (a->mode): learn its number once into ip (NULL: no
 * table entry, ask every time) and return it; 0 for other kinds or when
 * metad cannot say (logged).  Takes ip->lock; call without it.
 */
dev_t clfs_rdev_of(struct clfs_inode *ip, const struct clf_proto_attr *a);

/*
 * Tell metad the size ip's writes reached (and that they changed the
 * file), if there is anything to tell.  ip->lock held.
 */
int clfs_report_locked(struct clfs_inode *ip);

/* ---- clfs_io.c ---- */

/* The handle behind a file handle number of clfs_ops.h. */
static inline struct clfs_handle *clfs_handle_of(uint64_t fh)
{
	return (struct clfs_handle *)(uintptr_t)fh;
}

/* ---- clfs_xattr.c ---- */

/*
 * The default layout text of directory dir (cached for
 * CLFS_DEFAULT_LAYOUT_TTL): 0 and a new string in *text (caller frees),
 * or NULL when it has none; or a negative errno.
 */
int clfs_dir_default(struct clfs *fs, uint64_t dir, char **text);

/* Make text the default layout of directory dir (NULL: remove it). */
int clfs_dir_set_default(struct clfs *fs, const struct clfs_caller *who,
			 uint64_t dir, const char *text);

/* Remove the hidden default layout of dir if it is its only entry:
 * 1 when removed, 0 when not, or a negative errno. */
int clfs_dir_drop_hidden(struct clfs *fs, uint64_t dir);

#endif /* CLFS_I_H */
