// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_lock.c -- fcntl and flock locks of the mount, on metad's lock
 * table (libclf's by-inode calls, clf_ll.h).
 *
 * The kernel asks with its own lock owners; they are numbers unique in
 * this mount, which is one metad connection, exactly what metad keys
 * locks by.  A sleeping setlk occupies one worker thread of the FUSE
 * session (which has several: clfs_main.c) and, for about a second at a
 * time, the mount's lock connection to metad, never its other requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>

#include "clf.h"
#include "clf_ll.h"
#include "clfs_i.h"
#include "clfs_log.h"

static struct clfs_inode *inode_of(uint64_t fh)
{
	return clfs_handle_of(fh)->ip;
}

static void mark_locked(struct clfs_inode *ip)
{
	pthread_mutex_lock(&ip->lock);
	ip->locked = true;
	pthread_mutex_unlock(&ip->lock);
}

static int to_ns_lock(uint64_t owner, const struct flock *lk,
		      struct clf_ll_lock *out)
{
	/* libfuse hands SEEK_SET ranges with l_len >= 0; check anyway. */
	if (lk->l_whence != SEEK_SET || lk->l_start < 0 || lk->l_len < 0)
		return -EINVAL;
	*out = (struct clf_ll_lock){
		.owner = owner,
		.pid = (uint32_t)lk->l_pid,
		.type = lk->l_type,
		.start = (uint64_t)lk->l_start,
		.length = (uint64_t)lk->l_len,
	};
	return 0;
}

int clfs_getlk(struct clfs *fs, uint64_t fh, uint64_t owner,
	       struct flock *lk)
{
	return clfs_getlk_ino(fs, inode_of(fh)->ino, owner, lk);
}

int clfs_getlk_ino(struct clfs *fs, uint64_t ino, uint64_t owner,
		   struct flock *lk)
{
	struct clf_ll_lock l;
	int err = to_ns_lock(owner, lk, &l);

	(void)fs;
	if (!err)
		err = clf_ll_getlk(ino, &l);
	if (err)
		return err;
	lk->l_type = l.type;
	if (l.type != F_UNLCK) {
		lk->l_whence = SEEK_SET;
		lk->l_start = (off_t)l.start;
		lk->l_len = (off_t)l.length;
		lk->l_pid = (pid_t)l.pid;
	}
	return 0;
}

int clfs_setlk(struct clfs *fs, uint64_t fh, uint64_t owner,
	       const struct flock *lk, bool sleep,
	       clfs_interrupted_fn interrupted, void *arg)
{
	struct clfs_inode *ip = inode_of(fh);
	struct clf_ll_lock l;
	int err = to_ns_lock(owner, lk, &l);

	(void)fs;
	if (err)
		return err;
	/* Marked first: a close racing with the grant still releases. */
	if (l.type != F_UNLCK)
		mark_locked(ip);
	return clf_ll_setlk(ip->ino, &l, sleep, interrupted, arg);
}

int clfs_setlk_ino(struct clfs *fs, uint64_t ino, uint64_t owner,
		   const struct flock *lk, bool sleep,
		   clfs_interrupted_fn interrupted, void *arg)
{
	struct clf_ll_lock l;
	int err = to_ns_lock(owner, lk, &l);

	(void)fs;
	return err ? err : clf_ll_setlk(ino, &l, sleep, interrupted, arg);
}

int clfs_flock(struct clfs *fs, uint64_t fh, uint64_t owner, int op,
	       clfs_interrupted_fn interrupted, void *arg)
{
	struct flock whole = { .l_whence = SEEK_SET };

	switch (op & ~LOCK_NB) {
	case LOCK_SH:
		whole.l_type = F_RDLCK;
		break;
	case LOCK_EX:
		whole.l_type = F_WRLCK;
		break;
	case LOCK_UN:
		whole.l_type = F_UNLCK;
		break;
	default:
		return -EINVAL;
	}
	/* flock(2) says EWOULDBLOCK, which is EAGAIN on Linux. */
	return clfs_setlk(fs, fh, owner, &whole, !(op & LOCK_NB),
			  interrupted, arg);
}

int clfs_unlock_owner(struct clfs *fs, uint64_t fh, uint64_t owner)
{
	struct clfs_inode *ip = inode_of(fh);
	bool locked;

	pthread_mutex_lock(&ip->lock);
	locked = ip->locked;
	pthread_mutex_unlock(&ip->lock);
	return locked ? clfs_unlock_owner_ino(fs, ip->ino, owner) : 0;
}

int clfs_unlock_owner_ino(struct clfs *fs, uint64_t ino, uint64_t owner)
{
	int err = clf_ll_unlock_owner(ino, owner);

	(void)fs;
	if (err)
		clfs_log(CLFS_LOG_WARNING,
			 "inode %llu: cannot release the locks of owner %llx: %s",
			 (unsigned long long)ino, (unsigned long long)owner,
			 CLF_Last_error());
	return err;
}
