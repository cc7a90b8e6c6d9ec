// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_iods.c -- metad's connections to the iods (see mds_iods.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "error.h"
#include "mds.h"
#include "mds_iods.h"

struct mds_iod_slot {
	/* Held for a whole call, connect included: one request at a time
	 * on the connection. */
	pthread_mutex_t lock;
	struct clf_conn *conn;	/* owned; NULL when not connected; lock */
	int64_t retry_ms;	/* clf_now_ms() before which a connect is not
				   tried again; lock */
	char why[512];		/* why the last connect failed; lock */
	bool down;		/* the last connect failed; lock */
	const char *addr;	/* borrowed from the configuration, or
				   owned (joined: see owned) */
	bool owned;		/* addr is ours to free */
};

struct mds_iods {
	const struct clf_config *cfg;		/* borrowed */
	const struct clf_transport_ops *t;	/* borrowed, static */
	/* Slots 0..n-1 are in use; an iod that joins a running metad
	 * (mds_iods_join) fills slot n first and then publishes n + 1, so
	 * a reader that sees n sees n initialised slots. */
	_Atomic uint32_t n;
	uint32_t cap;				/* slots allocated */
	_Atomic uint32_t stripe_count;		/* the default of new files */
	pthread_mutex_t joining;		/* one join at a time */
	const char *kind;			/* "iod" or "metad", for the log */
	struct mds_iod_slot *slots;		/* cap, owned */
	/* Set before any call, then only read. */
	void (*on_connect)(void *arg, uint32_t iod);
	void *on_connect_arg;
};

void mds_iods_set_on_connect(struct mds_iods *io,
			     void (*fn)(void *arg, uint32_t iod), void *arg)
{
	io->on_connect = fn;
	io->on_connect_arg = arg;
}

static int open_daemons(const struct clf_config *cfg,
			const struct clf_transport_ops *t,
			const struct clf_config_daemon *ds, uint32_t n,
			uint32_t cap, const char *kind, struct mds_iods **out)
{
	struct mds_iods *io = calloc(1, sizeof(*io));

	if (!io)
		goto nomem;
	io->slots = calloc(cap ? cap : 1, sizeof(*io->slots));
	if (!io->slots)
		goto free_io;
	io->cfg = cfg;
	io->t = t;
	io->n = n;
	io->cap = cap;
	io->stripe_count = cfg->stripe_count;
	io->kind = kind;
	pthread_mutex_init(&io->joining, NULL);
	for (uint32_t i = 0; i < n; i++) {
		pthread_mutex_init(&io->slots[i].lock, NULL);
		io->slots[i].addr = ds[i].addr;
	}
	*out = io;
	return 0;

free_io:
	free(io);
nomem:
	return clf_fail(ENOMEM, "metad: out of memory for %u %ss", n, kind);
}

int mds_iods_open(const struct clf_config *cfg,
		  const struct clf_transport_ops *t, struct mds_iods **out)
{
	/* Room for every iod index a layout may name (MDS_MAX_IODS): iods
	 * join without a restart.  A slot is about 600 bytes. */
	uint32_t cap = cfg->niods > MDS_MAX_IODS ? cfg->niods : MDS_MAX_IODS;

	return open_daemons(cfg, t, cfg->iods, cfg->niods, cap, "iod", out);
}

int mds_iods_open_metads(const struct clf_config *cfg,
			 const struct clf_transport_ops *t,
			 struct mds_iods **out)
{
	return open_daemons(cfg, t, cfg->metads, cfg->nmetads, cfg->nmetads,
			    "metad", out);
}

void mds_iods_close(struct mds_iods *io)
{
	if (!io)
		return;
	for (uint32_t i = 0; i < io->n; i++) {
		clf_conn_close(io->slots[i].conn);
		pthread_mutex_destroy(&io->slots[i].lock);
		if (io->slots[i].owned)
			free((char *)io->slots[i].addr);
	}
	pthread_mutex_destroy(&io->joining);
	free(io->slots);
	free(io);
}

uint32_t mds_iods_count(const struct mds_iods *io)
{
	return atomic_load_explicit(&io->n, memory_order_acquire);
}

uint32_t mds_iods_stripe_count(const struct mds_iods *io)
{
	return atomic_load_explicit(&io->stripe_count, memory_order_relaxed);
}

const char *mds_iods_addr(const struct mds_iods *io, uint32_t iod)
{
	return iod < mds_iods_count(io) ? io->slots[iod].addr
					: "(not configured)";
}

int mds_iods_join(struct mds_iods *io, const struct clf_config *now,
		  uint32_t *before)
{
	uint32_t n;
	int err = 0;

	pthread_mutex_lock(&io->joining);
	n = mds_iods_count(io);
	*before = n;
	if (now->niods < n)
		err = clf_fail(EINVAL,
			       "metad: %s has %u iods, fewer than the %u this metad serves (iods are never taken out of a configuration: clf iod remove retires one)",
			       now->source ? now->source : "the configuration",
			       now->niods, n);
	else if (now->niods > io->cap)
		err = clf_fail(EINVAL, "metad: %s has %u iods; at most %u",
			       now->source ? now->source : "the configuration",
			       now->niods, io->cap);
	for (uint32_t i = 0; !err && i < n; i++)
		if (strcmp(now->iods[i].addr, io->slots[i].addr))
			err = clf_fail(EINVAL,
				       "metad: %s gives iod %u the address %s; this metad knows it as %s (an iod's address changes only with a restart of metad)",
				       now->source ? now->source : "the configuration",
				       i, now->iods[i].addr, io->slots[i].addr);
	for (uint32_t i = n; !err && i < now->niods; i++) {
		struct mds_iod_slot *s = &io->slots[i];
		char *addr = strdup(now->iods[i].addr);

		if (!addr) {
			err = clf_fail(ENOMEM, "metad: out of memory");
			break;
		}
		pthread_mutex_init(&s->lock, NULL);
		s->addr = addr;
		s->owned = true;
		atomic_store_explicit(&io->n, i + 1, memory_order_release);
	}
	if (!err)
		atomic_store_explicit(&io->stripe_count, now->stripe_count,
				      memory_order_relaxed);
	pthread_mutex_unlock(&io->joining);
	return err;
}

/* Connect and authenticate slot iod; called with its lock held. */
static int slot_connect(struct mds_iods *io, uint32_t iod)
{
	struct mds_iod_slot *s = &io->slots[iod];
	struct clf_conn *c;
	int err;

	if (clf_now_ms() < s->retry_ms)
		return clf_fail(EHOSTDOWN, "%s (next attempt in at most %d ms)",
				s->why, MDS_IODS_RETRY_MS);
	err = clf_conn_connect(io->t, s->addr, io->cfg->timeout_ms, &c);
	if (!err) {
		clf_conn_want_protection(c, io->cfg->protection);
		err = clf_auth_client(c, &io->cfg->secret, "metad");
		if (err)
			clf_conn_close(c);
	}
	if (err) {
		snprintf(s->why, sizeof(s->why), "%s", CLF_Last_error());
		s->retry_ms = clf_now_ms() + MDS_IODS_RETRY_MS;
		s->down = true;
		mds_log("cannot connect to %s %u (%s): %s", io->kind, iod,
			s->addr, s->why);
		return clf_fail(EHOSTDOWN, "%s", s->why);
	}
	s->conn = c;
	s->retry_ms = 0;
	mds_log("connected to %s %u (%s)", io->kind, iod, s->addr);
	if (s->down && io->on_connect)
		io->on_connect(io->on_connect_arg, iod);
	s->down = false;
	return 0;
}

int mds_iods_call(struct mds_iods *io, uint32_t iod, uint16_t op,
		  const void *body, size_t len, void **reply,
		  uint32_t *reply_len)
{
	struct iovec iov = { (void *)body, len };
	struct clf_proto_header h, rh;
	struct mds_iod_slot *s;
	void *payload = NULL;
	char why[512];
	bool fresh;
	int err;

	uint32_t n = mds_iods_count(io);

	if (iod >= n)
		return clf_fail(EINVAL,
				"metad: iod %u is not in the configuration (%u iods)",
				iod, n);
	s = &io->slots[iod];
	pthread_mutex_lock(&s->lock);
	for (int attempt = 0; attempt < 2; attempt++) {
		fresh = !s->conn;
		if (fresh) {
			err = slot_connect(io, iod);
			if (err)
				break;
		}
		clf_proto_header_init(&h, op, clf_conn_next_id(s->conn));
		err = clf_conn_call(s->conn, &h, &iov, len ? 1 : 0, &rh,
				    &payload);
		if (!err || !clf_conn_broken(s->conn))
			break;
		/* The exchange failed on our side of the wire: the
		 * connection is unusable, the iod maybe restarted. */
		snprintf(why, sizeof(why), "%s", CLF_Last_error());
		mds_log("connection to %s %u (%s) failed: %s", io->kind, iod,
			s->addr, why);
		clf_conn_close(s->conn);
		s->conn = NULL;
		err = clf_fail(EHOSTDOWN, "%s", why);
		if (fresh)
			break;
	}
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	*reply = payload;
	*reply_len = rh.payload_len;
	return 0;
}
