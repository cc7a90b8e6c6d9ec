/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * crash_shadow.h -- what a power cut would keep of a directory tree.
 *
 * The "shadow" directory records the durable state of the tree under a
 * root: a file's content as of its last fsync (or O_DSYNC write), and a
 * directory's entries as of its last fsync.  Objects are named by
 * device, inode and birth time, so a rename or a reused inode number
 * cannot mix two files up:
 *
 *	SHADOW/f/<key>	content of a regular file (or a symlink's target)
 *	SHADOW/d/<key>	entries of a directory: "kind\tmode\tkey\tname\n"
 *	SHADOW/root	the key of the root directory
 *
 * crash_shim.so (preloaded into the daemons) adds to it at every sync;
 * crash_shadow_build() then makes the tree a power cut at that moment
 * would leave, the strictest state POSIX allows: what was never synced is
 * gone (an unsynced directory is empty, an unsynced file is empty).
 */
#ifndef CLF_TEST_CRASH_SHADOW_H
#define CLF_TEST_CRASH_SHADOW_H

/* Record fd's file or directory as durable now (content or entries). */
int crash_shadow_sync_fd(const char *shadow, int fd);

/* Record everything under root as durable (the state before a run). */
int crash_shadow_sync_tree(const char *shadow, const char *root);

/* Make at out (which must not exist) the tree the shadow says survives. */
int crash_shadow_build(const char *shadow, const char *out);

#endif /* CLF_TEST_CRASH_SHADOW_H */
