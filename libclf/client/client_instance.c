// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_instance.c -- the client of this process (CLF_init makes it,
 * client_init.c) and its iods: the bottom of the client layer, which
 * every other client file may call and which calls none of them.
 */
#include <errno.h>

#include "client_i.h"
#include "error.h"

struct clf_client *clf_client_instance;

int clf_client_get(struct clf_client **out)
{
	if (!clf_client_instance)
		return clf_fail(EINVAL, "clf: CLF_init() has not been called");
	*out = clf_client_instance;
	return 0;
}

struct clf_peer *clf_client_iod(struct clf_client *cl, uint32_t i)
{
	if (i >= cl->cfg->niods) {
		clf_fail(EINVAL, "clf: the layout names iod %u, the configuration has %u",
			 i, cl->cfg->niods);
		return NULL;
	}
	return &cl->iods[i];
}
