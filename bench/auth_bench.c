// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * auth_bench.c -- the cost of authenticating one connection: connect to
 * metad N times, authenticate, close; prints the mean time of the
 * handshake and of the whole connection, in microseconds.
 *
 * usage: auth_bench CONFIG secret|munge [N]
 *   secret  as root, with the configuration's secret
 *   munge   with a MUNGE credential of whoever runs it (the secret is
 *           not used even when readable)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "config.h"
#include "error.h"
#include "transport.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	const struct clf_transport_ops *t;
	struct clf_config *cfg;
	bool munge;
	double t0, auth_us = 0, all_us = 0;
	int n, err;

	if (argc < 3) {
		fprintf(stderr, "usage: auth_bench CONFIG secret|munge [N]\n");
		return 2;
	}
	munge = !strcmp(argv[2], "munge");
	n = argc > 3 ? atoi(argv[3]) : 200;
	err = clf_config_load(argv[1], &cfg);
	if (err || !(t = clf_transport_find(cfg->transport))) {
		fprintf(stderr, "%s\n", CLF_Last_error());
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct clf_conn *c;
		double ta;

		t0 = now_us();
		err = clf_conn_connect(t, cfg->metad.addr, cfg->timeout_ms, &c);
		if (err)
			break;
		ta = now_us();
		err = clf_auth_client(c, munge ? NULL : &cfg->secret, "bench");
		auth_us += now_us() - ta;
		clf_conn_close(c);
		all_us += now_us() - t0;
		if (err)
			break;
	}
	if (err) {
		fprintf(stderr, "auth_bench: %s\n", CLF_Last_error());
		return 1;
	}
	printf("%s: %d connections, authentication %.1f us each, connect+authenticate+close %.1f us\n",
	       munge ? "munge" : "secret", n, auth_us / n, all_us / n);
	clf_config_free(cfg);
	return 0;
}
