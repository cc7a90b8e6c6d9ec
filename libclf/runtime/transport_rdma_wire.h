/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_rdma_wire.h -- what the RDMA transport puts in each SEND,
 * and the credits that keep its receive buffers from overflowing.
 *
 * The RDMA transport carries the same byte stream as TCP (clf headers
 * and payloads, framed by transport.c) in RC SENDs of at most one
 * receive buffer each.  A SEND can only land in a receive buffer the peer
 * posted beforehand; one that finds none is an RNR error, fatal after the
 * retries.  So a sender spends a credit per data SEND, and the receiver
 * gives credits back as its application consumes buffers and it reposts
 * them: with every data SEND it makes (piggybacked), or in a credit-only
 * SEND once CLF_RDMA_CREDIT_BATCH are owed and it has nothing to send.
 *
 * Credit-only SENDs spend no credit: they land in CLF_RDMA_EXTRA_RECVS
 * buffers posted beyond the credits, reposted as soon as they complete.
 * Each returns at least a batch, and the credits in flight never exceed
 * the window, so no more than window / batch of them are ever unreposted
 * at the receiver: the extra buffers suffice and neither side waits for
 * the other's credit message (a credit message that spent a credit could
 * deadlock two peers that both ran out).
 *
 * Pure logic, no verbs: unit-tested on machines without RDMA
 * (tests/unit/test_rdma_wire.c).
 */
#ifndef CLF_TRANSPORT_RDMA_WIRE_H
#define CLF_TRANSPORT_RDMA_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLF_RDMA_PKT_HEADER 8		/* bytes before the data */
#define CLF_RDMA_PKT_MAGIC 0xc1		/* version 1 of this framing */
#define CLF_RDMA_SLOT ((size_t)32768)	/* one receive buffer, header too */
#define CLF_RDMA_PKT_DATA_MAX (CLF_RDMA_SLOT - CLF_RDMA_PKT_HEADER)
#define CLF_RDMA_WINDOW 16		/* credits: data SENDs in flight */
/* Pieces from this size on move by RDMA READ/WRITE, not in SENDs. */
#define CLF_RDMA_DIRECT_MIN ((size_t)65536)
#define CLF_RDMA_CREDIT_BATCH 4		/* owed before a credit-only SEND */
/* Beyond the credit-only messages: the rendezvous' control messages (CTS,
 * DONE), of which each side has at most one unanswered at a time. */
#define CLF_RDMA_CTRL_RECVS 2
#define CLF_RDMA_EXTRA_RECVS (CLF_RDMA_WINDOW / CLF_RDMA_CREDIT_BATCH + 1 + \
			      CLF_RDMA_CTRL_RECVS)
#define CLF_RDMA_RECVS (CLF_RDMA_WINDOW + CLF_RDMA_EXTRA_RECVS)

enum clf_rdma_pkt_type {
	CLF_RDMA_PKT_DATA = 1,		/* stream bytes (and credits) */
	CLF_RDMA_PKT_CREDIT = 2,	/* credits only, no data */
	/*
	 * Bulk data moved by the server (the side that accepted), never by
	 * the client: so a daemon's memory is never open to its clients.
	 * RDESC and RTS stand in the stream for desc.len bytes and spend a
	 * credit like DATA; CTS and DONE answer them, outside the window.
	 */
	CLF_RDMA_PKT_RDESC = 3,	/* client: READ these bytes from me */
	CLF_RDMA_PKT_RTS = 4,	/* server: desc.len bytes follow, say where */
	CLF_RDMA_PKT_CTS = 5,	/* client: WRITE up to desc.len of them here */
	CLF_RDMA_PKT_DONE = 6,	/* server: desc.len bytes read or written */
};

/* The body of RDESC, RTS and DONE: one descriptor of 16 bytes,
 * little-endian; of a CTS: 1 to CLF_RDMA_CTS_MAX of them, the places
 * (in order) where the client wants the next bytes. */
#define CLF_RDMA_DESC_SIZE 16
#define CLF_RDMA_CTS_MAX 16
struct clf_rdma_desc {
	uint64_t addr;		/* in the client's address space */
	uint32_t rkey;		/* of the client's registration */
	uint32_t len;		/* bytes */
};

void clf_rdma_desc_encode(uint8_t out[CLF_RDMA_DESC_SIZE],
			  const struct clf_rdma_desc *d);
void clf_rdma_desc_decode(const uint8_t in[CLF_RDMA_DESC_SIZE],
			  struct clf_rdma_desc *d);

/* Whether a packet of this type spends a credit and joins the stream. */
bool clf_rdma_pkt_in_stream(uint8_t type);

/* A SEND's header, little-endian: magic, type, credits (u16), len (u32). */
struct clf_rdma_pkt {
	uint8_t type;		/* enum clf_rdma_pkt_type */
	uint16_t credits;	/* receive buffers the sender reposted */
	uint32_t len;		/* data bytes after the header */
};

void clf_rdma_pkt_encode(uint8_t out[CLF_RDMA_PKT_HEADER],
			 const struct clf_rdma_pkt *p);

/*
 * Decode the header of a SEND of got bytes (the completion's byte_len).
 * -EPROTO, with a clf_fail message, when it is shorter than a header,
 * has another magic or type, announces another length than arrived, or
 * is a credit message that carries data or no credits, or a rendezvous
 * message whose body is not one descriptor.
 */
int clf_rdma_pkt_decode(const uint8_t *buf, size_t got,
			struct clf_rdma_pkt *out);

/* One side's credits: what it may send, what it owes the peer. */
struct clf_rdma_credits {
	uint32_t tx;		/* data SENDs the peer has room for */
	uint32_t owed;		/* buffers reposted, not yet told */
	uint32_t window;	/* the most tx can be */
	uint32_t batch;		/* owed that calls for a credit message */
};

/* Both sides start with the whole window: every buffer is posted. */
void clf_rdma_credits_init(struct clf_rdma_credits *c, uint32_t window,
			   uint32_t batch);

/* May a data SEND go now? */
bool clf_rdma_credits_can_send(const struct clf_rdma_credits *c);

/* Spend a credit on a data SEND; returns the credits to piggyback on it
 * (all owed, now told). */
uint16_t clf_rdma_credits_spend(struct clf_rdma_credits *c);

/* The peer gave n back; -EPROTO when that is more than it could owe. */
int clf_rdma_credits_grant(struct clf_rdma_credits *c, uint32_t n);

/* This side consumed a data buffer and reposted it. */
void clf_rdma_credits_consumed(struct clf_rdma_credits *c);

/* Is a credit-only SEND due (a batch owed)? */
bool clf_rdma_credits_update_due(const struct clf_rdma_credits *c);

/* Take what is owed for a credit-only SEND (spends no credit). */
uint16_t clf_rdma_credits_take_owed(struct clf_rdma_credits *c);

#endif /* CLF_TRANSPORT_RDMA_WIRE_H */
