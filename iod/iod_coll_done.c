// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_coll_done.c -- the collective operations this iod ran lately,
 * in a file it maps shared, so that a restarted iod knows them.
 *
 * Why: an operation's replies go out one per participant after its
 * merged I/O.  When the iod dies between two of them, the participants
 * that had theirs go on to their next call, and the others send their
 * request again to the restarted iod (clf.h, "Recovery"), where it
 * would wait for participants that never come and fail after
 * timeout_ms.  A record of the operation, made when its I/O starts
 * (every participant's request in), tells the restarted iod to serve
 * such a late request on its own: a write puts the same bytes at the
 * same offsets again and a read reads them, which is what an
 * independent access of that participant does.  When the iod died
 * during the I/O, every participant comes again and each is served on
 * its own: the operation is done again, in pieces.
 *
 * A store to a shared mapping is in the page cache at once and outlives
 * the process (kill -9, an abort); it does not outlive the machine,
 * but after a machine's crash no reply of the operation can be sent
 * either, so every participant comes again and finds no record.
 *
 * The table is direct-mapped, SLOTS records by a hash of the key: a
 * record pushed out by another lives shorter, which only matters for a
 * late request that finds none (it then waits as before this table).
 * A record is valid when its check word matches its other words, so a
 * store torn by the iod's death reads as no record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "iod_coll_done.h"

#define SLOTS 8192u		/* a power of two */
#define MAGIC 0x31656e6f646c6f63ull	/* "coldone1" */

struct record {
	uint64_t file, tag;
	uint32_t subfile;
	uint32_t when;		/* CLOCK_REALTIME seconds, low 32 bits */
	uint64_t check;
};

struct table {
	uint64_t magic;
	uint64_t slots;
	struct record r[SLOTS];
};

struct iod_coll_done {
	struct table *t;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t key_hash(uint64_t file, uint32_t subfile, uint64_t tag)
{
	return mix(file ^ mix(tag ^ mix(subfile)));
}

static uint64_t check_of(const struct record *r)
{
	return mix(key_hash(r->file, r->subfile, r->tag) ^ r->when) | 1;
}

static uint32_t now_s(void)
{
	return (uint32_t)time(NULL);
}

int iod_coll_done_open(const char *path, struct iod_coll_done **out)
{
	struct iod_coll_done *d;
	struct table *t;
	int fd, err;

	d = calloc(1, sizeof(*d));
	if (!d)
		return clf_fail(ENOMEM, "iod: out of memory");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = clf_fail(errno, "iod: cannot open '%s': %s", path,
			       strerror(errno));
		goto free_d;
	}
	if (ftruncate(fd, sizeof(*t)) < 0) {
		err = clf_fail(errno, "iod: cannot size '%s': %s", path,
			       strerror(errno));
		goto close_fd;
	}
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (t == MAP_FAILED) {
		err = clf_fail(errno, "iod: cannot map '%s': %s", path,
			       strerror(errno));
		goto close_fd;
	}
	close(fd);
	/* Another version's table, or none: start empty. */
	if (t->magic != MAGIC || t->slots != SLOTS) {
		memset(t, 0, sizeof(*t));
		t->slots = SLOTS;
		t->magic = MAGIC;
	}
	d->t = t;
	*out = d;
	return 0;

close_fd:
	close(fd);
free_d:
	free(d);
	return err;
}

void iod_coll_done_close(struct iod_coll_done *d)
{
	if (!d)
		return;
	munmap(d->t, sizeof(*d->t));
	free(d);
}

void iod_coll_done_note(struct iod_coll_done *d, uint64_t file,
			uint32_t subfile, uint64_t tag)
{
	struct record *r;

	if (!d)
		return;
	r = &d->t->r[key_hash(file, subfile, tag) & (SLOTS - 1)];
	/* Invalid while it changes; the fences keep the compiler from
	 * moving the stores across (a death between them is the case). */
	r->check = 0;
	atomic_signal_fence(memory_order_seq_cst);
	r->file = file;
	r->tag = tag;
	r->subfile = subfile;
	r->when = now_s();
	atomic_signal_fence(memory_order_seq_cst);
	r->check = check_of(r);
}

bool iod_coll_done_seen(const struct iod_coll_done *d, uint64_t file,
			uint32_t subfile, uint64_t tag)
{
	const struct record *r;

	if (!d)
		return false;
	r = &d->t->r[key_hash(file, subfile, tag) & (SLOTS - 1)];
	return r->check && r->check == check_of(r) && r->file == file &&
	       r->tag == tag && r->subfile == subfile &&
	       (uint32_t)(now_s() - r->when) <= IOD_COLL_DONE_KEEP_S;
}
