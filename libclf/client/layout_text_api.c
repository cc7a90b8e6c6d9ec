// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * layout_text_api.c -- layouts as text in the public API (clf.h), for
 * programs that describe a layout in words rather than build datatypes:
 * the ROMIO driver's hint clf_layout and what MPI_File_get_info reports.
 * The syntax and its parser are layout_text.c's (docs/layout-syntax.md).
 */
#include <errno.h>
#include <stdlib.h>

#include "clf_ll.h"
#include "error.h"
#include "layout_text.h"

int CLF_Layout_parse(const char *text, struct clf_layout_info *out)
{
	struct clf_layout_desc desc;
	int *iods;
	int err;

	if (!text || !out)
		return clf_fail(EINVAL, "layout: no text");
	err = clf_layout_text_parse(text, &desc);
	if (err)
		return err;
	iods = calloc(desc.count, sizeof(*iods));
	if (!iods) {
		clf_layout_desc_release(&desc);
		return clf_fail(ENOMEM, "layout: out of memory");
	}
	for (int j = 0; j < desc.count; j++)
		iods[j] = desc.first_iod >= 0 ? desc.first_iod + j : -1;
	*out = (struct clf_layout_info){
		.disp = desc.disp,
		.head_iod = desc.first_iod,
		.count = desc.count,
		.types = desc.types,	/* the references move to *out */
		.iods = iods,
	};
	return 0;
}

int CLF_Layout_format(const struct clf_layout_info *info, char **out)
{
	int niods = clf_ll_niods();

	if (!info || !out || info->count < 1 || !info->types)
		return clf_fail(EINVAL, "layout: nothing to write");
	return clf_layout_text_format(info->disp, info->count, info->types,
				      niods > 0 ? info->iods : NULL, niods,
				      out);
}
