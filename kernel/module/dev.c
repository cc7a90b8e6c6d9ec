// SPDX-License-Identifier: GPL-2.0
/*
 * dev.c -- /dev/clf: requests to the user-space daemon and its replies.
 *
 * A request waits in "pending" until a daemon thread reads it, then in
 * "sent" until the reply with its unique number comes.  One daemon
 * holds the device at a time; when its last descriptor closes, every
 * request in either list fails with -EIO, and new ones fail at once
 * until a daemon opens the device again (a new generation: handles of
 * the old daemon are gone with it).
 *
 * A caller killed while it waits leaves: its request is taken out of
 * the lists and a late reply finds nobody (and is dropped).
 */
#include <linux/debugfs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "clf.h"

/*
 * A request's state.  While the daemon copies a message out (READING)
 * or a reply in (REPLYING), the caller may not leave, even killed:
 * the copy uses its memory.  Those copies are short.
 */
enum clf_req_state { PENDING, READING, SENT, REPLYING, DONE };

struct clf_req {
	struct list_head list;
	struct clf_up_in in;		/* the message's header */
	const void *d1, *d2;		/* and what follows it */
	size_t l1, l2;
	struct clf_call *call;		/* NULL: no reply wanted */
	clf_done_fn done;		/* asynchronous: called at the end */
	enum clf_req_state state;
	int error;
};

static DEFINE_SPINLOCK(chan_lock);
static LIST_HEAD(chan_pending);
static LIST_HEAD(chan_sent);
static DECLARE_WAIT_QUEUE_HEAD(chan_readers);	/* the daemon's threads */
static DECLARE_WAIT_QUEUE_HEAD(chan_callers);	/* requests waiting */
static bool chan_connected;
static u32 chan_gen;
static u64 chan_unique;
/* Requests in a cache of their own: one left over shows at rmmod. */
static struct kmem_cache *clf_req_cachep;
/* Requests sent, by op, since the load: debugfs clf/upcalls. */
static u64 chan_count[CLF_UP_OP_MAX];
static struct dentry *clf_debugfs;

u32 clf_dev_generation(void)
{
	u32 gen;

	spin_lock(&chan_lock);
	gen = chan_connected ? chan_gen : 0;
	spin_unlock(&chan_lock);
	return gen;
}

static void req_free(struct clf_req *r)
{
	kmem_cache_free(clf_req_cachep, r);
}

/*
 * The message is in's header, then d1 and d2 where they are: the
 * caller's memory, which it keeps while the request is not DONE.
 */
static struct clf_req *req_new(struct clf_up_in *in, const void *d1,
			       size_t l1, const void *d2, size_t l2, gfp_t gfp)
{
	/* GFP_NOFS: writeback and inode eviction send requests too. */
	struct clf_req *r = kmem_cache_zalloc(clf_req_cachep, gfp);

	if (!r)
		return NULL;
	in->len = sizeof(*in) + l1 + l2;
	in->version = CLF_UP_VERSION;
	r->in = *in;
	r->d1 = d1;
	r->l1 = l1;
	r->d2 = d2;
	r->l2 = l2;
	return r;
}

/* Queue r; -EIO without a daemon.  chan_lock. */
static int queue_locked(struct clf_req *r)
{
	if (!chan_connected)
		return -EIO;
	r->in.unique = ++chan_unique;
	if (r->in.op < CLF_UP_OP_MAX)
		chan_count[r->in.op]++;
	list_add_tail(&r->list, &chan_pending);
	wake_up(&chan_readers);
	return 0;
}

/* A new request for c, queued; NULL and *err if not. */
static struct clf_req *call_start(struct clf_call *c, int *err)
{
	struct clf_req *r;

	*err = -E2BIG;
	if (c->len1 + c->len2 > CLF_UP_BUF_MAX - sizeof(c->in))
		return NULL;
	*err = -ENOMEM;
	r = req_new(&c->in, c->data1, c->len1, c->data2, c->len2, GFP_NOFS);
	if (!r)
		return NULL;
	r->call = c;
	spin_lock(&chan_lock);
	*err = queue_locked(r);
	spin_unlock(&chan_lock);
	if (*err) {
		req_free(r);
		return NULL;
	}
	return r;
}

/* The caller goes: r's answer, else err (r is taken out). */
static int call_end(struct clf_req *r, int err)
{
	spin_lock(&chan_lock);
	while (r->state == READING || r->state == REPLYING) {
		spin_unlock(&chan_lock);
		wait_event(chan_callers, READ_ONCE(r->state) != READING &&
			   READ_ONCE(r->state) != REPLYING);
		spin_lock(&chan_lock);
	}
	if (r->state != DONE) {
		list_del(&r->list);
		spin_unlock(&chan_lock);
		goto out;
	}
	spin_unlock(&chan_lock);
	err = r->error;
out:
	req_free(r);
	return err;
}

int clf_call(struct clf_call *c)
{
	struct clf_req *r;
	int err;

	r = call_start(c, &err);
	if (!r)
		return err;
	/*
	 * Killable, not interruptible: a signal must not fail a write
	 * that the daemon may be doing.
	 */
	err = wait_event_killable(chan_callers,
				  READ_ONCE(r->state) == DONE);
	return call_end(r, err);
}

/*
 * A signal while the daemon has r: ask it to give up, each second (its
 * thread may not have taken r in yet), and wait for its answer, even
 * killed: a lock granted meanwhile is then the caller's, released when
 * its files close.  Bounded: a daemon that does not answer is left.
 */
static void call_interrupt(struct clf_req *r)
{
	int tries;

	for (tries = 0; tries < 30; tries++) {
		struct clf_up_in in = { .op = CLF_UP_INTERRUPT };

		in.arg = r->in.unique;
		if (clf_call_noreply(&in))
			return;
		if (wait_event_timeout(chan_callers,
				       READ_ONCE(r->state) == DONE, HZ))
			return;
	}
}

int clf_call_interruptible(struct clf_call *c)
{
	struct clf_req *r;
	int err;

	r = call_start(c, &err);
	if (!r)
		return err;
	err = wait_event_interruptible(chan_callers,
				       READ_ONCE(r->state) == DONE);
	if (err) {
		spin_lock(&chan_lock);
		if (r->state == PENDING) {
			/* Not read: the daemon never hears of it. */
			list_del(&r->list);
			spin_unlock(&chan_lock);
			req_free(r);
			return err;
		}
		spin_unlock(&chan_lock);
		call_interrupt(r);
		/* Answered: the answer says what happened. */
		err = -EINTR;
	}
	return call_end(r, err);
}

int clf_call_noreply(struct clf_up_in *in)
{
	/*
	 * FORGET and RELEASE come from eviction and the last close, which
	 * cannot fail: lost, the daemon would keep the inode or the open
	 * file until the unmount.  The request is one small slab object.
	 */
	struct clf_req *r = req_new(in, NULL, 0, NULL, 0,
				    GFP_NOFS | __GFP_NOFAIL);
	int err;

	spin_lock(&chan_lock);
	err = queue_locked(r);
	spin_unlock(&chan_lock);
	if (err)
		req_free(r);
	return err;
}

/*
 * r is answered (or failed): its caller may go.  An asynchronous one
 * goes to *later, whose callbacks run_later() calls without the lock.
 * chan_lock.
 */
static void finish_locked(struct clf_req *r, int error,
			  struct list_head *later)
{
	list_del(&r->list);
	if (!r->call) {
		req_free(r);
		return;
	}
	r->error = error;
	WRITE_ONCE(r->state, DONE);
	if (r->done) {
		list_add_tail(&r->list, later);
		return;
	}
	wake_up_all(&chan_callers);
}

static void run_later(struct list_head *later)
{
	struct clf_req *r, *tmp;

	list_for_each_entry_safe(r, tmp, later, list) {
		list_del(&r->list);
		r->done(r->call, r->error);
		req_free(r);
	}
}

void clf_call_async(struct clf_call *c, clf_done_fn done)
{
	struct clf_req *r;
	int err = -E2BIG;

	if (c->len1 + c->len2 > CLF_UP_BUF_MAX - sizeof(c->in))
		goto fail;
	err = -ENOMEM;
	r = req_new(&c->in, c->data1, c->len1, c->data2, c->len2, GFP_NOFS);
	if (!r)
		goto fail;
	r->call = c;
	r->done = done;
	spin_lock(&chan_lock);
	err = queue_locked(r);
	spin_unlock(&chan_lock);
	if (!err)
		return;
	req_free(r);
fail:
	done(c, err);
}

static int clf_dev_open(struct inode *inode, struct file *file)
{
	int err = 0;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	spin_lock(&chan_lock);
	if (chan_connected) {
		err = -EBUSY;
	} else {
		chan_connected = true;
		chan_gen++;
		if (!chan_gen)
			chan_gen = 1;
	}
	spin_unlock(&chan_lock);
	return err;
}

/* The daemon is gone: nothing it was asked will be answered. */
static int clf_dev_release(struct inode *inode, struct file *file)
{
	struct clf_req *r, *tmp;
	LIST_HEAD(later);

	spin_lock(&chan_lock);
	chan_connected = false;
	list_for_each_entry_safe(r, tmp, &chan_pending, list)
		finish_locked(r, -EIO, &later);
	list_for_each_entry_safe(r, tmp, &chan_sent, list)
		finish_locked(r, -EIO, &later);
	spin_unlock(&chan_lock);
	run_later(&later);
	wake_up_all(&chan_readers);
	return 0;
}

/* One request per read; the buffer must hold the largest. */
static ssize_t clf_dev_read(struct file *file, char __user *buf, size_t len,
			    loff_t *ppos)
{
	struct clf_req *r;
	LIST_HEAD(later);
	size_t n;
	int err;

	if (len < CLF_UP_BUF_MAX)
		return -EINVAL;
	for (;;) {
		spin_lock(&chan_lock);
		r = list_first_entry_or_null(&chan_pending, struct clf_req,
					     list);
		if (r)
			break;
		spin_unlock(&chan_lock);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		err = wait_event_interruptible(chan_readers,
					       !list_empty(&chan_pending));
		if (err)
			return err;
	}
	list_del(&r->list);
	r->state = READING;
	spin_unlock(&chan_lock);

	n = r->in.len;
	err = copy_to_user(buf, &r->in, sizeof(r->in)) ||
	      copy_to_user(buf + sizeof(r->in), r->d1, r->l1) ||
	      copy_to_user(buf + sizeof(r->in) + r->l1, r->d2, r->l2) ?
	      -EFAULT : 0;
	if (!r->call) {
		req_free(r);
		return err ? err : n;
	}
	spin_lock(&chan_lock);
	if (err) {
		/* The caller hears of it; the daemon sees the fault. */
		list_add(&r->list, &chan_sent);
		finish_locked(r, -EIO, &later);
	} else {
		r->state = SENT;
		list_add_tail(&r->list, &chan_sent);
		wake_up_all(&chan_callers);
	}
	spin_unlock(&chan_lock);
	run_later(&later);
	return err ? err : n;
}

/* A request in chan_sent by its unique number.  chan_lock. */
static struct clf_req *find_sent_locked(u64 unique)
{
	struct clf_req *r;

	list_for_each_entry(r, &chan_sent, list)
		if (r->in.unique == unique && r->state == SENT)
			return r;
	return NULL;
}

/* One reply per write: struct clf_up_out, then the result. */
static ssize_t clf_dev_write(struct file *file, const char __user *buf,
			     size_t len, loff_t *ppos)
{
	struct clf_up_out out;
	struct clf_call *c;
	struct clf_req *r;
	LIST_HEAD(later);
	size_t n;
	int err = 0;

	if (len < sizeof(out) || len > CLF_UP_BUF_MAX)
		return -EINVAL;
	if (copy_from_user(&out, buf, sizeof(out)))
		return -EFAULT;
	if (out.len != len || out.error > 0 || out.error < -MAX_ERRNO)
		return -EINVAL;
	spin_lock(&chan_lock);
	r = find_sent_locked(out.unique);
	if (!r) {
		/* Its caller left. */
		spin_unlock(&chan_lock);
		return len;
	}
	r->state = REPLYING;
	spin_unlock(&chan_lock);

	c = r->call;
	n = len - sizeof(out);
	if (n > c->out_max) {
		err = -EINVAL;
	} else if (n && copy_from_user(c->out, buf + sizeof(out), n)) {
		err = -EFAULT;
	} else {
		c->out_len = n;
		c->out_arg = out.arg;
	}
	spin_lock(&chan_lock);
	finish_locked(r, err ? -EIO : out.error, &later);
	spin_unlock(&chan_lock);
	run_later(&later);
	return err ? err : len;
}

static __poll_t clf_dev_poll(struct file *file, poll_table *wait)
{
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(file, &chan_readers, wait);
	spin_lock(&chan_lock);
	if (!list_empty(&chan_pending))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock(&chan_lock);
	return mask;
}

static const struct file_operations clf_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= clf_dev_open,
	.release	= clf_dev_release,
	.read		= clf_dev_read,
	.write		= clf_dev_write,
	.poll		= clf_dev_poll,
	.llseek		= noop_llseek,
};

static struct miscdevice clf_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "clf",
	.fops		= &clf_dev_fops,
	.mode		= 0600,
};

/*
 * "op count" lines: what the page cache and the VFS cost in round trips
 * to the daemon (writebacks are "write" requests, as O_DIRECT's are).
 */
static int clf_upcalls_show(struct seq_file *m, void *v)
{
	static const char *const names[CLF_UP_OP_MAX] = {
		[CLF_UP_MOUNT] = "mount", [CLF_UP_UMOUNT] = "umount",
		[CLF_UP_LOOKUP] = "lookup", [CLF_UP_FORGET] = "forget",
		[CLF_UP_GETATTR] = "getattr", [CLF_UP_SETATTR] = "setattr",
		[CLF_UP_CREATE] = "create", [CLF_UP_MKDIR] = "mkdir",
		[CLF_UP_UNLINK] = "unlink", [CLF_UP_RMDIR] = "rmdir",
		[CLF_UP_RENAME] = "rename", [CLF_UP_READDIR] = "readdir",
		[CLF_UP_STATFS] = "statfs", [CLF_UP_OPEN] = "open",
		[CLF_UP_RELEASE] = "release", [CLF_UP_READ] = "read",
		[CLF_UP_WRITE] = "write", [CLF_UP_FLUSH] = "flush",
		[CLF_UP_FSYNC] = "fsync", [CLF_UP_SYMLINK] = "symlink",
		[CLF_UP_READLINK] = "readlink", [CLF_UP_LINK] = "link",
		[CLF_UP_MKNOD] = "mknod", [CLF_UP_GETXATTR] = "getxattr",
		[CLF_UP_SETXATTR] = "setxattr",
		[CLF_UP_LISTXATTR] = "listxattr",
		[CLF_UP_REMOVEXATTR] = "removexattr",
		[CLF_UP_GETLK] = "getlk", [CLF_UP_SETLK] = "setlk",
		[CLF_UP_UNLOCK_OWNER] = "unlock_owner",
		[CLF_UP_INTERRUPT] = "interrupt",
	};
	u64 count[CLF_UP_OP_MAX];
	unsigned int op;

	spin_lock(&chan_lock);
	memcpy(count, chan_count, sizeof(count));
	spin_unlock(&chan_lock);
	for (op = 0; op < CLF_UP_OP_MAX; op++)
		if (names[op])
			seq_printf(m, "%s %llu\n", names[op], count[op]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(clf_upcalls);

int clf_dev_init(void)
{
	int err;

	clf_req_cachep = KMEM_CACHE(clf_req, 0);
	if (!clf_req_cachep)
		return -ENOMEM;
	err = misc_register(&clf_misc);
	if (err) {
		kmem_cache_destroy(clf_req_cachep);
		return err;
	}
	/* Statistics only: the module works without them. */
	clf_debugfs = debugfs_create_dir("clf", NULL);
	debugfs_create_file("upcalls", 0444, clf_debugfs, NULL,
			    &clf_upcalls_fops);
	return 0;
}

/* No request is left: the device is closed, and no mount holds us. */
void clf_dev_exit(void)
{
	debugfs_remove(clf_debugfs);
	misc_deregister(&clf_misc);
	kmem_cache_destroy(clf_req_cachep);
}
