/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mapping_prog.h -- a mapping's runs as progressions, and the copy loops
 * that move them.  Private to libclf and the daemons.
 *
 * Fine-grained mismatched layouts have millions of runs (a CYCLIC(1)
 * view over round-robin stripes: one per byte), and a callback per run
 * costs tens of ns: 35 MB/s.  Yet seen from one side the runs are few
 * and regular.  The client, whose buffer is in view order, needs only
 * where the subfile's bytes lie in the view: runs joined while the view
 * offset continues (whole rows of a checkerboard).  The iod, whose
 * packed data are in view order too, needs only where they lie in the
 * subfile: runs joined while the subfile offset continues; what is left
 * are equal runs at a constant stride (1 byte every 2).  A progression
 * says so in one record: n runs of len bytes, the i-th at side offset
 * x + i * dx and at packed offset c + i * len.
 *
 * A periodic mapping whose stretch (mapping_table.c) holds at most
 * MAP_PROG_MAX progressions on a side keeps them in a table, found once
 * at creation; a walk reads it stretch after stretch, O(1) per
 * progression, and the copies run compiled loops (fixed sizes for runs of
 * 1, 2, 4, 8 and 16 bytes).  Other mappings give their runs through
 * CLF_Mapping_foreach, joined into progressions as they come.
 */
#ifndef CLF_MAPPING_PROG_H
#define CLF_MAPPING_PROG_H

#include <stdbool.h>
#include <stdint.h>

#include "clf.h"

enum clf_prog_side {
	CLF_PROG_VIEW = 0,	/* x: view offsets; joined while they continue */
	CLF_PROG_SUB = 1,	/* x: subfile offsets; the same */
};

/* n runs of len bytes: run i at x + i * dx, packed c + i * len. */
struct clf_prog {
	int64_t c;	/* packed offset from the walked range's first byte */
	int64_t x;	/* view or subfile offset of the first run */
	int64_t len;
	int64_t dx;	/* meaningless when n == 1 */
	int64_t n;
};

/*
 * Does run (c, x, len) continue progression p?  Both the building of a
 * table (mapping_prog_build.c) and the walks without one join by it.
 */
static inline bool clf_prog_continues(const struct clf_prog *p, int64_t c,
				      int64_t x, int64_t len)
{
	if (p->len != len || p->c + p->n * p->len != c)
		return false;
	if (p->n == 1)
		return x > p->x + p->len;
	return x == p->x + p->n * p->dx;
}

typedef int (*clf_prog_fn)(const struct clf_prog *p, void *arg);

/*
 * clf_mapping_progs - the runs of view bytes [lo, hi) as progressions
 *
 * In increasing view order, the packed bytes [c_from, c_to) of the range
 * only (c_to = INT64_MAX: all).  A non-zero return of fn stops the walk
 * and is returned; otherwise 0 or a negative errno.  O(1) per
 * progression with a table (clf_mapping_has_progs), O(depth) per run
 * without, when c_from must also be walked up to.
 */
int clf_mapping_progs(const CLF_Mapping *m, int64_t lo, int64_t hi,
		      enum clf_prog_side side, int64_t c_from, int64_t c_to,
		      clf_prog_fn fn, void *arg);

/* Does m walk side by a table (so a c_from costs O(log table))? */
bool clf_mapping_has_progs(const CLF_Mapping *m, enum clf_prog_side side);

/*
 * clf_mapping_cut - the view offset *at in [lo, hi] such that [lo, *at)
 * holds want bytes of the subfile (hi when it holds fewer): 0 or a
 * negative errno.  O(log table) with a view table.
 */
int clf_mapping_cut(const CLF_Mapping *m, int64_t lo, int64_t hi,
		    int64_t want, int64_t *at);

/*
 * clf_prog_copy - copy p's runs between packed + p->c and the side
 * buffer, which holds side offset side_off at side[0]: into packed when
 * to_packed, out of it otherwise.
 */
void clf_prog_copy(const struct clf_prog *p, uint8_t *packed, uint8_t *side,
		   int64_t side_off, bool to_packed);

/*
 * clf_prog_copy_owned - the same, where no one else touches side's bytes
 * while it runs (a daemon's staging buffer): a scatter may then store the
 * bytes between runs again with their own values, which lets it move 16
 * packed bytes a step (mapping_copy.c).
 */
void clf_prog_copy_owned(const struct clf_prog *p, uint8_t *packed,
			 uint8_t *side, int64_t side_off, bool to_packed);

#endif /* CLF_MAPPING_PROG_H */
