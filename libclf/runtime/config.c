// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * config.c -- load, check and write the configuration (config.h).
 *
 * inih does the parsing.  It hands the handler no line numbers, so it
 * reads through our line reader, which counts lines, refuses lines inih
 * would cut, and notes where each [section] starts: that is how errors
 * name their line, how repeated [iod] sections are told apart, and how an
 * empty section is noticed.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "log.h"
#include "transport.h"

#define TIMEOUT_MAX_MS (3600 * 1000)
/* A metadata change retried later than metad keeps its reply could run
 * twice (clf_proto.h, "Retries"): the grace stays within that. */
#define GRACE_MAX_S CLF_PROTO_REPLY_KEEP_S
#define MSG_MAX 400

enum key {
	K_SECRET, K_SECRET_FILE, K_STRIPE_SIZE, K_STRIPE_COUNT, K_FIRST_IOD,
	K_TIMEOUT, K_DATA_DIR, K_TRANSPORT, K_METAD,
	K_IOD_VIEW_MEM, K_IOD_VIEW_SHARE, K_IOD_BUF_MEM, K_IOD_BUF_SHARE,
	K_AUTH, K_ROOT_SQUASH, K_PROTECTION, K_CAP_LIFETIME, K_GRACE,
	K_LOG_LEVEL, K_IOD_CONNS, K_WORKERS, K_CLIENT_CACHE, K_BACKING,
	K_ADDRESS, K_DIR,	/* in [metad] and [iod] */
	K_NR
};

static const char *const key_names[K_NR] = {
	[K_SECRET] = "secret", [K_SECRET_FILE] = "secret_file",
	[K_STRIPE_SIZE] = "stripe_size", [K_STRIPE_COUNT] = "stripe_count",
	[K_FIRST_IOD] = "first_iod", [K_TIMEOUT] = "timeout_ms",
	[K_DATA_DIR] = "data_dir", [K_TRANSPORT] = "transport",
	[K_METAD] = "metad", [K_ADDRESS] = "address", [K_DIR] = "dir",
	[K_IOD_VIEW_MEM] = "iod_view_memory",
	[K_IOD_VIEW_SHARE] = "iod_view_min_share",
	[K_IOD_BUF_MEM] = "iod_buffer_memory",
	[K_IOD_BUF_SHARE] = "iod_buffer_min_share",
	[K_AUTH] = "auth", [K_ROOT_SQUASH] = "root_squash",
	[K_PROTECTION] = "protection", [K_CAP_LIFETIME] = "capability_lifetime",
	[K_GRACE] = "recovery_grace_s", [K_LOG_LEVEL] = "log_level",
	[K_IOD_CONNS] = "iod_connections",
	[K_WORKERS] = "daemon_workers",
	[K_CLIENT_CACHE] = "client_cache",
	[K_BACKING] = "backing",
};

/* Where the [global] iod memory keys go in a config. */
static int64_t *iod_mem_field(struct clf_config *cfg, enum key k)
{
	switch (k) {
	case K_IOD_VIEW_MEM: return &cfg->iod_view_memory;
	case K_IOD_VIEW_SHARE: return &cfg->iod_view_min_share;
	case K_IOD_BUF_MEM: return &cfg->iod_buffer_memory;
	case K_IOD_BUF_SHARE: return &cfg->iod_buffer_min_share;
	default: return NULL;
	}
}

enum section { SEC_GLOBAL, SEC_METAD, SEC_IOD, SEC_OTHER };

/* A daemon as read: dir stays NULL until defaults are known. */
struct raw_daemon {
	char *addr, *host, *port, *dir;
	int line;
};

struct parse {
	const char *path;	/* for messages */
	char *base;		/* directory relative paths start from */
	FILE *f;
	/* Kept by the line reader. */
	int line;		/* of the line inih is parsing */
	int sec_seq;		/* section headers seen */
	int sec_line;		/* line of the latest header */
	char sec_name[64];	/* its name, for messages */
	bool sec_used;		/* the handler saw a key in it */
	/* Kept by the handler. */
	int cur_seq;		/* section of the last key */
	enum section sec;
	int key_line[K_NR];	/* where each key was given, 0 if not */
	struct raw_daemon *daemon;	/* of the current [metad]/[iod] */
	/* The first error. */
	int err;
	int err_line;
	char msg[MSG_MAX];
	/* Results. */
	struct clf_config *cfg;
	char *data_dir;		/* as written */
	char *backing;		/* as written */
	bool has_metad;
	struct raw_daemon metad;
	/* metads after the first, in the order given: indexes 1, 2, ... */
	struct raw_daemon *more_metads;
	uint32_t nmore_metads, more_metad_cap;
	struct raw_daemon *iods;
	uint32_t niods, iod_cap;
};

static int perr(struct parse *p, int line, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Record the first error; returns 0 for inih ("stop being happy"). */
static int perr(struct parse *p, int line, int err, const char *fmt, ...)
{
	va_list ap;

	if (p->err)
		return 0;
	p->err = err;
	p->err_line = line;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Small parsers                                                       */
/* ------------------------------------------------------------------ */

int clf_parse_size(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end)
		return -EINVAL;
	if (v > (unsigned long long)INT64_MAX >> shift)
		return -ERANGE;
	*out = (int64_t)(v << shift);
	return 0;
}

static int parse_int(const char *s, long long min, long long max,
		     long long *out)
{
	char *end;
	long long v;

	if (!s || !*s || ((*s < '0' || *s > '9') && *s != '-'))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static char *join_path(const char *base, const char *path)
{
	size_t n;
	char *r;

	while (path[0] == '.' && path[1] == '/')
		path += 2;
	if (path[0] == '/' || !base)
		return strdup(path);
	if (strcmp(path, ".") == 0)
		return strdup(base);
	n = strlen(base) + strlen(path) + 2;
	r = malloc(n);
	if (r)
		snprintf(r, n, "%s%s%s", base,
			 base[strlen(base) - 1] == '/' ? "" : "/", path);
	return r;
}

/*
 * The absolute directory that relative paths in file path start from
 * (path NULL: the working directory) into *out, which the caller frees.
 */
static int base_of(const char *path, char **out)
{
	char cwd[PATH_MAX], *dir, *slash;

	if (!path || path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return clf_fail(errno,
					"clf: cannot tell the working directory: %s",
					strerror(errno));
	}
	dir = strdup(path ? path : ".");
	if (!dir)
		return clf_fail(ENOMEM, "clf: out of memory");
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	*out = dir[0] == '/' ? strdup(dir) : join_path(cwd, dir);
	free(dir);
	if (!*out)
		return clf_fail(ENOMEM, "clf: out of memory");
	return 0;
}

static void raw_daemon_release(struct raw_daemon *d)
{
	free(d->addr);
	free(d->host);
	free(d->port);
	free(d->dir);
	*d = (struct raw_daemon){ 0 };
}

/*
 * Fill d from an address "host:port" (with_dir false) or a daemon spec
 * "host:port[:dir]" (with_dir true; IPv6 hosts in brackets).
 */
static int set_address(struct parse *p, struct raw_daemon *d,
		       const char *value, bool with_dir, const char *key)
{
	char host[CLF_ADDR_MAX], port[16], addr[CLF_ADDR_MAX];
	const char *dir = NULL, *after;
	char why[MSG_MAX], scheme[16] = "";
	const char *sep = strstr(value, "://");
	long long pnum;
	size_t alen;

	/* "rdma://host:port": that daemon's transport (transport.h). */
	if (sep && sep - value < (long)sizeof(scheme) - 3 &&
	    !memchr(value, ':', (size_t)(sep - value))) {
		if (!clf_addr_transport(value, &clf_transport_tcp))
			return perr(p, p->line, ENOENT, "%s: %s", key,
				    clf_error_reason());
		memcpy(scheme, value, (size_t)(sep - value) + 3);
		scheme[sep - value + 3] = '\0';
		value = sep + 3;
	}
	after = value[0] == '[' ? strchr(value, ']') : value;
	after = after ? strchr(after, ':') : NULL;	/* before the port */
	if (with_dir && after)
		dir = strchr(after + 1, ':');
	alen = dir ? (size_t)(dir - value) : strlen(value);
	if (alen >= sizeof(addr))
		return perr(p, p->line, ENAMETOOLONG, "%s: address too long",
			    key);
	memcpy(addr, value, alen);
	addr[alen] = '\0';
	if (clf_addr_split(addr, host, sizeof(host), port, sizeof(port))) {
		/* Its message already starts "address '...'". */
		snprintf(why, sizeof(why), "%s", clf_error_reason());
		return perr(p, p->line, EINVAL, "%s%s%s",
			    strcmp(key, "address") ? key : "",
			    strcmp(key, "address") ? ": " : "", why);
	}
	if (!host[0] || parse_int(port, 1, 65535, &pnum))
		return perr(p, p->line, EINVAL,
			    "%s: '%s' needs a host and a port from 1 to 65535",
			    key, addr);
	if (dir && !dir[1])
		return perr(p, p->line, EINVAL, "%s: empty directory after '%s:'",
			    key, addr);
	raw_daemon_release(d);
	d->line = p->line;
	d->host = strdup(host);
	d->port = strdup(port);
	d->addr = malloc(strlen(scheme) + strlen(host) + strlen(port) + 4);
	if (d->addr)
		sprintf(d->addr, strchr(host, ':') ? "%s[%s]:%s" : "%s%s:%s",
			scheme, host, port);
	if (dir)
		d->dir = join_path(p->base, dir + 1);
	if (!d->host || !d->port || !d->addr || (dir && !d->dir))
		return perr(p, p->line, ENOMEM, "out of memory");
	return 1;
}

static struct raw_daemon *new_iod(struct parse *p, int line)
{
	if (p->niods == CLF_CONFIG_MAX_IODS) {
		perr(p, line, E2BIG, "more than %d iods", CLF_CONFIG_MAX_IODS);
		return NULL;
	}
	if (p->niods == p->iod_cap) {
		uint32_t cap = p->iod_cap ? 2 * p->iod_cap : 8;
		struct raw_daemon *n = realloc(p->iods, cap * sizeof(*n));

		if (!n) {
			perr(p, line, ENOMEM, "out of memory");
			return NULL;
		}
		p->iods = n;
		p->iod_cap = cap;
	}
	p->iods[p->niods] = (struct raw_daemon){ .line = line };
	return &p->iods[p->niods++];
}

/*
 * The next metad: the first fills p->metad, each later one (a namespace
 * spread over several metads) is appended with the next index.
 */
static struct raw_daemon *new_metad(struct parse *p, int line)
{
	if (!p->has_metad) {
		p->has_metad = true;
		p->metad = (struct raw_daemon){ .line = line };
		return &p->metad;
	}
	if (p->nmore_metads + 1 >= CLF_CONFIG_MAX_METADS) {
		perr(p, line, E2BIG, "more than %d metads",
		     CLF_CONFIG_MAX_METADS);
		return NULL;
	}
	if (p->nmore_metads == p->more_metad_cap) {
		uint32_t cap = p->more_metad_cap ? 2 * p->more_metad_cap : 4;
		struct raw_daemon *n = realloc(p->more_metads,
					       cap * sizeof(*n));

		if (!n) {
			perr(p, line, ENOMEM, "out of memory");
			return NULL;
		}
		p->more_metads = n;
		p->more_metad_cap = cap;
	}
	p->more_metads[p->nmore_metads] = (struct raw_daemon){ .line = line };
	return &p->more_metads[p->nmore_metads++];
}

/* ------------------------------------------------------------------ */
/* inih callbacks                                                      */
/* ------------------------------------------------------------------ */

static void check_empty_section(struct parse *p)
{
	if (p->sec_seq && !p->sec_used &&
	    (strcmp(p->sec_name, "iod") == 0 ||
	     strcmp(p->sec_name, "metad") == 0))
		perr(p, p->sec_line, EINVAL,
		     "[%s] section without an address", p->sec_name);
}

/*
 * fgets for inih, which also counts lines and notes section headers.
 * Stops the parse (NULL) on a line longer than inih's buffer, which
 * inih would otherwise split into two lines.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	size_t n;
	char *s;
	int c;

	if (!fgets(str, num, p->f)) {
		check_empty_section(p);
		return NULL;
	}
	p->line++;
	n = strlen(str);
	if (n == (size_t)num - 1 && str[n - 1] != '\n') {
		c = getc(p->f);
		if (c != EOF) {
			ungetc(c, p->f);
			perr(p, p->line, E2BIG,
			     "line longer than %d characters", num - 2);
			return NULL;
		}
	}
	s = str;
	if (p->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;	/* UTF-8 byte order mark */
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[') {
		size_t k = strcspn(s + 1, "]\r\n");

		check_empty_section(p);
		p->sec_seq++;
		p->sec_line = p->line;
		p->sec_used = false;
		snprintf(p->sec_name, sizeof(p->sec_name), "%.*s",
			 (int)(k < 60 ? k : 60), s + 1);
	}
	return str;
}

static enum key find_key(const char *name)
{
	for (int k = 0; k < K_NR; k++)
		if (strcmp(name, key_names[k]) == 0)
			return (enum key)k;
	return K_NR;
}

static int enter_section(struct parse *p, const char *section)
{
	p->cur_seq = p->sec_seq;
	p->daemon = NULL;
	if (!*section || strcmp(section, "global") == 0) {
		p->sec = SEC_GLOBAL;
		return 1;
	}
	p->key_line[K_ADDRESS] = p->key_line[K_DIR] = 0;
	if (strcmp(section, "metad") == 0) {
		p->sec = SEC_METAD;
		p->daemon = new_metad(p, p->sec_line);
		return p->daemon ? 1 : 0;
	}
	if (strcmp(section, "iod") == 0) {
		p->sec = SEC_IOD;
		p->daemon = new_iod(p, p->sec_line);
		return p->daemon ? 1 : 0;
	}
	p->sec = SEC_OTHER;
	return perr(p, p->sec_line, EINVAL,
		    "unknown section [%s] (known: global, metad, iod)",
		    section);
}

/* Whether only the owner may read the file being parsed. */
static bool secret_private(struct parse *p)
{
	struct stat st;

	return fstat(fileno(p->f), &st) == 0 && !(st.st_mode & 077);
}

static int global_key(struct parse *p, enum key k, const char *value)
{
	struct clf_config *cfg = p->cfg;
	const char *name = key_names[k];
	char why[MSG_MAX];
	long long v;
	int64_t size;
	char *path;
	int err;

	switch (k) {
	case K_SECRET:
	case K_SECRET_FILE:
		if (p->key_line[K_SECRET] && p->key_line[K_SECRET_FILE])
			return perr(p, p->line, EINVAL,
				    "give secret or secret_file, not both");
		if (k == K_SECRET) {
			/* The same rule as for a secret_file. */
			if (!secret_private(p))
				return perr(p, p->line, EACCES,
					    "secret: %s holds the secret and is open to group or others (chmod 600 it, or move the secret to a secret_file)",
					    p->path);
			err = clf_secret_from_hex(&cfg->secret, value);
		} else {
			path = join_path(p->base, value);
			if (!path)
				return perr(p, p->line, ENOMEM, "out of memory");
			free(cfg->secret_file);
			cfg->secret_file = path;
			/* Not root: this process uses MUNGE instead. */
			if (access(path, R_OK) < 0 && errno == EACCES) {
				cfg->secret_unreadable = true;
				return 1;
			}
			err = clf_secret_load_file(&cfg->secret, path);
		}
		if (err) {
			snprintf(why, sizeof(why), "%s", clf_error_reason());
			return perr(p, p->line, -err, "%s: %s", name, why);
		}
		cfg->has_secret = true;
		return 1;
	case K_STRIPE_SIZE:
		err = clf_parse_size(value, &size);
		if (err || size < 1 || size > CLF_PROTO_STRIPE_MAX)
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a size from 1 to 1g (a number with an optional k, m or g suffix)",
				    name, value);
		cfg->stripe_size = size;
		return 1;
	case K_STRIPE_COUNT:
		if (parse_int(value, 1, CLF_CONFIG_MAX_IODS, &v))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a whole number from 1 to %d",
				    name, value, CLF_CONFIG_MAX_IODS);
		cfg->stripe_count = (uint32_t)v;
		return 1;
	case K_FIRST_IOD:
		if (parse_int(value, 0, CLF_CONFIG_MAX_IODS - 1, &v))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a whole number from 0 to %d",
				    name, value, CLF_CONFIG_MAX_IODS - 1);
		cfg->first_iod = (uint32_t)v;
		return 1;
	case K_TIMEOUT:
		if (parse_int(value, 1, TIMEOUT_MAX_MS, &v))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a whole number of milliseconds from 1 to %d",
				    name, value, TIMEOUT_MAX_MS);
		cfg->timeout_ms = (int)v;
		return 1;
	case K_GRACE:
		if (parse_int(value, 0, GRACE_MAX_S, &v))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a whole number of seconds from 0 to %d (metad keeps the replies that retries need that long)",
				    name, value, GRACE_MAX_S);
		cfg->recovery_grace_s = (int)v;
		return 1;
	case K_IOD_CONNS:
		if (parse_int(value, 1, CLF_CONFIG_MAX_IOD_CONNS, &v))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a whole number from 1 to %d",
				    name, value, CLF_CONFIG_MAX_IOD_CONNS);
		cfg->iod_connections = (int)v;
		return 1;
	case K_CLIENT_CACHE:
		err = clf_parse_size(value, &size);
		if (err || size < 0 || size > ((int64_t)1 << 40))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a size from 0 (off) to 1t (a number with an optional k, m or g suffix)",
				    name, value);
		cfg->client_cache = size;
		return 1;
	case K_LOG_LEVEL:
		if (clf_log_level_parse(value) < 0)
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not error, warn, info or debug",
				    name, value);
		cfg->log_level = clf_log_level_parse(value);
		return 1;
	case K_WORKERS:
		if (parse_int(value, 0, CLF_CONFIG_WORKERS_MAX, &v))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a whole number from 0 (2 per core) to %d",
				    name, value, CLF_CONFIG_WORKERS_MAX);
		cfg->daemon_workers = (int)v;
		return 1;
	case K_DATA_DIR:
		if (!*value)
			return perr(p, p->line, EINVAL, "%s: empty", name);
		free(p->data_dir);
		p->data_dir = strdup(value);
		return p->data_dir ? 1 : perr(p, p->line, ENOMEM, "out of memory");
	case K_BACKING:
		if (!*value)
			return perr(p, p->line, EINVAL, "%s: empty", name);
		free(p->backing);
		p->backing = strdup(value);
		return p->backing ? 1 : perr(p, p->line, ENOMEM, "out of memory");
	case K_TRANSPORT:
		if (!clf_transport_find(value))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not built in (have: %s)",
				    name, value, clf_transport_names());
		free(cfg->transport);
		cfg->transport = strdup(value);
		return cfg->transport ? 1
				      : perr(p, p->line, ENOMEM, "out of memory");
	case K_IOD_VIEW_MEM:
	case K_IOD_VIEW_SHARE:
	case K_IOD_BUF_MEM:
	case K_IOD_BUF_SHARE:
		err = clf_parse_size(value, &size);
		if (err || size < (64 << 10) || size > ((int64_t)1 << 50))
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a size from 64k to 1024t (a number with an optional k, m, g or t suffix)",
				    name, value);
		*iod_mem_field(cfg, k) = size;
		return 1;
	case K_AUTH:
		if (!strcmp(value, "munge"))
			cfg->auth = CLF_CONFIG_AUTH_MUNGE;
		else if (!strcmp(value, "secret"))
			cfg->auth = CLF_CONFIG_AUTH_SECRET;
		else
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is neither munge nor secret",
				    name, value);
		return 1;
	case K_PROTECTION:
		if (clf_protection_parse(value) < 0)
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not none, integrity or privacy",
				    name, value);
		cfg->protection = clf_protection_parse(value);
		return 1;
	case K_CAP_LIFETIME: {
		char *end;
		long n;

		errno = 0;
		n = strtol(value, &end, 10);
		if (errno || *end || end == value || n < 1 || n > 86400)
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not a number of seconds from 1 to 86400",
				    name, value);
		cfg->cap_lifetime_s = (int)n;
		return 1;
	}
	case K_ROOT_SQUASH:
		if (!strcmp(value, "yes") || !strcmp(value, "true") ||
		    !strcmp(value, "1"))
			cfg->root_squash = true;
		else if (!strcmp(value, "no") || !strcmp(value, "false") ||
			 !strcmp(value, "0"))
			cfg->root_squash = false;
		else
			return perr(p, p->line, EINVAL,
				    "%s: '%s' is not yes or no", name, value);
		return 1;
	case K_METAD: {
		struct raw_daemon *d = new_metad(p, p->line);

		return d ? set_address(p, d, value, true, name) : 0;
	}
	default:
		return perr(p, p->line, EINVAL, "'%s' belongs in [metad] or [iod]",
			    name);
	}
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse *p = user;
	enum key k;
	struct raw_daemon *d;

	if (p->err)
		return 0;
	p->sec_used = true;
	if (p->cur_seq != p->sec_seq && !enter_section(p, section))
		return 0;
	if (p->sec == SEC_GLOBAL && strcmp(name, "iod") == 0) {
		d = new_iod(p, p->line);
		return d ? set_address(p, d, value, true, name) : 0;
	}
	if (p->sec == SEC_GLOBAL && strcmp(name, "metad") == 0) {
		d = new_metad(p, p->line);
		return d ? set_address(p, d, value, true, name) : 0;
	}
	k = find_key(name);
	if (k == K_NR || (p->sec == SEC_GLOBAL) == (k >= K_ADDRESS))
		return perr(p, p->line, EINVAL, "unknown key '%s' in [%s]", name,
			    p->sec == SEC_GLOBAL ? "global" : section);
	if (p->key_line[k])
		return perr(p, p->line, EINVAL,
			    "'%s' given twice (first on line %d)", name,
			    p->key_line[k]);
	p->key_line[k] = p->line;
	if (p->sec == SEC_GLOBAL)
		return global_key(p, k, value);
	if (k == K_ADDRESS) {
		char *dir = p->daemon->dir;	/* a [..] dir may come first */
		int ok;

		p->daemon->dir = NULL;
		ok = set_address(p, p->daemon, value, false, name);
		free(p->daemon->dir);
		p->daemon->dir = dir;
		p->daemon->line = p->sec_line;
		return ok;
	}
	if (!*value)
		return perr(p, p->line, EINVAL, "dir: empty");
	free(p->daemon->dir);
	p->daemon->dir = join_path(p->base, value);
	return p->daemon->dir ? 1 : perr(p, p->line, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Completing and checking                                             */
/* ------------------------------------------------------------------ */

static int take_daemon(struct parse *p, struct raw_daemon *d, const char *sub,
		       struct clf_config_daemon *out)
{
	if (!d->addr)
		return perr(p, d->line, EINVAL, "[%s] section without an address",
			    strcmp(sub, "meta") ? "iod" : "metad");
	if (!d->dir) {
		d->dir = join_path(p->cfg->data_dir, sub);
		if (!d->dir)
			return perr(p, d->line, ENOMEM, "out of memory");
	}
	*out = (struct clf_config_daemon){ d->addr, d->host, d->port, d->dir,
					   d->line };
	*d = (struct raw_daemon){ 0 };
	return 1;
}

static int default_data_dir(char **out);

/* Fill in defaults and check what only the whole file tells. */
static int finish(struct parse *p)
{
	struct clf_config *cfg = p->cfg;
	char sub[32];
	/* data_dir in the file is relative to the file, $CLF_DATA_DIR to the
	 * working directory like any other command-line path. */
	const char *env = getenv("CLF_DATA_DIR");

	if (p->data_dir) {
		cfg->data_dir = join_path(p->base, p->data_dir);
	} else if (env && *env) {
		int err = default_data_dir(&cfg->data_dir);

		if (err)
			return perr(p, 0, -err, "%s", clf_error_reason());
	} else {
		cfg->data_dir = join_path(p->base, CLF_CONFIG_DEFAULT_DATA_DIR);
	}
	if (!cfg->data_dir)
		return perr(p, 0, ENOMEM, "out of memory");
	/* backing, like data_dir, is relative to the file. */
	if (p->backing && !(cfg->backing = join_path(p->base, p->backing)))
		return perr(p, 0, ENOMEM, "out of memory");
	if (!p->has_metad)
		return perr(p, 0, EINVAL,
			    "no metad (add a [metad] section with an address)");
	if (!p->niods)
		return perr(p, 0, EINVAL,
			    "no iod (add an [iod] section with an address)");
	if (!take_daemon(p, &p->metad, "meta", &cfg->metad))
		return 0;
	cfg->metads = calloc(1 + p->nmore_metads, sizeof(*cfg->metads));
	if (!cfg->metads || clf_config_daemon_copy(&cfg->metads[0],
						   &cfg->metad))
		return perr(p, 0, ENOMEM, "out of memory");
	cfg->nmetads = 1;
	for (uint32_t i = 0; i < p->nmore_metads; i++) {
		snprintf(sub, sizeof(sub), "meta%u", i + 1);
		if (!take_daemon(p, &p->more_metads[i], sub,
				 &cfg->metads[i + 1]))
			return 0;
		cfg->nmetads = i + 2;
		for (uint32_t j = 0; j <= i; j++)
			if (strcmp(cfg->metads[i + 1].addr,
				   cfg->metads[j].addr) == 0)
				return perr(p, cfg->metads[i + 1].line, EINVAL,
					    "address %s is metad %u's (line %d)",
					    cfg->metads[j].addr, j,
					    cfg->metads[j].line);
	}
	cfg->iods = calloc(p->niods, sizeof(*cfg->iods));
	if (!cfg->iods)
		return perr(p, 0, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < p->niods; i++) {
		snprintf(sub, sizeof(sub), "iod%u", i);
		if (!take_daemon(p, &p->iods[i], sub, &cfg->iods[i]))
			return 0;
		cfg->niods = i + 1;
	}
	if (!cfg->stripe_count)
		cfg->stripe_count = cfg->niods;
	if (cfg->stripe_count > cfg->niods)
		return perr(p, p->key_line[K_STRIPE_COUNT], EINVAL,
			    "stripe_count %u exceeds the %u iods configured",
			    cfg->stripe_count, cfg->niods);
	if (cfg->first_iod >= cfg->niods)
		return perr(p, p->key_line[K_FIRST_IOD], EINVAL,
			    "first_iod %u: iods are numbered 0 to %u",
			    cfg->first_iod, cfg->niods - 1);
	for (uint32_t i = 0; i < cfg->niods; i++) {
		const struct clf_config_daemon *d = &cfg->iods[i];

		for (uint32_t j = 0; j < cfg->nmetads; j++)
			if (strcmp(d->addr, cfg->metads[j].addr) == 0)
				return perr(p, d->line, EINVAL,
					    "address %s is the metad's (line %d)",
					    d->addr, cfg->metads[j].line);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(d->addr, cfg->iods[j].addr) == 0)
				return perr(p, d->line, EINVAL,
					    "address %s is iod %u's (line %d)",
					    d->addr, j, cfg->iods[j].line);
	}
	return 1;
}

static struct clf_config *config_new(void)
{
	struct clf_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg->transport = strdup("tcp");
	if (!cfg->transport) {
		free(cfg);
		return NULL;
	}
	cfg->stripe_size = CLF_CONFIG_DEFAULT_STRIPE;
	cfg->timeout_ms = CLF_CONN_DEFAULT_TIMEOUT_MS;
	cfg->cap_lifetime_s = CLF_CAP_LIFETIME_DEFAULT_S;
	cfg->recovery_grace_s = CLF_CONFIG_DEFAULT_GRACE_S;
	cfg->log_level = CLF_LOG_INFO;
	return cfg;
}

static void daemon_release(struct clf_config_daemon *d)
{
	free(d->addr);
	free(d->host);
	free(d->port);
	free(d->dir);
}

void clf_config_free(struct clf_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->source);
	free(cfg->transport);
	free(cfg->secret_file);
	free(cfg->data_dir);
	free(cfg->backing);
	daemon_release(&cfg->metad);
	for (uint32_t i = 0; i < cfg->nmetads; i++)
		daemon_release(&cfg->metads[i]);
	free(cfg->metads);
	for (uint32_t i = 0; i < cfg->niods; i++)
		daemon_release(&cfg->iods[i]);
	free(cfg->iods);
	clf_secret_clear(&cfg->secret);
	free(cfg);
}

int clf_config_parse_file(const char *path, struct clf_config **out)
{
	struct parse p = { .path = path };
	int rc, err;

	if (!path || !out)
		return clf_fail(EINVAL, "clf: configuration: no file name");
	p.f = fopen(path, "re");
	if (!p.f)
		return clf_fail(errno, "clf: configuration %s: %s", path,
				strerror(errno));
	err = base_of(path, &p.base);
	if (err)
		goto release;
	p.cfg = config_new();
	if (!p.cfg) {
		err = clf_fail(ENOMEM, "clf: configuration %s: out of memory",
			       path);
		goto release;
	}
	p.cfg->source = join_path(p.base, strrchr(path, '/') ?
				  strrchr(path, '/') + 1 : path);
	rc = ini_parse_stream(reader, &p, handler, &p);
	if (rc > 0 && (!p.err || rc < p.err_line)) {
		err = clf_fail(EINVAL,
			       "clf: %s:%d: syntax error (expected '[section]' or 'key = value')",
			       path, rc);
		goto release;
	}
	if (rc < 0 && !p.err) {
		err = clf_fail(ENOMEM, "clf: configuration %s: inih failed (%d)",
			       path, rc);
		goto release;
	}
	if (!p.err)
		finish(&p);	/* records any error in p.err */
	if (p.err && p.err_line)
		err = clf_fail(p.err, "clf: %s:%d: %s", path, p.err_line,
			       p.msg);
	else if (p.err)
		err = clf_fail(p.err, "clf: %s: %s", path, p.msg);
	else if (!p.cfg->source)
		err = clf_fail(ENOMEM, "clf: configuration %s: out of memory",
			       path);
	else
		err = 0;
	if (!err) {
		*out = p.cfg;
		p.cfg = NULL;
	}
release:
	raw_daemon_release(&p.metad);
	for (uint32_t i = 0; i < p.nmore_metads; i++)
		raw_daemon_release(&p.more_metads[i]);
	free(p.more_metads);
	for (uint32_t i = 0; i < p.niods; i++)
		raw_daemon_release(&p.iods[i]);
	free(p.iods);
	free(p.data_dir);
	free(p.backing);
	clf_config_free(p.cfg);
	free(p.base);
	fclose(p.f);
	return err;
}

/* ------------------------------------------------------------------ */
/* Built-in default                                                    */
/* ------------------------------------------------------------------ */

/* $CLF_DATA_DIR or ./clf-data, from the working directory, into *out. */
static int default_data_dir(char **out)
{
	const char *env = getenv("CLF_DATA_DIR");
	char *base;
	int err;

	if (env && *env == '/') {
		*out = strdup(env);
	} else {
		err = base_of(NULL, &base);
		if (err)
			return err;
		*out = join_path(base, env && *env ? env
					: CLF_CONFIG_DEFAULT_DATA_DIR);
		free(base);
	}
	if (!*out)
		return clf_fail(ENOMEM, "clf: out of memory");
	return 0;
}

int clf_config_default_path(char *buf, size_t len)
{
	char *dir;
	int n, err = default_data_dir(&dir);

	if (err)
		return err;
	n = snprintf(buf, len, "%s/%s", dir, CLF_CONFIG_FILE_NAME);
	free(dir);
	if (n < 0 || (size_t)n >= len)
		return clf_fail(ENAMETOOLONG, "clf: data directory path too long");
	return 0;
}

static int default_daemon(struct clf_config_daemon *d, const char *dir,
			  const char *sub, long port)
{
	char p[16];

	snprintf(p, sizeof(p), "%ld", port);
	d->host = strdup("127.0.0.1");
	d->port = strdup(p);
	d->addr = malloc(strlen("127.0.0.1:") + strlen(p) + 1);
	d->dir = join_path(dir, sub);
	if (!d->host || !d->port || !d->addr || !d->dir)
		return -ENOMEM;
	sprintf(d->addr, "127.0.0.1:%s", p);
	return 0;
}

int clf_config_default(struct clf_config **out)
{
	const char *env = getenv("CLF_BASE_PORT");
	long long base = CLF_CONFIG_DEFAULT_BASE_PORT;
	struct clf_config *cfg;
	char sub[32];
	int err;

	if (env && *env &&
	    parse_int(env, 1, 65535 - CLF_CONFIG_DEFAULT_IODS, &base))
		return clf_fail(EINVAL,
				"clf: CLF_BASE_PORT='%s' is not a port from 1 to %d",
				env, 65535 - CLF_CONFIG_DEFAULT_IODS);
	cfg = config_new();
	if (!cfg)
		return clf_fail(ENOMEM, "clf: out of memory");
	err = default_data_dir(&cfg->data_dir);
	if (err) {
		clf_config_free(cfg);
		return err;
	}
	cfg->iods = calloc(CLF_CONFIG_DEFAULT_IODS, sizeof(*cfg->iods));
	err = cfg->iods ? 0 : -ENOMEM;
	if (!err)
		err = default_daemon(&cfg->metad, cfg->data_dir, "meta",
				     (long)base);
	if (!err) {
		cfg->metads = calloc(1, sizeof(*cfg->metads));
		err = cfg->metads ? clf_config_daemon_copy(&cfg->metads[0],
							   &cfg->metad) :
				    -ENOMEM;
		cfg->nmetads = cfg->metads ? 1 : 0;
	}
	for (uint32_t i = 0; !err && i < CLF_CONFIG_DEFAULT_IODS; i++) {
		snprintf(sub, sizeof(sub), "iod%u", i);
		cfg->niods = i + 1;
		err = default_daemon(&cfg->iods[i], cfg->data_dir, sub,
				     (long)base + 1 + i);
	}
	if (err) {
		clf_config_free(cfg);
		return clf_fail(ENOMEM, "clf: out of memory");
	}
	cfg->stripe_count = cfg->niods;
	*out = cfg;
	return 0;
}

/* Where the system-wide file is: sysconfdir at build time, or the test
 * hook $CLF_TEST_SYSCONFDIR (tests may not write /etc on a shared host). */
static const char *sysconf_dir(void)
{
	const char *env = getenv("CLF_TEST_SYSCONFDIR");

	return env && *env ? env : CLF_SYSCONFDIR;
}

int clf_config_find(const char *path, char *buf, size_t len)
{
	const char *env = getenv("CLF_CONFIG");
	char dflt[PATH_MAX], sys[PATH_MAX];
	int n, err;

	if (path || (env && *env)) {
		n = snprintf(buf, len, "%s", path ? path : env);
		if (n < 0 || (size_t)n >= len)
			return clf_fail(ENAMETOOLONG,
					"clf: configuration path too long: %s",
					path ? path : env);
		return 0;
	}
	err = clf_config_default_path(dflt, sizeof(dflt));
	if (err)
		return err;
	n = snprintf(sys, sizeof(sys), "%s/clf/%s", sysconf_dir(),
		     CLF_CONFIG_FILE_NAME);
	if (n < 0 || (size_t)n >= sizeof(sys))
		return clf_fail(ENAMETOOLONG, "clf: sysconfdir path too long");
	if (access(dflt, F_OK) == 0)
		path = dflt;
	else if (access(sys, F_OK) == 0)
		path = sys;
	if (!path)
		return clf_fail(ENOENT,
				"clf: no configuration file: tried -c FILE (not given), $CLF_CONFIG (not set), %s, %s (none exists); 'clf up' makes one",
				dflt, sys);
	if (strlen(path) >= len)
		return clf_fail(ENAMETOOLONG,
				"clf: configuration path too long: %s", path);
	strcpy(buf, path);
	return 0;
}

int clf_config_load(const char *path, struct clf_config **out)
{
	char found[PATH_MAX];
	int err = clf_config_find(path, found, sizeof(found));

	if (err)
		return err;
	return clf_config_parse_file(found, out);
}

bool clf_config_uses_munge(const struct clf_config *cfg)
{
	return !cfg->has_secret && cfg->auth != CLF_CONFIG_AUTH_SECRET &&
	       (cfg->secret_unreadable || cfg->auth == CLF_CONFIG_AUTH_MUNGE);
}

unsigned clf_config_auth_methods(const struct clf_config *cfg)
{
	switch (cfg->auth) {
	case CLF_CONFIG_AUTH_SECRET:
		return CLF_AUTH_SECRET;
	case CLF_CONFIG_AUTH_MUNGE:
		return CLF_AUTH_SECRET | CLF_AUTH_MUNGE;
	default:
		return clf_munge_available() ? CLF_AUTH_SECRET | CLF_AUTH_MUNGE
					     : CLF_AUTH_SECRET;
	}
}

const char *clf_config_auth_text(unsigned methods)
{
	return methods & CLF_AUTH_MUNGE
		       ? "munge (users with MUNGE credentials, root and the daemons with the secret)"
		       : "secret (only holders of the secret: one trusted user)";
}

void clf_config_set_secret(struct clf_config *cfg, const struct clf_secret *s)
{
	cfg->secret = *s;
	cfg->has_secret = true;
	free(cfg->secret_file);
	cfg->secret_file = NULL;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

/* One "key = value" line, refusing what the reader would refuse. */
static int put_line(FILE *f, const char *key, const char *value)
{
	if (strlen(key) + 3 + strlen(value) > CLF_CONFIG_LINE_MAX)
		return clf_fail(ENAMETOOLONG,
				"clf: configuration: %s '%s' makes a line over %d characters",
				key, value, CLF_CONFIG_LINE_MAX);
	fprintf(f, "%s = %s\n", key, value);
	return 0;
}

static void size_text(int64_t v, char *buf, size_t len)
{
	static const char suffix[] = "kmgt";
	int i = -1;

	while (i < 3 && v && v % 1024 == 0) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%lld%c", (long long)v, suffix[i]);
}

static int write_body(FILE *f, const struct clf_config *cfg)
{
	char text[CLF_SECRET_HEX_MAX];
	int err = 0;

	fprintf(f, "; clf configuration, written by clf.  Keep it private:\n"
		   "; it holds the secret every daemon and client shares.\n"
		   "[global]\n");
	err = put_line(f, "transport", cfg->transport);
	if (!err && cfg->has_secret && cfg->secret_file)
		err = put_line(f, "secret_file", cfg->secret_file);
	else if (!err && cfg->has_secret) {
		err = clf_secret_to_hex(&cfg->secret, text, sizeof(text));
		if (!err)
			err = put_line(f, "secret", text);
	}
	if (!err && cfg->auth != CLF_CONFIG_AUTH_DEFAULT)
		err = put_line(f, "auth", cfg->auth == CLF_CONFIG_AUTH_MUNGE
					  ? "munge" : "secret");
	if (!err && cfg->root_squash)
		err = put_line(f, "root_squash", "yes");
	if (!err && cfg->protection != CLF_PROTECT_NONE)
		err = put_line(f, "protection",
			       clf_protection_name(cfg->protection));
	if (!err && cfg->cap_lifetime_s != CLF_CAP_LIFETIME_DEFAULT_S)
		fprintf(f, "capability_lifetime = %d\n", cfg->cap_lifetime_s);
	size_text(cfg->stripe_size, text, sizeof(text));
	if (!err)
		err = put_line(f, "stripe_size", text);
	fprintf(f, "stripe_count = %u\nfirst_iod = %u\ntimeout_ms = %d\n",
		cfg->stripe_count, cfg->first_iod, cfg->timeout_ms);
	if (cfg->recovery_grace_s != CLF_CONFIG_DEFAULT_GRACE_S)
		fprintf(f, "recovery_grace_s = %d\n", cfg->recovery_grace_s);
	if (cfg->iod_connections)
		fprintf(f, "iod_connections = %d\n", cfg->iod_connections);
	if (cfg->client_cache)
		fprintf(f, "client_cache = %lld\n", (long long)cfg->client_cache);
	if (cfg->log_level != CLF_LOG_INFO)
		fprintf(f, "log_level = %s\n",
			clf_log_level_name(cfg->log_level));
	if (cfg->daemon_workers)
		fprintf(f, "daemon_workers = %d\n", cfg->daemon_workers);
	if (!err)
		err = put_line(f, "data_dir", cfg->data_dir);
	if (!err && cfg->backing)
		err = put_line(f, "backing", cfg->backing);
	for (int k = K_IOD_VIEW_MEM; !err && k <= K_IOD_BUF_SHARE; k++) {
		int64_t v = *iod_mem_field((struct clf_config *)cfg, k);

		size_text(v, text, sizeof(text));
		if (v)
			err = put_line(f, key_names[k], text);
	}
	for (uint32_t i = 0; !err && i < cfg->nmetads; i++) {
		fprintf(f, "\n[metad] ; %u\n", i);
		err = put_line(f, "address", cfg->metads[i].addr);
		if (!err)
			err = put_line(f, "dir", cfg->metads[i].dir);
	}
	for (uint32_t i = 0; !err && i < cfg->niods; i++) {
		fprintf(f, "\n[iod] ; %u\n", i);
		err = put_line(f, "address", cfg->iods[i].addr);
		if (!err)
			err = put_line(f, "dir", cfg->iods[i].dir);
	}
	explicit_bzero(text, sizeof(text));
	return err;
}

int clf_config_write(const struct clf_config *cfg, const char *path)
{
	size_t n = strlen(path) + sizeof(".tmp.XXXXXX");
	char *tmp = malloc(n);
	FILE *f = NULL;
	int fd, err;

	if (!tmp)
		return clf_fail(ENOMEM, "clf: out of memory");
	snprintf(tmp, n, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);	/* mode 0600 */
	if (fd < 0) {
		err = clf_fail(errno, "clf: cannot write %s: %s", path,
			       strerror(errno));
		goto free_tmp;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = clf_fail(errno, "clf: cannot write %s: %s", path,
			       strerror(errno));
		close(fd);
		goto unlink_tmp;
	}
	err = write_body(f, cfg);
	if (err)
		goto close_f;
	if (fflush(f) || fsync(fileno(f))) {
		err = clf_fail(errno, "clf: cannot write %s: %s", path,
			       strerror(errno));
		goto close_f;
	}
	if (fclose(f)) {
		f = NULL;
		err = clf_fail(errno, "clf: cannot write %s: %s", path,
			       strerror(errno));
		goto unlink_tmp;
	}
	f = NULL;
	if (rename(tmp, path)) {
		err = clf_fail(errno, "clf: cannot write %s: %s", path,
			       strerror(errno));
		goto unlink_tmp;
	}
	free(tmp);
	return 0;

close_f:
	fclose(f);
unlink_tmp:
	unlink(tmp);
free_tmp:
	free(tmp);
	return err;
}

int clf_config_daemon_copy(struct clf_config_daemon *dst,
			   const struct clf_config_daemon *src)
{
	struct clf_config_daemon d = { .line = src->line };

	/* A daemon known by address alone (config_url.c) has no dir. */
	d.addr = src->addr ? strdup(src->addr) : NULL;
	d.host = src->host ? strdup(src->host) : NULL;
	d.port = src->port ? strdup(src->port) : NULL;
	d.dir = src->dir ? strdup(src->dir) : NULL;
	if ((src->addr && !d.addr) || (src->host && !d.host) ||
	    (src->port && !d.port) || (src->dir && !d.dir)) {
		daemon_release(&d);
		return -ENOMEM;
	}
	*dst = d;
	return 0;
}

int clf_config_select_metad(struct clf_config *cfg, uint32_t index)
{
	struct clf_config_daemon d;

	if (index >= cfg->nmetads)
		return clf_fail(EINVAL,
				"clf: metad %u: the configuration %s names %u metad%s",
				index, cfg->source ? cfg->source : "(built in)",
				cfg->nmetads, cfg->nmetads == 1 ? "" : "s");
	if (clf_config_daemon_copy(&d, &cfg->metads[index]))
		return clf_fail(ENOMEM, "clf: out of memory");
	daemon_release(&cfg->metad);
	cfg->metad = d;
	return 0;
}
