// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_kmount.c -- the kernel client's side of mount.clf: the device
 * its daemon serves and the mount(2) call.  The module is in
 * kernel/module/; its messages in clf_upcall.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "clf_upcall.h"
#include "clfs_upcall.h"

/* Loaded, or loadable: modprobe finds it where it is installed. */
bool clfs_kernel_loaded(void)
{
	if (access("/sys/module/clf", F_OK) == 0)
		return true;
	if (system("modprobe -q clf 2>/dev/null") != 0)
		return false;
	return access("/sys/module/clf", F_OK) == 0;
}

int clfs_kernel_open(void)
{
	int fd = open(CLF_UP_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == EBUSY)
		return -EBUSY;
	if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
		return -ENODEV;
	return -errno;
}

/* Mount flags of mount.clf's options that mount(2) takes as bits. */
static const struct {
	const char *name;
	unsigned long set, clear;
} flag_names[] = {
	{ "nosuid", MS_NOSUID, 0 },	{ "suid", 0, MS_NOSUID },
	{ "nodev", MS_NODEV, 0 },	{ "dev", 0, MS_NODEV },
	{ "noexec", MS_NOEXEC, 0 },	{ "exec", 0, MS_NOEXEC },
	{ "sync", MS_SYNCHRONOUS, 0 },	{ "async", 0, MS_SYNCHRONOUS },
	{ "noatime", MS_NOATIME, 0 },	{ "atime", 0, MS_NOATIME },
	{ "nodiratime", MS_NODIRATIME, 0 },
	{ "diratime", 0, MS_NODIRATIME },
	{ "relatime", MS_RELATIME, 0 },	{ "norelatime", 0, MS_RELATIME },
	{ "strictatime", MS_STRICTATIME, 0 },
	{ "lazytime", MS_LAZYTIME, 0 },	{ "nolazytime", 0, MS_LAZYTIME },
	{ "dirsync", MS_DIRSYNC, 0 },
};

/* The bits of the flags in o->kernel (the rest there is FUSE's). */
static unsigned long mount_flags(const struct clfs_opts *o)
{
	unsigned long flags = o->read_only ? MS_RDONLY : 0;
	char *copy = o->kernel ? strdup(o->kernel) : NULL, *save = NULL, *t;

	if (!copy)
		return flags;
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]);
		     i++)
			if (!strcmp(t, flag_names[i].name))
				flags = (flags | flag_names[i].set) &
					~flag_names[i].clear;
	free(copy);
	return flags;
}

int clfs_kernel_mount(const struct clfs_opts *o, char *msg, size_t len)
{
	const char *data = o->cache_none ? "cache=none" : "";

	if (mount(o->source, o->mountpoint, "clf", mount_flags(o), data)) {
		int err = -errno;

		snprintf(msg, len, "cannot mount %s on %s (clf kernel client): %s%s",
			 o->source, o->mountpoint, strerror(errno),
			 errno == EXDEV ? " (/dev/clf's daemon serves another instance)" :
			 errno == EINVAL ? " (is a daemon serving /dev/clf?)" : "");
		return err;
	}
	return 0;
}
