// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * seal.c -- the per-message MAC and encryption of seal.h, on libsodium's
 * XChaCha20-Poly1305 (portable, no AES-NI needed: the two ends of a
 * connection always agree on the cipher).
 */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "proto.h"
#include "seal.h"

_Static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == CLF_SEAL_TAG,
	       "the tag is Poly1305's");
_Static_assert(crypto_aead_xchacha20poly1305_ietf_KEYBYTES == CLF_SEAL_KEY,
	       "the session keys are XChaCha20's");

const char *clf_protection_name(enum clf_protection p)
{
	switch (p) {
	case CLF_PROTECT_NONE:
		return "none";
	case CLF_PROTECT_INTEGRITY:
		return "integrity";
	case CLF_PROTECT_PRIVACY:
		return "privacy";
	}
	return NULL;
}

int clf_protection_parse(const char *s)
{
	for (int p = CLF_PROTECT_NONE; p <= CLF_PROTECT_PRIVACY; p++)
		if (strcmp(s, clf_protection_name(p)) == 0)
			return p;
	return -1;
}

static void seq_nonce(uint64_t seq,
		      uint8_t n[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES])
{
	memset(n, 0, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
	for (int i = 0; i < 8; i++)
		n[i] = (uint8_t)(seq >> (8 * i));
}

void clf_seal_out(struct clf_seal *s, uint8_t *msg, size_t len,
		  uint8_t tag[CLF_SEAL_TAG])
{
	uint8_t n[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	size_t adlen = s->level == CLF_PROTECT_PRIVACY ? CLF_PROTO_HEADER_SIZE
						       : len;

	seq_nonce(s->tx_seq++, n);
	crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
		msg + adlen, tag, NULL, msg + adlen, len - adlen, msg, adlen,
		NULL, n, s->tx);
}

int clf_seal_in(struct clf_seal *s, uint8_t *msg, size_t len,
		const uint8_t tag[CLF_SEAL_TAG])
{
	uint8_t n[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
	size_t adlen = s->level == CLF_PROTECT_PRIVACY ? CLF_PROTO_HEADER_SIZE
						       : len;

	seq_nonce(s->rx_seq++, n);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
		    msg + adlen, NULL, msg + adlen, len - adlen, tag, msg,
		    adlen, n, s->rx) != 0)
		return -EBADMSG;
	return 0;
}
