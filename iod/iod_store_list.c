// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_store_list.c -- the subfiles a storage directory holds, in
 * (file, subfile) order, for SUB_LIST and clf fsck (iod_store.h).
 *
 * The directory is walked whole at each call: subfiles are spread over
 * 256 fan-out directories by the low byte of their file, so no order of
 * the walk is the listing's.  A call keeps the `max` smallest names at
 * or after the start in a sorted array; fsck is rare and walks the
 * directory n / max times, which costs less than keeping an index that
 * every create would have to update.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "iod_store_i.h"

/* Whether (f, s) comes before (g, t). */
static bool before(uint64_t f, uint32_t s, uint64_t g, uint32_t t)
{
	return f < g || (f == g && s < t);
}

/*
 * A subfile's name: <file:016x>.<index>, as iod_store_relpath makes
 * it.  Other names (temporary files, what an administrator left) are not
 * the iod's and are not listed.
 */
static bool parse_name(const char *name, uint64_t *file, uint32_t *index)
{
	unsigned long long f;
	unsigned long long i;
	int used = 0;

	if (strlen(name) < 18 || name[16] != '.' ||
	    strspn(name, "0123456789abcdef") != 16 ||
	    sscanf(name, "%16llx.%llu%n", &f, &i, &used) != 2 || name[used] ||
	    i > UINT32_MAX || name[17] < '0' || name[17] > '9')
		return false;
	*file = f;
	*index = (uint32_t)i;
	return true;
}

/* Insert (file, index) into the sorted l->n first entries, keeping max. */
static void keep(struct iod_store_list *l, uint32_t max, uint64_t file,
		 uint32_t index, int64_t length)
{
	uint32_t k = l->n;

	if (k == max) {
		if (!before(file, index, l->file[k - 1], l->subfile[k - 1])) {
			l->more = true;
			return;
		}
		l->more = true;
		k--;
	} else {
		l->n++;
	}
	while (k > 0 && before(file, index, l->file[k - 1], l->subfile[k - 1])) {
		l->file[k] = l->file[k - 1];
		l->subfile[k] = l->subfile[k - 1];
		l->length[k] = l->length[k - 1];
		k--;
	}
	l->file[k] = file;
	l->subfile[k] = index;
	l->length[k] = length;
}

int iod_store_list(struct iod_store *st, uint64_t file, uint32_t index,
		   uint32_t max, struct iod_store_list *out)
{
	struct dirent *fan, *de;
	DIR *top, *d;
	int fd, err = 0;

	out->n = 0;
	out->more = false;
	if (max == 0 || max > IOD_STORE_LIST_MAX)
		return clf_fail(EINVAL, "iod: a listing of %" PRIu32 " subfiles",
				max);
	fd = openat(st->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	top = fd < 0 ? NULL : fdopendir(fd);
	if (!top) {
		err = clf_fail(errno, "iod: cannot list '%s': %s", st->dir,
			       strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (fan = readdir(top))) {
		if (strlen(fan->d_name) != 2 ||
		    strspn(fan->d_name, "0123456789abcdef") != 2)
			continue;
		fd = openat(st->dirfd, fan->d_name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		d = fd < 0 ? NULL : fdopendir(fd);
		if (!d) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((de = readdir(d))) {
			struct stat sb;
			uint64_t f;
			uint32_t i;

			if (!parse_name(de->d_name, &f, &i) ||
			    before(f, i, file, index))
				continue;
			/* Removed since readdir saw it: not there. */
			if (fstatat(dirfd(d), de->d_name, &sb,
				    AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode))
				continue;
			keep(out, max, f, i, sb.st_size);
		}
		closedir(d);
	}
	closedir(top);
	return err;
}
