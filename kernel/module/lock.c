// SPDX-License-Identifier: GPL-2.0
/*
 * lock.c -- fcntl, OFD and flock locks kept by metad (through the
 * daemon), not by this kernel alone: other clients of the instance see
 * them, and this kernel keeps none of its own.
 *
 * So the kernel's own release of a closing owner's locks (which looks
 * at its local lists only) never comes here: each close (flush) sends
 * an unlock of the fcntl owner, the last close (release) one of the
 * file's own (OFD and flock), once the inode has seen a lock asked for.
 * Directories' locks are metad's too (flock of a directory is how some
 * programs serialise work on a tree): asked for on the inode, as the
 * daemon holds no handle of a directory.
 * A sleeping lock waits interruptibly: a signal asks the daemon to give
 * up (dev.c), and the call restarts or fails with EINTR as the signal's
 * action says.
 */
#include <linux/fs.h>
#include <linux/sched.h>

#include "clf.h"

/*
 * The daemon's handle of file; none (0) for a directory, which the
 * daemon has not opened: its locks are asked for on its inode.
 */
static int lock_fh(struct file *file, u64 *fh)
{
	struct clf_file *cf = file->private_data;

	if (S_ISDIR(file_inode(file)->i_mode)) {
		*fh = 0;
		return 0;
	}
	if (!cf || cf->gen != clf_dev_generation())
		return -EIO;
	*fh = cf->fh;
	return 0;
}

static void to_up_lock(const struct file_lock *fl, struct clf_up_lock *lk)
{
	memset(lk, 0, sizeof(*lk));
	lk->owner = (unsigned long)fl->fl_owner;
	lk->start = fl->fl_start;
	lk->end = fl->fl_end == OFFSET_MAX ? CLF_UP_LOCK_EOF : fl->fl_end;
	lk->type = fl->fl_type;
	lk->pid = fl->fl_pid;
}

static int lock_call(struct file *file, u32 op, struct clf_up_lock *lk,
		     bool sleep)
{
	struct clf_call c = {
		.data1 = lk,
		.len1 = sizeof(*lk),
		.out = lk,
		.out_max = sizeof(*lk),
	};
	int err;

	clf_fill_in(&c.in, op, file_inode(file));
	err = lock_fh(file, &c.in.fh);
	if (err)
		return err;
	lk->sleep = sleep;
	if (!sleep)
		return clf_call(&c);
	err = clf_call_interruptible(&c);
	/* The signal's action decides: restart, or EINTR. */
	return err == -EINTR ? -ERESTARTSYS : err;
}

static int getlk(struct file *file, struct file_lock *fl)
{
	struct clf_up_lock lk;
	int err;

	to_up_lock(fl, &lk);
	err = lock_call(file, CLF_UP_GETLK, &lk, false);
	if (err)
		return err;
	fl->fl_type = lk.type;
	if (lk.type != F_UNLCK) {
		fl->fl_start = lk.start;
		fl->fl_end = lk.end == CLF_UP_LOCK_EOF ? OFFSET_MAX : lk.end;
		fl->fl_pid = lk.pid;
		fl->fl_owner = NULL;
	}
	return 0;
}

static int setlk(struct file *file, struct file_lock *fl, bool sleep)
{
	struct clf_inode_info *ci = CLF_I(file_inode(file));
	struct clf_up_lock lk;

	/* Marked first: a close racing with the grant still releases. */
	if (fl->fl_type != F_UNLCK)
		WRITE_ONCE(ci->locked, true);
	to_up_lock(fl, &lk);
	return lock_call(file, CLF_UP_SETLK, &lk, sleep);
}

int clf_lock(struct file *file, int cmd, struct file_lock *fl)
{
	if (IS_GETLK(cmd))
		return getlk(file, fl);
	return setlk(file, fl, IS_SETLKW(cmd));
}

/* flock(2): the whole file, owned by the open file. */
int clf_flock(struct file *file, int cmd, struct file_lock *fl)
{
	return setlk(file, fl, IS_SETLKW(cmd));
}

void clf_unlock_owner(struct file *file, fl_owner_t owner)
{
	struct clf_call c = { 0 };

	if (!READ_ONCE(CLF_I(file_inode(file))->locked))
		return;
	clf_fill_in(&c.in, CLF_UP_UNLOCK_OWNER, file_inode(file));
	c.in.arg = (unsigned long)owner;
	if (!lock_fh(file, &c.in.fh))
		clf_call(&c);
}
