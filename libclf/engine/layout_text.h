/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * layout_text.h -- a file's physical layout as readable text, shared by
 * the mount client (the user.clf.layout extended attribute) and the clf
 * command line.  docs/layout-syntax.md is the user's reference.
 *
 * A layout is a displacement plus one datatype per subfile (clf.h,
 * struct clf_subfiles).  The text names a common pattern, or gives every
 * subfile's type:
 *
 *   rr:stripe=64k,count=4            round robin: 64 KiB to each of 4
 *   rr:stripe=1m,count=8,first=2     ... subfile 0 on iod 2, 1 on iod 3 ...
 *   cyclic:k=4k,p=4                  cyclic(k) over p subfiles
 *   cyclic:k=16,p=4,n=8              the same, 8 rounds per period
 *   block:size=1m,p=4                block over p (= cyclic:k=1m,p=4)
 *   grid:rows=8192,cols=8192,p=2x2,k=64x64
 *                                    2-D block-cyclic: a rows x cols byte
 *                                    matrix (row-major), 64x64 tiles dealt
 *                                    over a 2x2 grid of subfiles, subfile
 *                                    r*2+c holding tile rows = r mod 2,
 *                                    tile columns = c mod 2
 *   disp=512;rr:stripe=64k,count=4   512 bytes of header first; the same
 *   rr:stripe=64k,count=4,disp=512   as a field of a named pattern
 *   vec(0,4k-1,8k,1,byte);vec(4k,8k-1,8k,1,byte)
 *                                    one type per subfile, separated by
 *                                    ';' or '|'
 *   disp=1k|struct(vec(0,0,4,1,byte),vec(2,2,4,1,byte))|vec(1,1,2,2)
 *
 * Types: "byte" (CLF_BYTE), "vec(l,r,s,n[,T])" (CLF_Type_vector; T
 * defaults to byte), "struct(T1,T2,...)" (CLF_Type_struct).  Numbers are
 * decimal with an optional k, m, g or t suffix (powers of 1024) and may
 * be combined with + - * and parentheses ("64k-1", "4*1m").  Blanks are
 * allowed between tokens.  Names are lower case.
 *
 * rr, cyclic and block describe the same types (the j-th subfile holds
 * the j-th block of every period); rr also places the subfiles: subfile
 * j on iod (first + j) mod (number of iods), first defaulting to the
 * configuration's first_iod.  The other forms leave placement to the
 * caller (the configuration's first_iod, then consecutive iods).
 */
#ifndef CLF_LAYOUT_TEXT_H
#define CLF_LAYOUT_TEXT_H

#include <stdint.h>

#include "clf.h"

/* The longest text accepted, in bytes. */
#define CLF_LAYOUT_TEXT_MAX (1 << 20)

/* What a layout text says. */
struct clf_layout_desc {
	int64_t disp;		/* bytes before the pattern, >= 0 */
	int count;		/* subfiles, 1..CLF_PROTO_MAX_SUBFILES */
	CLF_Datatype *types;	/* count owned references */
	int first_iod;		/* rr's first=, or -1 when not given */
};

/*
 * clf_layout_text_parse - read a layout text
 *
 * Returns 0 and fills *out (release with clf_layout_desc_release), or
 * -EINVAL with a message saying where and what, e.g.
 *   "layout: at column 12: expected ',' after the stride"
 *   "layout: at column 8: unknown field 'strip' for rr (expected stripe,
 *    count, first, disp)"
 * or naming the rule of CLF_Pattern_check the types break; -E2BIG for a
 * text over CLF_LAYOUT_TEXT_MAX or more subfiles than the protocol
 * allows; -ENOMEM.  *out is written only on success.
 */
int clf_layout_text_parse(const char *text, struct clf_layout_desc *out);

/* Drop the types and zero *desc; NULL ok. */
void clf_layout_desc_release(struct clf_layout_desc *desc);

/*
 * clf_layout_text_format - the text of a layout
 *
 * types: count subfile types (borrowed) with displacement disp.  iods:
 * NULL, or the iod index of each subfile out of niods iods; when given
 * and consecutive from some first iod, a cyclic pattern is written as rr
 * with its first= (omitted when 0); otherwise as cyclic.  Patterns that
 * are not rr/cyclic/block or grid are written in the general form, one
 * type per subfile, such that parsing the text gives back types that
 * select the same bytes with the same extents.
 *
 * Returns 0 and a new NUL-terminated string in *out (caller frees), or
 * -EINVAL (bad arguments), -ENOMEM.
 */
int clf_layout_text_format(int64_t disp, int count, const CLF_Datatype *types,
			   const int *iods, int niods, char **out);

/*
 * clf_type_text_parse - read ONE datatype in the same syntax
 *
 * For a view, or anything else that is one type rather than a layout:
 *
 *   byte | vec(l,r,s,n[,T]) | struct(T1,...)
 *   cyclic:k=64,p=4,part=2           subfile 2's type of that pattern
 *   rr:stripe=64k,count=4,part=0     (also block: and grid:)
 *
 * A named pattern needs part=J (0 <= J < its subfiles) and gives the
 * J-th type it would make for a layout.  A displacement ("disp=512;T"
 * or a named pattern's disp=) is accepted only when disp is not NULL:
 * *disp is then its value, or -1 when the text gives none.
 *
 * Returns 0 and a new reference in *out (CLF_Type_free), or -EINVAL
 * with "type: at column C: <what>", -E2BIG, -ENOMEM.  Outputs are
 * written only on success.
 */
int clf_type_text_parse(const char *text, CLF_Datatype *out, int64_t *disp);

/*
 * clf_type_text_format - one type in the general form ("vec(0,64k-1,
 * 256k,1)"), which clf_type_text_parse reads back as a type selecting
 * the same bytes with the same extent.  Returns 0 and a new string in
 * *out (caller frees), -EINVAL for NULL, -ENOMEM.
 */
int clf_type_text_format(CLF_Datatype type, char **out);

#endif /* CLF_LAYOUT_TEXT_H */
