// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * durable.c -- directories that survive a power cut (see durable.h).
 */
#include "durable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

int clf_fsync_dir(const char *dir, const char *who)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0 || fsync(fd))
		err = clf_fail(errno, "%s: cannot sync directory '%s': %s", who,
			       dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	return err;
}

/* fsync the directory holding path (path is cut at its last '/'). */
static int sync_parent(char *path, const char *who)
{
	char *slash = strrchr(path, '/');
	int err;

	if (!slash)
		return clf_fsync_dir(".", who);
	if (slash == path)
		return clf_fsync_dir("/", who);
	*slash = '\0';
	err = clf_fsync_dir(path, who);
	*slash = '/';
	return err;
}

int clf_mkdirs_durable(const char *dir, mode_t mode, const char *who)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return clf_fail(ENAMETOOLONG, "%s: bad directory name '%s'",
				who, dir);
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		int err;

		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, mode) < 0) {
			if (errno != EEXIST)
				return clf_fail(errno, "%s: cannot create '%s': %s",
						who, path, strerror(errno));
		} else if ((err = sync_parent(path, who))) {
			return err;
		}
		path[i] = dir[i];
	}
	return 0;
}
