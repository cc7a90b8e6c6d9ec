/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cap.h -- capabilities: what metad grants a user on one file, which the
 * iods check (since 1.8; docs/security.md).
 *
 * A capability says "uid may read (and/or write) the data of file ino
 * until expiry", and carries a MAC under the capability key, which metad
 * and the iods derive from the node secret (only root reads it):
 *
 *   key = BLAKE2b-256(key = node secret, "clf-capability-key-1")
 *   mac = BLAKE2b-256(key, the encoded fields before it)
 *
 * Clients never see the key, so they cannot make or change one.  The
 * wire form (CAP replies and requests):
 *
 *   u64 ino, u32 rights (CLF_CAP_*), u32 uid, i64 expiry (seconds since
 *   the epoch, metad's clock), u32 lifetime (seconds it was granted
 *   for), mac[32]
 *
 * An iod checks the MAC, the expiry (against its own clock, which must
 * be within a few seconds of metad's, as for MUNGE), and that uid is the
 * uid of the MUNGE credential of the connection that hands it over; a
 * capability seen by another user is no use to him.
 */
#ifndef CLF_CAP_H
#define CLF_CAP_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "wire.h"

#define CLF_CAP_READ 0x1u
#define CLF_CAP_WRITE 0x2u
#define CLF_CAP_RIGHTS 0x3u
#define CLF_CAP_KEY 32
#define CLF_CAP_MAC 32
#define CLF_CAP_WIRE (8 + 4 + 4 + 8 + 4 + CLF_CAP_MAC)

struct clf_cap {
	uint64_t ino;
	uint32_t rights;
	uint32_t uid;
	int64_t expiry;
	uint32_t lifetime;
	uint8_t mac[CLF_CAP_MAC];
};

/* The capability key of a node secret. */
void clf_cap_key(const struct clf_secret *s, uint8_t key[CLF_CAP_KEY]);

/* Fill in c->mac. */
void clf_cap_sign(struct clf_cap *c, const uint8_t key[CLF_CAP_KEY]);

/* Whether c->mac is right (constant time). */
bool clf_cap_valid(const struct clf_cap *c, const uint8_t key[CLF_CAP_KEY]);

void clf_cap_encode(struct wire_writer *w, const struct clf_cap *c);
/* -EPROTO when r holds no whole capability (trailing bytes allowed). */
int clf_cap_decode(struct wire_reader *r, struct clf_cap *c);

#endif /* CLF_CAP_H */
