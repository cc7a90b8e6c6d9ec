/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stage_note.h -- the client's half of the write-back journal whose
 * lines clf_ll.h (CLF_LL_STAGE_JOURNAL) describes.
 */
#ifndef CLF_STAGE_NOTE_H
#define CLF_STAGE_NOTE_H

#include <stdint.h>

#include "clf_ll.h"

/*
 * Note inode ino, opened with flags, as closed for write-back when the
 * instance has a backing directory and flags allow writing; nothing
 * otherwise.  0, or a negative errno with a message naming the journal.
 */
int clf_stage_note_close(uint64_t ino, int flags);

/*
 * Note inode ino at clf path as holding what the backing directory
 * holds (staged in): every note of it so far is done.  0, or a negative
 * errno with a message.
 */
int clf_stage_note_done(uint64_t ino, const char *path);

/*
 * After clf removed path (a file or an empty directory; "/a/b", from
 * clf's root): note "R <path>" so that the stager removes BACKING/path
 * too, in journal order with the other notes.  Nothing without a
 * backing directory.  0, or a negative errno with a message saying that
 * clf removed it and the backing directory will not follow.
 */
int clf_stage_note_remove(const char *path);

/* The same for a rename of from to to ("N <from>\t<to>"). */
int clf_stage_note_rename(const char *from, const char *to);

/* CLF_rename without the note: a hidden copy of a file staged in, put
 * in place (the backing directory has it already). */
int clf_rename_unnoted(const char *from, const char *to);

/* Whether this client's instance has a backing directory. */
int clf_stage_backed(void);

/*
 * The clf path of entry name of directory inode dir ("/a/b/name"), the
 * directory searched for from the root (READDIR of the directories on
 * the way; the last 16 found are remembered and checked with one
 * LOOKUP): for the inode-based calls of the mount, which know no paths
 * (stage_path.c).  0, or a negative errno.
 */
int clf_stage_path_of(uint64_t dir, const char *name, char *out, size_t len);

/* Room for a path of clf_stage_ll_path. */
#define CLF_STAGE_PATH_LEN (CLF_PROTO_PATH_MAX + 2)

/* clf_stage_path_of into out (CLF_STAGE_PATH_LEN bytes) when the
 * instance has a backing directory, else "": 0 or a negative errno with
 * a message (the operation must not go on: it could not be noted). */
int clf_stage_ll_path(uint64_t dir, const char *name, char *out);

#endif
