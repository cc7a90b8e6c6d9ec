// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe.c -- one-shot requests to a daemon for the clf tools.
 */
#include <errno.h>
#include <stdlib.h>

#include "error.h"
#include "probe.h"

int probe_open(const struct clf_config *cfg, const char *addr,
	       int timeout_ms, struct clf_conn **out)
{
	const struct clf_transport_ops *t = clf_transport_find(cfg->transport);
	struct clf_conn *c;
	int err;

	if (!t)
		return -EPROTONOSUPPORT;
	if (!cfg->has_secret && !clf_config_uses_munge(cfg))
		return clf_fail(EACCES, "clf: no secret to authenticate to %s",
				addr);
	err = clf_conn_connect(t, addr, timeout_ms, &c);
	if (err)
		return err;
	clf_conn_want_protection(c, cfg->protection);
	err = clf_auth_client(c, cfg->has_secret ? &cfg->secret : NULL,
			      PROBE_ROLE);
	if (err) {
		clf_conn_close(c);
		return err;
	}
	*out = c;
	return 0;
}

/* One request with an empty body; *payload (caller frees) on success. */
static int call_empty(struct clf_conn *c, uint16_t op, void **payload,
		      uint32_t *len)
{
	struct clf_proto_header h, reply;
	int err;

	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	err = clf_conn_call(c, &h, NULL, 0, &reply, payload);
	if (err)
		return err;
	*len = reply.payload_len;
	return 0;
}

int probe_ping(struct clf_conn *c)
{
	void *payload;
	uint32_t len;
	int err = call_empty(c, CLF_PROTO_OP_PING, &payload, &len);

	if (err)
		return err;
	free(payload);
	if (len)
		return clf_fail(EPROTO, "clf: %s: PING reply of %u bytes",
				clf_conn_peer(c), len);
	return 0;
}

int probe_status(struct clf_conn *c, struct clf_proto_status *out)
{
	struct clf_proto_status st;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err = call_empty(c, CLF_PROTO_OP_STATUS, &payload, &len);

	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_status_decode(&r, &st);
	free(payload);
	if (err)
		return err;
	*out = st;
	return 0;
}

int probe_iod_statfs(struct clf_conn *c, struct clf_proto_statfs *out)
{
	struct clf_proto_statfs sf;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err = call_empty(c, CLF_PROTO_OP_IOD_STATFS, &payload, &len);

	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_statfs_decode(&r, &sf);
	free(payload);
	if (err)
		return err;
	*out = sf;
	return 0;
}

int probe_ping_addr(const struct clf_config *cfg, const char *addr,
		    int timeout_ms)
{
	struct clf_conn *c;
	int err = probe_open(cfg, addr, timeout_ms, &c);

	if (err)
		return err;
	err = probe_ping(c);
	clf_conn_close(c);
	return err;
}
