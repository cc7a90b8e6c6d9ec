/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mapping_i.h -- inside a CLF_Mapping: the sets it is made of and its
 * ways of producing runs.  A periodic mapping holds the intersection of
 * view and subfile over their common period and walks it by table
 * (mapping_table.c) or by cursors (mapping_walk.c); a tiled mapping holds
 * only the two patterns and cuts the accessed view pieces against the
 * subfile's as it goes (mapping_tiles.c).  mapping.c chooses.
 */
#ifndef CLF_MAPPING_I_H
#define CLF_MAPPING_I_H

#include <stdbool.h>
#include <stdint.h>

#include "falls_cursor.h"
#include "type.h"

struct clf_prog;	/* mapping_prog.h */

/* One run of a period's table: view and subfile offsets in the period. */
struct map_run {
	int64_t v, s;		/* bytes of view / subfile before it, from
				 * the period's start */
	int64_t len;
};

/*
 * One pattern of a tiled mapping: selects x >= origin iff (x - origin) %
 * period is selected by the type's set, cut into ordered parts for a
 * cursor.  A pattern that selects its whole period is kept as `full`
 * instead: its one piece never ends, where a cursor would stop at every
 * period's end.
 */
struct map_side {
	int64_t origin, period;
	bool full;
	int64_t leaves;		/* leaf blocks a period (saturated), 0 if full */
	struct fsplit parts;	/* nr == 0 when full */
};

struct clf_mapping {
	struct clf_type *view, *sub; /* own a reference each */
	int64_t view_disp, sub_disp;
	int64_t origin;	      /* max of the displacements */
	/*
	 * Tiled: no common period is formed (see mapping_tiles.c); the
	 * fields from period to ntable are then unused (0 / NULL).
	 */
	bool tiled;
	bool touches;	      /* tiled: some view byte may be a subfile byte */
	struct map_side vside, sside; /* tiled: the view and the subfile */
	int64_t period;	      /* lcm of the extents */
	struct fset *common;  /* I, relative to origin, in [0, period) */
	struct fset *only_v;  /* Dv: the view's bytes not in the subfile */
	struct fset *only_s;  /* Ds: the subfile's bytes not in the view */
	/* The same three cut into ordered parts, for the walk's cursors. */
	struct fsplit common_parts, only_v_parts, only_s_parts;
	int64_t v0, s0;	      /* view / subfile bytes before origin */
	int64_t vper, sper;   /* view / subfile bytes per period past it */
	/*
	 * The runs of one period when few (NULL otherwise); owned.  They
	 * cover tper file bytes (tvper view and tsper subfile bytes):
	 * the period, or a shorter stretch that I, Dv and Ds all repeat
	 * with tk times from each period's start; the tail of the period
	 * after those (ttail bytes, 0 when tper divides it) is walked by
	 * cursors (mapping_table.c).
	 */
	struct map_run *table;
	int ntable;
	int64_t tper, tvper, tsper, tk, ttail;
	/*
	 * The same stretch's runs as progressions (mapping_prog.h), by
	 * view [CLF_PROG_VIEW] and by subfile [CLF_PROG_SUB], c and x from
	 * the stretch's start; owned, NULL when more than MAP_PROG_MAX or
	 * when the stretch does not divide the period (ttail).  tcper: the
	 * common bytes of a stretch.
	 */
	struct clf_prog *prog[2];
	int nprog[2];
	int64_t tcper;
};

/*
 * Runs go to the caller through an emitter that merges a run into the
 * previous one when both offsets continue it: runs that a period boundary
 * or a change of method cuts are joined again, so runs stay maximal.
 * With sub_only (CLF_Mapping_foreach_packed) it merges whenever the
 * subfile offset continues.
 */
struct map_emit {
	CLF_Segment_fn fn;
	void *arg;
	int64_t v, s, len;	/* pending run; len 0: none */
	bool sub_only;
};

static inline int map_emit_run(struct map_emit *e, int64_t v, int64_t s,
			       int64_t len)
{
	int err = 0;

	if (e->len && e->s + e->len == s &&
	    (e->sub_only || e->v + e->len == v)) {
		e->len += len;
		return 0;
	}
	if (e->len)
		err = e->fn(e->v, e->s, e->len, e->arg);
	e->v = v;
	e->s = s;
	e->len = len;
	return err;
}

static inline int map_emit_flush(struct map_emit *e)
{
	int err = e->len ? e->fn(e->v, e->s, e->len, e->arg) : 0;

	e->len = 0;
	return err;
}

/*
 * The runs of view bytes [view_lo, view_hi) by cursors over I, Dv and Ds
 * (mapping_walk.c): any mapping, O(1) to O(depth) per run.  Returns 0,
 * the callback's value, or a negative errno.
 */
int map_walk_cursors(const struct clf_mapping *m, int64_t view_lo,
		     int64_t view_hi, struct map_emit *e);

/* The same, from file offset first (the view byte there or after it). */
int map_walk_from(const struct clf_mapping *m, int64_t first,
		  int64_t view_hi, struct map_emit *e);

/* The runs of I in file bytes [first, last], by cursors. */
int map_walk_file(const struct clf_mapping *m, int64_t first, int64_t last,
		  struct map_emit *e);

/*
 * Progressions a side's table may hold, and how many runs of a stretch
 * its creation may walk to find them (at ~30 ns a run: 4 ms at most).
 */
#define MAP_PROG_MAX 4096
#define MAP_PROG_RUNS_MAX (1 << 17)

/*
 * Progressions being built from runs in view order (mapping_prog_build.c):
 * runs whose x continues are joined first, then equal runs at a
 * constant stride.  full: more than max progressions (p is then
 * incomplete).
 */
struct map_prog_build {
	struct clf_prog *p;	/* owned */
	int n, alloc, max;
	bool full;
	int64_t pc, px, plen;	/* the run being joined; plen 0: none */
};

/* Add run (c, x, len): 0 or -ENOMEM. */
int map_prog_add(struct map_prog_build *b, int64_t c, int64_t x, int64_t len);
/* Add the run being joined: 0 or -ENOMEM. */
int map_prog_finish(struct map_prog_build *b);

/* I's bytes in [origin, f), for f >= origin. */
int64_t map_common_before(const struct clf_mapping *m, int64_t f);

/* How many runs a period may have for a table; tests may lower it. */
#define MAP_TABLE_MAX 4096
extern int map_table_max;

/*
 * Build m->table when one period, or the shortest divisor of it that I,
 * Dv and Ds repeat with, has at most map_table_max runs.  0, or -ENOMEM.
 */
int map_table_build(struct clf_mapping *m);

/* The same runs as map_walk_cursors, from the table: O(1) per run. */
int map_walk_table(const struct clf_mapping *m, int64_t view_lo,
		   int64_t view_hi, struct map_emit *e);

/*
 * Tiled mappings (mapping_tiles.c).  map_tiles_build fills m->vside,
 * m->sside and m->touches from m->view, m->sub and their displacements:
 * 0, or -ENOMEM.  map_tiles_release undoes it (also after a failed build).
 */
int map_tiles_build(struct clf_mapping *m);
void map_tiles_release(struct clf_mapping *m);

/* The runs of view bytes [view_lo, view_hi), and how many bytes they hold. */
int map_tiles_walk(const struct clf_mapping *m, int64_t view_lo,
		   int64_t view_hi, struct map_emit *e);
int64_t map_tiles_count(const struct clf_mapping *m, int64_t view_lo,
			int64_t view_hi);

/*
 * Tests set this to make every mapping tiled, to compare both modes on
 * the same random cases; 0 otherwise.
 */
extern int map_tiles_always;

/*
 * The FALLS made by periodic intersections so far, all mappings: an
 * instrument for tests that the choice of method costs what the
 * estimate says.
 */
extern _Atomic int64_t map_periodic_work;

#endif /* CLF_MAPPING_I_H */
