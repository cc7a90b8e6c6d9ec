// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_grace.c -- waiting for a daemon that restarts (client.h, "Grace").
 *
 * A kill -9 and restart of metad or an iod takes it away for a moment:
 * connections break, new ones are refused.  Instead of failing at once,
 * an operation whose connection went down sleeps a little and tries again
 * on a fresh connection, until recovery_grace_s have passed since it
 * began.  Only requests that may safely be sent twice come back here
 * (the list and the reasons are in include/clf.h, "Recovery").
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "client_i.h"
#include "error.h"

/* Pauses between tries: short first (a restart takes a fraction of a
 * second), then at most a second, so a daemon back is found soon. */
static const int grace_pause_ms[] = { 20, 50, 100, 200, 400, 800, 1000 };

void clf_grace_begin(struct clf_grace *g)
{
	struct clf_client *cl = clf_client_instance;

	g->grace_ms = cl ? (int64_t)cl->cfg->recovery_grace_s * 1000 : 0;
	g->start = clf_now_ms();
	g->tries = 0;
	g->stale_used = false;
}

int clf_grace_gave_up(int err, int64_t waited_ms)
{
	return clf_fail_append(err, " (gave up after waiting %lld s for it to come back: recovery_grace_s)",
			       (long long)(waited_ms / 1000));
}

static void pause_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

bool clf_grace_again(struct clf_grace *g, int err, bool stale)
{
	int n = sizeof(grace_pause_ms) / sizeof(grace_pause_ms[0]);
	int64_t left, wait;

	if (!err)
		return false;
	/* A kept connection the daemon had closed: the request never got
	 * there; once at once, whatever the grace. */
	if (stale && !g->stale_used) {
		g->stale_used = true;
		return true;
	}
	if (err != -EHOSTDOWN)
		return false;	/* a refusal, a timeout: not a restart */
	left = g->start + g->grace_ms - clf_now_ms();
	if (left <= 0) {
		if (g->tries)
			clf_grace_gave_up(err, g->grace_ms);
		return false;
	}
	wait = grace_pause_ms[g->tries < n ? g->tries : n - 1];
	pause_ms(wait < left ? wait : left);
	g->tries++;
	return true;
}

bool clf_op_replayable(uint16_t op)
{
	switch (op) {
	case CLF_PROTO_OP_LOOKUP:
	case CLF_PROTO_OP_READDIR:
	case CLF_PROTO_OP_READDIRPLUS:
	case CLF_PROTO_OP_GETATTR:
	case CLF_PROTO_OP_STATFS:
	case CLF_PROTO_OP_INSTANCE:
	case CLF_PROTO_OP_GET_LAYOUT:
	case CLF_PROTO_OP_READLINK:
	case CLF_PROTO_OP_SUB_READ:
	case CLF_PROTO_OP_SUB_SIZES:
	case CLF_PROTO_OP_SUB_SIZES_MANY:
	case CLF_PROTO_OP_IOD_STATFS:
	case CLF_PROTO_OP_SUB_LIST:
		return true;	/* reads */
	case CLF_PROTO_OP_UPDATE_SIZE:	/* the size becomes at least end */
	case CLF_PROTO_OP_SUB_WRITE:	/* the same bytes at the same place */
	case CLF_PROTO_OP_SYNC:		/* makes durable what is there */
		return true;
	default:
		/* Mutations at metad have their own retry by request
		 * identity (client_retry.c); locks and APPEND ranges live
		 * in metad's memory; view handles in an iod's. */
		return false;
	}
}
