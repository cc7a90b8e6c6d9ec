// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_fs.c -- a mounted file system's life: clfs_new takes the root
 * from metad, clfs_free releases the handles the kernel left open and
 * the inode table.  Above the requests (clfs_io.c's release), so that
 * they never call back up into it.
 */
#include <errno.h>
#include <stdlib.h>

#include "clf.h"
#include "clf_ll.h"
#include "clfs_i.h"

int clfs_new(bool read_only, struct clfs **out)
{
	struct clf_proto_attr root;
	struct clfs_inode *ip;
	struct clfs *fs;
	int err;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->read_only = read_only;
	pthread_mutex_init(&fs->open_lock, NULL);
	err = clfs_itable_init(&fs->itab);
	if (err)
		goto free_fs;
	err = clf_ll_getattr(CLF_PROTO_ROOT_INO, &root);
	if (err)
		goto free_table;
	/* The kernel never looks the root up: it holds it from the start. */
	ip = clfs_iget(&fs->itab, CLF_PROTO_ROOT_INO);
	if (!ip) {
		err = -ENOMEM;
		goto free_table;
	}
	ip->have_attr = true;
	ip->is_dir = true;
	ip->parent = CLF_PROTO_ROOT_INO;
	ip->size = root.size;
	*out = fs;
	return 0;
free_table:
	clfs_itable_destroy(&fs->itab);
free_fs:
	pthread_mutex_destroy(&fs->open_lock);
	free(fs);
	return err;
}

void clfs_free(struct clfs *fs)
{
	struct clfs_itable *t;

	if (!fs)
		return;
	t = &fs->itab;
	/*
	 * Handles the kernel never released (normally it releases them
	 * all); a release may free its inode, so look afresh each time.
	 */
	for (;;) {
		struct clfs_handle *h = NULL;
		struct clf_hnode *n, *tmp;
		size_t b;

		clf_htable_for_each(&t->table, b, n, tmp)
			if (!h)
				h = clf_hnode_entry(n, struct clfs_inode,
						    hn)->handles;
		if (!h)
			break;
		clfs_release(fs, (uint64_t)(uintptr_t)h);
	}
	clfs_itable_destroy(t);
	pthread_mutex_destroy(&fs->open_lock);
	free(fs);
}
