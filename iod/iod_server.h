/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iod_server.h -- the I/O daemon's network side: the server, its
 * connections, the request handlers and collective operations.
 *
 * Private to the iod program (iod.c, iod_server.c, iod_ops.c,
 * iod_collective.c, iod_log.c); the storage engine below it is
 * iod_store.h, iod_view.h, iod_viewio.h and iod_merge.h.
 */
#ifndef IOD_SERVER_H
#define IOD_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "admission.h"
#include "config.h"
#include "daemon.h"
#include "iod_share.h"
#include "iod_store.h"
#include "iod_view.h"
#include "iod_viewio.h"
#include "transport.h"

struct iod_colls;

/* Connections served at once unless -m says otherwise. */
#define IOD_MAX_CONNS_DEFAULT 256u

/*
 * Test hooks, read from the environment at start, off (0) by default.
 * Named like git's GIT_TEST_*: compiled in so that the binary under test
 * is the binary that ships.
 */
struct iod_hooks {
	/* CLF_TEST_IOD_ENOSPC_AFTER: writes that would take the bytes this
	 * iod has written past this many fail with ENOSPC; 0: off. */
	uint64_t enospc_after;
	/* CLF_TEST_IOD_DELAY_MS: sleep this long before every reply. */
	unsigned delay_ms;
	/* CLF_TEST_IOD_COLL_PIECES: pieces per round of a collective
	 * operation (iod_collective.c, rule 6a); 0: the built-in size. */
	unsigned coll_pieces;
};

/* Parse the CLF_TEST_IOD_* variables: 0, or -EINVAL with a message. */
int iod_hooks_from_env(struct iod_hooks *out);

/*
 * What the iod lends its clients (clf.conf keys of the same names; 0 in
 * the configuration: these defaults, from the machine's memory M):
 *
 *   iod_view_memory       M / 16, from 64 MiB to 8 GiB: registered views
 *   iod_view_min_share    iod_view_memory / max_conns
 *   iod_buffer_memory     M / 8, from 256 MiB to 16 GiB: request and
 *                         reply buffers over IOD_SMALL_BUF
 *   iod_buffer_min_share  iod_buffer_memory / max_conns, at least
 *                         IOD_SMALL_BUF
 *
 * Each pool is shared fairly between the connections (iod_share.h); with
 * the default minimum every connection the iod serves can hold its
 * minimum at once.
 * Besides, each connection may always hold IOD_SMALL_BUF bytes of
 * request and as many of reply, so that every client is served however
 * the pools stand: max_conns * 2 * IOD_SMALL_BUF in all.
 */
struct iod_limits {
	size_t view_memory, view_min_share;
	size_t buffer_memory, buffer_min_share;
};

#define IOD_SMALL_BUF ((size_t)1 << 20)

/* The limits of cfg, defaults filled in from this machine's memory. */
void iod_limits_from_config(const struct clf_config *cfg, unsigned max_conns,
			    struct iod_limits *out);

struct iod_server {
	/* Immutable while serving. */
	uint32_t index;			/* this iod's index in the config */
	const struct clf_config *cfg;	/* borrowed; outlives the server */
	const char *addr;		/* listening address; borrowed (cfg) */
	char name[16];			/* "iod 3", in messages */
	struct iod_store *st;		/* owned */
	struct iod_views *views;	/* owned */
	struct iod_colls *colls;	/* owned: collective operations */
	/* The listener, admission and connection threads (daemon.h). */
	struct clf_daemon_server net;
	struct iod_hooks hooks;
	unsigned max_conns;		/* connections served at once */
	int timeout_ms;			/* network waits and collectives */
	int64_t start_ms;		/* clf_now_ms() at start */
	/* CLF_AUTH_* taken.  A MUNGE-authenticated user may reach any
	 * subfile until capabilities come (docs/security.md). */
	unsigned auth_methods;

	/* Set when the server stops (iod_server_stop). */
	atomic_bool stop;

	/* Counters for STATUS; atomic, no lock. */
	atomic_uint_least64_t requests;	/* served since start */
	atomic_uint_least64_t bytes_read;    /* client data sent, bytes */
	atomic_uint_least64_t bytes_written; /* client data stored, bytes */
	atomic_uint connections;	/* authenticated and open now */
	atomic_uint_least64_t next_owner; /* the last connection id given */
	struct iod_limits limits;

	pthread_mutex_t buf_lock;
	struct iod_pool bufs;		/* buffers over IOD_SMALL_BUF; buf_lock */
	size_t coll_charged;		/* of bufs, by collective rounds */
	struct iod_client *clients;	/* open ones; mutex */

	pthread_mutex_t mutex;		/* of clients */
};

/*
 * iod_server_open - everything but the loop: the store of `dir`, the
 * view registry, the collective table and the listener on `addr`.
 * Returns 0 and fills *srv (which the caller allocated), or a negative
 * errno with a message naming what failed (e.g. "iod 1: cannot listen on
 * 127.0.0.1:7002: Address already in use").
 */
int iod_server_open(struct iod_server *srv, const struct clf_config *cfg,
		    uint32_t index, unsigned max_conns,
		    const struct iod_hooks *hooks);

/*
 * Accept and serve connections until stop_fd (the daemon's signalfd,
 * daemon.h) is readable, then wait (up to a bound) for the connection
 * threads to finish.  Returns 0, or -EBUSY when some threads were still
 * running at the bound: the caller must not free the server then (it
 * exits instead).
 */
int iod_server_run(struct iod_server *srv, int stop_fd);

/* Tell the connections the server stops (the runtime calls it). */
void iod_server_stop(struct iod_server *srv);

/* Free what iod_server_open made; no thread may be running. */
void iod_server_close(struct iod_server *srv);

/* ------------------------------------------------------------------ */
/* One connection, one thread                                          */
/* ------------------------------------------------------------------ */

/*
 * A client, as memory is shared (iod_share.h): the connections of one
 * MUNGE user, or one connection authenticated with the shared secret
 * (which says nothing of who is behind it).
 */
struct iod_client {
	uint64_t id;			/* IOD_CLIENT_UID | uid, or owner */
	unsigned conns;			/* connections using it; srv mutex */
	size_t buf_bytes;		/* of the buffer pool; buf_lock */
	struct iod_client *next;	/* srv->clients; srv mutex */
};

#define IOD_CLIENT_UID ((uint64_t)1 << 63)

struct iod_conn {
	struct iod_server *srv;		/* borrowed */
	struct iod_client *client;	/* a reference once authenticated */
	struct clf_conn *c;		/* owned */
	uint64_t owner;			/* view owner id, unique */
	uint64_t ticket;		/* of its handshake (admission.h) */
	char role[CLF_PROTO_ROLE_MAX + 1]; /* what the peer said it is */
	uint64_t nrequests;		/* served on this connection */

	/*
	 * Payload of the request being served (buf) and bulk data of the
	 * reply being sent (out: reads), reused from request to request.
	 * A buffer over IOD_SMALL_BUF is charged to the server's pool
	 * (iod_server.bufs) as this connection's, kept while the pool is
	 * less than half used and given back when the connection idles: a
	 * fresh 32 MiB buffer per request costs a page fault and a page
	 * clear per 4 KiB, a third of the iod's time in a stream of writes.
	 */
	uint8_t *buf;			/* owned */
	size_t cap;			/* bytes allocated */
	uint8_t *out;			/* owned */
	size_t out_cap;			/* bytes allocated */
	size_t sieve_charged;		/* of the pool, the sieve window's */
	struct iod_caps *caps;		/* owned; NULL: the peer holds the
					   secret and needs none (iod_cap.h) */
};

/*
 * iod_conn_data_buffer - room for len bytes of reply data (len may be 0)
 *
 * The connection's reply buffer, grown as needed; it stays the
 * connection's (a reply borrows it) and is valid until the reply is sent.
 * Returns 0 and *out, or -ENOBUFS when the connection's share of the
 * buffer pool cannot hold it (iod_share.h; the caller may then stream
 * the reply: iod_stream.c), or -ENOMEM, with a message.
 */
int iod_conn_data_buffer(struct iod_conn *cn, size_t len, void **out);

/*
 * The sieving parameters for one view access of this connection: the
 * default window (IOD_SIEVE_WINDOW_DEFAULT, held during the access) when
 * its share of the buffer pool allows, else IOD_SIEVE_WINDOW_SMALL, so
 * that a connection's sieve costs the pool or 256 KiB.  Give it back with
 * iod_conn_sieve_end after the access.
 */
#define IOD_SIEVE_WINDOW_SMALL ((size_t)256 << 10)
struct iod_sieve iod_conn_sieve_begin(struct iod_conn *cn);
void iod_conn_sieve_end(struct iod_conn *cn);

/* The request buffer with room for len bytes: 0, -ENOBUFS or -ENOMEM. */
int iod_conn_reserve(struct iod_conn *cn, size_t len);

/* Skip the next left payload bytes: 0 or the connection's error. */
int iod_conn_drain(struct iod_conn *cn, size_t left);

struct iod_stream;

/*
 * The reply a handler prepares: a body of up to sizeof(head) bytes, then
 * optionally bulk data sent from where it is (no copy), which the reply
 * owns when `owned` is set.
 */
struct iod_reply {
	uint8_t head[64];
	size_t head_len;
	const void *data;		/* borrowed, or `owned` */
	size_t data_len;
	void *owned;			/* freed after sending; may be NULL */
	/* Or data_len bytes of this subfile from file_off (zeros past its
	 * end), sent from the page cache; a reference, put after sending. */
	struct iod_subfile *file;
	int64_t file_off;
	/* Or data_len bytes made piece by piece while sending
	 * (iod_stream.c); owned, freed after sending. */
	struct iod_stream *stream;
};

/*
 * iod_dispatch - serve one request whose payload is in p[0..len)
 *
 * Fills *rep on success and returns 0; or returns a negative errno with
 * the message for the client in CLF_Last_error().  An opcode without a
 * handler is -ENOSYS.
 */
int iod_dispatch(struct iod_conn *cn, const struct clf_proto_header *h,
		 uint8_t *p, size_t len, struct iod_reply *rep);

/*
 * The largest payload a request with this opcode can have, so that the
 * loop refuses a bigger one before allocating; 0 for opcodes with empty
 * bodies and -1 for opcodes the iod does not serve.
 */
int64_t iod_op_payload_max(uint16_t op);

/* Apply the ENOSPC hook before a write of len bytes (see iod_hooks). */
void iod_hook_before_write(struct iod_server *srv, size_t len);

/* A reply whose body is one u32 (a write's count): 0 or -errno. */
int iod_reply_u32(struct iod_reply *rep, uint32_t v);

/* A data reply of len bytes of sf from off (see iod_reply.file). */
int iod_reply_file(struct iod_reply *rep, struct iod_subfile *sf,
		   int64_t off, size_t len);

/* ------------------------------------------------------------------ */
/* Writes from the connection straight to a subfile (iod_direct.c)     */
/* ------------------------------------------------------------------ */

/*
 * How many bytes of h's body to receive before offering the request to
 * iod_direct_write: the head of a write big enough to be worth it, or 0
 * (receive the whole body and dispatch).
 */
size_t iod_direct_head_len(struct iod_server *srv,
			   const struct clf_proto_header *h);

#define IOD_DIRECT_DECLINED 1
#define IOD_DIRECT_HEAD_MAX 40	/* the longest head: VIEW_WRITE's */

/*
 * iod_direct_write - serve a write whose head is in head[0..head_len)
 *
 * The data is still in the connection.  Returns IOD_DIRECT_DECLINED when
 * it does not land contiguously in one subfile (nothing more was read:
 * receive the rest and dispatch as usual); otherwise the data was
 * consumed and it returns 0 with *rep set or a negative errno for an
 * error reply -- unless *broken is set: the connection failed (close it).
 */
int iod_direct_write(struct iod_conn *cn, const struct clf_proto_header *h,
		     const uint8_t *head, size_t head_len,
		     struct iod_reply *rep, bool *broken);

/*
 * iod_direct_sub_read / iod_direct_view_read - a read answered from the
 * page cache: 0 with *rep set to send the bytes straight from the
 * subfile, or IOD_DIRECT_DECLINED (small, several runs, no such subfile
 * yet: the caller reads into memory as usual), or a negative errno (a
 * collective operation this read joined failed).  A SUB_READ is short at
 * the end of the subfile, a VIEW_READ count bytes with zeros past it.
 */
int iod_direct_sub_read(struct iod_conn *cn, uint64_t file, uint32_t subfile,
			int64_t off, size_t len, struct iod_reply *rep);
int iod_direct_view_read(struct iod_conn *cn, const struct iod_view *v,
			 const struct clf_proto_view_io_req *m, int64_t count,
			 struct iod_reply *rep);

/* ------------------------------------------------------------------ */
/* Requests too big to hold, in pieces (iod_stream.c)                  */
/* ------------------------------------------------------------------ */

/* Writes and reads move in pieces of this many bytes. */
#define IOD_STREAM_CHUNK IOD_SMALL_BUF

/*
 * How many bytes of h's body to receive before offering the request to
 * iod_stream_write: the head of a write with more than IOD_STREAM_CHUNK
 * bytes of data, or 0.
 */
size_t iod_stream_head_len(const struct clf_proto_header *h);

/*
 * iod_stream_write - serve a write whose head is in head[0..head_len)
 *
 * The data is still in the connection; it is received and written in
 * pieces of IOD_STREAM_CHUNK, so the iod holds one piece whatever the
 * write, and reads no faster than the disk takes the data.  A collective
 * write is held whole, when the connection's share of the buffer pool
 * allows: then IOD_DIRECT_DECLINED, with the request buffer reserved
 * (receive the rest and dispatch); otherwise its piece is written at once
 * and it joins its operation with an empty range (as iod_direct.c).
 * Returns 0 with *rep set or a negative errno for an error reply, the
 * rest of the data then received and dropped -- unless *broken is set:
 * the connection failed (close it).
 */
int iod_stream_write(struct iod_conn *cn, const struct clf_proto_header *h,
		     const uint8_t *head, size_t head_len,
		     struct iod_reply *rep, bool *broken);

/*
 * iod_stream_view_read - answer a VIEW_READ of count bytes whose data
 * does not fit in the connection's share: a collective read joins its
 * operation with an empty range first; the data is then gathered piece
 * by piece while it is sent.  0 with *rep set, or a negative errno.
 */
int iod_stream_view_read(struct iod_conn *cn, struct iod_view *v,
			 const struct clf_proto_view_io_req *m, int64_t count,
			 struct iod_reply *rep);

/* The same for a SUB_READ of len bytes at off (short at the end). */
int iod_stream_sub_read(struct iod_conn *cn, uint64_t file, uint32_t subfile,
			int64_t off, size_t len, struct iod_reply *rep);

/* Send a streamed reply (rep->stream) after the header h: 0 or the
 * transport's error. */
int iod_stream_send(struct iod_conn *cn, const struct clf_proto_header *h,
		    const struct iod_reply *rep);

/* Free rep->stream; NULL ok. */
void iod_stream_free(struct iod_stream *s);

/* ------------------------------------------------------------------ */
/* Collective operations (iod_collective.c)                            */
/* ------------------------------------------------------------------ */

int iod_colls_create(struct iod_colls **out);
/* NULL ok; no operation may be in progress. */
void iod_colls_free(struct iod_colls *cs);

/*
 * iod_coll_join - take part in collective operation `tag` with view v
 *
 * data holds len bytes: what this participant writes (write != 0) or
 * where its read goes.  Blocks until all `participants` requests for
 * (tag, v->file, v->subfile) arrived and the merged I/O was done, or
 * until timeout_ms after the first of them arrived.  Returns len, or a
 * negative errno for this participant: -ETIMEDOUT (the operation is
 * discarded for everyone), -EINVAL (this request disagrees with the
 * operation it joins, or len is wrong), -ESHUTDOWN (the iod is
 * stopping), or the I/O error every participant gets.
 */
int64_t iod_coll_join(struct iod_server *srv, const struct iod_view *v,
		      uint64_t tag, uint32_t participants, int write,
		      int64_t lo, int64_t hi, void *data, size_t len);

/* ------------------------------------------------------------------ */
/* Log (iod_log.c)                                                     */
/* ------------------------------------------------------------------ */

/*
 * The log is libclf's daemon log (log.h): one line format for metad and
 * the iods, levels, reopened on SIGHUP.  iod_log is a line at level
 * info, iod_log_debug one at debug (a line per connection).
 */
#include "log.h"

#define iod_log_open(path) clf_log_open(path)
#define iod_log_fd() clf_log_fd()
#define iod_log(...) clf_log(CLF_LOG_INFO, __VA_ARGS__)
#define iod_log_debug(...) clf_log(CLF_LOG_DEBUG, __VA_ARGS__)
#define iod_log_warn(...) clf_log(CLF_LOG_WARN, __VA_ARGS__)
#define iod_log_error(...) clf_log(CLF_LOG_ERROR, __VA_ARGS__)

/* The prefix of messages: "iod 3"; the log's name: "iod-3". */
void iod_log_set_name(uint32_t index);
const char *iod_log_name(void);


/*
 * The last error's reason behind this iod's name, into buf: "iod 2:
 * cannot write subfile 3 ...".
 */
const char *iod_errmsg(char *buf, size_t size);

#endif /* IOD_SERVER_H */
