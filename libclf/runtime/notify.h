/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify.h -- a daemon tells systemd it is ready (Type=notify units).
 *
 * The protocol of sd_notify(3), written here rather than linking
 * libsystemd for one datagram: "READY=1" sent to the AF_UNIX datagram
 * socket named by $NOTIFY_SOCKET (a path, or "@name" for an abstract
 * socket).
 */
#ifndef CLF_NOTIFY_H
#define CLF_NOTIFY_H

/*
 * Send "READY=1" when $NOTIFY_SOCKET is set; nothing to do otherwise.
 * 0, or a negative errno with a message (the caller logs it: systemd
 * then times the start out, which says more than exiting would).
 */
int clf_notify_ready(void);

#endif
