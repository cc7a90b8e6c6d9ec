/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * instance.h -- a real clf instance for integration tests: one metad and
 * n iods started from the build directory on loopback, in a fresh
 * directory, with a generated secret and ports of their own.
 */
#ifndef CLF_TEST_INSTANCE_H
#define CLF_TEST_INSTANCE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define INSTANCE_MAX_IODS 8
#define INSTANCE_MAX_METADS 8

struct instance {
	char dir[PATH_MAX];	/* mkdtemp; removed by instance_stop */
	char conf[PATH_MAX + 16];	/* dir/clf.conf */
	char bindir[PATH_MAX];	/* where metad/metad and iod/iod are */
	int base_port;		/* metad; iod i at base_port + 1 + i */
	int niods;
	int nmetads;		/* $CLF_TEST_METADS, else 1: the namespace
				   over that many metads; metad m > 0 at
				   base_port + niods + m */
	int timeout_ms;
	pid_t metad;		/* 0 when not running */
	pid_t metads[INSTANCE_MAX_METADS];	/* [0] unused: metad above */
	pid_t iods[INSTANCE_MAX_IODS];
};

/*
 * Start metad and niods iods; iod_dirs may be NULL (each iod under dir)
 * or give an iod's storage directory (e.g. a small tmpfs).  Returns 0,
 * 77 when the daemon binaries are not built, -1 on failure (printed).
 */
int instance_start(struct instance *in, int niods, int timeout_ms,
		   const char *const *iod_dirs);

/* Start (again) metad (idx -1) or iod idx and wait until it listens. */
int instance_start_daemon(struct instance *in, int idx);

/* Send sig to metad (idx -1) or iod idx and reap it. */
void instance_kill(struct instance *in, int idx, int sig);

/* The same for metad m of a spread namespace (0: the first). */
int instance_start_metad(struct instance *in, int m);
void instance_kill_metad(struct instance *in, int m, int sig);

/* Put recovery_grace_s = seconds into the instance's clf.conf (before
 * CLF_init: the clients' wait for a restarting daemon). */
int instance_set_grace(struct instance *in, int seconds);

/* Add line ("key = value") to the [global] section of the instance's
 * clf.conf (before CLF_init, for a client key). */
int instance_add_global(struct instance *in, const char *line);

/* iod -m (connections served at once) for the iods started after this
 * is set; 0: the iod's default. */
extern unsigned instance_iod_max_conns;

/* Stop everything, remove the directory. */
void instance_stop(struct instance *in);

/*
 * For a native-API test: instance_start (exiting 77 when the daemons are
 * not built), recovery_grace_s = grace_s when grace_s >= 0, then
 * CLF_init() on the instance.  0, or -1 with the reason printed.
 */
int instance_start_native(struct instance *in, int niods, int timeout_ms,
			  int grace_s);

/* CLF_finalize(), then instance_stop(). */
void instance_stop_native(struct instance *in);

#endif /* CLF_TEST_INSTANCE_H */
