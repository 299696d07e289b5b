/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ACK and NAK frames, one job: turn a received DATA frame, in place, into
 * the ACK (or NAK) of its path (docs/PROTOCOL.md 5.2), ready for XDP_TX.
 * What the answer reports of the receive state is copied out under the
 * connection's lock first (struct xr_ack_info), so building the frame
 * needs no lock.
 */
#ifndef XR_LIB_ACK_H
#define XR_LIB_ACK_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include "contract/abi.h"
#include "contract/inline.h"
#include "contract/rxwin.h"
#include "lib/reply.h"
#include "lib/rx_pkt.h"
#include "lib/mac.h"

/* What an ACK reports of its path and connection, and (keyed) how it is
 * signed. */
struct xr_ack_info {
	__u32 cack;
	__u32 ce_pkts;
	__u32 rx_pkts;
	__u32 csn_cum;
	__u64 sack[XR_SACK_WORDS];
	__u64 mk[2];             /* keyed: the reply key of the packet's epoch */
	__u32 keyed;
	__u32 kflags;            /* XR_AF_EPOCH / XR_AF_KNEXT to report */
};

/* How answers of connection c to a packet of the peer's epoch slot s are
 * signed: unkeyed, not at all; keyed, with that epoch's reply key,
 * reporting s and whether we hold the next epoch's keys. */
XR_INLINE void xr_ack_info_keys(struct xr_ack_info *ai,
				const struct xr_conn *c, __u32 s)
{
	ai->keyed = (c->flags & XR_CONN_F_MAC) != 0;
	if (!ai->keyed)
		return;
	s &= 1;
	ai->mk[0] = c->kpeer[s].reply[0];
	ai->mk[1] = c->kpeer[s].reply[1];
	ai->kflags = (s ? XR_AF_EPOCH : 0) | (xr_mac_knext(c, s) ? XR_AF_KNEXT : 0);
}

/* Copy what an ACK reports (the caller holds the receive state's lock). */
XR_INLINE void xr_ack_info_copy(struct xr_ack_info *ai,
				const struct xr_rx_path *p,
				const struct xr_rx_state *rx)
{
	ai->cack = p->cack;
	ai->ce_pkts = p->ce_pkts;
	ai->rx_pkts = p->rx_pkts;
	ai->csn_cum = rx->csn_next;
	ai->sack[0] = p->sack[0];
	ai->sack[1] = p->sack[1];
	ai->sack[2] = p->sack[2];
	ai->sack[3] = p->sack[3];
}

/* Does the path's bitmap show a gap (a PSN beyond cack arrived)? */
XR_INLINE int xr_ack_gap(const struct xr_ack_info *ai)
{
	return (ai->sack[0] | ai->sack[1] | ai->sack[2] | ai->sack[3]) != 0;
}

/* Did packet psn open a gap: is it beyond cack while the PSN just before
 * it has not arrived (ai: the path's state with psn recorded)?  Only
 * those are answered for the gap's sake: the first ACK past a hole shows
 * it to the sender (the gap rule, PROTOCOL.md 10.1), and answering every
 * packet while the hole stays open (about an RTT) only repeated that, for
 * half of all the ACKs at 10% loss. */
XR_INLINE int xr_ack_gap_edge(__u32 psn, const struct xr_ack_info *ai)
{
	__s32 d = (__s32)(psn - ai->cack);
	__u32 bit;

	if (d <= 0)
		return 0;       /* at or below cack: in order, or it filled one */
	if (d == 1)
		return 1;       /* PSN cack, just before it, is the hole */
	bit = (__u32)d - 2; /* PSN psn - 1 = cack + 1 + bit */
	if (bit >= XR_SACK_BITS)
		return 1;
	return !xr_sack_test(ai->sack, bit);
}

/* Rewrite the frame of DATA packet pk (v6: its IP version) into the ACK,
 * or with a reason the NAK, of its path: to the peer's connection with its
 * token (keyed: signed), echoing pk's path, PSN and timestamp.  0, or -1
 * when the frame cannot be resized. */
XR_INLINE int xr_ack_build(struct xdp_md *ctx, int v6,
			   const struct xr_rx_pkt *pk,
			   const struct xr_ack_info *ai, __u8 flags,
			   __u8 reason, __u32 hint)
{
	struct xr_ack_hdr *a;
	struct xr_hdrs h;
	__u32 i;

	a = xr_reply_begin(ctx, &h, v6, sizeof(*a));
	if (!a)
		return -1;
	a->ver_type = XR_VER_TYPE(reason ? XR_T_NAK : XR_T_ACK);
	if (xr_ack_gap(ai))
		flags |= XR_AF_SACK; /* else the sender reads no SACK bits */
	a->flags = flags;
	a->reason = reason;
	a->path = pk->path;
	a->dst_conn = bpf_htonl(pk->peer_conn);
	a->token = bpf_cpu_to_be64(pk->tx_token);
	a->cack = bpf_htonl(ai->cack);
	a->ack_psn = bpf_htonl(pk->psn);
	a->ts_echo = pk->ts;
	a->rate_hint = bpf_htonl(hint);
#pragma clang loop unroll(full)
	for (i = 0; i < XR_SACK_WORDS; i++)
		a->sack[i] = bpf_cpu_to_be64(ai->sack[i]);
	a->ce_pkts = bpf_htonl(ai->ce_pkts);
	a->rx_pkts = bpf_htonl(ai->rx_pkts);
	a->csn_cum = bpf_htonl(ai->csn_cum);
	a->nak_csn = reason ? bpf_htonl(pk->csn) : 0;
	if (ai->keyed) {
		a->flags = flags | (__u8)ai->kflags;
		xr_mac_sign(ai->mk, (__u8 *)a, sizeof(*a));
	}
	xr_reply_finish(ctx, &h, sizeof(*a));
	return 0;
}

#endif /* XR_LIB_ACK_H */
