/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client_i.h -- what the client's files share: open files, metad calls,
 * and the I/O path.
 */
#ifndef CLF_CLIENT_I_H
#define CLF_CLIENT_I_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap.h"
#include "client.h"
#include "clf_ll.h"
#include "clock.h"
#include "clf.h"
#include "layout.h"
#include "proto.h"

/* A view a file had, with its mapping and registrations (view_cache.c). */
struct clf_view_slot {
	int64_t disp;
	CLF_Datatype type;	/* owned reference */
	uint8_t *key;		/* owned: type encoded, as the iods get it;
				   NULL: an empty slot */
	uint32_t key_len;
	struct clf_viewmap *view;	/* owned; NULL: not made yet */
	uint32_t *handles;	/* owned, layout->nsub: as in clf_file */
	uint64_t *handle_gen;	/* owned */
	uint64_t used;		/* clf_file.view_clock when last left */
};

/* Views a file keeps besides its current one. */
#define CLF_VIEW_CACHE 16

/* Accesses of one file run each, in the file's bytes (xcache.c). */
struct clf_xc_runs {
	int64_t off, len;	/* the last one */
	int64_t stride;		/* from the one before */
	int streak;		/* in a row at stride, len each */
};

struct clf_file {
	/*
	 * References: the descriptor table's, until CLF_close takes the
	 * descriptor out, and one per clf_file_get() not yet put; the last
	 * one frees.  Guarded by file_table.c's table lock, not by lock below.
	 */
	int refs;
	pthread_mutex_t lock;	/* guards everything below */
	bool closed;		/* CLF_close took the descriptor */
	uint64_t ino;
	unsigned lane;		/* of its iod connections (client.h) */
	bool has_lane;		/* lane taken: given back when freed */
	int flags;		/* O_ACCMODE and O_APPEND bits of open */
	struct clf_layout *layout;	/* owned */
	int64_t view_disp;
	CLF_Datatype view_type;	/* owned reference */
	struct clf_viewmap *view;	/* owned: view x every subfile; NULL
					   until an access needs it */
	int64_t pos;		/* current view offset */
	int64_t size;		/* file size when last asked (file_size.c) */
	int64_t dirty_end;	/* end of our writes beyond size, not yet
				   reported to metad (done at close) */
	uint32_t *handles;	/* layout->nsub view handles on the iods */
	uint64_t *handle_gen;	/* connection generation of each; 0: none */
	uint8_t *view_key;	/* owned: view_type encoded; NULL: not yet */
	uint32_t view_key_len;
	struct clf_view_slot view_cache[CLF_VIEW_CACHE]; /* earlier views */
	uint64_t view_clock;	/* ticks at each switch of views */
	struct clf_cap cap;	/* from metad, for the iods (file_cap.c) */
	int64_t cap_renew_ms;	/* clf_now_ms() to ask again; 0: none */
	int cache;		/* CLF_FCNTL_SETCACHE (xcache.h); atomic */
	/* Its small writes and reads in the file (xcache.c's mutex). */
	struct clf_xc_runs xc_w, xc_r;
};

/*
 * Make sure iod peer p (locked) holds a capability of f's open rights
 * that lasts: ask metad for one when f has none or it is near its end,
 * hand it over when p's connection has not seen it.  Nothing for a
 * process that holds the secret (the iods check no capability of it) or
 * an iod older than 1.8.
 */
int clf_file_cap_ensure(struct clf_file *f, struct clf_peer *p);

/*
 * An independent access that failed with err goes again when a subfile
 * of f moved between iods (io_retry.c): clf_move_again asks metad for
 * f's layout, takes the new iods and says true; while the move is still
 * copying it waits a little and says true, for a bounded time.
 */
struct clf_move_wait {
	int64_t start_ms;	/* clf_now_ms() at the first failure */
	long pause_ms;		/* before the next try */
};
void clf_move_wait_begin(struct clf_move_wait *w);
bool clf_move_again(struct clf_file *f, struct clf_move_wait *w, int err);
/* Whether a collective access of f that failed with err met a move:
 * -ESTALE or -EHOSTDOWN, or -ETIMEDOUT (another participant was refused)
 * where metad's layout of f changed meanwhile. */
bool clf_move_coll_again(struct clf_file *f, int err);

/*
 * Encoders of metad request bodies with clf_encode()'s signature (msg is
 * the matching struct clf_proto_*_req), and one metad call with such a
 * body: the reply payload (caller frees) and its length.
 */
int clf_enc_lookup(struct wire_writer *w, const void *m);
int clf_enc_create(struct wire_writer *w, const void *m);
int clf_enc_mkdir(struct wire_writer *w, const void *m);
int clf_enc_path(struct wire_writer *w, const void *m);
int clf_enc_rename(struct wire_writer *w, const void *m);
int clf_enc_readdir(struct wire_writer *w, const void *m);
int clf_enc_ino(struct wire_writer *w, const void *m);
int clf_enc_setattr(struct wire_writer *w, const void *m);
int clf_enc_update_size(struct wire_writer *w, const void *m);
int clf_enc_set_layout(struct wire_writer *w, const void *m);
int clf_enc_empty(struct wire_writer *w, const void *m);
int clf_meta_call(uint16_t op, clf_encode_fn enc, const void *msg,
		  void **reply, uint32_t *rlen);

/*
 * clf_meta_call with several metads (client_route.c): to the metad of
 * the inode or directory the request names, paths walked to the
 * directory of their last name first, and a LOOKUP or CREATE of an
 * entry whose inode lives elsewhere answered from that inode's metad.
 */
int clf_meta_route(struct clf_client *cl, uint16_t op, clf_encode_fn enc,
		   const void *msg, void **reply, uint32_t *rlen);

/*
 * metad calls.  Layouts come back decoded into types (caller frees with
 * clf_layout_free); a NULL layout pointer means "not wanted", and *layout
 * is NULL when the inode has none (a directory).
 */
int clf_meta_lookup(const char *rel, struct clf_proto_attr *attr,
		    struct clf_layout **layout);
/* The same for open(2) flags (-1: no open): metad checks the access. */
int clf_meta_lookup_open(const char *rel, int flags,
			 struct clf_proto_attr *attr, struct clf_layout **layout);
/* want: the new file's layout; NULL: the configured round robin.
 * plain: only where the directory has no default layout, else -EAGAIN
 * (CLF_PROTO_CREATE_PLAIN; ignored by a metad older than 1.21, see
 * clf_meta_knows_plain). */
int clf_meta_create(const char *rel, mode_t mode, bool excl, bool plain,
		    const struct clf_proto_layout *want,
		    struct clf_proto_attr *attr, struct clf_layout **layout);
/* Whether metad takes CLF_PROTO_CREATE_PLAIN (protocol 1.21). */
bool clf_meta_knows_plain(void);
int clf_meta_getattr(uint64_t ino, struct clf_proto_attr *attr);
int clf_meta_truncate(uint64_t ino, int64_t size, struct clf_proto_attr *attr);
int clf_meta_update_size(uint64_t ino, int64_t end,
			 struct clf_proto_attr *attr);
int clf_meta_set_layout(uint64_t ino, const struct clf_proto_layout *layout,
			struct clf_layout **out);

/*
 * The open file behind fd, locked and referenced; clf_file_put() unlocks
 * and drops the reference.  A file that another thread closes meanwhile
 * is never freed under a caller: its get fails with -EBADF.
 */
int clf_file_get(int fd, struct clf_file **out);
void clf_file_put(struct clf_file *f);

/* Close every file with close_fd (CLF_close) and free the table
 * (CLF_finalize). */
void clf_files_close_all(int (*close_fd)(int fd));

/* Take fd out of the table (f from clf_file_get; CLF_close). */
void clf_file_detach(int fd, struct clf_file *f);

/* A new descriptor for f (its first reference is the table's). */
int clf_file_install(struct clf_file *f);

/* Free f and what it owns (no reference left, or never installed). */
void clf_file_free(struct clf_file *f);

/* Install layout (taken) in f and map f's view onto it again. */
int clf_file_set_layout(struct clf_file *f, struct clf_layout *layout);

/*
 * The size of file ino with layout l, from its subfiles and metad
 * (file_size.c): the largest end the subfiles map to and, unless
 * meta_size is NULL, metad's size, which is also stored there.  One
 * round trip to every iod of the file, in parallel with one to metad.
 */
int clf_layout_size(const struct clf_layout *l, uint64_t ino,
		    int64_t *meta_size, int64_t *size);

/*
 * The same without waiting for an iod that is down (client.h, Grace),
 * for CLF_stat, which then answers with metad's size (clf.h): an iod
 * out of reach must not make it take recovery_grace_s per file.
 */
int clf_layout_size_now(const struct clf_layout *l, uint64_t ino,
			int64_t *size);

/* The same for an open (locked) file, into f->size. */
int clf_file_size(struct clf_file *f);

/* CLF_open without staging in (stage_in.c defines CLF_open: staging in
 * from the backing directory, then this). */
int clf_file_open_path(const char *path, int flags, mode_t mode);

/*
 * Where an O_APPEND write of n view bytes goes (file_append.c): the end
 * of file, with the range reserved at metad so that no other client's
 * append overlaps it.  *lo is the view offset to write at.  Two round
 * trips: the size from the iods, the range from metad.
 */
int clf_file_append_at(struct clf_file *f, int64_t n, int64_t *lo);

/* Report our writes beyond the end of file to metad. */
int clf_file_flush_size(struct clf_file *f);

/*
 * Move n view bytes at view offset lo between the iods and buf (laid out
 * by memtype, NULL: contiguous).  Reads stop at the end of file.
 * participants > 0 makes it part of collective operation tag.
 * Returns the bytes moved or a negative errno.
 */
int64_t clf_file_io(struct clf_file *f, int64_t lo, int64_t n, void *buf,
		    CLF_Datatype memtype, bool write, uint64_t tag,
		    uint32_t participants);

/* clf_file_io's checks of a range and of the open mode: 0 or -errno. */
int clf_file_io_check(struct clf_file *f, int64_t lo, int64_t n, bool write);

/* How many of view bytes [lo, lo + n) a read finds below the end of
 * file (asking the subfiles when they pass what f knows), or -errno. */
int64_t clf_file_readable(struct clf_file *f, int64_t lo, int64_t n);

/*
 * clf_file_io without checks or the read's stop at the end of file (the
 * caller did both), for collective accesses planned per subfile
 * (io_coll.c): per_sub, when not NULL, gives each subfile's
 * participants; this access joins the merge only where clf_coll_merges
 * says it does, and sends its other shares as independent requests.
 * cacheable: a small independent access may go through the client
 * cache (xcache.h); the independent shares of a collective call do not,
 * since processes that interleave small shares would pass the extent
 * locks back and forth at every call.
 */
int64_t clf_file_io_v(struct clf_file *f, int64_t lo, int64_t n, void *buf,
		      CLF_Datatype memtype, bool write, uint64_t tag,
		      uint32_t participants, const uint32_t *per_sub,
		      bool cacheable);

/*
 * Does view range [lo, hi) of view meet subfile j in two runs or more
 * (1), so that it gains from the iod merging it with the other
 * participants' pieces, or in at most one (0)?  Or -errno.  In io.c,
 * which asks it per access, below io_coll.c, which plans with it.
 */
int clf_coll_merges(const struct clf_viewmap *view, int j, int64_t lo,
		    int64_t hi);

/*
 * An independent access of view bytes [lo, hi) as plain subfile ranges
 * (io_small.c), when it is small: 0 with *done, or with !*done when it
 * is not small (take the view path); or a negative errno.  Through the
 * client cache only where cacheable (clf_file_io_v).
 */
int clf_small_io(struct clf_file *f, int64_t lo, int64_t hi, int64_t base,
		 void *buf, const struct clf_memlayout *mem, bool write,
		 bool cacheable, bool *done);

/* Release the current view's registrations at the iods. */
void clf_file_release_views(struct clf_file *f);

/* Release the registrations handles/gen (layout l's subfiles). */
void clf_views_release(const struct clf_layout *l, uint32_t *handles,
		       uint64_t *gen);

/*
 * Views kept per file (view_cache.c).  clf_view_key: type encoded, as
 * the iods get it, in a new buffer (caller frees).  switch: make the
 * view (disp, type; borrowed) current, taking it back from the cache
 * with its registrations when an equal one is there, parking the
 * current one.  clear: release and forget every parked view (close, a
 * new layout).
 */
int clf_view_key(CLF_Datatype type, uint8_t **key, uint32_t *len);
int clf_view_cache_switch(struct clf_file *f, int64_t disp,
			  CLF_Datatype type);
void clf_view_cache_clear(struct clf_file *f);

/*
 * A descriptor on inode ino, whose size the caller got from metad, with
 * layout (taken, also on failure), for callers that know an inode rather
 * than a path (the mount client, clf_ll.h).  flags: O_ACCMODE and
 * O_APPEND bits; the view is the whole file as bytes.  Returns the
 * descriptor or a negative errno.
 */
int clf_file_open_layout(uint64_t ino, int64_t size, int flags,
			 struct clf_layout *layout);

/* Replace the layout of the open (locked) file f by layout (taken, also
 * on failure), recomputing the view: after the layout changed through
 * another descriptor while the file was empty. */
int clf_file_replace_layout(struct clf_file *f, struct clf_layout *layout);

#endif /* CLF_CLIENT_I_H */
