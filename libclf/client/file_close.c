// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * file_close.c -- CLF_close: the size the file's writes reached to
 * metad, its views released at the iods, its POSIX locks dropped.
 * Above the table, the views and the locks; below the calls by inode
 * (clf_ll.h) and CLF_open, which close what they opened with it.
 */
#include <errno.h>

#include "client_i.h"
#include "error.h"
#include "lock.h"
#include "stage_note.h"
#include "xcache.h"

int CLF_close(int fd)
{
	struct clf_file *f;
	uint64_t ino;
	int err, cerr;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	clf_file_detach(fd, f);
	f->closed = true;
	/* Kept bytes out before the size goes to metad. */
	cerr = clf_xcache_close_file(f);
	err = clf_file_flush_size(f);
	/* Removed while open (another process's unlink, or rank 0 of an MPI
	 * job deleting a file its other ranks still close): no size to keep,
	 * and a close succeeds on it, as POSIX has it. */
	if (err == -ENOENT)
		err = 0;
	if (!err)
		err = cerr;
	/* Written bytes reached the iods: now they may be noted for
	 * write-back (a failed close is not noted: its bytes are not
	 * known to be there). */
	if (!err)
		err = clf_stage_note_close(f->ino, f->flags);
	clf_file_release_views(f);
	clf_view_cache_clear(f);
	ino = f->ino;
	clf_file_put(f);	/* frees f unless a getter still waits */
	clf_lock_file_closed(ino);
	return err;
}
