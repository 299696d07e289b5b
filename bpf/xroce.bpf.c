// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce datapath (XDP).  On every interface xroce is attached to:
 *
 *  data    parse, authenticate (connection, token, peer address and port),
 *          verify the UDP checksum, validate placement (rkey, domain, PD,
 *          access, bounds, no overflow), record the packet in its path's
 *          receive window and the connection's CSN window, place new payload
 *          straight into the domain's memory, count the message's bytes and
 *          emit a RECV event when its last byte lands, then answer with an
 *          ACK or NAK built from the same frame (XDP_TX) when one is due.
 *  ack/nak authenticate and hand a compact record to the owning domain's
 *          ring buffer, so the library never parses frames.
 *  probe   answer in place with a probe reply (XDP_TX).
 *  bind    a peer's half of a connection made from out-of-band information
 *          (wire.h, XR_CTRL_BIND): to the owning domain's ring buffer.
 *  other   XDP_PASS, untouched.
 *
 * Each of those is a function below made of named steps; the steps that
 * are one job of their own live in bpf/lib/ (auth.h, access.h, alive.h,
 * rate_hint.h, ack.h, place.h, ...).
 *
 * Maps and records: include/contract/abi.h.  Wire format: include/contract/wire.h.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "contract/inline.h"
#include "contract/abi.h"
#include "contract/rxwin.h"
#include "lib/parse.h"
#include "lib/udp_csum.h"
#include "lib/place.h"
#include "lib/reply.h"
#include "lib/ack.h"
#include "lib/txring_build.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_cfg);
} xr_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__type(value, struct xr_domain);
} xr_domains SEC(".maps");

/* Each domain's memory: an mmapable array of 4 KiB pages, also its UMEM.
 * BPF_F_INNER_MAP lets every domain size its own. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
		__uint(max_entries, 1);
		/* sizes, not BTF types: a key type without a value type
		 * makes the kernel refuse the map's BTF (libbpf then
		 * retries without it, and says so on every load) */
		__uint(key_size, sizeof(__u32));
		__uint(value_size, XR_PAGE_SIZE);
	});
} xr_mem SEC(".maps");

/* Transmit rings of the test-run engine, by (domain, plane):
 * include/contract/txring.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS * XR_MAX_PLANES);
	__type(key, struct xr_txq_key);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_MMAPABLE);
		__uint(max_entries, XR_TXR_RING + 1);
		__uint(key_size, sizeof(__u32));
		__uint(value_size, sizeof(struct xr_txr_desc));
	});
} xr_txq SEC(".maps");

/* Each domain's event ring (ACK records, completions). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, XR_EVQ_BYTES);
	});
} xr_evq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_MRS);
	__type(key, __u32);
	__type(value, struct xr_mr);
} xr_mrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS);
	__type(key, __u32);
	__type(value, struct xr_conn);
} xr_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS);
	__type(key, __u32);
	__type(value, struct xr_rx_state);
} xr_rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS * XR_MSG_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} xr_msgs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_act);
} xr_act SEC(".maps");

/* Per-CPU room for an event record, an ACK's contents and a READ request:
 * the BPF stack (512 bytes for the whole call chain) is too small for the
 * data path and these. */
struct xr_scratch {
	struct xr_evt e;
	struct xr_ack_info ai;
	struct xr_read_req rr;
	__u8 csum_buf[512];      /* checksums across fragments */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_scratch);
} xr_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_RQ);
	__type(key, struct xr_rq_key);
	__type(value, struct xr_rq_ent);
} xr_rq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_READS);
	__type(key, struct xr_read_key);
	__type(value, struct xr_read_ent);
} xr_reads SEC(".maps");

/* Fair shares of the event rings (lib/budget.h): per connection, records
 * written and (by the library, through its mapping) consumed. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS);
	__type(key, __u32);
	__type(value, struct xr_evb);
} xr_evb SEC(".maps");

/* XDP's own, per domain: the records it held back in the domain's ring
 * (lib/budget.h): where the last one ends (the ring's producer position
 * after it) and how many holds are under way. */
struct xr_evq_held {
	__u64 end;
	__u32 busy;
	__u32 pad;
};

/* xr_evq_held by domain, created at a domain's first held record and kept:
 * a domain id used again finds an end past its new ring's producer, which
 * lib/budget.h takes for none.  Full, a domain without an entry holds
 * nothing back. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__type(value, struct xr_evq_held);
} xr_evq_held SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xr_stats SEC(".maps");

/* Latency breakdowns (lib/trace.h): a ring of timestamps, read by the
 * libraries that trace (mmapped). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XR_TRACE_SLOTS + 1);
	__type(key, __u32);
	__type(value, struct xr_trace_rec);
} xr_trace SEC(".maps");
/* Per-interface flags (abi.h: XR_IF_*), set by `xroce attach`. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_MAX_IFS);
	__type(key, __u32);
	__type(value, __u32);
} xr_ifs SEC(".maps");

/* Steps that use the maps above. */
#include "lib/stats.h"
#include "lib/trace.h"
#include "lib/auth.h"
#include "lib/alive.h"
#include "lib/rate_hint.h"
#include "lib/access.h"
#include "lib/budget.h"

/* Global (non-static) functions are verified once, on their own, instead
 * of once per path through their caller: placement and checksumming fan
 * out into many verifier states, so keeping them global keeps the
 * program's verification small enough for older kernels. */

/* Copy len payload bytes at pkt_off into domain's memory at pos. */
__noinline int xr_place_global(struct xdp_md *ctx, __u32 domain, __u64 pos,
			       __u32 pkt_off, __u32 len)
{
	void *mem = bpf_map_lookup_elem(&xr_mem, &domain);

	if (!mem)
		return -1;
	return xr_place(ctx, mem, pos, pkt_off, len);
}

/* 1 if the UDP checksum of a datagram (udp_len bytes) that continues in
 * the fragments of a multi-buffer frame is right.  A function of its own
 * with a small stack (the pseudo header is built in the scratch buffer),
 * so the deepest call chain stays within 512 bytes. */
__noinline int xr_csum_ok_frags_global(struct xdp_md *ctx, __u32 udp_len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct xr_scratch *sc;
	struct udphdr *udp;
	__u32 zero = 0, sum, off;
	__u8 *b;

	if ((void *)(eth + 1) > end || udp_len > XR_CSUM_MAX_SPAN)
		return 0;
	sc = bpf_map_lookup_elem(&xr_scratch, &zero);
	if (!sc)
		return 0;
	b = sc->csum_buf;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return 0;
		__builtin_memcpy(b, &ip->saddr, 8);
		b[8] = 0;
		b[9] = IPPROTO_UDP;
		b[10] = (__u8)(udp_len >> 8);
		b[11] = (__u8)udp_len;
		sum = xr_csum_add(b, 12, 0);
		udp = (void *)(ip + 1);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return 0;
		__builtin_memcpy(b, &ip6->saddr, 32);
		b[32] = (__u8)(udp_len >> 24);
		b[33] = (__u8)(udp_len >> 16);
		b[34] = (__u8)(udp_len >> 8);
		b[35] = (__u8)udp_len;
		b[36] = b[37] = b[38] = 0;
		b[39] = IPPROTO_UDP;
		sum = xr_csum_add(b, 40, 0);
		udp = (void *)(ip6 + 1);
	}
	if ((void *)(udp + 1) > end || udp->check == 0)
		return 0;
	off = (__u32)((void *)udp - data);
	sum = xr_csum_frags(ctx, off, udp_len, sum, b);
	return sum && xr_csum_fold(sum) == 0xffff;
}

/* 1 if the UDP checksum of a datagram (udp_len bytes) in the frame's
 * linear part is right, 0 if not, -1 if the datagram continues in
 * fragments. */
__noinline int xr_csum_ok_global(struct xdp_md *ctx, __u32 udp_len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xr_hdrs h;

	if (xr_parse(data, end, &h) != XR_PARSE_OK || !h.udp || udp_len > 0xffff)
		return 0;
	if ((void *)h.udp + udp_len > end)
		return -1; /* continues in fragments */
	return xr_udp_csum_ok(&h, end, (__u16)udp_len);
}

/* 1 if the datagram arrived partially checksummed on an interface where
 * the kernel hands XDP such frames (abi.h: xr_ifs, XR_IF_CSUM_PARTIAL). */
__noinline int xr_csum_partial_global(struct xdp_md *ctx, __u32 udp_len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 ifindex = ctx->ingress_ifindex;
	struct xr_hdrs h;
	__u32 *flags;

	flags = bpf_map_lookup_elem(&xr_ifs, &ifindex);
	if (!flags || !(*flags & XR_IF_CSUM_PARTIAL))
		return 0;
	if (xr_parse(data, end, &h) != XR_PARSE_OK || !h.udp || udp_len > 0xffff)
		return 0;
	return xr_udp_csum_is_partial(&h, end, (__u16)udp_len);
}

/* ---- steps every packet type takes ------------------------------------ */

/* Length of the UDP datagram, if it fits in the frame and holds at least
 * min_body bytes of xroce header; 0 otherwise. */
XR_INLINE __u32 xr_udp_len(struct xdp_md *ctx, const struct xr_hdrs *h,
			   void *end, __u32 min_body)
{
	__u32 len = bpf_ntohs(h->udp->len);

	/* Older verifiers (6.1) lose the 16-bit bound of a byte swap; an
	 * explicit mask they can see keeps packet arithmetic bounded. */
	asm volatile("%0 &= 0xffff" : "+r"(len));

	if (len < sizeof(struct udphdr) + min_body)
		return 0;
	/* The headers are in the linear part (callers check); the datagram
	 * may continue in the fragments of a multi-buffer frame. */
	if ((void *)h->udp + len > end &&
	    h->l4_off + len > bpf_xdp_get_buff_len(ctx))
		return 0;
	return len;
}

/* Parse: the UDP length of a packet whose xroce header (hdr_len bytes) is
 * in the frame's linear part and whose datagram fits the frame; 0 when it
 * is truncated. */
XR_INLINE __u32 xr_rx_len(struct xdp_md *ctx, const struct xr_hdrs *h,
			  void *end, __u32 hdr_len)
{
	if ((void *)(h->udp + 1) + hdr_len > end)
		return 0;
	return xr_udp_len(ctx, h, end, hdr_len);
}

/* Is the datagram's UDP checksum right, in the linear part or across the
 * fragments of a multi-buffer frame?  Or, on an interface flagged for it,
 * is the datagram partially checksummed (counted)? */
XR_INLINE int xr_csum_ok(struct xdp_md *ctx, __u32 udp_len)
{
	int ok = xr_csum_ok_global(ctx, udp_len);

	if (ok < 0)
		ok = xr_csum_ok_frags_global(ctx, udp_len);
	if (!ok && xr_csum_partial_global(ctx, udp_len)) {
		xr_count(XR_STAT_RX_CSUM_PARTIAL);
		ok = 1;
	}
	return ok;
}

/* Authenticate and checksum: the connection the packet (xroce header x,
 * hdr_len bytes) names, if it may speak for it (lib/auth.h: token or MAC)
 * and, when verification is on, its checksum is right.  Otherwise NULL,
 * with *why set to the drop reason. */
XR_INLINE struct xr_conn *xr_admit(struct xdp_md *ctx,
				   const struct xr_hdrs *h, void *end,
				   const struct xr_cfg *cfg, __u32 conn_id,
				   const void *x, __u32 hdr_len, __u8 epoch_flag,
				   __u32 udp_len, int reply, __u32 *why)
{
	struct xr_conn *c = xr_auth(h, end, conn_id, x, hdr_len, reply,
				    epoch_flag, why);

	if (c && (cfg->flags & XR_CFG_VERIFY_CSUM) && !xr_csum_ok(ctx, udp_len)) {
		*why = XR_STAT_DROP_CSUM;
		return NULL;
	}
	return c;
}

/* ---- DATA ------------------------------------------------------------- */

/* What the steps of xr_rx_data decided about one packet.  Whole ints, not
 * bytes: with byte fields clang's code costs 6.1's verifier some 15% more
 * instructions (it tracks the narrowed copies less precisely). */
struct xr_rx_verdict {
	int nak;         /* NAK reason (XR_NAK_*), 0 when accepted */
	int ce;          /* the IP ECN field is CE */
	int new_active;  /* the connection's first data in this rate window */
	int ack_now;     /* answer at once, whatever the flags say */
	int done;        /* the packet's bytes completed its message */
	int pv;          /* path window: XR_RXW_NEW or XR_RXW_OLD */
	int cv;          /* CSN window: XR_RXW_NEW, or XR_RXW_OLD (also when
	                  * NAKed: a refused packet is not recorded) */
	int tr;          /* the connection is traced (XR_CONN_F_TRACE) */
};

/* Owner and room: the domain's owner is alive and, for data that will be
 * accepted, its event ring has room, the connection has not used up its
 * share of it, and its memory exists.  A drop reason, or 0 with *evq the
 * domain's event ring. */
XR_INLINE __u32 xr_rx_room(struct xdp_md *ctx, const struct xr_hdrs *h,
			   void *end, const struct xr_conn *c, __u32 conn_id,
			   __u8 nak, __u64 now, void **evq)
{
	__u32 why;

	if (!xr_domain_alive(ctx, h, end, c->domain, now))
		return XR_STAT_DROP_DEAD;
	*evq = bpf_map_lookup_elem(&xr_evq, &c->domain);
	if (!*evq)
		return XR_STAT_DROP_NO_MEM;
	if (nak)
		return 0;
	/* Backpressure: refuse (unacknowledged, so retransmitted later)
	 * rather than risk losing a completion to a full ring. */
	why = xr_evq_room(*evq, c->domain, conn_id, XR_EVQ_RESERVE,
			  XR_STAT_DROP_EVQ_FULL);
	if (why)
		return why;
	if (!bpf_map_lookup_elem(&xr_mem, &c->domain))
		return XR_STAT_DROP_NO_MEM;
	return 0;
}

/* Path window p's verdict on psn: XR_RXW_NEW, _OLD or _OOW (beyond the
 * window).  An accepted packet is recorded; a refused one (nak) only has
 * its place judged and is recorded nowhere, not even in its path's window:
 * if our NAK is lost, the sender sees a gap, resends, and is refused
 * again; a later ACK can never make it look delivered. */
XR_INLINE int xr_rx_path_record(struct xr_rx_path *p, __u32 psn, __u8 nak)
{
	if (!nak)
		return xr_rxw_accept(p, psn);
	return xr_seq_diff(psn, p->cack) > XR_SACK_BITS ? XR_RXW_OOW :
							   XR_RXW_NEW;
}

/* Count the packet on its path and, unless refused, record its CSN; note
 * whether the connection became an active sender (lib/rate_hint.h).  The
 * caller holds the receive state's lock. */
XR_INLINE void xr_rx_count(struct xr_rx_state *rx, struct xr_rx_path *p,
			   __u32 csn, __u32 plen, const struct xr_cfg *cfg,
			   __u64 now, struct xr_rx_verdict *v)
{
	p->rx_pkts++;
	if (v->ce)
		p->ce_pkts++;
	if (!v->nak) {
		v->cv = xr_csn_accept(rx, csn);
		if (v->cv == XR_RXW_NEW)
			p->rx_bytes += plen;
		else
			p->dup_pkts++;
	}
	rx->last_rx_ns = now;
	if (cfg->rate_capacity_mbps && rx->act_epoch != now / xr_act_window(cfg)) {
		rx->act_epoch = now / xr_act_window(cfg);
		v->new_active = 1;
	}
}

/* Windows: record the packet in its path's window and the connection's CSN
 * window under the connection's lock, and copy what the answer reports
 * into ai.  A drop reason (beyond a window), or 0 with v's windows set. */
XR_INLINE __u32 xr_rx_record(struct xr_rx_state *rx,
			     const struct xr_rx_pkt *pk,
			     const struct xr_cfg *cfg, __u64 now,
			     struct xr_rx_verdict *v, struct xr_ack_info *ai)
{
	__u8 path = pk->path;
	struct xr_rx_path *p;

	/* Keep the mask: clang drops it (the caller checked path < 16) and
	 * 6.1's verifier loses that bound once the value is spilled. */
	xr_barrier_var(path);
	p = &rx->path[path & (XR_MAX_PATHS - 1)];

	bpf_spin_lock(&rx->lock);
	if (!v->nak && xr_seq_diff(pk->csn, rx->csn_next) >= XR_CSN_WIN)
		goto beyond;
	xr_rxw_forward(p, pk->base);
	v->pv = xr_rx_path_record(p, pk->psn, v->nak);
	if (v->pv == XR_RXW_OOW)
		goto beyond;
	xr_rx_count(rx, p, pk->csn, pk->plen, cfg, now, v);
	xr_ack_info_copy(ai, p, rx);
	bpf_spin_unlock(&rx->lock);
	return 0;
beyond:
	bpf_spin_unlock(&rx->lock);
	return XR_STAT_DROP_WINDOW;
}

/* The drop counter of a NAK reason: a NAKed packet is refused (and
 * answered), not accepted. */
XR_INLINE __u32 xr_nak_stat(__u8 reason)
{
	switch (reason) {
	case XR_NAK_BAD_KEY:
		return XR_STAT_DROP_KEY;
	case XR_NAK_BOUNDS:
		return XR_STAT_DROP_BOUNDS;
	case XR_NAK_ACCESS:
		return XR_STAT_DROP_ACCESS;
	case XR_NAK_BAD_OPCODE:
		return XR_STAT_DROP_OPCODE;
	case XR_NAK_RNR:
		return XR_STAT_NAK_RNR;
	default:
		return XR_STAT_DROP_LENGTH;
	}
}

/* Place: copy the payload (plen bytes) of DATA frame h to position pos of
 * the domain's memory; 0, or -1 (counted) if that failed. */
XR_INLINE int xr_rx_place(struct xdp_md *ctx, const struct xr_hdrs *h,
			  __u32 domain, __u64 pos, __u32 plen)
{
	__u32 pkt_off = h->l4_off + sizeof(struct udphdr) +
			sizeof(struct xr_data_hdr);

	if (xr_place_global(ctx, domain, pos, pkt_off, plen)) {
		/* Cannot happen for a region inside the domain's memory
		 * (checked before); counted so it would not go unseen. */
		xr_count(XR_STAT_DROP_NO_MEM);
		return -1;
	}
	xr_count_n(XR_STAT_RX_BYTES, plen);
	return 0;
}

/* Message accounting: add plen placed bytes to message msg_id of
 * connection conn_id; true when that was the message's last byte.
 * Lock-free: the slot holds msg_id << 32 | bytes and is swapped with
 * cmpxchg. */
XR_INLINE int xr_msg_account(__u32 conn_id, __u32 msg_id, __u32 msg_len,
			     __u32 plen)
{
	__u32 key = conn_id * XR_MSG_SLOTS + (msg_id % XR_MSG_SLOTS);
	__u64 *slot = bpf_map_lookup_elem(&xr_msgs, &key);
	__u64 old, new;
	__u32 i;

	if (!slot)
		return 0;
#pragma clang loop unroll(disable)
	for (i = 0; i < 16; i++) {
		old = *slot;
		if (XR_MSG_SLOT_ID(old) == msg_id)
			new = old + plen;
		else
			new = ((__u64)msg_id << 32) | plen;
		if (__sync_val_compare_and_swap(slot, old, new) == old)
			return XR_MSG_SLOT_BYTES(new) == msg_len;
	}
	return 0;
}

/* Hand event e to the library; a full ring loses it (counted).  hold: it
 * need wake nobody (lib/budget.h), domain: the connection's. */
XR_INLINE void xr_evt_send_as(void *evq, struct xr_evt *e, __u32 domain,
			      int hold)
{
	if (xr_evq_put_as(evq, e, domain, hold))
		xr_count(XR_STAT_EVT_LOST);
}

XR_INLINE void xr_evt_send(void *evq, struct xr_evt *e, __u32 domain)
{
	xr_evt_send_as(evq, e, domain, 0);
}

/* Event: a validated READ_REQ (rr, what it reads lying at pos of our
 * memory), for the library, which answers it. */
XR_INLINE void xr_evt_read_req(void *evq, struct xr_evt *e,
			       const struct xr_rx_pkt *pk,
			       const struct xr_data_hdr *d, __u64 now,
			       __u64 pos, const struct xr_read_req *rr,
			       __u32 domain)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->type = XR_EVT_READ_REQ;
	e->path = pk->path;
	e->conn = pk->conn_id;
	e->rx_ns = now;
	e->read.raddr = pk->raddr;
	e->read.pos = pos;
	e->read.laddr = bpf_be64_to_cpu(rr->laddr);
	e->read.len = bpf_ntohl(rr->len);
	e->read.read_id = bpf_ntohl(rr->read_id);
	e->read.rkey = pk->rkey;
	/* stream, ssn, imm: read from the header again where used (the
	 * frame is not resized before the reply): fewer values to keep
	 * across the helper calls, a stack 6.1 accepts. */
	e->read.stream = bpf_ntohs(d->stream);
	e->read.ssn = bpf_ntohs(d->ssn);
	xr_evt_send(evq, e, domain);
}

/* Event: the last byte of d's message landed.  Every completed message is
 * reported, so the library can deliver the completions it does report in
 * stream order.  Also: the responder of one of our READs says it cannot
 * answer (READ_RESP with XR_DF_ERR; the NAK reason in imm), marked
 * XR_RECV_F_ERR. */
XR_INLINE void xr_evt_recv(void *evq, struct xr_evt *e,
			   const struct xr_rx_pkt *pk,
			   const struct xr_data_hdr *d, __u64 now,
			   const struct xr_conn *c)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->type = XR_EVT_RECV;
	e->path = pk->path;
	e->conn = pk->conn_id;
	e->rx_ns = now;
	e->recv.msg_id = pk->msg_id;
	e->recv.msg_len = pk->msg_len;
	e->recv.imm = bpf_ntohl(d->imm);
	e->recv.stream = bpf_ntohs(d->stream);
	e->recv.opcode = pk->opcode;
	e->recv.flags = pk->opcode == XR_OP_READ_RESP && (pk->flags & XR_DF_ERR) ?
			XR_RECV_F_ERR : 0;
	e->recv.raddr_end = pk->raddr + (pk->msg_len - pk->msg_off);
	e->recv.rkey = pk->rkey; /* the union: rkey, msn or read id */
	e->recv.ssn = bpf_ntohs(d->ssn);
	/* A plain WRITE on a connection that does not report WRITEs: the
	 * library only keeps its stream order with the record. */
	xr_evt_send_as(evq, e, c->domain, pk->opcode == XR_OP_WRITE &&
		       !(c->flags & XR_CONN_F_NOTIFY_WRITE));
}

/* Event: keyed connection, the peer's stream moved to a new key epoch;
 * the library installs the one after it.  0, or -1 (counted) if the ring
 * had no room: then the next packet of the epoch tries again. */
XR_INLINE int xr_evt_rekey(void *evq, struct xr_evt *e, __u32 conn_id,
			   __u32 epoch, __u64 now, __u32 domain)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->type = XR_EVT_REKEY;
	e->conn = conn_id;
	e->rx_ns = now;
	e->rekey.epoch = epoch;
	if (xr_evq_put(evq, e, domain)) {
		xr_count(XR_STAT_EVT_LOST);
		return -1;
	}
	xr_count(XR_STAT_KEY_EPOCH);
	return 0;
}

/* Event: the first packet of a SEND was refused "receiver not ready": the
 * library learns which receive its QP lacks (a shared receive queue may
 * move one there).  Only the first packet: once per round of the sender's
 * retries, with no state here; and only within the connection's share of
 * the ring. */
XR_INLINE void xr_evt_rnr(void *evq, struct xr_evt *e,
			  const struct xr_rx_pkt *pk, __u32 domain, __u64 now)
{
	if (pk->msg_off ||
	    xr_evq_room(evq, domain, pk->conn_id, XR_EVQ_RESERVE,
			XR_STAT_DROP_EVQ_FULL))
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = XR_EVT_RNR;
	e->path = pk->path;
	e->conn = pk->conn_id;
	e->rx_ns = now;
	e->rnr.msn = pk->msn;
	e->rnr.stream = pk->stream;
	xr_evt_send(evq, e, domain);
}

/* Place, account, tell: a new READ_REQ goes to the library and is answered
 * at once, and so is a READ_RESP that says the read failed; new data is
 * placed and counted toward its message, whose RECV event goes out when
 * its last byte lands.  A duplicate is only counted. */
XR_INLINE void xr_rx_deliver(struct xdp_md *ctx, const struct xr_hdrs *h,
			     const struct xr_rx_pkt *pk,
			     const struct xr_data_hdr *d, void *evq,
			     const struct xr_conn *c, __u64 pos, __u64 now,
			     struct xr_scratch *sc, struct xr_rx_verdict *v)
{
	if (v->cv != XR_RXW_NEW) {
		if (!v->nak)
			xr_count(XR_STAT_RX_DUP);
		return;
	}
	if (pk->opcode == XR_OP_READ_REQ) {
		xr_evt_read_req(evq, &sc->e, pk, d, now, pos, &sc->rr, c->domain);
		xr_count(XR_STAT_MSG_DONE);
		v->ack_now = 1;
		return;
	}
	if (pk->opcode == XR_OP_READ_RESP && (pk->flags & XR_DF_ERR)) {
		xr_evt_recv(evq, &sc->e, pk, d, now, c);
		v->ack_now = 1;
		return;
	}
	if (xr_rx_place(ctx, h, c->domain, pos, pk->plen))
		return;
	if (v->tr)
		xr_trace_put(pk->conn_id, pk->msg_id, pk->csn, XR_TR_PLACED);
	v->done = xr_msg_account(pk->conn_id, pk->msg_id, pk->msg_len,
				 pk->plen);
	if (v->done) {
		xr_count(XR_STAT_MSG_DONE);
		xr_evt_recv(evq, &sc->e, pk, d, now, c);
	}
}

/* Keyed: the peer's first packet under a new key epoch tells the library
 * to install the epoch after it (lib/mac.h). */
XR_INLINE void xr_rx_rekey(void *evq, struct xr_scratch *sc,
			   struct xr_conn *c, __u32 conn_id, __u64 now)
{
	__u32 s = sc->ai.kflags & XR_AF_EPOCH ? 1 : 0;

	if (sc->ai.keyed && xr_mac_new_epoch(c, s) &&
	    !xr_evt_rekey(evq, &sc->e, conn_id, c->kpeer[s].epoch, now, c->domain))
		c->kpeer[s].noted = 1;
}

/* Is an answer due now (PROTOCOL.md 9.1)?  Otherwise a later ACK covers
 * the packet. */
XR_INLINE int xr_rx_answer_due(const struct xr_rx_pkt *pk,
			       const struct xr_rx_verdict *v,
			       const struct xr_ack_info *ai)
{
	return (pk->flags & XR_DF_AR) || v->ack_now || v->pv == XR_RXW_OLD ||
	       v->cv == XR_RXW_OLD || xr_ack_gap_edge(pk->psn, ai) || v->ce ||
	       v->nak || v->done;
}

/* Reply: the ACK or NAK of the packet's path, sent back with XDP_TX. */
XR_INLINE int xr_rx_answer(struct xdp_md *ctx, int v6,
			   const struct xr_rx_pkt *pk,
			   const struct xr_ack_info *ai,
			   const struct xr_rx_verdict *v, __u32 hint)
{
	__u8 flags = (v->ce ? XR_AF_ECE : 0) |
		     (!v->nak && v->cv == XR_RXW_OLD ? XR_AF_DUP : 0);

	if (xr_ack_build(ctx, v6, pk, ai, flags, v->nak, hint))
		return xr_drop(XR_STAT_TX_ACK_FAIL);
	if (v->tr)
		xr_trace_put(pk->conn_id, pk->msg_id, pk->csn, XR_TR_ACK_TX);
	xr_count(v->nak ? XR_STAT_TX_NAK : XR_STAT_TX_ACK);
	return XDP_TX;
}

/* DATA, in the order of docs/PROTOCOL.md 8.2: parse, authenticate and
 * checksum, access and bounds, owner and room, windows, place and account
 * and tell, answer.  A failed step drops the packet unanswered. */
static __noinline int xr_rx_data(struct xdp_md *ctx, struct xr_hdrs *h,
				 const struct xr_cfg *cfg)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_data_hdr *d = (void *)(h->udp + 1);
	struct xr_rx_verdict v = { .cv = XR_RXW_OLD };
	__u32 udp_len, why = 0, zero = 0;
	struct xr_scratch *sc;
	struct xr_rx_state *rx;
	struct xr_rx_pkt pk;
	__u64 pos = 0, now;
	struct xr_conn *c;
	void *evq;

	udp_len = xr_rx_len(ctx, h, end, sizeof(*d));
	if (!udp_len)
		return xr_drop(XR_STAT_DROP_TRUNC);
	pk.plen = udp_len - sizeof(struct udphdr) - sizeof(*d);
	if (pk.plen > XR_MAX_PKT_PAYLOAD)
		return xr_drop(XR_STAT_DROP_LENGTH);
	pk.conn_id = bpf_ntohl(d->dst_conn);
	c = xr_admit(ctx, h, end, cfg, pk.conn_id, d, sizeof(*d), XR_DF_EPOCH,
		     udp_len, 0, &why);
	if (!c)
		return xr_drop(why);
	if (d->path >= XR_MAX_PATHS)
		return xr_drop(XR_STAT_DROP_LENGTH);
	xr_rx_decode(&pk, d, c);
	if (c->flags & XR_CONN_F_TRACE) {
		v.tr = 1;
		xr_trace_put(pk.conn_id, pk.msg_id, pk.csn, XR_TR_RX_XDP);
	}
	rx = bpf_map_lookup_elem(&xr_rx, &pk.conn_id);
	if (!rx)
		return xr_drop(XR_STAT_DROP_NO_CONN);
	sc = bpf_map_lookup_elem(&xr_scratch, &zero);
	if (!sc)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	xr_ack_info_keys(&sc->ai, c, xr_mac_slot((const __u8 *)d, XR_DF_EPOCH));
	/* A duplicate (its CSN already arrived) is acknowledged as such, never
	 * judged again: the receive a SEND filled may be consumed by now, and
	 * refusing the copy would make the sender retry forever.  This peek is
	 * lock-free; the CSN window under the lock stays the authority. */
	if (!xr_csn_seen(rx, pk.csn))
		v.nak = xr_check_access(ctx, h->l4_off + sizeof(struct udphdr) +
					sizeof(*d), &pk, c, &sc->rr, &pos);
	now = bpf_ktime_get_ns();
	why = xr_rx_room(ctx, h, end, c, pk.conn_id, v.nak, now, &evq);
	if (why)
		return xr_drop(why);
	xr_rx_rekey(evq, sc, c, pk.conn_id, now);
	v.ce = h->ecn == XR_ECN_CE;
	why = xr_rx_record(rx, &pk, cfg, now, &v, &sc->ai);
	if (why)
		return xr_drop(why);
	xr_count(v.nak ? xr_nak_stat(v.nak) : XR_STAT_RX_DATA);
	if (v.new_active)
		xr_act_count(now / xr_act_window(cfg));
	xr_rx_deliver(ctx, h, &pk, d, evq, c, pos, now, sc, &v);
	if (v.nak == XR_NAK_RNR)
		xr_evt_rnr(evq, &sc->e, &pk, c->domain, now);
	if (!xr_rx_answer_due(&pk, &v, &sc->ai))
		return XDP_DROP; /* consumed; a later ACK covers it */
	return xr_rx_answer(ctx, h->v6, &pk, &sc->ai, &v,
			    xr_rate_hint(cfg, now));
}

/* ---- ACK, NAK --------------------------------------------------------- */

/* The library's record of ACK or NAK a (host order). */
XR_INLINE void xr_evt_ack(struct xr_evt *e, const struct xr_ack_hdr *a,
			  __u32 conn_id)
{
	__u32 i;

	e->type = XR_HDR_TYPE(a->ver_type) == XR_T_NAK ? XR_EVT_NAK : XR_EVT_ACK;
	e->path = a->path;
	e->flags = a->flags;
	e->conn = conn_id;
	e->rx_ns = bpf_ktime_get_ns();
	e->ack.cack = bpf_ntohl(a->cack);
	e->ack.ack_psn = bpf_ntohl(a->ack_psn);
	e->ack.ts_echo = bpf_ntohl(a->ts_echo);
	e->ack.rate_hint = bpf_ntohl(a->rate_hint);
	/* Without XR_AF_SACK the words are read as zero, whatever they
	 * hold: a keyed ACK's MAC left them out (e is zeroed). */
	if (a->flags & XR_AF_SACK) {
#pragma clang loop unroll(full)
		for (i = 0; i < XR_SACK_WORDS; i++)
			e->ack.sack[i] = bpf_be64_to_cpu(a->sack[i]);
	}
	e->ack.ce_pkts = bpf_ntohl(a->ce_pkts);
	e->ack.rx_pkts = bpf_ntohl(a->rx_pkts);
	e->ack.csn_cum = bpf_ntohl(a->csn_cum);
	e->ack.nak_csn = bpf_ntohl(a->nak_csn);
	e->ack.reason = a->reason;
}

/* ACK or NAK for one of our paths: parse, authenticate and checksum, then
 * a record to the library.  A reply for no connection of ours is passed. */
static __noinline int xr_rx_ack(struct xdp_md *ctx, struct xr_hdrs *h,
				const struct xr_cfg *cfg)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_ack_hdr *a = (void *)(h->udp + 1);
	struct xr_evt e = {};
	__u32 udp_len, conn_id, why = 0;
	struct xr_conn *c;
	void *evq;

	udp_len = xr_rx_len(ctx, h, end, sizeof(*a));
	if (!udp_len)
		return xr_drop(XR_STAT_DROP_TRUNC);
	conn_id = bpf_ntohl(a->dst_conn);
	c = xr_admit(ctx, h, end, cfg, conn_id, a, sizeof(*a), XR_AF_EPOCH,
		     udp_len, 1, &why);
	if (why == XR_STAT_DROP_NO_CONN)
		return xr_pass();
	if (!c)
		return xr_drop(why);
	evq = bpf_map_lookup_elem(&xr_evq, &c->domain);
	if (!evq)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	/* Answers may use half of the reserve data leaves free, and no more
	 * than the connection's share (lib/budget.h). */
	why = xr_evq_room(evq, c->domain, conn_id, XR_EVQ_RESERVE / 2,
			  XR_STAT_DROP_ACK_LOST);
	if (why)
		return xr_drop(why);
	xr_evt_ack(&e, a, conn_id);
	e.ack.key_epoch = c->kown[xr_mac_slot((const __u8 *)a, XR_AF_EPOCH)].epoch;
	if (xr_evq_put(evq, &e, c->domain))
		return xr_drop(XR_STAT_DROP_ACK_LOST);
	xr_count(e.type == XR_EVT_NAK ? XR_STAT_RX_NAK : XR_STAT_RX_ACK);
	return XDP_DROP;
}

/* ---- PROBE, PROBE_REPLY ----------------------------------------------- */

/* A probe reply for connection c: a record to the library, within the
 * connection's share of the ring, like an ACK. */
XR_INLINE int xr_probe_reply_event(const struct xr_conn *c,
				   const struct xr_probe_hdr *pr,
				   __u32 conn_id)
{
	struct xr_evt e = {};
	void *evq = bpf_map_lookup_elem(&xr_evq, &c->domain);
	__u32 why;

	if (!evq)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	why = xr_evq_room(evq, c->domain, conn_id, XR_EVQ_RESERVE / 2,
			  XR_STAT_DROP_ACK_LOST);
	if (why)
		return xr_drop(why);
	e.type = XR_EVT_PROBE_REPLY;
	e.path = pr->path;
	e.flags = pr->flags;
	e.conn = conn_id;
	e.rx_ns = bpf_ktime_get_ns();
	e.probe.seq = bpf_ntohl(pr->seq);
	e.probe.ts = bpf_ntohl(pr->ts);
	e.probe.rate_hint = bpf_ntohl(pr->rate_hint);
	e.probe.key_epoch = c->kown[xr_mac_slot((const __u8 *)pr, XR_PF_EPOCH)].epoch;
	if (xr_evq_put(evq, &e, c->domain))
		return xr_drop(XR_STAT_DROP_ACK_LOST);
	xr_count(XR_STAT_RX_ACK);
	return XDP_DROP;
}

/* Answer probe pr in place: the reply echoes its path, sequence number and
 * timestamp, goes to the prober's connection and carries our rate hint;
 * keyed, it is signed with the reply key of the probe's epoch and says
 * whether we hold the next one. */
XR_INLINE int xr_probe_answer(struct xdp_md *ctx, int v6,
			      struct xr_probe_hdr *pr,
			      const struct xr_conn *c,
			      const struct xr_cfg *cfg)
{
	/* Read before the frame is rewritten: the reply overlays pr. */
	__u32 peer_conn = c->peer_conn, seq = bpf_ntohl(pr->seq);
	__u32 ks = xr_mac_slot((const __u8 *)pr, XR_PF_EPOCH);
	__u64 tx_token = c->tx_token;
	__be32 ts = pr->ts;
	__u8 path = pr->path;
	struct xr_hdrs rh;

	pr = xr_reply_begin(ctx, &rh, v6, sizeof(*pr));
	if (!pr)
		return xr_drop(XR_STAT_TX_ACK_FAIL);
	pr->ver_type = XR_VER_TYPE(XR_T_PROBE_REPLY);
	pr->flags = 0;
	pr->rsvd0 = 0;
	pr->path = path;
	pr->dst_conn = bpf_htonl(peer_conn);
	pr->token = bpf_cpu_to_be64(tx_token);
	pr->seq = bpf_htonl(seq);
	pr->ts = ts;
	pr->rate_hint = bpf_htonl(xr_rate_hint(cfg, bpf_ktime_get_ns()));
	pr->rsvd1 = 0;
	if (c->flags & XR_CONN_F_MAC) {
		pr->flags = (ks ? XR_PF_EPOCH : 0) |
			    (xr_mac_knext(c, ks) ? XR_PF_KNEXT : 0);
		xr_mac_sign(c->kpeer[ks].reply, (__u8 *)pr, sizeof(*pr));
	}
	xr_reply_finish(ctx, &rh, sizeof(*pr));
	xr_count(XR_STAT_PROBE);
	return XDP_TX;
}

/* PROBE (reply = 0) or PROBE_REPLY (reply = 1): parse, authenticate and
 * checksum; a probe is answered when its domain's owner is alive, a reply
 * becomes a record for the library. */
static __noinline int xr_rx_probe(struct xdp_md *ctx, struct xr_hdrs *h,
				  const struct xr_cfg *cfg, int reply)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_probe_hdr *pr = (void *)(h->udp + 1);
	__u32 udp_len, conn_id, why = 0;
	struct xr_conn *c;

	udp_len = xr_rx_len(ctx, h, end, sizeof(*pr));
	if (!udp_len)
		return xr_drop(XR_STAT_DROP_TRUNC);
	conn_id = bpf_ntohl(pr->dst_conn);
	c = xr_admit(ctx, h, end, cfg, conn_id, pr, sizeof(*pr), XR_PF_EPOCH,
		     udp_len, reply, &why);
	if (reply && why == XR_STAT_DROP_NO_CONN)
		return xr_pass();
	if (!c)
		return xr_drop(why);
	if (reply)
		return xr_probe_reply_event(c, pr, conn_id);
	if (!xr_domain_alive(ctx, h, end, c->domain, bpf_ktime_get_ns()))
		return xr_drop(XR_STAT_DROP_DEAD);
	return xr_probe_answer(ctx, h->v6, pr, c, cfg);
}

/* ---- BIND ------------------------------------------------------------- */

/* The connection a BIND half names, if it may take one: not connected
 * yet (INIT) or bound by the same exchange (RTS: the peer resends until
 * it hears from us). */
XR_INLINE struct xr_conn *xr_bind_conn(struct xdp_md *ctx, struct xr_hdrs *h,
				       void *end, const struct xr_ctrl_msg *m,
				       __u32 *why)
{
	__u32 udp_len = xr_udp_len(ctx, h, end, sizeof(*m)), conn_id;
	struct xr_conn *c;

	*why = XR_STAT_DROP_BIND;
	if (udp_len != sizeof(struct udphdr) + sizeof(*m) || (void *)(m + 1) > end)
		return NULL;
	conn_id = bpf_ntohl(m->dst_conn);
	c = bpf_map_lookup_elem(&xr_conns, &conn_id);
	*why = XR_STAT_DROP_NO_CONN;
	if (!c)
		return NULL;
	*why = XR_STAT_DROP_CONN_STATE;
	if (c->state != XR_CONN_INIT && c->state != XR_CONN_RTS)
		return NULL;
	return c;
}

/* The record: the message as received and the packet's source src
 * (xr_src_addr), which is what the library trusts (with a cluster key,
 * also the message's MAC). */
XR_INLINE int xr_bind_record(struct xdp_md *ctx, struct xr_hdrs *h,
			     struct xr_evt_bind *e, __u32 conn_id,
			     const __u32 src[4], __u64 now)
{
	__builtin_memset(e, 0, sizeof(*e) - sizeof(e->msg));
	e->type = XR_EVT_BIND;
	e->conn = conn_id;
	e->rx_ns = now;
	e->src_port = bpf_ntohs(h->udp->source);
	__builtin_memcpy(e->src_addr, src, 16);
	return !bpf_xdp_load_bytes(ctx, h->l4_off + sizeof(struct udphdr), e->msg,
				   sizeof(e->msg));
}

/* A BIND half (wire.h) for one of our connections: to the owning
 * domain's event ring.  The message itself is only checked for its
 * length and op here; the library checks the rest. */
static __noinline int xr_rx_bind(struct xdp_md *ctx, struct xr_hdrs *h,
				 const struct xr_cfg *cfg)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_ctrl_msg *m = (void *)(h->udp + 1);
	struct xr_evt_bind *e;
	struct xr_conn *c;
	__u32 why, domain, src[4];
	__u64 now;
	void *evq;

	/* Other control messages never come to the data port. */
	if ((void *)&m->op + 1 > end || m->op != XR_CTRL_BIND)
		return xr_drop(XR_STAT_DROP_VERSION);
	c = xr_bind_conn(ctx, h, end, m, &why);
	if (!c)
		return xr_drop(why);
	if (!xr_src_addr(h, end, src))
		return xr_drop(XR_STAT_DROP_PEER);
	domain = c->domain;
	if (cfg->flags & XR_CFG_VERIFY_CSUM &&
	    xr_csum_ok(ctx, sizeof(struct udphdr) + sizeof(*m)) != 1)
		return xr_drop(XR_STAT_DROP_CSUM);
	now = bpf_ktime_get_ns();
	if (!xr_domain_alive(ctx, h, end, domain, now))
		return xr_drop(XR_STAT_DROP_DEAD);
	evq = bpf_map_lookup_elem(&xr_evq, &domain);
	if (!evq)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	e = bpf_ringbuf_reserve(evq, sizeof(*e), 0);
	if (!e)
		return xr_drop(XR_STAT_DROP_EVQ_FULL); /* the peer resends it */
	if (!xr_bind_record(ctx, h, e, bpf_ntohl(m->dst_conn), src, now)) {
		bpf_ringbuf_discard(e, 0);
		return xr_drop(XR_STAT_DROP_TRUNC);
	}
	/* Forced: records held before it (lib/budget.h) would otherwise keep
	 * the kernel from waking a library asleep on the ring. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	xr_count(XR_STAT_RX_BIND);
	return XDP_DROP;
}

/* ---- frames built from the transmit ring ------------------------------ */

/* A test run of this program by a library that transmits with it
 * (include/contract/txring.h): the trigger names a ring and carries its
 * secret; the next descriptor becomes the frame, sent back out of the
 * interface. */
static __noinline int xr_tx_build(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xr_txr_trigger *t = data;
	__u32 ctl_idx = XR_TXR_CTL, slot;
	struct xr_txq_key key;
	struct xr_txr_desc *d;
	struct xr_txr_ctl *c;
	void *ring, *mem;
	__u64 tail;

	if ((void *)(t + 1) > end || t->magic != bpf_htonl(XR_TXR_MAGIC))
		return xr_drop(XR_STAT_DROP_TXR);
	key.domain = bpf_ntohl(t->domain);
	key.plane = bpf_ntohl(t->plane);
	ring = bpf_map_lookup_elem(&xr_txq, &key);
	if (!ring)
		return xr_drop(XR_STAT_DROP_TXR);
	c = bpf_map_lookup_elem(ring, &ctl_idx);
	if (!c || c->secret != t->secret)
		return xr_drop(XR_STAT_DROP_TXR);
	mem = bpf_map_lookup_elem(&xr_mem, &key.domain);
	if (!mem)
		return xr_drop(XR_STAT_DROP_TXR);
	tail = c->tail;
	if (tail == *(volatile __u64 *)&c->head) {
		c->empty++;
		return XDP_DROP;
	}
	c->tail = tail + 1;
	slot = (__u32)tail & (XR_TXR_RING - 1);
	d = bpf_map_lookup_elem(ring, &slot);
	if (!d || xr_txring_build(ctx, d, mem)) {
		c->bad++;
		return xr_drop(XR_STAT_DROP_TXR);
	}
	if (d->tr_on)
		xr_trace_put(d->tr_conn, d->tr_msg, d->tr_csn, XR_TR_XDP_BUILD);
	c->sent++;
	xr_count(XR_STAT_TX_BUILT);
	return XDP_TX;
}

/* ---- dispatch --------------------------------------------------------- */

/* Is the frame (not IP/UDP) a transmit trigger (txring.h)? */
XR_INLINE int xr_is_tx_trigger(void *data, void *end)
{
	struct ethhdr *eth = data;

	return (void *)(eth + 1) <= end &&
	       eth->h_proto == bpf_htons(XR_TXR_ETHERTYPE);
}

/* To our data port: data, probes and BIND halves.  The port belongs to xroce: nothing
 * addressed to it is passed. */
XR_INLINE int xr_to_data_port(struct xdp_md *ctx, struct xr_hdrs *h,
			      const struct xr_cfg *cfg, void *end)
{
	__u8 *x = (void *)(h->udp + 1);

	if ((void *)(x + 1) > end)
		return xr_drop(XR_STAT_DROP_TRUNC);
	if (XR_HDR_VERSION(*x) != XR_VERSION)
		return xr_drop(XR_STAT_DROP_VERSION);
	switch (XR_HDR_TYPE(*x)) {
	case XR_T_DATA:
		return xr_rx_data(ctx, h, cfg);
	case XR_T_PROBE:
		return xr_rx_probe(ctx, h, cfg, 0);
	case XR_T_CTRL:
		return xr_rx_bind(ctx, h, cfg);
	default:
		return xr_drop(XR_STAT_DROP_VERSION);
	}
}

/* From a peer's data port to one of our entropy ports: replies.  Only what
 * looks like an xroce reply is examined; anything else, and replies for no
 * connection of ours, pass untouched (another application may use that
 * port pair). */
XR_INLINE int xr_from_data_port(struct xdp_md *ctx, struct xr_hdrs *h,
				const struct xr_cfg *cfg, void *end)
{
	__u8 *x = (void *)(h->udp + 1);

	if ((void *)(x + 1) > end || XR_HDR_VERSION(*x) != XR_VERSION)
		return xr_pass();
	switch (XR_HDR_TYPE(*x)) {
	case XR_T_ACK:
	case XR_T_NAK:
		return xr_rx_ack(ctx, h, cfg);
	case XR_T_PROBE_REPLY:
		return xr_rx_probe(ctx, h, cfg, 1);
	default:
		return xr_pass();
	}
}

/* xdp.frags: jumbo frames (MTU 9000 on veth, multi-buffer drivers) arrive
 * as a linear part holding the headers plus fragments; placement and
 * checksums read across fragments, replies drop them. */
SEC("xdp.frags")
int xroce_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xr_hdrs h;
	struct xr_cfg *cfg;
	__u32 zero = 0;

	if (xr_parse(data, end, &h) != XR_PARSE_OK || !h.udp)
		return xr_is_tx_trigger(data, end) ? xr_tx_build(ctx) : xr_pass();
	cfg = bpf_map_lookup_elem(&xr_cfg, &zero);
	if (!cfg || !cfg->udp_port)
		return xr_pass();
	if (h.udp->dest == bpf_htons(cfg->udp_port))
		return xr_to_data_port(ctx, &h, cfg, end);
	if (h.udp->source == bpf_htons(cfg->udp_port))
		return xr_from_data_port(ctx, &h, cfg, end);
	return xr_pass();
}
