/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Access and bounds, one job: decide where a DATA packet's payload may go
 * (docs/PROTOCOL.md 8.3).  Each opcode names its target differently (a
 * region and address, a posted receive, an open read window); every check
 * ends in a NAK reason or in the payload's byte position in the domain's
 * memory map, inside that map.  No arithmetic can overflow: offsets from
 * the maps are capped at 2^48 before they are added.  The including
 * program defines the xr_domains, xr_mrs, xr_rq, xr_reads and xr_evb maps
 * before this.
 */
#ifndef XR_LIB_ACCESS_H
#define XR_LIB_ACCESS_H

#include <linux/bpf.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "contract/abi.h"
#include "contract/inline.h"
#include "lib/rx_pkt.h"

#define XR_ACCESS_MAX_OFF ((__u64)1 << 48)

/* A segment's offsets must fit its message. */
XR_INLINE __u8 xr_check_seg(__u32 plen, __u32 msg_len, __u32 msg_off)
{
	if (msg_off > msg_len || plen > msg_len - msg_off ||
	    (plen == 0 && msg_len != 0))
		return XR_NAK_BAD_LENGTH;
	return 0;
}

/* [pos, pos + len) must lie inside the domain's memory map. */
XR_INLINE __u8 xr_check_pos(const struct xr_conn *c, __u64 pos, __u64 len)
{
	struct xr_domain *dom = bpf_map_lookup_elem(&xr_domains, &c->domain);

	if (!dom || pos > dom->mem_bytes || len > dom->mem_bytes - pos)
		return XR_NAK_BOUNDS;
	return 0;
}

/* [raddr, raddr + len) must lie in a region of the connection's domain and
 * PD, registered with the access right needed; *pos gets its position in
 * the memory map. */
XR_INLINE __u8 xr_check_mr(const struct xr_conn *c, __u32 rkey, __u64 raddr,
			   __u64 len, __u32 access, __u64 *pos)
{
	struct xr_mr *mr;
	__u64 off;

	mr = bpf_map_lookup_elem(&xr_mrs, &rkey);
	if (!mr || mr->rkey != rkey || mr->domain != c->domain || mr->pd != c->pd)
		return XR_NAK_BAD_KEY;
	if (!(mr->access & access))
		return XR_NAK_ACCESS;
	if (raddr < mr->iova)
		return XR_NAK_BOUNDS;
	off = raddr - mr->iova;
	if (off > mr->len || len > mr->len - off)
		return XR_NAK_BOUNDS;
	if (mr->mem_off > XR_ACCESS_MAX_OFF || off > XR_ACCESS_MAX_OFF)
		return XR_NAK_BOUNDS;
	*pos = mr->mem_off + off;
	return xr_check_pos(c, *pos, len);
}

/* Where a SEND's payload goes: the receive posted for (stream, msn). */
XR_INLINE __u8 xr_check_send(const struct xr_conn *c, __u32 conn_id,
			     __u16 stream, __u32 msn, __u32 msg_len,
			     __u32 msg_off, __u32 plen, __u64 *pos)
{
	struct xr_rq_key k = { .conn = conn_id, .stream = stream,
			       .slot = (__u16)(msn % XR_RQ_SLOTS) };
	struct xr_evb *b = bpf_map_lookup_elem(&xr_evb, &conn_id);
	struct xr_rq_ent *r;
	__u32 state;

	/* A receive the library has completed, its entry not yet deleted
	 * (abi.h, xr_evb.rq_done): as good as gone.  Plain loads: a packet
	 * that reads rq_done just before the library's store (or, on a
	 * weakly ordered CPU, rq_on before rq_stream and rq_done) is the
	 * packet that looked an entry up just before its deletion was, a
	 * window the deletion never closed either. */
	if (b && b->rq_on && b->rq_stream == stream &&
	    (__s32)(msn - b->rq_done) < 0)
		return XR_NAK_RNR;
	r = bpf_map_lookup_elem(&xr_rq, &k);
	if (!r)
		return XR_NAK_RNR;
	/* Claim it first (abi.h, xr_rq): OPEN becomes TAKEN, and one the
	 * library took back stays RECALLED, refused like a missing one.
	 * Only then read it, and make sure it is still the entry looked up:
	 * claimed, it cannot be taken back or reused any more. */
	state = *(volatile __u32 *)&r->state;
	if (state == XR_RQ_OPEN)
		state = __sync_val_compare_and_swap(&r->state, XR_RQ_OPEN,
						    XR_RQ_TAKEN);
	if (state == XR_RQ_RECALLED || r->msn != msn || r->conn != conn_id ||
	    r->stream != stream)
		return XR_NAK_RNR;
	if (msg_len > r->len)
		return XR_NAK_BAD_LENGTH;
	if (r->mem_off > XR_ACCESS_MAX_OFF)
		return XR_NAK_BOUNDS;
	*pos = r->mem_off + msg_off;
	return xr_check_pos(c, *pos, plen);
}

/* Where a READ_RESP's payload goes: the window its read opened. */
XR_INLINE __u8 xr_check_read_resp(const struct xr_conn *c, __u32 conn_id,
				  __u32 read_id, __u32 msg_len, __u32 msg_off,
				  __u32 plen, __u64 *pos)
{
	struct xr_read_key k = { .conn = conn_id, .read_id = read_id };
	struct xr_read_ent *r = bpf_map_lookup_elem(&xr_reads, &k);

	if (!r)
		return XR_NAK_BAD_KEY;
	if (msg_len != r->len)
		return XR_NAK_BAD_LENGTH;
	if (r->mem_off > XR_ACCESS_MAX_OFF)
		return XR_NAK_BOUNDS;
	*pos = r->mem_off + msg_off;
	return xr_check_pos(c, *pos, plen);
}

/* A READ_RESP that says the responder cannot answer (XR_DF_ERR): no
 * payload, and it must name a read we have open, like an answer. */
XR_INLINE __u8 xr_check_read_err(const struct xr_conn *c,
				 const struct xr_rx_pkt *pk, __u64 *pos)
{
	if (pk->plen || pk->msg_off > pk->msg_len)
		return XR_NAK_BAD_LENGTH;
	return xr_check_read_resp(c, pk->conn_id, pk->read_id, pk->msg_len,
				  pk->msg_off, 0, pos);
}

/* A READ_REQ is one packet carrying struct xr_read_req (loaded into rr):
 * what it asks to read must be readable; *pos is where that lies.  It is
 * answered by the responder's library (XDP cannot send many packets). */
XR_INLINE __u8 xr_check_read_req(struct xdp_md *ctx, __u32 pkt_off,
				 const struct xr_rx_pkt *pk,
				 const struct xr_conn *c,
				 struct xr_read_req *rr, __u64 *pos)
{
	if (pk->plen != sizeof(*rr) || pk->msg_len != sizeof(*rr) ||
	    pk->msg_off || bpf_xdp_load_bytes(ctx, pkt_off, rr, sizeof(*rr)))
		return XR_NAK_BAD_LENGTH;
	return xr_check_mr(c, pk->rkey, pk->raddr, bpf_ntohl(rr->len),
			   XR_ACCESS_REMOTE_READ, pos);
}

/* Where the payload (at pkt_off) of DATA packet pk may go: a NAK reason,
 * or 0 with *pos set. */
XR_INLINE __u8 xr_check_access(struct xdp_md *ctx, __u32 pkt_off,
			       const struct xr_rx_pkt *pk,
			       const struct xr_conn *c,
			       struct xr_read_req *rr, __u64 *pos)
{
	__u8 nak;

	if (pk->opcode == XR_OP_READ_REQ)
		return xr_check_read_req(ctx, pkt_off, pk, c, rr, pos);
	if (pk->opcode == XR_OP_READ_RESP && (pk->flags & XR_DF_ERR))
		return xr_check_read_err(c, pk, pos);
	nak = xr_check_seg(pk->plen, pk->msg_len, pk->msg_off);
	if (nak)
		return nak;
	switch (pk->opcode) {
	case XR_OP_WRITE:
	case XR_OP_WRITE_IMM:
		return xr_check_mr(c, pk->rkey, pk->raddr, pk->plen,
				   XR_ACCESS_REMOTE_WRITE, pos);
	case XR_OP_SEND:
	case XR_OP_SEND_IMM:
		return xr_check_send(c, pk->conn_id, pk->stream, pk->msn,
				     pk->msg_len, pk->msg_off, pk->plen, pos);
	case XR_OP_READ_RESP:
		return xr_check_read_resp(c, pk->conn_id, pk->read_id,
					  pk->msg_len, pk->msg_off, pk->plen,
					  pos);
	default:
		return XR_NAK_BAD_OPCODE;
	}
}

#endif /* XR_LIB_ACCESS_H */
