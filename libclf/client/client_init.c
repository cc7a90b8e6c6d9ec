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
#include "xcache.h"

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

/*
 * The configuration of config_path: a file, or for a clf://HOST:PORT
 * name, metad's address alone (*url set; the iods come from metad).
 */
static int load_config(const char *config_path, struct clf_config **cfg,
		       bool *url)
{
	char addr[CLF_ADDR_MAX];
	const char *rest;
	int err = clf_url_parse(config_path, addr, sizeof(addr), &rest);

	*url = err > 0;
	if (err < 0)
		return err;
	if (err > 0)
		return clf_config_for_metad(addr, cfg);
	return clf_config_load(config_path, cfg);
}

/* INSTANCE from metad, decoded into *m (clf_proto_instance_release). */
static int ask_instance(struct clf_proto_instance *m, void **payload)
{
	struct wire_reader r;
	uint32_t len;
	int err = clf_meta_call(CLF_PROTO_OP_INSTANCE, clf_enc_empty, NULL,
				payload, &len);

	if (err)
		return err;
	r = (struct wire_reader){ .buf = *payload, .len = len };
	err = clf_proto_instance_decode(&r, m);
	if (err) {
		free(*payload);
		*payload = NULL;
	}
	return err;
}

/* reread of a client with a configuration file: the file again. */
static int reread_file(struct clf_client *cl, struct clf_config **now)
{
	return clf_config_load(cl->cfg->source, now);
}

/* reread of a client named by URL: metad's INSTANCE again, as at init
 * (iods that joined since: `clf iod add`). */
static int reread_instance(struct clf_client *cl, struct clf_config **now)
{
	struct clf_proto_instance m = { 0 };
	struct clf_config *c = calloc(1, sizeof(*c));
	void *payload = NULL;
	int err = c ? 0 : clf_fail(ENOMEM, "clf: out of memory");

	if (!err) {
		c->metad.addr = strdup(cl->cfg->metad.addr);
		if (!c->metad.addr)
			err = clf_fail(ENOMEM, "clf: out of memory");
	}
	if (!err)
		err = ask_instance(&m, &payload);
	if (!err) {
		err = clf_config_set_instance(c, &m);
		clf_proto_instance_release(&m);
		free(payload);
	}
	if (err) {
		clf_config_free(c);
		return err;
	}
	*now = c;
	return 0;
}

/*
 * The iods of a client that knows metad only, from metad (INSTANCE):
 * one round trip, at CLF_init, so that a wrong address or secret shows
 * there.  cl is the instance already; its iods are not yet.
 */
static int learn_instance(struct clf_client *cl)
{
	struct clf_proto_instance m = { 0 };
	void *payload = NULL;
	int err;

	/* A wrong address or secret fails CLF_init at once: there is no
	 * restart to wait for yet. */
	cl->cfg->recovery_grace_s = 0;
	err = ask_instance(&m, &payload);
	if (err == -ENOSYS)
		return clf_fail(ENOSYS,
			"clf: %s is no metad, or one older than protocol 1.10 that cannot describe its instance (use a configuration file)",
			cl->cfg->metad.addr);
	if (err == -EHOSTDOWN && !cl->cfg->has_secret) {
		char why[CLF_PROTO_ERRMSG_MAX];

		snprintf(why, sizeof(why), "%s", CLF_Last_error());
		return clf_fail(EHOSTDOWN,
			"%s (if metad runs: this process has no secret and authenticates with MUNGE; set CLF_SECRET_FILE to a copy of the instance's secret, or run munged with its key)",
			why);
	}
	if (err)
		return err;
	err = clf_config_set_instance(cl->cfg, &m);
	clf_proto_instance_release(&m);
	free(payload);
	return err;
}

/*
 * One connection per iod unless clf.conf says otherwise: an MPI process
 * gains nothing from more (its accesses are one at a time), and the
 * ROMIO driver's two descriptors of a file would put them on two
 * connections, which measured slower at 8 and 16 processes.
 */
static unsigned default_lanes = 1;

void clf_ll_default_iod_connections(unsigned n)
{
	if (n >= 1 && n <= CLF_CONFIG_MAX_IOD_CONNS)
		default_lanes = n;
}

int CLF_init(const char *config_path)
{
	uint32_t spare;
	struct clf_client *cl;
	bool url;
	int err;

	if (clf_client_instance)
		return clf_fail(EBUSY, "clf: already initialised");
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return clf_fail(ENOMEM, "clf: out of memory");
	err = load_config(config_path, &cl->cfg, &url);
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
	pthread_mutex_init(&cl->reqid_lock, NULL);
	pthread_mutex_init(&cl->route_lock, NULL);
	clf_peer_init(&cl->metad, &cl->cfg->metad, CLF_ERROR_METAD, 0);
	clf_peer_init(&cl->metad_locks, &cl->cfg->metad, CLF_ERROR_METAD, 0);
	cl->metad.acts_for = cl->metad_locks.acts_for = true;
	test_act_as(cl);
	if (url) {
		clf_client_instance = cl;
		err = learn_instance(cl);
		clf_client_instance = NULL;
		if (err)
			goto release_peers;
	}
	/* After INSTANCE, which names the metads of a client named by URL. */
	if (cl->cfg->nmetads > 1) {
		uint32_t n = cl->cfg->nmetads - 1;

		cl->more_metads = calloc(n, sizeof(*cl->more_metads));
		cl->more_metad_locks = calloc(n, sizeof(*cl->more_metad_locks));
		if (!cl->more_metads || !cl->more_metad_locks) {
			free(cl->more_metads);
			free(cl->more_metad_locks);
			cl->more_metads = cl->more_metad_locks = NULL;
			err = clf_fail(ENOMEM, "clf: out of memory");
			goto release_peers;
		}
		for (uint32_t i = 0; i < n; i++) {
			clf_peer_init(&cl->more_metads[i], &cl->cfg->metads[i + 1],
				  CLF_ERROR_METAD, i + 1);
			clf_peer_init(&cl->more_metad_locks[i],
				  &cl->cfg->metads[i + 1], CLF_ERROR_METAD,
				  i + 1);
			cl->more_metads[i].acts_for = true;
			cl->more_metad_locks[i].acts_for = true;
		}
	}
	cl->lanes = cl->cfg->iod_connections > 0
			    ? (unsigned)cl->cfg->iod_connections
			    : default_lanes;
	spare = cl->cfg->niods + CLF_CLIENT_IOD_SPARE;
	cl->iods = calloc((size_t)spare * cl->lanes, sizeof(*cl->iods));
	cl->iod_connecting = calloc(spare, sizeof(*cl->iod_connecting));
	cl->joined = calloc(CLF_CLIENT_IOD_SPARE, sizeof(*cl->joined));
	cl->lane_files = calloc(cl->lanes, sizeof(*cl->lane_files));
	if (!cl->iods || !cl->iod_connecting || !cl->lane_files ||
	    !cl->joined) {
		free(cl->iods);
		free(cl->iod_connecting);
		free(cl->joined);
		free(cl->lane_files);
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto release_peers;
	}
	for (uint32_t i = 0; i < spare; i++)
		pthread_mutex_init(&cl->iod_connecting[i], NULL);
	for (uint32_t i = 0; i < cl->cfg->niods; i++)
		clf_client_iod_peers_init(cl, i, &cl->cfg->iods[i]);
	atomic_init(&cl->niods, cl->cfg->niods);
	pthread_mutex_init(&cl->joining, NULL);
	if (url)
		cl->reread = reread_instance;
	else if (cl->cfg->source)
		cl->reread = reread_file;
	clf_client_instance = cl;
	return 0;
release_peers:
	for (uint32_t i = 0; cl->more_metads && i + 1 < cl->cfg->nmetads; i++) {
		peer_release(&cl->more_metads[i]);
		peer_release(&cl->more_metad_locks[i]);
	}
	free(cl->more_metads);
	free(cl->more_metad_locks);
	peer_release(&cl->metad);
	peer_release(&cl->metad_locks);
	pthread_mutex_destroy(&cl->reqid_lock);
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
	clf_xcache_shutdown();
	peer_release(&cl->metad);
	peer_release(&cl->metad_locks);
	for (uint32_t i = 0; cl->more_metads && i + 1 < cl->cfg->nmetads; i++) {
		peer_release(&cl->more_metads[i]);
		peer_release(&cl->more_metad_locks[i]);
	}
	free(cl->more_metads);
	free(cl->more_metad_locks);
	for (uint32_t i = 0; i < cl->cfg->niods + CLF_CLIENT_IOD_SPARE; i++) {
		for (unsigned k = 0; i < atomic_load(&cl->niods) &&
				     k < cl->lanes; k++)
			peer_release(&cl->iods[i * cl->lanes + k]);
		pthread_mutex_destroy(&cl->iod_connecting[i]);
	}
	for (uint32_t i = 0; i < CLF_CLIENT_IOD_SPARE; i++)
		free(cl->joined[i].addr);
	free(cl->joined);
	pthread_mutex_destroy(&cl->joining);
	free(cl->iods);
	free(cl->iod_connecting);
	free(cl->lane_files);
	pthread_mutex_destroy(&cl->reqid_lock);
	clf_config_free(cl->cfg);
	free(cl);
	clf_client_instance = NULL;
	return 0;
}
