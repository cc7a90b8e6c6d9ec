/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layout.h -- a file's physical layout, decoded, and the views a client
 * declares on it.
 *
 * A layout is a displacement plus n subfile types (a partitioning
 * pattern, CLF_Pattern_check) and the iod of each subfile.  File bytes
 * before the displacement live in one more subfile, the head, at subfile
 * offset = file offset.
 *
 * A view (displacement + type) is intersected once with every subfile
 * (clf_viewmap_create); afterwards gathering the bytes of a view range for
 * one subfile, or scattering them back, walks the stored mappings and
 * never recomputes them.
 */
#ifndef CLF_LAYOUT_H
#define CLF_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "clf.h"

struct clf_layout {
	int64_t disp;		/* bytes before the pattern (head subfile) */
	uint32_t head_iod;	/* iod of the head subfile */
	int nsub;		/* subfiles of the pattern, >= 1 */
	CLF_Datatype *types;	/* owned references, nsub */
	uint32_t *iods;		/* nsub iod indexes */
};

/* The index standing for the head subfile in the functions below. */
#define CLF_HEAD(layout) ((layout)->nsub)

/*
 * A layout of nsub subfiles from types (borrowed; new references are
 * taken), checked with CLF_Pattern_check.  iods may be NULL: subfile j
 * then lives on iod j % niods.
 */
int clf_layout_create(int64_t disp, int nsub, const CLF_Datatype *types,
		      const uint32_t *iods, uint32_t head_iod,
		      struct clf_layout **out);

/* Round-robin striping: stripe bytes to each of count subfiles in turn,
 * subfile j on iod (first + j) % niods. */
int clf_layout_round_robin(int64_t stripe, int count, uint32_t first,
			   uint32_t niods, struct clf_layout **out);

void clf_layout_free(struct clf_layout *layout);

struct clf_viewmap {
	int64_t disp;
	CLF_Datatype type;	/* owned reference */
	int64_t head_end;	/* file offset where the pattern starts */
	int nmaps;		/* nsub + 1 (the head last) */
	CLF_Mapping **maps;	/* owned; NULL where the view has no byte */
};

/* Intersect the view (disp, type) with every subfile of layout. */
int clf_viewmap_create(const struct clf_layout *layout, int64_t disp,
		    CLF_Datatype type, struct clf_viewmap **out);

void clf_viewmap_free(struct clf_viewmap *view);

/* Does the view ever touch subfile j (CLF_HEAD for the head)? */
static inline int clf_viewmap_touches(const struct clf_viewmap *view, int j)
{
	return view->maps[j] != NULL;
}

/* Bytes of view range [lo, hi) in subfile j. */
int64_t clf_viewmap_count(const struct clf_viewmap *view, int j, int64_t lo,
		       int64_t hi);

/*
 * Walk the runs of view range [lo, hi) in subfile j, as
 * CLF_Mapping_foreach does, the head's clipped to the head's bytes.
 */
int clf_viewmap_foreach(const struct clf_viewmap *view, int j, int64_t lo,
		     int64_t hi, CLF_Segment_fn fn, void *arg);

/*
 * The memory side of an access: the user buffer holds the view bytes of
 * [lo, lo + size(memtype)) at the memory offsets memtype selects (NULL
 * memtype: contiguous).  Created once per access type.
 */
struct clf_memlayout {
	CLF_Datatype type;	/* owned reference, or NULL: contiguous */
	CLF_Mapping *map;	/* memtype onto plain memory; NULL: contiguous */
};

int clf_memlayout_init(struct clf_memlayout *mem, CLF_Datatype memtype);
void clf_memlayout_release(struct clf_memlayout *mem);

/*
 * Gather into packed the bytes of view range [lo, hi) that lie in
 * subfile j, taken from the user buffer buf laid out by mem: view byte
 * base + w is at memory linear offset w (base <= lo; a large access is
 * moved in several ranges with one base).  Scatter is the mirror image.
 * Return the bytes moved, or a negative errno.
 */
int64_t clf_viewmap_gather(const struct clf_viewmap *view, int j, int64_t lo,
			   int64_t hi, int64_t base, const void *buf,
			   const struct clf_memlayout *mem, void *packed);
int64_t clf_viewmap_scatter(const struct clf_viewmap *view, int j,
			    int64_t lo, int64_t hi, int64_t base, void *buf,
			    const struct clf_memlayout *mem,
			    const void *packed);

/*
 * The fault hook CLF_TEST_CLIENT_FAIL_COPY=1: every gather and scatter
 * fails with -ENOMEM (layout.c); a send of the user's bytes in place
 * that stands for a gather gives way to one.
 */
bool clf_viewmap_copy_fault(void);

#endif /* CLF_LAYOUT_H */
