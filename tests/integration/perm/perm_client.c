// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perm_client.c -- one file-system operation through the native API, as
 * whoever runs it: test_perm.sh runs it as the test's users (setpriv)
 * against an instance with auth = munge, and compares what it prints
 * with the table of allowed and forbidden operations.
 *
 * usage: perm_client OP PATH [ARG...]   (config from $CLF_CONFIG)
 *   stat P | ls P | read P | write P TEXT | create P MODE | mkdir P MODE
 *   unlink P | rmdir P | rename P NEW | chmod P MODE | chown P UID GID
 *   utime P (explicit times) | touch P (times to now) | truncate P LEN
 *   lock-r P | lock-w P | symlink P TARGET | link P NEW
 *   owner P (print uid, gid and permission bits)
 *
 * Prints "OK" (exit 0) or "ERR <errno name>: <message>" (exit 1); 2 for
 * bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clf.h"
#include "clf_ll.h"

static int ino_of(const char *path, uint64_t *ino)
{
	struct stat st;
	int err = CLF_stat(path, &st);

	if (!err)
		*ino = st.st_ino;
	return err;
}

static int do_setattr(const char *path, uint32_t mask, uint32_t mode,
		      uint32_t uid, uint32_t gid, int64_t size)
{
	struct clf_proto_attr to = {
		.mode = mode, .uid = uid, .gid = gid,
		.atime = 1000000000, .mtime = 2000000000, .size = size,
	};
	struct clf_proto_attr a;
	uint64_t ino;
	int err = ino_of(path, &ino);

	return err ? err : clf_ll_setattr(ino, mask, &to, &a);
}

static int do_io(const char *path, const char *text)
{
	char buf[64];
	int fd = CLF_open(path, text ? O_WRONLY : O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = text ? CLF_write(fd, text, strlen(text))
		 : CLF_read(fd, buf, sizeof(buf));
	CLF_close(fd);
	return n < 0 ? (int)n : 0;
}

static int do_lock(const char *path, short type)
{
	struct clf_ll_lock lk = { .owner = 1, .pid = (uint32_t)getpid(),
				  .type = type, .start = 0, .length = 1 };
	uint64_t ino;
	int err = ino_of(path, &ino);

	return err ? err : clf_ll_setlk(ino, &lk, false, NULL, NULL);
}

static int do_ls(const char *path)
{
	struct clf_ll_dirents d;
	uint64_t ino;
	int err = ino_of(path, &ino);

	if (err)
		return err;
	err = clf_ll_readdir(ino, 0, 16, &d);
	if (!err)
		clf_ll_dirents_release(&d);
	return err;
}

static int run(int argc, char **argv)
{
	const char *op = argv[1], *p = argv[2];
	struct stat st;
	int fd;

	if (!strcmp(op, "stat"))
		return CLF_stat(p, &st);
	if (!strcmp(op, "ls"))
		return do_ls(p);
	if (!strcmp(op, "read"))
		return do_io(p, NULL);
	if (!strcmp(op, "write") && argc == 4)
		return do_io(p, argv[3]);
	if (!strcmp(op, "create") && argc == 4) {
		fd = CLF_open(p, O_CREAT | O_EXCL | O_WRONLY,
			      (mode_t)strtoul(argv[3], NULL, 8));
		return fd < 0 ? fd : CLF_close(fd);
	}
	if (!strcmp(op, "mkdir") && argc == 4)
		return CLF_mkdir(p, (mode_t)strtoul(argv[3], NULL, 8));
	if (!strcmp(op, "unlink"))
		return CLF_unlink(p);
	if (!strcmp(op, "rmdir"))
		return CLF_rmdir(p);
	if (!strcmp(op, "rename") && argc == 4)
		return CLF_rename(p, argv[3]);
	if (!strcmp(op, "chmod") && argc == 4)
		return do_setattr(p, CLF_PROTO_SETATTR_MODE,
				  (uint32_t)strtoul(argv[3], NULL, 8), 0, 0, 0);
	if (!strcmp(op, "chown") && argc == 5)
		return do_setattr(p, CLF_PROTO_SETATTR_UID | CLF_PROTO_SETATTR_GID,
				  0, (uint32_t)atol(argv[3]),
				  (uint32_t)atol(argv[4]), 0);
	if (!strcmp(op, "utime"))
		return do_setattr(p, CLF_PROTO_SETATTR_ATIME |
				     CLF_PROTO_SETATTR_MTIME, 0, 0, 0, 0);
	if (!strcmp(op, "touch"))
		return do_setattr(p, CLF_PROTO_SETATTR_ATIME_NOW |
				     CLF_PROTO_SETATTR_MTIME_NOW, 0, 0, 0, 0);
	if (!strcmp(op, "truncate") && argc == 4)
		return do_setattr(p, CLF_PROTO_SETATTR_SIZE, 0, 0, 0,
				  atoll(argv[3]));
	if (!strcmp(op, "symlink") && argc == 4)
		return CLF_symlink(argv[3], p);
	if (!strcmp(op, "link") && argc == 4)
		return CLF_link(p, argv[3]);
	if (!strcmp(op, "lock-r"))
		return do_lock(p, F_RDLCK);
	if (!strcmp(op, "lock-w"))
		return do_lock(p, F_WRLCK);
	if (!strcmp(op, "owner")) {
		int err = CLF_stat(p, &st);

		if (!err)
			printf("%u %u %04o\n", (unsigned)st.st_uid,
			       (unsigned)st.st_gid, (unsigned)st.st_mode & 07777);
		return err;
	}
	fprintf(stderr, "perm_client: bad usage of '%s'\n", op);
	exit(2);
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: perm_client OP PATH [ARG...]\n");
		return 2;
	}
	err = CLF_init(NULL);
	if (!err)
		err = run(argc, argv);
	if (err < 0) {
		printf("ERR %s: %s\n", strerrorname_np(-err), CLF_Last_error());
		CLF_finalize();
		return 1;
	}
	if (strcmp(argv[1], "owner"))
		printf("OK\n");
	CLF_finalize();
	return 0;
}
