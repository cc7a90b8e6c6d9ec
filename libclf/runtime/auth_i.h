/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * auth_i.h -- inside authentication: MUNGE credentials (auth_munge.c).
 */
#ifndef CLF_AUTH_I_H
#define CLF_AUTH_I_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"

/*
 * A credential of this process's uid and gid whose payload is digest,
 * as text (caller frees).  -EHOSTDOWN when munged does not answer,
 * -EACCES or -ENOMEM otherwise, with munge's reason in the message.
 */
int clf_munge_encode(const uint8_t digest[CLF_AUTH_DIGEST_SIZE], char **out);

/*
 * Check cred (NUL-terminated) with munged: valid, not expired, never
 * decoded before, and its payload exactly digest.  0 with its uid and
 * gid, or -EACCES (-EHOSTDOWN: munged does not answer) with the reason.
 */
int clf_munge_decode(const char *cred,
		     const uint8_t digest[CLF_AUTH_DIGEST_SIZE], uint32_t *uid,
		     uint32_t *gid);

#endif /* CLF_AUTH_I_H */
