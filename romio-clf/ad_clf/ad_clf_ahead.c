/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_ahead.c -- read-ahead for sequential contiguous reads (hint
 * clf_read_ahead), for programs reading a file far away piece by piece:
 * over a 50 ms link each MPI_File_read of 1 MiB waited a round trip, and
 * a 64 MiB file read in such pieces took 13.4 s where the link moves it
 * in 5.4 s (docs/performance.md, MPI-IO/L's comparison, "direct").
 *
 * When a read starts where this process's previous read on the file
 * ended, a thread of the file's (one per open file, started then) reads
 * the next window of clf_read_ahead bytes, and the one after it, into
 * two buffers, while the program computes or copies; reads that fall in
 * a window are served from it, and each window served to its end is
 * refilled with the one after the other.  A read that is not sequential,
 * or larger than a window, goes to the iods as before.
 *
 * MPI's consistency rules decide what may be kept.  Only a file opened
 * read-only is read ahead, in non-atomic mode, so this process writes
 * nothing the windows could hide.  Another process's writes become
 * visible to it under those rules only after a sync-barrier-sync, and a
 * read-only handle cannot be synced (MPICH refuses): only a reopen, a
 * new handle with no windows, must see them.  Atomic mode
 * (MPI_File_set_atomicity(1)) reads past the windows and drops them,
 * and so do MPI_File_sync where it is called (ADIOI_CLF_Flush) and the
 * close -- a window being read at that moment is thrown away when it
 * comes.  So a program that follows the rules reads what it would read
 * without the hint.
 *
 * The thread reads through the file's byte-view descriptor, as the
 * blocking reads do: on the same connections, one access at a time (the
 * window read and a missed read wait for each other, never interleave).
 */

#include "ad_clf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define AHEAD_BUFS 2

struct ADIOI_CLF_Ahead {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;        /* a window filled, freed, or stop */
    int cfd;                    /* the byte-view descriptor; borrowed */
    int64_t window;             /* bytes per window */
    CLF_Datatype type;          /* window bytes in memory; owned */
    /* Guarded by lock: */
    char *buf[AHEAD_BUFS];
    int64_t off[AHEAD_BUFS];    /* file offset of buf[i] */
    int64_t len[AHEAD_BUFS];    /* bytes in it (short at the end) */
    int state[AHEAD_BUFS];      /* AHEAD_FREE, _READING, _FULL */
    int64_t next;               /* offset of the next window to read; -1: none */
    uint64_t gen;               /* bumped at every drop */
    int stop;
    int64_t last_end;           /* where this process's last read ended; -1 */
};

#define AHEAD_FREE 0
#define AHEAD_READING 1
#define AHEAD_FULL 2

static void *ADIOI_CLF_Ahead_thread(void *arg)
{
    struct ADIOI_CLF_Ahead *a = arg;

    pthread_mutex_lock(&a->lock);
    for (;;) {
        int i, k = -1;
        int64_t off;
        uint64_t gen;
        ssize_t n;

        while (!a->stop && (a->next < 0 || k < 0)) {
            for (i = 0, k = -1; i < AHEAD_BUFS && k < 0; i++)
                if (a->state[i] == AHEAD_FREE)
                    k = i;
            if (a->next < 0 || k < 0)
                pthread_cond_wait(&a->cond, &a->lock);
        }
        if (a->stop)
            break;
        off = a->next;
        gen = a->gen;
        a->next += a->window;
        a->state[k] = AHEAD_READING;
        a->off[k] = off;
        pthread_mutex_unlock(&a->lock);

        n = CLF_ncread_at(a->cfd, off, a->buf[k], a->type);

        pthread_mutex_lock(&a->lock);
        if (gen != a->gen || n <= 0) {
            /* Dropped meanwhile (its bytes may predate a sync), or
             * nothing there: the window is not kept. */
            a->state[k] = AHEAD_FREE;
            if (gen == a->gen)
                a->next = -1;   /* the end, or a failure: stop here */
        } else {
            a->state[k] = AHEAD_FULL;
            a->len[k] = n;
            if (n < a->window)
                a->next = -1;   /* the end of the file as it was */
        }
        pthread_cond_broadcast(&a->cond);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static struct ADIOI_CLF_Ahead *ADIOI_CLF_Ahead_new(int cfd, int64_t window)
{
    struct ADIOI_CLF_Ahead *a = calloc(1, sizeof(*a));
    int i;

    if (!a)
        return NULL;
    a->cfd = cfd;
    a->window = window;
    a->next = -1;
    a->last_end = -1;
    a->type = CLF_Type_vector(0, window - 1, window, 1, CLF_BYTE);     /* window bytes */
    for (i = 0; i < AHEAD_BUFS; i++)
        a->buf[i] = malloc(window);
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, NULL);
    if (a->type && a->buf[0] && a->buf[1] &&
        !pthread_create(&a->thread, NULL, ADIOI_CLF_Ahead_thread, a))
        return a;
    for (i = 0; i < AHEAD_BUFS; i++)
        free(a->buf[i]);
    CLF_Type_free(&a->type);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cond);
    free(a);
    return NULL;
}

void ADIOI_CLF_Ahead_report(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    char value[32];

    snprintf(value, sizeof(value), "%lld", (long long) fs->read_ahead);
    ADIOI_Info_set(fd->info, "clf_read_ahead", value);
}

/* Without the hint: a clf:// name (ROMIO may have taken "clf:" off it),
 * most likely a file far away, is read ahead. */
#define AHEAD_DEFAULT (16 << 20)

/* Whether the file is read ahead at all (see the top of the file). */
static int ADIOI_CLF_Ahead_applies(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;

    if (fs->read_ahead < 0) {
        fs->read_ahead = fd->filename && (!strncmp(fd->filename, "clf://", 6) ||
                                          !strncmp(fd->filename, "//", 2)) ? AHEAD_DEFAULT : 0;
        ADIOI_CLF_Ahead_report(fd);
    }

    return fs->read_ahead > 0 && (fd->access_mode & ADIO_RDONLY) && !fd->atomicity &&
        fs->lin_fd >= 0;
}

/* The window of a holding file offset pos, or -1 (lock held). */
static int ADIOI_CLF_Ahead_find(const struct ADIOI_CLF_Ahead *a, int64_t pos)
{
    int i;

    for (i = 0; i < AHEAD_BUFS; i++)
        if (a->state[i] != AHEAD_FREE && pos >= a->off[i] && pos < a->off[i] + a->window)
            return i;
    return -1;
}

int64_t ADIOI_CLF_Ahead_read(ADIO_File fd, void *buf, ADIO_Offset off, ADIO_Offset len)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Ahead *a;
    int64_t pos = off, end = off + len;
    int i;

    if (!ADIOI_CLF_Ahead_applies(fd)) {
        ADIOI_CLF_Ahead_drop(fd);       /* atomic mode now: nothing kept */
        return 0;
    }
    if (len <= 0 || len > fs->read_ahead)
        return 0;
    if (!fs->ahead) {
        fs->ahead = ADIOI_CLF_Ahead_new(fs->lin_fd, fs->read_ahead);
        if (!fs->ahead) {
            fs->read_ahead = 0; /* no memory or thread: read as before */
            return 0;
        }
    }
    a = fs->ahead;
    pthread_mutex_lock(&a->lock);
    /* Copy from the windows holding the bytes, in order, waiting for one
     * being read; stop at a byte none holds, or at the file's end. */
    while (pos < end && (i = ADIOI_CLF_Ahead_find(a, pos)) >= 0) {
        int64_t have, m;

        if (a->state[i] == AHEAD_READING) {
            pthread_cond_wait(&a->cond, &a->lock);
            continue;
        }
        have = a->off[i] + a->len[i] - pos;
        if (have <= 0)
            break;              /* past the end the window saw */
        m = have < end - pos ? have : end - pos;
        memcpy((char *) buf + (pos - off), a->buf[i] + (pos - a->off[i]), m);
        pos += m;
        if (pos == a->off[i] + a->len[i]) {
            /* Served to its end: room for the window after next. */
            a->state[i] = AHEAD_FREE;
            pthread_cond_broadcast(&a->cond);
            if (a->len[i] < a->window)
                break;          /* the end of the file */
        }
    }
    if (pos == off && off == a->last_end) {
        /* Sequential, and not held: the caller reads this one, the
         * thread the next windows. */
        a->gen++;
        for (i = 0; i < AHEAD_BUFS; i++)
            if (a->state[i] == AHEAD_FULL)
                a->state[i] = AHEAD_FREE;
        a->next = end;
        pthread_cond_broadcast(&a->cond);
    }
    a->last_end = end;
    pthread_mutex_unlock(&a->lock);
    return pos - off;
}

void ADIOI_CLF_Ahead_drop(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Ahead *a = fs ? fs->ahead : NULL;
    int i;

    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->gen++;
    a->next = -1;
    a->last_end = -1;
    for (i = 0; i < AHEAD_BUFS; i++)
        if (a->state[i] == AHEAD_FULL)
            a->state[i] = AHEAD_FREE;
    pthread_mutex_unlock(&a->lock);
}

void ADIOI_CLF_Ahead_free(ADIO_File fd)
{
    ADIOI_CLF_fs *fs = fd->fs_ptr;
    struct ADIOI_CLF_Ahead *a = fs ? fs->ahead : NULL;
    int i;

    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->stop = 1;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    for (i = 0; i < AHEAD_BUFS; i++)
        free(a->buf[i]);
    CLF_Type_free(&a->type);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cond);
    free(a);
    fs->ahead = NULL;
}
