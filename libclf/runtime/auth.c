// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * auth.c -- shared secrets and the HMAC-SHA256 challenge-response of
 * auth.h, on libsodium.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth_i.h"
#include "error.h"

#define SECRET_FILE_MAX 1024	/* bytes of text in a secret file */

_Static_assert(crypto_auth_hmacsha256_BYTES == CLF_PROTO_MAC_SIZE,
	       "the protocol's MAC is an HMAC-SHA256");

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status;

static void sodium_setup(void)
{
	sodium_status = sodium_init() < 0 ? -ENOSYS : 0;
}

static int auth_init(void)
{
	pthread_once(&sodium_once, sodium_setup);
	if (sodium_status)
		return clf_fail(ENOSYS, "clf: libsodium cannot initialise");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Secrets                                                             */
/* ------------------------------------------------------------------ */

int clf_secret_generate(struct clf_secret *s)
{
	int err = auth_init();

	if (err)
		return err;
	s->len = CLF_SECRET_DEFAULT;
	randombytes_buf(s->key, s->len);
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int clf_secret_from_hex(struct clf_secret *s, const char *hex)
{
	struct clf_secret t;
	size_t n;

	if (!hex)
		return clf_fail(EINVAL, "clf: no secret");
	while (blank(*hex))
		hex++;
	n = strlen(hex);
	while (n && blank(hex[n - 1]))
		n--;
	for (size_t i = 0; i < n; i++)
		if (hexval(hex[i]) < 0)
			return clf_fail(EINVAL,
					"clf: secret: character %zu is not a hex digit",
					i + 1);
	if (n % 2)
		return clf_fail(EINVAL, "clf: secret: odd number of hex digits");
	if (n / 2 < CLF_SECRET_MIN || n / 2 > CLF_SECRET_MAX)
		return clf_fail(EINVAL,
				"clf: secret: %zu bytes, must be %d to %d (%d to %d hex digits)",
				n / 2, CLF_SECRET_MIN, CLF_SECRET_MAX,
				2 * CLF_SECRET_MIN, 2 * CLF_SECRET_MAX);
	t.len = n / 2;
	for (size_t i = 0; i < t.len; i++)
		t.key[i] = (uint8_t)(hexval(hex[2 * i]) << 4 |
				     hexval(hex[2 * i + 1]));
	*s = t;
	sodium_memzero(&t, sizeof(t));
	return 0;
}

int clf_secret_to_hex(const struct clf_secret *s, char *buf, size_t buflen)
{
	static const char digits[] = "0123456789abcdef";

	if (s->len < CLF_SECRET_MIN || s->len > CLF_SECRET_MAX)
		return clf_fail(EINVAL, "clf: secret of %zu bytes", s->len);
	if (buflen < 2 * s->len + 1)
		return clf_fail(ENOSPC, "clf: secret needs %zu hex bytes",
				2 * s->len + 1);
	for (size_t i = 0; i < s->len; i++) {
		buf[2 * i] = digits[s->key[i] >> 4];
		buf[2 * i + 1] = digits[s->key[i] & 15];
	}
	buf[2 * s->len] = '\0';
	return 0;
}

int clf_secret_load_file(struct clf_secret *s, const char *path)
{
	char text[SECRET_FILE_MAX + 1];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return clf_fail(errno, "clf: secret file '%s': %s", path,
				strerror(errno));
	if (fstat(fd, &st) < 0) {
		err = clf_fail(errno, "clf: secret file '%s': %s", path,
			       strerror(errno));
		goto close_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		err = clf_fail(EINVAL, "clf: secret file '%s' is not a regular file",
			       path);
		goto close_fd;
	}
	if (st.st_mode & 077) {
		err = clf_fail(EACCES,
			       "clf: secret file '%s' is open to group or others (chmod 600 it)",
			       path);
		goto close_fd;
	}
	while (got < sizeof(text) - 1) {
		n = read(fd, text + got, sizeof(text) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = clf_fail(errno, "clf: secret file '%s': %s",
				       path, strerror(errno));
			goto wipe;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	text[got] = '\0';
	err = clf_secret_from_hex(s, text);
	if (err) {
		err = clf_fail_ctx(err, "clf: secret file '%s'", path);
	}
wipe:
	sodium_memzero(text, sizeof(text));
close_fd:
	close(fd);
	return err;
}

void clf_secret_clear(struct clf_secret *s)
{
	if (s)
		sodium_memzero(s, sizeof(*s));
}

static int check_secret(const struct clf_secret *s)
{
	if (!s || s->len < CLF_SECRET_MIN || s->len > CLF_SECRET_MAX)
		return clf_fail(EINVAL,
				"clf: no usable secret (set 'secret' or 'secret_file' in the configuration)");
	return 0;
}

/* ------------------------------------------------------------------ */
/* The exchange                                                        */
/* ------------------------------------------------------------------ */

/* HMAC-SHA256(secret, a || b || c); c may be NULL. */
static void hmac3(const struct clf_secret *s, const uint8_t *a,
		  const uint8_t *b, const char *c, size_t clen,
		  uint8_t out[CLF_PROTO_MAC_SIZE])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, s->key, s->len);
	crypto_auth_hmacsha256_update(&st, a, CLF_PROTO_NONCE_SIZE);
	crypto_auth_hmacsha256_update(&st, b, CLF_PROTO_NONCE_SIZE);
	if (c)
		crypto_auth_hmacsha256_update(&st, (const uint8_t *)c, clen);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

/* Room for any authentication body; the payload limit ensures it. */
#define AUTH_BUF CLF_AUTH_MAX_PAYLOAD
_Static_assert(AUTH_BUF >= 2 + 2 + 2 + CLF_PROTO_ROLE_MAX &&
	       AUTH_BUF >= 2 * CLF_PROTO_NONCE_SIZE &&
	       AUTH_BUF >= CLF_PROTO_NONCE_SIZE + 2 + CLF_PROTO_MUNGE_CRED_MAX,
	       "authentication bodies fit in AUTH_BUF");

/* The transcript T of auth.h, to which each side adds the bodies. */
static void transcript_init(crypto_hash_sha256_state *t)
{
	static const char domain[] = "clf-munge-1";

	crypto_hash_sha256_init(t);
	crypto_hash_sha256_update(t, (const uint8_t *)domain, sizeof(domain));
}

static void transcript_add(crypto_hash_sha256_state *t, const uint8_t *body,
			   size_t len)
{
	uint8_t n[4] = { (uint8_t)len, (uint8_t)(len >> 8),
			 (uint8_t)(len >> 16), (uint8_t)(len >> 24) };

	crypto_hash_sha256_update(t, n, sizeof(n));
	crypto_hash_sha256_update(t, body, len);
}

/* Dc and Ds of auth.h from T (not changed) and the client's nonce. */
static void munge_digests(const crypto_hash_sha256_state *t,
			  const uint8_t nonce[CLF_PROTO_NONCE_SIZE],
			  uint8_t dc[CLF_AUTH_DIGEST_SIZE],
			  uint8_t ds[CLF_AUTH_DIGEST_SIZE])
{
	static const char server[] = "clf-munge-server-1";
	crypto_hash_sha256_state st = *t;

	crypto_hash_sha256_update(&st, nonce, CLF_PROTO_NONCE_SIZE);
	crypto_hash_sha256_final(&st, dc);
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const uint8_t *)server, sizeof(server));
	crypto_hash_sha256_update(&st, dc, CLF_AUTH_DIGEST_SIZE);
	crypto_hash_sha256_final(&st, ds);
}

/* A credential's text, NUL-terminated, from its wire string. */
static void cred_text(struct clf_proto_str s, char *out)
{
	memcpy(out, s.ptr, s.len);
	out[s.len] = '\0';
}

/* Send the body encoded in buf by w under header h. */

static int send_body(struct clf_conn *c, const struct clf_proto_header *h,
		     const uint8_t *buf, const struct wire_writer *w)
{
	if (w->pos > w->cap)
		return clf_fail(EINVAL, "clf: authentication message too long");
	return clf_conn_send_buf(c, h, buf, w->pos);
}

/*
 * Tell the client why it is refused, as the reply op to req.  Best
 * effort: the connection is about to be closed, and the caller's own
 * error message is set afterwards.
 */
static void send_refusal(struct clf_conn *c, const struct clf_proto_header *req,
			 uint16_t op, int status, const char *why)
{
	uint8_t buf[AUTH_BUF];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_error e = { clf_proto_str_of(why) };
	struct clf_proto_header h;

	clf_proto_header_init_reply(&h, req, status);
	h.opcode = op;
	if (clf_proto_error_encode(&w, &e) == 0)
		(void)send_body(c, &h, buf, &w);
}

/*
 * The server at the other end of c failed us: "clf: ADDR: <fmt...>"
 * with ADDR as who failed (clf_error_set_source() can name it better).
 * Returns neg_err.
 */
static int server_fail(struct clf_conn *c, int neg_err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int server_fail(struct clf_conn *c, int neg_err, const char *fmt, ...)
{
	struct clf_error_source src = { .kind = CLF_ERROR_PEER };
	char text[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(src.addr, sizeof(src.addr), "%s", clf_conn_peer(c));
	return clf_fail_source(&src, neg_err, "%s", text);
}

/*
 * Receive the reply to req, expected with opcode op, into buf (at most
 * AUTH_BUF bytes, which the payload limit during authentication ensures).
 * A refusal becomes "PEER: authentication failed: <its reason>".
 */
static int recv_reply(struct clf_conn *c, const struct clf_proto_header *req,
		      uint16_t op, uint8_t *buf, struct wire_reader *r)
{
	struct clf_proto_header h;
	struct clf_proto_error e;
	int err = clf_conn_recv_header(c, &h);

	if (err)
		return err;
	if (h.payload_len > AUTH_BUF)
		return server_fail(c, -EPROTO,
				   "sent %u bytes during authentication",
				   h.payload_len);
	err = clf_conn_recv_payload(c, buf, h.payload_len);
	if (err)
		return err;
	*r = (struct wire_reader){ buf, h.payload_len, 0, false };
	if (!(h.flags & CLF_PROTO_FLAG_REPLY) || h.opcode != op ||
	    h.id != req->id)
		return server_fail(c, -EPROTO,
				   "authentication failed: unexpected %s message",
				   clf_proto_op_name(h.opcode) ?: "unknown");
	if (h.status < 0) {
		if (clf_proto_error_decode(r, &e) || e.message.len == 0)
			e.message = clf_proto_str_of(strerror(-h.status));
		return server_fail(c, h.status,
				   "authentication failed: %.*s",
				   (int)e.message.len, e.message.ptr);
	}
	return 0;
}

/*
 * The minor a client offers: its own, or an older one for tests that
 * play an older client (a hook, off by default: CLF_TEST_CLIENT_MINOR=N
 * in the environment, N below CLF_PROTO_VERSION_MINOR).
 */
static uint16_t offered_minor(void)
{
	const char *v = getenv("CLF_TEST_CLIENT_MINOR");
	char *end;
	long n;

	if (!v || !*v)
		return CLF_PROTO_VERSION_MINOR;
	n = strtol(v, &end, 10);
	if (*end || n < 0 || n >= CLF_PROTO_VERSION_MINOR)
		return CLF_PROTO_VERSION_MINOR;
	return (uint16_t)n;
}

/* The secret's RESPONSE and AUTH_OK (the exchange of auth.h). */
static int client_secret(struct clf_conn *c, const struct clf_secret *secret,
			 const char *role, const struct clf_proto_challenge *ch,
			 uint8_t nc[CLF_PROTO_NONCE_SIZE])
{
	struct clf_proto_response resp;
	struct clf_proto_auth_ok ok;
	uint8_t buf[AUTH_BUF], proof[CLF_PROTO_MAC_SIZE];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_header h;
	int err;

	randombytes_buf(resp.nonce, sizeof(resp.nonce));
	memcpy(nc, resp.nonce, sizeof(resp.nonce));
	hmac3(secret, ch->nonce, resp.nonce, role, strlen(role), resp.mac);
	clf_proto_response_encode(&w, &resp);
	clf_proto_header_init(&h, CLF_PROTO_OP_RESPONSE, clf_conn_next_id(c));
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_reply(c, &h, CLF_PROTO_OP_AUTH_OK, buf, &r);
	if (!err)
		err = clf_proto_auth_ok_decode(&r, &ok);
	if (err)
		return err;
	hmac3(secret, resp.nonce, ch->nonce, NULL, 0, proof);
	if (sodium_memcmp(proof, ok.mac, sizeof(proof)) != 0)
		return server_fail(c, -EACCES,
				   "authentication failed: the server does not know the secret");
	return 0;
}

/* MUNGE_RESPONSE and its AUTH_OK, with T in t. */
static int client_munge(struct clf_conn *c, const crypto_hash_sha256_state *t,
			uint8_t nc[CLF_PROTO_NONCE_SIZE])
{
	struct clf_proto_munge_response resp;
	struct clf_proto_munge_ok ok;
	uint8_t buf[AUTH_BUF], dc[CLF_AUTH_DIGEST_SIZE], ds[CLF_AUTH_DIGEST_SIZE];
	char text[CLF_PROTO_MUNGE_CRED_MAX + 1];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_header h;
	uint32_t uid, gid;
	char *cred;
	int err;

	randombytes_buf(resp.nonce, sizeof(resp.nonce));
	memcpy(nc, resp.nonce, sizeof(resp.nonce));
	munge_digests(t, resp.nonce, dc, ds);
	err = clf_munge_encode(dc, &cred);
	if (err)
		return err;
	resp.cred = clf_proto_str_of(cred);
	err = clf_proto_munge_response_encode(&w, &resp);
	free(cred);
	if (err)
		return err;
	clf_proto_header_init(&h, CLF_PROTO_OP_MUNGE_RESPONSE,
			      clf_conn_next_id(c));
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_reply(c, &h, CLF_PROTO_OP_AUTH_OK, buf, &r);
	if (!err)
		err = clf_proto_munge_ok_decode(&r, &ok);
	if (err)
		return err;
	cred_text(ok.cred, text);
	err = clf_munge_decode(text, ds, &uid, &gid);
	if (err)
		return server_fail(c, err,
				   "authentication failed: the server's %s",
				   clf_error_reason());
	if (uid != 0 && uid != geteuid())
		return server_fail(c, -EACCES,
				   "authentication failed: the server runs as uid %u, neither root nor this user",
				   uid);
	return 0;
}

/* One direction's session key from its X25519 key, T and Nc. */
static void seal_key(uint8_t out[CLF_SEAL_KEY], const uint8_t kx[CLF_SEAL_KEY],
		     const uint8_t th[CLF_AUTH_DIGEST_SIZE],
		     const struct clf_secret *secret)
{
	static const char domain[] = "clf-seal-1";
	crypto_generichash_state st;

	crypto_generichash_init(&st, secret ? secret->key : NULL,
				secret ? secret->len : 0, CLF_SEAL_KEY);
	crypto_generichash_update(&st, (const uint8_t *)domain, sizeof(domain));
	crypto_generichash_update(&st, kx, CLF_SEAL_KEY);
	crypto_generichash_update(&st, th, CLF_AUTH_DIGEST_SIZE);
	crypto_generichash_final(&st, out, CLF_SEAL_KEY);
	sodium_memzero(&st, sizeof(st));
}

/* A key pair for the exchange of one handshake (seal.h). */
struct kx_pair {
	uint8_t pk[crypto_kx_PUBLICKEYBYTES], sk[crypto_kx_SECRETKEYBYTES];
};

/*
 * Install the session keys of level on c, from our pair and the peer's
 * share, the transcript T (both shares, both levels) with Nc, and the
 * secret when the client proved it (a MUNGE credential covers T instead).
 */
static int install_keys(struct clf_conn *c, bool client, int level,
			struct kx_pair *me, const uint8_t peer[CLF_PROTO_KX_SIZE],
			const crypto_hash_sha256_state *t,
			const uint8_t nc[CLF_PROTO_NONCE_SIZE],
			const struct clf_secret *secret)
{
	uint8_t rx[crypto_kx_SESSIONKEYBYTES], tx[crypto_kx_SESSIONKEYBYTES];
	uint8_t th[CLF_AUTH_DIGEST_SIZE], krx[CLF_SEAL_KEY], ktx[CLF_SEAL_KEY];
	crypto_hash_sha256_state st = *t;
	int err, bad;

	_Static_assert(crypto_kx_SESSIONKEYBYTES == CLF_SEAL_KEY, "kx keys");
	bad = client ? crypto_kx_client_session_keys(rx, tx, me->pk, me->sk, peer)
		     : crypto_kx_server_session_keys(rx, tx, me->pk, me->sk, peer);
	sodium_memzero(me, sizeof(*me));
	if (bad)
		return server_fail(c, -EACCES,
				   "authentication failed: unusable key share");
	crypto_hash_sha256_update(&st, nc, CLF_PROTO_NONCE_SIZE);
	crypto_hash_sha256_final(&st, th);
	seal_key(ktx, tx, th, secret);
	seal_key(krx, rx, th, secret);
	err = clf_conn_protect(c, level, ktx, krx);
	sodium_memzero(rx, sizeof(rx));
	sodium_memzero(tx, sizeof(tx));
	sodium_memzero(ktx, sizeof(ktx));
	sodium_memzero(krx, sizeof(krx));
	return err;
}

static int client_exchange(struct clf_conn *c, const struct clf_secret *secret,
			   const char *role)
{
	struct clf_proto_hello hello = {
		CLF_PROTO_VERSION_MAJOR, offered_minor(),
		clf_proto_str_of(role), false, 0, { 0 },
	};
	struct clf_proto_challenge ch;
	crypto_hash_sha256_state t;
	uint8_t buf[AUTH_BUF], nc[CLF_PROTO_NONCE_SIZE];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_header h;
	struct kx_pair me;
	int want = clf_conn_wanted_protection(c), level = CLF_PROTECT_NONE;
	uint16_t minor;
	int err;

	transcript_init(&t);
	hello.has_kx = hello.minor >= 8;
	if (hello.has_kx) {
		crypto_kx_keypair(me.pk, me.sk);
		hello.protection = (uint8_t)want;
		memcpy(hello.kx, me.pk, sizeof(me.pk));
	}
	err = clf_proto_hello_encode(&w, &hello);
	if (err)
		return err;
	transcript_add(&t, buf, w.pos);
	clf_proto_header_init(&h, CLF_PROTO_OP_HELLO, clf_conn_next_id(c));
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_reply(c, &h, CLF_PROTO_OP_CHALLENGE, buf, &r);
	if (!err)
		err = clf_proto_challenge_decode(&r, &ch);
	if (err)
		return err;
	transcript_add(&t, buf, r.len);
	minor = clf_proto_negotiate_minor(ch.minor);
	if (minor > hello.minor)
		minor = hello.minor;
	if (hello.has_kx && ch.has_kx)
		level = ch.protection;
	if (level > CLF_PROTECT_PRIVACY || level < want)
		return server_fail(c, -EPROTO,
				   "authentication failed: it set protection %d, asked %s",
				   level, clf_protection_name(want));
	if (want && !(hello.has_kx && ch.has_kx))
		return server_fail(c, -EPROTONOSUPPORT,
				   "speaks protocol 1.%u, which cannot give protection = %s (1.8 can)",
				   minor, clf_protection_name(want));
	if (secret)
		err = client_secret(c, secret, role, &ch, nc);
	else if (minor < 7)
		err = server_fail(c, -EPROTONOSUPPORT,
				  "speaks protocol 1.%u, which has no MUNGE authentication",
				  minor);
	else
		err = client_munge(c, &t, nc);
	if (!err && level)
		err = install_keys(c, true, level, &me, ch.kx, &t, nc, secret);
	sodium_memzero(&me, sizeof(me));
	if (err)
		return err;
	clf_conn_set_minor(c, minor);
	return 0;
}

int clf_auth_client(struct clf_conn *c, const struct clf_secret *secret,
		    const char *role)
{
	uint32_t saved;
	int err = auth_init();

	if (!err && secret)
		err = check_secret(secret);
	if (err)
		return err;
	if (!role)
		return clf_fail(EINVAL, "clf: authentication: no role");
	/* The server is a stranger until it proves itself. */
	saved = clf_conn_max_payload(c);
	clf_conn_set_max_payload(c, CLF_AUTH_MAX_PAYLOAD);
	err = client_exchange(c, secret, role);
	clf_conn_set_max_payload(c, saved);
	return err;
}

/*
 * Receive a request op (or alt_op, when not 0) whose payload fits in buf;
 * refuse anything else.
 */
static int recv_request(struct clf_conn *c, uint16_t op, uint16_t alt_op,
			uint16_t reply_op, bool any_major,
			struct clf_proto_header *h, uint8_t *buf,
			struct wire_reader *r)
{
	int err = any_major ? clf_conn_recv_header_any_major(c, h)
			    : clf_conn_recv_header(c, h);

	if (err)
		return err;
	if (h->major != CLF_PROTO_VERSION_MAJOR) {
		send_refusal(c, h, reply_op, -EPROTONOSUPPORT,
			     "protocol versions differ");
		return clf_fail(EPROTONOSUPPORT,
				"clf: %s speaks protocol %u.%u, this side %d.%d",
				clf_conn_peer(c), h->major, h->minor,
				CLF_PROTO_VERSION_MAJOR,
				CLF_PROTO_VERSION_MINOR);
	}
	if ((h->opcode != op && (!alt_op || h->opcode != alt_op)) ||
	    (h->flags & CLF_PROTO_FLAG_REPLY) || h->payload_len > AUTH_BUF) {
		send_refusal(c, h, reply_op, -EACCES,
			     "authenticate first");
		return clf_fail(EPROTO,
				"clf: %s sent %s before authenticating",
				clf_conn_peer(c),
				clf_proto_op_name(h->opcode) ?: "an unknown message");
	}
	err = clf_conn_recv_payload(c, buf, h->payload_len);
	*r = (struct wire_reader){ buf, h->payload_len, 0, false };
	return err;
}

/* Ask the server whether the proven peer may stay (auth.h: admit). */
static int admit_peer(struct clf_conn *c, const struct clf_auth_peer *peer,
		      const struct clf_proto_header *req)
{
	char why[CLF_PROTO_ERRMSG_MAX] = "";
	int err;

	if (!peer->admit)
		return 0;
	err = peer->admit(peer->admit_arg, why, sizeof(why));
	if (!err)
		return 0;
	send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, err, why);
	return clf_fail_neg(err, "clf: %s refused: %s", clf_conn_peer(c), why);
}

/* Check a RESPONSE in r to the challenge ch and prove the secret back. */
static int server_secret(struct clf_conn *c, const struct clf_secret *secret,
			 const char *who, const struct clf_proto_challenge *ch,
			 const struct clf_proto_header *req,
			 struct wire_reader *r, const struct clf_auth_peer *peer,
			 uint8_t nc[CLF_PROTO_NONCE_SIZE])
{
	struct clf_proto_response resp;
	struct clf_proto_auth_ok ok;
	uint8_t buf[AUTH_BUF], expect[CLF_PROTO_MAC_SIZE];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_header h;
	int err = clf_proto_response_decode(r, &resp);

	if (err) {
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, err,
			     "malformed RESPONSE");
		return clf_fail_neg(err, "clf: %s sent a malformed RESPONSE",
				    clf_conn_peer(c));
	}
	memcpy(nc, resp.nonce, sizeof(resp.nonce));
	if (!secret) {
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, -EACCES,
			     "this server takes MUNGE credentials only");
		return clf_fail(EACCES,
				"clf: authentication of %s (%s) failed: it offered the secret, not taken here",
				clf_conn_peer(c), who);
	}
	hmac3(secret, ch->nonce, resp.nonce, who, strlen(who), expect);
	if (sodium_memcmp(expect, resp.mac, sizeof(expect)) != 0) {
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, -EACCES,
			     "wrong secret");
		return clf_fail(EACCES,
				"clf: authentication of %s (%s) failed: wrong secret",
				clf_conn_peer(c), who);
	}
	err = admit_peer(c, peer, req);
	if (err)
		return err;
	hmac3(secret, resp.nonce, ch->nonce, NULL, 0, ok.mac);
	clf_proto_auth_ok_encode(&w, &ok);
	clf_proto_header_init_reply(&h, req, 0);
	h.opcode = CLF_PROTO_OP_AUTH_OK;
	return send_body(c, &h, buf, &w);
}

/* Check a MUNGE_RESPONSE in r against T and answer with our credential. */
static int server_munge(struct clf_conn *c, const char *who,
			const crypto_hash_sha256_state *t, bool taken,
			const struct clf_proto_header *req,
			struct wire_reader *r, struct clf_auth_peer *peer,
			uint8_t nc[CLF_PROTO_NONCE_SIZE])
{
	struct clf_proto_munge_response resp;
	struct clf_proto_munge_ok ok;
	uint8_t buf[AUTH_BUF], dc[CLF_AUTH_DIGEST_SIZE], ds[CLF_AUTH_DIGEST_SIZE];
	char text[CLF_PROTO_MUNGE_CRED_MAX + 1];
	char why[CLF_PROTO_ERRMSG_MAX];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_header h;
	char *cred;
	int err = clf_proto_munge_response_decode(r, &resp);

	if (err) {
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, err,
			     "malformed MUNGE_RESPONSE");
		return clf_fail_neg(err, "clf: %s sent a malformed MUNGE_RESPONSE",
				    clf_conn_peer(c));
	}
	memcpy(nc, resp.nonce, sizeof(resp.nonce));
	if (!taken) {
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, -EACCES,
			     "this instance takes the secret only (auth = secret): ask its administrator");
		return clf_fail(EACCES,
				"clf: authentication of %s (%s) failed: it offered MUNGE, and auth = secret",
				clf_conn_peer(c), who);
	}
	munge_digests(t, resp.nonce, dc, ds);
	cred_text(resp.cred, text);
	err = clf_munge_decode(text, dc, &peer->uid, &peer->gid);
	if (err) {
		snprintf(why, sizeof(why), "%s", clf_error_reason());
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, -EACCES, why);
		return clf_fail(EACCES,
				"clf: authentication of %s (%s) failed: %s",
				clf_conn_peer(c), who, why);
	}
	err = admit_peer(c, peer, req);
	if (err)
		return err;
	err = clf_munge_encode(ds, &cred);
	if (err) {
		send_refusal(c, req, CLF_PROTO_OP_AUTH_OK, err,
			     "the server cannot get a MUNGE credential");
		return err;
	}
	ok.cred = clf_proto_str_of(cred);
	err = clf_proto_munge_ok_encode(&w, &ok);
	free(cred);
	if (err)
		return err;
	clf_proto_header_init_reply(&h, req, 0);
	h.opcode = CLF_PROTO_OP_AUTH_OK;
	return send_body(c, &h, buf, &w);
}

static int server_exchange(struct clf_conn *c, const struct clf_secret *secret,
			   unsigned methods, struct clf_auth_peer *peer)
{
	struct clf_proto_hello hello;
	struct clf_proto_challenge ch = {
		.major = CLF_PROTO_VERSION_MAJOR,
		.minor = CLF_PROTO_VERSION_MINOR,
	};
	crypto_hash_sha256_state t;
	uint8_t buf[AUTH_BUF], nc[CLF_PROTO_NONCE_SIZE];
	char who[CLF_PROTO_ROLE_MAX + 1];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_header req, h;
	struct kx_pair me;
	int level = clf_conn_wanted_protection(c);
	uint16_t minor;
	int err;

	transcript_init(&t);
	err = recv_request(c, CLF_PROTO_OP_HELLO, 0, CLF_PROTO_OP_CHALLENGE,
			   true, &req, buf, &r);
	if (err)
		return err;
	err = clf_proto_hello_decode(&r, &hello);
	if (err) {
		send_refusal(c, &req, CLF_PROTO_OP_CHALLENGE, err,
			     "malformed HELLO");
		return clf_fail_neg(err, "clf: %s sent a malformed HELLO",
				    clf_conn_peer(c));
	}
	transcript_add(&t, buf, r.len);
	memcpy(who, hello.role.ptr, hello.role.len);
	who[hello.role.len] = '\0';
	minor = clf_proto_negotiate_minor(hello.minor);
	if (!hello.has_kx && level) {
		send_refusal(c, &req, CLF_PROTO_OP_CHALLENGE, -EPROTONOSUPPORT,
			     "this instance protects every message (protection = integrity or privacy): a client of protocol 1.8 or later is needed");
		return clf_fail(EPROTONOSUPPORT,
				"clf: %s (%s) speaks protocol 1.%u, which has no message protection",
				clf_conn_peer(c), who, hello.minor);
	}
	if (hello.has_kx && hello.protection > CLF_PROTECT_PRIVACY) {
		send_refusal(c, &req, CLF_PROTO_OP_CHALLENGE, -EPROTO,
			     "unknown protection level");
		return clf_fail(EPROTO, "clf: %s asked protection %u",
				clf_conn_peer(c), hello.protection);
	}
	if (hello.has_kx && hello.protection > level)
		level = hello.protection;
	ch.has_kx = hello.has_kx;
	if (ch.has_kx) {
		crypto_kx_keypair(me.pk, me.sk);
		ch.protection = (uint8_t)level;
		memcpy(ch.kx, me.pk, sizeof(me.pk));
	}

	randombytes_buf(ch.nonce, sizeof(ch.nonce));
	clf_proto_challenge_encode(&w, &ch);
	transcript_add(&t, buf, w.pos);
	clf_proto_header_init_reply(&h, &req, 0);
	h.opcode = CLF_PROTO_OP_CHALLENGE;
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_request(c, CLF_PROTO_OP_RESPONSE,
				   CLF_PROTO_OP_MUNGE_RESPONSE,
				   CLF_PROTO_OP_AUTH_OK, false, &req, buf, &r);
	if (err)
		return err;
	*peer = (struct clf_auth_peer){ .method = CLF_AUTH_SECRET,
					.admit = peer->admit,
					.admit_arg = peer->admit_arg };
	if (req.opcode == CLF_PROTO_OP_RESPONSE) {
		err = server_secret(c, methods & CLF_AUTH_SECRET ? secret : NULL,
				    who, &ch, &req, &r, peer, nc);
	} else {
		peer->method = CLF_AUTH_MUNGE;
		err = server_munge(c, who, &t, methods & CLF_AUTH_MUNGE, &req,
				   &r, peer, nc);
	}
	if (!err && level)
		err = install_keys(c, false, level, &me, hello.kx, &t, nc,
				   peer->method == CLF_AUTH_SECRET ? secret : NULL);
	sodium_memzero(&me, sizeof(me));
	if (err)
		return err;
	memcpy(peer->role, who, strlen(who) + 1);
	clf_conn_set_minor(c, minor);
	return 0;
}

int clf_auth_server_peer(struct clf_conn *c, const struct clf_secret *secret,
			 unsigned methods, struct clf_auth_peer *peer)
{
	uint32_t saved;
	int err = auth_init();

	if (!err && (methods & CLF_AUTH_SECRET))
		err = check_secret(secret);
	if (err)
		return err;
	saved = clf_conn_max_payload(c);
	clf_conn_set_max_payload(c, CLF_AUTH_MAX_PAYLOAD);
	err = server_exchange(c, secret, methods, peer);
	clf_conn_set_max_payload(c, saved);
	return err;
}

int clf_auth_server(struct clf_conn *c, const struct clf_secret *secret,
		    char *role, size_t rolelen)
{
	struct clf_auth_peer peer = { .admit = NULL };	/* admit everyone */
	int err;

	if (!role || rolelen < CLF_PROTO_ROLE_MAX + 1)
		return clf_fail(EINVAL,
				"clf: authentication: role buffer under %d bytes",
				CLF_PROTO_ROLE_MAX + 1);
	err = clf_auth_server_peer(c, secret, CLF_AUTH_SECRET, &peer);
	if (!err)
		memcpy(role, peer.role, strlen(peer.role) + 1);
	return err;
}
