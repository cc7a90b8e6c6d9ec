/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_harness.h -- integration tests of the real iod program.
 *
 * Each test starts the iod binary (fork/exec) in a fresh mkdtemp
 * directory with a generated configuration, on 127.0.0.1 and a free port
 * (chosen again when another process took it first), speaks the protocol
 * to it through libclf's transport, authentication and codecs, and kills
 * what it started.  Every wait is bounded.  An iod started in the
 * foreground dies with the test process (PR_SET_PDEATHSIG); daemons are
 * killed at exit.
 *
 * The client helpers return what the iod answered: 0 or a count, or the
 * negative status of its reply (with its message in CLF_Last_error()).
 */
#ifndef CLF_IOD_HARNESS_H
#define CLF_IOD_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "clf.h"
#include "proto.h"
#include "transport.h"

#define IODH_WAIT_MS 10000	/* bound for what must happen soon */
#define IODH_MAX_ENV 4

struct iodh {
	char *base;		/* mkdtemp directory; owned */
	char conf[512];		/* the configuration file */
	char dir[512];		/* the iod's storage directory */
	char log[512];		/* its log */
	char addr[64];		/* 127.0.0.1:port */
	int timeout_ms;		/* timeout_ms of the configuration */
	pid_t pid;		/* the running iod, 0 if none */
	struct clf_secret secret;
	const char *env[IODH_MAX_ENV];	/* "NAME=value" for the iod; NULL */
	const char *extra_arg;	/* one more argument, e.g. "-m2" */
	const char *conf_global; /* more [global] lines ("k = v\n"), or NULL */
};

/* A fresh directory and secret; the config is written at start. */
void iodh_init(struct iodh *h, int timeout_ms);

/* Start the iod in the foreground and wait until it listens. */
void iodh_start(struct iodh *h);

/* Start it again on the same directory and port (after a crash). */
void iodh_restart(struct iodh *h);

/* SIGTERM, and check that it exits 0 within the bound. */
void iodh_stop(struct iodh *h);

/* SIGKILL and reap. */
void iodh_kill9(struct iodh *h);

/* Stop the iod if running (SIGKILL), remove the directory (unless
 * $CLF_TEST_KEEP is set: then say where it is, for debugging). */
void iodh_cleanup(struct iodh *h);

/* Write the configuration with a new free port (no iod started). */
void iodh_write_config(struct iodh *h);

/* The iod binary under test. */
const char *iodh_binary(void);

/*
 * Run the iod binary with args (NULL-terminated, without argv[0]) to its
 * end, within the bound; its exit status (or -1 if killed) and, when
 * err != NULL, its stderr in err (errlen bytes, NUL-terminated).
 */
int iodh_run(const char *const *args, char *err, size_t errlen);

/* The iod's resident memory (VmRSS of /proc/PID/status), bytes. */
size_t iodh_rss(const struct iodh *h);

/* Whether the log contains s. */
bool iodh_log_has(const struct iodh *h, const char *s);

/* Register a daemon pid to be killed if the test ends early. */
void iodh_track_pid(pid_t pid);

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

/* Connect and authenticate with the test's secret; asserts success. */
struct clf_conn *iodh_connect(const struct iodh *h);

/* Connect and authenticate with secret s: 0 or the error. */
int iodh_connect_with(const struct iodh *h, const struct clf_secret *s,
		      struct clf_conn **out);

int cl_ping(struct clf_conn *c);
int cl_status(struct clf_conn *c, struct clf_proto_status *st);
int cl_statfs(struct clf_conn *c, struct clf_proto_statfs *st);
int64_t cl_sub_write(struct clf_conn *c, uint64_t file, uint32_t sub,
		     int64_t off, const void *data, size_t len);
/* Reads up to len bytes into buf: the count the iod sent. */
int64_t cl_sub_read(struct clf_conn *c, uint64_t file, uint32_t sub,
		    int64_t off, void *buf, size_t len);
/* SUB_WRITEV / SUB_READV of n ranges (sub[i], off[i], len[i]); a write
 * whose dlen is not the ranges' sum sends it all the same. */
int64_t cl_sub_writev(struct clf_conn *c, uint64_t file, uint32_t n,
		      const uint32_t *sub, const int64_t *off,
		      const uint32_t *len, const void *data, size_t dlen);
int64_t cl_sub_readv(struct clf_conn *c, uint64_t file, uint32_t n,
		     const uint32_t *sub, const int64_t *off,
		     const uint32_t *len, void *buf, size_t max);
int cl_view_register(struct clf_conn *c, uint64_t file, uint32_t sub,
		     CLF_Datatype view, int64_t vdisp, CLF_Datatype subtype,
		     int64_t sdisp, uint32_t *handle);
int cl_view_release(struct clf_conn *c, uint32_t handle);
/* tag and participants 0: independent; else collective. */
int64_t cl_view_write(struct clf_conn *c, uint32_t handle, int64_t lo,
		      int64_t hi, const void *data, size_t len, uint64_t tag,
		      uint32_t participants);
int64_t cl_view_read(struct clf_conn *c, uint32_t handle, int64_t lo,
		     int64_t hi, void *buf, size_t cap, uint64_t tag,
		     uint32_t participants);
int cl_sync(struct clf_conn *c, uint64_t file);
int cl_truncate(struct clf_conn *c, uint64_t file, uint32_t sub, int64_t len);
int cl_remove(struct clf_conn *c, uint64_t file, uint32_t sub);
/* SUB_SIZES of n subfiles into len[]. */
int cl_sub_sizes(struct clf_conn *c, uint64_t file, uint32_t n,
		 const uint32_t *sub, int64_t *len);

/* STATUS until views == want (the iod drops them asynchronously). */
void iodh_wait_views(struct clf_conn *c, uint32_t want);

/* ------------------------------------------------------------------ */
/* Reference: what view I/O must do, byte by byte                      */
/* ------------------------------------------------------------------ */

/* The value of file byte f in round r; never 0. */
static inline uint8_t iodh_val(int64_t f, int r)
{
	return (uint8_t)((f * 131 + (f >> 7) * 17 + r * 29) % 251 + 1);
}

/*
 * The view bytes of [lo, hi) of (view, vd) that fall into subfile
 * (sub, sd), computed one byte at a time with CLF_Type_unmap and
 * CLF_Type_map (never with the mapping engine the iod uses): their count;
 * when out != NULL their values iodh_val(f, r), when soff != NULL their
 * subfile offsets.
 */
size_t iodh_ref_pack(CLF_Datatype view, int64_t vd, CLF_Datatype sub,
		     int64_t sd, int64_t lo, int64_t hi, int r, uint8_t *out,
		     int64_t *soff);

/* A new buffer of n bytes, never NULL. */
void *iodh_alloc(size_t n);

#endif /* CLF_IOD_HARNESS_H */
