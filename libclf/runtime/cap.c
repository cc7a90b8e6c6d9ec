// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cap.c -- capabilities (cap.h): their key, MAC and wire form.
 */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "cap.h"
#include "error.h"

_Static_assert(crypto_generichash_BYTES == CLF_CAP_MAC, "BLAKE2b-256");

void clf_cap_key(const struct clf_secret *s, uint8_t key[CLF_CAP_KEY])
{
	static const char domain[] = "clf-capability-key-1";

	crypto_generichash(key, CLF_CAP_KEY, (const uint8_t *)domain,
			   sizeof(domain), s->key, s->len);
}

/* The fields the MAC covers, as sent. */
static void fields(const struct clf_cap *c, uint8_t out[CLF_CAP_WIRE - CLF_CAP_MAC])
{
	struct wire_writer w = { out, CLF_CAP_WIRE - CLF_CAP_MAC, 0 };

	wire_put_u64(&w, c->ino);
	wire_put_u32(&w, c->rights);
	wire_put_u32(&w, c->uid);
	wire_put_i64(&w, c->expiry);
	wire_put_u32(&w, c->lifetime);
}

static void mac_of(const struct clf_cap *c, const uint8_t key[CLF_CAP_KEY],
		   uint8_t mac[CLF_CAP_MAC])
{
	uint8_t f[CLF_CAP_WIRE - CLF_CAP_MAC];

	fields(c, f);
	crypto_generichash(mac, CLF_CAP_MAC, f, sizeof(f), key, CLF_CAP_KEY);
}

void clf_cap_sign(struct clf_cap *c, const uint8_t key[CLF_CAP_KEY])
{
	mac_of(c, key, c->mac);
}

bool clf_cap_valid(const struct clf_cap *c, const uint8_t key[CLF_CAP_KEY])
{
	uint8_t mac[CLF_CAP_MAC];

	mac_of(c, key, mac);
	return sodium_memcmp(mac, c->mac, CLF_CAP_MAC) == 0;
}

void clf_cap_encode(struct wire_writer *w, const struct clf_cap *c)
{
	wire_put_u64(w, c->ino);
	wire_put_u32(w, c->rights);
	wire_put_u32(w, c->uid);
	wire_put_i64(w, c->expiry);
	wire_put_u32(w, c->lifetime);
	wire_put_bytes(w, c->mac, CLF_CAP_MAC);
}

int clf_cap_decode(struct wire_reader *r, struct clf_cap *c)
{
	struct clf_cap t;

	t.ino = wire_get_u64(r);
	t.rights = wire_get_u32(r);
	t.uid = wire_get_u32(r);
	t.expiry = wire_get_i64(r);
	t.lifetime = wire_get_u32(r);
	if (r->bad || r->len - r->pos < CLF_CAP_MAC)
		return clf_fail(EPROTO, "proto: a capability is %d bytes",
				CLF_CAP_WIRE);
	memcpy(t.mac, r->buf + r->pos, CLF_CAP_MAC);
	r->pos += CLF_CAP_MAC;
	*c = t;
	return 0;
}
