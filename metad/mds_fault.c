// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_fault.c -- fault hooks for tests, compiled in and off by default
 * (the list is in mds.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "error.h"
#include "mds.h"

static const char *const fault_env[MDS_FAULT_COUNT] = {
	[MDS_FAULT_CREATES] = "CLF_TEST_METAD_CRASH_AFTER_CREATES",
	[MDS_FAULT_UNLINKS] = "CLF_TEST_METAD_CRASH_AFTER_UNLINKS",
	[MDS_FAULT_REPLIES] = "CLF_TEST_METAD_CRASH_AFTER_RECORDED",
};

static const char *const fault_what[MDS_FAULT_COUNT] = {
	[MDS_FAULT_CREATES] = "creates",
	[MDS_FAULT_UNLINKS] = "unlinks",
	[MDS_FAULT_REPLIES] = "recorded requests",
};

/* Written by mds_fault_init before threads start, then only read. */
static uint64_t fault_at[MDS_FAULT_COUNT];	/* 0: off */
static unsigned max_connections;		/* 0: the default */
static uint64_t drop_every;			/* 0: off */
static atomic_uint_fast64_t drop_seen;
static unsigned handshake_ms;			/* 0: the default */
/* Events so far, by any thread. */
static atomic_uint_fast64_t fault_seen[MDS_FAULT_COUNT];

static int parse_env(const char *name, uint64_t max, uint64_t *out)
{
	const char *v = getenv(name);
	unsigned long long n;
	char *end;

	*out = 0;
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end || errno || n == 0 || n > max || v[0] == '-')
		return clf_fail(EINVAL,
				"metad: %s='%s' is not a number from 1 to %llu",
				name, v, (unsigned long long)max);
	*out = n;
	return 0;
}

int mds_fault_init(void)
{
	uint64_t conns;
	int err = 0;

	for (int f = 0; f < MDS_FAULT_COUNT && !err; f++)
		err = parse_env(fault_env[f], UINT64_MAX, &fault_at[f]);
	if (!err)
		err = parse_env("CLF_TEST_METAD_MAX_CONNECTIONS", 1u << 20,
				&conns);
	if (!err)
		max_connections = (unsigned)conns;
	if (!err)
		err = parse_env("CLF_TEST_METAD_DROP_REPLIES", UINT64_MAX,
				&drop_every);
	if (!err && drop_every)
		mds_log("fault hook on: drop the reply of every %llu. recorded request",
			(unsigned long long)drop_every);
	if (!err)
		err = parse_env("CLF_TEST_METAD_HANDSHAKE_MS", 60000, &conns);
	if (!err)
		handshake_ms = (unsigned)conns;
	for (int f = 0; f < MDS_FAULT_COUNT && !err; f++)
		if (fault_at[f])
			mds_log("fault hook on: crash after %llu %s",
				(unsigned long long)fault_at[f], fault_what[f]);
	return err;
}

void mds_fault_point(enum mds_fault f)
{
	uint64_t n;

	if (!fault_at[f])
		return;
	n = atomic_fetch_add(&fault_seen[f], 1) + 1;
	if (n == fault_at[f]) {
		mds_log("fault hook: crashing after %llu %s, as %s asked",
			(unsigned long long)n, fault_what[f], fault_env[f]);
		abort();
	}
}

unsigned mds_fault_max_connections(unsigned dflt)
{
	return max_connections ? max_connections : dflt;
}

bool mds_fault_drop_reply(void)
{
	if (!drop_every)
		return false;
	return (atomic_fetch_add(&drop_seen, 1) + 1) % drop_every == 0;
}

unsigned mds_fault_handshake_ms(unsigned dflt)
{
	return handshake_ms ? handshake_ms : dflt;
}
