/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clfs_fuse.h -- libfuse's low-level API on top of clfs_ops.h.
 */
#ifndef CLFS_FUSE_H
#define CLFS_FUSE_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "clfs_ops.h"

/* The session's user data. */
struct clfs_fuse {
	struct clfs *fs;	/* borrowed */
	struct fuse_session *se;	/* borrowed; for notifications */
	double timeout;		/* seconds the kernel trusts attrs, names */
	bool direct_io;		/* no page cache (cache=none) */
};

/* The operations; the session's userdata must be a struct clfs_fuse. */
extern const struct fuse_lowlevel_ops clfs_fuse_ops;

#endif /* CLFS_FUSE_H */
