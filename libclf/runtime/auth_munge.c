// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * auth_munge.c -- MUNGE credentials bound to one handshake (auth.h).
 *
 * munged signs (uid, gid, time, TTL, payload) with the key every node of
 * the cluster shares; munge_decode checks the signature, the expiry and
 * that the credential was not decoded before (replay).  clf's payload is
 * a SHA-256 digest of the handshake so far, so a credential is good on
 * one connection only: one copied from the wire names another server
 * nonce.
 */
#include <errno.h>
#include <munge.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "auth_i.h"
#include "error.h"

/*
 * Test hooks, compiled in and off unless set (STYLE.md): make the
 * credential a client sends bad in one way, to prove the server refuses
 * it.  CLF_TEST_MUNGE_CRED = tamper (one character changed), expired
 * (TTL of 1 s, then wait 3 s: metad must wait longer, see mds.h), unbound (a payload of zeros), file:PATH
 * (send PATH's text instead).  CLF_TEST_MUNGE_SAVE=PATH: write the
 * credential sent to PATH.  None gives a user more than it has: any
 * program can send whatever bytes it likes.
 */
#define TEST_CRED_ENV "CLF_TEST_MUNGE_CRED"
#define TEST_SAVE_ENV "CLF_TEST_MUNGE_SAVE"

static int munge_error(munge_err_t e, const char *what)
{
	int err;

	switch (e) {
	case EMUNGE_SOCKET:
	case EMUNGE_TIMEOUT:
		err = EHOSTDOWN;
		break;
	case EMUNGE_NO_MEMORY:
		err = ENOMEM;
		break;
	default:
		err = EACCES;
	}
	return clf_fail(err, "clf: %s: %s%s", what, munge_strerror(e),
			e == EMUNGE_SOCKET ? " (is munged running?)" : "");
}

static int save_cred(const char *cred)
{
	const char *path = getenv(TEST_SAVE_ENV);
	FILE *f;

	if (!path)
		return 0;
	f = fopen(path, "w");
	if (!f)
		return clf_fail(errno, "clf: %s: %s", path, strerror(errno));
	fprintf(f, "%s\n", cred);
	fclose(f);
	return 0;
}

static int cred_from_file(const char *path, char **out)
{
	char buf[CLF_PROTO_MUNGE_CRED_MAX + 2];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return clf_fail(errno, "clf: %s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	*out = strdup(buf);
	return *out ? 0 : clf_fail(ENOMEM, "clf: out of memory");
}

int clf_munge_encode(const uint8_t digest[CLF_AUTH_DIGEST_SIZE],
		     char **out)
{
	const char *test = getenv(TEST_CRED_ENV);
	uint8_t payload[CLF_AUTH_DIGEST_SIZE];
	munge_ctx_t ctx = NULL;
	munge_err_t e;
	char *cred;
	int err;

	if (test && !strncmp(test, "file:", 5))
		return cred_from_file(test + 5, out);
	memcpy(payload, digest, sizeof(payload));
	if (test && !strcmp(test, "unbound"))
		memset(payload, 0, sizeof(payload));
	if (test && !strcmp(test, "expired")) {
		ctx = munge_ctx_create();
		if (!ctx || munge_ctx_set(ctx, MUNGE_OPT_TTL, 1) != EMUNGE_SUCCESS) {
			munge_ctx_destroy(ctx);
			return clf_fail(ENOMEM, "clf: cannot make a MUNGE context");
		}
	}
	e = munge_encode(&cred, ctx, payload, sizeof(payload));
	munge_ctx_destroy(ctx);
	if (e != EMUNGE_SUCCESS)
		return munge_error(e, "cannot get a MUNGE credential");
	if (test && !strcmp(test, "expired"))
		sleep(3);	/* munged counts whole seconds */
	if (test && !strcmp(test, "tamper")) {
		size_t mid = strlen(cred) / 2;

		cred[mid] = cred[mid] == 'A' ? 'B' : 'A';
	}
	err = save_cred(cred);
	if (err) {
		free(cred);
		return err;
	}
	*out = cred;
	return 0;
}

int clf_munge_decode(const char *cred, const uint8_t
		     digest[CLF_AUTH_DIGEST_SIZE], uint32_t *uid,
		     uint32_t *gid)
{
	void *payload = NULL;
	munge_err_t e;
	uid_t u;
	gid_t g;
	int len = 0, err = 0;

	e = munge_decode(cred, NULL, &payload, &len, &u, &g);
	if (e != EMUNGE_SUCCESS) {
		err = munge_error(e, "MUNGE credential refused");
		goto free_payload;
	}
	if (len != CLF_AUTH_DIGEST_SIZE ||
	    sodium_memcmp(payload, digest, CLF_AUTH_DIGEST_SIZE) != 0) {
		err = clf_fail(EACCES,
			       "clf: MUNGE credential refused: it was made for another connection");
		goto free_payload;
	}
	*uid = u;
	*gid = g;
free_payload:
	free(payload);
	return err;
}

/*
 * Whether something listens on munged's socket.  libmunge retries a
 * refused connection for about 2 s before it gives up: without this,
 * every daemon start and every client's CLF_init paid that wait on a
 * node with munge installed and munged not running (auth = auto).
 */
static bool munge_socket_listens(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	munge_ctx_t ctx = munge_ctx_create();
	char *path = NULL;
	bool ok = true;		/* unknown: let munge_encode say */
	int fd;

	if (!ctx)
		return ok;
	if (munge_ctx_get(ctx, MUNGE_OPT_SOCKET, &path) == EMUNGE_SUCCESS &&
	    path && strlen(path) < sizeof(addr.sun_path)) {
		strcpy(addr.sun_path, path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			ok = connect(fd, (struct sockaddr *)&addr,
				     sizeof(addr)) == 0;
			close(fd);
		}
	}
	munge_ctx_destroy(ctx);
	return ok;
}

bool clf_munge_available(void)
{
	uint8_t digest[CLF_AUTH_DIGEST_SIZE] = { 0 };
	char *cred = NULL;
	bool ok;

	if (!munge_socket_listens())
		return false;
	ok = munge_encode(&cred, NULL, digest, sizeof(digest)) ==
	     EMUNGE_SUCCESS;
	free(cred);
	return ok;
}
