// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma_wire.c -- the RDMA transport's SEND header and credits
 * (transport_rdma_wire.h).
 */
#include <errno.h>

#include "error.h"
#include "transport_rdma_wire.h"

void clf_rdma_pkt_encode(uint8_t out[CLF_RDMA_PKT_HEADER],
			 const struct clf_rdma_pkt *p)
{
	out[0] = CLF_RDMA_PKT_MAGIC;
	out[1] = p->type;
	out[2] = (uint8_t)p->credits;
	out[3] = (uint8_t)(p->credits >> 8);
	for (int i = 0; i < 4; i++)
		out[4 + i] = (uint8_t)(p->len >> (8 * i));
}

int clf_rdma_pkt_decode(const uint8_t *buf, size_t got,
			struct clf_rdma_pkt *out)
{
	struct clf_rdma_pkt p;

	if (got < CLF_RDMA_PKT_HEADER)
		return clf_fail(EPROTO, "clf: rdma: a SEND of %zu bytes, shorter than its header",
				got);
	if (buf[0] != CLF_RDMA_PKT_MAGIC)
		return clf_fail(EPROTO, "clf: rdma: a SEND with magic 0x%02x, not 0x%02x",
				buf[0], CLF_RDMA_PKT_MAGIC);
	p.type = buf[1];
	p.credits = (uint16_t)(buf[2] | buf[3] << 8);
	p.len = 0;
	for (int i = 0; i < 4; i++)
		p.len |= (uint32_t)buf[4 + i] << (8 * i);
	if (p.type < CLF_RDMA_PKT_DATA || p.type > CLF_RDMA_PKT_DONE)
		return clf_fail(EPROTO, "clf: rdma: a SEND of unknown type %u",
				p.type);
	if (p.len != got - CLF_RDMA_PKT_HEADER)
		return clf_fail(EPROTO, "clf: rdma: a SEND announcing %u bytes carries %zu",
				p.len, got - CLF_RDMA_PKT_HEADER);
	if (p.type == CLF_RDMA_PKT_CREDIT && (p.len || !p.credits))
		return clf_fail(EPROTO, "clf: rdma: a credit SEND with %u bytes and %u credits",
				p.len, p.credits);
	if (p.type == CLF_RDMA_PKT_CTS &&
	    (p.len == 0 || p.len % CLF_RDMA_DESC_SIZE ||
	     p.len > CLF_RDMA_CTS_MAX * CLF_RDMA_DESC_SIZE))
		return clf_fail(EPROTO, "clf: rdma: a CTS of %u bytes, not 1 to %d descriptors",
				p.len, CLF_RDMA_CTS_MAX);
	if (p.type >= CLF_RDMA_PKT_RDESC && p.type != CLF_RDMA_PKT_CTS &&
	    p.len != CLF_RDMA_DESC_SIZE)
		return clf_fail(EPROTO, "clf: rdma: a rendezvous SEND of %u bytes, not %d",
				p.len, CLF_RDMA_DESC_SIZE);
	*out = p;
	return 0;
}

void clf_rdma_credits_init(struct clf_rdma_credits *c, uint32_t window,
			   uint32_t batch)
{
	*c = (struct clf_rdma_credits){ .tx = window, .window = window,
					.batch = batch ? batch : 1 };
}

bool clf_rdma_credits_can_send(const struct clf_rdma_credits *c)
{
	return c->tx > 0;
}

uint16_t clf_rdma_credits_spend(struct clf_rdma_credits *c)
{
	uint16_t owed = (uint16_t)c->owed;

	c->tx--;
	c->owed = 0;
	return owed;
}

int clf_rdma_credits_grant(struct clf_rdma_credits *c, uint32_t n)
{
	if (n > c->window - c->tx)
		return clf_fail(EPROTO,
				"clf: rdma: the peer returned %u credits with %u outstanding",
				n, c->window - c->tx);
	c->tx += n;
	return 0;
}

void clf_rdma_credits_consumed(struct clf_rdma_credits *c)
{
	c->owed++;
}

bool clf_rdma_credits_update_due(const struct clf_rdma_credits *c)
{
	return c->owed >= c->batch;
}

uint16_t clf_rdma_credits_take_owed(struct clf_rdma_credits *c)
{
	uint16_t owed = (uint16_t)c->owed;

	c->owed = 0;
	return owed;
}

static void put_le(uint8_t *out, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *in, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)in[i] << (8 * i);
	return v;
}

void clf_rdma_desc_encode(uint8_t out[CLF_RDMA_DESC_SIZE],
			  const struct clf_rdma_desc *d)
{
	put_le(out, d->addr, 8);
	put_le(out + 8, d->rkey, 4);
	put_le(out + 12, d->len, 4);
}

void clf_rdma_desc_decode(const uint8_t in[CLF_RDMA_DESC_SIZE],
			  struct clf_rdma_desc *d)
{
	d->addr = get_le(in, 8);
	d->rkey = (uint32_t)get_le(in + 8, 4);
	d->len = (uint32_t)get_le(in + 12, 4);
}

bool clf_rdma_pkt_in_stream(uint8_t type)
{
	return type == CLF_RDMA_PKT_DATA || type == CLF_RDMA_PKT_RDESC ||
	       type == CLF_RDMA_PKT_RTS;
}
