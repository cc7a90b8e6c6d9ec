/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * admission.h -- which connections a daemon serves, and how many.
 *
 * Slots for authenticated clients are the daemon's resource; a peer that
 * has not proven it holds the secret must never take one.  So a daemon
 * counts two kinds of connection apart:
 *
 *   - handshakes in progress: at most CLF_ADMIT_HANDSHAKES in all and
 *     CLF_ADMIT_HANDSHAKES_PER_ADDR from one source address, each with
 *     CLF_ADMIT_HANDSHAKE_MS per step.  A new connection beyond either
 *     bound is not refused: it takes the place of the oldest handshake
 *     (of its address, or of all), which is cut off.  A client that holds
 *     the secret finishes its handshake in a round trip or two, so idle
 *     sockets cannot keep it out unless they arrive faster than that;
 *   - authenticated connections: at most the daemon's own limit (iod -m,
 *     MDS_MAX_CONNECTIONS), counted only once the handshake succeeded.
 *
 * An attacker without the secret holding idle sockets therefore costs
 * at most CLF_ADMIT_HANDSHAKES threads and never takes a slot of a client
 * that authenticates.  Refusals are logged at most once a second, with
 * the number left out since the last line.
 */
#ifndef CLF_ADMISSION_H
#define CLF_ADMISSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define CLF_ADMIT_HANDSHAKES 64
#define CLF_ADMIT_HANDSHAKES_PER_ADDR 8
#define CLF_ADMIT_HANDSHAKE_MS 2000

/* A handshake in progress. */
struct clf_admit_slot {
	int fd;			/* its socket, shut down to cut it off */
	char addr[64];		/* source address, without the port */
	int64_t since_ms;	/* when it was accepted (monotonic) */
	uint32_t gen;		/* changes each time the slot is taken */
	bool used;
};

struct clf_admission {
	pthread_mutex_t lock;	/* guards everything below */
	unsigned max_authed;	/* the daemon's limit */
	unsigned authed;	/* authenticated connections open */
	struct clf_admit_slot slots[CLF_ADMIT_HANDSHAKES];
	uint64_t cut;		/* handshakes cut off so far */
	int64_t log_next_ms;	/* no refusal line before then */
	unsigned log_skipped;	/* refusals not logged since the last line */
};

void clf_admission_init(struct clf_admission *a, unsigned max_authed);
void clf_admission_release(struct clf_admission *a);

/*
 * A connection from peer ("addr:port") on socket fd was accepted: 0 with
 * *ticket for clf_admit_handshake_done() when it may start its
 * handshake (possibly cutting off the oldest one), or -EAGAIN with the
 * reason in why when every authenticated slot is taken (the caller
 * closes it).
 */
int clf_admit_handshake(struct clf_admission *a, const char *peer, int fd,
			uint64_t *ticket, char *why, size_t len);

/*
 * The handshake of ticket ended (authenticated or not, or cut off).
 * When it succeeded the connection takes an authenticated slot: 0, or
 * -EAGAIN with the reason in why when none is free (the caller closes
 * it).
 */
int clf_admit_handshake_done(struct clf_admission *a, uint64_t ticket,
			     bool authenticated, char *why, size_t len);

/*
 * The admission question asked inside a handshake (clf_auth_peer.admit):
 * a server sets peer.admit = clf_admit_ask and peer.admit_arg to one of
 * these, so a peer is refused in its AUTH_OK rather than told it is in
 * and then dropped; after the handshake clf_admit_settle() closes the
 * ticket whatever happened.
 */
struct clf_admit_question {
	struct clf_admission *a;
	uint64_t ticket;
	bool asked, admitted;
};

int clf_admit_ask(void *question, char *why, size_t len);

/*
 * The handshake of q ended with err (0: the connection is served and
 * holds its slot until clf_admit_leave()).  A failed handshake gives
 * back the slot it was admitted to, if any.
 */
void clf_admit_settle(struct clf_admit_question *q, int err);

/* An authenticated connection closed: its slot is free. */
void clf_admit_leave(struct clf_admission *a);

/* Whether the daemon holds all its authenticated slots. */
bool clf_admission_full(struct clf_admission *a);

/*
 * Whether a refusal may be logged now (at most once a second); *skipped
 * is then the number of refusals not logged since the last line.
 */
bool clf_admission_log_refusal(struct clf_admission *a, unsigned *skipped);

#endif /* CLF_ADMISSION_H */
