// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * admission.c -- handshake and connection quotas of a daemon (see
 * admission.h for the rules).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "admission.h"
#include "clock.h"

void clf_admission_init(struct clf_admission *a, unsigned max_authed)
{
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	a->max_authed = max_authed;
}

void clf_admission_release(struct clf_admission *a)
{
	if (a)
		pthread_mutex_destroy(&a->lock);
}

/* "addr:port" (or "[v6]:port") -> "addr" in out. */
static void addr_of(const char *peer, char *out, size_t len)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

	if (n >= len)
		n = len - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

/*
 * A slot for a handshake from addr: a free one, unless addr has its
 * share already; else the oldest of addr's (over its share) or of all
 * (no slot free), whose connection is cut off.
 */
static struct clf_admit_slot *take_slot(struct clf_admission *a,
					const char *addr)
{
	struct clf_admit_slot *free_one = NULL, *oldest = NULL;
	struct clf_admit_slot *oldest_here = NULL, *s;
	unsigned here = 0;

	for (int i = 0; i < CLF_ADMIT_HANDSHAKES; i++) {
		s = &a->slots[i];
		if (!s->used) {
			if (!free_one)
				free_one = s;
			continue;
		}
		if (!oldest || s->since_ms < oldest->since_ms)
			oldest = s;
		if (strcmp(s->addr, addr))
			continue;
		here++;
		if (!oldest_here || s->since_ms < oldest_here->since_ms)
			oldest_here = s;
	}
	if (here >= CLF_ADMIT_HANDSHAKES_PER_ADDR)
		s = oldest_here;
	else if (free_one)
		return free_one;
	else
		s = oldest;
	/* Its thread sees the socket fail and ends its handshake. */
	shutdown(s->fd, SHUT_RDWR);
	s->used = false;
	a->cut++;
	return s;
}

int clf_admit_handshake(struct clf_admission *a, const char *peer, int fd,
			uint64_t *ticket, char *why, size_t len)
{
	struct clf_admit_slot *s;
	char addr[64];
	int err = 0;

	addr_of(peer, addr, sizeof(addr));
	pthread_mutex_lock(&a->lock);
	if (a->authed >= a->max_authed) {
		snprintf(why, len, "%u connections already (the limit)",
			 a->max_authed);
		err = -EAGAIN;
	} else {
		s = take_slot(a, addr);
		s->used = true;
		s->fd = fd;
		s->since_ms = clf_now_ms();
		s->gen++;
		snprintf(s->addr, sizeof(s->addr), "%s", addr);
		*ticket = (uint64_t)(s - a->slots) << 32 | s->gen;
	}
	pthread_mutex_unlock(&a->lock);
	return err;
}

int clf_admit_handshake_done(struct clf_admission *a, uint64_t ticket,
			     bool authenticated, char *why, size_t len)
{
	struct clf_admit_slot *s = &a->slots[(ticket >> 32) %
					     CLF_ADMIT_HANDSHAKES];
	int err = 0;

	pthread_mutex_lock(&a->lock);
	/* A slot taken over since belongs to another connection now. */
	if (s->used && s->gen == (uint32_t)ticket)
		s->used = false;
	if (authenticated && a->authed >= a->max_authed) {
		snprintf(why, len, "%u connections already (the limit)",
			 a->max_authed);
		err = -EAGAIN;
	} else if (authenticated) {
		a->authed++;
	}
	pthread_mutex_unlock(&a->lock);
	return err;
}

int clf_admit_ask(void *question, char *why, size_t len)
{
	struct clf_admit_question *q = question;
	int err = clf_admit_handshake_done(q->a, q->ticket, true, why, len);

	q->asked = true;
	q->admitted = !err;
	return err;
}

void clf_admit_settle(struct clf_admit_question *q, int err)
{
	char why[128];

	if (!q->asked)
		clf_admit_handshake_done(q->a, q->ticket, false, why,
					 sizeof(why));
	else if (q->admitted && err)
		clf_admit_leave(q->a);
}

void clf_admit_leave(struct clf_admission *a)
{
	pthread_mutex_lock(&a->lock);
	a->authed--;
	pthread_mutex_unlock(&a->lock);
}

bool clf_admission_full(struct clf_admission *a)
{
	bool full;

	pthread_mutex_lock(&a->lock);
	full = a->authed >= a->max_authed;
	pthread_mutex_unlock(&a->lock);
	return full;
}

bool clf_admission_log_refusal(struct clf_admission *a, unsigned *skipped)
{
	int64_t now = clf_now_ms();
	bool ok;

	pthread_mutex_lock(&a->lock);
	ok = now >= a->log_next_ms;
	if (ok) {
		*skipped = a->log_skipped;
		a->log_skipped = 0;
		a->log_next_ms = now + 1000;
	} else {
		a->log_skipped++;
	}
	pthread_mutex_unlock(&a->lock);
	return ok;
}
