/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A received DATA packet, one job: read the header fields the receive path
 * decides on once, in host order, next to the connection's identities, so
 * that each step of the path works on the same values (and the verifier
 * sees the value a step checked, not a fresh read of the packet).
 */
#ifndef XR_LIB_RX_PKT_H
#define XR_LIB_RX_PKT_H

#include <linux/types.h>
#include <bpf/bpf_endian.h>
#include "contract/abi.h"
#include "contract/inline.h"

struct xr_rx_pkt {
	__u64 raddr;
	__u64 tx_token;          /* the connection's token for the peer */
	__u32 conn_id;           /* our connection id (dst_conn) */
	__u32 peer_conn;         /* the peer's id for it */
	__u32 plen;              /* payload bytes */
	__u32 psn, base, csn;    /* base: psn_base */
	__u32 msg_id, msg_len, msg_off;
	union {                  /* as wire.h: the opcode says which */
		__u32 rkey;
		__u32 msn;
		__u32 read_id;
	};
	__be32 ts;               /* echoed as it came */
	__u16 stream;
	__u8 path, flags, opcode;
};

/* Read DATA header d of connection c (pk->conn_id, pk->plen already set). */
XR_INLINE void xr_rx_decode(struct xr_rx_pkt *pk, const struct xr_data_hdr *d,
			    const struct xr_conn *c)
{
	pk->path = d->path;
	pk->flags = d->flags;
	pk->opcode = d->opcode;
	pk->psn = bpf_ntohl(d->psn);
	pk->base = bpf_ntohl(d->psn_base);
	pk->csn = bpf_ntohl(d->csn);
	pk->ts = d->ts;
	pk->raddr = bpf_be64_to_cpu(d->raddr);
	pk->rkey = bpf_ntohl(d->rkey); /* the whole union */
	pk->msg_id = bpf_ntohl(d->msg_id);
	pk->msg_len = bpf_ntohl(d->msg_len);
	pk->msg_off = bpf_ntohl(d->msg_off);
	pk->stream = bpf_ntohs(d->stream);
	pk->peer_conn = c->peer_conn;
	pk->tx_token = c->tx_token;
}

#endif /* XR_LIB_RX_PKT_H */
