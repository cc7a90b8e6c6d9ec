// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_native.c -- the native API's side of the MPI-IO cross-path tests:
 * what MPI wrote is read back with CLF_open/CLF_read, what this program
 * wrote with CLF_write is read back through MPI, and the layouts that
 * MPI's subfile_datatypes hint declared are compared, byte by byte, with
 * CLF_FCNTL_GETLAYOUT.  No MPI here: the instance is $CLF_CONFIG.
 *
 *   romio_native check MANIFEST SALT   every file of MANIFEST (pattern.h)
 *                                      has its size and the pattern of
 *                                      SALT, read with CLF_read in chunks
 *                                      of odd sizes; every layout record
 *                                      matches CLF_FCNTL_GETLAYOUT:
 *                                      CLF_Type_map over two extents of
 *                                      each subfile type
 *   romio_native fill MANIFEST SALT    rewrite every file of MANIFEST
 *                                      (O_TRUNC: the layout stays) with
 *                                      the pattern of SALT, its chunks in
 *                                      reverse order (CLF_lseek, CLF_write)
 *   romio_native rm PATH...            CLF_unlink each PATH; a missing one
 *                                      is no error
 *   romio_native lock PATH OFF LEN MS  write-lock LEN bytes at OFF of PATH
 *                                      (created if missing), print
 *                                      "locked", hold the lock MS ms, print
 *                                      "releasing EPOCH_MS": MPI
 *                                      jobs must wait for it
 *
 * Exit status: 0 success, 1 a check failed or a call failed (printed),
 * 2 bad usage or a malformed manifest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clf.h"
#include "pattern.h"

#define MAX_SUBFILES 64

/* Chunk sizes of the reads and writes, in turn: odd on purpose. */
static const int64_t chunks[] = { 1, 7, 4093, 65537, 3, 262147, 509 };
#define NCHUNKS (sizeof(chunks) / sizeof(chunks[0]))

struct run {
	int64_t off, len;
};

struct subfile {
	int nruns;
	struct run *runs;	/* owned */
};

/* One file record of a manifest, with its layout record if any. */
struct entry {
	char path[1024];
	int64_t size;
	int64_t extent;		/* 0: no layout record */
	int nsub;
	struct subfile sub[MAX_SUBFILES];
};

static int failures;

static void entry_release(struct entry *e)
{
	for (int j = 0; j < e->nsub; j++)
		free(e->sub[j].runs);
	memset(e, 0, sizeof(*e));
}

static int fail(const char *what, const char *path, int64_t err)
{
	fprintf(stderr, "romio_native: %s %s: %s (%s)\n", what, path,
		strerror((int)-err), CLF_Last_error());
	failures++;
	return 1;
}

/*
 * Read the next file record of m (and its layout) into e.  Returns 1, 0
 * at the end, -1 for a malformed manifest (printed).
 */
static int entry_read(FILE *m, struct entry *e)
{
	char line[2048], path[1024];
	long long a, b;
	int n, j;

	memset(e, 0, sizeof(*e));
	for (;;) {
		long pos = ftell(m);

		if (!fgets(line, sizeof(line), m))
			return e->path[0] ? 1 : 0;
		if (sscanf(line, "file %1023s %lld", path, &a) == 2) {
			if (e->path[0]) {
				fseek(m, pos, SEEK_SET);
				return 1;
			}
			snprintf(e->path, sizeof(e->path), "%s", path);
			e->size = a;
		} else if (sscanf(line, "layout %1023s %lld %d", path, &a, &n) == 3) {
			if (strcmp(path, e->path) || n < 1 || n > MAX_SUBFILES ||
			    a < 1)
				goto bad;
			e->extent = a;
			e->nsub = n;
		} else if (sscanf(line, "sub %d %d", &j, &n) == 2) {
			struct subfile *s;

			if (j < 0 || j >= e->nsub || n < 0 || e->sub[j].runs)
				goto bad;
			s = &e->sub[j];
			s->runs = calloc(n + 1, sizeof(*s->runs));
			for (int k = 0; k < n; k++) {
				if (!fgets(line, sizeof(line), m) ||
				    sscanf(line, "run %lld %lld", &a, &b) != 2)
					goto bad;
				s->runs[k] = (struct run){ a, b };
			}
			s->nruns = n;
		} else {
			goto bad;
		}
	}
bad:
	fprintf(stderr, "romio_native: malformed manifest line: %s", line);
	return -1;
}

static int check_data(const struct entry *e, uint64_t salt)
{
	unsigned char *buf = malloc(262147);	/* the largest chunk */
	struct stat st;
	int64_t off = 0;
	int fd, rc = 0;
	size_t c = 0;

	rc = CLF_stat(e->path, &st);
	if (rc < 0) {
		free(buf);
		return fail("stat", e->path, rc);
	}
	if (st.st_size != e->size) {
		fprintf(stderr, "romio_native: %s: size %lld, want %" PRId64 "\n",
			e->path, (long long)st.st_size, e->size);
		failures++;
	}
	fd = CLF_open(e->path, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return fail("open", e->path, fd);
	}
	for (;;) {
		int64_t want = chunks[c++ % NCHUNKS];
		ssize_t n = CLF_read(fd, buf, want);

		if (n < 0) {
			rc = fail("read", e->path, n);
			break;
		}
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern_byte(off + i, salt)) {
				fprintf(stderr,
					"romio_native: %s: byte %" PRId64
					" is 0x%02x, want 0x%02x\n",
					e->path, off + i, buf[i],
					pattern_byte(off + i, salt));
				failures++;
				rc = 1;
				break;
			}
		off += n;
		if (rc || n == 0)
			break;
		if (n < want && off < e->size) {
			fprintf(stderr, "romio_native: %s: short read at %" PRId64
				" before the end\n", e->path, off);
			failures++;
			rc = 1;
			break;
		}
	}
	if (!rc && off != e->size) {
		fprintf(stderr, "romio_native: %s: read %" PRId64
			" bytes, want %" PRId64 "\n", e->path, off, e->size);
		failures++;
		rc = 1;
	}
	CLF_close(fd);
	free(buf);
	return rc;
}

/* Subfile type t must select exactly s's runs of every extent, in order. */
static int check_type(const char *path, int j, CLF_Datatype t,
		      const struct subfile *s, int64_t extent)
{
	int64_t size = 0, lin, rank = 0;
	int k = 0, rc;

	for (int i = 0; i < s->nruns; i++)
		size += s->runs[i].len;
	if (CLF_Type_extent(t) != extent || CLF_Type_size(t) != size) {
		fprintf(stderr, "romio_native: %s: subfile %d: extent %" PRId64
			" size %" PRId64 ", want %" PRId64 " and %" PRId64 "\n",
			path, j, CLF_Type_extent(t), CLF_Type_size(t), extent,
			size);
		failures++;
		return 1;
	}
	for (int64_t x = 0; x < 2 * extent; x++) {
		int64_t y = x % extent;
		int selected;

		if (y == 0) {
			k = 0;
			rank = x / extent * size;
		}
		while (k < s->nruns && s->runs[k].off + s->runs[k].len <= y)
			rank += s->runs[k++].len;
		selected = k < s->nruns && s->runs[k].off <= y;
		rc = CLF_Type_map(t, 0, x, &lin);
		if (selected && (rc != 0 || lin != rank + y - s->runs[k].off)) {
			fprintf(stderr, "romio_native: %s: subfile %d: byte %" PRId64
				" maps to %" PRId64 " (rc %d), want %" PRId64 "\n",
				path, j, x, rc ? -1 : lin, rc,
				rank + y - s->runs[k].off);
			failures++;
			return 1;
		}
		if (!selected && rc != -ENOENT) {
			fprintf(stderr, "romio_native: %s: subfile %d: byte %" PRId64
				" is selected (rc %d), want not\n", path, j, x, rc);
			failures++;
			return 1;
		}
	}
	return 0;
}

static int check_layout(const struct entry *e)
{
	struct clf_layout_info li;
	int fd, rc = 0;

	fd = CLF_open(e->path, O_RDONLY);
	if (fd < 0)
		return fail("open", e->path, fd);
	rc = CLF_fcntl(fd, CLF_FCNTL_GETLAYOUT, &li);
	if (rc < 0) {
		CLF_close(fd);
		return fail("CLF_FCNTL_GETLAYOUT", e->path, rc);
	}
	if (li.disp != 0 || li.count != e->nsub) {
		fprintf(stderr, "romio_native: %s: layout of %d subfiles at "
			"displacement %" PRId64 ", want %d at 0\n", e->path,
			li.count, li.disp, e->nsub);
		failures++;
		rc = 1;
	}
	for (int j = 0; !rc && j < e->nsub; j++)
		rc = check_type(e->path, j, li.types[j], &e->sub[j], e->extent);
	CLF_Layout_release(&li);
	CLF_close(fd);
	return rc;
}

static int fill(const struct entry *e, uint64_t salt)
{
	int64_t n = 0, *offs = malloc(sizeof(int64_t) * (e->size + 1));
	unsigned char *buf = malloc(262147);
	int fd, rc = 0;

	fd = CLF_open(e->path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		free(offs);
		free(buf);
		return fail("open", e->path, fd);
	}
	for (int64_t off = 0; off < e->size; off += chunks[n % NCHUNKS], n++)
		offs[n] = off;
	for (int64_t i = n - 1; i >= 0 && !rc; i--) {
		int64_t len = chunks[i % NCHUNKS];
		ssize_t w;

		if (offs[i] + len > e->size)
			len = e->size - offs[i];
		for (int64_t b = 0; b < len; b++)
			buf[b] = pattern_byte(offs[i] + b, salt);
		if (CLF_lseek(fd, offs[i], SEEK_SET) != offs[i])
			rc = fail("lseek", e->path, -EIO);
		else if ((w = CLF_write(fd, buf, len)) != len)
			rc = fail("write", e->path, w < 0 ? w : -EIO);
	}
	n = CLF_close(fd);
	if (!rc && n < 0)
		rc = fail("close", e->path, n);
	free(offs);
	free(buf);
	return rc;
}

/* A process outside any MPI job holding a byte-range lock. */
static int hold_lock(const char *path, int64_t off, int64_t len, long ms)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = off, .l_len = len };
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	int fd = CLF_open(path, O_CREAT | O_RDWR, 0644), rc;

	if (fd < 0)
		return fail("open", path, fd);
	rc = CLF_fcntl(fd, CLF_FCNTL_SETLKW, &fl);
	if (rc < 0)
		return fail("lock", path, rc);
	printf("locked\n");
	fflush(stdout);
	nanosleep(&ts, NULL);
	/* When the lock goes, on the wall clock a waiter can compare. */
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("releasing %lld\n",
	       (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	fflush(stdout);
	rc = CLF_close(fd);
	return rc < 0 ? fail("close", path, rc) : 0;
}

int main(int argc, char **argv)
{
	long files = 0, layouts = 0, bytes = 0;
	struct entry e;
	uint64_t salt;
	FILE *m;
	int rc;

	if (argc < 3)
		goto usage;
	rc = CLF_init(NULL);
	if (rc < 0) {
		fprintf(stderr, "romio_native: CLF_init: %s\n", CLF_Last_error());
		return 1;
	}
	if (!strcmp(argv[1], "rm")) {
		for (int i = 2; i < argc; i++) {
			rc = CLF_unlink(argv[i]);
			if (rc < 0 && rc != -ENOENT)
				fail("unlink", argv[i], rc);
		}
		goto out;
	}
	if (!strcmp(argv[1], "lock") && argc == 6) {
		rc = hold_lock(argv[2], strtoll(argv[3], NULL, 0),
			       strtoll(argv[4], NULL, 0), atol(argv[5]));
		CLF_finalize();
		return rc;
	}
	if (argc != 4 || (strcmp(argv[1], "check") && strcmp(argv[1], "fill")))
		goto usage;
	salt = strtoull(argv[3], NULL, 0);
	m = fopen(argv[2], "r");
	if (!m) {
		perror(argv[2]);
		return 2;
	}
	while ((rc = entry_read(m, &e)) > 0) {
		files++;
		bytes += e.size;
		if (!strcmp(argv[1], "fill")) {
			fill(&e, salt);
		} else {
			check_data(&e, salt);
			if (e.extent) {
				layouts++;
				check_layout(&e);
			}
		}
		entry_release(&e);
	}
	fclose(m);
	if (rc < 0)
		return 2;
	if (files == 0) {
		fprintf(stderr, "romio_native: %s names no file\n", argv[2]);
		return 2;
	}
	printf("romio_native %s: %ld files (%ld bytes), %ld layouts, %d failed\n",
	       argv[1], files, bytes, layouts, failures);
out:
	CLF_finalize();
	return failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: romio_native check|fill MANIFEST SALT\n"
		"       romio_native rm PATH...\n");
	return 2;
}
