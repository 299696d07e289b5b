/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames from fixture rows: the Ethernet/IP/UDP frame a step describes
 * (tests/bpf/frames.h builds the layers), with its xroce header and
 * payload, then whatever the row breaks in it (fragment, corruption,
 * checksum, UDP length, padding, truncation); and what went into it, for
 * checking what comes out.  Included once, by bpf_xdp_table.c.
 */
#ifndef XR_TEST_XDP_FRAME_H
#define XR_TEST_XDP_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "contract/abi.h"
#include "frames.h"
#include "xdp_env.h"

static uint8_t payload_byte(uint8_t seed, size_t j)
{
	return (uint8_t)(seed * 0x9d + j * 7 + (j >> 7) * 13 + 1);
}


/* What the test put into a frame, for checking what came out. */
struct built {
	uint32_t psn, csn, ts, msg_id, msg_len, msg_off, imm, plen, seq;
	uint64_t raddr, pos;
	uint16_t stream;
	uint8_t opcode, path, seed, tclass;
	int dom_idx;            /* domain the region belongs to, -1 none */
	size_t payload_off;     /* of the payload in the frame */
};

static size_t xhdr_len(uint8_t kind)
{
	switch (kind) {
	case K_ACK:
	case K_NAK:
		return sizeof(struct xr_ack_hdr);
	case K_PROBE:
	case K_PROBE_REPLY:
		return sizeof(struct xr_probe_hdr);
	case K_CTRL:
		return sizeof(struct xr_ctrl_msg);
	default:
		return sizeof(struct xr_data_hdr);
	}
}

/* Turn an IPv6 frame into a first fragment (fragment header inserted). */
static size_t make_frag6(uint8_t *f, size_t n)
{
	uint8_t tmp[FR_MAX];
	size_t l4 = FR_ETH + FR_IP6;

	memcpy(tmp, f, n);
	memcpy(f + l4 + 8, tmp + l4, n - l4);
	f[l4] = 17;       /* next header: UDP */
	f[l4 + 1] = 0;
	fr_put16(f + l4 + 2, 0x0001); /* offset 0, M */
	fr_put32(f + l4 + 4, 0xabcdef01);
	f[FR_ETH + 6] = 44;
	fr_put16(f + FR_ETH + 4, fr_get16(f + FR_ETH + 4) + 8);
	return n + 8;
}

/* Build the frame of step st (repetition r) into f; returns its length. */
static size_t build(struct env *e, const struct step *st, int idx, int r,
		    uint8_t *f, struct built *b)
{
	const struct fr_ep *peers = e->v6 ? peer6 : peer4;
	const struct fr_ep *locals = e->v6 ? local6 : local4;
	struct fr_ep src, dst;
	uint8_t body[FR_MAX];
	size_t blen = xhdr_len(st->kind), n, l4, j;
	uint32_t conn = st->conn ? st->conn : CONN;
	uint64_t token = st->bad_token ? RX_TOKEN ^ 1 : RX_TOKEN;
	const struct mrdef *m = &mrs[st->rk];

	memset(b, 0, sizeof(*b));
	src = peers[st->src ? st->src : st->plane];
	dst = locals[st->plane];
	if (st->kind == K_ACK || st->kind == K_NAK ||
	    st->kind == K_PROBE_REPLY) {
		/* replies: from the peer's data port to our entropy port */
		src.port = PORT;
		dst.port = (uint16_t)(SPORT_LO_B + (st->path & 15));
	} else {
		src.port = (uint16_t)(SPORT_LO + (st->path & 15));
		dst.port = PORT;
	}
	if (st->sport)
		src.port = st->sport;
	if (st->dport)
		dst.port = st->dport;
	b->path = st->path;
	b->tclass = DSCP | st->ecn;
	b->psn = e->S + st->psn + (uint32_t)r;
	b->csn = e->C + st->csn + (uint32_t)r;
	b->ts = 0x7e570000u + (uint32_t)idx * 0x100 + (uint32_t)r;
	b->seed = (uint8_t)((st->seed ? st->seed : idx + 1) + r);
	b->plen = st->plen;
	b->msg_id = st->msg_id;
	b->msg_len = st->msg_len;
	b->msg_off = st->msg_off + (uint32_t)r * st->plen;
	b->imm = st->imm ? st->imm : 0xc0de0000u ^ st->msg_id;
	b->stream = RQ_STREAM;
	b->opcode = st->op ? (uint8_t)st->op : XR_OP_WRITE;
	b->raddr = st->abs ? st->raddr
			   : m->mr.iova + st->roff + (uint64_t)r * st->plen;
	b->dom_idx = m->dom_idx;
	b->pos = m->mr.mem_off + (b->raddr - m->mr.iova);
	b->seq = st->seq;

	if (st->kind == K_LOOP) {
		memcpy(f, e->last_out, e->last_outn);
		return e->last_outn;
	}
	if (st->kind == K_TCP)
		return fr_tcp_syn(f, e->v6, &src, &dst);
	if (st->kind == K_ARP)
		return fr_arp(f, &peer4[0], &local4[0]);

	memset(body, 0, sizeof(body));
	switch (st->kind) {
	case K_ACK:
	case K_NAK:
		body[0] = XR_VER_TYPE(st->kind == K_ACK ? XR_T_ACK : XR_T_NAK);
		body[1] = st->a.flags;
		body[2] = st->a.reason;
		body[3] = st->path;
		fr_put32(body + 4, conn);
		fr_put64(body + 8, token);
		fr_put32(body + 16, st->a.cack);
		fr_put32(body + 20, st->a.ack_psn);
		fr_put32(body + 24, st->a.ts_echo);
		fr_put32(body + 28, st->a.rate);
		for (j = 0; j < 4; j++)
			fr_put64(body + 32 + 8 * j, st->a.sack[j]);
		fr_put32(body + 64, st->a.ce);
		fr_put32(body + 68, st->a.rx);
		fr_put32(body + 72, st->a.csn_cum);
		fr_put32(body + 76, st->a.nak_csn);
		break;
	case K_PROBE:
	case K_PROBE_REPLY:
		body[0] = XR_VER_TYPE(st->kind == K_PROBE ? XR_T_PROBE
							  : XR_T_PROBE_REPLY);
		body[3] = st->path;
		fr_put32(body + 4, conn);
		fr_put64(body + 8, token);
		fr_put32(body + 16, st->seq);
		fr_put32(body + 20, b->ts);
		fr_put32(body + 24, st->a.rate);
		break;
	case K_CTRL:
		body[0] = XR_VER_TYPE(XR_T_CTRL);
		body[1] = st->op ? (uint8_t)st->op : XR_CTRL_BIND;
		fr_put32(body + 4, conn);
		fr_put64(body + 16, 0xb1d0000000000000ull | (uint64_t)idx);
		fr_put32(body + 24, PEER_CONN);
		fr_put64(body + 32, TX_TOKEN);
		for (j = 64; j < blen; j++)
			body[j] = payload_byte(b->seed, j);
		break;
	default: /* data */
		body[0] = XR_VER_TYPE(XR_T_DATA);
		body[1] = st->flags;
		body[2] = b->opcode;
		body[3] = st->path;
		fr_put32(body + 4, conn);
		fr_put64(body + 8, token);
		fr_put32(body + 16, b->psn);
		fr_put32(body + 20, e->S + st->base);
		fr_put32(body + 24, b->csn);
		fr_put32(body + 28, b->ts);
		fr_put64(body + 32, b->raddr);
		fr_put32(body + 40, m->key);
		fr_put32(body + 44, b->msg_id);
		fr_put32(body + 48, b->msg_len);
		fr_put32(body + 52, b->msg_off);
		fr_put32(body + 56, b->imm);
		fr_put16(body + 60, b->stream);
		for (j = 0; j < st->plen; j++)
			body[blen + j] = payload_byte(b->seed, j);
		blen += st->plen;
		break;
	}
	if (st->vt)
		body[0] = (uint8_t)st->vt;

	n = fr_udp(f, e->v6, &src, &dst, b->tclass, body, blen);
	l4 = n - FR_UDP - blen;
	b->payload_off = l4 + FR_UDP + xhdr_len(st->kind);

	if (st->kind == K_FRAG) {
		if (!e->v6) {
			fr_put16(f + FR_ETH + 6, 0x2000); /* MF, offset 0 */
			fr_put16(f + FR_ETH + 10, 0);
			fr_put16(f + FR_ETH + 10,
				 (uint16_t)~fr_sum(f + FR_ETH, FR_IP4, 0));
		} else {
			n = make_frag6(f, n);
		}
	}
	if (st->corrupt)
		f[b->payload_off + st->corrupt - 1] ^= 0x01;
	if (st->csum == CS_FLIP)
		f[l4 + 6] ^= 0x01;
	else if (st->csum == CS_ZERO)
		fr_put16(f + l4 + 6, 0);
	else if (st->csum == CS_PARTIAL)
		fr_put16(f + l4 + 6, fr_pseudo(e->v6, fr_saddr(f, e->v6),
					       fr_daddr(f, e->v6), 17,
					       fr_get16(f + l4 + 4)));
	if (st->udp_len_delta)
		fr_put16(f + l4 + 4,
			 (uint16_t)(fr_get16(f + l4 + 4) + st->udp_len_delta));
	if (st->junk) {
		memset(f + n, 0xee, (size_t)st->junk);
		n += (size_t)st->junk;
	}
	switch (st->trunc) {
	case TR_ETH:
		n = FR_ETH;
		break;
	case TR_IP:
		n = FR_ETH + 10;
		break;
	case TR_UDP_HALF:
		n = l4 + 4;
		break;
	case TR_UDP:
		n = l4 + FR_UDP;
		break;
	case TR_X1:
		n = l4 + FR_UDP + 1;
		break;
	case TR_HDR_M1:
		n = l4 + FR_UDP + xhdr_len(st->kind) - 1;
		break;
	case TR_PAYLOAD:
		n = b->payload_off + st->plen / 2;
		break;
	}
	return n;
}

#endif /* XR_TEST_XDP_FRAME_H */
