/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * durable.h -- directories that survive a power cut: the daemons' stores.
 *
 * A new directory entry is durable only once the directory holding it
 * has been fsynced (fsync(2)); a store created on first start and lost
 * with the next power cut would take every acknowledged write with it.
 */
#ifndef CLF_DURABLE_H
#define CLF_DURABLE_H

#include <sys/types.h>

/*
 * mkdir -p dir (mode for what is created), fsyncing the parent of each
 * directory created.  who names the caller in the error message.
 * 0 or a negative errno.
 */
int clf_mkdirs_durable(const char *dir, mode_t mode, const char *who);

/* fsync directory dir: the entries made in it so far are durable. */
int clf_fsync_dir(const char *dir, const char *who);

#endif /* CLF_DURABLE_H */
