// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_keys.c -- the keys of the store's databases: numbers big-endian,
 * so that LMDB's byte order is their order.  Below the rest of the
 * store, which they call nothing of.
 */
#include <string.h>

#include "mds_store_i.h"

void mds_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

uint64_t mds_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void mds_ino_key(uint8_t buf[MDS_INO_KEY_LEN], uint64_t ino, MDB_val *key)
{
	mds_put_be64(buf, ino);
	key->mv_data = buf;
	key->mv_size = MDS_INO_KEY_LEN;
}

/* len <= MDS_NAME_MAX: the name passed mds_name_check. */
void mds_dirent_key(uint8_t buf[MDS_DIRENT_KEY_MAX], uint64_t dir,
		    const char *name, size_t len, MDB_val *key)
{
	mds_put_be64(buf, dir);
	memcpy(buf + 8, name, len);
	key->mv_data = buf;
	key->mv_size = 8 + len;
}

void mds_cookie_key(uint8_t buf[MDS_COOKIE_KEY_LEN], uint64_t dir,
		    uint64_t cookie, MDB_val *key)
{
	mds_put_be64(buf, dir);
	mds_put_be64(buf + 8, cookie);
	key->mv_data = buf;
	key->mv_size = MDS_COOKIE_KEY_LEN;
}

void mds_reply_key(uint8_t buf[MDS_REPLY_KEY_LEN], uint64_t client,
		   uint64_t seq, MDB_val *key)
{
	mds_put_be64(buf, client);
	mds_put_be64(buf + 8, seq);
	key->mv_data = buf;
	key->mv_size = MDS_REPLY_KEY_LEN;
}
