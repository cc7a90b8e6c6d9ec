/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_perm.h -- who a request acts for, and the POSIX permission checks
 * metad makes for it: one function per class of access, for every
 * request handler (a new operation calls the class it belongs to).
 *
 * The rules are Linux's (without ACLs or capabilities other than root's):
 * the owner class, else the group class when the file's group is the
 * user's primary or a supplementary group, else the other class; root
 * passes every check but execute, which needs some x bit, and
 * ownership checks (chmod, chown, explicit times) it passes too.
 * A check returns 0 or -EACCES / -EPERM with a message that names the
 * path component (or the inode) and the missing right:
 *   metad: cannot create 'a/b': permission denied (no write permission
 *   on directory 'a')
 */
#ifndef MDS_PERM_H
#define MDS_PERM_H

#include <stdbool.h>
#include <stdint.h>

#include "mds_store.h"

#define MDS_CRED_GROUPS_MAX 64	/* supplementary groups metad counts */
#define MDS_NOBODY 65534	/* what root_squash makes of uid/gid 0 */

/* A user as metad checks it. */
struct mds_cred {
	uint32_t uid, gid;
	uint32_t ngroups;	/* <= MDS_CRED_GROUPS_MAX */
	uint32_t groups[MDS_CRED_GROUPS_MAX];	/* supplementary, gid too */
};

/*
 * The user uid with primary group gid, and the supplementary groups the
 * group database gives uid's name (getgrouplist; none when uid has no
 * name).  squash: uid 0 becomes MDS_NOBODY, and gid 0 too.
 */
void mds_cred_resolve(struct mds_cred *c, uint32_t uid, uint32_t gid,
		      bool squash);

/* Root, who passes every check but execute. */
extern const struct mds_cred mds_cred_root;

/* Access bits, as for access(2). */
#define MDS_MAY_EXEC 1u
#define MDS_MAY_WRITE 2u
#define MDS_MAY_READ 4u

/* Whether c holds every right of want on an inode with attributes a. */
bool mds_may(const struct mds_cred *c, const struct mds_attr *a,
	     unsigned want);

/* Search (x) on directory dir, named name (for the message). */
int mds_perm_search(const struct mds_cred *c, const struct mds_attr *dir,
		    const char *name);

/*
 * Change the entries of directory dir (named dname) to op on name:
 * create, mkdir, unlink, rmdir, rename, link...: write and search.
 */
int mds_perm_dir_change(const struct mds_cred *c, const struct mds_attr *dir,
			const char *dname, const char *op, const char *name);

/*
 * Remove or replace entry name (attributes victim) of directory dir: in a
 * sticky directory only the owner of the entry or of the directory, or
 * root (-EPERM).  Call after mds_perm_dir_change.
 */
int mds_perm_sticky(const struct mds_cred *c, const struct mds_attr *dir,
		    const struct mds_attr *victim, const char *name);

/* Read the entries of directory dir (named name). */
int mds_perm_readdir(const struct mds_cred *c, const struct mds_attr *dir,
		     const char *name);

/* Open file a (named name) with want (MDS_MAY_READ | MDS_MAY_WRITE). */
int mds_perm_open(const struct mds_cred *c, const struct mds_attr *a,
		  unsigned want, const char *name);

/*
 * Owner-only changes (the file's layout, say, as what): the owner or
 * root, else -EPERM.
 */
int mds_perm_owner(const struct mds_cred *c, const struct mds_attr *a,
		   const char *what, const char *name);

/*
 * SETATTR: chmod and explicit times by the owner or root; chown to
 * another user by root only; chgrp by the owner to one of its groups;
 * times set to now also by a writer; a size change needs write.  *set
 * may change as Linux changes it: setgid dropped by a chmod of a user
 * outside the file's group, setuid (and group-executable setgid) dropped
 * by a chown of a file.
 */
int mds_perm_setattr(const struct mds_cred *c, const struct mds_attr *a,
		     struct mds_setattr *set, const char *name);

/* A byte-range lock of type (MDS_LOCK_READ / WRITE): read / write. */
int mds_perm_lock(const struct mds_cred *c, const struct mds_attr *a,
		  uint32_t type, const char *name);

/*
 * The group a new inode in directory dir gets: dir's when dir is
 * setgid (then a new directory is setgid too: *mode), else c's.
 */
uint32_t mds_perm_new_gid(const struct mds_cred *c, const struct mds_attr *dir,
			  uint32_t *mode, bool is_dir);

#endif /* MDS_PERM_H */
