// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_store.c -- the storage directory, subfile names and the cache of
 * open subfiles.
 *
 * The store mutex covers the cache and every operation that changes which
 * file a name refers to (open with create, unlink).  Holding it across
 * open(2) and unlink(2) is deliberate: it is what makes "remove, then
 * write" create a new file instead of writing into the removed one through
 * a descriptor opened just before the unlink.  Both are short on a local
 * disk, and data transfers never take this mutex.
 */
#define _GNU_SOURCE	/* syncfs */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "error.h"
#include "iod_store_i.h"

int iod_store_relpath(uint64_t file, uint32_t index, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%02x/%016" PRIx64 ".%" PRIu32,
			 (unsigned)(file & 0xff), file, index);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

int iod_store_path(const struct iod_store *st, uint64_t file, uint32_t index,
		   char *buf, size_t size)
{
	char rel[64];
	int n;

	iod_store_relpath(file, index, rel, sizeof(rel));
	n = snprintf(buf, size, "%s/%s", st->dir, rel);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

/* ------------------------------------------------------------------ */
/* Opening the directory                                               */
/* ------------------------------------------------------------------ */

/* Can the iod create files in the directory?  0 or a negative errno. */
static int probe_writable(struct iod_store *st)
{
	static atomic_uint probes;
	char name[64];
	int fd;

	snprintf(name, sizeof(name), ".iod-probe.%ld.%u", (long)getpid(),
		 atomic_fetch_add(&probes, 1));
	fd = openat(st->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return clf_fail(errno,
				"iod: storage directory '%s' is not writable: %s",
				st->dir, strerror(errno));
	close(fd);
	unlinkat(st->dirfd, name, 0);
	return 0;
}

static int open_dir(struct iod_store *st)
{
	st->dirfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->dirfd >= 0)
		return 0;
	if (errno == ENOENT)
		return clf_fail(ENOENT,
				"iod: storage directory '%s' does not exist",
				st->dir);
	if (errno == ENOTDIR)
		return clf_fail(ENOTDIR,
				"iod: storage directory '%s' is not a directory",
				st->dir);
	return clf_fail(errno, "iod: cannot open storage directory '%s': %s",
			st->dir, strerror(errno));
}

int iod_store_open(const char *dir, unsigned max_open, struct iod_store **out)
{
	struct iod_store *st;
	size_t nbuckets;
	int err;

	if (!dir || !*dir || !out)
		return clf_fail(EINVAL, "iod: no storage directory given");
	st = calloc(1, sizeof(*st));
	if (!st)
		return clf_fail(ENOMEM, "iod: out of memory");
	st->dirfd = -1;
	st->max_open = max_open ? max_open : IOD_STORE_MAX_OPEN_DEFAULT;
	nbuckets = 64;
	while (nbuckets < 2 * (size_t)st->max_open && nbuckets < 65536)
		nbuckets *= 2;
	st->dir = strdup(dir);
	if (!st->dir || clf_htable_init(&st->cache, nbuckets, nbuckets)) {
		err = clf_fail(ENOMEM, "iod: out of memory");
		goto free_st;
	}
	err = open_dir(st);
	if (err)
		goto free_st;
	err = probe_writable(st);
	if (err)
		goto close_dir;
	err = -pthread_mutex_init(&st->mutex, NULL);
	if (err) {
		clf_fail_neg(err, "iod: cannot create a mutex: %s",
			     strerror(-err));
		goto close_dir;
	}
	*out = st;
	return 0;

close_dir:
	close(st->dirfd);
free_st:
	clf_htable_release(&st->cache);
	free(st->dir);
	free(st);
	return err;
}

/* ------------------------------------------------------------------ */
/* The cache                                                           */
/* ------------------------------------------------------------------ */

/* The cache's key of a subfile: file and index mixed. */
static uint64_t key_of(uint64_t file, uint32_t index)
{
	uint64_t h = file * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)index * 0xc2b2ae3d27d4eb4full;

	return h ^ h >> 29;
}

static struct iod_subfile *lookup(struct iod_store *st, uint64_t file,
				  uint32_t index)
{
	struct clf_hnode *n = clf_htable_find(&st->cache, key_of(file, index));

	for (; n; n = clf_htable_next_key(n)) {
		struct iod_subfile *sf = clf_hnode_entry(n, struct iod_subfile,
							 hn);

		if (sf->file == file && sf->index == index)
			return sf;
	}
	return NULL;
}

static void lru_remove(struct iod_store *st, struct iod_subfile *sf)
{
	if (sf->lru_prev)
		sf->lru_prev->lru_next = sf->lru_next;
	else
		st->lru_head = sf->lru_next;
	if (sf->lru_next)
		sf->lru_next->lru_prev = sf->lru_prev;
	else
		st->lru_tail = sf->lru_prev;
	sf->lru_prev = sf->lru_next = NULL;
}

static void lru_push(struct iod_store *st, struct iod_subfile *sf)
{
	sf->lru_prev = NULL;
	sf->lru_next = st->lru_head;
	if (st->lru_head)
		st->lru_head->lru_prev = sf;
	else
		st->lru_tail = sf;
	st->lru_head = sf;
}

/* Take a handle out of the hash table (it stays open while referenced). */
static void unhash(struct iod_store *st, struct iod_subfile *sf)
{
	clf_htable_del(&st->cache, &sf->hn);
	sf->cached = 0;
}

static void close_handle(struct iod_subfile *sf)
{
	close(sf->fd);
	atomic_fetch_sub(&sf->st->open_now, 1);
	iod_rangelock_destroy(&sf->lock);
	free(sf);
}

/* Close a list of handles chained by vnext, outside the store mutex. */
static void close_victims(struct iod_subfile *victims)
{
	while (victims) {
		struct iod_subfile *next = victims->vnext;

		close_handle(victims);
		victims = next;
	}
}

/*
 * Detach idle handles, least recently used first, until the cache is
 * within its bound (or keep = 0: all of them); the caller closes them.
 */
static struct iod_subfile *trim(struct iod_store *st, unsigned keep)
{
	struct iod_subfile *victims = NULL;

	while (st->cache.count > keep && st->lru_tail) {
		struct iod_subfile *sf = st->lru_tail;

		lru_remove(st, sf);
		unhash(st, sf);
		sf->vnext = victims;
		victims = sf;
	}
	return victims;
}

static int open_fd(struct iod_store *st, uint64_t file, uint32_t index,
		   int flags)
{
	int oflags = O_RDWR | O_CLOEXEC | (flags & IOD_CREATE ? O_CREAT : 0);
	char rel[64];
	int fd;

	iod_store_relpath(file, index, rel, sizeof(rel));
	fd = openat(st->dirfd, rel, oflags, 0600);
	if (fd < 0 && errno == ENOENT && (flags & IOD_CREATE)) {
		rel[2] = '\0';
		if (mkdirat(st->dirfd, rel, 0700) == 0) {
			/*
			 * A new fan-out directory: make its entry durable
			 * now (at most 256 times per store), so that a sync
			 * of a subfile in it has only its own entry to make
			 * durable (iod_store_sync).
			 */
			if (fsync(st->dirfd))
				return -errno;
		} else if (errno != EEXIST) {
			return -errno;
		}
		rel[2] = '/';
		fd = openat(st->dirfd, rel, oflags, 0600);
	}
	return fd < 0 ? -errno : fd;
}

/*
 * fsync the fan-out directory holding subfile (file, index): a subfile
 * created since the last sync is reachable after a power cut only once
 * its directory entry is durable, and fsync of the file alone does not
 * promise that (fsync(2)).
 */
static int sync_entry(struct iod_store *st, uint64_t file, uint32_t index)
{
	char rel[64];
	int fd, err = 0;

	iod_store_relpath(file, index, rel, sizeof(rel));
	rel[2] = '\0';
	fd = openat(st->dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd))
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* Open a subfile into a new cached handle.  Called with the mutex held. */
static int open_handle(struct iod_store *st, uint64_t file, uint32_t index,
		       int flags, struct iod_subfile **out,
		       struct iod_subfile **victims)
{
	struct iod_subfile *sf;
	int fd, err;

	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return clf_fail(ENOMEM, "iod: out of memory");
	err = iod_rangelock_init(&sf->lock);
	if (err) {
		free(sf);
		return clf_fail_neg(err, "iod: cannot create a range lock");
	}
	fd = open_fd(st, file, index, flags);
	if (fd == -EMFILE || fd == -ENFILE) {
		/* Out of descriptors: give back every idle one, once. */
		close_victims(trim(st, 0));
		fd = open_fd(st, file, index, flags);
	}
	if (fd < 0) {
		iod_rangelock_destroy(&sf->lock);
		free(sf);
		if (fd == -ENOENT && !(flags & IOD_CREATE))
			return clf_fail(ENOENT,
					"iod: no subfile %" PRIu32 " of file 0x%" PRIx64,
					index, file);
		return clf_fail_neg(fd,
				    "iod: cannot open subfile %" PRIu32 " of file 0x%" PRIx64 " in '%s': %s",
				    index, file, st->dir, strerror(-fd));
	}
	atomic_fetch_add(&st->opens, 1);
	atomic_fetch_add(&st->open_now, 1);
	sf->st = st;
	sf->file = file;
	sf->index = index;
	sf->fd = fd;
	sf->refs = 1;
	sf->cached = 1;
	clf_htable_add(&st->cache, &sf->hn, key_of(file, index));
	*victims = trim(st, st->max_open);
	*out = sf;
	return 0;
}

int iod_subfile_get(struct iod_store *st, uint64_t file, uint32_t index,
		    int flags, struct iod_subfile **out)
{
	struct iod_subfile *sf, *victims = NULL;
	int err = 0;

	pthread_mutex_lock(&st->mutex);
	sf = lookup(st, file, index);
	if (sf) {
		if (sf->refs++ == 0)
			lru_remove(st, sf);
		*out = sf;
	} else {
		err = open_handle(st, file, index, flags, out, &victims);
	}
	pthread_mutex_unlock(&st->mutex);
	close_victims(victims);
	return err;
}

void iod_subfile_put(struct iod_subfile *sf)
{
	struct iod_store *st;
	struct iod_subfile *victims = NULL;

	if (!sf)
		return;
	st = sf->st;
	pthread_mutex_lock(&st->mutex);
	if (--sf->refs == 0) {
		if (sf->cached) {
			lru_push(st, sf);
			victims = trim(st, st->max_open);
		} else {
			victims = sf;	/* removed while in use */
			sf->vnext = NULL;
		}
	}
	pthread_mutex_unlock(&st->mutex);
	close_victims(victims);
}

void iod_store_free(struct iod_store *st)
{
	struct clf_hnode *n, *tmp;
	size_t b;

	if (!st)
		return;
	clf_htable_for_each(&st->cache, b, n, tmp)
		close_handle(clf_hnode_entry(n, struct iod_subfile, hn));
	pthread_mutex_destroy(&st->mutex);
	close(st->dirfd);
	clf_htable_release(&st->cache);
	free(st->dir);
	free(st);
}

/* ------------------------------------------------------------------ */
/* Names: remove, sync, size, truncate                                 */
/* ------------------------------------------------------------------ */

/* Forget the cached handle of a subfile about to be unlinked; mutex held. */
static struct iod_subfile *forget(struct iod_store *st, uint64_t file,
				  uint32_t index)
{
	struct iod_subfile *sf = lookup(st, file, index);

	if (!sf)
		return NULL;
	unhash(st, sf);
	if (sf->refs)
		return NULL;	/* the last put closes it */
	lru_remove(st, sf);
	return sf;
}

/* Unlink one subfile; mutex held.  0, or a negative errno. */
static int unlink_locked(struct iod_store *st, uint64_t file, uint32_t index,
			 struct iod_subfile **victims)
{
	struct iod_subfile *sf = forget(st, file, index);
	char rel[64];

	if (sf) {
		sf->vnext = *victims;
		*victims = sf;
	}
	iod_store_relpath(file, index, rel, sizeof(rel));
	if (unlinkat(st->dirfd, rel, 0) && errno != ENOENT)
		return clf_fail(errno,
				"iod: cannot remove subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
				index, file, strerror(errno));
	return 0;
}

int iod_store_create(struct iod_store *st, uint64_t file, uint32_t index)
{
	struct iod_subfile *sf, *victim = NULL;
	struct stat sb;
	int err;

	/* A handle kept open on a subfile whose name went (removed by
	 * hand, lost) would keep a file no one can find: forget it. */
	pthread_mutex_lock(&st->mutex);
	sf = lookup(st, file, index);
	if (sf && fstat(sf->fd, &sb) == 0 && sb.st_nlink == 0)
		victim = forget(st, file, index);
	pthread_mutex_unlock(&st->mutex);
	if (victim) {
		victim->vnext = NULL;
		close_victims(victim);
	}
	err = iod_subfile_get(st, file, index, IOD_CREATE, &sf);
	if (!err)
		iod_subfile_put(sf);
	return err;
}

int iod_store_remove(struct iod_store *st, uint64_t file, uint32_t index)
{
	struct iod_subfile *victims = NULL;
	int err;

	pthread_mutex_lock(&st->mutex);
	err = unlink_locked(st, file, index, &victims);
	pthread_mutex_unlock(&st->mutex);
	close_victims(victims);
	return err;
}

/*
 * The indexes of the subfiles of file present on disk, in a new array
 * (caller frees) and their number.  0 or a negative errno.
 */
static int list_subfiles(struct iod_store *st, uint64_t file,
			 uint32_t **indexes, size_t *count)
{
	char fan[4], prefix[20];
	uint32_t *ix = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	snprintf(fan, sizeof(fan), "%02x", (unsigned)(file & 0xff));
	snprintf(prefix, sizeof(prefix), "%016" PRIx64 ".", file);
	fd = openat(st->dirfd, fan, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			goto done;
		return clf_fail(errno, "iod: cannot list '%s/%s': %s",
				st->dir, fan, strerror(errno));
	}
	d = fdopendir(fd);
	if (!d) {
		err = clf_fail(errno, "iod: cannot list '%s/%s': %s", st->dir,
			       fan, strerror(errno));
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		unsigned long long v;
		char *end;

		if (strncmp(de->d_name, prefix, 17) != 0 ||
		    de->d_name[17] < '0' || de->d_name[17] > '9')
			continue;
		errno = 0;
		v = strtoull(de->d_name + 17, &end, 10);
		if (errno || *end || v > UINT32_MAX)
			continue;
		if (n == cap) {
			uint32_t *bigger;

			cap = cap ? 2 * cap : 16;
			bigger = realloc(ix, cap * sizeof(*ix));
			if (!bigger) {
				err = clf_fail(ENOMEM, "iod: out of memory");
				break;
			}
			ix = bigger;
		}
		ix[n++] = (uint32_t)v;
	}
	closedir(d);
	if (err) {
		free(ix);
		return err;
	}
done:
	*indexes = ix;
	*count = n;
	return 0;
}

int iod_store_remove_file(struct iod_store *st, uint64_t file)
{
	struct iod_subfile *victims = NULL;
	uint32_t *ix;
	size_t n, i;
	int err;

	pthread_mutex_lock(&st->mutex);
	err = list_subfiles(st, file, &ix, &n);
	if (err)
		goto unlock;
	for (i = 0; i < n && !err; i++)
		err = unlink_locked(st, file, ix[i], &victims);
	free(ix);
	if (!err)
		err = (int)n;
unlock:
	pthread_mutex_unlock(&st->mutex);
	close_victims(victims);
	return err;
}

int iod_store_sync(struct iod_store *st, uint64_t file, uint32_t index)
{
	struct iod_subfile *sf;
	int err;

	err = iod_subfile_get(st, file, index, 0, &sf);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (fsync(sf->fd))
		err = clf_fail(errno,
			       "iod: cannot sync subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
			       index, file, strerror(errno));
	else if ((err = sync_entry(st, file, index)))
		err = clf_fail_neg(err,
			"iod: cannot sync the directory of subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
			index, file, strerror(-err));
	iod_subfile_put(sf);
	return err;
}

int iod_store_sync_file(struct iod_store *st, uint64_t file)
{
	uint32_t *ix;
	size_t n, i;
	int err;

	err = list_subfiles(st, file, &ix, &n);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++)
		err = iod_store_sync(st, file, ix[i]);
	free(ix);
	return err;
}

int iod_store_sync_all(struct iod_store *st)
{
	if (syncfs(st->dirfd))
		return clf_fail(errno, "iod: cannot sync '%s': %s", st->dir,
				strerror(errno));
	return 0;
}

int iod_store_size(struct iod_store *st, uint64_t file, uint32_t index,
		   int64_t *len)
{
	struct iod_subfile *sf;
	struct stat sb;
	int err;

	err = iod_subfile_get(st, file, index, 0, &sf);
	if (err == -ENOENT) {
		*len = 0;
		return 0;
	}
	if (err)
		return err;
	if (fstat(sf->fd, &sb))
		err = clf_fail(errno,
			       "iod: cannot stat subfile %" PRIu32 " of file 0x%" PRIx64 ": %s",
			       index, file, strerror(errno));
	else
		*len = sb.st_size;
	iod_subfile_put(sf);
	return err;
}

int iod_store_truncate(struct iod_store *st, uint64_t file, uint32_t index,
		       int64_t len)
{
	struct iod_subfile *sf;
	struct iod_range r;
	int err;

	if (len < 0)
		return clf_fail(EINVAL,
				"iod: cannot truncate subfile %" PRIu32 " of file 0x%" PRIx64 " to negative length %" PRId64,
				index, file, len);
	err = iod_subfile_get(st, file, index, len ? IOD_CREATE : 0, &sf);
	if (err == -ENOENT && len == 0)
		return 0;
	if (err)
		return err;
	/* A sieving write in flight past len would put the bytes back. */
	if (len < INT64_MAX)
		iod_rangelock_lock(&sf->lock, &r, len, INT64_MAX);
	if (ftruncate(sf->fd, len))
		err = clf_fail(errno,
			       "iod: cannot truncate subfile %" PRIu32 " of file 0x%" PRIx64 " to %" PRId64 ": %s",
			       index, file, len, strerror(errno));
	if (len < INT64_MAX)
		iod_rangelock_unlock(&sf->lock, &r);
	iod_subfile_put(sf);
	return err;
}

int iod_store_statfs(struct iod_store *st, struct iod_statfs *out)
{
	struct statvfs sv;

	if (fstatvfs(st->dirfd, &sv))
		return clf_fail(errno, "iod: cannot statfs '%s': %s", st->dir,
				strerror(errno));
	out->bytes_total = (uint64_t)sv.f_blocks * sv.f_frsize;
	out->bytes_free = (uint64_t)sv.f_bfree * sv.f_frsize;
	out->bytes_avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	out->files = sv.f_files;
	out->files_free = sv.f_ffree;
	out->block_size = (uint32_t)sv.f_bsize;
	out->name_max = (uint32_t)sv.f_namemax;
	return 0;
}
