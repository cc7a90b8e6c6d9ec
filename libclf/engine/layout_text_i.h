/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layout_text_i.h -- what the layout text parser and formatter share:
 * the named patterns as types, and type equality.
 */
#ifndef CLF_LAYOUT_TEXT_I_H
#define CLF_LAYOUT_TEXT_I_H

#include <stdbool.h>
#include <stdint.h>

#include "clf.h"

/*
 * cyclic(k) over p subfiles, n rounds per period: types[j] =
 * vec(j*k, j*k+k-1, p*k, n, byte), extent n*p*k.  rr:stripe=k,count=p
 * and block:size=k,p=p are n = 1.  Returns 0 and p new references, or a
 * negative errno with a message (no column).
 */
int clf_lt_cyclic(int64_t k, int p, int64_t n, CLF_Datatype *types);

/*
 * 2-D block-cyclic distribution of a rows x cols byte matrix stored row
 * by row: tiles of kr x kc bytes dealt over a pr x pc grid of subfiles;
 * subfile a*pc + b holds the tiles (I, J) with I mod pr = a and J mod pc
 * = b.  rows must be a multiple of pr*kr and cols of pc*kc.  Returns 0
 * and pr*pc new references in types, or a negative errno with a message.
 */
int clf_lt_grid(int64_t rows, int64_t cols, int pr, int pc, int64_t kr,
		int64_t kc, CLF_Datatype *types);

/* Same extent and the same description (hence the same bytes). */
bool clf_lt_type_same(CLF_Datatype a, CLF_Datatype b);

#endif /* CLF_LAYOUT_TEXT_I_H */
