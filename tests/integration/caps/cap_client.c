// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cap_client.c -- a user's process that talks to an iod around libclf,
 * for test_caps.sh: it opens files through metad as an honest client
 * would, then sends its own CAP and SUB_WRITE requests to the iod of
 * subfile 0 with no, a forged, an expired or another file's capability.
 * Prints one line per step: "OK" or "ERR <errno name> <message>".
 *
 *   cap_client nocap    FILE          SUB_WRITE and a PW LOCK_ENQUEUE
 *                                     with no CAP
 *   cap_client forged   FILE          a read capability turned into write
 *   cap_client other    MINE FILE     MINE's write capability, FILE's data
 *   cap_client expired  MINE SECONDS  a capability kept SECONDS, then used
 *   cap_client honest   MINE          CAP_GRANT, CAP, SUB_WRITE: all OK
 *   cap_client holder   FILE SECONDS  a caching client: LOCK_CALLBACK, then
 *                                     a PW lock on FILE (prints "locked:
 *                                     CLIENT ID"), SECONDS later its own
 *                                     LOCK_RELEASE of it
 *   cap_client steal    CLIENT ID     another user's LOCK_RELEASE of that
 *                                     lock, a LOCK_RELEASE of lock 0 (it
 *                                     binds a connection to CLIENT), and a
 *                                     LOCK_CALLBACK for CLIENT
 *   cap_client ping                   the iod still answers
 *   cap_client rewrite  MINE SECONDS  CLF_write, sleep, CLF_write (chmod
 *                                     in between, by the script)
 *   cap_client chmod    FILE MODE     SETATTR of the mode (octal)
 *   cap_client mkdir    DIR MODE      CLF_mkdir
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cap.h"
#include "client_i.h"
#include "clf_ll.h"
#include "clf.h"
#include "error.h"

static const char *ename(int err)
{
	switch (-err) {
	case 0: return "OK";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EKEYEXPIRED: return "EKEYEXPIRED";
	case EPROTO: return "EPROTO";
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	default: return "E?";
	}
}

static void say(const char *step, int err)
{
	if (err)
		printf("%s: ERR %s %s\n", step, ename(err), CLF_Last_error());
	else
		printf("%s: OK\n", step);
	fflush(stdout);
}

/* A raw connection to iod 0 with this process's MUNGE credential. */
static struct clf_conn *iod0(void)
{
	struct clf_client *cl;
	struct clf_conn *c;

	if (clf_client_get(&cl) ||
	    clf_conn_connect(cl->transport, cl->cfg->iods[0].addr,
			     cl->cfg->timeout_ms, &c)) {
		say("connect", -EIO);
		exit(1);
	}
	clf_conn_want_protection(c, cl->cfg->protection);
	if (clf_auth_client(c, NULL, "client")) {
		say("auth", -EACCES);
		exit(1);
	}
	return c;
}

static int call(struct clf_conn *c, uint16_t op, const void *body, size_t len)
{
	struct clf_proto_header h, rh;
	struct iovec iov = { (void *)body, len };
	void *reply;
	int err;

	clf_proto_header_init(&h, op, clf_conn_next_id(c));
	err = clf_conn_call(c, &h, &iov, 1, &rh, &reply);
	if (!err)
		free(reply);
	return err;
}

static int hand_over(struct clf_conn *c, const struct clf_cap *cap)
{
	uint8_t buf[CLF_CAP_WIRE];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	clf_cap_encode(&w, cap);
	return call(c, CLF_PROTO_OP_CAP, buf, w.pos);
}

static int sub_write(struct clf_conn *c, uint64_t ino)
{
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	wire_put_u64(&w, ino);
	wire_put_u32(&w, 0);		/* subfile 0: iod 0 (one iod) */
	wire_put_i64(&w, 0);
	wire_put_u32(&w, 4);
	wire_put_bytes(&w, "EVIL", 4);
	return call(c, CLF_PROTO_OP_SUB_WRITE, buf, w.pos);
}

/* A PW extent lock on bytes [0, 4) of subfile 0 (iod_cap.c checks the
 * file's write right before the lock manager sees it). */
static int lock_enqueue(struct clf_conn *c, uint64_t ino)
{
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	wire_put_u64(&w, 0x1234);	/* client id */
	wire_put_u64(&w, ino);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, CLF_PROTO_LOCK_PW);
	wire_put_i64(&w, 0);
	wire_put_i64(&w, 4);
	return call(c, CLF_PROTO_OP_LOCK_ENQUEUE, buf, w.pos);
}

static int lock_callback(struct clf_conn *c, uint64_t client)
{
	uint8_t buf[16];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	wire_put_u64(&w, client);
	return call(c, CLF_PROTO_OP_LOCK_CALLBACK, buf, w.pos);
}

static int lock_release(struct clf_conn *c, uint64_t client, uint64_t id)
{
	uint8_t buf[16];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	wire_put_u64(&w, client);
	wire_put_u64(&w, id);
	return call(c, CLF_PROTO_OP_LOCK_RELEASE, buf, w.pos);
}

/* A PW lock of client on [0, 4) of subfile 0 of ino: its id in *id. */
static int lock_take(struct clf_conn *c, uint64_t client, uint64_t ino,
		     uint64_t *id)
{
	struct clf_proto_header h, rh;
	struct clf_proto_lock_grant g;
	struct wire_reader r;
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct iovec iov;
	void *reply;
	int err;

	wire_put_u64(&w, client);
	wire_put_u64(&w, ino);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, CLF_PROTO_LOCK_PW);
	wire_put_i64(&w, 0);
	wire_put_i64(&w, 4);
	iov = (struct iovec){ buf, w.pos };
	clf_proto_header_init(&h, CLF_PROTO_OP_LOCK_ENQUEUE, clf_conn_next_id(c));
	err = clf_conn_call(c, &h, &iov, 1, &rh, &reply);
	if (err)
		return err;
	r = (struct wire_reader){ reply, rh.payload_len, 0, false };
	err = clf_proto_lock_grant_decode(&r, &g);
	free(reply);
	*id = g.id;
	return err;
}

/* ino of path, opened through metad with flags (checked there). */
static uint64_t ino_of(const char *path, int flags)
{
	struct clf_file *f;
	uint64_t ino;
	int fd = CLF_open(path, flags, 0);

	if (fd < 0 || clf_file_get(fd, &f)) {
		say("open", fd < 0 ? fd : -EBADF);
		exit(1);
	}
	ino = f->ino;
	clf_file_put(f);
	return ino;
}

struct grant_req {
	uint64_t ino;
	uint32_t rights;
};

static int enc_grant(struct wire_writer *w, const void *m)
{
	const struct grant_req *g = m;

	wire_put_u64(w, g->ino);
	wire_put_u32(w, g->rights);
	return 0;
}

static struct clf_cap grant(uint64_t ino, uint32_t rights)
{
	struct grant_req g = { ino, rights };
	struct wire_reader r;
	struct clf_cap cap;
	uint32_t rlen;
	void *reply;
	int err = clf_meta_call(CLF_PROTO_OP_CAP_GRANT, enc_grant, &g, &reply,
				&rlen);

	if (!err) {
		r = (struct wire_reader){ reply, rlen, 0, false };
		err = clf_cap_decode(&r, &cap);
		free(reply);
	}
	if (err) {
		say("grant", err);
		exit(1);
	}
	return cap;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct clf_conn *c;
	struct clf_cap cap;
	int err = CLF_init(NULL);

	if (err) {
		say("init", err);
		return 1;
	}
	if (!strcmp(mode, "ping")) {
		c = iod0();
		say("ping", call(c, CLF_PROTO_OP_PING, NULL, 0));
	} else if (!strcmp(mode, "nocap") && argc == 3) {
		uint64_t ino = ino_of(argv[2], O_RDONLY);

		c = iod0();
		say("write", sub_write(c, ino));
		say("lock", lock_enqueue(c, ino));
	} else if (!strcmp(mode, "forged") && argc == 3) {
		uint64_t ino = ino_of(argv[2], O_RDONLY);

		cap = grant(ino, CLF_CAP_READ);
		cap.rights = CLF_CAP_READ | CLF_CAP_WRITE;
		c = iod0();
		say("cap", hand_over(c, &cap));
		say("write", sub_write(c, ino));
	} else if (!strcmp(mode, "other") && argc == 4) {
		uint64_t mine = ino_of(argv[2], O_RDWR);
		uint64_t theirs = ino_of(argv[3], O_RDONLY);

		cap = grant(mine, CLF_CAP_WRITE);
		c = iod0();
		say("cap", hand_over(c, &cap));
		say("write", sub_write(c, theirs));
	} else if (!strcmp(mode, "expired") && argc == 4) {
		uint64_t mine = ino_of(argv[2], O_RDWR);
		struct clf_cap kept = grant(mine, CLF_CAP_WRITE);

		c = iod0();
		say("cap", hand_over(c, &kept));
		sleep((unsigned)atoi(argv[3]));
		say("write", sub_write(c, mine));
		say("cap", hand_over(c, &kept));
	} else if (!strcmp(mode, "honest") && argc == 3) {
		uint64_t mine = ino_of(argv[2], O_RDWR);

		cap = grant(mine, CLF_CAP_WRITE);
		c = iod0();
		say("cap", hand_over(c, &cap));
		say("write", sub_write(c, mine));
	} else if (!strcmp(mode, "holder") && argc == 4) {
		uint64_t ino = ino_of(argv[2], O_RDWR);
		uint64_t client = 0xc1f0000000000000ull | (uint64_t)getpid();
		struct clf_conn *cb = iod0();
		uint64_t id = 0;

		/* cb stays open: the client keeps its locks while it is. */
		say("callback", lock_callback(cb, client));
		cap = grant(ino, CLF_CAP_WRITE);
		c = iod0();
		say("cap", hand_over(c, &cap));
		err = lock_take(c, client, ino, &id);
		if (err)
			say("lock", err);
		else
			printf("locked: %016llx %llu\n", (unsigned long long)client,
			       (unsigned long long)id);
		fflush(stdout);
		sleep((unsigned)atoi(argv[3]));
		/* Still its own: nobody else released it. */
		say("release", lock_release(c, client, id));
	} else if (!strcmp(mode, "steal") && argc == 4) {
		uint64_t client = strtoull(argv[2], NULL, 16);
		uint64_t id = strtoull(argv[3], NULL, 10);

		c = iod0();
		say("release", lock_release(c, client, id));
		c = iod0();
		say("bind", lock_release(c, client, 0));
		c = iod0();
		say("callback", lock_callback(c, client));
	} else if (!strcmp(mode, "rewrite") && argc == 4) {
		int fd = CLF_open(argv[2], O_WRONLY, 0);
		ssize_t n;

		if (fd < 0) {
			say("open", fd);
			return 1;
		}
		n = CLF_write(fd, "good", 4);
		say("write1", n == 4 ? 0 : (int)n);
		/* The script removes write meanwhile: SECONDS later. */
		printf("waiting\n");
		fflush(stdout);
		sleep((unsigned)atoi(argv[3]));
		n = CLF_write(fd, "late", 4);
		say("write2", n == 4 ? 0 : (int)n);
		CLF_close(fd);
	} else if (!strcmp(mode, "mkdir") && argc == 4) {
		say("mkdir", CLF_mkdir(argv[2],
				       (mode_t)strtoul(argv[3], NULL, 8)));
	} else if (!strcmp(mode, "chmod") && argc == 4) {
		struct clf_proto_attr to = {
			.mode = (uint32_t)strtoul(argv[3], NULL, 8),
		};
		struct clf_proto_attr attr;

		say("chmod", clf_ll_setattr(ino_of(argv[2], O_RDONLY),
					    CLF_PROTO_SETATTR_MODE, &to, &attr));
	} else {
		fprintf(stderr, "usage: see cap_client.c\n");
		return 2;
	}
	CLF_finalize();
	return 0;
}
