/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lock.h -- POSIX record locks of the native API (lock_posix.c):
 * CLF_fcntl's CLF_FCNTL_SETLK, _SETLKW and _GETLK, and the release of
 * the process's locks when it closes a descriptor of the file.
 */
#ifndef CLF_LOCK_H
#define CLF_LOCK_H

#include <stdint.h>

/*
 * One CLF_fcntl lock command (cmd CLF_FCNTL_SETLK, _SETLKW, _GETLK) on
 * descriptor fd with arg a struct flock *.  Returns 0 or a negative
 * errno, as documented in clf.h.
 */
int clf_lock_fcntl(int fd, int cmd, void *arg);

/*
 * A descriptor of inode ino was closed: as POSIX wants, every lock this
 * process holds on the file goes, whichever descriptor took it.  Only
 * talks to metad when the process ever locked the file.
 */
void clf_lock_file_closed(uint64_t ino);

#endif /* CLF_LOCK_H */
