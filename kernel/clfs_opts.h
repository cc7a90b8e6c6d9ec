/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clfs_opts.h -- the command line of mount.clf and clf-fuse, which is
 * the mount(8) helper convention:
 *
 *   mount.clf SOURCE DIR [-o OPTIONS] [-f] [-n] [-s] [-v] [-F]
 *
 * SOURCE is a clf configuration file, or HOST:PORT of metad (then the
 * iods are at HOST:PORT+1 ... HOST:PORT+iods, the default shape of `clf
 * up`, and the secret is read from secret_file=, else found as every
 * program finds its configuration: $CLF_CONFIG, ./clf-data/clf.conf,
 * /etc/clf/clf.conf, and that file's secret, or the secret file `clf up`
 * writes beside it; when that file's metad is HOST:PORT, the file is
 * the configuration), or clf://HOST[:PORT]/ of metad (then metad names
 * the iods, and the secret is secret_file=, else $CLF_SECRET_FILE, else
 * none: MUNGE).  -f (fake) parses and
 * exits; -n, -s, -v are accepted and ignored; -F stays in the
 * foreground.  OPTIONS (comma-separated):
 *
 *   config=FILE        the configuration (instead of SOURCE)
 *   secret_file=FILE   the shared secret, with a HOST:PORT source
 *   iods=N             iods of a HOST:PORT source (default 4)
 *   cache=normal|none  normal: attributes and names trusted for 1 s,
 *                      page cache (dropped at each open); none: nothing
 *                      cached, every read and write goes to clf
 *   client=auto|kernel|fuse
 *                      kernel: the clf module (kernel/module/), served
 *                      by this program as its upcall daemon; fuse:
 *                      libfuse; auto (default): kernel when the module
 *                      is loaded
 *   reconnect          (kernel) serve the module's mounts again after
 *                      their daemon died: no new mount
 *   ro, rw             read-only / read-write (default)
 *   allow_other        other users may use the mount (permissions are
 *                      always checked by the kernel against mode bits)
 *   debug              log every request
 *   log=FILE|syslog    where the daemon logs (default: syslog)
 *   foreground         as -F
 *   nosuid, nodev, noexec, noatime, ... (mount flags): to the kernel
 *   defaults, auto, noauto, user, users, nouser, _netdev, nofail, x-*,
 *   comment=...: fstab's, ignored
 */
#ifndef CLFS_OPTS_H
#define CLFS_OPTS_H

#include <stdbool.h>
#include <stddef.h>

enum clfs_client { CLFS_CLIENT_AUTO, CLFS_CLIENT_FUSE, CLFS_CLIENT_KERNEL };

struct clfs_opts {
	char *source;		/* owned */
	char *mountpoint;	/* owned */
	char *config;		/* config=, or SOURCE when it is a file; owned */
	char *metad;		/* HOST:PORT when SOURCE is one; owned */
	char *url;		/* "clf://HOST:PORT" when SOURCE is a URL;
				   owned */
	char *secret_file;	/* owned */
	char *secret_hex;	/* a secret found in a configuration; owned */
	int iods;
	bool read_only, allow_other, debug, foreground, fake, cache_none;
	enum clfs_client client;
	bool reconnect;
	char *log;		/* owned; NULL: syslog */
	char *kernel;		/* -o options for the FUSE mount; owned */
	bool answered;		/* --help or --version printed: nothing
				   else is set, nothing to mount */
};

/*
 * Parse argv; 0 and *o (clfs_opts_release), with o->answered when help
 * or the version was asked for (and printed), or -EINVAL with the reason
 * in msg.
 */
int clfs_opts_parse(int argc, char **argv, struct clfs_opts *o, char *msg,
		    size_t msglen);

void clfs_opts_release(struct clfs_opts *o);

/*
 * The configuration file a HOST:PORT source stands for, written to a new
 * private file whose path goes to path (the caller removes it).
 */
int clfs_opts_write_config(const struct clfs_opts *o, char *path,
			   size_t pathlen, char *msg, size_t msglen);

#endif /* CLFS_OPTS_H */
