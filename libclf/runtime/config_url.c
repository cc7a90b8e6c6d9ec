// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * config_url.c -- clf://HOST[:PORT]/path names, and the configuration of
 * a client that has only such a name: metad's address and how this
 * process authenticates; the iods come from metad (INSTANCE, which
 * config_set_instance() takes in).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "log.h"
#include "proto.h"
#include "transport.h"

int clf_url_parse(const char *name, char *addr, size_t alen,
		  const char **path)
{
	char auth[CLF_ADDR_MAX], host[CLF_ADDR_MAX], port[16];
	const char *p, *end, *close;
	size_t n;
	long pn;
	char *stop;

	if (!name || strncmp(name, CLF_URL_SCHEME, strlen(CLF_URL_SCHEME)))
		return 0;
	p = name + strlen(CLF_URL_SCHEME);
	/* An IPv6 host is in brackets, and its colons are not the port's. */
	close = *p == '[' ? strchr(p, ']') : NULL;
	end = strchr(close ? close : p, '/');
	n = end ? (size_t)(end - p) : strlen(p);
	if (n == 0)
		return clf_fail(EINVAL, "clf: '%s' names no host (clf://HOST[:PORT]/path)",
				name);
	if (n >= sizeof(auth))
		return clf_fail(ENAMETOOLONG, "clf: the host of '%s' is too long",
				name);
	memcpy(auth, p, n);
	auth[n] = '\0';
	/* No port: metad's default one. */
	if (!strchr(close ? close : auth, ':')) {
		if (n + 7 >= sizeof(auth))
			return clf_fail(ENAMETOOLONG,
					"clf: the host of '%s' is too long", name);
		snprintf(auth + n, sizeof(auth) - n, ":%d",
			 CLF_CONFIG_DEFAULT_BASE_PORT);
	}
	if (clf_addr_split(auth, host, sizeof(host), port, sizeof(port)))
		return clf_fail(EINVAL, "clf: '%s': %s", name,
				clf_error_reason());
	pn = strtol(port, &stop, 10);
	if (!host[0] || *stop || pn < 1 || pn > 65535)
		return clf_fail(EINVAL,
				"clf: '%s' needs a host and a port from 1 to 65535",
				name);
	if ((size_t)snprintf(addr, alen, strchr(host, ':') ? "[%s]:%ld" : "%s:%ld",
			     host, pn) >= alen)
		return clf_fail(ENAMETOOLONG, "clf: the host of '%s' is too long",
				name);
	*path = end ? end : "";
	return 1;
}

/* d at address addr ("host:port", well formed). */
static int daemon_at(struct clf_config_daemon *d, const char *addr)
{
	char host[CLF_ADDR_MAX], port[16];

	if (clf_addr_split(addr, host, sizeof(host), port, sizeof(port)) ||
	    !host[0] || !port[0])
		return clf_fail(EPROTO, "clf: metad named a daemon at '%s', which is no address",
				addr);
	d->addr = strdup(addr);
	d->host = strdup(host);
	d->port = strdup(port);
	if (!d->addr || !d->host || !d->port)
		return clf_fail(ENOMEM, "clf: out of memory");
	return 0;
}

/*
 * The secret of a client named by URL: $CLF_SECRET_FILE when set (a copy
 * of the instance's secret file, mode 0600), else none, and the client
 * authenticates with MUNGE.
 */
static int url_secret(struct clf_config *cfg)
{
	const char *file = getenv("CLF_SECRET_FILE");
	int err;

	cfg->auth = CLF_CONFIG_AUTH_MUNGE;
	if (!file || !*file)
		return 0;
	err = clf_secret_load_file(&cfg->secret, file);
	if (err)
		return clf_fail(-err, "clf: CLF_SECRET_FILE=%s: %s", file,
				clf_error_reason());
	cfg->secret_file = strdup(file);
	if (!cfg->secret_file)
		return clf_fail(ENOMEM, "clf: out of memory");
	cfg->has_secret = true;
	cfg->auth = CLF_CONFIG_AUTH_DEFAULT;
	return 0;
}

int clf_config_for_metad(const char *addr, struct clf_config **out)
{
	struct clf_config *cfg = calloc(1, sizeof(*cfg));
	int err;

	if (!cfg)
		return clf_fail(ENOMEM, "clf: out of memory");
	cfg->transport = strdup("tcp");
	if (!cfg->transport) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto free_cfg;
	}
	cfg->stripe_size = CLF_CONFIG_DEFAULT_STRIPE;
	cfg->timeout_ms = CLF_CONN_DEFAULT_TIMEOUT_MS;
	cfg->cap_lifetime_s = CLF_CAP_LIFETIME_DEFAULT_S;
	cfg->recovery_grace_s = CLF_CONFIG_DEFAULT_GRACE_S;
	cfg->log_level = CLF_LOG_INFO;
	err = daemon_at(&cfg->metad, addr);
	/* One metad known until INSTANCE names the others (1.17). */
	if (!err) {
		cfg->metads = calloc(1, sizeof(*cfg->metads));
		err = cfg->metads && !clf_config_daemon_copy(&cfg->metads[0],
							     &cfg->metad) ?
		      0 : clf_fail(ENOMEM, "clf: out of memory");
		cfg->nmetads = !err;
	}
	if (!err)
		err = url_secret(cfg);
	if (err)
		goto free_cfg;
	*out = cfg;
	return 0;
free_cfg:
	clf_config_free(cfg);
	return err;
}

static void daemons_free(struct clf_config_daemon *d, uint32_t n)
{
	for (uint32_t i = 0; d && i < n; i++) {
		free(d[i].addr);
		free(d[i].host);
		free(d[i].port);
		free(d[i].dir);
	}
	free(d);
}

/*
 * The metads of a namespace over several, which INSTANCE names (1.17):
 * metad 0 keeps the address the client was named by (the one it
 * reaches, which may not be the one the instance is configured with);
 * the others are as metad names them.  A reply without them (a metad of
 * 1.16 or older) leaves the one metad.
 */
static int take_metads(struct clf_config *cfg,
		       const struct clf_proto_instance *m)
{
	struct clf_config_daemon *metads;
	char addr[CLF_PROTO_ADDR_MAX + 1];
	int err = 0;

	if (!m->has_metads || m->nmetads <= 1)
		return 0;
	if (m->metad_index != 0)
		return clf_fail(EINVAL,
			"clf: %s is metad %u of its instance; name metad 0 (%.*s), which holds the root, in the clf:// name",
			cfg->metad.addr, m->metad_index,
			m->metad_index < m->nmetads ?
			(int)m->metads[0].addr.len : 0,
			m->metad_index < m->nmetads ?
			m->metads[0].addr.ptr : "");
	if (m->nmetads > CLF_CONFIG_MAX_METADS)
		return clf_fail(EPROTO, "clf: metad %s named %u metads",
				cfg->metad.addr, m->nmetads);
	metads = calloc(m->nmetads, sizeof(*metads));
	if (!metads)
		return clf_fail(ENOMEM, "clf: out of memory");
	err = clf_config_daemon_copy(&metads[0], &cfg->metad) ?
	      clf_fail(ENOMEM, "clf: out of memory") : 0;
	for (uint32_t i = 1; i < m->nmetads && !err; i++) {
		snprintf(addr, sizeof(addr), "%.*s", (int)m->metads[i].addr.len,
			 m->metads[i].addr.ptr);
		err = daemon_at(&metads[i], addr);
	}
	if (err) {
		daemons_free(metads, m->nmetads);
		return err;
	}
	daemons_free(cfg->metads, cfg->nmetads);
	cfg->metads = metads;
	cfg->nmetads = m->nmetads;
	return 0;
}

int clf_config_set_instance(struct clf_config *cfg,
			    const struct clf_proto_instance *m)
{
	struct clf_config_daemon *iods;
	char addr[CLF_PROTO_ADDR_MAX + 1];
	int err = 0;

	if (m->niods > CLF_CONFIG_MAX_IODS || m->stripe_count > m->niods ||
	    m->first_iod >= m->niods || !m->timeout_ms ||
	    m->stripe_size > CLF_PROTO_STRIPE_MAX)
		return clf_fail(EPROTO, "clf: metad %s described its instance inconsistently (%u iods)",
				cfg->metad.addr, m->niods);
	err = take_metads(cfg, m);
	if (err)
		return err;
	iods = calloc(m->niods, sizeof(*iods));
	if (!iods)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (uint32_t i = 0; i < m->niods && !err; i++) {
		snprintf(addr, sizeof(addr), "%.*s", (int)m->iods[i].addr.len,
			 m->iods[i].addr.ptr);
		err = daemon_at(&iods[i], addr);
	}
	if (err) {
		for (uint32_t i = 0; i < m->niods; i++) {
			free(iods[i].addr);
			free(iods[i].host);
			free(iods[i].port);
		}
		free(iods);
		return err;
	}
	cfg->iods = iods;
	cfg->niods = m->niods;
	cfg->stripe_size = (int64_t)m->stripe_size;
	cfg->stripe_count = m->stripe_count;
	cfg->first_iod = m->first_iod;
	cfg->timeout_ms = (int)m->timeout_ms;
	cfg->recovery_grace_s = (int)m->recovery_grace_s;
	return 0;
}
