/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metad_harness.h -- integration tests of the real metad program.
 *
 * Each test gets a fresh mkdtemp directory with a generated configuration
 * (one metad and MH iods on 127.0.0.1, ports of its own, chosen again if
 * another process takes them first) and starts the metad binary in it
 * (fork/exec), optionally the iod binary too, and speaks the protocol
 * through libclf's transport, authentication and codecs.  Every wait is
 * bounded.
 *
 * Nothing outlives a test: daemons started in the foreground die with
 * the test process (PR_SET_PDEATHSIG), every daemon is killed at exit of
 * the test process (atexit, for failed assertions), and mh_main, which
 * runs the suite, kills any daemon whose pid a test recorded under its
 * root directory before removing it (for tests killed on timeout).
 *
 * The client helpers return what metad answered: 0, or the negative
 * status of its reply with its message in CLF_Last_error().
 */
#ifndef CLF_METAD_HARNESS_H
#define CLF_METAD_HARNESS_H

#include <check.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "clf.h"
#include "proto.h"
#include "transport.h"

#define MH_WAIT_MS 20000	/* bound for what must happen soon */
#define MH_MAX_IODS 4
#define MH_MAX_ENV 4
#define MH_PATH 512		/* a test's directory */
#define MH_LONG (MH_PATH + 64)	/* a path inside it */

struct mh {
	char base[MH_PATH];	/* the test's directory; removed at cleanup */
	char conf[MH_LONG];	/* base/clf.conf */
	char meta[MH_LONG];	/* metad's store directory */
	char log[MH_LONG];	/* metad's log */
	char out[MH_LONG];	/* metad's standard output and error */
	char iod_dir[MH_MAX_IODS][MH_LONG];
	char addr[64];		/* of metad: 127.0.0.1:port */
	int port;		/* metad; iod i at port + 1 + i */
	int niods;
	int timeout_ms;		/* timeout_ms of the configuration */
	struct clf_secret secret;
	pid_t metad;		/* running metad, 0 if none */
	pid_t iods[MH_MAX_IODS];	/* running iods, 0 if none */
	const char *env[MH_MAX_ENV];	/* "NAME=value" for metad; NULL */
	const char *conf_global; /* more [global] lines ("k = v\n"), or
				    NULL; set it, then mh_write_config */
};

/* Run suite s (each test forked, as Check does) and clean up after it:
 * the main() of every metad test program. */
int mh_main(Suite *s);

/* A fresh directory, secret, ports and configuration (written). */
void mh_init(struct mh *h, int niods, int timeout_ms);

/* Start metad in the foreground and wait until it authenticates us. */
void mh_start(struct mh *h);

/* Write the configuration again (after setting conf_global). */
void mh_write_config(struct mh *h);

/*
 * Start metad in the foreground; 0 when it serves, else the exit status
 * it ended with (its output in h->out), without asserting.
 */
int mh_try_start(struct mh *h);

/* SIGTERM, and check that metad exits 0 within the bound. */
void mh_stop(struct mh *h);

/* SIGKILL and reap. */
void mh_kill9(struct mh *h);

/* Wait (bounded) for metad to end by itself; its wait status. */
int mh_wait_exit(struct mh *h);

/* Whether the metad process is still running. */
bool mh_alive(struct mh *h);

/* Whether the iod program is built (tests that need it skip otherwise). */
bool mh_have_iod(void);

/* Start iod i in the foreground and wait until it authenticates us. */
void mh_start_iod(struct mh *h, int i);

/* Stop iod i with sig (SIGTERM or SIGKILL) and reap it. */
void mh_stop_iod(struct mh *h, int i, int sig);

/* Stop everything still running (SIGKILL) and remove the directory. */
void mh_cleanup(struct mh *h);

/* Whether metad's log (or, with out, its output) contains s. */
bool mh_log_has(const struct mh *h, const char *s);
bool mh_out_has(const struct mh *h, const char *s);

/*
 * Run the metad program with args (NULL-terminated, without argv[0]) to
 * its end, within the bound: its wait status; its standard error in err
 * (errlen bytes, NUL-terminated) when err is not NULL.
 */
int mh_run_metad(const char *const *args, char *err, size_t errlen);

/* Record a daemon's pid so that it is killed if the test ends early. */
void mh_track_pid(const struct mh *h, pid_t pid);

/* The number metad's log gives just before phrase (" took the slot
 * watching it"), in its last line that has it; -1 when none does. */
long mh_log_number_before(const struct mh *h, const char *phrase);

/* The metad and iod programs under test. */
const char *mh_metad_bin(void);
const char *mh_iod_bin(void);

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

#define MC_BUF (1u << 16)

/* An authenticated client connection to metad. */
struct mc {
	struct clf_conn *c;	/* owned */
	void *payload;		/* owned: the last reply's payload; what the
				   wrappers return borrows from it until the
				   next call */
	uint8_t buf[MC_BUF];	/* request bodies are encoded here */
	/* When set, every request goes with this identity
	 * (CLF_PROTO_FLAG_REQ_ID); borrowed. */
	const struct clf_proto_reqid *reqid;
};

/* Connect and authenticate with the test's secret; asserts success. */
struct mc *mc_open(const struct mh *h);

/* Connect to addr and authenticate with secret s: 0 or the error. */
int mc_open_with(const char *addr, const struct clf_secret *s, int timeout_ms,
		 struct mc **out);

/* Close; NULL ok. */
void mc_close(struct mc *m);

/*
 * Send op with the body (len bytes) and wait for its reply: 0 with the
 * reply's payload in *r (borrowed until the next call), or the reply's
 * negative status, or a transport error (then clf_conn_broken()).
 */
int mc_call(struct mc *m, uint16_t op, const void *body, size_t len,
	    struct wire_reader *r);

int mc_ping(struct mc *m);
int mc_status(struct mc *m, struct clf_proto_status *out);
int mc_statfs(struct mc *m, struct clf_proto_statfs *out);
/* out may be NULL; else the caller releases it
 * (clf_proto_lookup_rep_release); its bytes borrow from m. */
int mc_lookup(struct mc *m, uint64_t dir, const char *path, uint32_t flags,
	      struct clf_proto_lookup_rep *out);
/* layout NULL: round robin with the configured defaults.  out may be
 * NULL; else the caller releases it (clf_proto_create_rep_release). */
int mc_create(struct mc *m, uint64_t dir, const char *path, uint32_t mode,
	      uint32_t flags, const struct clf_proto_layout *layout,
	      struct clf_proto_create_rep *out);
int mc_mkdir(struct mc *m, uint64_t dir, const char *path, uint32_t mode,
	     struct clf_proto_attr *out);
/* out may be NULL; else the caller releases it
 * (clf_proto_readdir_rep_release); its names borrow from m. */
int mc_readdir(struct mc *m, uint64_t dir, uint64_t cookie, uint32_t max,
	       struct clf_proto_readdir_rep *out);
int mc_rename(struct mc *m, uint64_t dir, const char *path, uint64_t new_dir,
	      const char *new_path, uint32_t flags);
int mc_unlink(struct mc *m, uint64_t dir, const char *path);
int mc_rmdir(struct mc *m, uint64_t dir, const char *path);
int mc_getattr(struct mc *m, uint64_t ino, struct clf_proto_attr *out);
int mc_setattr(struct mc *m, const struct clf_proto_setattr_req *req,
	       struct clf_proto_attr *out);
/* Layouts: out may be NULL; else released by the caller
 * (clf_proto_layout_release).  Attributes: out may be NULL. */
int mc_set_layout(struct mc *m, uint64_t ino,
		  const struct clf_proto_layout *layout,
		  struct clf_proto_layout *out);
int mc_get_layout(struct mc *m, uint64_t ino, struct clf_proto_layout *out);
int mc_update_size(struct mc *m, uint64_t ino, int64_t size, int64_t mtime,
		   struct clf_proto_attr *out);

/* The inode of path under the root; asserts it exists. */
uint64_t mc_ino(struct mc *m, const char *path);

/* ------------------------------------------------------------------ */
/* Raw bytes                                                           */
/* ------------------------------------------------------------------ */

/* A plain TCP connection to metad, no authentication. */
int raw_connect(const struct mh *h);

/* Send all of buf; asserts. */
void raw_send(int fd, const void *buf, size_t len);

/* A header with these fields, encoded into out[CLF_PROTO_HEADER_SIZE]. */
void raw_header(uint8_t *out, uint16_t op, uint16_t flags, uint64_t id,
		uint32_t payload_len);

/*
 * Whether the peer closes fd within timeout_ms, reading and discarding
 * whatever comes before the end.
 */
bool raw_closed_within(int fd, int timeout_ms);

#endif /* CLF_METAD_HARNESS_H */
