// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_ops.c -- names and attributes of the mount client: lookup,
 * getattr, setattr, mkdir, unlink, rmdir, rename, readdir, statfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clf.h"
#include "clf_ll.h"
#include "clfs_i.h"
#include "clfs_log.h"

/* Entries asked from metad per READDIR. */
#define CLFS_READDIR_BATCH 256

/* A name that metad would refuse, refused here with the right errno. */
static int check_name(const char *name)
{
	if (strlen(name) > CLF_PROTO_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int clfs_lookup(struct clfs *fs, uint64_t parent, const char *name,
		struct stat *st)
{
	struct clf_proto_attr a;
	int err = check_name(name);

	if (err)
		return err;
	if (clfs_reserved_name(name))
		return -ENOENT;
	/* Sizes as the subfiles say: another client's writes count. */
	err = clf_ll_lookup_stat(parent, name, &a);
	return err ? err : clfs_entry(fs, parent, &a, st, NULL);
}

void clfs_forget(struct clfs *fs, uint64_t ino, uint64_t nlookup)
{
	clfs_iforget(&fs->itab, ino, nlookup);
}

int clfs_getattr(struct clfs *fs, uint64_t ino, struct stat *st)
{
	struct clf_proto_attr a;
	struct clfs_inode *ip = clfs_ifind(&fs->itab, ino);
	uint64_t seq = ip ? clfs_write_seq(ip) : 0;
	int err = clf_ll_stat(ino, &a);

	if (err || !ip) {
		if (!err) {
			clfs_attr_to_stat(&a, a.size, st);
			st->st_rdev = clfs_rdev_of(NULL, &a);
		}
		if (ip)
			clfs_iput(&fs->itab, ip);
		return err;
	}
	clfs_attr_take_since(ip, &a, st, seq);
	clfs_iput(&fs->itab, ip);
	return 0;
}

static int64_t timespec_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

int clfs_setattr(struct clfs *fs, uint64_t ino, const struct stat *want,
		 unsigned to_set, struct stat *st)
{
	struct clf_proto_attr to = { .ino = ino }, a;
	uint32_t mask = 0;
	struct clfs_inode *ip;
	int err;

	if (fs->read_only)
		return -EROFS;
	if (to_set & CLFS_SET_MODE) {
		mask |= CLF_PROTO_SETATTR_MODE;
		to.mode = want->st_mode & CLF_PROTO_MODE_PERM;
	}
	if (to_set & CLFS_SET_UID) {
		mask |= CLF_PROTO_SETATTR_UID;
		to.uid = want->st_uid;
	}
	if (to_set & CLFS_SET_GID) {
		mask |= CLF_PROTO_SETATTR_GID;
		to.gid = want->st_gid;
	}
	if (to_set & CLFS_SET_SIZE) {
		if (want->st_size < 0)
			return -EINVAL;
		mask |= CLF_PROTO_SETATTR_SIZE;
		to.size = want->st_size;
	}
	if (to_set & CLFS_SET_ATIME_NOW) {
		mask |= CLF_PROTO_SETATTR_ATIME_NOW;
	} else if (to_set & CLFS_SET_ATIME) {
		mask |= CLF_PROTO_SETATTR_ATIME;
		to.atime = timespec_ns(&want->st_atim);
	}
	if (to_set & CLFS_SET_MTIME_NOW) {
		mask |= CLF_PROTO_SETATTR_MTIME_NOW;
	} else if (to_set & CLFS_SET_MTIME) {
		mask |= CLF_PROTO_SETATTR_MTIME;
		to.mtime = timespec_ns(&want->st_mtim);
	}
	ip = clfs_iget(&fs->itab, ino);
	if (!ip)
		return -ENOMEM;
	pthread_mutex_lock(&ip->lock);
	/*
	 * Writes not reported yet come first: reported later, they would
	 * undo a truncation or the times set here (cp -p sets the times
	 * before it closes).
	 */
	err = clfs_report_locked(ip);
	if (!err)
		err = clf_ll_setattr(ino, mask, &to, &a);
	if (!err && (to_set & CLFS_SET_SIZE)) {
		ip->size = a.size;
		ip->size_dirty = false;
	}
	pthread_mutex_unlock(&ip->lock);
	if (!err)
		clfs_attr_take(ip, &a, st);
	clfs_iput(&fs->itab, ip);
	return err;
}

int clfs_mkdir(struct clfs *fs, const struct clfs_caller *who,
	       uint64_t parent, const char *name, mode_t mode,
	       struct stat *st)
{
	struct clf_ll_owner owner = { who->uid, who->gid };
	struct clf_proto_attr a;
	char *dflt = NULL;
	int err = check_name(name);

	if (err)
		return err;
	if (fs->read_only)
		return -EROFS;
	if (clfs_reserved_name(name))
		return -EPERM;
	err = clf_ll_mkdir(parent, name, mode, &owner, &a);
	if (err)
		return err;
	/* A new directory inherits its parent's default layout. */
	if (clfs_dir_default(fs, parent, &dflt) == 0 && dflt &&
	    clfs_dir_set_default(fs, who, a.ino, dflt))
		clfs_log(CLFS_LOG_WARNING,
			 "cannot give new directory '%s' (inode %llu) the default layout of its parent: %s",
			 name, (unsigned long long)a.ino, CLF_Last_error());
	free(dflt);
	return clfs_entry(fs, parent, &a, st, NULL);
}

static long open_count(struct clfs *fs)
{
	long n;

	pthread_mutex_lock(&fs->open_lock);
	n = fs->nopen;
	pthread_mutex_unlock(&fs->open_lock);
	return n;
}

/*
 * If name in dir is the last name of a file open through this mount,
 * rename it out of the way (it is removed at its last release): 1.
 * Not open, or other names left: 0.
 */
static int hide_if_open(struct clfs *fs, uint64_t dir, const char *name)
{
	struct clf_proto_attr a;
	struct clfs_inode *ip;
	char hidden[48];
	int err;

	if (open_count(fs) == 0)
		return 0;
	err = clf_ll_lookup(dir, name, &a);
	if (err)
		return err == -ENOENT ? 0 : err;
	/* Another name keeps the inode and its data: nothing to hide. */
	if (S_ISDIR(a.mode) || a.nlink > 1)
		return 0;
	ip = clfs_ifind(&fs->itab, a.ino);
	if (!ip)
		return 0;
	pthread_mutex_lock(&ip->lock);
	err = 0;
	if (ip->handles && !ip->unlinked_dir) {
		clfs_unlinked_name(a.ino, hidden);
		err = clf_ll_rename(dir, name, dir, hidden, 0);
		if (!err) {
			ip->unlinked_dir = dir;
			err = 1;
		}
	}
	pthread_mutex_unlock(&ip->lock);
	clfs_iput(&fs->itab, ip);
	return err;
}

int clfs_unlink(struct clfs *fs, uint64_t parent, const char *name)
{
	int err = check_name(name);

	if (err)
		return err;
	if (fs->read_only)
		return -EROFS;
	if (clfs_reserved_name(name))
		return -ENOENT;
	err = hide_if_open(fs, parent, name);
	if (err)
		return err < 0 ? err : 0;
	return clf_ll_unlink(parent, name);
}

int clfs_rmdir(struct clfs *fs, uint64_t parent, const char *name)
{
	struct clf_proto_attr a;
	int err = check_name(name);

	if (err)
		return err;
	if (fs->read_only)
		return -EROFS;
	if (clfs_reserved_name(name))
		return -ENOENT;
	err = clf_ll_rmdir(parent, name);
	if (err != -ENOTEMPTY)
		return err;
	/* Empty but for its default layout? */
	err = clf_ll_lookup(parent, name, &a);
	if (!err)
		err = clfs_dir_drop_hidden(fs, a.ino);
	if (err < 0)
		return err;
	return err ? clf_ll_rmdir(parent, name) : -ENOTEMPTY;
}

int clfs_rename(struct clfs *fs, uint64_t parent, const char *name,
		uint64_t new_parent, const char *new_name, unsigned flags)
{
	uint32_t wire = flags & CLFS_RENAME_NOREPLACE ? CLF_PROTO_RENAME_NOREPLACE
						      : 0;
	struct clf_proto_attr a;
	int err = check_name(name);

	if (!err)
		err = check_name(new_name);
	if (err)
		return err;
	if (fs->read_only)
		return -EROFS;
	if (flags & ~CLFS_RENAME_NOREPLACE)
		return -EINVAL;
	if (clfs_reserved_name(name))
		return -ENOENT;
	if (clfs_reserved_name(new_name))
		return -EPERM;
	if (!wire) {
		err = hide_if_open(fs, new_parent, new_name);
		if (err < 0)
			return err;
	}
	err = clf_ll_rename(parent, name, new_parent, new_name, wire);
	if (err != -ENOTEMPTY)
		return err;
	/* A target directory empty but for its default layout. */
	err = clf_ll_lookup(new_parent, new_name, &a);
	if (!err)
		err = clfs_dir_drop_hidden(fs, a.ino);
	if (err < 0)
		return err;
	return err ? clf_ll_rename(parent, name, new_parent, new_name, wire)
		   : -ENOTEMPTY;
}

/*
 * Offsets: 1 after ".", 2 after "..", metad's cookie + 2 after an entry
 * (metad's cookies start at 1 and grow).
 */
int clfs_readdir(struct clfs *fs, uint64_t ino, uint64_t off,
		 clfs_fill_fn fill, void *arg)
{
	struct clfs_inode *ip;
	uint64_t parent = CLF_PROTO_ROOT_INO, cookie;
	bool eof = false;
	int err = 0;

	ip = clfs_ifind(&fs->itab, ino);
	if (ip) {
		pthread_mutex_lock(&ip->lock);
		if (ip->parent)
			parent = ip->parent;
		pthread_mutex_unlock(&ip->lock);
		clfs_iput(&fs->itab, ip);
	}
	if (off == 0 && fill(arg, ".", ino, S_IFDIR, 1))
		return 0;
	if (off <= 1 && fill(arg, "..", parent, S_IFDIR, 2))
		return 0;
	cookie = off <= 2 ? 0 : off - 2;
	while (!eof && !err) {
		struct clf_ll_dirents d;

		err = clf_ll_readdir(ino, cookie, CLFS_READDIR_BATCH, &d);
		if (err)
			break;
		eof = d.rep.eof;
		for (uint32_t i = 0; i < d.rep.count; i++) {
			const struct clf_proto_dirent *e = &d.rep.ents[i];
			char name[CLF_PROTO_NAME_MAX + 1];

			memcpy(name, e->name.ptr, e->name.len);
			name[e->name.len] = '\0';
			cookie = e->cookie;
			if (clfs_reserved_name(name))
				continue;
			if (fill(arg, name, e->ino, e->mode & S_IFMT,
				 e->cookie + 2)) {
				eof = true;
				break;
			}
		}
		if (!d.rep.count)
			eof = true;
		clf_ll_dirents_release(&d);
	}
	return err;
}

/* Bytes of one FUSE readdirplus entry before its name (struct
 * fuse_direntplus), to ask metad for about as many as the reply holds. */
#define CLFS_DIRENTPLUS_BYTES 160

int clfs_readdirplus(struct clfs *fs, uint64_t ino, uint64_t off,
		     size_t room, clfs_fill_plus_fn fill, void *arg)
{
	struct clfs_inode *ip = clfs_ifind(&fs->itab, ino);
	uint64_t parent = CLF_PROTO_ROOT_INO, cookie;
	struct stat st = { .st_mode = S_IFDIR };
	size_t want = room / CLFS_DIRENTPLUS_BYTES + 1;
	bool eof = false;
	int err = 0;

	if (ip) {
		pthread_mutex_lock(&ip->lock);
		if (ip->parent)
			parent = ip->parent;
		pthread_mutex_unlock(&ip->lock);
		clfs_iput(&fs->itab, ip);
	}
	st.st_ino = ino;
	if (off == 0 && fill(arg, ".", &st, false, 1))
		return 0;
	st.st_ino = parent;
	if (off <= 1 && fill(arg, "..", &st, false, 2))
		return 0;
	if (want > CLF_PROTO_READDIR_MAX)
		want = CLF_PROTO_READDIR_MAX;
	cookie = off <= 2 ? 0 : off - 2;
	while (!eof && !err) {
		struct clf_ll_dirents_plus d;

		/* Sizes as a lookup gives them: what the subfiles hold. */
		err = clf_ll_readdirplus(ino, cookie, (uint32_t)want,
					 CLF_LL_PLUS_SIZE, &d);
		if (err)
			break;
		eof = d.eof || !d.count;
		for (uint32_t i = 0; i < d.count && !err; i++) {
			const struct clf_ll_direntplus *e = &d.ents[i];

			cookie = e->cookie;
			if (clfs_reserved_name(e->name))
				continue;
			/* The kernel counts the entry as a lookup. */
			err = clfs_entry(fs, ino, &e->attr, &st, NULL);
			if (err)
				break;
			if (fill(arg, e->name, &st, true, e->cookie + 2)) {
				clfs_forget(fs, e->attr.ino, 1);
				eof = true;
				break;
			}
		}
		clf_ll_dirents_plus_release(&d);
	}
	return err;
}

int clfs_statfs(struct clfs *fs, struct statvfs *sv)
{
	struct clf_proto_statfs s;
	unsigned long bs;
	int err = clf_ll_statfs(&s);

	if (err)
		return err;
	bs = s.block_size ? s.block_size : 4096;
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = bs;
	sv->f_frsize = bs;
	sv->f_blocks = s.bytes_total / bs;
	sv->f_bfree = s.bytes_free / bs;
	sv->f_bavail = s.bytes_avail / bs;
	sv->f_files = s.files;
	sv->f_ffree = s.files_free;
	sv->f_favail = s.files_free;
	sv->f_namemax = s.name_max ? s.name_max : CLF_PROTO_NAME_MAX;
	sv->f_flag = fs->read_only ? ST_RDONLY : 0;
	return 0;
}
