// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_init.c -- CLF_init and CLF_finalize: the client's life.  The
 * top of the client layer: finalizing closes every file, so this calls
 * the file calls and none of them calls back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "clf_ll.h"
#include "error.h"

static void peer_init(struct clf_peer *p, const struct clf_config_daemon *d,
		      enum clf_error_kind kind, uint32_t index)
{
	pthread_mutex_init(&p->lock, NULL);
	p->d = d;
	p->src = (struct clf_error_source){ .kind = kind, .index = index };
	snprintf(p->src.addr, sizeof(p->src.addr), "%s", d->addr);
	p->conn = NULL;
	p->generation = 0;
}

static void peer_release(struct clf_peer *p)
{
	clf_conn_close(p->conn);
	p->conn = NULL;
	pthread_mutex_destroy(&p->lock);
}

/*
 * Test hook, off unless set: CLF_TEST_ACT_AS=UID:GID makes this process
 * name that user in its metad requests even when it authenticates with
 * MUNGE, which metad must refuse (docs/security.md).
 */
static void test_act_as(struct clf_client *cl)
{
	const char *v = getenv("CLF_TEST_ACT_AS");
	unsigned uid, gid;

	if (v && sscanf(v, "%u:%u", &uid, &gid) == 2) {
		clf_ll_act_as(uid, gid);
		cl->test_act_as = true;
	}
}

int CLF_init(const char *config_path)
{
	struct clf_client *cl;
	int err;

	if (clf_client_instance)
		return clf_fail(EBUSY, "clf: already initialised");
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return clf_fail(ENOMEM, "clf: out of memory");
	err = clf_config_load(config_path, &cl->cfg);
	if (err)
		goto free_cl;
	if (!cl->cfg->has_secret && !clf_config_uses_munge(cl->cfg)) {
		err = clf_fail(EACCES,
			"clf: the configuration %s has no secret (run 'clf up' or set secret =)",
			cl->cfg->source ? cl->cfg->source : "(built in)");
		goto free_cfg;
	}
	cl->transport = clf_transport_find(cl->cfg->transport);
	if (!cl->transport) {
		err = clf_fail(EPROTONOSUPPORT, "clf: unknown transport '%s'",
			       cl->cfg->transport);
		goto free_cfg;
	}
	cl->iods = calloc(cl->cfg->niods, sizeof(*cl->iods));
	if (!cl->iods) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto free_cfg;
	}
	pthread_mutex_init(&cl->reqid_lock, NULL);
	peer_init(&cl->metad, &cl->cfg->metad, CLF_ERROR_METAD, 0);
	peer_init(&cl->metad_locks, &cl->cfg->metad, CLF_ERROR_METAD, 0);
	cl->metad.acts_for = cl->metad_locks.acts_for = true;
	test_act_as(cl);
	for (uint32_t i = 0; i < cl->cfg->niods; i++)
		peer_init(&cl->iods[i], &cl->cfg->iods[i], CLF_ERROR_IOD, i);
	clf_client_instance = cl;
	return 0;
free_cfg:
	clf_config_free(cl->cfg);
free_cl:
	free(cl);
	return err;
}

int CLF_finalize(void)
{
	struct clf_client *cl = clf_client_instance;

	if (!cl)
		return clf_fail(EINVAL, "clf: not initialised");
	clf_files_close_all(CLF_close);
	peer_release(&cl->metad);
	peer_release(&cl->metad_locks);
	for (uint32_t i = 0; i < cl->cfg->niods; i++)
		peer_release(&cl->iods[i]);
	free(cl->iods);
	pthread_mutex_destroy(&cl->reqid_lock);
	clf_config_free(cl->cfg);
	free(cl);
	clf_client_instance = NULL;
	return 0;
}
