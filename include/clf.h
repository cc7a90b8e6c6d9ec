/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clf.h -- the public interface of clf, a parallel file system whose files
 * have a physical layout declared with datatypes.
 *
 * Error convention, for every function below that returns int or int64_t:
 * 0 (or a non-negative count or value) on success, a negative errno value
 * on failure.  Constructors that return a CLF_Datatype return NULL and set
 * errno instead.  Outputs are written only on success.  After any failure
 * CLF_Last_error() returns a sentence saying what failed and why, for the
 * calling thread.
 *
 * Thread safety: datatypes and mappings are immutable once built and may be
 * shared between threads; their reference counts are atomic.
 */
#ifndef CLF_H
#define CLF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Datatypes (PITFALLS)                                                */
/* ------------------------------------------------------------------ */

/*
 * A datatype selects a set of byte offsets inside one extent [0, extent).
 * Used as a view or a subfile pattern with a displacement disp, it repeats
 * with period extent: file byte disp + k*extent + x (k >= 0, 0 <= x <
 * extent) is selected iff x is selected by the type.  Its linear offset is
 * k*size + (the rank of x among the type's selected bytes), where size is
 * the number of bytes the type selects per extent.
 *
 * Datatypes are opaque and reference counted; every constructor returns a
 * new reference that the caller releases with CLF_Type_free().  Arguments
 * passed to constructors are borrowed.
 */
typedef struct clf_type *CLF_Datatype;

/* Selects byte 0; extent 1.  Predefined, never freed. */
extern CLF_Datatype CLF_BYTE;

/*
 * CLF_Type_vector - count blocks of oldtype
 *
 * Block i (0 <= i < count) covers bytes [left + i*stride, right + i*stride]
 * inclusive.  Inside each block, oldtype is tiled from the block's start
 * with period extent(oldtype), so with CLF_BYTE the whole block is
 * selected.  Extent = count * stride.
 *
 * Requires 0 <= left <= right < stride, count >= 1, and (right - left + 1)
 * a multiple of extent(oldtype).  Returns NULL with errno EINVAL on bad
 * arguments, EOVERFLOW when the extent or size overflows int64_t, ENOMEM.
 */
CLF_Datatype CLF_Type_vector(int64_t left, int64_t right, int64_t stride,
			     int64_t count, CLF_Datatype oldtype);

/*
 * CLF_Type_struct - union of count non-overlapping types
 *
 * Each member is placed once at offset 0 (not tiled); extent = the largest
 * member extent.  Regularity among many members is found as for a block
 * list (below): members that repeat at a constant stride become vectors.
 * Returns NULL with errno EINVAL when count < 1, a member is NULL or two
 * members select a common byte; ENOMEM.
 */
CLF_Datatype CLF_Type_struct(int count, const CLF_Datatype *types);

/*
 * Block lists - a type from a long list of blocks, found compact
 *
 * CLF_Blocklist_new() starts an empty list.  CLF_Blocklist_add() appends
 * a block of count copies of oldtype, tiled from byte disp (>= 0) with
 * period extent(oldtype) -- with CLF_BYTE, count bytes at disp.
 * CLF_Type_blocklist() turns the list into a type of the given extent and
 * frees the list (*list = NULL), whether it succeeds or not.
 *
 * The list is read in one pass: runs of equal blocks (or groups of up to 8
 * blocks) at a constant stride become vectors, runs of equal vectors at a
 * constant stride vectors of vectors, and so on, so an indexed list of
 * millions of blocks that is really a nested regular pattern becomes the
 * few nested vectors it is.  Blocks given in increasing order cost O(1)
 * each and memory proportional to the result; blocks out of order are
 * sorted once, O(n log n).  Blocks must not select a common byte.
 *
 * CLF_Blocklist_new returns NULL with errno ENOMEM.  CLF_Blocklist_add
 * returns 0, -EINVAL (NULL list or oldtype, disp < 0, count < 0),
 * -EOVERFLOW, -ENOMEM.  CLF_Type_blocklist returns NULL with errno EINVAL
 * when the list selects no byte, blocks overlap or a block ends past
 * extent; E2BIG when even the compact description is too large.
 */
typedef struct clf_blocklist *CLF_Blocklist;

CLF_Blocklist CLF_Blocklist_new(void);
int CLF_Blocklist_add(CLF_Blocklist list, int64_t disp, int64_t count,
		      CLF_Datatype oldtype);
CLF_Datatype CLF_Type_blocklist(CLF_Blocklist *list, int64_t extent);
/* Drop a list without making a type; *list = NULL.  NULL is fine. */
void CLF_Blocklist_free(CLF_Blocklist *list);

/*
 * CLF_Type_pitfalls - nparts shifted vectors at once
 *
 * types[j] = CLF_Type_vector(left + j*shift, right + j*shift, stride, count,
 * oldtype) for 0 <= j < nparts: "cyclic(k) over p subfiles" is
 * CLF_Type_pitfalls(0, k-1, p*k, 1, k, p, CLF_BYTE, types).
 * Returns 0, or a negative errno with nothing written to types.
 */
int CLF_Type_pitfalls(int64_t left, int64_t right, int64_t stride,
		      int64_t count, int64_t shift, int nparts,
		      CLF_Datatype oldtype, CLF_Datatype *types);

/* Release a reference and set *type = NULL.  NULL and *type == NULL ok. */
void CLF_Type_free(CLF_Datatype *type);

/* Take another reference; returns type. */
CLF_Datatype CLF_Type_dup(CLF_Datatype type);

/* Bytes selected per extent, or -EINVAL for NULL. */
int64_t CLF_Type_size(CLF_Datatype type);

/* The period of the type, or -EINVAL for NULL. */
int64_t CLF_Type_extent(CLF_Datatype type);

/*
 * CLF_Type_map - linear offset of file byte file_off under (type, disp)
 *
 * Returns 0 and *linear, -ENOENT when the byte is not selected (including
 * file_off < disp), -EINVAL for a NULL type or negative disp.  Takes time
 * proportional to the depth of the type's description, whatever file_off.
 */
int CLF_Type_map(CLF_Datatype type, int64_t disp, int64_t file_off,
		 int64_t *linear);

/*
 * CLF_Type_unmap - inverse of CLF_Type_map
 *
 * Returns 0 and *file_off, -EINVAL for a negative linear offset or disp,
 * -EOVERFLOW when the file offset does not fit in int64_t.
 */
int CLF_Type_unmap(CLF_Datatype type, int64_t disp, int64_t linear,
		   int64_t *file_off);

/*
 * CLF_Pattern_check - the rules for a physical partitioning pattern
 *
 * The pattern's period is the largest extent among the n types; each type
 * is taken as resized to [0, period): its bytes once per period, where
 * they are (a type of extent 4 in a period of 16 is not tiled 4 times).
 * Returns 0 iff no two types select a common byte and together they
 * select every byte of [0, period).  Otherwise -EINVAL, and
 * CLF_Last_error() names the first offending byte and the subfiles
 * involved ("subfile 0 and subfile 1 overlap at byte 4", "byte 8 is in no
 * subfile (subfiles cover 8 of 16 bytes per period, the largest extent,
 * subfile 1's)").  CLF_FCNTL_SUBFILES stores the types resized to the
 * period: CLF_FCNTL_GETLAYOUT gives them back with that extent.
 */
int CLF_Pattern_check(int n, const CLF_Datatype *types);

/*
 * Compact, versioned binary encoding of a type, for the wire protocol.
 *
 * CLF_Type_encode writes at most buflen bytes and returns the length of the
 * encoding, or -ENOSPC when buf is too small (call with buf == NULL and
 * buflen == 0 to learn the length).  CLF_Type_decode checks every field
 * (version, counts, lengths, nesting depth, overlap, overflow) and returns
 * 0 with a new reference in *out, or -EINVAL/-EPROTO for a malformed
 * encoding, -E2BIG when it exceeds the limits below.
 */
#define CLF_TYPE_ENCODING_VERSION 1
#define CLF_TYPE_MAX_DEPTH 16	  /* nested FALLS levels */
/*
 * FALLS in one encoded type: a partition of a few hundred thousand
 * irregular pieces per subfile, with no compact description, is still a
 * layout.  The bound keeps a view registration (a view type and a subfile
 * type, each at most 16 + 37 bytes per FALLS, 19.4 MB) within one message
 * (clf_proto.h).
 */
#define CLF_TYPE_MAX_NODES (1 << 19)
int64_t CLF_Type_encode(CLF_Datatype type, void *buf, size_t buflen);
int CLF_Type_decode(const void *buf, size_t len, CLF_Datatype *out);

/* ------------------------------------------------------------------ */
/* Mappings between a view and a subfile                               */
/* ------------------------------------------------------------------ */

typedef struct clf_mapping CLF_Mapping;

/*
 * CLF_Mapping_create - intersect a view with one subfile pattern
 *
 * Works out which view bytes fall into the subfile and where, for any two
 * legal types and displacements: none is refused for its size or shape.
 * The engine picks one of two forms, from the types alone (a client and
 * an iod given the same pair build the same form), with the same runs:
 *
 *   periodic: when the least common multiple P of the extents fits in
 *     int64_t and intersecting over P is estimated cheap: (P / the larger
 *     extent) x (FALLS of both descriptions) at most 2^14 -- or the view
 *     is the subfile's own pattern at the same phase.  Built once (a few
 *     ms at most); a run then costs O(1), a few ns, from a table of runs
 *     (of one period, or of the shortest part of it that the mapping
 *     repeats with, when it has at most 4096 runs, 16384 for such a
 *     part), else O(depth); a
 *     view that falls on the subfile contiguously is one run for any
 *     range (CLF_Mapping_is_contiguous).
 *   tiled: otherwise (incommensurate extents: an MPI filetype of extent
 *     4194272 over a 131072-byte stripe cycle, a prime or 2^20 + 1
 *     extent; large irregular descriptions, whose intersection would be
 *     as large as they are).  No common period is formed; set-up costs
 *     O(size of the two descriptions).  A walk cuts the view's pieces (its leaf
 *     blocks, tile after tile) in the accessed range against the
 *     subfile's and jumps over view pieces outside the subfile: O(depth)
 *     per view piece that meets the subfile and per subfile piece
 *     crossed, never a scan from the type's start, never a cost per byte.
 *
 * A type that selects all of its extent is mapped as CLF_BYTE.  Returns 0
 * and a new mapping in *out (the caller frees it), -EINVAL for bad
 * arguments, -ENOMEM.
 */
int CLF_Mapping_create(CLF_Datatype view, int64_t view_disp,
		       CLF_Datatype subfile, int64_t subfile_disp,
		       CLF_Mapping **out);

/* Free a mapping; NULL ok. */
void CLF_Mapping_free(CLF_Mapping *m);

/*
 * Called for each run: len bytes at view linear offset view_off lie at
 * subfile linear offset subfile_off.  A non-zero return stops the walk and
 * is returned by CLF_Mapping_foreach.
 */
typedef int (*CLF_Segment_fn)(int64_t view_off, int64_t subfile_off,
			      int64_t len, void *arg);

/*
 * CLF_Mapping_foreach - the runs of view bytes [view_lo, view_hi)
 *
 * Calls fn, in increasing view order, for the view bytes of the range that
 * fall into the subfile, as maximal runs: a run goes on while both the view
 * offset and the subfile offset advance by one.  A view that falls on the
 * subfile contiguously yields one run for any range.  Each run costs time
 * proportional to the depth of the descriptions, not to its length (a
 * tiled mapping: each view piece of the range that meets the subfile).
 * Returns 0, fn's non-zero value, or -EINVAL (view_lo < 0, view_hi <
 * view_lo).
 */
int CLF_Mapping_foreach(const CLF_Mapping *m, int64_t view_lo,
			int64_t view_hi, CLF_Segment_fn fn, void *arg);

/*
 * CLF_Mapping_foreach_packed - the same bytes, in the same order, with
 * runs joined whenever the subfile offset continues (the view offset
 * need not): what an iod needs, whose data is the subfile's share of the
 * view bytes packed in view order, so that such runs are contiguous in
 * the data and in the subfile.  view_off is the view offset of a run's
 * first byte.  A contiguous view over a subfile of 1-byte stripes gives
 * one run for the whole range instead of one per byte.  Returns as
 * CLF_Mapping_foreach.
 */
int CLF_Mapping_foreach_packed(const CLF_Mapping *m, int64_t view_lo,
			       int64_t view_hi, CLF_Segment_fn fn, void *arg);

/*
 * CLF_Mapping_count - how many view bytes of [view_lo, view_hi) fall into
 * the subfile (the sum of the lengths CLF_Mapping_foreach would report).
 * Periodic mappings: in time proportional to the depth of the
 * descriptions.  Tiled ones: O(depth) per piece of the range of whichever
 * of the two patterns has fewer pieces per byte (two seeks per stripe of
 * a round-robin subfile, however fine the view).  Returns the count or
 * -EINVAL.
 */
int64_t CLF_Mapping_count(const CLF_Mapping *m, int64_t view_lo,
			  int64_t view_hi);

/*
 * How many bytes of the common period fall into the subfile, 0 when the
 * view never meets it (a tiled mapping, which has no common period, gives
 * the view's size when the view may meet the subfile); and whether the
 * whole view falls on the subfile as one run (1) or not (0; always 0 for
 * a tiled mapping, whose runs are still maximal).
 */
int64_t CLF_Mapping_bytes_per_period(const CLF_Mapping *m);
int CLF_Mapping_is_contiguous(const CLF_Mapping *m);


/* ------------------------------------------------------------------ */
/* The file system: native client API                                 */
/* ------------------------------------------------------------------ */

/*
 * Every call below returns 0 (or a non-negative count, descriptor or
 * offset) on success and a NEGATIVE ERRNO on failure -- never -1 with
 * errno -- with CLF_Last_error() saying what failed and on which daemon:
 *   -EHOSTDOWN   a daemon cannot be reached ("iod 2 (127.0.0.1:7003) is
 *                down: Connection refused"); other files keep working and
 *                the next call reconnects
 *   -ETIMEDOUT   a daemon did not answer within the configured timeout
 *   -ENOSPC      an iod's disk is full
 *
 * Concurrent access: a write is not atomic with respect to a read (or
 * another write) by another process: a range that spans several iods is
 * written on each independently, so a concurrent read may return part of
 * the old bytes and part of the new ones (as on NFS, unlike POSIX on one
 * host).  For atomic accesses take byte-range locks over the range
 * (CLF_FCNTL_SETLKW: a write lock to write, a read lock to read;
 * docs/locks.md) or, in MPI-IO, MPI_File_set_atomicity(fh, 1).
 *
 * Paths are absolute in the clf namespace ("/dir/file"); "." and ".."
 * are resolved by the client.  A descriptor belongs to one process and
 * may be used by one thread at a time.
 *
 * File size and visibility: a write is visible, bytes and size, to every
 * read, CLF_stat() and CLF_lseek(SEEK_END) of any client that starts
 * after the write returned, with no sync in between (as on Lustre, GPFS
 * and PVFS).  The size is derived from the subfiles where it is needed:
 * a read that reaches past the end this descriptor knows, SEEK_END,
 * O_APPEND, O_TRUNC and stat ask every iod of the file how long its
 * subfiles are (one round trip, all iods in parallel) and map each end
 * back through the layout; writes themselves cost no size report.  metad
 * keeps the size that truncations set and that CLF_close() and
 * CLF_sync() report, which directory listings show.  While an iod of
 * the file is out of reach, CLF_stat() still answers, with the size as
 * reported to metad (writes count from their writer's close or sync);
 * reads and SEEK_END fail with -EHOSTDOWN or -ETIMEDOUT.
 *
 * Client cache (client_cache in clf.conf, off by default for the native
 * API, on by default for MPI-IO files (the hint clf_client_cache=false
 * turns it off); clf.conf(5)):
 * small accesses are kept at the client under extent locks the iods
 * grant, and the rule above stands -- any conflicting access of another
 * process has the iod call the lock back, and this client sends the
 * bytes first.  What changes is what a process that dies loses: written
 * bytes it kept back (those not sent yet by a revocation, CLF_sync(),
 * CLF_close(), the cache's bound or a second's age) are lost with it,
 * as a process's stdio buffers are.  No other process saw them: they
 * were sent before any other process could read them, or never.
 * CLF_fcntl(fd, CLF_FCNTL_SETCACHE, &on) turns it on (1) or off (0) for
 * one descriptor, whatever clf.conf says (MPI-IO: the clf_client_cache
 * hint); on with client_cache at 0, the process keeps at most
 * CLF_CLIENT_CACHE_DEFAULT bytes.  Turning it off sends the kept bytes
 * and releases the descriptor's locks first.  The cache's buffers, about
 * its bound and 2 MiB more at most, stay with the process after its
 * files close, for the next open, until CLF_finalize().
 *
 * O_APPEND: each write of a descriptor opened with O_APPEND lands at the
 * end of file, and appends never overlap, whatever process, host or
 * mount they come from (as on Lustre and GPFS): many writers may append
 * records to one log and each record is kept once, whole.  The writer
 * derives the end from the subfiles and metad reserves the range
 * [end, end + bytes) for it (the APPEND request of protocol 1.5,
 * clf_proto.h "Appends"); the bytes then go to the iods.  Cost: two
 * round trips before each append's data -- one to the file's iods, in
 * parallel, and one to metad -- which is more than a plain write (about
 * 2x for small records on loopback); metad writes nothing to disk for
 * it.  Through a view with holes the range is asked for exactly where
 * the write would start, and asked again when another append came
 * first.  Limits: an append is not ordered against a concurrent plain
 * write that extends the file (that write may overlap it; appends among
 * themselves never do); a writer that dies after its reservation leaves
 * a hole of that size, read as zeros, under the next append; a reserved
 * write still under way while metad restarts may be overlapped by an
 * append reserved after the restart.  O_APPEND writes fail with
 * -EOPNOTSUPP against a metad older than protocol 1.5 rather than risk
 * overwriting another client's records.
 */

/*
 * Recovery: a restart of metad or of an iod (kill -9, a crash, a
 * service restart) does not fail the calls that run meanwhile.  When a
 * connection to a daemon breaks or is refused (-EHOSTDOWN), libclf --
 * and so the mount and the ROMIO driver, which use it -- tries again on
 * a fresh connection, pausing 20 ms, 50 ms, ... at most 1 s between
 * tries, for up to recovery_grace_s seconds (clf.conf, default 30; 0:
 * fail at once) from the call's start, then fails with -EHOSTDOWN and a
 * message naming the daemon and saying it gave up after the grace.  A
 * timeout (a daemon that hangs rather than restarts) is not waited for
 * beyond timeout_ms.  Only requests that are safe to send twice are sent
 * again after their connection broke with no reply:
 *   - reads (SUB_READ, VIEW_READ, SUB_SIZES, SUB_SIZES_MANY, LOOKUP,
 *     GETATTR, READDIR, READDIRPLUS, STATFS, GET_LAYOUT, READLINK): they
 *     change nothing;
 *   - writes of data (SUB_WRITE, VIEW_WRITE): they put the same bytes at
 *     the same offsets, so a repeat leaves what one write leaves, even
 *     when part of the first was done (a write is not ordered against
 *     other clients' writes of the same bytes anyway, clf.h "Torn
 *     reads"; with a byte-range lock, see Locks below);
 *   - UPDATE_SIZE (the size becomes at least an end) and SYNC;
 *   - metad mutations (create, mkdir, rename, unlink, rmdir, setattr,
 *     layouts, links, nodes): by request identity, answered by metad's
 *     reply cache with their first outcome ("Lost replies", below), now
 *     for the longer of 3 x timeout_ms and recovery_grace_s;
 *   - view registrations are not replayed but made again: a restarted
 *     iod knows none, and each access registers its view at a connection
 *     that does not hold it yet, before its data go;
 *   - collective accesses (CLF_ncwrite_at_all, _read_at_all): each
 *     process sends its request again only to the iods whose part of the
 *     operation did not end for it; the others lost the same iod and do
 *     the same, so the restarted iod sees every participant again.  If
 *     the iod died after answering some participants and not others, it
 *     serves each late one alone once it is back (it notes every
 *     operation it runs where its successor finds it);
 *   - O_APPEND: the range is never replayed: metad keeps reservations in
 *     memory and a restarted one lost them, so the writer measures the
 *     end again and reserves anew (nothing was written into the lost
 *     range yet); see O_APPEND above for the overlap left possible;
 *   - byte-range locks are not replayed (see Locks at CLF_fcntl).
 * The mount therefore returns no EIO for a restart shorter than the
 * grace; its calls block meanwhile.
 */

/*
 * CLF_init - connect this process to a clf instance
 *
 * config_path NULL: $CLF_CONFIG, then the data directory's clf.conf, then
 * the built-in local default (one metad and four iods on 127.0.0.1).
 * Connections are opened lazily, at first use.  Calling it again after
 * CLF_finalize() is allowed.
 *
 * config_path "clf://HOST[:PORT]" (PORT 7000 by default; anything after
 * it ignored): the instance whose metad is at HOST:PORT, with no
 * configuration file.  CLF_init asks metad for the iods (one round
 * trip, so a wrong address or secret fails here); the secret is read
 * from the file $CLF_SECRET_FILE names (mode 0600), else the process
 * authenticates with MUNGE (docs/security.md, "Remote users").  Every
 * path call then also takes "clf://HOST:PORT/a/b" for /a/b; a clf://
 * name of another instance fails with -EXDEV (one instance a process).
 */
int CLF_init(const char *config_path);
int CLF_finalize(void);

/*
 * CLF_open - open (or create, with O_CREAT and a mode_t argument) a file
 *
 * flags: O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND.
 * A new file gets the default round-robin layout of the configuration;
 * CLF_FCNTL_SUBFILES replaces it while the file is empty.  The view is
 * the whole file as bytes.  Returns a descriptor >= 0.  CLF_create
 * (below) creates a file with a layout of its own.
 */
int CLF_open(const char *path, int flags, ...);
int CLF_close(int fd);

/* Bytes the client cache keeps when only CLF_FCNTL_SETCACHE turned it on. */
#define CLF_CLIENT_CACHE_DEFAULT (8 << 20)

/* CLF_fcntl commands. */
#define CLF_FCNTL_SUBFILES 1	/* const struct clf_subfiles * */
#define CLF_FCNTL_SETVIEW 2	/* const struct clf_view * */
#define CLF_FCNTL_GETLAYOUT 3	/* struct clf_layout_info * (out) */
#define CLF_FCNTL_SETLK 4	/* struct flock *: lock, or fail at once */
#define CLF_FCNTL_SETLKW 5	/* struct flock *: lock, waiting */
#define CLF_FCNTL_GETLK 6	/* struct flock * (in and out) */
#define CLF_FCNTL_SETCACHE 7	/* const int *: client cache for this file */
#define CLF_FCNTL_GETCACHE 8	/* int * (out): whether it is on */

/*
 * Byte-range locks (CLF_FCNTL_SETLK, _SETLKW, _GETLK): POSIX record locks
 * (fcntl F_SETLK, F_SETLKW, F_GETLK) kept by metad, so that they exclude
 * processes on any host and through any path: the native API, the mount
 * and MPI-IO (the ROMIO driver's atomic mode and data sieving).
 *
 * The struct flock is the system's (<fcntl.h>): l_type F_RDLCK, F_WRLCK
 * or F_UNLCK; l_whence SEEK_SET, SEEK_CUR (the descriptor's position,
 * mapped through its view to a file offset) or SEEK_END (the file size);
 * l_start; l_len in bytes, 0 for "to the end of the file, however it
 * grows", negative for the bytes before l_start.  Offsets are file
 * bytes, whatever the view.  GETLK fills l_type F_UNLCK when the lock
 * could be granted, else the first conflicting lock with l_whence
 * SEEK_SET and its holder's l_pid (a pid on the holder's host).
 *
 * Locks belong to the process: its descriptors share them, and closing
 * any descriptor of a file releases all the process's locks on that
 * file.  Read locks share, write locks exclude other processes; a new
 * lock replaces, splits or merges the process's own.  A read lock needs
 * a descriptor open for reading, a write lock one open for writing
 * (-EBADF).  SETLK fails with -EAGAIN when another process's lock is in
 * the way; SETLKW waits until it is not, or fails with -EDEADLK when
 * waiting would close a cycle of processes waiting for each other.
 * Bad types, whence or ranges past the largest offset give -EINVAL;
 * -ENOLCK when metad cannot take more (or is too old for locks).
 *
 * Locks are advisory (reads and writes ignore them) and not durable:
 * they end with the process (also when it is killed) and with metad; a
 * restarted metad knows none.  They are held on a connection to metad
 * of their own: a failure of that connection (metad restarted, or
 * unreachable past the timeout) drops them too.  They are not taken
 * again behind the holder's back -- another process may have taken one
 * in between and changed what it guarded -- and not lost silently
 * either: the next lock call (SETLK, SETLKW, GETLK, an unlock) of a
 * process that held locks on the old connection fails once with
 * -ENOLCK, "... its locks on N file(s) are lost ...; take them again",
 * and the process holds none from then on.  Closing a descriptor
 * (which releases the file's locks anyway) reports nothing.
 */

/*
 * The physical layout: disp bytes at the start of the file (stored in
 * one extra subfile), then a partitioning pattern of count types, one per
 * subfile (CLF_Pattern_check).  Subfile j is placed on iod
 * (first_iod + j) % number of iods.  Only on an empty file.
 */
struct clf_subfiles {
	int64_t disp;
	int count;
	const CLF_Datatype *types;	/* borrowed */
};

/*
 * CLF_create - open a file, creating it with a layout of its own
 *
 * As CLF_open(path, flags | O_CREAT, mode), except that a file this call
 * creates gets layout (NULL: as CLF_open gives it) in metad's create
 * itself: no process ever opens it with another layout, which
 * CLF_FCNTL_SUBFILES after CLF_open cannot promise (a process that
 * opens the file in between maps its writes with the old layout).  A
 * file that exists keeps its layout (with O_EXCL: -EEXIST).  *created
 * (NULL: not wanted) says whether this call made the file.  Returns a
 * descriptor >= 0.
 */
struct clf_stripes {
	int64_t unit;			/* bytes per stripe; 0: configured */
	int count;			/* subfiles; 0: configured */
	int first_iod;			/* iod of the first stripe; -1: configured */
};
struct clf_create_layout {
	const struct clf_subfiles *subfiles; /* borrowed; NULL: stripes */
	struct clf_stripes stripes;	/* round robin, when no subfiles */
};
int CLF_create(const char *path, int flags, mode_t mode,
	       const struct clf_create_layout *layout, int *created);

/*
 * A view: from file offset disp on, the bytes type selects, repeated.
 * Setting one maps it onto every subfile once (CLF_Mapping_create) and
 * registers each projection with its iod once; the position is reset to
 * 0.  Views may overlap other processes' views.
 */
struct clf_view {
	int64_t disp;
	CLF_Datatype type;		/* borrowed; the file keeps a reference */
};

/* What CLF_FCNTL_GETLAYOUT fills in; release with CLF_Layout_release(). */
struct clf_layout_info {
	int64_t disp;
	int head_iod;			/* iod of the bytes before disp */
	int count;			/* subfiles */
	CLF_Datatype *types;		/* count new references */
	int *iods;			/* iod index of each subfile */
};

void CLF_Layout_release(struct clf_layout_info *info);

/*
 * Layouts as text, in the syntax of docs/layout-syntax.md
 * ("cyclic:k=4k,p=2", "rr:stripe=64k,count=4,first=1",
 * "vec(0,15,32,2);vec(16,31,32,2)"), for programs that do not want to
 * build datatypes.
 *
 * CLF_Layout_parse fills *out: disp, count, the subfile types (new
 * references, checked with CLF_Pattern_check) and iods[j] = first + j
 * where the text places the subfiles (rr's first=), else -1; head_iod is
 * rr's first= or -1.  Release with CLF_Layout_release.  Returns 0, or
 * -EINVAL with CLF_Last_error() saying where and what ("layout: at column
 * 8: unknown field 'strip' for rr ..."), -E2BIG, -ENOMEM.
 *
 * CLF_Layout_format writes the text of a layout (as CLF_FCNTL_GETLAYOUT
 * fills it: rr with first= when the iods are consecutive, a named pattern
 * when one fits, else one type per subfile) into a new string *out
 * (caller frees), which CLF_Layout_parse reads back as the same types.
 * Returns 0, -EINVAL, -ENOMEM.
 */
int CLF_Layout_parse(const char *text, struct clf_layout_info *out);
int CLF_Layout_format(const struct clf_layout_info *info, char **out);

int CLF_fcntl(int fd, int cmd, ...);

/* Contiguous access at the current view position, which advances. */
ssize_t CLF_read(int fd, void *buf, size_t len);
ssize_t CLF_write(int fd, const void *buf, size_t len);

/*
 * Non-contiguous access: CLF_Type_size(memtype) view bytes, taken from
 * (or put into) memory at the offsets memtype selects in buf.  The _at
 * variants access view offset view_off and leave the position alone; the
 * others use and advance it.  Reads stop at the end of file (a short
 * count; 0 at or past the end).
 */
ssize_t CLF_ncread(int fd, void *buf, CLF_Datatype memtype);
ssize_t CLF_ncwrite(int fd, const void *buf, CLF_Datatype memtype);
ssize_t CLF_ncread_at(int fd, int64_t view_off, void *buf,
		      CLF_Datatype memtype);
ssize_t CLF_ncwrite_at(int fd, int64_t view_off, const void *buf,
		       CLF_Datatype memtype);

/*
 * Collective access (server-directed I/O): the nparticipants processes of
 * one operation each call it once with the same tag (unique per file and
 * operation, e.g. a counter every process keeps alike) and their own view
 * range.  Every process sends its bytes straight to the iods holding them
 * -- no exchange between processes -- and each iod merges the pieces of
 * all participants into large accesses in subfile order.  At most
 * CLF_PROTO_DATA_MAX (64 MiB) view bytes per process and call; a
 * participant with no bytes passes memtype NULL (it must still call, so
 * that the iods know everyone came); a participant missing past the
 * configured timeout fails the operation for all with -ETIMEDOUT.
 */
ssize_t CLF_ncread_at_all(int fd, int64_t view_off, void *buf,
			  CLF_Datatype memtype, uint64_t tag,
			  int nparticipants);
ssize_t CLF_ncwrite_at_all(int fd, int64_t view_off, const void *buf,
			   CLF_Datatype memtype, uint64_t tag,
			   int nparticipants);

/*
 * Planned collective access: processes meet at an iod only where their
 * pieces merge, and send nothing where they have no bytes.
 *
 * CLF_coll_subfiles: the number of subfiles of fd's layout (the length
 * of the arrays below), or a negative errno.
 *
 * CLF_coll_plan: for view bytes [view_off, view_off + n) (write != 0) or
 * as many of them as lie below the end of file (a read), sets merge[j]
 * to 1 where this process's share of subfile j has two runs or more (the
 * iod merges it with the other processes' pieces) and to 0 elsewhere (no
 * bytes, or one run, which goes as an independent request).  Returns the
 * view bytes the access moves (n, or fewer for a read), at most
 * CLF_PROTO_DATA_MAX, or a negative errno.
 *
 * The processes then sum their merge arrays (MPI_Allreduce, MPI_SUM)
 * into participants, and each calls CLF_ncwrite_at_allv /
 * CLF_ncread_at_allv with its own view_off, the n its plan returned
 * (memtype: at least n bytes of memory; NULL: contiguous) and one tag,
 * as for CLF_ncwrite_at_all.  A process with no bytes (n == 0) need not
 * call.  Each returns once its own bytes are moved; -EINVAL when a share
 * merges at a subfile whose participants are 0; a participant that
 * never comes fails that subfile's merge for all with -ETIMEDOUT.
 */
int CLF_coll_subfiles(int fd);
int64_t CLF_coll_plan(int fd, int64_t view_off, int64_t n, int write,
		      uint32_t *merge);
ssize_t CLF_ncread_at_allv(int fd, int64_t view_off, void *buf,
			   CLF_Datatype memtype, int64_t n, uint64_t tag,
			   const uint32_t *participants);
ssize_t CLF_ncwrite_at_allv(int fd, int64_t view_off, const void *buf,
			    CLF_Datatype memtype, int64_t n, uint64_t tag,
			    const uint32_t *participants);

/* Position in view bytes; SEEK_END counts the view bytes below the size. */
int64_t CLF_lseek(int fd, int64_t off, int whence);

/* Make every written byte durable on the iods and report the size. */
int CLF_sync(int fd);

/* Set the file size (bytes of the file, not of the view). */
int CLF_ftruncate(int fd, int64_t len);

int CLF_stat(const char *path, struct stat *st);

/*
 * Unlink (and CLF_rename over an existing file) return once metad has
 * committed the removal of the name, together with a durable queue entry
 * per iod that holds a subfile of the file.  The subfiles are removed
 * right away; an iod that is down, or a metad that dies before it got
 * to them, only delays their removal: metad retries until each iod
 * confirms (at its start, when the iod connects again, and every 1 to
 * 10 s per failing iod), so the space comes back without a cleaner.
 * Until then the iod's free space counts those subfiles; metad's log
 * says when an iod's removals start failing, when they work again, and
 * how many are pending.  Nothing can read them in between: inode
 * numbers are never reused.
 */
/*
 * Lost replies.  Every call that changes the namespace or an inode
 * (CLF_open with O_CREAT or O_TRUNC, CLF_create, CLF_mkdir, CLF_unlink,
 * CLF_rmdir, CLF_rename, CLF_ftruncate, CLF_FCNTL_SUBFILES) sends its
 * metad request with an identity: a random number drawn once per process
 * (again in a forked child) and a sequence number.  When the reply does
 * not come -- metad stopped, crashed after committing, or the connection
 * broke -- libclf sends the request again with the same identity, on a
 * new connection, for up to three times the configured timeout_ms, and
 * while metad is down (restarting) for up to recovery_grace_s if that is
 * longer (pausing 50 ms to 1 s between connection attempts; see
 * "Recovery" above).  metad keeps the outcome of each request that changed
 * something in the same LMDB transaction as the change, so a repeat,
 * even after a metad crash and restart, is answered with the first
 * outcome (0, the file it created) instead of running again (which
 * would say ENOENT for the rename already done, EEXIST for the mkdir).
 *
 * The outcome is still unknown to the caller -- the call returns
 * -ETIMEDOUT or -EHOSTDOWN with a message saying "may or may not have
 * been applied" -- when:
 *   - metad gave no reply for the whole retry period (it stays stopped
 *     or down): the request may be applied later, when metad resumes;
 *   - the process died before the reply came: nothing retries it;
 *   - metad is older than protocol 1.4: requests carry no identity and
 *     are not retried after they were sent;
 *   - the retry comes more than CLF_PROTO_REPLY_KEEP_S (600 s) after
 *     the first try: metad has expired the record and runs the request
 *     again.
 * A retried call that created or changed an inode returns that inode's
 * attributes as they are at the retry, and fails with -ESTALE when
 * another client removed the inode in between.  A call that failed at
 * metad changed nothing and is not recorded: its retry runs again.
 * Byte-range locks are not retried: they belong to their connection,
 * and a lost connection releases them all (see CLF_fcntl).
 */
int CLF_unlink(const char *path);
int CLF_mkdir(const char *path, mode_t mode);
int CLF_rmdir(const char *path);
int CLF_rename(const char *from, const char *to);

/*
 * Symbolic and hard links, as symlink(2), readlink(2) and link(2).
 *
 * The native API names files by clf paths and follows no symbolic link:
 * CLF_stat of a link describes the link itself (as lstat(2)), CLF_open
 * of one fails with -ELOOP (as open(2) with O_NOFOLLOW), and a path
 * through one fails with -ENOTDIR.  The mount (mount.clf) follows them
 * as any local file system does, through the kernel.  A target is kept
 * as given (1..4095 bytes); an absolute one means a path of the machine
 * that follows it, such as one under the mount point.
 *
 * CLF_readlink writes at most size bytes of the target, without a NUL
 * (as readlink(2)), and returns the number written, or -EINVAL when path
 * is no symbolic link.  CLF_link gives the file at existing a second name
 * (-EPERM for a directory); its data stay until its last name is
 * unlinked.  Fifos, sockets and device nodes made through the mount
 * appear here too; CLF_open refuses them (-ENXIO).
 */
int CLF_symlink(const char *target, const char *linkpath);
ssize_t CLF_readlink(const char *path, char *buf, size_t size);
int CLF_link(const char *existing, const char *newpath);

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/*
 * The message of the last failure in the calling thread, e.g.
 * "subfile 1 and subfile 2 overlap at byte 17".  Never NULL; valid until
 * the next clf call in the same thread.
 */
const char *CLF_Last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* CLF_H */
