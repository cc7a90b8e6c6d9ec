// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * notify.c -- readiness for systemd (notify.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "error.h"
#include "notify.h"

int clf_notify_ready(void)
{
	static const char msg[] = "READY=1";
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	size_t n;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return clf_fail(EINVAL, "NOTIFY_SOCKET '%s' is not a socket path",
				path);
	memcpy(sa.sun_path, path, n);
	/* "@name": the abstract namespace, whose names start with a 0. */
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return clf_fail(errno, "cannot notify systemd: socket: %s",
				strerror(errno));
	if (sendto(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, len) < 0)
		err = clf_fail(errno, "cannot notify systemd at '%s': %s",
			       path, strerror(errno));
	close(fd);
	return err;
}
