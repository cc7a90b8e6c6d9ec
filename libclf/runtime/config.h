/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.h -- the one configuration file of a clf instance.
 *
 * INI, read by inih.  Lines are at most CLF_CONFIG_LINE_MAX characters;
 * ';' or '#' start a comment line, " ;" an end-of-line comment.
 *
 *   [global]
 *   secret = <hex>            ; 16..64 bytes, in a file only its owner may
 *                             ; read (else refused); or: secret_file = <path>
 *   stripe_size = 64k         ; bytes, k/m/g/t suffixes (powers of 1024)
 *   stripe_count = 4          ; default: every iod
 *   first_iod = 0
 *   timeout_ms = 5000         ; limit of every network wait
 *   recovery_grace_s = 30     ; clients wait and retry this long for a
 *                             ; daemon that restarts (0: fail at once;
 *                             ; at most CLF_PROTO_REPLY_KEEP_S)
 *   data_dir = ./clf-data     ; default: $CLF_DATA_DIR, else ./clf-data
 *   transport = tcp           ; rdma: verbs/rdma_cm (CONFIG_CLF_TRANSPORT_
 *                             ; RDMA); daemons then listen on TCP too,
 *                             ; clients without RDMA fall back to TCP
 *   auth = munge | secret     ; munge: users authenticate with MUNGE and
 *                             ; metad checks what they do; secret: only
 *                             ; holders of the secret (default: munge when
 *                             ; munged answers when a daemon starts)
 *   client_cache = 1m         ; small accesses kept at the client under
 *                             ; the iods' extent locks, up to this many
 *                             ; bytes (default 0: off; docs/small-io.md)
 *   iod_connections = 4       ; a client's connections to each iod: its
 *                             ; open files spread over them, so several
 *                             ; files are served at once (1..4096;
 *                             ; default 1, the mount 4)
 *   log_level = info          ; error | warn | debug: the daemons' log
 *                             ; (debug adds a line per connection)
 *   daemon_workers = 0        ; threads serving requests in each daemon
 *                             ; (0: 2 per core; daemon.h)
 *   root_squash = no          ; yes: metad treats uid 0 of clients as
 *                             ; nobody (65534)
 *   protection = none         ; integrity | privacy: every message after
 *                             ; the handshake carries a MAC (and is
 *                             ; encrypted); the higher of the client's
 *                             ; and the daemon's wins (seal.h)
 *   capability_lifetime = 300 ; seconds an iod honours what metad
 *                             ; granted at open (docs/security.md)
 *   metad = host:port[:dir]   ; instead of a [metad] section; repeatable:
 *                             ; the namespace is then spread over the
 *                             ; metads in this order (indexes 0, 1, ...;
 *                             ; the root lives on metad 0)
 *   iod = host:port[:dir]     ; repeatable, instead of [iod] sections
 *   iod_view_memory = 256m    ; what each iod lends to clients' views and
 *   iod_view_min_share = 4m   ; request buffers, in all and at least per
 *   iod_buffer_memory = 1g    ; client (fair shares: iod/iod_share.h);
 *   iod_buffer_min_share = 64m ; default: from the iod's memory (iod --help)
 *
 *   [metad]                   ; one per metad, like [iod]
 *   address = 127.0.0.1:7000  ; IPv6: [::1]:7000; rdma://host:port or
 *                             ; tcp://host:port: this daemon's transport
 *   dir = ./clf-data/meta     ; default: <data_dir>/meta, and
 *                             ; <data_dir>/meta<index> after the first
 *
 *   [iod]                     ; one per iod; their order gives the
 *   address = 127.0.0.1:7001  ; iod indexes 0, 1, ...
 *   dir = ./clf-data/iod0     ; default: <data_dir>/iod<index>
 *
 * Relative paths are relative to the directory of the file.  Every error
 * says file:line and what is wrong, e.g.
 *   clf: /etc/clf.conf:7: stripe_size: '64q' is not a size (...)
 */
#ifndef CLF_CONFIG_H
#define CLF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "seal.h"

#define CLF_CAP_LIFETIME_DEFAULT_S 300

#define CLF_CONFIG_LINE_MAX 198		/* characters, without the newline */
#define CLF_CONFIG_MAX_IODS CLF_PROTO_MAX_IODS
/* daemon_workers at most (CLF_DAEMON_WORKERS_MAX). */
#define CLF_CONFIG_WORKERS_MAX 1024
#define CLF_CONFIG_MAX_METADS 64	/* inode numbers carry the index */
#define CLF_CONFIG_DEFAULT_BASE_PORT 7000
#define CLF_CONFIG_DEFAULT_IODS 4
#define CLF_CONFIG_DEFAULT_STRIPE (64 * 1024)
#define CLF_CONFIG_DEFAULT_GRACE_S 30
#define CLF_CONFIG_MAX_IOD_CONNS 4096
#define CLF_CONFIG_DEFAULT_DATA_DIR "./clf-data"
#define CLF_CONFIG_FILE_NAME "clf.conf"	/* in the data directory */
#define CLF_CONFIG_SECRET_NAME "secret"	/* beside it, made by clf up */
#ifndef CLF_SYSCONFDIR
#define CLF_SYSCONFDIR "/etc"		/* make sysconfdir=... */
#endif

struct clf_config_daemon {
	char *addr;	/* "host:port" ("[v6]:port"); owned */
	char *host;	/* for clf_addr_split-style use; owned */
	char *port;	/* decimal, 1..65535; owned */
	char *dir;	/* absolute storage directory; owned */
	int line;	/* of the file that defined it; 0 if built in */
};

enum clf_config_auth {
	CLF_CONFIG_AUTH_DEFAULT,	/* not given: munge if munged answers */
	CLF_CONFIG_AUTH_MUNGE,
	CLF_CONFIG_AUTH_SECRET,
};

struct clf_config {
	char *source;		/* absolute path of the file, NULL if built in;
				   owned */
	char *transport;	/* "tcp"; owned */
	bool has_secret;	/* false: daemons refuse to start */
	struct clf_secret secret;
	char *secret_file;	/* absolute, when the secret came from one;
				   owned */
	bool secret_unreadable;	/* secret_file is there but this process
				   may not read it: it is not root, and
				   authenticates with MUNGE */
	enum clf_config_auth auth;
	bool root_squash;
	enum clf_protection protection;	/* asked on every connection */
	int cap_lifetime_s;	/* of capabilities metad grants */
	int64_t stripe_size;	/* bytes, 1..CLF_PROTO_STRIPE_MAX */
	uint32_t stripe_count;	/* 1..niods */
	uint32_t first_iod;	/* < niods */
	int timeout_ms;		/* > 0 */
	int recovery_grace_s;	/* >= 0: clients wait this long for a
				   restarting daemon (client_grace.c) */
	int64_t client_cache;	/* bytes a client keeps under extent
				   locks (xcache.h); 0: no caching */
	int iod_connections;	/* a client's connections to each iod,
				   1..CLF_CONFIG_MAX_IOD_CONNS; 0: the
				   program's default (clf_ll.h) */
	int log_level;		/* the daemons' (log.h), CLF_LOG_INFO by
				   default */
	int daemon_workers;	/* each daemon's pool; 0: 2 per core */
	char *data_dir;		/* absolute; owned */
	char *backing;		/* absolute, or NULL: the persistent
				   directory the instance's files are
				   written back to (docs/staging.md);
				   owned */
	struct clf_config_daemon metad;	/* metad 0, or the one a metad
					   runs as (clf_config_select_metad) */
	uint32_t nmetads;	/* 1..CLF_CONFIG_MAX_METADS */
	struct clf_config_daemon *metads; /* nmetads, by metad index: the
					     namespace's partition; owned */
	/* What each iod lends its clients, bytes; 0: the iod's default,
	 * derived from its machine's memory (iod --help). */
	int64_t iod_view_memory, iod_view_min_share;
	int64_t iod_buffer_memory, iod_buffer_min_share;
	uint32_t niods;		/* 1..CLF_CONFIG_MAX_IODS */
	struct clf_config_daemon *iods;	/* niods, by iod index; owned */
};

/*
 * clf_config_find - which configuration file a program reads
 *
 * The one lookup order of every clf program (the clf command, metad, iod,
 * mount.clf, CLF_init(NULL), the ROMIO driver):
 *   1. path (a program's -c FILE) when not NULL;
 *   2. $CLF_CONFIG when set;
 *   3. <$CLF_DATA_DIR or ./clf-data>/clf.conf when it exists (where
 *      `clf up` writes an instance's file);
 *   4. CLF_SYSCONFDIR/clf/clf.conf (/etc/clf/clf.conf) when it exists.
 * Writes the path into buf (len bytes).  Returns 0, or -ENOENT with a
 * message naming every place tried when 3 and 4 do not exist; whether
 * the file of 1 or 2 exists is clf_config_parse_file's to say.
 */
int clf_config_find(const char *path, char *buf, size_t len);

/*
 * clf_config_load - the configuration to use: the file clf_config_find
 * picks, parsed.  Returns 0 and a new config in *out (the caller frees
 * it with clf_config_free), or a negative errno with a message naming
 * the file and line, or the places tried.
 */
int clf_config_load(const char *path, struct clf_config **out);

/* Parse exactly the file path; errors as clf_config_load. */
int clf_config_parse_file(const char *path, struct clf_config **out);

/*
 * The built-in default: one metad and CLF_CONFIG_DEFAULT_IODS iods on
 * 127.0.0.1, ports base, base+1, ... with base = $CLF_BASE_PORT or 7000,
 * storage under $CLF_DATA_DIR or ./clf-data, and no secret.  -EINVAL for a
 * malformed environment variable.
 */
int clf_config_default(struct clf_config **out);

/* <$CLF_DATA_DIR or ./clf-data>/clf.conf into buf. */
int clf_config_default_path(char *buf, size_t len);

/*
 * The methods (CLF_AUTH_* of auth.h) a daemon of cfg takes: the secret
 * always, MUNGE with auth = munge, or by default when munged answers now.
 */
unsigned clf_config_auth_methods(const struct clf_config *cfg);

/*
 * Whether a client of cfg authenticates with MUNGE: it may not read the
 * secret (or there is none and auth = munge), and auth is not secret.
 */
bool clf_config_uses_munge(const struct clf_config *cfg);

/* What methods mean, in words, for `clf up` and the daemons' logs. */
const char *clf_config_auth_text(unsigned methods);

/* Use secret s from now on (copied), forgetting any secret file. */
void clf_config_set_secret(struct clf_config *cfg, const struct clf_secret *s);

/*
 * clf_config_write - save cfg to path, readable by its owner only
 *
 * Written to a temporary file, synced and renamed over path, so readers
 * see the old or the new file, never a part.  The secret is written as
 * secret_file when it came from one, else in hex.  Returns 0 or a negative
 * errno.
 */
int clf_config_write(const struct clf_config *cfg, const char *path);

/* A deep copy of src into *dst: 0 or -ENOMEM (no message). */
int clf_config_daemon_copy(struct clf_config_daemon *dst,
			   const struct clf_config_daemon *src);

/*
 * Make metad index (of cfg->metads) the one cfg->metad names: what a
 * metad started as that index serves.  0, or -EINVAL with a message.
 */
int clf_config_select_metad(struct clf_config *cfg, uint32_t index);

/* Free cfg and wipe its secret; NULL ok. */
void clf_config_free(struct clf_config *cfg);

/*
 * "64k" -> 65536: a decimal number with an optional k, m, g or t suffix
 * (either case, powers of 1024).  -EINVAL when malformed, -ERANGE when
 * over INT64_MAX.  No message is set; callers add their context.
 */
int clf_parse_size(const char *s, int64_t *out);

/*
 * URL names (config_url.c): clf://HOST[:PORT]/path names a file of the
 * instance whose metad is HOST:PORT (PORT 7000 when left out; IPv6 hosts
 * in brackets), for a client with no configuration file.
 */
#define CLF_URL_SCHEME "clf://"

struct clf_proto_instance;

/*
 * clf_url_parse - whether name is a clf:// URL, and its parts
 *
 * Returns 1 with metad's address "host:port" in addr (alen bytes) and
 * *path pointing into name at the path ("/..." or "" for none); 0 when
 * name is not a URL (nothing written); a negative errno with a message
 * for a malformed one.
 */
int clf_url_parse(const char *name, char *addr, size_t alen,
		  const char **path);

/*
 * The configuration of a client that knows metad's address only: the
 * defaults, no iods yet (clf_config_set_instance adds what metad says),
 * and as secret the file $CLF_SECRET_FILE names (a copy of the
 * instance's, mode 0600); without it the client authenticates with
 * MUNGE.  0 and *out (clf_config_free), or a negative errno.
 */
int clf_config_for_metad(const char *addr, struct clf_config **out);

/* Take the iods and defaults metad's INSTANCE reply m gives into cfg
 * (which has none yet).  0, or -EPROTO for a reply that contradicts
 * itself. */
int clf_config_set_instance(struct clf_config *cfg,
			    const struct clf_proto_instance *m);

#endif /* CLF_CONFIG_H */
