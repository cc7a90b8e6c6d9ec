/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mapping_mem.h -- what a mapping costs in memory, for a daemon that keeps
 * mappings made from what clients sent (the iod's view registry) and must
 * charge them to someone.  Private to libclf and the daemons.
 */
#ifndef CLF_MAPPING_MEM_H
#define CLF_MAPPING_MEM_H

#include <stddef.h>

#include "clf.h"

/*
 * clf_mapping_footprint - bytes of heap a mapping holds
 *
 * Everything reachable from m: the mapping, its two types, the sets of
 * its intersection and their parts, its table of runs, each shared set
 * counted once, with an allocator overhead per block.  Sets m shares with
 * other holders (a type the caller also keeps) are counted as m's: the
 * figure is what freeing everything else would leave alive, at most.
 * Costs O(distinct sets).  0 for NULL; SIZE_MAX when out of memory for
 * the walk (so that a caller comparing against a limit refuses).
 */
size_t clf_mapping_footprint(const CLF_Mapping *m);

#endif /* CLF_MAPPING_MEM_H */
