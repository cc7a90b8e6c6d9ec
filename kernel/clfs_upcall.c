// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_upcall.c -- the kernel module's front end: requests read from
 * /dev/clf (clf_upcall.h) handed to clfs_ops.h, the same request
 * handling as the FUSE front end (clfs_fuse.c), and the replies written
 * back.  Several threads read the device, so several requests are in
 * flight; the module matches replies by their unique number.
 *
 * The daemon ends when the module says the last clf mount is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clf.h"
#include "clf_ll.h"
#include "clf_upcall.h"
#include "clfs_log.h"
#include "clfs_upcall.h"

_Static_assert(CLF_UP_SET_MODE == CLFS_SET_MODE &&
	       CLF_UP_SET_SIZE == CLFS_SET_SIZE &&
	       CLF_UP_SET_MTIME_NOW == CLFS_SET_MTIME_NOW,
	       "clf_upcall.h and clfs_ops.h name the same setattr bits");

struct server {
	struct clfs *fs;
	int fd;
	const char *source;
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	int status;
	struct lock_wait *waits;	/* sleeping SETLKs; under lock */
};

/* A sleeping SETLK, until it ends: CLF_UP_INTERRUPT finds it here. */
struct lock_wait {
	struct lock_wait *next;
	struct server *sv;
	uint64_t unique;
	bool interrupted;
};

/* One thread's buffers: a request and its reply. */
struct worker {
	struct server *sv;
	char *in;
	char *out;
	size_t out_len;		/* after struct clf_up_out */
	uint64_t arg;
};

static void stop(struct server *sv, int status)
{
	pthread_mutex_lock(&sv->lock);
	if (!sv->done) {
		sv->done = true;
		sv->status = status;
	}
	pthread_cond_signal(&sv->done_cond);
	pthread_mutex_unlock(&sv->lock);
}

static void to_attr(const struct stat *st, struct clf_up_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = st->st_ino;
	a->size = st->st_size;
	a->blocks = st->st_blocks;
	a->atime = st->st_atim.tv_sec;
	a->atime_ns = st->st_atim.tv_nsec;
	a->mtime = st->st_mtim.tv_sec;
	a->mtime_ns = st->st_mtim.tv_nsec;
	a->ctime = st->st_ctim.tv_sec;
	a->ctime_ns = st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = (uint32_t)st->st_rdev;
	a->blksize = st->st_blksize;
}

/* *st as the reply (when err is 0). */
static int reply_attr(struct worker *w, const struct stat *st, int err)
{
	if (!err) {
		to_attr(st, (struct clf_up_attr *)w->out);
		w->out_len = sizeof(struct clf_up_attr);
	}
	return err;
}

/* The request's strings: first and second; NULL if not there. */
static const char *names(const struct clf_up_in *in, const char **second)
{
	const char *p = (const char *)(in + 1), *end = (const char *)in + in->len;
	const char *nul = memchr(p, '\0', (size_t)(end - p));

	if (!nul)
		return NULL;
	if (second) {
		const char *p2 = nul + 1;

		if (p2 >= end || !memchr(p2, '\0', (size_t)(end - p2)))
			return NULL;
		*second = p2;
	}
	return p;
}

struct dirbuf {
	char *buf;
	size_t size, used;
};

static int fill(void *arg, const char *name, uint64_t ino, mode_t mode,
		uint64_t next_off)
{
	struct dirbuf *d = arg;
	size_t len = strlen(name), n = CLF_UP_DIRENT_SIZE(len);
	struct clf_up_dirent *de;

	if (n > d->size - d->used)
		return 1;
	de = (struct clf_up_dirent *)(d->buf + d->used);
	memset(de, 0, n);
	de->ino = ino;
	de->next_off = next_off;
	de->type = mode & S_IFMT;
	de->namelen = (uint16_t)len;
	memcpy(de->name, name, len);
	d->used += n;
	return 0;
}

static int do_readdir(struct worker *w, const struct clf_up_in *in)
{
	struct dirbuf d = { w->out, CLF_UP_READDIR_MAX, 0 };
	int err = clfs_readdir(w->sv->fs, in->ino, in->off, fill, &d);

	/* What fits is an answer even if the rest failed. */
	if (err && !d.used)
		return err;
	w->out_len = d.used;
	/* The end, unless fill refused an entry: then the buffer is
	 * close to full. */
	w->arg = !err && d.size - d.used > CLF_UP_DIRENT_SIZE(CLF_UP_NAME_MAX);
	return 0;
}

static int do_statfs(struct worker *w)
{
	struct clf_up_statfs *sf = (struct clf_up_statfs *)w->out;
	struct statvfs sv;
	int err = clfs_statfs(w->sv->fs, &sv);

	if (err)
		return err;
	memset(sf, 0, sizeof(*sf));
	sf->bsize = (uint32_t)sv.f_frsize;
	sf->blocks = sv.f_blocks;
	sf->bfree = sv.f_bfree;
	sf->bavail = sv.f_bavail;
	sf->files = sv.f_files;
	sf->ffree = sv.f_ffree;
	sf->namelen = (uint32_t)sv.f_namemax;
	w->out_len = sizeof(*sf);
	return 0;
}

static int do_setattr(struct worker *w, const struct clf_up_in *in)
{
	const struct clf_up_setattr *sa = (const void *)(in + 1);
	struct stat want = { 0 }, st;
	int err;

	if (in->len < sizeof(*in) + sizeof(*sa))
		return -EINVAL;
	want.st_mode = sa->mode;
	want.st_uid = sa->uid;
	want.st_gid = sa->gid;
	want.st_size = (off_t)sa->size;
	want.st_atim.tv_sec = sa->atime;
	want.st_atim.tv_nsec = sa->atime_ns;
	want.st_mtim.tv_sec = sa->mtime;
	want.st_mtim.tv_nsec = sa->mtime_ns;
	err = clfs_setattr(w->sv->fs, in->ino, &want, sa->valid, &st);
	return reply_attr(w, &st, err);
}

static int do_open(struct worker *w, const struct clf_up_in *in)
{
	struct clf_up_open *op = (struct clf_up_open *)w->out;
	bool changed = false;
	uint64_t fh;
	struct stat st;
	int err;

	err = clfs_open(w->sv->fs, in->ino, (int)in->flags, &fh, &changed);
	if (err)
		return err;
	/* The size as it is now, this daemon's writes counted. */
	err = clfs_getattr(w->sv->fs, in->ino, &st);
	if (err) {
		clfs_release(w->sv->fs, fh);
		return err;
	}
	memset(op, 0, sizeof(*op));
	op->fh = fh;
	op->changed = changed;
	to_attr(&st, &op->attr);
	w->out_len = sizeof(*op);
	return 0;
}

/* Created and opened: the kernel's open(2) takes the handle. */
static int do_create(struct worker *w, const struct clf_up_in *in,
		     const struct clfs_caller *who, const char *name)
{
	struct clf_up_open *op = (struct clf_up_open *)w->out;
	struct stat st;
	uint64_t fh;
	int err;

	err = clfs_create(w->sv->fs, who, in->ino, name, in->mode, O_RDWR,
			  &st, &fh);
	if (err)
		return err;
	memset(op, 0, sizeof(*op));
	op->fh = fh;
	to_attr(&st, &op->attr);
	w->out_len = sizeof(*op);
	return 0;
}

/* getxattr, listxattr: the length, and the bytes when size > 0. */
static int xattr_reply(struct worker *w, const struct clf_up_in *in,
		       ssize_t n)
{
	if (n < 0)
		return (int)n;
	w->arg = (uint64_t)n;
	w->out_len = in->arg ? (size_t)n : 0;
	return 0;
}

static int do_setxattr(struct worker *w, const struct clf_up_in *in,
		       const struct clfs_caller *who)
{
	const char *name = names(in, NULL);
	const char *value, *end = (const char *)in + in->len;

	if (!name)
		return -EINVAL;
	value = name + strlen(name) + 1;
	return clfs_setxattr(w->sv->fs, who, in->ino, name, value,
			     (size_t)(end - value), (int)in->flags);
}

static int do_mount(struct worker *w, const struct clf_up_in *in,
		    const char *source)
{
	struct stat st;

	if (!source)
		return -EINVAL;
	if (*source && strcmp(source, w->sv->source)) {
		clfs_log(CLFS_LOG_ERR,
			 "mount of %s refused: this daemon serves %s",
			 source, w->sv->source);
		return -EXDEV;
	}
	return reply_attr(w, &st, clfs_getattr(w->sv->fs, in->ino, &st));
}

static bool lock_interrupted(void *arg)
{
	struct lock_wait *lw = arg;
	bool v;

	pthread_mutex_lock(&lw->sv->lock);
	v = lw->interrupted;
	pthread_mutex_unlock(&lw->sv->lock);
	return v;
}

/* A SETLK waiting for unique gives up; none (answered, or not yet
 * taken in): the module asks again each second while it waits. */
static void lock_interrupt(struct server *sv, uint64_t unique)
{
	struct lock_wait *lw;

	pthread_mutex_lock(&sv->lock);
	for (lw = sv->waits; lw; lw = lw->next)
		if (lw->unique == unique)
			lw->interrupted = true;
	pthread_mutex_unlock(&sv->lock);
}

static int sleeping_setlk(struct worker *w, const struct clf_up_in *in,
			  uint64_t owner, const struct flock *fl)
{
	struct server *sv = w->sv;
	struct lock_wait lw = { .sv = sv, .unique = in->unique }, **pp;
	int err;

	pthread_mutex_lock(&sv->lock);
	lw.next = sv->waits;
	sv->waits = &lw;
	pthread_mutex_unlock(&sv->lock);
	err = in->fh ? clfs_setlk(sv->fs, in->fh, owner, fl, true,
				  lock_interrupted, &lw) :
	      clfs_setlk_ino(sv->fs, in->ino, owner, fl, true,
			     lock_interrupted, &lw);
	pthread_mutex_lock(&sv->lock);
	for (pp = &sv->waits; *pp != &lw; pp = &(*pp)->next)
		;
	*pp = lw.next;
	pthread_mutex_unlock(&sv->lock);
	return err;
}

/*
 * GETLK, SETLK: struct clf_up_lock both ways.  On in->fh, or with none
 * (0: the module's directories) on inode in->ino.
 */
static int do_lock(struct worker *w, const struct clf_up_in *in)
{
	const struct clf_up_lock *ul = (const void *)(in + 1);
	struct clf_up_lock *out = (struct clf_up_lock *)w->out;
	struct flock fl = { .l_whence = SEEK_SET };
	int err;

	if (in->len < sizeof(*in) + sizeof(*ul) || ul->start > INT64_MAX ||
	    (ul->end != CLF_UP_LOCK_EOF && ul->end < ul->start))
		return -EINVAL;
	fl.l_type = (short)ul->type;
	fl.l_start = (off_t)ul->start;
	fl.l_len = ul->end == CLF_UP_LOCK_EOF ? 0 :
		   (off_t)(ul->end - ul->start + 1);
	fl.l_pid = (pid_t)ul->pid;
	if (in->op == CLF_UP_SETLK && ul->sleep)
		return sleeping_setlk(w, in, ul->owner, &fl);
	if (in->op == CLF_UP_SETLK && !in->fh)
		return clfs_setlk_ino(w->sv->fs, in->ino, ul->owner, &fl,
				      false, NULL, NULL);
	if (in->op == CLF_UP_SETLK)
		return clfs_setlk(w->sv->fs, in->fh, ul->owner, &fl, false,
				  NULL, NULL);
	err = in->fh ? clfs_getlk(w->sv->fs, in->fh, ul->owner, &fl) :
	      clfs_getlk_ino(w->sv->fs, in->ino, ul->owner, &fl);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->type = (uint32_t)fl.l_type;
	if (fl.l_type != F_UNLCK) {
		out->start = (uint64_t)fl.l_start;
		out->end = fl.l_len ? (uint64_t)(fl.l_start + fl.l_len - 1) :
			   CLF_UP_LOCK_EOF;
		out->pid = (uint32_t)fl.l_pid;
	}
	w->out_len = sizeof(*out);
	return 0;
}

/* Handle w->in; a reply wanted unless *noreply. */
static int handle_op(struct worker *w, bool *noreply)
{
	const struct clf_up_in *in = (const struct clf_up_in *)w->in;
	struct clfs_caller who = { in->uid, in->gid };
	struct clfs *fs = w->sv->fs;
	const char *name, *name2 = NULL;
	struct stat st;
	char *target;
	ssize_t n;
	int err;

	w->out_len = 0;
	w->arg = 0;
	*noreply = false;
	clf_ll_act_as(in->uid, in->gid);
	switch (in->op) {
	case CLF_UP_MOUNT:
		return do_mount(w, in, names(in, NULL));
	case CLF_UP_UMOUNT:
		*noreply = true;
		clfs_log(CLFS_LOG_INFO, "unmounted; %llu clf mounts left",
			 (unsigned long long)in->arg);
		if (!in->arg)
			stop(w->sv, 0);
		return 0;
	case CLF_UP_FORGET:
		*noreply = true;
		clfs_forget(fs, in->ino, in->arg);
		return 0;
	case CLF_UP_LOOKUP:
		name = names(in, NULL);
		if (!name)
			return -EINVAL;
		return reply_attr(w, &st, clfs_lookup(fs, in->ino, name, &st));
	case CLF_UP_GETATTR:
		return reply_attr(w, &st, clfs_getattr(fs, in->ino, &st));
	case CLF_UP_SETATTR:
		return do_setattr(w, in);
	case CLF_UP_CREATE:
		name = names(in, NULL);
		return name ? do_create(w, in, &who, name) : -EINVAL;
	case CLF_UP_MKDIR:
		name = names(in, NULL);
		if (!name)
			return -EINVAL;
		err = clfs_mkdir(fs, &who, in->ino, name, in->mode & 07777, &st);
		return reply_attr(w, &st, err);
	case CLF_UP_SYMLINK:
		name = names(in, &name2);
		if (!name)
			return -EINVAL;
		err = clfs_symlink(fs, &who, in->ino, name, name2, &st);
		return reply_attr(w, &st, err);
	case CLF_UP_LINK:
		name = names(in, NULL);
		if (!name)
			return -EINVAL;
		return reply_attr(w, &st, clfs_link(fs, in->ino, in->arg, name,
						    &st));
	case CLF_UP_READLINK:
		err = clfs_readlink(fs, in->ino, &target);
		if (err)
			return err;
		w->out_len = strlen(target);
		memcpy(w->out, target, w->out_len);
		free(target);
		return 0;
	case CLF_UP_UNLINK:
		name = names(in, NULL);
		return name ? clfs_unlink(fs, in->ino, name) : -EINVAL;
	case CLF_UP_RMDIR:
		name = names(in, NULL);
		return name ? clfs_rmdir(fs, in->ino, name) : -EINVAL;
	case CLF_UP_RENAME:
		name = names(in, &name2);
		if (!name)
			return -EINVAL;
		return clfs_rename(fs, in->ino, name, in->arg, name2,
				   in->flags & 1 ? CLFS_RENAME_NOREPLACE : 0);
	case CLF_UP_READDIR:
		return do_readdir(w, in);
	case CLF_UP_STATFS:
		return do_statfs(w);
	case CLF_UP_OPEN:
		return do_open(w, in);
	case CLF_UP_RELEASE:
		return clfs_release(fs, in->fh);
	case CLF_UP_READ:
		if (in->arg > CLF_UP_IO_MAX)
			return -EINVAL;
		n = clfs_read(fs, in->fh, w->out, in->arg, (off_t)in->off);
		if (n < 0)
			return (int)n;
		w->out_len = (size_t)n;
		return 0;
	case CLF_UP_WRITE:
		n = clfs_write(fs, in->fh, in + 1, in->len - sizeof(*in),
			       (off_t)in->off);
		if (n < 0)
			return (int)n;
		w->arg = (uint64_t)n;
		return 0;
	case CLF_UP_MKNOD:
		name = names(in, NULL);
		if (!name)
			return -EINVAL;
		err = clfs_mknod(fs, &who, in->ino, name, in->mode,
				 (dev_t)in->arg, &st);
		return reply_attr(w, &st, err);
	case CLF_UP_GETXATTR:
		name = names(in, NULL);
		if (!name || in->arg > CLF_UP_IO_MAX)
			return -EINVAL;
		return xattr_reply(w, in, clfs_getxattr(fs, in->ino, name,
							w->out, in->arg));
	case CLF_UP_SETXATTR:
		return do_setxattr(w, in, &who);
	case CLF_UP_LISTXATTR:
		if (in->arg > CLF_UP_IO_MAX)
			return -EINVAL;
		return xattr_reply(w, in, clfs_listxattr(fs, in->ino, w->out,
							 in->arg));
	case CLF_UP_REMOVEXATTR:
		name = names(in, NULL);
		return name ? clfs_removexattr(fs, in->ino, name) : -EINVAL;
	case CLF_UP_FLUSH:
		return clfs_flush(fs, in->fh);
	case CLF_UP_FSYNC:
		return clfs_fsync(fs, in->fh);
	case CLF_UP_GETLK:
	case CLF_UP_SETLK:
		return do_lock(w, in);
	case CLF_UP_UNLOCK_OWNER:
		return in->fh ? clfs_unlock_owner(fs, in->fh, in->arg) :
		       clfs_unlock_owner_ino(fs, in->ino, in->arg);
	case CLF_UP_INTERRUPT:
		*noreply = true;
		lock_interrupt(w->sv, in->arg);
		return 0;
	default:
		return -ENOSYS;
	}
}

/*
 * Requests on an inode, not on a name in a directory: ENOENT there is
 * ESTALE (clfs_stale), and the module's clf_d_revalidate asks about
 * each name of the walk the VFS does again.
 */
static bool on_inode(uint32_t op)
{
	switch (op) {
	case CLF_UP_GETATTR:
	case CLF_UP_SETATTR:
	case CLF_UP_OPEN:
	case CLF_UP_READLINK:
	case CLF_UP_READDIR:
	case CLF_UP_GETXATTR:
	case CLF_UP_SETXATTR:
	case CLF_UP_LISTXATTR:
	case CLF_UP_REMOVEXATTR:
		return true;
	default:
		return false;
	}
}

/* Handle w->in; a reply wanted unless *noreply. */
static int handle(struct worker *w, bool *noreply)
{
	const struct clf_up_in *in = (const struct clf_up_in *)w->in;
	int err = handle_op(w, noreply);

	return on_inode(in->op) ? clfs_stale(err) : err;
}

static const char *op_name(uint32_t op)
{
	static const char *const names_of[CLF_UP_OP_MAX] = {
		[CLF_UP_MOUNT] = "mount", [CLF_UP_LOOKUP] = "lookup",
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
		[CLF_UP_SETXATTR] = "setxattr", [CLF_UP_LISTXATTR] = "listxattr",
		[CLF_UP_REMOVEXATTR] = "removexattr",
		[CLF_UP_GETLK] = "getlk", [CLF_UP_SETLK] = "setlk",
		[CLF_UP_UNLOCK_OWNER] = "unlock", [CLF_UP_INTERRUPT] = "interrupt",
	};

	return op < CLF_UP_OP_MAX && names_of[op] ? names_of[op] : "request";
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct clf_up_in *in = (struct clf_up_in *)w->in;
	struct clf_up_out *out = (struct clf_up_out *)w->out - 1;
	bool noreply;
	ssize_t n;
	int err;

	for (;;) {
		n = read(w->sv->fd, w->in, CLF_UP_BUF_MAX);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(*in) || in->len != (size_t)n) {
			clfs_log(CLFS_LOG_ERR, "reading %s: %s", CLF_UP_DEVICE,
				 n < 0 ? strerror(errno) : "a short request");
			stop(w->sv, 1);
			return NULL;
		}
		if (in->version != CLF_UP_VERSION) {
			clfs_log(CLFS_LOG_ERR,
				 "the clf module speaks version %u, this daemon %u",
				 in->version, CLF_UP_VERSION);
			err = -EPROTO;
			noreply = in->op == CLF_UP_FORGET ||
				  in->op == CLF_UP_UMOUNT ||
				  in->op == CLF_UP_INTERRUPT;
			w->out_len = 0;
			w->arg = 0;
		} else {
			err = handle(w, &noreply);
		}
		if (err)
			clfs_log(CLFS_LOG_DEBUG, "%s %llu: %s", op_name(in->op),
				 (unsigned long long)in->ino, strerror(-err));
		if (noreply)
			continue;
		memset(out, 0, sizeof(*out));
		out->unique = in->unique;
		out->error = err;
		out->arg = w->arg;
		out->len = (uint32_t)(sizeof(*out) + (err ? 0 : w->out_len));
		if (write(w->sv->fd, out, out->len) < 0 && errno != ENOENT)
			clfs_log(CLFS_LOG_WARNING, "replying to %s: %s",
				 op_name(in->op), strerror(errno));
	}
}

int clfs_upcall_serve(struct clfs *fs, int fd, const char *source,
		      int nthreads)
{
	struct server sv = { .fs = fs, .fd = fd, .source = source };
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	pthread_t *tid = calloc((size_t)nthreads, sizeof(*tid));
	int i, started = 0;

	pthread_mutex_init(&sv.lock, NULL);
	pthread_cond_init(&sv.done_cond, NULL);
	if (!w || !tid)
		goto out;
	for (i = 0; i < nthreads; i++) {
		w[i].sv = &sv;
		w[i].in = malloc(CLF_UP_BUF_MAX);
		/* The reply's header sits before out. */
		w[i].out = malloc(CLF_UP_BUF_MAX);
		if (!w[i].in || !w[i].out)
			break;
		w[i].out += sizeof(struct clf_up_out);
		if (pthread_create(&tid[i], NULL, work, &w[i]))
			break;
		pthread_detach(tid[i]);
		started++;
	}
	if (!started)
		goto out;
	pthread_mutex_lock(&sv.lock);
	while (!sv.done)
		pthread_cond_wait(&sv.done_cond, &sv.lock);
	pthread_mutex_unlock(&sv.lock);
	/* The workers still block in read(2): the process ends them. */
	return sv.status ? -EIO : 0;
out:
	clfs_log(CLFS_LOG_ERR, "cannot start the upcall threads");
	return -ENOMEM;
}
