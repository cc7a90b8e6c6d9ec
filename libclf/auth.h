/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * auth.h -- the shared secret and the challenge-response exchange that
 * opens every connection.
 *
 * The exchange (clf_proto.h, opcodes HELLO..AUTH_OK), with S the secret,
 * Ns and Nc 32 random bytes from the server and the client:
 *
 *   client -> HELLO      its version, role ("client", "iod", "metad", ...)
 *   server -> CHALLENGE  its version, Ns
 *   client -> RESPONSE   Nc, HMAC-SHA256(S, Ns || Nc || role)
 *   server -> AUTH_OK    HMAC-SHA256(S, Nc || Ns)
 *
 * The server checks the client's MAC in constant time and the client
 * checks the server's, so each side proves it knows S without S crossing
 * the wire; fresh nonces on both sides defeat replays.  The two MACs
 * cover messages of different lengths (the role is never empty), so one
 * can never be replayed as the other.  Both sides then use the smaller
 * minor version.  Until the exchange succeeds the server accepts payloads
 * of at most CLF_AUTH_MAX_PAYLOAD bytes, so an unauthenticated peer cannot
 * make it allocate much.
 */
#ifndef CLF_AUTH_H
#define CLF_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define CLF_SECRET_MIN 16	/* bytes */
#define CLF_SECRET_MAX 64	/* bytes */
#define CLF_SECRET_DEFAULT 32	/* bytes made by clf_secret_generate */
#define CLF_SECRET_HEX_MAX (2 * CLF_SECRET_MAX + 1)	/* with the NUL */
#define CLF_AUTH_MAX_PAYLOAD 256

struct clf_secret {
	size_t len;			/* CLF_SECRET_MIN..CLF_SECRET_MAX */
	uint8_t key[CLF_SECRET_MAX];
};

/* CLF_SECRET_DEFAULT random bytes.  Returns 0 or -ENOSYS when libsodium
 * cannot initialise. */
int clf_secret_generate(struct clf_secret *s);

/*
 * Parse hex digits (either case, surrounding blanks ignored) into s.
 * -EINVAL when not hex or when the length is outside CLF_SECRET_MIN..MAX
 * bytes; the message says which, never the secret.
 */
int clf_secret_from_hex(struct clf_secret *s, const char *hex);

/* Lowercase hex into buf (at least CLF_SECRET_HEX_MAX bytes). */
int clf_secret_to_hex(const struct clf_secret *s, char *buf, size_t buflen);

/*
 * Read a secret file: hex text as above.  Refuses (-EACCES) a file that
 * group or others may read or write, like ssh does with keys.
 */
int clf_secret_load_file(struct clf_secret *s, const char *path);

/* Wipe s (the compiler may not elide it); NULL ok. */
void clf_secret_clear(struct clf_secret *s);

/*
 * clf_auth_client - authenticate a new connection as role
 *
 * Runs the client side of the exchange within the connection's timeout
 * per message and sets the negotiated minor version on c.  Returns 0, or:
 * -EACCES when the server refused our proof ("wrong secret") or could not
 * prove itself, -EPROTONOSUPPORT when the major versions differ, or a
 * transport error.  On failure the caller closes c.
 */
int clf_auth_client(struct clf_conn *c, const struct clf_secret *secret,
		    const char *role);

/*
 * clf_auth_server - authenticate a connection just accepted
 *
 * Runs the server side; the client's role (NUL-terminated) is written to
 * role (at least CLF_PROTO_ROLE_MAX + 1 bytes) on success.  A client with
 * a wrong secret or another major version is told so in an error reply
 * before this returns -EACCES or -EPROTONOSUPPORT.  On failure the caller
 * closes c.
 */
int clf_auth_server(struct clf_conn *c, const struct clf_secret *secret,
		    char *role, size_t rolelen);

#endif /* CLF_AUTH_H */
