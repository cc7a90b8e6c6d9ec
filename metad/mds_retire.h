/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_retire.h -- retired iods: those `clf iod remove` emptied (or is
 * emptying), on which metad places no new subfile (docs/elastic.md,
 * "Retired iods").
 *
 * Why metad's store: every create and SET_LAYOUT goes through metad,
 * which already places round-robin files, so one authority there covers
 * clients started from a configuration file and from clf://HOST alike,
 * and running clients without a reload; the store is durable and
 * transactional (a key "retired/<iod>" in the superblock database), so
 * the state survives metad's restart.  The configuration file is not
 * changed: it may be copied to many hosts, and an iod index must stay
 * where it is while layouts still name it.
 */
#ifndef MDS_RETIRE_H
#define MDS_RETIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "mds_store.h"

struct mds_retired;

/* The retired set kept in s, read into memory (mds_retired_free frees
 * it).  Logs each retired iod.  Returns 0 or a negative errno. */
int mds_retired_load(struct mds_store *s, struct mds_retired **out);

void mds_retired_free(struct mds_retired *r);

/* Whether iod is retired; r may be NULL (none is). Thread-safe. */
bool mds_retired_has(const struct mds_retired *r, uint32_t iod);

/* Retire iod (retired true) or bring it back, durably in s, then in r.
 * Returns 0 or a negative errno. Thread-safe. */
int mds_retired_set(struct mds_store *s, struct mds_retired *r, uint32_t iod,
		    bool retired);

/*
 * The first iod at or after iod (cyclically, over niods) that is not
 * retired; -ENOSPC, with a message, when every iod is.
 */
int64_t mds_retired_next(const struct mds_retired *r, uint32_t niods,
			 uint32_t iod);

/* How many of the niods iods are not retired. */
uint32_t mds_retired_active(const struct mds_retired *r, uint32_t niods);

#endif /* MDS_RETIRE_H */
