// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stage_note.c -- the client's half of the write-back journal
 * (docs/staging.md): on an instance with a backing directory (the
 * configuration's `backing`), a file opened for writing is noted at its
 * close as "W <inode>" in BACKING/.clf-stage/journal, on disk before
 * CLF_close returns.  The stager (`clf stager`) copies what the journal
 * names back to BACKING; a note on disk is what a crash of the instance,
 * the stager or this process cannot take back, so a close that cannot
 * note fails instead of returning as if the file would be written back.
 *
 * One write(2) of one short line with O_APPEND: the notes of the
 * processes that close at once do not mix.  Under a shared flock
 * (clf_ll_stage_journal_open), which the stager's compaction waits for.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_i.h"
#include "error.h"
#include "stage_note.h"

int clf_ll_stage_journal_open(const char *backing, char *path, size_t len,
			      struct stat *st)
{
	struct stat mine, named;

	snprintf(path, len, "%s/" CLF_LL_STAGE_DIR, backing);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, len, "%s/" CLF_LL_STAGE_JOURNAL, backing);
	/* A compaction renames a new journal over the one opened: take
	 * the lock on whichever has the name once the lock is held. */
	for (int tries = 0; tries < 1000; tries++) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			      0644);

		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_SH) || fstat(fd, &mine)) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		if (!stat(path, &named) && named.st_ino == mine.st_ino &&
		    named.st_dev == mine.st_dev) {
			if (st)
				*st = mine;
			return fd;
		}
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

int clf_stage_note_close(uint64_t ino, int flags)
{
	struct clf_client *cl = clf_client_instance;
	char path[PATH_MAX], line[32];
	int fd, n, err = 0;

	if (!cl || !cl->cfg->backing || (flags & O_ACCMODE) == O_RDONLY)
		return 0;
	n = snprintf(line, sizeof(line), "W %llu\n", (unsigned long long)ino);
	fd = clf_ll_stage_journal_open(cl->cfg->backing, path, sizeof(path),
				       NULL);
	if (fd < 0)
		err = errno;
	else if (write(fd, line, n) != n)
		err = errno ? errno : EIO;
	else if (fdatasync(fd))
		err = errno;
	if (fd >= 0 && close(fd) && !err)
		err = errno;
	if (err)
		return clf_fail(err,
				"clf: close: cannot note inode %llu for write-back in %s: %s",
				(unsigned long long)ino, path, strerror(err));
	return 0;
}

int clf_stage_note_done(uint64_t ino, const char *path)
{
	struct clf_client *cl = clf_client_instance;
	char jpath[PATH_MAX], line[CLF_PROTO_PATH_MAX + 64];
	struct stat st;
	int fd, n, err = 0;

	if (!cl || !cl->cfg->backing)
		return 0;
	fd = clf_ll_stage_journal_open(cl->cfg->backing, jpath, sizeof(jpath),
				       &st);
	if (fd < 0) {
		err = errno;
	} else {
		/* Every note so far, ours from the copy's close too. */
		n = snprintf(line, sizeof(line), "D %llu %lld %s\n",
			     (unsigned long long)ino, (long long)st.st_size,
			     path);
		if (write(fd, line, n) != n)
			err = errno ? errno : EIO;
		else if (fdatasync(fd))
			err = errno;
	}
	if (fd >= 0)
		close(fd);
	if (err)
		return clf_fail(err, "clf: cannot note %s as staged in, in %s: %s",
				path, jpath, strerror(err));
	return 0;
}

int clf_stage_backed(void)
{
	struct clf_client *cl = clf_client_instance;

	return cl && cl->cfg->backing;
}

/* One line appended and on disk; 0 or an errno, jpath the journal. */
static int note_append(const char *line, size_t n, char *jpath, size_t jlen)
{
	struct clf_client *cl = clf_client_instance;
	int fd, err = 0;

	fd = clf_ll_stage_journal_open(cl->cfg->backing, jpath, jlen, NULL);
	if (fd < 0)
		return errno;
	if (write(fd, line, n) != (ssize_t)n)
		err = errno ? errno : EIO;
	else if (fdatasync(fd))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	return err;
}

/* path with '\\', newline and tab escaped (one journal line, the two
 * paths of a rename apart); the bytes written, or -1 past len. */
static int note_escape(const char *path, char *out, size_t len)
{
	size_t k = 0;

	for (const char *p = path; *p; p++) {
		const char *e = *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" :
				*p == '\t' ? "\\t" : NULL;
		size_t m = e ? 2 : 1;

		if (k + m >= len)
			return -1;
		if (e)
			memcpy(out + k, e, 2);
		else
			out[k] = *p;
		k += m;
	}
	out[k] = '\0';
	return (int)k;
}

/* "<kind> <a>[\t<b>]\n" into the journal. */
static int note_ns(char kind, const char *a, const char *b)
{
	char line[2 * 2 * CLF_PROTO_PATH_MAX + 16], jpath[PATH_MAX];
	int n, m = 0, err;

	if (!clf_stage_backed())
		return 0;
	line[0] = kind;
	line[1] = ' ';
	n = note_escape(a, line + 2, sizeof(line) - 4);
	if (n >= 0 && b) {
		line[2 + n] = '\t';
		m = note_escape(b, line + 3 + n, sizeof(line) - 5 - n);
		m = m < 0 ? -1 : m + 1;
	}
	if (n < 0 || m < 0)
		return clf_fail(ENAMETOOLONG, "clf: cannot note %s for the backing directory: name too long",
				a);
	n += 2 + m;
	line[n++] = '\n';
	err = note_append(line, (size_t)n, jpath, sizeof(jpath));
	if (err)
		return clf_fail(err,
				"clf: %s was %s in clf, but cannot be noted for the backing directory in %s: %s",
				a, kind == 'R' ? "removed" : "renamed", jpath,
				strerror(err));
	return 0;
}

int clf_stage_note_remove(const char *path)
{
	return note_ns('R', path, NULL);
}

int clf_stage_note_rename(const char *from, const char *to)
{
	return note_ns('N', from, to);
}
