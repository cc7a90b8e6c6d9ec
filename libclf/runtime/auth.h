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
 *
 * A client that cannot read S (an ordinary user's process) answers the
 * CHALLENGE with MUNGE instead (since 1.4; docs/security.md):
 *
 *   client -> MUNGE_RESPONSE  Nc, MUNGE credential with payload Dc
 *   server -> AUTH_OK         MUNGE credential with payload Ds
 *
 *   T  = the transcript: "clf-munge-1", then the HELLO body and the
 *        CHALLENGE body as sent, each after its u32 length
 *   Dc = SHA-256(T || Nc),  Ds = SHA-256("clf-munge-server-1" || Dc)
 *
 * munged vouches for the uid and gid of each side; the server takes the
 * client's from the credential (never from a request) after munged found
 * it valid, unexpired and never decoded before, and its payload equal to
 * Dc.  Since Dc covers Ns, a credential seen on one connection is refused
 * on any other.  The client accepts a server credential of root or of its
 * own uid only.  Whatever later versions add to HELLO, CHALLENGE or the
 * responses (a key share for session keys, say) is covered by T and so
 * bound to the credentials without changing this rule.
 */
#ifndef CLF_AUTH_H
#define CLF_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define CLF_SECRET_MIN 16	/* bytes */
#define CLF_SECRET_MAX 64	/* bytes */
#define CLF_SECRET_DEFAULT 32	/* bytes made by clf_secret_generate */
#define CLF_SECRET_HEX_MAX (2 * CLF_SECRET_MAX + 1)	/* with the NUL */
/* Room for the largest authentication body: a MUNGE_RESPONSE. */
#define CLF_AUTH_MAX_PAYLOAD (CLF_PROTO_NONCE_SIZE + 2 + CLF_PROTO_MUNGE_CRED_MAX)
#define CLF_AUTH_DIGEST_SIZE 32	/* SHA-256 */

/* How a peer authenticated (a bit set of the methods a server takes). */
enum clf_auth_method {
	CLF_AUTH_SECRET = 1,	/* holds the node secret: root, a daemon */
	CLF_AUTH_MUNGE = 2,	/* a MUNGE credential of uid, gid */
};

/* Who is on the other side of a connection a server accepted. */
struct clf_auth_peer {
	enum clf_auth_method method;
	uint32_t uid, gid;	/* MUNGE: the credential's; SECRET: 0 */
	char role[CLF_PROTO_ROLE_MAX + 1];	/* as it said in HELLO */
	/*
	 * Set by a server before clf_auth_server_peer(), or NULL: asked
	 * once the peer has proved who it is and before it is told so.
	 * Nonzero (a negative errno, the reason in why) refuses the peer
	 * in its AUTH_OK, so a client never hears "authenticated" from a
	 * server that then drops it for want of a slot.
	 */
	int (*admit)(void *arg, char *why, size_t len);
	void *admit_arg;
};

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
 * per message and sets the negotiated minor version on c.  secret NULL:
 * authenticate with a MUNGE credential of this process instead.  Returns
 * 0, or -EHOSTDOWN when munged does not answer, or:
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

/*
 * clf_auth_server_peer - the same, taking the methods in the bit set
 * methods (CLF_AUTH_*), and telling who the peer is in *peer.  A client
 * that offers a method not taken, or a MUNGE credential munged refuses
 * (forged, expired, replayed, made for another connection), is told why
 * and -EACCES is returned.
 */
int clf_auth_server_peer(struct clf_conn *c, const struct clf_secret *secret,
			 unsigned methods, struct clf_auth_peer *peer);

/* Whether munged answers here (it encodes a credential). */
bool clf_munge_available(void);

#endif /* CLF_AUTH_H */
