// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stage_in.c -- staging in at open (docs/staging.md): on an instance
 * with a backing directory, CLF_open of a path that clf does not have
 * and the backing directory does (a regular file) first copies it in:
 * into a hidden name beside its place, in large pieces, then renamed
 * into place, so that a process that opens it at the same time sees no
 * half-copied file (two that race both copy; the last rename wins, the
 * same bytes).  The copy is noted written back (it holds what the
 * backing directory holds).  Opens that create the file anew (O_EXCL,
 * O_TRUNC) copy nothing.  CLF_open is here: staging in first, then the
 * open proper (file.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_i.h"
#include "error.h"
#include "stage_note.h"

#define STAGE_IN_CHUNK (8 << 20)	/* bytes per read and write */

/* mkdir -p of the clf parents of "/a/b/c": /a, /a/b. */
static int make_parents(const char *path)
{
	char dir[CLF_PROTO_PATH_MAX + 2];
	char *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		err = CLF_mkdir(dir, 0755);
		if (err && err != -EEXIST)
			return err;
		*slash = '/';
	}
	return 0;
}

/* local's bytes into the new clf file tmp: its inode in *ino. */
static int copy_in(int lfd, const struct stat *st, const char *tmp,
		   uint64_t *ino)
{
	char *buf = malloc(STAGE_IN_CHUNK);
	struct stat cst;
	int cfd, err = 0;
	ssize_t got;

	if (!buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	cfd = clf_file_open_path(tmp, O_WRONLY | O_CREAT | O_EXCL,
				 st->st_mode & 07777);
	if (cfd < 0) {
		free(buf);
		return cfd;
	}
	while (!err && (got = read(lfd, buf, STAGE_IN_CHUNK)) != 0) {
		ssize_t put;

		if (got < 0) {
			err = clf_fail(errno, "clf: read: %s", strerror(errno));
			break;
		}
		put = CLF_write(cfd, buf, got);
		if (put < 0)
			err = (int)put;
		else if (put != got)
			err = clf_fail(EIO, "clf: short write");
	}
	free(buf);
	if (!err)
		err = CLF_stat(tmp, &cst);
	*ino = cst.st_ino;
	if (err) {
		CLF_close(cfd);
		return err;
	}
	return CLF_close(cfd);
}

/* Before CLF_open(path, flags): 0 when there was nothing to stage in or
 * it is in; a negative errno with a message naming both files when the
 * copy failed. */
static int stage_in_at_open(const char *path, int flags)
{
	struct clf_client *cl = clf_client_instance;
	char rel[CLF_PROTO_PATH_MAX + 1], abs[CLF_PROTO_PATH_MAX + 2];
	char local[PATH_MAX], tmp[CLF_PROTO_PATH_MAX + 64];
	const char *name;
	struct stat st;
	uint64_t ino = 0;
	int lfd, err;

	if (!cl || !cl->cfg->backing || (flags & (O_EXCL | O_TRUNC)))
		return 0;
	if (clf_path_normalize(path, rel, sizeof(rel)) || !*rel ||
	    !strncmp(rel, CLF_LL_STAGE_DIR, strlen(CLF_LL_STAGE_DIR)))
		return 0;	/* the open proper says what is wrong */
	snprintf(abs, sizeof(abs), "/%s", rel);
	if (CLF_stat(abs, &st) != -ENOENT)
		return 0;
	if (snprintf(local, sizeof(local), "%s/%s", cl->cfg->backing, rel) >=
	    (int)sizeof(local))
		return 0;
	lfd = open(local, O_RDONLY | O_CLOEXEC);
	if (lfd < 0)
		return 0;	/* nothing to stage in: ENOENT from the open */
	if (fstat(lfd, &st) || !S_ISREG(st.st_mode)) {
		close(lfd);
		return 0;
	}
	name = strrchr(abs, '/') + 1;
	snprintf(tmp, sizeof(tmp), "%.*s.%s.clf-stagein.%d", (int)(name - abs),
		 abs, name, (int)getpid());
	err = make_parents(abs);
	if (!err)
		err = copy_in(lfd, &st, tmp, &ino);
	close(lfd);
	if (!err)
		err = clf_stage_note_done(ino, abs);
	if (!err)
		err = clf_rename_unnoted(tmp, abs);
	if (err) {
		char why[256];

		snprintf(why, sizeof(why), "%s", clf_error_reason());
		CLF_unlink(tmp);
		return clf_fail_neg(err, "clf: open: cannot stage in %s from %s: %s",
				    abs, local, why);
	}
	return 0;
}

int CLF_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int err;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	/* A file of the backing directory comes in first. */
	err = stage_in_at_open(path, flags);
	if (err)
		return err;
	return clf_file_open_path(path, flags, mode);
}
