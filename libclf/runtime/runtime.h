/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runtime.h -- the interface of libclf's middle layer, the runtime that
 * the client and both daemons share: protocol messages and their codec,
 * transports, the handshake and message sealing, capabilities, the
 * configuration file, the daemons' log, clock, readiness notification,
 * admission control, durable writes and the daemon skeleton.
 *
 * It builds on the engine (engine.h) and knows nothing of the client
 * above it.  Every header of libclf/runtime that this file does not
 * include (proto_i.h, auth_i.h, transport_i.h) is private
 * to the runtime's own files (scripts/depgraph.sh checks it).
 */
#ifndef CLF_RUNTIME_H
#define CLF_RUNTIME_H

#include "engine.h"

#include "clock.h"		/* monotonic and wall time, ns */
#include "hash.h"		/* the one intrusive hash table */
#include "proto.h"		/* every message: structs, encode, decode */
#include "seal.h"		/* messages after the handshake: MAC, cipher */
#include "transport.h"		/* connections: TCP, framing, deadlines */
#include "auth.h"		/* the handshake: secret or MUNGE */
#include "cap.h"		/* capabilities metad grants, iods check */
#include "config.h"		/* the configuration file */
#include "log.h"		/* the daemons' log */
#include "notify.h"		/* READY=1 for systemd */
#include "admission.h"		/* how many requests a daemon takes at once */
#include "durable.h"		/* fsync of files and their directories */
#include "daemon.h"		/* daemonize, signals, pid file, accept loop */

#endif /* CLF_RUNTIME_H */
