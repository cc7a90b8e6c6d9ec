/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clfs_upcall.h -- the clf kernel module's client: mount.clf serving
 * /dev/clf (clf_upcall.h) with clfs_ops.h, as clfs_fuse.c serves FUSE.
 */
#ifndef CLFS_UPCALL_H
#define CLFS_UPCALL_H

#include <stdbool.h>

#include "clfs_ops.h"
#include "clfs_opts.h"

/*
 * /dev/clf for a new daemon: its descriptor, -EBUSY when a daemon
 * holds it already, -ENODEV when the module is not loaded.
 */
int clfs_kernel_open(void);

/* Is the clf module loaded (the kernel client available)? */
bool clfs_kernel_loaded(void);

/*
 * Serve fd (from clfs_kernel_open) with nthreads threads until the
 * module says the last clf mount is gone (0) or the device fails.
 * source is the one SOURCE a mount may name.
 */
int clfs_upcall_serve(struct clfs *fs, int fd, const char *source,
		      int nthreads);

/* mount(2) of o's SOURCE on o's DIR as a clf kernel mount. */
int clfs_kernel_mount(const struct clfs_opts *o, char *msg, size_t len);

#endif /* CLFS_UPCALL_H */
