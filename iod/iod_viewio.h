/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_viewio.h -- reading and writing a subfile through a registered view.
 *
 * A VIEW_WRITE carries, packed in view order, exactly the view bytes of a
 * view range [lo, hi) that fall into one subfile; the iod scatters them to
 * their subfile offsets by the view's stored mapping.  A VIEW_READ gathers
 * them.  (SUB_READ and SUB_WRITE, contiguous subfile ranges, are plain
 * iod_store_read/iod_store_write calls.)
 *
 * The mapping yields maximal runs in view order.  They become as few
 * system calls as possible:
 *
 *   - runs whose subfile offsets follow each other form one extent: one
 *     pread/pwrite straight to or from the packed data (the packed data of
 *     consecutive runs is contiguous too).  The identity case -- a view
 *     that falls on its subfile -- is one run, so one call, no copy.
 *
 *   - many small extents close together are "sieved": a read reads their
 *     covering span once into a buffer and copies the pieces out; a write
 *     reads the span, copies the pieces in and writes the span back, all
 *     under the subfile's range lock over the span, so that concurrent
 *     writers of other bytes of that span (other clients, other views)
 *     wait for it instead of being overwritten with stale bytes.
 *
 * The sieving rule is a cost comparison, with one system call worth
 * call_cost bytes of copying (so "cost" is counted in bytes moved):
 *
 *   a group of n extents with covering span S (S <= window) costs
 *     direct:  n * call_cost + data
 *     sieved:  k * call_cost + k * S + data
 *   where k = 1 for reads (one pread of the span) and 2 for writes (pread
 *   and pwrite of the span); it is sieved iff (n - k) * call_cost > k * S.
 *
 * Groups are formed greedily in view order: an extent joins the current
 * group when the group's span stays within window and grows by at most
 * call_cost / k bytes; an extent of call_cost / k bytes or more is never
 * sieved (moving it twice would cost more than the call it saves).
 * window = 0 or call_cost = 0 turns sieving off.
 *
 * Example: a CYCLIC(1) view over a round-robin subfile gives 1-byte
 * extents every other byte; with the defaults a write of 64 KiB of view
 * data is one pread and one pwrite of a 128 KiB span instead of 65536
 * pwrites, while a view selecting one 64 KiB block per MiB stays direct.
 */
#ifndef IOD_VIEWIO_H
#define IOD_VIEWIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iod_store.h"
#include "iod_view.h"

struct iod_sieve {
	size_t window;	  /* largest span sieved at once, bytes */
	size_t call_cost; /* one system call, in bytes of copying */
};

/*
 * 256 KiB: a span read, filled and written back while it stays in the
 * CPU's cache.  A sieved write of every other byte cost 1.8-2.0 ns of
 * CPU a byte with 4 MiB spans, 1.0-1.1 with 64-256 KiB (pread, scatter,
 * pwrite on tmpfs, this machine); 2 system calls per 256 KiB are noise.
 */
#define IOD_SIEVE_WINDOW_DEFAULT (256u << 10)
#define IOD_SIEVE_CALL_COST_DEFAULT (8u << 10)

/* { IOD_SIEVE_WINDOW_DEFAULT, IOD_SIEVE_CALL_COST_DEFAULT } */
extern const struct iod_sieve iod_sieve_default;

/*
 * iod_view_write - write view bytes [lo, hi) of view v into its subfile
 *
 * data holds, packed in view order, the len view bytes of [lo, hi) that
 * fall into the subfile: len must equal CLF_Mapping_count(v->map, lo, hi).
 * The subfile is created if needed.  sv: sieving parameters, NULL for
 * iod_sieve_default.  Returns len, -EINVAL for a bad range or a wrong
 * len (the message gives the expected one), or a store error (-ENOSPC,
 * -EIO, ...) naming the subfile.  After a failure the subfile may hold
 * part of the data.
 */
int64_t iod_view_write(struct iod_store *st, const struct iod_view *v,
		       int64_t lo, int64_t hi, const void *data, size_t len,
		       const struct iod_sieve *sv);

/*
 * iod_view_read - the mirror image: fill data with the len view bytes of
 * [lo, hi) that fall into the subfile, in view order.  Bytes in holes or
 * past the end of the subfile (or of a subfile never written) read as
 * zeros; the client learns where the file ends from its size.  Returns
 * len, or a negative errno as for iod_view_write.
 */
int64_t iod_view_read(struct iod_store *st, const struct iod_view *v,
		      int64_t lo, int64_t hi, void *data, size_t len,
		      const struct iod_sieve *sv);

/* One participant of a collective access: as for iod_view_write. */
struct iod_coll_src {
	const CLF_Mapping *map;	/* borrowed */
	int64_t lo, hi;		/* its view range */
	void *data;		/* its len packed bytes; borrowed */
	int64_t len;
};

/*
 * iod_view_coll_fits - can iod_view_coll_io move these participants?
 * When every mapping with bytes walks its subfile side by a table
 * (mapping_prog.h) and their bytes fill at least half of the subfile
 * span they cover together.  O(participants * log table).
 */
bool iod_view_coll_fits(const struct iod_coll_src *s, int n);

/*
 * iod_view_coll_io - a collective write (read) of every participant's
 * bytes, in subfile order, through one staging window: the window's span
 * is read, each participant's runs in it are copied in (out) by the
 * compiled loops of its progressions, and a write's span goes back in
 * one pwrite under the range lock -- a few system calls and two copies
 * per byte however fine the runs, where pieces cost a sort entry and an
 * iovec or staging copy per run.  Bytes no participant writes keep their
 * value.  Overlapping writes land in participant order.  Returns the
 * bytes of all participants, or a negative errno (a write may then be
 * partly done).
 */
int64_t iod_view_coll_io(struct iod_store *st, uint64_t file,
			 uint32_t subfile, const struct iod_coll_src *s, int n,
			 int write);

/*
 * The staging window of iod_view_coll_io: 256 KiB per collective
 * operation in progress (cache-sized, as IOD_SIEVE_WINDOW_DEFAULT), a
 * hundred windows for a 32 MiB share.  The caller
 * charges it to the iod's buffer pool (iod_collective.c).
 */
#define IOD_COLL_WINDOW (256u << 10)

#endif /* IOD_VIEWIO_H */
