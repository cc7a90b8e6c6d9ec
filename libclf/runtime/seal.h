/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seal.h -- protection of the messages after the handshake (since 1.8).
 *
 * The handshake (auth.h) ends with two session keys, one per direction,
 * that only the two ends know.  With protection above none, every later
 * message goes out as
 *
 *   header (32 bytes, as always) || payload || tag (16 bytes)
 *
 * where tag is XChaCha20-Poly1305 (IETF) over the message with the
 * direction's key and, as nonce, the message's sequence number in that
 * direction (0, 1, 2, ...; both ends count, it never crosses the wire).
 *   integrity  the header and the payload are the additional data, the
 *              payload travels in clear;
 *   privacy    the header is the additional data, the payload is
 *              encrypted.
 * A message altered, replayed, reordered or dropped (the next one then
 * carries a tag for another number) fails its tag: the receiver closes
 * the connection.  The receiver holds the whole message until its tag
 * checks, so nothing of a failed message is ever acted upon.
 */
#ifndef CLF_SEAL_H
#define CLF_SEAL_H

#include <stddef.h>
#include <stdint.h>

enum clf_protection {
	CLF_PROTECT_NONE = 0,
	CLF_PROTECT_INTEGRITY = 1,
	CLF_PROTECT_PRIVACY = 2,
};

#define CLF_SEAL_KEY 32
#define CLF_SEAL_TAG 16

struct clf_seal {
	enum clf_protection level;
	uint8_t tx[CLF_SEAL_KEY], rx[CLF_SEAL_KEY];
	uint64_t tx_seq, rx_seq;
};

/* "none", "integrity", "privacy"; NULL for another value. */
const char *clf_protection_name(enum clf_protection p);
/* The level named s, or -1. */
int clf_protection_parse(const char *s);

/*
 * Seal the message msg (header and payload, len bytes) in place: encrypt
 * the payload with privacy, write the tag.  Advances tx_seq.
 */
void clf_seal_out(struct clf_seal *s, uint8_t *msg, size_t len,
		  uint8_t tag[CLF_SEAL_TAG]);

/*
 * Check the tag of msg (header and payload, len bytes) and decrypt the
 * payload in place.  0, or -EBADMSG (nothing of msg is then usable).
 * Advances rx_seq either way: a connection never survives a failure.
 */
int clf_seal_in(struct clf_seal *s, uint8_t *msg, size_t len,
		const uint8_t tag[CLF_SEAL_TAG]);

#endif /* CLF_SEAL_H */
