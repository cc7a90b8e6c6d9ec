// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_hooks.c -- the compiled-in test hooks (iod_state.h, struct
 * iod_hooks), applied at one point each whatever way a request's data
 * travels.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "iod_log.h"
#include "iod_state.h"

void iod_hook_before_write(struct iod_server *srv, size_t len)
{
	uint64_t done;

	if (!srv->hooks.enospc_after || !len)
		return;
	done = atomic_load(&srv->bytes_written);
	if (done + len > srv->hooks.enospc_after)
		iod_store_fail_next_io(srv->st, ENOSPC);
}

void iod_hook_before_reply(const struct iod_server *srv)
{
	struct timespec ts;

	if (!srv->hooks.delay_ms)
		return;
	ts.tv_sec = srv->hooks.delay_ms / 1000;
	ts.tv_nsec = (long)(srv->hooks.delay_ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void iod_hook_coll_message(const struct iod_server *srv, const char *op,
			   unsigned n)
{
	if (srv->hooks.log_coll)
		iod_log("test hook: %s with %u collective request%s", op, n,
			n == 1 ? "" : "s");
}

void iod_hook_after_coll(const struct iod_server *srv)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	if (!srv->hooks.coll_exit)
		return;
	/* Long enough for the woken participants' replies to go out. */
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	_exit(137);
}
