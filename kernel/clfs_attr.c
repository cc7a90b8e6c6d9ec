// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_attr.c -- what every request of the mount client does with an
 * inode's attributes: take metad's (keeping the size this client's
 * writes reached), turn them into a struct stat, make an entry for the
 * kernel, report the size and mtime of writes to metad; and the names
 * the mount keeps for itself.  Below clfs_ops.c, clfs_io.c and
 * clfs_link.c, which all use it; it uses only the inode table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clf.h"
#include "clf_ll.h"
#include "clfs_i.h"
#include "clfs_log.h"

bool clfs_reserved_name(const char *name)
{
	size_t plen = strlen(CLFS_UNLINKED_PREFIX);

	if (!strcmp(name, CLFS_DEFAULT_LAYOUT_NAME))
		return true;
	return !strncmp(name, CLFS_UNLINKED_PREFIX, plen) &&
	       strlen(name) == plen + 16 &&
	       strspn(name + plen, "0123456789abcdef") == 16;
}

static void ns_to_timespec(int64_t ns, struct timespec *ts)
{
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	if (ts->tv_nsec < 0) {
		ts->tv_sec--;
		ts->tv_nsec += 1000000000;
	}
}

void clfs_attr_to_stat(const struct clf_proto_attr *a, int64_t size,
		       struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = size;
	/* Large: cp and friends size their buffers by it. */
	st->st_blksize = 1 << 20;
	st->st_blocks = (size + 511) / 512;
	ns_to_timespec(a->atime, &st->st_atim);
	ns_to_timespec(a->mtime, &st->st_mtim);
	ns_to_timespec(a->ctime, &st->st_ctim);
}

uint64_t clfs_write_seq(struct clfs_inode *ip)
{
	uint64_t seq;

	pthread_mutex_lock(&ip->lock);
	seq = ip->wseq;
	pthread_mutex_unlock(&ip->lock);
	return seq;
}

void clfs_attr_take(struct clfs_inode *ip, const struct clf_proto_attr *a,
		    struct stat *st)
{
	clfs_attr_take_since(ip, a, st, clfs_write_seq(ip));
}

void clfs_attr_take_since(struct clfs_inode *ip, const struct clf_proto_attr *a,
			  struct stat *st, uint64_t seq)
{
	dev_t rdev = clfs_rdev_of(ip, a);
	bool hidden;
	int64_t size;

	pthread_mutex_lock(&ip->lock);
	ip->have_attr = true;
	ip->is_dir = S_ISDIR(a->mode);
	if ((!ip->size_dirty && ip->wseq == seq) || a->size > ip->size)
		ip->size = a->size;
	size = ip->size;
	ip->given_size = size;
	ip->given_mtime = a->mtime;
	hidden = ip->unlinked_dir != 0;
	pthread_mutex_unlock(&ip->lock);
	clfs_attr_to_stat(a, size, st);
	st->st_rdev = rdev;
	/* The hidden name of a file unlinked while open is no link. */
	if (hidden && st->st_nlink > 0)
		st->st_nlink--;
}

int clfs_entry(struct clfs *fs, uint64_t parent,
	       const struct clf_proto_attr *a, struct stat *st,
	       struct clfs_inode **out)
{
	struct clfs_inode *ip = clfs_iget(&fs->itab, a->ino);

	if (!ip)
		return -ENOMEM;
	clfs_ilookup_ref(&fs->itab, ip);
	if (S_ISDIR(a->mode)) {
		pthread_mutex_lock(&ip->lock);
		ip->parent = parent;
		pthread_mutex_unlock(&ip->lock);
	}
	clfs_attr_take(ip, a, st);
	if (out)
		*out = ip;
	else
		clfs_iput(&fs->itab, ip);
	return 0;
}

void clfs_unlinked_name(uint64_t ino, char name[48])
{
	snprintf(name, 48, "%s%016llx", CLFS_UNLINKED_PREFIX,
		 (unsigned long long)ino);
}

dev_t clfs_rdev_of(struct clfs_inode *ip, const struct clf_proto_attr *a)
{
	uint64_t rdev = 0;
	char *target = NULL;
	int err;

	if (!S_ISCHR(a->mode) && !S_ISBLK(a->mode))
		return 0;
	if (ip) {
		pthread_mutex_lock(&ip->lock);
		if (ip->have_rdev) {
			dev_t d = ip->rdev;

			pthread_mutex_unlock(&ip->lock);
			return d;
		}
		pthread_mutex_unlock(&ip->lock);
	}
	err = clf_ll_readlink(a->ino, &target, &rdev);
	free(target);
	if (err) {
		clfs_log(CLFS_LOG_WARNING, "device %llu: cannot read its number: %s",
			 (unsigned long long)a->ino, CLF_Last_error());
		return 0;
	}
	if (ip) {
		pthread_mutex_lock(&ip->lock);
		ip->rdev = (dev_t)rdev;
		ip->have_rdev = true;
		pthread_mutex_unlock(&ip->lock);
	}
	return (dev_t)rdev;
}

int clfs_report_locked(struct clfs_inode *ip)
{
	struct clf_proto_attr a;
	int err = 0;

	if (ip->size_dirty) {
		/* Sets mtime too. */
		err = clf_ll_report_size(ip->ino, ip->size, &a);
		if (!err && a.size > ip->size)
			ip->size = a.size;
	} else if (ip->mtime_dirty) {
		err = clf_ll_setattr(ip->ino, CLF_PROTO_SETATTR_MTIME_NOW, NULL,
				     &a);
	}
	if (!err) {
		ip->size_dirty = false;
		ip->mtime_dirty = false;
	}
	return err;
}
