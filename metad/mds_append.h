/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mds_append.h -- metad's append ends: where the next O_APPEND write of
 * each file goes (APPEND of protocol 1.4; clf_proto.h, "Appends").
 *
 * The bytes of an append go from the client to the iods; only the range
 * is agreed here, under one mutex, so that two appends never get
 * overlapping ranges.  The client brings the end of file it derived from
 * the subfiles (at); this table adds the ranges reserved but perhaps not
 * written yet.  An entry is needed only while a reserved write may still
 * be on its way, so it is forgotten hold_ms after its last reservation,
 * and when the file is truncated.
 *
 * Nothing here waits, and nothing here touches the byte-range locks
 * (mds_lock.h): a process that holds a lock on the whole file (l_len 0)
 * appends like any other.  The table is in memory only; it dies with
 * metad (a write reserved before a restart and still under way then may
 * overlap an append reserved after it).
 *
 * Every function is thread-safe.
 */
#ifndef MDS_APPEND_H
#define MDS_APPEND_H

#include <stdbool.h>
#include <stdint.h>

/* Files with an append end at once: beyond, an append fails -EAGAIN. */
#define MDS_APPENDS_MAX (1u << 16)

struct mds_appends;

/* A new empty table whose entries live hold_ms, or NULL (no memory). */
struct mds_appends *mds_appends_new(int64_t hold_ms);
/* Free the table; NULL ok. */
void mds_appends_free(struct mds_appends *t);

/*
 * mds_appends_reserve - the range of an append of length bytes to ino
 *
 * *offset = max(at, ino's append end), and [*offset, *offset + length)
 * becomes ino's reservation (its append end moves to its end) -- unless
 * exact and *offset != at, when nothing changes.  now_ms is clf_now_ms().
 * *reserved (when not NULL) says which.  Returns 0, -EFBIG past the
 * largest offset, -EAGAIN when MDS_APPENDS_MAX files hold append ends.
 */
int mds_appends_reserve(struct mds_appends *t, uint64_t ino, int64_t at,
			int64_t length, bool exact, int64_t now_ms,
			int64_t *offset, bool *reserved);

/* Forget ino's append end (its file was truncated or removed). */
void mds_appends_forget(struct mds_appends *t, uint64_t ino);

/* Files with an append end now (for tests and STATUS). */
unsigned mds_appends_count(struct mds_appends *t);

#endif /* MDS_APPEND_H */
