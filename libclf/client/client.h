/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client.h -- the client's connections to metad and the iods.
 *
 * One connection to metad per process; to each iod, up to
 * iod_connections (clf.conf) lanes, each a connection of its own, opened
 * at first use and reopened after a failure.  An open file takes the
 * first lane with the fewest open files, and all its iod requests go on
 * it: the views and capabilities it gave an iod live on that connection,
 * and requests on different files -- a mount's readers, a process's
 * threads -- proceed at once instead of queueing on one connection.
 * Calls for no file (sizes of a layout) take the lane of the file the
 * calling thread used last, or one of its own.  A request
 * holds its lane's lock from send to reply, so requests of several
 * threads never interleave on a connection; an access that touches
 * several iods locks them in index order (no deadlock: they are of one
 * lane), sends every request, then collects every reply, so the iods
 * work in parallel.  Lanes of an iod open their connections one at a
 * time, so a thousand of them starting at once do not crowd the iod's
 * handshake slots (admission.h).
 */
#ifndef CLF_CLIENT_H
#define CLF_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "config.h"
#include "error.h"
#include "proto.h"
#include "transport.h"

#define CLF_PEER_CAPS 16

struct clf_peer {
	pthread_mutex_t lock;	/* held from a request's send to its reply */
	const struct clf_config_daemon *d; /* borrowed from the config */
	struct clf_error_source src; /* metad or iod N at d->addr: who
					failed, in errors about this peer */
	struct clf_conn *conn;	/* owned; NULL until used or after failure;
				   stored atomically (clf_peer_connected) */
	uint64_t generation;	/* new per connection, unique in the
				   process: stamps view handles */
	pthread_mutex_t *connecting;	/* the iod's: one handshake at a time;
					   NULL for metad */
	bool reused;		/* the last lock kept an older connection */
	bool timed_out;		/* the last failure was a timeout */
	bool acts_for;		/* metad: requests carry the user they act
				   for (send_cred in client.c) */
	/* iods: the capabilities handed over on the connection of
	 * generation gen (file_cap.c), replaced round robin. */
	struct clf_peer_cap {
		uint64_t gen, ino;
		int64_t expiry;
		uint32_t rights;
	} caps[CLF_PEER_CAPS];
	unsigned next_cap;
};

/*
 * A directory that a path walk of a spread namespace reached
 * (client_route.c): path (len bytes) from directory from names ino,
 * until expires_ms.  len 0: a free entry.
 */
#define CLF_ROUTE_CACHE 64
#define CLF_ROUTE_PATH_MAX 240
struct clf_route_entry {
	uint64_t from, ino;
	int64_t expires_ms;
	uint16_t len;
	char path[CLF_ROUTE_PATH_MAX];
};

struct clf_client {
	struct clf_config *cfg;	/* owned */
	/* Send the user to act for even without the secret: a test hook
	 * (CLF_TEST_ACT_AS=uid:gid), to prove metad refuses it. */
	bool test_act_as;
	const struct clf_transport_ops *transport;
	struct clf_peer metad;
	/*
	 * A second connection to metad for byte-range locks (lock.h): metad
	 * keeps a lock as long as the connection that took it, and a SETLK
	 * that waits holds its connection for up to a second, which must
	 * not hold up the process's other metadata calls.
	 */
	struct clf_peer metad_locks;
	/* Metads 1, 2, ... of a spread namespace (cfg->nmetads - 1 each,
	 * owned; NULL with one metad): requests go to the metad of the
	 * inode they name (client_route.c). */
	struct clf_peer *more_metads;
	struct clf_peer *more_metad_locks;
	/* (cfg->niods + CLF_CLIENT_IOD_SPARE) * lanes, owned: lane k of
	 * iod i at i * lanes + k; those from niods on not made yet. */
	struct clf_peer *iods;
	unsigned lanes;		/* cfg->iod_connections */
	pthread_mutex_t *iod_connecting;	/* as many as iods, owned */
	/*
	 * iods that joined after init (`clf iod add`): a layout that names
	 * an iod past the configuration makes the client read its
	 * configuration again (clf_client_iod_join, reread).  niods only
	 * grows, under joining, after the peers below it are made.
	 */
	atomic_uint niods;			/* iods known */
	struct clf_config_daemon *joined;	/* CLF_CLIENT_IOD_SPARE, owned */
	pthread_mutex_t joining;
	/* The instance's iods now, for a join: the configuration file
	 * read again, or (a client named by URL) metad's INSTANCE.  *now
	 * is the caller's to free (clf_config_free). */
	int (*reread)(struct clf_client *cl, struct clf_config **now);
	atomic_uint *lane_files;	/* lanes, owned: open files on each */
	atomic_uint next_thread_lane;	/* and the next thread (apart, so
					   that files take every lane) */
	atomic_uint_least64_t next_generation;	/* of connections */
	/* Request identities (client_retry.c, clf_proto.h "Retries"). */
	pthread_mutex_t reqid_lock;
	uint64_t client_id;	/* random, non-zero; reqid_lock */
	pid_t reqid_pid;	/* the process it was drawn in; reqid_lock */
	uint64_t next_seq;	/* reqid_lock */
	/* Directories resolved in a spread namespace (client_route.c). */
	pthread_mutex_t route_lock;
	struct clf_route_entry routes[CLF_ROUTE_CACHE];	/* route_lock */
};

/* The instance CLF_init() connected to, or NULL. */
extern struct clf_client *clf_client_instance;

/* -EINVAL with a message when CLF_init() has not run. */
int clf_client_get(struct clf_client **out);

/* The peer of metad index (0 for one outside the configuration), of
 * the metad of inode ino, and of the lock connection to ino's metad. */
struct clf_peer *clf_client_metad(struct clf_client *cl, uint32_t index);
struct clf_peer *clf_client_metad_of(struct clf_client *cl, uint64_t ino);
struct clf_peer *clf_client_metad_locks(struct clf_client *cl, uint64_t ino);

/* How many iods may join a client after it started. */
#define CLF_CLIENT_IOD_SPARE 16

/* A peer of daemon d (borrowed; outlives it), not connected: kind and
 * index name it in errors.  The peers (one per lane) of iod i at d. */
void clf_peer_init(struct clf_peer *p, const struct clf_config_daemon *d,
		   enum clf_error_kind kind, uint32_t index);
void clf_client_iod_peers_init(struct clf_client *cl, uint32_t i,
			       const struct clf_config_daemon *d);

/* Make the peers of the iods up to index i that joined after init, from
 * the configuration file read again: 0, or -EINVAL with a message when
 * it has no iod i (or i is past the spare ones, or there is no file). */
int clf_client_iod_join(struct clf_client *cl, uint32_t i);

/* The peer of iod index i on the calling thread's lane, or NULL with a
 * message. */
struct clf_peer *clf_client_iod(struct clf_client *cl, uint32_t i);

/* The same on lane `lane` (an open file's). */
struct clf_peer *clf_client_iod_lane(struct clf_client *cl, uint32_t i,
				     unsigned lane);

/* A lane for a file being opened: one with the fewest open files;
 * clf_client_give_lane when it closes. */
unsigned clf_client_take_lane(struct clf_client *cl);
void clf_client_give_lane(struct clf_client *cl, unsigned lane);

/* The calling thread's lane becomes `lane` (that of the file it uses). */
void clf_client_follow_lane(unsigned lane);

/* The peer of iod i whose connection has generation gen, or NULL. */
struct clf_peer *clf_client_iod_of_gen(struct clf_client *cl, uint32_t i,
				       uint64_t gen);

/*
 * Lock the peer and make sure it is connected and authenticated.  On
 * failure the peer is unlocked again and -EHOSTDOWN / -ETIMEDOUT /
 * -EACCES is returned with a message naming the daemon.
 */
int clf_peer_lock(struct clf_peer *p);
void clf_peer_unlock(struct clf_peer *p);
/* Whether p has a connection, read without its lock: a hint only. */
static inline bool clf_peer_connected(const struct clf_peer *p)
{
	return __atomic_load_n(&p->conn, __ATOMIC_RELAXED) != NULL;
}
/* Connect those of peers[0..n) not connected yet, all at once (a thread
 * each), so that locking them one by one next does not wait a round
 * trip per connection; failures are left for the lock (client_warm.c). */
void clf_peers_warm(struct clf_peer *const *peers, int n);

/*
 * Send one request (op, payload pieces) on a locked peer; *id receives
 * its request id for clf_peer_recv().  A failure closes the connection.
 */
int clf_peer_send(struct clf_peer *p, uint16_t op, const struct iovec *iov,
		  int iovcnt, uint64_t *id);

/* The same with header flags (CLF_PROTO_FLAG_REQ_ID). */
int clf_peer_send_flags(struct clf_peer *p, uint16_t op, uint16_t flags,
			const struct iovec *iov, int iovcnt, uint64_t *id);

/*
 * Receive the reply to request id on a locked peer: 0 and the payload
 * (caller frees) with its length, or the reply's negative status with
 * the daemon's message in CLF_Last_error().
 */
int clf_peer_recv(struct clf_peer *p, uint16_t op, uint64_t id,
		  void **payload, uint32_t *len);

/*
 * Did a request on a locked peer fail because the connection kept from
 * before was stale (the daemon restarted since)?  Then the request never
 * reached the new daemon and one retry on a fresh connection is right.
 */
static inline bool clf_peer_stale(const struct clf_peer *p)
{
	/* A timeout is no sign of a restart: retrying would double it. */
	return p->reused && !p->conn && !p->timed_out;
}

/*
 * Receive the reply to request id whose body is one byte string (SUB_READ,
 * VIEW_READ) of exactly len bytes straight into dest, without a copy.
 */
int clf_peer_recv_data(struct clf_peer *p, uint16_t op, uint64_t id,
		       void *dest, uint32_t len);

/* The same, scattered over iov[0..iovcnt), which hold len bytes in all. */
int clf_peer_recv_datav(struct clf_peer *p, uint16_t op, uint64_t id,
			const struct iovec *iov, int iovcnt, uint32_t len);

/* The same, a reply of at most max bytes (a SUB_READ that reached the
 * end of its subfile): *got says how many came into dest. */
int clf_peer_recv_data_upto(struct clf_peer *p, uint16_t op, uint64_t id,
			    void *dest, uint32_t max, uint32_t *got);

/*
 * Both, on an unlocked peer: lock, send, receive, unlock; retried once
 * on a fresh connection when the kept one turns out stale, and through
 * a restart of the daemon (Grace, below) when op is replayable.
 */
int clf_peer_call(struct clf_peer *p, uint16_t op, const struct iovec *iov,
		  int iovcnt, void **payload, uint32_t *len);

/*
 * Requests that change something at metad (client_retry.c): sent with a
 * request identity, and while no reply came (a timeout, a connection
 * lost) sent again with the same one, on a new connection, for up to
 * CLF_META_RETRY_TIMEOUTS times the configured timeout, or while metad
 * is down (a restart) recovery_grace_s if that is longer: metad answers
 * a repeat with the first outcome.  After that, or when metad is too old for
 * identities, the error says the outcome is unknown.  A metad that
 * cannot be reached before the first send is waited for as long.
 */
#define CLF_META_RETRY_TIMEOUTS 3
int clf_peer_call_retry(struct clf_peer *p, uint16_t op,
			const struct iovec *iov, int iovcnt, void **payload,
			uint32_t *len);

/* Whether op goes through clf_peer_call_retry: it changes metad's store. */
bool clf_op_has_reqid(uint16_t op);

/* The next identity of this client process: 0, or -ENOSYS when no
 * random client number could be drawn. */
int clf_client_reqid(struct clf_client *cl, struct clf_proto_reqid *out);

/*
 * Grace (client_grace.c): an operation whose connection to a daemon went
 * down (-EHOSTDOWN: reset, refused, closed; not a timeout, not a reply)
 * tries again on a fresh connection, pausing 20 ms, 50 ms, ... at most
 * 1 s between tries, for up to recovery_grace_s (clf.conf) since it
 * began: a restarting daemon is waited for instead of failing its
 * clients.  Only requests that are safe to send twice go round again
 * (include/clf.h, "Recovery").
 *
 *	struct clf_grace g;
 *
 *	clf_grace_begin(&g);
 *	do
 *		err = one_try(&stale);
 *	while (clf_grace_again(&g, err, stale));
 *
 * clf_grace_again pauses and returns true when the operation should be
 * tried again: at once, once, after a stale kept connection (stale, see
 * clf_peer_stale); after a lost connection while the grace lasts.  When
 * it gives up after waiting it adds that to the error's message.
 */
struct clf_grace {
	int64_t start;		/* clf_now_ms() */
	int64_t grace_ms;
	int tries;
	bool stale_used;
};

void clf_grace_begin(struct clf_grace *g);
bool clf_grace_again(struct clf_grace *g, int err, bool stale);
/* err, with "gave up after waiting ..." added to its message. */
int clf_grace_gave_up(int err, int64_t waited_ms);

/* Whether op may be sent again after its connection broke with no reply:
 * reads, and writes whose repeat leaves what one would (clf.h). */
bool clf_op_replayable(uint16_t op);

/*
 * Encode a request body with encode(w, msg) into a new buffer: the
 * buffer (caller frees) and its length in *len.
 */
typedef int (*clf_encode_fn)(struct wire_writer *w, const void *msg);
int clf_encode(clf_encode_fn encode, const void *msg, void **buf,
	       size_t *len);

#endif /* CLF_CLIENT_H */
