// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lock_posix.c -- struct flock for the native API: ranges relative to
 * the descriptor (SEEK_CUR, SEEK_END, negative lengths), the process as
 * the lock owner, and the POSIX rule that closing any descriptor of a
 * file drops the process's locks on it.
 *
 * Why one owner per process: POSIX record locks belong to the process,
 * not to the descriptor, so two descriptors of one process share their
 * locks and never conflict with each other.  The owner is a random
 * number drawn again when getpid() changes, so that a forked child
 * (which holds none of its parent's locks) never passes for its parent.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client_i.h"
#include "clf_ll.h"
#include "error.h"
#include "lock.h"

static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t owner_pid;			/* whose owner number; owner_lock */
static uint64_t owner_id;		/* owner_lock */
static uint64_t *locked_inos;		/* files this process locked;
					   owner_lock, owned */
static size_t nlocked, locked_cap;	/* owner_lock */

/* The calling process's owner number; owner_lock held. */
static uint64_t process_owner(void)
{
	pid_t pid = getpid();

	if (owner_pid != pid) {
		uint64_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
		owner_id = r ^ ((uint64_t)pid << 32);
		owner_pid = pid;
		/* A forked child holds none of its parent's locks. */
		nlocked = 0;
	}
	return owner_id;
}

static void note_locked(uint64_t ino)
{
	for (size_t i = 0; i < nlocked; i++)
		if (locked_inos[i] == ino)
			return;
	if (nlocked == locked_cap) {
		size_t cap = locked_cap ? 2 * locked_cap : 8;
		uint64_t *n = realloc(locked_inos, cap * sizeof(*n));

		/* Then close will not release early; the locks still end
		 * with the process. */
		if (!n)
			return;
		locked_inos = n;
		locked_cap = cap;
	}
	locked_inos[nlocked++] = ino;
}

/* Was ino noted?  Then forget it. */
static bool take_locked(uint64_t ino)
{
	for (size_t i = 0; i < nlocked; i++) {
		if (locked_inos[i] == ino) {
			locked_inos[i] = locked_inos[--nlocked];
			return true;
		}
	}
	return false;
}

void clf_lock_file_closed(uint64_t ino)
{
	uint64_t owner;
	bool locked;

	pthread_mutex_lock(&owner_lock);
	owner = process_owner();
	locked = take_locked(ino);
	pthread_mutex_unlock(&owner_lock);
	/*
	 * A failure is not the caller's: when the lock connection is gone,
	 * metad has released the locks with it already.
	 */
	if (locked)
		(void)clf_ll_unlock_owner(ino, owner);
}

/* The file offset l_whence counts from; f locked. */
static int whence_base(struct clf_file *f, short whence, int64_t *base)
{
	struct clf_proto_attr attr;
	int err;

	switch (whence) {
	case SEEK_SET:
		*base = 0;
		return 0;
	case SEEK_CUR:
		/* The position counts view bytes; locks count file bytes. */
		return CLF_Type_unmap(f->view_type, f->view_disp, f->pos, base);
	case SEEK_END:
		err = clf_file_flush_size(f);
		if (!err)
			err = clf_meta_getattr(f->ino, &attr);
		if (err)
			return err;
		f->size = attr.size;
		*base = attr.size;
		return 0;
	}
	return clf_fail(EINVAL, "clf: fcntl: lock with bad l_whence %d", whence);
}

/*
 * fl's range as (start, length) in file bytes, length 0 to the end: a
 * negative l_len locks the l_len bytes before l_start, as POSIX allows.
 */
static int flock_range(int64_t base, const struct flock *fl,
		       struct clf_ll_lock *lk)
{
	int64_t start, len = fl->l_len;

	if ((fl->l_start > 0 && base > INT64_MAX - fl->l_start) ||
	    (fl->l_start < 0 && base < INT64_MIN - fl->l_start))
		goto overflow;
	start = base + fl->l_start;
	if (len < 0) {
		if (len == INT64_MIN)
			goto overflow;
		start += len;
		len = -len;
	}
	if (start < 0)
		return clf_fail(EINVAL, "clf: fcntl: lock starts before the file, at byte %lld",
				(long long)start);
	if (len > 0 && len - 1 > INT64_MAX - start)
		goto overflow;
	lk->start = (uint64_t)start;
	lk->length = (uint64_t)len;
	return 0;

overflow:
	return clf_fail(EINVAL, "clf: fcntl: lock range (l_start %lld, l_len %lld) ends past the largest offset",
			(long long)fl->l_start, (long long)fl->l_len);
}

/* POSIX: a read lock needs a descriptor open for reading, a write lock
 * one open for writing. */
static int check_access(const struct clf_file *f, int fd, short type)
{
	int acc = f->flags & O_ACCMODE;

	if (type == F_RDLCK && acc == O_WRONLY)
		return clf_fail(EBADF, "clf: fcntl: read lock on descriptor %d, which is not open for reading",
				fd);
	if (type == F_WRLCK && acc == O_RDONLY)
		return clf_fail(EBADF, "clf: fcntl: write lock on descriptor %d, which is not open for writing",
				fd);
	if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK)
		return clf_fail(EINVAL, "clf: fcntl: unknown lock type %d", type);
	return 0;
}

/* Resolve fl against descriptor fd: its inode and the lock to ask for. */
static int resolve(int fd, int cmd, const struct flock *fl, uint64_t *ino,
		   struct clf_ll_lock *lk)
{
	struct clf_file *f;
	int64_t base;
	int err;

	if (!fl)
		return clf_fail(EINVAL, "clf: fcntl: lock command without a struct flock");
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	err = cmd == CLF_FCNTL_GETLK ? 0 : check_access(f, fd, fl->l_type);
	if (!err && cmd == CLF_FCNTL_GETLK && fl->l_type != F_RDLCK &&
	    fl->l_type != F_WRLCK)
		err = clf_fail(EINVAL, "clf: fcntl(GETLK): l_type must be F_RDLCK or F_WRLCK, not %d",
			       fl->l_type);
	if (!err)
		err = whence_base(f, fl->l_whence, &base);
	if (!err)
		err = flock_range(base, fl, lk);
	*ino = f->ino;
	clf_file_put(f);
	if (err)
		return err;
	lk->type = fl->l_type;
	lk->pid = (uint32_t)getpid();
	pthread_mutex_lock(&owner_lock);
	lk->owner = process_owner();
	pthread_mutex_unlock(&owner_lock);
	return 0;
}

int clf_lock_fcntl(int fd, int cmd, void *arg)
{
	struct flock *fl = arg;
	struct clf_ll_lock lk;
	uint64_t ino = 0;
	int err = resolve(fd, cmd, fl, &ino, &lk);

	if (err)
		return err;
	if (cmd == CLF_FCNTL_GETLK) {
		err = clf_ll_getlk(ino, &lk);
		if (err)
			return err;
		fl->l_type = lk.type;
		if (lk.type != F_UNLCK) {
			fl->l_whence = SEEK_SET;
			fl->l_start = (off_t)lk.start;
			fl->l_len = (off_t)lk.length;
			fl->l_pid = (pid_t)lk.pid;
		}
		return 0;
	}
	/* Noted before asking, so that a close racing with a grant in
	 * another thread still releases. */
	if (lk.type != F_UNLCK) {
		pthread_mutex_lock(&owner_lock);
		note_locked(ino);
		pthread_mutex_unlock(&owner_lock);
	}
	return clf_ll_setlk(ino, &lk, cmd == CLF_FCNTL_SETLKW, NULL, NULL);
}
