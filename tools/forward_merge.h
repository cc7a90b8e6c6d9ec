/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * forward_merge.h -- `clf forward` reading what it relays to an iod, to
 * hand the collective requests of its clients to each iod in one
 * VIEW_MERGED (cmd_forward_merge.c; include/clf_proto.h, "Merged
 * collectives").
 */
#ifndef FORWARD_MERGE_H
#define FORWARD_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/*
 * fwd_merge_start - merge from now on, for the instance cfg (borrowed,
 * outlives the forwarder), waiting up to wait_ms after a collective
 * request for more of its operation before sending what came.  Needs the
 * instance's secret (cfg->has_secret): the VIEW_MERGED connections hold
 * it.  0, or a negative errno with a message (no secret, no thread).
 */
int fwd_merge_start(const struct clf_config *cfg, unsigned wait_ms);

/*
 * fwd_merge_relay - relay the client connection cfd to iod (its index;
 * dfd, connected there) until both sides closed, reading the messages:
 * collective VIEW_WRITE and VIEW_READ requests go to the iod merged with
 * the other clients' of the same operation; everything else passes as it
 * came.  When the iod seals the connection's messages (protection
 * integrity or privacy) it relays bytes as they come, without merging,
 * and says so in the log once.  Closes neither descriptor.
 */
void fwd_merge_relay(int cfd, int dfd, uint32_t iod);

/* The plain relay of cmd_forward.c: bytes both ways until both closed. */
void fwd_relay(int a, int b);

#endif /* FORWARD_MERGE_H */
