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

#endif
