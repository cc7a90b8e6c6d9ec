// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_warm.c -- connecting to several iods at once (client.h).
 *
 * A connection is made when its peer is first locked (client.c), and an
 * access locks its iods one after another: over a link of 50 ms round
 * trip each connection and its handshake took 150 ms, so a process's
 * first access to 4 iods waited 0.6 s before its first request, and
 * again for each further lane (measured with bench/wan.sh).  Here the
 * peers not yet connected are connected by a thread each, at once; the
 * caller then locks them as usual and finds their connections made.  A
 * failure is left for that lock to meet and report.
 */
#include <pthread.h>
#include <stdlib.h>

#include "client_i.h"

/* At most this many connections made at once per call. */
#define WARM_MAX 64

static void *warm_one(void *arg)
{
	struct clf_peer *p = arg;

	if (!clf_peer_lock(p))
		clf_peer_unlock(p);
	return NULL;
}

void clf_peers_warm(struct clf_peer *const *peers, int n)
{
	pthread_t tid[WARM_MAX];
	struct clf_peer *todo[WARM_MAX];
	int cold = 0, started = 0;

	for (int i = 0; i < n && cold < WARM_MAX; i++) {
		bool dup = false;

		/* Unlocked, a hint: a race costs one serial connect. */
		if (clf_peer_connected(peers[i]))
			continue;
		for (int k = 0; k < cold && !dup; k++)
			dup = todo[k] == peers[i];
		if (!dup)
			todo[cold++] = peers[i];
	}
	if (cold < 2)
		return;		/* nothing to overlap */
	for (int k = 0; k < cold; k++)
		if (!pthread_create(&tid[started], NULL, warm_one, todo[k]))
			started++;
	for (int k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}
