/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * engine.h -- the interface of libclf's lowest layer, the datatype engine:
 * nested FALLS, PITFALLS types, partitioning patterns, mappings between a
 * view and a subfile, layouts and the views declared on them, layouts as
 * text, and the bounds-checked byte cursor types are encoded with.  No
 * I/O, no threads, nothing from the layers above (runtime, client).
 *
 * What a user program sees of it is include/clf.h (CLF_Type_*,
 * CLF_Mapping_*, CLF_Pattern_check); this header adds what the layers
 * above and the daemons use inside the tree.  Every header of
 * libclf/engine that this file does not include is private to the
 * engine's own files (scripts/depgraph.sh checks it).
 */
#ifndef CLF_ENGINE_H
#define CLF_ENGINE_H

#include "clf.h"

#include "arith.h"		/* overflow-checked int64 arithmetic */
#include "error.h"		/* clf_fail: negative errno plus a message */
#include "wire.h"		/* little-endian cursor, sticky on error */
#include "falls.h"		/* nested FALLS sets */
#include "type.h"		/* struct clf_type behind CLF_Datatype */
#include "mapping.h"		/* what a mapping is made of */
#include "mapping_mem.h"	/* what a mapping costs in memory */
#include "mapping_prog.h"	/* its runs as progressions; copy loops */
#include "layout.h"		/* a file's layout and the views on it */
#include "layout_text.h"	/* rr:stripe=64k,count=4 and friends */

#endif /* CLF_ENGINE_H */
