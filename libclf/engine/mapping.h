/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mapping.h -- questions about a mapping (CLF_Mapping_create) that its
 * users ask without reaching into it (mapping_i.h is the engine's own).
 */
#ifndef CLF_MAPPING_H
#define CLF_MAPPING_H

#include <stdbool.h>

#include "clf.h"

/*
 * True when m was made tile by tile of the view against the subfile's
 * periods (no common period could be formed: mapping_tiles.c) rather
 * than from one period of the intersection.  m is borrowed, not NULL.
 */
bool clf_mapping_tiled(const CLF_Mapping *m);

#endif /* CLF_MAPPING_H */
