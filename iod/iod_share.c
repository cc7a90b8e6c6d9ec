// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * iod_share.c -- fair shares of a memory pool (the rule is in the header).
 */
#include <errno.h>
#include <stdio.h>

#include "error.h"
#include "iod_share.h"

void iod_pool_init(struct iod_pool *p, const char *what, const char *key,
		   size_t limit, size_t min_share)
{
	*p = (struct iod_pool){ .what = what, .key = key, .limit = limit,
				.min_share = min_share };
}

size_t iod_pool_share(const struct iod_pool *p, size_t mine)
{
	unsigned holders = p->holders + (mine ? 0 : 1);
	size_t fair = p->limit / ((size_t)holders + 1);

	return fair > p->min_share ? fair : p->min_share;
}

bool iod_pool_fits(const struct iod_pool *p, size_t mine, size_t n)
{
	size_t share = iod_pool_share(p, mine);

	return n <= share && mine <= share - n && n <= p->limit &&
	       p->used <= p->limit - n;
}

const char *iod_bytes_str(size_t n, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, len, "%zu bytes", n);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 10 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

int iod_pool_take(struct iod_pool *p, size_t *mine, size_t n)
{
	unsigned holders = p->holders + (*mine ? 0 : 1);
	char a[32], b[32], c[32], d[32];
	size_t share;

	if (iod_pool_fits(p, *mine, n)) {
		if (!*mine && n)
			p->holders++;
		*mine += n;
		p->used += n;
		return 0;
	}
	share = iod_pool_share(p, *mine);
	if (n > share || *mine > share - n)
		return clf_fail(ENOBUFS,
				"iod: %s of this client use %s of its %s share and need %s more (%s = %s, shared by %u client%s)",
				p->what, iod_bytes_str(*mine, a, sizeof(a)),
				iod_bytes_str(share, b, sizeof(b)),
				iod_bytes_str(n, c, sizeof(c)), p->key,
				iod_bytes_str(p->limit, d, sizeof(d)), holders,
				holders == 1 ? "" : "s");
	return clf_fail(ENOBUFS,
			"iod: %s of all clients use %s of the iod's %s and this client needs %s more (%s)",
			p->what, iod_bytes_str(p->used, a, sizeof(a)),
			iod_bytes_str(p->limit, b, sizeof(b)),
			iod_bytes_str(n, c, sizeof(c)), p->key);
}

void iod_pool_give(struct iod_pool *p, size_t *mine, size_t n)
{
	if (n > *mine)
		n = *mine;
	*mine -= n;
	p->used -= n;
	if (!*mine && n)
		p->holders--;
}
