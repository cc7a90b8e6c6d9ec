// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_main.c -- mount.clf / clf-fuse: connect to the clf instance,
 * mount with libfuse, go to the background once the mount is live, serve
 * requests until the file system is unmounted (umount, fusermount3 -u,
 * or SIGTERM/SIGINT, which unmount), then exit 0.  SIGHUP reopens the
 * log file (for logrotate), as it does for the daemons, and never
 * unmounts.
 *
 * Errors before the mount is live are printed on standard error and the
 * exit status is 1 (mount(8) reports it); afterwards they are logged
 * (syslog, or log=FILE).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clf.h"
#include "clf_ll.h"
#include "error.h"
#include "clfs_fuse.h"
#include "clfs_log.h"
#include "clfs_opts.h"
#include "clf_upcall.h"
#include "clfs_upcall.h"
#include "log.h"

#define CLFS_UPCALL_THREADS 8

/*
 * why into msg, with the name of the configuration file written for a
 * HOST:PORT source (a temporary file, removed already: meaningless to
 * the user) replaced by what it stood for.
 */
static void say_without(char *msg, size_t len, const char *why,
			const char *tmp, const char *source)
{
	const char *at, *rest;

	at = *tmp ? strstr(why, tmp) : NULL;
	if (!at) {
		snprintf(msg, len, "%s", why);
		return;
	}
	/* Nor does a line number of that file mean anything to them. */
	rest = at + strlen(tmp);
	if (*rest == ':' && rest[1] >= '0' && rest[1] <= '9')
		for (rest++; *rest >= '0' && *rest <= '9'; rest++)
			;
	snprintf(msg, len, "%.*sthe options of %s%s", (int)(at - why), why,
		 source, rest);
}

/* Connect libclf; *msg says why not. */
static int connect_clf(const struct clfs_opts *o, char *msg, size_t len)
{
	char tmp[PATH_MAX] = "";
	const char *conf = o->config;
	int err;

	if (o->url) {
		/* libclf reads the secret of a URL from there. */
		if (o->secret_file && setenv("CLF_SECRET_FILE", o->secret_file, 1))
			return -errno;
		conf = o->url;
	} else if (o->metad) {
		err = clfs_opts_write_config(o, tmp, sizeof(tmp), msg, len);
		if (err)
			return err;
		conf = tmp;
	}
	/* Several callers' files at once (docs/mount.md). */
	clf_ll_default_iod_connections(4);
	err = CLF_init(conf);
	if (*tmp)
		unlink(tmp);
	if (err)
		/* The reason without libclf's "clf: ": mount.clf says
		 * its own name. */
		say_without(msg, len, clf_error_reason(), tmp, o->source);
	return err;
}

static void ignore_hup(int sig)
{
	(void)sig;
}

/* The libfuse session, mounted on o->mountpoint. */
static struct fuse_session *mount_fuse(const struct clfs_opts *o,
				       const char *prog, struct clfs_fuse *cf)
{
	char *argv[] = { (char *)prog, "-o", o->kernel, "-d", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(o->debug && o->foreground ? 4 : 3,
					       argv);
	struct fuse_session *se;

	se = fuse_session_new(&args, &clfs_fuse_ops, sizeof(clfs_fuse_ops), cf);
	fuse_opt_free_args(&args);
	if (!se)
		return NULL;
	/* libfuse ends the session on SIGHUP, but only replaces a default
	 * action: a handler of ours keeps it off until the thread that
	 * reopens the log takes SIGHUP over (after going to the
	 * background, whose fork would not keep a thread). */
	if (signal(SIGHUP, ignore_hup) == SIG_ERR)
		goto destroy;
	if (fuse_set_signal_handlers(se))
		goto destroy;
	if (fuse_session_mount(se, o->mountpoint))
		goto remove_handlers;
	return se;
remove_handlers:
	fuse_remove_signal_handlers(se);
destroy:
	fuse_session_destroy(se);
	return NULL;
}

static int serve(struct fuse_session *se)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret;

	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_max_threads(cfg, 16);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	/* A positive value is the signal that ended it: a clean stop. */
	return ret > 0 ? 0 : ret;
}

/* The kernel client's mount, made by the daemon that serves it. */
struct kmount {
	const struct clfs_opts *o;
	int report;		/* pipe to the waiting parent, or -1 */
};

/* Tell the parent (status byte, then the message) and let it go. */
static void report(int fd, int status, const char *msg)
{
	char c = (char)status;

	if (fd < 0) {
		if (status)
			fprintf(stderr, "%s\n", msg);
		return;
	}
	if (write(fd, &c, 1) == 1 && *msg && write(fd, msg, strlen(msg)) < 0)
		clfs_log(CLFS_LOG_WARNING, "cannot tell mount.clf: %s",
			 strerror(errno));
	close(fd);
}

static void *kmount_thread(void *arg)
{
	struct kmount *km = arg;
	char msg[600] = "";
	int err = 0;

	if (!km->o->reconnect)
		err = clfs_kernel_mount(km->o, msg, sizeof(msg));
	report(km->report, err ? 1 : 0, msg);
	if (err) {
		clfs_log(CLFS_LOG_ERR, "%s", msg);
		/* A daemon with no mount has nothing to serve. */
		_exit(1);
	}
	clfs_log(CLFS_LOG_INFO, "%s %s %s (kernel client)", km->o->source,
		 km->o->reconnect ? "served again on" : "mounted on",
		 km->o->mountpoint);
	return NULL;
}

/*
 * In the child (or the foreground): serve /dev/clf while a thread
 * mounts; the mount's requests wait in the module until a worker reads
 * them.
 */
static int serve_kernel(const struct clfs_opts *o, struct clfs *fs, int fd,
			int report_fd)
{
	struct kmount km = { o, report_fd };
	pthread_t t;
	int err;

	if (pthread_create(&t, NULL, kmount_thread, &km)) {
		report(report_fd, 1, "cannot start the mount thread");
		return 1;
	}
	pthread_detach(t);
	err = clfs_upcall_serve(fs, fd, o->source, CLFS_UPCALL_THREADS);
	clfs_log(CLFS_LOG_INFO, "the kernel client's daemon for %s ends%s",
		 o->source, err ? " on an error" : "");
	return err ? 1 : 0;
}

/* The parent: what the daemon said of the mount is its exit status. */
static int wait_report(int fd, const char *prog)
{
	char buf[601];
	ssize_t n;

	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0) {
		fprintf(stderr, "%s: the clf daemon died before mounting\n", prog);
		return 1;
	}
	buf[n] = '\0';
	if (buf[0])
		fprintf(stderr, "%s: %s\n", prog, buf + 1);
	return buf[0] ? 1 : 0;
}

/*
 * The kernel client: a daemon for /dev/clf (unless one serves it
 * already: then only the mount), in the background once mounted.
 */
static int main_kernel(const struct clfs_opts *o, const char *prog)
{
	struct clfs *fs;
	int fd = clfs_kernel_open(), p[2], status = 1;
	char msg[600];
	pid_t pid;

	if (fd == -EBUSY && !o->reconnect) {
		if (clfs_kernel_mount(o, msg, sizeof(msg))) {
			fprintf(stderr, "%s: %s\n", prog, msg);
			return 1;
		}
		return 0;
	}
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, CLF_UP_DEVICE,
			fd == -EBUSY ? "a daemon serves it already" :
			fd == -ENODEV ? "the clf kernel module is not loaded (modprobe clf, or -o client=fuse)" :
			strerror(-fd));
		return 1;
	}
	if (clfs_log_open("clf-kclient", o->log ? o->log :
			  o->foreground ? "-" : "syslog", o->debug)) {
		fprintf(stderr, "%s: cannot open the log %s\n", prog, o->log);
		goto close_fd;
	}
	if (connect_clf(o, msg, sizeof(msg))) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		goto close_log;
	}
	if (clfs_new(o->read_only, &fs)) {
		fprintf(stderr, "%s: cannot reach the clf instance of %s: %s\n",
			prog, o->source, CLF_Last_error());
		goto finalize;
	}
	/* The workers may still be in a request of a mount being torn
	 * down when serving ends: the process ends without freeing what
	 * they use. */
	if (o->foreground)
		exit(serve_kernel(o, fs, fd, -1));
	if (pipe(p) || (pid = fork()) < 0) {
		fprintf(stderr, "%s: cannot start the daemon: %s\n", prog,
			strerror(errno));
		goto free_fs;
	}
	if (pid > 0) {
		close(p[1]);
		return wait_report(p[0], prog);
	}
	close(p[0]);
	setsid();
	if (chdir("/") == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
	}
	exit(serve_kernel(o, fs, fd, p[1]));
free_fs:
	clfs_free(fs);
finalize:
	CLF_finalize();
close_log:
	clfs_log_close();
close_fd:
	close(fd);
	return status;
}

static bool want_kernel(const struct clfs_opts *o)
{
	return o->client == CLFS_CLIENT_KERNEL ||
	       (o->client == CLFS_CLIENT_AUTO && clfs_kernel_loaded());
}

int main(int argc, char **argv)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
						 : argv[0];
	struct clfs_fuse cf = { 0 };
	struct fuse_session *se;
	struct clfs_opts o;
	char msg[600];
	int err, status = 1;

	err = clfs_opts_parse(argc, argv, &o, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		return 1;
	}
	if (o.answered)
		return 0;
	if (o.fake) {
		status = 0;
		goto release_opts;
	}
	if (want_kernel(&o)) {
		status = main_kernel(&o, prog);
		goto release_opts;
	}
	if (o.reconnect) {
		fprintf(stderr, "%s: reconnect is for the kernel client\n", prog);
		goto release_opts;
	}
	err = clfs_log_open("clf-fuse", o.log ? o.log :
				    o.foreground ? "-" : "syslog", o.debug);
	if (err) {
		fprintf(stderr, "%s: cannot open the log %s: %s\n", prog,
			o.log, strerror(-err));
		goto release_opts;
	}
	err = connect_clf(&o, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s\n", prog, msg);
		goto close_log;
	}
	err = clfs_new(o.read_only, &cf.fs);
	if (err) {
		fprintf(stderr, "%s: cannot reach the clf instance of %s: %s\n",
			prog, o.source, CLF_Last_error());
		goto finalize;
	}
	cf.timeout = o.cache_none ? 0.0 : 1.0;
	cf.direct_io = o.cache_none;
	se = mount_fuse(&o, prog, &cf);
	cf.se = se;
	if (!se) {
		fprintf(stderr, "%s: cannot mount %s on %s\n", prog, o.source,
			o.mountpoint);
		goto free_fs;
	}
	clfs_log(CLFS_LOG_INFO, "%s mounted on %s%s", o.source, o.mountpoint,
		 o.read_only ? " (read-only)" : "");
	/* The mount is live: only now may the caller go on. */
	if (fuse_daemonize(o.foreground) == 0) {
		/* Before the loop's threads, which inherit SIGHUP blocked. */
		if (clf_log_reopen_on_hup())
			clfs_log(CLFS_LOG_WARNING, "SIGHUP will not reopen the log: %s",
				 CLF_Last_error());
		err = serve(se);
		status = err ? 1 : 0;
		if (err)
			clfs_log(CLFS_LOG_ERR, "serving %s ended: %s",
				 o.mountpoint, strerror(-err));
	}
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	clfs_log(CLFS_LOG_INFO, "%s unmounted from %s", o.source, o.mountpoint);
free_fs:
	clfs_free(cf.fs);
finalize:
	CLF_finalize();
close_log:
	clfs_log_close();
release_opts:
	clfs_opts_release(&o);
	return status;
}
