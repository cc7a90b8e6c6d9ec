// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_opts.c -- the command line of mount.clf / clf-fuse (clfs_opts.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clfs_opts.h"
#include "config.h"
#include "error.h"
#include "transport.h"

#define CLFS_DEFAULT_IODS 4

/* Mount flags the kernel takes as they are. */
static const char *const kernel_flags[] = {
	"nosuid", "suid", "nodev", "dev", "noexec", "exec", "async", "sync",
	"atime", "noatime", "diratime", "nodiratime", "relatime",
	"norelatime", "strictatime", "nostrictatime", "lazytime",
	"nolazytime", "dirsync", NULL,
};

/* fstab's and mount(8)'s own, meaningless here. */
static const char *const ignored[] = {
	"defaults", "auto", "noauto", "user", "users", "nouser", "owner",
	"group", "_netdev", "nofail", "default_permissions", NULL,
};

static int fail(char *msg, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

/* Append ",s" (or "s") to *list; -ENOMEM. */
static int append(char **list, const char *s)
{
	size_t old = *list ? strlen(*list) : 0;
	char *n = realloc(*list, old + strlen(s) + 2);

	if (!n)
		return -ENOMEM;
	if (old)
		n[old++] = ',';
	strcpy(n + old, s);
	*list = n;
	return 0;
}

/* Replace *slot by a copy of s. */
static int set_str(char **slot, const char *s)
{
	char *c = strdup(s);

	if (!c)
		return -ENOMEM;
	free(*slot);
	*slot = c;
	return 0;
}

/* Is the key of "key=value" (klen bytes of opt) name? */
static bool key_is(const char *opt, size_t klen, const char *name)
{
	return klen == strlen(name) && !strncmp(opt, name, klen);
}

/* One option of -o. */
static int option(struct clfs_opts *o, const char *opt, char *msg,
		  size_t len)
{
	const char *eq = strchr(opt, '=');
	size_t klen = eq ? (size_t)(eq - opt) : strlen(opt);
	const char *val = eq ? eq + 1 : NULL;
	char *end;

	if (!*opt)
		return 0;
	if (key_is(opt, klen, "config") && val && *val)
		return set_str(&o->config, val);
	if (key_is(opt, klen, "secret_file") && val && *val)
		return set_str(&o->secret_file, val);
	if (key_is(opt, klen, "log") && val && *val)
		return set_str(&o->log, val);
	if (key_is(opt, klen, "iods") && val) {
		long n = strtol(val, &end, 10);

		if (*end || n < 1 || n > 1024)
			return fail(msg, len, "iods=%s: need a number from 1 to 1024",
				    val);
		o->iods = (int)n;
		return 0;
	}
	if (key_is(opt, klen, "cache") && val) {
		if (strcmp(val, "none") && strcmp(val, "normal"))
			return fail(msg, len, "cache=%s: expected none or normal",
				    val);
		o->cache_none = !strcmp(val, "none");
		return 0;
	}
	if (key_is(opt, klen, "client") && val) {
		if (strcmp(val, "kernel") && strcmp(val, "fuse") &&
		    strcmp(val, "auto"))
			return fail(msg, len,
				    "client=%s: expected kernel, fuse or auto", val);
		o->client = !strcmp(val, "kernel") ? CLFS_CLIENT_KERNEL :
			    !strcmp(val, "fuse") ? CLFS_CLIENT_FUSE :
			    CLFS_CLIENT_AUTO;
		return 0;
	}
	if (!strcmp(opt, "reconnect")) {
		o->reconnect = true;
		return 0;
	}
	if (!strcmp(opt, "ro") || !strcmp(opt, "rw")) {
		o->read_only = !strcmp(opt, "ro");
		return 0;
	}
	if (!strcmp(opt, "allow_other")) {
		o->allow_other = true;
		return 0;
	}
	if (!strcmp(opt, "debug")) {
		o->debug = true;
		return 0;
	}
	if (!strcmp(opt, "foreground")) {
		o->foreground = true;
		return 0;
	}
	if (in_list(kernel_flags, opt))
		return append(&o->kernel, opt);
	if (in_list(ignored, opt) || !strncmp(opt, "x-", 2) ||
	    !strncmp(opt, "comment=", 8))
		return 0;
	return fail(msg, len, "unknown option '%s'", opt);
}

/* Each comma-separated option of list. */
static int options(struct clfs_opts *o, const char *list, char *msg,
		   size_t len)
{
	char *copy = strdup(list), *save = NULL, *opt;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (opt = strtok_r(copy, ",", &save); opt && !err;
	     opt = strtok_r(NULL, ",", &save))
		err = option(o, opt, msg, len);
	free(copy);
	return err;
}

/* "host:port" (host non-empty, port 1..65535, no '/')? */
static bool is_hostport(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	if (!colon || colon == s || strchr(s, '/'))
		return false;
	port = strtol(colon + 1, &end, 10);
	return colon[1] && !*end && port >= 1 && port <= 65535;
}

/* source with ',' and '\' escaped, for fsname= */
static int fsname_option(struct clfs_opts *o)
{
	size_t n = strlen(o->source);
	char *s = malloc(2 * n + 16), *p;
	int err;

	if (!s)
		return -ENOMEM;
	p = s + sprintf(s, "fsname=");
	for (size_t i = 0; i < n; i++) {
		if (o->source[i] == ',' || o->source[i] == '\\')
			*p++ = '\\';
		*p++ = o->source[i];
	}
	*p = '\0';
	err = append(&o->kernel, s);
	free(s);
	return err;
}

static void usage(const char *argv0)
{
	const char *prog = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1
					       : argv0;

	printf("usage: %s SOURCE DIR [-o OPTIONS] [-f] [-n] [-s] [-v] [-F]\n"
	       "Mount the clf file system SOURCE (a configuration file, or\n"
	       "HOST:PORT of metad, its secret from -o secret_file=FILE or\n"
	       "the configuration found as clf finds it, or clf://HOST:PORT/,\n"
	       "whose metad names the iods) on DIR.\n"
	       "Options: config=FILE, secret_file=FILE, iods=N,\n"
	       "cache=normal|none, client=auto|kernel|fuse, reconnect,\n"
	       "ro, rw, allow_other, debug,\n"
	       "log=FILE|syslog, foreground, and mount flags (nosuid, nodev,\n"
	       "noexec, noatime, ...).  -f: parse only; -F: stay in the\n"
	       "foreground.\n", prog);
}

/* The secret s in hex, for the configuration written for the mount. */
static int set_secret_hex(struct clfs_opts *o, const struct clf_secret *s)
{
	char *hex = malloc(2 * s->len + 1);

	if (!hex)
		return -ENOMEM;
	for (size_t i = 0; i < s->len; i++)
		snprintf(hex + 2 * i, 3, "%02x", s->key[i]);
	free(o->secret_hex);
	o->secret_hex = hex;
	return 0;
}

/*
 * The secret of a HOST:PORT source given without secret_file=, found as
 * every program finds its configuration (clf_config_find: $CLF_CONFIG,
 * ./clf-data/clf.conf, /etc/clf/clf.conf): that file's secret_file, or
 * the secret file `clf up` writes beside it, or the secret it holds.
 * When that file's metad is the source, the file itself is the
 * configuration (its iods are the real ones).  0, or -EINVAL with the
 * places tried in msg.
 */
static int find_secret(struct clfs_opts *o, char *msg, size_t len)
{
	char found[PATH_MAX], beside[PATH_MAX + 16], real[PATH_MAX];
	struct clf_config *cfg = NULL;
	const char *why, *slash;
	int err;

	err = clf_config_find(NULL, found, sizeof(found));
	if (!err)
		err = clf_config_parse_file(found, &cfg);
	if (err) {
		why = clf_error_reason();
		return fail(msg, len,
			    "the source %s is metad's address and no secret was found (%s): give -o secret_file=FILE",
			    o->source, why);
	}
	if (!strcmp(cfg->metad.addr, o->source) && realpath(found, real)) {
		err = set_str(&o->config, real);
		if (!err) {
			free(o->metad);
			o->metad = NULL;
		}
		goto out;
	}
	slash = strrchr(found, '/');
	snprintf(beside, sizeof(beside), "%.*s%s", slash ? (int)(slash - found + 1) : 0,
		 found, CLF_CONFIG_SECRET_NAME);
	if (cfg->secret_file)
		err = set_str(&o->secret_file, cfg->secret_file);
	else if (access(beside, F_OK) == 0 && realpath(beside, real))
		err = set_str(&o->secret_file, real);
	else if (cfg->has_secret)
		err = set_secret_hex(o, &cfg->secret);
	else
		err = fail(msg, len,
			   "the source %s is metad's address and %s has no secret: give -o secret_file=FILE",
			   o->source, found);
out:
	clf_config_free(cfg);
	return err;
}

/*
 * A clf://HOST:PORT/ source: its instance, whose metad names the iods
 * (no configuration file), and the secret of secret_file= if given.
 */
static int finish_url(struct clfs_opts *o, char *msg, size_t len)
{
	char addr[CLF_ADDR_MAX], real[PATH_MAX];
	const char *path;
	int err = clf_url_parse(o->source, addr, sizeof(addr), &path);

	if (err < 0)
		return fail(msg, len, "%s", clf_error_reason());
	if (strspn(path, "/") != strlen(path))
		return fail(msg, len,
			    "%s: a mount shows the whole instance: give clf://%s/",
			    o->source, addr);
	free(o->url);
	o->url = malloc(strlen(CLF_URL_SCHEME) + strlen(addr) + 1);
	if (!o->url)
		return -ENOMEM;
	sprintf(o->url, "%s%s", CLF_URL_SCHEME, addr);
	if (!o->secret_file)
		return 0;
	if (!realpath(o->secret_file, real))
		return fail(msg, len, "secret_file=%s: %s", o->secret_file,
			    strerror(errno));
	return set_str(&o->secret_file, real);
}

/* Check and complete what the options say. */
static int finish(struct clfs_opts *o, char *msg, size_t len)
{
	char real[PATH_MAX];
	int err;

	if (!o->config && !strncmp(o->source, CLF_URL_SCHEME,
				   strlen(CLF_URL_SCHEME))) {
		err = finish_url(o, msg, len);
	} else if (!o->config && is_hostport(o->source)) {
		err = set_str(&o->metad, o->source);
		if (err)
			return err;
		if (!o->secret_file) {
			err = find_secret(o, msg, len);
		} else if (!realpath(o->secret_file, real)) {
			return fail(msg, len, "secret_file=%s: %s",
				    o->secret_file, strerror(errno));
		} else {
			err = set_str(&o->secret_file, real);
		}
	} else {
		const char *conf = o->config ? o->config : o->source;

		if (o->secret_file)
			return fail(msg, len,
				    "secret_file= goes with a HOST:PORT or clf:// source; %s holds the secret",
				    conf);
		if (!realpath(conf, real))
			return fail(msg, len, "%s: %s", conf, strerror(errno));
		err = set_str(&o->config, real);
	}
	if (err)
		return err;
	if (!o->iods)
		o->iods = CLFS_DEFAULT_IODS;
	err = fsname_option(o);
	if (!err)
		err = append(&o->kernel,
			     "subtype=clf,default_permissions,max_read=1048576");
	if (!err && o->allow_other)
		err = append(&o->kernel, "allow_other");
	if (!err && o->read_only)
		err = append(&o->kernel, "ro");
	return err;
}

int clfs_opts_parse(int argc, char **argv, struct clfs_opts *o, char *msg,
		    size_t len)
{
	struct clfs_opts t = { .iods = 0 };
	int err = 0, npos = 0;
	char *pos[2];

	for (int i = 1; i < argc && !err; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(argv[0]);
			clfs_opts_release(&t);
			*o = (struct clfs_opts){ .answered = true };
			return 0;
		}
		if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("%s (clf) %s\n", strrchr(argv[0], '/')
				? strrchr(argv[0], '/') + 1 : argv[0], CLF_VERSION);
			clfs_opts_release(&t);
			*o = (struct clfs_opts){ .answered = true };
			return 0;
		}
		if (!strcmp(a, "-o") && i + 1 < argc)
			err = options(&t, argv[++i], msg, len);
		else if (!strncmp(a, "-o", 2) && a[2])
			err = options(&t, a + 2, msg, len);
		else if (!strcmp(a, "-f"))
			t.fake = true;
		else if (!strcmp(a, "-F"))
			t.foreground = true;
		else if (!strcmp(a, "-n") || !strcmp(a, "-s") ||
			 !strcmp(a, "-v"))
			continue;
		else if ((!strcmp(a, "-N") || !strcmp(a, "-t")) && i + 1 < argc)
			i++;	/* mount(8)'s namespace and type */
		else if (a[0] == '-' && a[1])
			err = fail(msg, len, "unknown argument '%s'", a);
		else if (npos == 2)
			err = fail(msg, len, "unexpected argument '%s'", a);
		else
			pos[npos++] = argv[i];
	}
	if (!err && npos < 2)
		err = fail(msg, len, "need SOURCE and DIR (try --help)");
	if (!err)
		err = set_str(&t.source, pos[0]);
	if (!err)
		err = set_str(&t.mountpoint, pos[1]);
	if (!err)
		err = finish(&t, msg, len);
	if (err == -ENOMEM)
		fail(msg, len, "out of memory");
	if (err) {
		clfs_opts_release(&t);
		return err;
	}
	*o = t;
	return 0;
}

void clfs_opts_release(struct clfs_opts *o)
{
	if (!o)
		return;
	free(o->source);
	free(o->mountpoint);
	free(o->config);
	free(o->metad);
	free(o->url);
	free(o->secret_file);
	if (o->secret_hex)
		explicit_bzero(o->secret_hex, strlen(o->secret_hex));
	free(o->secret_hex);
	free(o->log);
	free(o->kernel);
	memset(o, 0, sizeof(*o));
}

int clfs_opts_write_config(const struct clfs_opts *o, char *path,
			   size_t pathlen, char *msg, size_t len)
{
	const char *colon = strrchr(o->metad, ':');
	const char *dir = getenv("TMPDIR");
	int port = atoi(colon + 1), fd, err = 0;
	FILE *f;

	snprintf(path, pathlen, "%s/clf-mount-XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return fail(msg, len, "cannot create %s: %s", path,
			    strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return fail(msg, len, "cannot write %s: %s", path,
			    strerror(errno));
	}
	fprintf(f, "; written by mount.clf for %s\n[global]\n", o->source);
	if (o->secret_hex)
		fprintf(f, "secret = %s\n", o->secret_hex);
	else
		fprintf(f, "secret_file = %s\n", o->secret_file);
	fprintf(f, "metad = %s\n", o->metad);
	for (int i = 0; i < o->iods; i++) {
		if (port + 1 + i > 65535) {
			err = fail(msg, len, "iod %d of %s would be on port %d",
				   i, o->source, port + 1 + i);
			break;
		}
		fprintf(f, "iod = %.*s:%d\n", (int)(colon - o->metad),
			o->metad, port + 1 + i);
	}
	if (fclose(f) && !err)
		err = fail(msg, len, "cannot write %s: %s", path,
			   strerror(errno));
	if (err)
		unlink(path);
	return err;
}
