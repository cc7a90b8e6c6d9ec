// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * auth.c -- shared secrets and the HMAC-SHA256 challenge-response of
 * auth.h, on libsodium.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
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
		char why[200];

		snprintf(why, sizeof(why), "%s", CLF_Last_error());
		err = clf_fail_neg(err, "clf: secret file '%s': %s", path,
				   why + (strncmp(why, "clf: ", 5) ? 0 : 5));
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
	       AUTH_BUF >= 2 * CLF_PROTO_NONCE_SIZE,
	       "authentication bodies fit in AUTH_BUF");

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
 * Receive the reply to req, expected with opcode op, into buf (at most
 * AUTH_BUF bytes, which the payload limit during authentication ensures).
 * A refusal becomes "authentication with PEER failed: <its reason>".
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
		return clf_fail(EPROTO, "clf: %s sent %u bytes during authentication",
				clf_conn_peer(c), h.payload_len);
	err = clf_conn_recv_payload(c, buf, h.payload_len);
	if (err)
		return err;
	*r = (struct wire_reader){ buf, h.payload_len, 0, false };
	if (!(h.flags & CLF_PROTO_FLAG_REPLY) || h.opcode != op ||
	    h.id != req->id)
		return clf_fail(EPROTO,
				"clf: authentication with %s failed: unexpected %s message",
				clf_conn_peer(c),
				clf_proto_op_name(h.opcode) ?: "unknown");
	if (h.status < 0) {
		if (clf_proto_error_decode(r, &e) || e.message.len == 0)
			e.message = clf_proto_str_of(strerror(-h.status));
		return clf_fail_neg(h.status,
				    "clf: authentication with %s failed: %.*s",
				    clf_conn_peer(c), (int)e.message.len,
				    e.message.ptr);
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

static int client_exchange(struct clf_conn *c, const struct clf_secret *secret,
			   const char *role)
{
	struct clf_proto_hello hello = {
		CLF_PROTO_VERSION_MAJOR, offered_minor(),
		clf_proto_str_of(role),
	};
	struct clf_proto_challenge ch;
	struct clf_proto_response resp;
	struct clf_proto_auth_ok ok;
	uint8_t buf[AUTH_BUF], proof[CLF_PROTO_MAC_SIZE];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_header h;
	uint16_t minor;
	int err;

	err = clf_proto_hello_encode(&w, &hello);
	if (err)
		return err;
	clf_proto_header_init(&h, CLF_PROTO_OP_HELLO, clf_conn_next_id(c));
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_reply(c, &h, CLF_PROTO_OP_CHALLENGE, buf, &r);
	if (!err)
		err = clf_proto_challenge_decode(&r, &ch);
	if (err)
		return err;
	minor = clf_proto_negotiate_minor(ch.minor);
	if (minor > hello.minor)
		minor = hello.minor;

	randombytes_buf(resp.nonce, sizeof(resp.nonce));
	hmac3(secret, ch.nonce, resp.nonce, role, strlen(role), resp.mac);
	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	clf_proto_response_encode(&w, &resp);
	clf_proto_header_init(&h, CLF_PROTO_OP_RESPONSE, clf_conn_next_id(c));
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_reply(c, &h, CLF_PROTO_OP_AUTH_OK, buf, &r);
	if (!err)
		err = clf_proto_auth_ok_decode(&r, &ok);
	if (err)
		return err;
	hmac3(secret, resp.nonce, ch.nonce, NULL, 0, proof);
	if (sodium_memcmp(proof, ok.mac, sizeof(proof)) != 0)
		return clf_fail(EACCES,
				"clf: authentication with %s failed: the server does not know the secret",
				clf_conn_peer(c));
	clf_conn_set_minor(c, minor);
	return 0;
}

int clf_auth_client(struct clf_conn *c, const struct clf_secret *secret,
		    const char *role)
{
	uint32_t saved;
	int err = auth_init();

	if (!err)
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

/* Receive a request op whose payload fits in buf; refuse anything else. */
static int recv_request(struct clf_conn *c, uint16_t op, uint16_t reply_op,
			bool any_major, struct clf_proto_header *h,
			uint8_t *buf, struct wire_reader *r)
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
	if (h->opcode != op || (h->flags & CLF_PROTO_FLAG_REPLY) ||
	    h->payload_len > AUTH_BUF) {
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

static int server_exchange(struct clf_conn *c, const struct clf_secret *secret,
			   char *role, size_t rolelen)
{
	struct clf_proto_hello hello;
	struct clf_proto_challenge ch = {
		CLF_PROTO_VERSION_MAJOR, CLF_PROTO_VERSION_MINOR, { 0 },
	};
	struct clf_proto_response resp;
	struct clf_proto_auth_ok ok;
	uint8_t buf[AUTH_BUF], expect[CLF_PROTO_MAC_SIZE];
	char who[CLF_PROTO_ROLE_MAX + 1];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_header req, h;
	uint16_t minor;
	int err;

	err = recv_request(c, CLF_PROTO_OP_HELLO, CLF_PROTO_OP_CHALLENGE, true,
			   &req, buf, &r);
	if (err)
		return err;
	err = clf_proto_hello_decode(&r, &hello);
	if (err) {
		send_refusal(c, &req, CLF_PROTO_OP_CHALLENGE, err,
			     "malformed HELLO");
		return clf_fail_neg(err, "clf: %s sent a malformed HELLO",
				    clf_conn_peer(c));
	}
	memcpy(who, hello.role.ptr, hello.role.len);
	who[hello.role.len] = '\0';
	minor = clf_proto_negotiate_minor(hello.minor);

	randombytes_buf(ch.nonce, sizeof(ch.nonce));
	clf_proto_challenge_encode(&w, &ch);
	clf_proto_header_init_reply(&h, &req, 0);
	h.opcode = CLF_PROTO_OP_CHALLENGE;
	err = send_body(c, &h, buf, &w);
	if (!err)
		err = recv_request(c, CLF_PROTO_OP_RESPONSE,
				   CLF_PROTO_OP_AUTH_OK, false, &req, buf, &r);
	if (err)
		return err;
	err = clf_proto_response_decode(&r, &resp);
	if (err) {
		send_refusal(c, &req, CLF_PROTO_OP_AUTH_OK, err,
			     "malformed RESPONSE");
		return clf_fail_neg(err, "clf: %s sent a malformed RESPONSE",
				    clf_conn_peer(c));
	}
	hmac3(secret, ch.nonce, resp.nonce, who, strlen(who), expect);
	if (sodium_memcmp(expect, resp.mac, sizeof(expect)) != 0) {
		send_refusal(c, &req, CLF_PROTO_OP_AUTH_OK, -EACCES,
			     "wrong secret");
		return clf_fail(EACCES,
				"clf: authentication of %s (%s) failed: wrong secret",
				clf_conn_peer(c), who);
	}
	hmac3(secret, resp.nonce, ch.nonce, NULL, 0, ok.mac);
	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	clf_proto_auth_ok_encode(&w, &ok);
	clf_proto_header_init_reply(&h, &req, 0);
	h.opcode = CLF_PROTO_OP_AUTH_OK;
	err = send_body(c, &h, buf, &w);
	if (err)
		return err;
	memcpy(role, who, strlen(who) + 1);
	clf_conn_set_minor(c, minor);
	return 0;
}

int clf_auth_server(struct clf_conn *c, const struct clf_secret *secret,
		    char *role, size_t rolelen)
{
	uint32_t saved;
	int err = auth_init();

	if (!err)
		err = check_secret(secret);
	if (err)
		return err;
	if (!role || rolelen < CLF_PROTO_ROLE_MAX + 1)
		return clf_fail(EINVAL,
				"clf: authentication: role buffer under %d bytes",
				CLF_PROTO_ROLE_MAX + 1);
	saved = clf_conn_max_payload(c);
	clf_conn_set_max_payload(c, CLF_AUTH_MAX_PAYLOAD);
	err = server_exchange(c, secret, role, rolelen);
	clf_conn_set_max_payload(c, saved);
	return err;
}
