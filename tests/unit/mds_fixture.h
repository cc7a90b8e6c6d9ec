/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_fixture.h -- the fixture of the metad store tests that work on one
 * store (test_mds_store.c, test_mds_namespace.c, test_mds_links.c): each
 * test opens its own store s in its own directory; the teardown checks
 * the store's invariants, then removes it.  A test that breaks the store
 * closes it itself and sets s = NULL.  Include once, in the test file.
 */
#ifndef CLF_MDS_FIXTURE_H
#define CLF_MDS_FIXTURE_H

#include "mds_test.h"

static char *dir;
static struct mds_store *s;

static void setup(void)
{
	dir = new_store_dir();
	s = open_store(dir);
}

static void teardown(void)
{
	if (s) {
		assert_consistent(s);
		mds_store_close(s);
	}
	rm_store_dir(dir);
}

/* call returns want, or the test fails with CLF_Last_error(). */
#define expect_err(call, want) do {					\
	int got_ = (call);						\
	ck_assert_msg(got_ == (want), "%s: got %d (%s), want %d", #call,	\
		      got_, CLF_Last_error(), (want));			\
} while (0)

/* A new file name in parent with layout l; its inode. */
static inline uint64_t mkfile(uint64_t parent, const char *name,
			      const struct mds_layout *l)
{
	struct mds_attr a;

	expect_err(mds_create(s, parent, name, 0644, 1000, 100, l, &a), 0);
	return a.ino;
}

static inline struct mds_attr attr_of(uint64_t ino)
{
	struct mds_attr a;

	expect_err(mds_getattr(s, ino, &a), 0);
	return a;
}

#endif /* CLF_MDS_FIXTURE_H */
