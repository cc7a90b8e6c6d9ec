/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_coll_done.h -- the collective operations an iod ran lately, kept
 * where a restarted iod finds them (iod_coll_done.c says why).
 */
#ifndef IOD_COLL_DONE_H
#define IOD_COLL_DONE_H

#include <stdbool.h>
#include <stdint.h>

struct iod_coll_done;

/* How long a record answers for its operation: a participant comes
 * again within its grace (recovery_grace_s) or not at all. */
#define IOD_COLL_DONE_KEEP_S 600

/*
 * Open (creating or resetting it) the record file `path`.  Returns 0, or
 * a negative errno with a message naming the file.
 */
int iod_coll_done_open(const char *path, struct iod_coll_done **out);
/* NULL ok. */
void iod_coll_done_close(struct iod_coll_done *d);

/*
 * Note that operation (file, subfile, tag) starts its I/O now, with
 * every participant's request in.  The caller serialises notes and
 * lookups (the collective table's mutex).
 */
void iod_coll_done_note(struct iod_coll_done *d, uint64_t file,
			uint32_t subfile, uint64_t tag);

/* Whether (file, subfile, tag) was noted within IOD_COLL_DONE_KEEP_S. */
bool iod_coll_done_seen(const struct iod_coll_done *d, uint64_t file,
			uint32_t subfile, uint64_t tag);

#endif /* IOD_COLL_DONE_H */
